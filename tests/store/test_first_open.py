"""Issue 22 item 1: a kill at any step of the first open leaves a workspace the next command
opens and migrates; tables an older, interrupted first open left without a version record are
repaired by the next open and by `continuity db upgrade`.

The kill is real: a forked child runs the first open and ``os._exit``s right after its k-th SQL
statement (no rollback, no cleanup), for every k until the open completes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.engine import Engine
from typer.testing import CliRunner

from continuity.core.errors import StoreError
from continuity.store import HEAD_REVISION, current_revision, migrate, open_store, open_store_raw
from continuity.store.schema import metadata
from tests.conftest import PG_URL, _pg_database

KILLED = 9


def _first_open_killed_at(url: str, step: int) -> bool:
    """Run the first open of ``url`` in a forked child killed after its ``step``-th statement;
    True when the kill happened, False when the open finished in fewer statements."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            count = 0

            def _kill(*_args: object) -> None:
                nonlocal count
                count += 1
                if count == step:
                    os._exit(KILLED)

            event.listen(Engine, "after_cursor_execute", _kill)
            open_store_raw(url).close()
            os._exit(0)
        except BaseException:  # noqa: BLE001 - any other end is a failure the parent reports
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, KILLED), f"first open failed in the child (exit {code}) at step {step}"
    return code == KILLED


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return set(inspect(conn).get_table_names())
    finally:
        engine.dispose()


def _reference_tables(tmp_path: Path) -> set[str]:
    url = f"sqlite:///{tmp_path / 'reference.db'}"
    with open_store(url):
        pass
    return _tables(url)


def test_first_open_kill_at_every_step_sqlite(tmp_path: Path) -> None:
    """After a kill at step k the database holds nothing of ours or the whole schema (never a
    part), and the next open migrates it to HEAD with every table. Before issue 22 a kill after
    the first ``CREATE TABLE sessions`` left {sessions, alembic_version} and the next open failed
    with "table sessions already exists"."""
    full = _reference_tables(tmp_path)
    assert {"sessions", "entries", "memories_fts", "dag_edges", "alembic_version"} <= full
    step = 0
    while True:
        step += 1
        url = f"sqlite:///{tmp_path / f'step{step}.db'}"
        killed = _first_open_killed_at(url, step)
        left = _tables(url)
        assert left in (set(), {"alembic_version"}, full), f"step {step} left {sorted(left)}"
        with open_store(url) as store:  # the next command
            assert current_revision(store.engine) == HEAD_REVISION
        assert _tables(url) == full
        if not killed:
            break
    # The first open runs every revision's statements: dozens of steps were each killed.
    assert step > 50


@pytest.mark.skipif(not PG_URL, reason="CONTINUITY_TEST_DATABASE_URL not set")
def test_first_open_kill_at_steps_postgresql() -> None:
    """PostgreSQL: a kill at every 4th step of the first open (and at the first ten) leaves
    nothing or everything, and the next open migrates to HEAD with every table of the schema."""
    for url in _pg_database():
        engine = create_engine(url)
        # entries_fts: revision 0014's PostgreSQL index table, outside store.schema (issue 19)
        full = set(metadata.tables) | {"alembic_version", "entries_fts"}
        try:
            step = 0
            while True:
                step += 1 if step < 10 else 4
                with engine.begin() as conn:
                    conn.execute(text("DROP SCHEMA public CASCADE"))
                    conn.execute(text("CREATE SCHEMA public"))
                killed = _first_open_killed_at(url, step)
                left = _tables(url)
                assert left in (set(), full), f"step {step} left {sorted(left)}"
                with open_store(url) as store:
                    assert current_revision(store.engine) == HEAD_REVISION
                assert _tables(url) == full
                if not killed:
                    break
            assert step > 40
        finally:
            engine.dispose()


def _legacy_leftover(url: str, *, revision: str | None, tables: tuple[str, ...]) -> None:
    """A database as an older continuity left it when killed during an upgrade: migrated to
    ``revision`` (or nothing, no version row) plus ``tables`` of later revisions, committed."""
    engine = create_engine(url)
    try:
        if revision is not None:
            migrate(engine, revision)
        with engine.begin() as conn:
            for name in tables:
                metadata.tables[name].create(conn)
    finally:
        engine.dispose()


def test_first_open_repairs_sessions_without_version_via_db_upgrade(tmp_path: Path) -> None:
    """The issue's reproduction: `sessions` exists, no alembic_version. `continuity db upgrade`
    used to exit 4 ("table sessions already exists"); now it drops the empty leftover and
    migrates (exit 0, revision HEAD, every table)."""
    from continuity.cli.app import app

    home = tmp_path / "home"
    url = f"sqlite:///{home / 'continuity.db'}"
    home.mkdir()
    _legacy_leftover(url, revision=None, tables=("sessions", "entries"))
    assert _tables(url) == {"sessions", "entries"}
    result = CliRunner().invoke(app, ["db", "upgrade", "--home", str(home)])
    assert result.exit_code == 0, result.output
    assert _tables(url) == _reference_tables(tmp_path)
    with open_store(url, auto_migrate=False) as store:
        assert current_revision(store.engine) == HEAD_REVISION


@pytest.mark.parametrize("db_url", ["sqlite", *(["postgresql"] if PG_URL else [])], indirect=True)
def test_first_open_repairs_interrupted_later_revision(db_url: str) -> None:
    """Version 0005 recorded, 0006's `memories` committed without its version row: the next
    open drops the empty leftover, runs 0006..HEAD, and keeps the rows of earlier tables."""

    url = db_url.replace("postgresql://", "postgresql+psycopg://", 1)
    _legacy_leftover(url, revision="0005", tables=("memories",))
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO sessions (session_key, agent_id, harness, entry_count, "
                "created_at, updated_at) VALUES ('k', 'a', 'pi', 0, "
                "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
            )
        )
    with open_store(url) as store:
        assert current_revision(store.engine) == HEAD_REVISION
        assert store.get_session("k").harness == "pi"
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM memories")).scalar() == 0
    engine.dispose()


def test_first_open_leftover_with_rows_is_refused_and_kept(tmp_path: Path) -> None:
    """A leftover table that holds rows is not dropped: StoreError (exit 4) names it, and the
    row is still there afterwards."""
    url = f"sqlite:///{tmp_path / 'x.db'}"
    _legacy_leftover(url, revision=None, tables=("notes",))
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO notes (session_key, text, created_at) "
                "VALUES ('k', 'keep me', CURRENT_TIMESTAMP)"
            )
        )
    with pytest.raises(StoreError, match="table notes holds rows") as caught, open_store(url):
        pass
    assert caught.value.exit_code == 4
    with engine.connect() as conn:
        assert conn.execute(text("SELECT text FROM notes")).scalar() == "keep me"
    engine.dispose()


def test_first_open_never_touches_tables_not_ours(tmp_path: Path) -> None:
    """A table of another application in the same database is neither dropped nor refused."""
    url = f"sqlite:///{tmp_path / 'x.db'}"
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE other_app (x INTEGER)"))
        conn.execute(text("INSERT INTO other_app VALUES (7)"))
    with open_store(url) as store:
        assert current_revision(store.engine) == HEAD_REVISION
    with engine.connect() as conn:
        assert conn.execute(text("SELECT x FROM other_app")).scalar() == 7
    engine.dispose()
