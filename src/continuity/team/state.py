"""How the last syncs went (issue 41 item 1: ``team status`` shows the last sync and the last
error): ``<home>/team-sync.json``, written after every sync, whoever ran it (``continuity
sync``, ``sync --watch``, the daemon's background sync).

The file holds ``last_sync_at`` and ``last_report`` (the ``sync --json`` object) of the last
sync that succeeded, ``last_error`` and ``last_error_at`` of the last one that failed, and
``failing_since`` (the first failure of the outage under way; None once a sync succeeds).
Times are ISO 8601 UTC. Written owner-only, replaced whole (``core.private``); a file that
cannot be read is taken as empty (it only reports).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

STATE_FILE = "team-sync.json"


def state_path(home: str | os.PathLike[str] | None) -> Path:
    """``<home>/team-sync.json`` (``home`` as ``core.config.resolve_home`` reads it)."""
    from continuity.core.config import resolve_home

    return resolve_home(home) / STATE_FILE


def read_state(home: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The recorded state (module docstring); ``{}`` before the first sync or when the file
    cannot be read."""
    import orjson

    try:
        data = orjson.loads(state_path(home).read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record_sync(
    home: str | os.PathLike[str] | None,
    *,
    report: dict[str, Any] | None = None,
    error: str | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Record a sync that succeeded (``report``: its ``to_dict()``) or failed (``error``: the
    message, without a password: ``TeamStore`` names the store by its safe URL). Returns the
    new state. An ``OSError`` writing it is swallowed: the state only reports."""
    import orjson

    from continuity.core.private import write_private

    at = (now or datetime.now(UTC)).isoformat().replace("+00:00", "Z")
    state = read_state(home)
    if error is None:
        state.update(last_sync_at=at, last_report=report, failing_since=None)
    else:
        state.update(last_error=error, last_error_at=at)
        state["failing_since"] = state.get("failing_since") or at
    try:
        path = state_path(home)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_private(path, orjson.dumps(state, option=orjson.OPT_INDENT_2) + b"\n")
    except OSError:
        pass
    return state


__all__ = ["STATE_FILE", "read_state", "record_sync", "state_path"]
