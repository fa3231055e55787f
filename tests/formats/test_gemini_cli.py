"""Gemini CLI chat files (issue 42 item 2), on the files gemini 0.61.0 wrote when run offline
(``tests/fixtures/gemini_cli/README.md``): the request, the shell call paired with its result,
the answer; the project from ``.project_root``; importing twice adds nothing; and the bug
vectors every reader gets (a half-written last line, bad UTF-8, an unknown record type counted
as opaque, never dropped)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from continuity.continuation.view import build_continuation
from continuity.formats.importer import import_file, import_paths

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini_cli"
CHATS = FIXTURES / "tmp" / "project" / "chats"
MAIN = CHATS / "session-2026-12-06T17-58-a8d780f4.jsonl"
SID = "a8d780f4-c1c0-4958-a706-69efc40b6b23"
CALL = "run_shell_command__call_3359c739c28e47e3a566"
REQUEST = "List the files here"
ANSWER = "Fake model answer: the command ran."


def conversation(store, key: str) -> list[tuple]:
    """The visible rows: (role, kind, text), a tool call or result as ``→ name`` / ``← text``."""
    out = []
    for e in store.entries(key):
        if not e.visible:
            continue
        text = e.text() or "".join(
            [f"→ {c.name}" for c in e.tool_calls()] + [f"← {r.text}" for r in e.tool_results()]
        )
        out.append((e.role.value, e.kind.value, text))
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of ``~/.gemini/tmp/project`` as gemini left it (tests change it)."""
    folder = tmp_path / "tmp" / "project"
    shutil.copytree(FIXTURES / "tmp" / "project", folder)
    return folder


def test_real_session_imports_with_its_call_paired(sqlite_store, tmp_path: Path) -> None:
    report = import_paths(sqlite_store, [FIXTURES], home=tmp_path / "ws")
    main = next(f for f in report.files if f.path.endswith(MAIN.name))
    assert (main.harness, main.session_key, main.opaque, main.errors) == (
        "gemini-cli",
        SID,
        0,
        [],
    )
    # 16 lines; line 7 also holds the call's result; three `$set` lines repeat the messages
    assert (main.lines_read, main.imported, main.duplicate) == (16, 19, 13)
    assert main.types["gemini/toolResult"] == 1
    assert main.types["user/functionResponse"] == 2  # the echo, and its copy in a `$set`
    assert conversation(sqlite_store, SID) == [
        ("user", "message", REQUEST),
        ("assistant", "message", "→ run_shell_command"),
        (
            "tool",
            "message",
            "← <untrusted_context>\nOutput: continuity-e2e-tool-ran\n"
            "Process Group PGID: 14509\n</untrusted_context>",
        ),
        ("assistant", "message", ANSWER),
        ("user", "message", "And once more"),
    ]
    session = sqlite_store.get_session(SID)
    assert (session.harness, session.project) == ("gemini-cli", "/home/dev/project")
    view = build_continuation(sqlite_store, SID).to_dict()
    assert view["request"]["text"] == "And once more"
    blocks = [b for m in view["messages"] for b in m["content"]]
    calls = [b for b in blocks if b["type"] == "tool_call"]
    results = [b for b in blocks if b["type"] == "tool_result"]
    assert [c["id"] for c in calls] == [r["call_id"] for r in results] == [CALL]
    assert calls[0]["name"] == "run_shell_command"
    assert calls[0]["arguments"] == {"command": "echo continuity-e2e-tool-ran"}
    assert sqlite_store.runs(SID)[0].status.value == "finished"


def test_session_context_is_context_not_a_request(sqlite_store, tmp_path: Path) -> None:
    import_paths(sqlite_store, [MAIN], home=tmp_path / "ws")
    context = [e for e in sqlite_store.entries(SID) if e.kind.value == "context"]
    assert context[0].native_id == "d04923d38bb0f6017037e74183378ef4"
    assert context[0].text().startswith("<session_context>")
    assert not any(e.is_request for e in context)


def test_importing_twice_adds_nothing(sqlite_store, tmp_path: Path) -> None:
    first = import_paths(sqlite_store, [FIXTURES], home=tmp_path / "ws")
    rows = {f.session_key: len(list(sqlite_store.entries(f.session_key))) for f in first.files}
    again = import_paths(sqlite_store, [FIXTURES], home=tmp_path / "ws")
    assert sum(f.imported for f in again.files) == 0
    assert {f.session_key: len(list(sqlite_store.entries(f.session_key))) for f in again.files} == (
        rows
    )


def test_a_growing_file_imports_only_its_new_lines(sqlite_store, project: Path) -> None:
    """A file Gemini CLI is still appending to: the first import stops at a half-written last
    line (a pending tail, no error); once the line is complete it imports, once."""
    path = project / "chats" / MAIN.name
    lines = MAIN.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:9]) + lines[9][:40])  # line 10, the answer, half written
    first = import_file(sqlite_store, path)
    assert (first.errors, first.pending_tail_bytes) == ([], 40)
    assert ANSWER not in [t for _, _, t in conversation(sqlite_store, SID)]
    path.write_bytes(b"".join(lines))
    second = import_file(sqlite_store, path)
    assert second.errors == []
    texts = [t for _, _, t in conversation(sqlite_store, SID)]
    assert texts.count(ANSWER) == 1
    assert texts[-1] == "And once more"


def test_bad_utf8_and_unknown_types_are_counted_never_dropped(sqlite_store, project: Path) -> None:
    path = project / "chats" / MAIN.name
    lines = MAIN.read_bytes().splitlines(keepends=True)
    future = json.dumps(
        {"id": "f1", "timestamp": "2026-12-06T18:00:00Z", "type": "plan", "content": "x"}
    )
    bad = b'{"id":"b1","type":"user","content":"caf\xe9"}\n'
    path.write_bytes(b"".join(lines[:3]) + bad + future.encode() + b"\n" + b"".join(lines[3:]))
    report = import_file(sqlite_store, path)
    assert [n for n, _ in report.errors] == [4]
    assert report.opaque == 1 and report.types["plan"] == 1
    assert len(list(sqlite_store.raw_lines(report.path))) == len(lines) + 2
    opaque = [e for e in sqlite_store.entries(SID) if e.kind.value == "opaque"]
    assert [(e.native_id, e.visible) for e in opaque] == [("f1", False)]
    assert conversation(sqlite_store, SID)[0] == ("user", "message", REQUEST)


def test_a_result_only_in_a_user_message_is_the_tool_row(sqlite_store, tmp_path: Path) -> None:
    """A file whose ``gemini`` record holds the call without its result (an older CLI, or a
    run cut short) and whose user message holds the response: that message is the tool row."""
    path = tmp_path / "chats" / "session-x.jsonl"
    path.parent.mkdir()
    records = [
        {"sessionId": "s1", "projectHash": "h", "startTime": "2026-12-06T18:00:00Z"},
        {"id": "u1", "timestamp": "2026-12-06T18:00:01Z", "type": "user", "content": "go"},
        {
            "id": "g1",
            "timestamp": "2026-12-06T18:00:02Z",
            "type": "gemini",
            "content": "",
            "toolCalls": [{"id": "c1", "name": "ls", "args": {}, "status": "executing"}],
        },
        {
            "id": "u2",
            "timestamp": "2026-12-06T18:00:03Z",
            "type": "user",
            "content": [
                {"functionResponse": {"id": "c1", "name": "ls", "response": {"output": "a.py"}}}
            ],
        },
        {"$rewindTo": "u2"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = import_file(sqlite_store, path)
    assert (report.harness, report.errors, report.opaque) == ("gemini-cli", [], 0)
    assert report.types["$rewindTo"] == 1
    assert conversation(sqlite_store, "s1") == [
        ("user", "message", "go"),
        ("assistant", "message", "→ ls"),
        ("tool", "message", "← a.py"),
    ]
