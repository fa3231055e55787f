"""Installers: Claude Code and Codex settings merged with a backup, idempotent, uninstall
restoring; pi's extension file; the CLI commands."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import stat
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from continuity.core.errors import InputError
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
    assert set(hooks) == {"PreToolUse", "SessionStart", "UserPromptSubmit", "PreCompact",
                          "PostCompact", "Stop", "SessionEnd"}
    assert hooks["Stop"][0]["hooks"][0]["command"] == "notify-send done"
    ours = hooks["SessionEnd"][0]["hooks"][0]
    assert ours["command"].endswith("session-end --harness claude-code")
    assert "continuity.cli.hookcmd import main" in ours["command"] or "continuity-hook" in \
        ours["command"]
    assert ours["timeout"] == 2 and ours["type"] == "command"


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
    old = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command":
                                         "/old/venv/bin/continuity-hook stop --harness "
                                         "claude-code"}]}]}}
    settings.write_text(json.dumps(old))
    install.install("claude-code", settings)
    stops = _hooks(settings)["Stop"]
    assert len(stops) == 1 and "/old/venv" not in stops[0]["hooks"][0]["command"]


def test_install_replaces_a_hook_of_the_pre_layout_module_path(tmp_path: Path) -> None:
    """A hook installed before issue 11 ran ``from continuity.hookcmd import main``: install
    recognises it as ours and replaces it with the new path (one Stop entry, not two)."""
    settings = tmp_path / "settings.json"
    old_cmd = ('/usr/bin/python3 -I -S -c "import sys; sys.path.append(\'/old/src\'); '
               'from continuity.hookcmd import main; main()" stop --harness claude-code')
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": old_cmd}]}]}}))
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
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code, "stop", "--harness",
                           "claude-code"], input=b"{}", capture_output=True, timeout=30,
                          env={"CONTINUITY_NO_HOOKS": "1"})
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


def test_install_codex_has_no_session_end(tmp_path: Path) -> None:
    """Codex hooks.json gets the same shape, without SessionEnd (formats.md §4.2)."""
    hooks_file = tmp_path / "hooks.json"
    install.install("codex", hooks_file)
    hooks = _hooks(hooks_file)
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PreCompact", "PostCompact",
                          "Stop"}
    assert hooks["Stop"][0]["hooks"][0]["command"].endswith("stop --harness codex")
    assert install.uninstall("codex", hooks_file).action == "removed"


def test_install_pi_writes_the_extension_with_the_command(tmp_path: Path) -> None:
    """pi gets continuity.ts with the hook command filled in; uninstall deletes it, and a
    foreign continuity.ts is left alone."""
    result = install.install("pi", tmp_path)
    text = (tmp_path / "continuity.ts").read_text()
    assert result.action == "installed" and "__CONTINUITY_HOOK_COMMAND__" not in text
    argv = [shutil.which("env") or "/usr/bin/env", f"CONTINUITY_HOME={result.home}",
            *install.hook_argv()]
    assert f"const HOOK_COMMAND = {json.dumps(argv)};" in text
    assert install.install("pi", tmp_path).action == "unchanged"
    assert install.uninstall("pi", tmp_path).action == "removed"
    (tmp_path / "continuity.ts").write_text("// someone else's\n")
    with pytest.raises(InputError, match="not continuity's extension"):
        install.install("pi", tmp_path)


def test_install_default_paths_follow_the_environment(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
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
    done = runner.invoke(app, ["hooks", "install", "claude-code", "--settings", str(settings),
                               "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["action"] == "installed"
    done = runner.invoke(app, ["hooks", "uninstall", "claude-code", "--settings",
                               str(settings)])
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


def test_install_bakes_the_workspace_into_the_command(tmp_path: Path,
                                                      isolated_home: Path) -> None:
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
    assert sum(len(g) for g in _hooks(settings).values()) == 6  # replaced, not added
    assert command.startswith(f"CONTINUITY_HOME={shlex.quote(str(odd))} ")
    env = {k: v for k, v in os.environ.items() if k != "CONTINUITY_HOME"}
    env["CONTINUITY_DAEMON_URL"] = "http://127.0.0.1:1"  # nothing listens: the hook spools
    done = subprocess.run(["sh", "-c", command], env=env, input=b'{"session_id": "s"}',
                          capture_output=True, timeout=20)
    assert done.returncode == 0, done.stderr
    spooled = (odd / "spool" / "events.jsonl").read_text()
    assert '"event":"stop"' in spooled.replace(" ", "") and '"harness":"claude-code"' in \
        spooled.replace(" ", "")


def test_install_cli_prints_the_workspace(tmp_path: Path) -> None:
    """`hooks install --home DIR` reports the workspace the hooks point at."""
    from continuity.cli.commands.daemon import register

    app = typer.Typer()
    app.command("noop")(lambda: None)
    register(app)
    settings, home = tmp_path / "settings.json", tmp_path / "ws"
    runner = CliRunner()
    done = runner.invoke(app, ["hooks", "install", "claude-code", "--settings", str(settings),
                               "--home", str(home)])
    assert done.exit_code == 0, done.output
    assert f"hooks point at workspace {home}" in done.stdout
    done = runner.invoke(app, ["hooks", "install", "codex", "--settings",
                               str(tmp_path / "h.json"), "--home", str(home), "--json"])
    assert json.loads(done.stdout)["home"] == str(home)


def test_uninstall_pi_removes_the_folders_install_created(tmp_path: Path) -> None:
    """Issue 12: on a machine where pi never ran, install creates agent/extensions; uninstall
    removes both again (the extensions folder was left behind). A reinstall keeps the record;
    a folder holding something else stays."""
    (tmp_path / "home").mkdir()
    agent = tmp_path / "home" / ".pi" / "agent"
    folder = agent / "extensions"
    assert install.install("pi", folder).action == "installed"
    assert json.loads((folder / "continuity.ts").read_text().splitlines()[-1].split(": ", 1)[1]) \
        == [str(folder), str(agent), str(agent.parent)]
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
