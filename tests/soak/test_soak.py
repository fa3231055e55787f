"""The 1,000 kills, small (issue 45 item 9): ``bench/soak.py`` kills the daemon, ``import``,
``watch`` and ``compact`` five times each in real processes and finds nothing lost, duplicated
or corrupt; and its comparison does find a lost, a duplicated and a torn row, so the run above
can fail."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from continuity.archive.ingest import ingest
from continuity.checkpoints.capture import CheckpointConfig
from continuity.formats.importer import discover
from continuity.store import open_store
from tests.paths import SHARED_DATA

ROOT = Path(__file__).resolve().parents[2]
KILLS = 5


def _load_soak():
    spec = importlib.util.spec_from_file_location("bench_soak", ROOT / "bench" / "soak.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["bench_soak"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_soak_kills_each_target_five_times_and_loses_nothing(tmp_path: Path) -> None:
    """Five kills per target (the CI run of ``bench/soak.py --kills 1000``): every kill a real
    ``SIGKILL``, after each one ``PRAGMA integrity_check`` ok, and after the resume the store
    equal to an uninterrupted run's (import, watch, compact) or every delivered or spooled hook
    event applied once (daemon)."""
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "soak.py"),
            "--kills",
            str(KILLS),
            "--seed",
            "45",
            "--workspace",
            str(tmp_path / "soak"),
            "--json",
            str(out),
            "--jobs",
            "4",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    results = {r["target"]: r for r in json.loads(out.read_text())}
    assert sorted(results) == ["compact", "daemon", "import", "watch"]
    for target, r in results.items():
        assert r["kills"] == KILLS, (target, r)
        assert (
            r["lost"],
            r["duplicated"],
            r["integrity_failures"],
            r["other"],
            r["failed_runs"],
        ) == (0, 0, 0, 0, 0), (target, r["failures"])
    kill_lines = [
        json.loads(line)
        for line in (tmp_path / "soak" / "import" / "kills.jsonl").read_text().splitlines()
    ]
    assert sum(k["killed"] for k in kill_lines) == KILLS
    assert all(k["integrity_after_kill"] == "ok" for k in kill_lines)
    daemon = results["daemon"]
    assert sum(daemon["notes"]["kills by phase"].values()) == KILLS
    events = daemon["notes"]["events"]
    assert events.get("spooled", 0) > 0
    assert daemon["notes"]["events checked"] == sum(events.values())
    assert "| target" in proc.stdout and "| daemon" in proc.stdout


@pytest.fixture()
def imported(tmp_path: Path) -> Path:
    """A store holding a real session imported as ``continuity import`` does (rows,
    checkpoints, transcript)."""
    db = tmp_path / "continuity.db"
    with open_store(f"sqlite:///{db}") as store:
        ingest(
            store,
            discover([SHARED_DATA / "claude-code" / "tool_heavy.jsonl"], home=tmp_path),
            config=CheckpointConfig(),
            home=tmp_path,
        )
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM session_checkpoints").fetchone()[0] > 0
    return db


def test_compare_counts_a_deleted_row_lost_a_copied_row_duplicated_a_torn_row_both(
    imported: Path,
) -> None:
    """The soak's verdict is computed, not assumed: an entry deleted is one lost, a
    checkpoint inserted twice one duplicated, a row whose content was cut one
    lost and one extra; an untouched store compares equal."""
    soak = _load_soak()
    expected = soak.snapshot(imported)
    same = soak.compare(expected, soak.snapshot(imported))
    assert (same.lost, same.duplicated, same.other) == (0, 0, 0)
    conn = sqlite3.connect(imported)
    with conn:
        conn.execute("DELETE FROM entries WHERE seq = (SELECT max(seq) FROM entries)")
    lost = soak.compare(expected, soak.snapshot(imported))
    assert lost.lost == 1 and lost.duplicated == 0
    expected = soak.snapshot(imported)
    with conn:
        conn.execute(
            "INSERT INTO session_checkpoints (session_key, harness, project, trigger,"
            " digest, prompt_count, memory_queries, recent_remembers, created_at) "
            "SELECT session_key, harness, project, trigger, digest, prompt_count, "
            "memory_queries, recent_remembers, created_at FROM session_checkpoints "
            "LIMIT 1"
        )
    copied = soak.compare(expected, soak.snapshot(imported))
    assert (copied.lost, copied.duplicated) == (0, 1)
    with conn:
        conn.execute(
            "DELETE FROM session_checkpoints WHERE checkpoint_id = "
            "(SELECT max(checkpoint_id) FROM session_checkpoints)"
        )
        conn.execute(
            "UPDATE entries SET content = substr(content, 1, 10) "
            "WHERE seq = (SELECT min(seq) FROM entries WHERE length(content) > 40)"
        )
    torn = soak.compare(expected, soak.snapshot(imported))
    conn.close()
    assert (torn.lost, torn.duplicated) == (1, 1)
    assert any("entries missing" in s for s in torn.samples)
