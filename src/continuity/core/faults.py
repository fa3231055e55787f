"""Fault injection for crash tests (issue 21): named points where a test can make the process
die, as a ``kill -9`` would, at a chosen moment of a replay or a write.

``crash_point(name)`` does nothing unless ``$CONTINUITY_CRASH_AT`` is ``name:N`` (N ≥ 1): the
N-th time this process reaches point ``name`` it ends at once with ``os._exit(CRASH_EXIT)``: no
``finally`` block, no flush, no atexit handler runs, so what is on disk is what a kill at that
instant leaves. The points (each documented where it is called):

- ``spool-rotated``: the spool's ``events.jsonl`` was renamed to a replay file (``spool._rotate``);
- ``replay-before-apply`` / ``replay-after-apply`` / ``replay-after-mark``: around one spooled
  event's handler and its ``.done`` mark (``spool._drain_file``);
- ``turn-recorded``: a live turn's canonical JSONL record is on disk, its row not yet
  (``journal.LiveTurns.append``);
- ``row-before-commit`` / ``row-after-commit``: a session's row write and the applied-event
  marks of its turns, inside their transaction and just after it (``journal.LiveTurns``).

Reading one environment variable per call costs well under a microsecond; nothing else runs.
Standard library only (the hook command imports ``spool``, which calls it).
"""

from __future__ import annotations

import os

#: The exit status of an injected crash (tests tell it from a real failure).
CRASH_EXIT = 86
ENV = "CONTINUITY_CRASH_AT"

_counts: dict[str, int] = {}


def crash_point(name: str) -> None:
    """End the process here (``os._exit(CRASH_EXIT)``) when ``$CONTINUITY_CRASH_AT`` names
    this point and this is its N-th hit (module docstring); otherwise return at once."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    point, _, nth = spec.rpartition(":")
    if point != name:
        return
    _counts[name] = count = _counts.get(name, 0) + 1  # tests crash single-threaded points
    if str(count) == nth:
        os._exit(CRASH_EXIT)
