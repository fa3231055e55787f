"""Benchmark of the PostgreSQL backend next to SQLite, in the same run (issue 17 goal 8).

Run from the project root:

    .venv/bin/python bench/postgres.py --database-url postgresql+psycopg://postgres@127.0.0.1:5432/postgres
    .venv/bin/python bench/postgres.py --quick ...   # 4 MB corpus, 20,000-row session

``--database-url`` (or ``$CONTINUITY_BENCH_DATABASE_URL``) names a server and a database the
benchmark may connect to; it creates a fresh database of its own there (``continuity_bench_*``)
and drops it at the end, so nothing of yours is touched.

1. **Import, the command.** One corpus (``--mb``, default 20 MB: 1 MB files, half Claude Code,
   half pi, generated from the real samples with fresh ids, as in ``bench/scale.py``) is
   imported with ``continuity import DIR --home H --json`` in a child process, once into SQLite
   (the workspace default) and once into PostgreSQL (``CONTINUITY_DATABASE_URL``): wall time,
   MB/s (1 MB = 10^6 bytes).
2. **Append.** 1% of the bytes is appended as new lines continuing their sessions to a tenth of
   the files; the same command re-imports into both stores: wall time and its share of the
   fresh import.
3. **Continuation.** A session of ``--rows`` rows (default 100,000; the same generator as
   ``bench/run.py``) is written through ``Store.append`` into each backend; then
   ``build_continuation`` is timed on both in alternation (2 warm-ups + 20 runs, median).

Each row prints the PostgreSQL figure, the SQLite figure and the ratio PostgreSQL / SQLite (of
times: above 1 means PostgreSQL is slower). There is no goal beyond printing the ratio (the
issue asks for the figures); figures also go to ``bench/results/postgres.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

import orjson  # noqa: E402
import run as base  # noqa: E402  (session generator, continuation timing)
import scale  # noqa: E402  (corpus, append, the command in a child process)
from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from continuity.store import open_store  # noqa: E402

MB = 1_000_000


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class FreshDatabase:
    """A database created for this run on the server of ``url``, dropped on exit."""

    def __init__(self, url: str) -> None:
        server = make_url(url)
        if server.drivername in ("postgresql", "postgres"):
            server = server.set(drivername="postgresql+psycopg")
        if not server.drivername.startswith("postgresql"):
            raise SystemExit(f"--database-url {url}: not a PostgreSQL URL")
        self.name = f"continuity_bench_{uuid.uuid4().hex[:10]}"
        self.admin = create_engine(server, isolation_level="AUTOCOMMIT")
        self.url = server.set(database=self.name).render_as_string(hide_password=False)

    def __enter__(self) -> str:
        with self.admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{self.name}"'))
        return self.url

    def __exit__(self, *exc: object) -> None:
        with self.admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'))
        self.admin.dispose()


def import_command(corpus: Path, home: Path, tmp: Path, database_url: str | None) -> dict:
    """``continuity import CORPUS --home HOME --json`` in a child; PostgreSQL when given."""
    saved = os.environ.pop("CONTINUITY_DATABASE_URL", None)
    try:
        if database_url:
            os.environ["CONTINUITY_DATABASE_URL"] = database_url
        out = scale.run_command(["import", str(corpus), "--home", str(home), "--json"], tmp)
    finally:
        os.environ.pop("CONTINUITY_DATABASE_URL", None)
        if saved is not None:
            os.environ["CONTINUITY_DATABASE_URL"] = saved
    summary = orjson.loads(out.pop("stdout"))
    out["rows"] = summary["totals"]["imported"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--database-url",
        default=os.environ.get("CONTINUITY_BENCH_DATABASE_URL"),
        help="a PostgreSQL server (a fresh database is created there and dropped)",
    )
    ap.add_argument("--mb", type=int, default=20, help="corpus size in MB (default 20)")
    ap.add_argument("--rows", type=int, default=100_000, help="rows of the continued session")
    ap.add_argument("--quick", action="store_true", help="4 MB corpus, 20,000-row session")
    ap.add_argument("--tmp", help="folder for the corpus and workspaces (default: temp)")
    args = ap.parse_args(argv)
    if not args.database_url:
        ap.error("give --database-url (or set CONTINUITY_BENCH_DATABASE_URL)")
    if args.quick:
        args.mb, args.rows = 4, 20_000
    res: dict[str, Any] = {"mb": args.mb, "rows": args.rows}
    with (
        tempfile.TemporaryDirectory(prefix="continuity-pg-", dir=args.tmp) as d,
        FreshDatabase(args.database_url) as pg_import,
        FreshDatabase(args.database_url) as pg_cont,
    ):
        tmp = Path(d)
        log(f"building a {args.mb} MB corpus ...")
        corpus = tmp / "corpus"
        paths = scale.build_corpus(corpus, args.mb)
        nbytes = sum(p.stat().st_size for p in paths)
        res["corpus_bytes"] = nbytes
        for label, url in (("sqlite", None), ("postgresql", pg_import)):
            log(f"[{label}] fresh import ...")
            res[f"fresh_{label}"] = import_command(corpus, tmp / f"home-{label}", tmp, url)
        added = scale.append_lines(paths, nbytes // 100)
        res["appended_bytes"] = added
        for label, url in (("sqlite", None), ("postgresql", pg_import)):
            log(f"[{label}] re-import after appending {added / MB:.2f} MB ...")
            res[f"append_{label}"] = import_command(corpus, tmp / f"home-{label}", tmp, url)
        shutil.rmtree(corpus)

        sqlite_db = tmp / "cont.db"
        stores = {}
        for label, url in (("sqlite", f"sqlite:///{sqlite_db}"), ("postgresql", pg_cont)):
            log(f"[{label}] writing a {args.rows:,}-row session ...")
            with open_store(url) as store:
                t0 = time.perf_counter()
                base.generate_session(store, "bench-pg", args.rows, label=label)
                res[f"write_{label}_s"] = time.perf_counter() - t0
            stores[label] = url
        log("timing build_continuation on both ...")
        with open_store(stores["sqlite"]) as s1, open_store(stores["postgresql"]) as s2:
            timed = base.time_continuation(
                {"sqlite": s1, "postgresql": s2}, {"sqlite": "bench-pg", "postgresql": "bench-pg"}
            )
        res["continuation"] = {
            k: {"median_s": v["median_s"], "used_bytes": v["used_bytes"], "messages": v["messages"]}
            for k, v in timed.items()
        }

    def row(name: str, pg: float, lite: float, unit: str = "s") -> tuple[str, str, str, str]:
        if unit == "ms":
            return (name, f"{pg * 1000:.1f} ms", f"{lite * 1000:.1f} ms", f"{pg / lite:.2f}x")
        return (name, f"{pg:.2f} s", f"{lite:.2f} s", f"{pg / lite:.2f}x")

    fp, fs = res["fresh_postgresql"]["seconds"], res["fresh_sqlite"]["seconds"]
    ap_, as_ = res["append_postgresql"]["seconds"], res["append_sqlite"]["seconds"]
    cp = res["continuation"]["postgresql"]["median_s"]
    cs = res["continuation"]["sqlite"]["median_s"]
    rows = [
        row(f"fresh import of {nbytes / MB:.0f} MB (command)", fp, fs),
        ("  MB/s", f"{nbytes / MB / fp:.2f}", f"{nbytes / MB / fs:.2f}", ""),
        row(f"re-import after appending {added / MB:.2f} MB (1%)", ap_, as_),
        ("  share of the fresh import", f"{ap_ / fp:.1%}", f"{as_ / fs:.1%}", ""),
        row(
            f"write a {args.rows:,}-row session (Store.append)",
            res["write_postgresql_s"],
            res["write_sqlite_s"],
        ),
        row("build_continuation, median of 20", cp, cs, unit="ms"),
    ]
    if (
        res["fresh_postgresql"]["rows"] != res["fresh_sqlite"]["rows"]
        or res["append_postgresql"]["rows"] != res["append_sqlite"]["rows"]
        or res["continuation"]["postgresql"]["used_bytes"]
        != res["continuation"]["sqlite"]["used_bytes"]
    ):
        log(f"warning: the backends disagree: {json.dumps(res, default=str)[:2000]}")
    widths = [
        max(len(r[i]) for r in [*rows, ("measure", "PostgreSQL", "SQLite", "PG/SQLite")])
        for i in range(4)
    ]
    for r in [("measure", "PostgreSQL", "SQLite", "PG/SQLite"), *rows]:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    out = HERE / "results" / "postgres.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(res, indent=2, default=str))
    print(f"\nwrote {out.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
