"""Where the running daemon of a workspace listens, how it proves it is that workspace's, and the
bearer token it wants, as its clients find them.

The daemon writes ``<home>/daemon.id`` (a random id per start) and then ``<home>/daemon.url``
once it is ready, and removes both at shutdown; the hook command (``continuity.cli.hookcmd``) and
the MCP server (``continuity.daemon.mcp_server``) read them here. The address is
``$CONTINUITY_DAEMON_URL``, else ``daemon.url``; with neither the workspace has no daemon running
and its clients do not guess one (issue 12: the old fallback to ``127.0.0.1:7438`` delivered a
hook into whichever workspace's daemon listened there). A client that found the address in
``daemon.url`` sends the id of ``daemon.id`` as ``X-Continuity-Workspace``; a daemon with another
id (a stale ``daemon.url`` whose port another workspace's daemon took since) answers 421, and so
does one whose token the client does not hold (401): either way the event is not delivered
there. The token is ``$CONTINUITY_DAEMON__TOKEN``, else ``[daemon] token`` of
``<home>/config.toml`` (parsed only when the file mentions a token), else ``<home>/daemon.token``.
Standard library only, and nothing imported at load time but ``os``: the hook's fast path imports
this module.
"""

from __future__ import annotations

import os

URL_FILE, ID_FILE = "daemon.url", "daemon.id"
#: The request header carrying the workspace's daemon id (``ID_FILE``).
WORKSPACE_HEADER = "X-Continuity-Workspace"


def _first_line(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            text = fh.read(512).decode("ascii", "replace")
    except OSError:
        return None
    return text.split("\n", 1)[0].strip() or None


def daemon_address(home: str) -> tuple[str, int] | None:
    """``(host, port)`` of the workspace's daemon (this module's docstring), or None when no
    daemon of this workspace runs (no ``$CONTINUITY_DAEMON_URL``, no ``daemon.url``). Raises
    ``ValueError`` for a URL that is not ``http://host:port``."""
    url = os.environ.get("CONTINUITY_DAEMON_URL", "").strip() or _first_line(
        os.path.join(home, URL_FILE)
    )
    if not url:
        return None
    if not url.startswith("http://"):
        raise ValueError(f"daemon URL must start with http:// (got {url!r})")
    netloc = url[7:].split("/", 1)[0]
    if netloc.startswith("["):
        host, _, rest = netloc[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else "80"
    else:
        host, _, port = netloc.partition(":")
    return host, int(port or 80)


def daemon_id(home: str) -> str | None:
    """The id the workspace's running daemon wrote to ``daemon.id`` (to send as
    ``WORKSPACE_HEADER``), or None when the address comes from ``$CONTINUITY_DAEMON_URL`` (an
    address the user chose) or no id is written."""
    if os.environ.get("CONTINUITY_DAEMON_URL", "").strip():
        return None
    value = _first_line(os.path.join(home, ID_FILE))
    return value if value and value.isalnum() and len(value) <= 64 else None


#: The daemon's token when none is configured: made by the daemon at its first start, owner-only
#: (0600), one line (issue 16: a token even on loopback, so no web page or other workspace's
#: hook can drive the daemon).
TOKEN_FILE = "daemon.token"


def read_token_file(home: str) -> str | None:
    """The token kept in ``<home>/daemon.token`` (one line; its line end is not part of it),
    or None when the file is missing or unreadable."""
    try:
        with open(os.path.join(home, TOKEN_FILE), "rb") as fh:
            raw = fh.read(1024)
    except OSError:
        return None
    token = raw.decode("ascii", "replace").removesuffix("\n")
    return token or None


def daemon_token(home: str) -> str | None:
    """The bearer token to send: ``$CONTINUITY_DAEMON__TOKEN``, else ``[daemon] token`` of
    ``<home>/config.toml``, else ``<home>/daemon.token`` (the daemon's own, made at its first
    start); None when there is none. Taken as written: the daemon compares it exactly."""
    token = os.environ.get("CONTINUITY_DAEMON__TOKEN")
    if token:
        return token
    try:
        with open(os.path.join(home, "config.toml"), "rb") as fh:
            raw = fh.read()
    except OSError:
        raw = b""
    if b"token" in raw:
        import tomllib

        try:
            value = tomllib.loads(raw.decode("utf-8")).get("daemon", {}).get("token")
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
            value = None
        if isinstance(value, str) and value:
            return value
    return read_token_file(home)
