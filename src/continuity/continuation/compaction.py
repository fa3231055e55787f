"""The continuation checkpoint after a settled turn: spec/continuation.md Part 1 (seed 002).

``after_turn(store, session_key, lease=, summarizer=, deadline=)`` is called by a harness when
a task turn has settled successfully. It decides, in this order (the first that applies wins):

1. the turn did not settle successfully, or a stop is in progress → not needed;
2. the settled run (the session's newest run) already has a continuation checkpoint or a
   refusal receipt → not needed: at most one compaction per settled turn;
3. the working view, measured from the store now (the newest compaction's summary as the
   continuation shows it, plus the visible message rows after its coverage, in stored view
   bytes; never a cached usage figure, B22), has no rows after that coverage → not needed
   (B48: nothing new never replaces a summary); is at or under the budget → not needed;
4. a tool call of the settled run has no result yet (in flight, B12) → not needed;
5. less time is left before the deadline than the summarizer needs → not needed.

Otherwise it splits the working view (issue 15; seed 002's "complete-exchange recovery"):
the most recent complete exchanges that fit ``kept_room`` (the budget less the summary's
share, ``summary_share`` = min(the summarizer's bound, half the budget), and less the
previous request, the notes and the gap notice; at most ``KEPT_SHARE`` of the budget) stay
out of the summary, starting at a unit
boundary and preferably a user row (``view.recent_exchanges_start``), so the next
continuation carries them verbatim after the checkpoint's coverage. It summarizes the rest of
the working view once (``continuity.continuation.summarize``), in a worker
thread that owns a cancel signal: a stop or the deadline sets it, and a result that comes after
it (a late result of an abandoned attempt) is discarded. A usable summary whose new view would
not fall below the budget is refused as ``over_bound`` (no compaction loop). Success writes one
self-retaining compaction row (``CompactionInfo(continuation=True, run_id=...,
covers_through_seq=<last seq summarized>)``: the kept exchanges lie after it) through the lease's fenced write before
returning; failure writes one refusal receipt (run id and closed reason only). Never both,
never a partial row. ``--force`` (``force=True``) skips rules 2 and 3's budget test only.

A lost lease raises ``continuity.core.errors.FencedWrite``: nothing is written.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from continuity.continuation.summarize import Summarizer, SummaryResult, WorkingView, summarize
from continuity.continuation.view import (
    GAP_NOTICE_RESERVE,
    bounded_notes,
    effective_compaction,
    recent_exchanges_start,
    request_media,
    summary_text,
)
from continuity.core.codec import stub_data_urls
from continuity.core.config import FOLLOW_UP_BUDGET_BYTES
from continuity.core.errors import SessionNotFound
from continuity.core.model import (
    CompactionInfo,
    Entry,
    EntryKind,
    Lease,
    ReceiptReason,
    RefusalReceipt,
    Role,
    Run,
)
from continuity.core.text import json_len
from continuity.redaction.funnel import redact
from continuity.store import iter_entries
from continuity.store.fencing import FencingStore

#: After the cancel signal, how long a summary attempt may take to stop before it is abandoned.
ABANDON_GRACE_SECONDS = 2.0
#: Rows read per page when loading the working view.
PAGE_ROWS = 500
#: ``compact_now`` (the CLI) gives the summary this many request timeouts in all.
CLI_ROUNDS = 4
#: How the compaction row names its trigger.
TRIGGER = "settled_turn"
#: The most of the budget the recent exchanges kept verbatim beside a new checkpoint may take
#: (``kept_room``). Without it they filled all the budget the summary left (about 210 KB of
#: the 240,000-byte budget beside a 24 KB summary), so the view was back over the budget
#: after the next turn and every settled turn summarised again: a summarizer call per turn (a
#: paid request with a model summarizer) and 20 % of the daemon's CPU under load
#: (bench/load.py, issue 45 item 10). With half, about 100 KB of new turns pass between two
#: compactions.
KEPT_SHARE = 0.5


class Skip(str, enum.Enum):
    """Why no compaction was needed (closed set; nothing is written for these)."""

    NOT_SETTLED = "turn_not_settled"
    STOP_IN_PROGRESS = "stop_in_progress"
    ALREADY_COMPACTED = "already_compacted_this_turn"
    ALREADY_REFUSED = "already_refused_this_turn"
    NOTHING_NEW = "nothing_new"
    UNDER_BUDGET = "under_budget"
    TOOL_CALL_IN_FLIGHT = "tool_call_in_flight"
    NO_TIME_LEFT = "no_time_left"


@dataclass
class Outcome:
    """What ``after_turn`` did: exactly one of ``entry`` (the compaction row written),
    ``receipt`` (the refusal receipt written) or ``skip`` (nothing needed, nothing written).
    Byte figures are UTF-8 view bytes (``view_bytes_after`` is the view the next turn sees)."""

    session: str
    run_id: str | None
    budget_bytes: int
    view_bytes: int
    entry: Entry | None = None
    receipt: RefusalReceipt | None = None
    skip: Skip | None = None
    view_bytes_after: int | None = None
    chunks: int = 0
    kept_from_seq: int | None = None

    @property
    def status(self) -> str:
        """``compacted``, ``refused`` or ``not_needed``."""
        return "compacted" if self.entry else "refused" if self.receipt else "not_needed"

    def to_dict(self) -> dict[str, Any]:
        """The ``compact --json`` object."""
        out: dict[str, Any] = {
            "session": self.session,
            "status": self.status,
            "run_id": self.run_id,
            "budget_bytes": self.budget_bytes,
            "view_bytes": self.view_bytes,
            "view_bytes_after": self.view_bytes_after,
            "chunks": self.chunks,
            "kept_from_seq": None,
            "checkpoint": None,
            "receipt": None,
            "reason": None,
        }
        if self.entry is not None and self.entry.compaction is not None:
            c = self.entry.compaction
            out["checkpoint"] = {
                "entry_id": self.entry.entry_id,
                "seq": self.entry.seq,
                "covers_through_seq": c.covers_through_seq,
                "first_kept_entry_id": c.first_kept_entry_id,
                "continuation": c.continuation,
                "run_id": c.run_id,
                "summary": c.summary,
            }
            out["kept_from_seq"] = self.kept_from_seq
        if self.receipt is not None:
            out["receipt"] = receipt_dict(self.receipt)
            out["reason"] = self.receipt.reason.value
        if self.skip is not None:
            out["reason"] = self.skip.value
        return out


def receipt_dict(r: RefusalReceipt) -> dict[str, Any]:
    """The JSON shape of a refusal receipt (no summary text, no exception: there is none);
    ``detail``: which check failed, in our words (issue 45 item 7), null on older ones."""
    created = r.created_at.isoformat().replace("+00:00", "Z") if r.created_at else None
    return {
        "receipt_id": r.receipt_id,
        "session": r.session_key,
        "run_id": r.run_id,
        "reason": r.reason.value,
        "detail": r.detail,
        "created_at": created,
    }


@dataclass(frozen=True, slots=True)
class ViewSize:
    """The working view measured now: ``rows_bytes`` (stored view bytes of the visible
    message rows after ``covers``), ``summary_bytes`` (the newest summary as the continuation
    quotes it; 0 without one), the coverage and the summary text."""

    rows_bytes: int
    summary_bytes: int
    covers: int
    summary: str | None

    @property
    def total(self) -> int:
        return self.rows_bytes + self.summary_bytes


def measure_view(store: FencingStore, session_key: str) -> ViewSize:
    """The session's working view size, read from the store now: the compaction that takes
    effect (``continuation.effective_compaction``: one with an empty summary never hides the
    rows before it, B47) and one aggregate query over row sizes (B22: never a cached usage
    figure)."""
    compaction = effective_compaction(store, session_key)
    covers, summary = -1, None
    if compaction is not None and compaction.compaction is not None:
        info = compaction.compaction
        covers = (
            info.covers_through_seq if info.covers_through_seq is not None else compaction.seq - 1
        )
        summary = info.summary
    summary_bytes = json_len(summary_text(summary, 0, covers)) if summary else 0
    return ViewSize(store.view_bytes_after(session_key, covers), summary_bytes, covers, summary)


def after_turn(
    store: FencingStore,
    session_key: str,
    *,
    lease: Lease,
    summarizer: Summarizer,
    budget_bytes: int = FOLLOW_UP_BUDGET_BYTES,
    deadline: float,
    stop: threading.Event | None = None,
    now: Callable[[], float] = time.monotonic,
    settled: bool = True,
    force: bool = False,
) -> Outcome:
    """Run the continuation policy once for a turn that just settled (module docstring).

    ``deadline`` is in ``now()`` seconds (default ``time.monotonic``); ``stop`` a soft stop
    signal (a hard stop ends the process, not this call); ``settled`` False says the turn did
    not settle successfully. Raises ``SessionNotFound``, ``ValueError`` for a lease of another
    session, and ``FencedWrite`` when ``lease`` is no longer the session's newest.
    """
    session = store.get_session(session_key)
    if session is None:
        raise SessionNotFound(session_key)
    if lease.session_key != session_key:
        raise ValueError(f"lease is for session {lease.session_key!r}, not {session_key!r}")
    run = store.last_run(session_key, agent_id=session.agent_id)
    run_id = run.run_id if run else None
    size = measure_view(store, session_key)
    out = Outcome(session_key, run_id, budget_bytes, size.total)
    out.skip = _skip(
        store, session_key, run, size, budget_bytes, settled=settled, stop=stop, force=force
    )
    if out.skip is None and deadline - now() < max(summarizer.min_seconds, 0.0) + 0.05:
        out.skip = Skip.NO_TIME_LEFT
    if out.skip is not None:
        return out
    keep_from = recent_exchanges_start(
        store,
        session_key,
        after_seq=size.covers,
        room=kept_room(store, session_key, budget_bytes, summarizer, size.covers),
    )
    out.kept_from_seq = keep_from
    view = WorkingView(
        size.summary,
        [n.text for n in store.notes(session_key)],
        _view_rows(store, session_key, size.covers, before=keep_from),
    )
    result = _attempt(view, summarizer, budget_bytes, deadline, stop, now)
    if result.reason is None and summarizer.max_input_bytes is None:
        result, out.kept_from_seq = _widen_tail(
            store,
            session_key,
            summarizer,
            budget_bytes,
            size,
            keep_from,
            result,
            deadline,
            stop,
            now,
        )
    out.chunks = result.chunks
    reason, detail = result.reason, result.detail
    if reason is None:
        late = (stop is not None and stop.is_set()) or now() >= deadline
        out.view_bytes_after = json_len(
            summary_text(result.summary or "", 0, result.last_seq)
        ) + store.view_bytes_after(session_key, result.last_seq)
        reason = (
            ReceiptReason.CANCELLED
            if late
            else ReceiptReason.OVER_BOUND
            if out.view_bytes_after >= budget_bytes
            else None
        )
        detail = (
            "stopped or out of time when the summary came"
            if late
            else f"the view after it is {out.view_bytes_after} bytes, over the "
            f"{budget_bytes}-byte budget"
        )
    if reason is not None:  # no row, ever: the receipt says why (seed 002)
        out.view_bytes_after = None
        out.receipt = store.add_receipt(
            RefusalReceipt(session_key, run_id, reason, detail=detail), lease.token
        )
        return out
    entry = Entry(
        EntryKind.COMPACTION,
        Role.SYSTEM,
        (),
        timestamp=datetime.now(UTC),
        type_name="continuation_checkpoint",
        compaction=CompactionInfo(
            result.summary or "", result.last_seq, None, True, run_id, TRIGGER
        ),
    )
    out.entry = store.append_fenced(session_key, [entry], lease.token)[0]
    return out


def _widen_tail(
    store: FencingStore,
    key: str,
    summarizer: Summarizer,
    budget: int,
    size: ViewSize,
    keep_from: int | None,
    result: SummaryResult,
    deadline: float,
    stop: threading.Event | None,
    now: Callable[[], float],
) -> tuple[SummaryResult, int | None]:
    """Give the recent exchanges the room a smaller summary left (issue 15; a review saw
    ``compact --budget 3000`` keep no row while 1.3 KB of the budget went unused).

    ``kept_room`` reserves the summary's share at its largest. When the summary came out
    smaller, the split moves back by what it left (``recent_exchanges_start`` with the slack
    added) and the rows before the new split are summarised again, once, and only by a
    local summarizer (``max_input_bytes`` None: no request leaves the process, so a second
    attempt costs little). The second result is kept when its summary is no larger than the
    first (then summary + kept rows + request + notes still fit the budget), else the first
    split stands. Returns ``(result, kept_from_seq)``."""
    first = json_len(summary_text(result.summary or "", 0, result.last_seq))
    cap = summary_share(budget, summarizer)
    slack = cap + cap // 8 + json_len(summary_text("", 0, size.covers)) - first
    if slack <= 0:
        return result, keep_from
    room = min(kept_room(store, key, budget, summarizer, size.covers) + slack, kept_cap(budget))
    wider = recent_exchanges_start(store, key, after_seq=size.covers, room=room)
    if wider is None or (keep_from is not None and wider >= keep_from):
        return result, keep_from
    view = WorkingView(
        size.summary,
        [n.text for n in store.notes(key)],
        _view_rows(store, key, size.covers, before=wider),
    )
    second = _attempt(view, summarizer, budget, deadline, stop, now)
    if (
        second.reason is not None
        or json_len(summary_text(second.summary or "", 0, second.last_seq)) > first
    ):
        return result, keep_from
    return second, wider


def _skip(
    store: FencingStore,
    key: str,
    run: Run | None,
    size: ViewSize,
    budget: int,
    *,
    settled: bool,
    stop: threading.Event | None,
    force: bool,
) -> Skip | None:
    if not settled:
        return Skip.NOT_SETTLED
    if stop is not None and stop.is_set():
        return Skip.STOP_IN_PROGRESS
    if run is not None and not force:
        latest = store.latest_compaction(key)
        info = latest.compaction if latest is not None else None
        if info is not None and info.continuation and info.run_id == run.run_id:
            return Skip.ALREADY_COMPACTED
        if store.receipts(key, run_id=run.run_id, limit=1):
            return Skip.ALREADY_REFUSED
    if size.rows_bytes <= 0:
        return Skip.NOTHING_NEW
    if size.total <= budget and not force:
        return Skip.UNDER_BUDGET
    if _in_flight(store, key, size.covers, run):
        return Skip.TOOL_CALL_IN_FLIGHT
    return None


def _in_flight(store: FencingStore, key: str, covers: int, run: Run | None) -> bool:
    """B12: a visible call of the settled run, after the newest coverage, with no result in
    the log. (Calls of earlier, ended runs that never got a result are dead, not in flight:
    the continuation answers them as "effects unknown".)"""
    lower = max(covers + 1, run.request_seq if run is not None else 0)
    pending = [
        p.call_seq
        for p in store.tool_calls_from(key, lower)
        if p.result_seq is None and p.call_seq >= lower
    ]
    if not pending:
        return False
    return any(e.visible for e in store.entries_by_seq(key, pending))


def _view_rows(
    store: FencingStore, key: str, covers: int, before: int | None = None
) -> Iterator[Entry]:
    """The visible message rows after ``covers`` (and below ``before`` when given), oldest
    first, read page by page."""
    for e in iter_entries(store, key, after_seq=covers, visible_only=True, page_rows=PAGE_ROWS):
        if before is not None and e.seq >= before:
            return
        if e.kind is EntryKind.MESSAGE:
            yield e


def summary_share(budget_bytes: int, summarizer: Summarizer) -> int:
    """The most UTF-8 bytes a checkpoint's summary may take: the summarizer's own bound, and
    at most half the budget (the other half is for the recent exchanges, issue 15)."""
    return min(summarizer.max_summary_bytes, max(1, budget_bytes // 2))


def kept_room(
    store: FencingStore, session_key: str, budget_bytes: int, summarizer: Summarizer, covers: int
) -> int:
    """How many view bytes the most recent complete exchanges may keep verbatim beside a new
    checkpoint (issue 15): the budget less what the next continuation reserves before its
    messages, each at its largest: the summary (``summary_share``, plus JSON escaping, an
    eighth, and the quoting label), the previous request (its redacted text and media
    stubs), the bounded notes and the gap notice, and at most ``KEPT_SHARE`` of the budget
    (so the next turns do not put the view over the budget at once). So summary + kept rows
    + request + notes always fit the budget together, and the kept rows travel whole."""
    cap = summary_share(budget_bytes, summarizer)
    reserve = cap + cap // 8 + json_len(summary_text("", 0, covers)) + GAP_NOTICE_RESERVE
    reserve += json_len(bounded_notes(store, session_key))
    session = store.get_session(session_key)
    run = store.last_run(
        session_key, agent_id=session.agent_id if session else None, ended_only=True
    )
    if run is not None:
        for row in store.entries_by_seq(session_key, [run.request_seq]):
            reserve += json_len(stub_data_urls(redact(row.text())))
            media = request_media(row)
            reserve += json_len(media) if media else 0
    return min(budget_bytes - reserve, kept_cap(budget_bytes))


def kept_cap(budget_bytes: int) -> int:
    """The most view bytes kept verbatim beside a checkpoint: ``KEPT_SHARE`` of the budget."""
    return int(budget_bytes * KEPT_SHARE)


class _Attempt(threading.Thread):
    """One summary attempt in a worker thread; its result is read only if it finishes before
    it is abandoned (a late result is discarded)."""

    def __init__(
        self, view: WorkingView, summarizer: Summarizer, bound: int, deadline: float
    ) -> None:
        super().__init__(name="continuity-summary", daemon=True)
        self.view, self.summarizer, self.bound, self.deadline = view, summarizer, bound, deadline
        self.cancel = threading.Event()
        self.result: SummaryResult | None = None

    def run(self) -> None:
        try:
            self.result = summarize(
                self.view,
                self.summarizer,
                cancel=self.cancel,
                deadline=self.deadline,
                max_summary_bytes=self.bound,
            )
        except Exception:  # noqa: BLE001 - fail closed; summarize() reports provider failures
            self.result = SummaryResult(
                reason=ReceiptReason.PROVIDER_FAILURE, detail="the summarizer failed (see the log)"
            )


def _attempt(
    view: WorkingView,
    summarizer: Summarizer,
    budget: int,
    deadline: float,
    stop: threading.Event | None,
    now: Callable[[], float],
) -> SummaryResult:
    """Run one attempt, cancelling it on ``stop`` or the deadline; an attempt that does not
    stop within ``ABANDON_GRACE_SECONDS`` of the signal is abandoned (cancelled)."""
    # The summarizer's own deadline is on time.monotonic(), whatever clock ``now`` is.
    attempt = _Attempt(view, summarizer, max(1, budget // 2), time.monotonic() + (deadline - now()))
    attempt.start()
    while attempt.is_alive():
        attempt.join(0.02)
        if attempt.is_alive() and ((stop is not None and stop.is_set()) or now() >= deadline):
            attempt.cancel.set()
            attempt.join(ABANDON_GRACE_SECONDS)
            return SummaryResult(
                reason=ReceiptReason.CANCELLED,
                chunks=0,
                detail="stopped or out of time during the summary",
            )
    if attempt.cancel.is_set():
        return SummaryResult(
            reason=ReceiptReason.CANCELLED, detail="stopped or out of time during the summary"
        )
    return attempt.result or SummaryResult(
        reason=ReceiptReason.PROVIDER_FAILURE, detail="the summarizer gave no result"
    )


def compact_now(
    store: FencingStore,
    session_key: str,
    *,
    summarizer: Summarizer,
    budget_bytes: int = FOLLOW_UP_BUDGET_BYTES,
    force: bool = False,
    owner: str = "cli",
    timeout: float = 120.0,
) -> Outcome:
    """Run ``after_turn`` as if the session's turn had just settled (``continuity compact``):
    acquire the session as ``owner``, allow ``CLI_ROUNDS`` requests of ``timeout`` seconds
    (a chunked summary makes several), release the lease. Raises ``LeaseHeld`` (a
    ``FencedWrite``) when another owner holds the session."""
    if store.get_session(session_key) is None:
        raise SessionNotFound(session_key)
    seconds = timeout * CLI_ROUNDS
    lease = store.acquire_lease(session_key, owner, timedelta(seconds=seconds + 60))
    try:
        return after_turn(
            store,
            session_key,
            lease=lease,
            summarizer=summarizer,
            budget_bytes=budget_bytes,
            deadline=time.monotonic() + seconds,
            force=force,
        )
    finally:
        store.release_lease(lease)
