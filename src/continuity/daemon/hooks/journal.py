"""Live transcript turns: the canonical JSONL record before the hook's answer, the
``session_transcripts`` row after it.

``LiveTurns.append`` writes one turn (``User:`` prompt, or the ``Assistant:`` message a Stop
carries when the harness gave no transcript file) as a ``live`` record of the harness's
canonical JSONL (``continuity.transcripts.session_transcripts``), fsync'd, and queues ``write_row``, which adds every
turn that arrived meanwhile to the session's row in one write (the row is derived: a crash
between the two leaves the record, and the harness's file, when there is one, restores the row
at the next capture).

**Exactly once** (issue 21). A live record carries its hook event's id (``event_id``); the row
write commits the ids of the turns it adds to ``applied_events`` in the same transaction, so a
turn is in the row with its id or in neither. A kill between the record and the row leaves a
record whose id is not applied: ``reconcile``, at daemon start, adds such turns to their rows
(with their ids), and the spool replay then skips them.

**Torn tail.** A crash in the middle of a write leaves the file's last line unterminated.
``TranscriptLog.append`` repairs it under the file's lock before it writes (B36: a fragment that
still parses only gets its newline, any other is cut off into ``<file>.torn``), so a live record
always starts a line of its own. The record the fragment belonged to is then missing from the
file: when the fragment was an imported session's, ``LiveTurns`` queues ``restore_torn``, which
rewrites that session's records from the database (``transcripts.restore_torn``); a live turn's
own record is written again when its hook, never answered, is replayed from the spool.

**Group commit.** Every live turn must be on disk before its hook is answered (B57), and each
``TranscriptLog.append`` call holds the file's lock across its writes and one ``fsync``. Called
once per turn from many threads, the turns queue behind one another's fsync. ``GroupAppender``
lets the first caller write everything waiting as one ``append`` call (one fsync), while the
callers that arrive meanwhile gather into the next batch, written by one of them as soon as the
first finishes. Every caller still returns only after its own record was fsync'd, or raises
the error of its batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from continuity.core.faults import crash_point
from continuity.transcripts import session_transcripts as tx


def _tail(after_text: bool, paras: list[str]) -> str:
    """What the paragraphs ``paras`` add to a row's text: their text, after the ``"\n\n"``
    separator when the row's text is not empty (``after_text``; the row then reads
    ``text + tail``)."""
    joined = "\n\n".join(paras)
    return f"\n\n{joined}" if after_text and joined else joined


class _Batch:
    __slots__ = ("records", "done", "error")

    def __init__(self) -> None:
        self.records: list[Any] = []
        self.done = False
        self.error: BaseException | None = None


class GroupAppender:
    """Appends records to ``log`` (a ``TranscriptLog``), batching concurrent callers."""

    def __init__(self, log: Any) -> None:
        self.log = log
        self._cond = threading.Condition()
        self._open: _Batch | None = None
        self._writing = False
        self.batches = 0  # appends made (one fsync each), for figures

    def append(self, record: Any) -> None:
        """Write ``record`` durably (module docstring). Raises the batch's ``OSError``."""
        with self._cond:
            if self._open is None:
                self._open = _Batch()
            batch = self._open
            batch.records.append(record)
            while not batch.done:
                if not self._writing and batch is self._open:
                    self._open, self._writing = None, True
                    break
                self._cond.wait()
            else:
                if batch.error is not None:
                    raise batch.error
                return
        try:
            self.log.append(batch.records)
        except BaseException as exc:  # noqa: BLE001 - every caller of the batch gets the error
            batch.error = exc
        with self._cond:
            batch.done, self._writing = True, False
            self.batches += 1
            self._cond.notify_all()
        if batch.error is not None:
            raise batch.error


class LiveTurns:
    """Live turns of the daemon's sessions (module docstring). ``db_lock`` serializes the
    daemon's database writers, ``session_lock(key)`` gives a session's lock, ``submit(name,
    task)`` queues background work (``Worker.submit``). ``info`` is a ``LiveSession``."""

    def __init__(
        self,
        store: Any,
        home: str,
        *,
        db_lock: Any,
        session_lock: Callable[[str], Any],
        submit: Callable[[str, Callable[[], object]], bool],
    ) -> None:
        self.store, self.home = store, home
        self._db_lock, self._session_lock, self._submit = db_lock, session_lock, submit
        self._lock = threading.Lock()
        self._appenders: dict[str, GroupAppender] = {}
        self._row_locks: dict[str, threading.Lock] = {}

    def append(
        self, info: Any, role: str, label: str, text: str, at: datetime, event_id: str | None = None
    ) -> None:
        """Append one live turn to the canonical JSONL (a ``live`` record carrying
        ``event_id``, fsync'd by group commit) before the hook is answered; the session's row
        follows in the background (``write_row``), one write for all the turns that arrived
        meanwhile, committing the turns' event ids with it (module docstring: exactly once)."""
        key = info.store_key or info.key
        para = tx.paragraph(label, tx.storable(text))
        appender = self._appender(info.harness)
        appender.append(
            tx.TranscriptRecord(
                info.agent_id,
                info.harness,
                key,
                info.project,
                info.entry_count + info.live_turns,
                role,
                para,
                "live",
                info.transcript_path,
                at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                event_id=event_id,
            )
        )
        crash_point("turn-recorded")
        if appender.log.torn_sessions:  # the append cut off a crash's torn last line
            self._submit(f"torn:{info.harness}", lambda: self.restore_torn(appender.log))
        info.pending.append((para, at, event_id))
        info.live_turns += 1
        self._submit(f"row:{info.key}", lambda: self.write_row(info))

    def write_row(self, info: Any) -> None:
        """Append the session's pending live turns to its ``session_transcripts`` row in one
        write (worker thread). The row's text is kept in ``info`` and re-read only when its
        stored hash says another writer changed it. The session stays unlocked while the
        write waits for the database, so its next hook is answered meanwhile."""
        with self._row_lock(info.key):
            self._write_row(info)

    def _row_lock(self, key: str) -> threading.Lock:
        """The lock that makes one session's row writes one at a time: the worker's
        ``row:`` task and a session end's own ``write_row`` both took the same pending turns
        and appended them twice (a fresh-user review saw a prompt doubled under load)."""
        with self._lock:
            return self._row_locks.setdefault(key, threading.Lock())

    def _write_row(self, info: Any) -> None:
        key = info.store_key or info.key
        with self._session_lock(info.key):
            taken, known, known_hash = list(info.pending), info.row_digest, info.row_hash
        if not taken:
            return
        paras = [p for p, _, _ in taken]
        at = taken[-1][1]
        with self._db_lock, self.store.batch():  # the row and its turns' ids: one commit
            # Issue 17: the common case is one append of the new turns (revision 0018), a
            # compare-and-set on the hash of the text this daemon wrote last, whose new hash
            # extends the running one (no O(session) work per turn); another writer's change
            # makes it read the row.
            written, digest = False, None
            if known is not None and known_hash is not None:
                tail = _tail(not known.empty, paras)
                digest = known.extended(tail)
                written = self.store.append_transcript(
                    key,
                    info.agent_id,
                    tail=tail,
                    content_hash=digest.hex,
                    expected_hash=known_hash,
                    harness=info.harness,
                    project=info.project,
                    updated_at=at,
                )
            if not written:
                row = self.store.get_transcripts([key], info.agent_id).get(key)
                if row is None:
                    new = "\n\n".join(paras)
                    tx.put_transcript(
                        self.store,
                        key,
                        new,
                        agent_id=info.agent_id,
                        harness=info.harness,
                        project=info.project,
                        now=at,
                    )
                    digest = tx.TextDigest(new)
                else:
                    tail = _tail(bool(row.content), paras)
                    tx.extend_transcript(
                        self.store, row, tail, harness=info.harness, project=info.project, now=at
                    )
                    digest = tx.TextDigest(row.content + tail)
            self.store.mark_events_applied((i for _, _, i in taken if i), at)
            crash_point("row-before-commit")
        crash_point("row-after-commit")
        assert digest is not None  # the append's, or the read row's when it did not apply
        with self._session_lock(info.key):
            info.row_digest, info.row_hash = digest, digest.hex
            del info.pending[: len(taken)]

    def reconcile(self) -> int:
        """Give the session rows the live turns whose JSONL record is on disk but whose row
        write never committed (a daemon killed in between, issue 21): every record carrying
        an ``event_id`` not in ``applied_events`` is appended to its session's row, in file
        order, with its id, one transaction per session. Run at daemon start, before the spool
        replay (which then skips those ids). One pass over each harness's JSONL file; returns
        the turns added. Raises ``OSError`` / ``StoreError``."""
        from collections import OrderedDict

        added = 0
        for path in sorted((Path(self.home) / "memory").glob("*/transcripts/" + tx.FILE_NAME)):
            records = list(tx.TranscriptLog(path).live_events())
            if not records:
                continue
            with self._db_lock:
                done = self.store.applied_events(r.event_id for r in records)
            missing: OrderedDict[tuple[str, str], list[Any]] = OrderedDict()
            for record in records:
                if record.event_id not in done:
                    done.add(record.event_id)
                    missing.setdefault((record.agent_id, record.session_key), []).append(record)
            for (agent_id, key), turns in missing.items():
                self._restore_row(agent_id, key, turns)
                added += len(turns)
        return added

    def _restore_row(self, agent_id: str, key: str, turns: list[Any]) -> None:
        at = datetime.fromisoformat(turns[-1].captured_at.replace("Z", "+00:00"))
        with self._db_lock, self.store.batch():
            row = self.store.get_transcripts([key], agent_id).get(key)
            paras = [r.content for r in turns]
            if row is None:
                tx.put_transcript(
                    self.store,
                    key,
                    "\n\n".join(paras),
                    agent_id=agent_id,
                    harness=turns[-1].harness,
                    project=turns[-1].project,
                    now=at,
                )
            else:
                tx.extend_transcript(
                    self.store,
                    row,
                    _tail(bool(row.content), paras),
                    harness=row.harness,
                    project=row.project,
                    now=at,
                )
            self.store.mark_events_applied((r.event_id for r in turns), at)

    def restore_torn(self, log_file: Any) -> list[tuple[str, str]]:
        """Rewrite from the database the records a torn-tail repair of ``log_file`` (a
        ``TranscriptLog``) cut off (module docstring); returns the ``(agent_id, session_key)``
        rewritten. Raises ``OSError`` when the file cannot be written."""
        with self._db_lock:
            return tx.restore_torn(self.store, log_file, home=self.home)

    def _appender(self, harness: str) -> GroupAppender:
        with self._lock:
            found = self._appenders.get(harness)
            if found is None:
                log_file = tx.TranscriptLog(tx.transcript_path(self.home, harness))
                found = self._appenders[harness] = GroupAppender(log_file)
            return found
