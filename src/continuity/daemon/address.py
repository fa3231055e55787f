"""Where the running daemon listens and the bearer token it wants, as its clients find them.

The daemon writes ``<home>/daemon.url`` once it is ready; the hook command
(``continuity.cli.hookcmd``) and the MCP server (``continuity.daemon.mcp_server``) read it here.
The address is ``$CONTINUITY_DAEMON_URL``, else that file, else ``DEFAULT_URL``; the token
``$CONTINUITY_DAEMON__TOKEN``, else ``[daemon] token`` of ``<home>/config.toml`` (parsed only
when the file mentions a token). Standard library only, and nothing imported at load time but
``os``: the hook's fast path imports this module.
"""

from __future__ import annotations

import os

DEFAULT_URL = "http://127.0.0.1:7438"


def daemon_address(home: str) -> tuple[str, int]:
    """``(host, port)`` of the daemon (this module's docstring). Raises ``ValueError`` for a URL that
    is not ``http://host:port``."""
    url = os.environ.get("CONTINUITY_DAEMON_URL", "").strip()
    if not url:
        try:
            with open(os.path.join(home, "daemon.url"), "rb") as fh:
                url = fh.read(512).decode("ascii", "replace").strip()
        except OSError:
            url = DEFAULT_URL
    if not url.startswith("http://"):
        raise ValueError(f"daemon URL must start with http:// (got {url!r})")
    netloc = url[7:].split("/", 1)[0]
    if netloc.startswith("["):
        host, _, rest = netloc[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else "80"
    else:
        host, _, port = netloc.partition(":")
    return host, int(port or 80)


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
