"""Run one provider call so that the cancel signal or the deadline really aborts it.

The call runs as an asyncio task on a private event loop in the calling thread. The loop
checks ``cancel`` (a ``threading.Event``) and the deadline (``time.monotonic()`` seconds) every
``POLL_SECONDS``; when either fires it cancels the task. Cancelling an httpx request closes its
connection, so the server sees the client go away before any reply is read (seed 002: the
compaction owns its abort signal, and the signal reaches the summary call).

Call it from a thread without a running event loop (a harness built on asyncio runs the
summarizer in a worker thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from continuity.continuation.summarize import Cancelled

T = TypeVar("T")
POLL_SECONDS = 0.02


def run_cancellable(
    call: Callable[[], Awaitable[T]], *, cancel: threading.Event, deadline: float
) -> T:
    """The result of ``await call()``, or ``Cancelled`` once ``cancel`` is set or the deadline
    passes (the call is cancelled and awaited first, so its connection is closed)."""

    async def main() -> T:
        task = asyncio.ensure_future(call())
        while not task.done():
            if cancel.is_set() or time.monotonic() >= deadline:
                task.cancel()
                with contextlib.suppress(BaseException):  # the call's fate no longer matters
                    await task
                raise Cancelled("cancelled")
            await asyncio.wait({task}, timeout=POLL_SECONDS)
        return task.result()

    if cancel.is_set() or time.monotonic() >= deadline:
        raise Cancelled("cancelled before the request")
    return asyncio.run(main())
