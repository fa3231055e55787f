"""continuity next to agentsview, side by side on one tree of Claude Code sessions (issue 43).

Run from the project root:  .venv/bin/python bench/peers.py [--mb 320] [--rounds 3]
[--skip startup,search] [--tree DIR] [--tmp DIR] [--fresh-only WORKERS]

One command: it installs agentsview (``AGENTSVIEW_VERSION``, the Go archiver with SQLite FTS,
from PyPI) into a cached venv, builds a tree of ``--mb`` MB of Claude Code sessions from the
real sessions of ``../shared/data`` (``bench/run.py``'s generator: the real lines repeated
with fresh ids and later times, 1 MB per file, in ``PROJECTS`` project folders), then runs
both tools on it ``--rounds`` times (the median round is reported) and prints every goal of
the issue with its same-run ratio:

1. **fresh import**: ``continuity import TREE --no-embed`` against ``agentsview sync`` (its
   one-shot mode, ``AGENTSVIEW_NO_DAEMON=1``), each into an empty workspace: wall seconds,
   MB/s, CPU seconds (user + system of the child, from ``wait4``), peak RSS. Goal: our
   speed >= 1.0x theirs. ``--no-embed`` because agentsview embeds only on request
   (``agentsview embeddings build``); our embedding pass (the ``semantic`` extra, done by the
   daemon in the background) is timed on its own line, not judged.
2. **store / input**: every byte of the workspace (database, WAL, the seed's transcript JSONL)
   against agentsview's data folder, each over the tree's bytes. Goal: ours <= 1.0x input.
   Also printed, not judged: our workspace after the embedding pass (the vectors of search
   by meaning, which the daemon adds in the background; agentsview embeds only on request).
3. **start-up**: ``sessions``, ``show``, ``continue``, ``search``, ``recall`` as processes
   (median of ``STARTS``) next to ``python -c pass``, on this tree's workspace (printed, not
   judged: the goal, each <= 100 ms and <= 6x, is on the sample workspace of the quick start,
   which ``bench/startup.py`` measures). And
   **search as a command**: p50 / p99 of ``continuity search Q`` over ``QUERIES`` against
   ``agentsview session search --fts Q`` (a client of its running daemon, as it must be: its
   search has no one-shot mode), ours both as a client of our running daemon (``continuity
   serve``; the command sends the query to it) and one-shot, after the import's embedding
   pass. Goal: our p50 <= theirs. Each daemon's first answer after it started is timed
   apart (``FIRST_QUERY``; ours loads the embedding model and the vectors then) and printed,
   not judged; the p50 / p99 are of the answers after it.
4. **re-import**: unchanged (goal: <= theirs), and after appending 1 % of the tree's bytes
   to every tenth file (goal: <= 2 % of our fresh import and <= theirs).
5. **first searchable session** (goal 5, with the figures above at 3 GB: ``--mb 3000``):
   seconds from the start of each tool's fresh import (goal 1's runs, the same clock) until a
   search would find a session of the tree, and the ratio; not judged (the issue sets no
   bound). While each import runs, a thread of this process opens the tool's database
   read-only (SQLite ``mode=ro``) every ``POLL_S`` (50 ms) and runs the query of that tool's
   own search for ``FIRST_WORD`` (``OURS_FIRST_SQL``: ``entries_fts`` joined to the row and
   its session, as ``store.search`` does; ``THEIRS_FIRST_SQL``: agentsview's
   ``messages_fts`` joined to ``messages`` and ``sessions``, not deleted, not a system
   message, as its ``Search``); not created yet, no table yet and "database is locked" count
   as not yet. Both databases are in WAL mode, so the reader never blocks the writer; a poll
   costs 0.6 ms (ours) and 1.9 ms (theirs) of this process's CPU, and stops at the first hit.
   Not the commands themselves: ``continuity search --mode words`` one-shot costs 0.8 CPU s
   and 1.2 s (it loads SQLAlchemy and the store), so polling it every 50 ms would take a core
   from the import it measures, and agentsview's ``session search`` has no one-shot mode (it
   is a client of its daemon, which would sync the tree itself). Checked by hand once
   instead: at the poll's first hit on a 200 MB tree (1.33 s), ``continuity search phoenix
   --mode words`` run then, while the import still ran, found a row (exit 0).

Each round works on its own copy of the tree (the append changes it), written out to disk
(``os.sync``) before the timed imports, and removed with both workspaces once measured (goal
3 is measured on round 0's before they go), so a run holds at most the tree, one copy and two
workspaces: about 5x the tree (``DISK_PER_INPUT``; checked before it starts). agentsview reads
only the tree: every other harness folder it knows is pointed at an empty folder, and
``HOME`` is a temp folder, so neither tool sees this machine's own sessions.

**At 3 GB** (issue 43 goal 5: a year of a heavy user's history)::

    .venv/bin/python bench/peers.py --mb 3000 --rounds 1 --skip search --tree ~/peers-tree-3000

``--skip startup,search`` leaves out parts of goal 3: ``startup`` the read commands as
processes, ``search`` the search command's latency with the embedding pass before it and the
store with the vectors (the pass embeds about 570 rows a MB, some 1.7 million at 3 GB: about
half an hour here). ``--tree DIR`` builds the tree in DIR and keeps it, and a later run with
the same ``--mb`` uses it again (each round still imports its own copy). The import's own
progress bar is drawn only on a terminal (``_ImportBars``), and the benchmark captures the
output, so it is not in the timed runs; bench/README.md says how it was checked.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as base  # noqa: E402  (the corpus generator)
from scale import CHILD_ENV, append_lines  # noqa: E402  (the 1 % append)

AGENTSVIEW_VERSION = "0.46.1"
CACHE = Path(os.environ.get("CONTINUITY_BENCH_CACHE", Path.home() / ".cache" / "continuity-bench"))
MB = 1_000_000
FILE_BYTES = 1_000_000
PROJECTS = 8
STARTS = 7
QUERIES = [
    "phoenix server",
    "migration",
    "failing test",
    "database connection",
    "mix deps",
    "error",
    "config",
    "README",
    "timeout",
    "elixir",
]
#: The word goal 5's poll searches for (in every file of the tree: the shared sessions'
#: Phoenix project, 34 rows a 1 MB file) and how often it polls, in seconds.
FIRST_WORD = "phoenix"
#: The query each daemon answers first, timed apart from ``QUERIES`` (``search_latency``).
FIRST_QUERY = "deploy"
POLL_S = 0.05
#: Goal 5's poll of each tool's database (``FirstHit``): one row a search of ``FIRST_WORD``
#: finds, with the joins and conditions of that tool's own search. Ours:
#: ``store.search.EntrySearchMixin._entries_fts5`` (``entries_fts`` joined to its row and the
#: row's session). agentsview 0.46.1: ``internal/db/search.go`` ``Search`` (``messages_fts``
#: joined to ``messages`` and ``sessions``, not deleted, not a system message).
OURS_FIRST_SQL = (
    "SELECT e.session_key FROM entries_fts JOIN entries AS e ON e.entry_no = entries_fts.rowid "
    "JOIN sessions AS s ON s.session_key = e.session_key WHERE entries_fts MATCH ? LIMIT 1"
)
THEIRS_FIRST_SQL = (
    "SELECT m.session_id FROM messages_fts JOIN messages AS m ON m.id = messages_fts.rowid "
    "JOIN sessions AS s ON s.id = m.session_id WHERE messages_fts MATCH ? "
    "AND s.deleted_at IS NULL AND m.is_system = 0 LIMIT 1"
)
#: agentsview's harness folder variables (``agentsview --help``), all pointed at an empty folder
#: except ``CLAUDE_PROJECTS_DIR``.
AV_DIRS = [
    "CODEX_SESSIONS_DIR",
    "COPILOT_DIR",
    "GEMINI_DIR",
    "OPENCODE_DIR",
    "CLINE_DIR",
    "CURSOR_PROJECTS_DIR",
    "IFLOW_DIR",
    "AMP_DIR",
    "ZED_DIR",
    "QWEN_PROJECTS_DIR",
    "OMP_DIR",
]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def agentsview() -> Path:
    """The agentsview binary, installed once into ``CACHE`` from PyPI at ``AGENTSVIEW_VERSION``."""
    venv = CACHE / f"agentsview-{AGENTSVIEW_VERSION}"
    exe = venv / "bin" / "agentsview"
    if not exe.exists():
        log(f"installing agentsview {AGENTSVIEW_VERSION} from PyPI into {venv} ...")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", f"agentsview=={AGENTSVIEW_VERSION}"],
            check=True,
        )
    return exe


def build_tree(root: Path, mb: int) -> int:
    """``mb`` MB of Claude Code session files under ``root/projects/<project>/``; its bytes."""
    ids = base._Ids(43)
    templates, sids = base._claude_templates()
    files = max(1, mb * MB // FILE_BYTES)
    for f in range(files):
        folder = root / "projects" / f"-home-dev-project{f % PROJECTS}"
        folder.mkdir(parents=True, exist_ok=True)
        base.write_claude(folder, templates, sids, ids, FILE_BYTES, start=f)
    return tree_bytes(root)


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def the_tree(root: Path, mb: int, keep: Path | None) -> Path:
    """The tree the rounds copy: built under ``root``, or under ``keep`` (``--tree``) when
    given and used again as it is when it already holds one of ``mb`` MB (within 5 %; another
    size ends the benchmark rather than be measured under the wrong name). Written out to
    disk (``os.sync``) before anything is timed."""
    tree = keep or root / "tree"
    if keep is not None and (keep / "projects").is_dir():
        size = tree_bytes(keep)
        if abs(size / MB - mb) > 0.05 * mb:
            raise SystemExit(f"{keep} holds a {size / MB:.0f} MB tree, not {mb} MB: remove it")
        log(f"using the {size / MB:.0f} MB tree in {keep}")
        return keep
    log(f"building a {mb} MB tree of Claude Code sessions in {tree} ...")
    t0 = time.perf_counter()
    build_tree(tree, mb)
    os.sync()
    log(f"  built in {time.perf_counter() - t0:.0f} s")
    return tree


#: Disk a run holds at its peak, in bytes per byte of the tree: the tree, one round's copy,
#: our workspace (1.3x; 1.6x with the vectors) and agentsview's (0.85x), with room for WALs.
DISK_PER_INPUT = 5.0


def check_disk(folder: Path, mb: int) -> None:
    """End the benchmark before it starts when ``folder``'s file system has less free space
    than a run of ``mb`` MB holds at its peak (``DISK_PER_INPUT``)."""
    free = shutil.disk_usage(folder).free
    need = int(DISK_PER_INPUT * mb * MB)
    log(
        f"disk: {free / 1e9:.1f} GB free in {folder}, a {mb} MB run holds up to {need / 1e9:.1f} GB"
    )
    if free < need:
        raise SystemExit(f"not enough free disk in {folder}: give --tmp a larger file system")


def copy_tree(tree0: Path, dest: Path) -> Path:
    """A copy of ``tree0`` at ``dest`` (a round's own: the append changes it), written out to
    disk (``os.sync``) so its writeback does not fall in a timed import."""
    shutil.copytree(tree0, dest)
    os.sync()
    return dest


def drop(*paths: Path) -> None:
    """Remove a round's tree copy and workspaces once measured (at 3 GB each round holds
    about 10 GB: the copy, our workspace at 1.3x, agentsview's at 0.85x)."""
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


class FirstHit:
    """Goal 5: seconds from a fresh import's start until a search of ``FIRST_WORD`` would find
    a session in the database at ``db`` (SQLite, written by the import being timed).

    A thread opens the file read-only (``mode=ro`` URI, a new connection each time, no busy
    wait) every ``POLL_S`` seconds and runs ``sql`` (one parameter: the FTS5 phrase); a file
    not yet created, a table not yet made and "database is locked" count as not yet. Both
    tools' databases are in WAL mode, so the reader never blocks the writer. It stops at the
    first row found; ``seconds`` is then that time less the ``t0`` given to ``start``
    (``perf_counter``), to within ``POLL_S`` plus one query. ``finish`` (after the import
    exited, with its wall seconds) tries once more when nothing was found: a row there sets
    ``seconds`` to the whole import (searchable only at its end); none leaves it None."""

    def __init__(self, db: Path, sql: str) -> None:
        self.db = db
        self.sql = sql
        self.seconds: float | None = None
        self.polls = 0
        self._t0 = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def found(self) -> bool:
        """One poll: whether the query finds a row now."""
        self.polls += 1
        try:
            conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=0)
        except sqlite3.Error:
            return False
        try:
            return conn.execute(self.sql, (f'"{FIRST_WORD}"',)).fetchone() is not None
        except sqlite3.Error:  # no such table, database is locked, ...
            return False
        finally:
            conn.close()

    def start(self, t0: float) -> None:
        self._t0 = t0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            if self.found():
                self.seconds = time.perf_counter() - self._t0
                return
            self._stop.wait(POLL_S)

    def finish(self, wall: float) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.seconds is None and self.found():
            self.seconds = wall


def timed(
    cmd: list[str],
    env: dict[str, str],
    cwd: Path | None = None,
    ok: tuple[int, ...] = (0,),
    watch: FirstHit | None = None,
) -> dict[str, Any]:
    """Run ``cmd``; wall seconds, CPU seconds (user + system) and peak RSS (MiB) of the child,
    and with ``watch`` (polled while it runs, from the same start) ``first``: goal 5's seconds
    to the first searchable session, None when none was. An exit status outside ``ok`` ends
    the benchmark with the child's stderr."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    if watch is not None:
        watch.start(t0)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if watch is not None:
        watch.finish(wall)
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    if code not in ok:
        log(err.decode(errors="replace")[-3000:])
        raise SystemExit(f"{' '.join(cmd[:3])} ... exited {code}")
    out: dict[str, Any] = {
        "seconds": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
    }
    if watch is not None:
        out["first"] = watch.seconds
    return out


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


class Peer:
    """agentsview over one data folder and one tree (the environment that isolates it)."""

    def __init__(self, exe: Path, data: Path, tree: Path, home: Path) -> None:
        empty = home / "empty"
        empty.mkdir(parents=True, exist_ok=True)
        self.exe = str(exe)
        self.data = data
        self.env = {
            **os.environ,
            "HOME": str(home),
            "AGENTSVIEW_DATA_DIR": str(data),
            "CLAUDE_PROJECTS_DIR": str(tree / "projects"),
            **dict.fromkeys(AV_DIRS, str(empty)),
        }

    def sync(self, first: bool = False) -> dict[str, Any]:
        """``agentsview sync`` timed; ``first``: with goal 5's poll of its ``sessions.db``."""
        watch = FirstHit(self.data / "sessions.db", THEIRS_FIRST_SQL) if first else None
        return timed([self.exe, "sync"], {**self.env, "AGENTSVIEW_NO_DAEMON": "1"}, watch=watch)

    def start_daemon(self) -> None:
        subprocess.run(
            [self.exe, "daemon", "start"],
            env=self.env,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop_daemon(self) -> None:
        subprocess.run(
            [self.exe, "daemon", "stop"],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def search(self, query: str) -> float:
        cmd = [self.exe, "session", "search", "--fts", query, "--json"]
        return timed(cmd, self.env, ok=(0, 1))["seconds"]


def ours(
    args: list[str], home: Path, workers: int | None = None, first: bool = False
) -> dict[str, Any]:
    """``continuity ARGS --home HOME`` timed; ``workers``: ``CONTINUITY_IMPORT_WORKERS``
    (None: the default, one per core); ``first``: with goal 5's poll of ``continuity.db``."""
    exe = Path(sys.executable).with_name("continuity")
    env = {**CHILD_ENV, "COLUMNS": "200"}
    if workers is not None:
        env["CONTINUITY_IMPORT_WORKERS"] = str(workers)
    watch = FirstHit(home / "continuity.db", OURS_FIRST_SQL) if first else None
    return timed([str(exe), *args, "--home", str(home)], env, watch=watch)


def fresh_round(tree0: Path, work: Path, exe: Path, n: int, workers: list[int]) -> dict[str, Any]:
    """``--fresh-only`` (issue 43 goal 1): the fresh import alone, ours once per worker count
    in ``workers`` and agentsview's, back to back on one copy of ``tree0``."""
    tree = copy_tree(tree0, work / f"tree{n}")
    r: dict[str, Any] = {"input": tree_bytes(tree)}
    for w in workers:
        log(f"round {n}: fresh import, {w} worker(s) ...")
        home = work / f"ours{n}-{w}"
        cmd = ["import", str(tree / "projects"), "--no-embed", "--json"]
        r[f"ours_{w}"] = ours(cmd, home, w, first=True)
        log_fresh("continuity", r[f"ours_{w}"])
        drop(home)
    log(f"round {n}: agentsview sync ...")
    data, peer_home = work / f"theirs{n}", work / f"peerhome{n}"
    r["theirs"] = Peer(exe, data, tree, peer_home).sync(first=True)
    log_fresh("agentsview", r["theirs"])
    drop(tree, data, peer_home)
    return r


def log_fresh(name: str, run: dict[str, Any]) -> None:
    first = run.get("first")
    log(
        f"  {name}: {run['seconds']:.1f} s, first searchable session "
        + ("none" if first is None else f"{first:.2f} s")
    )


def first_of(rounds: list[dict[str, Any]], key: str) -> float | None:
    """Goal 5: the median seconds to the first searchable session of ``key``'s fresh import,
    None when some round found none (not even once the import had ended)."""
    values = [r[key].get("first") for r in rounds]
    return None if None in values else statistics.median(values)


def first_text(first: float | None, wall: float) -> str:
    """Goal 5's cell: seconds to the first searchable session and its share of the import."""
    if first is None:
        return f"none found (import {wall:.1f} s)"
    return f"{first:.2f} s = {first / wall * 100:.1f} % of the import"


def fresh_report(rounds: list[dict[str, Any]], workers: list[int]) -> list[str]:
    """The ``--fresh-only`` table: median wall s, MB/s, CPU s, peak RSS per command, and the
    seconds to the first searchable session (goal 5)."""
    size = rounds[0]["input"]
    theirs = median_of(rounds, "theirs")
    lines = [f"fresh import of {size / MB:.0f} MB, median of {len(rounds)} round(s):"]
    names = [(f"ours_{w}", f"continuity, {w} worker(s)") for w in workers]
    for key, name in [*names, ("theirs", "agentsview sync")]:
        wall = median_of(rounds, key)
        lines.append(
            f"  {name:26} {wall:6.1f} s ({size / MB / wall:5.1f} MB/s), "
            f"{median_of(rounds, key, 'cpu'):6.1f} CPU s, "
            f"{median_of(rounds, key, 'rss_mib'):5.0f} MiB, speed {theirs / wall:.2f}x agentsview"
        )
        lines.append(f"    first searchable session: {first_text(first_of(rounds, key), wall)}")
        lines.append(
            "    rounds: "
            + ", ".join(f"{r[key]['seconds']:.1f} s / {r[key]['cpu']:.1f} CPU s" for r in rounds)
        )
    return lines


def one_round(tree0: Path, work: Path, exe: Path, n: int) -> dict[str, Any]:
    """Fresh import, unchanged re-import, 1 % append of both tools on a copy of ``tree0``
    (``work/tree{n}``; the workspaces ``work/ours{n}``, ``work/theirs{n}``, left for the
    caller to measure further and drop)."""
    tree = copy_tree(tree0, work / f"tree{n}")
    size = tree_bytes(tree)
    home, data = work / f"ours{n}", work / f"theirs{n}"
    peer = Peer(exe, data, tree, work / f"peerhome{n}")
    r: dict[str, Any] = {"input": size}
    log(f"round {n}: fresh import ({size / MB:.0f} MB) ...")
    cmd = ["import", str(tree / "projects"), "--no-embed", "--json"]
    r["ours_fresh"] = ours(cmd, home, first=True)
    log_fresh("continuity", r["ours_fresh"])
    r["theirs_fresh"] = peer.sync(first=True)
    log_fresh("agentsview", r["theirs_fresh"])
    r["ours_store"] = dir_bytes(home)
    r["theirs_store"] = dir_bytes(data)
    log(f"round {n}: unchanged re-import ...")
    r["ours_again"] = ours(["import", str(tree / "projects"), "--no-embed", "--json"], home)
    r["theirs_again"] = peer.sync()
    log(f"round {n}: 1 % append ...")
    files = sorted((tree / "projects").rglob("*.jsonl"))
    r["appended"] = append_lines(files, size // 100)
    r["ours_append"] = ours(["import", str(tree / "projects"), "--no-embed", "--json"], home)
    r["theirs_append"] = peer.sync()
    return r


def starts(home: Path) -> dict[str, float]:
    """Median seconds of each read command as a process, and of ``python -c pass``."""
    exe = str(Path(sys.executable).with_name("continuity"))
    done = subprocess.run(
        [exe, "sessions", "--home", str(home), "--json", "-n", "1"],
        capture_output=True,
        check=True,
        env=CHILD_ENV,
    )
    import json

    key = json.loads(done.stdout)[0]["session"][:8]
    cmds = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "sessions": [exe, "sessions", "--home", str(home)],
        "show": [exe, "show", key, "--home", str(home)],
        "continue": [exe, "continue", key, "--home", str(home)],
        "search": [exe, "search", "phoenix server", "--home", str(home)],
        "recall": [exe, "recall", "phoenix server", "--home", str(home)],
    }
    out = {}
    for name, cmd in cmds.items():
        times = []
        for _ in range(STARTS):
            t0 = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=CHILD_ENV)
            times.append(time.perf_counter() - t0)
        out[name] = statistics.median(times)
    return out


def our_daemon(home: Path) -> subprocess.Popen[bytes]:
    """``continuity serve`` of ``home`` on a free loopback port, not archiving this machine's
    harness folders (``[archive] enabled = false``); returns once it answers (``daemon.url``)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (home / "config.toml").write_text(f"[daemon]\nport = {port}\n\n[archive]\nenabled = false\n")
    exe = str(Path(sys.executable).with_name("continuity"))
    proc = subprocess.Popen(
        [exe, "serve", "--home", str(home)],
        env=CHILD_ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not (home / "daemon.url").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("continuity serve did not start")
        time.sleep(0.1)
    return proc


def search_latency(home: Path, peer: Peer, tree: Path) -> dict[str, list[float]]:
    """Seconds of each of ``QUERIES`` (twice) as a command: theirs as a client of their
    daemon (it has no one-shot search), ours as a client of ours (``cli.fast``: the command
    sends the query to the running daemon) and ours one-shot (no daemon: the command loads
    the store, the model and the rules itself). The rows are embedded first (the import's
    embedding pass over ``tree``, the tree ``home`` was imported from, timed), so our daemon
    has no background work while it answers. Each daemon answers ``FIRST_QUERY`` first,
    timed apart (``client_first``, ``theirs_first``)."""
    exe = str(Path(sys.executable).with_name("continuity"))
    embed = timed([exe, "import", str(tree / "projects"), "--home", str(home)], CHILD_ENV)
    ours_t, client_t, theirs_t = [], [], []
    for q in QUERIES * 2:
        ours_t.append(
            timed([exe, "search", q, "--home", str(home)], CHILD_ENV, ok=(0, 1))["seconds"]
        )
    ours = our_daemon(home)
    peer.start_daemon()
    try:
        # each daemon's first answer after it started (ours loads the embedding model and
        # the vector index then): timed on its own, not in the percentiles of the others
        first_cmd = [exe, "search", FIRST_QUERY, "--home", str(home)]
        first = {
            "client_first": [timed(first_cmd, CHILD_ENV, ok=(0, 1))["seconds"]],
            "theirs_first": [peer.search(FIRST_QUERY)],
        }
        for q in QUERIES * 2:
            cmd = [exe, "search", q, "--home", str(home)]
            client_t.append(timed(cmd, CHILD_ENV, ok=(0, 1))["seconds"])  # 1: no hit
            theirs_t.append(peer.search(q))
    finally:
        peer.stop_daemon()
        ours.terminate()
        ours.wait(60)
    return {
        **first,
        "ours": ours_t,
        "client": client_t,
        "theirs": theirs_t,
        "embed": [embed["seconds"]],
        "store_with_vectors": [float(dir_bytes(home))],
    }


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def median_of(rounds: list[dict[str, Any]], key: str, field: str = "seconds") -> float:
    return statistics.median(r[key][field] if field else r[key] for r in rounds)


def report(
    rounds: list[dict[str, Any]],
    start: dict[str, float] | None,
    search: dict[str, list[float]] | None,
) -> list[str]:
    """The table of every goal (median round; ``start`` and ``search`` of round 0, None when
    ``--skip`` left them out: their rows are then not printed)."""
    size = rounds[0]["input"]
    of = lambda k, f="seconds": median_of(rounds, k, f)  # noqa: E731
    lines = []
    ours_s, theirs_s = of("ours_fresh"), of("theirs_fresh")
    mbps = lambda s: size / MB / s  # noqa: E731
    rows = [
        (
            "1 fresh import",
            f"{ours_s:.1f} s ({mbps(ours_s):.1f} MB/s), {of('ours_fresh', 'cpu'):.1f} CPU s, "
            f"{of('ours_fresh', 'rss_mib'):.0f} MiB",
            f"{theirs_s:.1f} s ({mbps(theirs_s):.1f} MB/s), {of('theirs_fresh', 'cpu'):.1f} CPU s, "
            f"{of('theirs_fresh', 'rss_mib'):.0f} MiB",
            f"speed {theirs_s / ours_s:.2f}x theirs",
            theirs_s / ours_s >= 1.0,
        ),
        (
            "2 store / input",
            f"{of('ours_store', ''):,.0f} B = {of('ours_store', '') / size:.2f}x",
            f"{of('theirs_store', ''):,.0f} B = {of('theirs_store', '') / size:.2f}x",
            f"{of('ours_store', '') / of('theirs_store', ''):.2f}x theirs",
            of("ours_store", "") / size <= 1.0,
        ),
    ]
    if search is not None:
        with_vectors = search["store_with_vectors"][0]
        rows.append(
            (
                "2 store / input, with the vectors (not judged)",
                f"{with_vectors:,.0f} B = {with_vectors / size:.2f}x (round 1, after embedding)",
                "(embeds only on request)",
                "",
                None,
            )
        )
    if start is not None:
        base_s = start["python -c pass"]
        for name in ("sessions", "show", "continue", "search", "recall"):
            t = start[name]
            rows.append(
                (
                    f"3 start on this tree: {name}",
                    f"{t * 1000:.0f} ms = {t / base_s:.1f}x python -c pass ({base_s * 1000:.0f} ms)",
                    "",
                    "(judged on the sample workspace: bench/startup.py)",
                    None,
                )
            )
    if search is not None:
        o50, o99 = pct(search["ours"], 0.5), pct(search["ours"], 0.99)
        c50, c99 = pct(search["client"], 0.5), pct(search["client"], 0.99)
        t50, t99 = pct(search["theirs"], 0.5), pct(search["theirs"], 0.99)
        rows.append(
            (
                "3 search command p50/p99, each a client of its daemon",
                f"{c50 * 1000:.0f} / {c99 * 1000:.0f} ms",
                f"{t50 * 1000:.0f} / {t99 * 1000:.0f} ms (--fts)",
                f"p50 {c50 / t50:.2f}x theirs",
                c50 <= t50,
            )
        )
        if "client_first" in search:
            c1, t1 = search["client_first"][0], search["theirs_first"][0]
            rows.append(
                (
                    "3 first search after each daemon started (not judged)",
                    f"{c1 * 1000:.0f} ms (loads the model and the vectors)",
                    f"{t1 * 1000:.0f} ms",
                    f"{c1 / t1:.2f}x theirs",
                    None,
                )
            )
        rows.append(
            (
                "3 search command p50/p99, ours one-shot (no daemon)",
                f"{o50 * 1000:.0f} / {o99 * 1000:.0f} ms (after an embedding pass of "
                f"{search['embed'][0]:.1f} s)",
                "(no one-shot mode)",
                f"p50 {o50 / t50:.2f}x theirs",
                o50 <= t50,
            )
        )
    again, t_again = of("ours_again"), of("theirs_again")
    rows.append(
        (
            "4 unchanged re-import",
            f"{again:.2f} s",
            f"{t_again:.2f} s",
            f"{again / t_again:.2f}x theirs",
            again <= t_again,
        )
    )
    app, t_app = of("ours_append"), of("theirs_append")
    rows.append(
        (
            "4 1 % append",
            f"{app:.2f} s = {app / ours_s * 100:.1f} % of our fresh",
            f"{t_app:.2f} s = {t_app / theirs_s * 100:.1f} % of its fresh",
            f"{app / t_app:.2f}x theirs",
            app / ours_s <= 0.02 and app <= t_app,
        )
    )
    o_first, t_first = first_of(rounds, "ours_fresh"), first_of(rounds, "theirs_fresh")
    rows.append(
        (
            "5 first searchable session, fresh import",
            first_text(o_first, ours_s),
            first_text(t_first, theirs_s),
            "" if o_first is None or t_first is None else f"{o_first / t_first:.2f}x theirs",
            None,
        )
    )
    width = [max(len(r[i]) for r in rows) for i in range(4)]
    head = ("goal", "continuity", f"agentsview {AGENTSVIEW_VERSION}", "ratio")
    width = [max(w, len(h)) for w, h in zip(width, head, strict=True)]
    fmt = "  ".join(f"{{:{w}}}" for w in width) + "  {}"
    lines.append(fmt.format(*head, "verdict"))
    for r in rows:
        lines.append(fmt.format(*r[:4], "-" if r[4] is None else "met" if r[4] else "NOT met"))
    lines.append(
        f"input {size / MB:.0f} MB in {len(rounds)} rounds (median shown); fresh import seconds "
        f"ours {[round(r['ours_fresh']['seconds'], 1) for r in rounds]}, theirs "
        f"{[round(r['theirs_fresh']['seconds'], 1) for r in rounds]}; first searchable "
        f"session ours {[_round(r['ours_fresh'].get('first')) for r in rounds]}, theirs "
        f"{[_round(r['theirs_fresh'].get('first')) for r in rounds]}"
    )
    left_out = [n for n, part in (("start-up", start), ("search", search)) if part is None]
    if left_out:
        lines.append(f"left out (--skip): {', '.join(left_out)}")
    return lines


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


#: Parts ``--skip`` may leave out (none is goal 1, 2, 4 or 5): ``startup``, goal 3's read
#: commands as processes; ``search``, goal 3's search command latency with the embedding pass
#: before it and the store with the vectors (at 3 GB the pass alone is about half an hour).
SKIPPABLE = ("startup", "search")


def _skip(text: str) -> set[str]:
    parts = {p.strip() for p in text.split(",") if p.strip()}
    unknown = parts - set(SKIPPABLE)
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown part(s) {', '.join(sorted(unknown))}; known: {', '.join(SKIPPABLE)}"
        )
    return parts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--mb", type=_positive, default=320, help="tree size in MB (default 320)")
    ap.add_argument("--rounds", type=_positive, default=3, help="rounds (median reported)")
    ap.add_argument("--tmp", type=Path, help="folder for the tree and workspaces (default: temp)")
    ap.add_argument(
        "--tree",
        type=Path,
        metavar="DIR",
        help="build the tree in DIR and keep it; a later run with the same --mb uses it again "
        "(each round still imports its own copy)",
    )
    ap.add_argument(
        "--skip",
        type=_skip,
        default=set(),
        metavar="PARTS",
        help=f"leave out these comma-separated parts of goal 3: {', '.join(SKIPPABLE)} "
        "(search: also the embedding pass before it and the store with the vectors)",
    )
    ap.add_argument(
        "--fresh-only",
        metavar="WORKERS",
        help="only the fresh import, ours with each comma-separated CONTINUITY_IMPORT_WORKERS "
        "(e.g. 1,2: serial, then parsed on two workers) back to back, then agentsview's",
    )
    args = ap.parse_args(argv)
    exe = agentsview()
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp_s:
        tmp = Path(tmp_s)
        check_disk(tmp, args.mb)
        tree0 = the_tree(tmp, args.mb, args.tree)
        if args.fresh_only:
            workers = [_positive(w) for w in args.fresh_only.split(",")]
            fresh = [fresh_round(tree0, tmp, exe, n, workers) for n in range(args.rounds)]
            print("\n".join(fresh_report(fresh, workers)))
            return 0
        rounds: list[dict[str, Any]] = []
        start: dict[str, float] | None = None
        search: dict[str, list[float]] | None = None
        for n in range(args.rounds):
            rounds.append(one_round(tree0, tmp, exe, n))
            home, data, peer_home, tree = (
                tmp / f"ours{n}",
                tmp / f"theirs{n}",
                tmp / f"peerhome{n}",
                tmp / f"tree{n}",
            )
            if n == 0 and "startup" not in args.skip:
                log("start-up ...")
                start = starts(home)
            if n == 0 and "search" not in args.skip:
                log("embedding pass and search ...")
                search = search_latency(home, Peer(exe, data, tree, peer_home), tree)
            drop(tree, home, data, peer_home)
        print("\n".join(report(rounds, start, search)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
