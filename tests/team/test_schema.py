"""The team store's schema (issue 41): ``team init`` creates it once and is idempotent,
``team add-member`` adds a login role to a team, and a member's connection refuses a store
without the schema or of another version, naming the fix."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text

from continuity.core.errors import StoreError
from continuity.team.remote import TeamStore
from continuity.team.schema import VERSION, check_team_store
from tests.cli.running import run_main
from tests.team.conftest import _server


def _meta(url: str) -> str:
    team = TeamStore(url)
    try:
        return team.meta().store_id
    finally:
        team.close()


@pytest.fixture
def empty_db() -> Iterator[tuple[str, str, str]]:
    """(owner URL, member URL, member role) of a database without the team schema."""
    tag = uuid.uuid4().hex[:10]
    base, server = _server()
    name, role, group = f"continuity_team_{tag}", f"dee_{tag}", f"cm_{tag}"
    with server.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
        conn.execute(text(f'CREATE ROLE "{role}" LOGIN'))
    try:
        yield (
            base.set(database=name).render_as_string(False),
            base.set(database=name, username=role).render_as_string(False),
            group,
        )
    finally:
        with server.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(text(f'DROP ROLE IF EXISTS "{role}"'))
            conn.execute(text(f'DROP ROLE IF EXISTS "{group}"'))
        server.dispose()


def test_init_add_member_and_the_member_connects(
    empty_db: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    owner, member, group = empty_db
    with pytest.raises(StoreError, match="team init"):
        _meta(member)
    code, out, err = run_main(
        monkeypatch, capsys, "team", "init", owner, "--member-role", group, "--json"
    )
    assert code == 0, err
    first = json.loads(out)
    assert (first["version"], first["role"]) == (VERSION, group)
    code, out, _ = run_main(monkeypatch, capsys, "team", "init", owner, "--json")
    assert code == 0 and json.loads(out)["store_id"] == first["store_id"]  # idempotent
    role = member.split("//", 1)[1].split("@", 1)[0]
    with pytest.raises(StoreError, match="add-member"):
        _meta(member)  # not yet a member: no USAGE on the schema
    code, _, err = run_main(
        monkeypatch, capsys, "team", "add-member", owner, role, "--team", "core"
    )
    assert code == 0, err
    assert _meta(member) == first["store_id"]
    engine = create_engine(owner)
    with engine.begin() as conn:
        assert list(conn.execute(text("SELECT team, member FROM continuity_team.members"))) == [
            ("core", role)
        ]
        conn.execute(text("UPDATE continuity_team.meta SET version = version + 1"))
    engine.dispose()
    with pytest.raises(StoreError, match="newer than this continuity"):
        _meta(member)


def test_init_refuses_a_bad_role_name(empty_db: tuple[str, str, str], monkeypatch, capsys) -> None:
    owner, _, _ = empty_db
    code, _, err = run_main(monkeypatch, capsys, "team", "init", owner, "--member-role", 'x"; --')
    assert code == 2 and "member role" in err


def test_a_store_at_version_1_is_upgraded_by_init(team_db) -> None:  # type: ignore[no-untyped-def]
    """Schema version 2 (issue 41 item 2) adds ``forgotten``: a store made at version 1 is
    refused to members (older: its owner runs ``team init``), and ``team init`` upgrades it
    with its rows kept."""
    from continuity.team.schema import init_team_store

    before = team_db.sql("SELECT store_id FROM continuity_team.meta")[0][0]
    team_db.sql("DROP TABLE continuity_team.forgotten")
    team_db.sql("UPDATE continuity_team.meta SET version = 1")
    engine = create_engine(team_db.url("ana"))
    try:
        with engine.connect() as conn, pytest.raises(StoreError, match="older than"):
            check_team_store(conn)
    finally:
        engine.dispose()
    meta = init_team_store(team_db.engine)
    assert (meta.version, meta.store_id) == (VERSION, before)
    assert team_db.sql("SELECT count(*) FROM continuity_team.forgotten") == [(0,)]
    assert team_db.sql("SELECT count(*) FROM continuity_team.members") == [(3,)]


def test_add_member_of_a_role_that_does_not_exist_says_how_to_make_it(
    empty_db: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    owner, _, group = empty_db
    assert run_main(monkeypatch, capsys, "team", "init", owner, "--member-role", group)[0] == 0
    code, _, err = run_main(monkeypatch, capsys, "team", "add-member", owner, "nobody_zz9")
    assert code == 2, err
    assert "role nobody_zz9 does not exist" in err and "createuser nobody_zz9" in err
    assert "CREATE ROLE nobody_zz9 LOGIN" in " ".join(err.split())
    assert "Traceback" not in err and "psycopg" not in err
    # a store that cannot be reached: one line, exit 4
    down = "postgresql+psycopg://postgres@127.0.0.1:9/team?connect_timeout=3"
    code, _, err = run_main(monkeypatch, capsys, "team", "add-member", down, "ana")
    assert code == 4 and "127.0.0.1:9" in err and "Traceback" not in err
