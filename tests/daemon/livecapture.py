"""A started ``LiveCapture`` for the daemon's tests: one place for the settings they share
(stop_seconds 10, idle limit 4 h, a 0.05 s tick), so a new test file does not copy them."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from continuity.checkpoints.capture import CheckpointConfig
from continuity.daemon.hooks.live import LiveCapture


def start_live(store: Any, home: Path, *, budget_bytes: int = 1000,
               checkpoint: CheckpointConfig | None = None, **kw: Any) -> LiveCapture:
    """A ``LiveCapture`` over ``store`` and workspace ``home``, its background threads
    started (close it after). ``budget_bytes``: the follow-up budget; ``checkpoint``: the
    ``[continuity]`` settings (default ones); ``kw``: further ``LiveCapture`` arguments."""
    live = LiveCapture(store, home=home, config=checkpoint or CheckpointConfig(),
                       budget_bytes=budget_bytes, stop_seconds=10,
                       idle_limit=timedelta(hours=4), tick_seconds=0.05, **kw)
    live.start()
    return live
