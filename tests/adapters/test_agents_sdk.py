"""The OpenAI Agents SDK adapter (issue 46 item 2): ``ContinuitySession`` against the SDK's own
``Session`` protocol, the bounded continuation over budget (seed 002), the lossless record, and
the example agent run with a scripted model, offline."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from agents.memory.session import Session
from typer.testing import CliRunner

from continuity.adapters.agents_sdk import ContinuitySession, session_file_name
from continuity.cli.app import app
from continuity.continuation.view import UNKNOWN_EFFECTS
from continuity.core.text import json_len
from tests.conftest import BACKENDS

ROOT = Path(__file__).resolve().parents[2]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def turn(n: int, output_bytes: int = 2400) -> list[dict[str, Any]]:
    """One request answered after a tool call: user, function_call, its output, assistant."""
    return [
        {"role": "user", "content": f"request {n}: read file {n}"},
        {
            "type": "function_call",
            "call_id": f"c{n}",
            "name": "read",
            "arguments": json.dumps({"path": f"f{n}.py"}),
            "id": f"fc_{n}",
            "status": "completed",
        },
        {
            "type": "function_call_output",
            "call_id": f"c{n}",
            "output": f"line {n} " * (output_bytes // (len(str(n)) + 6)),
        },
        {
            "type": "message",
            "role": "assistant",
            "id": f"msg_{n}",
            "status": "completed",
            "content": [{"type": "output_text", "text": f"answer {n}", "annotations": []}],
        },
    ]


def assert_paired(items: list[dict[str, Any]]) -> None:
    """Every function_call has exactly one output after it; every output follows its call."""
    calls: dict[str, int] = {}
    outputs: dict[str, int] = {}
    for i, item in enumerate(items):
        if item.get("type") == "function_call":
            assert item["call_id"] not in calls, item
            calls[item["call_id"]] = i
        elif item.get("type") == "function_call_output":
            assert item["call_id"] in calls and calls[item["call_id"]] < i, item
            assert item["call_id"] not in outputs, item
            outputs[item["call_id"]] = i
    assert set(calls) == set(outputs)


# ---------------------------------------------------------------------------- the protocol


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_it_is_an_sdk_session_and_round_trips_items(tmp_path: Path, db_url: str) -> None:
    session = ContinuitySession("chat-1", home=tmp_path, database_url=db_url)
    assert isinstance(session, Session)  # the SDK's runtime-checkable protocol
    items = [*turn(1), {"role": "user", "content": [{"type": "input_text", "text": "héllo ✓"}]}]
    run(session.add_items(items[:2]))
    run(session.add_items(items[2:]))
    got = run(session.get_items())
    assert got == items
    got[0]["content"] = "changed"  # a copy: the session's history is not the caller's list
    assert run(session.get_items()) == items
    assert run(session.get_items(limit=2)) == items[-2:]
    assert run(session.get_items(limit=0)) == []
    assert run(session.pop_item()) == items[-1]
    assert run(session.get_items()) == items[:-1]
    assert run(session.pop_item()) == items[-2]
    run(session.add_items([{"role": "user", "content": "again"}]))
    assert run(session.get_items()) == [*items[:-2], {"role": "user", "content": "again"}]
    run(session.clear_session())
    assert run(session.get_items()) == []
    assert run(session.pop_item()) is None
    run(session.add_items([{"role": "user", "content": "after the clear"}]))
    assert run(session.get_items()) == [{"role": "user", "content": "after the clear"}]
    session.close()


def test_session_settings_limit_and_a_second_instance_see_the_same_history(tmp_path: Path) -> None:
    from agents import SessionSettings

    one = ContinuitySession("shared", home=tmp_path, session_settings=SessionSettings(limit=3))
    run(one.add_items(turn(1)))
    assert run(one.get_items()) == turn(1)[-3:]
    two = ContinuitySession("shared", home=tmp_path)
    run(two.add_items(turn(2)))
    assert run(two.get_items()) == turn(1) + turn(2)
    assert run(one.get_items(limit=-1)) == turn(1) + turn(2)  # it reads what two appended
    assert run(one.pop_item()) == turn(2)[-1]
    assert run(two.get_items()) == turn(1) + turn(2)[:-1]
    three = ContinuitySession("shared", home=tmp_path, session_settings={"limit": 2})
    assert isinstance(three.session_settings, SessionSettings)
    assert run(three.get_items()) == turn(2)[1:3]
    for s in (one, two, three):
        s.close()


def test_bad_arguments_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="session_id"):
        ContinuitySession("", home=tmp_path)
    with pytest.raises(ValueError, match="budget_bytes"):
        ContinuitySession("x", home=tmp_path, budget_bytes=10)
    session = ContinuitySession("x", home=tmp_path)
    with pytest.raises(TypeError, match=r"items\[1\]: expected a dict"):
        run(session.add_items([{"role": "user", "content": "ok"}, "not an item"]))
    with pytest.raises(TypeError, match=r"items\[0\]: cannot be written as JSON"):
        run(session.add_items([{"role": "user", "content": object()}]))
    assert run(session.get_items()) == []  # nothing of a refused call is recorded
    assert not session.path.exists()


def test_file_names_never_collide_and_stay_in_the_folder() -> None:
    assert session_file_name("chat-1") == "chat-1.jsonl"
    odd = session_file_name("../etc/passwd")
    assert "/" not in odd and odd.endswith(".jsonl") and odd != session_file_name("..-etc-passwd")


# ---------------------------------------------------------------------------- over budget


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_over_budget_a_summary_first_then_the_paired_tail_within_the_budget(
    tmp_path: Path, db_url: str
) -> None:
    session = ContinuitySession("long", home=tmp_path, budget_bytes=20_000, database_url=db_url)
    added: list[dict[str, Any]] = []
    for n in range(30):
        added += turn(n)
        run(session.add_items(turn(n)))
    assert json_len(added) > 70_000
    items = run(session.get_items())
    assert json_len(items) <= 20_000
    assert items[0]["role"] == "user" and "<summary>" in items[0]["content"]
    assert "It is not an instruction" in items[0]["content"]
    assert_paired(items)
    # the tail is the newest items, verbatim and in order, starting on a request
    tail = items[1:]
    assert tail == added[-len(tail) :]
    assert tail[0] == {
        "role": "user",
        "content": f"request {30 - len(tail) // 4}: read file {30 - len(tail) // 4}",
    }
    assert len(tail) >= 8
    assert run(session.get_items(limit=3)) == added[-3:]
    # continuity's compaction ran: the checkpoint row is in the store
    store = session.store()
    checkpoint = store.latest_compaction(session.key)
    assert checkpoint is not None and checkpoint.compaction.continuation
    session.close()


def one_long_run(late_call: bool) -> list[dict[str, Any]]:
    """A request and 40 tool calls with their outputs (one run), and, with ``late_call``, a
    last call that never got its output (the run was interrupted)."""
    added = [{"role": "user", "content": [{"type": "input_text", "text": "fix the parser"}]}]
    for n in range(40):
        added += turn(n)[1:3]
    if late_call:
        added.append(
            {"type": "function_call", "call_id": "late", "name": "test", "arguments": "{}"}
        )
    return added


def test_the_previous_request_travels_verbatim_when_its_run_outgrows_the_budget(
    tmp_path: Path,
) -> None:
    session = ContinuitySession("one-run", home=tmp_path, budget_bytes=12_000)
    added = one_long_run(late_call=False)
    run(session.add_items(added))
    items = run(session.get_items())
    assert json_len(items) <= 12_000
    assert "<summary>" in items[0]["content"]
    assert items[1] == added[0]  # the request, verbatim, right after the summary
    assert_paired(items)
    assert items[2:] == added[-len(items[2:]) :]
    assert len(items[2:]) >= 4
    session.close()


def test_a_call_that_never_got_its_output_is_answered_effects_unknown(tmp_path: Path) -> None:
    session = ContinuitySession("interrupted", home=tmp_path, budget_bytes=12_000)
    added = one_long_run(late_call=True)
    run(session.add_items(added))
    items = run(session.get_items())
    assert json_len(items) <= 12_000
    # seed 002 (B12): a call of the last run without a result counts as in flight, so no
    # checkpoint is made; the rows left out are named as a gap instead
    assert "<summary>" not in items[0]["content"]
    assert "omitted; look them up in continuity's record" in items[0]["content"]
    assert items[1] == added[0]
    assert_paired(items)
    assert items[-2] == added[-1]
    assert items[-1] == {
        "type": "function_call_output",
        "call_id": "late",
        "output": UNKNOWN_EFFECTS.format(name="test", id="late"),
    }
    assert items[2:-1] == added[-len(items[2:-1]) :]
    session.close()


def test_items_larger_than_their_rows_still_get_a_summary(tmp_path: Path) -> None:
    """A reasoning item's ``encrypted_content`` travels in the item but not in its row (the
    row keeps the summary text): the view measures small while the items do not. The budget
    is scaled to the view's unit, so the compaction still runs and the items still fit."""
    session = ContinuitySession("reasoning", home=tmp_path, budget_bytes=20_000)
    added: list[dict[str, Any]] = []
    for n in range(30):
        items = turn(n, output_bytes=60)
        items.insert(
            1,
            {
                "type": "reasoning",
                "id": f"rs_{n}",
                "summary": [],
                "encrypted_content": "gAAAA" + "x" * 3000,
            },
        )
        added += items
        run(session.add_items(items))
    store = session.store()
    assert store.view_bytes_after(session.key, -1) < 20_000 < json_len(added)
    items = run(session.get_items())
    assert json_len(items) <= 20_000
    assert "<summary>" in items[0]["content"]
    assert_paired(items)
    assert items[1:] == added[-len(items[1:]) :]
    session.close()


def test_a_clear_drops_the_summary_of_what_it_cleared(tmp_path: Path) -> None:
    session = ContinuitySession("cleared", home=tmp_path, budget_bytes=10_000)
    for n in range(12):
        run(session.add_items(turn(n)))
    assert "<summary>" in run(session.get_items())[0]["content"]
    run(session.clear_session())
    assert session.store().latest_compaction(session.key) is None
    for n in range(100, 112):
        run(session.add_items(turn(n)))
    items = run(session.get_items())
    assert json_len(items) <= 10_000
    assert "request 5" not in json.dumps(items)  # nothing of before the clear
    assert_paired(items)
    session.close()


# ---------------------------------------------------------------------------- the record


def test_the_record_is_lossless_after_pop_and_clear(tmp_path: Path) -> None:
    session = ContinuitySession("kept", home=tmp_path)
    run(session.add_items(turn(1)))
    popped = run(session.pop_item())
    run(session.clear_session())
    run(session.add_items([{"role": "user", "content": "a new start"}]))
    lines = session.path.read_bytes().splitlines()
    records = [orjson.loads(line) for line in lines]
    assert [r["type"] for r in records] == [
        "openai-agents.session",
        "item",
        "item",
        "item",
        "item",
        "pop",
        "clear",
        "item",
    ]
    assert [r["item"] for r in records if r["type"] == "item"] == [
        *turn(1),
        {"role": "user", "content": "a new start"},
    ]
    assert records[5]["pops"] == records[4]["id"] and popped == turn(1)[-1]
    assert (os.stat(session.path).st_mode & 0o777) == 0o600
    assert (os.stat(session.path.parent).st_mode & 0o777) == 0o700
    store = session.store()
    assert [r.data for r in store.raw_lines(str(session.path.resolve()))] == lines
    rows = store.entries_by_seq(session.key, range(len(lines)))
    assert [(r.kind.value, r.role.value, r.visible) for r in rows] == [
        ("event", "system", False),
        ("message", "user", False),
        ("message", "assistant", False),
        ("message", "tool", False),
        ("message", "assistant", False),
        ("event", "system", False),
        ("event", "system", False),
        ("message", "user", True),
    ]
    session.close()
    shown = CliRunner().invoke(app, ["show", "kept", "--all", "--home", str(tmp_path)])
    assert shown.exit_code == 0, shown.output
    for text in ("request 1: read file 1", "answer 1", "a new start"):
        assert text in shown.output
    listed = CliRunner().invoke(
        app, ["sessions", "--harness", "openai-agents", "--json", "--home", str(tmp_path)]
    )
    assert [s["session"] for s in json.loads(listed.output)] == ["kept"]


# ---------------------------------------------------------------------------- the example agent


def test_the_example_agent_remembers_its_first_run_offline(tmp_path: Path) -> None:
    """``examples/agents_sdk_agent.py``: ``Runner.run`` twice on one ``ContinuitySession`` with
    a scripted model (one tool call); the second run's model input holds the first run's
    items. Offline: no API key, tracing off, every proxy pointed at a closed port."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}
    env.update(
        OPENAI_AGENTS_DISABLE_TRACING="1",
        HTTPS_PROXY="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9",
        NO_PROXY="",
        CONTINUITY_HOME=str(tmp_path),
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "agents_sdk_agent.py"), str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["second_run_saw_first"] is True
    assert out["calls"] == 3  # tool call, first answer, second answer
    assert out["inputs"] == [
        ["message", "user"],
        ["function_call", None],
        ["function_call_output", None],
        ["message", "assistant"],
        ["message", "user"],
    ]
    assert out["first_output"] == "The text has 4 words."
    # the record and the store hold both runs: `continuity show` lists them
    records = [orjson.loads(line) for line in Path(out["record"]).read_bytes().splitlines()]
    assert [r["item"].get("type") or r["item"]["role"] for r in records[1:]] == [
        "user",
        "function_call",
        "function_call_output",
        "message",
        "user",
        "message",
    ]
    shown = CliRunner().invoke(app, ["show", "chat-1", "--home", str(tmp_path)])
    assert "word_count" in shown.output and "What did I ask you before?" in shown.output


def test_a_line_a_crashed_writer_left_unfinished_stays_apart(tmp_path: Path) -> None:
    session = ContinuitySession("torn", home=tmp_path)
    run(session.add_items([{"role": "user", "content": "one"}]))
    with open(session.path, "ab") as fh:
        fh.write(b'{"type":"item","id":"i1","parent_id":"i0","item":{"role":"us')
    run(session.add_items([{"role": "user", "content": "two"}]))
    assert run(session.get_items()) == [
        {"role": "user", "content": "one"},
        {"role": "user", "content": "two"},
    ]
    assert ContinuitySession("torn", home=tmp_path).items_now() == run(session.get_items())
    report = session.store().issues(str(session.path.resolve()))
    assert [i.line_no for i in report] == [3]  # the torn line, reported and kept raw
    session.close()


def test_the_runner_takes_the_bounded_continuation_as_its_history(tmp_path: Path) -> None:
    """Over budget, ``Runner.run`` sends the model the summary item, the paired tail and the
    new request, in that order (the SDK's own input checks accept them)."""
    import importlib.util

    from agents import Agent, Runner, set_tracing_disabled

    spec = importlib.util.spec_from_file_location(
        "agents_sdk_agent", ROOT / "examples" / "agents_sdk_agent.py"
    )
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    set_tracing_disabled(True)
    session = ContinuitySession("runner", home=tmp_path, budget_bytes=12_000)
    for n in range(20):
        run(session.add_items(turn(n)))
    model = example.ScriptedModel([[example.message("Carrying on.", 99)]])
    agent = Agent(name="a", instructions="Be brief.", model=model)
    result = run(Runner.run(agent, "and now?", session=session))
    assert result.final_output == "Carrying on."
    (sent,) = model.inputs
    assert "<summary>" in sent[0]["content"]
    assert sent[-1] == {"role": "user", "content": "and now?"}
    assert_paired(sent)
    history = run(session.get_items())
    assert history[-2:] == [
        {"role": "user", "content": "and now?"},
        {
            "id": "msg_99",
            "content": [{"annotations": [], "text": "Carrying on.", "type": "output_text"}],
            "role": "assistant",
            "status": "completed",
            "type": "message",
        },
    ]
    session.close()


def test_a_reasoning_item_never_ends_up_without_the_item_it_led_to() -> None:
    from continuity.adapters.agents_sdk import _without_stray_reasoning

    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    call, output = turn(1)[1:3]
    user = {"role": "user", "content": "next"}
    tail = [
        (1, reasoning),
        (2, call),
        (3, output),
        (4, dict(reasoning, id="rs_2")),
        (5, user),
        (6, dict(reasoning, id="rs_3")),
    ]
    kept, split = _without_stray_reasoning(tail, 5)
    assert [seq for seq, _ in kept] == [1, 2, 3, 5] and split == 4
    # one right before the request (split) has lost what followed it too
    kept, split = _without_stray_reasoning([(1, reasoning), (2, call)], 1)
    assert [seq for seq, _ in kept] == [2] and split == 0


def test_two_writers_at_once_never_interleave_or_reuse_an_id(tmp_path: Path) -> None:
    """Two sessions on one id (two workers of one app) append at the same time: each call's
    lines stay together and in order, every line gets its own id, the store has every row."""
    import threading

    writers = [ContinuitySession("busy", home=tmp_path) for _ in range(2)]

    def write(w: int) -> None:
        for n in range(15):
            writers[w].add_now(
                [
                    {"role": "user", "content": f"w{w} n{n} a"},
                    {"role": "user", "content": f"w{w} n{n} b"},
                ]
            )

    threads = [threading.Thread(target=write, args=(w,)) for w in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    items = ContinuitySession("busy", home=tmp_path).items_now()
    texts = [i["content"] for i in items]
    assert len(texts) == 60
    for w in range(2):
        mine = [t for t in texts if t.startswith(f"w{w} ")]
        assert mine == [f"w{w} n{n} {x}" for n in range(15) for x in "ab"]
    for a, b in zip(texts[::2], texts[1::2], strict=True):  # a call's two items are adjacent
        assert a[:-1] == b[:-1]
    records = [orjson.loads(line) for line in writers[0].path.read_bytes().splitlines()[1:]]
    assert len({r["id"] for r in records}) == 60
    writers[0].items_now()  # both writers imported; the store has every row, on the path
    rows = writers[0].store().entries_by_seq(writers[0].key, range(100))
    assert sum(1 for r in rows if r.visible) == 60
    for w in writers:
        w.close()
