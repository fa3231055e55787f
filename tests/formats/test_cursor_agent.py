"""Cursor agent transcripts (issue 42 item 2), on a synthetic fixture written from the format's
public reports (``tests/fixtures/cursor_agent/README.md``: Cursor cannot run here): the
request without its ``<user_query>`` tags, thinking, text and a call; ``turn_ended`` ending
runs; a subagent keyed under its session; importing twice adds nothing; bad lines counted."""

from __future__ import annotations

import json
from pathlib import Path

from continuity.formats.importer import import_file, import_paths
from tests.formats.test_gemini_cli import conversation

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cursor_agent"
SID = "7d1c5e0a-4b2f-4c3d-9e8f-0a1b2c3d4e5f"
FILE = FIXTURES / "projects" / "home-dev-project" / "agent-transcripts" / SID / f"{SID}.jsonl"


def test_transcript_imports_with_runs_and_subagent(sqlite_store, tmp_path: Path) -> None:
    report = import_paths(sqlite_store, [FIXTURES], home=tmp_path / "ws")
    by_key = {f.session_key: f for f in report.files}
    assert set(by_key) == {SID, f"{SID}/a1b2c3"}
    main = by_key[SID]
    assert (main.harness, main.imported, main.opaque, main.errors, main.warnings) == (
        "cursor-agent",
        6,
        0,
        [],
        [],
    )
    assert conversation(sqlite_store, SID) == [
        ("user", "message", "List the files here"),
        ("assistant", "message", "Listing the folder."),
        ("assistant", "message", "The folder holds README.md."),
        ("user", "message", "And once more"),
    ]
    (call,) = [c for e in sqlite_store.entries(SID) for c in e.tool_calls()]
    assert (call.id, call.name, call.arguments["command"]) == ("cursor-2-2", "Shell", "ls")
    # the format records no tool results, so a run with a call is interrupted by the general
    # rule (formats/runs) even when its turn_ended says success; the second was aborted
    assert [r.status.value for r in sqlite_store.runs(SID)] == ["interrupted", "interrupted"]
    (sub_call,) = [c for e in sqlite_store.entries(f"{SID}/a1b2c3") for c in e.tool_calls()]
    assert (sub_call.id, sub_call.name) == ("toolu_s1", "Glob")


def test_importing_twice_adds_nothing(sqlite_store, tmp_path: Path) -> None:
    import_paths(sqlite_store, [FIXTURES], home=tmp_path / "ws")
    again = import_paths(sqlite_store, [FIXTURES], home=tmp_path / "ws")
    assert sum(f.imported for f in again.files) == 0
    assert len(list(sqlite_store.entries(SID))) == 6


def test_bad_lines_and_unknown_records_are_counted(sqlite_store, tmp_path: Path) -> None:
    path = tmp_path / SID / f"{SID}.jsonl"
    path.parent.mkdir()
    lines = FILE.read_bytes().splitlines(keepends=True)
    future = json.dumps({"role": "system", "message": {"content": "x"}}).encode() + b"\n"
    bad = b'{"role":"user","message":{"content":"caf\xe9"}}\n'
    path.write_bytes(b"".join(lines[:2]) + bad + future + b"".join(lines[2:]) + lines[0][:30])
    report = import_file(sqlite_store, path)
    assert [n for n, _ in report.errors] == [3]
    assert (report.opaque, report.types["system"], report.pending_tail_bytes) == (1, 1, 30)
    assert len(list(sqlite_store.raw_lines(report.path))) == len(lines) + 2
