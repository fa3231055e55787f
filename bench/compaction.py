"""Benchmark of the continuation checkpoint (issue 4) on the largest shared session.

Run from the project root:  .venv/bin/python bench/compaction.py [--quick]

On ``shared/data/pi/large-session.jsonl`` (imported once into a fresh SQLite store), each
figure is the median of N runs (quick: 3, full: 9), all measured in this run:

- **baseline**: reading the working view alone (every visible message row after the newest
  coverage, page by page, as the policy reads it);
- **extractive summary**: bounding + digesting those rows and building the extractive summary
  (``continuity.continuation.summarize.summarize``), rows already read;
- **compaction + continue**: ``after_turn`` with the extractive summarizer (measure, read,
  summarize, fenced write) followed by ``build_continuation``, each run on a fresh copy of the
  store; next to ``build_continuation`` alone on the uncompacted session.

Ratios are against the baseline. Progress goes to stderr; figures print as a table and a JSON
line (``run(quick)`` returns them).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "fixtures"
    / "samples"
    / "pi"
    / "large-session.jsonl"
)
sys.path.insert(0, str(ROOT / "src"))  # bench the working tree

from continuity.continuation.compaction import _view_rows, after_turn, measure_view  # noqa: E402
from continuity.continuation.summarize import WorkingView, summarize  # noqa: E402
from continuity.continuation.summarize.extractive import ExtractiveSummarizer  # noqa: E402
from continuity.continuation.view import build_continuation  # noqa: E402
from continuity.formats.importer import import_paths  # noqa: E402
from continuity.store import open_store  # noqa: E402

BUDGET = 240_000


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _median(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, last = [], None
    for _ in range(runs):
        start = time.perf_counter()
        last = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), last


def _fresh(base: Path, work: Path, i: int) -> Path:
    target = work / f"run{i}.db"
    shutil.copyfile(base, target)
    return target


def run(quick: bool) -> dict[str, Any]:
    """Measure (see the module docstring) and return the figures (seconds, bytes, ratios)."""
    runs = 3 if quick else 9
    work = Path(tempfile.mkdtemp(prefix="continuity-bench-compaction-"))
    try:
        base = work / "base.db"
        with open_store(f"sqlite:///{base}") as store:
            report = import_paths(store, [DATA])
            key = report.files[0].session_key
            size = measure_view(store, key)
            read_s, rows = _median(lambda: list(_view_rows(store, key, size.covers)), runs)
            log(f"read view: {len(rows)} rows in {read_s * 1000:.1f} ms")
            view = lambda: WorkingView(size.summary, [], rows)  # noqa: E731
            summ_s, result = _median(
                lambda: summarize(
                    view(),
                    ExtractiveSummarizer(),
                    cancel=threading.Event(),
                    deadline=time.monotonic() + 60,
                    max_summary_bytes=BUDGET // 2,
                ),
                runs,
            )
            cont_s, _ = _median(lambda: build_continuation(store, key, budget_bytes=BUDGET), runs)
        both: list[float] = []
        after_bytes = used = 0
        for i in range(runs):
            with open_store(f"sqlite:///{_fresh(base, work, i)}") as store:
                start = time.perf_counter()
                lease = store.acquire_lease(key, "bench", 60)
                outcome = after_turn(
                    store,
                    key,
                    lease=lease,
                    summarizer=ExtractiveSummarizer(),
                    budget_bytes=BUDGET,
                    deadline=time.monotonic() + 60,
                )
                cont = build_continuation(store, key, budget_bytes=BUDGET)
                both.append(time.perf_counter() - start)
                assert outcome.status == "compacted", outcome.to_dict()
                after_bytes, used = outcome.view_bytes_after or 0, cont.used_bytes
        both_s = statistics.median(both)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "session_rows": len(rows),
        "view_bytes": size.total,
        "summary_bytes": len((result.summary or "").encode()),
        "view_bytes_after": after_bytes,
        "continuation_used_bytes": used,
        "read_view_s": read_s,
        "extractive_summary_s": summ_s,
        "continue_uncompacted_s": cont_s,
        "compaction_and_continue_s": both_s,
        "summary_vs_read": summ_s / read_s,
        "compaction_continue_vs_read": both_s / read_s,
        "runs": runs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 runs instead of 9")
    figures = run(parser.parse_args().quick)
    ms = lambda s: f"{s * 1000:8.1f} ms"  # noqa: E731
    print(
        f"large session: {figures['session_rows']} view rows, {figures['view_bytes']:,} view "
        f"bytes -> {figures['view_bytes_after']:,} after the checkpoint "
        f"(summary {figures['summary_bytes']:,} B; continuation uses "
        f"{figures['continuation_used_bytes']:,} B of {BUDGET:,})"
    )
    print(f"  baseline: read the view            {ms(figures['read_view_s'])}")
    print(
        f"  extractive summary (rows in hand)  {ms(figures['extractive_summary_s'])}  "
        f"{figures['summary_vs_read']:.2f}x baseline"
    )
    print(f"  continue, uncompacted              {ms(figures['continue_uncompacted_s'])}")
    print(
        f"  compaction + continue              {ms(figures['compaction_and_continue_s'])}  "
        f"{figures['compaction_continue_vs_read']:.2f}x baseline"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
