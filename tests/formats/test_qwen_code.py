"""Qwen Code chat files (issue 42 item 2), on the file qwen 0.24.4 wrote when run offline
(``tests/fixtures/qwen_code/README.md``): two turns, each a shell call paired with its result
and an answer; the project and version from the records; importing twice adds nothing; a
rewound branch leaves the view; a ``chat_compression`` is a compaction; and the bug vectors
every reader gets (a half-written last line, bad UTF-8, an unknown type counted as opaque)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from continuity.continuation.view import build_continuation
from continuity.formats.importer import import_file, import_paths
from tests.formats.test_gemini_cli import conversation

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "qwen_code"
SID = "2ecab5a2-3075-491a-9bc7-6ff7d2093815"
FILE = FIXTURES / "projects" / "-home-dev-project" / "chats" / f"{SID}.jsonl"
CALLS = ["call_5a94d8caf227432cb822", "call_4c394a01dc744413a160"]
ANSWER = "Fake model answer: the command ran."
RESULT = (
    "← Command: echo continuity-e2e-tool-ran\nDirectory: (root)\nOutput: continuity-e2e-tool-ran\n"
    "Error: (none)\nExit Code: 0\nSignal: (none)\nProcess Group PGID: (none)"
)


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    """A copy of the recorded file (tests change it as Qwen Code would)."""
    path = tmp_path / "chats" / FILE.name
    path.parent.mkdir()
    shutil.copy(FILE, path)
    return path


def test_real_session_imports_with_its_calls_paired(sqlite_store, tmp_path: Path) -> None:
    report = import_paths(sqlite_store, [FIXTURES / "projects"], home=tmp_path / "ws")
    (f,) = report.files
    assert (f.harness, f.session_key, f.version, f.opaque, f.errors, f.warnings) == (
        "qwen-code",
        SID,
        "0.24.4",
        0,
        [],
        [],
    )
    assert (f.lines_read, f.imported) == (16, 16)
    assert f.types["system/ui_telemetry"] == 6
    turn = [
        ("assistant", "message", "→ run_shell_command"),
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
    assert (session.harness, session.project) == ("qwen-code", "/home/dev/project")
    view = build_continuation(sqlite_store, SID).to_dict()
    assert view["request"]["text"] == "And once more"
    blocks = [b for m in view["messages"] for b in m["content"]]
    assert [b["id"] for b in blocks if b["type"] == "tool_call"] == CALLS
    assert [b["call_id"] for b in blocks if b["type"] == "tool_result"] == CALLS
    assert [r.status.value for r in sqlite_store.runs(SID)] == ["finished", "finished"]


def test_importing_twice_adds_nothing(sqlite_store, tmp_path: Path) -> None:
    import_paths(sqlite_store, [FIXTURES / "projects"], home=tmp_path / "ws")
    rows = len(list(sqlite_store.entries(SID)))
    again = import_paths(sqlite_store, [FIXTURES / "projects"], home=tmp_path / "ws")
    assert sum(f.imported for f in again.files) == 0
    assert len(list(sqlite_store.entries(SID))) == rows == 16


def test_a_growing_file_imports_only_its_new_lines(sqlite_store, chat: Path) -> None:
    lines = FILE.read_bytes().splitlines(keepends=True)
    chat.write_bytes(b"".join(lines[:7]) + lines[7][:50])  # line 8, the answer, half written
    first = import_file(sqlite_store, chat)
    assert (first.errors, first.pending_tail_bytes, first.imported) == ([], 50, 7)
    chat.write_bytes(b"".join(lines))
    second = import_file(sqlite_store, chat)
    assert (second.errors, second.imported) == ([], 9)
    assert [t for _, _, t in conversation(sqlite_store, SID)].count(ANSWER) == 2


def test_bad_utf8_and_unknown_types_are_counted_never_dropped(sqlite_store, chat: Path) -> None:
    lines = FILE.read_bytes().splitlines(keepends=True)
    base = json.loads(lines[0])
    future = {**base, "uuid": "f1", "type": "goal", "message": None}
    bad = b'{"uuid":"b1","sessionId":"x","type":"user","message":"caf\xe9"}\n'
    chat.write_bytes(lines[0] + bad + json.dumps(future).encode() + b"\n" + b"".join(lines[1:]))
    report = import_file(sqlite_store, chat)
    assert [n for n, _ in report.errors] == [2]
    assert (report.opaque, report.types["goal"]) == (1, 1)
    assert len(list(sqlite_store.raw_lines(report.path))) == len(lines) + 2
    opaque = [e for e in sqlite_store.entries(SID) if e.kind.value == "opaque"]
    assert [e.native_id for e in opaque] == ["f1"]


def test_rewound_branch_leaves_the_view_and_compression_is_a_compaction(
    sqlite_store, tmp_path: Path
) -> None:
    """Qwen Code's rewind re-roots the ``parentUuid`` chain: the next record's parent is the
    record before the rewound turn, so that turn is off the leaf path (kept, not in view). A
    ``chat_compression`` record's summary is the first text of its ``compressedHistory``."""

    def rec(uuid: str, parent: str | None, kind: str, **extra: object) -> dict:
        return {
            "uuid": uuid,
            "parentUuid": parent,
            "sessionId": "q1",
            "timestamp": "2026-12-06T18:00:00Z",
            "type": kind,
            "cwd": "/home/dev/p",
            "version": "0.24.4",
            **extra,
        }

    def said(role: str, text: str) -> dict:
        return {"message": {"role": role, "parts": [{"text": text}]}}

    records = [
        rec("u1", None, "user", provenance="real_user", **said("user", "first")),
        rec("a1", "u1", "assistant", **said("model", "one")),
        rec("u2", "a1", "user", provenance="real_user", **said("user", "rewound")),
        rec("a2", "u2", "assistant", **said("model", "gone")),
        rec("r1", "a1", "system", subtype="rewind", systemPayload={}),
        rec(
            "c1",
            "r1",
            "system",
            subtype="chat_compression",
            systemPayload={
                "info": {"originalTokenCount": 900},
                "compressedHistory": [{"role": "user", "parts": [{"text": "## Goal\nship"}]}],
            },
        ),
        rec("u3", "c1", "user", provenance="real_user", **said("user", "again")),
    ]
    path = tmp_path / "q1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = import_file(sqlite_store, path)
    assert (report.harness, report.errors, report.opaque) == ("qwen-code", [], 0)
    rows = conversation(sqlite_store, "q1")
    assert ("user", "message", "rewound") not in rows
    assert rows[-2:] == [("user", "compaction", "## Goal\nship"), ("user", "message", "again")]
    compaction = next(e for e in sqlite_store.entries("q1") if e.compaction is not None)
    assert compaction.compaction.summary == "## Goal\nship"


def test_a_prompt_hooks_context_is_not_the_users_request(sqlite_store, tmp_path: Path) -> None:
    """Qwen Code records a UserPromptSubmit hook's ``additionalContext`` as the prompt's last
    part, wrapped in ``<qwen:user-prompt-submit-context>``: the request is the user's text
    alone (the raw line keeps the rest), as Qwen Code displays it."""
    lines = FILE.read_text().splitlines()
    first = json.loads(lines[0])
    first["message"]["parts"].append(
        {
            "text": "<qwen:user-prompt-submit-context>\n"
            "Recalled from continuity: the README names the tests\n"
            "</qwen:user-prompt-submit-context>"
        }
    )
    first["systemPayload"] = {
        "displayText": "List the files here",
        "hookContext": "Recalled from continuity: the README names the tests",
    }
    path = tmp_path / "chats" / FILE.name
    path.parent.mkdir()
    path.write_text("\n".join([json.dumps(first), *lines[1:8]]) + "\n")
    report = import_file(sqlite_store, path)
    assert (report.errors, report.opaque) == ([], 0)
    assert conversation(sqlite_store, SID)[0] == ("user", "message", "List the files here")
    raw = next(iter(sqlite_store.raw_lines(report.path)))
    assert b"Recalled from continuity" in raw.data
    view = build_continuation(sqlite_store, SID).to_dict()
    assert view["request"]["text"] == "List the files here"
