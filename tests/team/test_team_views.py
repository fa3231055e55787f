"""``--team`` for ``show``, ``continue``, ``brief`` and the MCP tools, and ``resume KEY
--project DIR`` of a session only the team store holds (issue 41 item 4): a teammate's
session read with its author and machine, and continued here in a clone of the same
repository at another path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from continuity.core.model import Checkpoint, CheckpointTrigger
from continuity.store import open_store
from continuity.team.settings import TeamSettings, write_team
from continuity.team.sync import sync
from tests.cli.running import run_main
from tests.team.conftest import TeamDb, add_session, git_clone

APP = "git:github.com/acme/app"
SECRET = "sk-proj-Zq8mW3xR7tY2uV9pL4kN6bH1"


@pytest.fixture
def team_world(team_db: TeamDb, workspace: Any, tmp_path: Path, monkeypatch) -> dict[str, Any]:
    """Ana's session a1 of acme/app (cloned at /home/ana/app) pushed; Bo's workspace (acme/app
    cloned at /Users/bo/src/app) synced, its CLI's home."""
    ana_app = git_clone(tmp_path / "home" / "ana" / "app", "git@github.com:acme/app.git")
    bo_app = git_clone(tmp_path / "Users" / "bo" / "src" / "app", "https://github.com/acme/app")
    _, ana = workspace("ana")
    add_session(
        ana,
        "a1-parser",
        ana_app,
        [
            "fix the flaky parser test",
            {"command": "pytest -q tests/test_parser.py", "env": {"OPENAI_API_KEY": SECRET}},
            f"it failed; the key {SECRET} is in the env",
            "now make the offsets zero-based",
        ],
    )
    ana.insert_checkpoint(
        Checkpoint(
            "a1-parser",
            "claude-code",
            str(ana_app),
            None,
            CheckpointTrigger.EXPLICIT,
            "## Focus\nthe parser offsets",
            2,
        ),
        max_per_session=50,
    )
    sync(
        ana,
        TeamSettings(
            url=team_db.url("ana"), name="core", author="Ana", machine="ana-laptop", shared=[APP]
        ),
    )
    bo_home = tmp_path / "ws-bo-cli"
    bo_home.mkdir()
    with open_store(f"sqlite:///{bo_home / 'continuity.db'}") as bo:
        add_session(bo, "b1-lexer", bo_app, ["bo fixes the lexer"])
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
    monkeypatch.delenv("CONTINUITY_DATABASE_URL", raising=False)
    return {
        "bo_home": bo_home,
        "bo_app": bo_app,
        "ana_app": ana_app,
        "tmp": tmp_path,
        "ana": ana,
        "ana_settings": TeamSettings(
            url=team_db.url("ana"), name="core", author="Ana", machine="ana-laptop", shared=[APP]
        ),
    }


def test_show_and_continue_a_teammates_session(
    team_world: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    code, out, err = run_main(monkeypatch, capsys, "show", "a1", "--team", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["session"] == "a1-parser" and len(data["entries"]) == 4
    assert data["team"] == {
        "author": "Ana",
        "machine": "ana-laptop",
        "owner": data["team"]["owner"],
        "project": APP,
    }
    assert SECRET not in out and "[REDACTED:" in out
    code, out, _ = run_main(monkeypatch, capsys, "show", "a1", "--team", "--no-pager")
    assert code == 0 and out.splitlines()[0] == f"team session a1-parser · Ana@ana-laptop · {APP}"
    assert "fix the flaky parser test" in out and SECRET not in out
    code, _, err = run_main(monkeypatch, capsys, "show", "a1", "--team", "--raw")
    assert code == 2 and "--raw" in err
    code, out, err = run_main(monkeypatch, capsys, "continue", "a1", "--team", "--json")
    assert code == 0, err
    view = json.loads(out)
    assert view["team"]["author"] == "Ana" and view["refusal"] is None
    assert view["request"]["text"] == "now make the offsets zero-based"
    code, out, _ = run_main(monkeypatch, capsys, "continue", "a1", "--team")
    assert code == 0 and "Ana@ana-laptop" in out.splitlines()[0]
    code, _, err = run_main(monkeypatch, capsys, "show", "zz-none", "--team")
    assert code == 3 and "zz-none" in err
    # without --team the session is not here
    assert run_main(monkeypatch, capsys, "show", "a1")[0] == 3


def test_brief_and_mcp_tools_with_team(
    team_world: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from continuity.daemon.mcp_server import ContinuityTools

    assert run_main(monkeypatch, capsys, "sync")[0] == 0  # bo pulls the index
    bo_app = team_world["bo_app"]
    code, out, err = run_main(
        monkeypatch, capsys, "brief", "--team", "--project", str(bo_app), "--window", "any"
    )
    assert code == 0, err
    assert "### Session a1-parser · claude-code · Ana@ana-laptop · " in out
    assert "b1-lexer" not in out  # bo's own session is local, not the team's
    assert "now make the offsets zero-based" in out and SECRET not in out
    code, out, _ = run_main(
        monkeypatch,
        capsys,
        "brief",
        "--team",
        "--project",
        str(bo_app),
        "--window",
        "any",
        "--json",
    )
    assert [s["who"] for s in json.loads(out)["sessions"]] == ["Ana@ana-laptop"]
    tools = ContinuityTools(team_world["bo_home"], cwd=str(bo_app))
    found = tools.search("zero-based offsets", team=True)
    assert [(h["session"], h["author"], h["machine"]) for h in found["hits"]] == [
        ("a1-parser", "Ana", "ana-laptop")
    ]
    hit = found["hits"][0]
    assert hit["show"] == f"continuity show a1-parser --team --seq {hit['seq']}"
    rows = tools.show("a1-parser", hit["seq"], team=True)
    assert rows["team"]["author"] == "Ana" and rows["rows"][-1]["seq"] == 3
    view = tools.continuation(session="a1", team=True)
    assert view["team"]["machine"] == "ana-laptop" and view["session"] == "a1-parser"
    assert SECRET not in json.dumps([found, rows, view])


def test_resume_a_teammates_session_in_my_clone(
    team_world: dict[str, Any], team_db: TeamDb, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    bo_app, tmp = team_world["bo_app"], team_world["tmp"]
    codex_home = tmp / "codex-home"
    elsewhere = tmp / "not-a-clone"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, _, err = run_main(
        monkeypatch, capsys, "resume", "a1", "--in", "codex", "--target-home", str(codex_home)
    )
    assert code == 2 and "--project DIR" in err and "Ana@ana-laptop" in err
    (bo_app / "sub").mkdir()
    monkeypatch.chdir(bo_app / "sub")  # anywhere in the clone: its top, the session's folder
    code, out, err = run_main(
        monkeypatch,
        capsys,
        "resume",
        "a1",
        "--in",
        "codex",
        "--target-home",
        str(codex_home),
        "--json",
    )
    assert code == 0, err
    written = json.loads(out)
    assert written["cwd"] == str(bo_app)
    path = Path(written["path"])
    first = json.loads(path.read_text().splitlines()[0])
    assert first["payload"]["cwd"] == str(bo_app)
    text = path.read_text()
    assert "now make the offsets zero-based" in text and SECRET not in text
    with open_store(f"sqlite:///{team_world['bo_home'] / 'continuity.db'}") as bo:
        copy = bo.get_session("a1-parser")
        assert copy is not None and copy.project == str(bo_app) and copy.entry_count == 4
        assert bo.team_copy("a1-parser")["author"] == "Ana"  # type: ignore[index]
    # bo's sync never pushes the copy as bo's own
    assert run_main(monkeypatch, capsys, "sync")[0] == 0
    owners = team_db.sql(
        "SELECT owner, session_key FROM continuity_team.sessions ORDER BY session_key"
    )
    assert [(o == team_db.roles["bo"], k) for o, k in owners] == [
        (False, "a1-parser"),
        (True, "b1-lexer"),
    ]
    # --project DIR names the folder explicitly (the same copy, now under another folder)
    other = git_clone(tmp / "bo2" / "app", "https://github.com/acme/app")
    code, out, err = run_main(
        monkeypatch,
        capsys,
        "resume",
        "a1-parser",
        "--in",
        "codex",
        "--target-home",
        str(codex_home),
        "--project",
        str(other),
        "--json",
    )
    assert code == 0, err
    assert json.loads(out)["cwd"] == str(other)


def test_a_forgotten_session_goes_from_the_teammates_copies(
    team_world: dict[str, Any], team_db: TeamDb, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Ana forgets a1 after Bo resumed it: her sync deletes it from the team store and leaves
    its tombstone there (its key only); Bo's next sync forgets his copy; Cy, in another team,
    reads no tombstone of Ana's."""
    from continuity.team.forget import forget
    from continuity.team.remote import TeamStore

    monkeypatch.chdir(team_world["bo_app"])
    code, _, err = run_main(
        monkeypatch,
        capsys,
        "resume",
        "a1",
        "--in",
        "codex",
        "--target-home",
        str(team_world["tmp"] / "codex-home"),
    )
    assert code == 0, err
    ana = team_world["ana"]
    assert forget(ana, ["a1-parser"]).sessions == ["a1-parser"]
    assert sync(ana, team_world["ana_settings"]).forgotten == 1
    assert team_db.sql("SELECT owner, session_key FROM continuity_team.forgotten") == [
        (team_db.roles["ana"], "a1-parser")
    ]
    code, out, err = run_main(monkeypatch, capsys, "sync", "--json")
    assert code == 0, err
    assert json.loads(out)["forgotten"] == 1
    with open_store(f"sqlite:///{team_world['bo_home'] / 'continuity.db'}") as bo:
        assert bo.get_session("a1-parser") is None and bo.is_forgotten("a1-parser")
        assert bo.get_session("b1-lexer") is not None
    cy = TeamStore(team_db.url("cy"))
    try:
        assert cy.forgotten() == []
    finally:
        cy.close()


def test_a_forgotten_session_goes_with_the_copies_resumed_from_it(
    team_world: dict[str, Any], team_db: TeamDb, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Bo resumes Ana's a1 into Codex and imports the Codex file (a session of his own,
    linked to a1 by its copy note) and syncs it; Ana forgets a1: Bo's next sync forgets the
    Codex copy too, deletes it from the team store, and a re-import of the file restores
    nothing."""
    from continuity.formats.importer import import_file
    from continuity.team.forget import forget

    monkeypatch.chdir(team_world["bo_app"])
    codex_home = team_world["tmp"] / "codex-home"
    code, _, err = run_main(
        monkeypatch, capsys, "resume", "a1", "--in", "codex", "--target-home", str(codex_home)
    )
    assert code == 0, err
    (native,) = list(codex_home.rglob("*.jsonl"))
    with open_store(f"sqlite:///{team_world['bo_home'] / 'continuity.db'}") as bo:
        assert import_file(bo, native).status == "imported"
        codex_keys = [s.key for s in bo.list_sessions() if s.harness == "codex"]
    assert len(codex_keys) == 1
    assert run_main(monkeypatch, capsys, "sync")[0] == 0
    owners = team_db.sql("SELECT owner, session_key FROM continuity_team.sessions")
    assert (team_db.roles["bo"], codex_keys[0]) in owners  # the copy went to the team store
    assert forget(team_world["ana"], ["a1-parser"]).sessions == ["a1-parser"]
    sync(team_world["ana"], team_world["ana_settings"])
    code, out, err = run_main(monkeypatch, capsys, "sync", "--json")
    assert code == 0, err
    assert json.loads(out)["forgotten"] == 2  # the team copy and the Codex copy of it
    with open_store(f"sqlite:///{team_world['bo_home'] / 'continuity.db'}") as bo:
        assert bo.get_session(codex_keys[0]) is None and bo.is_forgotten(codex_keys[0])
        assert bo.get_session("b1-lexer") is not None
        again = import_file(bo, native)
        assert again.imported == 0 and bo.get_session(codex_keys[0]) is None
    left = [r[1] for r in team_db.sql("SELECT owner, session_key FROM continuity_team.sessions")]
    assert sorted(left) == ["b1-lexer"]
    assert team_db.sql(
        "SELECT count(*) FROM continuity_team.entries WHERE session_key = :k", k=codex_keys[0]
    ) == [(0,)]
