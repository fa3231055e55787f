"""A small run of ``bench/fuzz.py`` in the normal suite (issue 45 item 11: hostile input at
volume; the full run is ``.venv/bin/python bench/fuzz.py``, 100,000 lines per reader, 10,000
HTTP and 10,000 MCP requests). Every reader gets mutated real lines (every mutation kind,
one 10 MB line), the real daemon fuzzed HTTP requests on every route, the MCP server fuzzed
JSON-RPC: no exception out of a reader or the importer, no hang, every HTTP request answered
below 500, every JSON-RPC request answered once. Also asserted: the run reached what it is
meant to (bad lines and good ones, 2xx and 4xx answers, results and errors), so a fuzz that
silently stopped fuzzing fails too. About 30-40 s on a 2-core machine."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fuzz():
    spec = importlib.util.spec_from_file_location("bench_fuzz", ROOT / "bench" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["bench_fuzz"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("bench_fuzz", None)


KINDS = {
    "flip",
    "truncate",
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
    "big",
}


def test_mutate_makes_every_kind_and_never_a_newline(fuzz):
    rng = random.Random(1)
    line = (
        b'{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text",'
        b'"text":"hi"}]},"n":1}'
    )
    seen = set()
    for i in range(3000):
        kind, raw = fuzz.mutate(line, rng, big=i % 150 == 0)  # every pad character
        seen.add(kind)
        assert b"\n" not in raw, (kind, raw[:200])
    assert seen == KINDS


def test_every_reader_takes_mutated_real_lines(fuzz, tmp_path: Path):
    figures = fuzz.part_readers(1500, seed=45, big_every=1000, import_every=1, workdir=tmp_path)
    assert set(figures) == {"claude-code", "codex", "pi", "opencode"}
    for harness, fig in figures.items():
        assert fig["exceptions"] == 0, (harness, fig["exception_samples"])
        assert fig["hangs"] == 0, (harness, fig["hang_samples"])
        assert fig["big_lines"] == 1 and fig["big_line_ms_max"] < fuzz.HANG_SECONDS * 1000
        # both ways a line goes: read to a row, and refused as a bad line
        assert fig["outcomes"].get("ok", 0) > 300 and fig["outcomes"].get("bad line", 0) > 300
        imported = fig["import"]
        assert imported["escaped"] == 0, (harness, imported["escaped_samples"])
        assert imported["statuses"] == {"imported": 1}, (harness, imported)
        assert imported["reader_errors"] == 0, harness
        assert imported["rows"] > 0 and imported["errors"] > 0


def test_the_daemon_answers_fuzzed_http_and_mcp(fuzz, tmp_path: Path):
    daemon = fuzz.Daemon(tmp_path / "home")
    try:
        http = fuzz.part_http(daemon, 250, seed=45)
        project = tmp_path / "project"
        project.mkdir()
        mcp = fuzz.part_mcp(daemon.home, 150, seed=45, cwd=project)
    finally:
        code = daemon.stop()
    assert http["failures"] == 0, http["failure_samples"]
    assert http["alive_after"]
    statuses = {int(s) for s in http["statuses"]}
    assert any(200 <= s < 300 for s in statuses) and any(400 <= s < 500 for s in statuses)
    assert mcp["unanswered"] == 0, mcp["unanswered_samples"]
    assert mcp["answered_twice"] == 0 and mcp["ping_timeouts"] == 0 and mcp["alive_after"]
    assert mcp["requests_with_id"] > 50 and mcp["answered_once"] == mcp["requests_with_id"]
    assert mcp["null_id_answers"] >= mcp["error_lines"] > 0
    assert mcp["answers"].get("result", 0) > 0 and mcp["answers"].get("error", 0) > 0
    assert code == 0
