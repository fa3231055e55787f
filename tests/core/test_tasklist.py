"""B27 (openai/codex#31822, anthropics/claude-code#30961): across compaction the checkpoint keeps
the active objective and the open items of the agent's newest task list (Claude Code
``TodoWrite``, Codex ``update_plan``), with their titles and ids, in the continuation summary
(extractive and model prompts) and in seed 000's checkpoint digests."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from continuity.checkpoints.capture import CheckpointConfig, CheckpointQueue, CheckpointRecorder
from continuity.checkpoints.recovery import replay_session
from continuity.continuation.compaction import after_turn
from continuity.continuation.summarize import WorkingView, summarize
from continuity.continuation.summarize.extractive import ExtractiveSummarizer
from continuity.core.tasklist import TaskItem, open_items, task_list
from continuity.formats.importer import import_paths
from tests.builders import A, T, U, call, load
from tests.continuation.test_summarize import Recorder

#: Claude Code TodoWrite input, the older shape with ids (newer ones drop ``id``).
TODOS = {
    "todos": [
        {"id": "1", "content": "Read the parser", "status": "completed", "priority": "high"},
        {"id": "2", "content": "Fix the off-by-one", "status": "in_progress", "priority": "high"},
        {"id": "3", "content": "Add a regression test", "status": "pending", "priority": "low"},
    ]
}
#: Codex update_plan arguments (the JSON string parsed by the reader).
PLAN = {
    "explanation": "parser work",
    "plan": [
        {"step": "Reproduce the crash", "status": "completed"},
        {"step": "Patch parse_header", "status": "in_progress"},
        {"step": "Run the full suite", "status": "pending"},
    ],
}


def _sections(summary: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current = ""
    for line in summary.splitlines():
        if line.startswith("#"):
            current = line.lstrip("# ")
            out[current] = []
        elif line.startswith("- "):
            out[current].append(line)
    return out


def _compact(store, key: str):  # type: ignore[no-untyped-def]
    lease = store.acquire_lease(key, "harness", 60)
    return after_turn(
        store,
        key,
        lease=lease,
        summarizer=ExtractiveSummarizer(),
        budget_bytes=3_000,
        deadline=time.monotonic() + 30,
        force=True,
    )


def test_task_list_reads_todowrite_and_update_plan():
    """Both shapes give titles, normalised statuses and ids; other calls give None."""
    assert task_list(TODOS) == (
        TaskItem("Read the parser", "completed", "1"),
        TaskItem("Fix the off-by-one", "in_progress", "2"),
        TaskItem("Add a regression test", "pending", "3"),
    )
    assert [(i.title, i.status, i.id) for i in task_list(PLAN)] == [
        ("Reproduce the crash", "completed", None),
        ("Patch parse_header", "in_progress", None),
        ("Run the full suite", "pending", None),
    ]
    assert task_list({"plan": "1. do it"}) is None  # ExitPlanMode: a plan, not a list
    assert task_list({"command": "ls"}) is None and task_list("x") is None
    assert task_list({"todos": []}) == ()  # the agent cleared its list
    assert [i.label() for i in open_items(task_list(TODOS))] == [
        "Fix the off-by-one (id 2)",
        "Add a regression test (id 3)",
    ]


def test_b27_compaction_summary_keeps_objective_and_open_todos(store):
    """B27: the checkpoint names the latest request and the open items with their ids; a
    second compaction over rows with no task list still carries them; a newer list wins."""
    key = load(
        store,
        [
            U("Fix the parser crash " + "p" * 3_000),
            A(call("t1", "TodoWrite", **TODOS)),
            T("t1"),
            A(call("c1", "Read", file_path="parser.py")),
            T("c1"),
            A(text="Found the off-by-one."),
        ],
    )
    first = _compact(store, key).entry.compaction.summary
    s = _sections(first)
    assert s["Goal"][0].startswith("- Latest request (#0): Fix the parser crash")
    assert s["In progress"] == ["- [todo] Fix the off-by-one (id 2)"]
    assert s["Next steps"][0] == "- [todo] Add a regression test (id 3)"
    assert "- [todo] Read the parser (id 1)" in s["Done"]
    assert not any("Read the parser" in i for i in s["In progress"] + s["Next steps"])

    load(store, [U("also log the header " + "q" * 3_000), A(text="Logged.")], key=key)
    second = _sections(_compact(store, key).entry.compaction.summary)
    assert second["Goal"][0].startswith("- Latest request (#7): also log the header")
    assert second["In progress"][0] == "- [todo] Fix the off-by-one (id 2)"
    assert second["Next steps"][0] == "- [todo] Add a regression test (id 3)"

    done = {"todos": [dict(t, status="completed") for t in TODOS["todos"]]}
    load(store, [U("finish " + "r" * 3_000), A(call("t2", "TodoWrite", **done)), T("t2")], key=key)
    third = _sections(_compact(store, key).entry.compaction.summary)
    assert not any("[todo]" in i for i in third["In progress"] + third["Next steps"])


def test_b27_codex_update_plan_open_steps_in_the_summary():
    """B27, Codex: update_plan's open steps are the in-progress and next items."""
    rows = [
        U("fix the header parser"),
        A(call("p1", "update_plan", **PLAN)),
        T("p1"),
        A(text="Patching."),
    ]
    for i, e in enumerate(rows):
        e.seq = i
    result = summarize(
        WorkingView(None, [], rows),
        ExtractiveSummarizer(),
        cancel=threading.Event(),
        deadline=time.monotonic() + 30,
    )
    s = _sections(result.summary)
    assert s["In progress"] == ["- [todo] Patch parse_header"]
    assert s["Next steps"][0] == "- [todo] Run the full suite"
    assert "- [todo] Reproduce the crash" in s["Done"]


def test_b27_model_prompt_lists_the_whole_task_list():
    """B27, model providers: the prompt shows the list whole even when the call's arguments
    are clipped, and the system prompt asks for the open items with their ids."""
    todos = {
        "todos": [
            {"id": f"t{i}", "content": f"step {i} " + "w" * 60, "status": "pending"}
            for i in range(30)
        ]
    }
    rows = [U("do the steps"), A(call("t1", "TodoWrite", **todos)), T("t1")]
    for i, e in enumerate(rows):
        e.seq = i
    rec = Recorder(max_input_bytes=40_000)
    summarize(
        WorkingView(None, [], rows), rec, cancel=threading.Event(), deadline=time.monotonic() + 30
    )
    prompt = rec.requests[0].prompt
    assert "[… " in prompt  # the raw arguments were clipped
    assert f"[pending] step 29 {'w' * 60} (id t29)" in prompt
    assert "every open item of the newest task list" in rec.requests[0].system


def test_b27_real_claude_code_session_keeps_its_open_todo(sqlite_store, shared_data, tmp_path):
    """B27 on a real Claude Code file, cut after its fourth TodoWrite (three items done, one
    in progress): the checkpoint names that one as in progress, and no item of the earlier
    lists as open; the session-end checkpoint digest lists it under Open Tasks."""
    src = shared_data / "claude-code" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    cut = tmp_path / src.name
    cut.write_bytes(b"".join(src.read_bytes().splitlines(keepends=True)[:50]))
    report = import_paths(sqlite_store, [cut])
    key = next(f.session_key for f in report.files if f.session_key)
    s = _sections(_compact(sqlite_store, key).entry.compaction.summary)
    assert s["In progress"] == ["- [todo] Update CLAUDE.md with latest project information"]
    assert not any("[todo]" in i for i in s["Next steps"])
    added = replay_session(sqlite_store, key, config=CheckpointConfig())
    digest = added[-1].digest
    assert (
        "### Open Tasks\n- [in_progress] Update CLAUDE.md with latest project information\n"
        in digest + "\n"
    )
    assert "Check package.json" not in digest.split("### Open Tasks")[1].split("###")[0]


def test_b27_pre_compaction_digest_lists_open_tasks():
    """B27, seed 000: the pre-compaction checkpoint carries the open items (in progress
    first) with their ids, redacted; a newer list replaces the older one."""
    at = datetime(2026, 3, 1, tzinfo=UTC)
    written: list = []
    rec = CheckpointRecorder(
        CheckpointQueue(written.extend, clock=lambda: at), CheckpointConfig(), clock=lambda: at
    )
    rec.start_session("s1", harness="claude-code", project="/p", at=at)
    rec.record_prompt("s1", "Fix the parser crash", at=at)
    assert rec.record_tool_call("s1", {"command": "ls"}) is False
    assert (
        rec.record_tool_call("s1", {"todos": [{"content": "old item", "status": "pending"}]})
        is True
    )
    secret = "ghp_" + "a" * 40
    assert rec.record_tool_call(
        "s1",
        {
            "todos": TODOS["todos"]
            + [{"id": "4", "content": f"rotate {secret}", "status": "pending"}]
        },
    )
    digest = rec.pre_compaction("s1", at=at).digest
    tasks = digest.split("### Open Tasks\n")[1].split("\n\n")[0].splitlines()
    assert tasks == [
        "- [in_progress] Fix the off-by-one (id 2)",
        "- [pending] Add a regression test (id 3)",
        "- [pending] rotate [REDACTED:github-token] (id 4)",
    ]
    assert "- Fix the parser crash" in digest and "old item" not in digest
    rec.shutdown()


def test_b27_no_task_list_no_section(tmp_path: Path):
    """Without a task list the digests keep their seed 000 shape (no empty section)."""
    at = datetime(2026, 3, 1, tzinfo=UTC)
    rec = CheckpointRecorder(
        CheckpointQueue(lambda rows: None, clock=lambda: at), CheckpointConfig(), clock=lambda: at
    )
    rec.start_session("s1", harness="pi", project="/p", at=at)
    rec.record_prompt("s1", "hello there", at=at)
    assert "Open Tasks" not in rec.pre_compaction("s1", at=at).digest
    rec.shutdown()
