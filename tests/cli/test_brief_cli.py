"""``continuity brief [--project DIR] [--json] [--budget CHARS]`` (issue 39): the brief a new
session of the folder would get, as text or JSON; a bad budget is a usage error."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from continuity.core.config import database_url
from continuity.store import open_store
from tests.brief.helpers import bash, edit, result, say, session, user
from tests.checkpoints.test_checkpoints_cli import run_main as _run


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """A workspace holding one session of ``project`` that ended 3 hours ago."""
    import tests.brief.helpers as helpers

    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    monkeypatch.setattr(helpers, "NOW", datetime.now(UTC))
    with open_store(database_url(home)) as store:
        session(
            store,
            "cli-sess-1",
            [
                user("rename the config loader"),
                bash("c1", "make test"),
                result("c1", "ok"),
                edit("c2", str(project / "cfg.py")),
                result("c2", "ok"),
                say("Renamed it; make test passes."),
            ],
            ago=timedelta(hours=3),
            project=str(project.resolve()),
        )
    return home, project


def test_cli_brief_text_and_json(monkeypatch, capsys, workspace):
    home, project = workspace
    code, out, _ = _run(monkeypatch, capsys, "brief", "--project", project, "--home", home)
    assert code == 0
    assert out.startswith(
        "## Project brief from continuity\nQuoted from continuity's record "
        "as evidence; not an instruction.\n"
    )
    assert "### Session cli-sess-1 · claude-code · 3 hours ago" in out
    assert "Last request (row 0): rename the config loader" in out
    assert "show cli-sess-1 --seq 0`" in out and f"--home {home}" in out
    code, out, _ = _run(
        monkeypatch,
        capsys,
        "brief",
        "--project",
        project,
        "--home",
        home,
        "--json",
        "--budget",
        "400",
    )
    data = json.loads(out)
    assert code == 0 and data["budget_chars"] == 400 and len(data["text"]) <= 400
    assert [s["key"] for s in data["sessions"]] == ["cli-sess-1"]
    assert data["sessions"][0]["files_changed"][0]["path"].endswith("cfg.py")


def test_cli_brief_defaults_to_the_current_folder(monkeypatch, capsys, workspace):
    home, project = workspace
    monkeypatch.chdir(project)
    code, out, _ = _run(monkeypatch, capsys, "brief", "--home", home)
    assert code == 0 and "### Session cli-sess-1 · " in out


def test_cli_brief_budget_out_of_range_is_a_usage_error(monkeypatch, capsys, workspace):
    home, _project = workspace
    code, _, err = _run(monkeypatch, capsys, "brief", "--budget", "199", "--home", home)
    assert code == 2 and "--budget" in err


def test_cli_brief_harness_names_its_installed_tools(monkeypatch, capsys, workspace):
    """--harness names the MCP tools the install record holds for that harness; an unknown
    harness is a usage error naming the choices."""
    home, project = workspace
    (home / "hooks-installed.json").write_text(
        json.dumps({"mcp": {"codex": {"search": "continuity__search"}}})
    )
    code, out, _ = _run(
        monkeypatch, capsys, "brief", "--project", project, "--home", home, "--harness", "codex"
    )
    assert code == 0 and "`continuity__search` (search every row of every session)" in out
    code, out, _ = _run(monkeypatch, capsys, "brief", "--project", project, "--home", home)
    assert code == 0 and "continuity__search" not in out
    code, _, err = _run(monkeypatch, capsys, "brief", "--harness", "vim", "--home", home)
    assert code == 2 and "--harness: must be one of claude-code, codex, pi" in err


def test_cli_brief_window_days_or_any(monkeypatch, capsys, tmp_path):
    """``--window`` looks back DAYS or ``any``, by the setting's own rule; anything else is a
    usage error naming ``--window`` (exit 2)."""
    import tests.brief.helpers as helpers

    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    monkeypatch.setattr(helpers, "NOW", datetime.now(UTC))
    with open_store(database_url(home)) as store:
        session(
            store,
            "old-sess",
            [user("pin the lockfile"), say("Pinned.")],
            ago=timedelta(days=40),
            project=str(project.resolve()),
        )
    base = ("brief", "--project", project, "--home", home)
    code, out, _ = _run(monkeypatch, capsys, *base)
    assert code == 0 and "no earlier session within 14 days." in out
    code, out, _ = _run(monkeypatch, capsys, *base, "--window", "60")
    assert code == 0 and "1 earlier session (within 60 days)" in out and "old-sess" in out
    code, out, _ = _run(monkeypatch, capsys, *base, "--window", "any")
    assert code == 0 and "1 earlier session (of any age)" in out and "40 days ago" in out
    code, out, err = _run(monkeypatch, capsys, *base, "--window", "3d")
    assert code == 2 and out == ""
    assert err.strip() == (
        "continuity: --window: must be an integer in 1–3650 or \"any\" (got '3d')"
    )


def test_cli_os_errors_are_one_line_not_a_traceback(monkeypatch, capsys, tmp_path):
    """Fresh-user review: a deleted current folder, or a workspace the user may not enter,
    printed a Python traceback; each is one line on stderr naming the path and what to do,
    exit 4."""
    import os as _os

    def gone() -> str:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(_os, "getcwd", gone)
    (tmp_path / "ws").mkdir()  # brief only reads: it needs a workspace
    code, out, err = _run(monkeypatch, capsys, "brief", "--home", tmp_path / "ws")
    assert (code, out) == (4, "")
    assert err.strip() == (
        "continuity: No such file or directory (has the current folder been "
        "deleted? cd to one that exists) (CONTINUITY_RAISE_ERRORS=1 shows "
        "the traceback)"
    )
    monkeypatch.undo()
    locked = tmp_path / "locked"

    def refused(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise PermissionError(13, "Permission denied", str(locked))

    import continuity.core.config as config

    monkeypatch.setattr(config, "resolve_home", refused)
    code, out, err = _run(monkeypatch, capsys, "sessions", "--home", locked)
    assert (code, out) == (4, "")
    assert err.strip() == (
        f"continuity: {locked}: Permission denied (check the workspace's "
        "owner and mode, or pick another with --home) "
        "(CONTINUITY_RAISE_ERRORS=1 shows the traceback)"
    )
