"""Benchmark of team sync (issue 41 item 5, first figures): push throughput against a local
import of the same sessions, in the same run, and team search latency.

Run from the project root:

    .venv/bin/python bench/team.py --database-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres
    .venv/bin/python bench/team.py --quick ...   # 4 MB corpus

``--database-url`` (or ``$CONTINUITY_BENCH_DATABASE_URL``) names a server the benchmark may
connect to as a role that creates databases and roles; it creates a database
(``continuity_bench_team_*``), a member role and a login role of its own there and drops them
at the end.

1. **Import.** One corpus (``--mb``, default 20 MB of 1 MB session files, half Claude Code,
   half pi, generated from the real samples with fresh ids: ``bench/scale.py``) is imported
   with ``continuity import DIR --home H --json`` in a child process: wall time, MB/s
   (1 MB = 10^6 bytes of session files).
2. **Push.** Every project of the workspace is shared and ``continuity sync --json`` runs in a
   child process against the fresh team store, as the member role: wall time, MB/s of the
   same session files, rows pushed, and the ratio of the push's time to the import's (the
   same-run ratio the issue asks for). A second ``sync`` (nothing new) shows the cost of a
   sync with nothing to push.
3. **Team search.** ``--queries`` searches (words drawn from the pushed rows) through
   ``TeamStore.search`` as the member: median and p99 in ms.

Not measured yet (issue 41 item 5): 10 members x 100k rows, the daemon's sync lag.
Figures also go to ``bench/results/team.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import scale  # noqa: E402  (corpus, the command in a child process)
from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

MB = 1_000_000


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (module docstring); 0 on success."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--database-url", default=os.environ.get("CONTINUITY_BENCH_DATABASE_URL"))
    ap.add_argument("--mb", type=int, default=20)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args(argv)
    if not args.database_url:
        ap.error("give --database-url (or $CONTINUITY_BENCH_DATABASE_URL)")
    mb = 4 if args.quick else args.mb
    base = make_url(args.database_url)
    if base.drivername in ("postgresql", "postgres"):
        base = base.set(drivername="postgresql+psycopg")
    tag = uuid.uuid4().hex[:8]
    db, member, group = f"continuity_bench_team_{tag}", f"bench_ana_{tag}", f"bench_cm_{tag}"
    server = create_engine(base, isolation_level="AUTOCOMMIT")
    tmp = Path(tempfile.mkdtemp(prefix="continuity-bench-team-"))
    with server.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{db}"'))
        conn.execute(text(f'CREATE ROLE "{member}" LOGIN'))
    try:
        from continuity.store import open_store
        from continuity.team.identity import project_identity
        from continuity.team.remote import TeamStore
        from continuity.team.schema import add_member, init_team_store
        from continuity.team.settings import write_team

        owner_url = base.set(database=db)
        member_url = owner_url.set(username=member).render_as_string(hide_password=False)
        engine = create_engine(owner_url)
        init_team_store(engine, member_role=group)
        add_member(engine, member, "bench")
        _log(f"corpus: {mb} MB")
        files = scale.build_corpus(tmp / "corpus", mb)
        size = sum(p.stat().st_size for p in files)
        home = tmp / "home"
        imported = scale.run_command(["import", str(tmp / "corpus"), "--home", str(home)], tmp)
        with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
            folders = {s.project for s in store.list_sessions() if s.project}
        shared = sorted({project_identity(f, machine="bench").project for f in folders})
        write_team(home, {"url": member_url, "name": "bench", "machine": "bench", "shared": shared})
        pushed = scale.run_command(["sync", "--home", str(home), "--json"], tmp)
        report = json.loads(pushed["stdout"])
        again = scale.run_command(["sync", "--home", str(home), "--json"], tmp)
        with engine.connect() as conn:
            team_bytes = conn.execute(
                text("SELECT coalesce(sum(octet_length(row_json)), 0) FROM continuity_team.entries")
            ).scalar()
            words = [
                w
                for (body,) in conn.execute(
                    text("SELECT body FROM continuity_team.entries ORDER BY random() LIMIT 500")
                )
                for w in body.split()
                if w.isalpha() and len(w) > 4
            ]
        engine.dispose()
        team = TeamStore(member_url)
        rng = random.Random(7)
        times = []
        for _ in range(args.queries if words else 0):
            q = " ".join(rng.sample(words, 2))
            t0 = time.perf_counter()
            team.search(q, limit=20)
            times.append((time.perf_counter() - t0) * 1000)
        team.close()
        times.sort()
        figures: dict[str, Any] = {
            "corpus_mb": size / MB,
            "import_seconds": imported["seconds"],
            "import_mb_s": size / MB / imported["seconds"],
            "push_seconds": pushed["seconds"],
            "push_mb_s": size / MB / pushed["seconds"],
            "push_to_import_time_ratio": pushed["seconds"] / imported["seconds"],
            "rows_pushed": report["rows"],
            "sessions_pushed": report["sessions"],
            "team_row_json_mb": team_bytes / MB,
            "sync_nothing_new_seconds": again["seconds"],
            "search_queries": len(times),
            "search_median_ms": statistics.median(times) if times else None,
            "search_p99_ms": times[min(len(times) - 1, int(len(times) * 0.99))] if times else None,
        }
        for k, v in figures.items():
            print(f"{k:28} {v:.3f}" if isinstance(v, float) else f"{k:28} {v}")
        out = HERE / "results"
        out.mkdir(exist_ok=True)
        (out / "team.json").write_text(json.dumps(figures, indent=2) + "\n")
        return 0
    finally:
        with server.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))
            conn.execute(text(f'DROP ROLE IF EXISTS "{member}"'))
            conn.execute(text(f'DROP ROLE IF EXISTS "{group}"'))
        server.dispose()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
