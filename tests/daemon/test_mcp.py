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
    """The daemon app served by uvicorn in a thread on a free loopback port, with the
    workspace's token as ``serve`` makes it (the tools must read it: issue 16)."""
    import uvicorn

    from continuity.daemon.hooks.live import LiveCapture
    from continuity.daemon.server import DaemonSettings, create_app, workspace_token
    from continuity.store import open_store_raw

    store = open_store_raw(database_url(isolated_home))
    live = LiveCapture(store, home=isolated_home, config=CheckpointConfig(),
                       budget_bytes=240_000, stop_seconds=10, idle_limit=timedelta(hours=4))
    port = _free_port()
    isolated_home.mkdir(parents=True, exist_ok=True)
    settings = DaemonSettings(token=workspace_token(isolated_home))
    server = uvicorn.Server(uvicorn.Config(create_app(live, settings), host="127.0.0.1",
                                           port=port, log_level="warning"))
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


def test_mcp_tools_through_the_daemon(daemon_up: str, tmp_path: Path,
                                      isolated_home: Path) -> None:
    """With the daemon up, tools act on the project's live session: remember and recall count
    in its digest, checkpoint writes an agent checkpoint carrying the reason."""
    import httpx

    project = str(tmp_path / "ledger")
    auth = {"Authorization": f"Bearer {(isolated_home / 'daemon.token').read_text().strip()}"}
    httpx.post(f"{daemon_up}/api/hooks/session-start", headers=auth, json={
        "harness": "claude-code", "session_key": "live-1", "project": project})
    httpx.post(f"{daemon_up}/api/hooks/user-prompt-submit", headers=auth, json={
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
    with pytest.raises(Exception, match="no live session"):
        tools.continuation()


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
    assert result.is_error and "no live session" in result.content[0].text


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
