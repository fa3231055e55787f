"""The daemon's background team sync (issue 41 item 1: "the daemon syncs continuously
(debounced, with a periodic floor), and keeps capturing when the store is unreachable,
catching up later").

While the workspace has joined a team store (``[team] url``, ``auto_sync`` not off),
``continuity serve`` runs ``continuity sync --follow-stdin`` of its workspace as a child
process, as it runs the archiver (``daemon.archiving``) and for the same reason: a sync
redacts rows, CPU work that in the daemon's process would hold the interpreter lock the
hooks need; the child runs at a lower priority and can never block or slow capture. The
child syncs every ``[team] sync_interval_seconds`` (the floor) and, when the daemon has
captured new rows (``nudge``: one byte down the child's stdin, never waiting), after
``sync_debounce_seconds`` of quiet; it backs off while the team store cannot be reached and
says so once per outage (``team.follow``); its lines go to the daemon's log (``team sync:
...``), and each sync's outcome to ``<home>/team-sync.json`` (``team status``).

The supervisor thread looks at ``[team]`` when it starts, when nudged and every
``CHECK_SECONDS``: a workspace that joins a team store later gets its child without a
restart; a child that ends on its own (the workspace left, ``auto_sync`` turned off) is
started again once ``[team]`` says so; one that fails (exit status other than 0) is started
again after ``RESTART_SECONDS``. ``stop()`` closes the child's stdin (it ends after the sync
under way), SIGTERMs it after ``STOP_SECONDS`` and kills it after as long again: a sync
stopped at any point loses nothing (``team.sync``).
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

from continuity.daemon.archiving import _lower_priority

log = logging.getLogger("continuity.daemon")

#: Seconds between looks at ``[team]`` while no child runs.
CHECK_SECONDS = 30.0
#: Seconds before a child that failed is started again.
RESTART_SECONDS = 30.0
#: Seconds a stopping child has after its stdin closed (then SIGTERM; as long again: SIGKILL).
STOP_SECONDS = 5.0


def wanted(home: Path) -> bool:
    """Whether ``home``'s ``[team]`` asks for the background sync: a team store joined and
    ``auto_sync`` on. A ``[team]`` that cannot be read counts as no (the child would refuse
    it too); the reason is logged by the caller once."""
    from continuity.core.errors import ConfigError
    from continuity.team.settings import team_settings

    try:
        settings = team_settings(home)
    except ConfigError:
        return False
    return bool(settings.url) and settings.auto_sync


class TeamSyncChild:
    """Supervises the ``continuity sync --follow-stdin`` child of ``home`` (module
    docstring). ``start()`` returns at once; ``nudge()`` never blocks; ``stop()`` ends the
    child and waits. ``pid`` is the running child's process id, or None."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def start(self) -> None:
        """Start the supervisor thread."""
        self._thread = threading.Thread(target=self._run, name="continuity-team-sync", daemon=True)
        self._thread.start()

    def nudge(self, *_: object) -> None:
        """New rows were captured: poke the child (a byte on its stdin; dropped when the pipe
        is full, the child then has pokes waiting anyway), or have the supervisor look at
        ``[team]`` when no child runs."""
        proc = self._proc
        if proc is None or proc.poll() is not None or proc.stdin is None:
            self._wake.set()
            return
        with contextlib.suppress(OSError, ValueError):  # full, or closed by stop()
            os.write(proc.stdin.fileno(), b".")

    def _spawn(self) -> subprocess.Popen[bytes]:
        argv = [
            sys.executable,
            "-m",
            "continuity.cli.app",
            "sync",
            "--follow-stdin",
            "--home",
            str(self.home),
        ]
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=_lower_priority,
            start_new_session=True,
        )
        if proc.stdin is not None:
            os.set_blocking(proc.stdin.fileno(), False)  # nudge() never waits
        return proc

    def _run(self) -> None:
        while not self._stop.is_set():
            if not wanted(self.home):
                self._wake.wait(CHECK_SECONDS)
                self._wake.clear()
                continue
            with self._lock:
                if self._stop.is_set():
                    return
                try:
                    self._proc = self._spawn()
                except OSError as exc:
                    log.error("team sync: could not start `continuity sync`: %s", exc)
                    self._proc = None
            if self._proc is None:
                if self._stop.wait(RESTART_SECONDS):
                    return
                continue
            log.info(
                "team sync: syncing with the team store in the background (pid %d)", self._proc.pid
            )
            _forward(self._proc.stdout)
            code = self._proc.wait()
            if self._stop.is_set():
                return
            if code == 0:  # it found the workspace no longer joined: look again in a while
                if self._stop.wait(1.0):
                    return
            else:
                log.warning(
                    "team sync: `continuity sync` exited with status %d; starting it again in %g s",
                    code,
                    RESTART_SECONDS,
                )
                if self._stop.wait(RESTART_SECONDS):
                    return

    def stop(self) -> None:
        """Close the child's stdin, wait ``STOP_SECONDS``, then SIGTERM, then SIGKILL; join
        the thread."""
        with self._lock:
            self._stop.set()
            self._wake.set()
            proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError):
                if proc.stdin is not None:
                    proc.stdin.close()
            for send in (None, signal.SIGTERM, signal.SIGKILL):
                if send is not None:
                    if send == signal.SIGKILL:
                        log.warning("team sync: `continuity sync` did not stop; killed")
                    with contextlib.suppress(OSError):
                        proc.send_signal(send)
                try:
                    proc.wait(timeout=STOP_SECONDS)
                    break
                except subprocess.TimeoutExpired:
                    continue
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
                log.info("team sync: %s", line.removeprefix("sync: "))


__all__ = ["CHECK_SECONDS", "TeamSyncChild", "wanted"]
