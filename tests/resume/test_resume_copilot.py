"""The GitHub Copilot CLI writer of ``resume`` (issue 42 item 3): where the copy goes
(``$COPILOT_HOME`` or ``~/.copilot``, a folder per session), its events chained by
``parentId``, every call answered by one ``tool.execution_complete`` right after its
``assistant.message`` (an unanswered call by the "effects unknown" error), the preface and the
marker on ``session.start``, and the printed commands. The real CLI opening it:
tests/e2e/test_copilot_live.py."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from continuity.resume import copilot_cli, resume_session
from tests.resume.test_resume import _rows, _session


def test_copilot_copy_is_a_chain_of_events_with_every_call_paired(
    sqlite_store, tmp_path: Path, monkeypatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "cp"))
    key = _session(sqlite_store, project, _rows())
    written = resume_session(sqlite_store, key, "copilot-cli")
    sid = written.session_id
    assert uuid.UUID(sid).version == 4
    assert written.path == tmp_path / "cp" / "session-state" / sid / "events.jsonl"
    assert (written.command, written.headless) == (
        ["copilot", "--resume", sid],
        ["copilot", "--resume", sid, "-p"],
    )
    assert written.to_dict()["headless"] == f"cd {project} && copilot --resume {sid} -p"
    assert written.env == {}  # COPILOT_HOME came from the environment, as the CLI reads it
    events = [json.loads(line) for line in written.path.read_text().splitlines()]
    assert [e["parentId"] for e in events] == [None] + [e["id"] for e in events[:-1]]
    start = events[0]
    assert start["type"] == "session.start"
    assert start["data"]["sessionId"] == sid and start["data"]["context"] == {"cwd": str(project)}
    assert start["continuityResume"]["session"] == key
    assert start["continuityResume"]["fingerprint"]
    assert events[1]["type"] == "user.message"
    assert events[1]["data"]["content"].startswith("This session is a copy written by")
    kinds = [e["type"] for e in events[2:]]
    assert kinds == [
        "user.message",
        "assistant.message",
        "tool.execution_complete",
        "assistant.message",
        "tool.execution_complete",
    ]
    assert events[2]["data"]["content"] == "Now add the authentication middleware"
    shell, patch = events[3]["data"]["toolRequests"][0], events[5]["data"]["toolRequests"][0]
    assert (shell["name"], shell["arguments"], shell["type"]) == (
        "bash",
        {"command": "pytest -q"},
        "function",
    )
    assert events[4]["data"] == {
        "toolCallId": shell["toolCallId"],
        "success": True,
        "result": {"content": events[4]["data"]["result"]["content"]},
    }
    assert events[4]["data"]["result"]["content"].startswith("3 passed")
    assert patch["name"] == "apply_patch"
    assert events[6]["data"]["toolCallId"] == patch["toolCallId"]
    assert events[6]["data"]["success"] is False
    assert "no recorded result" in events[6]["data"]["error"]["message"]


def test_target_home_is_named_in_the_printed_commands(sqlite_store, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    key = _session(sqlite_store, project, _rows())
    written = resume_session(sqlite_store, key, "copilot-cli", target_home=tmp_path / "elsewhere")
    assert written.path.parent.parent == tmp_path / "elsewhere" / "session-state"
    assert written.env == {"COPILOT_HOME": str(tmp_path / "elsewhere")}
    assert written.to_dict()["headless"] == (
        f"cd {project} && COPILOT_HOME={tmp_path / 'elsewhere'} copilot --resume "
        f"{written.session_id} -p"
    )


def test_home_defaults_to_dot_copilot_and_a_copy_is_found_by_its_folder(tmp_path: Path) -> None:
    assert copilot_cli.harness_home({"HOME": str(tmp_path)}) == tmp_path / ".copilot"
    sid = "a8d780f4-c1c0-4958-a706-69efc40b6b23"
    path = tmp_path / "session-state" / sid / "events.jsonl"
    assert copilot_cli.named(path, sid)
    assert not copilot_cli.named(path, "b" + sid[1:])
    assert not copilot_cli.named(path.with_name("other.jsonl"), sid)
