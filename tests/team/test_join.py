"""``team join`` asks the team store before writing anything (issue 41 review item 6): the
store answers, the role is a member of the team; ``--offline`` skips the check."""

from __future__ import annotations

from pathlib import Path

import pytest

from continuity.team.settings import team_settings
from tests.cli.running import run_main
from tests.team.conftest import TeamDb


def test_join_checks_the_store_and_the_membership(
    team_db: TeamDb, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    cy = team_db.roles["cy"]
    code, _, err = run_main(
        monkeypatch, capsys, "team", "join", team_db.url("cy"), "--team", "core"
    )
    assert code == 2, err
    assert f"role {cy} is not a member of team core" in err and "your teams: other" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert team_settings().url is None  # nothing written
    code, _, err = run_main(
        monkeypatch, capsys, "team", "join", team_db.url("ana"), "--team", "core"
    )
    assert code == 0 and "joined team core" in err, err
    assert team_settings().url == team_db.url("ana")
    # unreachable: exit 4, one line, nothing written
    down = "postgresql+psycopg://ana@127.0.0.1:9/team?connect_timeout=3"
    code, _, err = run_main(monkeypatch, capsys, "team", "join", down, "--team", "core")
    assert code == 4 and "127.0.0.1:9" in err and "Traceback" not in err
    assert team_settings().url == team_db.url("ana")
    # --offline: a laptop without the network joins now, the first sync asks
    code, _, err = run_main(monkeypatch, capsys, "team", "join", down, "--offline")
    assert code == 0 and team_settings().url == down
