"""``continuity usage`` next to ``ccusage daily`` on the same Claude Code files (issue 44 item 1).

Run from the project root:  .venv/bin/python bench/usage.py [--mb N]

Builds ``--mb`` MB (default 20) of Claude Code session files with ``bench/run.py``'s generator
(real sample lines repeated with fresh ids and later times), imports them into a temp
workspace, then times ``continuity usage --json --offline`` (a child process, best of 3: its
start, reading every kept raw line back from SQLite, pricing, grouping) next to ``ccusage
daily --offline --json`` (``bench/ccusage.py``, best of 3, reading the files themselves), and
checks the two give the same daily token totals. No goal is set; the figure to watch is the
ratio (the report reads the workspace, which ccusage cannot: the files may be gone).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as base  # the corpus generator (bench/ on sys.path above)
from ccusage import VERSION, install

FILE_BYTES = 1_000_000
TOKENS = {
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "cacheCreationTokens": "cache_creation_tokens",
    "cacheReadTokens": "cache_read_tokens",
}


def _best(args: list[str], env: dict[str, str], runs: int = 3) -> tuple[float, bytes]:
    best, out = float("inf"), b""
    for _ in range(runs):
        t0 = time.perf_counter()
        done = subprocess.run(args, env=env, capture_output=True, timeout=3600, check=True)
        best = min(best, time.perf_counter() - t0)
        out = done.stdout
    return best, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=20, help="MB of Claude Code files (20)")
    args = parser.parse_args(argv)
    exe = install()
    with tempfile.TemporaryDirectory(prefix="usage-bench-") as tmp_name:
        tmp = Path(tmp_name)
        corpus = tmp / "corpus"
        base.generate_corpus(corpus, max(1, args.mb * 1_000_000 // FILE_BYTES), FILE_BYTES)
        shutil.rmtree(corpus / "pi")
        claude = tmp / "claude" / "projects" / "bench"
        claude.parent.mkdir(parents=True)
        shutil.move(corpus / "claude-code", claude)
        nbytes = sum(f.stat().st_size for f in claude.glob("*.jsonl"))
        home = tmp / "ws"
        cli = [str(Path(sys.executable).with_name("continuity"))]
        env = {**os.environ, "CONTINUITY_HOME": str(home), "TZ": "UTC"}
        subprocess.run(
            [*cli, "import", str(claude), "--json"], env=env, capture_output=True, check=True
        )
        ours_s, ours_out = _best([*cli, "usage", "--json", "--offline"], env)
        env_cc = {**env, "CLAUDE_CONFIG_DIR": str(tmp / "claude")}
        theirs_s, theirs_out = _best(
            [str(exe), "daily", "--offline", "--json", "--timezone", "UTC"], env_cc
        )
        ours, theirs = json.loads(ours_out), json.loads(theirs_out)
        same = {r["key"]: {k: r[k] for k in TOKENS.values()} for r in ours["rows"]} == {
            d["date"]: {v: d[k] for k, v in TOKENS.items()} for d in theirs["daily"]
        }
    print(
        json.dumps(
            {
                "mb": round(nbytes / 1_000_000, 1),
                "continuity_usage_s": round(ours_s, 3),
                f"ccusage_{VERSION}_daily_s": round(theirs_s, 3),
                "ratio": round(ours_s / theirs_s, 2),
                "same_daily_tokens": same,
            },
            indent=2,
        )
    )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
