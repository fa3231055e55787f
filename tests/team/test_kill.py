"""A sync killed at any point loses nothing and duplicates nothing (issue 41 items 1 and 5):
a real ``continuity sync`` process ended by ``os._exit`` at the named crash points around a
batch's commit, and by a real SIGKILL in the middle of a push; a second sync then leaves
exactly the session's rows in the team store, each once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from continuity.core.faults import CRASH_EXIT
from continuity.store import open_store
from continuity.team.settings import write_team
from tests.team.conftest import TeamDb, add_session, git_clone

APP = "git:github.com/acme/app"
CLI = str(Path(sys.executable).parent / "continuity")


def _member_home(team_db: TeamDb, tmp_path: Path, rows: int) -> Path:
    home = tmp_path / "ana-home"
    home.mkdir()
    repo = git_clone(tmp_path / "ana" / "app", "git@github.com:acme/app.git")
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        add_session(store, "s1", repo, [f"row {i} of the parser work" for i in range(rows)])
        add_session(store, "s2", repo, [f"row {i} of the lexer" for i in range(7)])
    write_team(
        home,
        {"url": team_db.url("ana"), "name": "core", "machine": "ana-laptop", "shared": [APP]},
    )
    return home


def _sync(home: Path, *args: str, crash: str | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CONTINUITY_HOME": str(home)}
    env.pop("CONTINUITY_CRASH_AT", None)
    if crash:
        env["CONTINUITY_CRASH_AT"] = crash
    return subprocess.Popen(
        [CLI, "sync", "--json", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def _counts(team_db: TeamDb) -> dict[str, tuple[int, int, int]]:
    rows = team_db.sql(
        "SELECT session_key, count(*), count(DISTINCT seq), max(seq) "
        "FROM continuity_team.entries GROUP BY session_key"
    )
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


@pytest.mark.parametrize(
    ("point", "committed"),
    [("team-push-before-commit:2", 3), ("team-push-after-commit:2", 6)],
)
def test_a_crash_around_a_batch_commit(
    team_db: TeamDb, tmp_path: Path, point: str, committed: int
) -> None:
    home = _member_home(team_db, tmp_path, rows=10)
    proc = _sync(home, "--batch-rows", "3", crash=point)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == CRASH_EXIT, err.decode()
    first = sorted(_counts(team_db).items())
    assert first == [("s1", (committed, committed, committed - 1))]
    proc = _sync(home, "--batch-rows", "3")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    import json

    # from the last mark: s1's rows 3..9 (after-commit: rows 3..5 were in, pushed again,
    # stored once) and s2's 7
    assert json.loads(out)["rows"] == 7 + 7
    assert _counts(team_db) == {"s1": (10, 10, 9), "s2": (7, 7, 6)}
    assert team_db.sql("SELECT count(*) FROM continuity_team.sessions") == [(2,)]


def test_sigkill_in_the_middle_of_a_push(team_db: TeamDb, tmp_path: Path) -> None:
    total = 3000
    home = _member_home(team_db, tmp_path, rows=total)
    proc = _sync(home, "--batch-rows", "20", "--no-pull")
    deadline = time.monotonic() + 120
    seen = 0
    while time.monotonic() < deadline and proc.poll() is None:
        seen = sum(c[0] for c in _counts(team_db).values())
        if seen >= 200:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the push ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    partial = sum(c[0] for c in _counts(team_db).values())
    assert 200 <= partial < total + 7
    again = _sync(home, "--batch-rows", "500")
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err.decode()
    assert _counts(team_db) == {"s1": (total, total, total - 1), "s2": (7, 7, 6)}
    bodies = team_db.sql(
        "SELECT count(DISTINCT body) FROM continuity_team.entries WHERE session_key = 's1'"
    )
    assert bodies == [(total,)]


def test_two_syncs_at_once_duplicate_nothing(team_db: TeamDb, tmp_path: Path) -> None:
    """Two ``continuity sync`` processes of one workspace at once (a daemon's and a user's),
    and a second member's machine pushing the same repository meanwhile: every row once."""
    home = _member_home(team_db, tmp_path, rows=400)
    bo_home = tmp_path / "bo-home"
    bo_home.mkdir()
    bo_repo = git_clone(tmp_path / "bo" / "app", "https://github.com/acme/app")
    with open_store(f"sqlite:///{bo_home / 'continuity.db'}") as store:
        add_session(store, "b1", bo_repo, [f"bo row {i}" for i in range(50)])
    write_team(
        bo_home, {"url": team_db.url("bo"), "name": "core", "machine": "bo-mac", "shared": [APP]}
    )
    procs = [
        _sync(home, "--batch-rows", "25"),
        _sync(home, "--batch-rows", "40"),
        _sync(bo_home, "--batch-rows", "10"),
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    assert _counts(team_db) == {"s1": (400, 400, 399), "s2": (7, 7, 6), "b1": (50, 50, 49)}
    machines = team_db.sql(
        "SELECT machine, count(*) FROM continuity_team.sessions GROUP BY 1 ORDER BY 1"
    )
    assert [tuple(r) for r in machines] == [("ana-laptop", 2), ("bo-mac", 1)]


def test_sync_watch_catches_up_after_the_store_refused_it(team_db: TeamDb, tmp_path: Path) -> None:
    """``sync --watch 1``: while the member's access is revoked every round fails (one line
    on stderr) and nothing is lost; granted again, the next round pushes everything, and a
    session added meanwhile arrives within a few rounds."""
    home = _member_home(team_db, tmp_path, rows=5)
    group = team_db.sql("SELECT member_role FROM continuity_team.meta")[0][0]
    ana = team_db.roles["ana"]
    team_db.sql(f'REVOKE "{group}" FROM "{ana}"')
    proc = _sync(home, "--watch", "1")
    try:
        time.sleep(2.5)
        assert proc.poll() is None
        assert _counts(team_db) == {}
        team_db.sql(f'GRANT "{group}" TO "{ana}"')
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _counts(team_db) != {
            "s1": (5, 5, 4),
            "s2": (7, 7, 6),
        }:
            time.sleep(0.2)
        assert _counts(team_db) == {"s1": (5, 5, 4), "s2": (7, 7, 6)}
        with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
            repo = tmp_path / "ana" / "app"
            add_session(store, "s3", repo, ["a new session while watching"])
        t0 = time.monotonic()
        while time.monotonic() < t0 + 30 and "s3" not in _counts(team_db):
            time.sleep(0.1)
        assert _counts(team_db).get("s3") == (1, 1, 0)
        assert time.monotonic() - t0 < 10  # within a few rounds of one second
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()
    text = err.decode()
    assert text.count("capture goes on here") == 1 and "answers again" in text


def test_the_pushing_backend_terminated_mid_push(team_db: TeamDb, tmp_path: Path) -> None:
    """The server ends the member's backend in the middle of a batch's transaction (as a
    database restart would; ``pg_terminate_backend`` from another connection, so the shared
    test server keeps running for everyone else): that sync fails (exit 4, the store named),
    nothing of the batch is kept, and the next sync leaves every row once.

    Deterministic: the owner holds ``LOCK TABLE entries IN SHARE MODE`` once the first batches
    are in, so the next batch's upsert waits for it inside its transaction; that waiting
    backend is the one terminated."""
    from sqlalchemy import text

    home = _member_home(team_db, tmp_path, rows=300)
    ana = team_db.roles["ana"]
    with team_db.engine.connect() as lock:
        proc = _sync(home, "--batch-rows", "50", "--no-pull")
        deadline = time.monotonic() + 60
        while sum(c[0] for c in _counts(team_db).values()) < 50:
            assert proc.poll() is None and time.monotonic() < deadline, "no batch arrived"
            time.sleep(0.01)
        lock.execute(text("LOCK TABLE continuity_team.entries IN SHARE MODE"))
        waiting: list[int] = []
        while not waiting:
            assert proc.poll() is None and time.monotonic() < deadline, "no push waited"
            waiting = [
                r[0]
                for r in team_db.sql(
                    "SELECT pid FROM pg_stat_activity WHERE usename = :u "
                    "AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO continuity_team.entries%'",
                    u=ana,
                )
            ]
            time.sleep(0.01)
        in_before = sum(c[0] for c in _counts(team_db).values())
        killed = team_db.sql("SELECT pg_terminate_backend(:p)", p=waiting[0])
        assert killed == [(True,)]
        lock.rollback()  # the lock goes; the terminated batch never committed
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 4, err.decode()
    assert "team store postgresql+psycopg://" in err.decode()
    assert sum(c[0] for c in _counts(team_db).values()) == in_before  # nothing half-written
    again = _sync(home, "--batch-rows", "50")
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err.decode()
    assert _counts(team_db) == {"s1": (300, 300, 299), "s2": (7, 7, 6)}
