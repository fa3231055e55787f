"""Gemini CLI's hooks (issue 42 item 3): ``hooks install gemini-cli`` writes its five events
into its ``settings.json`` (timeouts in milliseconds, named entries) and our MCP server into its
``mcpServers``, and uninstall gives the
bytes back; the adapters read its payload and answer its ``additionalContext``. The real CLI
runs them in ``tests/e2e/test_gemini_live.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from continuity.core.errors import InputError
from continuity.daemon.hooks import adapters, install


def test_install_writes_the_five_events_and_uninstall_restores_the_bytes(tmp_path: Path) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    original = b'{\n  "model": {"name": "gemini-2.5-flash"}\n}\n'
    settings.write_bytes(original)
    done = install.install("gemini-cli", settings, tmp_path / "ws")
    assert done.action == "installed" and done.backup == settings.with_name(
        "settings.json.continuity-backup"
    )
    data = json.loads(settings.read_text())
    assert data["model"] == {"name": "gemini-2.5-flash"}
    server = data["mcpServers"]["continuity"]
    assert server["trust"] is True and server["env"] == {"CONTINUITY_HOME": str(tmp_path / "ws")}
    assert set(done.mcp.tools.values()) == {f"mcp_continuity_{t}" for t in install.MCP_TOOLS}
    got = {
        event: [
            (h["name"], h["timeout"], h["command"].split()[-3:]) for g in groups for h in g["hooks"]
        ]
        for event, groups in data["hooks"].items()
    }
    assert got == {
        "SessionStart": [
            ("continuity-session-start", 10_000, ["session-start", "--harness", "gemini-cli"])
        ],
        "BeforeAgent": [
            (
                "continuity-user-prompt-submit",
                5_000,
                ["user-prompt-submit", "--harness", "gemini-cli"],
            )
        ],
        "PreCompress": [
            ("continuity-pre-compaction", 10_000, ["pre-compaction", "--harness", "gemini-cli"])
        ],
        "AfterAgent": [("continuity-stop", 5_000, ["stop", "--harness", "gemini-cli"])],
        "SessionEnd": [
            ("continuity-session-end", 2_000, ["session-end", "--harness", "gemini-cli"])
        ],
    }
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["command"].startswith(
        f"CONTINUITY_HOME={tmp_path / 'ws'} "
    )
    assert install.install("gemini-cli", settings, tmp_path / "ws").action == "unchanged"
    assert install.uninstall("gemini-cli", settings).action == "restored"
    assert settings.read_bytes() == original
    assert not settings.with_name("settings.json.continuity-backup").exists()


def test_default_path_follows_gemini_cli_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    assert install.default_path("gemini-cli") == tmp_path / ".gemini" / "settings.json"


def test_unknown_harness_names_gemini_cli_among_the_choices(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="claude-code, codex, pi, opencode, gemini-cli, qwen-code"):
        install.install("cursor", tmp_path / "s.json", tmp_path)


def test_adapters_read_gemini_payloads_and_answer_its_event_names() -> None:
    base = {"session_id": "g-1", "cwd": "/p", "transcript_path": "/t/session-x.jsonl"}
    stop = adapters.to_body(
        "gemini-cli", "stop", {**base, "hook_event_name": "AfterAgent", "prompt_response": "done"}
    )
    assert stop["session_key"] == "g-1" and stop["last_assistant_message"] == "done"
    assert stop["transcript_path"] == "/t/session-x.jsonl"
    start = json.loads(adapters.render("gemini-cli", "session-start", {"context": "brief"}))
    assert start == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "brief"}
    }
    prompt = json.loads(adapters.render("gemini-cli", "user-prompt-submit", {"context": "r"}))
    assert prompt["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    assert adapters.render("gemini-cli", "stop", {"context": "x"}) == b""


@pytest.mark.parametrize("harness", ["gemini-cli", "qwen-code"])
def test_a_foreign_continuity_server_fails_the_install_and_nothing_is_written(
    tmp_path: Path, harness: str
) -> None:
    """Fresh-user review of issue 42: a partial install (the hooks without the tools) exited
    0. A server named continuity that is not ours now fails the whole install, exit 1
    (``InstallIncomplete``), the settings left byte for byte and no backup made."""
    from continuity.core.errors import InstallIncomplete

    settings = tmp_path / "settings.json"
    before = b'{"mcpServers": {"continuity": {"command": "npx", "args": ["other-continuity"]}}}\n'
    settings.write_bytes(before)
    with pytest.raises(InstallIncomplete) as caught:
        install.install(harness, settings, tmp_path / "ws")
    assert caught.value.exit_code == 1
    assert str(caught.value) == (
        f"{harness}: nothing was installed: {settings} already has an MCP server named "
        "'continuity' that is not continuity's (command 'npx'); rename or remove that server "
        "there, then run the install again"
    )
    assert settings.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
