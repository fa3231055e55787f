"""GitHub Copilot CLI session state (issue 42 item 2), on the events copilot 1.0.102 wrote when
run offline (``tests/fixtures/copilot_cli/README.md``): two turns, each a ``bash`` call paired
with its result and an answer; the project, version and session from ``session.start``;
importing twice adds nothing; a compaction; and the bug vectors every reader gets (a
half-written last line, bad UTF-8, an event type the schema does not name counted as opaque)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from continuity.continuation.view import build_continuation
from continuity.formats.importer import import_file, import_paths
from tests.formats.test_gemini_cli import conversation

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "copilot_cli"
SID = "58525cc8-39e8-4bf9-9685-da918eed942a"
FILE = FIXTURES / "session-state" / SID / "events.jsonl"
CALLS = ["call_a10c7e7fa90943eda916", "call_efe7aca7c51f4f10b33c"]
ANSWER = "Fake model answer: the command ran."
RESULT = "← continuity-e2e-tool-ran\n<shellId: 0 completed with exit code 0>"


@pytest.fixture
def events(tmp_path: Path) -> Path:
    """A copy of the recorded file (tests change it as the CLI would)."""
    path = tmp_path / SID / "events.jsonl"
    path.parent.mkdir()
    shutil.copy(FILE, path)
    return path


def test_real_session_imports_with_its_calls_paired(sqlite_store, tmp_path: Path) -> None:
    report = import_paths(sqlite_store, [FIXTURES / "session-state"], home=tmp_path / "ws")
    (f,) = report.files
    assert (f.harness, f.session_key, f.version, f.opaque, f.errors, f.warnings) == (
        "copilot-cli",
        SID,
        "1.0.102",
        0,
        [],
        [],
    )
    assert (f.lines_read, f.imported) == (27, 27)
    assert (f.types["assistant.turn_start"], f.types["session.usage_record"]) == (4, 4)
    turn = [
        ("assistant", "message", "→ bash"),
        ("tool", "message", RESULT),
        ("assistant", "message", ANSWER),
    ]
    assert conversation(sqlite_store, SID) == [
        ("user", "message", "List the files here"),
        *turn,
        ("user", "message", "And once more"),
        *turn,
    ]
    session = sqlite_store.get_session(SID)
    assert (session.harness, session.project) == ("copilot-cli", "/home/dev/project")
    system = [e for e in sqlite_store.entries(SID) if e.kind.value == "context"]
    assert len(system) == 1 and system[0].text().startswith("You are the GitHub Copilot CLI")
    view = build_continuation(sqlite_store, SID).to_dict()
    assert view["request"]["text"] == "And once more"
    blocks = [b for m in view["messages"] for b in m["content"]]
    assert [b["id"] for b in blocks if b["type"] == "tool_call"] == CALLS
    assert [b["call_id"] for b in blocks if b["type"] == "tool_result"] == CALLS
    first_call = next(b for b in blocks if b["type"] == "tool_call")
    assert first_call["arguments"] == {"command": "echo continuity-e2e-tool-ran"}
    assert [r.status.value for r in sqlite_store.runs(SID)] == ["finished", "finished"]


def test_importing_twice_adds_nothing(sqlite_store, tmp_path: Path) -> None:
    import_paths(sqlite_store, [FIXTURES], home=tmp_path / "ws")
    again = import_paths(sqlite_store, [FIXTURES], home=tmp_path / "ws")
    assert sum(f.imported for f in again.files) == 0
    assert len(list(sqlite_store.entries(SID))) == 27


def test_a_growing_file_imports_only_its_new_lines(sqlite_store, events: Path) -> None:
    lines = FILE.read_bytes().splitlines(keepends=True)
    events.write_bytes(b"".join(lines[:10]) + lines[10][:60])  # line 11, the answer, half written
    first = import_file(sqlite_store, events)
    assert (first.errors, first.pending_tail_bytes, first.imported) == ([], 60, 10)
    events.write_bytes(b"".join(lines))
    second = import_file(sqlite_store, events)
    assert (second.errors, second.imported) == ([], 17)
    assert [t for _, _, t in conversation(sqlite_store, SID)].count(ANSWER) == 2


def test_bad_utf8_and_unknown_types_are_counted_never_dropped(sqlite_store, events: Path) -> None:
    lines = FILE.read_bytes().splitlines(keepends=True)
    future = {"type": "session.hologram", "data": {}, "id": "f1", "parentId": None}
    bad = b'{"type":"user.message","data":{"content":"caf\xe9"},"id":"b1","parentId":null}\n'
    events.write_bytes(lines[0] + bad + json.dumps(future).encode() + b"\n" + b"".join(lines[1:]))
    report = import_file(sqlite_store, events)
    assert [n for n, _ in report.errors] == [2]
    assert (report.opaque, report.types["session.hologram"]) == (1, 1)
    assert len(list(sqlite_store.raw_lines(report.path))) == len(lines) + 2
    opaque = [e for e in sqlite_store.entries(SID) if e.kind.value == "opaque"]
    assert [e.native_id for e in opaque] == ["f1"]


def test_compaction_and_failed_tool(sqlite_store, events: Path) -> None:
    """``session.compaction_complete`` with its summary is a compaction; a tool whose
    ``success`` is false is an error result with its ``error.message``."""
    lines = FILE.read_bytes().splitlines(keepends=True)
    extra = [
        {
            "type": "session.compaction_complete",
            "data": {"success": True, "summaryContent": "## Goal\nlist files", "trigger": "auto"},
            "id": "c1",
            "timestamp": "2026-12-06T18:21:00Z",
            "parentId": None,
        },
        {
            "type": "assistant.message",
            "data": {"content": "", "toolRequests": [{"toolCallId": "t9", "name": "view"}]},
            "id": "a9",
            "timestamp": "2026-12-06T18:21:01Z",
            "parentId": "c1",
        },
        {
            "type": "tool.execution_complete",
            "data": {"toolCallId": "t9", "success": False, "error": {"message": "no such file"}},
            "id": "r9",
            "timestamp": "2026-12-06T18:21:02Z",
            "parentId": "a9",
        },
    ]
    events.write_bytes(b"".join(lines) + b"".join(json.dumps(e).encode() + b"\n" for e in extra))
    report = import_file(sqlite_store, events)
    assert report.errors == []
    rows = {e.native_id: e for e in sqlite_store.entries(SID)}
    assert rows["c1"].compaction is not None
    assert (rows["c1"].compaction.summary, rows["c1"].compaction.trigger) == (
        "## Goal\nlist files",
        "auto",
    )
    (result,) = rows["r9"].tool_results()
    assert (result.call_id, result.is_error, result.text) == ("t9", True, "no such file")


def test_distinct_session_folders_with_one_inner_id_stay_distinct(
    sqlite_store, tmp_path: Path
) -> None:
    """Fresh-user review of issue 42, defect 3: 8 ``session-state/<uuid>/events.jsonl`` files
    carrying the same inner session id were merged into one key ``<id>/events`` (the suffix
    was the file stem, always ``events``). Each is now its own session, told apart by its
    folder; a file whose first line is lost is keyed by its folder, not ``events``."""
    lines = FILE.read_bytes().splitlines(keepends=True)
    folders = [f"0000000{i}-aaaa-4bbb-8ccc-dddddddddddd" for i in range(8)]
    root = tmp_path / "session-state"
    for i, folder in enumerate(folders):
        path = root / folder / "events.jsonl"
        path.parent.mkdir(parents=True)
        body = lines[1:] if i == 7 else lines[: len(lines) - i]  # each a different length
        path.write_bytes(b"".join(body))
    report = import_paths(sqlite_store, [root], home=tmp_path / "ws")
    keys = sorted(str(f.session_key) for f in report.files)
    assert keys == sorted([SID] + [f"{SID}/{f}" for f in folders[1:7]] + [folders[7]])
