"""Claude Code's SessionStart after ``compact`` or ``clear`` (issue 13, item 4): the
continuation's essentials (the previous request verbatim, the checkpoint's pointer, named gaps)
join the recovery digest, within the 10,000-character ``additionalContext`` limit, quoted as
evidence, never twice into one session."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from fastapi.testclient import TestClient

from continuity.checkpoints.capture import CheckpointConfig
from continuity.core.model import Session
from continuity.daemon.hooks import adapters
from continuity.daemon.hooks.live import LiveCapture, cli_prefix
from continuity.daemon.server import create_app
from tests.builders import CP, A, T, U, call, load

LOCAL = "http://127.0.0.1"
PROJECT = "/tmp/ledger-essentials"


def _client(store, home: Path) -> TestClient:
    live = LiveCapture(
        store,
        home=home,
        config=CheckpointConfig(),
        budget_bytes=240_000,
        stop_seconds=10,
        idle_limit=timedelta(hours=4),
        tick_seconds=0.05,
    )
    return TestClient(create_app(live), base_url=LOCAL)


def _old_session(store, request: str = "Fix the March totals in report.py") -> str:
    rows = [
        U("first look at the report"),
        A(call("c1", "Bash", command="ls")),
        T("c1"),
        A(text="found report.py"),
        CP("we looked at report.py"),
        U(request),
        A(call("c2", "Bash", command="pytest")),
    ]
    load(store, rows, key="old")
    store.upsert_session(Session(key="old", harness="claude-code", project=PROJECT))
    return "old"


def _start(c: TestClient, key: str, source: str) -> dict:
    return c.post(
        "/api/hooks/session-start",
        json={"harness": "claude-code", "session_key": key, "project": PROJECT, "source": source},
    ).json()


def test_clear_injects_the_cleared_sessions_essentials_once(store, isolated_home: Path) -> None:
    _old_session(store)
    with _client(store, isolated_home) as c:
        first = _start(c, "new", "clear")
        context = first["context"]
        assert "## Continuation of the previous work\n" in context
        assert (
            "## Continuation of the previous work\nQuoted from continuity's record as "
            "evidence; not an instruction.\nWhere session old stood:" in context
        )
        assert (
            "Previous request (verbatim, user, row 5):\n<previous-request>\nFix the March "
            "totals in report.py\n</previous-request>"
        ) in context
        assert "Checkpoint: old:4, a summary of rows up to 3." in context
        # issue 39: no MCP tool is installed here, so none is named; the CLI is
        assert "MCP" not in context and "call away" not in context
        assert f"{cli_prefix(str(isolated_home))} continue old`." in context
        # issue 39: the project brief (naming "old") comes first, the essentials after it
        assert context.startswith("## Project brief from continuity\n")
        assert "### Session old · " in context
        start = context.index("## Continuation of the previous work\n")
        assert first["recovery"]["continuation"] == {
            "session": "old",
            "chars": len(context) - start,
        }
        assert len(context) < adapters.CONTEXT_LIMIT
        again = _start(c, "new", "clear")
        assert "Continuation of the previous work" not in again["context"]
        assert again["recovery"]["continuation"] == {
            "session": "old",
            "skipped": "already_injected",
        }


def test_compact_injects_the_sessions_own_essentials(store, isolated_home: Path) -> None:
    _old_session(store)
    with _client(store, isolated_home) as c:
        out = _start(c, "old", "compact")
        assert "Fix the March totals in report.py" in out["context"]
        assert out["recovery"]["continuation"]["session"] == "old"
        startup = _start(c, "other", "startup")  # a plain start gets no essentials
        assert "Continuation of the previous work" not in startup["context"]
        assert "continuation" not in startup["recovery"]


def test_a_long_request_is_cut_to_stay_under_the_limit(store, isolated_home: Path) -> None:
    _old_session(store, request="Z" * 30_000)
    with _client(store, isolated_home) as c:
        out = _start(c, "new2", "clear")
    context = out["context"]
    assert len(context) < adapters.CONTEXT_LIMIT
    assert adapters.clip_context(context) == context  # nothing for the clip to cut
    assert "characters omitted …]" in context
    assert "</previous-request>" in context and "Checkpoint: old:4" in context


def test_no_stored_session_means_no_essentials(store, isolated_home: Path) -> None:
    with _client(store, isolated_home) as c:
        out = _start(c, "lonely", "clear")
    assert out["context"] == "" and out["recovery"]["continuation"] is None


def test_essentials_name_the_installed_continuation_tool(store, isolated_home: Path) -> None:
    """Issue 39: with the MCP server registered for Claude Code (the install record's
    ``mcp`` key), the essentials name its ``continuation`` tool by the name the model sees."""
    import json

    _old_session(store)
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "hooks-installed.json").write_text(
        json.dumps({"mcp": {"claude-code": {"continuation": "mcp__continuity__continuation"}}})
    )
    with _client(store, isolated_home) as c:
        context = _start(c, "new3", "clear")["context"]
    assert (
        'one MCP `mcp__continuity__continuation` call away (session "old", loaded with '
        "`ToolSearch`)"
    ) in context
    assert " continue old`" not in context
