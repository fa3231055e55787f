"""``continuity serve``: the local daemon (FastAPI on uvicorn), a thin HTTP shell over
``continuity.daemon.hooks.live.LiveCapture`` and the library.

**Binding.** ``[daemon] host`` (default 127.0.0.1) and ``port`` (default ``DEFAULT_PORT``, 7438);
``--host``/``--port`` override them, port 0 picks a free one. Any address outside the loopback
range requires ``[daemon] token`` (at least 16 characters; env ``CONTINUITY_DAEMON__TOKEN``).

**Who may talk to it** (issue 16: a web page the user visits must not read or write anything;
``_Guard``). The daemon always has a token, loopback too: the configured one, else
``<home>/daemon.token``, made at the first start, owner-only (``workspace_token``) and read by
the hook command and the MCP server (``continuity.daemon.address``), so nothing changes for the
user. Every request but ``GET /health`` carries exactly ``Authorization: Bearer <token>`` (401
otherwise; the scheme in any case, RFC 7235 §2.1; the token byte for byte), the API docs
(``/openapi.json``) included (no ``/docs`` or ``/redoc``: they load from a CDN, issue 45);
``/health`` without it answers only
``{"status": "ok"}``. A ``Host`` that is not loopback, the bound address or a name of
``[daemon] allowed_hosts`` is 421 (DNS rebinding); an ``Origin`` other than the daemon's own or
a cross-site ``Sec-Fetch-Site`` is 403; a write that is not ``application/json`` is 415 (what a
page can send without a CORS preflight never is); a body over ``[daemon] max_body_bytes`` as
received, chunked or not, is 413. The token is never logged or echoed, not even in a
configuration error. The address in use is written to ``<home>/daemon.url`` once the daemon is
ready (the hook command reads it) and removed at shutdown; ``<home>/daemon.lock`` keeps a second
daemon off the same workspace.

**Exit codes** of ``continuity serve``: 0 after a clean shutdown; 2 for bad input or settings
(``InputError``/``ConfigError``: a port outside 0..65535, the token rule); 8 when the daemon
cannot take its place (``DaemonConflict``: the address is in use, or another daemon serves the
workspace); 1 when queued checkpoints could not be written at shutdown.

**Team sync** (issue 41): while ``[team]`` names a team store, a ``continuity sync
--follow-stdin`` child syncs it in the background, nudged after each import that stored rows
and each session end (``daemon.teamsync``).

**Lifecycle.** Startup replays the spool (events hooks recorded while the daemon was down)
before the first request is served. SIGTERM and SIGINT stop accepting requests, let the ones in
flight finish, finish queued background work, replay what the spool still holds, flush queued
checkpoints, close the store and exit 0 (non-zero only when queued checkpoints could not be
written), so a restart loses no acknowledged write. Before a hook is answered, what it brought
is durable: a live turn fsync'd in the canonical transcript JSONL, a pre-compaction checkpoint
committed (SQLite WAL, ``synchronous=FULL``: durable across a power loss, B57), a session end
fsync'd in the spool. Periodic checkpoints wait up to seed 000's 2,500 ms window in memory
(flushed at shutdown; a SIGKILL inside the window loses that row, not its prompts).

**Endpoints** (``/openapi.json`` describes them): ``GET /health``; ``POST /api/hooks/<event>``
with our bodies (``continuity.daemon.hooks.models``) for session-start, user-prompt-submit,
pre-compaction, post-compaction, stop (202: the policy runs in the background) and session-end
(202: journaled, then done in the background, the consolidation pass queued after it unless
``[daemon] consolidate_on_end = false``); ``POST /api/harness/<harness>/<event>`` with a
harness's raw hook stdin (the hook command's route; answers the harness's stdout);
``POST /api/memory/remember``, ``POST /api/memory/recall`` (``expand``); ``GET
/api/checkpoints?project=&limit=`` and ``GET /api/checkpoints/<session_key>`` (``{checkpoints,
count}``, newest first, re-redacted); ``POST /api/checkpoints`` (an ``agent`` or ``explicit``
checkpoint); ``GET /api/sessions/current?project=``; ``GET
/api/sessions/<session_key>/continuation?budget_bytes=``; ``POST /api/continuation/summary``
(the summary of pi's own continuation checkpoint, issue 14; cancelled when the client goes
away) and ``POST /api/continuation/refused`` (a refusal the harness reports; once per run);
the session browser's HTML pages ``GET /``, ``/search``, ``/session`` (``daemon.browser``;
read-only). Bad input gets a 4xx whose ``detail`` names the field; a write either happens
whole or not at all.

Over 600 lines: the daemon's HTTP shell: app construction, the guard (token, origin, host),
error mapping and start-up (socket, lock, signals) are the one security boundary, reviewed
together; the routes already live in ``hooks.routes`` and ``browser``.
"""

from __future__ import annotations

import errno
import fcntl
import hmac
import ipaddress
import logging
import os
import secrets
import signal
import socket
import sys
from collections.abc import Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from continuity.core.config import FOLLOW_UP_BUDGET_BYTES, database_url, load_section, resolve_home
from continuity.core.errors import (
    AmbiguousSession,
    ConfigError,
    ContinuityError,
    DaemonConflict,
    FencedWrite,
    InputError,
    SessionNotFound,
    StoreError,
    validation_message,
)
from continuity.core.private import private_dir, write_private
from continuity.daemon.address import ID_FILE, URL_FILE, WORKSPACE_HEADER
from continuity.daemon.browser import (
    BROWSER_COOKIE,
    BROWSER_PATHS,
    add_browser_routes,
    cookie_value,
    page_headers,
)
from continuity.daemon.errors import error_body
from continuity.daemon.search_api import add_search_route

log = logging.getLogger("continuity.daemon")
#: The daemon's one log format (issue 20): ours and uvicorn's lines alike (uvicorn is given no
#: logging config of its own, so its records reach the root handler set up here).
LOG_FORMAT = "%(asctime)s %(levelname)s %(message)s"


def configure_logging(level: int = logging.INFO) -> None:
    """Log to stderr in ``LOG_FORMAT`` (a no-op when the process has set up logging)."""
    logging.basicConfig(level=level, format=LOG_FORMAT)
    logging.getLogger("alembic").setLevel(logging.WARNING)


#: The daemon's default port (unassigned by IANA; "7438" spells nothing in particular).
DEFAULT_PORT = 7438
MIN_TOKEN_CHARS = 16
LOCK_FILE = "daemon.lock"
#: ``[daemon] stop_seconds`` range (issue 15). A model summarizer will not start with less
#: than ``SUMMARY_START_SECONDS`` left (``openai``/``anthropic`` ``min_seconds``), so the
#: deadline must leave that plus a request's time: below 10 s the policy would skip every
#: over-budget session as ``no_time_left``, writing nothing.
SUMMARY_START_SECONDS = 5.0
MIN_STOP_SECONDS, MAX_STOP_SECONDS = 10.0, 3600.0
#: The daemon's GIL switch interval (seconds; Python's default is 0.005). A hook's answer
#: passes between the event loop and a pool thread several times, and each time it waits for
#: the GIL while the background threads (imports, the settled-turn policy, embedding) compute:
#: up to one interval per hand-off. At 0.5 ms a hand-off waits a tenth as long, at the cost
#: of more switches (issue 45 item 10, bench/load.py phase 2, 10 min at 100 events/s with a
#: 10,000-file burst: p99 74.8 ms at the default, 19.4 ms at 0.5 ms).
SWITCH_INTERVAL_SECONDS = 0.0005


class DaemonSettings(BaseModel):
    """The ``[daemon]`` section of ``config.toml`` (env ``CONTINUITY_DAEMON__<FIELD>``).

    ``stop_seconds``: how long the continuation policy may take after a settled turn (the
    summary's deadline), ``MIN_STOP_SECONDS``–``MAX_STOP_SECONDS`` (issue 15: a shorter
    deadline than a summary needs silently disabled compaction, so it is refused here);
    ``budget_bytes``: the older name of ``[continuity] follow_up_budget_bytes`` (seed 002:
    240,000), which it overrides when set; ``max_body_bytes``: the largest request body accepted
    (413 beyond); ``threads``:
    requests served at once (the thread pool of the sync endpoints); ``consolidate_on_end``:
    run the consolidation pass (lineage artifacts, MEMORY.md) in the background when a
    session ends (``continuity.daemon.hooks.consolidation``); ``allowed_hosts``: names (or
    addresses) besides loopback ones that a request's ``Host`` may give, e.g. the machine's
    name when the daemon listens beyond loopback (issue 16: any other ``Host`` is 421);
    ``body_seconds``: how long a request's whole body may take to arrive (408 beyond: a client
    sending one byte at a time holds nothing for long); ``max_connections``: connections
    served at once (uvicorn's ``limit_concurrency``; 503 beyond), so idle sockets cannot use
    up the process's file handles."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field(default="127.0.0.1", min_length=1, max_length=255)
    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)
    token: str | None = Field(default=None, repr=False)
    stop_seconds: float = 120.0
    budget_bytes: int = Field(default=FOLLOW_UP_BUDGET_BYTES, ge=1000, le=100_000_000)
    max_body_bytes: int = Field(default=16 * 1024 * 1024, ge=64 * 1024, le=1024 * 1024 * 1024)
    body_seconds: float = Field(default=30.0, ge=1.0, le=3600.0)
    max_connections: int = Field(default=512, ge=16, le=100_000)
    threads: int = Field(default=64, ge=1, le=1024)
    log_level: str = Field(default="info", pattern=r"^(critical|error|warning|info|debug)$")
    consolidate_on_end: bool = True
    allowed_hosts: list[
        Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9.:\[\]-]+$")]
    ] = []

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _host_list(cls, value: Any) -> Any:
        """``CONTINUITY_DAEMON__ALLOWED_HOSTS=a.example,b.example`` (an env value is a
        string): split on commas."""
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("stop_seconds")
    @classmethod
    def _stop_seconds_range(cls, value: float) -> float:
        if not MIN_STOP_SECONDS <= value <= MAX_STOP_SECONDS:
            raise ValueError(
                f"must be {MIN_STOP_SECONDS:g}–{MAX_STOP_SECONDS:g} seconds: a model summary "
                f"needs {SUMMARY_START_SECONDS:g} s left to start and time to answer; a shorter "
                "deadline would never compact"
            )
        return value


def own_hosts(settings: DaemonSettings) -> frozenset[str]:
    """The ``Host`` names this daemon answers besides loopback ones (``host_allowed``): the
    address it is bound to (unless a wildcard such as ``0.0.0.0``) and ``allowed_hosts``."""
    names = {
        settings.host.strip("[]").lower(),
        *(h.strip("[]").lower() for h in settings.allowed_hosts),
    }
    return frozenset(names - {"0.0.0.0", "::", ""})


def check_port(port: int) -> int:
    """``port`` when it is 0..65535 (0: pick a free one); else ``InputError`` naming
    ``--port``."""
    if not 0 <= port <= 65535:
        raise InputError(f"--port: must be 0..65535, 0 picks a free port (got {port})")
    return port


def load_settings(home: str | os.PathLike[str] | None = None) -> DaemonSettings:
    """``[daemon]`` of the workspace. Raises ``ConfigError`` naming the field (a bad token is
    named, never shown)."""
    settings = load_section("daemon", DaemonSettings, home)
    token = settings.token
    if token is not None and (len(token.strip()) < MIN_TOKEN_CHARS or token != token.strip()):
        raise ConfigError(
            f"[daemon] token: must be at least {MIN_TOKEN_CHARS} characters "
            "without surrounding spaces (value not shown)"
        )
    return settings


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and addresses in 127.0.0.0/8 or ``::1``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_token_rule(host: str, token: str | None) -> None:
    """Raise ``ConfigError`` when ``host`` is not loopback and no token is configured."""
    if not is_loopback(host) and not token:
        raise ConfigError(
            f"[daemon] token: required to bind {host} (any address other than "
            "loopback); set it in config.toml or CONTINUITY_DAEMON__TOKEN"
        )


# ---------------------------------------------------------------------------- the app


_STATUS = (
    (SessionNotFound, 404),
    (AmbiguousSession, 409),
    (FencedWrite, 409),
    (InputError, 400),
    (ConfigError, 400),
    (StoreError, 503),
)


#: The ``error`` code of a ``ContinuityError`` (issue 20: one snake_case code per kind, as
#: the guard's ``unauthorized`` or ``too_large``, never a Python class name).

_CODES = (
    (SessionNotFound, "unknown_session"),
    (AmbiguousSession, "ambiguous_session"),
    (FencedWrite, "fenced_write"),
    (InputError, "invalid_request"),
    (ConfigError, "invalid_config"),
    (StoreError, "store_unavailable"),
)


def _status(exc: ContinuityError) -> int:
    return next((code for cls, code in _STATUS if isinstance(exc, cls)), 500)


def _problems(errors: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    out = []
    for e in errors:
        if e.get("type") == "json_invalid":  # a body that is not JSON: loc is (body, offset)
            reason = (e.get("ctx") or {}).get("error") or e.get("msg", "invalid")
            out.append(
                {
                    "field": "body",
                    "message": f"not JSON ({reason}, at character {e.get('loc', ('', '?'))[-1]})",
                }
            )
            continue
        out.append(
            {
                "field": ".".join(str(p) for p in e.get("loc", ())) or "body",
                "message": validation_message(e),
            }
        )
    return out


def _invalid(errors: Sequence[Mapping[str, Any]]) -> Any:
    from fastapi.responses import JSONResponse

    fields = _problems(errors)
    detail = "; ".join(f"{f['field']}: {f['message']}" for f in fields)
    return JSONResponse(error_body("invalid_request", detail, fields), 422)


#: Methods whose body is read: a write, which must be ``application/json`` (issue 16).
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: ``Sec-Fetch-Site`` values a browser sends for a request the daemon's own page (or the user,
#: typing the address) made; any other (``cross-site``, ``same-site``) is a foreign page's.
OWN_FETCH_SITES = frozenset({b"same-origin", b"none"})


class _Guard:
    """ASGI middleware in front of every route: who may talk to the daemon, and how much.

    In this order (issue 16: a web page must neither read nor write anything):

    1. ``Host`` (DNS rebinding): a loopback name or address (``localhost``, 127.0.0.0/8,
       ``::1``), the address the daemon is bound to, or a name of ``[daemon] allowed_hosts``;
       else 421.
    2. ``Origin`` and ``Sec-Fetch-Site``: a request a browser sends from a page of another
       origin is refused (403): an ``Origin`` other than ``http://<Host>`` (``null`` included),
       a ``Sec-Fetch-Site`` other than ``same-origin`` or ``none``.
    3. The bearer token (when configured; ``serve`` always configures one): every path but
       ``/health`` needs exactly one ``Authorization: Bearer <token>``, the token compared
       byte for byte in constant time (no trimming: a trailing space, a doubled token or a
       second header is 401); the API's description too (``/openapi.json``). ``/health`` answers
       ``{"status": "ok"}`` alone without it (a
       liveness probe), its figures (pid, queues, the last replay) only with it. The session
       browser's pages (``daemon.browser.BROWSER_PATHS``, GET) also take the browser cookie,
       which ``?login=<one-time code>`` or ``?token=<token>`` set (``_browser``; issue 19).
    4. A client that names its workspace's daemon (``X-Continuity-Workspace``, the id of
       ``<home>/daemon.id``: ``continuity.daemon.address``) gets 421 from any other daemon
       (issue 12: a hook only ever delivers to the daemon of its own workspace).
       A write (``WRITE_METHODS``) takes ``Content-Type: application/json`` only, 415
       otherwise: a browser sends ``text/plain`` or a form across origins without asking first
       (no CORS preflight), never ``application/json``. Only a write some route takes: a
       method the path does not take is 405 with ``Allow``, an unknown path 404, whatever
       the ``Content-Type`` (issue 45 item 8: ``DELETE`` on a POST route was 415); no route
       runs for either, so nothing a page sends gets further.
    5. The body: at most ``max_body`` bytes as actually received, whatever the framing
       (``Content-Length`` or ``Transfer-Encoding: chunked``), 413 beyond, and all of it
       within ``body_seconds`` of the headers, 408 beyond (a slow-body client). It is read
       here before any route runs, so no route ever sees more."""

    def __init__(
        self,
        app: Any,
        token: str | None,
        max_body: int,
        hosts: frozenset[str] = frozenset(),
        workspace_id: str | None = None,
        body_seconds: float = 30.0,
        login_codes: set[str] | None = None,
        router: Any = None,
    ) -> None:
        self.app, self.max_body, self.hosts = app, max_body, hosts
        self.router = router
        self.token = token
        self.login_codes = login_codes if login_codes is not None else set()
        self.body_seconds = body_seconds
        self.expected = token.encode() if token else None
        self.workspace = workspace_id.encode() if workspace_id else None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        headers: dict[bytes, list[bytes]] = {}
        for name, value in scope.get("headers") or ():
            headers.setdefault(name.lower(), []).append(value)
        refusal = self._refusal(scope, headers)
        if scope["type"] == "websocket":  # the same rule (a browser UI's socket included)
            if refusal is not None and refusal[0] != 200:
                return await send({"type": "websocket.close", "code": 1008})
            return await self.app(scope, receive, send)
        if refusal is not None:
            return await _send_json(send, *refusal)
        length = headers.get(b"content-length", [b""])[0]
        if length.isdigit() and int(length) > self.max_body:
            return await _send_json(send, *self._too_large())
        import asyncio

        messages: list[dict[str, Any]] = []
        size = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_seconds
        while True:  # the body as it arrives, counted: chunked framing has no length to trust
            try:
                message = await asyncio.wait_for(receive(), max(deadline - loop.time(), 0))
            except TimeoutError:
                return await _send_json(
                    send,
                    408,
                    {
                        "error": "timeout",
                        "detail": f"body: not received within "
                        f"{self.body_seconds:g} s ([daemon] body_seconds)",
                    },
                )
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_body:
                return await _send_json(send, *self._too_large())
            if not message.get("more_body", False):
                break

        async def replay() -> Any:
            return messages.pop(0) if messages else await receive()

        return await self.app(scope, replay, send)

    @staticmethod
    def _cookie_ok(headers: dict[bytes, list[bytes]], want: str) -> bool:
        """True when a ``Cookie`` header carries the browser cookie with the value ``want``."""
        from http.cookies import CookieError, SimpleCookie

        for raw in headers.get(b"cookie", []):
            try:
                jar = SimpleCookie(raw.decode("latin-1"))
            except CookieError:
                continue
            got = jar.get(BROWSER_COOKIE)
            if got is not None and hmac.compare_digest(got.value.encode(), want.encode()):
                return True
        return False

    def _known_path(self, scope: Any) -> bool:
        """True when the path is the API's (``/api/...``, ``/openapi.json``) or some route's,
        whatever the method: the cookie never opens those, so they stay a JSON 401."""
        path = scope["path"]
        if path == "/api" or path.startswith("/api/") or path == "/openapi.json":
            return True
        if self.router is None:
            return False
        from starlette.routing import Match

        return any(route.matches(scope)[0] != Match.NONE for route in self.router.routes)

    def _routed(self, scope: Any) -> bool:
        """True when a route takes this path with this method (or when no router was given):
        only then is the Content-Type checked, the app answering 404 or 405 (with
        ``Allow``) otherwise."""
        if self.router is None:
            return True
        from starlette.routing import Match

        return any(route.matches(scope)[0] == Match.FULL for route in self.router.routes)

    def _too_large(self) -> tuple[int, dict[str, Any]]:
        return 413, {
            "error": "too_large",
            "detail": f"body: over {self.max_body} bytes ([daemon] max_body_bytes)",
        }

    def _refusal(self, scope: Any, headers: dict[bytes, list[bytes]]) -> tuple | None:
        """``(status, body[, extra headers])`` for a request refused by steps 1..4."""
        host = headers.get(b"host", [b""])
        if len(host) != 1 or not host_allowed(host[0], self.hosts):
            return 421, {
                "error": "misdirected",
                "detail": "Host: not an address of this "
                "daemon (a loopback address, or a name of [daemon] allowed_hosts)",
            }
        origin = headers.get(b"origin")
        if origin is not None and (
            len(origin) != 1 or origin[0].lower() != b"http://" + host[0].lower()
        ):
            return 403, {
                "error": "forbidden",
                "detail": "Origin: requests from another origin (a web page) are refused",
            }
        site = headers.get(b"sec-fetch-site")
        if site is not None and not (len(site) == 1 and site[0].lower() in OWN_FETCH_SITES):
            return 403, {
                "error": "forbidden",
                "detail": "Sec-Fetch-Site: requests from another site (a web page) are refused",
            }
        if self.expected is not None and not _bearer_ok(
            headers.get(b"authorization", []), self.expected
        ):
            if scope["path"] == "/health":
                return 200, {"status": "ok"}
            browser = self._browser(scope, headers)
            if browser is not True:
                return browser
        named = headers.get(WORKSPACE_HEADER.lower().encode())
        if named is not None and self.workspace is not None and named != [self.workspace]:
            return 421, {
                "error": "wrong_workspace",
                "detail": f"{WORKSPACE_HEADER}: this daemon serves another workspace",
            }
        if scope.get("method") in WRITE_METHODS and self._routed(scope):
            kind = headers.get(b"content-type", [b""])
            if len(kind) != 1 or kind[0].split(b";")[0].strip().lower() != b"application/json":
                return 415, {
                    "error": "unsupported_media_type",
                    "detail": "Content-Type: must be application/json",
                }
        return None

    def _browser(self, scope: Any, headers: dict[bytes, list[bytes]]) -> Any:
        """Step 3 for a request without the bearer token: True when it is a page of the
        session browser (``daemon.browser``: GET of a ``BROWSER_PATHS`` path) carrying the
        browser cookie; a 303 that sets the cookie when it carries ``?login=`` (a one-time
        code, then void) or ``?token=`` (the daemon's token); else the refusal: 401, as HTML
        for a page (saying how to sign in), as JSON for the API."""
        unauthorized = (
            401,
            {
                "error": "unauthorized",
                "detail": "Authorization: Bearer <the daemon's token> required",
            },
            [(b"www-authenticate", b"Bearer")],
        )
        if scope.get("method") not in ("GET", "HEAD") or self.token is None:
            return unauthorized
        want = cookie_value(self.token)
        if scope["path"] not in BROWSER_PATHS:
            if self._cookie_ok(headers, want) and not self._known_path(scope):
                # issue 44: a page that does not exist, asked by a signed-in browser, is the
                # browser's 404 page, not the API's JSON 401 (the API's paths stay 401)
                from continuity.daemon.browser import not_found_page

                return 404, not_found_page(scope["path"]), []
            return unauthorized
        if self._cookie_ok(headers, want):
            return True
        from urllib.parse import parse_qsl, urlencode

        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        codes = [v for k, v in query if k == "login"]
        tokens = [v for k, v in query if k == "token"]
        ok = (len(codes) == 1 and codes[0] in self.login_codes) or (
            len(tokens) == 1 and hmac.compare_digest(tokens[0].encode(), self.token.encode())
        )
        if not ok:
            from continuity.browse.render import message_page

            return (
                401,
                message_page(
                    "Sign in",
                    "Open the link `continuity serve` printed when it started, or add "
                    "?token=<the contents of daemon.token in the workspace> to this address.",
                ),
                [(b"www-authenticate", b"Bearer")],
            )
        if codes:
            self.login_codes.discard(codes[0])  # one-time
        rest = urlencode([(k, v) for k, v in query if k not in ("login", "token")])
        location = scope["path"] + (f"?{rest}" if rest else "")
        cookie = f"{BROWSER_COOKIE}={want}; HttpOnly; SameSite=Strict; Path=/"
        return (
            303,
            {"see": location},
            [
                (b"location", location.encode("latin-1")),
                (b"set-cookie", cookie.encode()),
                (b"cache-control", b"no-store"),
                (b"referrer-policy", b"no-referrer"),
            ],
        )


def allowed_methods(router: Any, scope: Any) -> str:
    """The ``Allow`` header of a 405 for the request ``scope``: every method of every route
    whose path matches, sorted and comma-separated (``"GET, POST"``). Starlette answered with
    the methods of the first such route only (issue 45, fresh-user review: ``DELETE
    /api/checkpoints`` said ``Allow: GET`` though the path also takes POST); RFC 9110
    section 15.5.6 wants them all."""
    from starlette.routing import Match

    methods: set[str] = set()
    for route in router.routes:
        if getattr(route, "methods", None) and route.matches(scope)[0] != Match.NONE:
            methods |= set(route.methods)
    return ", ".join(sorted(methods))


def host_allowed(value: bytes, hosts: frozenset[str] = frozenset()) -> bool:
    """True when a ``Host`` header value names this daemon: ``localhost``, a loopback address
    (127.0.0.0/8, ``[::1]``), or one of ``hosts`` (lower-case names or addresses: the bound
    address and ``[daemon] allowed_hosts``), with or without a port."""
    try:
        text = value.decode("ascii").strip().lower()
    except UnicodeDecodeError:
        return False
    if text.startswith("["):
        name, _, rest = text[1:].partition("]")
        if rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return False
    else:
        name, colon, port = text.partition(":")
        if colon and not port.isdigit():
            return False
    return bool(name) and (is_loopback(name) or name in hosts)


def _bearer_ok(values: list[bytes], token: bytes) -> bool:
    """True when ``values`` (the ``Authorization`` headers) is exactly one ``Bearer <token>``:
    the scheme in any case (RFC 7235 §2.1), one space, then the token compared byte for byte in
    constant time (issue 16: nothing trimmed, a trailing space or a doubled token refused)."""
    if len(values) != 1:
        return False
    scheme, space, credentials = values[0].partition(b" ")
    return scheme.lower() == b"bearer" and space == b" " and hmac.compare_digest(credentials, token)


async def _send_json(
    send: Any, status: int, body: dict[str, Any] | str, extra: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    """Send ``body`` as JSON, or as an HTML page when it is a ``str`` (a browser page's
    refusal, ``_Guard._browser``)."""
    import json

    if isinstance(body, str):
        data, kind = body.encode("utf-8"), b"text/html; charset=utf-8"
        extra = [*extra, *((k.lower().encode(), v.encode()) for k, v in page_headers().items())]
    else:
        if status >= 400 and "error" in body:
            body = error_body(body["error"], body.get("detail", ""), body.get("fields"))
        data, kind = json.dumps(body).encode(), b"application/json"
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", kind),
                (b"content-length", str(len(data)).encode()),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


def create_app(
    live: Any,
    settings: DaemonSettings | None = None,
    *,
    on_ready: Any = None,
    on_stop: Any = None,
    workspace_id: str | None = None,
    login_codes: set[str] | None = None,
) -> Any:
    """The FastAPI app over ``live`` (a ``LiveCapture``); its lifespan starts ``live`` (spool
    replay first), then calls ``on_ready()``; at shutdown ``live.close()``, then
    ``on_stop(error)`` (``error``: the flush failure, or None). ``workspace_id``: the id of
    ``<home>/daemon.id``; a request naming another in ``X-Continuity-Workspace`` is 421.
    ``login_codes``: one-time codes that sign a browser in to the session browser
    (``daemon.browser``; each void once used)."""
    from fastapi import FastAPI
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException as StarletteHTTPException

    from continuity.daemon.hooks.routes import add_routes

    settings = settings or DaemonSettings()

    @asynccontextmanager
    async def lifespan(_app: Any):
        import anyio.to_thread

        # Request threads mostly wait (for a transcript fsync, shared by group commit): more
        # of them than anyio's default 40 let more turns share each fsync.
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.threads
        report = live.start()
        if report.handled or report.rejected:
            log.info("spool replay: %s", report.to_dict())
        if on_ready:
            on_ready()
        try:
            yield
        finally:
            error = None
            try:
                live.close()
            except ContinuityError as exc:
                error = exc
                log.error("shutdown: %s", exc)
            if on_stop:
                on_stop(error)

    # No /docs or /redoc (issue 45 item 8): FastAPI's pages load Swagger UI and ReDoc from a
    # public CDN, and no page of ours loads anything from the network. /openapi.json stays.
    app = FastAPI(
        title="continuity daemon",
        version=_version(),
        lifespan=lifespan,
        description="Live capture for coding agents: hooks, checkpoints, memory.",
        docs_url=None,
        redoc_url=None,
    )

    @app.exception_handler(ContinuityError)
    async def _continuity_error(request: Any, exc: ContinuityError) -> Any:
        from fastapi.responses import JSONResponse

        if _status(exc) >= 500:
            log.warning("%s %s failed: %s", request.method, request.url.path, exc)
        code = next((c for cls, c in _CODES if isinstance(exc, cls)), "internal_error")
        return JSONResponse(error_body(code, str(exc)), _status(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Any, exc: StarletteHTTPException) -> Any:
        from http import HTTPStatus

        from fastapi.responses import JSONResponse

        headers = getattr(exc, "headers", None)
        if exc.status_code == 405:  # Starlette names only the first route's methods
            headers = {**(headers or {}), "Allow": allowed_methods(app.router, request.scope)}
        fields: list[dict[str, str]] = []
        if exc.status_code == 400:  # FastAPI could not parse the body (nested too deep)
            code, fields = "invalid_request", [{"field": "body", "message": str(exc.detail)}]
        else:
            try:
                code = HTTPStatus(exc.status_code).phrase.lower().replace(" ", "_")
            except ValueError:
                code = "http_error"
        return JSONResponse(
            error_body(code, str(exc.detail), fields), exc.status_code, headers=headers
        )

    @app.exception_handler(RequestValidationError)
    async def _request_invalid(request: Any, exc: RequestValidationError) -> Any:
        if request.url.path in BROWSER_PATHS:  # issue 44: a page's bad query is a page
            from continuity.daemon.browser import invalid_page

            return invalid_page(list(exc.errors()))
        return _invalid(list(exc.errors()))

    @app.exception_handler(ValidationError)
    async def _model_invalid(_request: Any, exc: ValidationError) -> Any:
        return _invalid(list(exc.errors()))

    add_routes(app, live)
    _checkpoint_route(app, live)
    add_browser_routes(app, live)
    add_search_route(app, live)
    app.add_middleware(
        _Guard,
        token=settings.token,
        max_body=settings.max_body_bytes,
        hosts=own_hosts(settings),
        workspace_id=workspace_id,
        body_seconds=settings.body_seconds,
        login_codes=login_codes,
        router=app.router,
    )
    return app


def _checkpoint_route(app: Any, live: Any) -> None:
    """Replace ``POST /api/checkpoints`` of ``hooks.routes`` with one answering the stored
    row: 201 with its ``id``, or 202 with ``"queued": true`` (and ``"id": null``) when the
    write failed and the row waits in the checkpoint queue for the retry. (The recorder
    returns the row it built, without the store's id: this looks the row up.)"""
    from fastapi.responses import JSONResponse
    from fastapi.routing import APIRoute

    from continuity.checkpoints.recovery import checkpoint_dict
    from continuity.daemon.hooks.models import CheckpointBody

    app.router.routes[:] = [
        r
        for r in app.router.routes
        if not (
            isinstance(r, APIRoute) and r.path == "/api/checkpoints" and "POST" in (r.methods or ())
        )
    ]

    def write_checkpoint(body: Any) -> Any:
        """An ``agent`` or ``explicit`` checkpoint now, with the caller's reason: 201 with the
        stored row's ``id``, or 202 ``"queued": true`` when it waits for a retried write."""
        cp = live.checkpoint(body)
        stored = cp if cp.checkpoint_id is not None else _stored(live.store, cp)
        if stored is None:
            return JSONResponse({**checkpoint_dict(cp), "queued": True}, 202)
        return JSONResponse({**checkpoint_dict(stored), "queued": False}, 201)

    write_checkpoint.__annotations__ = {"body": CheckpointBody, "return": Any}
    app.post(
        "/api/checkpoints",
        tags=["checkpoints"],
        status_code=201,
        responses={202: {"description": 'Accepted: queued for a retried write ("queued": true)'}},
    )(write_checkpoint)


def _stored(store: Any, cp: Any) -> Any:
    """The stored row of ``cp`` (same trigger, digest and prompt count; the newest such),
    or None when it is not in the store."""
    for row in reversed(store.checkpoints(cp.session_key, limit=50)):
        if (row.trigger, row.digest, row.prompt_count) == (cp.trigger, cp.digest, cp.prompt_count):
            return row
    return None


def _version() -> str:
    from continuity.core.version import package_version

    return package_version()


# ---------------------------------------------------------------------------- serving


def build_live(home: Path, settings: DaemonSettings) -> Any:
    """A ``LiveCapture`` over the workspace's store and settings (the store stays open)."""
    from continuity.checkpoints import load_config
    from continuity.daemon.hooks.live import LiveCapture
    from continuity.store import open_store_raw
    from continuity.transcripts.session_transcripts import settings as transcript_settings

    config = load_config(home)
    idle = timedelta(minutes=transcript_settings(home).idle_limit_minutes)
    store = open_store_raw(os.environ.get("CONTINUITY_DATABASE_URL") or database_url(home))
    # issue 14: the budget is ``[continuity] follow_up_budget_bytes``; ``[daemon] budget_bytes``
    # (its older name) still wins when a workspace sets it
    budget = (
        settings.budget_bytes
        if "budget_bytes" in settings.model_fields_set
        else config.follow_up_budget_bytes
    )
    return LiveCapture(
        store,
        home=home,
        config=config,
        budget_bytes=budget,
        stop_seconds=settings.stop_seconds,
        idle_limit=idle,
        consolidate=settings.consolidate_on_end,
        max_body_bytes=settings.max_body_bytes,
    )


def _lock(home: Path) -> int:
    """The descriptor of ``<home>/daemon.lock``, locked (one daemon per workspace). Raises
    ``DaemonConflict`` when another daemon holds it and ``StoreError`` (exit 4, one line) when
    the workspace cannot be made or written (a read-only folder, a file on its path; the
    fresh-user review got a ``PermissionError`` traceback)."""
    try:
        private_dir(home)  # issue 16: the workspace is owner-only
        fd = os.open(home / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        where = exc.filename or home / LOCK_FILE
        raise StoreError(
            f"cannot write in the workspace folder {home} ({where}): {exc.strerror or exc}"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        other = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        os.close(fd)
        raise DaemonConflict(
            f"another continuity daemon (pid {other or '?'}) serves {home}; stop it first"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say so;
    # without it every keep-alive answer waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except (OverflowError, socket.gaierror) as exc:
        sock.close()
        raise InputError(f"--host/--port: cannot listen on {host}:{port}: {exc}") from None
    except OSError as exc:
        sock.close()
        cls = DaemonConflict if exc.errno in (errno.EADDRINUSE, errno.EACCES) else InputError
        raise cls(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} (set [daemon] port or --port)"
        ) from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def workspace_token(home: Path) -> str:
    """The daemon's token when none is configured: ``<home>/daemon.token``, made at the first
    start (43 URL-safe characters, ``secrets.token_urlsafe(32)``), written whole (a temporary
    file, fsync'd, then renamed) and owner-only (0600: a wider mode found is narrowed). The
    hook command and the MCP server read it (``continuity.daemon.address.daemon_token``), so
    nothing changes for the user. Raises ``ConfigError`` for a file that holds no valid token
    (naming the file, never the value)."""
    from continuity.daemon.address import TOKEN_FILE, read_token_file

    path = home / TOKEN_FILE
    token = read_token_file(str(home))
    if token is None and not path.exists():
        token = secrets.token_urlsafe(32)
        tmp = path.with_name(f".{TOKEN_FILE}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)  # whatever the umask
            os.write(fd, token.encode("ascii") + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        return token
    if (
        token is None
        or len(token) < MIN_TOKEN_CHARS
        or not token.isprintable()
        or token != token.strip()
    ):
        raise ConfigError(
            f"{path}: holds no valid token (at least {MIN_TOKEN_CHARS} printable "
            "characters on one line; value not shown): delete the file and the "
            "daemon makes a new one"
        )
    if path.stat().st_mode & 0o077:
        os.chmod(path, 0o600)
        log.warning("%s was readable by others: made owner-only (0600)", path)
    return token


def serve(
    home: str | os.PathLike[str] | None = None, *, host: str | None = None, port: int | None = None
) -> None:
    """Run the daemon until SIGTERM/SIGINT (module docstring). Raises ``ConfigError`` (bad
    ``[daemon]`` settings, the token rule), ``InputError`` (a port outside 0..65535),
    ``DaemonConflict`` (address in use, another daemon on this workspace) or
    ``ContinuityError`` (queued checkpoints not written at shutdown)."""
    import uvicorn

    from continuity.archive.archiver import load_settings as archive_settings
    from continuity.daemon.archiving import ArchiveChild
    from continuity.daemon.teamsync import TeamSyncChild

    where = resolve_home(home)
    settings = load_settings(where)
    # issue 18: the daemon archives the harnesses' session folders unless told not to
    archive_on = archive_settings(where).enabled
    host = host or settings.host
    port = settings.port if port is None else check_port(port)
    check_token_rule(host, settings.token)
    lock_fd = _lock(where)
    try:
        token = settings.token or workspace_token(where)
        settings = settings.model_copy(update={"host": host, "token": token})
    except BaseException:
        os.close(lock_fd)
        raise
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    url = f"http://{'[' + host + ']' if ':' in host else host}:{bound}"
    url_file, id_file = where / URL_FILE, where / ID_FILE
    workspace_id = os.urandom(16).hex()
    archiving = ArchiveChild(where) if archive_on else None
    live = build_live(where, settings)
    # issue 41: while a team store is joined, its sync runs beside capture, never in its way
    team_sync = TeamSyncChild(where)
    live.on_change = team_sync.nudge
    failure: list[BaseException] = []

    login_codes = {secrets.token_urlsafe(24)}  # the browser's one-time sign-in (issue 19)
    browser_url = f"{url}/?login={next(iter(login_codes))}"

    def ready() -> None:
        for path, text in ((id_file, workspace_id), (url_file, url)):  # the id first
            write_private(path, (text + "\n").encode())
        log.info("continuity daemon listening on %s (workspace %s)", url, where)
        log.info(
            "session browser: %s (a one-time sign-in link; later, add ?token=<contents of %s>)",
            browser_url,
            where / "daemon.token",
        )
        if archiving is not None:
            archiving.start()
        else:
            log.info("archive: off ([archive] enabled = false)")
        team_sync.start()

    def stopped(error: BaseException | None) -> None:
        if archiving is not None:
            archiving.stop()
        team_sync.stop()
        url_file.unlink(missing_ok=True)
        id_file.unlink(missing_ok=True)
        live.store.close()
        if error is not None:
            failure.append(error)

    app = create_app(
        live,
        settings,
        on_ready=ready,
        on_stop=stopped,
        workspace_id=workspace_id,
        login_codes=login_codes,
    )
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level=settings.log_level,
            log_config=None,
            access_log=False,
            lifespan="on",
            limit_concurrency=settings.max_connections,
            timeout_graceful_shutdown=30,
        )
    )

    def stop_signal(_signum: int, _frame: Any) -> None:
        """SIGTERM/SIGINT outside uvicorn's own handlers: before they are bound (the event
        loop's start) it is a stop uvicorn acts on once started (it was ignored: the daemon
        ran on); after its graceful shutdown uvicorn raises the signal again, and the flag
        is already set."""
        server.should_exit = True

    previous = {s: signal.signal(s, stop_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
    try:
        server.run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
        os.close(lock_fd)
    if failure:
        raise failure[0]
    if not server.started:
        raise ContinuityError("the daemon did not start (see the log above)")


def main(argv: list[str] | None = None) -> None:
    """``python -m continuity.daemon.server [--home DIR] [--host H] [--port N]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="continuity serve")
    parser.add_argument("--home")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    args = parser.parse_args(argv)
    configure_logging()
    try:
        serve(args.home, host=args.host, port=args.port)
    except ContinuityError as exc:
        print(f"continuity: {exc}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None


if __name__ == "__main__":  # pragma: no cover
    main()
