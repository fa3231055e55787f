"""A fresh workspace has no file other users can read (issue 16), whatever the umask: the
database and its -wal/-shm, transcripts, spool files incl. recent-ids.txt, markdown artifacts
and MEMORY.md; ``where`` warns about a file others can read."""

from __future__ import annotations

import os
import stat

import pytest
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.core.private import exposed
from continuity.daemon.hooks import spool
from continuity.lineage import artifacts as ln
from continuity.store import open_store
from tests.lineage.test_lineage import T0, fields
from tests.paths import SHARED_DATA

runner = CliRunner()


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_fresh_workspace_is_owner_only(tmp_path, umask_022):
    """Import, spool, consolidate and MEMORY.md render in a fresh workspace: the folder is
    0700, every file 0600, and exposed() finds nothing."""
    home = tmp_path / "ws"
    sample = SHARED_DATA / "claude-code" / "short.jsonl"
    assert invoke("import", sample, "--home", home).exit_code == 0
    spool.append(home, b'{"id":"e1"}\n')
    spool.RecentEvents(home).add("e1")
    consolidated = invoke("consolidate", "--home", home)
    done = ln.write_artifact(home, "summary", fields(memory_sentence="S."), "Body.", captured_at=T0)
    rendered = invoke("memory", "render", "--home", home)
    with open_store(home / "continuity.db") as store:  # -wal and -shm exist while it is open
        with store.engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS t_private (x)")
        live = {
            name: stat.S_IMODE((home / name).stat().st_mode)
            for name in ("continuity.db-wal", "continuity.db-shm")
        }
    assert live == {"continuity.db-wal": 0o600, "continuity.db-shm": 0o600}
    assert stat.S_IMODE(done.path.stat().st_mode) == 0o600
    files = sorted(p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file())
    assert "continuity.db" in files and "spool/recent-ids.txt" in files, files
    modes = {name: stat.S_IMODE((home / name).stat().st_mode) for name in files}
    assert {n: m for n, m in modes.items() if m != 0o600} == {}, (
        consolidated.output,
        rendered.output,
    )
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert exposed(home) == []


def test_where_warns_about_a_file_others_can_read(tmp_path, umask_022):
    """where names a workspace file others can read on stderr (stdout stays two lines)."""
    home = tmp_path / "ws"
    assert invoke("db", "upgrade", "--home", home).exit_code == 0
    (home / "config.toml").write_text("[daemon]\n")
    result = invoke("where", "--home", home)
    assert result.exit_code == 0
    assert len(result.stdout.splitlines()) == 2
    # issue 45 item 3: one fix, the same command doctor and the README name
    assert result.stderr == (
        f"warning: {home / 'config.toml'} is 0644: other users can read "
        f"it\nfix: chmod -R go= {home}\n"
    )


def test_where_json_gives_home_database_and_what_others_can_read(tmp_path, umask_022):
    """Fresh-user review: ``where`` had no ``--json``. It gives one object: the folder, the
    database URL, whether the folder exists and what others can read (no warning lines)."""
    import json

    home = tmp_path / "ws"
    absent = invoke("where", "--json", "--home", home)
    assert absent.exit_code == 0 and absent.stderr == ""
    assert json.loads(absent.stdout) == {
        "home": str(home),
        "database": f"sqlite:///{home / 'continuity.db'}",
        "exists": False,
        "exposed": [],
    }
    assert invoke("db", "upgrade", "--home", home).exit_code == 0
    (home / "config.toml").write_text("[daemon]\n")
    found = invoke("where", "--json", "--home", home)
    assert found.exit_code == 0 and found.stderr == ""
    assert json.loads(found.stdout) == {
        "home": str(home),
        "database": f"sqlite:///{home / 'continuity.db'}",
        "exists": True,
        "exposed": [f"{home / 'config.toml'} is 0644: other users can read it"],
    }
