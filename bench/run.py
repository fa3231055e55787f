"""Benchmark of continuity: import throughput and continuation time vs log length.

Run from the project root:  .venv/bin/python bench/run.py [--quick]

1. Import: every file of shared/data, then a generated corpus (real Claude Code and pi lines
   repeated with fresh ids), into a fresh SQLite store; next to orjson parse-only speed of the
   same files. Peak RSS growth of importing a 1x and a 4x file (each in a child process).
2. Continuation: a generated session of 1,000 rows and one of 1,000,000 (quick: 100,000),
   written through the store; median build_continuation time of each and their ratio.
3. A summary table; the same figures go to bench/results/latest.json.

Goals: import >= 0.33x parse-only; continuation large/small <= 1.5x. A missed goal prints a
cProfile (top 15 by cumulative time) of the slow part.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import io
import itertools
import json
import os
import platform
import pstats
import random
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = (
    Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "samples"
)  # the copy of ../shared/data
RESULTS = Path(__file__).resolve().parent / "results" / "latest.json"
sys.path.insert(0, str(ROOT / "src"))  # bench the working tree


import orjson  # noqa: E402

from continuity.continuation.view import build_continuation  # noqa: E402
from continuity.core.model import (  # noqa: E402
    CompactionInfo,
    Entry,
    EntryKind,
    Role,
    Run,
    RunStatus,
    Session,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.formats.importer import discover, import_file, import_paths  # noqa: E402
from continuity.store import open_store  # noqa: E402

MB = 1_000_000
IMPORT_GOAL = 0.33  # import MB/s >= 0.33 x orjson parse-only MB/s
CONT_GOAL = 1.5  # median continuation time, large / small <= 1.5 x

SIZES = {
    # generated corpus: files per harness, bytes per file
    "full": {
        "corpus_files": 4,
        "corpus_file_bytes": 2_500_000,
        "mem_1x": 6_000_000,
        "rows_small": 1_000,
        "rows_large": 1_000_000,
    },
    "quick": {
        "corpus_files": 2,
        "corpus_file_bytes": 750_000,
        "mem_1x": 1_000_000,
        "rows_small": 1_000,
        "rows_large": 100_000,
    },
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ================================================================ synthetic corpus (part 1)

#: Ids rewritten on every repetition: UUIDs, Anthropic tool/message/request ids, OpenAI call
#: ids, and the PIID placeholders of the pi template.
_TOKEN = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|\b(?:toolu|msg|req|call)_[A-Za-z0-9]{10,}|PIID[0-9]+|PIPREV)"
)


class _Template:
    """Lines split once into literal / id-token parts, rendered with fresh ids per repetition."""

    def __init__(self, lines: list[str]) -> None:
        self.parts = [_TOKEN.split(line) for line in lines]

    def render(self, fresh: Callable[[str], str]) -> str:
        out = []
        for parts in self.parts:
            for i, p in enumerate(parts):
                out.append(fresh(p) if i & 1 else p)
            out.append("\n")
        return "".join(out)


class _Ids:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.n = self.rng.randrange(1 << 30)

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def short(self) -> str:  # pi v3 ids: 8 hex digits, unique by counter
        self.n += 1
        return f"{self.n & 0xFFFFFFFF:08x}"

    def like(self, token: str) -> str:
        if token.startswith(("toolu_", "msg_", "req_", "call_")):
            head = token.split("_", 1)[0]
            return f"{head}_bench{self.rng.getrandbits(96):024x}"
        return self.uuid()


_TS = re.compile(r'("timestamp"\s*:\s*")(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)Z"')


class _Timeline:
    """Keeps a generated file's timestamps moving forward, as a real session's do: each
    rendered copy of a template is shifted so its first ``"timestamp"`` comes ``gap_s``
    seconds after the latest one written before it (intervals inside a copy are kept). A
    corpus whose copies repeated the sample's times went back in time at every copy, so the
    checkpoint replay's clock stalled and its resume point could not move past the first
    copy: every re-import replayed the whole session (an artefact no real file has)."""

    def __init__(self, last: datetime | None = None, gap_s: float = 60.0) -> None:
        self.last, self.gap = last, timedelta(seconds=gap_s)

    @staticmethod
    def _parse(text: str) -> datetime:
        return datetime.fromisoformat(text).replace(tzinfo=UTC)

    def shift(self, text: str) -> str:
        found = _TS.findall(text)
        if not found:
            return text
        first = min(self._parse(t) for _, t in found)
        delta = (self.last + self.gap - first) if self.last is not None else timedelta(0)
        latest = self.last

        def moved(m: re.Match[str]) -> str:
            nonlocal latest
            t = self._parse(m.group(2)) + delta
            latest = t if latest is None or t > latest else latest
            return f'{m.group(1)}{t.strftime("%Y-%m-%dT%H:%M:%S")}.{t.microsecond // 1000:03d}Z"'

        out = _TS.sub(moved, text)
        self.last = latest
        return out

    @classmethod
    def after_file(cls, path: Path) -> _Timeline:
        """A timeline continuing after the newest timestamp of the file's last 64 KiB."""
        with open(path, "rb") as fh:
            fh.seek(max(0, path.stat().st_size - 65536))
            tail = fh.read().decode("utf-8", "replace")
        stamps = [cls._parse(t) for _, t in _TS.findall(tail)]
        return cls(max(stamps) if stamps else None)


def _claude_templates() -> tuple[list[_Template], set[str]]:
    files = [
        "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
        "tool_heavy.jsonl",
        "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
        "short.jsonl",
    ]
    templates, session_ids = [], set()
    for name in files:
        lines = [
            ln for ln in (DATA / "claude-code" / name).read_text("utf-8").split("\n") if ln.strip()
        ]
        for ln in lines:
            sid = orjson.loads(ln).get("sessionId")
            if isinstance(sid, str):
                session_ids.add(sid)
        templates.append(_Template(lines))
    return templates, session_ids


def _pi_template() -> tuple[_Template, dict]:
    """The body of pi's large real session (legacy v1) as v3 entries: each line gets an ``id``
    and a ``parentId`` chaining it to the line before (PIPREV: last line of the previous rep)."""
    lines = (DATA / "pi" / "large-session.jsonl").read_bytes().split(b"\n")
    header = orjson.loads(lines[0])
    out = []
    for i, raw in enumerate(ln for ln in lines[1:] if ln.strip()):
        d = orjson.loads(raw)
        d.pop("id", None)
        d.pop("parentId", None)
        body = {
            "type": d.pop("type"),
            "id": f"PIID{i}",
            "parentId": "PIPREV" if i == 0 else f"PIID{i - 1}",
            **d,
        }
        out.append(orjson.dumps(body).decode())
    return _Template(out), header


def generate_corpus(root: Path, files: int, file_bytes: int, seed: int = 7) -> list[Path]:
    """``files`` Claude Code files and ``files`` pi files of about ``file_bytes`` each."""
    ids = _Ids(seed)
    claude, claude_sids = _claude_templates()
    pi, pi_header = _pi_template()
    paths = []
    (root / "claude-code").mkdir(parents=True, exist_ok=True)
    (root / "pi").mkdir(parents=True, exist_ok=True)
    for f in range(files):
        paths.append(
            write_claude(root / "claude-code", claude, claude_sids, ids, file_bytes, start=f)
        )
        paths.append(write_pi(root / "pi", pi, pi_header, ids, file_bytes))
    return paths


def write_claude(
    folder: Path,
    templates: list[_Template],
    session_ids: set[str],
    ids: _Ids,
    target: int,
    start: int = 0,
) -> Path:
    sid = ids.uuid()
    path = folder / f"{sid}.jsonl"
    size = 0
    clock = _Timeline()
    with open(path, "w", encoding="utf-8") as fh:
        for k in itertools.count(start):
            mapping: dict[str, str] = dict.fromkeys(session_ids, sid)

            def fresh(tok: str, mapping: dict[str, str] = mapping) -> str:
                got = mapping.get(tok)
                if got is None:
                    got = mapping[tok] = ids.like(tok)
                return got

            text = clock.shift(templates[k % len(templates)].render(fresh))
            fh.write(text)
            size += len(text.encode("utf-8"))
            if size >= target:
                break
    return path


def write_pi(folder: Path, template: _Template, header: dict, ids: _Ids, target: int) -> Path:
    sid = ids.uuid()
    path = folder / f"2025-11-20T23-33-50-805Z_{sid}.jsonl"
    head = {
        "type": "session",
        "version": 3,
        "id": sid,
        "timestamp": header.get("timestamp"),
        "cwd": header.get("cwd"),
    }
    prev = None
    clock = _Timeline()
    with open(path, "w", encoding="utf-8") as fh:
        text = clock.shift(orjson.dumps(head).decode() + "\n")
        fh.write(text)
        size = len(text)
        while size < target:
            mapping: dict[str, str] = {}
            last: list[str] = []

            def fresh(
                tok: str,
                mapping: dict[str, str] = mapping,
                last: list[str] = last,
                prev: str | None = prev,
            ) -> str:
                if tok == "PIPREV":
                    return prev if prev is not None else "null-parent"
                got = mapping.get(tok)
                if got is None:
                    got = mapping[tok] = ids.short() if tok.startswith("PIID") else ids.like(tok)
                    if tok.startswith("PIID"):
                        last.append(got)
                return got

            text = clock.shift(template.render(fresh))
            fh.write(text)
            size += len(text.encode("utf-8"))
            prev = last[-1]
    return path


# ================================================================ part 1: import


def parse_only(files: list[Path], repeats: int = 5) -> dict[str, float]:
    """orjson parse-only speed: read each file, split lines, orjson.loads each (best of
    ``repeats``: the ceiling an import is compared with)."""
    times = []
    nbytes = nlines = 0
    for _ in range(repeats):
        nbytes = nlines = 0
        t0 = time.perf_counter()
        for p in files:
            data = p.read_bytes()
            nbytes += len(data)
            for line in data.split(b"\n"):
                if line:
                    with contextlib.suppress(orjson.JSONDecodeError):
                        orjson.loads(line)
                    nlines += 1
        times.append(time.perf_counter() - t0)
    dt = min(times)
    return {"seconds": dt, "bytes": nbytes, "lines": nlines, "mb_per_s": nbytes / MB / dt}


_IMPORT_STORE_CALLS = [
    "get_source",
    "get_session",
    "upsert_session",
    "native_seqs",
    "put_raw_lines",
    "append",
    "put_issues",
    "put_runs",
    "put_source",
    "tree_links",
    "set_on_path",
    "raw_lines",
]


def _time_calls(store: Any, names: list[str]) -> tuple[dict[str, list], Callable[[], None]]:
    """Shadow ``names`` on the store instance with timing wrappers (the library is untouched);
    returns the tallies ``{name: [seconds, calls]}`` and an undo function."""
    spent: dict[str, list] = {n: [0.0, 0] for n in names}

    def timing(orig: Callable, name: str) -> Callable:
        def timed(*a: Any, **kw: Any) -> Any:
            t = time.perf_counter()
            try:
                return orig(*a, **kw)
            finally:
                spent[name][0] += time.perf_counter() - t
                spent[name][1] += 1

        return timed

    for name in names:
        setattr(store, name, timing(getattr(store, name), name))

    def undo() -> None:
        for n in names:
            delattr(store, n)

    return spent, undo


def import_once(paths: list[Path], tmp: Path, profile: bool = False) -> dict[str, Any]:
    """Import ``paths`` into a fresh SQLite store; store creation is not timed. With
    ``profile``: a cProfile of the import, then a second import (fresh store) with every store
    call timed, to split the time into store calls and the rest (reading, parsing, mapping)."""
    db = Path(tempfile.mkdtemp(dir=tmp)) / "import.db"
    prof = cProfile.Profile() if profile else None
    with open_store(db) as store:
        nbytes = sum(p.stat().st_size for p in discover(paths))
        gc.collect()
        t0 = time.perf_counter()
        if prof:
            prof.enable()
        report = import_paths(store, paths)
        if prof:
            prof.disable()
        dt = time.perf_counter() - t0
    totals = report.totals()
    out = {
        "seconds": dt,
        "bytes": nbytes,
        "files": totals["files"],
        "rows": totals["imported"],
        "lines": totals["lines_read"],
        "errors": totals["errors"],
        "skipped_files": totals["skipped_files"],
        "duplicate": totals["duplicate"],
        "mb_per_s": nbytes / MB / dt,
        "rows_per_s": totals["imported"] / dt,
        "db_bytes": db.stat().st_size,
    }
    if prof:
        out["profile"] = profile_text(prof)
        out["profile_tottime"] = profile_text(prof, 10, "tottime")
        db2 = Path(tempfile.mkdtemp(dir=tmp)) / "import.db"
        with open_store(db2) as store:
            spent, undo = _time_calls(store, _IMPORT_STORE_CALLS)
            t0 = time.perf_counter()
            import_paths(store, paths)
            total = time.perf_counter() - t0
            undo()
        calls = {n: {"s": v[0], "calls": v[1]} for n, v in spent.items() if v[1]}
        calls["(outside store calls: read, parse, map)"] = {
            "s": total - sum(v[0] for v in spent.values()),
            "calls": 0,
        }
        out["store_calls"] = {"total_s": total, "calls": calls}
    return out


def profile_text(prof: cProfile.Profile, top: int = 15, sort: str = "cumulative") -> str:
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.strip_dirs().sort_stats(sort).print_stats(top)
    lines = [
        ln
        for ln in buf.getvalue().splitlines()
        if ln.strip() and "List reduced" not in ln and "Ordered by" not in ln
    ]
    return "\n".join(ln.strip() if "function calls" in ln else ln for ln in lines)


def rss_now_kb() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def mem_child(path: str) -> None:
    """In a fresh process: warm up (modules, compiled statements), then import ``path`` and
    print the peak RSS growth over the pre-import RSS as JSON."""
    with tempfile.TemporaryDirectory() as d, open_store(Path(d) / "mem.db") as store:
        for warm in (DATA / "claude-code" / "short.jsonl", DATA / "pi" / "v3-short-session.jsonl"):
            import_file(store, warm)
        gc.collect()
        base = rss_now_kb()
        peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        report = import_file(store, path)
        dt = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "file_bytes": os.path.getsize(path),
                "rows": report.imported,
                "seconds": dt,
                "rss_base_kb": base,
                "peak_before_kb": peak_before,
                "peak_kb": peak,
                "growth_kb": max(0, peak - base),
            }
        )
    )


def memory_test(tmp: Path, one_x: int) -> dict[str, Any]:
    ids = _Ids(11)
    claude, sids = _claude_templates()
    pi, header = _pi_template()
    out: dict[str, Any] = {}
    for harness in ("claude-code", "pi"):
        res = {}
        for mult in (1, 4):
            folder = tmp / f"mem-{harness}-{mult}x"
            folder.mkdir()
            if harness == "claude-code":
                path = write_claude(folder, claude, sids, ids, one_x * mult)
            else:
                path = write_pi(folder, pi, header, ids, one_x * mult)
            log(
                f"  memory: importing {harness} {mult}x ({path.stat().st_size / MB:.1f} MB) "
                "in a child process"
            )
            proc = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--mem-child", str(path)],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                raise SystemExit(f"memory child failed:\n{proc.stderr}")
            res[f"{mult}x"] = json.loads(proc.stdout.strip().splitlines()[-1])
            path.unlink()
        g1, g4 = res["1x"]["growth_kb"], res["4x"]["growth_kb"]
        res["ratio_4x_1x"] = g4 / g1 if g1 else None
        # flat: the 4x file costs at most 1.5x the 1x peak growth (+4 MB slack)
        res["flat"] = g4 <= 1.5 * g1 + 4096
        out[harness] = res
    return out


def part_import(tmp: Path, sizes: dict[str, int], force_profile: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    real = discover([DATA])
    log(f"[import] real sample files: {len(real)} files under {DATA}")
    out["real"] = {"import": import_once([DATA], tmp), "parse": parse_only(real)}

    corpus_dir = tmp / "corpus"
    t0 = time.perf_counter()
    gen = generate_corpus(corpus_dir, sizes["corpus_files"], sizes["corpus_file_bytes"])
    log(
        f"[import] generated {len(gen)} files, "
        f"{sum(p.stat().st_size for p in gen) / MB:.1f} MB in {time.perf_counter() - t0:.1f}s"
    )
    out["generated"] = {"import": import_once([corpus_dir], tmp), "parse": parse_only(gen)}
    per_harness = {}
    for harness in ("claude-code", "pi"):
        files = [p for p in gen if p.parent.name == harness]
        per_harness[harness] = {"import": import_once(files, tmp), "parse": parse_only(files)}
    out["generated_by_harness"] = per_harness

    for group in [out["real"], out["generated"], *per_harness.values()]:
        group["ratio"] = group["import"]["mb_per_s"] / group["parse"]["mb_per_s"]
    ratio = out["generated"]["ratio"]
    out["goal"] = IMPORT_GOAL
    out["goal_met"] = ratio >= IMPORT_GOAL and out["real"]["ratio"] >= IMPORT_GOAL

    log("[import] memory: 1x vs 4x file")
    out["memory"] = memory_test(tmp, sizes["mem_1x"])

    if not out["goal_met"] or force_profile:
        log("[import] profiling one generated Claude Code file and one pi file")
        sample = [next(p for p in gen if p.parent.name == h) for h in ("claude-code", "pi")]
        prof = import_once(sample, tmp, profile=True)
        out.update({k: prof[k] for k in ("profile", "profile_tottime", "store_calls")})
    return out


# ================================================================ part 2: continuation

_REQUESTS = [
    "Please look at the failing tests in tests/store and fix the root cause. Keep the public API "
    "as it is, and tell me what you changed and why.",
    "The importer is slow on large Claude Code transcripts. Profile it on the sample files and "
    "propose two changes, then implement the simpler one and show the numbers before and after.",
    "Refactor the continuation builder so that the budget accounting lives in one place. Add "
    "tests for the edge cases: empty suffix, a single oversize tool result, and a gap.",
    "Run the whole test suite on PostgreSQL too, and fix whatever differs from SQLite.",
]
_THOUGHTS = [
    "Let me read the relevant file first.",
    "I'll search for where this is defined.",
    "Running the tests to see the current state.",
    "Now I'll make the edit and re-run the affected tests.",
    "Checking the other call sites before changing the signature.",
]
_TOOLS = [
    ("read", {"path": "src/continuity/store/sql.py", "offset": 120, "limit": 200}),
    ("bash", {"command": "pytest -q tests/store -x", "timeout": 120}),
    ("grep", {"pattern": "def build_continuation", "path": "src", "glob": "*.py"}),
    (
        "edit",
        {
            "path": "src/continuity/importer.py",
            "old_string": "BATCH_LINES = 2000",
            "new_string": "BATCH_LINES = 4000",
        },
    ),
]
_FINAL = (
    "Done. Summary of the changes: the store now batches inserts per transaction, the "
    "tests pass on SQLite and PostgreSQL, and I left a note about the remaining slow query."
)


def _result_texts() -> list[str]:
    rng = random.Random(3)
    words = (
        "def class return import self store entry seq session row batch commit "
        "assert test passed failed line file path json bytes index query"
    ).split()
    out = []
    for size in (300, 450, 700, 1000, 1300, 1600, 2000, 380, 820, 1150, 1750, 560):
        text = []
        n = 0
        while n < size:
            w = rng.choice(words)
            text.append(w)
            n += len(w) + 1
        out.append(" ".join(text)[:size])
    return out


def generate_session(
    store: Any, key: str, rows: int, batch: int = 5_000, label: str = ""
) -> dict[str, Any]:
    """Write a session of exactly ``rows`` rows through ``store``: turns of 50 rows (a request,
    24 assistant-call / tool-result pairs - every 6th with two parallel calls - and a final
    answer); one compaction row (replacing that turn's final answer) in the middle; runs."""
    req_blocks = [(TextBlock(t),) for t in _REQUESTS]
    thoughts = [TextBlock(t) for t in _THOUGHTS]
    results = _result_texts()
    final = (TextBlock(_FINAL),)
    base_ts = datetime(2025, 11, 20, 12, 0, tzinfo=UTC)
    one_s = timedelta(seconds=1)
    summary = (
        "The user asked to speed up the importer and to fix the failing store tests. "
        "Done so far: profiled the import, batched inserts, fixed two tests. Open: the "
        "PostgreSQL run and the slow tool-call query."
    ) * 3
    turn = 50
    compaction_at = (rows // 2 // turn) * turn - 1  # the last row of a turn near the middle
    call_n = 0
    request_seqs: list[int] = []

    def rows_iter() -> Iterator[Entry]:
        nonlocal call_n
        seq = 0
        while seq < rows:
            pos = seq % turn
            ts = base_ts + one_s * seq
            if seq == compaction_at:
                e = Entry(
                    EntryKind.COMPACTION,
                    Role.SYSTEM,
                    (),
                    timestamp=ts,
                    compaction=CompactionInfo(summary, covers_through_seq=seq - 1),
                    type_name="compaction",
                    seq=seq,
                )
            elif pos == 0:
                request_seqs.append(seq)
                e = Entry(
                    EntryKind.MESSAGE,
                    Role.USER,
                    req_blocks[(seq // turn) % 4],
                    timestamp=ts,
                    is_request=True,
                    type_name="user",
                    seq=seq,
                )
            elif pos == turn - 1 or seq == rows - 1:
                e = Entry(
                    EntryKind.MESSAGE,
                    Role.ASSISTANT,
                    final,
                    timestamp=ts,
                    type_name="assistant",
                    seq=seq,
                )
            elif pos % 2 == 1:  # assistant with call(s)
                k = (seq // 2) % 6
                name, args = _TOOLS[k % 4]
                call_n += 1
                blocks: tuple = (thoughts[k % 5], ToolCallBlock(f"toolu_{call_n:012d}", name, args))
                if k == 5:
                    call_n += 1
                    blocks += (ToolCallBlock(f"toolu_{call_n:012d}", "read", _TOOLS[0][1]),)
                e = Entry(
                    EntryKind.MESSAGE,
                    Role.ASSISTANT,
                    blocks,
                    timestamp=ts,
                    type_name="assistant",
                    seq=seq,
                )
            else:  # tool result(s) answering the row before
                k = ((seq - 1) // 2) % 6
                r = results[seq % len(results)]
                if k == 5:
                    blocks = (
                        ToolResultBlock(f"toolu_{call_n - 1:012d}", False, r),
                        ToolResultBlock(f"toolu_{call_n:012d}", False, results[0]),
                    )
                else:
                    blocks = (ToolResultBlock(f"toolu_{call_n:012d}", seq % 17 == 0, r),)
                e = Entry(
                    EntryKind.MESSAGE, Role.TOOL, blocks, timestamp=ts, type_name="user", seq=seq
                )
            yield e
            seq += 1

    t0 = time.perf_counter()
    store.upsert_session(Session(key=key, harness="bench", project="/work/project"))
    it = rows_iter()
    done = 0
    last_log = t0
    while True:
        chunk = list(itertools.islice(it, batch))
        if not chunk:
            break
        with store.batch():
            store.upsert_session(
                Session(
                    key=key,
                    harness="bench",
                    project="/work/project",
                    started_at=base_ts,
                    ended_at=chunk[-1].timestamp,
                )
            )
            store.append(key, chunk)
        done += len(chunk)
        now = time.perf_counter()
        if now - last_log > 5 or done == rows:
            rate = done / (now - t0)
            log(
                f"  {label}: {done:,}/{rows:,} rows, {rate:,.0f} rows/s, "
                f"eta {(rows - done) / rate:,.0f}s"
            )
            last_log = now
    runs = []
    for i, req in enumerate(request_seqs):
        end = request_seqs[i + 1] - 1 if i + 1 < len(request_seqs) else rows - 1
        runs.append(
            Run(
                f"{key}:{req}",
                key,
                "default",
                req,
                RunStatus.FINISHED,
                end,
                base_ts + one_s * req,
                base_ts + one_s * end,
            )
        )
    for i in range(0, len(runs), batch):
        store.put_runs(runs[i : i + batch])
    dt = time.perf_counter() - t0
    return {
        "rows": rows,
        "runs": len(runs),
        "tool_calls": call_n,
        "seconds": dt,
        "rows_per_s": rows / dt,
        "compaction_seq": compaction_at,
    }


_STORE_CALLS = [
    "get_session",
    "latest_compaction",
    "last_run",
    "entries_by_seq",
    "notes",
    "rows_meta",
    "tool_calls_from",
]


def time_continuation(
    stores: dict[str, Any], keys: dict[str, str], runs: int = 20, warm: int = 2
) -> dict[str, dict[str, Any]]:
    """Median build time per session; the sessions are timed in alternation so that machine
    noise hits both alike. Then 5 more builds each with every store call timed."""
    times: dict[str, list[float]] = {label: [] for label in stores}
    views = {}
    for i in range(warm + runs):
        for label, store in stores.items():
            t0 = time.perf_counter()
            views[label] = build_continuation(store, keys[label])
            if i >= warm:
                times[label].append(time.perf_counter() - t0)
    out = {}
    for label, store in stores.items():
        spent, undo = _time_calls(store, _STORE_CALLS)
        try:
            for _ in range(5):
                build_continuation(store, keys[label])
        finally:
            undo()
        d = views[label].to_dict()
        ts = times[label]
        out[label] = {
            "median_s": statistics.median(ts),
            "min_s": min(ts),
            "max_s": max(ts),
            "runs": runs,
            "warmups": warm,
            "messages": len(d["messages"]),
            "used_bytes": d["used_bytes"],
            "refusal": d["refusal"],
            "summary_covers": (d["summary"] or {}).get("covers_through_seq"),
            "request_seq": (d["request"] or {}).get("seq"),
            "store_calls_ms": {
                n: {"ms_per_build": v[0] / 5 * 1000, "calls_per_build": v[1] / 5}
                for n, v in spent.items()
            },
        }
    return out


def part_continuation(tmp: Path, sizes: dict[str, int], force_profile: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    stores = {}
    for label in ("small", "large"):
        rows = sizes[f"rows_{label}"]
        db = tmp / f"cont-{label}.db"
        log(f"[continuation] building the {label} session: {rows:,} rows ({db})")
        with open_store(db) as store:
            gen = generate_session(store, f"bench-{label}", rows, label=label)
        gen["db_bytes"] = db.stat().st_size
        stores[label] = db
        out[label] = {"build": gen}
    if hasattr(os, "sync"):
        os.sync()  # let the OS write the new databases back before timing
    log(
        "[continuation] timing build_continuation, small and large alternately "
        "(2 warm-ups + 20 runs each)"
    )
    with open_store(stores["small"]) as small, open_store(stores["large"]) as large:
        timed = time_continuation(
            {"small": small, "large": large}, {"small": "bench-small", "large": "bench-large"}
        )
    for label in ("small", "large"):
        out[label]["timing"] = timed[label]
    ratio = out["large"]["timing"]["median_s"] / out["small"]["timing"]["median_s"]
    out["ratio"] = ratio
    out["ratio_min"] = out["large"]["timing"]["min_s"] / out["small"]["timing"]["min_s"]
    out["goal"] = CONT_GOAL
    out["goal_met"] = ratio <= CONT_GOAL
    if not out["goal_met"] or force_profile:
        log("[continuation] profiling 5 builds on the large session")
        with open_store(stores["large"]) as store:
            build_continuation(store, "bench-large")
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(5):
                build_continuation(store, "bench-large")
            prof.disable()
        out["profile"] = profile_text(prof)
    return out


# ================================================================ report


def fmt_import(name: str, g: dict[str, Any]) -> str:
    i, p = g["import"], g["parse"]
    return (
        f"  {name:<22} {i['bytes'] / MB:7.2f} MB {i['files']:4d} files {i['rows']:8,d} rows"
        f" | import {i['seconds']:6.2f}s {i['mb_per_s']:6.2f} MB/s {i['rows_per_s']:8,.0f}"
        f" rows/s | parse-only {p['mb_per_s']:7.1f} MB/s | ratio {g['ratio']:.3f}x"
    )


def report(res: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    rows: list[tuple[str, str, str, str]] = []
    imp = res.get("import")
    if imp:
        print(
            "\n== 1. Import throughput (fresh SQLite store; parse-only = read + split + "
            "orjson.loads, best of 5)"
        )
        print(fmt_import("shared/data (real)", imp["real"]))
        print(fmt_import("generated (all)", imp["generated"]))
        for h, g in imp["generated_by_harness"].items():
            print(fmt_import(f"generated {h}", g))
        ok = "goal met" if imp["goal_met"] else "goal NOT met"
        print(
            f"  import / parse-only: real {imp['real']['ratio']:.3f}x, generated "
            f"{imp['generated']['ratio']:.3f}x (goal >= {IMPORT_GOAL}x): {ok}"
        )
        print("  memory (peak RSS growth while importing one file, fresh child process):")
        for h, m in imp["memory"].items():
            a, b = m["1x"], m["4x"]
            r = f"{m['ratio_4x_1x']:.2f}x" if m["ratio_4x_1x"] else "n/a"
            print(
                f"    {h:<12} 1x {a['file_bytes'] / MB:5.1f} MB -> +{a['growth_kb'] / 1024:6.1f}"
                f" MB | 4x {b['file_bytes'] / MB:5.1f} MB -> +{b['growth_kb'] / 1024:6.1f} MB"
                f" | 4x/1x {r} | {'flat' if m['flat'] else 'GROWS with file size'}"
            )
        if "profile" in imp:
            sc = imp["store_calls"]
            print(
                f"\n  where the import time goes (one generated file per harness, "
                f"{sc['total_s']:.2f}s, each store call timed):"
            )
            for name, v in sorted(sc["calls"].items(), key=lambda kv: -kv[1]["s"]):
                calls = f"x{v['calls']}" if v["calls"] else ""
                print(f"    {name:<40} {v['s']:7.3f}s {100 * v['s'] / sc['total_s']:5.1f}% {calls}")
            print("\n  profile of the import (cProfile, top 15 by cumulative time):")
            print("    " + imp["profile"].replace("\n", "\n    "))
            print("\n  same profile, top 10 by own time:")
            print("    " + imp["profile_tottime"].replace("\n", "\n    "))
        g = imp["generated"]
        rows += [
            ("import MB/s (generated)", f"{g['import']['mb_per_s']:.2f}", "", ""),
            ("import rows/s (generated)", f"{g['import']['rows_per_s']:,.0f}", "", ""),
            ("parse-only MB/s (generated)", f"{g['parse']['mb_per_s']:.1f}", "", ""),
            (
                "import/parse (generated)",
                f"{g['ratio']:.3f}x",
                f">= {IMPORT_GOAL}x",
                "met" if g["ratio"] >= IMPORT_GOAL else "NOT met",
            ),
            (
                "import/parse (real)",
                f"{imp['real']['ratio']:.3f}x",
                f">= {IMPORT_GOAL}x",
                "met" if imp["real"]["ratio"] >= IMPORT_GOAL else "NOT met",
            ),
        ]
        for h, m in imp["memory"].items():
            rows.append(
                (
                    f"peak RSS +MB 1x/4x ({h})",
                    f"{m['1x']['growth_kb'] / 1024:.1f} / {m['4x']['growth_kb'] / 1024:.1f}",
                    "flat",
                    "met" if m["flat"] else "NOT met",
                )
            )
    cont = res.get("continuation")
    if cont:
        print("\n== 2. Continuation time vs log length (SQLite; median of 20 after 2 warm-ups)")
        for label in ("small", "large"):
            b, t = cont[label]["build"], cont[label]["timing"]
            print(
                f"  {label:<5} {b['rows']:>9,} rows ({b['runs']:,} runs, db "
                f"{b['db_bytes'] / MB:.0f} MB, written at {b['rows_per_s']:,.0f} rows/s) -> "
                f"median {t['median_s'] * 1000:7.2f} ms (min {t['min_s'] * 1000:.2f}, max "
                f"{t['max_s'] * 1000:.2f}); view: {t['messages']} messages, "
                f"{t['used_bytes']:,} B, refusal={t['refusal']}"
            )
        print("  store calls per build, ms (small -> large):")
        s, lg = cont["small"]["timing"]["store_calls_ms"], cont["large"]["timing"]["store_calls_ms"]
        for name in _STORE_CALLS:
            print(
                f"    {name:<18} x{s[name]['calls_per_build']:<4.0f}"
                f" {s[name]['ms_per_build']:8.2f} -> {lg[name]['ms_per_build']:8.2f}"
            )
        ok = "goal met" if cont["goal_met"] else "goal NOT met"
        print(
            f"  large / small: {cont['ratio']:.2f}x by median, {cont['ratio_min']:.2f}x by min"
            f" (goal <= {CONT_GOAL}x, by median): {ok}"
        )
        if "profile" in cont:
            print(
                "\n  profile of build_continuation on the large session (5 builds, cProfile, "
                "top 15 by cumulative time):"
            )
            print("    " + cont["profile"].replace("\n", "\n    "))
        rows += [
            (
                f"continuation ms ({cont['small']['build']['rows']:,} rows)",
                f"{cont['small']['timing']['median_s'] * 1000:.2f}",
                "",
                "",
            ),
            (
                f"continuation ms ({cont['large']['build']['rows']:,} rows)",
                f"{cont['large']['timing']['median_s'] * 1000:.2f}",
                "",
                "",
            ),
            (
                "continuation large/small",
                f"{cont['ratio']:.2f}x",
                f"<= {CONT_GOAL}x",
                "met" if cont["goal_met"] else "NOT met",
            ),
            (
                "session write rows/s (large)",
                f"{cont['large']['build']['rows_per_s']:,.0f}",
                "",
                "",
            ),
        ]
    return rows


def print_table(rows: list[tuple[str, str, str, str]]) -> None:
    head = ("figure", "value", "goal", "status")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    print("\n== Summary")
    print(" " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    print(" " + "-|-".join("-" * w for w in widths))
    for r in rows:
        print(" " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small run (smoke test, < 20 s)")
    ap.add_argument("--only", choices=["import", "continuation"], help="run one part")
    ap.add_argument("--rows-large", type=int, help="rows of the large session")
    ap.add_argument("--profile", action="store_true", help="print profiles even if goals are met")
    ap.add_argument("--tmp", help="folder for temporary stores (default: system temp)")
    ap.add_argument("--mem-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.mem_child:
        mem_child(args.mem_child)
        return 0
    mode = "quick" if args.quick else "full"
    sizes = dict(SIZES[mode])
    if args.rows_large:
        sizes["rows_large"] = args.rows_large
    started = time.perf_counter()
    res: dict[str, Any] = {
        "mode": mode,
        "sizes": sizes,
        "started_at": datetime.now(UTC).isoformat(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }
    with tempfile.TemporaryDirectory(prefix="continuity-bench-", dir=args.tmp) as d:
        tmp = Path(d)
        if args.only in (None, "import"):
            res["import"] = part_import(tmp, sizes, args.profile)
        if args.only in (None, "continuation"):
            res["continuation"] = part_continuation(tmp, sizes, args.profile)
    res["elapsed_s"] = time.perf_counter() - started
    table = report(res)
    table.append(("benchmark wall time", f"{res['elapsed_s']:.1f} s", "", ""))
    print_table(table)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"\nwrote {RESULTS.relative_to(ROOT)} ({mode} run, {res['elapsed_s']:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
