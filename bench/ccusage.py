"""``ccusage`` (Node) on the same Claude Code files: issue 17 goal 1's second baseline.

The goal: a fresh ``continuity import`` is never slower than ``ccusage`` on the same Claude
Code files. ``ccusage`` reads every line of ``$CLAUDE_CONFIG_DIR/projects/**/*.jsonl`` and
sums token usage (it stores nothing), so it is the speed of reading these files in Node.

``ccusage_speed(files, tmp)`` installs the pinned version (``VERSION``, one whose npm package
runs on Node alone: 20.0.26 needs a native binary this machine's registry lacks) once
into ``~/.cache/continuity-bench/npm`` (``CONTINUITY_BENCH_CACHE`` moves it), hard-links
(else copies) ``files`` into a ``projects`` folder, runs ``ccusage daily --offline --json``
(offline: its bundled prices, no network) and returns the best of ``runs`` wall times,
or ``{"error": why}`` when npm, the install or the run fails. Used by ``bench/scale.py``;
runnable alone:

    .venv/bin/python bench/ccusage.py FILE_OR_FOLDER...
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

VERSION = "18.0.11"
MB = 1_000_000


def _cache() -> Path:
    return (
        Path(os.environ.get("CONTINUITY_BENCH_CACHE", Path.home() / ".cache" / "continuity-bench"))
        / "npm"
    )


def install() -> Path:
    """The ``ccusage`` executable of ``VERSION``, installed on first use. Raises
    ``RuntimeError`` naming what failed."""
    root = _cache() / f"ccusage-{VERSION}"
    exe = root / "node_modules" / ".bin" / "ccusage"
    if exe.exists():
        return exe
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH")
    root.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            npm,
            "install",
            "--silent",
            "--no-audit",
            "--no-fund",
            "--prefix",
            str(root),
            f"ccusage@{VERSION}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0 or not exe.exists():
        raise RuntimeError(
            f"npm install ccusage@{VERSION} failed: {(done.stderr or done.stdout).strip()[-500:]}"
        )
    return exe


def _place(files: list[Path], projects: Path) -> None:
    projects.mkdir(parents=True, exist_ok=True)
    for i, f in enumerate(files):
        target = projects / f"{i:05d}-{f.name}"
        try:
            os.link(f, target)
        except OSError:
            shutil.copyfile(f, target)


def ccusage_speed(files: list[Path], tmp: Path, runs: int = 3) -> dict[str, Any]:
    """Best of ``runs`` of ``ccusage daily --offline --json`` over ``files``:
    ``{"version", "seconds", "bytes", "mb_per_s", "days"}`` or ``{"error"}``."""
    try:
        exe = install()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        return {"error": str(exc)}
    cfg = Path(tempfile.mkdtemp(prefix="ccusage-", dir=tmp))
    try:
        _place(files, cfg / "projects" / "bench")
        env = {**os.environ, "CLAUDE_CONFIG_DIR": str(cfg)}
        times, days = [], 0
        for _ in range(runs):
            t0 = time.perf_counter()
            done = subprocess.run(
                [str(exe), "daily", "--offline", "--json"],
                env=env,
                capture_output=True,
                timeout=3600,
            )
            times.append(time.perf_counter() - t0)
            if done.returncode != 0:
                return {
                    "error": f"ccusage exited {done.returncode}: "
                    f"{done.stderr.decode(errors='replace')[-500:]}"
                }
            days = done.stdout.count(b'"date"')
        nbytes = sum(f.stat().st_size for f in files)
        best = min(times)
        return {
            "version": VERSION,
            "seconds": best,
            "bytes": nbytes,
            "mb_per_s": nbytes / MB / best,
            "days": days,
        }
    finally:
        shutil.rmtree(cfg, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        help_asked = len(sys.argv) == 2
        print(__doc__, file=sys.stdout if help_asked else sys.stderr)
        raise SystemExit(0 if help_asked else 2)
    found: list[Path] = []
    for arg in sys.argv[1:]:
        p = Path(arg)
        found += sorted(p.rglob("*.jsonl")) if p.is_dir() else [p]
    if not found:
        raise SystemExit("no .jsonl files given")
    with tempfile.TemporaryDirectory() as d:
        print(ccusage_speed(found, Path(d)))
