"""``continuity forget`` (issue 41 item 2: "``continuity forget`` (a session or a pattern)
writes a tombstone that sync carries, so no re-import or re-sync restores it").

A session is forgotten by its key (and with it the sessions below it, ``KEY/...``: a Claude
Code subagent's file), or every session with a row whose redacted text holds ``--pattern
TEXT`` (case folded): the text as ``show`` and the team store would show it (texts,
thinking, tool calls' names and arguments, tool results, compaction summaries; through the
session-wide redaction), so a pattern finds what you can see, and a secret's own value never
is a pattern (it is redacted away). Each forgotten session's rows go from the workspace and a
tombstone stays (``store.forget``): an import never stores it again, and the next ``continuity
sync`` deletes this member's copy in the team store (``team.sync``).

The pattern scan reads every row of the workspace; a row whose stored text does not hold the
pattern (case folded) is not redacted, so the scan costs a read of the rows, not a redaction
of each (redaction only replaces text with markers: a pattern it could make appear would hold
a marker's ``[REDACTED`` itself, and then every row is redacted).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from continuity.core.errors import InputError


@dataclass
class Forgotten:
    """What ``forget`` did: the sessions forgotten (their keys, in order), the pattern that
    found them (None: by key), the rows deleted per table, and whether it was a dry run
    (nothing changed)."""

    sessions: list[str]
    pattern: str | None = None
    deleted: dict[str, int] = field(default_factory=dict)
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The ``forget --json`` shape."""
        return {
            "sessions": self.sessions,
            "pattern": self.pattern,
            "deleted": self.deleted,
            "dry_run": self.dry_run,
        }


def _texts(entry: Any) -> str:
    """The row's text as ``team.sync.redacted_row`` indexes it, unredacted (the scan's
    prefilter)."""
    from continuity.core.codec import entry_view
    from continuity.team.sync import _strings

    view = entry_view(entry)
    view.pop("source", None)
    return (
        "\n".join(_strings(view.get("content")))
        + "\n"
        + str((view.get("compaction") or {}).get("summary") or "")
    )


def matching_sessions(
    store: Any, pattern: str, *, progress: Callable[[str], None] | None = None
) -> list[str]:
    """Keys of the sessions with a row whose redacted text holds ``pattern`` (case folded;
    module docstring), in the store's session order. Raises ``InputError`` for a pattern
    shorter than 3 characters (it would match nearly everything)."""
    from continuity.redaction.session import in_session
    from continuity.store import iter_entries
    from continuity.team.sync import redacted_row

    wanted = pattern.strip().casefold()
    if len(wanted) < 3:
        raise InputError(
            f"--pattern {pattern!r}: give at least 3 characters (a shorter one matches nearly "
            "every session)"
        )
    every_row = "[redacted" in wanted
    found: list[str] = []
    for session in store.list_sessions():
        if progress:
            progress(session.key)
        candidates = [
            e
            for e in iter_entries(store, session.key)
            if every_row or wanted in _texts(e).casefold()
        ]
        if not candidates:
            continue
        with in_session(store, session.key):
            if any(wanted in redacted_row(e)[1].casefold() for e in candidates):
                found.append(session.key)
    return found


def forget(
    store: Any,
    keys: list[str] | None = None,
    *,
    pattern: str | None = None,
    dry_run: bool = False,
) -> Forgotten:
    """Forget the sessions ``keys`` (exact stored keys; each with the sessions below it), or
    those ``pattern`` finds (``matching_sessions``); exactly one of the two; with each the
    ``continuity resume`` copies made of it here (``team.sync.copies_of``). ``dry_run``:
    only say which. Returns ``Forgotten``. Raises ``InputError`` for neither or both."""
    if (keys is None) == (pattern is None):
        raise InputError("forget: give a session key or --pattern TEXT (one of the two)")
    chosen = list(keys) if keys is not None else matching_sessions(store, pattern or "")
    every: list[str] = []
    for key in chosen:
        below = [s.key for s in store.find_sessions(key + "/", limit=10_000)]
        for k in [key, *below]:
            if k not in every:
                every.append(k)
    from continuity.team.sync import copies_of

    for key in copies_of(store, every):  # a resumed copy holds the same text
        below = [s.key for s in store.find_sessions(key + "/", limit=10_000)]
        every.extend(k for k in [key, *below] if k not in every)
    done = Forgotten(every, pattern, dry_run=dry_run)
    if dry_run:
        return done
    for key in every:
        for table, n in store.forget_session(key, pattern=pattern).items():
            done.deleted[table] = done.deleted.get(table, 0) + n
    return done


__all__ = ["Forgotten", "forget", "matching_sessions"]
