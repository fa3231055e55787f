"""Issue 45 item 4a: after a compaction, every row is in the summary or in the view.

``compact --budget 12000`` kept the rows just before the previous request out of the summary,
and the next continuation showed them nowhere (``messages: []``, a gap named over them): the
continuation checkpoint row written after a request with no answer yet counted as a row
"between" the request and the suffix, so the view was taken for a copy and the kept rows
before the request were never reused.
"""

from __future__ import annotations

import itertools
import time

from hypothesis import example, given, strategies as st

from continuity.continuation.compaction import after_turn
from continuity.continuation.summarize.extractive import ExtractiveSummarizer
from continuity.continuation.view import build_continuation
from continuity.core.model import EntryKind, RunStatus
from tests.builders import A, T, U, call, load
from tests.continuation.test_compaction import Stub
from tests.continuation.test_continuation_properties import SETTINGS, Log, logs, prop_store  # noqa: F401

_KEYS = itertools.count()


def _compact_then_view(store, rows, statuses, budget, summarizer):
    key = f"cov{next(_KEYS)}"
    load(store, rows, key=key, runs=list(statuses.items()))
    lease = store.acquire_lease(key, "harness", 60)
    out = after_turn(
        store,
        key,
        lease=lease,
        summarizer=summarizer,
        budget_bytes=budget,
        deadline=time.monotonic() + 60,
        force=True,
    )
    store.release_lease(lease)
    return key, out, build_continuation(store, key, budget_bytes=budget)


def _uncovered(store, key, out, view) -> list[int]:
    """Visible message rows after the checkpoint's coverage that the view does not carry."""
    covers = out.entry.compaction.covers_through_seq
    shown = {m["seq"] for m in view.messages} | ({view.request["seq"]} if view.request else set())
    return [
        e.seq
        for e in store.entries(key, after_seq=covers, limit=100_000, visible_only=True)
        if e.kind is EntryKind.MESSAGE and e.seq not in shown
    ]


def test_rows_kept_before_an_unanswered_request_are_in_the_view(prop_store):
    """The reproduction: the newest request has no answer yet; the checkpoint keeps rows 4–5
    (the exchange before it) out of its summary, and the view carries them, no gap."""
    rows = [
        U("fix the parser"),
        A(call("c1", path="parser.py")),
        T("c1", text="x" * 4_000),
        A(text="Fixed the parser."),
        U("now refactor the lexer"),
        A(text="Refactored the lexer."),
        U("go on"),
    ]
    _key, out, view = _compact_then_view(prop_store, rows, {}, 3_000, Stub())
    assert (out.status, out.entry.compaction.covers_through_seq) == ("compacted", 3)
    d = view.to_dict()
    assert [m["seq"] for m in d["messages"]] == [4, 5] and d["request"]["seq"] == 6
    assert (d["gaps"], d["copied"]) == ([], False)


@SETTINGS
@given(log=logs(paired=True, max_steps=16), budget=st.integers(1_500, 30_000))
@example(
    log=Log(
        [
            U("fix the parser"),
            A(call("c1")),
            T("c1", text="x" * 4_000),
            A(text="Fixed."),
            U("lexer"),
            A(text="Done."),
            U("go on"),
        ]
    ),
    budget=3_000,
)
# found by CI's run (full suite, 6 Dec 2026): results emitted in call order (c0, c1, c2) open on
# seq 6, and seq 5 (c2's result, in the view) was named a gap
@example(
    log=Log(
        [
            U("task "),
            A(call("c0"), call("c1"), call("c2")),
            U("task "),
            U(""),
            U("task "),
            T("c2", text=" c2"),
            T("c0", text="ok c0"),
            T("c1", text="ok c1"),
        ],
        {0: RunStatus.FINISHED, 2: RunStatus.FINISHED, 4: RunStatus.FINISHED},
    ),
    budget=1_852,
)
def test_after_a_compaction_every_row_is_in_the_summary_or_the_view(prop_store, log, budget):
    """For any settled session and budget: when the checkpoint is written, each visible
    message row is covered by its summary's range or carried by the next view (as a message
    or as the request), and no gap is named."""
    statuses = {
        s: (RunStatus.FINISHED if st_ is RunStatus.RUNNING else st_)
        for s, st_ in log.statuses.items()
    }
    rows = [r.__class__(**{f: getattr(r, f) for f in r.__dataclass_fields__}) for r in log.rows]
    key, out, view = _compact_then_view(prop_store, rows, statuses, budget, ExtractiveSummarizer())
    if out.entry is None or view.refusal is not None:
        return
    assert _uncovered(prop_store, key, out, view) == [], view.to_dict()
    assert view.gaps == []
