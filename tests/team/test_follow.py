"""``team.follow``: the rounds of continuous sync on a fake clock: the floor, the debounce
after a poke (and its bound), the backoff while the store fails (pokes ignored), and one line
per outage."""

from __future__ import annotations

from typing import Any

from continuity.core.errors import StoreError
from continuity.team.follow import MAX_DEBOUNCE_FACTOR, follow, retry_delay


class World:
    """A fake clock and a script of what each wait sees: ``events`` maps a time to
    ``poke`` (arriving then); the loop stops at ``end``."""

    def __init__(self, pokes: list[float], end: float, failing: tuple[float, float] = (0, 0)):
        self.now = 0.0
        self.pokes = sorted(pokes)
        self.end = end
        self.failing = failing
        self.syncs: list[float] = []
        self.full: list[bool] = []
        self.said: list[str] = []

    def clock(self) -> float:
        return self.now

    def wait(self, seconds: float) -> Any:
        until = self.now + seconds
        nxt = self.pokes[0] if self.pokes else None
        if self.end <= until and (nxt is None or self.end <= nxt):
            self.now = self.end
            return "stop"
        if nxt is not None and nxt <= until:
            self.now = max(self.now, self.pokes.pop(0))
            return "poke"
        self.now = until
        return "timeout"

    def run(self, full: bool) -> Any:
        self.syncs.append(round(self.now, 3))
        self.full.append(full)
        lo, hi = self.failing
        if lo <= self.now < hi:
            raise StoreError("team store x: connection refused")
        return "report"


def _follow(world: World, interval: float = 30.0, debounce: float = 2.0) -> None:
    follow(
        world.run,
        timing=lambda: (interval, debounce),
        wait=world.wait,
        say=world.said.append,
        clock=world.clock,
    )


def test_the_floor_alone() -> None:
    w = World([], end=95)
    _follow(w)
    assert w.syncs == [0, 30, 60, 90]


def test_a_poke_syncs_after_the_debounce_and_a_burst_is_one_sync() -> None:
    w = World([10, 11, 12.5], end=40)
    _follow(w)
    # quiet 2 s after the last poke of the burst (12.5): one sync at 14.5, then the floor
    assert w.syncs == [0, 14.5]
    assert w.full == [True, False]  # a poked sync may only push; the floor's pull


def test_steady_pokes_never_put_the_sync_off_for_ever() -> None:
    w = World([10 + i for i in range(60)], end=40)
    _follow(w)
    assert w.syncs[1] == 10 + 2 * MAX_DEBOUNCE_FACTOR


def test_backoff_while_failing_ignores_pokes_and_says_it_once() -> None:
    w = World([3, 5, 9], end=100, failing=(0, 40))
    _follow(w, interval=30)
    assert w.syncs == [0, 2, 6, 14, 30, 60, 90]  # 2, 4, 8, 16, then the floor
    assert all(w.full)
    assert len(w.said) == 2
    assert "capture goes on here" in w.said[0] and "connection refused" in w.said[0]
    assert w.said[1] == "sync: the team store answers again after 5 failed syncs"


def test_retry_delay() -> None:
    assert [retry_delay(n, 30) for n in (1, 2, 3, 4, 5, 9)] == [2, 4, 8, 16, 30, 30]
    assert retry_delay(3, 5) == 5
