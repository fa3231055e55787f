"""Start-up of the read commands as processes (issue 43 goal 3).

Run from the project root:  .venv/bin/python bench/startup.py [-n N] [--json] [--keep DIR] [--src DIR]

1. Builds the sample workspace in a temporary folder as the README's quick start does:
   ``continuity import examples/sessions`` (rows embedded for search by meaning when the
   ``semantic`` extra is installed; ``--no-embed`` builds it without vectors), then one
   ``continuity remember`` so ``recall`` has a memory to find.
2. Runs each command once to warm up (bytecode written, as pip writes it at install; files
   in the page cache), then N times (default 7) as a process, stdout and stderr to pipes, next to
   ``python -c pass`` (the same interpreter), interleaved round by round so a busy machine
   slows all of them alike: ``sessions``, ``show KEY``, ``continue KEY``, ``search pytest``,
   ``recall`` (with ``--json`` too when asked). Each process is the console script's own
   entry (``continuity.cli.hookcmd.console``), as ``.venv/bin/continuity`` runs it.
3. Prints each command's median and best wall time in ms, its ratio to ``python -c pass``'s
   median, its median CPU time (user + system; steadier than wall time on a shared machine)
   and that ratio, and whether it meets goal 3 by wall time: **<= 100 ms and <= 6x
   ``python -c pass``** (both).
   A command whose exit status differs from what it gives today (0; ``recall``/``search`` 1
   when nothing matched) is reported as failed, not timed.
4. Then starts the workspace's daemon (``continuity serve`` on a free loopback port, the
   archiver off) and times ``search`` and ``recall`` again as its clients (``cli.fast``
   sends them to ``POST /api/search`` / ``/api/recall``), the rows ``... (daemon)``:
   what a user who runs the daemon, as the README's quick start does, waits for.

The figures also go to ``bench/results/startup.json`` (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results" / "startup.json"
#: Goal 3 of issue 43: a read command as a process within both bounds.
GOAL_MS = 100.0
GOAL_RATIO = 6.0
#: The Claude Code sample session with a tool call (examples/sessions/README.md).
SESSION = "3185d1ef"
ENTRY = (
    "from continuity.cli.hookcmd import console; import sys; sys.argv[0] = 'continuity'; console()"
)


def commands(with_json: bool) -> list[tuple[str, list[str]]]:
    """``(label, argv after "continuity")`` of each command timed."""
    base = [
        ("sessions", ["sessions"]),
        ("show", ["show", SESSION]),
        ("continue", ["continue", SESSION]),
        ("search", ["search", "pytest"]),
        ("recall", ["recall", "timezone"]),
    ]
    if with_json:
        base += [(f"{label} --json", [*argv, "--json"]) for label, argv in base]
    return base


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall time and CPU time (user + system) in ms of one process, and its exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu, done.returncode


def build(home: Path, env: dict[str, str], embed: bool) -> None:
    """The sample workspace in ``home``: the example sessions imported, one memory."""
    cli = [sys.executable, "-c", ENTRY]
    extra = [] if embed else ["--no-embed"]
    subprocess.run(
        [*cli, "import", *extra, str(ROOT / "examples" / "sessions")],
        env=env,
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [*cli, "remember", "export.stamp() now stamps UTC: datetime.now(timezone.utc)"],
        env=env,
        check=True,
        capture_output=True,
    )


def serve(home: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``continuity serve`` of ``home`` on a free loopback port (the archiver off, so it
    reads no harness folder of this machine), once it has written ``daemon.url``."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (home / "config.toml").write_text(f"[daemon]\nport = {port}\n\n[archive]\nenabled = false\n")
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not (home / "daemon.url").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("continuity serve did not start")
        time.sleep(0.1)
    time.sleep(2.0)  # its embedding thread loads the vectors for search (daemon.embedding)
    return proc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=7, help="runs of each command (median)")
    parser.add_argument("--json", action="store_true", help="also time each with --json")
    parser.add_argument(
        "--no-embed", action="store_true", help="build the workspace without vectors"
    )
    parser.add_argument("--keep", type=Path, help="build (or reuse) the workspace here")
    parser.add_argument(
        "--src",
        type=Path,
        default=ROOT / "src",
        help="the package source to time (default: this tree's; another checkout's src "
        "gives the before figures, e.g. from `git archive REV src | tar -x -C DIR`)",
    )
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="continuity-startup-")
    home = args.keep or Path(tmp.name) / "workspace"
    env = {**os.environ, "CONTINUITY_HOME": str(home), "NO_COLOR": ""}
    env.pop("CONTINUITY_DATABASE_URL", None)
    # as installed: pip writes every module's bytecode; a shell with this set would have each
    # process compile our modules again (tens of ms)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(args.src.resolve())  # bench the working tree (or --src)
    if not (home / "continuity.db").exists():
        print(f"building the sample workspace in {home}", file=sys.stderr)
        build(home, env, embed=not args.no_embed)
    cmds = commands(args.json)
    times: dict[str, list[float]] = {"python -c pass": []}
    cpus: dict[str, list[float]] = {"python -c pass": []}
    codes: dict[str, set[int]] = {"python -c pass": set()}
    for label, _ in cmds:
        times[label], cpus[label], codes[label] = [], [], set()
    for _, argv in cmds:  # warm-up: bytecode written, files in the page cache
        run([sys.executable, "-c", ENTRY, *argv], env)
    for _ in range(args.n):
        for label, argv in [("python -c pass", None), *cmds]:
            line = (
                [sys.executable, "-c", "pass"]
                if argv is None
                else [sys.executable, "-c", ENTRY, *argv]
            )
            wall, cpu, code = run(line, env)
            times[label].append(wall)
            cpus[label].append(cpu)
            codes[label].add(code)
    daemon = serve(home, env)
    try:
        served = [
            (f"{label} (daemon)", argv) for label, argv in cmds if argv[0] in ("search", "recall")
        ]
        for label, _ in served:
            times[label], cpus[label], codes[label] = [], [], set()
        for _, argv in served:  # warm-up
            run([sys.executable, "-c", ENTRY, *argv], env)
        for _ in range(args.n):
            for label, argv in served:
                wall, cpu, code = run([sys.executable, "-c", ENTRY, *argv], env)
                times[label].append(wall)
                cpus[label].append(cpu)
                codes[label].add(code)
    finally:
        daemon.terminate()
        daemon.wait(60)
    floor = statistics.median(times["python -c pass"])
    cpu_floor = statistics.median(cpus["python -c pass"])
    rows = []
    print(
        f"{'command':<18} {'median ms':>9} {'best ms':>8} {'x pass':>7} {'CPU ms':>7} "
        f"{'x pass':>7}  goal (<= 100 ms, <= 6x)"
    )
    for label, values in times.items():
        median = statistics.median(values)
        ratio = median / floor
        cpu = statistics.median(cpus[label])
        if label == "python -c pass":
            verdict = "(the floor)"
        elif codes[label] - {0}:
            verdict = f"FAILED: exit {sorted(codes[label])}"
        else:
            met = median <= GOAL_MS and ratio <= GOAL_RATIO
            verdict = "met" if met else "not met"
        print(
            f"{label:<18} {median:9.1f} {min(values):8.1f} {ratio:7.1f} {cpu:7.1f} "
            f"{cpu / cpu_floor:7.1f}  {verdict}"
        )
        rows.append(
            {
                "command": label,
                "median_ms": median,
                "best_ms": min(values),
                "ratio": ratio,
                "cpu_ms": cpu,
                "cpu_ratio": cpu / cpu_floor,
                "verdict": verdict,
            }
        )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"runs": args.n, "rows": rows}, indent=2) + "\n")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
