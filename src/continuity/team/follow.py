"""Continuous sync (issue 41 item 1: "the daemon syncs continuously (debounced, with a periodic
floor), and keeps capturing when the store is unreachable, catching up later"): the rounds of
``continuity sync --watch`` and of the daemon's background sync (``daemon.teamsync``).

``follow`` runs a sync, then waits: ``interval`` seconds (the floor; its syncs also pull
the team's index), or less when it is poked (new rows were captured; its syncs may only
push): a poke starts a trailing debounce of ``debounce`` seconds (each poke within it
restarts it, but no sync is put off more than ``MAX_DEBOUNCE_FACTOR`` debounces after the
first poke), then the next sync runs. A sync that fails with
``StoreError`` (the team store down, a dropped connection, a refused write) is said once per
outage (``say``), and the next one waits ``RETRY_FIRST_SECONDS``, doubling with each failure
up to ``interval``; pokes are ignored meanwhile (they would only hammer a store that is down).
The sync that succeeds again says so once. Nothing is lost in between: each sync starts from
the watermarks the last committed batch left (``team.sync``), and capture never waits for
any of it (it runs in another process or thread).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

from continuity.core.errors import StoreError
from continuity.team.settings import RETRY_FIRST_SECONDS

#: What a ``wait`` saw: its time ran out, a poke arrived, or the loop is to stop.
Waited = Literal["timeout", "poke", "stop"]
#: A poked sync runs at most this many debounces after the first poke (steady capture never
#: puts it off for ever).
MAX_DEBOUNCE_FACTOR = 5


def retry_delay(failures: int, interval: float) -> float:
    """Seconds to wait after ``failures`` failed syncs in a row (1 or more):
    ``RETRY_FIRST_SECONDS`` doubled per failure, at most ``interval``."""
    return min(interval, RETRY_FIRST_SECONDS * 2 ** max(0, failures - 1))


def follow(
    run: Callable[[bool], Any],
    *,
    timing: Callable[[], tuple[float, float]],
    wait: Callable[[float], Waited],
    say: Callable[[str], None],
    reported: Callable[[Any], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Sync until ``wait`` says ``stop`` (module docstring). ``run(full)`` is one sync
    (returns its report, raises ``StoreError`` when the team store fails it; any other error
    ends the loop); ``full`` is False for a sync a poke brought forward (the caller may push
    only: the team's index is pulled at the floor), True for the others; ``timing()`` gives
    ``(interval, debounce)`` seconds, read before each wait (the settings may change);
    ``wait(seconds)`` blocks up to ``seconds``; ``reported(report)`` gets each successful
    sync's report."""
    failures = 0
    full = True
    while True:
        interval, debounce = timing()
        try:
            report = run(full or failures > 0)
        except StoreError as exc:
            failures += 1
            if failures == 1:  # once per outage, not once per round
                say(
                    f"sync: {exc}; capture goes on here, the sync is tried again in "
                    f"{retry_delay(1, interval):g} s, backing off to every {interval:g} s"
                )
        else:
            if failures:
                say(f"sync: the team store answers again after {failures} failed syncs")
            failures = 0
            if reported is not None:
                reported(report)
        delay = retry_delay(failures, interval) if failures else interval
        deadline = clock() + delay
        full = True
        while (left := deadline - clock()) > 0:
            got = wait(left)
            if got == "stop":
                return
            if got == "poke" and not failures:
                if _debounced(wait, debounce, clock) == "stop":
                    return
                full = False
                break


def _debounced(wait: Callable[[float], Waited], debounce: float, clock: Callable[[], float]) -> str:
    """Wait until ``debounce`` seconds pass without a poke, or ``MAX_DEBOUNCE_FACTOR``
    debounces since the first; ``stop`` when told to stop."""
    latest = clock() + debounce * MAX_DEBOUNCE_FACTOR
    while (left := min(debounce, latest - clock())) > 0:
        got = wait(left)
        if got == "stop":
            return "stop"
        if got == "timeout":
            return "timeout"
    return "timeout"


__all__ = ["MAX_DEBOUNCE_FACTOR", "Waited", "follow", "retry_delay"]
