"""Benchmark of live capture: the hook command's wall time, and the daemon under load.

Run from the project root:  .venv/bin/python bench/hooks.py [--quick]

1. **Hook command wall time.** The command ``continuity hooks install`` writes
   (``python -I -S -c '... from continuity.cli.hookcmd import main; main()' user-prompt-submit
   --harness claude-code``) with a Claude Code prompt on stdin, against a running daemon (a
   real round trip: prompt counted, live transcript turn fsync'd) and against a closed port
   (the event spooled, fsync'd), next to a bare
   ``python -c pass`` measured in the same run: hyperfine when installed, else the median of N
   sequential runs (60; quick 20). Goal: hook <= 2x bare start.
2. **Daemon under load.** ``python -m continuity.daemon.server`` on a free loopback port of a fresh
   workspace. An open-loop load of 1,000 requests/s for 60 s (quick: 5 s) over 32 keep-alive
   connections: every request has a scheduled send time, and its latency is measured from that
   time (so a slow server shows as queueing, not as a lower rate). The mix is the hook traffic
   of 200 sessions in 10 projects, Claude Code turns: 46% ``user-prompt-submit`` (each a live
   transcript turn, fsync'd by group commit, then a row write in the background; promptInterval
   10 fires periodic checkpoints), 46% ``stop`` (a settled turn: the continuation policy
   queued; these sessions have no transcript file, so nothing is imported or summarized:
   ``bench/run.py`` measures imports), and 2% each of
   ``session-start`` (recovery read), ``GET /api/checkpoints/<key>``, ``POST
   /api/memory/recall`` and ``GET /health``. Bounded: exactly
   rate x duration requests, loopback only. Reports p50/p99/max, errors (non-2xx or transport),
   the achieved rate, and the daemon's RSS and database size (file + WAL) sampled every second.
   SQLite's page cache grows with the database (up to its ``cache_size`` per connection), so
   memory counts as flat when the RSS of the last fifth of the run exceeds the first fifth's by
   no more than the database grew, plus 10% slack. Goal: 0 errors, flat memory.

3. **Sustained rate (issue 17 goal 4).** The same request mix, offered at 100, 200, ... 3,000
   requests/s for 5 s a step (quick: 2 s), after a 2 s warm-up at 50/s and 5 s of rest, first
   against ``bench/bare_app.py`` (a bare FastAPI/uvicorn app with the daemon's routes and
   uvicorn settings, nothing stored), then against a fresh daemon; the highest step with p99
   below 50 ms, 0 errors and at least 95% of the rate achieved is each one's sustained rate.
   Goal: daemon >= 0.5x the bare app. The load generator runs on the same 2 cores, so both
   figures are lower than on a quiet machine; the ratio is what compares.

Figures go to ``bench/results/hooks.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results" / "hooks.json"
PY = sys.executable
RATE, SECONDS, QUICK_SECONDS, CONNECTIONS = 1000, 60, 5, 32
SESSIONS, PROJECTS = 200, 10


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


#: What a child process runs with: this environment without ``PYTHONDONTWRITEBYTECODE`` (an
#: installed user's modules load from their bytecode cache; see bench/scale.py).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------- the daemon


class Daemon:
    def __init__(self, home: Path) -> None:
        self.home = home
        (home / "config.toml").write_text("[continuity]\npromptInterval = 10\n")
        env = {**CHILD_ENV, "CONTINUITY_HOME": str(home)}
        env.pop("CONTINUITY_DATABASE_URL", None)
        self.proc = subprocess.Popen(
            [PY, "-m", "continuity.daemon.server", "--home", str(home), "--port", "0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while not (home / "daemon.url").exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the daemon did not start")
            time.sleep(0.05)
        url = (home / "daemon.url").read_text().strip()
        self.url = url
        self.host, port = url[7:].split(":")
        self.port = int(port)
        # every daemon has a token, loopback too, and serves loopback Host values only (issue 16)
        token = (home / "daemon.token").read_text().removesuffix("\n")
        global HEADERS
        HEADERS = f"Host: {self.host}:{self.port}\r\nAuthorization: Bearer {token}\r\n"

    def rss_kib(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def db_kib(self) -> int:
        names = ("continuity.db", "continuity.db-wal")
        return (
            sum((self.home / n).stat().st_size for n in names if (self.home / n).exists()) // 1024
        )

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)


# ---------------------------------------------------------------------------- hook wall time


def _time_runs(argv: list[str], stdin: bytes, env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            argv,
            input=stdin,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def _hyperfine(
    commands: dict[str, str], env: dict[str, str], runs: int, stdin_file: Path
) -> dict[str, float]:
    out = Path(tempfile.mkstemp(suffix=".json")[1])
    subprocess.run(
        [
            "hyperfine",
            "-N",
            "--warmup",
            "3",
            "--runs",
            str(runs),
            "--input",
            str(stdin_file),
            "--export-json",
            str(out),
            *commands.values(),
        ],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    results = json.loads(out.read_text())["results"]
    return {name: r["median"] * 1000 for name, r in zip(commands, results, strict=True)}


def bench_hook(daemon: Daemon, workdir: Path, runs: int) -> dict[str, Any]:
    """Median wall time (ms) of a bare Python start and of the hook, daemon up and down."""
    payload = json.dumps(
        {
            "session_id": "hook-bench",
            "cwd": "/tmp/bench/p0",
            "transcript_path": "",
            "hook_event_name": "UserPromptSubmit",
            "prompt": "also cover leap years",
        }
    ).encode()
    from continuity.daemon.hooks.install import hook_argv

    hook = [*hook_argv(), "user-prompt-submit", "--harness", "claude-code"]
    base_env = {**CHILD_ENV, "CONTINUITY_HOME": str(daemon.home)}
    up = {**base_env, "CONTINUITY_DAEMON_URL": daemon.url}
    down_home = workdir / "down-home"
    down = {
        **base_env,
        "CONTINUITY_HOME": str(down_home),
        "CONTINUITY_DAEMON_URL": f"http://127.0.0.1:{free_port()}",
    }
    for env in (up, down):  # warm the page cache
        _time_runs(hook, payload, env, 3)
    if shutil.which("hyperfine"):
        stdin_file = workdir / "stdin.json"
        stdin_file.write_bytes(payload)
        quoted = " ".join(f"'{a}'" if " " in a else a for a in hook)
        bare = _hyperfine({"bare": f"{PY} -c pass"}, base_env, runs, stdin_file)["bare"]
        hook_up = _hyperfine({"up": quoted}, up, runs, stdin_file)["up"]
        hook_down = _hyperfine({"down": quoted}, down, runs, stdin_file)["down"]
        tool = "hyperfine"
    else:
        bare = _time_runs([PY, "-c", "pass"], b"", base_env, runs)
        hook_up = _time_runs(hook, payload, up, runs)
        hook_down = _time_runs(hook, payload, down, runs)
        tool = f"median of {runs} sequential runs"
    with open(down_home / "spool" / "events.jsonl", "rb") as fh:
        spooled = sum(1 for _ in fh)
    return {
        "tool": tool,
        "runs": runs,
        "bare_python_ms": round(bare, 2),
        "hook_daemon_up_ms": round(hook_up, 2),
        "hook_daemon_down_ms": round(hook_down, 2),
        "ratio_up": round(hook_up / bare, 2),
        "ratio_down": round(hook_down / bare, 2),
        "spooled_lines": spooled,
        "goal_ratio": 2.0,
    }


# ---------------------------------------------------------------------------- load


def _request(i: int) -> bytes:
    """Request ``i`` of the mix: Claude Code turns (a prompt, then its settled Stop) of 200
    sessions, with some session starts, recalls, checkpoint reads and health checks."""
    key, project = f"bench-{i % SESSIONS}", f"/tmp/bench/p{i % PROJECTS}"
    kind = i % 50
    hook = {"harness": "claude-code", "session_key": key, "project": project}
    if kind == 0:
        return _get(f"/api/checkpoints/{key}?limit=5")
    if kind == 1:
        return _post("/api/memory/recall", {"query": f"export month {i % 7}", "limit": 5})
    if kind == 2:
        return _post("/api/hooks/session-start", {**hook, "source": "resume"})
    if kind == 3:
        return _get("/health")
    if kind % 2 == 0:
        return _post(
            "/api/hooks/user-prompt-submit",
            {**hook, "prompt": f"prompt {i}: why does the nightly export skip March?"},
        )
    return _post("/api/hooks/stop", hook)


#: The Host and Authorization header lines of the daemon under load (set when it starts).
HEADERS = ""


def _get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\n{HEADERS}\r\n".encode()


def _post(path: str, body: dict[str, Any]) -> bytes:
    data = json.dumps(body).encode()
    return (
        f"POST {path} HTTP/1.1\r\n{HEADERS}Content-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    ).encode() + data


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    if length:
        await reader.readexactly(length)
    return status


async def _load(host: str, port: int, rate: int, seconds: int) -> dict[str, Any]:
    total = rate * seconds
    start = time.perf_counter() + 0.5
    next_index = 0
    latencies: list[float] = []
    errors: list[str] = []
    lock = asyncio.Lock()

    async def worker() -> None:
        nonlocal next_index
        reader, writer = await asyncio.open_connection(host, port)
        try:
            while True:
                async with lock:
                    i = next_index
                    next_index += 1
                if i >= total:
                    return
                due = start + i / rate
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                try:
                    writer.write(_request(i))
                    await writer.drain()
                    status = await _read_response(reader)
                except (OSError, asyncio.IncompleteReadError) as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
                    writer.close()
                    reader, writer = await asyncio.open_connection(host, port)
                    continue
                latencies.append(time.perf_counter() - due)
                if not 200 <= status < 300:
                    errors.append(f"HTTP {status}")
        finally:
            writer.close()

    await asyncio.gather(*(worker() for _ in range(CONNECTIONS)))
    elapsed = time.perf_counter() - start
    latencies.sort()

    def pick(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000

    return {
        "requests": total,
        "seconds": seconds,
        "target_rate": rate,
        "achieved_rate": round(total / elapsed, 1),
        "errors": len(errors),
        "error_kinds": sorted(set(errors))[:5],
        "p50_ms": round(pick(0.50), 2),
        "p99_ms": round(pick(0.99), 2),
        "max_ms": round(latencies[-1] * 1000, 2),
    }


#: Offered rates (requests/s) of the sustained-rate search, lowest first.
STEPS = (100, 200, 300, 400, 500, 600, 700, 800, 1000, 1200, 1500, 2000, 3000)
P99_BOUND_MS = 50.0
WARM_UP_SECONDS = 5


def max_rate(host: str, port: int, seconds: int) -> dict[str, Any]:
    """The highest rate of ``STEPS`` the server sustains for ``seconds`` with p99 below
    ``P99_BOUND_MS``, 0 errors and at least 95% of the offered rate achieved (goal 4's
    measure); steps run from the lowest up and stop at the first that fails. Returns
    ``{"max_rate", "steps": [{rate, achieved, p50_ms, p99_ms, errors, ok}]}``."""
    # Warm-up, not counted: the first requests pay for lazy imports and first writes, and a
    # daemon's start (its archive child importing, its first scan) takes a few seconds of CPU.
    asyncio.run(_load(host, port, 50, 2))
    time.sleep(WARM_UP_SECONDS)
    best, steps = 0, []
    for rate in STEPS:
        fig = asyncio.run(_load(host, port, rate, seconds))
        ok = (
            fig["errors"] == 0
            and fig["p99_ms"] < P99_BOUND_MS
            and fig["achieved_rate"] >= 0.95 * rate
        )
        steps.append(
            {
                "rate": rate,
                "achieved": fig["achieved_rate"],
                "p50_ms": fig["p50_ms"],
                "p99_ms": fig["p99_ms"],
                "errors": fig["errors"],
                "ok": ok,
            }
        )
        log(
            f"  {rate}/s: p99 {fig['p99_ms']} ms, errors {fig['errors']}, "
            f"{'ok' if ok else 'over the bound'}"
        )
        if not ok:
            break
        best = rate
    return {"max_rate": best, "steps": steps}


class BareApp:
    """``bench/bare_app.py`` (a bare FastAPI/uvicorn app with the daemon's routes) on a free
    loopback port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [PY, str(Path(__file__).with_name("bare_app.py")), str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**CHILD_ENV, "PYTHONPATH": str(ROOT / "src")},
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError as exc:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the bare app did not start") from exc
                time.sleep(0.05)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(30)


def bench_rates(seconds: int) -> dict[str, Any]:
    """Goal 4: the sustained rate (``max_rate``) of the bare app, then of a fresh daemon,
    and their ratio (goal >= 0.5)."""
    global HEADERS
    workdir = Path(tempfile.mkdtemp(prefix="continuity-bench-rates-"))
    try:
        log("sustained rate, bare FastAPI/uvicorn app ...")
        bare = BareApp()
        try:
            HEADERS = f"Host: 127.0.0.1:{bare.port}\r\n"
            bare_fig = max_rate("127.0.0.1", bare.port, seconds)
        finally:
            bare.stop()
        log("sustained rate, the daemon ...")
        home = workdir / "home"
        home.mkdir()
        daemon = Daemon(home)
        try:
            daemon_fig = max_rate(daemon.host, daemon.port, seconds)
        finally:
            daemon.stop()
        ratio = daemon_fig["max_rate"] / bare_fig["max_rate"] if bare_fig["max_rate"] else 0.0
        return {
            "seconds_per_step": seconds,
            "p99_bound_ms": P99_BOUND_MS,
            "bare": bare_fig,
            "daemon": daemon_fig,
            "ratio": round(ratio, 2),
            "goal_ratio": 0.5,
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def bench_load(daemon: Daemon, seconds: int) -> dict[str, Any]:
    """The load (module docstring) with the daemon's RSS and database size each second."""
    samples: list[tuple[int, int]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(1.0):
            samples.append((daemon.rss_kib(), daemon.db_kib()))

    sampler = threading.Thread(target=sample, daemon=True)
    samples.append((daemon.rss_kib(), daemon.db_kib()))
    sampler.start()
    figures = asyncio.run(_load(daemon.host, daemon.port, RATE, seconds))
    done.set()
    sampler.join()
    fifth = max(1, len(samples) // 5)
    mib = lambda values: round(statistics.mean(values) / 1024, 1)  # noqa: E731
    rss_first = mib([r for r, _ in samples[:fifth]])
    rss_last = mib([r for r, _ in samples[-fifth:]])
    db_first, db_last = mib([d for _, d in samples[:fifth]]), mib([d for _, d in samples[-fifth:]])
    figures.update(
        {
            "rss_first_fifth_mib": rss_first,
            "rss_last_fifth_mib": rss_last,
            "rss_max_mib": round(max(r for r, _ in samples) / 1024, 1),
            "db_first_fifth_mib": db_first,
            "db_last_fifth_mib": db_last,
            "rss_every_5s_mib": [round(r / 1024, 1) for r, _ in samples[::5]],
            # SQLite's page cache grows with the database (up to its cache_size per connection):
            # memory is flat when RSS grows by no more than the database did (+10% slack).
            "memory_flat": rss_last - rss_first <= max(db_last - db_first, 0) + rss_first * 0.10,
        }
    )
    return figures


# ---------------------------------------------------------------------------- main


def run(quick: bool) -> dict[str, Any]:
    """Both parts; returns the figures (module docstring)."""
    workdir = Path(tempfile.mkdtemp(prefix="continuity-bench-hooks-"))
    try:
        home = workdir / "home"
        home.mkdir()
        daemon = Daemon(home)
        try:
            log("hook command wall time ...")
            hook = bench_hook(daemon, workdir, 20 if quick else 60)
            seconds = QUICK_SECONDS if quick else SECONDS
            log(f"daemon load: {RATE} requests/s for {seconds} s ...")
            load = bench_load(daemon, seconds)
        finally:
            load_exit = daemon.stop()
        rates = bench_rates(2 if quick else 5)
        return {
            "quick": quick,
            "hook": hook,
            "load": {**load, "daemon_exit": load_exit},
            "rates": rates,
        }
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a 5 s load instead of 60 s")
    figures = run(parser.parse_args().quick)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    h, ld = figures["hook"], figures["load"]
    print(
        f"hook wall time ({h['tool']}): bare python {h['bare_python_ms']} ms, hook "
        f"{h['hook_daemon_up_ms']} ms with the daemon up ({h['ratio_up']}x), "
        f"{h['hook_daemon_down_ms']} ms spooling ({h['ratio_down']}x); goal <= 2x"
    )
    print(
        f"daemon at {ld['target_rate']} req/s for {ld['seconds']} s: achieved "
        f"{ld['achieved_rate']}/s, p50 {ld['p50_ms']} ms, p99 {ld['p99_ms']} ms, max "
        f"{ld['max_ms']} ms, errors {ld['errors']}; RSS {ld['rss_first_fifth_mib']} -> "
        f"{ld['rss_last_fifth_mib']} MiB (max {ld['rss_max_mib']}) while the database grew "
        f"{ld['db_first_fifth_mib']} -> {ld['db_last_fifth_mib']} MiB, flat: "
        f"{ld['memory_flat']}; exit {ld['daemon_exit']}"
    )
    r = figures["rates"]
    print(
        f"sustained rate with p99 < {r['p99_bound_ms']:.0f} ms and 0 errors ({r['seconds_per_step']} s "
        f"steps): daemon {r['daemon']['max_rate']}/s, bare FastAPI/uvicorn "
        f"{r['bare']['max_rate']}/s: {r['ratio']}x; goal >= {r['goal_ratio']}x: "
        f"{'met' if r['ratio'] >= r['goal_ratio'] else 'NOT met'}"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    main()
