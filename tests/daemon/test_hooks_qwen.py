"""Qwen Code's hooks (issue 42 item 3): ``hooks install qwen-code`` writes Claude Code's events
into its ``~/.qwen/settings.json`` (timeouts in seconds, named entries, PreToolUse for its own
edit and shell tools) and our MCP server into its ``mcpServers``, and uninstall gives the bytes
back; its payloads are Claude Code's, and the empty UserPromptSubmit it sends before each model
request after tool results counts no prompt and gets no context. The real CLI runs them in
``tests/e2e/test_qwen_live.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from continuity.daemon.hooks import adapters, install, spool
from continuity.daemon.hooks.live import LiveCapture
from continuity.daemon.hooks.models import BODIES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks" / "qwen-code"


def test_install_writes_claude_codes_events_and_uninstall_restores_the_bytes(
    tmp_path: Path,
) -> None:
    settings = tmp_path / ".qwen" / "settings.json"
    settings.parent.mkdir()
    original = b'{\n  "$version": 4,\n  "security": {"auth": {"selectedType": "openai"}}\n}\n'
    settings.write_bytes(original)
    done = install.install("qwen-code", settings, tmp_path / "ws")
    assert done.action == "installed"
    data = json.loads(settings.read_text())
    assert data["security"] == {"auth": {"selectedType": "openai"}}
    server = data["mcpServers"]["continuity"]
    assert server["trust"] is True and server["env"] == {"CONTINUITY_HOME": str(tmp_path / "ws")}
    assert "type" not in server
    assert set(done.mcp.tools.values()) == {f"mcp__continuity__{t}" for t in install.MCP_TOOLS}
    got = {
        event: [
            (g.get("matcher"), h["name"], h["timeout"], h["command"].split()[-3:])
            for g in groups
            for h in g["hooks"]
        ]
        for event, groups in data["hooks"].items()
    }
    assert got == {
        native: [
            (
                "edit|write_file|notebook_edit|run_shell_command"
                if native == "PreToolUse"
                else None,
                f"continuity-{ours}",
                seconds,
                [ours, "--harness", "qwen-code"],
            )
        ]
        for native, (ours, seconds) in install.CLAUDE_EVENTS.items()
    }
    assert install.install("qwen-code", settings, tmp_path / "ws").action == "unchanged"
    assert install.uninstall("qwen-code", settings).action == "restored"
    assert settings.read_bytes() == original
    assert not settings.with_name("settings.json.continuity-backup").exists()


def test_default_path_follows_qwen_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QWEN_HOME", str(tmp_path / "q"))
    assert install.default_path("qwen-code") == tmp_path / "q" / "settings.json"
    monkeypatch.delenv("QWEN_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert install.default_path("qwen-code") == tmp_path / ".qwen" / "settings.json"


def test_adapters_read_qwen_payloads_and_answer_as_claude_code() -> None:
    """Qwen Code 0.24.4's hook input and output are Claude Code's (its hooks/types.ts)."""
    base = {
        "session_id": "q-1",
        "cwd": "/p",
        "transcript_path": "/h/.qwen/projects/-p/chats/q-1.jsonl",
        "permission_mode": "yolo",
    }
    stop = adapters.to_body(
        "qwen-code",
        "stop",
        {**base, "hook_event_name": "Stop", "last_assistant_message": "done", "crons": []},
    )
    assert (stop["session_key"], stop["last_assistant_message"]) == ("q-1", "done")
    prompt = adapters.to_body(
        "qwen-code",
        "user-prompt-submit",
        {**base, "prompt": "List the files", "submitted_prompt": "List the files"},
    )
    assert prompt["prompt"] == "List the files"
    start = json.loads(adapters.render("qwen-code", "session-start", {"context": "brief"}))
    assert start == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "brief"}
    }
    assert adapters.render("qwen-code", "user-prompt-submit", {"context": ""}) == b""


def _ev(live: LiveCapture, event: str, **fields: object) -> dict:
    body = BODIES[event].model_validate(
        {"harness": "qwen-code", "session_key": "q-step", "project": "/tmp/p", **fields}
    )
    return live.handle(event, body)


def test_a_tool_result_step_is_no_prompt(live: LiveCapture) -> None:
    """Qwen Code runs UserPromptSubmit before each model request after tool results, with an
    empty prompt: it counts no prompt and is answered no context (which would stand after the
    tool results); the user's own prompt counts as for every harness."""
    _ev(live, "session-start", source="startup")
    first = _ev(live, "user-prompt-submit", prompt="List the files")
    assert first["prompt_count"] == 1
    step = _ev(live, "user-prompt-submit", prompt="")
    assert step == {"session_key": "q-step", "step": True, "context": ""}
    assert adapters.render("qwen-code", "user-prompt-submit", step) == b""
    again = _ev(live, "user-prompt-submit", prompt="Now the README")
    assert again["prompt_count"] == 2
    claude = live.handle(
        "user-prompt-submit",
        BODIES["user-prompt-submit"].model_validate(
            {"harness": "claude-code", "session_key": "c-1", "project": "/tmp/p", "prompt": ""}
        ),
    )
    assert "step" not in claude and claude["prompt_count"] == 1


def test_a_hook_spooled_while_the_daemon_is_down_is_replayed(
    live: LiveCapture, isolated_home: Path
) -> None:
    """Qwen Code's recorded Stop input (``tests/fixtures/hooks/qwen-code``), sent by the hook
    command while no daemon of the workspace runs, is spooled whole and exits 0; the daemon
    replays it (the session is live, its answer the turn's)."""
    import os
    import subprocess
    import sys
    import time

    payload = (FIXTURES / "stop.json").read_bytes()
    env = {**os.environ, "CONTINUITY_HOME": str(isolated_home)}
    env.pop("CONTINUITY_DAEMON_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "continuity.cli.hookcmd", "stop", "--harness", "qwen-code"],
        input=payload,
        env=env,
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0 and b"spooled for replay" in done.stderr
    key = json.loads(payload)["session_id"]
    # the session is live while its event is handled; the replayed file goes only after
    # (spool._drain_file), so wait for both
    deadline = time.monotonic() + 10
    while (key not in live.sessions or spool.pending(isolated_home)) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert live.sessions[key].harness == "qwen-code"
    assert live.sessions[key].project == "/home/dev/project"
    # the replay clears the spool after it has stored the event: wait for that too (under
    # load the session showed up before the spool was cleared)
    while spool.pending(isolated_home) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not spool.pending(isolated_home)
