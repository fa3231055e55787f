"""Benchmark of the lineage: the consolidation pass and the MEMORY.md render.

Run from the project root:  .venv/bin/python bench/lineage.py [--quick]

1. Consolidation of the real sessions of shared/data (12 sessions, 1,300 rows) into a fresh
   SQLite workspace: the whole pass (artifacts, manifest, memories, thread heads, DAG) per
   session, next to a baseline of the summary alone (``summarize`` with the extractive
   provider over the same rows), which the pass includes; ratio pass / summary.
2. Render time vs workspace size: N synthetic two-request sessions (quick 150, full 1,000),
   a third of them inside the 30-day window, consolidated; then ``render_memory_md`` (median
   of 5) next to a baseline that only reads every artifact file of ``memory/`` once; ratio
   render / read-all. Also prints the file's size and whether a second render is byte-identical.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "fixtures" / "samples"  # the copy of ../shared/data
sys.path.insert(0, str(ROOT / "src"))  # bench the working tree

from continuity.continuation.summarize import WorkingView, summarize  # noqa: E402
from continuity.continuation.summarize.extractive import ExtractiveSummarizer  # noqa: E402
from continuity.core.model import (  # noqa: E402
    Entry,
    EntryKind,
    Role,
    Run,
    RunStatus,
    Session,
    TextBlock,
)
from continuity.formats.importer import import_paths  # noqa: E402
from continuity.lineage import consolidation as co, memory_md as mm  # noqa: E402
from continuity.store import open_store  # noqa: E402
from continuity.transcripts.session_transcripts import sync_import, sync_session  # noqa: E402

NOW = datetime(2026, 9, 2, 12, 0, tzinfo=UTC)


def consolidation(tmp: Path) -> dict[str, Any]:
    home = tmp / "shared"
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        report = import_paths(store, [DATA])
        sync_import(store, report, home)
        keys = [k for k, _ in co.pending(store, home)]
        summarizer = ExtractiveSummarizer()
        t0 = time.perf_counter()
        for key in keys:
            rows = list(co._read(store, key).messages)
            summarize(
                WorkingView(None, [], rows),
                summarizer,
                cancel=threading.Event(),
                deadline=time.monotonic() + 60,
            )
        base = time.perf_counter() - t0
        t0 = time.perf_counter()
        done = co.run_pass(store, home=home, summarizer=summarizer, render=False, now=NOW)
        took = time.perf_counter() - t0
    return {
        "sessions": len(done.results),
        "pass_ms_per_session": 1000 * took / len(keys),
        "summary_only_ms_per_session": 1000 * base / len(keys),
        "ratio": took / base,
    }


def _session(store: Any, i: int, spacing: timedelta) -> None:
    key = f"bench-{i:05d}"
    start = NOW - timedelta(hours=1) - spacing * i
    store.upsert_session(
        Session(
            key=key,
            harness="claude-code",
            project=f"/home/dev/projects/p{i % 25}",
            started_at=start,
            ended_at=start + timedelta(minutes=3),
        )
    )
    rows = [
        Entry(
            EntryKind.MESSAGE,
            Role.USER,
            (
                TextBlock(
                    f"Fix the export of report {i} in src/report_{i}.py. Always keep the totals "
                    "rounded to cents."
                ),
            ),
            is_request=True,
        ),
        Entry(EntryKind.MESSAGE, Role.ASSISTANT, (TextBlock("Fixed the rounding."),)),
        Entry(
            EntryKind.MESSAGE,
            Role.USER,
            (TextBlock(f"Now add a test for report {i}"),),
            is_request=True,
        ),
        Entry(EntryKind.MESSAGE, Role.ASSISTANT, (TextBlock("Added the test."),)),
    ]
    for n, e in enumerate(rows):
        e.seq, e.timestamp = n, start + timedelta(minutes=n)
    store.append(key, rows)
    store.put_runs(
        [
            Run(f"{key}:0", key, "default", 0, RunStatus.FINISHED, 1),
            Run(f"{key}:2", key, "default", 2, RunStatus.FINISHED, 3),
        ]
    )
    sync_session(store, key, completed_at=start + timedelta(minutes=5), fsync=False)


def render(tmp: Path, sessions: int) -> dict[str, Any]:
    home = tmp / "render"
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        for i in range(sessions):  # spread over 90 days: a third within the ledger window
            _session(store, i, timedelta(days=90) / sessions)
        t0 = time.perf_counter()
        co.run_pass(store, home=home, summarizer=ExtractiveSummarizer(), render=False, now=NOW)
        pass_s = time.perf_counter() - t0
        files = sorted((home / "memory").glob("*.md"))
        reads, renders, texts = [], [], []
        for _ in range(5):
            t0 = time.perf_counter()
            for f in files:
                f.read_bytes()
            reads.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            texts.append(mm.render_memory_md(store, home=home, now=NOW))
            renders.append(time.perf_counter() - t0)
    result = texts[-1]
    return {
        "sessions": sessions,
        "artifacts": len(files),
        "pass_ms_per_session": 1000 * pass_s / sessions,
        "render_ms": 1000 * statistics.median(renders),
        "read_all_ms": 1000 * statistics.median(reads),
        "ratio": statistics.median(renders) / statistics.median(reads),
        "bytes": result.bytes,
        "lines": result.lines,
        "ledger_shown": result.sections["Session Ledger (Last 30 Days)"]["shown"],
        "ledger_total": result.sections["Session Ledger (Last 30 Days)"]["total"],
        "identical": len({t.text for t in texts}) == 1,
    }


def run(quick: bool) -> dict[str, Any]:
    """Both parts; figures as a dict."""
    with tempfile.TemporaryDirectory() as tmp:
        return {
            "consolidation": consolidation(Path(tmp)),
            "render": render(Path(tmp), 150 if quick else 1_000),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller render workspace")
    figures = run(parser.parse_args().quick)
    c, r = figures["consolidation"], figures["render"]
    print(
        f"consolidation: {c['sessions']} shared sessions, {c['pass_ms_per_session']:.1f} ms "
        f"per session (summary alone {c['summary_only_ms_per_session']:.1f} ms; "
        f"ratio {c['ratio']:.2f}x)"
    )
    print(
        f"render: {r['sessions']} sessions / {r['artifacts']} artifacts: "
        f"{r['render_ms']:.1f} ms (reading every artifact once {r['read_all_ms']:.1f} ms; "
        f"ratio {r['ratio']:.2f}x); MEMORY.md {r['bytes']:,} B, {r['lines']} lines, ledger "
        f"{r['ledger_shown']}/{r['ledger_total']} rows; identical on re-render: "
        f"{r['identical']}; pass {r['pass_ms_per_session']:.1f} ms per session"
    )
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
