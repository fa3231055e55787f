"""The daemon's background thread: work that must not hold up a hook's answer.

``Worker`` runs named tasks one at a time, in submission order (so a session's import always
runs before the settled-turn policy queued after it). A task whose name is already waiting is
not queued twice (one import per session catches up with every line written meanwhile). Every
``tick_seconds``, and at once after ``wake``, it calls ``tick`` between tasks (the daemon drains
the spool and sweeps idle sessions there). A failing task is logged and dropped: tasks only redo
work derived from durable sources (the harness's transcript file, the spool), never hold the
only copy.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

log = logging.getLogger("continuity.daemon")


class Worker:
    """One background thread of named tasks (module docstring). Thread-safe."""

    def __init__(
        self,
        tick: Callable[[], object],
        *,
        tick_seconds: float = 1.0,
        name: str = "continuity-worker",
    ) -> None:
        self._tick, self._tick_seconds, self._name = tick, tick_seconds, name
        self._tasks: deque[tuple[str, Callable[[], object]]] = deque()
        self._names: set[str] = set()
        self._cond = threading.Condition()
        self._busy = False
        self._stopping = False
        self._woken = False
        self._last_tick = 0.0
        self._thread: threading.Thread | None = None

    def submit(self, name: str, task: Callable[[], object]) -> bool:
        """Queue ``task`` unless a task of that ``name`` is waiting; True when queued. After
        ``stop`` began, the task runs in the caller's thread instead (nothing is dropped)."""
        with self._cond:
            if self._stopping or self._thread is None:
                inline = True
            elif name in self._names:
                return False
            else:
                inline = False
                self._tasks.append((name, task))
                self._names.add(name)
                self._cond.notify_all()
        if inline:
            self._run(name, task)
        return True

    def wake(self) -> None:
        """Run ``tick`` soon (without waiting for ``tick_seconds``)."""
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def pending(self) -> int:
        """Tasks waiting or running."""
        with self._cond:
            return len(self._tasks) + (1 if self._busy else 0)

    def wait_idle(self, timeout: float) -> bool:
        """Block until no task waits or runs (True) or ``timeout`` seconds passed (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._tasks and not self._busy, timeout)

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = None) -> list[str]:
        """Finish every queued task, run a last ``tick``, and stop the thread. With a
        ``timeout`` (seconds), the tasks not started by then are dropped: returns their names
        (the task running then finishes in the background)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is None:
            return []
        self._thread.join(timeout)
        if not self._thread.is_alive():
            return []
        with self._cond:
            dropped = [name for name, _ in self._tasks]
            self._tasks.clear()
            self._names.clear()
            self._cond.notify_all()
        return dropped

    def _loop(self) -> None:
        while True:
            with self._cond:
                if not self._tasks and not self._stopping:
                    self._cond.wait(self._tick_seconds)
                item = self._tasks.popleft() if self._tasks else None
                if item is not None:
                    self._names.discard(item[0])
                    self._busy = True
                stopping = self._stopping and item is None
            if item is not None:
                self._run(*item)
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
            with self._cond:
                due = (
                    self._woken
                    or stopping
                    or time.monotonic() - self._last_tick >= self._tick_seconds
                )
                self._woken = False
            if due:
                self._last_tick = time.monotonic()
                self._safe_tick()
            if stopping:
                return

    def _safe_tick(self) -> None:
        try:
            self._tick()
        except Exception:  # the next tick retries
            log.exception("daemon tick failed")

    @staticmethod
    def _run(name: str, task: Callable[[], object]) -> None:
        try:
            task()
        except Exception:  # derived work: logged, redone by a later event
            log.exception("background task %s failed", name)


class RecentIds:
    """The last ``size`` event ids seen (a bounded set), to answer a repeated event once."""

    def __init__(self, size: int = 10_000) -> None:
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def __contains__(self, event_id: object) -> bool:
        with self._lock:
            return event_id in self._ids

    def add(self, event_id: str) -> None:
        """Remember ``event_id`` (the oldest is forgotten beyond ``size``)."""
        with self._lock:
            self._ids[event_id] = None
            self._ids.move_to_end(event_id)
            while len(self._ids) > self._size:
                self._ids.popitem(last=False)
