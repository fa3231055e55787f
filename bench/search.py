"""Benchmark of ``continuity search`` (issue 19): latency at 1,000,000 entry rows next to a bare
FTS5 query on the same data, in the same run.

Run from the project root:  .venv/bin/python bench/search.py [--quick] [--rows N] [--tmp DIR]

1. A fresh SQLite store gets N entry rows (1,000,000; quick 100,000) in sessions of 500 rows,
   written through ``Store.append`` in batches of 5,000 (the import's path, so the index is
   written with the rows, as in use): a user row, then assistant rows with a tool call
   (``Bash`` with a command) and tool rows with a result of 40-200 words, repeating. Words are
   drawn with a Zipf-like law from 40 English function words and 6,000 made-up terms (seed 7),
   so common words match hundreds of thousands of rows. The write rate is printed.
2. 500 queries (quick 200) of 1-3 words from the same law. Timed, p50 and p99 of each query's
   wall time (median of 3 passes):
   - ``search``: ``continuity.browse.search.search(limit=20)``, what ``continuity search``
     does after opening the store: the index query, the hit rows and sessions, snippets,
     redaction;
   - ``index``: ``store.search_entries`` alone (ranking, filters);
   - ``bare FTS5``: ``SELECT rowid FROM entries_fts WHERE entries_fts MATCH ? ORDER BY rank
     LIMIT 20`` with the same phrases (the floor: SQLite's own ranked full-text query, which
     ranks every match);
   and the ratios search / bare. Also one filtered case (``--harness``) for the record.

Goal: search p99 < 50 ms on SQLite at 1,000,000 rows. Figures also go to
``bench/results/search.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results" / "search.json"
sys.path.insert(0, str(ROOT / "src"))  # bench the working tree

from sqlalchemy import text  # noqa: E402

from continuity.browse.search import search  # noqa: E402
from continuity.core.model import (  # noqa: E402
    Entry,
    EntryKind,
    Role,
    Session,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.store import fts, open_store  # noqa: E402
from continuity.store.search import EntryFilter  # noqa: E402
from continuity.transcripts.memories import query_terms  # noqa: E402

FUNCTION_WORDS = (
    "the a of to and in is for on that with as it by from at this be are was "
    "or not we an use uses when then after before into our its have has"
).split()
GOAL_P99_MS = 50.0
SESSION_ROWS = 500
BATCH = 5_000
REPS = 3


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Words:
    """Zipf-like words: function words often, made-up terms by rank (seed 7)."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        letters = "bcdfghjklmnprstvz"
        vowels = "aeiou"
        terms = set()
        while len(terms) < 6000:
            n = self.rng.randint(2, 4)
            terms.add("".join(self.rng.choice(letters) + self.rng.choice(vowels) for _ in range(n)))
        self.terms = sorted(terms)
        from itertools import accumulate

        self.cum = list(accumulate(1.0 / (i + 1) for i in range(len(self.terms))))

    def sentence(self, n: int) -> str:
        out = []
        for _ in range(n):
            if self.rng.random() < 0.35:
                out.append(self.rng.choice(FUNCTION_WORDS))
            else:
                out.append(self.rng.choices(self.terms, cum_weights=self.cum)[0])
        return " ".join(out)

    def query(self) -> str:
        return " ".join(
            self.rng.choices(self.terms, cum_weights=self.cum)[0]
            for _ in range(self.rng.randint(1, 3))
        )


def _rows(words: Words, start: int, n: int, t0: datetime) -> list[Entry]:
    rows: list[Entry] = []
    for i in range(start, start + n):
        phase = i % 4
        ts = t0 + timedelta(seconds=i)
        if phase == 0:
            e = Entry(
                EntryKind.MESSAGE,
                Role.USER,
                (TextBlock(words.sentence(words.rng.randint(8, 30))),),
                is_request=True,
            )
        elif phase == 1:
            e = Entry(
                EntryKind.MESSAGE,
                Role.ASSISTANT,
                (
                    TextBlock(words.sentence(words.rng.randint(10, 40))),
                    ToolCallBlock(f"c{i}", "Bash", {"command": words.sentence(6)}),
                ),
            )
        elif phase == 2:
            e = Entry(
                EntryKind.MESSAGE,
                Role.TOOL,
                (ToolResultBlock(f"c{i - 1}", False, words.sentence(words.rng.randint(40, 200))),),
            )
        else:
            e = Entry(
                EntryKind.MESSAGE,
                Role.ASSISTANT,
                (TextBlock(words.sentence(words.rng.randint(10, 60))),),
            )
        e.seq, e.timestamp = i, ts
        rows.append(e)
    return rows


def build(store: Any, total: int, words: Words) -> float:
    """Write ``total`` rows; returns rows/s."""
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    start = time.perf_counter()
    written = 0
    sessions = 0
    while written < total:
        key = f"bench-{sessions:05d}"
        harness = ("claude-code", "codex", "pi")[sessions % 3]
        store.upsert_session(Session(key=key, harness=harness, project=f"/w/p{sessions % 20}"))
        n = min(SESSION_ROWS, total - written)
        with store.batch():
            store.append(key, _rows(words, 0, n, t0 + timedelta(hours=sessions)))
        written += n
        sessions += 1
        if sessions % 200 == 0:
            log(f"  {written:,} rows ({written / (time.perf_counter() - start):,.0f} rows/s)")
    return written / (time.perf_counter() - start)


def timed(fn: Callable[[str], Any], queries: list[str]) -> dict[str, float]:
    """p50/p99 in ms of ``fn`` per query: each query's median over ``REPS`` passes."""
    per: list[list[float]] = [[] for _ in queries]
    for _ in range(REPS):
        for i, q in enumerate(queries):
            t = time.perf_counter()
            fn(q)
            per[i].append((time.perf_counter() - t) * 1000)
    med = sorted(statistics.median(x) for x in per)
    return {"p50_ms": med[len(med) // 2], "p99_ms": med[min(len(med) - 1, int(len(med) * 0.99))]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rows", type=int)
    parser.add_argument("--tmp")
    args = parser.parse_args()
    total = args.rows or (100_000 if args.quick else 1_000_000)
    nq = 200 if args.quick else 500
    words = Words()
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        url = f"sqlite:///{Path(tmp) / 'search.db'}"
        with open_store(url) as store:
            log(f"writing {total:,} rows")
            rate = build(store, total, words)
            log(f"{rate:,.0f} rows/s with the index")
            queries = [words.query() for _ in range(nq)]

            def bare(q: str) -> Any:
                match = " OR ".join(fts.fts5_phrase(t) for t in query_terms(q))
                with store.engine.connect() as conn:
                    return conn.execute(
                        text(
                            "SELECT rowid FROM entries_fts WHERE entries_fts "
                            "MATCH :q ORDER BY rank LIMIT 20"
                        ),
                        {"q": match},
                    ).all()

            def index(q: str) -> Any:
                return store.search_entries(query_terms(q), limit=20)

            def full(q: str) -> Any:
                return search(store, q, limit=20)

            def filtered(q: str) -> Any:
                return search(store, q, limit=20, filters=EntryFilter(harness="codex"))

            for fn in (bare, full):  # warm the page cache
                for q in queries[:50]:
                    fn(q)
            figures = {
                "rows": total,
                "write_rows_per_s": round(rate),
                "queries": nq,
                "bare_fts5": timed(bare, queries),
                "index": timed(index, queries),
                "search": timed(full, queries),
                "search_harness_filter": timed(filtered, queries),
            }
    s, b = figures["search"], figures["bare_fts5"]
    figures["ratio_p50"] = s["p50_ms"] / b["p50_ms"]
    figures["ratio_p99"] = s["p99_ms"] / b["p99_ms"]
    figures["goal_p99_ms"] = GOAL_P99_MS
    figures["goal_met"] = s["p99_ms"] < GOAL_P99_MS
    print(f"search at {total:,} entry rows ({nq} queries of 1-3 words, limit 20, SQLite)")
    print(f"  write with index     {rate:,.0f} rows/s")
    for name in ("bare_fts5", "index", "search", "search_harness_filter"):
        f = figures[name]
        print(f"  {name:<22} p50 {f['p50_ms']:7.2f} ms   p99 {f['p99_ms']:7.2f} ms")
    print(
        f"  search / bare FTS5   p50 {figures['ratio_p50']:.2f}x   p99 {figures['ratio_p99']:.2f}x"
    )
    print(f"  goal p99 < {GOAL_P99_MS:g} ms: {'met' if figures['goal_met'] else 'MISSED'}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
