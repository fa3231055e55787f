"""Benchmark of the memory store: recall latency at 100,000 memories and remember throughput.

Run from the project root:  .venv/bin/python bench/recall.py [--quick] [--memories N]

Issue 17 goals 6-7 first: 1,000 fixed 2-3 word queries of content words (30% with one function
word added), recall p50/p99 against a same-run baseline that is a real search (the bare FTS5
``SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(..) LIMIT 10``), and
exactness: recall's top 10 ids vs the full ranking (every match by bm25, ties by memory_id, as
recall orders them). Memories are bulk-loaded with ``insert_memory`` inside ``store.batch()``
(5,000 a transaction): ``remember`` one by one is too slow for 1,000,000.

1. A fresh SQLite store gets N memories (100,000; quick 10,000): sentences of 8-30 words drawn
   with a Zipf-like law from 40 English function words and 6,000 made-up terms (seed 7), a tag or
   two, a third of them with a source session. The first 3,000 go through ``remember`` one call
   (one transaction) each, timed; the same number of ``insert_memory`` calls, one transaction
   each, with the same rows re-hashed is the baseline. Then the rest are bulk-loaded through
   ``insert_memory`` in transactions of 5,000, and 2,000 sessions get a transcript (~2 KB each).
2. Recall: 1,000 queries (quick 300) of 1-3 words drawn from the same law (so common words that
   match tens of thousands of memories are included), ``recall(limit=10)``: p50 and p99 over
   the queries of each query's wall time (the median of 3 passes over all queries, to damp a
   busy machine), also with ``expand=True`` and with a ``tags`` filter. Stop words are dropped
   by ``recall`` (as PostgreSQL does). Baseline, measured the same way: a plain indexed lookup
   by content hash (``memory_by_hash``) of 1,000 stored memories. The process CPU time of plain
   recall is given too (``recall_cpu``): on a shared machine wall time also counts waiting.

3. Plain recall again with the BM25 candidate bound off (``store.fts.RANK_WINDOW`` above the
   memory count: every match ranked, as before the bound), with the share of queries whose 10
   results are the same ids in the same order as with the bound, and the 5 slowest queries of
   each run with their terms' match counts (what dominates the tail).

Goal: recall p99 < 10 ms on SQLite at 100,000 memories. Figures also go to
``bench/results/recall.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results" / "recall.json"
sys.path.insert(0, str(ROOT / "src"))  # bench the working tree

from sqlalchemy import text  # noqa: E402

from continuity.core.model import Memory  # noqa: E402
from continuity.store import fts, open_store  # noqa: E402
from continuity.transcripts.memories import memory_id, query_terms, recall, remember  # noqa: E402
from continuity.transcripts.session_transcripts import content_hash, put_transcript  # noqa: E402

FUNCTION_WORDS = (
    "the a of to and in is for on that with as it by from at this be are was "
    "or not we an use uses when then after before into our its have has"
).split()
GOAL_P99_MS = 10.0
REMEMBER_CALLS = 3_000
REPS = 3


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Corpus:
    """Deterministic sentences, tags and queries (Zipf-like word frequencies)."""

    def __init__(self, seed: int = 7, terms: int = 6_000) -> None:
        self.rng = random.Random(seed)
        letters = "abcdefghijklmnopqrstuvwxyz"
        made_up = {
            "".join(self.rng.choice(letters) for _ in range(self.rng.randint(4, 10)))
            for _ in range(terms * 2)
        }
        self.words = list(FUNCTION_WORDS) + sorted(made_up)[:terms]
        self.weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(self.words))]
        self.tags = ["export", "bug", "parser", "deploy", "decision", "ops", "api", "db"]

    def words_of(self, n: int) -> list[str]:
        return self.rng.choices(self.words, self.weights, k=n)

    def sentence(self, i: int) -> str:
        return " ".join(self.words_of(self.rng.randint(8, 30))) + f" (note {i})."

    def query(self) -> str:
        return " ".join(self.words_of(self.rng.randint(1, 3)))

    def real_query(self) -> str:
        """2-3 words, at most one of them a function word (issue 17 goal 6: a query set that
        is not mostly stop words); content words drawn with the same Zipf-like law."""
        content = self.words[len(FUNCTION_WORDS) :]
        words = self.rng.choices(
            content, self.weights[len(FUNCTION_WORDS) :], k=self.rng.randint(2, 3)
        )
        if self.rng.random() < 0.3:
            words.insert(self.rng.randrange(len(words)), self.rng.choice(FUNCTION_WORDS))
        return " ".join(words)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def latencies(
    fn: Callable[[Any], Any],
    items: list[Any],
    reps: int = REPS,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """Time of ``fn(item)`` in ms on ``clock`` (default: wall) for each item: the median of
    ``reps`` passes over all items (passes, not back-to-back repeats, so caches are not warmed
    per item)."""
    times: list[list[float]] = [[] for _ in items]
    for _ in range(reps):
        for i, item in enumerate(items):
            start = clock()
            fn(item)
            times[i].append((clock() - start) * 1000)
    return [statistics.median(t) for t in times]


def _memory(corpus: Corpus, i: int, now: datetime) -> Memory:
    text = corpus.sentence(i)
    digest = content_hash(text)
    tags = tuple(corpus.rng.sample(corpus.tags, corpus.rng.randint(1, 2)))
    source = f"sess-{i % 2000}" if i % 3 == 0 else None
    return Memory(
        memory_id("default", digest),
        text,
        digest,
        "fact",
        tags,
        round(corpus.rng.random(), 2),
        source,
        "default",
        now,
    )


def load(store: Any, corpus: Corpus, n: int) -> dict[str, float]:
    """Fill the store; returns remember and baseline throughput (calls/s)."""
    now = datetime.now(UTC)
    sample = [_memory(corpus, i, now) for i in range(REMEMBER_CALLS)]
    start = time.perf_counter()
    for m in sample:
        remember(store, m.content, tags=m.tags, importance=m.importance, source_id=m.source_id)
    remember_s = time.perf_counter() - start
    start = time.perf_counter()
    dedup = [remember(store, m.content) for m in sample[:1000]]
    dedup_s = time.perf_counter() - start
    assert all(d.deduped for d in dedup)
    baseline = [
        Memory(
            memory_id("bench", m.content_hash),
            m.content,
            m.content_hash,
            m.type,
            m.tags,
            m.importance,
            m.source_id,
            "bench",
            now,
        )
        for m in sample
    ]
    start = time.perf_counter()
    for m in baseline:
        store.insert_memory(m)  # one transaction each, no validation or redaction
    insert_s = time.perf_counter() - start
    log(f"remembered {REMEMBER_CALLS:,} in {remember_s:.2f} s; bulk-loading to {n:,}")
    rest = (_memory(corpus, i, now) for i in range(REMEMBER_CALLS, n))
    while True:
        chunk = list(islice(rest, 5_000))
        if not chunk:
            break
        with store.batch():
            for m in chunk:
                store.insert_memory(m)
    for s in range(2_000):
        put_transcript(
            store,
            f"sess-{s}",
            "\n\n".join(
                f"User: {corpus.sentence(s)}\n\nTool call: Bash\n  {{}}\n\nAssistant: "
                f"{corpus.sentence(s + 1)}"
                for _ in range(6)
            ),
        )
    return {
        "remember_per_s": REMEMBER_CALLS / remember_s,
        "remember_dedup_per_s": 1000 / dedup_s,
        "baseline_insert_per_s": REMEMBER_CALLS / insert_s,
    }


def figures(times: list[float]) -> dict[str, float]:
    return {
        "p50_ms": statistics.median(times),
        "p99_ms": percentile(times, 99),
        "max_ms": max(times),
    }


def slowest(store: Any, qs: list[str], times: list[float], n: int = 5) -> list[dict[str, Any]]:
    """The ``n`` slowest queries with each searched term's match count."""
    out = []
    with store._conn() as conn:
        for ms, q in sorted(zip(times, qs, strict=True), reverse=True)[:n]:
            counts = [
                conn.execute(
                    text("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH :q"),
                    {"q": fts.fts5_phrase(t)},
                ).scalar()
                for t in query_terms(q)
            ]
            out.append({"ms": round(ms, 3), "query": q, "matches_per_term": counts})
    return out


_BASELINE = text(
    "SELECT rowid FROM memories_fts WHERE memories_fts MATCH :q "
    "ORDER BY bm25(memories_fts) LIMIT 10"
)
_FULL = text(
    "SELECT m.memory_id FROM memories_fts JOIN memories m ON m.memory_id = "
    "memories_fts.memory_id WHERE memories_fts MATCH :q AND m.agent_id = 'default' "
    "ORDER BY bm25(memories_fts), m.memory_id LIMIT 10"
)


def measure_real(store: Any, corpus: Corpus, queries: int) -> dict[str, Any]:
    """Issue 17 goals 6-7: recall vs the bare FTS5 search on the same database (same-run
    baseline), and exactness vs the full BM25 ranking (every match, ties by memory_id)."""
    qs = [corpus.real_query() for _ in range(queries)]
    matches = [" OR ".join(fts.fts5_phrase(t) for t in query_terms(q)) for q in qs]
    with store._conn() as conn:
        full = [list(conn.execute(_FULL, {"q": m}).scalars()) for m in matches]
        base = lambda m: conn.execute(_BASELINE, {"q": m}).all()  # noqa: E731
        for m in matches[:50]:
            base(m)
        baseline = latencies(base, matches)
    got = [[r.id for r in recall(store, q, limit=10).results] for q in qs]
    plain = latencies(lambda q: recall(store, q, limit=10), qs)
    exact = sum(a == b for a, b in zip(got, full, strict=True)) / len(qs)
    return {
        "real_queries": len(qs),
        "real_recall": figures(plain),
        "baseline_fts5_search": figures(baseline),
        "exact_top10": exact,
        "real_examples": qs[:5],
        "inexact_examples": [q for q, a, b in zip(qs, got, full, strict=True) if a != b][:5],
    }


def measure(store: Any, corpus: Corpus, queries: int) -> dict[str, Any]:
    qs = [corpus.query() for _ in range(queries)]
    for q in qs[:50]:  # warm the page cache
        recall(store, q)
    hits = [len(recall(store, q).results) for q in qs]
    bounded = [[r.id for r in recall(store, q).results] for q in qs]
    plain = latencies(lambda q: recall(store, q, limit=10), qs)
    cpu = latencies(lambda q: recall(store, q, limit=10), qs, clock=time.process_time)
    expand = latencies(lambda q: recall(store, q, limit=10, expand=True), qs)
    tagged = latencies(lambda q: recall(store, q, limit=10, filters={"tags": ["export"]}), qs)
    sample = store.search_memories(["note"], agent_id="default", limit=1000)
    lookup = latencies(
        lambda h: store.memory_by_hash("default", h), [m.content_hash for m, _ in sample]
    )
    window, fts.RANK_WINDOW = fts.RANK_WINDOW, 10**9
    try:
        exact_ids = [[r.id for r in recall(store, q).results] for q in qs]
        exact = latencies(lambda q: recall(store, q, limit=10), qs)
        exact_slowest = slowest(store, qs, exact)
    finally:
        fts.RANK_WINDOW = window
    return {
        "queries": len(qs),
        "mean_hits": statistics.mean(hits),
        "rank_window": window,
        "recall": figures(plain),
        "recall_cpu": figures(cpu),
        "recall_expand": figures(expand),
        "recall_tag_filter": figures(tagged),
        "baseline_hash_lookup": figures(lookup),
        "recall_unbounded": figures(exact),
        "same_top10_as_unbounded": sum(a == b for a, b in zip(bounded, exact_ids, strict=True))
        / len(qs),
        "slowest": slowest(store, qs, plain),
        "slowest_unbounded": exact_slowest,
    }


def run(quick: bool, memories: int | None = None) -> dict[str, Any]:
    """Run the benchmark; returns the figures (see the module docstring)."""
    n, queries = (10_000, 300) if quick else (1_000_000, 1_000)
    n = memories or n
    corpus = Corpus()
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "bench.db") as store:
        throughput = load(store, corpus, n)
        log(f"{store.count_memories('default'):,} memories; measuring recall")
        real = measure_real(store, corpus, queries)
        log(
            f"real queries: recall p99 {real['real_recall']['p99_ms']:.2f} ms, "
            f"exact {real['exact_top10']:.1%}"
        )
        latency = measure(store, corpus, queries)
    out = {"memories": n, **throughput, **latency, **real}
    out["real_recall_p99_vs_fts5_p99"] = (
        out["real_recall"]["p99_ms"] / out["baseline_fts5_search"]["p99_ms"]
    )
    out["goal6_met"] = out["real_recall"]["p99_ms"] < GOAL_P99_MS and out["exact_top10"] == 1.0
    out["recall_p99_vs_lookup_p99"] = (
        out["recall"]["p99_ms"] / out["baseline_hash_lookup"]["p99_ms"]
    )
    out["remember_vs_baseline_insert"] = out["remember_per_s"] / out["baseline_insert_per_s"]
    out["goal_recall_p99_ms"] = GOAL_P99_MS
    out["goal_met"] = out["recall"]["p99_ms"] < GOAL_P99_MS
    out["load_average"] = os.getloadavg()
    return out


def _print(f: dict[str, Any]) -> None:
    print(
        f"issue 17 goal 6: {f['real_queries']:,} fixed 2-3 word queries (e.g. "
        f"{f['real_examples'][:2]}) at {f['memories']:,} memories"
    )
    for name in ("real_recall", "baseline_fts5_search"):
        x = f[name]
        print(f"  {name:22} p50 {x['p50_ms']:7.3f} ms   p99 {x['p99_ms']:7.3f} ms")
    print(
        f"  recall p99 / bare FTS5 search p99: {f['real_recall_p99_vs_fts5_p99']:.1f}x; "
        f"same top 10 as full BM25 ranking: {f['exact_top10']:.1%} "
        f"(inexact e.g. {f['inexact_examples'][:3]})"
    )
    print(
        f"  goal p99 < {GOAL_P99_MS:.0f} ms and 100% exact: "
        f"{'met' if f['goal6_met'] else 'NOT met'}"
    )
    print(
        f"memories: {f['memories']:,} (SQLite), queries: {f['queries']:,}, "
        f"mean hits/query: {f['mean_hits']:.1f}, RANK_WINDOW {f['rank_window']:,}, "
        f"load average {f['load_average'][0]:.2f}"
    )
    for name in (
        "recall",
        "recall_cpu",
        "recall_expand",
        "recall_tag_filter",
        "baseline_hash_lookup",
        "recall_unbounded",
    ):
        x = f[name]
        print(
            f"  {name:22} p50 {x['p50_ms']:7.3f} ms   p99 {x['p99_ms']:7.3f} ms   "
            f"max {x['max_ms']:7.3f} ms"
        )
    print(f"  same 10 results as unbounded: {f['same_top10_as_unbounded']:.1%} of queries")
    for name in ("slowest", "slowest_unbounded"):
        print(
            f"  {name}: "
            + "; ".join(f"{s['query']!r} {s['ms']:.1f} ms {s['matches_per_term']}" for s in f[name])
        )
    print(
        f"  recall p99 / hash-lookup p99: {f['recall_p99_vs_lookup_p99']:.1f}x   "
        f"goal p99 < {GOAL_P99_MS:.0f} ms: {'met' if f['goal_met'] else 'MISSED'}"
    )
    print(
        f"  remember: {f['remember_per_s']:,.0f}/s (deduplicated: "
        f"{f['remember_dedup_per_s']:,.0f}/s); baseline insert_memory: "
        f"{f['baseline_insert_per_s']:,.0f}/s; ratio {f['remember_vs_baseline_insert']:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 memories, 300 queries")
    parser.add_argument(
        "--memories",
        type=int,
        default=None,
        help="memory count (default 1,000,000; --quick 10,000)",
    )
    args = parser.parse_args()
    figures = run(args.quick, args.memories)
    _print(figures)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
