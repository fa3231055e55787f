"""``sessions --team`` and ``search --team`` (issue 41 item 4, first slice): the team's
sessions and rows with author and machine, only what row-level security lets this member
read, through the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from continuity.store import open_store
from continuity.team.settings import TeamSettings, write_team
from continuity.team.sync import sync
from tests.cli.running import run_main
from tests.team.conftest import TeamDb, add_session, git_clone

APP = "git:github.com/acme/app"
SECRET = "sk-proj-Zq8mW3xR7tY2uV9pL4kN6bH1"


def test_team_reads_show_author_and_machine(
    team_db: TeamDb, workspace: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    ana_app = git_clone(tmp_path / "home" / "ana" / "app", "git@github.com:acme/app.git")
    bo_app = git_clone(tmp_path / "Users" / "bo" / "src" / "app", "https://github.com/acme/app")
    diary = git_clone(tmp_path / "home" / "ana" / "diary", "git@github.com:ana/diary")
    _, ana = workspace("ana")
    add_session(ana, "a1", ana_app, [f"the flaky parser test, OPENAI_API_KEY={SECRET}"])
    add_session(ana, "a2", diary, ["the flaky parser of my diary"])
    sync(
        ana,
        TeamSettings(
            url=team_db.url("ana"), name="core", author="Ana", machine="ana-laptop", shared=[APP]
        ),
    )
    bo_home = tmp_path / "ws-bo-cli"
    bo_home.mkdir()
    with open_store(f"sqlite:///{bo_home / 'continuity.db'}") as bo:
        add_session(bo, "b1", bo_app, ["bo fixes the lexer"])
    write_team(
        bo_home,
        {
            "url": team_db.url("bo"),
            "name": "core",
            "author": "Bo",
            "machine": "bo-mac",
            "shared": [APP],
        },
    )
    monkeypatch.setenv("CONTINUITY_HOME", str(bo_home))
    code, out, err = run_main(monkeypatch, capsys, "sync", "--json")
    assert code == 0, err
    assert json.loads(out)["index"] == 2
    code, out, err = run_main(monkeypatch, capsys, "sessions", "--team", "--json")
    assert code == 0, err
    rows = sorted((r["session"], r["author"], r["machine"], r["project"]) for r in json.loads(out))
    assert rows == [("a1", "Ana", "ana-laptop", APP), ("b1", "Bo", "bo-mac", APP)]
    # --project DIR: the repository wherever it is cloned (bo's clone finds ana's session)
    code, out, _ = run_main(monkeypatch, capsys, "sessions", "--team", "--project", bo_app)
    assert code == 0 and "a1  Ana@ana-laptop" in out and "b1  Bo@bo-mac" in out
    code, out, err = run_main(monkeypatch, capsys, "search", "--team", "--json", "flaky parser")
    assert code == 0, err
    hits = [json.loads(line) for line in out.splitlines()]
    assert [(h["session"], h["author"], h["machine"]) for h in hits] == [
        ("a1", "Ana", "ana-laptop")
    ]  # not ana's private diary
    assert SECRET not in out and "[REDACTED:" in hits[0]["snippet"]
    code, _, err = run_main(monkeypatch, capsys, "search", "--team", "nothing-like-this")
    assert code == 1 and "no team row matches" in err
