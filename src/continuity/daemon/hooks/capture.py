"""Transcript capture of the daemon's live sessions and the settled-turn policy (split out of
``continuity.daemon.hooks.live``; ``LiveCapture`` owns one ``TranscriptCapture``).

- ``import_`` imports a session's transcript file (new lines only, ``importer.import_file``),
  records the key the import gave it (``LiveSession.store_key``) and hands the newest task list
  among the rows it added (Claude Code ``TodoWrite``, Codex ``update_plan``) to the session's
  checkpoint state, so that live digests carry the open tasks (B27). ``import_pending`` does
  it at once for a hook that needs the newest rows (pre-compaction, session end, an agent
  checkpoint) when the file's bytes not yet imported are few (``SYNC_IMPORT_BYTES``).
- ``ensure_state`` gives a session's checkpoint state; after a daemon restart it is rebuilt
  from the stored rows (prompts, and the task list among the last ``TASK_LOOKBACK_ROWS``).
- ``sync`` replaces a session's live turns with the rows rendered from the file
  (``transcripts.sync_session``): the file is the lossless source; a session without a file
  keeps its live turns.
- ``settled_turn`` (a Stop, in the background): import, sync unless the file still lacks the
  session's newest live turn, the Stop's answer or the last prompt (``file_lags``: formats.md
  §4.1, the file may lag the payload), then the continuation policy (``run_policy``:
  ``compaction.after_turn`` as the session's fenced owner, with ``[daemon] stop_seconds`` to
  finish); a file that lagged is imported again on the worker's next ``LAG_TICKS`` ticks
  (``catch_up``: Qwen Code 0.24.4 writes its records a few hundred ms after its hooks).
- ``finish`` (a session end, in the background): import, capture the final transcript from the
  file (or, while the file lags, keep the row's live turns) and mark its row completed;
  ``recover_after_clear`` and ``sweep_rows`` complete the rows of
  sessions that are not live (after ``clear``; idle for the limit). Each returns the rows it
  completed, for the consolidation pass (``continuity.daemon.hooks.consolidation``).

On SQLite the daemon's writers queue on ``db_lock`` (see ``live``); imports also queue on one
lock of their own, so two imports of one file never interleave.

Over 600 lines: ``TranscriptCapture``'s imports, sync, catch-up and session-end capture share
its import lock, the expected turns and each session's file state.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from continuity.checkpoints import CheckpointRecorder, SessionState
from continuity.core.errors import ContinuityError, FencedWrite
from continuity.core.tasklist import task_list
from continuity.daemon.hooks.sessions import LiveSession, history, live_history
from continuity.transcripts import session_transcripts as tx

log = logging.getLogger("continuity.daemon")

#: A Stop answer is looked for among the transcript file's last rows, on its last characters.
ANSWER_WINDOW = 50
ANSWER_PROBE = 120
#: A hook that needs the file's newest rows before it answers (pre-compaction, B27) imports them
#: itself when the file holds at most this many bytes not yet imported; beyond that the import
#: stays in the background (the hook client waits 5 s, ``hookcmd.TIMEOUTS``; 4 MiB of Claude Code
#: lines import in about 0.7 s on SQLite).
SYNC_IMPORT_BYTES = 4 * 1024 * 1024
#: After a daemon restart the newest task list is looked for among a session's last rows only.
TASK_LOOKBACK_ROWS = 2_000
#: Rows read per store call when looking for task-list calls.
PAGE_ROWS = 500
#: Worker ticks (about a second apart) a settled turn's lagging file is imported again on.
LAG_TICKS = 5


def newest_task_call(rows: Iterable[Any]) -> Any | None:
    """The arguments of the newest task-list call (``tasklist.task_list``: Claude Code
    ``TodoWrite``, Codex ``update_plan``) the main agent makes among ``rows`` (seq order;
    sidechain and invisible rows are skipped, as in ``recovery``'s replay), else None."""
    found = None
    for row in rows:
        if row.visible and not row.sidechain:
            for call in row.tool_calls():
                if task_list(call.arguments) is not None:
                    found = call.arguments
    return found


class TranscriptCapture:
    """Imports, transcript sync, session-end capture and the settled-turn policy of the
    daemon's sessions (module docstring). ``session_lock(key)`` gives a session's lock,
    ``db_lock`` serializes the daemon's database writers, ``closing`` cancels a running
    summary at shutdown, ``summarizer`` makes the policy's summarizer (default: the
    configured one, ``[summarizer]``). ``recorder`` (the daemon's ``CheckpointRecorder``)
    gets the task list of the rows each import adds (B27). Thread-safe; locks are taken in the
    order session lock, ``import_lock``, ``db_lock``."""

    def __init__(
        self,
        store: Any,
        home: str,
        *,
        owner: str,
        budget_bytes: int,
        stop_seconds: float,
        db_lock: Any,
        session_lock: Callable[[str], Any],
        closing: threading.Event,
        summarizer: Callable[[], Any] | None = None,
        recorder: CheckpointRecorder | None = None,
    ) -> None:
        self.store, self.home, self.owner = store, home, owner
        self.budget_bytes, self.stop_seconds = budget_bytes, stop_seconds
        self._db_lock, self._session_lock, self._closing = db_lock, session_lock, closing
        self._summarizer_factory = summarizer
        self._summarizer: Any = None
        self.recorder = recorder
        #: held by every import and its task-list feed (see ``import_``)
        self.import_lock = threading.Lock()
        #: called with the session key after an import stored rows of it (issue 40: the
        #: embedding thread's nudge)
        self.on_rows: Callable[[str], None] | None = None
        #: mirror file → the OpenCode data folder it mirrors (``opencode_mirror``)
        self.opencode_data: dict[str, str] = {}
        #: session → ``(role, text)`` of its newest live turn (a prompt, or a Stop's answer)
        #: that the transcript file may not hold yet (``expect``, ``file_lags``).
        self.expected: dict[str, tuple[str, str]] = {}
        #: session → (live session, ticks left): lagging files ``catch_up`` imports again
        self.lagging: dict[str, tuple[LiveSession, int]] = {}

    # ------------------------------------------------------------------ imports

    def opencode_mirror(self, data_dir: str, session_id: str) -> str:
        """The transcript file of a live OpenCode session (issue 42 item 3): OpenCode keeps no
        transcript file, so our plugin sends its data folder ``data_dir`` and the session's
        transcript is its JSONL mirror in this workspace (``formats.opencode``, the file
        ``continuity import`` of that folder writes too), brought up to date before each
        import (``_refresh_mirror``)."""
        from pathlib import Path

        from continuity.formats import opencode

        root = opencode.mirror_root(data_dir, Path(self.home))
        mirror = str(opencode.mirror_path(root, session_id))
        self.opencode_data[mirror] = data_dir
        return mirror

    def _refresh_mirror(self, path: str) -> None:
        """Append what OpenCode stored since to the mirror ``path`` (when it is one); a
        failed read is logged, never raised (the last mirror is imported)."""
        data_dir = self.opencode_data.get(path)
        if data_dir is None:
            return
        from continuity.formats import opencode

        try:
            opencode.sync_mirrors(data_dir, os.path.dirname(path))
        except (OSError, ValueError, opencode.sqlite3.Error) as exc:
            log.warning("cannot mirror OpenCode's %s: %s", data_dir, exc)

    def import_(self, info: LiveSession) -> None:
        """Import the session's transcript file (new lines only), if it has one (a ``.jsonl``
        file that exists), then hand the newest task list among the rows it added to the
        session's checkpoint state (B27: a live digest carries the open tasks; only the added
        rows are read, seq ``count - imported`` on). A failed import is logged, never
        raised."""
        path = info.transcript_path
        if path:
            self._refresh_mirror(path)
        if not path or not path.endswith(".jsonl") or not os.path.isfile(path):
            return
        from continuity.formats.importer import import_file

        with self.import_lock:
            with self._db_lock:
                # live capture writes this session's checkpoints and transcript itself
                report = import_file(self.store, path, mark_due=False)
                session = self.store.get_session(report.session_key) if report.session_key else None
            if report.session_key:
                if report.old_rows_changed:  # its capture must render the session again
                    info.file_state = None
                info.store_key = report.session_key
                info.entry_count = session.entry_count if session else 0
                if session is not None and report.imported:
                    self._feed_tasks(info, session.entry_count - report.imported)
        if report.imported and report.session_key and self.on_rows is not None:
            self.on_rows(report.session_key)
        if report.status == "failed":
            log.warning("import of %s failed: %s", path, report.reason)

    def ensure_state(self, info: LiveSession, at: datetime) -> SessionState:
        """The session's checkpoint state (``recorder``); after a restart rebuilt from its
        imported rows: prompts (``sessions.history``) and the newest task list among its last
        rows (B27, ``newest_tasks``). Everything is read before the state is made, so a failed
        read changes nothing; under ``import_lock``, so an import's task list lands either in
        what is read or in the state made."""
        assert self.recorder is not None, "ensure_state needs the recorder"
        state = self.recorder.states.get(info.key)
        if state is not None:
            return state
        with self.import_lock:
            session = self.store.get_session(info.store_key or info.key)
            past = (
                history(self.store, session.key)
                if session is not None
                else live_history(self.store, info.key, info.agent_id)
            )
            tasks = self.newest_tasks(session.key) if session is not None else None
            started = session.started_at if session and session.started_at else at
            state = self.recorder.start_session(
                info.key, harness=info.harness, project=info.project, at=min(started, at)
            )
            if tasks is not None:  # before the lock goes: a later import's list is newer
                state.record_tool_call(tasks)
        if past is not None:
            past.apply(state)
        self._seed_activity(state, info.store_key or info.key)
        return state

    def _seed_activity(self, state: SessionState, key: str) -> None:
        """A rebuilt state's session-wide memory activity (issue 39: the ``session_end`` after
        a daemon restart still carries the session's remembers): the union of what its stored
        checkpoints hold, oldest first, under the same caps (one bounded read: the per-session
        cap keeps at most ``maxCheckpointsPerSession`` rows)."""
        from continuity.checkpoints.queue import MAX_QUERIES, MAX_REMEMBERS, _union

        try:
            stored = self.store.checkpoints(key)
        except ContinuityError:  # a rebuilt state without them is still a state
            log.warning("could not read the checkpoints of %s", key, exc_info=True)
            return
        for cp in stored:
            state.session_queries = _union(state.session_queries, cp.memory_queries, MAX_QUERIES)
            state.session_remembers = _union(
                state.session_remembers, cp.recent_remembers, MAX_REMEMBERS
            )

    def import_pending(self, info: LiveSession, max_bytes: int = SYNC_IMPORT_BYTES) -> bool:
        """Import now (``import_``) when the session's file holds at most ``max_bytes`` bytes
        past the offset the last import stored (the whole file when it was never imported or
        shrank); True when it did. For a hook whose answer needs the newest rows (B27: the
        pre-compaction digest's open tasks) without waiting on a long import."""
        path = info.transcript_path
        if not path or not path.endswith(".jsonl"):
            return False
        self._refresh_mirror(path)
        from pathlib import Path

        from continuity.formats.importer import path_key

        try:
            size = os.path.getsize(path)
            source = self.store.get_source(path_key(Path(path).resolve()))
        except OSError:
            return False
        done = source.offset if source is not None and source.offset <= size else 0
        if size - done > max_bytes:
            log.info(
                "%s: %d bytes not imported yet, left to the background import", path, size - done
            )
            return False
        self.import_(info)
        return True

    def _feed_tasks(self, info: LiveSession, first_seq: int) -> None:
        """Give the recorder's state of ``info`` the newest task list among the stored rows
        from ``first_seq`` on (under ``import_lock``, so imports feed in file order)."""
        if self.recorder is None or info.key not in self.recorder.states:
            return  # no state yet: ``ensure_state`` reads the task list when it makes one
        arguments = newest_task_call(self._rows(info.store_key or info.key, first_seq))
        if arguments is not None:
            with contextlib.suppress(KeyError):  # the session ended meanwhile
                self.recorder.record_tool_call(info.key, arguments)

    def newest_tasks(self, key: str) -> Any | None:
        """The arguments of the newest task-list call among the last ``TASK_LOOKBACK_ROWS``
        rows of stored session ``key`` (a state rebuilt after a restart; bounded read), else
        None. Callers hold ``import_lock`` so that an import's feed lands before or after."""
        session = self.store.get_session(key)
        if session is None:
            return None
        return newest_task_call(self._rows(key, session.entry_count - TASK_LOOKBACK_ROWS))

    def _rows(self, key: str, first_seq: int) -> Iterator[Any]:
        """The visible rows of ``key`` from seq ``first_seq`` on, a page at a time."""
        after = max(first_seq, 0) - 1
        while True:
            page = self.store.entries(key, after_seq=after, limit=PAGE_ROWS, visible_only=True)
            yield from page
            if len(page) < PAGE_ROWS:
                return
            after = page[-1].seq

    def sync(self, info: LiveSession) -> None:
        """Replace the session's live turns with its imported rows (when it was imported).
        The new rows' records are appended, superseding the live records
        (``tx.FileState``: O(turn), issue 45 item 10), while the row is still the one this
        daemon wrote last; after a restart, or when another writer changed the row, the
        session's records are rewritten (``TranscriptLog.replace_session``)."""
        key = info.store_key
        session = self.store.get_session(key) if key else None
        if key and session is not None:
            with self._session_lock(info.key), self._db_lock:
                # The turns waiting for the row are in the file's rows now: their ids are
                # applied (issue 21), before the sync drops their live records.
                self.store.mark_events_applied(
                    (i for _, _, i in info.pending if i), datetime.now(UTC)
                )
                known = (
                    info.file_state
                    if info.row_hash is not None
                    and self.store.transcript_hash(key, session.agent_id) == info.row_hash
                    else None
                )
                info.file_state = None  # unknown until the write below succeeds
                done = tx.sync_session(self.store, key, home=self.home, known=known)
                info.live_turns, info.file_state = 0, done.state
                info.row_digest = done.row_digest
                info.row_hash = done.row_digest.hex if done.row_digest is not None else None
                info.pending.clear()  # the file's rows hold these turns now

    def finish(self, info: LiveSession, at: datetime) -> tuple[bool, str, str | None]:
        """Capture the session's final transcript and complete its row at ``at``. Returns
        ``(completed, key, agent_id)``: whether this call completed the row, the row's key
        (the imported session's, else the live key) and its agent (None: the imported
        session's own). While the file lags the session's newest live turn (``file_lags``)
        the row keeps its live turns and is completed as it stands: a session end never
        replaces turns the hooks delivered with a file that does not hold them yet."""
        self.import_(info)
        lagging = self.file_lags(info)
        self.lagging.pop(info.key, None)
        with self._session_lock(info.key), self._db_lock:
            key = info.store_key or info.key
            if self.store.get_session(key) is not None and not lagging:
                return tx.end_session(self.store, key, home=self.home, at=at), key, None
            if lagging:
                log.info("transcript of %s lags its live turns at session end: kept", key)
            done = self.store.complete_transcript(key, info.agent_id, at)
            return done, key, info.agent_id

    def recover_after_clear(self, body: Any, at: datetime) -> tuple[str, str] | None:
        """A ``clear`` start whose previous session is not live here: complete the open row it
        left behind (``transcripts.recover_after_clear``); returns ``(session_key, agent_id)``
        of the row completed, or None."""
        with self._db_lock:
            key = tx.recover_after_clear(
                self.store,
                body.session_key,
                agent_id=body.agent_id,
                harness=body.harness,
                project=body.project,
                at=at,
            )
        return (key, body.agent_id) if key is not None else None

    def sweep_rows(self, now: datetime, idle_limit: timedelta) -> list[tuple[str, str]]:
        """Complete the open rows unchanged for ``idle_limit`` (``transcripts.sweep_idle``);
        returns their ``(session_key, agent_id)``."""
        with self._db_lock:
            return tx.sweep_idle(self.store, home=self.home, now=now, idle_limit=idle_limit)

    # ------------------------------------------------------------------ settled turns

    def settled_turn(self, info: LiveSession, *, settled: bool, in_harness: bool = False) -> None:
        """A Stop's background work (module docstring); the outcome goes to
        ``info.last_outcome``. ``in_harness``: the harness writes the continuation checkpoint
        into its own session (pi, issue 14): the policy writes none here (``not_needed``,
        reason ``checkpoint_in_harness``), so the store never holds two."""
        self.import_(info)
        if self.file_lags(info):  # keep the live records until the file catches up
            log.info("transcript of %s lags its live turns: kept", info.key)
            self.lagging[info.key] = (info, LAG_TICKS)
        else:
            self.lagging.pop(info.key, None)
            self.sync(info)
        if in_harness:
            info.last_outcome = {
                "session": info.store_key or info.key,
                "status": "not_needed",
                "reason": "checkpoint_in_harness",
            }
            return
        info.last_outcome = self.run_policy(info, settled=settled)

    def catch_up(self) -> None:
        """Import the lagging files again (``lagging``; on the worker's tick, its thread):
        sync each that holds its newest live turn now; forget it then or after ``LAG_TICKS``."""
        for key, (info, left) in list(self.lagging.items()):
            self.import_(info)
            if not self.file_lags(info):
                self.lagging.pop(key, None)
                log.info("transcript of %s caught up with its live turns", key)
                self.sync(info)
            elif left <= 1:
                self.lagging.pop(key, None)
            else:
                self.lagging[key] = (info, left - 1)

    def expect(self, info: LiveSession, role: str, text: str) -> None:
        """Note a live turn (``role`` ``user`` or ``assistant``) the session's transcript file
        should come to hold; the newest one is what ``file_lags`` looks for. Sessions without
        a file have nothing to wait for."""
        if info.transcript_path and text.strip():
            self.expected[info.key] = (role, text)

    def file_lags(self, info: LiveSession) -> bool:
        """True while the imported transcript file does not yet hold the session's newest live
        turn (``expect``: the last prompt, or the last Stop's ``last_assistant_message``),
        looked for among the file's last ``ANSWER_WINDOW`` rows of the same role, compared on
        its last ``ANSWER_PROBE`` characters with whitespace collapsed. False once it does
        (the turn is then forgotten), or when there is nothing to wait for."""
        expected = self.expected.get(info.key)
        key = info.store_key
        session = self.store.get_session(key) if expected and key else None
        if session is None or expected is None:
            return False
        role, text = expected
        probe = " ".join(text.split())[-ANSWER_PROBE:]
        rows = self.store.entries(
            key, after_seq=session.entry_count - ANSWER_WINDOW - 1, limit=ANSWER_WINDOW + 1
        )
        if any(
            probe in " ".join(tx.render_entry(r).split())
            for r in rows
            if r.role is not None and r.role.value == role
        ):
            self.expected.pop(info.key, None)
            return False
        return True

    def run_policy(self, info: LiveSession, *, settled: bool = True) -> dict[str, Any]:
        """The continuation policy for the session's settled turn (``after_turn``) as its
        fenced owner; returns ``Outcome.to_dict()`` or ``{"status": "not_needed", "reason"}``
        (reasons: ``no_transcript``, ``summarizer_unavailable``, ``lease_held``)."""
        from continuity.continuation.compaction import Skip, after_turn

        key = info.store_key
        if not key or self.store.get_session(key) is None:
            return {"session": info.key, "status": "not_needed", "reason": "no_transcript"}
        try:
            summarizer = self.summarizer()
        except ContinuityError as exc:
            log.warning("continuation policy skipped for %s: %s", key, exc)
            return {"session": key, "status": "not_needed", "reason": "summarizer_unavailable"}
        try:
            lease = self.store.acquire_lease(key, self.owner, self.stop_seconds + 60)
        except FencedWrite as exc:
            return {
                "session": key,
                "status": "not_needed",
                "reason": "lease_held",
                "detail": str(exc),
            }
        try:
            outcome = after_turn(
                self.store,
                key,
                lease=lease,
                summarizer=summarizer,
                budget_bytes=self.budget_bytes,
                settled=settled,
                deadline=time.monotonic() + self.stop_seconds,
                stop=self._closing,
            )
        finally:
            self.store.release_lease(lease)
        if outcome.skip is Skip.NO_TIME_LEFT:  # issue 15: never nothing
            log.warning(
                "continuation policy for %s: no time left for a summary within "
                "[daemon] stop_seconds = %g",
                key,
                self.stop_seconds,
            )
        return outcome.to_dict()

    # ------------------------------------------------------------------ harness checkpoints

    def harness_summary(
        self, info: LiveSession, body: Any, cancel: threading.Event
    ) -> dict[str, Any]:
        """The summary of a harness's own continuation checkpoint (issue 14, pi): import the
        session file first (so the run id is the store's), summarize ``body.entries``
        (``continuation.harness.summarize_working_view``) with the configured summarizer,
        the store's notes quoted as evidence, within ``[daemon] stop_seconds`` (and the
        harness's ``deadline_seconds``, less a second to answer in), cancelled by ``cancel``.

        Returns ``{"status": "ok", "session", "run_id", "summary", "summary_bytes", "chunks",
        "covers": {"from_entry_id", "through_entry_id"}, "summarizer"}`` or, after recording
        one refusal receipt (``refuse``), ``{"status": "refused", "session", "run_id",
        "reason", "detail", "receipt_id"}``. Nothing is written for a success: the harness persists
        the checkpoint, and the next import of its file brings it here."""
        from continuity.continuation.harness import summarize_working_view
        from continuity.core.model import ReceiptReason
        from continuity.formats.pi import read_entries

        self.import_(info)
        key = info.store_key or info.key
        run_id = self.run_id(key, body.request_entry_id)
        seconds = self.stop_seconds
        if body.deadline_seconds is not None:
            seconds = max(0.0, min(seconds, body.deadline_seconds - 1.0))
        try:
            summarizer = self.summarizer()
        except ContinuityError as exc:
            log.warning("continuation summary for %s: no summarizer: %s", key, exc)
            return self.refuse(
                key,
                run_id,
                ReceiptReason.PROVIDER_FAILURE,
                "the summarizer is not usable (see the daemon log)",
            )
        rows = read_entries(body.entries, key)
        notes = (
            [n.text for n in self.store.notes(key)]
            if self.store.get_session(key) is not None
            else []
        )
        result = summarize_working_view(
            rows,
            summarizer=summarizer,
            notes=notes,
            budget_bytes=self.budget_bytes,
            cancel=cancel,
            deadline=time.monotonic() + seconds,
        )
        if result.reason is not None:
            return self.refuse(key, run_id, result.reason, result.detail)
        ids = [e.native_id for e in rows if e.native_id]
        return {
            "status": "ok",
            "session": key,
            "run_id": run_id,
            "summary": result.summary,
            "summary_bytes": len((result.summary or "").encode("utf-8")),
            "chunks": result.chunks,
            "summarizer": summarizer.name,
            "covers": {
                "from_entry_id": ids[0] if ids else None,
                "through_entry_id": ids[-1] if ids else None,
            },
        }

    def run_id(self, key: str, request_entry_id: str | None) -> str | None:
        """The store's run id of the run whose request row has native id
        ``request_entry_id`` (``formats.runs.run_id_for``); else that of the session's newest
        run; None when the session is not stored."""
        from continuity.formats.runs import run_id_for

        if request_entry_id:
            seq = self.store.native_seqs(key, [request_entry_id]).get(request_entry_id)
            if seq is not None:
                return run_id_for(key, seq)
        if self.store.get_session(key) is None:
            return None
        run = self.store.last_run(key)
        return run.run_id if run is not None else None

    def refuse(
        self, key: str, run_id: str | None, reason: Any, detail: str | None = None
    ) -> dict[str, Any]:
        """Record the ``continuation_checkpoint_refused`` receipt of ``run_id`` (run id,
        closed reason, seed 002, and its short ``detail``, issue 45 item 7: which check
        failed, never summary text) as the session's fenced owner, once per run: a second
        refusal of the same run (the daemon's own cancellation and the harness's report of
        the same abort) writes nothing and answers the first receipt's id. Returns the
        ``{"status": "refused", ...}`` answer of ``harness_summary``; ``receipt_id`` is None
        when the receipt could not be written (another owner holds the session)."""
        from continuity.core.model import ReceiptReason, RefusalReceipt, receipt_detail

        reason = ReceiptReason(reason)
        detail = receipt_detail(detail)
        out: dict[str, Any] = {
            "status": "refused",
            "session": key,
            "run_id": run_id,
            "reason": reason.value,
            "detail": detail,
            "receipt_id": None,
        }
        with self._session_lock(key), self._db_lock:
            if run_id is not None:
                earlier = self.store.receipts(key, run_id=run_id, limit=1)
                if earlier:
                    out["receipt_id"] = earlier[0].receipt_id
                    out["reason"] = earlier[0].reason.value
                    out["detail"] = earlier[0].detail
                    return out
            try:
                lease = self.store.acquire_lease(key, self.owner, 60)
            except FencedWrite as exc:
                log.warning("refusal receipt of %s not written: %s", key, exc)
                return out
            try:
                receipt = self.store.add_receipt(
                    RefusalReceipt(key, run_id, reason, detail=detail), lease.token
                )
            finally:
                self.store.release_lease(lease)
        log.info(
            "continuation_checkpoint_refused %s run %s: %s (%s)", key, run_id, reason.value, detail
        )
        out["receipt_id"] = receipt.receipt_id
        return out

    def summarizer(self) -> Any:
        """The policy's summarizer, made once. Raises ``ContinuityError`` when it cannot be
        made (bad ``[summarizer]`` settings)."""
        if self._summarizer is None:
            if self._summarizer_factory is not None:
                self._summarizer = self._summarizer_factory()
            else:
                from continuity.continuation.summarize import make_summarizer
                from continuity.continuation.summarize.settings import load_settings

                self._summarizer = make_summarizer(load_settings(self.home))
        return self._summarizer
