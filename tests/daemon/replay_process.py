"""A daemon's service in a process of its own, for the crash tests (issue 21): open the store,
start ``LiveCapture`` (reconcile, replay the spool), let the worker finish, close.
``$CONTINUITY_CRASH_AT`` may kill it at a named step (``continuity.core.faults``), as
``kill -9`` would.

``python -m tests.daemon.replay_process HOME DB_URL`` runs it once. ``... serve`` imports the
daemon once and then, for each ``HOME DB_URL CRASH`` line read (CRASH ``-`` for none), forks a
child that runs it and answers the child's exit status on a line of its own: each run is a
real process of its own that dies at its step, without paying a second of imports.
"""

from __future__ import annotations

import sys
from datetime import timedelta

from continuity.checkpoints.capture import CheckpointConfig
from continuity.daemon.hooks.live import LiveCapture
from continuity.store import open_store


def main(home: str, url: str) -> int:
    with open_store(url) as store:
        live = LiveCapture(
            store,
            home=home,
            config=CheckpointConfig(),
            budget_bytes=1000,
            stop_seconds=10,
            idle_limit=timedelta(hours=4),
            tick_seconds=0.05,
            consolidate=False,
        )
        report = live.start()
        live.worker.wait_idle(30)
        live.close()
    return 0 if report.error is None else 1


def serve() -> int:
    import os

    from continuity.core.faults import ENV

    for line in sys.stdin:
        home, url, crash = line.split()
        pid = os.fork()
        if pid == 0:  # the child: one daemon run
            if crash != "-":
                os.environ[ENV] = crash
            try:
                code = main(home, url)
            except BaseException:  # noqa: BLE001 - the status says it
                import traceback

                traceback.print_exc()
                code = 1
            sys.stdout.flush()
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(serve() if sys.argv[1:] == ["serve"] else main(sys.argv[1], sys.argv[2]))
