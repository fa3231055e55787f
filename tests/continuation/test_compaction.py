"""The continuation policy after a settled turn (spec/continuation.md Part 1, issue 4)."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from continuity.continuation import compaction
from continuity.continuation.compaction import Skip, after_turn, measure_view
from continuity.continuation.summarize import ProviderReply, SummaryRequest
from continuity.continuation.summarize.extractive import ExtractiveSummarizer
from continuity.continuation.view import build_continuation
from continuity.core.errors import FencedWrite
from continuity.core.model import EntryKind, ReceiptReason, RunStatus
from continuity.store import SqlStore, open_store
from tests.builders import CP, A, T, U, call, load

GOOD = "## Goal\n- fix the parser\n## Progress\n### Done\n- read it\n## Next steps\n- test it"
BUDGET = 3_000


class Stub:
    """A summarizer answering ``reply``; ``hook(request, cancel)`` runs first."""

    name = "stub"
    max_input_bytes: int | None = None
    max_summary_bytes = 24_000
    min_seconds = 0.0

    def __init__(
        self,
        reply: str = GOOD,
        hook: Callable[[SummaryRequest, threading.Event], None] | None = None,
    ) -> None:
        self.reply, self.hook = reply, hook
        self.requests: list[SummaryRequest] = []

    def generate(
        self, request: SummaryRequest, *, cancel: threading.Event, deadline: float
    ) -> ProviderReply:
        self.requests.append(request)
        if self.hook is not None:
            self.hook(request, cancel)
        return ProviderReply(self.reply)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlStore]:
    """One SQLite store for the module's policy tests (each test has its own session)."""
    with open_store(f"sqlite:///{tmp_path_factory.mktemp('policy') / 'c.db'}") as s:
        yield s


_KEYS = itertools.count()


def _long(store: SqlStore, *, extra: list | None = None, key: str | None = None) -> str:
    """A settled session over the 3,000-byte budget (one finished run)."""
    key = key or f"p{next(_KEYS)}"
    rows = [
        U("fix the parser"),
        A(call("c1", path="parser.py")),
        T("c1", text="x" * 4_000),
        A(text="Fixed the parser."),
    ]
    return load(store, rows + (extra or []), key=key)


def _turn(store, key: str, summarizer: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
    lease = kw.pop("lease", None) or store.acquire_lease(key, "harness", 60)
    return after_turn(
        store,
        key,
        lease=lease,
        summarizer=summarizer or Stub(),
        budget_bytes=kw.pop("budget_bytes", BUDGET),
        deadline=kw.pop("deadline", time.monotonic() + 30),
        **kw,
    )


def _written(store, key: str) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    rows = [e for e in store.entries(key) if e.kind is EntryKind.COMPACTION]
    return len(rows), len(store.receipts(key))


def test_compaction_over_budget_writes_self_retaining_checkpoint(store):
    """Over the budget: one compaction row with the continuation marker, covering the view
    but its most recent complete exchange (row 3, kept verbatim: issue 15), pointing at
    itself, that the next continuation uses; on every backend."""
    key = _long(store)
    out = _turn(store, key)
    assert out.status == "compacted" and out.receipt is None and out.skip is None
    row = store.latest_compaction(key)
    info = row.compaction
    assert (row.seq, row.entry_id) == (4, f"{key}:4") and row.entry_id == out.entry.entry_id
    assert (info.summary, info.covers_through_seq, info.first_kept_entry_id) == (
        GOOD,
        2,
        row.entry_id,
    )
    assert out.kept_from_seq == 3
    assert (info.continuation, info.run_id) == (True, f"{key}:0")
    assert _written(store, key) == (1, 0)
    view = build_continuation(store, key, budget_bytes=BUDGET).to_dict()
    assert view["summary"]["entry_id"] == row.entry_id and view["used_bytes"] <= BUDGET
    assert view["request"]["text"] == "fix the parser" and view["gaps"] == []
    assert [m["seq"] for m in view["messages"]] == [3] and view["copied"] is True
    assert out.view_bytes > BUDGET > out.view_bytes_after == measure_view(store, key).total


def test_compaction_under_budget_is_not_needed(db):
    """At or under the budget nothing is summarized and nothing is written."""
    key = load(db, [U("hi"), A(text="hello")], key=f"p{next(_KEYS)}")
    stub = Stub()
    out = _turn(db, key, stub)
    assert (out.status, out.skip) == ("not_needed", Skip.UNDER_BUDGET)
    assert stub.requests == [] and _written(db, key) == (0, 0)


def test_compaction_measures_the_view_now_not_a_cached_figure(db):
    """B22: after a checkpoint, the next settled turn measures summary + new rows, so a
    short follow-up does not compact again."""
    key = _long(db)
    assert _turn(db, key).status == "compacted"
    load(db, [U("recovery note"), A(text="ok")], key=key)
    out = _turn(db, key)
    assert (out.skip, out.view_bytes) == (Skip.UNDER_BUDGET, measure_view(db, key).total)
    assert out.view_bytes < BUDGET


def test_compaction_leaves_room_so_the_next_turns_do_not_compact_again(db):
    """The kept exchanges take at most ``KEPT_SHARE`` of the budget (issue 45 item 10): the
    view after a checkpoint is summary + at most half the budget, so the next few turns fit.
    Before, the widened tail filled the budget (19 KB of 20 KB here) and every settled turn
    summarised again."""
    budget = 20_000
    turns = [r for i in range(20) for r in (U(f"task {i}"), A(text=f"step {i} " + "w" * 1_200))]
    key = load(db, turns, key=f"p{next(_KEYS)}")
    first = _turn(db, key, budget_bytes=budget)
    assert first.status == "compacted"
    kept = first.view_bytes_after - len(GOOD)
    assert budget * compaction.KEPT_SHARE - 2_000 < kept <= budget * compaction.KEPT_SHARE
    for i in range(20, 25):  # five more turns of about 1.25 KB: no new summary
        load(db, [U(f"task {i}"), A(text=f"step {i} " + "w" * 1_200)], key=key)
        assert _turn(db, key, budget_bytes=budget).skip is Skip.UNDER_BUDGET
    assert _written(db, key) == (1, 0)


def test_compaction_at_most_once_per_settled_turn(db):
    """A second call for the same run is not needed, after a row or after a receipt; a new
    request opens a new turn that may compact again."""
    key = _long(db)
    assert _turn(db, key).status == "compacted"
    load(db, [A(text="more " * 900)], key=key)  # same run, view over budget again
    assert _turn(db, key).skip is Skip.ALREADY_COMPACTED
    refused = _long(db)
    assert _turn(db, refused, Stub(reply="")).receipt.reason is ReceiptReason.EMPTY
    assert _turn(db, refused).skip is Skip.ALREADY_REFUSED
    load(db, [U("next task " + "y" * 3_000), A(text="done")], key=key)
    assert _turn(db, key).status == "compacted"
    assert _written(db, key) == (2, 0)


def test_compaction_never_while_a_tool_call_is_in_flight(db):
    """B12: a call of the settled run without a result defers the checkpoint; a dead call
    of an earlier, ended run does not."""
    key = _long(db, extra=[A(call("p1", "bash", command="make"))])
    assert _turn(db, key).skip is Skip.TOOL_CALL_IN_FLIGHT
    assert _written(db, key) == (0, 0)
    dead = _long(db, extra=[A(call("p2", "bash", command="make")), U("new task"), A(text="done")])
    assert _turn(db, dead).status == "compacted"


def test_compaction_needs_a_settled_turn_no_stop_and_time(db):
    """Not settled, a stop in progress, or too little time left: nothing happens."""
    key = _long(db)
    stop = threading.Event()
    stop.set()
    slow = Stub()
    slow.min_seconds = 10.0
    assert _turn(db, key, settled=False).skip is Skip.NOT_SETTLED
    assert _turn(db, key, stop=stop).skip is Skip.STOP_IN_PROGRESS
    assert _turn(db, key, slow, deadline=time.monotonic() + 5).skip is Skip.NO_TIME_LEFT
    assert _turn(db, key, deadline=time.monotonic() - 1).skip is Skip.NO_TIME_LEFT
    assert slow.requests == [] and _written(db, key) == (0, 0)


def test_compaction_nothing_new_never_replaces_a_summary(db):
    """B48: a checkpoint covering every row is kept; with no new rows nothing is written,
    even when forced."""
    key = load(
        db, [U("a " * 2_000), A(text="b"), CP("## Goal\n- earlier work")], key=f"p{next(_KEYS)}"
    )
    out = _turn(db, key, force=True)
    assert out.skip is Skip.NOTHING_NEW and _written(db, key) == (1, 0)
    assert db.latest_compaction(key).compaction.summary == "## Goal\n- earlier work"


def test_compaction_previous_summary_and_notes_are_quoted_evidence(db):
    """The summarizer gets the newest summary and the notes, redacted, as evidence."""
    from continuity.core.model import Note

    key = load(
        db, [U("a"), CP("## Goal\n- old goal <private>TOKEN-123</private>")], key=f"p{next(_KEYS)}"
    )
    db.add_note(Note(key, "use the staging db"))
    load(db, [U("b " * 2_000), A(text="c")], key=key)
    stub = Stub()
    assert _turn(db, key, stub).status == "compacted"
    request = stub.requests[0]
    assert request.previous == "## Goal\n- old goal [REDACTED:private]"
    assert request.notes == ("use the staging db",)
    assert [r.seq for r in request.rows] == [2, 3]


def test_compaction_rows_appended_during_the_summary_stay_in_the_view(db):
    """B39/B41/B42: rows the owner appends while the summary runs land after the checkpoint's
    coverage and stay in the next view; the checkpoint covers only what it read."""
    key = _long(db)
    lease = db.acquire_lease(key, "harness", 60)

    def append_during(request: SummaryRequest, cancel: threading.Event) -> None:
        db.append_fenced(key, [U("probe-42", request=False)], lease.token)

    out = _turn(db, key, Stub(hook=append_during), lease=lease)
    assert out.status == "compacted"
    assert out.entry.compaction.covers_through_seq == 2 and out.entry.seq == 5  # 3 kept
    view = build_continuation(db, key, budget_bytes=BUDGET).to_dict()
    texts = [b.get("text") for m in view["messages"] for b in m["content"]]
    assert texts.count("probe-42") == 1


def test_compaction_that_would_not_shrink_the_view_is_refused(db):
    """No compaction loop: when the view after the checkpoint would still be over the
    budget, the summary is refused as over_bound and no row is written."""
    key = _long(db)
    lease = db.acquire_lease(key, "harness", 60)

    def flood(request: SummaryRequest, cancel: threading.Event) -> None:
        db.append_fenced(key, [U("z" * 4_000, request=False)], lease.token)

    out = _turn(db, key, Stub(hook=flood), lease=lease)
    assert out.receipt.reason is ReceiptReason.OVER_BOUND and out.entry is None
    assert _written(db, key) == (0, 1)


def test_compaction_bad_summaries_give_receipts_not_rows(db):
    """B16/B49: empty, whitespace, an error string, or a summarizer crash: a receipt, never a
    row (and never a "compacted" status)."""
    cases = [
        ("", ReceiptReason.EMPTY),
        ("  \n\t", ReceiptReason.EMPTY),
        ("Error: overloaded", ReceiptReason.PROVIDER_FAILURE),
        ("Claude AI usage limit reached|1699999999", ReceiptReason.PROVIDER_FAILURE),
        ("no headings at all, just prose", ReceiptReason.PROVIDER_FAILURE),
    ]
    for reply, reason in cases:
        key = _long(db)
        out = _turn(db, key, Stub(reply=reply))
        assert (out.status, out.receipt.reason) == ("refused", reason)
        assert _written(db, key) == (0, 1)

    def crash(request: SummaryRequest, cancel: threading.Event) -> None:
        raise RuntimeError("secret sk-ant-api03-AAAAAAAAAAAAAAAA")

    key = _long(db)
    out = _turn(db, key, Stub(hook=crash))
    assert out.receipt.reason is ReceiptReason.PROVIDER_FAILURE
    assert "secret" not in str(out.to_dict())


def test_compaction_summary_is_redacted_on_the_way_out(db):
    """B31: a secret the summarizer writes never reaches the stored checkpoint."""
    key = _long(db)
    out = _turn(db, key, Stub(reply=GOOD + "\n- key ghp_" + "a" * 40 + "_old"))
    summary = db.latest_compaction(key).compaction.summary
    assert out.status == "compacted" and "aaaa" not in summary
    assert summary.endswith("- key [REDACTED:github-token]")


def test_compaction_stop_cancels_and_a_late_result_is_discarded(db, monkeypatch):
    """A soft stop cancels the summary; a summarizer that ignores the signal is abandoned and
    its late result is never written."""
    monkeypatch.setattr(compaction, "ABANDON_GRACE_SECONDS", 0.05)
    key = _long(db)
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def stubborn(request: SummaryRequest, cancel: threading.Event) -> None:
        started.set()
        release.wait(10)  # ignores ``cancel``
        finished.set()

    stop = threading.Event()
    threading.Thread(target=lambda: (started.wait(10), stop.set()), daemon=True).start()
    out = _turn(db, key, Stub(hook=stubborn), stop=stop)
    assert out.receipt.reason is ReceiptReason.CANCELLED
    release.set()
    assert finished.wait(10)
    time.sleep(0.05)
    assert _written(db, key) == (0, 1)


def test_compaction_with_a_lost_lease_writes_nothing(store):
    """A stale owner's compaction is refused by the store: neither row nor receipt."""
    key = _long(store)
    old = store.acquire_lease(key, "harness", 60)
    store.acquire_lease(key, "other", 60, take_over=True)
    with pytest.raises(FencedWrite):
        _turn(store, key, lease=old)
    with pytest.raises(FencedWrite):
        _turn(store, key, Stub(reply=""), lease=old)
    assert _written(store, key) == (0, 0)


def test_compaction_extractive_checkpoint_drives_the_next_continuation(db):
    """With the extractive default, the next continuation starts from the new checkpoint:
    within budget, previous request verbatim, nothing after the coverage left unnamed; the
    newest complete exchange (request 4 and its failed test run, rows 4-7) is kept out of
    the summary and travels verbatim (issue 15: it was summary prose and 0 messages)."""
    key = _long(
        db,
        extra=[
            U("now add tests " + "q" * 200),
            A(call("c9", "bash", command="pytest")),
            T("c9", text="1 failed", error=True),
            A(text="One test fails."),
        ],
    )
    out = _turn(db, key, ExtractiveSummarizer())
    assert out.status == "compacted"
    summary = out.entry.compaction.summary
    assert summary.startswith("## Goal\n- Latest request (#0): fix the parser")
    assert "Rows #0–#3 summarized" in summary and out.kept_from_seq == 4
    view = build_continuation(db, key, budget_bytes=BUDGET).to_dict()
    assert view["used_bytes"] <= BUDGET and view["refusal"] is None
    assert view["request"]["text"] == "now add tests " + "q" * 200
    assert view["summary"]["covers_through_seq"] == 3
    assert [m["seq"] for m in view["messages"]] == [5, 6, 7] and view["gaps"] == []
    result = view["messages"][1]["content"][0]
    assert (result["call_id"], result["is_error"], result["text"]) == ("c9", True, "1 failed c9")


def test_compaction_outcome_to_dict_shapes(db):
    """The --json shapes: a checkpoint, a receipt, a skip; each with one reason or none."""
    key = _long(db)
    done = _turn(db, key).to_dict()
    assert done["status"] == "compacted" and done["reason"] is None
    assert done["checkpoint"]["first_kept_entry_id"] == done["checkpoint"]["entry_id"]
    assert done["receipt"] is None
    other = _long(db)
    refused = _turn(db, other, Stub(reply="")).to_dict()
    assert (refused["status"], refused["reason"], refused["checkpoint"]) == (
        "refused",
        "empty",
        None,
    )
    assert set(refused["receipt"]) == {
        "receipt_id",
        "session",
        "run_id",
        "reason",
        "detail",
        "created_at",
    }
    assert refused["receipt"]["detail"] == "the reply is empty"  # issue 45 item 7
    skipped = _turn(db, key).to_dict()
    assert (skipped["status"], skipped["reason"]) == ("not_needed", "already_compacted_this_turn")


def test_compaction_rejects_a_lease_of_another_session(db):
    """A lease names its session; using it elsewhere is a ValueError."""
    key, other = _long(db), _long(db)
    with pytest.raises(ValueError, match="lease is for session"):
        _turn(db, key, lease=db.acquire_lease(other, "h", 60))


def test_compaction_interrupted_runs_are_summarized(db):
    """An interrupted earlier run with a dead call still compacts; the summary names the
    call whose effects are unknown."""
    key = load(
        db,
        [
            U("deploy " + "d" * 3_000),
            A(call("c1", "bash", command="deploy.sh")),
            U("status?"),
            A(text="Unknown."),
        ],
        key=f"p{next(_KEYS)}",
        runs=[(0, RunStatus.INTERRUPTED)],
    )
    out = _turn(db, key, ExtractiveSummarizer())
    assert out.status == "compacted"
    assert "bash `deploy.sh` (#1) has no recorded result" in out.entry.compaction.summary
