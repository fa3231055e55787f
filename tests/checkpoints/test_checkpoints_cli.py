"""The checkpoint commands: ``checkpoint``, ``checkpoints``, ``prune``, ``recover``, their
JSON shapes and exit codes (2 bad input or config, 3 unknown session)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from continuity.cli import app as cli
from continuity.cli.app import app
from tests.paths import SHARED_DATA

runner = CliRunner()


def run_main(monkeypatch, capsys, *args) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    """Run the console-script entry point in-process: (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["continuity", *map(str, args)])
    with pytest.raises(SystemExit) as exc:
        cli.main()
    cap = capsys.readouterr()
    return exc.value.code or 0, cap.out, cap.err


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A workspace with the Codex compaction sample imported."""
    result = runner.invoke(
        app,
        [
            "import",
            str(SHARED_DATA / "codex" / "with-compaction.jsonl"),
            "--home",
            str(tmp_path),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    return tmp_path


def test_cli_checkpoint_writes_explicit_and_lists_it(monkeypatch, capsys, home):
    """checkpoint prints the digest and confirms on stderr; checkpoints --json lists it."""
    code, out, err = run_main(
        monkeypatch,
        capsys,
        "checkpoint",
        "compact",
        "--reason",
        "pause here; PASSWORD=hunter22x",
        "--home",
        home,
    )
    assert code == 0 and out.startswith("## Explicit Checkpoint\n")
    assert "PASSWORD=[REDACTED:password]" in out and "hunter22x" not in out
    assert "written for compact-codex-001 (explicit)" in err
    code, out, _ = run_main(monkeypatch, capsys, "checkpoints", "compact", "--json", "--home", home)
    listed = json.loads(out)
    # 5 replayed by the import (3 periodic, pre_compaction, session_end) + the explicit one
    assert code == 0 and (listed["session"], listed["count"]) == ("compact-codex-001", 6)
    assert [c["trigger"] for c in listed["checkpoints"]] == [
        "periodic",
        "periodic",
        "periodic",
        "pre_compaction",
        "session_end",
        "explicit",
    ]
    assert set(listed["checkpoints"][0]) == {
        "id",
        "session",
        "harness",
        "project",
        "project_normalized",
        "trigger",
        "prompt_count",
        "memory_queries",
        "recent_remembers",
        "created_at",
        "digest",
    }


def test_cli_checkpoint_agent_trigger_json(monkeypatch, capsys, home):
    """--trigger agent writes an agent checkpoint; --json prints it."""
    code, out, _ = run_main(
        monkeypatch,
        capsys,
        "checkpoint",
        "compact-codex-001",
        "--reason",
        "tool call",
        "--trigger",
        "agent",
        "--json",
        "--home",
        home,
    )
    row = json.loads(out)
    assert code == 0 and (row["trigger"], row["prompt_count"]) == ("agent", 1)


def test_cli_recover_prints_digest_and_json(monkeypatch, capsys, home):
    """recover prints the newest checkpoint's digest; --json says where it came from."""
    run_main(monkeypatch, capsys, "checkpoint", "compact", "--reason", "r", "--home", home)
    code, out, _ = run_main(monkeypatch, capsys, "recover", "compact", "--home", home)
    assert code == 0 and out.startswith("## Explicit Checkpoint\nProject: /home/testuser/")
    code, out, _ = run_main(monkeypatch, capsys, "recover", "compact", "--json", "--home", home)
    found = json.loads(out)
    assert (found["session"], found["source"], found["truncated"]) == (
        "compact-codex-001",
        "session",
        False,
    )


def test_cli_recover_nothing_found(monkeypatch, capsys, home):
    """With nothing to recover, recover says so on stderr and exits 0."""
    code, out, err = run_main(
        monkeypatch, capsys, "recover", "--project", "/nowhere", "--home", home
    )
    assert (code, out) == (0, "") and "nothing to recover for /nowhere" in err
    code, out, _ = run_main(
        monkeypatch, capsys, "recover", "--project", "/nowhere", "--json", "--home", home
    )
    assert json.loads(out)["checkpoint"] is None


def test_cli_prune_counts_and_rejects_bad_retention(monkeypatch, capsys, home):
    """prune reports how many rows went; a retention outside 1–90 exits 2."""
    run_main(monkeypatch, capsys, "checkpoint", "compact", "--reason", "r", "--home", home)
    code, out, _ = run_main(monkeypatch, capsys, "prune", "--dry-run", "--home", home)
    assert (code, out.strip()) == (
        0,
        "would prune 5 checkpoint(s) older than 7 day(s); nothing "
        "deleted (run without --dry-run to delete them)",
    )
    code, out, _ = run_main(monkeypatch, capsys, "prune", "--dry-run", "--json", "--home", home)
    assert json.loads(out) == {"would_delete": 5, "retention_days": 7, "dry_run": True}
    # issue 20: the dry run deleted nothing; the import replayed 5 checkpoints dated
    # 2025-10-28: older than 7 days, so pruned now
    code, out, _ = run_main(monkeypatch, capsys, "prune", "--json", "--home", home)
    assert code == 0 and json.loads(out) == {"deleted": 5, "retention_days": 7, "dry_run": False}
    code, _, err = run_main(monkeypatch, capsys, "prune", "--retention-days", "91", "--home", home)
    assert code == 2 and "1–90" in err


def test_cli_bad_config_and_unknown_session(monkeypatch, capsys, home):
    """A bad [continuity] value exits 2 naming the field; an unknown session exits 3."""
    (home / "config.toml").write_text("[continuity]\nrecoveryBudgetChars = 50\n")
    code, _, err = run_main(monkeypatch, capsys, "recover", "compact", "--home", home)
    assert code == 2 and "recoveryBudgetChars" in err and "200–10000" in err
    (home / "config.toml").unlink()
    code, _, err = run_main(monkeypatch, capsys, "checkpoints", "nope", "--home", home)
    assert code == 3 and "no session matches 'nope'" in err
    code, _, err = run_main(monkeypatch, capsys, "recover", "--home", home)
    assert code == 2 and "SESSION or --project" in err


def _corrupt_newest(home: Path, column: str = "memory_queries", value: str = '["unclosed') -> int:
    """Damage the newest checkpoint row of the workspace in SQLite itself (a bad manual edit);
    returns its id."""
    import sqlite3

    with sqlite3.connect(home / "continuity.db") as db:
        (newest,) = db.execute("SELECT max(checkpoint_id) FROM session_checkpoints").fetchone()
        db.execute(
            f"UPDATE session_checkpoints SET {column} = ? WHERE checkpoint_id = ?", (value, newest)
        )
    return newest


def test_cli_checkpoints_damaged_newest_row_reported_and_skipped(monkeypatch, capsys, home):
    """Issue 15: a corrupt JSON column in the newest checkpoint row crashed `checkpoints` with
    a traceback. The row is reported as damaged (id, column) and skipped; the other 4 are
    listed, and `recover` falls back to the newest readable one."""
    bad = _corrupt_newest(home)
    code, out, err = run_main(
        monkeypatch, capsys, "checkpoints", "compact", "--json", "--home", home
    )
    listed = json.loads(out)
    assert code == 0 and listed["count"] == 4
    assert [c["trigger"] for c in listed["checkpoints"]] == [
        "periodic",
        "periodic",
        "periodic",
        "pre_compaction",
    ]
    assert [(d["id"], d["session"], d["column"]) for d in listed["damaged"]] == [
        (bad, "compact-codex-001", "memory_queries")
    ]
    assert f"checkpoint #{bad} of compact-codex-001 is damaged (memory_queries:" in err
    code, out, err = run_main(monkeypatch, capsys, "checkpoints", "compact", "--home", home)
    assert code == 0 and out.count("periodic prompts=") == 3 and "Traceback" not in out + err
    code, out, _ = run_main(monkeypatch, capsys, "recover", "compact", "--json", "--home", home)
    assert code == 0 and json.loads(out)["checkpoint"]["trigger"] == "pre_compaction"


def test_cli_checkpoints_count_means_readable_rows(monkeypatch, capsys, home):
    """Issue 45 item 4b: `checkpoints -n 2` with a damaged newest row gave one row; it gives
    the two newest readable ones (the same as the last two of the full list), and names the
    damaged row it passed."""
    code, out, _ = run_main(monkeypatch, capsys, "checkpoints", "compact", "--json", "--home", home)
    before = [c["id"] for c in json.loads(out)["checkpoints"]]
    bad = _corrupt_newest(home)
    assert bad == before[-1]
    code, out, _ = run_main(
        monkeypatch, capsys, "checkpoints", "compact", "-n", "2", "--json", "--home", home
    )
    listed = json.loads(out)
    assert code == 0 and listed["count"] == 2
    assert [c["id"] for c in listed["checkpoints"]] == before[-3:-1]
    assert [d["id"] for d in listed["damaged"]] == [bad]
    code, out, _ = run_main(
        monkeypatch, capsys, "checkpoints", "compact", "-n", "9", "--json", "--home", home
    )
    assert [c["id"] for c in json.loads(out)["checkpoints"]] == before[:-1]


def test_cli_checkpoints_unknown_trigger_is_damaged_too(monkeypatch, capsys, home):
    """A trigger outside the closed set is a damaged row the same way (not a ValueError)."""
    bad = _corrupt_newest(home, "trigger", "sometimes")
    code, out, _ = run_main(monkeypatch, capsys, "checkpoints", "compact", "--json", "--home", home)
    listed = json.loads(out)
    assert code == 0 and listed["count"] == 4
    assert [(d["id"], d["column"]) for d in listed["damaged"]] == [(bad, "trigger")]


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("created_at", "garbage"),
        ("created_at", 12345),
        ("digest", b"\xff\xfe\x00"),
        ("prompt_count", "abc"),
    ],
)
def test_cli_checkpoints_any_damaged_column_is_skipped(monkeypatch, capsys, home, column, value):
    """Issue 15, the kind beyond JSON columns (a fresh-user review found these): a time that
    is not one, a blob digest and a text prompt count crashed `checkpoints` and `recover` with
    a traceback (the time already while SQLAlchemy fetched the rows) or, for the count, were
    printed as a string. Each is a damaged row named by its column; the other 4 are listed and
    `recover` uses the newest readable one."""
    bad = _corrupt_newest(home, column, value)
    code, out, err = run_main(
        monkeypatch, capsys, "checkpoints", "compact", "--json", "--home", home
    )
    listed = json.loads(out)
    assert code == 0 and listed["count"] == 4
    assert [(d["id"], d["column"]) for d in listed["damaged"]] == [(bad, column)]
    assert all(isinstance(c["prompt_count"], int) for c in listed["checkpoints"])
    code, out, err = run_main(monkeypatch, capsys, "recover", "compact", "--json", "--home", home)
    assert code == 0 and json.loads(out)["checkpoint"]["trigger"] == "pre_compaction"
    assert "Traceback" not in err
