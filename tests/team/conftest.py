"""A real team store for the team tests (issue 41: never a mock of PostgreSQL): a throwaway
database on the test server (``CONTINUITY_TEST_DATABASE_URL``, else 127.0.0.1:5432 as
postgres), its schema made by ``init_team_store`` with a member role of its own, and three
LOGIN roles: ``ana`` and ``bo`` in team ``core``, ``cy`` in team ``other``. Everything
(database, roles) is dropped afterwards."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from continuity.core.model import Entry, EntryKind, Role, Session, TextBlock, ToolCallBlock
from continuity.store import SqlStore, open_store

SERVER = os.environ.get(
    "CONTINUITY_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


@dataclass
class TeamDb:
    """The team store of one test: ``admin_url`` (the owner), ``url(member)`` (a member's
    URL), ``roles`` (``{"ana": "ana_<hex>", ...}``), ``sql(query)`` as the owner."""

    admin_url: str
    roles: dict[str, str]
    engine: Any

    def url(self, who: str) -> str:
        from sqlalchemy.engine import make_url

        return make_url(self.admin_url).set(username=self.roles[who]).render_as_string(False)

    def sql(self, query: str, **params: Any) -> list[Any]:
        from sqlalchemy import text

        with self.engine.begin() as conn:
            result = conn.execute(text(query), params)
            return list(result) if result.returns_rows else []


def _server() -> Any:
    """(URL, AUTOCOMMIT engine) of the test server. Fails, never skips, when none answers:
    the access rules are only checked against a real PostgreSQL (issue 41)."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import OperationalError

    base = make_url(SERVER)
    if base.drivername in ("postgresql", "postgres"):
        base = base.set(drivername="postgresql+psycopg")
    engine = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as exc:
        engine.dispose()
        pytest.fail(
            "tests/team need a PostgreSQL server (issue 41: row-level security is checked "
            "against a real one): start one on 127.0.0.1:5432 (user postgres, trust) or set "
            f"CONTINUITY_TEST_DATABASE_URL; {str(exc.orig).splitlines()[0]}"
        )
    return base, engine


@pytest.fixture
def team_db() -> Iterator[TeamDb]:
    from sqlalchemy import create_engine, text

    from continuity.team.schema import add_member, init_team_store

    tag = uuid.uuid4().hex[:10]
    base, server = _server()
    name = f"continuity_team_{tag}"
    roles = {who: f"{who}_{tag}" for who in ("ana", "bo", "cy")}
    member_role = f"cm_{tag}"
    with server.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
        for role in roles.values():
            conn.execute(text(f'CREATE ROLE "{role}" LOGIN'))
    url = base.set(database=name).render_as_string(hide_password=False)
    engine = create_engine(url)
    try:
        init_team_store(engine, member_role=member_role)
        add_member(engine, roles["ana"], "core")
        add_member(engine, roles["bo"], "core")
        add_member(engine, roles["cy"], "other")
        yield TeamDb(url, roles, engine)
    finally:
        engine.dispose()
        with server.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            for role in [*roles.values(), member_role]:
                conn.execute(text(f'DROP ROLE IF EXISTS "{role}"'))
        server.dispose()


def git_clone(path: Path, remote: str) -> Path:
    """An empty git repository at ``path`` with ``origin`` = ``remote``."""
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def add_session(store: SqlStore, key: str, project: Path | str, texts: list[Any]) -> None:
    """Session ``key`` of folder ``project`` with one row per item of ``texts`` appended
    after its rows: a ``str`` a user request, a ``dict`` an assistant's Bash call with it as
    arguments."""
    found = store.get_session(key)
    start = found.entry_count if found else 0
    when = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    store.upsert_session(
        Session(key=key, harness="claude-code", project=str(project), started_at=when)
    )
    rows = []
    for i, item in enumerate(texts):
        if isinstance(item, dict):
            e = Entry(
                EntryKind.MESSAGE, Role.ASSISTANT, (ToolCallBlock(f"c{start + i}", "Bash", item),)
            )
        else:
            e = Entry(EntryKind.MESSAGE, Role.USER, (TextBlock(item),), is_request=True)
        e.seq = start + i
        e.timestamp = when + timedelta(seconds=start + i)
        rows.append(e)
    store.append(key, rows)


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Any]:
    """A factory of member workspaces: ``workspace("ana")`` -> (home, store)."""
    from contextlib import ExitStack

    with ExitStack() as stack:

        def make(who: str) -> tuple[Path, SqlStore]:
            home = tmp_path / f"ws-{who}"
            home.mkdir()
            store = stack.enter_context(open_store(f"sqlite:///{home / 'continuity.db'}"))
            return home, store

        yield make
