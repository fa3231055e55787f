"""The daemon syncs on its own (issue 41 item 1): a real ``continuity serve`` with a real
PostgreSQL team store; a session captured through the hook command reaches the team store
within seconds, debounced after its rows are stored, without anyone running ``sync``; with the
store unreachable capture goes on, the outage is logged once, ``team status`` shows it, and
the store is caught up with once it answers."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from continuity.store import open_store
from continuity.team.settings import write_team
from tests.daemon.test_server_e2e import ClaudeCode, Daemon, hook
from tests.team.conftest import TeamDb, git_clone

APP = "git:github.com/acme/app"


def _home(tmp_path: Path, url: str, **team: Any) -> tuple[Path, Path]:
    home = tmp_path / "ana-home"
    home.mkdir()
    (home / "config.toml").write_text("[archive]\nenabled = false\n")
    repo = git_clone(tmp_path / "ana" / "app", "git@github.com:acme/app.git")
    write_team(
        home,
        {
            "url": url,
            "name": "core",
            "author": "Ana",
            "machine": "ana-laptop",
            "shared": [APP],
            **team,
        },
    )
    return home, repo


def _session(daemon: Daemon, tmp_path: Path, repo: Path, key: str, words: str) -> None:
    """One Claude Code session through the real hook command: start, a prompt, an answer,
    stop, end."""
    writer = ClaudeCode(tmp_path / "cc" / f"{key}.jsonl", key, str(repo))
    base = {"session_id": key, "cwd": str(repo), "transcript_path": str(writer.path)}

    def run(event: str, **fields: Any) -> None:
        hook(daemon.home, daemon.url, "claude-code", event, **{**base, **fields})

    run("session-start", source="startup")
    writer.user(f"please fix {words}")
    run("user-prompt-submit", prompt=f"please fix {words}")
    writer.assistant(f"fixed {words}: the parser now keeps the offsets")
    run("stop", last_assistant_message="fixed")
    run("session-end", reason="exit")


def _team_rows(team_db: TeamDb, key: str) -> list[tuple[int, str]]:
    return [
        (r[0], r[1])
        for r in team_db.sql(
            "SELECT seq, body FROM continuity_team.entries WHERE session_key = :k ORDER BY seq",
            k=key,
        )
    ]


def _until(predicate: Any, seconds: float) -> float:
    """Seconds until ``predicate()`` held; AssertionError after ``seconds``."""
    t0 = time.monotonic()
    while not predicate():
        if time.monotonic() - t0 > seconds:
            raise AssertionError("condition not met in time")
        time.sleep(0.1)
    return time.monotonic() - t0


def test_a_captured_session_reaches_the_team_store_without_sync(
    team_db: TeamDb, tmp_path: Path
) -> None:
    # a floor of 10 minutes: only the nudge after capture can bring the rows within seconds
    home, repo = _home(
        tmp_path, team_db.url("ana"), sync_debounce_seconds=0.5, sync_interval_seconds=600.0
    )
    daemon = Daemon(home)
    try:
        _until(lambda: (home / "team-sync.json").exists(), 30)  # the first sync ran
        _session(daemon, tmp_path, repo, "cc-team-1", "the lexer offsets")
        lag = _until(lambda: len(_team_rows(team_db, "cc-team-1")) >= 2, 20)
        assert lag < 10
        rows = _team_rows(team_db, "cc-team-1")
        assert [b for _, b in rows][:2] == [
            "please fix the lexer offsets",
            "fixed the lexer offsets: the parser now keeps the offsets",
        ]
        meta = team_db.sql(
            "SELECT author, machine, project FROM continuity_team.sessions "
            "WHERE session_key = 'cc-team-1'"
        )
        assert [tuple(r) for r in meta] == [("Ana", "ana-laptop", APP)]
    finally:
        assert daemon.stop() == 0, daemon.logs()
    log = daemon.logs()
    assert "team sync: syncing with the team store in the background" in log
    state = json.loads((home / "team-sync.json").read_text())
    assert state["last_sync_at"] and state["failing_since"] is None


def test_capture_goes_on_while_the_store_is_down_and_catches_up(
    team_db: TeamDb, tmp_path: Path
) -> None:
    from sqlalchemy.engine import make_url

    good = team_db.url("ana")
    bad = make_url(good).set(port=1).render_as_string(hide_password=False)  # nothing listens
    home, repo = _home(tmp_path, bad, sync_debounce_seconds=0.5, sync_interval_seconds=2.0)
    daemon = Daemon(home)
    try:
        state_file = home / "team-sync.json"
        _until(lambda: state_file.exists() and "port 1 failed" in state_file.read_text(), 30)
        _session(daemon, tmp_path, repo, "cc-team-down", "the flaky export")
        with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
            _until(lambda: (store.get_session("cc-team-down") or _none).entry_count >= 2, 20)
        time.sleep(5)  # several retries, backing off
        state = json.loads((home / "team-sync.json").read_text())
        assert state["failing_since"] and "port 1 failed" in state["last_error"]
        assert _team_rows(team_db, "cc-team-down") == []
        write_team(
            home,
            {
                "url": good,
                "name": "core",
                "author": "Ana",
                "machine": "ana-laptop",
                "shared": [APP],
                "sync_debounce_seconds": 0.5,
                "sync_interval_seconds": 2.0,
            },
        )
        lag = _until(lambda: len(_team_rows(team_db, "cc-team-down")) >= 2, 20)
        assert lag < 10
    finally:
        assert daemon.stop() == 0, daemon.logs()
    log = daemon.logs()
    assert log.count("capture goes on here") == 1, log  # once per outage
    assert log.count("answers again") == 1, log
    state = json.loads((home / "team-sync.json").read_text())
    assert state["failing_since"] is None and state["last_error"]


class _None:
    entry_count = 0


_none = _None()
