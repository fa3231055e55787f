"""The ``--json`` shapes of stored sessions and rows (moved here from ``cli.render`` so the
library and the command line build them once): ``session_dict`` (``sessions --json``, its title
given by ``browse.titles``),
``entry_dict`` (``show --json`` rows), ``session_rows`` (which rows ``show`` shows),
``session_rows_dict`` (``show --json``),
``source_status`` and ``resume_copies`` (which sessions
are ``continuity resume`` copies, issue 45 item 3).

Each imports what it needs when called (``tests/cli/test_lazy_commands.py``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime
    from typing import Any

    from continuity.core.model import Entry, Session


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def source_status(s: Session) -> str | None:
    """``"gone"`` when the archive found the session's file deleted (issue 18: the session
    stays whole), ``"present"`` while it was not, None for a session without a file."""
    if s.source_gone_at is not None:
        return "gone"
    return "present" if s.source_path else None


def session_dict(
    s: Session, copy: dict[str, str] | None = None, *, title: str | None = None
) -> dict[str, Any]:
    """The ``sessions --json`` shape of one session: ``title`` is the caller's
    (``browse.titles.session_title``: the harness's own or the first request, redacted by the
    session-wide rule; issue 44), ``source`` is ``source_status``,
    ``source_gone_at`` when it was found gone, ``forked_from`` a Codex fork's parent,
    ``copy_of`` the session a ``continuity resume`` copy continues and ``original`` the one
    its chain of copies started from (``copy``: ``formats.resumed.parse_copy_note``; both
    None for a session that is no copy; issue 45 item 3)."""
    return {
        "session": s.key,
        "harness": s.harness,
        "agent_id": s.agent_id,
        "project": s.project,
        "title": title,
        "source_path": s.source_path,
        "source": source_status(s),
        "source_gone_at": _iso(s.source_gone_at),
        "started_at": _iso(s.started_at),
        "ended_at": _iso(s.ended_at),
        "entries": s.entry_count,
        "parent": s.parent_key,
        "forked_from": s.forked_from,
        "copy_of": copy["session"] if copy else None,
        "original": copy["original"] if copy else None,
    }


def entry_dict(e: Entry, *, raw: bool = False) -> dict[str, Any]:
    """The ``show --json`` shape of one row (``core.codec.entry_view``), every string through
    ``redaction.structured.redact_value`` (texts, tool-call arguments by their keys, tool
    results, summaries) unless ``raw``: the redaction of ``export --format jsonl``."""
    from continuity.core.codec import entry_view

    view = entry_view(e)
    if raw:
        return view
    from continuity.redaction.structured import redact_value

    redacted: dict[str, Any] = redact_value(view)
    return redacted


def session_rows(
    store: Any,
    key: str,
    *,
    all_rows: bool = False,
    seq: int | None = None,
    from_seq: int | None = None,
    to_seq: int | None = None,
    tail: int | None = None,
) -> Iterable[Entry]:
    """The rows ``continuity show`` shows of session ``key``: the conversation in log order
    (every row with ``all_rows``), only those with ``from_seq <= seq <= to_seq`` (either
    optional), only the last ``tail`` of them (0: all; issue 44: a 40,000-row session printed every
    row); or with ``seq`` the 30 rows from ``seq - 5``, every kind (issue 19: the reopen
    command of a search hit). Reads stay in pages; ``tail`` keeps at most ``tail`` rows in
    memory. Raises ``InputError`` when the session has no row ``seq``."""
    if seq is None:
        from continuity.store import iter_entries

        found: Iterable[Entry] = iter_entries(
            store,
            key,
            after_seq=(from_seq - 1) if from_seq is not None else -1,
            visible_only=not all_rows,
        )
        if to_seq is not None:
            from itertools import takewhile

            found = takewhile(lambda e: e.seq <= to_seq, found)
        if tail:  # 0 or None: every row
            from collections import deque

            found = deque(found, maxlen=tail)
        return found
    rows: list[Entry] = store.entries(key, after_seq=max(-1, seq - 6), limit=30)
    if not rows or rows[0].seq > seq:
        from continuity.core.errors import InputError

        raise InputError(f"--seq {seq}: session {key} has no row {seq}")
    return rows


def session_rows_dict(
    store: Any,
    key: str,
    *,
    raw: bool = False,
    all_rows: bool = False,
    seq: int | None = None,
    from_seq: int | None = None,
    to_seq: int | None = None,
    tail: int | None = None,
) -> dict[str, Any]:
    """``continuity show KEY --json`` of the session ``key`` (an exact key): its rows
    (``session_rows``) as ``entry_dict``s, every string redacted, a secret found in any row
    hidden wherever it repeats (issue 45 review item 1), unless ``raw``; with the session's
    ``source`` status and ``forked_from``. The fields of ``api.results.SessionRows``
    (``entries`` a tuple). ``from_seq``, ``to_seq``, ``tail``: as ``session_rows``. Raises
    ``InputError`` when the session has no row ``seq``."""
    rows = session_rows(
        store, key, all_rows=all_rows, seq=seq, from_seq=from_seq, to_seq=to_seq, tail=tail
    )
    token = None
    if not raw:  # --raw redacts nothing, so it loads no redaction at all
        from continuity.redaction.funnel import SESSION_KNOWN
        from continuity.redaction.session import session_secrets

        token = SESSION_KNOWN.set(session_secrets(store, key))
    try:
        entries = tuple(entry_dict(e, raw=raw) for e in rows)
    finally:
        if token is not None:
            from continuity.redaction.funnel import SESSION_KNOWN

            SESSION_KNOWN.reset(token)
    found = store.get_session(key)
    return {
        "session": key,
        "source": source_status(found) if found else None,
        "forked_from": found.forked_from if found else None,
        "redacted": not raw,
        "entries": entries,
    }


def resume_copies(store: Any, keys: list[str]) -> dict[str, dict[str, str]]:
    """``{session: parse_copy_note(note)}`` of the ``keys`` that are ``continuity resume``
    copies (their newest copy note; issue 45 item 3)."""
    from continuity.formats.resumed import NOTE_PREFIX, parse_copy_note

    found: dict[str, Any] = {}
    for key, texts in store.notes_starting(NOTE_PREFIX, keys).items():
        parsed = next((p for p in map(parse_copy_note, reversed(texts)) if p), None)
        if parsed is not None:
            found[key] = parsed
    return found


__all__ = [
    "entry_dict",
    "resume_copies",
    "session_dict",
    "session_rows",
    "session_rows_dict",
    "source_status",
]
