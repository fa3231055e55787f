"""Session checkpoints (seed 000, "Session Checkpoints"; issue 3): capture a session's
continuity as redacted digests, and hand the newest one to the next session.

- ``CheckpointConfig``: the ``[continuity]`` section of ``config.toml`` (seed 000's table).
- ``SessionState``: the accumulator of one live session (prompt counters, recent prompts,
  memory queries and remembers since the last checkpoint, start and last-checkpoint times).
- Digest formatters: ``format_periodic_digest``, ``format_pre_compaction_digest``,
  ``format_session_end_digest``, ``format_manual_digest`` (structured markdown, redacted);
  each carries ``### Open Tasks``, the open items of the agent's newest task list, when the
  session has one (B27: ``record_tool_call`` feeds it, from ``recovery``'s replay of an
  imported session and from the daemon's import of a live session's file, ``hooks.capture``).
- ``CheckpointRecorder``: the state machine of the five triggers (``periodic`` on
  ``promptInterval`` prompts or ``timeIntervalMs`` elapsed, ``pre_compaction``,
  ``session_end``, ``agent``, ``explicit``). Direct writes flush the session's queued writes
  first, in the same transaction, so a periodic row never lands after them.
- ``prune``: retention (``retentionDays``).

Two neighbours own the rest, and every name of theirs stays importable from here:

- ``continuity.checkpoints.queue``: ``CheckpointQueue`` (buffered writes flushed within a fixed
  2,500 ms window; same-session periodic writes merge; a failed write is retried, never
  dropped), ``store_sink``, ``FlushResult``, ``CheckpointFlushError``, ``merge_checkpoints``,
  ``Clock``/``utc_now``. It sits below this module, which imports it.
- ``continuity.checkpoints.recovery``: ``recover``/``render_recovery`` (the recovery digest within
  ``recoveryBudgetChars``), ``replay_session``/``replay_import`` (checkpoints of imported
  sessions, from the transcript's own timestamps, through the same recorder and queue) and
  ``manual_checkpoint``. It sits above this module and imports it; this module never imports
  it back. Callers take all three modules' names from the package, ``continuity.checkpoints``.

Times are aware UTC datetimes from an injectable clock; durations are milliseconds; budgets and
snippet lengths are characters (code points), never cut inside a character.

Over 600 lines: seed 000's checkpoint capture: the config table, the periodic window, the
digest's sections and the queue share one state per session; recovery already lives in
``checkpoints.recovery``.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

# re-exported (``X as X``): these lived here before the split
from continuity.checkpoints.queue import (
    FLUSH_WINDOW_MS as FLUSH_WINDOW_MS,
    MAX_BACKOFF_MS as MAX_BACKOFF_MS,
    MAX_QUERIES,
    MAX_REMEMBERS,
    REMEMBER_CHARS as REMEMBER_CHARS,
    CheckpointFlushError as CheckpointFlushError,
    CheckpointQueue,
    Clock,
    FlushResult as FlushResult,
    Sink as Sink,
    _union,
    activity_lines,
    merge_checkpoints as merge_checkpoints,
    store_sink,
    utc_now,
)
from continuity.core.config import FOLLOW_UP_BUDGET_BYTES, FOLLOW_UP_BUDGET_RANGE, load_section
from continuity.core.model import Checkpoint, CheckpointTrigger
from continuity.core.tasklist import TaskItem, open_items, task_list
from continuity.core.text import safe_cut as safe_cut  # re-exported: it lived here
from continuity.core.when import later
from continuity.redaction.funnel import redact

if TYPE_CHECKING:  # pragma: no cover
    from continuity.store import SqlStore

log = logging.getLogger("continuity.checkpoints")


#: seed 000: cap of the pending prompt snippets.
MAX_SNIPPETS = 10
#: seed 000 (origin): a prompt snippet is the first 200 characters (a remember shows
#: ``REMEMBER_CHARS``, 120, from ``checkpoints.queue``).
SNIPPET_CHARS = 200


# ---------------------------------------------------------------------------- configuration

#: field -> (low, high, how the range reads in an error)
_RANGES = {
    "prompt_interval": (1, 1000, "1–1000"),
    "time_interval_ms": (60_000, 3_600_000, "60000–3600000 ms (60 s–1 h)"),
    "max_checkpoints_per_session": (1, 500, "1–500"),
    "retention_days": (1, 90, "1–90"),
    "recovery_budget_chars": (200, 10_000, "200–10000"),
    "recovery_window_hours": (1, 720, "1–720"),
    "recovery_window_days": (1, 3650, '1–3650 or "any"'),
    "follow_up_budget_bytes": (*FOLLOW_UP_BUDGET_RANGE, "1000–100000000 bytes"),
}


class CheckpointConfig(BaseModel):
    """The ``[continuity]`` section (seed 000's table; keys in camelCase or snake_case, env
    ``CONTINUITY_CONTINUITY__PROMPT_INTERVAL`` etc.). Integers only; a value out of range is a
    ``ConfigError`` naming the field and its range, never clamped. ``recoveryWindowDays`` is
    ours (issue 39): how far back a new session looks for the sessions and checkpoints of the
    same project, in days (1–3650, default 14), or ``"any"`` for no limit; an explicitly set
    ``recoveryWindowHours`` (1–720, the window before issue 39, whose fixed 4 h was the
    origin's) still wins, so existing configs keep working (``recovery_window``).
    ``follow_up_budget_bytes`` is seed 002's follow-up budget
    (UTF-8 bytes, default 240,000, ``continuity.core.config.FOLLOW_UP_BUDGET_RANGE``): a working
    view over it gets a continuation checkpoint after a settled turn (issue 14)."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    enabled: bool = True
    prompt_interval: int = Field(default=10, alias="promptInterval")
    time_interval_ms: int = Field(default=900_000, alias="timeIntervalMs")
    max_checkpoints_per_session: int = Field(default=50, alias="maxCheckpointsPerSession")
    retention_days: int = Field(default=7, alias="retentionDays")
    recovery_budget_chars: int = Field(default=2000, alias="recoveryBudgetChars")
    recovery_window_days: int | str = Field(default=14, alias="recoveryWindowDays")
    recovery_window_hours: int | None = Field(default=None, alias="recoveryWindowHours")
    follow_up_budget_bytes: int = Field(default=FOLLOW_UP_BUDGET_BYTES, alias="followUpBudgetBytes")

    @field_validator(*_RANGES, mode="before")
    @classmethod
    def _integer_in_range(cls, value: Any, info: Any) -> int | str:
        low, high, text = _RANGES[info.field_name]
        if (
            info.field_name == "recovery_window_days"
            and isinstance(value, str)
            and value.strip().lower() == "any"
        ):
            return "any"
        number: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            number = int(value)
        if number is None or not low <= number <= high:
            raise ValueError(f"must be an integer in {text}")
        return number

    def recovery_window(self) -> timedelta | None:
        """How old a session or checkpoint of the same project may be for a new session to be
        told of it (issue 39): ``recoveryWindowHours`` hours when set explicitly, else
        ``recoveryWindowDays`` days; None for ``"any"`` (no limit)."""
        if self.recovery_window_hours is not None:
            return timedelta(hours=self.recovery_window_hours)
        if self.recovery_window_days == "any":
            return None
        return timedelta(days=int(self.recovery_window_days))


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


def _short(text: str, limit: int) -> str:
    """Redacted, whitespace collapsed, at most ``limit`` characters: a text that does not fit
    is cut (never inside a character, nor leaving half a ``[REDACTED:…]`` marker) and ends
    with ``…`` within the limit (issue 39: a prompt cut mid-word with no marker)."""
    whole = redact(" ".join(text.split()))
    if len(whole) <= limit:
        return whole
    out = safe_cut(whole, max(limit - 1, 0))
    cut = out.rfind("[REDACTED:")
    if cut >= 0 and "]" not in out[cut:]:
        out = out[:cut].rstrip()
    return out.rstrip() + "…" if limit > 0 else ""


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
    tasks: tuple[TaskItem, ...] = ()


@dataclass(slots=True)
class SessionState:
    """The continuity accumulator of one live session. ``snippets`` is a rolling window of the
    last 10 prompts (each checkpoint shows the current focus); ``queries`` and ``remembers``
    hold the memory activity since the last checkpoint (capped at 20 and 10, newest kept);
    ``session_queries`` and ``session_remembers`` the whole session's (same caps), which the
    ``session_end`` checkpoint carries (issue 39: it said ``recent_remembers: []`` right after
    an ``agent`` checkpoint had taken the session's one decision); ``tasks`` the agent's
    newest task list (B27: every digest carries its open items, so the
    tasks survive compaction), None until one is seen."""

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
    tasks: tuple[TaskItem, ...] | None = None
    session_queries: tuple[str, ...] = ()
    session_remembers: tuple[str, ...] = ()

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
            self.session_queries = _union(self.session_queries, [q], MAX_QUERIES)

    def record_remember(self, text: str) -> None:
        """Keep a remembered text (redacted)."""
        r = " ".join(redact(text).split())
        if r:
            self.remembers = _union(self.remembers, [r], MAX_REMEMBERS)
            self.session_remembers = _union(self.session_remembers, [r], MAX_REMEMBERS)

    def record_tool_call(self, arguments: Any) -> bool:
        """Keep the task list a plan/todo call writes (``continuity.core.tasklist``: Claude Code
        ``TodoWrite``, Codex ``update_plan``) as the session's current list; True when the call
        was one. Other calls change nothing."""
        items = task_list(arguments)
        if items is None:
            return False
        self.tasks = items
        return True

    def has_activity(self) -> bool:
        """True when something happened since the last checkpoint."""
        return bool(self.interval_prompts or self.queries or self.remembers)

    def consume(self, now: datetime, *, whole_session: bool = False) -> Snapshot:
        """Snapshot the state, then reset the interval count and memory activity and set the
        last-checkpoint time to ``now`` (totals, start time, snippets and the session's
        memory activity survive). ``whole_session``: the snapshot's queries and remembers are
        the whole session's (``session_end``, issue 39), not those since the last checkpoint."""
        queries, remembers = (
            (self.session_queries, self.session_remembers)
            if whole_session
            else (self.queries, self.remembers)
        )
        snap = Snapshot(
            self.session_key,
            self.harness,
            self.project,
            self.project_normalized,
            now,
            int((now - self.started_at) / timedelta(milliseconds=1)),
            self.interval_prompts,
            self.total_prompts,
            tuple(self.snippets),
            queries,
            remembers,
            tuple(open_items(self.tasks)),
        )
        self.interval_prompts, self.queries, self.remembers = 0, (), ()
        self.last_checkpoint_at = now
        return snap


# ---------------------------------------------------------------------------- digests


def _header(title: str, s: Snapshot, counts: str) -> list[str]:
    return [f"## {title}", f"Project: {s.project or 'unknown'}", counts]


def _blocks(s: Snapshot, activity_title: str) -> list[str]:
    lines: list[str] = []
    if s.tasks:  # B27: before the prompts, so a recovery cut keeps them first
        lines += [
            "",
            "### Open Tasks",
            *(f"- [{t.status}] {_short(t.label(), SNIPPET_CHARS)}" for t in s.tasks),
        ]
    if s.snippets:
        lines += ["", "### Recent Prompts", *(f"- {p}" for p in s.snippets)]
    activity = activity_lines(s.queries, s.remembers)
    if activity:
        lines += ["", f"### {activity_title}", *activity]
    return lines


def format_periodic_digest(s: Snapshot) -> str:
    """``## Session Checkpoint`` / project / ``Prompts: {interval} | Duration: {d}``, then
    ``### Recent Prompts`` and ``### Memory Activity Since Last Checkpoint`` (seed 000)."""
    lines = _header(
        "Session Checkpoint",
        s,
        f"Prompts: {s.interval_prompts} | Duration: {format_duration(s.duration_ms)}",
    )
    return redact("\n".join(lines + _blocks(s, "Memory Activity Since Last Checkpoint")))


def format_pre_compaction_digest(s: Snapshot, context: str | None = None) -> str:
    """``## Pre-Compaction Checkpoint`` / project / ``Duration: {d} | Prompts: {interval}``,
    then ``### Session Context`` (when given), recent prompts, ``### Memory Activity``."""
    lines = _header(
        "Pre-Compaction Checkpoint",
        s,
        f"Duration: {format_duration(s.duration_ms)} | Prompts: {s.interval_prompts}",
    )
    if context and context.strip():
        lines += ["", "### Session Context", context.strip()]
    return redact("\n".join(lines + _blocks(s, "Memory Activity")))


def format_session_end_digest(s: Snapshot) -> str:
    """``## Session End Checkpoint`` / project / ``Duration: {d} | Total Prompts: {total}``,
    then recent prompts and ``### Memory Activity`` (the whole session's: ``end_session``)."""
    lines = _header(
        "Session End Checkpoint",
        s,
        f"Duration: {format_duration(s.duration_ms)} | Total Prompts: {s.total_prompts}",
    )
    return redact("\n".join(lines + _blocks(s, "Memory Activity")))


def format_manual_digest(s: Snapshot, trigger: CheckpointTrigger, reason: str) -> str:
    """``## Explicit Checkpoint`` or ``## Agent Checkpoint`` / project / ``Duration: {d} |
    Prompts: {interval} | Total Prompts: {total}``, then ``### Reason`` (the caller's text),
    recent prompts and ``### Memory Activity``."""
    title = "Agent Checkpoint" if trigger is CheckpointTrigger.AGENT else "Explicit Checkpoint"
    lines = _header(
        title,
        s,
        f"Duration: {format_duration(s.duration_ms)} | Prompts: "
        f"{s.interval_prompts} | Total Prompts: {s.total_prompts}",
    )
    if reason.strip():
        lines += ["", "### Reason", reason.strip()]
    return redact("\n".join(lines + _blocks(s, "Memory Activity")))


def _checkpoint(
    s: Snapshot, trigger: CheckpointTrigger, digest: str, prompt_count: int
) -> Checkpoint:
    return Checkpoint(
        s.session_key,
        s.harness,
        s.project,
        s.project_normalized,
        trigger,
        digest,
        prompt_count,
        s.queries,
        s.remembers,
        created_at=s.at,
    )


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

    def __init__(
        self, queue: CheckpointQueue, config: CheckpointConfig, *, clock: Clock = utc_now
    ) -> None:
        self.queue, self.config, self.clock = queue, config, clock
        self.states: dict[str, SessionState] = {}
        self._lock = threading.RLock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        queue._on_armed = self._wake.set

    @classmethod
    def for_store(
        cls, store: SqlStore, config: CheckpointConfig, *, clock: Clock = utc_now
    ) -> CheckpointRecorder:
        """A recorder writing to ``store`` through a queue on the same clock."""
        sink = store_sink(store, config.max_checkpoints_per_session)
        return cls(CheckpointQueue(sink, clock=clock), config, clock=clock)

    def start_session(
        self, session_key: str, *, harness: str, project: str | None, at: datetime | None = None
    ) -> SessionState:
        """The session's state, created now unless it exists."""
        now = at or self.clock()
        with self._lock:
            state = self.states.get(session_key)
            if state is None:
                state = SessionState(
                    session_key, harness, project, normalize_project(project), now, now
                )
                self.states[session_key] = state
            return state

    def record_prompt(
        self, session_key: str, text: str, *, at: datetime | None = None
    ) -> Checkpoint | None:
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

    def record_tool_call(self, session_key: str, arguments: Any) -> bool:
        """Note a tool call of the session: a plan/todo call's list becomes the session's
        task list, whose open items every later digest carries (B27). True when it was one."""
        with self._lock:
            return self.states[session_key].record_tool_call(arguments)

    def _due(self, state: SessionState, now: datetime) -> bool:
        if state.interval_prompts >= self.config.prompt_interval:
            return True
        return state.has_activity() and self.time_due_at(state) <= now

    def time_due_at(self, state: SessionState) -> datetime:
        """When the time rule fires for ``state`` (if it has activity by then); never
        (``core.when.END_OF_TIME``) when that is past year 9999 (issue 45 item 1)."""
        return later(state.last_checkpoint_at, timedelta(milliseconds=self.config.time_interval_ms))

    def _periodic(self, state: SessionState, now: datetime) -> Checkpoint:
        snap = state.consume(now)
        cp = _checkpoint(
            snap, CheckpointTrigger.PERIODIC, format_periodic_digest(snap), snap.interval_prompts
        )
        self.queue.enqueue(cp)
        return cp

    def tick(self, at: datetime | None = None) -> list[Checkpoint]:
        """Fire the time rule for every session due at ``at``; returns the queued rows. One
        session whose checkpoint cannot be made is logged and skipped: the others still get
        theirs (issue 45 item 1)."""
        now = at or self.clock()
        if not self.config.enabled:
            return []
        out = []
        with self._lock:
            for s in list(self.states.values()):
                try:
                    if s.has_activity() and self.time_due_at(s) <= now:
                        out.append(self._periodic(s, now))
                except Exception as exc:  # noqa: BLE001 - one session never stops the others
                    log.warning(
                        "checkpoint timer: session %r skipped: %s: %s",
                        s.session_key,
                        type(exc).__name__,
                        exc,
                    )
        return out

    def pre_compaction(
        self, session_key: str, *, context: str | None = None, at: datetime | None = None
    ) -> Checkpoint | None:
        """Write a ``pre_compaction`` checkpoint (with the harness's session context)."""
        now = at or self.clock()
        with self._lock:
            state = self.states[session_key]
            if not self.config.enabled:
                return None
            snap = state.consume(now)
        cp = _checkpoint(
            snap,
            CheckpointTrigger.PRE_COMPACTION,
            format_pre_compaction_digest(snap, context),
            snap.interval_prompts,
        )
        self.queue.write_now(cp)
        return cp

    def checkpoint(
        self,
        session_key: str,
        reason: str,
        *,
        trigger: CheckpointTrigger = CheckpointTrigger.EXPLICIT,
        at: datetime | None = None,
    ) -> Checkpoint | None:
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
        cp = _checkpoint(
            snap, trigger, format_manual_digest(snap, trigger, reason), snap.interval_prompts
        )
        self.queue.write_now(cp)
        return cp

    def discard(self, session_key: str) -> None:
        """Forget the session's state without writing anything (its queued rows flushed): for
        a session found already ended."""
        with self._lock:
            self.states.pop(session_key, None)
        self.queue.flush_session(session_key)

    def end_session(self, session_key: str, *, at: datetime | None = None) -> Checkpoint | None:
        """Flush the session's queued rows, write ``session_end`` (total prompts, and the
        whole session's memory queries and remembers, issue 39) when the session had
        prompts, and forget its state."""
        now = at or self.clock()
        with self._lock:
            state = self.states.pop(session_key, None)
        if state is None or not self.config.enabled or state.total_prompts == 0:
            self.queue.flush_session(session_key)
            return None
        snap = state.consume(now, whole_session=True)
        cp = _checkpoint(
            snap, CheckpointTrigger.SESSION_END, format_session_end_digest(snap), snap.total_prompts
        )
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
                wait = (
                    tick_seconds
                    if deadline is None
                    else min(tick_seconds, max((deadline - self.clock()).total_seconds(), 0.0))
                )
                self._wake.wait(wait)
                self._wake.clear()
                try:
                    self.tick()
                    self.queue.poll()
                except Exception as exc:  # noqa: BLE001 - the timer thread outlives a failure
                    log.warning("checkpoint timer: %s: %s", type(exc).__name__, exc)

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


# ---------------------------------------------------------------------------- retention


def prune(
    store: SqlStore,
    config: CheckpointConfig,
    *,
    retention_days: int | None = None,
    now: datetime | None = None,
    dry_run: bool = False,
) -> int:
    """Delete checkpoints older than ``retention_days`` (default ``retentionDays``) before
    ``now``; returns how many went (seed 000: ``pruneCheckpoints``; a live session keeps its
    newest), or with ``dry_run`` how many would go, deleting nothing. Raises ``ValueError``
    for a retention outside 1–90 days."""
    days = config.retention_days if retention_days is None else retention_days
    low, high, text = _RANGES["retention_days"]
    if not low <= days <= high:
        raise ValueError(f"retention days must be an integer in {text} (got {days})")
    return store.prune_checkpoints(
        older_than=(now or utc_now()) - timedelta(days=days), dry_run=dry_run
    )
