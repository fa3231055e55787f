"""Benchmark of session checkpoints: redaction throughput and triggers per second.

Run from the project root:  .venv/bin/python bench/checkpoints.py [--quick]

1. Redaction: ``redact`` over the real session files of shared/data (their text as read, one
   call for the whole text and one call per line as the funnel sees entries), in MB/s
   (1 MB = 10^6 UTF-8 bytes), next to a baseline scanning the same text once with a plain
   ``str.replace`` and once with a single provider regex (``re.sub``); ratios against both.
2. Triggers through the queue: a ``CheckpointRecorder`` with ``promptInterval = 1`` (every
   prompt fires a periodic checkpoint), 50 live sessions, a fake clock moving 1 ms a prompt, so
   2,500 triggers share each 2,500 ms window and merge; rows land in a SQLite store. Baseline:
   the same triggers written one row each, straight to the store. Goal: >= 5,000 triggers/s.
   Memory: allocation growth traced (tracemalloc) after 1x and 5x a fifth of the triggers, in a
   second phase (tracing slows Python down); flat means it does not grow with the count.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "fixtures" / "samples"  # the copy of ../shared/data
sys.path.insert(0, str(ROOT / "src"))  # bench the working tree

from continuity.checkpoints.capture import (  # noqa: E402
    CheckpointConfig,
    CheckpointQueue,
    CheckpointRecorder,
    store_sink,
)
from continuity.core.model import Checkpoint, CheckpointTrigger  # noqa: E402
from continuity.redaction.funnel import redact  # noqa: E402
from continuity.store import open_store  # noqa: E402

GOAL_TRIGGERS_PER_S = 5_000
SESSIONS = 50


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def bench_redaction(quick: bool) -> dict[str, Any]:
    """MB/s of redact vs a str.replace scan and a single-regex scan over real transcripts."""
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(DATA.rglob("*.jsonl")))
    lines = text.splitlines()
    mb = len(text.encode("utf-8")) / 1e6
    repeat = 2 if quick else 5
    one_regex = re.compile(r"sk-[A-Za-z0-9_-]{20,}")
    t_redact = _best(lambda: redact(text), repeat)
    t_lines = _best(lambda: [redact(line) for line in lines], repeat)
    t_replace = _best(lambda: text.replace("sk-", "[REDACTED]"), repeat)
    t_regex = _best(lambda: one_regex.sub("[REDACTED]", text), repeat)
    changed = sum(1 for line in lines if redact(line) != line)
    return {
        "text_mb": round(mb, 3),
        "lines": len(lines),
        "lines_changed": changed,
        "redact_mb_s": round(mb / t_redact, 1),
        "redact_per_line_mb_s": round(mb / t_lines, 1),
        "baseline_str_replace_mb_s": round(mb / t_replace, 1),
        "baseline_one_regex_mb_s": round(mb / t_regex, 1),
        "ratio_vs_str_replace": round(t_replace / t_redact, 4),
        "ratio_vs_one_regex": round(t_regex / t_redact, 4),
    }


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _drive(rec: CheckpointRecorder, clock: _Clock, n: int, start: int = 0) -> None:
    step = timedelta(milliseconds=1)
    for i in range(start, start + n):
        clock.now += step
        key = f"s{i % SESSIONS}"
        rec.record_query(key, f"query {i % 37}")
        rec.record_prompt(key, f"prompt {i}: refactor the export job for month {i % 12}")
        rec.queue.poll()


def bench_queue(quick: bool) -> dict[str, Any]:
    """Triggers/s through recorder + queue (merging) into SQLite, vs one row per trigger."""
    n = 20_000 if quick else 100_000
    config = CheckpointConfig(promptInterval=1)
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "bench.db") as store:
        clock = _Clock()
        rec = CheckpointRecorder(
            CheckpointQueue(store_sink(store, config.max_checkpoints_per_session), clock=clock),
            config,
            clock=clock,
        )
        for k in range(SESSIONS):
            rec.start_session(f"s{k}", harness="pi", project="/srv/app")
        _drive(rec, clock, 2_000)  # warm-up
        start = time.perf_counter()
        _drive(rec, clock, n, 2_000)
        elapsed = time.perf_counter() - start
        gc.collect()
        tracemalloc.start()  # memory in a second phase: tracing slows Python down
        base = tracemalloc.get_traced_memory()[0]
        _drive(rec, clock, n // 5, 2_000 + n)
        gc.collect()
        mem_1x = tracemalloc.get_traced_memory()[0] - base
        _drive(rec, clock, 4 * n // 5, 2_000 + n + n // 5)
        gc.collect()
        mem_5x = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        rec.shutdown()
        rows = sum(len(store.checkpoints(f"s{k}")) for k in range(SESSIONS))
        direct_n = 200 if quick else 1_000
        cp = Checkpoint(
            "direct",
            "pi",
            "/srv/app",
            "/srv/app",
            CheckpointTrigger.PERIODIC,
            "## Session Checkpoint",
            1,
            ("q",),
            (),
        )
        t_direct = _best(
            lambda: [store.insert_checkpoint(cp, max_per_session=50) for _ in range(direct_n)], 1
        )
    per_s = n / elapsed
    direct_per_s = direct_n / t_direct
    return {
        "triggers": n,
        "sessions": SESSIONS,
        "rows_kept": rows,
        "triggers_per_s": round(per_s),
        "goal_triggers_per_s": GOAL_TRIGGERS_PER_S,
        "goal_met": per_s >= GOAL_TRIGGERS_PER_S,
        "baseline_direct_rows_per_s": round(direct_per_s),
        "ratio_vs_direct": round(per_s / direct_per_s, 2),
        "traced_kb_after_1x": round(mem_1x / 1024),
        "traced_kb_after_5x": round(mem_5x / 1024),
    }


def run(quick: bool) -> dict[str, Any]:
    """Both parts; returns their figures."""
    return {"redaction": bench_redaction(quick), "queue": bench_queue(quick)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller run (a few seconds)")
    figures = run(parser.parse_args().quick)
    r, q = figures["redaction"], figures["queue"]
    print(
        f"redaction over {r['text_mb']} MB of real transcripts ({r['lines']} lines, "
        f"{r['lines_changed']} changed)"
    )
    print(f"  redact, whole text     {r['redact_mb_s']:>9} MB/s")
    print(f"  redact, per line       {r['redact_per_line_mb_s']:>9} MB/s")
    print(
        f"  baseline str.replace   {r['baseline_str_replace_mb_s']:>9} MB/s  "
        f"(redact = {r['ratio_vs_str_replace']}x)"
    )
    print(
        f"  baseline one regex     {r['baseline_one_regex_mb_s']:>9} MB/s  "
        f"(redact = {r['ratio_vs_one_regex']}x)"
    )
    print(
        f"queue: {q['triggers']} periodic triggers over {q['sessions']} sessions, merged into "
        f"{q['rows_kept']} kept rows"
    )
    print(
        f"  through queue + SQLite {q['triggers_per_s']:>9} triggers/s  (goal >= "
        f"{q['goal_triggers_per_s']}: {'met' if q['goal_met'] else 'MISSED'})"
    )
    print(
        f"  baseline direct insert {q['baseline_direct_rows_per_s']:>9} rows/s  "
        f"(queue = {q['ratio_vs_direct']}x)"
    )
    print(
        f"  memory growth          {q['traced_kb_after_1x']} KB after {q['triggers'] // 5} "
        f"more triggers, {q['traced_kb_after_5x']} KB after {q['triggers']}"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
