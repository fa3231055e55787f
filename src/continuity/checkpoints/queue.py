"""The checkpoint flush queue (seed 000: ``queueCheckpointWrite``): buffered checkpoint writes
and the sink they land in. Split out of ``continuity.checkpoints.capture``, which re-exports every name.

- ``CheckpointQueue``: buffered writes flushed within a fixed 2,500 ms window after the first
  queued one; same-session periodic writes merge (``merge_checkpoints``); a failed write is
  retried with a backoff, never dropped; ``write_now`` puts a direct checkpoint after the
  session's queued writes in one sink call.
- ``Sink``/``store_sink``: where a flush goes (a callable taking checkpoints in order; the store
  sink writes them in one transaction under the per-session cap).
- ``FlushResult`` (what one flush did) and ``CheckpointFlushError`` (rows left at shutdown).
- ``Clock``/``utc_now`` and the caps shared with ``continuity.checkpoints.capture``.

Times are aware UTC datetimes from an injectable clock; durations are milliseconds. Imports
only ``core``, ``redaction`` and ``store`` (for typing); never ``continuity.checkpoints.capture``,
which takes the digests' memory-activity block (``activity_lines``) from here, so a merged
digest and a fresh one read alike.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from continuity.core.errors import StoreError
from continuity.core.model import Checkpoint, CheckpointTrigger
from continuity.core.text import safe_cut
from continuity.core.when import later
from continuity.redaction.funnel import redact

if TYPE_CHECKING:  # pragma: no cover
    from continuity.store import SqlStore

#: the logger name from before the split, so log filters keep matching
log = logging.getLogger("continuity.checkpoints")

Clock = Callable[[], datetime]

#: seed 000: periodic writes are flushed within 2,500 ms of the first queued one (fixed window).
FLUSH_WINDOW_MS = 2_500
#: seed 000: caps of the merged lists of a checkpoint (memory queries, remembers).
MAX_QUERIES, MAX_REMEMBERS = 20, 10
#: retry backoff of a failed flush: the window doubled per failure, at most this.
MAX_BACKOFF_MS = 60_000


def utc_now() -> datetime:
    """The wall clock as an aware UTC datetime (the default ``Clock``)."""
    return datetime.now(UTC)


# ---------------------------------------------------------------------------- merge rule


def _union(old: Sequence[str], new: Sequence[str], cap: int) -> tuple[str, ...]:
    """Order-preserving union (first occurrence wins), keeping the newest ``cap`` items."""
    return tuple(dict.fromkeys([*old, *new]))[-cap:] if cap else ()


#: seed 000 (origin): a remember shows its first 120 characters in a digest.
REMEMBER_CHARS = 120


def activity_lines(queries: Sequence[str], remembers: Sequence[str]) -> list[str]:
    """The lines of a digest's memory-activity block (seed 000): ``Queries: a, b`` and
    ``Remembered: x; y`` (each remember cut to ``REMEMBER_CHARS`` characters), only those
    that have items; redacted. ``[]`` when both lists are empty."""
    lines = []
    if queries:
        lines.append("Queries: " + ", ".join(queries))
    if remembers:
        lines.append("Remembered: " + "; ".join(_shown(r, REMEMBER_CHARS) for r in remembers))
    return lines


def _shown(text: str, limit: int) -> str:
    """Redacted, whitespace collapsed, cut to ``limit`` characters (no half marker kept)."""
    out = safe_cut(redact(" ".join(text.split())), limit)
    cut = out.rfind("[REDACTED:")
    if cut >= 0 and "]" not in out[cut:]:
        out = out[:cut].rstrip()
    return out


#: the memory-activity block of a digest: its heading line up to the next block or the end
_ACTIVITY = re.compile(r"\n\n### Memory Activity[^\n]*\n.*?(?=\n\n### |\Z)", re.S)
#: the interval count of a periodic digest's third line (``Prompts: {n} | Duration: …``)
_PROMPTS = re.compile(r"^(Prompts: )\d+", re.M)


def merge_checkpoints(old: Checkpoint, new: Checkpoint) -> Checkpoint:
    """Two queued writes of one session inside the window (seed 000): queries and remembers
    are an order-preserving union capped at the newest 20 and 10, prompt counts are summed,
    trigger, time and project come from ``new``. The digest is ``new``'s with what the merge
    changed made true (issue 39: it said only the newer row's activity): its ``Prompts: n``
    count is the summed one and its ``### Memory Activity…`` block lists the merged queries
    and remembers (added after the other blocks when ``new`` had none). Recent prompts are
    a rolling window, so ``new``'s already holds ``old``'s."""
    queries = _union(old.memory_queries, new.memory_queries, MAX_QUERIES)
    remembers = _union(old.recent_remembers, new.recent_remembers, MAX_REMEMBERS)
    count = old.prompt_count + new.prompt_count
    return replace(
        new,
        prompt_count=count,
        memory_queries=queries,
        recent_remembers=remembers,
        digest=_merged_digest(new.digest, count, queries, remembers),
    )


def _merged_digest(
    digest: str, count: int, queries: Sequence[str], remembers: Sequence[str]
) -> str:
    """``digest`` with its prompt count set to ``count`` and its memory-activity block
    listing ``queries`` and ``remembers`` (see ``merge_checkpoints``)."""
    digest = _PROMPTS.sub(lambda m: f"{m.group(1)}{count}", digest, count=1)
    lines = activity_lines(queries, remembers)
    found = _ACTIVITY.search(digest)
    if found is not None:
        title = found.group(0).split("\n")[2]
        block = "\n\n" + "\n".join([title, *lines]) if lines else ""
        return digest[: found.start()] + block + digest[found.end() :]
    if not lines:
        return digest
    return digest + "\n\n" + "\n".join(["### Memory Activity Since Last Checkpoint", *lines])


# ---------------------------------------------------------------------------- flush queue

Sink = Callable[[Sequence[Checkpoint]], None]


def store_sink(store: SqlStore, max_per_session: int) -> Sink:
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

    def __init__(
        self,
        sink: Sink,
        *,
        clock: Clock = utc_now,
        window_ms: int = FLUSH_WINDOW_MS,
        on_armed: Callable[[], None] | None = None,
    ) -> None:
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
            if (
                items
                and items[-1].trigger is CheckpointTrigger.PERIODIC
                and cp.trigger is CheckpointTrigger.PERIODIC
            ):
                items[-1] = merge_checkpoints(items[-1], cp)
            else:
                items.append(cp)
            armed = self._deadline is None
            if armed:
                self._deadline = later(self._clock(), self._window)
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
                backoff = min(
                    self._window * 2 ** (self._failures - 1), timedelta(milliseconds=MAX_BACKOFF_MS)
                )
                self._deadline = later(self._clock(), backoff)
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
                f"{result.pending} checkpoint(s) could not be written: {result.error}"
            )
