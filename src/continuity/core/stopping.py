"""A stop request a signal handler can make safely: ``Stop`` and ``stop_on_signals``.

``continuity watch`` (and ``sync --watch``) end on SIGTERM or Ctrl-C after the transaction
under way. Their handlers used to call ``threading.Event.set``, which takes the lock of the
event's condition; a handler runs in the main thread between two bytecodes, so when the
signal came while that same thread held the lock (inside ``Event.wait``, just before or after
its wait proper: more likely on a loaded machine, where a thread is preempted there) the
handler waited for a lock its own thread held: the process hung, every later SIGTERM ran
another handler that hung too, and only SIGKILL ended it (found on a ``watch`` a test left
behind). ``Stop.set`` takes no lock: it sets a flag and writes a byte to a pipe, and
``Stop.wait`` polls that pipe.

The pipe is also the signal wakeup file descriptor (``signal.set_wakeup_fd``) once
``stop_on_signals`` installed the handlers from the main thread: the C-level handler writes
to it from whatever thread the kernel chose, so a wait wakes at once even when the signal was
not delivered to the waiting thread, and the Python-level handler then runs at the wait's
next bytecode.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

#: The signals that stop a long-running command: ``kill``, systemd, launchd and tmux send
#: SIGTERM; a terminal's Ctrl-C is SIGINT.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Stop:
    """A one-way stop flag, safe to set from a signal handler (module docstring).

    ``set()`` never blocks and takes no lock; ``is_set()`` reads the flag; ``wait(seconds)``
    blocks until the flag is set or ``seconds`` pass (None: no limit) and returns the flag.
    Duck-compatible with ``threading.Event`` where only those three are used (``watchfiles``'s
    ``stop_event`` calls ``is_set``). Holds two file descriptors (non-inheritable) for the
    life of the process."""

    def __init__(self) -> None:
        self._flag = False
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)  # a full pipe drops the byte: the flag is set
        self._poll = select.poll()
        self._poll.register(self._read, select.POLLIN)

    @property
    def wakeup_fd(self) -> int:
        """The pipe's write end (for ``signal.set_wakeup_fd``)."""
        return self._write

    def set(self) -> None:
        """Ask to stop: the flag, and a byte that wakes a ``wait`` (no lock taken)."""
        self._flag = True
        # full (BlockingIOError): a wait wakes anyway; closed: nobody waits
        with contextlib.suppress(OSError):
            os.write(self._write, b"\0")

    def is_set(self) -> bool:
        """Whether a stop was asked."""
        return self._flag

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a stop is asked or ``timeout`` seconds pass (None: no limit); returns
        ``is_set()``. A wakeup byte of another signal is read and the wait goes on."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._flag:
            if deadline is None:
                ms = None
            else:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                ms = max(1, int(left * 1000))
            if self._poll.poll(ms):
                self._drain()
            # the loop's jump back runs a Python-level handler now due (it sets the flag)
        return self._flag

    def _drain(self) -> None:
        try:
            while os.read(self._read, 4096):
                pass
        except BlockingIOError:
            pass


def stop_on_signals(stop: Stop, signals: Iterable[int] = STOP_SIGNALS) -> dict[int, Any]:
    """Make each of ``signals`` set ``stop`` (from the main thread only: elsewhere nothing is
    installed and ``{}`` is returned). A second SIGINT while ``stop`` is already set raises
    ``KeyboardInterrupt`` where the main thread is (the impatient user's Ctrl-C, as before);
    a second SIGTERM changes nothing. ``stop``'s pipe becomes the signal wakeup file
    descriptor (module docstring). Returns the handlers replaced, signal number -> handler."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum: int, _frame: Any) -> None:
        if signum == signal.SIGINT and stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous: dict[int, Any] = {sig: signal.signal(sig, handler) for sig in signals}
    signal.set_wakeup_fd(stop.wakeup_fd, warn_on_full_buffer=False)
    return previous


def restore_signals(previous: dict[int, Any]) -> None:
    """Undo ``stop_on_signals``: ``previous``'s handlers back, no wakeup file descriptor
    (nothing when ``previous`` is empty: nothing was installed)."""
    if not previous:
        return
    for sig, handler in previous.items():
        signal.signal(sig, handler)
    signal.set_wakeup_fd(-1)


#: The stop of this process's long-running command, made at its start (``early_stop``)
_early: Stop | None = None


def early_stop() -> Stop:
    """This process's stop, made and bound to ``STOP_SIGNALS`` on first call: the console
    entry calls it before loading the CLI for a command that runs until stopped, so a SIGTERM
    during the start-up (about half a second of imports, more on a loaded machine) is a stop
    like any later one, not the default action that killed the process with status 143; the
    command then takes the same ``Stop``."""
    global _early
    if _early is None:
        _early = Stop()
        stop_on_signals(_early)
    return _early


@contextmanager
def signal_stop() -> Iterator[Stop]:
    """The ``Stop`` a long-running command ends on: the process's ``early_stop`` when the
    console entry made one (kept bound: the process ends with the command), else a new one
    bound to ``STOP_SIGNALS`` for the block and unbound at its end (a command run in
    another program's process, ``typer.testing.CliRunner``)."""
    if _early is not None:
        yield _early
        return
    stop = Stop()
    previous = stop_on_signals(stop)
    try:
        yield stop
    finally:
        restore_signals(previous)


__all__ = [
    "STOP_SIGNALS",
    "Stop",
    "early_stop",
    "restore_signals",
    "signal_stop",
    "stop_on_signals",
]
