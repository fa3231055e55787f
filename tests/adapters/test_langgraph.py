"""The LangGraph adapter (issue 46 item 2): ``ContinuitySaver`` passes LangGraph's own
checkpointer conformance suite (``langgraph-checkpoint-conformance``, every base and extended
capability) on SQLite and, with ``CONTINUITY_TEST_DATABASE_URL``, on PostgreSQL; a graph run
with it resumes its thread in a fresh process after a crash; the thread's messages become a
continuity session; ``ContinuityStore`` keeps items and finds them through recall.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph.checkpoint.conformance")

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import Capability

from continuity.adapters.langgraph import ContinuitySaver, ContinuityStore
from continuity.core.errors import InputError
from continuity.store import open_store
from tests.conftest import BACKENDS, _pg_database

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "langgraph_agent.py"


def _urls(backend: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'continuity.db'}"
    else:
        yield from _pg_database()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("capability", sorted(c.value for c in Capability))
def test_saver_passes_langgraph_conformance(backend: str, capability: str, tmp_path: Path) -> None:
    """Each capability of LangGraph's checkpointer conformance suite passes, every test of it
    (none skipped: the saver implements all eight, base and extended)."""
    for url in _urls(backend, tmp_path):
        with open_store(url) as store:

            @checkpointer_test(name=f"ContinuitySaver-{backend}")
            async def factory():  # type: ignore[no-untyped-def]
                yield ContinuitySaver(store, record=False)

            report = asyncio.run(validate(factory, capabilities={capability}))
            result = report.results[capability]
            assert result.detected, capability
            assert result.failures == [], result.failures
            assert result.passed is True and result.tests_passed > 0


def test_saver_names_a_missing_thread_id(tmp_path: Path) -> None:
    with (
        ContinuitySaver.open(tmp_path / "w", record=False) as saver,
        pytest.raises(InputError, match=r"\['configurable'\]\['thread_id'\] is required"),
    ):
        saver.get_tuple({"configurable": {}})


def test_saver_refuses_a_blank_thread_id(tmp_path: Path) -> None:
    """A fresh-user review: a thread id of "" was taken and named its session after the
    SHA-256 of nothing; it is refused as a missing one is."""
    with ContinuitySaver.open(tmp_path / "w", record=False) as saver:
        for blank in ("", "  "):
            with pytest.raises(InputError, match=r"\['thread_id'\] is required"):
                saver.get_tuple({"configurable": {"thread_id": blank}})


def test_store_put_of_a_value_the_serde_refuses_writes_nothing(tmp_path: Path) -> None:
    """A fresh-user review: the memory was stored before the serde refused the value."""
    from continuity.adapters.langgraph import ContinuityStore

    with ContinuityStore.open(tmp_path / "w") as store:
        with pytest.raises(TypeError):
            store.put(("n",), "k", {"a": "remember this zebra", "b": object()})
        assert store.get(("n",), "k") is None
        assert store.search(("n",), query="zebra") == []
    from continuity.api import Workspace

    with Workspace.open(tmp_path / "w") as ws:
        assert ws.recall("zebra").to_dict()["results"] == []


def test_saver_versions_grow_as_text() -> None:
    saver = ContinuitySaver.__new__(ContinuitySaver)
    first = saver.get_next_version(None)
    second = saver.get_next_version(first)
    assert first.startswith("0" * 31 + "1.") and second.startswith("0" * 31 + "2.")
    assert first < second < saver.get_next_version(7)


def _env(url: str) -> dict[str, str]:
    """The environment of a subprocess on database ``url`` (a PostgreSQL one through
    ``$CONTINUITY_DATABASE_URL``, as a user would point the CLI at it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("CONTINUITY_DATABASE_URL", None)
    if not url.startswith("sqlite"):
        env["CONTINUITY_DATABASE_URL"] = url
    return env


def _run_example(home: Path, url: str, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=_env(url),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("backend", BACKENDS)
def test_example_resumes_a_thread_after_a_crash(backend: str, tmp_path: Path) -> None:
    """The example agent answers two turns of thread ``t1`` and dies (``os._exit`` right
    after the turn's checkpoint, no close); a fresh process opens a new saver on the same
    workspace and the third turn continues from the last checkpoint: the state holds exactly
    the earlier messages and the new ones."""
    for url in _urls(backend, tmp_path / "w"):
        _crash_and_resume(tmp_path / "w", url)


def _crash_and_resume(home: Path, url: str) -> None:
    first = _run_example(
        home, url, "--thread", "t1", "--say", "hello", "--say", "what is 2+2?", "--crash"
    )
    assert first["messages"] == [
        ["human", "hello"],
        ["ai", "echo 1: hello"],
        ["human", "what is 2+2?"],
        ["ai", "echo 2: what is 2+2?"],
    ]
    second = _run_example(home, url, "--thread", "t1", "--say", "and now?")
    assert second["resumed_from"] == 4
    assert second["messages"] == first["messages"] + [
        ["human", "and now?"],
        ["ai", "echo 3: and now?"],
    ]
    other = _run_example(home, url, "--thread", "t2", "--say", "fresh")
    assert other["resumed_from"] == 0
    assert other["messages"] == [["human", "fresh"], ["ai", "echo 1: fresh"]]

    # the conversation is a continuity session: sessions, search and continue see it
    with open_store(url) as store:
        session = store.get_session("t1")
        assert session is not None and session.harness == "langgraph"
        rows = list(store.entries("t1"))
        assert [(r.role.value, r.text()) for r in rows] == [
            ("user", "hello"),
            ("assistant", "echo 1: hello"),
            ("user", "what is 2+2?"),
            ("assistant", "echo 2: what is 2+2?"),
            ("user", "and now?"),
            ("assistant", "echo 3: and now?"),
        ]
        assert [r.is_request for r in rows] == [True, False] * 3
    cli = [sys.executable, "-c", "from continuity.cli.hookcmd import console; console()"]
    env = _env(url)
    listed = subprocess.run(
        [*cli, "sessions", "--home", str(home), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    assert {(s["session"], s["harness"], s["title"]) for s in json.loads(listed.stdout)} == {
        ("t1", "langgraph", "hello"),
        ("t2", "langgraph", "fresh"),
    }
    found = subprocess.run(
        [*cli, "search", "2+2", "--home", str(home), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert found.returncode == 0, found.stderr
    hits = [json.loads(line) for line in found.stdout.splitlines()]
    assert {(h["session"], h["seq"], h["snippet"]) for h in hits} >= {
        ("t1", 2, "what is 2+2?"),
        ("t1", 3, "echo 2: what is 2+2?"),
    }
    view = subprocess.run(
        [*cli, "continue", "t1", "--home", str(home), "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert view.returncode == 0, view.stderr
    assert "echo 3: and now?" in view.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_store_keeps_items_and_recall_finds_them(backend: str, tmp_path: Path) -> None:
    for url in _urls(backend, tmp_path):
        with open_store(url) as store:
            memory = ContinuityStore(store)
            memory.put(("users", "alice"), "diet", {"text": "Alice is allergic to peanuts"})
            memory.put(
                ("users", "alice"), "pet", {"text": "Alice has a cat named Miso", "kind": "pet"}
            )
            memory.put(("users", "bob"), "pet", {"text": "Bob has a parrot", "kind": "pet"})
            memory.put(("users", "bob"), "secret", {"text": "not indexed"}, index=False)

            item = memory.get(("users", "alice"), "diet")
            assert item is not None and item.value == {"text": "Alice is allergic to peanuts"}
            assert item.namespace == ("users", "alice") and item.created_at.tzinfo is not None

            hits = memory.search(("users",), query="peanuts allergy")
            assert [(h.namespace, h.key) for h in hits] == [(("users", "alice"), "diet")]
            assert hits[0].score is not None and hits[0].score > 0
            pets = memory.search(("users",), filter={"kind": "pet"})
            assert sorted(h.key + "@" + h.namespace[1] for h in pets) == ["pet@alice", "pet@bob"]
            assert memory.search(("users", "bob"), query="not indexed") == []
            assert memory.list_namespaces(prefix=("users",)) == [
                ("users", "alice"),
                ("users", "bob"),
            ]
            assert memory.list_namespaces(max_depth=1) == [("users",)]

            # continuity recall finds the item's text (every string of its value) as a memory
            from continuity.transcripts.memories import recall

            found = recall(store, "parrot").results
            assert [(r.content, r.tags) for r in found] == [
                ("Bob has a parrot\npet", ["langgraph", "langgraph:users.bob"])
            ]

            memory.put(("users", "alice"), "diet", {"text": "Alice now eats everything"})
            assert memory.search(("users",), query="peanuts") == []
            memory.delete(("users", "alice"), "diet")
            assert memory.get(("users", "alice"), "diet") is None
            got = asyncio.run(memory.aget(("users", "bob"), "pet"))
            assert got is not None and got.value["text"] == "Bob has a parrot"


def _tool_graph(saver: ContinuitySaver):  # type: ignore[no-untyped-def]
    """A graph whose scripted model calls a tool once, then answers with its result."""
    from langchain_core.messages import AIMessage, ToolMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    def model(state: MessagesState) -> dict:
        last = state["messages"][-1]
        if isinstance(last, ToolMessage):
            return {"messages": [AIMessage(f"the file says {last.content}")]}
        return {
            "messages": [
                AIMessage(
                    "",
                    tool_calls=[
                        {"id": "call_1", "name": "read_file", "args": {"path": "notes.txt"}}
                    ],
                )
            ]
        }

    def tool(state: MessagesState) -> dict:
        call = state["messages"][-1].tool_calls[0]
        return {
            "messages": [
                ToolMessage(
                    "deploy on friday",
                    tool_call_id=call["id"],
                    status="error" if call["args"] == {} else "success",
                )
            ]
        }

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_node("tool", tool)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", lambda s: "tool" if s["messages"][-1].tool_calls else END)
    graph.add_edge("tool", "model")
    return graph.compile(checkpointer=saver)


def test_record_keeps_tool_calls_results_and_edits(tmp_path: Path) -> None:
    """Run asynchronously (``ainvoke``: the saver's a* methods), the thread's session holds
    the system prompt as context, the request, the tool call with its arguments, its result
    paired by id, and the answer; a message replaced in the state (same id, new text) is
    recorded again and the newer copy is the one in view. The record file holds one raw line
    per message version, LangChain's dict of it whole."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from continuity.core.model import EntryKind, ToolCallBlock, ToolResultBlock

    home = tmp_path / "w"
    with ContinuitySaver.open(home) as saver:
        app = _tool_graph(saver)
        config = {"configurable": {"thread_id": "tools"}}
        asyncio.run(
            app.ainvoke(
                {
                    "messages": [
                        SystemMessage("be brief", id="sys"),
                        HumanMessage("what do my notes say?", id="q"),
                    ]
                },
                config,
            )
        )
        app.update_state(config, {"messages": [HumanMessage("what do my notes say now?", id="q")]})
        record = saver._recorder.path("tools")  # type: ignore[union-attr]
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(ln["index"], ln["message"]["type"]) for ln in lines] == [
        (0, "system"),
        (1, "human"),
        (2, "ai"),
        (3, "tool"),
        (4, "ai"),
        (1, "human"),
    ]
    assert lines[2]["message"]["data"]["tool_calls"][0]["args"] == {"path": "notes.txt"}
    with open_store(home / "continuity.db") as store:
        rows = list(store.entries("tools"))
        shown = [(r.kind, r.role.value, r.visible, r.text()) for r in rows]
        assert shown == [
            (EntryKind.CONTEXT, "system", True, "be brief"),
            (EntryKind.MESSAGE, "user", False, "what do my notes say?"),
            (EntryKind.MESSAGE, "assistant", True, ""),
            (EntryKind.MESSAGE, "tool", True, ""),
            (EntryKind.MESSAGE, "assistant", True, "the file says deploy on friday"),
            (EntryKind.MESSAGE, "user", True, "what do my notes say now?"),
        ]
        assert rows[2].blocks == (ToolCallBlock("call_1", "read_file", {"path": "notes.txt"}),)
        assert rows[3].blocks == (ToolResultBlock("call_1", False, "deploy on friday"),)
        assert [r.native_id for r in rows] == [
            "sys",
            "q",
            rows[2].native_id,
            rows[3].native_id,
            rows[4].native_id,
            "q",
        ]


def test_record_off_writes_no_session(tmp_path: Path) -> None:
    with ContinuitySaver.open(tmp_path / "w", record=False) as saver:
        _tool_graph(saver).invoke(
            {"messages": [("user", "hi")]}, {"configurable": {"thread_id": "quiet"}}
        )
        assert saver.get_tuple({"configurable": {"thread_id": "quiet"}}) is not None
        assert saver.store.get_session("quiet") is None
    assert not (tmp_path / "w" / "sources").exists()


def test_open_by_database_url_records_into_continuity_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``open(URL)`` stores in that database; the record files go to the workspace the CLI
    would use (``$CONTINUITY_HOME``), and ``ContinuityStore.open(URL)`` shares the database."""
    home = tmp_path / "home"
    monkeypatch.setenv("CONTINUITY_HOME", str(home))
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    with ContinuitySaver.open(url) as saver:
        _tool_graph(saver).invoke(
            {"messages": [("user", "list files")]}, {"configurable": {"thread_id": "by-url"}}
        )
    assert len(list((home / "sources" / "langgraph").glob("*.jsonl"))) == 1
    assert not (home / "continuity.db").exists()
    with ContinuityStore.open(url) as memory:
        memory.put(("docs",), "a", {"text": "quarterly report draft"})
        assert memory.store.get_session("by-url").entry_count == 4
    with open_store(url) as store:
        assert [i.key for i in ContinuityStore(store).search(("docs",), query="report")] == ["a"]
