"""``continuity usage`` against ccusage on the same Claude Code files (issue 44 item 1, "Done
when": the same token totals, tested in CI).

ccusage (``VERSION``, the release ``bench/ccusage.py`` pins: its npm package runs on Node
alone) is installed from the npm registry once into ``$CONTINUITY_E2E_CACHE/ccusage-VERSION``
(beside the harness CLIs' cache, ``tests/e2e/conftest.cache_dir``); a missing npm or a failed
install FAILS the test, never skips it (the e2e marker: CI runs it). Each Claude Code sample
file is placed in a folder of its own under ``$CLAUDE_CONFIG_DIR/projects`` (ccusage's
``session`` report is one row per folder), ccusage runs ``daily`` and ``session`` with
``--offline --json --timezone UTC``, and the same files are imported into a workspace.

The sample files are from 2025-09 to 2026-12: every run asks from 2025-01-01 on, so the test
does not age.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from continuity.api.workspace import Workspace
from continuity.usage.prices import shipped
from continuity.usage.report import breakdown, collect, price
from tests.cli.running import run_main
from tests.e2e.conftest import NPM_TIMEOUT, cache_dir

#: bench/ccusage.py's pinned release.
VERSION = "18.0.11"
SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "samples"
SINCE = "2025-01-01"


def claude_code_files() -> list[Path]:
    """Every Claude Code sample file (the viewer's and spotter's, and the real 2.1 ones)."""
    files = sorted((SAMPLES / "claude-code").glob("*.jsonl"))
    files += sorted((SAMPLES / "real-harness" / "claude-code" / "projects").rglob("*.jsonl"))
    assert len(files) == 11
    return files


def ensure_ccusage() -> Path:
    """The ccusage executable of ``VERSION``, installed when the cache lacks it."""
    prefix = cache_dir().parent / f"ccusage-{VERSION}"
    exe = prefix / "node_modules" / ".bin" / "ccusage"
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix.parent / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        meta = prefix / "node_modules" / "ccusage" / "package.json"
        installed = json.loads(meta.read_text())["version"] if meta.exists() else None
        if installed != VERSION:
            npm = shutil.which("npm")
            if npm is None:
                pytest.fail(f"npm not found on PATH; this test installs ccusage@{VERSION}")
            done = subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(prefix),
                    "--save-exact",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    f"ccusage@{VERSION}",
                ],
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT,
            )
            if done.returncode != 0:
                pytest.fail(f"npm install ccusage@{VERSION} failed: {done.stderr[-2000:]}")
    if not os.access(exe, os.X_OK):
        pytest.fail(f"ccusage installed, but {exe} is not executable")
    return exe


@pytest.fixture(scope="module")
def ccusage() -> Path:
    return ensure_ccusage()


@pytest.fixture
def claude_dir(tmp_path: Path) -> Path:
    """``$CLAUDE_CONFIG_DIR`` with each sample file in a project folder of its own."""
    root = tmp_path / "claude"
    for i, f in enumerate(claude_code_files()):
        folder = root / "projects" / f"p{i:02d}"
        folder.mkdir(parents=True)
        shutil.copyfile(f, folder / f.name)
    return root


def run_ccusage(
    exe: Path, claude_dir: Path, report: str, *, tz: str | None = "UTC"
) -> dict[str, Any]:
    """ccusage's ``report`` as JSON, days in ``tz`` (``--timezone``); ``tz=None`` gives no
    ``--timezone`` and runs it with ``$TZ`` America/Los_Angeles (its default: the local zone)."""
    zone = ["--timezone", tz] if tz is not None else []
    done = subprocess.run(
        [str(exe), report, "--offline", "--json", *zone, "--since", SINCE.replace("-", "")],
        env={
            **os.environ,
            "CLAUDE_CONFIG_DIR": str(claude_dir),
            "TZ": tz or "America/Los_Angeles",
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


TOKENS = {
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "cacheCreationTokens": "cache_creation_tokens",
    "cacheReadTokens": "cache_read_tokens",
}


def test_daily_token_totals_equal_ccusage(ccusage, claude_dir, monkeypatch, capsys, tmp_path):
    theirs = run_ccusage(ccusage, claude_dir, "daily")
    home = tmp_path / "ws"
    code, _, err = run_main(monkeypatch, capsys, "import", "--home", home, claude_dir / "projects")
    assert code == 0, err
    code, out, err = run_main(
        monkeypatch,
        capsys,
        "usage",
        "--home",
        home,
        "--since",
        SINCE,
        "--json",
        "--offline",
        "--timezone",
        "UTC",
    )
    assert code == 0, err
    ours = json.loads(out)
    expected = {
        day["date"]: {ours_name: day[name] for name, ours_name in TOKENS.items()}
        for day in theirs["daily"]
    }
    got = {row["key"]: {name: row[name] for name in TOKENS.values()} for row in ours["rows"]}
    assert len(expected) == 4  # 2025-09-03, 2025-09-07, 2026-02-10, 2026-12-02
    assert got == expected
    assert {name: ours["totals"][name] for name in TOKENS.values()} == {
        ours_name: theirs["totals"][name] for name, ours_name in TOKENS.items()
    }


def test_costs_within_a_cent_where_both_price_the_model(ccusage, claude_dir, tmp_path):
    theirs = run_ccusage(ccusage, claude_dir, "daily")
    with Workspace.open(tmp_path / "ws") as ws:
        assert ws.import_([claude_dir / "projects"], embed=False).exit_code == 0
        messages = price(collect(ws.store()), shipped())
    ours = breakdown(messages, "day", "model")
    compared = 0
    for day in theirs["daily"]:
        by_model = {r.key: r for r in ours[day["date"]]}
        for model in day["modelBreakdowns"]:
            mine = by_model[model["modelName"]]
            if model["cost"] > 0 and mine.cost_usd is not None:
                assert mine.cost_usd == pytest.approx(model["cost"], abs=0.01), model
                compared += 1
    # claude-sonnet-4-20250514 (two days) and claude-opus-4-6; ccusage 18's offline table has
    # no claude-opus-5-5 (it reports 0 for it, where we give LiteLLM's price)
    assert compared == 3


def test_session_token_totals_equal_ccusage(ccusage, claude_dir, tmp_path):
    """ccusage's ``session`` report is one row per project folder, here one file each; ours
    is one per session, mapped to the file through the import's sources."""
    theirs = run_ccusage(ccusage, claude_dir, "session")
    with Workspace.open(tmp_path / "ws") as ws:
        assert ws.import_([claude_dir / "projects"], embed=False).exit_code == 0
        report = ws.usage(by="session", since=SINCE)
        folder_of = {s.session_key: Path(s.path).parent.name for s in ws.store().sources()}
    got: dict[str, dict[str, int]] = {}
    for row in report.rows:
        folder = folder_of[row.key or ""]
        sums = got.setdefault(folder, dict.fromkeys(TOKENS.values(), 0))
        for name in TOKENS.values():
            sums[name] += getattr(row, name)
    expected = {
        s["sessionId"]: {ours_name: s[name] for name, ours_name in TOKENS.items()}
        for s in theirs["sessions"]
    }
    assert len(expected) == 11
    assert got == expected


def test_a_name_without_its_date_costs_what_ccusage_says(ccusage, tmp_path, monkeypatch, capsys):
    """Fresh-user review item 2: Claude Code recording ``claude-opus-4-1`` (LiteLLM prices it
    as ``claude-opus-4-1-20250805``). short.jsonl's one response under that name: ccusage and
    we agree within a cent (3*15e-6 + 13*75e-6 + 13835*18.75e-6 + 11515*1.5e-6 = $0.2777)."""
    root = tmp_path / "claude"
    folder = root / "projects" / "p00"
    folder.mkdir(parents=True)
    text = (SAMPLES / "claude-code" / "short.jsonl").read_text()
    (folder / "short.jsonl").write_text(text.replace('"claude-opus-4-6"', '"claude-opus-4-1"'))
    theirs = run_ccusage(ccusage, root, "daily")
    home = tmp_path / "ws"
    assert run_main(monkeypatch, capsys, "import", "--home", home, root / "projects")[0] == 0
    code, out, err = run_main(
        monkeypatch, capsys, "usage", "--home", home, "--by", "model", "--json", "--offline"
    )
    assert code == 0, err
    (row,) = json.loads(out)["rows"]
    assert row["key"] == "claude-opus-4-1"
    assert row["cost_usd"] == pytest.approx(0.27769875, abs=1e-6)
    assert row["cost_usd"] == pytest.approx(theirs["totals"]["totalCost"], abs=0.01)


def test_days_in_the_local_zone_equal_ccusage_s(ccusage, claude_dir, monkeypatch, capsys, tmp_path):
    """Fresh-user review item 4: both default to the machine's zone; with
    TZ=America/Los_Angeles (UTC-8/-7) the days and their tokens are the same as ccusage's."""
    theirs = run_ccusage(ccusage, claude_dir, "daily", tz=None)
    home = tmp_path / "ws"
    code, _, err = run_main(monkeypatch, capsys, "import", "--home", home, claude_dir / "projects")
    assert code == 0, err
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    code, out, err = run_main(
        monkeypatch, capsys, "usage", "--home", home, "--since", SINCE, "--json", "--offline"
    )
    assert code == 0, err
    expected = {
        day["date"]: {ours_name: day[name] for name, ours_name in TOKENS.items()}
        for day in theirs["daily"]
    }
    got = {
        row["key"]: {name: row[name] for name in TOKENS.values()} for row in json.loads(out)["rows"]
    }
    assert got == expected
    utc = run_ccusage(ccusage, claude_dir, "daily")
    assert [d["date"] for d in utc["daily"]] != list(expected)  # the zone changes the days
