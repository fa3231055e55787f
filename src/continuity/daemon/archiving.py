"""The daemon's archiving (issue 18 item 1): ``continuity serve`` runs ``continuity watch`` of
its workspace as a child process while it serves, unless ``[archive] enabled = false``.

A child process, not a thread: an import is CPU work in Python, and in the daemon's process it
would hold the interpreter lock the hook handlers need; the child also runs at a lower CPU
priority (``NICE``), so on a busy machine the hooks come first. Its output lines go to the
daemon's log (``archive: ...``). A child that exits on its own is started again after
``RESTART_SECONDS``, except with exit status 2 (a configuration it refuses: said once in the
log). ``stop()`` sends SIGTERM (the child ends after the transaction under way: an import
batch is stored whole or not at all) and kills it after ``STOP_SECONDS``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

log = logging.getLogger("continuity.daemon")

#: the child's niceness increment (os.nice): archiving yields the CPU to the hooks
NICE = 10
#: prctl(2) option: the signal a process gets when its parent dies
PR_SET_PDEATHSIG = 1
#: seconds before a child that exited on its own is started again
RESTART_SECONDS = 30.0
#: seconds a stopping child has between SIGTERM and SIGKILL
STOP_SECONDS = 15.0


def _lower_priority() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(OSError):
        os.nice(NICE)
    # Linux: the child gets SIGTERM when the daemon dies (kill -9 included), so no orphan
    # watcher outlives it and a new daemon's child is the only one
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


class ArchiveChild:
    """Supervises one ``continuity watch --home <home>`` child (module docstring).

    ``start()`` returns at once (a supervisor thread runs the child); ``stop()`` ends it and
    waits. ``pid`` is the running child's process id, or None."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._stop = threading.Event()
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def start(self) -> None:
        """Start the supervisor thread (and so the first child)."""
        self._thread = threading.Thread(target=self._run, name="continuity-archive", daemon=True)
        self._thread.start()

    def _spawn(self) -> subprocess.Popen[bytes]:
        argv = [sys.executable, "-m", "continuity.cli.app", "watch", "--home", str(self.home)]
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=_lower_priority,
            start_new_session=True,
        )

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                if self._stop.is_set():
                    return
                try:
                    self._proc = self._spawn()
                except OSError as exc:
                    log.error("archive: could not start `continuity watch`: %s", exc)
                    self._proc = None
            if self._proc is None:
                if self._stop.wait(RESTART_SECONDS):
                    return
                continue
            log.info("archive: following the harnesses' session folders (pid %d)", self._proc.pid)
            _forward(self._proc.stdout)
            code = self._proc.wait()
            if self._stop.is_set():
                return
            if code == 2:
                log.warning(
                    "archive: `continuity watch` refused to run (exit 2, see above); "
                    "not started again until the daemon restarts"
                )
                return
            log.warning(
                "archive: `continuity watch` exited with status %d; starting it again in %g s",
                code,
                RESTART_SECONDS,
            )
            if self._stop.wait(RESTART_SECONDS):
                return

    def stop(self) -> None:
        """SIGTERM the child, wait up to ``STOP_SECONDS``, then SIGKILL; join the thread."""
        with self._lock:
            self._stop.set()
            proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                log.warning(
                    "archive: `continuity watch` did not stop in %g s; killed", STOP_SECONDS
                )
                proc.kill()
                proc.wait()
        if self._thread is not None:
            self._thread.join(timeout=STOP_SECONDS)


def _forward(stream: IO[bytes] | None) -> None:
    """Log each line the child prints until it closes its output."""
    if stream is None:
        return
    with stream:
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                log.info("archive: %s", line)
