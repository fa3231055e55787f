"""`continuity doctor` (issue 12): per harness found / hooks / Codex trust / last event, the
daemon of the workspace and the spool backlog, each problem with its fix; exit 1 when broken.

The harness CLIs are fake scripts on a PATH of the test's own; the daemon is a tiny HTTP server
answering ``/health``; HOME is the test's folder, so the real user's settings are never read."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.core.model import Session
from continuity.daemon.hooks import install
from continuity.store import open_store

runner = CliRunner()


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """HOME and PATH of the test's own, with a fake `claude` (2.1.332) and `codex` (0.171.0)."""
    home, bin_dir, ws = tmp_path / "user", tmp_path / "bin", tmp_path / "ws"
    for folder in (home, bin_dir, ws):
        folder.mkdir()
    ws.chmod(0o700)  # as the product makes it (issue 16); tmp_path folders are 0755
    for name, version in (("claude", "2.1.332 (Claude Code)"), ("codex", "codex-cli 0.171.0")):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\necho '{version}'\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.setenv("CONTINUITY_HOME", str(ws))
    return {"home": home, "ws": ws, "bin": bin_dir}


@pytest.fixture
def daemon(world: dict[str, Path]) -> Iterator[str]:
    """A stand-in daemon answering GET /health, named in <ws>/daemon.url."""

    class Health(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = json.dumps({"status": "ok", "pid": 4242}).encode()
            self.send_response(200 if self.path == "/health" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    (world["ws"] / "daemon.url").write_text(url + "\n")
    (world["ws"] / "daemon.url").chmod(0o600)
    yield url
    server.shutdown()
    server.server_close()


def doctor(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["doctor", "--json", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, json.loads(result.stdout)


def check(report: dict[str, Any], name: str, harness: str | None) -> dict[str, Any]:
    found = [c for c in report["checks"] if c["check"] == name and c["harness"] == harness]
    assert len(found) == 1, (name, harness, report["checks"])
    return found[0]


def test_doctor_fresh_install_names_what_is_missing(world: dict[str, Path]) -> None:
    """Nothing installed, no daemon: exit 1; the daemon, the hooks and the commands to run."""
    code, report = doctor()
    ws = str(world["ws"])
    assert code == 1 and report["ok"] is False and report["home"] == ws
    assert check(report, "daemon", None)["status"] == "problem"
    assert check(report, "daemon", None)["fix"] == f"start it: `continuity serve --home {ws}`"
    assert check(report, "found", "claude-code")["data"]["version"] == "2.1.332"
    assert check(report, "found", "codex")["data"]["version"] == "0.171.0"
    assert check(report, "found", "pi")["status"] == "info"
    claude = check(report, "hooks", "claude-code")
    assert claude["status"] == "warning"
    assert (
        claude["fix"]
        == f"if you use claude, run `continuity hooks install claude-code --home {ws}`"
    )
    nothing = check(report, "hooks", None)
    assert nothing["status"] == "problem"
    assert nothing["fix"] == f"run `continuity hooks install claude-code --home {ws}`"
    text = runner.invoke(app, ["doctor"])
    assert text.exit_code == 1
    assert "PROBLEM daemon: no daemon serves this workspace" in text.stdout
    assert "problem(s): capture is not working" in text.stdout


def test_doctor_working_install_says_all_is_well(world: dict[str, Path], daemon: str) -> None:
    """Hooks of Claude Code and Codex installed for this workspace (Codex trusted), the daemon
    up, a captured session: exit 0, no problem, the last event named."""
    install.install("claude-code", home=world["ws"])
    install.install("codex", home=world["ws"])
    started = datetime(2026, 12, 2, 5, 24, tzinfo=UTC)
    with open_store(f"sqlite:///{world['ws'] / 'continuity.db'}") as store:
        store.upsert_session(Session("cc-1", "claude-code", started_at=started))
    code, report = doctor()
    assert code == 0, report
    assert report["ok"] is True
    assert check(report, "daemon", None)["data"]["url"] == daemon
    assert check(report, "hooks", "claude-code")["status"] == "ok"
    assert check(report, "hooks", "codex")["data"]["homes"] == [str(world["ws"])]
    assert check(report, "trust", "codex")["detail"].startswith("Codex trusts all 7 ")
    last = check(report, "last-event", "claude-code")
    assert last["data"] == {"session": "cc-1", "rows": 0, "at": "2026-12-02T05:24:00+00:00"}
    assert check(report, "last-event", "codex")["status"] == "info"
    assert "all is well: live capture works" in runner.invoke(app, ["doctor"]).stdout


def test_doctor_sees_hooks_installed_with_settings(world: dict[str, Path]) -> None:
    """A review: `hooks install claude-code --settings FILE` installed into FILE, and doctor
    then said "not installed (~/.claude/settings.json)" and "no harness has continuity's
    hooks", exit 1. The install notes FILE in the workspace and doctor checks it."""
    custom = world["home"] / "elsewhere" / "settings.json"
    custom.parent.mkdir()
    done = runner.invoke(
        app,
        ["hooks", "install", "claude-code", "--settings", str(custom), "--home", str(world["ws"])],
    )
    assert done.exit_code == 0, done.output
    assert json.loads((world["ws"] / "hooks-installed.json").read_text()) == {
        "claude-code": str(custom)
    }
    assert stat.S_IMODE((world["ws"] / "hooks-installed.json").stat().st_mode) == 0o600
    _code, report = doctor("--harness", "claude-code")
    hooks = check(report, "hooks", "claude-code")
    assert hooks["status"] == "ok", hooks
    assert hooks["detail"].startswith(f"installed in {custom}, pointing at ")
    assert not [c for c in report["checks"] if c["check"] == "hooks" and c["harness"] is None]


def test_doctor_hooks_of_another_workspace_or_untrusted_are_problems(
    world: dict[str, Path], daemon: str, tmp_path: Path
) -> None:
    """Claude Code hooks sending to another workspace, Codex hooks untrusted (--no-trust):
    both problems, each with its fix; exit 1."""
    other = tmp_path / "other-ws"
    install.install("claude-code", home=other)
    install.install("codex", home=world["ws"], trust=False)
    code, report = doctor()
    assert code == 1
    claude = check(report, "hooks", "claude-code")
    assert claude["status"] == "problem"
    assert f"send events to {other}, not to this workspace ({world['ws']})" in claude["detail"]
    trust = check(report, "trust", "codex")
    assert trust["status"] == "problem" and trust["data"]["trusted"] == 0
    assert trust["detail"] == (
        "Codex does not trust 7 of the 7 continuity hooks: `codex exec` skips them silently"
    )
    assert "continuity hooks install codex" in trust["fix"]


def test_doctor_missing_events_and_a_gone_python_are_problems(
    world: dict[str, Path], daemon: str
) -> None:
    """A hooks file lacking one of our events, or whose Python no longer exists."""
    install.install("claude-code", home=world["ws"])
    settings = world["home"] / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    del data["hooks"]["SessionEnd"]
    settings.write_text(json.dumps(data))
    code, report = doctor("--harness", "claude-code")
    assert code == 1
    assert check(report, "hooks", "claude-code")["data"]["missing"] == ["SessionEnd"]
    text = settings.read_text().replace(install.hook_argv()[0], "/gone/python3")
    settings.write_text(text)
    _, report = doctor("--harness", "claude-code")
    hooks = check(report, "hooks", "claude-code")
    assert (
        hooks["status"] == "problem" and "/gone/python3, which no longer exists" in hooks["detail"]
    )


def test_doctor_counts_the_spool_backlog(world: dict[str, Path]) -> None:
    """Lines of events.jsonl and of replay files not marked done are the backlog; rejected
    lines are counted apart."""
    spool = world["ws"] / "spool"
    spool.mkdir()
    line = '{{"v":1,"id":"{}","at":"2026-12-02T05:00:00.000Z","event":"stop","harness":"codex","payload_b64":"e30="}}\n'
    (spool / "events.jsonl").write_text(line.format("a1") + line.format("a2"))
    (spool / "replay-00000000000000000001-1.jsonl").write_text(
        line.format("b1") + line.format("b2")
    )
    (spool / "replay-00000000000000000001-1.jsonl.done").write_text("b1\n")
    (spool / "rejected.jsonl").write_text('{"reason": "bad"}\n')
    code, report = doctor()
    spooled = check(report, "spool", None)
    assert code == 1 and spooled["status"] == "problem"
    assert spooled["data"] == {"waiting": 3, "rejected": 1}
    assert spooled["fix"] == f"start it: `continuity serve --home {world['ws']}`"


def test_doctor_names_a_workspace_others_can_read(world: dict[str, Path]) -> None:
    """Issue 16: a 0644 database inside an owner-only workspace folder is a warning (out of
    others' reach); once the folder is 0755 too it is still a warning (issue 45 item 2: capture
    works) naming both modes, with the chmod that fixes it; an owner-only workspace is ok."""
    _, report = doctor()
    assert check(report, "private", None)["status"] == "ok"
    db = world["ws"] / "continuity.db"
    db.touch()  # doctor reads the store only when a harness has hooks
    db.chmod(0o644)
    _, report = doctor()
    private = check(report, "private", None)
    assert private["status"] == "warning"
    assert private["detail"] == (
        f"wider than owner-only, though inside an owner-only folder: {db} (644)"
    )
    world["ws"].chmod(0o755)
    _code, report = doctor()
    private = check(report, "private", None)
    assert private["status"] == "warning"
    assert private["detail"] == f"others can read the workspace: {world['ws']} (755), {db} (644)"
    assert private["fix"] == f"chmod -R go= {world['ws']}"
    assert private["data"] == {"exposed": [str(world["ws"]), str(db)]}


def test_doctor_rejects_an_unknown_harness(world: dict[str, Path]) -> None:
    """An unknown --harness is bad input (InputError: exit 2 through the console entry)."""
    from continuity.core.errors import InputError

    result = runner.invoke(app, ["doctor", "--harness", "cursor"])
    assert isinstance(result.exception, InputError)
    assert str(result.exception) == (
        "--harness: must be one of claude-code, codex, pi, opencode, gemini-cli, qwen-code, "
        "copilot-cli (got 'cursor')"
    )
    assert result.exception.exit_code == 2


# ------------------------------------------------------------------ issue 45 item 2


def _printed_commands(checks: list[dict[str, Any]]) -> list[list[str]]:
    """Every `continuity ...` command the fixes print, as argv (shell-split as a user's
    shell would)."""
    import re
    import shlex

    found = []
    for c in checks:
        for text in re.findall(r"`(continuity [^`]*)`", c["fix"] or ""):
            found.append(shlex.split(text))
    return found


def test_every_printed_fix_keeps_the_workspace_and_works_as_printed(
    world: dict[str, Path], daemon: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 45 item 2: doctor's Codex-trust fix said `continuity hooks install codex again`
    without --home; run as printed (no $CONTINUITY_HOME), the hooks moved to the default
    workspace. Every command a fix prints names --home <the workspace in use>, and running
    each as printed leaves the hooks on this workspace and Codex trusting them."""
    monkeypatch.delenv("CONTINUITY_HOME")
    ws = str(world["ws"])
    install.install("codex", home=world["ws"], trust=False)  # untrusted: the trust fix
    (world["ws"] / "config.toml").write_text("[daemon]\nstop_seconds = 2\n")  # a config fix
    code, report = doctor("--home", ws)
    assert code == 1
    commands = _printed_commands(report["checks"])
    assert ["continuity", "hooks", "install", "codex", "--home", ws] in commands, commands
    assert ["continuity", "doctor", "--home", ws] in commands, commands
    for argv in commands:
        assert argv[-2:] == ["--home", ws], argv
    (world["ws"] / "config.toml").unlink()
    for argv in commands:
        if argv[1] in ("serve", "watch", "import"):  # long-running, or a folder to name
            continue
        done = runner.invoke(app, argv[1:])
        assert done.exit_code in (0, 1), (argv, done.output)
    code, report = doctor("--home", ws)
    assert check(report, "hooks", "codex")["data"]["homes"] == [ws]
    assert check(report, "trust", "codex")["status"] == "ok"
    assert code == 0, report


def test_hooks_install_prints_a_trust_step_with_its_home_and_settings(
    world: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 45 item 2, the same fault in `hooks install codex --no-trust`: its "One step
    left" names the --home and --settings it was given."""
    monkeypatch.delenv("CONTINUITY_HOME")
    custom = tmp_path / "elsewhere" / "hooks.json"
    custom.parent.mkdir()
    done = runner.invoke(
        app,
        [
            "hooks",
            "install",
            "codex",
            "--no-trust",
            "--settings",
            str(custom),
            "--home",
            str(world["ws"]),
        ],
    )
    assert done.exit_code == 0, done.output
    assert (
        f"run `continuity hooks install codex --settings {custom} --home {world['ws']}` "
        "again (it writes the trust)"
    ) in done.output


def test_a_loose_mode_is_a_warning_with_the_chmod(world: dict[str, Path], daemon: str) -> None:
    """Issue 45 item 2: a workspace others can read is a warning with the chmod that fixes
    it, not "capture is not working" (exit 1): capture works."""
    install.install("claude-code", home=world["ws"])
    world["ws"].chmod(0o755)
    code, report = doctor("--harness", "claude-code")
    private = check(report, "private", None)
    assert private["status"] == "warning"
    assert private["fix"] == f"chmod -R go= {world['ws']}"
    assert code == 0, report
    text = runner.invoke(app, ["doctor", "--harness", "claude-code"])
    assert text.exit_code == 0 and "capture is not working" not in text.stdout


def test_removed_hooks_with_recent_sessions_are_a_problem(
    world: dict[str, Path], daemon: str
) -> None:
    """Issue 45 item 2: Claude Code hooks removed while the workspace holds a Claude Code
    session with rows from an hour ago: capture stopped, a problem with the install fix
    (a warning only when the newest session is older than RECENT_CAPTURE_DAYS)."""
    from datetime import timedelta

    from continuity.cli.commands.doctor import RECENT_CAPTURE_DAYS

    install.install("codex", home=world["ws"])  # another harness hooked: no "nothing hooked"
    recent = datetime.now(UTC) - timedelta(hours=1)
    with open_store(f"sqlite:///{world['ws'] / 'continuity.db'}") as store:
        store.upsert_session(Session("cc-1", "claude-code", started_at=recent))
    code, report = doctor()
    # imported only (no hook event ever applied): nothing was captured, so nothing stopped
    assert check(report, "hooks", "claude-code")["status"] == "warning"
    assert code == 0
    with open_store(f"sqlite:///{world['ws'] / 'continuity.db'}") as store:
        store.mark_events_applied(["e" * 32], recent)  # the hooks delivered an event once
    code, report = doctor()
    hooks = check(report, "hooks", "claude-code")
    assert hooks["status"] == "problem", hooks
    assert "capture of claude-code stopped" in hooks["detail"]
    assert hooks["fix"] == f"run `continuity hooks install claude-code --home {world['ws']}`"
    assert code == 1
    old = datetime.now(UTC) - timedelta(days=RECENT_CAPTURE_DAYS + 1)
    with open_store(f"sqlite:///{world['ws'] / 'continuity.db'}") as store:
        store.upsert_session(Session("cc-1", "claude-code", started_at=old))
    code, report = doctor()
    assert check(report, "hooks", "claude-code")["status"] == "warning"


def test_a_database_with_corrupt_pages_is_a_problem(world: dict[str, Path], daemon: str) -> None:
    """Issue 45 item 2: a database whose pages are corrupt passed every check. Doctor runs
    PRAGMA quick_check: ok on a sound file; on one with a table page overwritten, a problem
    quoting SQLite's findings, exit 1."""
    import sqlite3

    install.install("claude-code", home=world["ws"])
    db = world["ws"] / "continuity.db"
    with open_store(f"sqlite:///{db}") as store:
        store.upsert_session(Session("cc-1", "claude-code"))
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE filler (x TEXT)")
    conn.executemany("INSERT INTO filler VALUES (?)", [("x" * 500,) for _ in range(400)])
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'filler'").fetchone()[0]
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    code, report = doctor("--harness", "claude-code")
    assert check(report, "integrity", None)["status"] == "ok"
    assert code == 0, report
    with db.open("r+b") as f:  # the filler table's root page: garbage over its header
        f.seek((root - 1) * page)
        f.write(b"\x0d\xff\xff\xff\xff\xff\xff\xff" * 64)
    code, report = doctor("--harness", "claude-code")
    found = check(report, "integrity", None)
    assert found["status"] == "problem", found
    assert found["detail"].startswith(f"{db} is damaged (PRAGMA quick_check: ")
    assert found["data"]["findings"] != ["ok"]
    assert code == 1


def test_doctor_checks_the_recorded_settings_even_when_the_default_exists(
    world: dict[str, Path], tmp_path: Path
) -> None:
    """Issue 45 item 3: with both ~/.claude/settings.json (here another workspace's hooks)
    and the --settings FILE recorded in hooks-installed.json, doctor checked the default
    file. It checks the recorded one, and its fix carries --settings FILE."""
    install.install("claude-code", home=tmp_path / "other-ws")  # the default file
    assert (world["home"] / ".claude" / "settings.json").exists()
    custom = world["home"] / "elsewhere" / "settings.json"
    custom.parent.mkdir()
    done = runner.invoke(
        app,
        ["hooks", "install", "claude-code", "--settings", str(custom), "--home", str(world["ws"])],
    )
    assert done.exit_code == 0, done.output
    _, report = doctor("--harness", "claude-code")
    hooks = check(report, "hooks", "claude-code")
    assert hooks["status"] == "ok", hooks
    assert hooks["detail"].startswith(f"installed in {custom}, pointing at ")
    data = json.loads(custom.read_text())
    del data["hooks"][sorted(data["hooks"])[0]]  # an event lost: a problem with its fix
    custom.write_text(json.dumps(data))
    _code, report = doctor("--harness", "claude-code")
    hooks = check(report, "hooks", "claude-code")
    assert hooks["status"] == "problem" and hooks["detail"].startswith(f"installed in {custom}")
    assert (
        f"`continuity hooks install claude-code --settings {custom} --home {world['ws']}`"
        in hooks["fix"]
    ), hooks["fix"]
