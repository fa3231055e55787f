"""Installers: Claude Code and Codex settings merged with a backup, idempotent, uninstall
restoring; pi's extension file; the CLI commands."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import typer
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from continuity.core.errors import InputError, InstallIncomplete
from continuity.daemon.hooks import install

USER_SETTINGS = """{
    "model": "opus",
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    }
}
"""


def _hooks(path: Path) -> dict:
    return json.loads(path.read_text())["hooks"]


def test_install_claude_code_merges_with_backup(tmp_path: Path) -> None:
    """Our six hooks join the user's settings; the user's keys and hooks stay; the original
    is backed up first; the commands take the fast path."""
    settings = tmp_path / "settings.json"
    settings.write_text(USER_SETTINGS)
    os.chmod(settings, 0o600)
    result = install.install("claude-code", settings)
    assert result.action == "installed" and result.backup is not None
    assert result.backup.read_text() == USER_SETTINGS
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and stat.S_IMODE(settings.stat().st_mode) == 0o600
    hooks = data["hooks"]
    assert set(hooks) == {
        "PreToolUse",
        "SessionStart",
        "UserPromptSubmit",
        "PreCompact",
        "PostCompact",
        "Stop",
        "SessionEnd",
    }
    assert hooks["Stop"][0]["hooks"][0]["command"] == "notify-send done"
    ours = hooks["SessionEnd"][0]["hooks"][0]
    assert ours["command"].endswith("session-end --harness claude-code")
    assert (
        "continuity.cli.hookcmd import main" in ours["command"]
        or "continuity-hook" in ours["command"]
    )
    assert ours["timeout"] == 2 and ours["type"] == "command"
    tool = [g for g in hooks["PreToolUse"] if install.is_our_hook(g["hooks"][0])]
    assert [g["matcher"] for g in tool] == ["Edit|Write|MultiEdit|NotebookEdit|Bash"]  # issue 40


def test_install_claude_code_is_idempotent(tmp_path: Path) -> None:
    """A second install writes nothing and makes no second backup."""
    settings = tmp_path / "settings.json"
    settings.write_text(USER_SETTINGS)
    install.install("claude-code", settings)
    before = settings.read_bytes()
    again = install.install("claude-code", settings)
    assert again.action == "unchanged" and again.backup is None
    assert settings.read_bytes() == before
    assert len(_hooks(settings)["SessionStart"]) == 1


def test_install_replaces_an_older_command(tmp_path: Path) -> None:
    """An install over hooks of an older continuity path replaces them, never duplicates."""
    settings = tmp_path / "settings.json"
    old = {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "/old/venv/bin/continuity-hook stop --harness claude-code",
                        }
                    ]
                }
            ]
        }
    }
    settings.write_text(json.dumps(old))
    install.install("claude-code", settings)
    stops = _hooks(settings)["Stop"]
    assert len(stops) == 1 and "/old/venv" not in stops[0]["hooks"][0]["command"]


def test_install_replaces_a_hook_of_the_pre_layout_module_path(tmp_path: Path) -> None:
    """A hook installed before issue 11 ran ``from continuity.hookcmd import main``: install
    recognises it as ours and replaces it with the new path (one Stop entry, not two)."""
    settings = tmp_path / "settings.json"
    old_cmd = (
        "/usr/bin/python3 -I -S -c \"import sys; sys.path.append('/old/src'); "
        'from continuity.hookcmd import main; main()" stop --harness claude-code'
    )
    settings.write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": old_cmd}]}]}})
    )
    install.install("claude-code", settings)
    stops = _hooks(settings)["Stop"]
    assert len(stops) == 1
    assert "from continuity.cli.hookcmd import main" in stops[0]["hooks"][0]["command"]


def test_the_pre_layout_hook_path_still_runs(tmp_path: Path) -> None:
    """Hooks installed before issue 11 keep working until reinstalled: the old module path
    runs the same command (the recursion guard makes it exit 0 at once, printing nothing)."""
    import subprocess
    import sys

    import continuity

    src = str(Path(continuity.__file__).resolve().parents[1])
    code = f"import sys; sys.path.append({src!r}); from continuity.hookcmd import main; main()"
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, "stop", "--harness", "claude-code"],
        input=b"{}",
        capture_output=True,
        timeout=30,
        env={"CONTINUITY_NO_HOOKS": "1"},
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_uninstall_claude_code_restores_the_original_bytes(tmp_path: Path) -> None:
    """Uninstall after install gives back the file exactly as it was, and the backup goes."""
    settings = tmp_path / "settings.json"
    settings.write_text(USER_SETTINGS)
    install.install("claude-code", settings)
    result = install.uninstall("claude-code", settings)
    assert result.action == "restored" and settings.read_text() == USER_SETTINGS
    assert not (tmp_path / ("settings.json" + install.BACKUP_SUFFIX)).exists()
    assert install.uninstall("claude-code", settings).action == "absent"


def test_uninstall_keeps_changes_made_after_install(tmp_path: Path) -> None:
    """Settings the user changed after install keep those changes; only ours go."""
    settings = tmp_path / "settings.json"
    settings.write_text(USER_SETTINGS)
    install.install("claude-code", settings)
    data = json.loads(settings.read_text())
    data["theme"] = "dark"
    settings.write_text(json.dumps(data))
    assert install.uninstall("claude-code", settings).action == "removed"
    after = json.loads(settings.read_text())
    assert after["theme"] == "dark" and set(after["hooks"]) == {"PreToolUse", "Stop"}
    assert after == {**json.loads(USER_SETTINGS), "theme": "dark"}


def test_install_into_a_missing_file_and_uninstall_removes_it(tmp_path: Path) -> None:
    """A settings file install created is deleted by uninstall when nothing else is left."""
    settings = tmp_path / "nested" / "settings.json"
    assert install.install("claude-code", settings).backup is None
    assert install.uninstall("claude-code", settings).action == "removed"
    assert not settings.exists()


def test_install_refuses_a_broken_settings_file(tmp_path: Path) -> None:
    """Settings that are not a JSON object are never overwritten."""
    settings = tmp_path / "settings.json"
    settings.write_text("{ not json")
    with pytest.raises(InputError, match="not valid JSON"):
        install.install("claude-code", settings)
    assert settings.read_text() == "{ not json"


def test_install_codex_includes_session_end(tmp_path: Path) -> None:
    """Codex hooks.json gets the same shape, SessionEnd included: Codex sends it after every
    `codex exec` (issue 12, fault 3; before the fix the set lacked SessionEnd)."""
    hooks_file = tmp_path / "hooks.json"
    install.install("codex", hooks_file)
    hooks = _hooks(hooks_file)
    assert set(hooks) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreCompact",
        "PostCompact",
        "Stop",
        "SessionEnd",
        "PreToolUse",
    }
    assert "matcher" not in hooks["PreToolUse"][0]  # issue 40: every tool; the daemon picks
    assert hooks["SessionEnd"][0]["hooks"][0]["command"].endswith("session-end --harness codex")
    assert hooks["Stop"][0]["hooks"][0]["command"].endswith("stop --harness codex")
    assert install.uninstall("codex", hooks_file).action == "removed"
    assert not (tmp_path / "config.toml").exists()


# Codex trust (issue 12, fault 2). The hash below was proven by Codex 0.171.0 itself: with it
# in config.toml, `codex exec` ran a hooks.json SessionStart hook `echo hello` (timeout 5) and
# printed "hook: SessionStart"; without it Codex skipped the hook silently.
CODEX_PROVEN_HASH = "sha256:ff2c653a6842a4cd8469820c8fa306b143c86553055b2b071b04162735e26f71"
CODEX_CONFIG = 'model = "gpt-5"\n\n[model_providers.local]\nbase_url = "http://127.0.0.1:9/v1"\n'


def test_codex_hook_hash_is_the_one_codex_computes() -> None:
    """codex_hook_hash reproduces Codex's trusted_hash (codex-rs command_hook_hash)."""
    assert (
        install.codex_hook_hash("SessionStart", {"command": "echo hello", "timeout": 5})
        == CODEX_PROVEN_HASH
    )
    assert (
        install.codex_hook_hash("SessionStart", {"command": "echo hello", "timeout": 6})
        != CODEX_PROVEN_HASH
    )


def test_install_codex_writes_the_trust_codex_needs(tmp_path: Path) -> None:
    """install writes one trusted_hash table per hook of ours into config.toml beside
    hooks.json, keyed <hooks.json>:<event>:<group>:<handler> after the user's own groups;
    uninstall restores config.toml byte for byte (before the fix: no trust, status untrusted)."""
    codex = tmp_path / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(CODEX_CONFIG)
    (codex / "hooks.json").write_text(
        json.dumps(
            {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
        )
    )
    before_hooks = (codex / "hooks.json").read_bytes()
    result = install.install("codex", codex / "hooks.json", tmp_path / "ws")
    trust = result.trust
    assert trust is not None and (trust.status, trust.hooks, trust.trusted) == ("trusted", 7, 7)
    assert result.to_dict()["trust"]["next_step"] is None
    import tomllib

    state = tomllib.loads((codex / "config.toml").read_text())["hooks"]["state"]
    prefix = str(codex / "hooks.json")
    assert sorted(state) == sorted(
        f"{prefix}:{e}:{g}:0"
        for e, g in [
            ("session_start", 0),
            ("user_prompt_submit", 0),
            ("pre_compact", 0),
            ("post_compact", 0),
            ("stop", 1),
            ("session_end", 0),
            ("pre_tool_use", 0),
        ]
    )
    stop = _hooks(codex / "hooks.json")["Stop"][1]["hooks"][0]
    assert state[f"{prefix}:stop:1:0"]["trusted_hash"] == install.codex_hook_hash("Stop", stop)
    assert (codex / "config.toml").read_text().startswith(CODEX_CONFIG)
    assert install.install("codex", codex / "hooks.json", tmp_path / "ws").action == "unchanged"
    assert (codex / "config.toml").read_text().count("[hooks.state.") == 7
    install.uninstall("codex", codex / "hooks.json")
    assert (codex / "config.toml").read_text() == CODEX_CONFIG
    assert (codex / "hooks.json").read_bytes() == before_hooks
    assert not (codex / "config.toml.continuity-backup").exists()


def test_codex_trust_sees_a_changed_command_and_a_stale_table(tmp_path: Path) -> None:
    """A hook whose command changed is untrusted again (Codex's rule); install replaces a
    stale table of our key (an earlier trust from the TUI) instead of duplicating it."""
    hooks_file = tmp_path / "hooks.json"
    install.install("codex", hooks_file, tmp_path / "ws")
    data = json.loads(hooks_file.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["command"] += " --changed"
    hooks_file.write_text(json.dumps(data))
    trust = install.codex_trust(hooks_file)
    assert (trust.status, trust.trusted) == ("untrusted", 6)
    assert trust.untrusted_keys == (f"{hooks_file}:stop:0:0",)
    assert "continuity hooks install codex" in (trust.next_step or "")
    config = tmp_path / "config.toml"
    stale = f'[hooks.state."{hooks_file}:stop:0:0"]\ntrusted_hash = "sha256:old"\nenabled = true\n'
    config.write_text(stale + "\n[other]\nx = 1\n")
    assert install.install("codex", hooks_file, tmp_path / "ws").trust.status == "trusted"
    text = config.read_text()
    assert text.count(f"{hooks_file}:stop:0:0") == 1 and "sha256:old" not in text
    assert "[other]\nx = 1\n" in text


def test_codex_trust_keys_use_codex_home_canonicalized(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex canonicalizes $CODEX_HOME (codex-rs find_codex_home): with CODEX_HOME a symlink,
    the trust keys name the real folder (checked with Codex 0.171.0: its hooks then ran)."""
    real = tmp_path / "real-codex"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "link"))
    result = install.install("codex", home=tmp_path / "ws")
    assert result.path == tmp_path / "link" / "hooks.json"
    assert result.trust is not None and result.trust.status == "trusted"
    import tomllib

    keys = tomllib.loads((real / "config.toml").read_text())["hooks"]["state"]
    assert f"{real}/hooks.json:session_start:0:0" in keys
    assert not any(str(tmp_path / "link") in k for k in keys)


def test_codex_trust_with_hooks_json_a_symlink(tmp_path: Path) -> None:
    """hooks.json a symlink into a dotfiles folder: Codex reads it at ~/.codex/hooks.json and
    its trust from ~/.codex/config.toml, so the keys name the link's path and the tables go
    beside the link, not beside its target."""
    codex, dotfiles = tmp_path / ".codex", tmp_path / "dotfiles"
    codex.mkdir()
    dotfiles.mkdir()
    (dotfiles / "codex-hooks.json").write_text("{}\n")
    (codex / "hooks.json").symlink_to(dotfiles / "codex-hooks.json")
    result = install.install("codex", codex / "hooks.json", tmp_path / "ws")
    assert result.trust is not None and result.trust.status == "trusted"
    assert (codex / "hooks.json").is_symlink() and not (dotfiles / "config.toml").exists()
    import tomllib

    keys = tomllib.loads((codex / "config.toml").read_text())["hooks"]["state"]
    assert f"{codex}/hooks.json:stop:0:0" in keys
    install.uninstall("codex", codex / "hooks.json")
    assert not (codex / "config.toml").exists()
    assert (dotfiles / "codex-hooks.json").read_text() == "{}\n"


def test_install_codex_fails_and_writes_nothing_when_trust_cannot_be_written(
    tmp_path: Path,
) -> None:
    """A config.toml our tables cannot join (an inline hooks.state): before the fresh-user
    review of issue 42 install wrote hooks.json, warned "NOT TRUSTED" and exited 0; now it
    exits 1 naming config.toml and the ways out, and no file is written. --no-trust (the user
    trusts the hooks in Codex's /hooks) installs, the MCP server included."""
    from continuity.cli.commands.daemon import register

    config = tmp_path / "config.toml"
    config.write_text("hooks = { state = {} }\n")
    with pytest.raises(InstallIncomplete) as caught:
        install.install("codex", tmp_path / "hooks.json", tmp_path / "ws")
    assert str(caught.value) == (
        f"codex: nothing was installed: {config}: the trust state of continuity's hooks cannot "
        "be added to it (its hooks or hooks.state is not a table of tables, e.g. written "
        "inline); write it as [hooks.state] tables, or install with --no-trust and trust the "
        "hooks in Codex's /hooks, then run the install again"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]
    assert config.read_text() == "hooks = { state = {} }\n"
    app = typer.Typer()
    app.command("noop")(lambda: None)
    register(app)
    args = ["hooks", "install", "codex", "--settings", str(tmp_path / "hooks.json")]
    done = CliRunner().invoke(app, [*args, "--home", str(tmp_path / "ws")])
    assert done.exit_code == 1 and isinstance(done.exception, InstallIncomplete)
    assert not (tmp_path / "hooks.json").exists()
    done = CliRunner().invoke(app, [*args, "--no-trust", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["trust"]["status"] == "untrusted"
    # issue 39: --no-trust still registers the MCP server (the file takes that table); the
    # original is backed up first and uninstall brings it back byte for byte
    assert (tmp_path / "config.toml.continuity-backup").read_text() == "hooks = { state = {} }\n"
    assert "[mcp_servers.continuity]" in config.read_text()
    install.uninstall("codex", tmp_path / "hooks.json")
    assert config.read_text() == "hooks = { state = {} }\n"
    assert not (tmp_path / "config.toml.continuity-backup").exists()


def test_install_codex_names_the_line_of_a_config_toml_that_is_not_toml(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('model = "gpt-fake"\n[broken\n')
    with pytest.raises(
        InstallIncomplete,
        match=rf"^codex: nothing was installed: {config}: not "
        r"valid TOML \(.*line 2.*\); fix that file \(or install with --no-trust",
    ):
        install.install("codex", tmp_path / "hooks.json", tmp_path / "ws")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_install_pi_writes_the_extension_with_the_command(tmp_path: Path) -> None:
    """pi gets continuity.ts with the hook command filled in; uninstall deletes it, and a
    foreign continuity.ts is left alone."""
    result = install.install("pi", tmp_path)
    text = (tmp_path / "continuity.ts").read_text()
    assert result.action == "installed" and "__CONTINUITY_HOOK_COMMAND__" not in text
    argv = [
        shutil.which("env") or "/usr/bin/env",
        f"CONTINUITY_HOME={result.home}",
        *install.hook_argv(),
    ]
    assert f"const HOOK_COMMAND = {json.dumps(argv)};" in text
    assert install.install("pi", tmp_path).action == "unchanged"
    assert install.uninstall("pi", tmp_path).action == "removed"
    (tmp_path / "continuity.ts").write_text("// someone else's\n")
    with pytest.raises(InputError, match="not continuity's extension"):
        install.install("pi", tmp_path)


def test_uninstall_pi_removes_the_folders_install_created(tmp_path: Path) -> None:
    """Issue 12, fault 10: install into a missing ~/.pi/agent/extensions creates it; uninstall
    removes it again (before the fix the empty folder stayed), but never a folder that was
    there before or that holds something else."""
    agent = tmp_path / ".pi" / "agent"
    agent.mkdir(parents=True)
    (agent / "models.json").write_text("{}\n")
    install.install("pi", agent / "extensions", tmp_path / "ws")
    assert (agent / "extensions" / "continuity.ts").is_file()
    install.install("pi", agent / "extensions", tmp_path / "ws")  # unchanged: record kept
    assert install.uninstall("pi", agent / "extensions").action == "removed"
    assert sorted(p.name for p in agent.iterdir()) == ["models.json"]
    deep = tmp_path / "fresh" / "agent" / "extensions"
    install.install("pi", deep, tmp_path / "ws")
    (deep.parent / "sessions").mkdir()  # pi wrote something beside it meanwhile
    install.uninstall("pi", deep)
    assert not deep.exists() and (deep.parent / "sessions").is_dir()
    existing = tmp_path / "mine"
    existing.mkdir()
    install.install("pi", existing, tmp_path / "ws")
    install.uninstall("pi", existing)
    assert existing.is_dir() and list(existing.iterdir()) == []


def test_install_default_paths_follow_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """pi honours PI_CODING_AGENT_DIR and Codex CODEX_HOME."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    assert install.default_path("pi") == tmp_path / "agent" / "extensions"
    assert install.default_path("codex") == tmp_path / "codex" / "hooks.json"


def test_install_cli_commands(tmp_path: Path) -> None:
    """`continuity hooks install|uninstall claude-code --settings PATH` via the CLI module."""
    from continuity.cli.commands.daemon import register

    app = typer.Typer()
    app.command("noop")(lambda: None)
    register(app)
    settings = tmp_path / "settings.json"
    runner = CliRunner()
    done = runner.invoke(
        app, ["hooks", "install", "claude-code", "--settings", str(settings), "--json"]
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["action"] == "installed"
    done = runner.invoke(app, ["hooks", "uninstall", "claude-code", "--settings", str(settings)])
    assert done.exit_code == 0 and "removed" in done.stdout
    assert runner.invoke(app, ["hook", "--help"]).exit_code == 0


def test_install_through_symlink_keeps_the_link(tmp_path: Path) -> None:
    """A symlinked settings file is written through: the link survives install and
    uninstall, the target is backed up and restored byte for byte."""
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text(USER_SETTINGS)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    result = install.install("claude-code", link)
    assert result.action == "installed" and result.path == link
    assert link.is_symlink() and link.resolve() == real
    assert result.backup == real.with_name("settings.json" + install.BACKUP_SUFFIX)
    assert result.backup.read_text() == USER_SETTINGS
    assert "SessionEnd" in _hooks(real)
    assert install.install("claude-code", link).action == "unchanged"
    assert install.uninstall("claude-code", link).action == "restored"
    assert link.is_symlink() and link.resolve() == real
    assert real.read_text() == USER_SETTINGS and not result.backup.exists()


def test_install_settings_folder_is_input_error(tmp_path: Path) -> None:
    """--settings naming a folder is an InputError (exit 2) naming --settings; nothing
    is written."""
    with pytest.raises(InputError, match=r"--settings: .* is a folder") as info:
        install.install("claude-code", tmp_path)
    assert info.value.exit_code == 2 and list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match=r"--settings: .* is a folder"):
        install.uninstall("codex", tmp_path)


def test_install_bakes_the_workspace_into_the_command(tmp_path: Path, isolated_home: Path) -> None:
    """The command carries CONTINUITY_HOME: the given home, else the current one; a shell
    running it hands hookcmd that home even when its environment has none."""
    settings = tmp_path / "settings.json"
    result = install.install("claude-code", settings)
    assert result.home == Path(os.path.abspath(isolated_home))
    command = _hooks(settings)["Stop"][0]["hooks"][0]["command"]
    assert command.startswith(f"CONTINUITY_HOME={shlex.quote(str(result.home))} ")
    odd = tmp_path / "my home's $dir"
    result = install.install("claude-code", settings, odd)
    assert result.action == "installed" and result.home == odd
    command = _hooks(settings)["Stop"][0]["hooks"][0]["command"]
    assert sum(len(g) for g in _hooks(settings).values()) == 7  # replaced, not added
    assert command.startswith(f"CONTINUITY_HOME={shlex.quote(str(odd))} ")
    env = {k: v for k, v in os.environ.items() if k != "CONTINUITY_HOME"}
    env["CONTINUITY_DAEMON_URL"] = "http://127.0.0.1:1"  # nothing listens: the hook spools
    done = subprocess.run(
        ["sh", "-c", command],
        env=env,
        input=b'{"session_id": "s"}',
        capture_output=True,
        timeout=20,
    )
    assert done.returncode == 0, done.stderr
    spooled = (odd / "spool" / "events.jsonl").read_text()
    assert '"event":"stop"' in spooled.replace(
        " ", ""
    ) and '"harness":"claude-code"' in spooled.replace(" ", "")


def test_install_cli_prints_the_workspace(tmp_path: Path) -> None:
    """`hooks install --home DIR` reports the workspace the hooks point at."""
    from continuity.cli.commands.daemon import register

    app = typer.Typer()
    app.command("noop")(lambda: None)
    register(app)
    settings, home = tmp_path / "settings.json", tmp_path / "ws"
    runner = CliRunner()
    done = runner.invoke(
        app, ["hooks", "install", "claude-code", "--settings", str(settings), "--home", str(home)]
    )
    assert done.exit_code == 0, done.output
    assert f"hooks point at workspace {home}" in done.stdout
    done = runner.invoke(
        app,
        [
            "hooks",
            "install",
            "codex",
            "--settings",
            str(tmp_path / "h.json"),
            "--home",
            str(home),
            "--json",
        ],
    )
    assert json.loads(done.stdout)["home"] == str(home)


_BARE = st.text("abcdefghijklmnopqrstuvwxyz_-", min_size=1, max_size=8)
_VALUE = st.one_of(
    st.integers(-(10**6), 10**6),
    st.booleans(),
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12).map(
        lambda t: json.dumps(t, ensure_ascii=False)
    ),
)


@st.composite
def _codex_config(draw: st.DrawFn) -> str:
    """A config.toml: top-level keys, then tables (one maybe an earlier hooks.state of a
    user's own hook), with comments and blank lines; no trailing newline sometimes."""
    lines = [
        f"{k} = {v}" if not isinstance(v, bool) else f"{k} = {str(v).lower()}"
        for k, v in draw(st.dictionaries(_BARE, _VALUE, max_size=3)).items()
    ]
    for name in draw(st.lists(_BARE, max_size=3, unique=True)):
        lines += ["", f"[tables.{name}]", "# a comment"]
        lines += [
            f"{k} = {json.dumps(str(v), ensure_ascii=False)}"
            for k, v in draw(st.dictionaries(_BARE, _VALUE, max_size=2)).items()
        ]
    if draw(st.booleans()):
        lines += [
            "",
            '[hooks.state."/elsewhere/hooks.json:stop:0:0"]',
            'trusted_hash = "sha256:theirs"',
        ]
    return "\n".join(lines) + ("\n" if draw(st.booleans()) else "")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(config=_codex_config(), user_groups=st.integers(0, 2))
def test_codex_trust_round_trip_property(
    tmp_path_factory: pytest.TempPathFactory, config: str, user_groups: int
) -> None:
    """For any config.toml and any number of the user's own Stop groups before ours: install
    leaves every other table as it was and makes all six hooks trusted; uninstall gives the
    config.toml back byte for byte."""
    import tomllib

    folder = tmp_path_factory.mktemp("codex")
    (folder / "config.toml").write_text(config)
    (folder / "hooks.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "Stop": [
                        {"hooks": [{"type": "command", "command": f"notify {i}"}]}
                        for i in range(user_groups)
                    ]
                }
            }
        )
    )
    before = tomllib.loads(config)
    result = install.install("codex", folder / "hooks.json", folder / "ws")
    assert result.trust is not None and (result.trust.status, result.trust.trusted) == (
        "trusted",
        7,
    )
    after = tomllib.loads((folder / "config.toml").read_text())
    state = after.get("hooks", {}).get("state", {})
    assert f"{folder}/hooks.json:stop:{user_groups}:0" in state
    for key, value in before.items():
        if key != "hooks":
            assert after[key] == value
    for key, value in before.get("hooks", {}).get("state", {}).items():
        assert state[key] == value
    install.uninstall("codex", folder / "hooks.json")
    assert (folder / "config.toml").read_text() == config


# ---------------------------------------------------------------------------- issue 16


def test_install_backup_keeps_the_settings_mode(tmp_path: Path) -> None:
    """Issue 16: the backup of a 0600 settings file (it may hold the user's secrets) is 0600
    too, whatever the umask (it was 0644)."""
    settings = tmp_path / "settings.json"
    settings.write_text('{"env": {"API_KEY": "x"}}\n')
    os.chmod(settings, 0o600)
    old = os.umask(0o022)
    try:
        result = install.install("claude-code", settings, home=tmp_path / "ws")
    finally:
        os.umask(old)
    assert result.backup is not None
    assert stat.S_IMODE(result.backup.stat().st_mode) == 0o600
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600


def test_install_refuses_a_settings_path_that_is_not_a_regular_file(tmp_path: Path) -> None:
    """Issue 16: ``--settings /dev/null`` replaced the device with a regular file. A pipe (as
    a stand-in for a device) is refused, named, and left a pipe; a symlink to a regular file
    is still written through."""
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def writer() -> None:  # lets a read of the pipe (the old behaviour) end instead of hang
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY))

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        with pytest.raises(InputError, match="is not a regular file"):
            install.install("claude-code", fifo, home=tmp_path / "ws")
    finally:
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # release the writer
        thread.join(5)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    real = tmp_path / "real.json"
    real.write_text("{}\n")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    install.install("claude-code", link, home=tmp_path / "ws")
    assert link.is_symlink() and "hooks" in json.loads(real.read_text())


def test_uninstall_pi_removes_the_folders_where_pi_never_ran(tmp_path: Path) -> None:
    """Issue 12: on a machine where pi never ran, install creates agent/extensions; uninstall
    removes both again (the extensions folder was left behind). A reinstall keeps the record;
    a folder holding something else stays."""
    (tmp_path / "home").mkdir()
    agent = tmp_path / "home" / ".pi" / "agent"
    folder = agent / "extensions"
    assert install.install("pi", folder).action == "installed"
    assert json.loads(
        (folder / "continuity.ts").read_text().splitlines()[-1].split(": ", 1)[1]
    ) == [str(folder), str(agent), str(agent.parent)]
    assert install.install("pi", folder).action == "unchanged"
    assert install.uninstall("pi", folder).action == "removed"
    assert list((tmp_path / "home").iterdir()) == []
    install.install("pi", folder)
    (agent / "sessions").mkdir()  # pi ran meanwhile
    assert install.uninstall("pi", folder).action == "removed"
    assert not folder.exists() and sorted(p.name for p in agent.iterdir()) == ["sessions"]
    existing = tmp_path / "own"
    existing.mkdir()
    install.install("pi", existing)
    (existing / "other.ts").write_text("// another extension\n")
    install.uninstall("pi", existing)
    assert sorted(p.name for p in existing.iterdir()) == ["other.ts"]
