"""``continuity mcp``: the four tools through the daemon (uvicorn in a thread) and, when the
daemon is down, on the store directly; and a real stdio round trip with the official SDK."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Iterator

import pytest

from continuity.checkpoints.capture import CheckpointConfig
from continuity.core.config import database_url
from continuity.formats.importer import import_file
from continuity.daemon.mcp_server import ContinuityTools, build_server
from continuity.store import open_store

CC_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code" / "compaction.jsonl"
KEY = "5b7c2e90-aaaa"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def imported(isolated_home: Path, tmp_path: Path) -> Path:
    """The workspace with one imported Claude Code session (key 5b7c2e90-aaaa)."""
    path = tmp_path / f"{KEY}.jsonl"
    shutil.copy(CC_FIXTURE, path)
    with open_store(database_url(isolated_home)) as store:
        import_file(store, path)
    return path


@pytest.fixture
def daemon_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """Point every daemon client at a port nobody listens on."""
    monkeypatch.setenv("CONTINUITY_DAEMON_URL", f"http://127.0.0.1:{_free_port()}")


@pytest.fixture
def daemon_up(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The daemon app served by uvicorn in a thread on a free loopback port."""
    import uvicorn

    from continuity.daemon.hooks.live import LiveCapture
    from continuity.daemon.server import create_app
    from continuity.store import open_store_raw

    store = open_store_raw(database_url(isolated_home))
    live = LiveCapture(store, home=isolated_home, config=CheckpointConfig(),
                       budget_bytes=240_000, stop_seconds=10, idle_limit=timedelta(hours=4))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(live), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    url = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("CONTINUITY_DAEMON_URL", url)
    yield url
    server.should_exit = True
    thread.join(20)
    store.close()


def test_mcp_tools_through_the_daemon(daemon_up: str, tmp_path: Path) -> None:
    """With the daemon up, tools act on the project's live session: remember and recall count
    in its digest, checkpoint writes an agent checkpoint carrying the reason."""
    import httpx

    project = str(tmp_path / "ledger")
    httpx.post(f"{daemon_up}/api/hooks/session-start", json={
        "harness": "claude-code", "session_key": "live-1", "project": project})
    httpx.post(f"{daemon_up}/api/hooks/user-prompt-submit", json={
        "harness": "claude-code", "session_key": "live-1", "project": project,
        "prompt": "why does the export skip March"})
    tools = ContinuityTools(cwd=project)
    assert tools.session(None) == "live-1"
    kept = tools.remember("Export ranges are half-open", tags=["export"])
    assert kept["source_id"] == "live-1" and kept["deduped"] is False
    found = tools.recall("half-open ranges")
    assert [r["id"] for r in found["results"]] == [kept["id"]]
    cp = tools.checkpoint("phase one done")
    assert (cp["trigger"], cp["session"]) == ("agent", "live-1")
    assert "### Reason\nphase one done" in cp["digest"]
    assert cp["memory_queries"] == ["half-open ranges"]
    assert cp["recent_remembers"] == ["Export ranges are half-open"]


def test_mcp_tools_without_the_daemon(imported: Path, daemon_down: None) -> None:
    """With the daemon down the tools use the store: an agent checkpoint rebuilt from the
    stored session, its continuation, remember and recall."""
    tools = ContinuityTools()
    cp = tools.checkpoint("before the refactor", session=KEY)
    assert cp["trigger"] == "agent" and "before the refactor" in cp["digest"]
    view = tools.continuation(session=KEY)
    assert view["session"] == KEY and view["refusal"] is None
    tools.remember("Leap years: February has 29 days", session=KEY)
    assert tools.recall("February")["results"][0]["source_id"] == KEY
    with pytest.raises(Exception, match="none is live and none is stored"):
        tools.continuation()


NO_SESSION = ("no session of /home/ana/elsewhere: none is live and none is stored; pass "
              "session (a key or a unique key prefix) or set CONTINUITY_SESSION_KEY")


@pytest.mark.parametrize("daemon", ["daemon_up", "daemon_down"])
def test_mcp_tools_outside_a_harness_use_the_folders_stored_session(
        imported: Path, daemon: str, request: pytest.FixtureRequest) -> None:
    """Issue 12: with no harness running (no live session), checkpoint and continuation act on
    the newest stored session of the server's folder (/home/ana/ledger), with the daemon up
    (it refused: "no session matches '/home/ana/ledger'") or down ("no live session in ...")."""
    request.getfixturevalue(daemon)
    tools = ContinuityTools(cwd="/home/ana/ledger/")
    assert tools.session(None) == KEY
    cp = tools.checkpoint("before the refactor")
    assert (cp["trigger"], cp["session"]) == ("agent", KEY)
    assert "### Reason\nbefore the refactor" in cp["digest"]
    assert tools.continuation(budget_bytes=4000)["session"] == KEY
    # a memory is tied to the session it is made in, never to an earlier stored one
    assert tools.remember("Exports use UTC")["source_id"] is None


@pytest.mark.parametrize("daemon", ["daemon_up", "daemon_down"])
def test_mcp_tools_accept_a_key_prefix(imported: Path, daemon: str,
                                       request: pytest.FixtureRequest) -> None:
    """Issue 12: a unique key prefix names the session, as on the command line (the daemon
    answered 404 "no session matches '5b7c2e'" before, the store raised SessionNotFound)."""
    request.getfixturevalue(daemon)
    tools = ContinuityTools(cwd="/home/ana/elsewhere")
    assert tools.continuation(session="5b7c2e")["session"] == KEY
    cp = tools.checkpoint("phase one", session="5b7c2e")
    assert cp["session"] == KEY


def test_rest_continuation_and_checkpoint_accept_a_key_prefix(imported: Path,
                                                             daemon_up: str) -> None:
    """Issue 12: ``GET /api/sessions/<prefix>/continuation`` and ``POST /api/checkpoints`` take
    a unique key prefix (both were 404); an unknown one is still 404."""
    import httpx

    view = httpx.get(f"{daemon_up}/api/sessions/5b7c2e/continuation",
                     params={"budget_bytes": 4000})
    assert view.status_code == 200 and view.json()["session"] == KEY
    cp = httpx.post(f"{daemon_up}/api/checkpoints", json={
        "reason": "phase one", "trigger": "explicit", "session_key": "5b7c"})
    assert cp.status_code == 201 and cp.json()["session"] == KEY
    missing = httpx.get(f"{daemon_up}/api/sessions/zz9/continuation")
    assert missing.status_code == 404 and "no session matches 'zz9'" in missing.json()["detail"]


@pytest.mark.parametrize("daemon", ["daemon_up", "daemon_down"])
def test_mcp_no_session_has_one_wording(imported: Path, daemon: str,
                                        request: pytest.FixtureRequest) -> None:
    """Issue 12: a folder with no session, live or stored, gets the same error from checkpoint
    and continuation, daemon up or down (it was "daemon answered 404: no session matches ..."
    from one and "session: no live session in ..." from the other)."""
    from continuity.core.errors import NoProjectSession

    request.getfixturevalue(daemon)
    tools = ContinuityTools(cwd="/home/ana/elsewhere")
    for call in (lambda: tools.checkpoint("x"), lambda: tools.continuation()):
        with pytest.raises(NoProjectSession) as caught:
            call()
        assert str(caught.value) == NO_SESSION


def test_mcp_server_info_version_and_quiet_daemon_calls(
        imported: Path, daemon_up: str, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 12: ``serverInfo.version`` is the package version (it was ""); a tool call through
    the daemon logs nothing at INFO or above (httpx logged "HTTP Request: ..." each call)."""
    import logging
    from importlib.metadata import version

    from mcp import Client

    caplog.set_level(logging.DEBUG)

    async def go() -> tuple[object, object]:
        async with Client(build_server(ContinuityTools(cwd="/home/ana/ledger"))) as client:
            info = client.server_info
            result = await client.call_tool("continuation", {"budget_bytes": 4000})
            return info, result

    info, result = asyncio.run(go())
    assert (info.name, info.version) == ("continuity", version("continuity"))
    assert info.version == "0.1.0"
    assert not result.is_error
    loud = [(r.name, r.getMessage()) for r in caplog.records if r.levelno >= logging.INFO]
    assert loud == []
    assert any(r.name == "continuity.mcp" and "daemon call GET" in r.getMessage()
               for r in caplog.records)


def test_mcp_server_lists_tools_and_reports_errors(isolated_home: Path,
                                                   daemon_down: None) -> None:
    """The SDK server exposes exactly the four tools; a bad call is an error result naming
    the problem, not a crash."""
    from mcp import Client

    async def go() -> tuple[list[str], object]:
        async with Client(build_server(ContinuityTools())) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            bad = await client.call_tool("recall", {"query": "!!!"})
            return names, bad

    names, bad = asyncio.run(go())
    assert names == ["checkpoint", "continuation", "recall", "remember"]
    assert bad.is_error and "query: no word to search for" in bad.content[0].text

    async def missing() -> object:
        async with Client(build_server(ContinuityTools())) as client:
            return await client.call_tool("continuation", {})
    result = asyncio.run(missing())
    assert result.is_error and "none is live and none is stored" in result.content[0].text


def test_mcp_stdio_round_trip(isolated_home: Path, daemon_down: None) -> None:
    """`python -m continuity.daemon.mcp_server` speaks MCP on stdio: remember then recall."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "continuity.daemon.mcp_server"],
                                   env={**os.environ})

    async def go() -> dict:
        async with Client(params) as client:
            await client.call_tool("remember", {"content": "Use UTC in exports",
                                                "session": "stdio-1"})
            result = await client.call_tool("recall", {"query": "UTC exports"})
            return json.loads(result.content[0].text)

    found = asyncio.run(go())
    assert [r["content"] for r in found["results"]] == ["Use UTC in exports"]


@pytest.fixture
def slow_daemon(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A stand-in daemon answering every request after 1.5 s."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Slow(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server spelling
            self.rfile.read(int(self.headers.get("content-length") or 0))
            time.sleep(1.5)
            body = json.dumps({"results": [{"id": 7, "content": "late but kept"}]}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("CONTINUITY_DAEMON_URL", url)
    yield url
    server.shutdown()


def test_mcp_stdin_closed_during_a_call_still_answers_it(isolated_home: Path,
                                                         slow_daemon: str) -> None:
    """The client closes stdin while a tool call waits for the daemon: the call's answer is
    written before the server exits (it was dropped before: EOF ended the serving loop)."""
    import subprocess

    proc = subprocess.Popen([sys.executable, "-m", "continuity.daemon.mcp_server"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env={**os.environ})

    def send(message: dict) -> None:
        proc.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}})
        assert json.loads(proc.stdout.readline())["id"] == 1  # type: ignore[union-attr]
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "recall", "arguments": {"query": "export ranges", "session": "s1"}}})
        time.sleep(0.3)  # the call is in flight (the daemon answers after 1.5 s)
        proc.stdin.close()  # type: ignore[union-attr]
        out = proc.stdout.read()  # type: ignore[union-attr]
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    answers = [json.loads(line) for line in out.splitlines()]
    assert [a["id"] for a in answers] == [2]
    assert answers[0]["result"]["structuredContent"]["results"][0]["content"] == "late but kept"


def test_mcp_drain_is_bounded() -> None:
    """At end of input the reader waits for open requests at most ``seconds``, then ends;
    an answered or cancelled request no longer holds it."""
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

    from continuity.daemon.mcp_server import _Drain

    def request(n: int) -> SessionMessage:
        return SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=n, method="tools/call",
                                             params={"name": "recall"}))

    async def go() -> tuple[set, set, bool]:
        drain = _Drain(0.2)
        send, receive = anyio.create_memory_object_stream(10)
        reader, sent = drain.reader(receive), []

        class Sink:
            async def send(self, item: object) -> None:
                sent.append(item)

        writer = drain.writer(Sink())
        for n in (1, 2, 3):
            await send.send(request(n))
        await send.send(SessionMessage(JSONRPCNotification(
            jsonrpc="2.0", method="notifications/cancelled", params={"requestId": 3})))
        for _ in range(4):
            await reader.receive()
        await writer.send(SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=1, result={})))
        waiting = set(drain.open)
        send.close()
        with pytest.raises(anyio.EndOfStream):
            await reader.receive()  # request 2 is never answered: ends after 0.2 s
        return waiting, set(drain.open), await drain.until_answered()

    waiting, left, answered = anyio.run(go)
    assert waiting == {2} and left == {2} and answered is False
