"""Which database pages an import changed, by table (issue 17 goal 2: where an append's bytes go).

``snapshot(db, into)`` checkpoints the WAL of a SQLite workspace database and copies the file;
after the import, ``changed(db, snapshot)`` checkpoints again and compares the two files page
by page, naming each changed page by its table or index (SQLite's ``dbstat``). A page the
import changed is written at least twice: once to the WAL by every transaction that changed
it, once more to the database file by each checkpoint after that; so the bytes a re-import
wrote (``/proc/<pid>/io``) divided by the changed pages' bytes is the write amplification
of WAL and checkpointing, and the changed pages themselves are what the schema costs.

Used by ``bench/scale.py`` (rows of its table); runnable alone:

    .venv/bin/python bench/pages.py snapshot DB COPY     # before the import
    .venv/bin/python bench/pages.py changed DB COPY      # after it
"""

from __future__ import annotations

import collections
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any


def _open(db: Path) -> sqlite3.Connection:
    """``db`` opened read-write; never created (a mistyped path is an error, not a new file).
    Raises ``SystemExit`` naming the file when it is missing or not a database."""
    if not db.is_file():
        raise SystemExit(f"{db}: no such database file")
    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True)
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        con.close()
        raise SystemExit(f"{db}: not a SQLite database ({exc})") from None
    return con


def _checkpoint(db: Path) -> None:
    con = _open(db)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()


def snapshot(db: Path, into: Path) -> Path:
    """Checkpoint ``db`` and copy it to ``into``; returns ``into``."""
    _checkpoint(db)
    shutil.copyfile(db, into)
    return into


def changed(db: Path, before: Path) -> dict[str, Any]:
    """Pages of ``db`` that differ from ``before`` (after a checkpoint):
    ``{"page_bytes", "pages", "bytes", "by_name": {table or index: pages}}``, ``by_name``
    largest first; pages past the old end or no longer in use count under ``(new or free)``."""
    _checkpoint(db)
    if not before.is_file():
        raise SystemExit(f"{before}: no such snapshot (make it with: pages.py snapshot)")
    con = _open(db)
    try:
        size = con.execute("PRAGMA page_size").fetchone()[0]
        owner = dict(con.execute("SELECT pageno, name FROM dbstat"))
    finally:
        con.close()
    counts: collections.Counter[str] = collections.Counter()
    with open(before, "rb") as old, open(db, "rb") as new:
        page = 1
        while True:
            a, b = old.read(size), new.read(size)
            if not b:
                break
            if a != b:
                counts[owner.get(page, "(new or free)")] += 1
            page += 1
    total = sum(counts.values())
    return {
        "page_bytes": size,
        "pages": total,
        "bytes": total * size,
        "by_name": dict(counts.most_common()),
    }


def describe(result: dict[str, Any], top: int = 6) -> str:
    """``name pct, ...`` for the ``top`` names with the most changed pages."""
    total = max(1, result["pages"])
    return ", ".join(f"{name} {n / total:.0%}" for name, n in list(result["by_name"].items())[:top])


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("snapshot", "changed"):
        help_asked = len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help")
        print(__doc__, file=sys.stdout if help_asked else sys.stderr)
        raise SystemExit(0 if help_asked else 2)
    if sys.argv[1] == "snapshot":
        snapshot(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        r = changed(Path(sys.argv[2]), Path(sys.argv[3]))
        print(f"{r['pages']} pages of {r['page_bytes']} bytes changed ({r['bytes'] / 1e6:.1f} MB)")
        for name, n in r["by_name"].items():
            print(f"{n:8d}  {name}")
