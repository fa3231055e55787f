"""Factory Droid sessions (issue 42 item 2), on the file droid 0.215.0 wrote when run offline
(``tests/fixtures/factory_droid/README.md``): the request, the ``Execute`` call paired with its
result, the answer; Droid's injected reminder as context; importing twice adds nothing; and the
bug vectors every reader gets (a half-written last line, bad UTF-8, an unknown record type
counted as opaque)."""

from __future__ import annotations

import json
from pathlib import Path

from continuity.continuation.view import build_continuation
from continuity.formats.importer import import_file, import_paths
from tests.formats.test_gemini_cli import conversation

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "factory_droid"
SID = "c04adb60-2d0d-4ed4-896e-f9aa272cc6f0"
FILE = FIXTURES / "sessions" / "-home-dev-project" / f"{SID}.jsonl"
ANSWER = "Fake model answer: the command ran."


def test_real_session_imports_with_its_call_paired(sqlite_store, tmp_path: Path) -> None:
    report = import_paths(sqlite_store, [FIXTURES], home=tmp_path / "ws")
    (f,) = report.files
    assert (f.harness, f.session_key, f.version, f.opaque, f.errors, f.warnings) == (
        "factory-droid",
        SID,
        "2",
        0,
        [],
        [],
    )
    assert (f.lines_read, f.imported) == (7, 7)
    assert conversation(sqlite_store, SID) == [
        ("user", "message", "List the files here"),
        ("assistant", "message", "→ Execute"),
        ("tool", "message", "← continuity-e2e-tool-ran\n\n\n[Process exited with code 0]"),
        ("assistant", "message", ANSWER),
    ]
    session = sqlite_store.get_session(SID)
    assert (session.harness, session.project, session.title) == (
        "factory-droid",
        "/home/dev/project",
        "List the files here",
    )
    (context,) = [e for e in sqlite_store.entries(SID) if e.kind.value == "context"]
    assert context.native_id.startswith("context-") and "<system-reminder>" in context.text()
    view = build_continuation(sqlite_store, SID).to_dict()
    assert view["request"]["text"] == "List the files here"
    blocks = [b for m in view["messages"] for b in m["content"]]
    (call,) = [b for b in blocks if b["type"] == "tool_call"]
    (result,) = [b for b in blocks if b["type"] == "tool_result"]
    assert call["id"] == result["call_id"] == "call_0a81228f547e4ee1af92"
    assert call["arguments"]["command"] == "echo continuity-e2e-tool-ran"
    assert [r.status.value for r in sqlite_store.runs(SID)] == ["finished"]


def test_importing_twice_adds_nothing(sqlite_store, tmp_path: Path) -> None:
    import_paths(sqlite_store, [FIXTURES], home=tmp_path / "ws")
    again = import_paths(sqlite_store, [FIXTURES], home=tmp_path / "ws")
    assert sum(f.imported for f in again.files) == 0
    assert len(list(sqlite_store.entries(SID))) == 7


def test_bad_lines_tail_and_unknown_types_are_counted(sqlite_store, tmp_path: Path) -> None:
    path = tmp_path / f"{SID}.jsonl"
    lines = FILE.read_bytes().splitlines(keepends=True)
    future = json.dumps({"type": "mission_state", "id": "m1"}).encode() + b"\n"
    bad = b'{"type":"message","id":"b1","message":{"role":"user","content":"caf\xe9"}}\n'
    path.write_bytes(lines[0] + bad + future + b"".join(lines[1:-1]) + lines[-1][:20])
    report = import_file(sqlite_store, path)
    assert [n for n, _ in report.errors] == [2]
    assert (report.opaque, report.types["mission_state"], report.pending_tail_bytes) == (1, 1, 20)
    assert len(list(sqlite_store.raw_lines(report.path))) == len(lines) + 1
    path.write_bytes(path.read_bytes()[:-20] + lines[-1])
    again = import_file(sqlite_store, path)
    assert (again.errors, again.imported) == ([], 1)
