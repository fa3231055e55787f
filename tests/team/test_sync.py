"""``continuity sync`` against a real PostgreSQL team store (issue 41 items 1-3): only shared
projects leave, redacted; watermarked, idempotent; two clones of one repository are one
project; author and machine on every session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from continuity.team.settings import TeamSettings
from continuity.team.sync import sync
from tests.team.conftest import TeamDb, add_session, git_clone

SECRET = "sk-proj-Zq8mW3xR7tY2uV9pL4kN6bH1"
PASSWORD = "hunter2-Correct-Horse-77"


def _settings(team_db: TeamDb, who: str, shared: list[str], machine: str) -> TeamSettings:
    return TeamSettings(
        url=team_db.url(who),
        name="core" if who != "cy" else "other",
        author=who.title(),
        machine=machine,
        shared=shared,
    )


def _all_text(team_db: TeamDb) -> str:
    """Every text the team store holds in its data tables, read as the owner."""
    parts: list[str] = []
    for table, cols in (
        ("sessions", "owner, machine, session_key, author, project, shared_as, title"),
        ("entries", "session_key, project, row_json, body"),
        ("checkpoints", "session_key, digest"),
        ("shares", "owner, project, team"),
    ):
        for row in team_db.sql(f"SELECT {cols} FROM continuity_team.{table}"):
            parts.extend(str(v) for v in row)
    return "\n".join(parts)


@pytest.fixture
def two_repos(tmp_path: Path) -> dict[str, Path]:
    return {
        "ana_app": git_clone(tmp_path / "home" / "ana" / "app", "git@github.com:acme/app.git"),
        "bo_app": git_clone(
            tmp_path / "Users" / "bo" / "src" / "app", "https://github.com/acme/app"
        ),
        "ana_private": git_clone(tmp_path / "home" / "ana" / "diary", "git@github.com:ana/diary"),
    }


def test_only_shared_projects_leave_and_every_secret_is_redacted(
    team_db: TeamDb, workspace: Any, two_repos: dict[str, Path]
) -> None:
    _, store = workspace("ana")
    (two_repos["ana_app"] / "api").mkdir()
    add_session(
        store,
        "s-app",
        two_repos["ana_app"],
        [
            "deploy the api",
            {"command": "curl https://api", "env": [{"name": "DB_PASSWORD", "value": PASSWORD}]},
            f"the key is OPENAI_API_KEY={SECRET}",
            f"and the password was {PASSWORD} remember",  # bare: the session-wide rule
        ],
    )
    add_session(store, "s-api", two_repos["ana_app"] / "api", ["fix the api tests", "thanks"])
    add_session(store, "s-diary", two_repos["ana_private"], ["private thoughts about Bo"] * 3)
    settings = _settings(team_db, "ana", ["git:github.com/acme/app"], "ana-laptop")
    report = sync(store, settings, batch_rows=2)
    assert (report.sessions, report.private, report.rows) == (2, 1, 6)
    assert report.batches == 3  # 4 rows in batches of 2, 2 rows in one
    owner = team_db.roles["ana"]
    sessions = team_db.sql(
        "SELECT session_key, owner, author, machine, project, shared_as, entry_count "
        "FROM continuity_team.sessions ORDER BY session_key"
    )
    assert [tuple(r) for r in sessions] == [
        (
            "s-api",
            owner,
            "Ana",
            "ana-laptop",
            "git:github.com/acme/app#api",
            "git:github.com/acme/app",
            2,
        ),
        (
            "s-app",
            owner,
            "Ana",
            "ana-laptop",
            "git:github.com/acme/app",
            "git:github.com/acme/app",
            4,
        ),
    ]
    counts = team_db.sql(
        "SELECT session_key, count(*), min(seq), max(seq) FROM continuity_team.entries "
        "GROUP BY session_key ORDER BY session_key"
    )
    assert [tuple(r) for r in counts] == [("s-api", 2, 0, 1), ("s-app", 4, 0, 3)]
    everything = _all_text(team_db)
    assert SECRET not in everything and PASSWORD not in everything
    assert "diary" not in everything and "private thoughts" not in everything
    assert "[REDACTED:" in everything
    assert str(two_repos["ana_app"]) not in everything  # no local path leaves
    assert "deploy the api" in everything  # the rest is as written
    # the pulled index: what ana may read
    index = store.team_index(report_store_id(team_db))
    assert sorted(r["session_key"] for r in index) == ["s-api", "s-app"]


def report_store_id(team_db: TeamDb) -> str:
    return team_db.sql("SELECT store_id FROM continuity_team.meta")[0][0]


def test_sync_again_pushes_only_what_is_new(
    team_db: TeamDb, workspace: Any, two_repos: dict[str, Path]
) -> None:
    _, store = workspace("ana")
    add_session(store, "s1", two_repos["ana_app"], ["one", "two", "three"])
    settings = _settings(team_db, "ana", ["git:github.com/acme/app"], "ana-laptop")
    assert sync(store, settings).rows == 3
    again = sync(store, settings)
    assert (again.rows, again.batches) == (0, 0)
    add_session(store, "s1", two_repos["ana_app"], ["four", "five"])
    grown = sync(store, settings)
    assert grown.rows == 2
    rows = team_db.sql(
        "SELECT seq, body FROM continuity_team.entries WHERE session_key = 's1' ORDER BY seq"
    )
    assert [tuple(r) for r in rows] == [
        (0, "one"),
        (1, "two"),
        (2, "three"),
        (3, "four"),
        (4, "five"),
    ]
    assert team_db.sql("SELECT entry_count FROM continuity_team.sessions")[0][0] == 5


def test_a_secret_found_later_redacts_the_rows_already_pushed(
    team_db: TeamDb, workspace: Any, two_repos: dict[str, Path]
) -> None:
    _, store = workspace("ana")
    add_session(store, "s1", two_repos["ana_app"], [f"try {PASSWORD} here"])
    settings = _settings(team_db, "ana", ["git:github.com/acme/app"], "ana-laptop")
    sync(store, settings)
    first = team_db.sql("SELECT body FROM continuity_team.entries")[0][0]
    assert first == f"try {PASSWORD} here"  # nothing yet says it is a secret
    add_session(store, "s1", two_repos["ana_app"], [{"env": {"DB_PASSWORD": PASSWORD}}])
    report = sync(store, settings)
    assert report.rows == 2  # both rows again, redacted with the new secret
    assert PASSWORD not in _all_text(team_db)
    assert team_db.sql("SELECT count(*) FROM continuity_team.entries")[0][0] == 2


def test_two_clones_are_one_project_and_the_team_reads_both(
    team_db: TeamDb, workspace: Any, two_repos: dict[str, Path]
) -> None:
    _, ana = workspace("ana")
    _, bo = workspace("bo")
    add_session(ana, "a1", two_repos["ana_app"], ["ana works on the parser"])
    add_session(bo, "b1", two_repos["bo_app"], ["bo works on the lexer"])
    shared = ["git:github.com/acme/app"]
    sync(ana, _settings(team_db, "ana", shared, "ana-laptop"))
    report = sync(bo, _settings(team_db, "bo", shared, "bo-mac"))
    assert report.index == 2
    index = bo.team_index(report_store_id(team_db))
    assert sorted((r["session_key"], r["author"], r["machine"], r["project"]) for r in index) == [
        ("a1", "Ana", "ana-laptop", "git:github.com/acme/app"),
        ("b1", "Bo", "bo-mac", "git:github.com/acme/app"),
    ]


def test_unshare_stops_the_team_reading(
    team_db: TeamDb, workspace: Any, two_repos: dict[str, Path]
) -> None:
    _, ana = workspace("ana")
    _, bo = workspace("bo")
    add_session(ana, "a1", two_repos["ana_app"], ["ana works on the parser"])
    sync(ana, _settings(team_db, "ana", ["git:github.com/acme/app"], "ana-laptop"))
    assert sync(bo, _settings(team_db, "bo", [], "bo-mac")).index == 1
    sync(ana, _settings(team_db, "ana", [], "ana-laptop"))  # unshared
    assert sync(bo, _settings(team_db, "bo", [], "bo-mac")).index == 0
    assert team_db.sql("SELECT count(*) FROM continuity_team.shares")[0][0] == 0


def test_checkpoints_go_with_their_digest_redacted(
    team_db: TeamDb, workspace: Any, two_repos: dict[str, Path]
) -> None:
    from continuity.core.model import Checkpoint, CheckpointTrigger

    _, store = workspace("ana")
    add_session(store, "s1", two_repos["ana_app"], [{"env": {"DB_PASSWORD": PASSWORD}}, "go"])
    settings = _settings(team_db, "ana", ["git:github.com/acme/app"], "ana-laptop")
    sync(store, settings)
    assert team_db.sql("SELECT count(*) FROM continuity_team.checkpoints") == [(0,)]

    def checkpoint(digest: str) -> None:
        store.insert_checkpoint(
            Checkpoint(
                "s1",
                "claude-code",
                str(two_repos["ana_app"]),
                None,
                CheckpointTrigger.EXPLICIT,
                digest,
                2,
            ),
            max_per_session=50,
        )

    checkpoint(
        f"Project: {two_repos['ana_app']}\n## Focus\nlogged in with {PASSWORD} then ran the tests"
    )
    report = sync(store, settings)
    assert (report.rows, report.checkpoints) == (0, 1)  # no row again, the checkpoint
    digest = team_db.sql("SELECT digest FROM continuity_team.checkpoints")[0][0]
    assert PASSWORD not in digest and "ran the tests" in digest
    # where ana keeps the repository is not the team's: the folder is the project's identity
    assert digest.startswith("Project: git:github.com/acme/app\n")
    checkpoint("## Focus\nsecond")
    assert sync(store, settings).checkpoints == 2
    assert team_db.sql("SELECT count(*) FROM continuity_team.checkpoints") == [(2,)]


def test_a_dropped_connection_mid_sync(
    team_db: TeamDb, workspace: Any, two_repos: dict[str, Path]
) -> None:
    """The member's connection is killed by the server after the first batch: the next
    batch reconnects (pre-ping) and the sync ends with every row once."""
    _, store = workspace("ana")
    add_session(store, "s1", two_repos["ana_app"], [f"row {i}" for i in range(9)])
    settings = _settings(team_db, "ana", ["git:github.com/acme/app"], "ana-laptop")
    killed: list[int] = []

    def drop(_key: str, sent: int) -> None:
        if not killed:
            killed.extend(
                r[0]
                for r in team_db.sql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE usename = :u AND datname = current_database()",
                    u=team_db.roles["ana"],
                )
            )

    report = sync(store, settings, batch_rows=3, progress=drop)
    assert killed and all(killed)
    assert report.rows == 9
    assert team_db.sql("SELECT count(*), count(DISTINCT seq) FROM continuity_team.entries") == [
        (9, 9)
    ]


def test_rows_moved_off_the_conversation_path_are_pushed_again(
    team_db: TeamDb, workspace: Any, two_repos: dict[str, Path]
) -> None:
    """A pi branch (rows put off the path) changes earlier rows' visibility: the team's copy
    follows, every row once."""
    _, store = workspace("ana")
    add_session(store, "s1", two_repos["ana_app"], ["a", "b", "c", "d"])
    settings = _settings(team_db, "ana", ["git:github.com/acme/app"], "ana-laptop")
    assert sync(store, settings, batch_rows=3).rows == 4
    store.set_on_path("s1", [2, 3], False)
    add_session(store, "s1", two_repos["ana_app"], ["e"])
    assert sync(store, settings).rows == 5  # all again: rows 2 and 3 moved
    rows = team_db.sql(
        "SELECT seq, visible FROM continuity_team.entries WHERE session_key = 's1' ORDER BY seq"
    )
    assert [tuple(r) for r in rows] == [(0, True), (1, True), (2, False), (3, False), (4, True)]
    add_session(store, "s1", two_repos["ana_app"], ["f"])
    assert sync(store, settings).rows == 1  # the path only grew: the new row alone


def test_a_project_shared_later_brings_its_older_sessions(
    team_db: TeamDb, workspace: Any, two_repos: dict[str, Path]
) -> None:
    _, store = workspace("ana")
    add_session(store, "old", two_repos["ana_app"], ["last month's work", "more"])
    first = sync(store, _settings(team_db, "ana", [], "ana-laptop"))
    assert (first.private, first.rows) == (1, 0)
    # the session is long past the watermark (as a month-old one would be)
    from datetime import UTC, datetime, timedelta

    later_mark = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    store.set_team_marks(report_store_id(team_db), {"sessions": later_mark})
    later = sync(store, _settings(team_db, "ana", ["git:github.com/acme/app"], "ana-laptop"))
    assert (later.sessions, later.rows) == (1, 2)
    assert team_db.sql("SELECT count(*) FROM continuity_team.entries") == [(2,)]


def test_two_machines_of_one_member_keep_each_others_shares(
    team_db: TeamDb, workspace: Any, two_repos: dict[str, Path]
) -> None:
    laptop_home, laptop = workspace("ana")
    _, desktop = workspace("ana2")
    app, diary = "git:github.com/acme/app", "git:github.com/ana/diary"
    add_session(laptop, "a1", two_repos["ana_app"], ["ana works on the parser"])
    add_session(desktop, "a2", two_repos["ana_private"], ["ana writes her diary"])
    _, bo = workspace("bo")

    def shares() -> list[str]:
        return sorted(r[0] for r in team_db.sql("SELECT project FROM continuity_team.shares"))

    sync(laptop, _settings(team_db, "ana", [app], "laptop"))
    # the desktop shares another project: the laptop's share stays
    sync(desktop, _settings(team_db, "ana", [diary], "desktop"))
    assert shares() == [app, diary]
    assert sync(bo, _settings(team_db, "bo", [], "bo-mac")).index == 2
    # and a sync of the laptop again leaves the desktop's
    sync(laptop, _settings(team_db, "ana", [app], "laptop"))
    assert shares() == [app, diary]
    # both share app; an unshare on the desktop holds against the laptop's next syncs
    sync(desktop, _settings(team_db, "ana", [diary, app], "desktop"))
    sync(desktop, _settings(team_db, "ana", [diary], "desktop"))
    sync(laptop, _settings(team_db, "ana", [app], "laptop"))
    assert shares() == [diary]
    assert sync(bo, _settings(team_db, "bo", [], "bo-mac")).index == 1
    # team status says what the store holds, not only this machine's list
    from continuity.team.local import status
    from continuity.team.settings import team_values, write_team

    write_team(laptop_home, team_values(_settings(team_db, "ana", [app], "laptop")))
    here = status(laptop_home, two_repos["ana_app"], ask_store=True)
    assert here.here_shared and here.store_shares == () and here.store_error is None
    here = status(laptop_home, two_repos["ana_private"], ask_store=True)
    assert not here.here_shared and here.store_shares == ((team_db.roles["ana"], "core"),)
