"""Continuation fidelity (issue 15): recent complete exchanges survive our own compaction,
media never vanish or hide as text, secrets in structured tool arguments never travel, calls
with empty ids are never dropped without a trace. Each test asserts the right value."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.core.model import Entry, EntryKind, Role, TextBlock, ToolCallBlock, ToolResultBlock
from continuity.store import open_store
from tests.builders import A, T, U, call, load

runner = CliRunner()


def _home_with(tmp_path: Path, rows: list[Entry], key: str = "s1") -> Path:
    home = tmp_path / "ws"
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        load(store, rows, key=key)
    return home


def _continue(home: Path, key: str = "s1", budget: int = 12_000) -> dict:
    result = runner.invoke(
        app, ["continue", key, "--budget", str(budget), "--home", str(home), "--json"]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# ---------------------------------------------------------------- item 2: structured secrets


def test_continue_json_redacts_secret_keyed_tool_arguments(tmp_path):
    """Issue 15 item 2: a Codex call ``{"token": "deadbeef12345678"}`` and Claude Code calls
    with ``{"password": …}`` / ``{"secret": …}`` came out raw in `continue --json`; the values
    are redacted, every other argument is kept byte for byte."""
    rows = [
        U("deploy it"),
        A(call("c1", "shell", token="deadbeef12345678", command="make deploy")),
        T("c1"),
        A(call("c2", "Bash", password="hunter2", description="log in")),
        T("c2"),
        A(call("c3", "mcp__vault__put", secret="p4ss-w0rd-9", path="kv/app")),
        T("c3"),
        A(text="Deployed."),
    ]
    view = _continue(_home_with(tmp_path, rows))
    calls = [b for m in view["messages"] for b in m["content"] if b["type"] == "tool_call"]
    assert [c["arguments"] for c in calls] == [
        {"token": "[REDACTED:token]", "command": "make deploy"},
        {"password": "[REDACTED:password]", "description": "log in"},
        {"secret": "[REDACTED:secret]", "path": "kv/app"},
    ]
    text = orjson.dumps(view).decode()
    for secret in ("deadbeef12345678", "hunter2", "p4ss-w0rd-9"):
        assert secret not in text


# ---------------------------------------------------------------- item 5: empty ids


def test_continue_pairs_empty_id_calls_by_position(tmp_path):
    """Issue 15 item 5: a write and a test run whose harness left every id empty were dropped
    (`messages` held only texts, `gaps: []`). They are paired by position under derived ids;
    the unanswered one gets the "effects unknown" answer; nothing is dropped."""
    rows = [
        U("write the config"),
        A(ToolCallBlock("", "Write", {"file_path": "/app/config.toml", "content": "x=1"})),
        Entry(EntryKind.MESSAGE, Role.TOOL, (ToolResultBlock("", False, "File written"),)),
        A(ToolCallBlock("", "Bash", {"command": "make test"})),
        A(text="Wrote the config; the test run did not report back."),
    ]
    view = _continue(_home_with(tmp_path, rows))
    shown = [
        (m["seq"], b["type"], b.get("id") or b.get("call_id"), b.get("text"))
        for m in view["messages"]
        for b in m["content"]
        if b["type"] in ("tool_call", "tool_result")
    ]
    assert shown[:3] == [
        (1, "tool_call", "unnamed-1-0", None),
        (2, "tool_result", "unnamed-1-0", "File written"),
        (3, "tool_call", "unnamed-3-0", None),
    ]
    assert shown[3][:3] == (3, "tool_result", "unnamed-3-0")
    assert "effects are unknown" in shown[3][3]
    assert [m["seq"] for m in view["messages"]] == [1, 2, 3, 3, 4] and view["gaps"] == []


def test_empty_id_parallel_calls_pair_in_order(store):
    """Two unnamed calls of one turn (Codex writes each call as its own row) take the two
    unnamed results in the order they come."""
    from continuity.continuation.view import build_continuation

    rows = [
        U("read both"),
        A(ToolCallBlock("", "read", {"path": "a"})),
        A(ToolCallBlock("", "read", {"path": "b"})),
        Entry(EntryKind.MESSAGE, Role.TOOL, (ToolResultBlock("", False, "A"),)),
        Entry(EntryKind.MESSAGE, Role.TOOL, (ToolResultBlock("", False, "B"),)),
        A(text="both read"),
    ]
    view = build_continuation(store, load(store, rows)).to_dict()
    pairs = [
        (b.get("id") or b["call_id"], b.get("text") or b["arguments"]["path"])
        for m in view["messages"]
        for b in m["content"]
        if b["type"] != "text"
    ]
    assert pairs == [
        ("unnamed-1-0", "a"),
        ("unnamed-2-0", "b"),
        ("unnamed-1-0", "A"),
        ("unnamed-2-0", "B"),
    ]


# ---------------------------------------------------------------- item 4: media


def _png_data_url(payload_bytes: int) -> tuple[str, int]:
    import base64

    raw = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * (payload_bytes // 256 + 1)
    raw = raw[:payload_bytes]
    return "data:image/png;base64," + base64.b64encode(raw).decode(), payload_bytes


def test_continue_request_image_becomes_a_stub(tmp_path):
    """Issue 15 item 4: an image on the request row vanished from the view (the request had
    no place for it). It travels as a media stub (type, decoded bytes, its block index), and
    counts in used_bytes."""
    from continuity.core.model import MediaBlock

    request = Entry(
        EntryKind.MESSAGE,
        Role.USER,
        (
            TextBlock("why does the chart look like this?"),
            MediaBlock("image/png", 48_213, "ab" * 32),
        ),
        is_request=True,
    )
    view = _continue(_home_with(tmp_path, [request, A(text="The y axis is logarithmic.")]))
    assert view["request"] == {
        "seq": 0,
        "actor": "user",
        "text": "why does the chart look like this?",
        "media": [{"type": "media", "media_type": "image/png", "bytes": 48_213, "block": 1}],
    }
    media = json.dumps(view["request"]["media"], separators=(",", ":"))
    text = json.dumps(view["request"]["text"], ensure_ascii=False)
    messages = json.dumps(view["messages"], separators=(",", ":"), ensure_ascii=False)
    assert view["used_bytes"] == len(media) + len(text.encode()) + len(messages.encode())


def test_continue_data_url_in_tool_result_becomes_a_stub(tmp_path):
    """Issue 15 item 4: a ``data:image/png;base64,…`` URL inside a tool result's text travelled
    as 120 KB of text. It becomes the stub ``[image/png 90480 B omitted]`` where it stood,
    and the row's stored size counts the stub, so the rows around it still fit."""
    url, size = _png_data_url(90_480)
    assert len(url) > 120_000
    rows = [
        U("take a screenshot"),
        A(call("c1", "screenshot")),
        T("c1", text=f"saved shot.png\n{url}\nend"),
        A(text="Here it is."),
    ]
    view = _continue(_home_with(tmp_path, rows), budget=12_000)
    results = [b for m in view["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert results == [
        {
            "type": "tool_result",
            "call_id": "c1",
            "is_error": False,
            "text": f"saved shot.png\n[image/png {size} B omitted]\nend c1",
        }
    ]
    assert [m["seq"] for m in view["messages"]] == [1, 2, 3]
    assert view["used_bytes"] < 1_000 and "base64" not in json.dumps(view)


# ---------------------------------------------------------------- item 1: after our compaction


def _export_session() -> list[Entry]:
    """Three exchanges; the first holds a 9 KB file read, so the view (12,498 bytes) is over
    a 12,000-byte budget while the last two exchanges (rows 4-11) fit beside a summary."""
    return [
        U("set up the nightly export job"),
        A(call("c1", "read", path="export.py")),
        T("c1", text="def export():\n" + "    pass  # body\n" * 500),
        A(text="Read export.py."),
        U("run the export dry run and show me the row counts"),
        A(call("c2", "bash", command="python export.py --dry-run")),
        T("c2", text="exported rows: 1204\n" + "row ok\n" * 250),
        A(text="The dry run wrote 1,204 rows."),
        U("why 1204 and not 1300?"),
        A(call("c3", "bash", command="grep -c 'date=None' export.log")),
        T("c3", text="96"),
        A(text="96 rows lack a date, so the export skips them."),
    ]


def test_compact_then_continue_carries_the_recent_exchanges_verbatim(tmp_path):
    """Issue 15 item 1: after `continuity compact` (extractive) the next `continue` held the
    summary, the request and 0 messages. Now the checkpoint summarises rows 0-3 only and the
    two most recent complete exchanges (rows 4-11: both tool calls with their results) travel
    verbatim, reused (not copied), nothing twice, no gap, within the 12,000-byte budget."""
    home = _home_with(tmp_path, _export_session())
    compact = runner.invoke(
        app,
        [
            "compact",
            "s1",
            "--summarizer",
            "extractive",
            "--budget",
            "12000",
            "--home",
            str(home),
            "--json",
        ],
    )
    assert compact.exit_code == 0, compact.output
    outcome = json.loads(compact.stdout)
    assert (outcome["status"], outcome["view_bytes"]) == ("compacted", 12_498)
    view = _continue(home, budget=12_000)
    assert [m["seq"] for m in view["messages"]] == [4, 5, 6, 7, 9, 10, 11]  # was []
    assert view["refusal"] is None and view["summary"]["covers_through_seq"] == 3
    assert view["request"] == {"seq": 8, "actor": "user", "text": "why 1204 and not 1300?"}
    assert outcome["kept_from_seq"] == 4 and outcome["checkpoint"]["covers_through_seq"] == 3
    assert outcome["checkpoint"]["first_kept_entry_id"] == outcome["checkpoint"]["entry_id"]
    assert "Rows #0–#3 summarized" in outcome["checkpoint"]["summary"]
    assert (view["gaps"], view["copied"], view["clipped"]) == ([], False, False)
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        from continuity.core.codec import message_view

        stored = {
            e.seq: message_view(e.seq, e.role.value, e.blocks, False)
            for e in store.entries("s1", limit=100)
        }
    assert all(m == stored[m["seq"]] for m in view["messages"]), "not verbatim"
    results = [
        b["text"] for m in view["messages"] for b in m["content"] if b["type"] == "tool_result"
    ]
    assert results == ["exported rows: 1204\n" + "row ok\n" * 250 + " c2", "96 c3"]
    assert view["used_bytes"] == 3_616 and view["used_bytes"] <= view["budget_bytes"]


def test_compact_at_a_small_budget_keeps_the_newest_rows_the_summary_left_room_for(tmp_path):
    """Issue 15 item 1, found by a review on a real session (Claude Code 5c0375b4): at
    ``--budget 3000`` the checkpoint reserved half the budget for its summary, kept no row,
    and the next continuation used 1,706 of 3,000 bytes with ``messages: []``, the final
    834-byte answer only as summary prose. The extractive summary came out smaller than its
    share, so the split moves back by what it left: the final answer (row 52) travels
    verbatim, the summary covers through 51, within the budget, every row once."""
    from tests.paths import SHARED_DATA

    home = tmp_path / "ws"
    source = SHARED_DATA / "claude-code" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    done = runner.invoke(app, ["import", str(source), "--home", str(home)])
    assert done.exit_code == 0, done.output
    compact = runner.invoke(
        app,
        [
            "compact",
            "5c0375b4",
            "--summarizer",
            "extractive",
            "--budget",
            "3000",
            "--home",
            str(home),
            "--json",
        ],
    )
    assert compact.exit_code == 0, compact.output
    outcome = json.loads(compact.stdout)
    assert (outcome["status"], outcome["kept_from_seq"]) == ("compacted", 52)
    assert outcome["checkpoint"]["covers_through_seq"] == 51
    view = _continue(home, key="5c0375b4", budget=3000)
    assert [m["seq"] for m in view["messages"]] == [52]  # was []
    assert view["summary"]["covers_through_seq"] == 51 and view["gaps"] == []
    # 2,591 before issue 39: the summary now also keeps the session's errors (resolved or not)
    assert view["used_bytes"] == 2_635 and view["used_bytes"] <= 3_000
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        from continuity.core.codec import message_view

        (row,) = store.entries_by_seq("5c0375b4-57a5-4f26-b12d-d022ee4e51b7", [52])
        stored = message_view(row.seq, row.role.value, row.blocks, True)
    assert view["messages"][0] == stored, "not verbatim"


def test_parallel_results_follow_their_calls_order(tmp_path):
    """Issue 45 item 4d: pi writes the results of parallel calls as they complete (c, a, b
    here); the continuation gives them in the calls' order (a, b, c), each row whole, and a
    row answering two calls lists them in call order too. Later turns start a new order."""
    rows = [
        U("look at the three files"),
        A(call("a", path="a.py"), call("b", path="b.py"), call("c", path="c.py")),
        T("c"),
        T("a"),
        T("b"),
        A(call("d", path="d.py"), call("e", path="e.py")),
        T("e", "d"),
        A(text="All read."),
    ]
    d = _continue(_home_with(tmp_path, rows))
    order = [
        b["call_id"] if b["type"] == "tool_result" else b.get("id") or b["type"]
        for m in d["messages"]
        for b in m["content"]
    ]
    assert order == ["a", "b", "c", "a", "b", "c", "d", "e", "d", "e", "text"]
    assert [m["seq"] for m in d["messages"]] == [1, 3, 4, 2, 5, 6, 7]
