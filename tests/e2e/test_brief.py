"""End to end with the real Claude Code, Codex and pi (issue 39, "Done when"): a session started
the next morning, or the next week, still gets the project brief.

Per harness and age (20 hours, 5 days), in a throwaway world (``conftest.World``):

1. ``hooks install``, the daemon; session A runs prompt ``PA`` (the fake model: one shell
   call, then text) and ends (its ``session_end`` checkpoint);
2. a decision is remembered for A: ``continuity remember "…" --type decision --source A``;
3. A is made old: its checkpoints, its rows' times and its session row's times are moved back
   by the age, with a small SQL update on the workspace's SQLite database (``_age``: every
   stored time of session A, each parsed and written back in the form it was stored in);
4. session B starts in the same folder: its first model request (the fake model's log) holds
   the brief, framed as evidence, naming A's key, its age, ``PA``, A's outcome (the fake
   model's answer) and the decision; and every tool-like name in the injected text is a tool
   the request offers (the text names no tool the harness lacks, nor tells the model to "use
   recall").
"""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from continuity.daemon.hooks.install import MCP_LOADERS as LOADERS
from tests.e2e.conftest import HARNESSES, World, run_recorded, until
from tests.e2e.fakemodel import REPLY_TEXT, SHELL_COMMAND, SHELL_TOOLS, offered_names, offers
from tests.e2e.test_harnesses import BRIEF_HEAD, FRAMING, _new_session, _recovery_text

AGES = {"20h": timedelta(hours=20), "5d": timedelta(days=5)}
AGE_TEXT = {"20h": "20 hours ago", "5d": "5 days ago"}


@dataclass
class BriefRun:
    world: World
    age: str
    prompts: dict[str, str] = field(default_factory=dict)
    key_a: str = ""
    decision: str = ""
    first_request_b: Any = None
    failed: str | None = None


#: (table, time columns, the column holding the session key) moved back by ``_age``
_TIMES = (
    ("session_checkpoints", ("created_at",), "session_key"),
    ("entries", ("ts",), "session_key"),
    ("sessions", ("started_at", "ended_at", "updated_at", "created_at"), "session_key"),
    ("session_transcripts", ("created_at", "updated_at", "completed_at"), "session_key"),
)


def _shift(value: str, by: timedelta) -> str:
    """A stored time moved back by ``by``, written in the form it was read in (SQLite keeps
    SQLAlchemy's ``YYYY-MM-DD HH:MM:SS.ffffff``, possibly with an offset)."""
    parsed = datetime.fromisoformat(value)
    sep = "T" if "T" in value else " "
    spec = "microseconds" if "." in value else "seconds"
    out = (parsed - by).isoformat(sep=sep, timespec=spec)
    if parsed.tzinfo is None or not re.search(r"[+-]\d\d:\d\d$|Z$", value):
        out = re.sub(r"[+-]\d\d:\d\d$", "", out)
    return out


def _age(db: Path, key: str, by: timedelta) -> int:
    """Move every stored time of session ``key`` back by ``by`` (step 3 of the module
    docstring); returns how many values moved."""
    moved = 0
    with sqlite3.connect(db) as conn:
        for table, columns, key_column in _TIMES:
            for column in columns:
                rows = conn.execute(
                    f"SELECT rowid, {column} FROM {table} "
                    f"WHERE {key_column} = ? AND {column} IS NOT NULL",
                    (key,),
                ).fetchall()
                for rowid, value in rows:
                    conn.execute(
                        f"UPDATE {table} SET {column} = ? WHERE rowid = ?",
                        (_shift(str(value), by), rowid),
                    )
                    moved += 1
    return moved


def _scenario(rec: BriefRun) -> None:
    w = rec.world
    tag = uuid.uuid4().hex[:8]
    pa = rec.prompts["a"] = f"Task A {tag}: list the files of this project"
    pb = rec.prompts["b"] = f"Task B {tag}: carry on from yesterday"
    w.continuity_json("hooks", "install", w.harness)
    w.start_daemon()
    w.run_harness(pa)
    rec.key_a = _new_session(w, set(), pa)
    until(
        lambda: any(
            cp["trigger"] == "session_end"
            for cp in w.continuity_json("checkpoints", rec.key_a)["checkpoints"]
        ),
        "A's session_end checkpoint",
    )
    rec.decision = f"Decision {tag}: the export stays in CSV"
    w.continuity("remember", rec.decision, "--type", "decision", "--source", rec.key_a)
    assert _age(w.ws / "continuity.db", rec.key_a, AGES[rec.age]) > 0
    w.run_harness(pb)
    requests = w.requests_with(pb)
    rec.first_request_b = requests[0]["body"] if requests else None
    w.stop_daemon()


@pytest.fixture(
    scope="module", params=[(h, a) for h in HARNESSES for a in AGES], ids=lambda p: f"{p[0]}-{p[1]}"
)
def run(
    request: pytest.FixtureRequest,
    clis: dict[str, Path],
    fake_model: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[BriefRun]:
    harness, age = request.param
    world = World(
        tmp_path_factory.mktemp(f"brief-{harness}-{age}"), harness, clis[harness], fake_model
    )
    rec = BriefRun(world, age)
    run_recorded(world, rec, _scenario)
    yield rec


def _brief(rec: BriefRun) -> str:
    if rec.failed:
        pytest.fail(f"{rec.world.harness} {rec.age}: {rec.failed}", pytrace=False)
    assert rec.first_request_b is not None, "B's first model request was not logged"
    text = _recovery_text(rec.world.harness, rec.first_request_b)
    assert text is not None, json.dumps(rec.first_request_b)[:3000]
    return text


def test_an_old_session_still_reaches_the_next_one(run: BriefRun) -> None:
    """B's first request holds the brief, framed as evidence, naming A's key with its age,
    A's request, A's outcome and the remembered decision."""
    text = _brief(run)
    assert text.startswith(BRIEF_HEAD + FRAMING + "\n")
    assert f"### Session {run.key_a} · {run.world.harness} · {AGE_TEXT[run.age]} (" in text
    assert f"): {run.prompts['a']}" in text  # Last request (row N): PA
    assert re.search(r"^Outcome \(row \d+\): " + re.escape(REPLY_TEXT), text, re.M), text
    assert f"- [decision] {run.decision}" in text
    assert SHELL_COMMAND in text  # the command A ran, with its status


def test_the_brief_names_no_tool_the_harness_lacks(run: BriefRun) -> None:
    """Every tool-like name in the injected text (a backticked word, an ``mcp__`` name) is a
    tool B's request offers; a shell command named is run through the shell tool the request
    offers; nothing tells the model to use a tool by a bare name."""
    text = _brief(run)
    offered = offered_names(run.first_request_b)
    shell = [t for t in SHELL_TOOLS if t in offered]
    for name in re.findall(r"\bmcp__\w+", text):
        assert offers(offered, name), (name, sorted(offered))
    if re.search(r"\bmcp__\w+", text) and run.world.harness in LOADERS:  # deferred tools:
        assert f"(load them with `{LOADERS[run.world.harness]}`)" in text  # say how to load
    ran = re.compile(r"^(?:- )?(?:ok|failed|no result): `|^Tests: ")
    for line in text.split("\n"):
        for quoted in re.findall(r"`([^`]+)`", line):
            if ran.match(line) or " " in quoted:  # a command A ran, or the CLI path
                assert shell, (quoted, sorted(offered))
            else:
                assert offers(offered, quoted), (quoted, sorted(offered), text)
    assert not re.search(
        r"\b(?:use|call)\s+`?(?:recall|search|show|continuation|remember)\b", text, re.I
    ), text
