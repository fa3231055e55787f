"""Fresh-user review of issue 42, defect 1: ``hooks uninstall`` gives every file it touched back
byte for byte and never deletes one it did not create. A 0-byte ``~/.claude.json`` was deleted
and a one-line one came back indented; 0-byte settings files (Claude Code, Gemini CLI, Qwen
Code), Codex's ``hooks.json`` and Copilot CLI's ``mcp-config.json`` came back as ``{}`` with a
false "changed since install" and a leftover ``.continuity-backup``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from continuity.daemon.hooks import install


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway HOME with Claude Code's user settings folder."""
    home = tmp_path / "user"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for name in ("CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME", "COPILOT_HOME"):
        monkeypatch.delenv(name, raising=False)
    return home


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.continuity-backup"))


@pytest.mark.parametrize("state", [b"", b'{"numStartups":3,"userID":"abc"}', b'{"a": 1}\n'])
def test_claude_json_comes_back_byte_for_byte(user: Path, tmp_path: Path, state: bytes) -> None:
    """A 0-byte ~/.claude.json stays (0 bytes), a one-line one stays one line."""
    (user / ".claude" / "settings.json").write_text('{"theme": "dark"}\n')
    config = user / ".claude.json"
    config.write_bytes(state)
    install.install("claude-code", home=tmp_path / "ws")
    assert "continuity" in json.loads(config.read_bytes())["mcpServers"]
    assert install.uninstall("claude-code").action == "restored"
    assert config.read_bytes() == state
    assert _leftovers(user) == []


def test_claude_json_rewritten_by_claude_keeps_its_layout(user: Path, tmp_path: Path) -> None:
    """Claude Code rewrote ~/.claude.json meanwhile (one line, no spaces): uninstall takes our
    server out and writes the rest in that same layout; the stale backup is not left behind."""
    config = user / ".claude.json"
    config.write_bytes(b'{"numStartups":3}')
    install.install("claude-code", home=tmp_path / "ws")
    data = json.loads(config.read_bytes())
    data["numStartups"] = 4
    config.write_bytes(json.dumps(data, separators=(",", ":")).encode())
    install.uninstall("claude-code")
    assert config.read_bytes() == b'{"numStartups":4}'
    assert _leftovers(user) == []


@pytest.mark.parametrize(
    ("harness", "relative"),
    [
        ("claude-code", ".claude/settings.json"),
        ("gemini-cli", ".gemini/settings.json"),
        ("qwen-code", ".qwen/settings.json"),
        ("codex", ".codex/hooks.json"),
    ],
)
def test_an_empty_settings_file_comes_back_empty(
    user: Path, tmp_path: Path, harness: str, relative: str
) -> None:
    settings = user / relative
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_bytes(b"")
    install.install(harness, home=tmp_path / "ws", trust=harness != "codex")
    assert json.loads(settings.read_bytes())["hooks"]
    result = install.uninstall(harness)
    assert (result.action, result.backup_left) == ("restored", None)
    assert settings.read_bytes() == b""
    assert _leftovers(user) == []


def test_an_empty_copilot_mcp_config_comes_back_empty(user: Path, tmp_path: Path) -> None:
    mcp = user / ".copilot" / "mcp-config.json"
    mcp.parent.mkdir()
    mcp.write_bytes(b"")
    install.install("copilot-cli", home=tmp_path / "ws")
    assert "continuity" in json.loads(mcp.read_bytes())["mcpServers"]
    install.uninstall("copilot-cli")
    assert mcp.read_bytes() == b""
    assert _leftovers(user) == []
