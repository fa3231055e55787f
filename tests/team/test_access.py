"""Access in the team store itself (issue 41 item 3): PostgreSQL roles and row-level security
let a member read the team's shared projects and their own rows, nothing else, whatever SQL
the member runs. Real roles on a real PostgreSQL (``conftest.team_db``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from continuity.team.settings import TeamSettings
from continuity.team.sync import sync
from tests.team.conftest import TeamDb, add_session, git_clone

APP = "git:github.com/acme/app"
T = "continuity_team"


def _as(team_db: TeamDb, who: str, query: str, **params: Any) -> list[Any]:
    engine = create_engine(team_db.url(who))
    try:
        with engine.begin() as conn:
            result = conn.execute(text(query), params)
            return list(result) if result.returns_rows else [result.rowcount]
    finally:
        engine.dispose()


@pytest.fixture
def pushed(team_db: TeamDb, workspace: Any, tmp_path: Path) -> TeamDb:
    """Ana pushed 3 rows of the shared app and, before unsharing it, 2 rows of a tool
    repository; Cy (team ``other``) pushed 1 row of his own shared project."""
    app = git_clone(tmp_path / "ana" / "app", "git@github.com:acme/app.git")
    tool = git_clone(tmp_path / "ana" / "tool", "git@github.com:acme/tool.git")
    side = git_clone(tmp_path / "cy" / "side", "git@github.com:cy/side.git")
    _, ana = workspace("ana")
    add_session(ana, "a-app", app, ["parser", "lexer", "tests"])
    add_session(ana, "a-tool", tool, ["tool one", "tool two"])
    url = team_db.url("ana")
    sync(ana, TeamSettings(url=url, name="core", shared=[APP, "git:github.com/acme/tool"]))
    sync(ana, TeamSettings(url=url, name="core", shared=[APP]))  # tool unshared
    _, cy = workspace("cy")
    add_session(cy, "c-side", side, ["cy's side project"])
    sync(cy, TeamSettings(url=team_db.url("cy"), name="other", shared=["git:github.com/cy/side"]))
    return team_db


def test_the_owner_sees_everything(pushed: TeamDb) -> None:
    rows = pushed.sql(f"SELECT session_key, count(*) FROM {T}.entries GROUP BY 1 ORDER BY 1")
    assert [tuple(r) for r in rows] == [("a-app", 3), ("a-tool", 2), ("c-side", 1)]


def test_a_member_of_another_team_reads_only_their_own(pushed: TeamDb) -> None:
    for table in ("sessions", "entries", "checkpoints", "shares"):
        owners = _as(pushed, "cy", f"SELECT DISTINCT owner FROM {T}.{table}")
        assert {r[0] for r in owners} <= {pushed.roles["cy"]}, table
    assert [r[0] for r in _as(pushed, "cy", f"SELECT session_key FROM {T}.entries")] == ["c-side"]
    # not by a join, a function or a filter naming ana's rows either
    assert _as(
        pushed, "cy", f"SELECT count(*) FROM {T}.entries WHERE owner = :o", o=pushed.roles["ana"]
    ) == [(0,)]
    assert _as(pushed, "cy", f"SELECT member FROM {T}.members") == [(pushed.roles["cy"],)]


def test_a_teammate_reads_the_shared_project_only(pushed: TeamDb) -> None:
    seen = _as(pushed, "bo", f"SELECT session_key, count(*) FROM {T}.entries GROUP BY 1")
    assert [tuple(r) for r in seen] == [("a-app", 3)]  # not the unshared tool, not cy's
    assert [r[0] for r in _as(pushed, "bo", f"SELECT session_key FROM {T}.sessions")] == ["a-app"]


def test_no_member_writes_another_members_rows(pushed: TeamDb) -> None:
    ana = pushed.roles["ana"]
    for who in ("bo", "cy"):
        assert _as(pushed, who, f"UPDATE {T}.entries SET body = 'x' WHERE owner = :o", o=ana) == [0]
        assert _as(pushed, who, f"DELETE FROM {T}.entries WHERE owner = :o", o=ana) == [0]
        with pytest.raises(DBAPIError, match="row-level security"):
            _as(
                pushed,
                who,
                f"INSERT INTO {T}.entries (owner, machine, session_key, seq, project, shared_as, "
                "kind, role, visible, row_json, body) VALUES (:o, 'm', 'fake', 0, :p, :p, "
                "'message', 'user', true, '{}', 'forged')",
                o=ana,
                p=APP,
            )
    assert pushed.sql(f"SELECT count(*) FROM {T}.entries WHERE owner = :o", o=ana) == [(5,)]


def test_no_member_joins_a_team_or_shares_into_one(pushed: TeamDb) -> None:
    cy = pushed.roles["cy"]
    with pytest.raises(DBAPIError, match="permission denied"):
        _as(pushed, "cy", f"INSERT INTO {T}.members (team, member) VALUES ('core', :m)", m=cy)
    with pytest.raises(DBAPIError, match="row-level security"):
        _as(pushed, "cy", f"INSERT INTO {T}.shares (project, team) VALUES ('git:x/y', 'core')")
    with pytest.raises(DBAPIError, match="permission denied"):
        _as(pushed, "cy", f"SET ROLE {pushed.roles['ana']}")


def test_a_role_that_is_no_member_reads_nothing(pushed: TeamDb) -> None:
    import uuid

    outsider = f"out_{uuid.uuid4().hex[:8]}"
    pushed.sql(f'CREATE ROLE "{outsider}" LOGIN')
    try:
        pushed.roles["out"] = outsider
        with pytest.raises(DBAPIError, match="permission denied"):
            _as(pushed, "out", f"SELECT count(*) FROM {T}.entries")
    finally:
        pushed.sql(f'DROP ROLE "{outsider}"')


def test_sync_as_a_role_outside_the_team_is_refused(
    pushed: TeamDb, workspace: Any, tmp_path: Path
) -> None:
    from continuity.core.errors import StoreError

    _, cy = workspace("cy2")
    add_session(cy, "c2", git_clone(tmp_path / "cy2" / "app", "git@github.com:acme/app"), ["x"])
    with pytest.raises(StoreError, match="row-level security"):
        sync(cy, TeamSettings(url=pushed.url("cy"), name="core", shared=[APP]))
    assert pushed.sql(f"SELECT count(*) FROM {T}.entries WHERE session_key = 'c2'") == [(0,)]
