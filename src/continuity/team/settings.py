"""The ``[team]`` section of ``<home>/config.toml`` (issue 41 item 1): where the team store is
and what of this machine goes there.

``url`` is the team store's SQLAlchemy URL (``postgresql+psycopg://USER@HOST/DB``) without a
password: a URL holding one is refused (``check_team_url``), the password is read by libpq
from ``$PGPASSWORD`` or ``~/.pgpass`` and never written to config. Off loopback the URL must
ask for TLS (``sslmode=require``, ``verify-ca`` or ``verify-full``): capture would otherwise
send a team's sessions in clear. ``shared`` lists the project identities
(``team.identity``) shared with the team; every other project is private and nothing of it
leaves the machine. ``author`` (default: the OS user) and ``machine`` (default: the host
name) are written on every session pushed. ``name`` is the team inside the team store whose
members read the shared projects (default ``default``).

The daemon syncs on its own while a team store is joined (``auto_sync``, default true;
``continuity.daemon.teamsync``): ``sync_debounce_seconds`` (default 2) after new rows are
captured, and at least every ``sync_interval_seconds`` (default 30, so a teammate's index is
never more than a minute behind a session that ended); a team store that cannot be reached
is tried again with a backoff from ``RETRY_FIRST_SECONDS`` up to that interval.

``write_team`` rewrites the ``[team]`` table only: the rest of ``config.toml`` (other
sections, comments) stays byte for byte.
"""

from __future__ import annotations

import getpass
import ipaddress
import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from continuity.core.config import config_path, load_section
from continuity.core.errors import ConfigError
from continuity.core.private import write_private

SECTION = "team"
#: ``sslmode`` values that make libpq refuse a connection without TLS.
TLS_MODES = ("require", "verify-ca", "verify-full")
#: The first wait after a sync that failed (seconds); each failure doubles it, up to
#: ``sync_interval_seconds``.
RETRY_FIRST_SECONDS = 2.0
#: A team name: what ``members.team`` holds in the team store.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")


class TeamSettings(BaseModel):
    """``[team]``: ``url`` (None: not joined), ``name``, ``author``, ``machine``, ``shared``
    (project identities), ``auto_sync``, ``sync_debounce_seconds`` (0.1..600) and
    ``sync_interval_seconds`` (1..86,400), as the module docstring says."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = None
    name: str = Field(default="default", pattern=_NAME.pattern)
    author: str | None = None
    machine: str | None = None
    shared: list[str] = Field(default_factory=list)
    auto_sync: bool = True
    sync_debounce_seconds: float = Field(default=2.0, ge=0.1, le=600.0)
    sync_interval_seconds: float = Field(default=30.0, ge=1.0, le=86_400.0)

    def author_name(self) -> str:
        """``author``, else the OS user (``getpass.getuser``), else ``unknown``."""
        if self.author:
            return self.author
        try:
            return getpass.getuser()
        except (KeyError, OSError):  # no user name for the uid (a container)
            return "unknown"

    def machine_name(self) -> str:
        """``machine``, else the host name (``socket.gethostname``)."""
        return self.machine or socket.gethostname() or "unknown"


def team_settings(home: str | os.PathLike[str] | None = None) -> TeamSettings:
    """The ``[team]`` section with ``CONTINUITY_TEAM__*`` overrides (``load_section``).
    Raises ``ConfigError`` as ``load_section`` does, and for a stored ``url`` that
    ``check_team_url`` refuses (a hand-edited password)."""
    settings = load_section(SECTION, TeamSettings, home)
    if settings.url:
        check_team_url(settings.url, where=f"{config_path(home)} [team] url")
    return settings


def _is_loopback(host: str) -> bool:
    if not host or host.startswith(("/", "@")):
        return True  # no host (libpq's default socket), a Unix socket folder or abstract one
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _hosts(value: str) -> list[str]:
    """The hosts of a libpq ``host``/``hostaddr`` value: a comma list, each maybe with a
    ``:port`` (as SQLAlchemy's psycopg dialect writes ``?host=a:1,b:2``)."""
    found = []
    for item in value.split(","):
        item = item.strip()
        if item.startswith("["):  # [::1]:5432
            item = item[1 : item.find("]")] if "]" in item else item
        elif item.count(":") == 1:  # host:port (an IPv6 address has more than one colon)
            item = item.split(":")[0]
        found.append(item)
    return found


def connection_targets(url: str, env: Mapping[str, str] | None = None) -> list[str]:
    """Every place libpq may connect to for ``url`` (a PostgreSQL SQLAlchemy URL) with the
    environment ``env`` (default ``os.environ``): the URL's host (a comma list), ``?host=``
    and ``?hostaddr=`` (lists too), and ``$PGHOST``/``$PGHOSTADDR`` where the URL gives no
    host/hostaddr (libpq reads an environment variable for each parameter the connection
    string leaves out: ``libpq-envars``). An empty string is libpq's default Unix socket.
    A ``service`` (``?service=`` or ``$PGSERVICE`` without a host) is ``service:NAME``: its
    target is in a file this check does not read, so it counts as off this machine."""
    from sqlalchemy.engine import make_url

    env = os.environ if env is None else env
    parsed = make_url(url)
    query = {k: v if isinstance(v, str) else ",".join(v) for k, v in parsed.query.items()}
    host = ",".join(h for h in (parsed.host, query.get("host")) if h)
    hostaddr = query.get("hostaddr") or ""
    if not host:
        host = env.get("PGHOST", "")
    if not hostaddr:
        hostaddr = env.get("PGHOSTADDR", "")
    targets = _hosts(host)
    if hostaddr:
        targets += _hosts(hostaddr)
    service = query.get("service") or (env.get("PGSERVICE") if not host else None)
    if service:
        targets.append(f"service:{service}")
    return targets


def check_team_url(url: str, *, where: str = "URL", env: Mapping[str, str] | None = None) -> str:
    """``url`` checked as a team store URL and returned as given. Raises ``ConfigError``
    naming ``where`` for: not a PostgreSQL URL; a query key given twice (libpq would take one
    of them: ``?sslmode=disable&sslmode=require``); a password in it (user:password@ or
    ``?password=``: put it in ``$PGPASSWORD`` or ``~/.pgpass``, never in config); any
    connection target off loopback (``connection_targets``: host, hostaddr, their
    environment defaults in ``env``, default ``os.environ``) without
    ``sslmode=require``/``verify-ca``/``verify-full`` (issue 41 item 1: TLS required off
    loopback). Run at ``team join`` and again at each connection (``TeamStore``), so a
    changed ``$PGHOST`` cannot bypass it."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ConfigError(f"{where}: {url!r} is not a database URL ({exc})") from None
    if parsed.get_backend_name() != "postgresql":
        raise ConfigError(
            f"{where}: the team store is PostgreSQL: give postgresql+psycopg://USER@HOST/DB"
        )
    if parsed.password is not None or "password" in parsed.query:
        raise ConfigError(
            f"{where}: holds a password; a password is never stored in config: give the URL "
            "without it and put the password in the environment ($PGPASSWORD) or in ~/.pgpass "
            "(HOST:PORT:DB:USER:PASSWORD, mode 0600)"
        )
    repeated = sorted(k for k, v in parsed.query.items() if not isinstance(v, str))
    if repeated:
        raise ConfigError(f"{where}: ?{repeated[0]}= is given more than once; give each key once")
    remote = [t for t in connection_targets(url, env) if not _is_loopback(t)]
    mode = parsed.query.get("sslmode")
    if remote and mode not in TLS_MODES:
        safe = parsed.update_query_dict({"sslmode": "verify-full"}).render_as_string()
        from_env = remote[0] not in connection_targets(url, {})
        source = " (from $PGHOST/$PGHOSTADDR/$PGSERVICE)" if from_env else ""
        raise ConfigError(
            f"{where}: host {remote[0]}{source} is not this machine and the URL does not "
            f"require TLS (sslmode={mode or 'unset'}); sessions never cross a network in "
            f"clear: add sslmode=require (or verify-full, which also checks the server's "
            f"certificate): {safe}"
        )
    return url


def safe_url(url: str) -> str:
    """``url`` with any password masked (for messages and ``team status``)."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _toml_value(value: Any) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string: same escapes
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to config.toml")


_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def write_team(home: str | os.PathLike[str] | None, values: dict[str, Any]) -> Path:
    """Write ``values`` (``TeamSettings`` fields; None drops a key) as the ``[team]`` table of
    ``<home>/config.toml``, replacing the old table (its keys and comments) and keeping every
    other line as it was; the file is created owner-only (``core.private``). Returns the
    file's path. Raises ``ConfigError`` for a file that is not valid TOML afterwards (the old
    file is then left as it was)."""
    import tomllib

    path = config_path(home)
    old = path.read_text(encoding="utf-8") if path.is_file() else ""
    lines = old.splitlines(keepends=True)
    start = end = None
    for i, line in enumerate(lines):
        match = _TABLE.match(line)
        if match and start is None and match.group(1).strip() == SECTION:
            start = i
        elif match and start is not None and end is None:
            end = i
    body = [f"{k} = {_toml_value(v)}\n" for k, v in values.items() if v is not None]
    table = ["[team]\n", *body]
    if start is None:
        prefix = "".join(lines)
        if prefix and not prefix.endswith("\n"):
            prefix += "\n"
        new = prefix + ("\n" if prefix else "") + "".join(table)
    else:
        rest = lines[end:] if end is not None else []
        new = "".join(lines[:start]) + "".join(table) + ("\n" if rest else "") + "".join(rest)
    try:
        tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: would not be valid TOML after writing [team]: {exc}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, new.encode("utf-8"))
    return path


def team_values(settings: TeamSettings) -> dict[str, Any]:
    """The fields of ``settings`` worth writing back (defaults left out)."""
    return {
        "url": settings.url,
        "name": settings.name if settings.name != "default" else None,
        "author": settings.author,
        "machine": settings.machine,
        "shared": settings.shared or None,
        **{
            name: getattr(settings, name)
            for name in ("auto_sync", "sync_debounce_seconds", "sync_interval_seconds")
            if name in settings.model_fields_set
            and getattr(settings, name) != TeamSettings.model_fields[name].default
        },
    }


__all__ = [
    "RETRY_FIRST_SECONDS",
    "TLS_MODES",
    "TeamSettings",
    "check_team_url",
    "connection_targets",
    "safe_url",
    "team_settings",
    "team_values",
    "write_team",
]
