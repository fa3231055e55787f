"""Issue 39, "The agent can reach every row": MCP ``search``, ``show``, ``recall`` with
``sessions`` and ``continuation`` without a key, called for real (``ContinuityTools`` and the
SDK server) over a store holding two sessions of one project, the daemon up and down."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from continuity.browse.agent_tools import (
    MAX_SEARCH_HITS,
    ROW_CHARS,
    SHOW_CHARS,
    cut,
    previous_session,
    show_rows,
)
from continuity.core.config import database_url
from continuity.daemon.mcp_server import ContinuityTools, build_server
from continuity.formats.importer import import_file
from continuity.store import open_store
from tests.daemon.test_mcp import daemon_down, daemon_up  # noqa: F401 - fixtures

PROJECT = "/home/ana/ledger"
OLD, NEW = "aaaa1111-older", "bbbb2222-newer"
SECRET = "sk-ant-api03-" + "Q" * 40


def _line(key: str, n: int, kind: str, content: object, when: str, parent: str | None) -> str:
    role = "user" if kind == "user" else "assistant"
    return json.dumps(
        {
            "sessionId": key,
            "cwd": PROJECT,
            "version": "2.1.40",
            "type": kind,
            "uuid": f"{key}-{n}",
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "timestamp": when,
            "message": {"role": role, "content": content},
        }
    )


def _session(folder: Path, key: str, day: str, prompt: str, output: str) -> Path:
    """A Claude Code session file: a prompt, a Bash call, its output, an answer."""
    lines = [
        _line(key, 0, "user", prompt, f"{day}T08:00:00.000Z", None),
        _line(
            key,
            1,
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": f"toolu_{key[:4]}",
                    "name": "Bash",
                    "input": {"command": "pytest -q"},
                }
            ],
            f"{day}T08:00:01.000Z",
            f"{key}-0",
        ),
        _line(
            key,
            2,
            "user",
            [{"type": "tool_result", "tool_use_id": f"toolu_{key[:4]}", "content": output}],
            f"{day}T08:00:02.000Z",
            f"{key}-1",
        ),
        _line(
            key,
            3,
            "assistant",
            [{"type": "text", "text": "Done: " + prompt}],
            f"{day}T08:00:03.000Z",
            f"{key}-2",
        ),
    ]
    path = folder / f"{key}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def two_sessions(isolated_home: Path, tmp_path: Path) -> None:
    """Two stored sessions of /home/ana/ledger: OLD (Sept 1, the flaky rounding test, a
    secret in its tool output) and NEW (Sept 2, the March export)."""
    with open_store(database_url(isolated_home)) as store:
        import_file(
            store,
            _session(
                tmp_path,
                OLD,
                "2026-09-01",
                "fix the flaky rounding test in ledger",
                f"FAILED test_rounding: token {SECRET} leaked\n" + "x" * 9000,
            ),
        )
        import_file(
            store,
            _session(
                tmp_path, NEW, "2026-09-02", "why does the nightly export skip March", "3 passed"
            ),
        )


@pytest.mark.parametrize("daemon", ["daemon_up", "daemon_down"])
def test_search_finds_rows_of_every_session_redacted(
    two_sessions: None, daemon: str, request: pytest.FixtureRequest
) -> None:
    """search: rows of the earlier session, with key, seq and a snippet whose secret is a
    marker; the filters of `continuity search` apply (role, here)."""
    request.getfixturevalue(daemon)
    tools = ContinuityTools(cwd=PROJECT)
    found = tools.search("rounding")
    assert found["count"] == len(found["hits"]) >= 2
    assert {h["session"] for h in found["hits"]} == {OLD}
    user = [h for h in found["hits"] if h["role"] == "user"]
    assert [(h["session"], h["seq"]) for h in user] == [(OLD, 0)]
    assert "flaky rounding test" in user[0]["snippet"]
    assert user[0]["show"] == f"continuity show {OLD} --seq 0"
    tool_hit = next(h for h in found["hits"] if "FAILED" in h["snippet"])
    assert SECRET not in json.dumps(found) and "[REDACTED" in tool_hit["snippet"]
    assert len(tool_hit["snippet"]) <= 162  # SNIPPET_CHARS and the two cut marks
    assert [h["role"] for h in tools.search("rounding", role="user")["hits"]] == ["user"]
    assert tools.search("rounding", here=True)["count"] == found["count"]
    assert ContinuityTools(cwd="/elsewhere").search("rounding", here=True)["count"] == 0
    assert {h["session"] for h in tools.search("March export")["hits"]} == {NEW}


def test_search_bounds_and_bad_filters(two_sessions: None, daemon_down: None) -> None:
    """limit above MAX_SEARCH_HITS, a bad role or a bad time: one error naming it."""
    from continuity.core.errors import ContinuityError

    tools = ContinuityTools(cwd=PROJECT)
    with pytest.raises(ContinuityError, match=f"limit: must be 1 to {MAX_SEARCH_HITS}"):
        tools.search("rounding", limit=MAX_SEARCH_HITS + 1)
    with pytest.raises(ContinuityError, match="role: 'robot' is not one of"):
        tools.search("rounding", role="robot")
    with pytest.raises(ContinuityError, match="since"):
        tools.search("rounding", since="yesterday-ish")
    with pytest.raises(ContinuityError, match="query: is empty"):  # Workspace.search's rule
        tools.search("   ")
    assert tools.search("rounding", limit=1)["count"] == 1


@pytest.mark.parametrize("daemon", ["daemon_up", "daemon_down"])
def test_show_rows_around_a_seq_bounded(
    two_sessions: None, daemon: str, request: pytest.FixtureRequest
) -> None:
    """show: the rows from seq-before, each redacted and cut at ROW_CHARS with a marker;
    a key prefix works; a missing row is one error."""
    from continuity.core.errors import ContinuityError

    request.getfixturevalue(daemon)
    tools = ContinuityTools(cwd=PROJECT)
    shown = tools.show("aaaa", 2, before=1, rows=2)
    assert shown["session"] == OLD and shown["harness"] == "claude-code"
    assert [r["seq"] for r in shown["rows"]] == [1, 2] and shown["more"] is True
    call, result = shown["rows"]
    assert call["text"].startswith("[call Bash]") and "pytest -q" in call["text"]
    assert result["text"].startswith("[result] FAILED test_rounding")
    assert SECRET not in result["text"] and "[REDACTED" in result["text"]
    assert len(result["text"]) == ROW_CHARS and result["text"].endswith(" more characters]")
    whole = tools.show(OLD, 0)
    assert [r["seq"] for r in whole["rows"]] == [0, 1, 2, 3] and whole["more"] is False
    assert whole["rows"][3]["text"] == "Done: fix the flaky rounding test in ledger"
    with pytest.raises(ContinuityError, match=f"session {OLD} has no row 9"):
        tools.show(OLD, 9)
    # fresh-user review: rows under the default before (5) is no error; before is rows-1
    few = tools.show(OLD, 3, rows=2)
    assert [r["seq"] for r in few["rows"]] == [2, 3]
    with pytest.raises(ContinuityError, match=r"before: must be 0 to 1 \(got 5\)"):
        tools.show(OLD, 3, before=5, rows=2)  # given, it is checked


def test_show_total_text_is_bounded(isolated_home: Path, tmp_path: Path) -> None:
    """Thirty rows of 2,000+ characters: the answer's row text stays within SHOW_CHARS and
    the rows left out are counted."""
    key = "cccc3333-long"
    lines = [
        _line(
            key,
            n,
            "user",
            f"row {n} " + "y" * 5000,
            f"2026-09-03T08:00:{n:02d}.000Z",
            f"{key}-{n - 1}" if n else None,
        )
        for n in range(30)
    ]
    path = tmp_path / f"{key}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with open_store(database_url(isolated_home)) as store:
        import_file(store, path)
        shown = show_rows(store, key, 0, before=0, rows=30)
    used = sum(len(r["text"]) for r in shown["rows"])
    assert used <= SHOW_CHARS
    assert len(shown["rows"]) == SHOW_CHARS // ROW_CHARS
    assert shown["left_out"] == 30 - len(shown["rows"])


@given(st.text(max_size=3000), st.integers(min_value=40, max_value=2500))
@settings(max_examples=200, deadline=None)
def test_cut_never_exceeds_its_limit(text: str, limit: int) -> None:
    """cut: at most ``limit`` characters; the text itself when it fits; else a prefix of it
    and a marker counting exactly the characters left out."""
    got = cut(text, limit)
    assert len(got) <= limit
    if len(text) <= limit:
        assert got == text
    else:
        head, _, tail = got.rpartition("… [")
        assert text.startswith(head)
        assert tail == f"{len(text) - len(head)} more characters]"


@pytest.mark.parametrize("daemon", ["daemon_up", "daemon_down"])
def test_recall_with_sessions_also_returns_rows(
    two_sessions: None, daemon: str, request: pytest.FixtureRequest
) -> None:
    """recall(sessions=true): the memories and the rows of every session matching the query;
    without it, memories only (no ``rows`` key)."""
    request.getfixturevalue(daemon)
    tools = ContinuityTools(cwd=PROJECT)
    tools.remember("The rounding test is flaky on leap days", session=NEW)
    plain = tools.recall("rounding")
    assert "rows" not in plain
    assert [r["content"] for r in plain["results"]] == ["The rounding test is flaky on leap days"]
    both = tools.recall("rounding", sessions=True, limit=3)
    assert both["results"] == plain["results"]
    assert 1 <= len(both["rows"]) <= 3 and {r["session"] for r in both["rows"]} == {OLD}


def test_continuation_without_a_key_is_the_previous_session_not_the_callers_own(
    two_sessions: None, daemon_up: str, isolated_home: Path
) -> None:
    """Issue 39: with the caller's session NEW live in the daemon, continuation() without a
    key is OLD's; with a key, that session's."""
    import httpx

    auth = {"Authorization": f"Bearer {(isolated_home / 'daemon.token').read_text().strip()}"}
    httpx.post(
        f"{daemon_up}/api/hooks/session-start",
        headers=auth,
        json={"harness": "claude-code", "session_key": NEW, "project": PROJECT},
    )
    tools = ContinuityTools(cwd=PROJECT)
    assert tools.own_session() == NEW
    assert tools.continuation(budget_bytes=8000)["session"] == OLD
    assert tools.continuation(budget_bytes=8000, session="bbbb")["session"] == NEW


def test_continuation_without_a_key_never_hands_the_caller_itself(
    isolated_home: Path, tmp_path: Path, daemon_down: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder's only session is the caller's own: an error saying so, not that session."""
    from continuity.core.errors import InputError

    with open_store(database_url(isolated_home)) as store:
        import_file(store, _session(tmp_path, NEW, "2026-09-02", "the March export", "ok"))
    monkeypatch.setenv("CONTINUITY_SESSION_KEY", NEW)
    with pytest.raises(
        InputError,
        match=f"no earlier session of {PROJECT}: the only one is this session \\({NEW}\\)",
    ):
        ContinuityTools(cwd=PROJECT).continuation()


def test_continuation_without_a_key_skips_the_session_named_by_the_environment(
    two_sessions: None, daemon_down: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Daemon down: ``$CONTINUITY_SESSION_KEY`` names the caller's own session (NEW), so the
    previous one is OLD; without it the newest stored session (NEW) is the previous one."""
    tools = ContinuityTools(cwd=PROJECT)
    assert tools.continuation(budget_bytes=8000)["session"] == NEW
    monkeypatch.setenv("CONTINUITY_SESSION_KEY", NEW)
    assert tools.continuation(budget_bytes=8000)["session"] == OLD


def test_previous_session_of_a_folder(two_sessions: None, isolated_home: Path) -> None:
    """previous_session: newest first, the excluded key skipped, None when nothing is left."""
    with open_store(database_url(isolated_home)) as store:
        assert previous_session(store, PROJECT) == NEW
        assert previous_session(store, PROJECT + "/", exclude=[NEW]) == OLD
        assert previous_session(store, PROJECT, exclude=[NEW, OLD]) is None
        assert previous_session(store, "/elsewhere") is None


def test_the_sdk_server_offers_search_and_show(two_sessions: None, daemon_down: None) -> None:
    """Through the official SDK: six tools; search's hit feeds show; the result is JSON."""
    from mcp import Client

    async def go() -> tuple[list[str], dict, dict]:
        async with Client(build_server(ContinuityTools(cwd=PROJECT))) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            found = await client.call_tool("search", {"query": "nightly export"})
            hits = json.loads(found.content[0].text)
            hit = hits["hits"][0]
            shown = await client.call_tool("show", {"session": hit["session"], "seq": hit["seq"]})
            return names, hits, json.loads(shown.content[0].text)

    names, hits, shown = asyncio.run(go())
    assert names == ["checkpoint", "continuation", "recall", "remember", "search", "show"]
    assert hits["hits"][0]["session"] == NEW
    assert any("nightly export skip March" in r["text"] for r in shown["rows"])


def test_search_project_as_the_cli_takes_it_and_continuation_budget_checked(
    two_sessions: None, daemon_down: None
) -> None:
    """Fresh-user review: MCP search's project relative to the server's folder, or with a
    trailing slash, finds what the CLI's --project finds; a continuation budget outside the
    follow-up budget's range is an input error, not a refusal."""
    from continuity.core.errors import InputError

    parent = str(Path(PROJECT).parent)
    tools = ContinuityTools(cwd=parent)
    want = tools.search("rounding", project=PROJECT)["hits"]
    assert want
    assert tools.search("rounding", project=Path(PROJECT).name)["hits"] == want
    assert tools.search("rounding", project=PROJECT + "/")["hits"] == want
    for bad in (0, -5, 999):
        with pytest.raises(
            InputError,
            match=rf"budget_bytes: must be 1,000 to 100,000,000 "
            rf"\(got {bad}\)",
        ):
            tools.continuation(budget_bytes=bad, session=OLD)
