"""Session checkpoints (seed 000, "Session Checkpoints"; issue 3): capture a session's
continuity as redacted digests, and hand the newest one to the next session.

- ``CheckpointConfig``: the ``[continuity]`` section of ``config.toml`` (seed 000's table).
- ``SessionState``: the accumulator of one live session (prompt counters, recent prompts,
  memory queries and remembers since the last checkpoint, start and last-checkpoint times).
- Digest formatters: ``format_periodic_digest``, ``format_pre_compaction_digest``,
  ``format_session_end_digest``, ``format_manual_digest`` (structured markdown, redacted).
- ``CheckpointQueue``: buffered writes flushed within a fixed 2,500 ms window after the first
  queued one; same-session periodic writes merge; a failed write is retried, never dropped.
- ``CheckpointRecorder``: the state machine of the five triggers (``periodic`` on
  ``promptInterval`` prompts or ``timeIntervalMs`` elapsed, ``pre_compaction``,
  ``session_end``, ``agent``, ``explicit``). Direct writes flush the session's queued writes
  first, in the same transaction, so a periodic row never lands after them.
- ``recover``/``render_recovery``: the recovery digest within ``recoveryBudgetChars``.
- ``replay_session``/``replay_import``: checkpoints of imported sessions, from the transcript's
  own timestamps, through the same recorder and queue.

Times are aware UTC datetimes from an injectable clock; durations are milliseconds; budgets and
snippet lengths are characters (code points), never cut inside a character.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import unicodedata
from collections import deque
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from continuity.config import load_section
from continuity.errors import StoreError
from continuity.model import Checkpoint, CheckpointTrigger, Entry, EntryKind
from continuity.redact import redact

if TYPE_CHECKING:  # pragma: no cover
    from continuity.importer import ImportReport
    from continuity.store import SqlStore

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]

#: seed 000: periodic writes are flushed within 2,500 ms of the first queued one (fixed window).
FLUSH_WINDOW_MS = 2_500
#: seed 000: caps of the merged lists of a checkpoint, and of the pending prompt snippets.
MAX_QUERIES, MAX_REMEMBERS, MAX_SNIPPETS = 20, 10, 10
#: seed 000 (origin): a prompt snippet is the first 200 characters; a remember shows 120.
SNIPPET_CHARS, REMEMBER_CHARS = 200, 120
#: retry backoff of a failed flush: the window doubled per failure, at most this.
MAX_BACKOFF_MS = 60_000
#: the end of a recovery digest that did not fit its budget (counted inside the budget).
TRUNCATION_MARKER = "\n[… truncated: {n} characters omitted]"
#: a truncated recovery digest ends on a whole line if one ends within this many characters.
RECOVERY_LINE_SLACK = 80


def utc_now() -> datetime:
    """The wall clock as an aware UTC datetime (the default ``Clock``)."""
    return datetime.now(timezone.utc)


# ---------------------------------------------------------------------------- configuration

#: field -> (low, high, how the range reads in an error)
_RANGES = {
    "prompt_interval": (1, 1000, "1–1000"),
    "time_interval_ms": (60_000, 3_600_000, "60000–3600000 ms (60 s–1 h)"),
    "max_checkpoints_per_session": (1, 500, "1–500"),
    "retention_days": (1, 90, "1–90"),
    "recovery_budget_chars": (200, 10_000, "200–10000"),
    "recovery_window_hours": (1, 720, "1–720"),
}


class CheckpointConfig(BaseModel):
    """The ``[continuity]`` section (seed 000's table; keys in camelCase or snake_case, env
    ``CONTINUITY_CONTINUITY__PROMPT_INTERVAL`` etc.). Integers only; a value out of range is a
    ``ConfigError`` naming the field and its range, never clamped. ``recoveryWindowHours`` is
    ours: how far back a new session looks for a checkpoint of the same project (default 4,
    the origin's fixed window)."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    enabled: bool = True
    prompt_interval: int = Field(10, alias="promptInterval")
    time_interval_ms: int = Field(900_000, alias="timeIntervalMs")
    max_checkpoints_per_session: int = Field(50, alias="maxCheckpointsPerSession")
    retention_days: int = Field(7, alias="retentionDays")
    recovery_budget_chars: int = Field(2000, alias="recoveryBudgetChars")
    recovery_window_hours: int = Field(4, alias="recoveryWindowHours")

    @field_validator(*_RANGES, mode="before")
    @classmethod
    def _integer_in_range(cls, value: Any, info: Any) -> int:
        low, high, text = _RANGES[info.field_name]
        number: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            number = int(value)
        if number is None or not low <= number <= high:
            raise ValueError(f"must be an integer in {text}")
        return number


def load_config(home: str | os.PathLike[str] | None = None) -> CheckpointConfig:
    """The ``[continuity]`` settings of the workspace (``config.toml`` then environment).
    Raises ``ConfigError`` naming the field and its range."""
    return load_section("continuity", CheckpointConfig, home)


def normalize_project(project: str | None) -> str | None:
    """The resolved real path of an absolute ``project`` (symlinks followed), else the raw
    value (seed 000: ``project_normalized``)."""
    if not project or not os.path.isabs(project):
        return project
    try:
        return os.path.realpath(project)
    except (OSError, ValueError):
        return project


# ---------------------------------------------------------------------------- text helpers


def _union(old: Sequence[str], new: Sequence[str], cap: int) -> tuple[str, ...]:
    """Order-preserving union (first occurrence wins), keeping the newest ``cap`` items."""
    return tuple(dict.fromkeys([*old, *new]))[-cap:] if cap else ()


def safe_cut(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, backing off so that no combining mark,
    variation selector, emoji modifier or zero-width joiner sequence is split."""
    if len(text) <= limit:
        return text
    k = max(limit, 0)
    while k > 0 and (_joins_previous(text[k]) or text[k - 1] == "\u200d"):
        k -= 1
    return text[:k]


def _joins_previous(ch: str) -> bool:
    code = ord(ch)
    return (unicodedata.combining(ch) != 0 or 0xFE00 <= code <= 0xFE0F or code == 0x200D
            or 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F)


def _short(text: str, limit: int) -> str:
    """Redacted, whitespace collapsed, cut to ``limit`` characters (no half marker kept)."""
    out = safe_cut(redact(" ".join(text.split())), limit)
    cut = out.rfind("[REDACTED:")
    if cut >= 0 and "]" not in out[cut:]:
        out = out[:cut].rstrip()
    return out


def format_duration(ms: int) -> str:
    """Whole minutes: ``{m}m`` under an hour, else ``{h}h`` plus `` {m}m`` when m > 0
    (59,999 → ``0m``; 3,600,000 → ``1h``; 3,660,000 → ``1h 1m``)."""
    minutes = max(ms, 0) // 60_000
    if minutes < 60:
        return f"{minutes}m"
    hours, rest = divmod(minutes, 60)
    return f"{hours}h {rest}m" if rest else f"{hours}h"


# ---------------------------------------------------------------------------- session state


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a trigger consumed from a session's state (lists already redacted)."""

    session_key: str
    harness: str
    project: str | None
    project_normalized: str | None
    at: datetime
    duration_ms: int
    interval_prompts: int
    total_prompts: int
    snippets: tuple[str, ...]
    queries: tuple[str, ...]
    remembers: tuple[str, ...]


@dataclass(slots=True)
class SessionState:
    """The continuity accumulator of one live session. ``snippets`` is a rolling window of the
    last 10 prompts (each checkpoint shows the current focus); ``queries`` and ``remembers``
    hold the memory activity since the last checkpoint (capped at 20 and 10, newest kept)."""

    session_key: str
    harness: str
    project: str | None
    project_normalized: str | None
    started_at: datetime
    last_checkpoint_at: datetime
    interval_prompts: int = 0
    total_prompts: int = 0
    snippets: deque[str] = field(default_factory=lambda: deque(maxlen=MAX_SNIPPETS))
    queries: tuple[str, ...] = ()
    remembers: tuple[str, ...] = ()

    def record_prompt(self, text: str) -> None:
        """Count a prompt and keep its redacted snippet (empty snippets are not kept)."""
        self.interval_prompts += 1
        self.total_prompts += 1
        snippet = _short(text, SNIPPET_CHARS)
        if snippet:
            self.snippets.append(snippet)

    def record_query(self, query: str) -> None:
        """Keep a memory query (redacted; the origin skipped this)."""
        q = _short(query, SNIPPET_CHARS)
        if q:
            self.queries = _union(self.queries, [q], MAX_QUERIES)

    def record_remember(self, text: str) -> None:
        """Keep a remembered text (redacted)."""
        r = " ".join(redact(text).split())
        if r:
            self.remembers = _union(self.remembers, [r], MAX_REMEMBERS)

    def has_activity(self) -> bool:
        """True when something happened since the last checkpoint."""
        return bool(self.interval_prompts or self.queries or self.remembers)

    def consume(self, now: datetime) -> Snapshot:
        """Snapshot the state, then reset the interval count and memory activity and set the
        last-checkpoint time to ``now`` (totals, start time and snippets survive)."""
        snap = Snapshot(
            self.session_key, self.harness, self.project, self.project_normalized, now,
            int((now - self.started_at) / timedelta(milliseconds=1)), self.interval_prompts,
            self.total_prompts, tuple(self.snippets), self.queries, self.remembers)
        self.interval_prompts, self.queries, self.remembers = 0, (), ()
        self.last_checkpoint_at = now
        return snap


# ---------------------------------------------------------------------------- digests


def _header(title: str, s: Snapshot, counts: str) -> list[str]:
    return [f"## {title}", f"Project: {s.project or 'unknown'}", counts]


def _blocks(s: Snapshot, activity_title: str) -> list[str]:
    lines: list[str] = []
    if s.snippets:
        lines += ["", "### Recent Prompts", *(f"- {p}" for p in s.snippets)]
    activity = []
    if s.queries:
        activity.append("Queries: " + ", ".join(s.queries))
    if s.remembers:
        activity.append("Remembered: " + "; ".join(_short(r, REMEMBER_CHARS)
                                                   for r in s.remembers))
    if activity:
        lines += ["", f"### {activity_title}", *activity]
    return lines


def format_periodic_digest(s: Snapshot) -> str:
    """``## Session Checkpoint`` / project / ``Prompts: {interval} | Duration: {d}``, then
    ``### Recent Prompts`` and ``### Memory Activity Since Last Checkpoint`` (seed 000)."""
    lines = _header("Session Checkpoint", s,
                    f"Prompts: {s.interval_prompts} | Duration: {format_duration(s.duration_ms)}")
    return redact("\n".join(lines + _blocks(s, "Memory Activity Since Last Checkpoint")))


def format_pre_compaction_digest(s: Snapshot, context: str | None = None) -> str:
    """``## Pre-Compaction Checkpoint`` / project / ``Duration: {d} | Prompts: {interval}``,
    then ``### Session Context`` (when given), recent prompts, ``### Memory Activity``."""
    lines = _header("Pre-Compaction Checkpoint", s,
                    f"Duration: {format_duration(s.duration_ms)} | Prompts: {s.interval_prompts}")
    if context and context.strip():
        lines += ["", "### Session Context", context.strip()]
    return redact("\n".join(lines + _blocks(s, "Memory Activity")))


def format_session_end_digest(s: Snapshot) -> str:
    """``## Session End Checkpoint`` / project / ``Duration: {d} | Total Prompts: {total}``,
    then recent prompts and ``### Memory Activity``."""
    lines = _header("Session End Checkpoint", s,
                    f"Duration: {format_duration(s.duration_ms)} | "
                    f"Total Prompts: {s.total_prompts}")
    return redact("\n".join(lines + _blocks(s, "Memory Activity")))


def format_manual_digest(s: Snapshot, trigger: CheckpointTrigger, reason: str) -> str:
    """``## Explicit Checkpoint`` or ``## Agent Checkpoint`` / project / ``Duration: {d} |
    Prompts: {interval} | Total Prompts: {total}``, then ``### Reason`` (the caller's text),
    recent prompts and ``### Memory Activity``."""
    title = "Agent Checkpoint" if trigger is CheckpointTrigger.AGENT else "Explicit Checkpoint"
    lines = _header(title, s, f"Duration: {format_duration(s.duration_ms)} | Prompts: "
                              f"{s.interval_prompts} | Total Prompts: {s.total_prompts}")
    if reason.strip():
        lines += ["", "### Reason", reason.strip()]
    return redact("\n".join(lines + _blocks(s, "Memory Activity")))


def _checkpoint(s: Snapshot, trigger: CheckpointTrigger, digest: str,
                prompt_count: int) -> Checkpoint:
    return Checkpoint(s.session_key, s.harness, s.project, s.project_normalized, trigger, digest,
                      prompt_count, s.queries, s.remembers, created_at=s.at)


def merge_checkpoints(old: Checkpoint, new: Checkpoint) -> Checkpoint:
    """Two queued writes of one session inside the window (seed 000): queries and remembers
    are an order-preserving union capped at the newest 20 and 10, prompt counts are summed,
    every other field (digest, trigger, time, project) comes from ``new``."""
    return replace(new, prompt_count=old.prompt_count + new.prompt_count,
                   memory_queries=_union(old.memory_queries, new.memory_queries, MAX_QUERIES),
                   recent_remembers=_union(old.recent_remembers, new.recent_remembers,
                                           MAX_REMEMBERS))


# ---------------------------------------------------------------------------- flush queue

Sink = Callable[[Sequence[Checkpoint]], None]


def store_sink(store: "SqlStore", max_per_session: int) -> Sink:
    """A sink writing checkpoints in order, all in one transaction, each insert applying the
    per-session cap."""
    def write(items: Sequence[Checkpoint]) -> None:
        with store.batch():
            for cp in items:
                store.insert_checkpoint(cp, max_per_session=max_per_session)
    return write


class CheckpointFlushError(StoreError):
    """Queued checkpoints could not be written at shutdown (they were retried meanwhile)."""


@dataclass(frozen=True, slots=True)
class FlushResult:
    """What one flush did: rows ``written``, rows still ``pending`` after a failure, and the
    ``error`` of the last failed write (None when everything landed)."""

    written: int = 0
    pending: int = 0
    error: str | None = None


class CheckpointQueue:
    """Buffered checkpoint writes (seed 000: ``queueCheckpointWrite``).

    ``enqueue`` buffers a periodic write; the first write into an empty queue arms a deadline
    2,500 ms later, and later writes never move it (a fixed window, so steady traffic cannot
    starve it). A write for a session whose newest pending write is also periodic merges into
    it (``merge_checkpoints``). ``poll`` flushes when the deadline has passed; ``flush`` now.
    ``write_now`` writes a direct checkpoint (pre-compaction, session end, explicit, agent)
    together with that session's pending writes, in order, in one call of the sink. A flush
    writes every session in one sink call (one transaction), falling back to one call per
    session when that fails.

    A failed write keeps its rows queued, in order, and re-arms the deadline with a backoff
    (2.5 s, 5 s, 10 s … at most 60 s); nothing is dropped. Flushes are serialised, so rows of
    one session land in the order they were queued. Thread-safe.
    """

    def __init__(self, sink: Sink, *, clock: Clock = utc_now,
                 window_ms: int = FLUSH_WINDOW_MS,
                 on_armed: Callable[[], None] | None = None) -> None:
        self._sink, self._clock, self._window = sink, clock, timedelta(milliseconds=window_ms)
        self._pending: dict[str, list[Checkpoint]] = {}
        self._deadline: datetime | None = None
        self._failures = 0
        self._state = threading.Lock()
        self._writing = threading.Lock()
        self._on_armed = on_armed
        self.last_error: str | None = None

    @property
    def deadline(self) -> datetime | None:
        """When the queued writes are due (None: nothing queued)."""
        return self._deadline

    def pending_count(self) -> int:
        """Rows waiting to be written."""
        with self._state:
            return sum(len(v) for v in self._pending.values())

    def enqueue(self, cp: Checkpoint) -> None:
        """Buffer a periodic write, merging it into the session's pending periodic write."""
        with self._state:
            items = self._pending.setdefault(cp.session_key, [])
            if items and items[-1].trigger is CheckpointTrigger.PERIODIC \
                    and cp.trigger is CheckpointTrigger.PERIODIC:
                items[-1] = merge_checkpoints(items[-1], cp)
            else:
                items.append(cp)
            armed = self._deadline is None
            if armed:
                self._deadline = self._clock() + self._window
        if armed and self._on_armed:
            self._on_armed()

    def due(self) -> bool:
        """True when queued writes have reached their deadline."""
        deadline = self._deadline
        return deadline is not None and self._clock() >= deadline

    def poll(self) -> FlushResult:
        """Flush if the deadline has passed."""
        return self.flush() if self.due() else FlushResult(pending=self.pending_count())

    def flush(self) -> FlushResult:
        """Write every queued row now."""
        with self._writing:
            with self._state:
                taken, self._pending, self._deadline = self._pending, {}, None
            return self._write(taken)

    def flush_session(self, session_key: str) -> FlushResult:
        """Write the queued rows of one session now."""
        return self._write_session(session_key, [])

    def write_now(self, cp: Checkpoint) -> FlushResult:
        """Write ``cp`` after the session's queued rows, in one sink call. On failure every
        one of them stays queued for the retry (the result says so)."""
        return self._write_session(cp.session_key, [cp])

    def _write_session(self, key: str, extra: list[Checkpoint]) -> FlushResult:
        with self._writing:
            with self._state:
                items = self._pending.pop(key, []) + extra
                if not self._pending:
                    self._deadline = None
            return self._write({key: items} if items else {})

    def _write(self, taken: dict[str, list[Checkpoint]]) -> FlushResult:
        """One sink call for everything taken; if that fails, one call per session, so a
        session whose rows cannot be written does not hold back the others."""
        written, failed, error = 0, {}, None
        if len(taken) > 1:
            try:
                self._sink([cp for items in taken.values() for cp in items])
                written, taken = sum(len(v) for v in taken.values()), {}
            except Exception as exc:  # noqa: BLE001 - retried below, session by session
                log.warning("checkpoint flush failed, retrying per session: %s", exc)
        for key, items in taken.items():
            try:
                self._sink(items)
                written += len(items)
            except Exception as exc:  # noqa: BLE001 - any failure is retried, never dropped
                failed[key] = items
                error = f"{exc.__class__.__name__}: {exc}"
                log.warning("checkpoint write for %s failed, will retry: %s", key, error)
        with self._state:
            if failed:
                for key, items in failed.items():
                    self._pending[key] = items + self._pending.get(key, [])
                self._failures += 1
                backoff = min(self._window * 2 ** (self._failures - 1),
                              timedelta(milliseconds=MAX_BACKOFF_MS))
                self._deadline = self._clock() + backoff
                self.last_error = error
            elif written:
                self._failures = 0
            pending = sum(len(v) for v in self._pending.values())
        return FlushResult(written, pending, error)

    def close(self) -> None:
        """Flush everything; raise ``CheckpointFlushError`` if rows could not be written."""
        result = self.flush()
        if result.pending:
            raise CheckpointFlushError(
                f"{result.pending} checkpoint(s) could not be written: {result.error}")


# ---------------------------------------------------------------------------- the recorder


class CheckpointRecorder:
    """The state machine of seed 000's five triggers over live sessions.

    ``start_session`` creates a session's state (a repeated start keeps it). ``record_prompt``
    counts a prompt and fires ``periodic`` when ``promptInterval`` prompts arrived since the
    last checkpoint; ``tick`` fires ``periodic`` for every session with activity whose last
    checkpoint is ``timeIntervalMs`` old (the time rule, run by ``start``'s thread or by the
    caller). Periodic rows go through the queue; ``pre_compaction`` (even with 0 prompts),
    ``end_session`` (only when the session had prompts; its queued rows are written first),
    and ``checkpoint`` (``explicit`` or ``agent``, with the caller's reason) write directly.
    With ``enabled = false`` nothing is written. Raises ``KeyError`` for a session that was
    not started (except ``end_session``, which then only flushes).
    """

    def __init__(self, queue: CheckpointQueue, config: CheckpointConfig, *,
                 clock: Clock = utc_now) -> None:
        self.queue, self.config, self.clock = queue, config, clock
        self.states: dict[str, SessionState] = {}
        self._lock = threading.RLock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        queue._on_armed = self._wake.set

    @classmethod
    def for_store(cls, store: "SqlStore", config: CheckpointConfig, *,
                  clock: Clock = utc_now) -> "CheckpointRecorder":
        """A recorder writing to ``store`` through a queue on the same clock."""
        sink = store_sink(store, config.max_checkpoints_per_session)
        return cls(CheckpointQueue(sink, clock=clock), config, clock=clock)

    def start_session(self, session_key: str, *, harness: str, project: str | None,
                      at: datetime | None = None) -> SessionState:
        """The session's state, created now unless it exists."""
        now = at or self.clock()
        with self._lock:
            state = self.states.get(session_key)
            if state is None:
                state = SessionState(session_key, harness, project, normalize_project(project),
                                     now, now)
                self.states[session_key] = state
            return state

    def record_prompt(self, session_key: str, text: str, *,
                      at: datetime | None = None) -> Checkpoint | None:
        """Count a prompt; returns the periodic checkpoint it queued, if the rule fired."""
        now = at or self.clock()
        with self._lock:
            state = self.states[session_key]
            state.record_prompt(text)
            if self.config.enabled and self._due(state, now):
                return self._periodic(state, now)
        return None

    def record_query(self, session_key: str, query: str) -> None:
        """Keep a memory query of the session (redacted)."""
        with self._lock:
            self.states[session_key].record_query(query)

    def record_remember(self, session_key: str, text: str) -> None:
        """Keep a remembered text of the session (redacted)."""
        with self._lock:
            self.states[session_key].record_remember(text)

    def _due(self, state: SessionState, now: datetime) -> bool:
        if state.interval_prompts >= self.config.prompt_interval:
            return True
        return state.has_activity() and self.time_due_at(state) <= now

    def time_due_at(self, state: SessionState) -> datetime:
        """When the time rule fires for ``state`` (if it has activity by then)."""
        return state.last_checkpoint_at + timedelta(milliseconds=self.config.time_interval_ms)

    def _periodic(self, state: SessionState, now: datetime) -> Checkpoint:
        snap = state.consume(now)
        cp = _checkpoint(snap, CheckpointTrigger.PERIODIC, format_periodic_digest(snap),
                         snap.interval_prompts)
        self.queue.enqueue(cp)
        return cp

    def tick(self, at: datetime | None = None) -> list[Checkpoint]:
        """Fire the time rule for every session due at ``at``; returns the queued rows."""
        now = at or self.clock()
        if not self.config.enabled:
            return []
        with self._lock:
            return [self._periodic(s, now) for s in list(self.states.values())
                    if s.has_activity() and self.time_due_at(s) <= now]

    def pre_compaction(self, session_key: str, *, context: str | None = None,
                       at: datetime | None = None) -> Checkpoint | None:
        """Write a ``pre_compaction`` checkpoint (with the harness's session context)."""
        now = at or self.clock()
        with self._lock:
            state = self.states[session_key]
            if not self.config.enabled:
                return None
            snap = state.consume(now)
        cp = _checkpoint(snap, CheckpointTrigger.PRE_COMPACTION,
                         format_pre_compaction_digest(snap, context), snap.interval_prompts)
        self.queue.write_now(cp)
        return cp

    def checkpoint(self, session_key: str, reason: str, *,
                   trigger: CheckpointTrigger = CheckpointTrigger.EXPLICIT,
                   at: datetime | None = None) -> Checkpoint | None:
        """Write an ``explicit`` (library/CLI call) or ``agent`` (agent tool) checkpoint whose
        digest carries ``reason`` (redacted). ``prompt_count`` is the interval count."""
        if trigger not in (CheckpointTrigger.EXPLICIT, CheckpointTrigger.AGENT):
            raise ValueError(f"trigger must be explicit or agent (got {trigger.value})")
        now = at or self.clock()
        with self._lock:
            state = self.states[session_key]
            if not self.config.enabled:
                return None
            snap = state.consume(now)
        cp = _checkpoint(snap, trigger, format_manual_digest(snap, trigger, reason),
                         snap.interval_prompts)
        self.queue.write_now(cp)
        return cp

    def end_session(self, session_key: str, *, at: datetime | None = None) -> Checkpoint | None:
        """Flush the session's queued rows, write ``session_end`` (total prompts) when the
        session had prompts, and forget its state."""
        now = at or self.clock()
        with self._lock:
            state = self.states.pop(session_key, None)
        if state is None or not self.config.enabled or state.total_prompts == 0:
            self.queue.flush_session(session_key)
            return None
        snap = state.consume(now)
        cp = _checkpoint(snap, CheckpointTrigger.SESSION_END, format_session_end_digest(snap),
                         snap.total_prompts)
        self.queue.write_now(cp)
        return cp

    # ------------------------------------------------------------------ background thread

    def start(self, *, tick_seconds: float = 1.0) -> None:
        """Run the time rule and the queue's deadline on a daemon thread (wakes at the queue
        deadline, or every ``tick_seconds``)."""
        if self._thread is not None:
            return
        self._stop.clear()

        def loop() -> None:
            while not self._stop.is_set():
                deadline = self.queue.deadline
                wait = tick_seconds if deadline is None else min(
                    tick_seconds, max((deadline - self.clock()).total_seconds(), 0.0))
                self._wake.wait(wait)
                self._wake.clear()
                self.tick()
                self.queue.poll()

        self._thread = threading.Thread(target=loop, name="continuity-checkpoints", daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        """Stop the thread and flush (``CheckpointFlushError`` if rows could not be written)."""
        if self._thread is not None:
            self._stop.set()
            self._wake.set()
            self._thread.join()
            self._thread = None
        self.queue.close()


# ---------------------------------------------------------------------------- recovery


@dataclass(frozen=True, slots=True)
class Recovery:
    """The recovery digest for a new session: ``source`` is ``session`` (the newest checkpoint
    of the same session) or ``project`` (the newest of the same project within the window),
    None when nothing was found; ``text`` fits ``budget_chars``."""

    checkpoint: Checkpoint | None
    source: str | None
    text: str
    truncated: bool
    budget_chars: int

    def to_dict(self) -> dict[str, Any]:
        """The ``recover --json`` shape."""
        return {"source": self.source, "text": self.text, "truncated": self.truncated,
                "budget_chars": self.budget_chars,
                "checkpoint": checkpoint_dict(self.checkpoint) if self.checkpoint else None}


def checkpoint_dict(cp: Checkpoint) -> dict[str, Any]:
    """A checkpoint as JSON (the digest re-redacted on the way out)."""
    return {"id": cp.checkpoint_id, "session": cp.session_key, "harness": cp.harness,
            "project": cp.project, "project_normalized": cp.project_normalized,
            "trigger": cp.trigger.value, "prompt_count": cp.prompt_count,
            "memory_queries": list(cp.memory_queries),
            "recent_remembers": list(cp.recent_remembers),
            "created_at": cp.created_at.isoformat().replace("+00:00", "Z")
            if cp.created_at else None,
            "digest": redact(cp.digest)}


def render_recovery(digest: str, budget_chars: int) -> tuple[str, bool]:
    """``(text, truncated)``: the redacted digest if it fits ``budget_chars`` characters, else
    its beginning (so the structural head, the lines before the first ``###`` block, comes
    first) cut at a whole line when one ends within 80 characters, else at a character
    boundary, plus ``TRUNCATION_MARKER`` naming the characters left out; the marker counts
    inside the budget (the origin's went past it). Budget ≤ 0 → ``""``."""
    text = redact(digest)
    if budget_chars <= 0:
        return "", bool(text)
    if len(text) <= budget_chars:
        return text, False
    room = budget_chars - len(TRUNCATION_MARKER.format(n=len(text)))
    if room <= 0:
        return safe_cut(text, budget_chars), True
    kept = safe_cut(text, room)
    head_end = text.find("\n\n###")
    line_end = kept.rfind("\n")
    if head_end >= 0 and line_end >= head_end and len(kept) - line_end <= RECOVERY_LINE_SLACK:
        kept = kept[:line_end]  # end on a whole line when one ends close by
    kept = kept.rstrip()
    return kept + TRUNCATION_MARKER.format(n=len(text) - len(kept)), True


def recover(store: "SqlStore", *, session_key: str | None = None, project: str | None = None,
            config: CheckpointConfig, now: datetime | None = None) -> Recovery:
    """The recovery digest at session start: the newest checkpoint of ``session_key`` (no age
    limit), else the newest of ``project`` (normalized) created within
    ``recoveryWindowHours`` before ``now``; rendered within ``recoveryBudgetChars``."""
    budget = config.recovery_budget_chars
    cp, source = None, None
    if config.enabled and session_key:
        cp, source = store.latest_checkpoint(session_key), "session"
    if config.enabled and cp is None and project:
        since = (now or utc_now()) - timedelta(hours=config.recovery_window_hours)
        cp, source = store.latest_project_checkpoint(normalize_project(project) or project,
                                                     since=since), "project"
    if cp is None:
        return Recovery(None, None, "", False, budget)
    text, truncated = render_recovery(cp.digest, budget)
    return Recovery(cp, source, text, truncated, budget)


def prune(store: "SqlStore", config: CheckpointConfig, *, retention_days: int | None = None,
          now: datetime | None = None) -> int:
    """Delete checkpoints older than ``retention_days`` (default ``retentionDays``) before
    ``now``; returns how many went (seed 000: ``pruneCheckpoints``; a live session keeps its
    newest). Raises ``ValueError`` for a retention outside 1–90 days."""
    days = config.retention_days if retention_days is None else retention_days
    low, high, text = _RANGES["retention_days"]
    if not low <= days <= high:
        raise ValueError(f"retention days must be an integer in {text} (got {days})")
    return store.prune_checkpoints(older_than=(now or utc_now()) - timedelta(days=days))


# ---------------------------------------------------------------------------- replay


class _ReplayClock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _rows(store: "SqlStore", key: str) -> Iterator[Entry]:
    after = -1
    while True:
        page = store.entries(key, after_seq=after, limit=1000)
        yield from page
        if len(page) < 1000:
            return
        after = page[-1].seq


def _replay(store: "SqlStore", session_key: str, config: CheckpointConfig,
            *, end: bool = True) -> tuple[list[Checkpoint], CheckpointRecorder]:
    """Run a stored session through a recorder on the transcript's clock (see
    ``replay_session``); returns the checkpoints in landing order and the recorder."""
    session = store.get_session(session_key)
    if session is None:
        raise KeyError(session_key)
    out: list[Checkpoint] = []
    first = session.started_at or datetime(1970, 1, 1, tzinfo=timezone.utc)
    clock = _ReplayClock(first)
    recorder = CheckpointRecorder(CheckpointQueue(out.extend, clock=clock), config, clock=clock)
    state = None
    for row in _rows(store, session_key):
        ts = max(row.timestamp, clock.now) if row.timestamp else clock.now
        if state is None:
            clock.now = ts
            state = recorder.start_session(session_key, harness=session.harness,
                                           project=session.project, at=ts)
        while state.has_activity() and (due := recorder.time_due_at(state)) <= ts:
            _advance(recorder, clock, due)
            recorder.tick(due)
        _advance(recorder, clock, ts)
        if row.is_request:
            recorder.record_prompt(session_key, row.text(), at=ts)
        elif row.kind is EntryKind.COMPACTION and not (row.compaction and
                                                       row.compaction.continuation):
            recorder.pre_compaction(session_key, at=ts)
    if end and state is not None:
        recorder.end_session(session_key, at=clock.now)
    recorder.queue.flush()
    return out, recorder


def _advance(recorder: CheckpointRecorder, clock: _ReplayClock, to: datetime) -> None:
    """Move the replay clock to ``to``, flushing the queue at its deadline on the way."""
    deadline = recorder.queue.deadline
    if deadline is not None and deadline <= to:
        clock.now = max(deadline, clock.now)
        recorder.queue.poll()
    clock.now = max(to, clock.now)


def replay_session(store: "SqlStore", session_key: str, *,
                   config: CheckpointConfig) -> list[Checkpoint]:
    """Replay an imported session through the recorder and store the checkpoints live capture
    would have written: ``periodic`` from the transcript's own timestamps and prompt counts
    (each ``is_request`` row is a prompt; the time rule fires when the timer would have),
    ``pre_compaction`` at each compaction row the harness recorded, ``session_end`` at its
    last row. Idempotent: only checkpoints newer than the session's newest replay-kind row
    (periodic, pre-compaction, session end) are added, so a re-run adds nothing and a grown
    file adds only its new ones. Returns the rows added. Raises ``KeyError`` for an unknown
    session."""
    if not config.enabled:
        return []
    computed, _ = _replay(store, session_key, config)
    computed = computed[-config.max_checkpoints_per_session:]
    replay_kinds = (CheckpointTrigger.PERIODIC, CheckpointTrigger.PRE_COMPACTION,
                    CheckpointTrigger.SESSION_END)
    existing = [c for c in store.checkpoints(session_key) if c.trigger in replay_kinds]
    mark = max((c.created_at for c in existing if c.created_at), default=None)
    have = {(c.trigger, c.created_at) for c in existing}
    added = []
    with store.batch():
        for cp in computed:
            if (cp.trigger, cp.created_at) in have or (mark and cp.created_at
                                                       and cp.created_at <= mark):
                continue
            added.append(store.insert_checkpoint(
                cp, max_per_session=config.max_checkpoints_per_session))
    return added


def replay_import(store: "SqlStore", report: "ImportReport", *,
                  config: CheckpointConfig) -> int:
    """Replay every session an import touched (``replay_session``); returns the number of
    checkpoints added."""
    return sum(len(replay_session(store, key, config=config)) for key in report.sessions)


def manual_checkpoint(store: "SqlStore", session_key: str, reason: str, *,
                      config: CheckpointConfig,
                      trigger: CheckpointTrigger = CheckpointTrigger.EXPLICIT,
                      now: datetime | None = None) -> Checkpoint | None:
    """Write an ``explicit`` or ``agent`` checkpoint of a stored session from outside a live
    recorder (the CLI): its state is rebuilt from the transcript (prompts since its newest
    checkpoint, the last 10 snippets, duration to its last row), stamped ``now``. Returns
    None when continuity is disabled."""
    if not config.enabled:
        return None
    _, recorder = _replay(store, session_key, config, end=False)
    state = recorder.states.get(session_key)
    if state is None:
        session = store.get_session(session_key)
        state = recorder.start_session(session_key, harness=session.harness if session else
                                       "unknown", project=session.project if session else None,
                                       at=now or utc_now())
    snap = state.consume(recorder.clock())
    digest = format_manual_digest(snap, trigger, reason)
    cp = replace(_checkpoint(snap, trigger, digest, snap.interval_prompts),
                 created_at=now or utc_now())
    return store.insert_checkpoint(cp, max_per_session=config.max_checkpoints_per_session)
