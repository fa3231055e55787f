"""``bench/peers.py``'s goal-5 poll (issue 43): ``FirstHit`` times the first committed row a
search finds, not an uncommitted one, tolerates a database not yet made, and its query for our
workspace finds a row of a real import (so a schema change cannot leave it finding nothing)."""

from __future__ import annotations

import importlib.util
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.paths import SHARED_DATA

ROOT = Path(__file__).resolve().parents[2]


def _load_bench():
    spec = importlib.util.spec_from_file_location("bench_peers", ROOT / "bench" / "peers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


peers = _load_bench()
SQL = "SELECT rowid FROM f WHERE f MATCH ? LIMIT 1"


def _writer(db: Path, created: float, committed: float, marks: dict[str, float]) -> None:
    """Creates ``db`` (WAL, an FTS5 table) ``created`` seconds in, writes a row holding
    ``FIRST_WORD`` at once and commits it ``committed`` seconds in."""
    time.sleep(created)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(body)")
    conn.execute("BEGIN")
    conn.execute("INSERT INTO f (body) VALUES (?)", (f"the {peers.FIRST_WORD} server",))
    time.sleep(committed - created)
    conn.execute("COMMIT")
    marks["commit"] = time.perf_counter()
    conn.close()


def test_first_hit_times_the_commit_not_the_uncommitted_row(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    marks: dict[str, float] = {}
    watch = peers.FirstHit(db, SQL)
    t0 = time.perf_counter()
    writer = threading.Thread(target=_writer, args=(db, 0.2, 0.6, marks))
    writer.start()
    watch.start(t0)
    writer.join()
    time.sleep(0.3)
    watch.finish(time.perf_counter() - t0)
    commit = marks["commit"] - t0
    assert watch.seconds is not None
    # found after the commit (not while the row was uncommitted), within a poll or two
    assert commit <= watch.seconds <= commit + 0.25
    assert watch.polls >= 8  # polled before the file and the table existed, without failing


def test_first_hit_none_when_never_found_and_whole_import_when_found_at_the_end(
    tmp_path: Path,
) -> None:
    db = tmp_path / "x.db"
    never = peers.FirstHit(db, SQL)
    never.start(time.perf_counter())
    time.sleep(0.12)
    never.finish(0.12)
    assert never.seconds is None

    conn = sqlite3.connect(db)
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(body)")
    conn.execute("INSERT INTO f (body) VALUES ('nothing to find')")
    conn.commit()
    late = peers.FirstHit(db, SQL)  # an import so short the thread never polled
    assert not late.found()
    conn.execute("INSERT INTO f (body) VALUES (?)", (peers.FIRST_WORD,))
    conn.commit()
    late.finish(7.5)  # the last try after the exit finds it: searchable at the end
    assert late.seconds == 7.5
    conn.close()


def test_our_query_finds_a_row_of_a_real_import(tmp_path: Path) -> None:
    home = tmp_path / "home"
    exe = Path(sys.executable).with_name("continuity")
    sample = SHARED_DATA / "claude-code" / "short.jsonl"
    subprocess.run(
        [str(exe), "import", str(sample), "--no-embed", "--json", "--home", str(home)],
        check=True,
        capture_output=True,
    )
    watch = peers.FirstHit(home / "continuity.db", peers.OURS_FIRST_SQL)
    assert watch.found()
    # and not for a word the sample does not hold
    conn = sqlite3.connect(f"file:{home / 'continuity.db'}?mode=ro", uri=True)
    assert conn.execute(peers.OURS_FIRST_SQL, ('"zqxvwk"',)).fetchone() is None
    conn.close()
