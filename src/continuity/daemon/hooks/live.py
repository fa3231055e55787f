"""``LiveCapture``: the daemon's service. Hook events in; checkpoints, transcripts, recovery and
continuation checkpoints out. ``continuity.daemon.server`` is a thin HTTP shell over it.

Per event (each under its session's lock, so one session's events apply in order):

- **session-start** records the session (its checkpoint state, seed 000) and answers its
  context, every kind opening with its heading and ``FRAMING`` (issue 39: the same line in
  Claude Code, Codex and pi): a new session (``startup``, ``clear``; pi's first
  ``before_agent_start`` carries it) gets the project brief (``brief.build_brief``: the
  earlier sessions of its project within the recovery window, naming only the tools the
  harness has, ``reach``; nothing when there is none); a ``compact`` start
  ``## Session Recovery Context`` and the session's own newest checkpoint; a ``resume``, whose
  context holds the session's own turns, the newest checkpoint of another session of the
  project made since the resumed one started, else nothing (issue 12). All within
  ``recoveryBudgetChars`` characters, and never the same text twice into one session
  (formats.md §4.1: a resume replays injected text; the marks are kept with the applied
  event ids, also across a daemon restart; ``compact`` starts a fresh context, so it may). A
  ``clear`` start ends the harness's previous session of the same project (Claude Code sends no
  SessionEnd then); a Codex start ends the other Codex sessions of its project (Codex has no
  SessionEnd; formats.md §4.2).
- **user-prompt-submit** (but the empty one of a tool-result step, ``adapters.STEP_PROMPTS``:
  answered ``step``, nothing done) counts the prompt (``periodic`` may be queued: seed 000's
  2,500 ms window) and appends the live ``User:`` turn to the canonical transcript JSONL (a record
  fsync'd before the answer, by group commit); the session's row follows in the background.
  Then it answers recall at the point of action (issue 40, ``retrieval.at_action``) as its
  ``context``: the project's other sessions' decisions and rows relevant to the prompt; ""
  when nothing clears the relevance rule, ``[retrieval] at_action`` is off, or the event is
  replayed from the spool, or it takes over ``RECALL_SECONDS``, or ``RECALL_IN_FLIGHT`` recalls
  are running already, or the daemon is under load (over ``RECALL_BUSY_RATE`` hook events in
  the last second): then answered at once; the same rows never twice into one session.
- **pre-tool-use** (a question, never journaled nor spooled) answers recall before an edit or
  a shell command (``recall_for_tool``) the same way.
- **pre-compaction** writes the ``pre_compaction`` checkpoint before answering (B60: before the
  harness changes its view; an empty ``transcript_path`` falls back to the one seen earlier),
  after importing the file's new lines (``capture.import_pending``, bounded) so that its
  ``### Open Tasks`` holds the agent's newest task list (B27).
- **post-compaction** re-imports the transcript; the next start may inject again.
- **stop** (a settled turn): in the background, import the transcript file, capture the
  transcript, then run the continuation policy (``compaction.after_turn``) as the session's
  fenced owner ``continuity-daemon:<pid>`` with ``[daemon] stop_seconds`` to finish. Codex's Stop
  is "turn settled", never "session ended" (origin defect).
- **session-end** is journaled in the spool before it is acknowledged and done in the
  background (Claude Code kills SessionEnd hooks after 1.5 s): flush the session's queued
  checkpoints, write ``session_end``, import and capture the transcript, mark it completed,
  then queue the consolidation pass (``hooks.consolidation``: lineage artifacts, MEMORY.md).
  A second end of the same session writes nothing new.

Imports, transcript sync, session-end capture and the settled-turn policy live in
``hooks.capture`` (``TranscriptCapture``). On SQLite the daemon's own writers queue on one lock
(``_db_lock``) rather than in SQLite's busy handler, which sleeps in steps of milliseconds.
Sessions idle for ``[transcripts] idle_limit_minutes`` are ended (reason ``idle``); the
supersede rule and the idle sweep also end the sessions the store holds open that were live
when the daemon restarted (``stored_live``: a bounded query of open transcript rows); every
completion path (end, clear, supersede, idle, recovery after clear, the idle sweep) queues the
consolidation pass. After a daemon restart a session's checkpoint state is rebuilt from its
imported rows (prompts, prompts since its newest checkpoint, the newest task list;
``capture.ensure_state``).

Over 600 lines: ``LiveCapture`` orders every hook event of a session under one lock; the event
handlers share its sessions, locks and worker. Imports, capture, consolidation, the journal and
the worker already live in ``hooks.capture``, ``hooks.consolidation``, ``hooks.journal`` and
``hooks.worker``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from continuity import checkpoints as cps
from continuity.core.errors import SessionNotFound
from continuity.core.model import Checkpoint, CheckpointTrigger
from continuity.daemon.embedding import EmbeddingThread
from continuity.daemon.hooks import adapters, spool
from continuity.daemon.hooks.capture import TranscriptCapture
from continuity.daemon.hooks.consolidation import Consolidator
from continuity.daemon.hooks.journal import LiveTurns
from continuity.daemon.hooks.models import BODIES, CheckpointBody, HookBody, SessionEndBody
from continuity.daemon.hooks.sessions import LiveSession, as_stored, busy_timeout_first
from continuity.daemon.hooks.worker import RecentIds, Worker
from continuity.store import SqlStore
from continuity.transcripts.transcript_log import TextDigest

log = logging.getLogger("continuity.daemon")

RECOVERY_HEADING = "## Session Recovery Context\n"
#: issue 39: the first line after the heading of every text a session start injects, the
#: same in Claude Code, Codex and pi (``checkpoints.recovery.FRAMING``).
FRAMING = cps.FRAMING
#: How often idle sessions are looked for (seconds).
SWEEP_SECONDS = 60.0
#: The longest a hook's answer waits for recall at the point of action (seconds; issue 40):
#: past it the prompt is answered without recall (the hook's whole deadline is 3 s, and a
#: hook past its deadline spools an event that was in fact applied).
RECALL_SECONDS = 1.5
#: Recalls running at once (the recall pool's threads). A prompt or a tool call that finds
#: them all busy is answered at once without recall (issue 45 item 10): a recall that would
#: queue behind them only waited out ``RECALL_SECONDS``, and under load every prompt and tool
#: hook did (bench/load.py: 1.5 s each, past the deadline of the hook behind them).
RECALL_IN_FLIGHT = 2
#: Hook events per second (over the last second) above which the daemon is under load and
#: recall at the point of action is skipped (``skipped`` ``busy``; issue 45 item 10). Recall
#: is a help that costs tens of milliseconds of CPU per prompt or shell call (33 ms at 12,000
#: rows on this 2-core machine, quiet), and under load that CPU is what the hooks' own answers
#: wait for: at 200 events/s it took the p99 from 55 to 211 ms (bench/load.py). One person's
#: agents, even ten side by side, send a few events a second; 25 is several times that.
RECALL_BUSY_RATE = 25
#: At most this many stored open sessions one start or one idle sweep ends (issue 12: the
#: sessions live before a daemon restart are known from the store only; the query is bounded).
STORED_LIVE_LIMIT = 50


def injection_mark(session_key: str, checkpoint_id: int) -> str:
    """The id, among the applied event ids (``spool.RecentEvents``, kept across restarts),
    saying that checkpoint ``checkpoint_id`` was injected into session ``session_key``
    (formats.md §4.1: never inject one continuation twice into a session)."""
    import hashlib

    digest = hashlib.sha256(session_key.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return f"inject-{digest}-{checkpoint_id}"


def _now() -> datetime:
    return datetime.now(UTC)


def harness_reach(home: str | os.PathLike[str], harness: str | None) -> Any:
    """The ``brief.Reach`` of a ``harness`` session of the workspace at ``home`` (issue 39):
    the continuity MCP tools that harness has (``install.installed_mcp_tools``: only those
    ``hooks install`` registered; none for ``harness`` None), the tool that loads them where
    the harness defers MCP tools (``install.MCP_LOADERS``), this install's CLI for this
    workspace (``cli_prefix``), and the workspace's MEMORY.md when it exists."""
    from continuity.brief import Reach
    from continuity.daemon.hooks.install import MCP_LOADERS, installed_mcp_tools
    from continuity.lineage.memory_md import FILE_NAME

    mcp = installed_mcp_tools(home, harness) if harness else {}
    memory = os.path.abspath(os.path.join(home, FILE_NAME))
    return Reach(
        mcp,
        cli_prefix(home),
        MCP_LOADERS.get(harness or "") if mcp else None,
        memory if os.path.isfile(memory) else None,
    )


def cli_prefix(home: str | os.PathLike[str]) -> str | None:
    """The shell command prefix that runs this install's continuity CLI on workspace
    ``home`` (issue 39: what an injected text may tell a model to run): the absolute path of
    the ``continuity`` console script beside the running interpreter, else the one on PATH,
    then ``--home HOME``, shell-quoted; None when there is no such script."""
    import shlex
    import shutil
    import sys
    from pathlib import Path

    script = Path(sys.executable).parent / "continuity"
    found = str(script) if script.is_file() else shutil.which("continuity")
    if not found:
        return None
    return f"{shlex.quote(os.path.abspath(found))} --home {shlex.quote(os.path.abspath(home))}"


class EventRate:
    """How many events ``tick`` counted in the last ``window`` seconds (monotonic clock).
    Thread-safe; memory is one timestamp per event of the window."""

    def __init__(self, window: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        from collections import deque

        self.window, self.clock = window, clock
        self._times: Any = deque()
        self._lock = threading.Lock()

    def tick(self, now: float | None = None) -> None:
        """Count one event at ``now`` (default: ``clock()``)."""
        now = self.clock() if now is None else now
        with self._lock:
            self._times.append(now)
            self._drop(now)

    def per_second(self, now: float | None = None) -> float:
        """Events in the last ``window`` seconds, divided by ``window``."""
        now = self.clock() if now is None else now
        with self._lock:
            self._drop(now)
            return len(self._times) / self.window

    def _drop(self, now: float) -> None:
        while self._times and self._times[0] <= now - self.window:
            self._times.popleft()


def compacts(body: Any) -> bool:
    """Whether a ``pre-compaction`` event announces a compaction (a ``pre_compaction``
    checkpoint is written) or only a harness's check. Gemini CLI fires PreCompress with
    trigger ``auto`` before every request whose history is not empty, before it compares the
    history with its threshold (``chatCompressionService.compress``, 0.61.0): most are no
    compaction, and each wrote a ``pre_compaction`` checkpoint (two in a one-prompt run, issue
    42 review). Its ``manual`` trigger (``/compress``) is one; every other harness's event
    is one."""
    harness = str(getattr(body.harness, "value", body.harness))
    return not (harness == "gemini-cli" and (body.trigger or "auto") == "auto")


class LiveCapture:
    """The daemon's service (module docstring). Thread-safe; ``start`` before use, ``close``
    at shutdown (finishes queued work, replays the spool, flushes queued checkpoints).
    ``summarizer`` makes the summarizer of the policy and of the consolidation pass (default:
    the configured one); ``consolidate`` False turns the pass at session end off."""

    def __init__(
        self,
        store: SqlStore,
        *,
        home: str | os.PathLike[str],
        config: cps.CheckpointConfig,
        budget_bytes: int,
        stop_seconds: float,
        idle_limit: timedelta,
        summarizer: Callable[[], Any] | None = None,
        tick_seconds: float = 1.0,
        consolidate: bool = True,
        max_body_bytes: int | None = None,
        retrieval: Any = None,
    ) -> None:
        self.store, self.home, self.config = store, os.fspath(home), config
        #: ``[daemon] max_body_bytes``: a spooled payload over it is refused at replay, as
        #: the same body posted would have been (413): the limit holds whatever the path.
        self.max_body_bytes = max_body_bytes
        busy_timeout_first(store)
        self.budget_bytes, self.stop_seconds, self.idle_limit = (
            budget_bytes,
            stop_seconds,
            idle_limit,
        )
        self.owner = f"continuity-daemon:{os.getpid()}"
        # SQLite takes one writer at a time and makes the others sleep in its busy handler
        # (1, 2, 5, 10 ... ms): our writing threads queue on this lock instead.
        self._db_lock: Any = threading.Lock() if store.dialect == "sqlite" else nullcontext()
        sink = cps.store_sink(store, config.max_checkpoints_per_session)

        def locked_sink(rows: Any) -> None:
            with self._db_lock:
                sink(rows)

        self.recorder = cps.CheckpointRecorder(cps.CheckpointQueue(locked_sink), config)
        self.worker = Worker(self._tick, tick_seconds=tick_seconds)
        self.sessions: dict[str, LiveSession] = {}
        self.seen = spool.RecentEvents(self.home)  # persisted: duplicates survive a restart
        self.closing = threading.Event()
        #: sessions whose context a harness compaction replaced since their last injection
        self._compacted: set[str] = set()
        self._ended = RecentIds()
        self._lock = threading.Lock()
        self._session_locks: dict[str, threading.RLock] = {}
        self._drain_lock = threading.Lock()
        self.capture = TranscriptCapture(
            store,
            self.home,
            owner=self.owner,
            budget_bytes=budget_bytes,
            stop_seconds=stop_seconds,
            db_lock=self._db_lock,
            session_lock=self._session_lock,
            closing=self.closing,
            summarizer=summarizer,
            recorder=self.recorder,
        )
        self.consolidator = Consolidator(
            store, self.home, enabled=consolidate, summarizer=summarizer
        )
        self.turns = LiveTurns(
            store,
            self.home,
            db_lock=self._db_lock,
            session_lock=self._session_lock,
            submit=self.worker.submit,
        )
        #: issue 40: rows and memories embedded in the background (``daemon.embedding``)
        self.embedding = EmbeddingThread(store, self.home, db_lock=self._db_lock)
        self.capture.on_rows = self._rows_stored
        #: called (no argument) after rows or a session's end were stored: the daemon's
        #: background team sync (``daemon.teamsync``) is nudged by it (issue 41)
        self.on_change: Callable[[], None] | None = None
        self._last_sweep = time.monotonic()
        self._local = threading.local()  # .replaying: a spooled event is being applied
        #: ``[retrieval]`` (``RetrievalSettings``; read from the workspace on first use)
        self._retrieval = retrieval
        #: session key → the rows and memories recall at the point of action gave it
        self._recalled: dict[str, set[str]] = {}
        from concurrent.futures import ThreadPoolExecutor

        #: where recall runs, so that an answer never waits longer than ``RECALL_SECONDS``
        self._recall_pool = ThreadPoolExecutor(
            RECALL_IN_FLIGHT, thread_name_prefix="continuity-recall"
        )
        #: recalls submitted and not yet finished (timed-out ones still run to their end)
        self._recall_running = 0
        self._recall_count_lock = threading.Lock()
        #: hook events of the last second (``RECALL_BUSY_RATE``)
        self.rate = EventRate()
        self.last_drain: spool.DrainReport | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> spool.DrainReport:
        """Replay the spool (events recorded while the daemon was down), then start the
        checkpoint timer and the workers. Returns what the replay did."""
        self.consolidator.start()
        with self._lock:
            self._publish_live_files()  # none yet: a list a killed daemon left is replaced
        added = self.turns.reconcile()  # live turns a kill left without their row (issue 21)
        if added:
            log.warning("%d live turn(s) recorded before a crash were added to their rows", added)
        report = self.drain_spool()
        self.recorder.start()
        self.worker.start()
        self.embedding.start()
        threading.Thread(
            target=self._warm_up, name="continuity-recall-warm-up", daemon=True
        ).start()
        return report

    def _rows_stored(self, session_key: str) -> None:
        """An import stored rows of ``session_key``: nudge the embedding thread and
        ``on_change``."""
        self.embedding.nudge(session_key)
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:  # a background help: never fails a hook
                log.exception("could not nudge the team sync")

    def _warm_up(self) -> None:
        """Load what recall at the point of action needs (``at_action.warm_up``) before the
        first prompt asks; a failure is logged, and recall tries again on that prompt."""
        try:
            from continuity.retrieval.at_action import warm_up

            warm_up(self.store, self.retrieval)
        except Exception:  # a background help: never stops the daemon
            log.exception("recall at the point of action could not warm up")

    def close(self) -> None:
        """Stop: cancel a running summary (``closing``), finish queued tasks, replay what the
        spool still holds, give queued consolidation passes ``consolidation.SHUTDOWN_SECONDS``,
        flush queued checkpoints (``CheckpointFlushError`` if they cannot be written)."""
        self.closing.set()
        from continuity.core.live_files import live_files_path

        live_files_path(self.home).unlink(missing_ok=True)  # the archiver takes them all again
        self._recall_pool.shutdown(wait=False, cancel_futures=True)
        self.embedding.stop()
        self.worker.stop()
        self.drain_spool()
        self.consolidator.stop()
        self.recorder.shutdown()

    def _tick(self) -> None:
        if spool.pending(self.home):
            self.drain_spool()
        if self.capture.lagging:  # settled turns whose file lagged (``capture.catch_up``)
            self.capture.catch_up()
        if time.monotonic() - self._last_sweep >= SWEEP_SECONDS:
            self._last_sweep = time.monotonic()
            self.sweep_idle()

    # ------------------------------------------------------------------ dispatch

    def handle(self, event: str, body: HookBody) -> dict[str, Any]:
        """Apply one hook event (``event`` names the endpoint); an ``event_id`` seen before is
        answered ``{"duplicate": true}`` and applied once (also when both deliveries race, and
        across a daemon restart: ``spool.RecentEvents``). Exactly once under kills (issue 21):
        a live turn's id commits in ``applied_events`` with the row write that adds the turn
        (``journal.LiveTurns``), any other event's once its handler returned; a replayed event
        whose id is found there is answered as a duplicate and not applied again."""
        if not self._replaying():
            self.rate.tick()
        if event == "session-end":
            # a session-end event is validated as a SessionEndBody (models.BODIES)
            return self.session_end_queued(body)  # pyright: ignore[reportArgumentType]
        if event == "pre-tool-use":  # a question: nothing is recorded, ids do not matter
            return self.pre_tool_use(body)
        if not body.event_id:
            return getattr(self, _HANDLERS[event])(body)
        if not self.seen.claim(body.event_id):  # atomic: two deliveries apply once
            return {"session_key": body.session_key, "duplicate": True}
        try:
            if self._replaying() and self._applied(body.event_id):
                self.seen.add(body.event_id)
                return {"session_key": body.session_key, "duplicate": True}
            self._local.turn = False
            answer = getattr(self, _HANDLERS[event])(body)
            if not self._local.turn:  # a live turn's id commits with its row (journal)
                self._mark_applied(body.event_id)
        except BaseException:
            self.seen.release(body.event_id)
            raise
        self.seen.add(body.event_id)
        return answer

    def _replaying(self) -> bool:
        return getattr(self._local, "replaying", False)

    def _applied(self, event_id: str) -> bool:
        """Whether ``event_id`` is recorded in ``applied_events`` (issue 21)."""
        with self._db_lock:
            return bool(self.store.applied_events([event_id]))

    def _mark_applied(self, event_id: str) -> None:
        with self._db_lock:
            self.store.mark_events_applied([event_id], _now())

    def _turn(
        self, info: LiveSession, role: str, label: str, text: str, at: datetime, body: Any
    ) -> None:
        """A live turn of ``body``'s event (``LiveTurns.append``): its id then commits with
        the session's row, not after the handler."""
        self.turns.append(info, role, label, text, at, event_id=body.event_id)
        self._local.turn = bool(body.event_id)

    def handle_native(
        self, harness: str, event: str, raw: bytes, *, event_id: str | None, at: str | None
    ) -> bytes:
        """A harness's raw hook stdin → ``handle`` → the stdout that harness expects. Raises
        ``adapters.AdapterError`` or ``pydantic.ValidationError`` for bad input."""
        body = self.native_body(harness, event, raw, event_id=event_id, at=at)
        return self.handle_native_body(harness, event, body)

    def handle_native_body(self, harness: str, event: str, body: HookBody) -> bytes:
        """``handle`` a body ``native_body`` validated, rendered as the stdout that harness
        expects. What it raises is the daemon's failure, never bad input."""
        return adapters.render(harness, event, self.handle(event, body))

    @staticmethod
    def native_body(
        harness: str, event: str, raw: bytes, *, event_id: str | None, at: str | None
    ) -> HookBody:
        """Our validated body from a harness's raw hook stdin."""
        data = adapters.to_body(harness, event, adapters.parse_payload(raw))
        if event_id:
            data["event_id"] = event_id
        if at:
            data["at"] = at
        return BODIES[event].model_validate(data)

    def _replay(self, item: spool.SpooledEvent) -> None:
        """Spool drain handler: bad input is rejected (kept aside), anything else retried."""
        size = len(item.payload or b"")
        if self.max_body_bytes is not None and size > self.max_body_bytes:
            raise spool.RejectedEvent(
                f"payload of {size} bytes is over [daemon] max_body_bytes "
                f"({self.max_body_bytes}): refused as the daemon "
                "refuses such a body (413)"
            )
        if item.event == "continuation-refused":  # issue 14: a body line only
            self._replay_refusal(item)
            return
        try:
            if item.body is not None:
                body = BODIES[item.event].model_validate({**item.body, "event_id": item.id})
            else:
                body = self.native_body(
                    item.harness or "",
                    item.event,
                    item.payload or b"",
                    event_id=item.id,
                    at=item.at,
                )
        except (
            adapters.AdapterError,
            ValidationError,
            RecursionError,
            ValueError,
            UnicodeError,
        ) as exc:
            raise spool.RejectedEvent(str(exc).replace("\n", " ")) from None
        if item.event == "session-end":
            if not (item.id in self.seen or self._applied(item.id)):
                self.end_session(body)  # pyright: ignore[reportArgumentType] - as above
                self._mark_applied(item.id)
                self.seen.add(item.id)
            return
        self._local.replaying = True
        try:
            self.handle(item.event, body)
        finally:
            self._local.replaying = False

    def _replay_refusal(self, item: spool.SpooledEvent) -> None:
        """A spooled ``continuation-refused`` body (pi's extension found no daemon): recorded
        once (the applied event ids, and ``capture.refuse``'s once-per-run rule)."""
        from continuity.daemon.hooks.models import ContinuationRefusedBody

        if item.body is None:
            raise spool.RejectedEvent("continuation-refused: a body line is expected")
        if item.id in self.seen:
            return
        try:
            body = ContinuationRefusedBody.model_validate(item.body)
        except (ValidationError, ValueError) as exc:
            raise spool.RejectedEvent(str(exc).replace("\n", " ")) from None
        self.continuation_refused(body)
        self.seen.add(item.id)

    def drain_spool(self) -> spool.DrainReport:
        """Replay the spool now (one drain at a time)."""
        with self._drain_lock:
            self.last_drain = spool.drain(self.home, self._replay, log=log)
            return self.last_drain

    # ------------------------------------------------------------------ sessions

    def _session_lock(self, key: str) -> threading.RLock:
        with self._lock:
            return self._session_locks.setdefault(key, threading.RLock())

    def _touch(self, body: HookBody) -> LiveSession:
        with self._lock:
            info = self.sessions.get(body.session_key)
            if info is None:
                info = LiveSession(body.session_key, body.harness, body.agent_id)
                self.sessions[body.session_key] = info
            info.harness, info.last_seen = body.harness, _now()
            info.project = body.project or info.project
            path = body.transcript_path
            if path and body.harness == "opencode" and os.path.isdir(path):
                # OpenCode's data folder: the session's transcript is our mirror of it
                path = self.capture.opencode_mirror(path, body.session_key)
            if path and path != info.transcript_path:
                info.transcript_path = path
                self._publish_live_files()
            return info

    def _forget(self, info: LiveSession) -> None:
        """Drop an ended session from the live ones (when it is still ``info``)."""
        with self._lock:
            if self.sessions.get(info.key) is info:
                self.sessions.pop(info.key, None)
                if info.transcript_path:
                    self._publish_live_files()

    def _publish_live_files(self) -> None:
        """Tell the archiver which files the live sessions' capture takes care of
        (``core.live_files``; under ``_lock``). A failure is logged: the archiver then
        archives them too, as before."""
        from continuity.core.live_files import publish

        try:
            publish(
                self.home, (s.transcript_path for s in self.sessions.values() if s.transcript_path)
            )
        except OSError as exc:
            log.warning("cannot write the live sessions' files for the archiver: %s", exc)

    @staticmethod
    def _at(body: HookBody) -> datetime:
        now = _now()
        return min(body.at, now) if body.at else now

    # ------------------------------------------------------------------ events

    def session_start(self, body: Any) -> dict[str, Any]:
        at, source = self._at(body), body.source.lower()
        ended = self._superseded(body, source)
        for other in ended:
            self._supersede(other, at, "clear" if source == "clear" else "superseded")
        if source == "clear" and not ended:  # the previous session is not live here
            self.worker.submit(
                f"clear:{body.session_key}",
                lambda: self._consolidate(self.capture.recover_after_clear(body, at)),
            )
        info = self._touch(body)
        with self._session_lock(info.key):
            since = self._started_at(info) if source == "resume" else None
            self.capture.ensure_state(info, at)
            if getattr(self._local, "replaying", False):  # nobody reads this answer
                context, recovery = "", {"skipped": "replayed"}
            else:
                context, recovery = self._recovery(info, source, since)
                if body.harness == "claude-code" and source in ("compact", "clear"):
                    context = self._with_essentials(info, source, ended, context, recovery)
        self._queue_import(info)
        return {
            "session_key": info.key,
            "source": source,
            "context": context,
            "injected": bool(context),
            "recovery": recovery,
        }

    def _superseded(self, body: Any, source: str) -> list[LiveSession]:
        """Sessions a start ends: the newest other session of the same harness and project
        after ``clear``; every other Codex session of the project on a Codex start, those held
        in memory and those the store holds open that were live before a daemon restart
        (``stored_live``; issue 12: they were never ended)."""
        with self._lock:
            others = [
                s
                for s in self.sessions.values()
                if s.key != body.session_key
                and s.harness == body.harness
                and body.project
                and s.project == body.project
            ]
        if source == "clear":
            return sorted(others, key=lambda s: s.last_seen)[-1:]
        if body.harness == "codex" and source in ("startup", "clear") and body.project:
            return others + self.stored_live(
                harness="codex", project=body.project, exclude=[body.session_key]
            )
        return []

    def stored_live(
        self,
        *,
        harness: str | None = None,
        project: str | None = None,
        idle_since: datetime | None = None,
        exclude: list[str] | None = None,
    ) -> list[LiveSession]:
        """The sessions the store holds open (a ``session_transcripts`` row not completed) that
        this daemon does not hold in memory, e.g. those live when it restarted, as
        ``LiveSession``s (key, harness, agent, project, the transcript file of an imported
        one, ``last_seen`` = the row's last change): of ``harness`` and ``project`` when
        given, unchanged since before ``idle_since`` when given, never a key in ``exclude``.
        One bounded query: at most ``STORED_LIVE_LIMIT``, least recently changed first."""
        with self._lock:
            held = set(self.sessions) | {s.store_key for s in self.sessions.values() if s.store_key}
        skip = sorted(held | set(exclude or ()))
        found = self.store.open_transcripts(
            harness=harness,
            project=project,
            updated_before=idle_since,
            exclude=skip,
            limit=STORED_LIVE_LIMIT,
        )
        out: list[LiveSession] = []
        for key, agent in found:
            row = self.store.get_transcripts([key], agent).get(key)
            if row is None:  # completed or deleted meanwhile
                continue
            session = self.store.get_session(key)
            info = LiveSession(
                key,
                row.harness,
                agent,
                project=row.project,
                transcript_path=session.source_path if session else None,
                store_key=key if session else None,
                last_seen=row.updated_at or _now(),
            )  # None: a row never stamped
            info.row_digest, info.row_hash = TextDigest(row.content), row.content_hash
            out.append(info)
        return out

    def reach(self, harness: str) -> Any:
        """What the text injected into a ``harness`` session may name to get more
        (``harness_reach``)."""
        return harness_reach(self.home, harness)

    def _recovery(
        self, info: LiveSession, source: str, since: datetime | None = None
    ) -> tuple[str, dict[str, Any]]:
        """The context a session start gets (module docstring), framed the same in every
        harness (``FRAMING``, issue 39): a new session (``startup``, ``clear``, anything but
        ``resume`` and ``compact``) the project brief (``brief.build_brief``); a resumed
        one others' newer work (``recover_resumed``); a compacted one its own newest
        checkpoint (``recover``)."""
        if source not in ("resume", "compact") and info.key not in self._compacted:
            return self._brief(info)
        budget = self.config.recovery_budget_chars
        head = RECOVERY_HEADING + FRAMING + "\n"
        inner = self.config.model_copy(update={"recovery_budget_chars": max(budget - len(head), 0)})
        if source == "resume":  # the resumed context holds its own turns: others' newer work
            found = cps.recover_resumed(
                self.store,
                session_key=info.store_key or info.key,
                project=info.project,
                since=since,
                config=inner,
            )
        else:
            found = cps.recover(
                self.store, session_key=info.key, project=info.project, config=inner
            )
        meta = {k: v for k, v in found.to_dict().items() if k != "text"}
        meta["budget_chars"] = budget
        if found.checkpoint is None or not found.text:
            return "", meta
        mark = injection_mark(info.key, found.checkpoint.checkpoint_id or 0)
        fresh = source == "compact" or info.key in self._compacted
        if not fresh and mark in self.seen:  # persisted: also after a daemon restart
            meta["skipped"] = "already_injected"
            return "", meta
        self._compacted.discard(info.key)
        self.seen.add(mark)
        return head + found.text, meta

    def _brief(self, info: LiveSession) -> tuple[str, dict[str, Any]]:
        """The project brief for new session ``info`` (issue 39): the earlier sessions of its
        project, never itself; nothing when there is none (0 characters, a negative control
        costs nothing), nor twice into one session (a mark among the applied event ids)."""
        from continuity.brief import build_brief

        budget = min(self.config.recovery_budget_chars, adapters.CONTEXT_LIMIT - 1)
        meta: dict[str, Any] = {"source": "brief", "budget_chars": budget, "sessions": []}
        if not info.project:
            return "", meta
        config = self.config.model_copy(update={"recovery_budget_chars": budget})
        exclude = [k for k in (info.key, info.store_key) if k]
        brief = build_brief(
            self.store,
            project=info.project,
            config=config,
            reach=self.reach(info.harness),
            exclude=exclude,
        )
        meta.update(
            sessions=[s.key for s in brief.sessions],
            truncated=brief.truncated,
            chars=len(brief.text),
        )
        if not brief.sessions:
            return "", meta
        mark = injection_mark(info.key, 0).replace("inject-", "brief-", 1)
        if mark in self.seen:
            meta["skipped"] = "already_injected"
            return "", meta
        self.seen.add(mark)
        return brief.text, meta

    def _with_essentials(
        self,
        info: LiveSession,
        source: str,
        ended: list[LiveSession],
        context: str,
        recovery: dict[str, Any],
    ) -> str:
        """``context`` plus the continuation's essentials (``resume.essentials``, issue 13)
        for a fresh Claude Code context: after ``compact`` those of this session, after
        ``clear`` those of the session it cleared (the one this start ended, else the
        project's most recently active stored session). All within Claude Code's
        10,000-character ``additionalContext`` limit (``adapters.CONTEXT_LIMIT``), the
        recovery digest first; never the same essentials twice into one session (marks
        kept with the applied event ids, like the recovery's), but again after a compaction
        (a fresh context). ``recovery["continuation"]`` says what was done."""
        from continuity.resume.essentials import essentials
        from continuity.store.names import project_session

        if source == "compact":
            key: str | None = info.store_key or info.key
        elif ended:
            key = ended[-1].store_key or ended[-1].key
        else:
            key = project_session(self.store, info.project) if info.project else None
            if key in (info.key, info.store_key):
                key = None
        if key is None or self.store.get_session(key) is None:
            recovery["continuation"] = None
            return context
        sep = "\n\n" if context else ""
        room = adapters.CONTEXT_LIMIT - 1 - len(context) - len(sep)
        found = essentials(self.store, key, room, reach=self.reach(info.harness))
        if found is None:
            recovery["continuation"] = {"session": key, "skipped": "nothing_fits_or_refused"}
            return context
        mark = injection_mark(info.key, 0).replace("inject-", "essentials-", 1) + "-" + found.mark
        fresh = source == "compact"
        if not fresh and mark in self.seen:
            recovery["continuation"] = {"session": key, "skipped": "already_injected"}
            return context
        self.seen.add(mark)
        recovery["continuation"] = {"session": key, "chars": len(found.text)}
        return context + sep + found.text

    def _started_at(self, info: LiveSession) -> datetime | None:
        """When session ``info`` started, as the daemon can tell before it makes a state for
        this start: the earliest of its checkpoint state's start, its stored rows' first time
        and its transcript row's creation; None for a session it never saw."""
        key = info.store_key or info.key
        times = []
        state = self.recorder.states.get(info.key)
        if state is not None:
            times.append(state.started_at)
        session = self.store.get_session(key)
        if session is not None and session.started_at is not None:
            times.append(session.started_at)
        row = self.store.get_transcripts([key], info.agent_id).get(key)
        if row is not None:
            times.append(row.created_at)
        return min(times) if times else None

    def user_prompt(self, body: Any) -> dict[str, Any]:
        at, info = self._at(body), self._touch(body)
        if body.harness in adapters.STEP_PROMPTS and not body.prompt.strip():
            # a model request after tool results (Qwen Code): no prompt, nothing to recall
            return {"session_key": info.key, "step": True, "context": ""}
        with self._session_lock(info.key):
            state = self.capture.ensure_state(info, at)
            if body.prompt.strip():  # the durable write first: a failure counts nothing
                self._turn(info, "user", "User", body.prompt, at, body)
                self.capture.expect(info, "user", body.prompt)
            periodic = self.recorder.record_prompt(info.key, body.prompt, at=at)
        self._queue_import(info)
        context, recall = self._recall(info, "prompt", body.prompt)
        return {
            "session_key": info.key,
            "prompt_count": state.total_prompts,
            "periodic_queued": periodic is not None,
            "context": context,
            "recall": recall,
        }

    def pre_tool_use(self, body: Any) -> dict[str, Any]:
        """Recall before a tool runs (issue 40: an edit's file, a shell command's last working
        invocation; ``retrieval.at_action.recall_for_tool``). Records nothing."""
        info = self._touch(body)
        context, recall = self._recall(info, "tool", body.tool_name, body.tool_input)
        return {"session_key": info.key, "context": context, "recall": recall}

    @property
    def retrieval(self) -> Any:
        """``[retrieval]`` of the workspace (read once; a bad section turns recall off, said
        in the log, rather than failing every prompt)."""
        if self._retrieval is None:
            from continuity.core.errors import ConfigError
            from continuity.retrieval.settings import RetrievalSettings, retrieval_settings

            try:
                self._retrieval = retrieval_settings(self.home)
            except ConfigError as exc:
                log.error("recall at the point of action is off: %s", exc)
                self._retrieval = RetrievalSettings(at_action=False)
        return self._retrieval

    def _recall(self, info: LiveSession, kind: str, *what: Any) -> tuple[str, dict[str, Any]]:
        """Recall at the point of action for session ``info`` (``retrieval.at_action``): a
        ``prompt`` (``what``: its text) or a ``tool`` (its name and arguments). "" when
        ``[retrieval] at_action`` is off, when the event is replayed from the spool (nobody
        reads the answer: a replay never injects), when nothing clears the relevance rule,
        when everything found was given to this session before (``told``), when it takes longer than
        ``RECALL_SECONDS``, when ``RECALL_IN_FLIGHT`` recalls are running already (``skipped``
        ``busy``, answered at once: issue 45 item 10), or on an error (logged: a prompt never
        fails for recall). Returns ``(context, meta)``; ``meta["ms"]`` is the
        time recall took (milliseconds)."""
        if self._replaying():
            return "", {"skipped": "replayed"}
        settings = self.retrieval
        if not settings.at_action:
            return "", {"skipped": "off"}
        import concurrent.futures as futures

        from continuity.retrieval import at_action

        started = time.monotonic()
        key = info.store_key or info.key
        given = self._recalled.setdefault(info.key, set())
        told = frozenset(given)
        if self.rate.per_second() > RECALL_BUSY_RATE:
            return "", {"skipped": "busy"}  # under load: the hooks' answers come first
        with self._recall_count_lock:
            if self._recall_running >= RECALL_IN_FLIGHT:
                return "", {"skipped": "busy"}
            self._recall_running += 1
        if kind == "prompt":
            job = self._recall_pool.submit(
                at_action.recall_for_prompt,
                self.store,
                what[0],
                session_key=key,
                project=info.project,
                settings=settings,
                told=told,
            )
        else:
            job = self._recall_pool.submit(
                at_action.recall_for_tool,
                self.store,
                what[0],
                what[1],
                session_key=key,
                project=info.project,
                settings=settings,
                told=told,
            )
        job.add_done_callback(self._recall_done)
        try:
            found = job.result(timeout=RECALL_SECONDS)
        except futures.TimeoutError:  # the hook waits 3 s in all: answer without it
            log.warning(
                "recall at the point of action took over %g s for session %s; answered without it",
                RECALL_SECONDS,
                info.key,
            )
            return "", {"skipped": "timeout"}
        except Exception:  # recall is a help, never a failure of the prompt
            log.exception("recall at the point of action failed for session %s", info.key)
            return "", {"skipped": "error"}
        meta: dict[str, Any] = {
            "chars": found.chars,
            "rows": [list(r) for r in found.rows],
            "ms": round((time.monotonic() - started) * 1000, 1),
        }
        given.update(found.lines)  # told once: never the same item again in this session
        return found.text, meta

    def _recall_done(self, _job: Any) -> None:
        with self._recall_count_lock:
            self._recall_running -= 1

    def pre_compaction(self, body: Any) -> dict[str, Any]:
        at, info = self._at(body), self._touch(body)
        if not compacts(body):  # Gemini's check before each request: nothing to record
            self._queue_import(info)
            return {
                "session_key": info.key,
                "transcript_path": info.transcript_path,
                "checkpoint": None,
            }
        with self._session_lock(info.key):
            self.capture.ensure_state(info, at)
            imported = self.capture.import_pending(info)  # B27: the newest task list first
            cp = self._replayed_checkpoint(info, at) if self._replaying() else None
            if cp is None:
                cp = self.recorder.pre_compaction(info.key, context=body.context, at=at)
                cp = as_stored(self.store, cp) if cp else None
        if not imported:
            self._queue_import(info)
        return {
            "session_key": info.key,
            "transcript_path": info.transcript_path,
            "checkpoint": cps.checkpoint_dict(cp) if cp else None,
        }

    def _replayed_checkpoint(self, info: LiveSession, at: datetime) -> Checkpoint | None:
        """The ``pre_compaction`` checkpoint a replayed event wrote before a kill cut it short
        (issue 21: the session's newest checkpoint, of that trigger, made at the event's own
        time), so that the replay writes none a second time; else None."""
        latest = self.store.latest_checkpoint(info.key)
        if (
            latest is not None
            and latest.trigger is CheckpointTrigger.PRE_COMPACTION
            and latest.created_at == at
        ):
            return latest
        return None

    def post_compaction(self, body: Any) -> dict[str, Any]:
        info = self._touch(body)
        self._compacted.add(info.key)
        self._queue_import(info)
        return {"session_key": info.key, "import_queued": info.transcript_path is not None}

    def stop(self, body: Any) -> dict[str, Any]:
        at, info = self._at(body), self._touch(body)
        if body.last_assistant_message:  # formats.md §4.1: trust the payload, the file may lag
            with self._session_lock(info.key):
                self._turn(info, "assistant", "Assistant", body.last_assistant_message, at, body)
                self.capture.expect(info, "assistant", body.last_assistant_message)
        queued = self.worker.submit(
            f"turn:{info.key}",
            lambda: self.capture.settled_turn(
                info, settled=body.settled, in_harness=body.checkpoint_in_harness
            ),
        )
        # the follow-up budget: pi's extension measures its working view against it (issue 14)
        return {
            "session_key": info.key,
            "queued": queued,
            "follow_up_budget_bytes": self.budget_bytes,
        }

    def continuation_summary(self, body: Any, cancel: threading.Event) -> dict[str, Any]:
        """The summary of a harness's own continuation checkpoint, or a recorded refusal
        (``capture.harness_summary``; issue 14). ``cancel``: the harness went away (pi's abort
        signal closes the request) or the daemon is stopping."""
        info = self._touch(body)
        return self.capture.harness_summary(info, body, cancel)

    def continuation_refused(self, body: Any) -> dict[str, Any]:
        """Record a continuation checkpoint the harness refused without the daemon's answer
        (``capture.refuse``: once per run)."""
        info = self._touch(body)
        self.capture.import_(info)
        key = info.store_key or info.key
        return self.capture.refuse(
            key, self.capture.run_id(key, body.request_entry_id), body.reason, body.detail
        )

    def session_end_queued(self, body: SessionEndBody) -> dict[str, Any]:
        """Journal a session end in the spool (fsync'd) and let the worker do it."""
        if body.event_id and body.event_id in self.seen:
            return {"session_key": body.session_key, "duplicate": True}
        event_id = body.event_id or spool.new_event_id()
        at = (body.at or _now()).isoformat().replace("+00:00", "Z")
        data = body.model_dump(mode="json", exclude_none=True)
        data.update(event_id=event_id, at=at)
        spool.append(self.home, spool.body_line(event_id, at, "session-end", data))
        self.worker.wake()
        return {"session_key": body.session_key, "queued": True, "event_id": event_id}

    def end_session(self, body: SessionEndBody) -> dict[str, Any]:
        """Do a session end now (module docstring); the spool replay calls this."""
        at, info = self._at(body), self._touch(body)
        cp = self._end_now(info, at)
        completed = self._finish_transcript(info, at)
        self._forget(info)
        return {
            "session_key": info.key,
            "completed": completed,
            "checkpoint": cps.checkpoint_dict(cp) if cp else None,
        }

    def _end_now(self, info: LiveSession, at: datetime) -> Checkpoint | None:
        """Flush the session's queued checkpoints and write ``session_end`` (once; seed 000:
        only when it had prompts).

        After a restart (no state in memory) the state is rebuilt from the store; when the
        session's newest checkpoint is already a ``session_end`` holding as many prompts, the
        session ended before and nothing is written (a replayed end). When it holds fewer (the
        session was resumed after that end, or an import ended it at an earlier row), the end
        moves: the store keeps one ``session_end`` per session, the later one (issue 22)."""
        with self._session_lock(info.key):
            if info.key not in self.recorder.states:
                if info.key in self._ended:
                    return None
                latest = self.store.latest_checkpoint(info.key)
                state = self.capture.ensure_state(info, at)
                self.capture.import_pending(info)  # B27: the newest task list first
                if (
                    latest is not None
                    and latest.trigger is CheckpointTrigger.SESSION_END
                    and state.total_prompts <= latest.prompt_count
                ):
                    self.recorder.discard(info.key)
                    self._ended.add(info.key)  # ended before a restart
                    return None
            else:
                self.capture.import_pending(info)  # B27: the newest task list first
            cp = self.recorder.end_session(info.key, at=at)
            self._ended.add(info.key)
            return cp

    def _supersede(self, info: LiveSession, at: datetime, reason: str) -> None:
        """End a session that will send no end of its own (``reason``: clear, superseded,
        idle): its checkpoint now, its transcript in the background."""
        log.info("ending session %s (%s)", info.key, reason)
        self._end_now(info, at)

        def finish() -> None:
            self._finish_transcript(info, at)
            self._forget(info)

        self.worker.submit(f"end:{info.key}", finish)

    def _finish_transcript(self, info: LiveSession, at: datetime) -> bool:
        """Write the live row, capture and complete the transcript, then queue the
        consolidation pass (also when the row was completed before: a replayed end)."""
        self.turns.write_row(info)
        completed, key, agent = self.capture.finish(info, at)
        self._consolidate((key, agent))
        self._changed()  # its end, checkpoint and last rows: the team sees them soon
        return completed

    def sweep_idle(self, now: datetime | None = None) -> list[str]:
        """End the sessions not heard from for the idle limit (reason ``idle``): those held in
        memory and those the store holds open, unchanged as long, that were live before a
        daemon restart (``stored_live``, issue 12); then complete transcript rows idle as
        long. Returns the keys ended, memory's first."""
        now = now or _now()
        with self._lock:
            idle = [s for s in self.sessions.values() if now - s.last_seen >= self.idle_limit]
        idle += self.stored_live(idle_since=now - self.idle_limit)
        for info in idle:
            self._supersede(info, now, "idle")
        self._consolidate(*self.capture.sweep_rows(now, self.idle_limit))
        return [s.key for s in idle]

    def _consolidate(self, *completed: tuple[str, str | None] | None) -> None:
        """Queue the consolidation pass of each completed ``(session_key, agent_id)``."""
        for done in completed:
            if done is not None:
                self.consolidator.queue(*done)

    # ------------------------------------------------------------------ transcripts

    def _queue_import(self, info: LiveSession) -> None:
        if info.transcript_path:
            self.worker.submit(f"import:{info.key}", lambda: self.capture.import_(info))

    def run_policy(self, info: LiveSession, *, settled: bool = True) -> dict[str, Any]:
        """The continuation policy for the session's settled turn (``hooks.capture``)."""
        return self.capture.run_policy(info, settled=settled)

    # ------------------------------------------------------------------ read API and tools

    def store_key(self, key: str) -> str:
        """The stored session behind ``key`` (a live session's imported key, after its queued
        imports ran; else a stored key or a unique key prefix, ``store.names``). Raises
        ``SessionNotFound`` / ``AmbiguousSession`` for a name that is neither."""
        from continuity.store.names import resolve_session

        info = self.sessions.get(key)
        if info is None:
            return resolve_session(self.store, key)
        self.capture.import_(info)
        return info.store_key or key

    def current_session(
        self, project: str | None, harness: str | None = None, *, stored: bool = True
    ) -> str | None:
        """The most recently active live session of ``project`` (and ``harness``), else (no
        ``harness`` asked, ``stored`` True) the most recently active stored session of that
        folder (issue 12: the tools work outside a running harness;
        ``store.names.project_session``)."""
        from continuity.store.names import project_session

        wanted = cps.normalize_project(project) if project else None
        with self._lock:
            found = [
                s
                for s in self.sessions.values()
                if (wanted is None or cps.normalize_project(s.project) == wanted)
                and (harness is None or s.harness == harness)
            ]
        if found:
            return max(found, key=lambda s: s.last_seen).key
        if project and harness is None and stored:
            return project_session(self.store, project)
        return None

    def checkpoint(self, body: CheckpointBody) -> Checkpoint:
        """An ``agent`` or ``explicit`` checkpoint of ``body.session_key`` (a live key, a stored
        key or a unique key prefix; else the project's current session, ``current_session``):
        from the live state when the daemon has one, else rebuilt from the stored transcript.
        Raises ``SessionNotFound`` (``NoProjectSession`` for a folder with none),
        ``AmbiguousSession``; ``InputError`` when disabled."""
        from continuity.core.errors import InputError, NoProjectSession
        from continuity.store.names import resolve_session

        key = body.session_key or self.current_session(body.project)
        if key is None:
            if body.project:
                raise NoProjectSession(body.project)
            raise SessionNotFound("(no session_key or project given)")
        trigger = CheckpointTrigger(body.trigger)
        if key not in self.sessions:
            key = resolve_session(self.store, key)  # a stored key or a unique prefix
        info = self.sessions.get(key)
        if info is not None:
            with self._session_lock(key):
                self.capture.ensure_state(info, _now())
                self.capture.import_pending(info)  # B27: the newest task list first
                cp = self.recorder.checkpoint(key, body.reason, trigger=trigger)
        else:
            cp = cps.manual_checkpoint(
                self.store, key, body.reason, config=self.config, trigger=trigger
            )
        if cp is None:
            raise InputError(
                "continuity is disabled ([continuity] enabled = false): no checkpoint written"
            )
        return cp

    def record_query(self, session_key: str | None, query: str) -> None:
        """Count a memory query in a live session's checkpoint state (seed 000)."""
        if session_key and session_key in self.recorder.states:
            self.recorder.record_query(session_key, query)

    def record_remember(self, session_key: str | None, text: str) -> None:
        """Count a remembered text in a live session's checkpoint state (seed 000)."""
        if session_key and session_key in self.recorder.states:
            self.recorder.record_remember(session_key, text)
        self.embedding.nudge()  # issue 40: the new memory is embedded in the background

    def health(self) -> dict[str, Any]:
        """Counts for ``/health``."""
        return {
            "live_sessions": len(self.sessions),
            "queued_checkpoints": self.recorder.queue.pending_count(),
            "background_tasks": self.worker.pending(),
            "consolidation_tasks": self.consolidator.pending(),
            "embedding_pending": self.embedding.pending(),
            "spool_pending": spool.pending(self.home),
            "last_replay": self.last_drain.to_dict() if self.last_drain else None,
        }


_HANDLERS = {
    "session-start": "session_start",
    "user-prompt-submit": "user_prompt",
    "pre-compaction": "pre_compaction",
    "post-compaction": "post_compaction",
    "stop": "stop",
    "session-end": "session_end_queued",
}
