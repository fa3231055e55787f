"""Hostile input at volume (issue 45 item 11): the readers, the daemon's HTTP routes and the
MCP server, each fed a seeded stream of mutated real input.

Run from the project root:

    .venv/bin/python bench/fuzz.py                                  # the issue's volume
    .venv/bin/python bench/fuzz.py --lines 100000 --http 10000 --mcp 10000
    .venv/bin/python bench/fuzz.py --quick                          # 2,000 / 300 / 300
    .venv/bin/python bench/fuzz.py --only readers --seed 7

1. **Readers.** For every harness reader in ``continuity.formats`` (Claude Code, Codex, pi,
   OpenCode's mirror lines), ``--lines`` lines made from the real lines of the sample sessions
   (``tests/fixtures/samples``, the copy of ``../shared/data`` with its ``real-harness``
   recordings; OpenCode's from ``tests/fixtures/opencode`` through ``sync_mirrors``), each
   mutated (``mutate``): bytes flipped, truncated, a value swapped for another type, huge
   numbers, deep nesting, invalid UTF-8, NULs, lone-surrogate escapes, a key dropped, two
   records glued, and one line in ``--big-every`` (10,000) padded to 10 MB. Each line goes the
   importer's way: ``LineReader`` parses it (a bad line becomes a ``Line`` with ``error``, which
   the importer reports), lines nested deeper than the importer's ``MAX_NESTING`` are refused
   as the importer does, then ``reader.read`` and ``check_entry`` and the row's JSON encoding.
   Counted: lines read to an entry / skipped / refused as bad (``error``), and **exceptions**
   (any exception out of the parser or the reader: the importer would report the line as
   ``reader error``, i.e. a reader bug) and **hangs** (a line over ``HANG_SECONDS``, cut by a
   timer). Per-line time: max and p99.9. Then every ``--import-every``-th line (default every
   line) is written to session files (2,000 lines, a real head first) and imported with
   ``import_file`` into a throwaway SQLite store: no exception may escape, and each file must
   end ``imported`` with its lines accounted for.
2. **HTTP.** ``continuity serve`` (``python -m continuity.daemon.server``) on a free loopback
   port of a fresh workspace; ``--http`` requests over raw sockets, each to one of the daemon's
   routes (every path of ``/openapi.json`` plus the browser's and a few unknown ones) with a
   fuzzed method, headers (token missing or wrong, Host foreign, Content-Type wrong, Content-
   Length lying, junk header names), and body (the hook inputs recorded from the real harnesses
   in ``real-harness/hook-inputs`` mutated as above, bad JSON, wrong types, 1-40 MB bodies).
   Every request must get an HTTP answer below 500 within ``REQUEST_SECONDS``; a connection
   closed without an answer, a 5xx or a timeout is a failure. The daemon must answer
   ``/health`` after, and its exit code on SIGTERM is printed.
3. **MCP.** ``continuity mcp`` (stdio) in the same workspace, daemon up: ``initialize``, then
   ``--mcp`` fuzzed JSON-RPC lines (``tools/call`` of every tool with fuzzed arguments, other
   methods, bad ``params``, ids of every type, notifications, responses, not-JSON lines, lone
   surrogates). After each line a ``ping`` sentinel; the line must be answered before
   ``REQUEST_SECONDS`` as JSON-RPC says: a request (string or integer id) exactly once with
   its id, a line that is no valid message with an error (``id`` null or its own), a
   notification or a response not at all. The server must still answer after the last line.

Prints every figure and a verdict per part (0 exceptions, 0 hangs, every request answered);
exit status 1 when a part fails. Figures go to ``bench/results/fuzz.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

RESULTS = Path(__file__).resolve().parent / "results" / "fuzz.json"
SAMPLES = ROOT / "tests" / "fixtures" / "samples"
OPENCODE = ROOT / "tests" / "fixtures" / "opencode"
PY = sys.executable
#: A line slower than this is a hang (cut by a timer and counted).
HANG_SECONDS = 10.0
#: What one HTTP or MCP request may take before it counts as unanswered.
REQUEST_SECONDS = 20.0
BIG_LINE_BYTES = 10 * 1024 * 1024
CHILD_ENV = {
    k: v
    for k, v in os.environ.items()
    if k not in ("PYTHONDONTWRITEBYTECODE", "CONTINUITY_DATABASE_URL", "CONTINUITY_DAEMON_URL")
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- mutation

#: Invalid UTF-8 sequences (a lone continuation byte, a truncated sequence, an overlong form,
#: an encoded surrogate, bytes never valid).
BAD_UTF8 = [
    b"\x80",
    b"\xc3",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\xff\xfe",
    b"\xf4\x90\x80\x80",
    b"\xe2\x82",
]
#: Values swapped in for a field's value.
SWAPS: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**63,
    -(2**63) - 1,
    2**64 + 1,
    1e308,
    -0.0,
    0.5,
    "",
    " ",
    "\x00",
    "\ud800",
    "a\udfffb",
    "\udc80\udc81",
    "\u202e\u2028",
    [],
    {},
    [None],
    {"type": None},
    {"type": "text"},
    {"text": 1},
    [{"type": "tool_use"}],
    "x" * 70_000,
    ["a"] * 500,
    "9999-12-31T23:59:59Z",
    "0000-01-01T00:00:00Z",
    "not a date",
    1e20,
    -1e20,
]
#: Texts written raw into a line (not valid JSON numbers for every parser).
RAW_NUMBERS = [
    b"1" * 400,
    b"-" + b"9" * 400,
    b"1e999",
    b"-1e999",
    b"1E400000",
    b"0." + b"0" * 400 + b"1",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"18446744073709551616",
]


def _paths(value: Any, path: tuple = (), out: list | None = None, depth: int = 0) -> list:
    """Every (container path, key) of ``value`` down to depth 8."""
    out = [] if out is None else out
    if depth > 8:
        return out
    if isinstance(value, dict):
        for k, v in value.items():
            out.append((*path, k))
            _paths(v, (*path, k), out, depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value[:20]):
            out.append((*path, i))
            _paths(v, (*path, i), out, depth + 1)
    return out


def _set(obj: Any, path: tuple, value: Any, drop: bool = False) -> None:
    for k in path[:-1]:
        obj = obj[k]
    if drop and isinstance(obj, dict):
        obj.pop(path[-1], None)
    else:
        obj[path[-1]] = value


def _dumps(obj: Any, rng: random.Random) -> bytes:
    if rng.random() < 0.5:
        return json.dumps(obj, ensure_ascii=True).encode()
    # raw UTF-8; a lone surrogate becomes its (invalid) three bytes
    return json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _deep(depth: int, rng: random.Random) -> bytes:
    if rng.random() < 0.5:
        return b"[" * depth + b"1" + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


def mutate(raw: bytes, rng: random.Random, big: bool = False) -> tuple[str, bytes]:
    """One mutated copy of the JSON line ``raw``: ``(kind, bytes)``, no newline in it (a
    newline inside would make two lines). ``big``: padded to about 10 MB."""
    try:
        obj = json.loads(raw)
    except ValueError:
        obj = None
    if big:
        pad = rng.choice(["x", "\u00e9", "\\", '"', "\x00", "{", "\U0001f600", "\ud800"])
        text = pad * (BIG_LINE_BYTES // len(pad.encode("utf-8", "surrogatepass")))
        if isinstance(obj, dict) and obj:
            paths = _paths(obj)
            _set(obj, rng.choice(paths), text)
            return "big", json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")
        return "big", raw + text.encode("utf-8", "surrogatepass")
    kind = rng.choice(
        [
            "flip",
            "truncate",
            "swap",
            "swap",
            "swap",
            "drop",
            "number",
            "deep",
            "utf8",
            "nul",
            "surrogate",
            "glue",
            "cr",
            "wrongtop",
            "dup_key",
        ]
    )
    if kind in ("swap", "drop", "deep", "surrogate", "number", "dup_key") and not (
        isinstance(obj, dict) and obj
    ):
        kind = "flip"
    if kind == "flip":
        b = bytearray(raw)
        for _ in range(rng.randint(1, 6)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        return kind, bytes(b).replace(b"\n", b" ")
    if kind == "truncate":
        return kind, raw[: rng.randrange(len(raw) + 1)]
    if kind == "utf8":
        at = rng.randrange(len(raw) + 1)
        return kind, raw[:at] + rng.choice(BAD_UTF8) + raw[at:]
    if kind == "nul":
        at = rng.randrange(len(raw) + 1)
        return kind, raw[:at] + b"\x00" * rng.choice([1, 3, 4096]) + raw[at:]
    if kind == "glue":
        return kind, raw + raw[: rng.randrange(len(raw) + 1)] + raw
    if kind == "cr":
        return kind, raw + b"\r"
    if kind == "wrongtop":
        return kind, rng.choice([b"[]", b"null", b"1", b'"x"', b"[" + raw + b"]", b"{}", b""])
    paths = _paths(obj)
    path = rng.choice(paths)
    if kind == "swap":
        _set(obj, path, rng.choice(SWAPS))
        return kind, _dumps(obj, rng)
    if kind == "drop":
        _set(obj, path, None, drop=True)
        return kind, _dumps(obj, rng)
    if kind == "surrogate":
        _set(obj, path, rng.choice(["\ud800", "x\udbff", "\udfff\ud800", "\ud83d"]))
        return kind, json.dumps(obj, ensure_ascii=True).encode()
    marker = "@@FUZZ@@"
    _set(obj, path, marker)
    text = json.dumps(obj, ensure_ascii=True).encode()
    if kind == "number":
        return kind, text.replace(b'"' + marker.encode() + b'"', rng.choice(RAW_NUMBERS), 1)
    if kind == "deep":
        depth = rng.choice([50, 199, 201, 255, 256, 1000, 5000, 100_000])
        return kind, text.replace(b'"' + marker.encode() + b'"', _deep(depth, rng), 1)
    # dup_key: the same key twice, the second a wrong type
    return kind, text.replace(
        b'"' + marker.encode() + b'"',
        b'1, "' + str(path[-1]).encode() + b'": [' + b"{}" * 3 + b"]",
        1,
    ) if isinstance(path[-1], str) else text.replace(b'"' + marker.encode() + b'"', b"{}", 1)


# ---------------------------------------------------------------------------- reader corpus


def _jsonl_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.jsonl") if p.is_file()) if folder.is_dir() else []


def reader_corpus(workdir: Path) -> dict[str, tuple[type, Path, list[bytes]]]:
    """``{harness: (reader class, a real file of it, its real lines)}`` from the samples."""
    from continuity.formats import detect, read_head
    from continuity.formats.opencode import sync_mirrors

    files = _jsonl_files(SAMPLES)
    mirrors = workdir / "opencode-mirrors"
    for layout in ("sqlite", "json"):
        if (OPENCODE / layout).is_dir():
            try:
                files += sync_mirrors(OPENCODE / layout, mirrors / layout)
            except Exception as exc:  # noqa: BLE001 - the corpus goes on without them
                log(f"opencode mirrors of {layout}: {exc}")
    corpus: dict[str, tuple[type, Path, list[bytes]]] = {}
    for path in files:
        try:
            cls = detect(read_head(str(path)))
        except Exception:  # noqa: BLE001
            continue
        if cls is None:
            continue
        lines = [ln for ln in path.read_bytes().splitlines() if ln.strip()]
        lines = [ln for ln in lines if len(ln) < 200_000]  # mutate ordinary lines; big is made
        if not lines:
            continue
        if cls.harness not in corpus:
            corpus[cls.harness] = (cls, path, [])
        corpus[cls.harness][2].extend(lines)
    return corpus


class Hang(Exception):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise Hang()


def _read_one(reader: Any, line: Any) -> str:
    """The importer's path for one parsed line (``importer._Import._read``): ``ok`` /
    ``skipped`` / ``refused`` (too deep, or a row that cannot be encoded)."""
    from continuity.core.codec import blocks_to_json
    from continuity.formats.base import check_entry, nesting_depth
    from continuity.formats.importer import MAX_NESTING

    if (
        line.raw.count(b"[") + line.raw.count(b"{") > MAX_NESTING
        and nesting_depth(line.data, MAX_NESTING) > MAX_NESTING
    ):
        return "refused"
    entry = reader.read(line)
    if entry is None:
        return "skipped"
    check_entry(entry)
    if line.raw.count(b"[") + line.raw.count(b"{") > 200:
        try:
            blocks_to_json(entry.blocks)
        except ValueError:
            return "refused"
    return "ok"


def fuzz_reader(
    harness: str,
    cls: type,
    path: Path,
    real: list[bytes],
    n: int,
    seed: int,
    big_every: int,
    import_every: int,
    workdir: Path,
) -> dict[str, Any]:
    """``n`` mutated lines through ``cls`` (module docstring, part 1); the figures."""
    from continuity.formats import read_head
    from continuity.formats.jsonl import LineReader

    rng = random.Random(f"{seed}-{harness}")
    head = read_head(str(path))
    reader = cls(str(path), head, None)
    outcomes: Counter = Counter()
    kinds: Counter = Counter()
    exceptions: list[dict[str, Any]] = []
    exception_kinds: Counter = Counter()
    hangs: list[dict[str, Any]] = []
    times: list[float] = []
    big_times: list[float] = []
    to_import: list[bytes] = []
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for i in range(n):
            big = big_every > 0 and i % big_every == big_every - 1
            kind, raw = mutate(rng.choice(real), rng, big=big)
            kinds[kind] += 1
            if import_every and i % import_every == 0:
                to_import.append(raw)
            started = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
            try:
                for line in LineReader(io.BytesIO(raw + b"\n"), start_line=i):
                    if line.data is None:
                        outcomes["bad line"] += 1
                        continue
                    for record in line.records:
                        from dataclasses import replace

                        one = line if record is line.data else replace(line, data=record, more=())
                        outcomes[_read_one(reader, one)] += 1
            except Hang:
                hangs.append({"line": i, "kind": kind, "bytes": len(raw)})
                # a reader cut mid-line may hold half a state: start a fresh one
                reader = cls(str(path), head, None)
            except Exception as exc:  # noqa: BLE001 - counted, that is the point
                name = f"{type(exc).__name__}: {str(exc)[:120]}"
                exception_kinds[f"{type(exc).__name__} ({kind})"] += 1
                if len(exceptions) < 20:
                    exceptions.append(
                        {
                            "line": i,
                            "kind": kind,
                            "error": name,
                            "sample": raw[:300].decode("utf-8", "replace"),
                            "where": traceback.format_exc().strip().splitlines()[-3],
                        }
                    )
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            (big_times if big else times).append(time.perf_counter() - started)
    finally:
        signal.signal(signal.SIGALRM, old)
    times.sort()
    imported = import_lines(harness, path, to_import, workdir) if to_import else {}
    return {
        "harness": harness,
        "reader": cls.__name__,
        "lines": n,
        "mutations": dict(kinds),
        "outcomes": dict(outcomes),
        "exceptions": sum(exception_kinds.values()),
        "exception_kinds": dict(exception_kinds),
        "exception_samples": exceptions,
        "hangs": len(hangs),
        "hang_samples": hangs[:10],
        "line_ms_p999": round(times[min(len(times) - 1, int(0.999 * len(times)))] * 1000, 2)
        if times
        else 0.0,
        "line_ms_max": round(times[-1] * 1000, 2) if times else 0.0,
        "big_lines": len(big_times),
        "big_line_ms_max": round(max(big_times) * 1000, 1) if big_times else None,
        "import": imported,
    }


def import_lines(
    harness: str, path: Path, lines: list[bytes], workdir: Path, per_file: int = 2000
) -> dict[str, Any]:
    """The mutated ``lines`` in session files of ``per_file`` lines, each after the real
    file's first 3 lines, imported with ``import_file`` into a fresh SQLite store."""
    from continuity.formats.importer import import_file
    from continuity.store import open_store_raw

    folder = workdir / f"import-{harness}"
    folder.mkdir(parents=True, exist_ok=True)
    head = b"".join(ln + b"\n" for ln in path.read_bytes().splitlines()[:3])
    store = open_store_raw(f"sqlite:///{folder / 'fuzz.db'}")
    escaped: list[str] = []
    statuses: Counter = Counter()
    totals: Counter = Counter()
    started = time.perf_counter()
    try:
        for n, at in enumerate(range(0, len(lines), per_file)):
            f = folder / f"{path.stem}-fuzz-{n}{path.suffix}"
            f.write_bytes(head + b"".join(ln + b"\n" for ln in lines[at : at + per_file]))
            try:
                report = import_file(store, f)
            except Exception as exc:  # noqa: BLE001 - an escape is the failure counted
                escaped.append(
                    f"{f.name}: {type(exc).__name__}: {str(exc)[:200]} at "
                    + " / ".join(traceback.format_exc().strip().splitlines()[-6:-1:2])
                )
                kept = RESULTS.parent / "fuzz-escaped"
                kept.mkdir(parents=True, exist_ok=True)
                shutil.copy(f, kept / f.name)
                continue
            statuses[report.status] += 1
            totals["lines_read"] += report.lines_read
            totals["rows"] += report.imported
            totals["errors"] += len(report.errors)
            totals["reader_errors"] += sum(
                1 for _, r in report.errors if r.startswith("reader error")
            )
            totals["warnings"] += len(report.warnings)
            f.unlink()
    finally:
        store.close()
    return {
        "files": sum(statuses.values()) + len(escaped),
        "statuses": dict(statuses),
        **dict(totals),
        "escaped": len(escaped),
        "escaped_samples": escaped[:10],
        "seconds": round(time.perf_counter() - started, 1),
    }


def part_readers(
    n: int,
    seed: int,
    big_every: int,
    import_every: int,
    workdir: Path,
    harnesses: list[str] | None = None,
) -> dict[str, Any]:
    corpus = reader_corpus(workdir)
    out = {}
    for harness, (cls, path, real) in sorted(corpus.items()):
        if harnesses and harness not in harnesses:
            continue
        log(f"readers: {harness} ({cls.__name__}), {n} lines from {len(real)} real ones ...")
        started = time.perf_counter()
        fig = fuzz_reader(harness, cls, path, real, n, seed, big_every, import_every, workdir)
        fig["seconds"] = round(time.perf_counter() - started, 1)
        out[harness] = fig
        log(
            f"  {fig['outcomes']}, exceptions {fig['exceptions']}, hangs {fig['hangs']}, "
            f"import {fig['import'].get('statuses')} escaped {fig['import'].get('escaped')}"
        )
    return out


# ---------------------------------------------------------------------------- the daemon


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """``python -m continuity.daemon.server`` on a free loopback port of workspace ``home``."""

    def __init__(self, home: Path, max_body_mb: int | None = None) -> None:
        self.home = home
        home.mkdir(parents=True, exist_ok=True)
        self.env = {**CHILD_ENV, "CONTINUITY_HOME": str(home)}
        self.log = open(home.parent / "daemon.log", "ab")  # noqa: SIM115 - open while the child runs
        self.proc = subprocess.Popen(
            [PY, "-m", "continuity.daemon.server", "--home", str(home), "--port", "0"],
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while not (home / "daemon.url").exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the daemon did not start")
            time.sleep(0.05)
        self.url = (home / "daemon.url").read_text().strip()
        host, port = self.url[7:].split(":")
        self.host, self.port = host, int(port)
        self.token = (home / "daemon.token").read_text().removesuffix("\n")

    def alive(self) -> bool:
        try:
            status, _ = http_once(
                self.host,
                self.port,
                (
                    f"GET /health HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                    "Connection: close\r\n\r\n"
                ).encode(),
                10,
            )
            return status == 200
        except OSError:
            return False

    def stop(self) -> int | None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return None
        finally:
            self.log.close()


def http_once(host: str, port: int, request: bytes, timeout: float) -> tuple[int, bytes]:
    """Send ``request`` on a new connection; ``(status, head)``. Raises ``OSError`` (or
    ``TimeoutError``) when no complete answer head came; status 0 when the connection closed
    without one."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        deadline = time.monotonic() + timeout
        view = memoryview(request)
        try:
            while view:
                sent = s.send(view[: 1 << 20])
                view = view[sent:]
                # the server may answer (413, 400) and close before the whole body is sent
                r, _, _ = select.select([s], [], [], 0)
                if r:
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass  # read what it answered, if anything
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("no answer")
                s.settimeout(left)
                try:
                    chunk = s.recv(65536)
                except ConnectionResetError:
                    chunk = b""
                if not chunk:
                    return 0, buf
                buf += chunk
            head, buf = buf.split(b"\r\n\r\n", 1)
            status = int(head.split(b" ", 2)[1])
            if not 100 <= status < 200:  # an interim answer (100 Continue): the real one follows
                return status, head


# ---------------------------------------------------------------------------- HTTP


def hook_inputs() -> dict[str, list[bytes]]:
    """The recorded hook stdins of the real harnesses: ``{harness: [body]}``."""
    root = SAMPLES / "real-harness" / "hook-inputs"
    out: dict[str, list[bytes]] = {}
    for name, harness in (
        ("claude-code", "claude-code"),
        ("codex", "codex"),
        ("codex-0.169", "codex"),
        ("pi", "pi"),
    ):
        for f in sorted((root / name).glob("*.json")) if (root / name).is_dir() else []:
            out.setdefault(harness, []).append(f.read_bytes().strip())
    return out


def routes(daemon: Daemon) -> list[tuple[str, str]]:
    """``(method, path template)`` of every route in the daemon's OpenAPI schema, plus the
    browser's pages and a few it does not have."""
    with socket.create_connection((daemon.host, daemon.port), timeout=30) as s:
        s.sendall(
            (
                f"GET /openapi.json HTTP/1.1\r\nHost: {daemon.host}:{daemon.port}\r\n"
                f"Authorization: Bearer {daemon.token}\r\nConnection: close\r\n\r\n"
            ).encode()
        )
        buf = b""
        while chunk := s.recv(65536):
            buf += chunk
    body = buf.split(b"\r\n\r\n", 1)[1]
    schema = json.loads(body)
    out = [(m.upper(), p) for p, ops in schema.get("paths", {}).items() for m in ops]
    out += [
        ("GET", "/"),
        ("GET", "/ui"),
        ("GET", "/ui/sessions"),
        ("GET", "/docs"),
        ("GET", "/openapi.json"),
        ("GET", "/nope"),
        ("POST", "/api/hooks/nope"),
        ("POST", "/api/harness/nope/stop"),
        ("GET", "/api/../../etc/passwd"),
    ]
    return sorted(set(out))


EVENTS = [
    "session-start",
    "user-prompt-submit",
    "pre-compaction",
    "post-compaction",
    "stop",
    "session-end",
    "pre-tool-use",
]
METHODS = [
    "GET",
    "POST",
    "PUT",
    "DELETE",
    "PATCH",
    "HEAD",
    "OPTIONS",
    "TRACE",
    "CONNECT",
    "FOO",
    "get",
    "POST ",
    "P\x00ST",
]
CONTENT_TYPES = [
    "application/json",
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json; charset=latin-1",
    "",
    "application/\x7fjson",
    "*/*",
]


def _fill(template: str, rng: random.Random) -> str:
    def value(m: re.Match[str]) -> str:
        name = m.group(1)
        if name.startswith("harness"):
            return rng.choice(["claude-code", "codex", "pi", "cursor", ""])
        if name.startswith("event"):
            return rng.choice([*EVENTS, "nope"])
        return rng.choice(
            [
                "s-1",
                "fuzz",
                "%00",
                "%ff%fe",
                "a" * 5000,
                "..%2F..",
                "x/y/z",
                "%F0%9F%98%80",
                "ses_1",
                "'; drop table rows;--",
                "%ED%A0%80",
            ]
        )

    path = re.sub(r"\{([^}]+)\}", value, template)
    if rng.random() < 0.3:
        path += "?" + rng.choice(
            [
                "limit=-1",
                "limit=abc",
                "limit=99999999999999999999",
                "project=",
                "project=" + "p" * 5000,
                "budget_bytes=0",
                "session_key=%ED%A0%80",
                "stored=maybe",
                "harness=x",
                "q=%00&q=1",
                "a=" + "b" * 9000,
                "project=/tmp&limit=5",
            ]
        )
    return path


def _http_body(rng: random.Random, hooks: dict[str, list[bytes]], path: str) -> bytes:
    how = rng.random()
    harness = next((h for h in hooks if f"/{h}/" in path), None) or rng.choice(list(hooks))
    if how < 0.45 and hooks:
        real = rng.choice(hooks[harness])
        return mutate(real, rng)[1] if rng.random() < 0.8 else real
    if how < 0.6:
        return json.dumps(
            rng.choice(
                [
                    {
                        "harness": "claude-code",
                        "session_key": rng.choice(["s", "", None, 1, [], "\ud800"]),
                        "project": rng.choice(["/tmp/p", "", None, 1, "x" * 10000]),
                        "prompt": rng.choice(["hi", "", None, 7, {"a": 1}]),
                    },
                    {
                        "query": rng.choice(["export", "", None, 1, ["a"], "x" * 50000]),
                        "limit": rng.choice([1, 0, -1, 2**63, "5", None, 1e308]),
                    },
                    {
                        "content": rng.choice(["remember this", "", None, 1]),
                        "tags": rng.choice([[], "x", [1]]),
                        "importance": rng.choice([0.5, -1, 2, "high", None]),
                    },
                    {"session_key": "s", "reason": rng.choice(["r", None, 1])},
                    {"entries": rng.choice([[], None, "x", [{"a": 1}]]), "run_id": 1},
                ]
            ),
            ensure_ascii=rng.random() < 0.5,
        ).encode("utf-8", "surrogatepass")
    if how < 0.75:
        return rng.choice(
            [
                b"",
                b"{",
                b"null",
                b"[]",
                b"1",
                b'"x"',
                b'{"a":}',
                b"\xff\xfe",
                b"\x00" * 100,
                b"[" * 10000 + b"]" * 10000,
                b"{}" * 1000,
                b'{"a": 1e999}',
                b'{"a": ' + b"9" * 5000 + b"}",
                b"\xef\xbb\xbf{}",
            ]
        )
    if how < 0.77:
        return b"{" + b'"x":"' + b"a" * rng.choice([1, 40]) * 1024 * 1024 + b'"}'
    return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 2000)))


def http_request(
    rng: random.Random, daemon: Daemon, route: tuple[str, str], hooks: dict[str, list[bytes]]
) -> tuple[bytes, str]:
    """One fuzzed request to ``route`` and a short description."""
    method, template = route
    if rng.random() < 0.25:
        method = rng.choice(METHODS)
    path = _fill(template, rng)
    body = (
        _http_body(rng, hooks, path) if method not in ("GET", "HEAD") or rng.random() < 0.1 else b""
    )
    host = f"{daemon.host}:{daemon.port}"
    headers = [
        (
            "Host",
            rng.choice(
                [host] * 8 + ["evil.example", "", "127.0.0.1", "localhost:1", host + "\x00"]
            ),
        )
    ]
    auth = rng.random()
    if auth < 0.85:
        headers.append(("Authorization", f"Bearer {daemon.token}"))
    elif auth < 0.92:
        headers.append(
            (
                "Authorization",
                rng.choice(["Bearer x", "Basic abc", "Bearer ", "Bearer " + "t" * 9000]),
            )
        )
    if body or rng.random() < 0.5:
        headers.append(("Content-Type", rng.choice(CONTENT_TYPES)))
    length = len(body)
    lie = rng.random()
    if lie < 0.02:  # chunked, framed right (a body cut short would be no request at all)
        headers.append(("Transfer-Encoding", "chunked"))
        body = (
            b"".join(
                b"%x\r\n%s\r\n" % (len(body[i : i + 4096]), body[i : i + 4096])
                for i in range(0, len(body), 4096)
            )
            + b"0\r\n\r\n"
        )
    else:
        if lie < 0.05:  # shorter: the rest is read as the next request on the connection
            length = max(0, length - rng.randint(1, 10))
        headers.append(("Content-Length", str(length)))
    if rng.random() < 0.1:
        headers.append(
            rng.choice(
                [
                    ("X-Continuity-Event-Id", "\x7f" * 10),
                    ("X-Continuity-Event-At", rng.choice(["x", "9999-99-99", "1e308"])),
                    ("Origin", "http://evil.example"),
                    ("Cookie", "a" * 4000),
                    ("X-" + "h" * 100, "v"),
                    ("Accept", "*/*;q=x"),
                    ("Expect", "100-continue"),
                    ("Connection", "upgrade"),
                    ("Upgrade", "websocket"),
                ]
            )
        )
    headers.append(("Connection", "close"))
    text = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    data = text.encode("utf-8", "surrogatepass") + b"\r\n" + body
    return data, f"{method} {path[:80]} body {len(body)}B"


def part_http(daemon: Daemon, n: int, seed: int) -> dict[str, Any]:
    rng = random.Random(f"{seed}-http")
    hooks = hook_inputs()
    table = routes(daemon)
    statuses: Counter = Counter()
    failures: list[str] = []
    failure_kinds: Counter = Counter()
    times: list[float] = []
    started_all = time.perf_counter()
    for i in range(n):
        route = rng.choice(table)
        request, what = http_request(rng, daemon, route, hooks)
        started = time.perf_counter()
        try:
            status, head = http_once(daemon.host, daemon.port, request, REQUEST_SECONDS)
        except (OSError, TimeoutError) as exc:
            status, head = -1, f"{type(exc).__name__}: {exc}".encode()
        times.append(time.perf_counter() - started)
        statuses[status] += 1
        if status < 200 or status >= 500:
            kind = "no answer" if status <= 0 else f"HTTP {status}"
            failure_kinds[f"{kind} on {route[0]} {route[1]}"] += 1
            if len(failures) < 30:
                failures.append(f"#{i} {what}: {kind} {head[:200]!r}")
        if i % 1000 == 999:
            log(f"  http {i + 1}/{n}: {dict(statuses)}")
    alive = daemon.alive()
    times.sort()
    return {
        "requests": n,
        "routes": len(table),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "failures": sum(failure_kinds.values()),
        "failure_kinds": dict(failure_kinds),
        "failure_samples": failures,
        "alive_after": alive,
        "ms_p99": round(times[int(0.99 * (len(times) - 1))] * 1000, 1),
        "ms_max": round(times[-1] * 1000, 1),
        "seconds": round(time.perf_counter() - started_all, 1),
    }


# ---------------------------------------------------------------------------- MCP

TOOLS = ["search", "show", "recall", "remember", "checkpoint", "continuation", "nope", ""]


def _arg_value(rng: random.Random) -> Any:
    return rng.choice(
        [
            "export",
            "",
            "\ud800",
            "x" * 100_000,
            None,
            0,
            -1,
            2**63,
            1e308,
            True,
            [],
            {},
            ["a"],
            {"a": [1]},
            "9999-12-31",
            "s-1",
            "../..",
            "*",
            "\x00",
            "' OR 1=1 --",
            "NEAR(a b)",
            '"unterminated',
            "AND OR NOT",
            10,
            5000,
        ]
    )


def _arguments(rng: random.Random, tool: str) -> Any:
    names = {
        "search": [
            "query",
            "limit",
            "harness",
            "here",
            "project",
            "role",
            "tool",
            "since",
            "until",
        ],
        "show": ["session", "seq", "before", "rows"],
        "recall": ["query", "limit", "expand", "sessions", "session"],
        "remember": ["content", "tags", "importance", "type", "session"],
        "checkpoint": ["reason", "session"],
        "continuation": ["budget_bytes", "session"],
    }.get(tool, ["x"])
    if rng.random() < 0.1:
        return rng.choice([None, [], "x", 1, {"": 1}])
    return {k: _arg_value(rng) for k in rng.sample(names, rng.randint(0, len(names)))} | (
        {"extra": 1} if rng.random() < 0.1 else {}
    )


def mcp_line(rng: random.Random, n: int) -> tuple[bytes, str, Any]:
    """One fuzzed line: ``(bytes, expect, id)``; ``expect`` is ``id`` (answered once with
    that id), ``error`` (answered with an error, id null or its own), ``none`` (a
    notification or a response: no answer) or ``any`` (a mangled line: either)."""
    ident: Any = f"f-{n}" if rng.random() < 0.5 else n + 1_000_000
    how = rng.random()
    if how < 0.55:
        tool = rng.choice(TOOLS)
        msg: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": ident,
            "method": "tools/call",
            "params": {"name": tool, "arguments": _arguments(rng, tool)},
        }
    elif how < 0.7:
        msg = {
            "jsonrpc": "2.0",
            "id": ident,
            "method": rng.choice(
                [
                    "tools/list",
                    "ping",
                    "resources/list",
                    "prompts/list",
                    "initialize",
                    "nope",
                    "",
                    "tools/call",
                    "logging/setLevel",
                    "completion/complete",
                    "resources/read",
                ]
            ),
            "params": rng.choice(
                [
                    {},
                    None,
                    [],
                    "x",
                    1,
                    {"name": 1},
                    {"level": "x"},
                    {"uri": "file:///etc/passwd"},
                    {"protocolVersion": 1},
                ]
            ),
        }
        if msg["params"] is None and rng.random() < 0.5:
            del msg["params"]
    elif how < 0.75:  # a notification: no answer
        msg = {
            "jsonrpc": "2.0",
            "method": rng.choice(["notifications/cancelled", "nope", "notifications/initialized"]),
            "params": {"requestId": "f-1"},
        }
        return json.dumps(msg).encode(), "none", None
    elif how < 0.8:  # a response from the "client": no answer
        return (
            json.dumps({"jsonrpc": "2.0", "id": rng.choice(["x", 5]), "result": {}}).encode(),
            "none",
            None,
        )
    elif how < 0.88:  # unusable ids: an error answer, id null
        bad = rng.choice([1.5, True, False, None, [], {}, "\ud800"])
        msg = {
            "jsonrpc": "2.0",
            "id": bad,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "x"}},
        }
        expect = "any" if bad is None else "error"
        return json.dumps(msg).encode(), expect, None
    else:  # a mangled line
        base = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "method": "tools/call",
                "params": {"name": "recall", "arguments": {"query": "x"}},
            }
        ).encode()
        _kind, raw = mutate(base, rng)
        raw = raw.replace(b"\n", b" ").replace(b"\r", b" ")
        return raw, "any", ident
    data = json.dumps(msg, ensure_ascii=True).encode()
    if rng.random() < 0.05:  # a lone surrogate in the arguments, as an escape
        data = data.replace(b'"x"', b'"\\ud800"', 1)
    return data, "id", ident


class McpClient:
    """``continuity mcp`` on pipes; answers read by a non-blocking select loop."""

    def __init__(self, home: Path, cwd: Path) -> None:
        cmd = [str(Path(PY).with_name("continuity")), "mcp"]
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(home.parent / "mcp.log", "ab"),  # noqa: SIM115
            cwd=cwd,
            env={**CHILD_ENV, "CONTINUITY_HOME": str(home)},
        )
        self.buf = b""
        self.answers: list[Any] = []

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def read_until(self, done: Callable[[Any], bool], timeout: float) -> bool:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    msg = {"unparsed": line[:200].decode("utf-8", "replace")}
                self.answers.append(msg)
                if done(msg):
                    return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return False
                self.buf += chunk


def part_mcp(home: Path, n: int, seed: int, cwd: Path) -> dict[str, Any]:
    rng = random.Random(f"{seed}-mcp")
    client = McpClient(home, cwd)
    expect: dict[Any, str] = {}
    null_expected = 0
    any_lines = 0
    unanswered_sentinels = 0
    started = time.perf_counter()
    try:
        client.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": "init",
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "fuzz", "version": "1"},
                    },
                }
            ).encode()
        )
        if not client.read_until(lambda m: m.get("id") == "init", 60):
            raise SystemExit("the MCP server did not answer initialize")
        client.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for i in range(n):
            line, kind, ident = mcp_line(rng, i)
            if kind == "id":
                expect[ident] = "id"
            elif kind == "error":
                null_expected += 1
            elif kind == "any":
                any_lines += 1
            client.send(line)
            sentinel = f"s-{i}"
            client.send(json.dumps({"jsonrpc": "2.0", "id": sentinel, "method": "ping"}).encode())
            if not client.read_until(
                lambda m, s=sentinel: isinstance(m, dict) and m.get("id") == s, REQUEST_SECONDS
            ):
                unanswered_sentinels += 1
                log(f"  mcp: no answer to the ping after line {i}: {line[:200]!r}")
                if client.proc.poll() is not None:
                    break
            if i % 1000 == 999:
                log(f"  mcp {i + 1}/{n}")

        # every request's answer, however slow: wait for them with a last ping
        def pending() -> list:
            answered = answered_ids(client.answers)
            return [k for k in expect if k not in answered]

        deadline = time.monotonic() + REQUEST_SECONDS
        while pending() and time.monotonic() < deadline:
            client.read_until(lambda m: False, 0.5)
        client.send(b'{"jsonrpc":"2.0","id":"last","method":"ping"}')
        alive = client.read_until(
            lambda m: isinstance(m, dict) and m.get("id") == "last", REQUEST_SECONDS
        )
    finally:
        try:
            assert client.proc.stdin is not None
            client.proc.stdin.close()
        except OSError:
            pass
        try:
            code = client.proc.wait(60)
        except subprocess.TimeoutExpired:
            client.proc.kill()
            code = None
    counts = Counter()
    for m in client.answers:
        if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"].startswith("s-"):
            continue
        counts[json.dumps(m.get("id")) if isinstance(m, dict) else "not an object"] += 1
    missing = [k for k in expect if counts[json.dumps(k)] == 0]
    twice = [k for k in expect if counts[json.dumps(k)] > 1]
    nulls = counts[json.dumps(None)]
    results = Counter(
        "error"
        if isinstance(m, dict) and "error" in m
        else "result"
        if isinstance(m, dict) and "result" in m
        else "other"
        for m in client.answers
    )
    return {
        "lines": n,
        "requests_with_id": len(expect),
        "answered_once": len(expect) - len(missing) - len(twice),
        "unanswered": len(missing),
        "unanswered_samples": [str(k) for k in missing[:10]],
        "answered_twice": len(twice),
        "error_lines": null_expected,
        "null_id_answers": nulls,
        "mangled_lines": any_lines,
        "ping_timeouts": unanswered_sentinels,
        "answers": dict(results),
        "alive_after": alive,
        "exit": code,
        "seconds": round(time.perf_counter() - started, 1),
    }


def answered_ids(answers: list[Any]) -> set:
    return {
        m.get("id") for m in answers if isinstance(m, dict) and isinstance(m.get("id"), (str, int))
    }


# ---------------------------------------------------------------------------- main


def verdicts(fig: dict[str, Any]) -> dict[str, bool]:
    out = {}
    if "readers" in fig:
        out["readers"] = all(
            r["exceptions"] == 0
            and r["hangs"] == 0
            and r["import"].get("escaped", 0) == 0
            and set(r["import"].get("statuses", {})) <= {"imported"}
            for r in fig["readers"].values()
        )
    if "http" in fig:
        h = fig["http"]
        out["http"] = h["failures"] == 0 and h["alive_after"]
    if "mcp" in fig:
        m = fig["mcp"]
        out["mcp"] = (
            m["unanswered"] == 0
            and m["answered_twice"] == 0
            and m["ping_timeouts"] == 0
            and m["alive_after"]
            and m["null_id_answers"] >= m["error_lines"]
        )
    return out


def run(
    lines: int,
    http: int,
    mcp: int,
    seed: int,
    only: str | None,
    big_every: int,
    import_every: int,
    harnesses: list[str] | None = None,
) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="continuity-fuzz-"))
    fig: dict[str, Any] = {"seed": seed, "load_before": os.getloadavg()}
    try:
        if only in (None, "readers") and lines:
            fig["readers"] = part_readers(lines, seed, big_every, import_every, workdir, harnesses)
        if only in (None, "http", "mcp") and (http or mcp):
            home = workdir / "home"
            daemon = Daemon(home)
            try:
                if only in (None, "http") and http:
                    log(f"http: {http} requests ...")
                    fig["http"] = part_http(daemon, http, seed)
                if only in (None, "mcp") and mcp:
                    log(f"mcp: {mcp} lines ...")
                    project = workdir / "project"
                    project.mkdir()
                    fig["mcp"] = part_mcp(home, mcp, seed, project)
            finally:
                code = daemon.stop()
                fig["daemon_exit"] = code
        fig["load_after"] = os.getloadavg()
        fig["verdicts"] = verdicts(fig)
        return fig
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def report(fig: dict[str, Any]) -> None:
    la, lb = fig["load_before"], fig.get("load_after", (0, 0, 0))
    print(
        f"seed {fig['seed']}; load average {la[0]:.2f} before, {lb[0]:.2f} after "
        f"({os.cpu_count()} cores)"
    )
    for harness, r in fig.get("readers", {}).items():
        imp = r["import"]
        print(
            f"reader {harness} ({r['reader']}): {r['lines']} lines, outcomes {r['outcomes']}; "
            f"exceptions {r['exceptions']} {r['exception_kinds'] or ''}, hangs {r['hangs']}; "
            f"per line p99.9 {r['line_ms_p999']} ms, max {r['line_ms_max']} ms; "
            f"{r['big_lines']} lines of 10 MB, max {r['big_line_ms_max']} ms; import of "
            f"{imp.get('lines_read', 0)} lines in {imp.get('files', 0)} files: "
            f"{imp.get('statuses')}, {imp.get('rows', 0)} rows, {imp.get('errors', 0)} bad "
            f"lines reported ({imp.get('reader_errors', 0)} reader errors), "
            f"escaped {imp.get('escaped', 0)}; {r['seconds']} s"
        )
        for s in r["exception_samples"][:5]:
            print(f"    line {s['line']} ({s['kind']}): {s['error']} at {s['where']}")
    if "http" in fig:
        h = fig["http"]
        print(
            f"http: {h['requests']} requests over {h['routes']} routes, statuses "
            f"{h['statuses']}; failures (5xx, no answer, timeout) {h['failures']}; "
            f"p99 {h['ms_p99']} ms, max {h['ms_max']} ms; daemon alive after: "
            f"{h['alive_after']}; {h['seconds']} s"
        )
        for s in h["failure_samples"][:10]:
            print(f"    {s}")
    if "mcp" in fig:
        m = fig["mcp"]
        print(
            f"mcp: {m['lines']} lines, {m['requests_with_id']} requests with an id: "
            f"{m['answered_once']} answered once, {m['unanswered']} unanswered, "
            f"{m['answered_twice']} twice; {m['error_lines']} lines with an unusable id, "
            f"{m['null_id_answers']} answers with id null ({m['mangled_lines']} mangled "
            f"lines); answers {m['answers']}; ping timeouts {m['ping_timeouts']}; alive "
            f"after: {m['alive_after']}, exit {m['exit']}; {m['seconds']} s"
        )
    if "daemon_exit" in fig:
        print(f"daemon exit on SIGTERM: {fig['daemon_exit']}")
    for part, ok in fig["verdicts"].items():
        print(f"{part}: {'PASS' if ok else 'FAIL'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000, help="mutated lines per reader")
    parser.add_argument("--http", type=int, default=10_000, help="fuzzed HTTP requests")
    parser.add_argument("--mcp", type=int, default=10_000, help="fuzzed MCP lines")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--only", choices=["readers", "http", "mcp"])
    parser.add_argument(
        "--big-every", type=int, default=10_000, help="one line in N padded to 10 MB (0: none)"
    )
    parser.add_argument(
        "--import-every",
        type=int,
        default=1,
        help="import every N-th mutated line too (0: no import)",
    )
    parser.add_argument(
        "--harness",
        action="append",
        help="fuzz only this reader (claude-code, codex, pi, opencode); repeat",
    )
    parser.add_argument("--quick", action="store_true", help="2,000 lines, 300 + 300 requests")
    args = parser.parse_args(argv)
    if args.quick:
        args.lines, args.http, args.mcp, args.big_every = 2000, 300, 300, 1000
    fig = run(
        args.lines,
        args.http,
        args.mcp,
        args.seed,
        args.only,
        args.big_every,
        args.import_every,
        args.harness,
    )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(fig, indent=2, default=str) + "\n")
    report(fig)
    return 0 if all(fig["verdicts"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
