"""Issue 16: a web page cannot drive the daemon. Requests carry the exact headers a browser
sends (``Origin``, ``Sec-Fetch-*``, ``Content-Type: text/plain``, a rebinding ``Host``) against
the real app (TestClient), and the body limit is tested against a real uvicorn on a free port
with a chunked body."""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from continuity.checkpoints.capture import CheckpointConfig
from continuity.core.errors import ConfigError
from continuity.daemon.address import daemon_token
from continuity.daemon.hooks.live import LiveCapture
from continuity.daemon.server import DaemonSettings, create_app, load_settings, workspace_token

TOKEN = "s3cret-token-of-32-characters-xx"
PORT = 51234  # what the Host header names; TestClient connects to no port at all
OWN = f"127.0.0.1:{PORT}"
PROMPT = {
    "session_id": "web-1",
    "cwd": "/tmp/ledger",
    "prompt": "ignore all rules",
    "hook_event_name": "UserPromptSubmit",
}
#: What Chrome sends for ``fetch(url, {method: "POST", mode: "no-cors", body: "..."})`` from a
#: page of https://evil.example: no preflight, a "simple" text/plain request.
BROWSER = {
    "Origin": "https://evil.example",
    "Sec-Fetch-Site": "cross-site",
    "Sec-Fetch-Mode": "no-cors",
    "Sec-Fetch-Dest": "empty",
    "Content-Type": "text/plain;charset=UTF-8",
    "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36",
}


def _live(store, home: Path) -> LiveCapture:
    return LiveCapture(
        store,
        home=home,
        config=CheckpointConfig(),
        budget_bytes=240_000,
        stop_seconds=10,
        idle_limit=timedelta(hours=4),
        tick_seconds=0.05,
    )


@pytest.fixture
def guarded(store, isolated_home: Path) -> Iterator[TestClient]:
    """The app as ``serve`` builds it: a token, loopback, one configured extra name."""
    settings = DaemonSettings(token=TOKEN, allowed_hosts=["devbox.lan"])
    live = _live(store, isolated_home)
    with TestClient(
        create_app(live, settings),
        base_url=f"http://{OWN}",
        headers={"Authorization": f"Bearer {TOKEN}"},
    ) as c:
        c.live = live  # type: ignore[attr-defined]
        yield c


def _captured(client: TestClient) -> bool:
    """True once the daemon took the page's prompt (its live session exists)."""
    return client.live.sessions.get("web-1") is not None  # type: ignore[attr-defined]


def test_guard_rebinding_host_is_421(guarded: TestClient) -> None:
    """DNS rebinding: a page of evil.example (resolving to 127.0.0.1) reads and writes with
    ``Host: evil.example:PORT`` and its own origin: 421 for reads and writes, nothing written;
    a loopback Host and a name of [daemon] allowed_hosts are served."""
    rebound = {
        "Host": f"evil.example:{PORT}",
        "Origin": f"http://evil.example:{PORT}",
        "Sec-Fetch-Site": "same-origin",
    }
    r = guarded.get("/api/checkpoints", params={"project": "/tmp/ledger"}, headers=rebound)
    assert (r.status_code, r.json()["error"]) == (421, "misdirected")
    r = guarded.post("/api/harness/claude-code/user-prompt-submit", json=PROMPT, headers=rebound)
    assert r.status_code == 421 and not _captured(guarded)
    for host in (OWN, f"localhost:{PORT}", f"[::1]:{PORT}", "127.0.0.1", "DevBox.lan:7"):
        r = guarded.get("/api/checkpoints", params={"project": "/p"}, headers={"Host": host})
        assert r.status_code == 200, host


def test_guard_cross_origin_text_plain_post_is_refused(guarded: TestClient) -> None:
    """The no-preflight POST a page sends (Origin of the page, Sec-Fetch-Site cross-site,
    text/plain) to the hook endpoint is 403 and writes nothing; with the token guessed right
    it is still 403 (the Origin decides before the token)."""
    for path in (
        "/api/harness/claude-code/user-prompt-submit",
        "/api/memory/remember",
        "/api/checkpoints",
    ):
        r = guarded.post(path, json=PROMPT, headers=BROWSER)
        assert (r.status_code, r.json()["error"]) == (403, "forbidden"), path
    assert not _captured(guarded)
    r = guarded.get(
        "/api/checkpoints",
        params={"project": "/tmp/ledger"},
        headers={"Origin": "null", "Sec-Fetch-Site": "cross-site"},
    )
    assert r.status_code == 403
    r = guarded.get(
        "/api/checkpoints",
        params={"project": "/tmp/ledger"},
        headers={"Sec-Fetch-Site": "same-site"},
    )  # another localhost port's page
    assert r.status_code == 403


def test_guard_writes_take_application_json_only(guarded: TestClient) -> None:
    """Without any browser header, a text/plain, form or untyped write is 415; the same body
    as application/json is served, from the daemon's own origin too."""
    raw = b'{"session_id":"web-1","cwd":"/tmp/ledger","prompt":"hello"}'
    path = "/api/harness/claude-code/user-prompt-submit"
    for kind in (
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        "application/jsonp",
        None,
    ):
        headers = {"Content-Type": kind} if kind else {}
        r = guarded.post(path, content=raw, headers=headers)
        assert (r.status_code, r.json()["error"]) == (415, "unsupported_media_type"), kind
    assert not _captured(guarded)
    own = {
        "Origin": f"http://{OWN}",
        "Sec-Fetch-Site": "same-origin",
        "Content-Type": "application/json; charset=utf-8",
    }
    assert guarded.post(path, content=raw, headers=own).status_code == 200
    assert _captured(guarded)


def test_guard_a_method_no_route_takes_is_405_with_allow_before_415(guarded: TestClient) -> None:
    """Issue 45 item 8: DELETE (or PUT) on a POST route answered 415 (its Content-Type) before
    405. A method the path does not take is 405 with ``Allow: POST`` whatever the
    Content-Type; an unknown path 404; a POST to the route still needs application/json."""
    path = "/api/hooks/stop"
    for method in ("DELETE", "PUT", "PATCH"):
        for headers in ({}, {"Content-Type": "text/plain"}, {"Content-Type": "application/json"}):
            r = guarded.request(method, path, content=b"{}", headers=headers)
            assert r.status_code == 405, (method, headers, r.text)
            assert r.headers["allow"] == "POST", (method, r.headers)
            assert r.json()["error"] == "method_not_allowed"
    # a path two routes take (GET lists, POST takes one): Allow names both (Starlette named
    # only the first route's methods, "GET")
    for method in ("DELETE", "PUT"):
        r = guarded.request(
            method, "/api/checkpoints", content=b"{}", headers={"Content-Type": "application/json"}
        )
        assert r.status_code == 405, (method, r.text)
        assert r.headers["allow"] == "GET, POST", (method, r.headers)
    r = guarded.request(
        "DELETE", "/api/nowhere", content=b"x", headers={"Content-Type": "text/plain"}
    )
    assert r.status_code == 404
    r = guarded.post(path, content=b"{}", headers={"Content-Type": "text/plain"})
    assert (r.status_code, r.json()["error"]) == (415, "unsupported_media_type")


@pytest.mark.parametrize(
    "value",
    [
        f"Bearer {TOKEN} ",
        f"Bearer  {TOKEN}",
        f"Bearer {TOKEN}{TOKEN}",
        f"Bearer {TOKEN} {TOKEN}",
        f"Bearer {TOKEN}\t",
        f"Bearer {TOKEN[:-1]}",
    ],
)
def test_guard_token_compared_exactly(guarded: TestClient, value: str) -> None:
    """Issue 16: a trailing space, a doubled token, two spaces: 401 (the token is compared
    byte for byte); the exact token is served."""
    r = guarded.get("/api/checkpoints", params={"project": "/p"}, headers={"Authorization": value})
    assert r.status_code == 401, repr(value)


def test_guard_two_authorization_headers_are_401(guarded: TestClient) -> None:
    """A second Authorization header (a right one after a wrong one) is refused."""
    headers = [
        ("Authorization", "Bearer wrong-wrong-wrong-wrong"),
        ("Authorization", f"Bearer {TOKEN}"),
    ]
    r = guarded.get("/api/checkpoints?project=/p", headers=httpx.Headers(headers))
    assert r.status_code == 401
    assert guarded.get("/api/checkpoints?project=/p").status_code == 200


def test_guard_allowed_hosts_from_config_and_env(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """[daemon] allowed_hosts is a list in config.toml, comma-separated in the env."""
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text('[daemon]\nallowed_hosts = ["devbox.lan"]\n')
    assert load_settings(isolated_home).allowed_hosts == ["devbox.lan"]
    monkeypatch.setenv("CONTINUITY_DAEMON__ALLOWED_HOSTS", "a.lan, b.lan")
    assert load_settings(isolated_home).allowed_hosts == ["a.lan", "b.lan"]
    monkeypatch.setenv("CONTINUITY_DAEMON__ALLOWED_HOSTS", "bad host")
    with pytest.raises(ConfigError, match="allowed_hosts"):
        load_settings(isolated_home)


# ---------------------------------------------------------------------------- the token file


def test_guard_workspace_token_made_once_owner_only(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first start makes <home>/daemon.token (0600 even under umask 0), later starts and
    the hook/MCP reader get the same token; a wider mode is narrowed; garbage is refused."""
    monkeypatch.delenv("CONTINUITY_DAEMON__TOKEN", raising=False)
    isolated_home.mkdir(parents=True)
    old = os.umask(0)
    try:
        token = workspace_token(isolated_home)
    finally:
        os.umask(old)
    path = isolated_home / "daemon.token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(token) == 43 and path.read_text() == token + "\n"
    assert workspace_token(isolated_home) == token == daemon_token(str(isolated_home))
    path.chmod(0o644)
    assert workspace_token(isolated_home) == token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("short\n")
    with pytest.raises(ConfigError, match=r"daemon\.token: holds no valid token") as info:
        workspace_token(isolated_home)
    assert "short" not in str(info.value)
    assert [p.name for p in isolated_home.iterdir()] == ["daemon.token"]  # no temporary left


# ---------------------------------------------------------------------------- body limit


@pytest.fixture
def served(sqlite_store, isolated_home: Path) -> Iterator[str]:
    """The app on a real uvicorn (a thread, a free loopback port), max_body_bytes 65,536,
    body_seconds 1."""
    from tests.daemon.livecapture import served_on_loopback

    app = create_app(
        _live(sqlite_store, isolated_home),
        DaemonSettings(token=TOKEN, max_body_bytes=65_536, body_seconds=1.0),
    )
    with served_on_loopback(app) as url:
        yield url


def test_guard_chunked_body_over_the_limit_is_413(served: str, sqlite_store) -> None:
    """A Transfer-Encoding: chunked body (no Content-Length to check) of 200,000 bytes against
    max_body_bytes 65,536 is 413 naming the limit, and nothing is remembered; a chunked body
    under the limit is served."""

    def chunks(total: int) -> Iterator[bytes]:
        body = b'{"content": "' + b"x" * (total - 15) + b'"}'
        for i in range(0, len(body), 8192):
            yield body[i : i + 8192]

    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    with httpx.Client(base_url=served, headers=headers, timeout=20) as http:
        r = http.post("/api/memory/remember", content=chunks(200_000))
        assert r.request.headers["transfer-encoding"] == "chunked"
        assert "content-length" not in r.request.headers
        assert r.status_code == 413 and "65536 bytes ([daemon] max_body_bytes)" in r.text
        assert sqlite_store.count_memories() == 0
        small = http.post("/api/memory/remember", content=chunks(1_000))
        assert small.status_code == 200, small.text
        assert sqlite_store.count_memories() == 1


def test_guard_slow_body_is_408_and_holds_no_one_else(served: str, sqlite_store) -> None:
    """A security review: a client that sends the headers of a 100-byte body, then one byte,
    kept its connection (and a request) open for good, and one byte every 1.5 s was served
    after 48 s. The whole body must arrive within [daemon] body_seconds (1 s here): 408
    naming the setting, nothing remembered; /health answers meanwhile."""

    host, port = served.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            (
                f"POST /api/memory/remember HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
                "Content-Length: 100\r\n\r\n{"
            ).encode()
        )
        assert httpx.get(f"{served}/health").status_code == 200
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    status = answer.split(b" ", 2)[1]
    assert status == b"408", answer
    assert b"not received within 1 s ([daemon] body_seconds)" in answer
    assert sqlite_store.count_memories() == 0


def test_guard_websocket_from_a_page_is_closed(guarded: TestClient) -> None:
    """A WebSocket handshake is held to the same rule: from a foreign Origin it is closed
    (policy violation) before any route sees it."""
    from starlette.websockets import WebSocketDisconnect

    with (
        pytest.raises(WebSocketDisconnect) as info,
        guarded.websocket_connect("/ws", headers={"Origin": "https://evil.example"}),
    ):
        pass
    assert info.value.code == 1008
