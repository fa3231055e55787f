"""The continuation checkpoint a harness writes into its own session (issue 14, seed 002: pi).

In pi the checkpoint after a settled turn is a native compaction: our extension asks pi to
compact, and its ``session_before_compact`` handler hands the complete working view pi gives it
to the daemon, which summarizes it here with the configured summarizer; pi then persists the
summary as an ordinary compaction entry, and our store gets it by importing pi's session file
(one checkpoint, one id: pi's). Nothing here writes a row.

``summarize_working_view(rows, summarizer=, budget_bytes=, deadline=, cancel=)`` takes the
working view as our rows (``formats.pi.read_entries`` of pi's entries, in pi's order) and:

- the newest compaction row's summary becomes the previous summary, quoted as evidence
  (only the newest counts; older compaction rows are ignored); rows of kind CONTEXT (our
  recovery context, ``continuity-recovery``) and the ``notes`` become quoted notes: pi's own
  summary serializer omits them, the seed has them enter as evidence, never as instructions;
- the visible message rows are summarized once (``summarize``: bounded input, redaction,
  chunking, fail-closed validation), the summary's share of the budget being
  ``compaction.summary_share`` (at most half the budget, at most the summarizer's bound);
- the cancel signal (pi's abort signal, through the daemon) or the deadline (``[daemon]
  stop_seconds``) cancels it: ``cancelled``;
- a summary whose quoted text (as the next continuation carries it) is not below the budget is
  ``over_bound`` (no compaction loop: the view after a self-retaining checkpoint is its
  summary).

The result is a ``SummaryResult``: ``summary`` or a closed ``reason``, never both, never an
exception's text.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from continuity.continuation.compaction import _attempt
from continuity.continuation.summarize import Summarizer, SummaryResult, WorkingView
from continuity.continuation.view import summary_text
from continuity.core.config import FOLLOW_UP_BUDGET_BYTES
from continuity.core.model import Entry, EntryKind, ReceiptReason
from continuity.core.text import json_len

#: The largest working view (rows) one summary request takes from a harness; the daemon's body
#: limit (``[daemon] max_body_bytes``) bounds the bytes first.
MAX_VIEW_ROWS = 200_000


@dataclass(frozen=True, slots=True)
class ViewParts:
    """A harness's working view split for the summarizer: ``previous`` (the newest
    compaction's summary, or None), ``context`` (texts of CONTEXT rows: quoted notes) and
    ``rows`` (the visible message rows, in order)."""

    previous: str | None
    context: tuple[str, ...]
    rows: tuple[Entry, ...]


def split_view(rows: Sequence[Entry]) -> ViewParts:
    """``rows`` (a working view as pi builds it: the newest compaction, its kept rows, the rows
    after it) → ``ViewParts``. Only the newest compaction row's summary counts; message rows
    before it (pi's kept rows) stay rows."""
    previous: str | None = None
    context: list[str] = []
    kept: list[Entry] = []
    for row in rows:
        if row.kind is EntryKind.COMPACTION and row.compaction is not None:
            previous = row.compaction.summary if row.compaction.summary.strip() else previous
        elif row.kind is EntryKind.CONTEXT:
            text = row.text().strip()
            if text:
                context.append(text)
        elif row.kind is EntryKind.MESSAGE and row.visible:
            kept.append(row)
    return ViewParts(previous, tuple(context), tuple(kept))


def summarize_working_view(
    rows: Sequence[Entry],
    *,
    summarizer: Summarizer,
    notes: Sequence[str] = (),
    budget_bytes: int = FOLLOW_UP_BUDGET_BYTES,
    deadline: float,
    cancel: threading.Event | None = None,
) -> SummaryResult:
    """Summarize a harness's working view (module docstring). ``deadline`` is
    ``time.monotonic()`` seconds; ``cancel`` is set when the harness aborted. Never raises for
    a provider's failure: every failure is the result's ``reason``."""
    parts = split_view(rows[:MAX_VIEW_ROWS])
    if not parts.rows:
        return SummaryResult(
            reason=ReceiptReason.EMPTY,
            detail="the working view has no message rows after its summary",
        )
    view = WorkingView(parts.previous, [*parts.context, *notes], parts.rows)
    result = _attempt(view, summarizer, budget_bytes, deadline, cancel, time.monotonic)
    if result.reason is not None:
        return result
    if (cancel is not None and cancel.is_set()) or time.monotonic() >= deadline:
        return SummaryResult(
            reason=ReceiptReason.CANCELLED,
            chunks=result.chunks,
            detail="stopped or out of time when the summary came",
        )
    quoted = json_len(summary_text(result.summary or "", 0, result.last_seq))
    if quoted >= budget_bytes:
        return SummaryResult(
            reason=ReceiptReason.OVER_BOUND,
            chunks=result.chunks,
            detail=f"the quoted summary is {quoted} bytes, over the {budget_bytes}-byte budget",
        )
    return result
