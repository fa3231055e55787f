"""The daemon under load (issue 45 item 10): hook events as the harnesses send them, from 50
sessions whose transcripts grow as they go, open-loop, while ``watch`` archives a burst.

Run from the project root:

    .venv/bin/python bench/load.py                    # 60 s at 1,000/s, then 10 min sustained
    .venv/bin/python bench/load.py --quick            # 10 s at 1,000/s, 1 min sustained
    .venv/bin/python bench/load.py --minutes 3 --rate 400   # skip the rate search

What it runs:

- ``continuity serve --port 0`` (the installed console script, the real daemon with its
  ``watch`` child) in a fresh workspace whose ``[archive]`` watches only a Claude Code folder
  of this run (``claude_code = <tmp>/projects``; Codex, pi and OpenCode not watched).
- 50 Claude Code sessions (``SESSIONS``) in 5 projects, each with its transcript under that
  folder, as Claude Code writes it: ``session-start`` once, then turns of
  ``user-prompt-submit`` (a user line appended first), ``pre-tool-use`` (the assistant's
  ``tool_use`` line appended first), ``stop`` (the ``tool_result`` and the answer appended
  first); ``session-end`` when the run ends. Each event is the harness's own hook stdin (the
  shapes of ``real-harness/hook-inputs/claude-code``) posted where the hook command posts it,
  ``POST /api/harness/claude-code/<event>`` with the hook's ``X-Continuity-Event-Id`` /
  ``-At`` headers, the workspace's token and id, over one keep-alive connection per session
  (asyncio, raw HTTP/1.1: the generator stays lean on a 2-core box; its own CPU is printed).
- **Open loop**: event ``i`` is due at ``start + i / rate`` and belongs to session
  ``i % 50``; a session sends its events in order, each when due or as soon as its previous one
  is answered (a harness waits for its hook), and latency is measured from the due time, so a
  stalled daemon shows as queueing, not as a lower rate.
- **Phase 1**: ``--p1-seconds`` (60; quick 10) at ``--p1-rate`` (1,000) events/s.
- The queues settle (``/health``: background tasks, queued checkpoints, consolidation and
  embedding passes at 0, at most
  ``SETTLE_SECONDS``), then **the rate search**: steps of ``STEP_SECONDS`` (quick 3) at
  ``STEPS`` events/s, lowest first, up to the first step that misses (p99 >= 50 ms, an error,
  or under 95 % of the rate achieved); the sustainable rate is the last step that held.
  ``--rate R`` skips the search; when no step holds, phase 2 runs at the lowest step.
- **Phase 2**: ``--minutes`` (10; quick 1) at the sustainable rate. At its start the
  **burst**: 10,000 small Claude Code session files (``--burst``; 4 real-shaped lines each,
  staged beforehand) are renamed into the watched folder at once, and ``watch`` archives them
  while the hooks go on; the run reports when the last of them was stored (``sources``,
  read-only), and the hooks' figures while the burst was being archived.

Printed per phase: events sent, answered, errors (transport or non-2xx), p50/p95/p99/max ms,
the events over **the hook deadline** (the hook command's: ``cli.hookcmd.TIMEOUTS[event]``
less ``spool_reserve``, the part of it the post may take before the hook spools the event
instead: 2.75 s for a prompt or a stop, 1.75 s for pre-tool-use, 4.75 s for a session start,
0.75 s for a session end), the daemon's RSS (daemon and its ``watch`` child) at start, middle
and end, its CPU and the generator's CPU (% of one core), the load average; and a verdict:
**0 errors** (per phase), **p99 < 50 ms** (phase 2, the sustained one: issue 45 item 10
puts its bound there; phase 1 is the overload the daemon must survive), **memory flat** (phase 2:
the RSS at its end, the
mean of the last 10 samples, within ``max(10 %, 16 MiB)`` of the RSS at its middle, the mean
of 10 samples around the middle: the first half is the warm-up, in which SQLite's page cache
and the archive child fill), **0 deadline misses** (phase 2, the burst window too), and for
phase 1 **every event answered**: its deadline misses are printed, not judged (the hook spools
an event at its deadline, so the harness never waits longer, and the replay applies it once).
Figures go to ``bench/results/load.json``; exit status 1 when a verdict fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from continuity.cli.hookcmd import TIMEOUTS, spool_reserve  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "load.json"
PY = Path(sys.executable)
SESSIONS, PROJECTS = 50, 5
STEPS = (100, 200, 300, 400, 500, 600, 700, 800, 1000, 1200, 1500)
STEP_SECONDS, SETTLE_SECONDS = 8, 120
P99_BOUND_MS = 50.0
#: The part of each event's hook deadline the daemon's answer may take (seconds).
DEADLINES = {e: TIMEOUTS[e] - spool_reserve(TIMEOUTS[e]) for e in TIMEOUTS}
CLK = os.sysconf("SC_CLK_TCK")
CHILD_ENV = {
    k: v
    for k, v in os.environ.items()
    if k
    not in (
        "PYTHONDONTWRITEBYTECODE",
        "CONTINUITY_DATABASE_URL",
        "CONTINUITY_DAEMON_URL",
        "CONTINUITY_DAEMON__TOKEN",
    )
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def now_iso() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


# ---------------------------------------------------------------------------- the daemon


class Daemon:
    """``continuity serve --port 0`` in a fresh workspace ``home`` whose archive child watches
    ``projects`` only."""

    def __init__(self, home: Path, projects: Path, extra_config: str = "") -> None:
        self.home = home
        home.mkdir(parents=True)
        projects.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            "[archive]\n"
            f'claude_code = "{projects}"\ncodex = ""\npi = ""\nopencode = ""\n'
            + extra_config.replace("\\n", "\n")
        )
        env = {**CHILD_ENV, "CONTINUITY_HOME": str(home)}
        self.log = open(home.parent / "serve.log", "ab")  # noqa: SIM115 - open while the child runs
        self.proc = subprocess.Popen(
            [str(PY.with_name("continuity")), "serve", "--port", "0"],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while not (home / "daemon.url").exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon did not start (see {home.parent / 'serve.log'})")
            time.sleep(0.05)
        self.url = (home / "daemon.url").read_text().strip()
        host, port = self.url[7:].split(":")
        self.host, self.port = host, int(port)
        token = (home / "daemon.token").read_text().removesuffix("\n")
        ident = (home / "daemon.id").read_text().strip() if (home / "daemon.id").exists() else ""
        from continuity.daemon.address import WORKSPACE_HEADER

        log(f"daemon pid {self.proc.pid} at {self.url}, workspace {home}")
        self.headers = f"Host: {host}:{port}\r\nAuthorization: Bearer {token}\r\n" + (
            f"{WORKSPACE_HEADER}: {ident}\r\n" if ident else ""
        )

    def pids(self) -> list[int]:
        """The daemon and its children (the ``watch`` child)."""
        out = [self.proc.pid]
        try:
            for tid in os.listdir(f"/proc/{self.proc.pid}/task"):
                with open(f"/proc/{self.proc.pid}/task/{tid}/children") as fh:
                    out += [int(p) for p in fh.read().split()]
        except OSError:
            pass
        return out

    def rss_mib(self) -> tuple[float, float]:
        """``(daemon, its children)`` resident memory in MiB."""
        values = []
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/status") as fh:
                    values.append(
                        next(int(ln.split()[1]) for ln in fh if ln.startswith("VmRSS:")) / 1024
                    )
            except (OSError, StopIteration):
                values.append(0.0)
        return values[0], sum(values[1:])

    def cpu_seconds(self) -> float:
        total = 0.0
        for pid in self.pids():
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / CLK
            except (OSError, IndexError):
                pass
        return total

    def db_mib(self) -> float:
        return (
            sum(
                (self.home / n).stat().st_size
                for n in ("continuity.db", "continuity.db-wal")
                if (self.home / n).exists()
            )
            / 2**20
        )

    def stop(self) -> int | None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(120)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            return None
        finally:
            self.log.close()


async def _answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line.split(b":", 1)[1])
    body = await reader.readexactly(length) if length else b""
    return status, body


async def get_json(daemon: Daemon, path: str) -> Any:
    reader, writer = await asyncio.open_connection(daemon.host, daemon.port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\n{daemon.headers}\r\n".encode())
        status, body = await _answer(reader)
        return json.loads(body) if status == 200 else None
    finally:
        writer.close()


# ---------------------------------------------------------------------------- sessions


class Session:
    """One Claude Code session: its ids, its transcript file, and where it is in its turn."""

    def __init__(self, n: int, projects: Path) -> None:
        self.id = str(uuid.uuid4())
        self.cwd = f"/tmp/load/project-{n % PROJECTS}"
        folder = projects / self.cwd.replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{self.id}.jsonl"
        self.parent: str | None = None
        self.turn = 0
        self.step = -1  # -1: session-start not sent yet
        self.tool_id = ""
        self.prompt_id = ""

    def _append(self, obj: dict[str, Any]) -> None:
        uid = str(uuid.uuid4())
        obj.update(
            {
                "parentUuid": self.parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": self.cwd,
                "sessionId": self.id,
                "version": "2.1.332",
                "uuid": uid,
                "timestamp": now_iso(),
            }
        )
        self.parent = uid
        with open(self.path, "ab") as fh:
            fh.write(json.dumps(obj).encode() + b"\n")

    def _base(self, event: str) -> dict[str, Any]:
        return {
            "session_id": self.id,
            "transcript_path": str(self.path),
            "cwd": self.cwd,
            "hook_event_name": event,
        }

    def next_event(self) -> tuple[str, bytes]:
        """The next hook event of this session as Claude Code sends it (its transcript lines
        written first): ``(our event name, stdin JSON)``."""
        if self.step < 0:
            self.step = 0
            return "session-start", json.dumps(
                {**self._base("SessionStart"), "source": "startup"}
            ).encode()
        step, self.step = self.step, (self.step + 1) % 3
        if step == 0:
            self.turn += 1
            self.prompt_id = str(uuid.uuid4())
            prompt = (
                f"turn {self.turn}: make the nightly export skip weekends and add a test "
                f"for the {self.turn % 7}th day"
            )
            self._append(
                {
                    "type": "user",
                    "promptId": self.prompt_id,
                    "message": {"role": "user", "content": prompt},
                }
            )
            return "user-prompt-submit", json.dumps(
                {
                    **self._base("UserPromptSubmit"),
                    "prompt_id": self.prompt_id,
                    "permission_mode": "default",
                    "prompt": prompt,
                }
            ).encode()
        if step == 1:
            self.tool_id = "toolu_" + uuid.uuid4().hex[:20]
            tool_input = {
                "command": f"pytest -q tests/test_export.py -k day{self.turn % 7}",
                "description": "Run the export tests",
            }
            self._append(
                {
                    "type": "assistant",
                    "message": {
                        "id": "msg_" + uuid.uuid4().hex[:20],
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-opus-5-5",
                        "content": [
                            {"type": "text", "text": "I will run the export tests first."},
                            {
                                "type": "tool_use",
                                "id": self.tool_id,
                                "name": "Bash",
                                "input": tool_input,
                            },
                        ],
                        "stop_reason": "tool_use",
                        "usage": {"input_tokens": 50, "output_tokens": 20},
                    },
                }
            )
            return "pre-tool-use", json.dumps(
                {
                    **self._base("PreToolUse"),
                    "prompt_id": self.prompt_id,
                    "permission_mode": "default",
                    "tool_name": "Bash",
                    "tool_input": tool_input,
                    "tool_use_id": self.tool_id,
                }
            ).encode()
        self._append(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": self.tool_id,
                            "content": f"{self.turn} passed in 0.{self.turn % 10}s",
                            "is_error": False,
                        }
                    ],
                },
                "toolUseResult": {
                    "stdout": f"{self.turn} passed",
                    "stderr": "",
                    "interrupted": False,
                },
            }
        )
        answer = f"Done: the export skips weekends; turn {self.turn}."
        self._append(
            {
                "type": "assistant",
                "message": {
                    "id": "msg_" + uuid.uuid4().hex[:20],
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-opus-5-5",
                    "content": [{"type": "text", "text": answer}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 80, "output_tokens": 12},
                },
            }
        )
        # Claude Code's Stop carries the answer the file ends with (a different text made the
        # daemon wait for the file forever: formats.md 4.1's lag, never a sync)
        return "stop", json.dumps(
            {**self._base("Stop"), "stop_hook_active": False, "last_assistant_message": answer}
        ).encode()

    def end_event(self) -> tuple[str, bytes]:
        return "session-end", json.dumps({**self._base("SessionEnd"), "reason": "other"}).encode()


def request(daemon: Daemon, event: str, body: bytes) -> bytes:
    return (
        f"POST /api/harness/claude-code/{event} HTTP/1.1\r\n{daemon.headers}"
        f"X-Continuity-Event-Id: {uuid.uuid4().hex}\r\nX-Continuity-Event-At: {now_iso()}"
        f"\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


# ---------------------------------------------------------------------------- the load


def _pick(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] * 1000 if values else 0.0


async def drive(
    daemon: Daemon,
    sessions: list[Session],
    rate: float,
    seconds: float,
    windows: dict[str, tuple[float, float]] | None = None,
    end_sessions: bool = False,
) -> dict[str, Any]:
    """``rate`` events/s for ``seconds`` (open loop, module docstring): the figures.
    ``windows``: also figures for the events due inside each ``(start, end)`` of
    ``time.monotonic()`` (filled in while running: a window whose end is 0 is still open)."""
    total = int(rate * seconds)
    n = len(sessions)
    start = time.monotonic() + 0.2
    samples: list[tuple[float, str, float]] = []  # (due, event, latency s)
    errors: list[str] = []
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    dcpu0 = daemon.cpu_seconds()

    async def one(k: int) -> None:
        s = sessions[k]
        reader = writer = None
        i = k
        while i < total:
            due = start + i / rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            event, body = s.next_event()
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection(daemon.host, daemon.port)
                writer.write(request(daemon, event, body))
                status, answer = await _answer(reader)
            except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                errors.append(f"{event}: {type(exc).__name__}: {exc}")
                if writer is not None:
                    writer.close()
                reader = writer = None
                samples.append((due, event, time.monotonic() - due))
                i += n
                continue
            samples.append((due, event, time.monotonic() - due))
            if not 200 <= status < 300:
                errors.append(f"{event}: HTTP {status} {answer[:120]!r}")
            i += n
        if end_sessions and writer is not None:
            event, body = s.end_event()
            try:
                writer.write(request(daemon, event, body))
                await _answer(reader)
            except (OSError, asyncio.IncompleteReadError):
                pass
        if writer is not None:
            writer.close()

    await asyncio.gather(*(one(k) for k in range(n)))
    elapsed = time.monotonic() - start
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    gen_cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    fig = summarize(samples, errors, rate, elapsed)
    fig.update(
        {
            "seconds": round(seconds, 1),
            "generator_cpu_pct": round(100 * gen_cpu / elapsed, 1),
            "daemon_cpu_pct": round(100 * (daemon.cpu_seconds() - dcpu0) / elapsed, 1),
        }
    )
    # when the slow answers came: p99 (ms) of the events due in each 10 s of the phase
    buckets: dict[int, list[float]] = {}
    for due, _, latency in samples:
        buckets.setdefault(int((due - start) // 10), []).append(latency)
    fig["p99_ms_per_10s"] = [round(_pick(sorted(buckets[b]), 0.99), 1) for b in sorted(buckets)]
    for name, (w0, w1) in (windows or {}).items():
        inside = [x for x in samples if w0 <= x[0] <= (w1 or float("inf"))]
        fig[name] = summarize(inside, [], rate, max(1e-9, (w1 or time.monotonic()) - w0))
        fig[name].pop("errors", None)
    return fig


def summarize(
    samples: list[tuple[float, str, float]], errors: list[str], rate: float, elapsed: float
) -> dict[str, Any]:
    lat = sorted(x[2] for x in samples)
    missed: dict[str, int] = {}
    worst: dict[str, float] = {}
    by_event: dict[str, list[float]] = {}
    for _, event, latency in samples:
        worst[event] = max(worst.get(event, 0.0), latency)
        by_event.setdefault(event, []).append(latency)
        if latency > DEADLINES[event]:
            missed[event] = missed.get(event, 0) + 1
    return {
        "target_rate": rate,
        "sent": len(samples),
        "answered": len(samples) - sum(1 for e in errors if "HTTP" not in e),
        "errors": len(errors),
        "error_kinds": sorted({e[:160] for e in errors})[:5],
        "achieved_rate": round(len(samples) / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(_pick(lat, 0.50), 1),
        "p95_ms": round(_pick(lat, 0.95), 1),
        "p99_ms": round(_pick(lat, 0.99), 1),
        "max_ms": round(lat[-1] * 1000, 1) if lat else 0,
        "deadline_misses": sum(missed.values()),
        "misses_by_event": missed,
        "max_ms_by_event": {e: round(v * 1000, 1) for e, v in sorted(worst.items())},
        "p99_ms_by_event": {
            e: round(_pick(sorted(v), 0.99), 1) for e, v in sorted(by_event.items())
        },
    }


class Sampler:
    """The daemon's RSS (daemon + children, MiB), database size, every second."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.samples: list[tuple[float, float, float, float]] = []  # t, main, children, db
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            main, kids = self.daemon.rss_mib()
            self.samples.append((time.monotonic(), main, kids, self.daemon.db_mib()))
            if self._stop.wait(1.0):
                return

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()

    def memory(self) -> dict[str, Any]:
        s = self.samples
        if not s:
            return {}
        total = [m + k for _, m, k, _ in s]
        mid = len(s) // 2
        middle = statistics.mean(total[max(0, mid - 5) : mid + 5])
        end = statistics.mean(total[-10:])
        allowed = max(0.10 * middle, 16.0)
        return {
            "rss_start_mib": round(total[0], 1),
            "rss_middle_mib": round(middle, 1),
            "rss_end_mib": round(end, 1),
            "rss_max_mib": round(max(total), 1),
            "rss_daemon_end_mib": round(statistics.mean(m for _, m, _, _ in s[-10:]), 1),
            "rss_children_end_mib": round(statistics.mean(k for _, _, k, _ in s[-10:]), 1),
            "db_start_mib": round(s[0][3], 1),
            "db_end_mib": round(s[-1][3], 1),
            # (daemon, children) MiB at each minute: growth that slows as the database's
            # page caches fill is bounded; growth at a steady rate is a leak
            "rss_per_minute_mib": [(round(m), round(k)) for _, m, k, _ in s[::60]],
            "memory_flat": end - middle <= allowed,
            "flat_rule": f"end - middle <= max(10% of middle, 16 MiB) = {allowed:.1f} MiB",
        }


async def settle(daemon: Daemon, limit: float) -> dict[str, Any]:
    """Wait until the daemon's queues are empty (``/health``), at most ``limit`` seconds."""
    started = time.monotonic()
    health: Any = None
    while time.monotonic() - started < limit:
        health = await get_json(daemon, "/health")
        if (
            health
            and not health.get("background_tasks")
            and not health.get("queued_checkpoints")
            and not health.get("consolidation_tasks")
            and not health.get("embedding_pending")
        ):
            break
        await asyncio.sleep(1.0)
    return {
        "settle_seconds": round(time.monotonic() - started, 1),
        "health": {k: v for k, v in (health or {}).items() if k != "last_replay"},
    }


async def rate_search(
    daemon: Daemon, sessions: list[Session], step_seconds: float
) -> dict[str, Any]:
    best, steps = 0, []
    for rate in STEPS:
        fig = await drive(daemon, sessions, rate, step_seconds)
        ok = (
            fig["errors"] == 0
            and fig["p99_ms"] < P99_BOUND_MS
            and fig["achieved_rate"] >= 0.95 * rate
        )
        steps.append(
            {
                k: fig[k]
                for k in (
                    "target_rate",
                    "achieved_rate",
                    "p50_ms",
                    "p99_ms",
                    "errors",
                    "daemon_cpu_pct",
                    "generator_cpu_pct",
                )
            }
            | {"ok": ok}
        )
        log(
            f"  {rate}/s: p99 {fig['p99_ms']} ms, errors {fig['errors']}, achieved "
            f"{fig['achieved_rate']}/s, daemon CPU {fig['daemon_cpu_pct']}% -> "
            f"{'held' if ok else 'missed'}"
        )
        if not ok:
            break
        best = rate
        await asyncio.sleep(1.0)
    return {"sustainable_rate": best, "steps": steps, "step_seconds": step_seconds}


# ---------------------------------------------------------------------------- the burst


def stage_burst(staging: Path, count: int) -> list[Path]:
    """``count`` small Claude Code session files (a prompt, an answer with a tool call, its
    result, a last answer) in ``staging``, one project folder per 100."""
    files = []
    for n in range(count):
        sid = str(uuid.uuid4())
        cwd = f"/tmp/burst/project-{n // 100}"
        folder = staging / cwd.replace("/", "-")
        folder.mkdir(parents=True, exist_ok=True)
        parent = None
        lines = []
        for kind, content in (
            ("user", f"burst session {n}: fix the flaky date test"),
            (
                "assistant",
                [
                    {
                        "type": "tool_use",
                        "id": f"toolu_b{n}",
                        "name": "Bash",
                        "input": {"command": "pytest"},
                    }
                ],
            ),
            (
                "user",
                [{"type": "tool_result", "tool_use_id": f"toolu_b{n}", "content": "1 passed"}],
            ),
            ("assistant", [{"type": "text", "text": "Fixed."}]),
        ):
            uid = str(uuid.uuid4())
            lines.append(
                json.dumps(
                    {
                        "parentUuid": parent,
                        "isSidechain": False,
                        "userType": "external",
                        "cwd": cwd,
                        "sessionId": sid,
                        "version": "2.1.332",
                        "type": kind,
                        "message": {"role": kind, "content": content},
                        "uuid": uid,
                        "timestamp": "2026-12-01T10:00:00.000Z",
                    }
                )
            )
            parent = uid
        path = folder / f"{sid}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        files.append(path)
    return files


class Burst:
    """The staged files renamed into the watched folder at once; ``done_at`` when ``sources``
    holds them all (polled read-only every 2 s)."""

    def __init__(self, daemon: Daemon, staging: Path, projects: Path, count: int) -> None:
        self.daemon, self.staging, self.projects, self.count = daemon, staging, projects, count
        self.started = self.done_at = 0.0
        self.stored = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> None:
        self.started = time.monotonic()
        for folder in sorted(self.staging.iterdir()):
            target = self.projects / folder.name
            target.mkdir(exist_ok=True)
            for f in folder.iterdir():
                os.rename(f, target / f.name)
        self.moved_seconds = time.monotonic() - self.started
        self._thread.start()

    def _watch(self) -> None:
        db = self.daemon.home / "continuity.db"
        while not self._stop.wait(2.0):
            try:
                con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
                try:
                    self.stored = con.execute(
                        "SELECT count(*) FROM sources WHERE path LIKE '%-tmp-burst-project-%'"
                    ).fetchone()[0]
                finally:
                    con.close()
            except sqlite3.Error:
                continue
            if self.stored >= self.count:
                self.done_at = time.monotonic()
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def figures(self) -> dict[str, Any]:
        return {
            "files": self.count,
            "stored": self.stored,
            "archived_seconds": round(self.done_at - self.started, 1) if self.done_at else None,
            "files_per_s": round(self.count / (self.done_at - self.started), 1)
            if self.done_at
            else None,
        }


# ---------------------------------------------------------------------------- main


def run(args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="continuity-load-"))
    fig: dict[str, Any] = {
        "cores": os.cpu_count(),
        "load_before": os.getloadavg(),
        "deadlines_s": DEADLINES,
        "p99_bound_ms": P99_BOUND_MS,
    }
    try:
        projects = workdir / "claude" / "projects"
        log(f"staging the burst of {args.burst} files ...")
        staging = workdir / "staging"
        stage_burst(staging, args.burst)
        daemon = Daemon(workdir / "home", projects, args.extra_config)
        sessions = [Session(n, projects) for n in range(SESSIONS)]
        try:
            with Sampler(daemon) as sampler:
                time.sleep(3)  # the daemon's start: its archive child's first pass
                log(f"phase 1: {args.p1_rate}/s for {args.p1_seconds} s ...")
                p1_start = len(sampler.samples)
                p1 = asyncio.run(drive(daemon, sessions, args.p1_rate, args.p1_seconds))
                p1["memory"] = _window(sampler, p1_start)
                fig["phase1"] = p1
                log(f"  p99 {p1['p99_ms']} ms, errors {p1['errors']}")
                fig["settle_after_phase1"] = asyncio.run(settle(daemon, SETTLE_SECONDS))
                if args.rate:
                    rate = args.rate
                    fig["rate_search"] = {"sustainable_rate": rate, "given": True}
                else:
                    log("rate search ...")
                    fig["rate_search"] = asyncio.run(
                        rate_search(daemon, sessions, args.step_seconds)
                    )
                    rate = fig["rate_search"]["sustainable_rate"] or STEPS[0]
                    asyncio.run(settle(daemon, SETTLE_SECONDS))
                seconds = args.minutes * 60
                log(
                    f"phase 2: {rate}/s for {seconds:.0f} s, the burst of {args.burst} "
                    "files at its start ..."
                )
                burst = Burst(daemon, staging, projects, args.burst) if args.burst else None
                windows: dict[str, tuple[float, float]] = {}
                p2_start = len(sampler.samples)

                async def phase2() -> dict[str, Any]:
                    task = asyncio.ensure_future(
                        drive(daemon, sessions, rate, seconds, windows, end_sessions=True)
                    )
                    if burst:
                        await asyncio.sleep(1.0)
                        burst.start()
                        windows["while_burst"] = (burst.started, 0.0)
                        while not task.done():
                            await asyncio.sleep(0.5)
                            if burst.done_at and not windows["while_burst"][1]:
                                windows["while_burst"] = (burst.started, burst.done_at)
                        # a window still open at the end closes with the phase
                    return await task

                p2 = asyncio.run(phase2())
                p2["memory"] = _window(sampler, p2_start)
                if burst:
                    burst.stop()
                    p2["burst"] = burst.figures() | {"moved_seconds": round(burst.moved_seconds, 2)}
                fig["phase2"] = p2
                log(f"  p99 {p2['p99_ms']} ms, errors {p2['errors']}")
                fig["settle_after_phase2"] = asyncio.run(settle(daemon, SETTLE_SECONDS))
        finally:
            fig["daemon_exit"] = daemon.stop()
        fig["load_after"] = os.getloadavg()
        fig["verdicts"] = verdicts(fig)
        return fig
    finally:
        if args.keep:
            log(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def _window(sampler: Sampler, first: int) -> dict[str, Any]:
    part = Sampler.__new__(Sampler)
    part.samples = sampler.samples[first:]
    return part.memory()


def verdicts(fig: dict[str, Any]) -> dict[str, bool]:
    out = {}
    for name in ("phase1", "phase2"):
        p = fig.get(name)
        if p:
            # issue 45 item 10: the bounds (p99 < 50 ms, deadlines kept while the burst is
            # archived) are the sustained phase's; phase 1, ten times the sustainable rate on
            # this 2-core machine, is the overload it must survive: every event answered, no
            # error. An answer past a hook's deadline is counted (printed) but not a failure
            # there: the hook command spools the event at its deadline, so the harness never
            # waits longer, and the replay applies it once (the spool's event ids).
            if name == "phase2":
                out[f"{name}: p99 < {P99_BOUND_MS:.0f} ms"] = p["p99_ms"] < P99_BOUND_MS
                out[f"{name}: 0 hook deadline misses"] = p["deadline_misses"] == 0
            else:
                out[f"{name}: every event answered"] = p["answered"] == p["sent"]
            out[f"{name}: 0 errors"] = p["errors"] == 0
    if fig.get("phase2", {}).get("memory"):
        out["phase2: memory flat"] = fig["phase2"]["memory"]["memory_flat"]
    if fig.get("phase2", {}).get("burst"):
        b = fig["phase2"]["burst"]
        out["burst: all archived"] = b["stored"] >= b["files"]
    return out


def _line(name: str, p: dict[str, Any]) -> str:
    m = p.get("memory", {})
    return (
        f"{name}: {p['target_rate']}/s for {p['seconds']} s: sent {p['sent']}, answered "
        f"{p['answered']}, errors {p['errors']}, achieved {p['achieved_rate']}/s; "
        f"p50 {p['p50_ms']} / p95 {p['p95_ms']} / p99 {p['p99_ms']} / max {p['max_ms']} ms; "
        f"over the hook deadline {p['deadline_misses']} {p['misses_by_event'] or ''}; "
        f"RSS start/middle/end {m.get('rss_start_mib')} / {m.get('rss_middle_mib')} / "
        f"{m.get('rss_end_mib')} MiB (max {m.get('rss_max_mib')}; db {m.get('db_start_mib')}"
        f" -> {m.get('db_end_mib')} MiB); CPU daemon {p['daemon_cpu_pct']}%, generator "
        f"{p['generator_cpu_pct']}%; p99 by event {p.get('p99_ms_by_event')}"
    )


def report(fig: dict[str, Any]) -> None:
    lb, la = fig["load_before"], fig.get("load_after", (0, 0, 0))
    print(
        f"{fig['cores']} cores; load average {lb[0]:.2f} {lb[1]:.2f} {lb[2]:.2f} before, "
        f"{la[0]:.2f} {la[1]:.2f} {la[2]:.2f} after; {SESSIONS} sessions, {PROJECTS} projects"
    )
    print(
        "hook deadline (the hook command's, less its spool reserve): "
        + ", ".join(f"{e} {s:g} s" for e, s in DEADLINES.items())
    )
    if "phase1" in fig:
        print(_line("phase 1", fig["phase1"]))
        print(f"  p99 ms per 10 s: {fig['phase1']['p99_ms_per_10s']}")
        s = fig["settle_after_phase1"]
        print(f"  queues settled after phase 1 in {s['settle_seconds']} s: {s['health']}")
    r = fig.get("rate_search", {})
    if r.get("steps"):
        print(
            "rate search ("
            + f"{r['step_seconds']} s steps): "
            + ", ".join(
                f"{s['target_rate']}/s p99 {s['p99_ms']} ms{'' if s['ok'] else ' MISSED'}"
                for s in r["steps"]
            )
            + f"; sustainable: {r['sustainable_rate']}/s"
        )
    elif r:
        print(f"rate given: {r['sustainable_rate']}/s (no search)")
    if "phase2" in fig:
        p = fig["phase2"]
        print(_line("phase 2", p))
        print(f"  p99 ms per 10 s: {p['p99_ms_per_10s']}")
        print(f"  RSS (daemon, children) MiB per minute: {p['memory'].get('rss_per_minute_mib')}")
        print(
            f"  memory rule: {p['memory'].get('flat_rule')}: "
            f"{'flat' if p['memory'].get('memory_flat') else 'NOT flat'}"
        )
        if "burst" in p:
            b = p["burst"]
            w = p.get("while_burst", {})
            print(
                f"  burst: {b['files']} files moved in in {b['moved_seconds']} s, "
                f"{b['stored']} stored, all archived after {b['archived_seconds']} s "
                f"({b['files_per_s']} files/s)"
            )
            if w:
                print(
                    f"  hooks while the burst was archived: {w['sent']} events, p50 "
                    f"{w['p50_ms']} / p99 {w['p99_ms']} / max {w['max_ms']} ms, over the "
                    f"deadline {w['deadline_misses']}; worst by event "
                    f"{w['max_ms_by_event']}"
                )
        s = fig["settle_after_phase2"]
        print(f"  queues settled after phase 2 in {s['settle_seconds']} s: {s['health']}")
    print(f"daemon exit on SIGTERM: {fig.get('daemon_exit')}")
    for name, ok in fig["verdicts"].items():
        print(f"{name}: {'PASS' if ok else 'FAIL'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--p1-rate", type=float, default=1000.0)
    parser.add_argument("--p1-seconds", type=float, default=60.0)
    parser.add_argument("--minutes", type=float, default=10.0, help="phase 2's length")
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="phase 2's rate (events/s) instead of the measured one",
    )
    parser.add_argument("--step-seconds", type=float, default=STEP_SECONDS)
    parser.add_argument("--burst", type=int, default=10_000, help="files of the watch burst")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="10 s phase 1, 3 s steps, 1 min phase 2, a 2,000-file burst",
    )
    parser.add_argument("--keep", action="store_true", help="keep the workspace")
    parser.add_argument(
        "--extra-config",
        default="",
        metavar="TOML",
        help="appended to the workspace's config.toml (a literal \\n is a "
        "newline), e.g. '[retrieval]\\nat_action = false' to measure "
        "the daemon without recall at the point of action",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.p1_seconds, args.step_seconds = 10.0, 3.0
        args.minutes = 1.0 if args.minutes == 10.0 else args.minutes
        args.burst = 2000 if args.burst == 10_000 else args.burst
    fig = run(args)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(fig, indent=2, default=str) + "\n")
    report(fig)
    return 0 if all(fig["verdicts"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
