"""Benchmark of reading one long JSONL line (issue 22: a 63 MiB line took far longer than its
size suggests).

Run from the project root:  .venv/bin/python bench/lines.py [--quick]

For lines of 1, 4, 16, 32 and 63 MiB (quick: 1, 4, 16; MiB = 2^20 bytes), one JSON object
``{"type": "user", "content": "word word ..."}`` plus its LF, in memory, each figure the median
of N runs (quick: 3, full: 5), all measured in this run:

- **LineReader**: ``continuity.formats.jsonl.LineReader`` over the bytes (its 1 MiB chunks: a
  63 MiB line spans 63 of them), parse included;
- **baseline**: the least any reader does: read the same 1 MiB chunks, join them once, one
  ``orjson.loads``;
- **quadratic splitting**: the splitting loop ``LineReader`` had before issue 22 (the buffer
  grown with ``+=`` per chunk and searched for an LF from its start each time), parse
  included, for comparison.

Prints ms and ms/MiB per size and each one's ratio to the baseline. The baseline's own ms/MiB
grows with the size (a 1 MiB line stays in the CPU cache, larger ones do not), so linear means
a flat ratio to it. Goal: the reader within 1.5x of the baseline at every size (the
quadratic splitting is at about 7x at 63 MiB). Figures also go to
``bench/results/lines.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results" / "lines.json"
sys.path.insert(0, str(ROOT / "src"))  # bench the working tree

import orjson  # noqa: E402

from continuity.formats.jsonl import CHUNK_BYTES, LineReader  # noqa: E402

MIB = 1024 * 1024


def line_of(mib: int) -> bytes:
    """One JSON object line of ``mib`` MiB, LF included."""
    head, tail = b'{"type": "user", "content": "', b'"}\n'
    words = (mib * MIB - len(head) - len(tail)) // 5
    body = b"word " * words
    pad = mib * MIB - len(head) - len(tail) - len(body)
    return head + body + b"x" * pad + tail


def reader(data: bytes) -> None:
    lines = list(LineReader(io.BytesIO(data)))
    assert len(lines) == 1 and lines[0].data is not None


def baseline(data: bytes) -> None:
    stream, parts = io.BytesIO(data), []
    while chunk := stream.read(CHUNK_BYTES):
        parts.append(chunk)
    assert orjson.loads(b"".join(parts)).__class__ is dict


def quadratic(data: bytes) -> None:
    stream, buf, found = io.BytesIO(data), b"", 0
    while chunk := stream.read(CHUNK_BYTES):
        buf += chunk
        pos = 0
        while (nl := buf.find(b"\n", pos)) >= 0:
            orjson.loads(buf[pos:nl])
            found += 1
            pos = nl + 1
        buf = buf[pos:]
    assert found == 1


def timed(fn: Callable[[bytes], None], data: bytes, runs: int) -> float:
    """Median wall time of ``fn(data)`` in ms."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(data)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def run(quick: bool) -> dict:
    sizes = [1, 4, 16] if quick else [1, 4, 16, 32, 63]
    runs = 3 if quick else 5
    rows = []
    for mib in sizes:
        data = line_of(mib)
        print(f"{mib} MiB ...", file=sys.stderr)
        row = {
            "mib": mib,
            "reader_ms": timed(reader, data, runs),
            "baseline_ms": timed(baseline, data, runs),
            "quadratic_ms": timed(quadratic, data, runs),
        }
        rows.append(row)
    print(
        f"{'MiB':>4} {'reader ms':>10} {'ms/MiB':>7} {'ratio':>6} {'baseline ms':>12} "
        f"{'ms/MiB':>7} {'quadratic ms':>13} {'ratio':>6}"
    )
    for r in rows:
        r["reader_ratio"] = r["reader_ms"] / r["baseline_ms"]
        r["quadratic_ratio"] = r["quadratic_ms"] / r["baseline_ms"]
        print(
            f"{r['mib']:>4} {r['reader_ms']:>10.1f} {r['reader_ms'] / r['mib']:>7.2f} "
            f"{r['reader_ratio']:>5.2f}x {r['baseline_ms']:>12.1f} "
            f"{r['baseline_ms'] / r['mib']:>7.2f} {r['quadratic_ms']:>13.1f} "
            f"{r['quadratic_ratio']:>5.2f}x"
        )
    worst = max(r["reader_ratio"] for r in rows)
    print(
        f"reader vs baseline, worst size: {worst:.2f}x "
        f"(goal <= 1.5x: {'met' if worst <= 1.5 else 'MISSED'})"
    )
    result = {"rows": rows, "worst_ratio": worst, "goal_met": worst <= 1.5}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke test (up to 16 MiB)")
    run(parser.parse_args().quick)


if __name__ == "__main__":
    main()
