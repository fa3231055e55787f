"""Issue 41, "Done when", end to end: two members on two workspaces, each with its own daemon,
one repository cloned at two paths, one real PostgreSQL team store.

Ana's daemon captures two sessions through the real hook command: one in the shared
repository (a planted secret in it), one in a private repository. Within a minute of the
shared session's end, with nobody running ``sync``, Bo's ``sessions --team`` lists it and
``search --team`` finds it (both daemons sync on their own). Bo resumes it in Codex from his
clone, ``resume KEY --in codex --project .``, and the real Codex CLI runs a turn on the
written session against the fake model: the model receives Ana's request, and Codex appends
its turn to the file. Read as the database's owner, no table and no column of the team store
holds the secret, the private project or Ana's local paths.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

from continuity.team.settings import write_team
from tests.daemon.test_server_e2e import ClaudeCode, Daemon, hook
from tests.e2e.conftest import World
from tests.e2e.fakemodel import FakeModel
from tests.team.conftest import TeamDb, git_clone, team_db  # noqa: F401 - the fixture

APP = "git:github.com/acme/app"
SECRET = "sk-proj-Zq8mW3xR7tY2uV9pL4kN6bH1"
PASSWORD = "hunter2-Correct-Horse-77"
REQUEST = "make the invoice export stamp UTC times"
PROMPT = "Resumed on Bo's machine: carry on"
#: Both daemons' sync floor in this test (the default, 30 s, keeps the lag under a minute
#: too; 5 s keeps the test short).
FLOOR = 5.0


def _team(url: str, author: str, machine: str) -> dict[str, Any]:
    return {
        "url": url,
        "name": "core",
        "author": author,
        "machine": machine,
        "shared": [APP],
        "sync_debounce_seconds": 0.5,
        "sync_interval_seconds": FLOOR,
    }


def _capture(daemon: Daemon, root: Path, repo: Path, key: str, turns: list[tuple[str, str]]):
    """One Claude Code session of ``repo`` through the real hook command, ended."""
    writer = ClaudeCode(root / "cc" / f"{key}.jsonl", key, str(repo))
    base = {"session_id": key, "cwd": str(repo), "transcript_path": str(writer.path)}

    def run(event: str, **fields: Any) -> None:
        hook(daemon.home, daemon.url, "claude-code", event, **{**base, **fields})

    run("session-start", source="startup")
    for prompt, answer in turns:
        writer.user(prompt)
        run("user-prompt-submit", prompt=prompt)
        writer.assistant(answer)
        run("stop", last_assistant_message=answer)
    run("session-end", reason="exit")


def _every_text(store: TeamDb) -> str:
    """Every value of every column of every table of the team store, as text, read as the
    database's owner (row-level security does not apply to it)."""
    columns = store.sql(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = 'continuity_team' ORDER BY table_name, ordinal_position"
    )
    tables: dict[str, list[str]] = {}
    for table, column in columns:
        tables.setdefault(table, []).append(column)
    assert {"sessions", "entries", "checkpoints", "shares", "members", "meta"} <= set(tables)
    parts = []
    for table, cols in tables.items():
        select = ", ".join(f'"{c}"::text' for c in cols)
        for row in store.sql(f"SELECT {select} FROM continuity_team.{table}"):
            parts.extend(v for v in row if v is not None)
    return "\n".join(parts)


def _until(predicate: Any, seconds: float, what: str) -> float:
    t0 = time.monotonic()
    while not predicate():
        if time.monotonic() - t0 > seconds:
            raise AssertionError(f"{what}: not within {seconds:g} s")
        time.sleep(0.25)
    return time.monotonic() - t0


def test_two_members_share_a_session_and_one_resumes_it_in_codex(
    team_db: TeamDb,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    clis: dict[str, Path],
    fake_model: FakeModel,
) -> None:
    # --- Ana: her workspace and daemon; acme/app at /home/ana/app, a private diary repo
    ana_root = tmp_path / "ana"
    ana_home = ana_root / "workspace"
    ana_home.mkdir(parents=True)
    (ana_home / "config.toml").write_text("[archive]\nenabled = false\n")
    write_team(ana_home, _team(team_db.url("ana"), "Ana", "ana-laptop"))
    ana_app = git_clone(ana_root / "home" / "ana" / "app", "git@github.com:acme/app.git")
    diary = git_clone(ana_root / "home" / "ana" / "diary", "git@github.com:ana/diary.git")

    # --- Bo: a Codex user (the e2e world), acme/app cloned as the world's project folder
    bo = World(tmp_path / "bo", "codex", clis["codex"], fake_model)
    ana = None
    try:
        subprocess.run(["git", "init", "-q", str(bo.project)], check=True)
        subprocess.run(
            [
                "git",
                "-C",
                str(bo.project),
                "remote",
                "add",
                "origin",
                "https://github.com/acme/app",
            ],
            check=True,
        )
        with open(bo.ws / "config.toml", "a") as fh:
            fh.write("\n[archive]\nenabled = false\n")
        write_team(bo.ws, _team(team_db.url("bo"), "Bo", "bo-desktop"))
        bo.start_daemon()
        ana = Daemon(ana_home)

        key = "0b5e1c7a-team-e2e-invoice"
        _capture(
            ana,
            ana_root,
            ana_app,
            key,
            [
                (f"{REQUEST}; the API key is OPENAI_API_KEY={SECRET}", "Found the export loop."),
                (
                    f"the staging DB_PASSWORD={PASSWORD} works, keep going",
                    "The export now stamps UTC; the invoice tests pass.",
                ),
            ],
        )
        ended = time.monotonic()
        _capture(
            ana,
            ana_root,
            diary,
            "0b5e1c7a-private-diary",
            [("dear diary, the quarterly numbers worry me", "Noted privately.")],
        )

        # --- Bo sees it, with nobody running sync: both daemons sync on their own
        def listed() -> list[dict[str, Any]]:
            return bo.continuity_json("sessions", "--team")

        _until(lambda: any(s["session"] == key for s in listed()), 60, "sessions --team")
        lag = time.monotonic() - ended
        assert lag < 60, lag
        row = next(s for s in listed() if s["session"] == key)
        assert (row["author"], row["machine"], row["project"]) == ("Ana", "ana-laptop", APP)
        assert all(s["project"] == APP for s in listed())  # never the private diary
        found = bo.continuity("search", "--team", "--json", "invoice export UTC")
        hits = [json.loads(line) for line in found.stdout.splitlines()]
        assert hits and {h["session"] for h in hits} == {key}
        assert hits[0]["author"] == "Ana" and SECRET not in found.stdout

        # --- Bo resumes it in Codex, here (World.continuity runs in Bo's clone)
        written = bo.continuity_json("resume", key, "--in", "codex", "--project", ".")
        path = Path(written["path"])
        assert written["cwd"] == str(bo.project) and path.is_file()
        meta = json.loads(path.read_text().splitlines()[0])
        assert meta["payload"]["cwd"] == str(bo.project)
        assert SECRET not in path.read_text() and PASSWORD not in path.read_text()
        size, first = path.stat().st_size, len(fake_model.requests)
        done = subprocess.run(
            ["bash", "-c", f"{written['headless']} {shlex.quote(PROMPT)}"],
            env=bo.env(),
            cwd=bo.root,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, f"codex exited {done.returncode}:\n{done.stderr[-3000:]}"
        asked = [
            r
            for r in fake_model.model_requests(first)
            if PROMPT in json.dumps(r["body"], ensure_ascii=False)
        ]
        assert asked, "codex never sent the prompt to the model"
        sent = json.dumps(asked[0]["body"], ensure_ascii=False)
        assert REQUEST in sent and "stamps UTC" in sent and SECRET not in sent
        grown = path.read_bytes()
        assert len(grown) > size and PROMPT.encode() in grown[size:]
    finally:
        if ana is not None:
            assert ana.stop() == 0, ana.logs()
        if bo.daemon is not None:
            bo.stop_daemon()
        bo.close()

    # --- what the team store holds, read as the database's owner
    everything = _every_text(team_db)
    assert REQUEST in everything  # the shared session is there ...
    assert SECRET not in everything and PASSWORD not in everything  # ... never a secret
    assert "diary" not in everything and "quarterly numbers" not in everything
    assert "0b5e1c7a-private-diary" not in everything
    assert str(ana_root) not in everything and str(bo.root) not in everything  # no local path
