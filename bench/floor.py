"""The storage floor of an import (issue 17 goal 1: where the time goes that is not ours).

Given a workspace that ``continuity import`` just filled, writes the same rows again into an
empty database with the same schema, with nothing of continuity in the loop: the ``sqlite3``
module's ``executemany`` over the tuples read back, in transactions of ``BATCH_LINES`` (2,000)
lines as the importer commits them, with the store's own settings (WAL, ``synchronous=FULL``),
plus the contentless FTS5 index of entries (fed the stored block JSON as its body: more text
than the importer indexes, so the floor is if anything slow) and a copy of the transcript JSONL
files, fsynced. What remains between this and the command is parsing, the readers, the field
checks, compression, checkpoints, transcripts and SQLAlchemy: our Python.

Used by ``bench/scale.py`` (a row of its table); runnable alone on a workspace:

    .venv/bin/python bench/floor.py HOME INPUT_BYTES
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BATCH_LINES = 2000  # formats.importer.BATCH_LINES: lines per import transaction
_SKIP = ("sqlite_", "alembic_version")
_SHADOW = ("data", "idx", "content", "docsize", "config")  # FTS5's own tables


def _schema(src: sqlite3.Connection) -> tuple[list[str], list[str]]:
    """(CREATE statements of tables, virtual tables and indexes; the plain tables to copy).
    FTS5 shadow tables are left to the virtual table that makes them."""
    rows = src.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
        "ORDER BY type = 'index', rowid"
    ).fetchall()
    shadows = {n for (kind, n, sql) in rows if kind == "table" and "VIRTUAL TABLE" in sql}
    tables_fts = {f"{v}_{part}" for v in shadows for part in _SHADOW}
    ddl, tables = [], []
    for kind, name, sql in rows:
        if name.startswith(_SKIP) or kind == "trigger":
            continue
        if name in tables_fts:
            continue
        ddl.append(sql)
        if kind == "table" and "VIRTUAL TABLE" not in sql:
            tables.append(name)
    return ddl, tables


def store_floor(home: Path, tmp: Path | None = None) -> dict[str, Any]:
    """Seconds to write ``home``'s database rows and transcript files again, continuity-free.

    Returns ``{"seconds", "db_seconds", "fts_seconds", "files_seconds", "rows", "tables"}``;
    ``rows`` counts the rows copied (every plain table) and the FTS rows indexed."""
    db = home / "continuity.db"
    src = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    ddl, tables = _schema(src)
    with tempfile.TemporaryDirectory(prefix="continuity-floor-", dir=tmp) as d:
        out_db = Path(d) / "floor.db"
        dst = sqlite3.connect(out_db, isolation_level=None)
        dst.execute("PRAGMA journal_mode=WAL")
        dst.execute("PRAGMA synchronous=FULL")
        for sql in ddl:
            dst.execute(sql)
        # Read everything first: the floor times the writes, not our reads of the source.
        data = {name: src.execute(f'SELECT * FROM "{name}"').fetchall() for name in tables}
        # the index is keyed by the row's number (revision 0031)
        fts_body = src.execute("SELECT entry_no, content FROM entries").fetchall()
        per_line = max(1, len(data.get("entries", ())) // BATCH_LINES or 1)
        nrows = 0
        t0 = time.perf_counter()
        for name, rows in data.items():
            if not rows:
                continue
            marks = ",".join("?" * len(rows[0]))
            step = max(1, len(rows) // per_line)
            for i in range(0, len(rows), step):
                dst.execute("BEGIN")
                dst.executemany(f'INSERT INTO "{name}" VALUES ({marks})', rows[i : i + step])
                dst.execute("COMMIT")
            nrows += len(rows)
        t1 = time.perf_counter()
        step = BATCH_LINES
        for i in range(0, len(fts_body), step):
            dst.execute("BEGIN")
            dst.executemany(
                "INSERT INTO entries_fts(rowid, body, tools) VALUES (?, ?, '')",
                fts_body[i : i + step],
            )
            dst.execute("COMMIT")
        nrows += len(fts_body)
        t2 = time.perf_counter()
        for f in (home / "memory").rglob("*.jsonl"):
            target = Path(d) / f.relative_to(home)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
            fd = os.open(target, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        t3 = time.perf_counter()
        dst.close()
    src.close()
    return {
        "seconds": t3 - t0,
        "db_seconds": t1 - t0,
        "fts_seconds": t2 - t1,
        "files_seconds": t3 - t2,
        "rows": nrows,
        "tables": len(tables),
    }


if __name__ == "__main__":  # pragma: no cover
    home, nbytes = Path(sys.argv[1]), int(sys.argv[2])
    got = store_floor(home)
    print(
        {k: round(v, 3) if isinstance(v, float) else v for k, v in got.items()},
        f"{nbytes / 1e6 / got['seconds']:.1f} MB/s of input",
    )
