"""A started ``LiveCapture`` for the daemon's tests: one place for the settings they share
(stop_seconds 10, idle limit 4 h, a 0.05 s tick), so a new test file does not copy them."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from continuity.checkpoints.capture import CheckpointConfig
from continuity.daemon.hooks.live import LiveCapture


def start_live(
    store: Any,
    home: Path,
    *,
    budget_bytes: int = 1000,
    checkpoint: CheckpointConfig | None = None,
    **kw: Any,
) -> LiveCapture:
    """A ``LiveCapture`` over ``store`` and workspace ``home``, its background threads
    started (close it after). ``budget_bytes``: the follow-up budget; ``checkpoint``: the
    ``[continuity]`` settings (default ones); ``kw``: further ``LiveCapture`` arguments."""
    live = LiveCapture(
        store,
        home=home,
        config=checkpoint or CheckpointConfig(),
        budget_bytes=budget_bytes,
        stop_seconds=10,
        idle_limit=timedelta(hours=4),
        tick_seconds=0.05,
        **kw,
    )
    live.start()
    return live


@contextmanager
def served_on_loopback(app: Any) -> Iterator[str]:
    """``app`` served by a real uvicorn in a thread on a free 127.0.0.1 port (never 7438);
    yields its ``http://127.0.0.1:PORT`` URL once it accepts, and stops it after."""
    import socket

    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(20)
