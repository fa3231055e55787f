"""Issue 39: `hooks install` registers continuity's tools where each harness takes them (Claude
Code: its MCP server in ~/.claude.json and the allow rule in settings.json; Codex:
[mcp_servers.continuity] in config.toml; pi: the extension's own tools), `uninstall` removes
exactly that, the install record keeps what `installed_mcp_tools` reads, and pi's tool runner
answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from continuity.core.errors import InstallIncomplete
from continuity.daemon.hooks import install

SETTINGS = '{\n  "theme": "dark",\n  "permissions": {"allow": ["Bash(ls:*)"]}\n}\n'
CLAUDE_STATE = {
    "numStartups": 3,
    "mcpServers": {"other": {"type": "stdio", "command": "other-server"}},
}


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throwaway HOME with Claude Code's user settings and state."""
    home = tmp_path / "user"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(SETTINGS)
    (home / ".claude.json").write_text(json.dumps(CLAUDE_STATE, indent=2) + "\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return home


def test_claude_code_install_registers_the_server_and_the_allow_rule(
    user: Path, tmp_path: Path
) -> None:
    """The server joins ~/.claude.json's mcpServers (other keys and servers kept) with the
    workspace in its env and a Python run with -P; settings.json gets mcp__continuity once;
    the result names the tools as Claude Code's model sees them."""
    ws = tmp_path / "ws"
    result = install.install("claude-code", home=ws)
    state = json.loads((user / ".claude.json").read_text())
    assert (
        state["numStartups"] == 3
        and state["mcpServers"]["other"] == CLAUDE_STATE["mcpServers"]["other"]
    )
    ours = state["mcpServers"]["continuity"]
    assert ours["type"] == "stdio" and ours["command"] == sys.executable
    assert ours["args"][:2] == ["-P", "-c"] and "continuity.daemon.mcp_server" in ours["args"][2]
    assert ours["env"] == {"CONTINUITY_HOME": str(ws)}
    settings = json.loads((user / ".claude" / "settings.json").read_text())
    assert settings["permissions"]["allow"] == ["Bash(ls:*)", "mcp__continuity"]
    assert result.mcp is not None and result.mcp.tools["search"] == "mcp__continuity__search"
    assert set(result.mcp.tools) == set(install.MCP_TOOLS)
    again = install.install("claude-code", home=ws)
    assert again.action == "unchanged"
    assert (
        json.loads((user / ".claude" / "settings.json").read_text())["permissions"]["allow"].count(
            "mcp__continuity"
        )
        == 1
    )


def test_claude_code_uninstall_removes_exactly_what_install_added(
    user: Path, tmp_path: Path
) -> None:
    """settings.json comes back byte for byte; ~/.claude.json keeps what Claude Code wrote
    meanwhile and the user's other server, without ours."""
    install.install("claude-code", home=tmp_path / "ws")
    state = json.loads((user / ".claude.json").read_text())
    state["numStartups"] = 4  # Claude Code ran meanwhile
    (user / ".claude.json").write_text(json.dumps(state, indent=2))
    assert install.uninstall("claude-code").action == "restored"
    assert (user / ".claude" / "settings.json").read_text() == SETTINGS
    assert json.loads((user / ".claude.json").read_text()) == {**CLAUDE_STATE, "numStartups": 4}


def test_claude_code_keeps_a_rule_the_user_had(user: Path, tmp_path: Path) -> None:
    """An allow rule mcp__continuity the user wrote before install stays after uninstall;
    a ~/.claude.json install created is deleted when only our server was in it."""
    before = '{"permissions": {"allow": ["mcp__continuity"]}}\n'
    (user / ".claude" / "settings.json").write_text(before)
    (user / ".claude.json").unlink()
    install.install("claude-code", home=tmp_path / "ws")
    assert json.loads((user / ".claude" / "settings.json").read_text())["permissions"]["allow"] == [
        "mcp__continuity"
    ]
    install.uninstall("claude-code")
    assert (user / ".claude" / "settings.json").read_text() == before
    assert not (user / ".claude.json").exists()


def test_claude_code_refuses_beside_a_server_of_that_name_that_is_not_ours(
    user: Path, tmp_path: Path
) -> None:
    """Someone else's mcpServers.continuity: before the fresh-user review of issue 42 the
    hooks were installed without the tools and install exited 0; now nothing is written (not
    the hooks either) and the error names the file and what to do."""
    theirs = {"mcpServers": {"continuity": {"type": "stdio", "command": "their-thing"}}}
    (user / ".claude.json").write_text(json.dumps(theirs))
    settings = (user / ".claude" / "settings.json").read_bytes()
    with pytest.raises(InstallIncomplete) as caught:
        install.install("claude-code", home=tmp_path / "ws")
    assert str(caught.value) == (
        f"claude-code: nothing was installed: {user / '.claude.json'} already has an MCP server "
        "named 'continuity' that is not continuity's (command 'their-thing'); rename or "
        "remove that server there, then run the install again"
    )
    assert json.loads((user / ".claude.json").read_text()) == theirs
    assert (user / ".claude" / "settings.json").read_bytes() == settings
    assert not list(user.rglob("*.continuity-backup"))


def test_claude_code_settings_elsewhere_register_no_server(user: Path, tmp_path: Path) -> None:
    """--settings FILE (not Claude Code's user settings): hooks only, and the note names the
    command that would register the server."""
    custom = tmp_path / "custom.json"
    result = install.install("claude-code", custom, tmp_path / "ws")
    assert result.mcp is not None and result.mcp.tools == {}
    # issue 45 item 3: the printed command carries the workspace, and splits as a shell would
    import re
    import shlex

    printed = re.search(r"`(claude mcp add [^`]*)`", result.mcp.note or "")
    assert printed, result.mcp.note
    argv = shlex.split(printed.group(1))
    assert argv[: argv.index("--")] == [
        "claude",
        "mcp",
        "add",
        "--scope",
        "user",
        "-e",
        f"CONTINUITY_HOME={tmp_path / 'ws'}",
        "continuity",
    ]
    assert argv[argv.index("--") + 1 :] == install.mcp_argv()
    assert json.loads((user / ".claude.json").read_text()) == CLAUDE_STATE
    assert "permissions" not in json.loads(custom.read_text())


CODEX_CONFIG = '# mine\nmodel = "gpt-fake"\n\n[model_providers.fake]\nname = "fake"\n'


def test_codex_install_writes_the_mcp_server_and_uninstall_restores(tmp_path: Path) -> None:
    """config.toml gains [mcp_servers.continuity] (command, args, env with the workspace)
    beside the trust block, parses, and keeps the user's text first; a second install changes
    nothing; uninstall restores the bytes."""
    codex = tmp_path / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(CODEX_CONFIG)
    result = install.install("codex", codex / "hooks.json", tmp_path / "ws")
    text = (codex / "config.toml").read_text()
    assert text.startswith(CODEX_CONFIG)
    server = tomllib.loads(text)["mcp_servers"]["continuity"]
    assert server["command"] == sys.executable and server["args"][:2] == ["-P", "-c"]
    assert server["env"] == {"CONTINUITY_HOME": str(tmp_path / "ws")}
    assert result.trust is not None and result.trust.status == "trusted"
    assert result.mcp is not None and result.mcp.tools["search"] == "mcp__continuity__search"
    install.install("codex", codex / "hooks.json", tmp_path / "ws")
    assert (codex / "config.toml").read_text() == text
    install.uninstall("codex", codex / "hooks.json")
    assert (codex / "config.toml").read_text() == CODEX_CONFIG
    assert not (codex / "config.toml.continuity-backup").exists()


def test_codex_refuses_beside_a_users_server_of_that_name(tmp_path: Path) -> None:
    """A [mcp_servers.continuity] of the user's: ours cannot be added (the file would not
    parse); before the fresh-user review of issue 42 the hooks and trust were written and
    install exited 0; now nothing is written and the error names config.toml."""
    mine = CODEX_CONFIG + '\n[mcp_servers.continuity]\ncommand = "mine"\n'
    (tmp_path / "config.toml").write_text(mine)
    with pytest.raises(
        InstallIncomplete,
        match=rf"^codex: nothing was installed: {tmp_path / 'config.toml'} cannot take "
        r"\[mcp_servers.continuity\] .*; rename or remove that server there",
    ):
        install.install("codex", tmp_path / "hooks.json", tmp_path / "ws")
    assert (tmp_path / "config.toml").read_text() == mine
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_pi_extension_carries_the_tool_runner(tmp_path: Path) -> None:
    """pi's extension holds the tool runner with the workspace; the result names the tools
    continuity_<tool>."""
    result = install.install("pi", tmp_path / "extensions", tmp_path / "ws")
    text = (tmp_path / "extensions" / "continuity.ts").read_text()
    assert "__CONTINUITY_TOOL_COMMAND__" not in text
    line = next(x for x in text.splitlines() if x.startswith("const TOOL_COMMAND = "))
    argv = json.loads(line[len("const TOOL_COMMAND = ") : -1])
    assert argv[1] == f"CONTINUITY_HOME={tmp_path / 'ws'}" and argv[2] == sys.executable
    assert "tool_main" in argv[-1]
    assert result.mcp is not None and result.mcp.tools["show"] == "continuity_show"


def test_pi_tool_runner_answers_json_and_errors(isolated_home: Path, tmp_path: Path) -> None:
    """The runner pi calls: a tool's answer as JSON on stdout (exit 0); an unknown tool, bad
    arguments or a tool error as {"error": ...} (exit 1)."""
    env = {**os.environ, "CONTINUITY_DAEMON_URL": "http://127.0.0.1:9"}
    runner = install.tool_argv()

    def run(*args: str, stdin: str) -> tuple[int, dict]:
        done = subprocess.run(
            [*runner, *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
        )
        return done.returncode, json.loads(done.stdout)

    code, kept = run("remember", stdin='{"content": "Exports use UTC", "session": "s-1"}')
    assert code == 0 and kept["content"] == "Exports use UTC"
    code, found = run("recall", stdin='{"query": "UTC", "sessions": true}')
    assert code == 0 and found["results"][0]["content"] == "Exports use UTC"
    assert found["rows"] == []
    code, found = run("search", stdin='{"query": "UTC"}')
    assert code == 0 and found == {"query": "UTC", "count": 0, "hits": []}
    assert run("nope", stdin="{}") == (
        1,
        {
            "error": "tool: 'nope' is not one of search, show, "
            "recall, continuation, remember, checkpoint"
        },
    )
    code, bad = run("search", stdin='{"words": "x"}')
    assert code == 1 and bad["error"].startswith("search: ")
    code, bad = run("search", stdin="{not json")
    assert code == 1 and bad["error"].startswith("arguments: not JSON")
    code, bad = run("show", stdin='{"session": "zz9", "seq": 0}')
    assert code == 1 and "zz9" in bad["error"]


def test_the_install_record_keeps_mcp_and_uninstall_forgets_it(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hooks install` records the registered tools (installed_mcp_tools reads them), a later
    install of another harness keeps them, `hooks uninstall` drops that harness's."""
    from continuity.cli.app import app

    ws = tmp_path / "ws"
    monkeypatch.setenv("CONTINUITY_HOME", str(ws))
    runner = CliRunner()
    done = runner.invoke(app, ["hooks", "install", "claude-code", "--home", str(ws)])
    assert done.exit_code == 0, done.output
    assert "mcp__continuity__search" in done.output
    assert install.installed_mcp_tools(ws, "claude-code") == install.mcp_tool_names("claude-code")
    done = runner.invoke(
        app, ["hooks", "install", "pi", "--home", str(ws), "--settings", str(tmp_path / "ext")]
    )
    assert done.exit_code == 0, done.output
    assert install.installed_mcp_tools(ws, "claude-code")["show"] == "mcp__continuity__show"
    assert install.installed_mcp_tools(ws, "pi")["search"] == "continuity_search"
    assert install.installed_paths(ws) == {
        "claude-code": str(user / ".claude" / "settings.json"),
        "pi": str(tmp_path / "ext"),
    }
    done = runner.invoke(app, ["hooks", "uninstall", "claude-code"])
    assert done.exit_code == 0, done.output
    assert install.installed_mcp_tools(ws, "claude-code") == {}
    assert install.installed_mcp_tools(ws, "pi")["recall"] == "continuity_recall"


def test_doctor_checks_the_registration(user: Path, tmp_path: Path) -> None:
    """doctor's mcp check: ok with the tools when registered for this workspace; a warning
    naming the fix when the server was removed or points at another workspace."""
    from continuity.cli.commands.doctor import check_mcp

    ws = tmp_path / "ws"
    settings = user / ".claude" / "settings.json"
    install.install("claude-code", home=ws)
    found = check_mcp("claude-code", ws, settings)
    assert found.status == "ok" and found.data["tools"]["search"] == "mcp__continuity__search"
    other = check_mcp("claude-code", tmp_path / "other", settings)
    assert other.status == "warning" and "not this workspace" in other.detail
    state = json.loads((user / ".claude.json").read_text())
    del state["mcpServers"]["continuity"]
    (user / ".claude.json").write_text(json.dumps(state))
    gone = check_mcp("claude-code", ws, settings)
    assert gone.status == "warning" and "no MCP server 'continuity'" in gone.detail
    assert gone.fix == f"run `continuity hooks install claude-code --home {ws}`"
    install.install("codex", tmp_path / "codex" / "hooks.json", ws)
    assert check_mcp("codex", ws, tmp_path / "codex" / "hooks.json").status == "ok"
    install.install("pi", tmp_path / "ext", ws)
    assert check_mcp("pi", ws, tmp_path / "ext" / "continuity.ts").status == "ok"
