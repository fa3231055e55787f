"""A command that only reads, given a workspace that does not exist (``--home /typo``,
``CONTINUITY_HOME=/typo``), says so and creates nothing (fresh-user review: it made an empty
workspace there and listed nothing, as if every session were gone); a command that writes
still creates it. README: exit 2, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.running import run_main

#: Every command that only reads the workspace, with the arguments it needs.
READING = [
    ["sessions"],
    ["sessions", "--json"],
    ["show", "3185d1ef"],
    ["continue", "3185d1ef"],
    ["search", "export"],
    ["recall", "export"],
    ["checkpoints", "3185d1ef"],
    ["recover", "3185d1ef"],
    ["receipts", "3185d1ef"],
    ["brief"],
    ["transcript", "3185d1ef"],
    ["export", "3185d1ef"],
    ["lineage", "3185d1ef"],
    ["usage"],
    ["prune", "--dry-run"],
]


def _said(missing: Path, source: str, fix: str) -> str:
    return (
        f"continuity: no workspace at {missing}: {source} names a folder that does not exist "
        f"(nothing has been imported there); check {source}, or import into it: `{fix}`\n"
    )


@pytest.mark.parametrize("argv", READING, ids=" ".join)
def test_a_read_command_names_the_absent_home_and_creates_nothing(
    monkeypatch, capsys, tmp_path, argv
):
    missing = tmp_path / "no" / "such"
    code, out, err = run_main(monkeypatch, capsys, *argv, "--home", missing)
    assert (code, out) == (2, "")
    assert err == _said(missing, "--home", f"continuity import PATH... --home {missing}")
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("argv", [["sessions"], ["search", "export"], ["show", "3185d1ef"]])
def test_an_absent_continuity_home_is_named_as_the_variable(monkeypatch, capsys, tmp_path, argv):
    missing = tmp_path / "no" / "such"
    monkeypatch.setenv("CONTINUITY_HOME", str(missing))
    code, out, err = run_main(monkeypatch, capsys, *argv)
    assert (code, out) == (2, "")
    assert err == _said(missing, "$CONTINUITY_HOME", "continuity import PATH...")
    assert not (tmp_path / "no").exists()


def test_a_global_home_before_the_command_is_checked_too(monkeypatch, capsys, tmp_path):
    missing = tmp_path / "absent"
    code, _out, err = run_main(monkeypatch, capsys, "--home", missing, "sessions")
    assert code == 2 and err.startswith(f"continuity: no workspace at {missing}: --home ")
    assert not missing.exists()


def test_a_usage_error_still_comes_first(monkeypatch, capsys, tmp_path):
    """A bad option value is the error a user must fix first, as before."""
    code, _out, err = run_main(
        monkeypatch, capsys, "search", "x", "--since", "soonish", "--home", tmp_path / "absent"
    )
    assert code == 2 and err.startswith("error: Invalid value: --since 'soonish'"), err


def test_a_command_that_writes_still_creates_the_workspace(monkeypatch, capsys, tmp_path):
    home = tmp_path / "new" / "ws"
    code, out, err = run_main(
        monkeypatch, capsys, "remember", "the export job runs at 02:00 UTC", "--home", home
    )
    assert code == 0, err
    assert (home / "continuity.db").is_file() and out.strip()
    code, out, _err = run_main(monkeypatch, capsys, "recall", "export job", "--home", home)
    assert code == 0 and "the export job runs at 02:00 UTC" in out


def test_the_default_workspace_is_not_an_error(monkeypatch, capsys, tmp_path):
    """Nothing named, nothing mistyped: a new user's first `sessions` says to import."""
    monkeypatch.delenv("CONTINUITY_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    code, _out, err = run_main(monkeypatch, capsys, "sessions")
    assert code == 0 and err.startswith("no sessions yet: import some"), err


def test_a_database_url_needs_no_workspace_folder(monkeypatch, capsys, tmp_path):
    """With $CONTINUITY_DATABASE_URL the database is elsewhere: nothing to miss there."""
    monkeypatch.setenv("CONTINUITY_DATABASE_URL", f"sqlite:///{tmp_path / 'elsewhere.db'}")
    code, _out, err = run_main(monkeypatch, capsys, "sessions", "--home", tmp_path / "absent")
    assert code == 0 and err.startswith("no sessions yet"), err


def test_where_and_doctor_say_the_workspace_does_not_exist(monkeypatch, capsys, tmp_path):
    """A fresh-user review: ``where`` and ``doctor`` with a mistyped ``--home`` said nothing of
    it, and doctor called the absent folder owner-only. Both tell, and create nothing."""
    import json

    missing = tmp_path / "no" / "such"
    code, out, err = run_main(monkeypatch, capsys, "where", "--home", missing)
    assert (code, out.splitlines()[0]) == (0, f"home: {missing}")
    assert err == (
        f"note: {missing} does not exist yet (`continuity import PATH`, `continuity serve` "
        "or a hook creates it)\n"
    )
    code, out, err = run_main(monkeypatch, capsys, "doctor", "--json", "--home", missing)
    checks = {c["check"]: c for c in json.loads(out)["checks"] if c["harness"] is None}
    assert "private" not in checks
    assert checks["workspace"]["status"] == "warning"
    assert checks["workspace"]["detail"] == (
        f"{missing} does not exist: nothing was imported or captured here yet"
    )
    assert not (tmp_path / "no").exists()
