"""GitHub Copilot CLI's hooks (issue 42 item 3): ``hooks install copilot-cli`` writes our own
``continuity.json`` into its user hooks folder (five camelCase events, seconds) and our MCP
server into the ``mcp-config.json`` beside it; uninstall deletes the file (and the folder it
made) and gives the MCP file's bytes back; the adapters read its camelCase payloads and answer
a flat ``additionalContext``. The real CLI runs them in ``tests/e2e/test_copilot_live.py``."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from continuity.core.errors import InputError, InstallIncomplete
from continuity.daemon.hooks import adapters, install


def test_install_writes_our_file_and_the_mcp_server_uninstall_restores(tmp_path: Path) -> None:
    home = tmp_path / ".copilot"
    home.mkdir()
    mcp = home / "mcp-config.json"
    original = b'{\n    "mcpServers": {"docs": {"type": "local", "command": "docs-mcp"}}\n}\n'
    mcp.write_bytes(original)
    hooks = home / "hooks" / "continuity.json"
    done = install.install("copilot-cli", hooks, tmp_path / "ws")
    assert (done.action, done.backup) == ("installed", None)  # install created the file
    data = json.loads(hooks.read_text())

    def after_code(command: str) -> list[str]:
        words = shlex.split(command)
        return words[words.index("-c") + 2 :]

    got = {
        event: [
            (h["type"], h["timeout"], after_code(h["command"])) for g in groups for h in g["hooks"]
        ]
        for event, groups in data["hooks"].items()
    }
    assert got == {
        "sessionStart": [("command", 10, ["session-start", "--harness", "copilot-cli"])],
        "userPromptSubmitted": [("command", 5, ["user-prompt-submit", "--harness", "copilot-cli"])],
        "preCompact": [("command", 10, ["pre-compaction", "--harness", "copilot-cli"])],
        "agentStop": [("command", 5, ["stop", "--harness", "copilot-cli"])],
        "sessionEnd": [
            ("command", 3, ["session-end", "--harness", "copilot-cli", "--timeout", "2.5"])
        ],
    }
    assert data["hooks"]["sessionStart"][0]["hooks"][0]["command"].startswith(
        f"CONTINUITY_HOME={tmp_path / 'ws'} "
    )
    servers = json.loads(mcp.read_text())["mcpServers"]
    assert servers["docs"] == {"type": "local", "command": "docs-mcp"}
    ours = servers["continuity"]
    assert (ours["type"], ours["tools"]) == ("local", ["*"])
    assert ours["env"] == {"CONTINUITY_HOME": str(tmp_path / "ws")}
    assert done.mcp is not None and done.mcp.where == mcp
    assert set(done.mcp.tools.values()) == {f"continuity-{t}" for t in install.MCP_TOOLS}
    assert mcp.with_name("mcp-config.json.continuity-backup").read_bytes() == original
    assert install.install("copilot-cli", hooks, tmp_path / "ws").action == "unchanged"
    gone = install.uninstall("copilot-cli", hooks)
    assert (gone.action, gone.file_kept) == ("removed", False)
    assert mcp.read_bytes() == original
    assert sorted(p.name for p in home.iterdir()) == ["mcp-config.json"]  # hooks/ too is gone


def test_a_user_hooks_folder_is_kept_and_a_new_mcp_file_is_deleted(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks" / "continuity.json"
    hooks.parent.mkdir()
    (hooks.parent / "mine.json").write_text('{"hooks": {}}')
    install.install("copilot-cli", hooks, tmp_path / "ws")
    assert (tmp_path / "mcp-config.json").is_file()
    install.uninstall("copilot-cli", hooks)
    assert not hooks.exists() and (hooks.parent / "mine.json").is_file()
    assert not (tmp_path / "mcp-config.json").exists()


def test_another_continuity_server_refuses_and_a_settings_file_elsewhere_registers_nothing(
    tmp_path: Path,
) -> None:
    """Someone else's continuity server in mcp-config.json: nothing is written, exit 1 (before
    the fresh-user review of issue 42 the hooks were installed and install exited 0). A hooks
    file outside Copilot CLI's hooks folder cannot have its tools beside it: that is no
    failure, the note says how to register them."""
    mcp = tmp_path / "mcp-config.json"
    theirs = {"mcpServers": {"continuity": {"command": "someone-elses"}}}
    mcp.write_text(json.dumps(theirs))
    with pytest.raises(InstallIncomplete, match=rf"^copilot-cli: nothing was installed: {mcp} "):
        install.install("copilot-cli", tmp_path / "hooks" / "continuity.json", tmp_path / "ws")
    assert json.loads(mcp.read_text()) == theirs
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mcp-config.json"]
    elsewhere = install.install("copilot-cli", tmp_path / "x" / "c.json", tmp_path / "ws")
    assert elsewhere.mcp is not None and elsewhere.mcp.tools == {}
    assert "not in Copilot CLI's hooks folder" in (elsewhere.mcp.note or "")


def test_an_invalid_mcp_config_fails_the_install_with_exit_1_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fresh-user review of issue 42: `hooks install copilot-cli` with an mcp-config.json that
    is not JSON printed a warning and exited 0 with only the hooks installed. Now: exit 1, one
    line naming the file, the fault and what to fix; no hooks file, no backup."""
    from tests.cli.running import run_main

    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot"))
    (tmp_path / "copilot").mkdir()
    mcp = tmp_path / "copilot" / "mcp-config.json"
    mcp.write_text('{"mcpServers": {,}}\n')
    code, out, err = run_main(
        monkeypatch, capsys, "hooks", "install", "copilot-cli", "--home", tmp_path / "ws"
    )
    assert code == 1
    assert err.startswith(
        f"continuity: copilot-cli: nothing was installed: {mcp}: not valid JSON (Expecting "
        "property name enclosed in double quotes: line 1 column 17 (char 16)); fix that "
        "file, then run the install again"
    )
    assert out == ""
    assert sorted(p.name for p in (tmp_path / "copilot").iterdir()) == ["mcp-config.json"]
    assert mcp.read_text() == '{"mcpServers": {,}}\n'


def test_default_path_follows_copilot_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path))
    assert install.default_path("copilot-cli") == tmp_path / "hooks" / "continuity.json"


def test_unknown_harness_names_copilot_cli_among_the_choices(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="gemini-cli, qwen-code or copilot-cli"):
        install.install("cursor", tmp_path / "s.json", tmp_path)


def test_adapters_read_copilot_payloads_and_answer_a_flat_context() -> None:
    """Payloads as copilot 1.0.102 sent them (tests/e2e/test_copilot_live.py)."""
    sid = "061a60ce-4036-440b-acdc-961acf8c84ae"
    start = adapters.to_body(
        "copilot-cli",
        "session-start",
        {"sessionId": sid, "timestamp": 1796591653472, "cwd": "/p", "source": "new"},
    )
    assert (start["session_key"], start["project"], start["source"]) == (sid, "/p", "new")
    assert "transcript_path" not in start
    prompt = adapters.to_body(
        "copilot-cli", "user-prompt-submit", {"sessionId": sid, "cwd": "/p", "prompt": "hi"}
    )
    assert prompt["prompt"] == "hi"
    path = f"/h/.copilot/session-state/{sid}/events.jsonl"
    stop = adapters.to_body(
        "copilot-cli",
        "stop",
        {"sessionId": sid, "cwd": "/p", "transcriptPath": path, "stopReason": "end_turn"},
    )
    assert stop["transcript_path"] == path and stop["stop_hook_active"] is False
    end = adapters.to_body("copilot-cli", "session-end", {"sessionId": sid, "reason": "complete"})
    assert end["reason"] == "complete"
    brief = json.loads(adapters.render("copilot-cli", "session-start", {"context": "brief"}))
    assert brief == {"additionalContext": "brief"}
    recall = json.loads(adapters.render("copilot-cli", "user-prompt-submit", {"context": "r"}))
    assert recall == {"additionalContext": "r"}
    assert adapters.render("copilot-cli", "session-start", {"context": ""}) == b""
    assert adapters.render("copilot-cli", "stop", {"context": "x"}) == b""
