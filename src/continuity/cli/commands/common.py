"""What every CLI command shares: the consoles, the shared options, opening the store, resolving
a session by key prefix, and JSON output (plain stdout, never through Rich)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import orjson
import typer
from rich.console import Console

from continuity.core.config import FOLLOW_UP_BUDGET_BYTES, database_url
from continuity.core.errors import InputError
from continuity.core.text import json_bytes

err = Console(stderr=True, soft_wrap=True, highlight=False)
out = Console(highlight=False, soft_wrap=True)

def parse_home(value: str) -> Path:
    """``--home`` as given; ``""`` is an ``InputError`` naming ``--home`` (fresh-user review:
    ``Path("")`` is the current folder, and ``--home ""`` wrote ``./continuity.db``)."""
    if value == "":
        raise InputError("--home is empty: give a workspace folder")
    return Path(value)


def check_workspace(value: Optional[Path]) -> Optional[Path]:
    """The callback of ``--home`` (Click runs it given or not, before the command): the
    workspace must not be a file and ``config.toml`` and the env overrides must parse with
    known section names (``core.config.check_config``: ``ConfigError``, exit 2; README,
    Configuration). Cheap: tomllib only, no feature's settings model."""
    from continuity.core.config import check_config, resolve_home

    resolve_home(value)
    check_config(value)
    return value


def check_home_only(value: Optional[Path]) -> Optional[Path]:
    """The callback of ``doctor``'s ``--home``: the workspace must not be a file; a config
    problem is one of doctor's checks, not an exit."""
    from continuity.core.config import resolve_home

    resolve_home(value)
    return value


HOME_HELP = "Workspace folder (default: $CONTINUITY_HOME or the platform's user data folder)."
HomeOption = typer.Option(None, "--home", help=HOME_HELP, show_default=False,
                          parser=parse_home, callback=check_workspace)
#: ``--home`` without the config check (``continuity doctor`` reports it as a check).
HomeOptionNoConfigCheck = typer.Option(None, "--home", help=HOME_HELP, show_default=False,
                                       parser=parse_home, callback=check_home_only)
JsonOption = typer.Option(False, "--json", help="Print JSON on stdout.")
#: A budget over 1 TB means nothing and would not survive JSON as an exact integer.
MAX_BUDGET_BYTES = 10**12
BudgetOption = typer.Option(FOLLOW_UP_BUDGET_BYTES, "--budget", min=1, max=MAX_BUDGET_BYTES,
                            help="History budget in UTF-8 bytes (seed 002: 240,000).")


#: The largest ``-n`` any listing takes (issue 20: one rule for every ``-n``). Larger values
#: mean nothing for a listing and, past 2**63, no database could even compare them.
MAX_COUNT = 1_000_000


def count_option(default: int | None, what: str, *, flags: tuple[str, ...] = ("-n", "--count"),
                 maximum: int = MAX_COUNT) -> Any:
    """The ``-n`` option of a listing, one rule everywhere (issue 20): a whole number from 0
    to ``maximum`` (``MAX_COUNT``), where 0 means all; anything else, a negative number or one
    too large (``9223372036854775808``), is a usage error naming ``-n`` (exit 2)."""
    shown = "all" if default in (None, 0) else str(default)
    return typer.Option(default or 0, *flags, min=0, max=maximum, show_default=False,
                        help=f"How many {what} (default {shown}; 0 = all; at most "
                             f"{maximum:,}).")


def open_cli_store(home: Optional[Path], *, read_only: bool = False):  # type: ignore[no-untyped-def]
    """The store of the workspace (or ``$CONTINUITY_DATABASE_URL``), as a context manager;
    ``read_only`` (commands that only read) opens the database of a workspace that cannot be
    written read-only instead of failing (``continuity.store.open_store``)."""
    from continuity.store import open_store

    return open_store(database_url(home), read_only=read_only)


def emit_json(value: Any) -> None:
    """Print ``value`` as indented JSON on stdout, as UTF-8 bytes whatever the locale's
    encoding (JSON is UTF-8, RFC 8259; B45: a cp1252 console never fails on an emoji)."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except (TypeError, orjson.JSONEncodeError):  # >64-bit integers, lone surrogates
        import json

        text = json.dumps(orjson.loads(json_bytes(value)), indent=2, ensure_ascii=False)
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream (a test's capture): it takes str
        sys.stdout.write(text + "\n")
        return
    sys.stdout.flush()
    buffer.write((text + "\n").encode("utf-8"))
    buffer.flush()


def resolve_session(store: Any, name: str) -> str:
    """The session key named by ``name`` (``continuity.store.names.resolve_session``: an
    exact key or a unique prefix). Raises ``SessionNotFound`` or ``AmbiguousSession``."""
    from continuity.store.names import resolve_session as resolve

    return resolve(store, name)
