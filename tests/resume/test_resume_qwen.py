"""Where and what ``resume --in qwen-code`` writes (issue 42 item 3): Qwen Code's runtime folder
(``$QWEN_RUNTIME_DIR``, else ``$QWEN_HOME``, else ``~/.qwen``), the project folder named from its
real path as Qwen Code names it, and its own records: one ``parentUuid`` chain, the preface first
with the ``continuityResume`` marker, one ``tool_result`` record per result (an error's
``status`` and ``response.error``). The real qwen opens such copies in
``tests/e2e/test_qwen_live.py``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from continuity.resume import qwen_code
from continuity.resume.convert import Call, Result, Resumed, Source, Turn


def test_the_runtime_folder_follows_qwen_runtime_dir_then_qwen_home(tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path)}
    assert qwen_code.harness_home(home) == tmp_path / ".qwen"
    assert qwen_code.harness_home({**home, "QWEN_HOME": "/q"}) == Path("/q")
    both = {**home, "QWEN_HOME": "/q", "QWEN_RUNTIME_DIR": "/r"}
    assert qwen_code.harness_home(both) == Path("/r")
    assert qwen_code.harness_home(both, tmp_path / "t") == tmp_path / "t"


def test_the_project_folder_is_the_real_path_with_non_alphanumerics_as_dashes(
    tmp_path: Path,
) -> None:
    real = tmp_path / "my_app.v2"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    want = "-" + str(real)[1:].replace("/", "-").replace("_", "-").replace(".", "-")
    assert qwen_code.project_folder(Path("/h"), str(link)) == Path("/h/projects") / want / "chats"


def test_records_chain_from_the_preface_and_answer_each_call_in_its_own_record(
    tmp_path: Path,
) -> None:
    source = Source("src-1", "codex", str(tmp_path), "/s/rollout.jsonl")
    turns = [
        Turn("user", ["first request"], request=True),
        Turn(
            "assistant",
            ["look", Call("call_a", "run_shell_command", {"command": "ls"}, "exec_command")],
        ),
        Turn("results", [Result("call_a", "run_shell_command", "README.md")]),
        Turn("assistant", [Call("call_b", "apply_patch", {"input": "x"}, "apply_patch")]),
        Turn("results", [Result("call_b", "apply_patch", "no result", True, True)]),
    ]
    lines = qwen_code.render(
        Resumed(source, "This session is a copy", None, turns),
        "5f0c6d2e-0000-4000-8000-000000000001",
        datetime(2026, 12, 6, 18, 0, tzinfo=UTC),
    )
    assert [(r["type"], r.get("provenance")) for r in lines] == [
        ("user", None),
        ("user", "real_user"),
        ("assistant", None),
        ("tool_result", None),
        ("assistant", None),
        ("tool_result", None),
    ]
    assert [r["parentUuid"] for r in lines] == [None, *(r["uuid"] for r in lines[:-1])]
    assert {r["cwd"] for r in lines} == {str(tmp_path)}
    assert lines[0]["continuityResume"] == {
        "session": "src-1",
        "harness": "codex",
        "path": "/s/rollout.jsonl",
    }
    assert all("continuityResume" not in r for r in lines[1:])
    assert lines[1]["timestamp"] == "2026-12-06T18:00:00.002Z"
    assert lines[2]["message"] == {
        "role": "model",
        "parts": [
            {"text": "look"},
            {
                "functionCall": {
                    "id": "call_a",
                    "name": "run_shell_command",
                    "args": {"command": "ls"},
                }
            },
        ],
    }
    assert lines[3]["message"]["parts"][0]["functionResponse"] == {
        "id": "call_a",
        "name": "run_shell_command",
        "response": {"output": "README.md"},
    }
    assert lines[3]["toolCallResult"] == {"callId": "call_a", "status": "success"}
    assert lines[5]["message"]["parts"][0]["functionResponse"]["response"] == {"error": "no result"}
    assert lines[5]["toolCallResult"]["status"] == "error"
    assert qwen_code.headless("s", Path("x"), "p") == ["qwen", "--resume", "s", "-p"]
