"""``continuity sync`` (issue 41 item 1): push what is new of the shared projects to the team
store, redacted, and pull the team's session index.

**What leaves.** Only sessions whose project (``team.identity``) is, or is inside, a project
listed in ``[team] shared``; every other project is private and nothing of it is read for
the team. Of those: the session's index fields (title redacted), its rows as ``show --json``
gives them (every string through ``redaction.structured.redact_value`` under the session-wide
secrets, ``redaction.session``: texts, tool-call arguments and results, compaction summaries;
the row's local source path and line left out), each row's searchable text (the same strings),
and its checkpoints (trigger, count, time, and the digest redacted, the session's folder on
this machine in it replaced by the project's identity: ``without_folder``). Never a raw line, never
the transcript JSONL, never a media blob.

**Watermarks** (``store.team``, keyed by the team store's id): per table, the newest
``sessions.updated_at`` and the highest ``session_checkpoints`` id seen, so a sync reads only
the sessions touched since (less ``MARGIN``, for a write that committed late), every session
when the shared projects changed (``shares``: a project shared today brings its sessions of
last month); per session,
the last seq pushed, the digest of the secrets its rows were redacted with and how many of
them were visible. A session whose digest changed (a later row revealed a secret an earlier
row repeats), or whose rows through the mark moved on or off the conversation path (a pi
branch, a repeat hidden), has every row pushed again; otherwise only the rows after the
mark.

**Forget.** A tombstone (``continuity forget``, ``store.forget``) deletes the member's copies
of the session in the team store at the next sync (``TeamStore.forget``); a watermark
(``forgotten``: the last tombstone carried) makes each tombstone carried once, after the
pushes, so a push that read the session just before it was forgotten is undone in the same
sync or the next. The local rows are gone and an import never stores them again, so no later
sync pushes them back. The team store keeps the tombstone (its key only), and a teammate's
sync that pulls the index forgets the copies ``resume`` made of that session there.

**Kill -9 at any point.** Each batch of ``batch_rows`` rows is one team-store transaction,
an upsert keyed by owner, machine, session and seq; its local mark is written after the
commit. A kill before the commit loses the batch (pushed again next time), a kill between
the commit and the mark pushes it again (the upsert replaces the rows with themselves):
nothing lost, nothing duplicated. The same holds for a dropped connection (``StoreError``,
marks unchanged) and for two machines pushing at once (their rows differ by machine).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from continuity.core.errors import ConfigError
from continuity.team.identity import IdentityCache, ProjectIdentity
from continuity.team.remote import TeamStore
from continuity.team.settings import TeamSettings

#: Rows per team-store transaction.
BATCH_ROWS = 500
#: Sessions updated this long before the last watermark are looked at again (a write that
#: committed after a sync read the marks); the per-session marks skip what they hold.
MARGIN = timedelta(minutes=10)


@dataclass
class SyncReport:
    """What one ``sync`` did: sessions looked at (``candidates``), pushed (``sessions``),
    left private (``private``), rows and checkpoints written to the team store (a row pushed
    again counts again), batches, the index rows pulled (None: no pull), and the sessions
    deleted from the team store for tombstones (``forgotten``)."""

    store: str
    candidates: int = 0
    sessions: int = 0
    private: int = 0
    rows: int = 0
    checkpoints: int = 0
    batches: int = 0
    index: int | None = None
    forgotten: int = 0
    pushed_keys: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The ``sync --json`` shape."""
        return {
            "team_store": self.store,
            "candidates": self.candidates,
            "sessions": self.sessions,
            "private": self.private,
            "rows": self.rows,
            "checkpoints": self.checkpoints,
            "batches": self.batches,
            "index": self.index,
            "forgotten": self.forgotten,
        }


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _nul_free(text: str) -> str:
    return text.replace("\x00", "\ufffd")  # PostgreSQL text refuses NUL (store.schema.nul_free)


def redacted_row(entry: Any) -> tuple[str, str]:
    """``(row JSON, searchable text)`` of a stored row: its ``show --json`` shape without the
    local ``source`` (path and line on this machine), every string redacted
    (``redact_value``, inside the caller's ``in_session``), and its words joined by
    newlines (texts, thinking, tool results, a tool call's name and the strings of its
    arguments, the compaction summary). NUL as U+FFFD."""
    import orjson

    from continuity.core.codec import entry_view
    from continuity.redaction.structured import redact_value

    view = entry_view(entry)
    view.pop("source", None)
    clean: dict[str, Any] = redact_value(view)
    texts: list[str] = []
    for block in clean.get("content") or []:
        kind = block.get("type")
        if kind in ("text", "thinking", "tool_result"):
            texts.append(block.get("text") or "")
        elif kind == "tool_call":
            texts.append(str(block.get("name") or ""))
            texts.extend(_strings(block.get("arguments")))
    summary = (clean.get("compaction") or {}).get("summary")
    if isinstance(summary, str):
        texts.append(summary)
    body = "\n".join(t for t in texts if t)
    data = orjson.dumps(clean, option=orjson.OPT_NON_STR_KEYS).decode()
    return _nul_free(data), _nul_free(body)


def without_folder(text: str, folder: str | None, project: str) -> str:
    """``text`` with the session's folder on this machine (``folder``, and the path it was
    recorded as) replaced by its project identity ``project`` wherever it stands as a whole
    path (a checkpoint digest's ``Project:`` line): where a member keeps a repository is not
    the team's business, and means nothing on another machine."""
    import re

    if not folder:
        return text
    out = text
    for path in dict.fromkeys([folder.rstrip("/"), os.path.realpath(folder)]):
        if len(path) > 1:
            out = re.sub(re.escape(path) + r"(?![\w.-])", lambda _m: project, out)
    return out


def secrets_digest(secrets: dict[str, str]) -> str:
    """A digest of a session's secret values (sha256 of the sorted values): equal while no
    new secret was found."""
    h = hashlib.sha256()
    for value in sorted(secrets):
        h.update(value.encode("utf-8", "surrogatepass") + b"\x00")
    return h.hexdigest()


def _share_of(ident: ProjectIdentity, shared: list[str]) -> str | None:
    return next((s for s in shared if ident.within(s)), None)


def sync(
    store: Any,
    settings: TeamSettings,
    *,
    batch_rows: int = BATCH_ROWS,
    pull: bool = True,
    team: TeamStore | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> SyncReport:
    """Push the shared projects' new rows of ``store`` (a ``SqlStore``) to the team store of
    ``settings`` and pull the team's index (module docstring). ``progress(session key, rows
    so far)`` after each batch. Returns a ``SyncReport``. Raises ``ConfigError`` when no team
    store is joined, ``StoreError`` when it cannot be reached or refuses a write (the marks
    then stay where the last committed batch put them)."""
    if not settings.url:
        raise ConfigError("no team store joined: run `continuity team join URL` first")
    if batch_rows < 1:
        raise ConfigError(f"batch_rows: {batch_rows} is below 1")
    own = team is None
    team = team or TeamStore(settings.url)
    try:
        meta = team.meta()
        report = SyncReport(store=team._where())
        sid = meta.store_id
        machine, author = settings.machine_name(), settings.author_name()
        identity = IdentityCache(machine)
        marks = store.team_marks(sid)
        _carry_shares(store, team, sid, settings, marks)
        since = datetime.fromisoformat(marks["sessions"]) - MARGIN if "sessions" in marks else None
        shares = hashlib.sha256(
            "\n".join([settings.name, *sorted(settings.shared)]).encode("utf-8")
        ).hexdigest()
        if marks.get("shares") != shares:  # a project newly shared: its old sessions too
            since = None
        after_checkpoint = int(marks.get("checkpoints", "0"))
        keys, newest, top = store.sessions_changed(since, after_checkpoint)
        report.candidates = len(keys)
        pushed = store.team_pushed(sid, keys)
        copies = store.team_copy_keys()  # a teammate's session pulled here: never ours
        for key in keys:
            session = store.get_session(key)
            if session is None or key in copies:
                continue
            ident = identity(session.project) if session.project else None
            share = _share_of(ident, settings.shared) if ident else None
            if ident is None or share is None:
                report.private += 1
                continue
            _push_session(
                store,
                team,
                sid,
                session,
                pushed.get(key, (-1, "", None)),
                {
                    "machine": machine,
                    "session_key": key,
                    "project": ident.project,
                    "shared_as": share,
                },
                author=author,
                after_checkpoint=after_checkpoint,
                batch_rows=batch_rows,
                report=report,
                progress=progress,
            )
            report.sessions += 1
            report.pushed_keys.append(key)
        # issue 41 item 2: each tombstone written since the last sync deletes this member's
        # copies of the session in the team store (after the pushes: a push that read the
        # session before it was forgotten is undone here, or at the next sync)
        carried = int(marks.get("forgotten", "0"))
        for forget_id, key in store.tombstones(carried):
            report.forgotten += team.forget(key)
            carried = forget_id
        new_marks = {"checkpoints": str(top), "shares": shares, "forgotten": str(carried)}
        if newest is not None:
            new_marks["sessions"] = newest.isoformat()
        store.set_team_marks(sid, new_marks)
        if pull:
            rows = team.pull_index()
            store.put_team_index(sid, rows)
            report.index = len(rows)
            if (gone := _forget_copies(store, team)) > 0:
                report.forgotten += gone
                # the copies forgotten just now were maybe pushed: their tombstones go now
                for forget_id, key in store.tombstones(carried):
                    team.forget(key)
                    carried = forget_id
                store.set_team_marks(sid, {"forgotten": str(carried)})
        return report
    finally:
        if own:
            team.close()


def _carry_shares(
    store: Any, team: TeamStore, sid: str, settings: TeamSettings, marks: dict[str, str]
) -> None:
    """Carry this workspace's ``team share``/``unshare`` since its last sync to the team
    store: the projects shared here and not at the last sync are added, those no longer
    shared here are dropped, and nothing else. The shares the role's other machines made stay
    (two workspaces of one member no longer replace each other's lists), and an unshare here
    holds: the other machine adds the project again only when it is shared anew there. The
    mark (``shares_pushed:TEAM``, a JSON list) is written once the change committed; carried
    twice, the change is the same."""
    import json

    name = f"shares_pushed:{settings.name}"
    before = set(json.loads(marks[name])) if name in marks else set()
    now = set(settings.shared)
    team.change_shares(settings.name, add=now - before, remove=before - now)
    if name not in marks or before != now:
        store.set_team_marks(sid, {name: json.dumps(sorted(now))})


def copies_of(store: Any, keys: list[str]) -> list[str]:
    """Keys of the sessions of ``store`` that are ``continuity resume`` copies of any of
    ``keys`` (their copy note names one as the session copied or as the original:
    ``formats.resumed.parse_copy_note``), and copies of those, transitively; in the store's
    session order, none of ``keys`` itself. A copy carries the forgotten session's text, so a
    tombstone covers it too (issue 41 review: a session forgotten must not come back through
    a Codex copy resumed from it)."""
    from continuity.formats.resumed import NOTE_PREFIX, parse_copy_note

    wanted = set(keys)
    if not wanted:
        return []
    every = [s.key for s in store.list_sessions()]
    notes = store.notes_starting(NOTE_PREFIX, every)
    sources: dict[str, set[str]] = {}
    for key, texts in notes.items():
        for parsed in filter(None, map(parse_copy_note, texts)):
            sources.setdefault(key, set()).update((parsed["session"], parsed["original"]))
    found: list[str] = []
    grew = True
    while grew:
        grew = False
        for key in every:
            if key not in wanted and sources.get(key, set()) & wanted:
                wanted.add(key)
                found.append(key)
                grew = True
    order = {k: i for i, k in enumerate(every)}
    return sorted(found, key=order.__getitem__)


def _forget_copies(store: Any, team: TeamStore) -> int:
    """Forget this workspace's copies of teammates' sessions (``resume``, ``team.pull``)
    whose owner has forgotten them since (the team store's ``forgotten``), and the copies
    resumed from those (``copies_of``); returns how many."""
    copies = store.team_copy_keys()
    if not copies:
        return 0
    gone = set(team.forgotten())
    keys = []
    for key in sorted(copies):
        origin = store.team_copy(key)
        if origin and (origin["owner"], origin["original_key"]) in gone:
            keys.append(key)
    # and the sessions resumed here from those copies (a Codex file of a resumed copy,
    # imported as a session of this member's own, linked by its copy note)
    keys += copies_of(store, keys)
    for key in keys:
        store.forget_session(key, pattern=None)
    return len(keys)


def _push_session(
    store: Any,
    team: TeamStore,
    sid: str,
    session: Any,
    done: tuple[int, str, int | None],
    common: dict[str, Any],
    *,
    author: str,
    after_checkpoint: int,
    batch_rows: int,
    report: SyncReport,
    progress: Callable[[str, int], None] | None,
) -> None:
    """Push one shared session: its index row; its rows after its mark (every row when the
    digest of its secrets changed, or the count of its visible rows through the mark: rows
    moved on or off the conversation path), batch by batch; its checkpoints. A session with
    no row, no checkpoint and no visibility change since its mark gets its index row only,
    without scanning its rows (its secrets cannot have changed: rows are only appended)."""
    from continuity.browse.titles import session_title
    from continuity.redaction.funnel import redact
    from continuity.redaction.session import in_session
    from continuity.store import iter_entries

    key = session.key
    done_seq, done_sha, done_visible = done
    last_seq = session.entry_count - 1
    moved = done_seq >= 0 and done_visible != store.visible_through(key, done_seq)
    checkpoints = store.checkpoints(key)
    new_checkpoint = any((c.checkpoint_id or 0) > after_checkpoint for c in checkpoints)
    index_row = {
        **common,
        "author": author,
        "harness": session.harness,
        # the session-wide rule on the title alone (browse.titles: secrets_in_text)
        "title": _nul_free(session_title(store, session) or "") or None,
        "started_at": session.started_at,
        "ended_at": session.ended_at,
        "entry_count": session.entry_count,
    }
    team.push_session(index_row)
    if done_sha and done_seq >= last_seq and not new_checkpoint and not moved:
        return
    with in_session(store, key) as secrets:
        sha = secrets_digest(secrets)
        start = done_seq if sha == done_sha and not moved else -1
        # rows visible through the last row pushed: counted as the rows go (from the mark's
        # own count when pushing on from it; start == done_seq implies done_visible is exact)
        visible = (done_visible or 0) if start == done_seq else 0
        if start < last_seq:
            batch: list[dict[str, Any]] = []
            sent = 0
            for e in iter_entries(store, key, after_seq=start, page_rows=batch_rows):
                row_json, body = redacted_row(e)
                visible += 1 if e.visible else 0
                batch.append(
                    {
                        **common,
                        "seq": e.seq,
                        "kind": e.kind.value,
                        "role": e.role.value,
                        "ts": e.timestamp,
                        "visible": e.visible,
                        "row_json": row_json,
                        "body": body,
                    }
                )
                if len(batch) >= batch_rows:
                    sent += _flush(team, store, sid, key, batch, sha, visible, report)
                    if progress:
                        progress(key, sent)
            if batch:
                sent += _flush(team, store, sid, key, batch, sha, visible, report)
                if progress:
                    progress(key, sent)
        elif last_seq < 0 and (sha != done_sha or done_visible is None):
            store.set_team_pushed(sid, key, -1, sha, 0)  # an empty session
        team.replace_checkpoints(
            common["machine"],
            key,
            [
                {
                    **common,
                    "checkpoint_id": c.checkpoint_id,
                    "trigger": c.trigger.value,
                    "digest": _nul_free(
                        without_folder(redact(c.digest), session.project, common["project"])
                    ),
                    "prompt_count": c.prompt_count,
                    "created_at": c.created_at,
                }
                for c in checkpoints
            ],
        )
        report.checkpoints += len(checkpoints)


def _flush(
    team: TeamStore,
    store: Any,
    sid: str,
    key: str,
    batch: list[dict[str, Any]],
    sha: str,
    visible: int,
    report: SyncReport,
) -> int:
    """Push ``batch`` (one transaction), then mark it pushed locally (with ``visible``, the
    session's visible rows through its last); empties ``batch``."""
    team.push_entries(batch)
    store.set_team_pushed(sid, key, batch[-1]["seq"], sha, visible)
    n = len(batch)
    report.rows += n
    report.batches += 1
    batch.clear()
    return n


__all__ = ["BATCH_ROWS", "SyncReport", "copies_of", "redacted_row", "secrets_digest", "sync"]
