"""Continuation assembly (spec/continuation.md Part 2): the worked example and the bug-vector
kinds of pairing, budget, request and ordering, with the right values."""

from __future__ import annotations

import orjson
import pytest

from continuity.continuation.view import UNKNOWN_EFFECTS, build_continuation, repair, used_bytes
from continuity.core.errors import SessionNotFound
from continuity.core.model import (
    Entry,
    EntryKind,
    MediaBlock,
    Note,
    Role,
    RunStatus,
    TextBlock,
    ToolResultBlock,
)
from tests.builders import CP, A, T, U, call, load


def blocks(view, kind):
    return [b for m in view.messages for b in m["content"] if b["type"] == kind]


def assert_paired(view):
    """Every result follows its call; every call has exactly one result."""
    calls, answered = [], []
    for m in view.messages:
        for b in m["content"]:
            if b["type"] == "tool_call":
                calls.append(b["id"])
            elif b["type"] == "tool_result":
                assert b["call_id"] in calls, f"result {b['call_id']} before its call"
                answered.append(b["call_id"])
    assert sorted(answered) == sorted(calls)
    assert len(set(answered)) == len(answered)


def test_continuation_worked_example(store):
    """spec/continuation.md worked example, value for value."""
    rows = [
        U("fix the parser"),
        A(call("c1")),
        T("c1"),
        A(call("c2", "edit"), call("c3", "test")),
        T("c2"),
        CP("parser work so far", covers=2),
    ]
    key = load(store, rows, runs=[(0, RunStatus.INTERRUPTED)])
    view = build_continuation(store, key)
    d = view.to_dict()
    assert d["summary"]["covers_through_seq"] == 2 and "parser work so far" in d["summary"]["text"]
    assert d["request"] == {"seq": 0, "actor": "user", "text": "fix the parser"}
    assert [(m["seq"], m["role"], m["copied"]) for m in d["messages"]] == [
        (3, "assistant", True),
        (4, "tool", True),
        (4, "tool", True),
    ]
    synthetic = d["messages"][2]["content"]
    assert synthetic == [
        {
            "type": "tool_result",
            "call_id": "c3",
            "is_error": True,
            "text": UNKNOWN_EFFECTS.format(name="test", id="c3"),
            "synthetic": True,
        }
    ]
    assert d["gap"] is None and d["refusal"] is None
    assert_paired(view)
    assert d["used_bytes"] == used_bytes(d["summary"], d["request"], d["messages"])


def test_continuation_unknown_session_raises(store):
    with pytest.raises(SessionNotFound):
        build_continuation(store, "nope")


def test_continuation_reuses_contiguous_rows(store):
    """Request and suffix contiguous, no compaction: rows are reused, not copied."""
    key = load(store, [U("a"), A(text="done a"), U("b"), A(call("c1")), T("c1"), A(text="ok")])
    d = build_continuation(store, key).to_dict()
    assert d["request"]["text"] == "b"
    # Spec step 3: the whole tail fits, so the rows before the request are reused too.
    assert [m["seq"] for m in d["messages"]] == [0, 1, 3, 4, 5]
    assert d["gap"] is None
    assert not d["copied"] and all(not m["copied"] for m in d["messages"])
    assert d["gaps"] == []
    # A budget that holds the request's suffix but not the earlier run names it as a gap.
    small = build_continuation(store, key, budget_bytes=600).to_dict()
    assert [m["seq"] for m in small["messages"]] == [3, 4, 5]
    assert small["gaps"] == [{"from_seq": 0, "to_seq": 1}]  # the earlier run, not summarised


# --- pairing ---------------------------------------------------------------------------------


def test_b01_parallel_calls_without_results_get_synthetic_errors(store):
    key = load(
        store,
        [U("fix x"), A(call("t1"), call("t2"), call("t3")), U("actually do y")],
        runs=[(0, RunStatus.INTERRUPTED), (2, RunStatus.FINISHED)],
    )
    view = build_continuation(store, key)
    d = view.to_dict()
    assert d["request"]["text"] == "actually do y"
    # B01's right value: the interrupted batch, then one tool turn answering t1, t2, t3 in call
    # order, then the text "actually do y" (the request, read after the messages before it).
    assert [(m["seq"], m["role"]) for m in d["messages"]] == [
        (0, "user"),
        (1, "assistant"),
        (1, "tool"),
    ]
    assert [b["id"] for b in d["messages"][1]["content"]] == ["t1", "t2", "t3"]
    answers = d["messages"][2]["content"]
    assert [(r["call_id"], r["is_error"]) for r in answers] == [
        ("t1", True),
        ("t2", True),
        ("t3", True),
    ]
    assert all("effects are unknown" in r["text"] for r in answers)
    assert d["gap"] is None and d["copied"] is False
    before, after = view.before_request()
    assert [m["seq"] for m in before] == [0, 1, 1] and after == []
    key2 = load(
        store,
        [U("fix x"), A(call("t1"), call("t2"), call("t3"))],
        key="s2",
        runs=[(0, RunStatus.INTERRUPTED)],
    )
    d2 = build_continuation(store, key2).to_dict()
    assert [m["role"] for m in d2["messages"]] == ["assistant", "tool"]
    results = d2["messages"][1]["content"]
    assert [r["call_id"] for r in results] == ["t1", "t2", "t3"]
    assert all(r["is_error"] for r in results)


def test_b02_orphan_result_dropped(store):
    key = load(store, [U("go"), T("t9"), A(text="hm")])
    view = build_continuation(store, key)
    assert blocks(view, "tool_result") == []
    assert [m["seq"] for m in view.messages] == [2]


def test_b06_b56_only_newest_compaction_counts(store):
    """CP1 inside CP2's kept window is ignored, R{x} whose call CP1 summarised is dropped."""
    rows = [
        U("start"),
        A(call("x")),
        A(call("w")),
        T("w"),
        A(call("e")),
        T("e"),
        CP("SUMMARY-ONE", covers=1),
        T("x"),
        A(call("e2")),
        T("e2"),
        CP("SUMMARY-TWO", covers=1),
        U("next", request=False),
    ]
    key = load(store, rows)
    view = build_continuation(store, key)
    d = view.to_dict()
    assert "SUMMARY-TWO" in d["summary"]["text"]
    assert "SUMMARY-ONE" not in orjson.dumps(d).decode()
    ids = [b["call_id"] for b in blocks(view, "tool_result")]
    assert ids == ["w", "e", "e2"]  # R{x}: its call lies behind the newest compaction
    assert_paired(view)


def test_b07_result_after_compaction_boundary_dropped(store):
    key = load(store, [U("go"), A(call("t1")), CP("did t1", covers=1), T("t1", text="late")])
    view = build_continuation(store, key)
    assert blocks(view, "tool_result") == []
    assert view.messages == []


def test_b04_b10_unit_never_split_by_budget(store):
    big = "x" * 3000
    rows = [
        U("go"),
        A(call("c1"), call("c2")),
        T("c1", text=big),
        T("c2", text=big),
        A(text="done"),
    ]
    key = load(store, rows)
    full = build_continuation(store, key).used_bytes
    view = build_continuation(store, key, budget_bytes=full - 100)
    seqs = [m["seq"] for m in view.messages]
    assert seqs == [4]  # the unit 1-3 does not fit whole, so none of it is kept
    assert view.gaps[-1].from_seq == 1 and view.gaps[-1].to_seq == 3


def test_b12_in_flight_call_kept_with_its_late_result(store):
    key = load(store, [U("go"), A(call("p1")), T("p1", text="late result")])
    view = build_continuation(store, key)
    assert [b["call_id"] for b in blocks(view, "tool_result")] == ["p1"]
    assert not any("unknown" in b["text"] for b in blocks(view, "tool_result"))


def test_b14_real_results_kept_synthetic_only_for_missing(store):
    key = load(
        store,
        [U("go"), A(call("a"), call("b"), call("c")), T("a"), T("b")],
        runs=[(0, RunStatus.INTERRUPTED)],
    )
    view = build_continuation(store, key)
    results = blocks(view, "tool_result")
    assert [(r["call_id"], r["is_error"]) for r in results] == [
        ("a", False),
        ("b", False),
        ("c", True),
    ]
    assert results[2]["text"].startswith("Tool call read (c) has no recorded result")


def test_b09_view_never_starts_with_tool_result(store):
    rows = [
        U("h1"),
        A(call("a")),
        T("a"),
        U("h2", request=False),
        A(text="r2"),
        U("h3", request=False),
        A(text="r3"),
    ]
    key = load(store, rows)
    for budget in range(600, 2000, 37):
        view = build_continuation(store, key, budget_bytes=budget)
        if view.messages:
            assert view.messages[0]["content"][0]["type"] != "tool_result"
        assert_paired(view)


# --- budget ----------------------------------------------------------------------------------


def test_b18_media_outside_text_budget(store):
    img = MediaBlock("image/png", 2_330_496, "a" * 64)
    rows = [
        U("look"),
        A(call("r1", "read")),
        Entry(EntryKind.MESSAGE, Role.TOOL, (ToolResultBlock("r1", False, "png", (img,)),)),
    ]
    key = load(store, rows)
    view = build_continuation(store, key)
    assert view.used_bytes <= 240_000
    assert blocks(view, "tool_result")[0]["text"] == "png\n[image/png 2330496 B omitted]"


def test_b20_oversized_newest_unit_clipped_head_and_tail(store):
    output = "\n".join(f"line {i} " + "y" * 90 for i in range(2000))
    output += "\nerror[E0308]: mismatched types"
    key = load(store, [U("build it"), A(call("b1", "bash")), T("b1", text=output)])
    view = build_continuation(store, key, budget_bytes=16_000)
    assert view.used_bytes <= 16_000 and view.clipped
    text = blocks(view, "tool_result")[0]["text"]
    assert text.endswith("error[E0308]: mismatched types b1")
    assert "bytes omitted …]" in text
    assert_paired(view)


def test_b20_oversized_newest_call_arguments_clipped_not_dropped(store):
    """The newest unit's size is in a tool call's arguments (a Write of 300 KB): the longest
    argument string is cut head and tail; the call, its result and the other arguments stay."""
    content = "y" * 300_000 + "THE END"
    key = load(
        store,
        [
            U("write the file"),
            A(call("w1", "Write", file_path="/x/big.txt", content=content)),
            T("w1", text="created"),
        ],
    )
    d = build_continuation(store, key, budget_bytes=20_000).to_dict()
    assert d["used_bytes"] <= 20_000 and d["clipped"] and d["gap"] is None
    assert [(m["seq"], m["role"]) for m in d["messages"]] == [(1, "assistant"), (2, "tool")]
    args = d["messages"][0]["content"][0]["arguments"]
    assert args["file_path"] == "/x/big.txt"
    assert args["content"].startswith("yyyy") and args["content"].endswith("THE END")
    assert "bytes omitted …]" in args["content"]
    assert d["messages"][1]["content"][0]["text"] == "created w1"


def test_b22_budget_never_exceeded(store):
    rows = [U("task")]
    for i in range(200):
        rows += [A(call(f"c{i}")), T(f"c{i}", text="z" * 500)]
    key = load(store, rows)
    for budget in (2_000, 10_000, 50_000):
        view = build_continuation(store, key, budget_bytes=budget)
        total = view.used_bytes + len(orjson.dumps(view.notes)) + len(orjson.dumps(view.notice))
        assert view.used_bytes <= budget and total <= budget
        assert_paired(view)


def test_protected_context_over_budget_refused(store):
    key = load(store, [U("q" * 5000), A(text="a")])
    d = build_continuation(store, key, budget_bytes=1000).to_dict()
    assert d["refusal"]["reason"] == "protected_context_over_budget"
    assert d["messages"] == [] and d["request"] is None and d["used_bytes"] == 0


def test_incomplete_request_refused(store):
    key = load(store, [Entry(EntryKind.MESSAGE, Role.USER, (), is_request=True), A(text="x")])
    assert build_continuation(store, key).refusal["reason"] == "incomplete_request"


# --- request ---------------------------------------------------------------------------------


def test_b24_latest_request_carried_verbatim(store):
    rows = [
        U("Task A: remove agent X"),
        A(text="working on A"),
        U("Task B: why did the reset not run?"),
        A(call("c1")),
        T("c1"),
    ]
    rows += [A(call(f"d{i}")) for i in range(1)] + [T("d0", text="w" * 4000)]
    key = load(store, rows)
    view = build_continuation(store, key, budget_bytes=3000)
    assert view.request["text"] == "Task B: why did the reset not run?"
    assert "Task A" not in orjson.dumps(view.messages).decode()


def test_b25_newest_messages_verbatim(store):
    rows = [U("look at https://example.test/docs"), A(text="pros/cons…"), U("so should we?")]
    key = load(store, rows)
    d = build_continuation(store, key).to_dict()
    assert d["request"]["text"] == "so should we?"
    # The URL and its analysis travel verbatim before the last request (spec step 3).
    assert [(m["seq"], m["content"][0]["text"]) for m in d["messages"]] == [
        (0, "look at https://example.test/docs"),
        (1, "pros/cons…"),
    ]
    assert d["gap"] is None
    # After a compaction of older work, the newest messages still land in the verbatim tail.
    older = [U("old task"), A(text="old answer"), CP("old work summarised", covers=1)]
    key3 = load(
        store,
        [*older, U("look at https://example.test/docs"), A(text="pros/cons…"), U("so should we?")],
        key="s3",
    )
    d3 = build_continuation(store, key3).to_dict()
    assert d3["summary"]["covers_through_seq"] == 1
    assert [m["seq"] for m in d3["messages"]] == [3, 4] and d3["request"]["seq"] == 5
    assert d3["messages"][0]["content"][0]["text"] == "look at https://example.test/docs"
    assert d3["gap"] is None
    key2 = load(store, [U("look at https://example.test/docs"), A(text="pros/cons…")], key="s2")
    d2 = build_continuation(store, key2).to_dict()
    assert d2["request"]["text"] == "look at https://example.test/docs"
    assert d2["messages"][0]["content"][0]["text"] == "pros/cons…"


def test_request_before_compaction_is_copied_with_gap_named(store):
    rows = [U("the request"), A(text="a1"), A(text="a2"), CP("sum", covers=1), A(text="a3")]
    rows += [A(text="filler " * 50) for _ in range(5)]
    key = load(store, rows)
    view = build_continuation(store, key, budget_bytes=1500)
    d = view.to_dict()
    assert d["request"]["seq"] == 0 and d["copied"]
    kept = [m["seq"] for m in d["messages"]]
    assert kept and kept[-1] == 9
    omitted = [s for s in (2, 4, 5, 6, 7, 8, 9) if s not in kept]
    if omitted:
        assert d["gap"]["from_seq"] == 2 and d["gap"]["to_seq"] == omitted[-1]
        assert d["gap"]["text"].startswith(f"seq 2–{omitted[-1]} omitted")


def test_notes_travel_and_count_against_budget(store):
    key = load(store, [U("go"), A(text="done")])
    store.add_note(Note(key, "remember: the tests need PG"))
    view = build_continuation(store, key)
    assert view.notes == ["remember: the tests need PG"]


# --- repair ----------------------------------------------------------------------------------


def test_repair_idempotent_and_keeps_paired_units():
    rows = [
        (0, Role.USER, [TextBlock("go")]),
        (1, Role.ASSISTANT, [call("a"), call("b")]),
        (2, Role.TOOL, [ToolResultBlock("a", False, "ok")]),
        (3, Role.TOOL, [ToolResultBlock("zz", False, "orphan")]),
    ]
    once = repair(rows, set())
    assert repair(once, set()) == once
    assert [r[0] for r in once] == [0, 1, 2, 2]
    paired = rows[:3]
    paired_ok = [
        (0, Role.USER, [TextBlock("go")]),
        (1, Role.ASSISTANT, [call("a")]),
        (2, Role.TOOL, [ToolResultBlock("a", False, "ok")]),
    ]
    assert repair(paired_ok, set()) == paired_ok
    assert paired[0] == rows[0]


def test_repair_synthetic_answer_comes_before_later_text():
    """A dangling call is answered before the assistant's next text row, not after it."""
    rows = [
        (0, Role.USER, [TextBlock("go")]),
        (4, Role.ASSISTANT, [call("x")]),
        (5, Role.ASSISTANT, [TextBlock("meanwhile")]),
    ]
    out = repair(rows, set())
    assert [(seq, role) for seq, role, _ in out] == [
        (0, Role.USER),
        (4, Role.ASSISTANT),
        (4, Role.TOOL),
        (5, Role.ASSISTANT),
    ]


def test_repair_never_fakes_a_result_that_exists_elsewhere():
    rows = [(0, Role.USER, [TextBlock("go")]), (1, Role.ASSISTANT, [call("a")])]
    out = repair(rows, {"a"})
    assert out == [(0, Role.USER, [TextBlock("go")])]


def test_b05_checkpoint_inside_a_parallel_batch_never_starts_with_a_result(store):
    """B05: a checkpoint cut between results of one batch; the kept rows never start with a
    result, and a result with an empty call id is never emitted."""
    rows = [
        U("go"),
        A(call("c1"), call("c2"), call("c3")),
        T("c1"),
        CP("batch half done", 2),
        T("c2"),
        T("c3"),
        T(""),
        A(text="all three done"),
    ]
    key = load(store, rows)
    view = build_continuation(store, key)
    assert view.messages[0]["content"][0]["type"] != "tool_result"
    assert blocks(view, "tool_result") == []  # c2, c3: their call is behind the checkpoint
    assert [m["seq"] for m in view.messages] == [7]
    # rows 4-6 hold only results whose calls were summarised: left out, and named as such
    assert [(g.from_seq, g.to_seq) for g in view.gaps] == [(4, 6)]
    assert_paired(view)
    # A call with no id and a result with an empty id, both in the view: paired by position
    # under a derived id (issue 15: no longer dropped silently); never an empty id emitted.
    key2 = load(store, [U("go"), A(call(""), call("k1")), T(""), T("k1"), A(text="done")], key="s2")
    d2 = build_continuation(store, key2).to_dict()
    assert [
        (
            m["seq"],
            [
                b.get("id") or b.get("call_id")
                for b in m["content"]
                if b["type"] in ("tool_call", "tool_result")
            ],
        )
        for m in d2["messages"]
    ] == [(1, ["unnamed-1-0", "k1"]), (2, ["unnamed-1-0"]), (3, ["k1"]), (4, [])]


def test_rows_before_the_request_pair_with_results_after_it(store):
    """Regression (property test): a call before the request whose result comes after it is
    reused with that result, not dropped as if the result lay outside the view."""
    key = load(
        store,
        [U("task"), A(call("c0")), U("task 2"), U("note", request=False), T("c0"), U("task 3")],
        runs=[(0, RunStatus.FINISHED), (2, RunStatus.FINISHED), (5, RunStatus.RUNNING)],
    )
    d = build_continuation(store, key).to_dict()
    assert d["request"]["seq"] == 2
    assert [(m["seq"], m["role"]) for m in d["messages"]] == [
        (0, "user"),
        (1, "assistant"),
        (3, "user"),
        (4, "tool"),
        (5, "user"),
    ]
    assert d["messages"][3]["content"][0] == {
        "type": "tool_result",
        "call_id": "c0",
        "is_error": False,
        "text": "ok c0",
    }


def test_gap_notice_names_the_range_and_no_tool():
    """Seed 002 names the exact omitted range; issue 39: the notice names no tool (the reader
    may have no ``recall``), it points at continuity's record."""
    from continuity.continuation.view import GAP_NOTICE_RESERVE, Gap, gap_notice

    text = gap_notice([Gap(412, 977)])
    assert text == (
        "seq 412–977 omitted; look them up in continuity's record before relying "
        "on them or repeating unresolved work"
    )
    assert "recall" not in text and "MCP" not in text
    assert gap_notice([Gap(3, 3), Gap(10, 12)]).startswith("seq 3 and 10–12 omitted; ")
    assert (
        len(gap_notice([Gap(100_000, 199_999), Gap(200_001, 299_999)]).encode())
        <= GAP_NOTICE_RESERVE
    )
