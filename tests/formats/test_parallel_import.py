"""Issue 43 goal 1: a fresh import parsed by worker processes stores what a serial one stores.

The same trees (the samples, the examples, a synthetic tree of many files with fresh ids and
every kind of bad line) are imported by ``continuity import --no-embed --json`` once with
``CONTINUITY_IMPORT_WORKERS=1`` (serial) and once with 2 (the parse in workers); every table
of both stores (only the wall-clock columns of the import itself left out), the transcript
files and the JSON reports must be equal. A ``SIGKILL`` in the middle of a parallel import
leaves a sound store and no worker behind, and the next import ends as the serial one did.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from continuity.core.errors import ConfigError
from continuity.formats import importer, parallel
from continuity.store import rawcodec
from tests.cli.running import run_main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "tests" / "fixtures" / "samples"
EXAMPLES = ROOT / "examples" / "sessions"
#: columns holding the wall-clock time of the import itself (not of the sessions)
CLOCK = {"created_at", "updated_at", "completed_at", "acquired_at", "expires_at", "applied_at"}
UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def dump(home: Path, caches: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Every table of the workspace's store, rows sorted, clock columns left out, and every
    transcript file's lines (their ``captured_at`` left out); ``caches``: keys left out of each
    source's saved state. A row's content is compared as its JSON, not as its frame: which
    rows a text dictionary compresses depends on when the store trained it (revision 0032),
    so ``text_dicts`` is left out too."""
    conn = sqlite3.connect(home / "continuity.db")
    out: dict[str, list[str]] = {}
    try:
        for (data,) in conn.execute("SELECT data FROM text_dicts"):
            rawcodec.remember_text_dict(rawcodec.TextDict(bytes(data)))
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
            if r[0] != "text_dicts"
        ]
        for table in tables:
            cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            keep = ", ".join(f'"{c}"' for c in cols if c not in CLOCK) or "1"
            cur = conn.execute(f'SELECT {keep} FROM "{table}"')
            names = [d[0] for d in cur.description]
            rows = [list(r) for r in cur]
            if table == "entries":
                at, z = names.index("content"), names.index("content_z")
                for r in rows:
                    if r[z] is not None:
                        r[at], r[z] = rawcodec.decode_text(bytes(r[z])), None
            if table == "sources" and caches:
                at = names.index("reader_state")
                for r in rows:
                    state = json.loads(r[at])
                    r[at] = {k: v for k, v in state.items() if k not in caches}
            out[table] = sorted(repr(r) for r in rows)
    finally:
        conn.close()
    for f in sorted((home / "memory").rglob("*.jsonl")):
        text = re.sub(r'"captured_at":"[^"]*",', "", f.read_text())  # the capture's clock
        out[f"file:{f.relative_to(home)}"] = text.splitlines()
    return out


def synthetic(root: Path, copies: int) -> Path:
    """A tree of ``copies`` copies of every sample session, each copy's ids (every UUID in it)
    fresh, plus files with a bad line, a blank line, an unterminated tail, one whose name is
    not UTF-8, one that is not a session and an empty one."""
    tree = root / "tree"
    files = [p for p in sorted(SAMPLES.rglob("*.jsonl")) if "hook-inputs" not in p.parts]
    for k in range(copies):
        for i, src in enumerate(files):
            data = UUID.sub(
                lambda m, k=k: _fresh(m.group(0), k), src.read_bytes()
            )  # same map in every run
            if i % 3 == 0 and data.count(b"\n") > 4:  # a bad line and a blank line inside
                lines = data.split(b"\n")
                lines[2:2] = [b'{"type": "user", "message": {"role": ', b""]
                data = b"\n".join(lines)
            if i % 4 == 1:
                data = data + b'{"type": "assistant", "unfinished'  # a pending tail
            dest = tree / f"copy{k}" / src.parent.name / f"{k}-{src.name}"
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
    odd = tree / os.fsdecode(b"odd-\xff-name.jsonl")  # stored as ``\xff`` (path_key)
    odd.write_bytes(UUID.sub(lambda m: _fresh(m.group(0), 7), files[0].read_bytes()))
    (tree / "notes.jsonl").write_bytes(b'{"a": 1}\n{"b": 2}\n')
    (tree / "empty.jsonl").write_bytes(b"")
    return tree


def _fresh(uuid: bytes, k: int) -> bytes:
    h = hashlib.sha256(uuid + str(k).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}".encode()


def imported(monkeypatch, capsys, home: Path, tree: list[Path], workers: int) -> dict:
    """``continuity import TREE --no-embed --json`` into ``home`` with ``workers``: the report
    with the home's path taken out."""
    monkeypatch.setenv("CONTINUITY_HOME", str(home))
    monkeypatch.setenv(parallel.WORKERS_ENV, str(workers))
    code, out, err = run_main(monkeypatch, capsys, "import", *tree, "--no-embed", "--json")
    assert code == 0, err
    return json.loads(out.replace(str(home), "HOME"))


@pytest.mark.parametrize("which", ["samples", "examples", "synthetic"])
def test_parallel_import_stores_what_the_serial_one_stores(
    tmp_path, monkeypatch, capsys, which
) -> None:
    if which == "synthetic":
        tree = [synthetic(tmp_path, 3)]
        # small batches and a low group limit: files of many batches, some alone, some grouped
        monkeypatch.setattr(importer, "BATCH_LINES", 40)
        monkeypatch.setattr(importer, "GROUP_FILE_BYTES", 64 * 1024)
    else:
        tree = [SAMPLES if which == "samples" else EXAMPLES]
    taken: list[Path] = []
    real_take = parallel.ParsePool.take

    def take(self, path):
        parsed = real_take(self, path)
        if parsed is not None:
            taken.append(path)
        return parsed

    monkeypatch.setattr(parallel.ParsePool, "take", take)
    serial = imported(monkeypatch, capsys, tmp_path / "serial", tree, 1)
    assert taken == []
    par = imported(monkeypatch, capsys, tmp_path / "parallel", tree, 2)
    files = [f for f in par["files"] if f["status"] == "imported"]
    assert len(taken) >= len(files) > 1  # every fresh file went through the workers
    assert par == serial
    assert par["totals"]["imported"] > 100
    a, b = dump(tmp_path / "serial"), dump(tmp_path / "parallel")
    assert sorted(a) == sorted(b)
    for table in a:
        assert a[table] == b[table], table
    assert len(a["entries"]) == par["totals"]["imported"]
    if which == "synthetic":
        assert a["import_issues"] and a["raw_lines"]  # the bad lines are there, in both


def test_a_second_parallel_run_adds_nothing_and_a_grown_file_is_read_serially(
    tmp_path, monkeypatch, capsys
) -> None:
    tree = synthetic(tmp_path, 2)
    first = imported(monkeypatch, capsys, tmp_path / "home", [tree], 2)
    again = imported(monkeypatch, capsys, tmp_path / "home", [tree], 2)
    assert first["totals"]["imported"] > 100
    assert again["totals"]["imported"] == 0
    grown = next(
        p
        for p in sorted((tree / "copy0" / "claude-code").glob("*.jsonl"))
        if p.read_bytes().endswith(b"\n")
    )
    line = grown.read_bytes().splitlines()[-1]
    with grown.open("ab") as fh:  # the last line again with fresh ids: one new row
        fh.write(UUID.sub(lambda m: _fresh(m.group(0), 99), line) + b"\n")
    taken: list[Path] = []
    real_take = parallel.ParsePool.take
    monkeypatch.setattr(
        parallel.ParsePool,
        "take",
        lambda self, p: (taken.append(p) if (got := real_take(self, p)) else None, got)[1],
    )
    third = imported(monkeypatch, capsys, tmp_path / "home", [tree], 2)
    # only the files never stored (not sessions) are fresh again; the grown one is read serially
    assert sorted(p.name for p in taken) == ["empty.jsonl", "notes.jsonl"]
    assert [f["path"] for f in third["files"] if f["imported"]] == [str(grown)]


def test_workers_setting(monkeypatch) -> None:
    monkeypatch.setenv(parallel.WORKERS_ENV, "3")
    assert parallel.workers() == 3
    assert importer._workers() == (3, True)
    monkeypatch.delenv(parallel.WORKERS_ENV)
    assert importer._workers() == (os.cpu_count() or 1, False)
    monkeypatch.setenv(parallel.WORKERS_ENV, "many")
    with pytest.raises(ConfigError, match="CONTINUITY_IMPORT_WORKERS='many'"):
        importer._workers()


def test_the_pool_starts_only_for_enough_fresh_bytes(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(parallel.os, "getloadavg", lambda: (0.2, 0.2, 0.2))
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 2)
    small = [(tmp_path / "a", 1000), (tmp_path / "b", 1000)]
    big = [(tmp_path / "a", parallel.MIN_BYTES), (tmp_path / "b", 10)]
    assert not importer._worth_a_pool(small, forced=False)
    assert not importer._worth_a_pool(big[:1], forced=False)  # one file: nothing to overlap
    assert importer._worth_a_pool(big, forced=False)
    assert importer._worth_a_pool(small[:1], forced=True)
    assert not importer._worth_a_pool([], forced=True)
    # every core busy with other work: the workers would only take the importer's share
    monkeypatch.setattr(parallel.os, "getloadavg", lambda: (2.0, 2.0, 2.0))
    assert not importer._worth_a_pool(big, forced=False)
    assert importer._worth_a_pool(big, forced=True)


def _descendants(pid: int) -> set[int]:
    out: set[int] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        for k in map(int, kids):
            out.add(k)
            todo.append(k)
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_parallel_import_leaves_a_sound_store_and_the_next_one_completes(
    tmp_path, monkeypatch, capsys
) -> None:
    tree = synthetic(tmp_path, 6)
    exe = Path(sys.executable).parent / "continuity"
    env = {**os.environ, "CONTINUITY_HOME": str(tmp_path / "killed"), parallel.WORKERS_ENV: "2"}
    proc = subprocess.Popen(
        [str(exe), "import", str(tree), "--no-embed"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    db = tmp_path / "killed" / "continuity.db"
    deadline = time.monotonic() + 120
    workers: set[int] = set()
    stored = 0
    while time.monotonic() < deadline and proc.poll() is None:
        workers |= _descendants(proc.pid)
        try:
            conn = sqlite3.connect(db, timeout=5)
            stored = conn.execute("SELECT count(*) FROM sources").fetchone()[0]
            conn.close()
        except sqlite3.Error:
            stored = 0
        if stored >= 3 and len(workers) >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the import ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(workers) >= 2, workers
    gone_by = time.monotonic() + 3 * parallel.POLL_SECONDS + 5
    while time.monotonic() < gone_by and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)], "a worker outlived its importer"
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    total = len(list(tree.rglob("*.jsonl")))
    assert 0 < conn.execute("SELECT count(*) FROM sources").fetchone()[0] < total
    conn.close()
    resumed = imported(monkeypatch, capsys, tmp_path / "killed", [tree], 2)
    assert resumed["totals"]["imported"] > 0
    imported(monkeypatch, capsys, tmp_path / "serial", [tree], 1)
    # The kill left the replay and transcripts of the stored rows due: the next import did
    # them. Two caches in a source's saved state may differ, as after any serial import
    # killed at the same point: the pi leaf (``"leaf"``: a file re-read for its unfinished
    # tail writes its state without it, so its next growth walks the tree) and the
    # checkpoint replay's resume point (``"replay"``).
    a, b = (
        dump(tmp_path / "serial", ("leaf", "replay")),
        dump(tmp_path / "killed", ("leaf", "replay")),
    )
    for table in a:
        assert a[table] == b[table], table
    shutil.rmtree(tmp_path / "killed")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_stops_a_parallel_import_without_the_workers_tracebacks(tmp_path) -> None:
    """Fresh-user review: a Ctrl-C (SIGINT to the whole foreground process group) during a
    parallel import printed the workers' own ``KeyboardInterrupt`` tracebacks ("Process
    SpawnProcess-1:"). The workers start with SIGINT blocked; the importer says it was
    interrupted, exits 130, and the workers are gone."""
    tree = synthetic(tmp_path, 6)
    exe = Path(sys.executable).parent / "continuity"
    env = {**os.environ, "CONTINUITY_HOME": str(tmp_path / "ws"), parallel.WORKERS_ENV: "2"}
    proc = subprocess.Popen(
        [str(exe), "import", str(tree), "--no-embed"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    deadline = time.monotonic() + 120
    workers: set[int] = set()
    while time.monotonic() < deadline and proc.poll() is None and len(workers) < 2:
        workers |= _descendants(proc.pid)
        time.sleep(0.02)
    assert proc.poll() is None and len(workers) >= 2, "the import ended before the Ctrl-C"
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err and b"SpawnProcess" not in err, err.decode()
    assert b"interrupted" in err
    gone_by = time.monotonic() + 3 * parallel.POLL_SECONDS + 5
    while time.monotonic() < gone_by and any(_alive(w) for w in workers):
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)], "a worker outlived its importer"


def test_a_batch_nested_deeper_than_the_default_recursion_limit_is_handed_over() -> None:
    """A tool call's arguments string parses into up to 1,024 levels (orjson's limit), below
    the parser's bracket count: pickled in the queue's feeder thread such a batch was dropped
    (RecursionError) and the importer waited for it (found by the Agents SDK hostile fuzz
    test with CONTINUITY_IMPORT_WORKERS=2). The worker pickles it itself, deeper allowed."""
    import multiprocessing
    import pickle

    deep: object = "leaf"
    for i in range(1000):
        deep = {"k": deep} if i % 2 else [deep]
    results = multiprocessing.get_context("spawn").Queue(1)
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(parallel.PICKLE_DEPTH)  # as _serve sets it in a worker
        parallel._put(results, ("batch", deep))
    finally:
        sys.setrecursionlimit(limit)
    got = pickle.loads(results.get(timeout=10))
    assert got[0] == "batch"
    depth, node = 0, got[1]
    while not isinstance(node, str):
        node = node["k"] if isinstance(node, dict) else node[0]
        depth += 1
    assert depth == 1000
    results.close()
