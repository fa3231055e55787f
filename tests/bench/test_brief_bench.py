"""``bench/brief.py`` (issue 39 item 5): its hand-written fixture is well-formed and names the
sessions the shared data holds, and the figures it prints are computed from the real texts."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from continuity.archive.ingest import ingest
from continuity.checkpoints.capture import CheckpointConfig
from continuity.checkpoints.recovery import recover
from continuity.formats.importer import discover
from continuity.store import open_store
from tests.paths import SHARED_DATA

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "sessions"


def _load_bench():
    spec = importlib.util.spec_from_file_location("bench_brief", ROOT / "bench" / "brief.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


brief = _load_bench()


@pytest.fixture(scope="module")
def fixture() -> dict:
    return brief.load_fixture()


@pytest.fixture(scope="module")
def examples_figures() -> dict:
    """The bench run on the repository's example sessions: the three of them (one per
    harness) that the fixture names are measured; the fourth (the Claude Code session fixing
    export.py) is not in the fixture, so it is imported and left unscored."""
    return brief.run(EXAMPLES)


def test_fixture_is_well_formed(fixture: dict) -> None:
    assert brief.fixture_problems(fixture) == []
    sessions = fixture["sessions"]
    assert len(sessions) == 34
    assert sum(len(s["facts"]) for s in sessions.values()) == 83
    for key, s in sessions.items():
        kinds = [f["kind"] for f in s["facts"]]
        assert kinds.count("last_request") == 1, key
        assert set(kinds) <= set(brief.KINDS), key
        for f in s["facts"]:
            assert f["any_of"] and all(n.strip() for n in f["any_of"]), (key, f)
    skipped = {s["session"] for s in fixture["skipped"]}
    assert len(skipped) == 2 and not skipped & set(sessions)


def test_fixture_problems_names_each_defect() -> None:
    bad = {
        "sessions": {
            "k1": {"source": "a.jsonl", "facts": [{"kind": "outcome", "any_of": ["x"]}]},
            "k2": {
                "source": "b.jsonl",
                "facts": [
                    {"kind": "last_request", "any_of": ["y"]},
                    {"kind": "mood", "any_of": ["z"]},
                    {"kind": "error", "any_of": []},
                    {"kind": "decision", "any_of": [" "]},
                ],
            },
            "k3": {"facts": [{"kind": "last_request", "any_of": ["w"]}]},
        }
    }
    problems = brief.fixture_problems(bad)
    assert problems == [
        "k1: needs exactly one last_request fact",
        "k2 fact 1: unknown kind 'mood'",
        "k2 fact 2: any_of must be non-empty strings",
        "k2 fact 3: any_of must be non-empty strings",
        "k3: no source",
    ]


def test_every_fixture_session_exists_after_import(fixture: dict, tmp_path: Path) -> None:
    """Each key is what the import gives its source file (the copy of ../shared/data), and
    each skipped session is there too."""
    config = CheckpointConfig()
    with open_store(f"sqlite:///{tmp_path / 'x.db'}") as store:
        ingest(store, discover([SHARED_DATA], home=tmp_path), config=config, home=tmp_path)
        stored = {s.key: s for s in store.list_sessions(limit=0)}
        for key, s in fixture["sessions"].items():
            assert key in stored, key
            assert stored[key].source_path == str(SHARED_DATA / s["source"]), key
            assert stored[key].project == s["project"], key
            # the digest of every fixture session holds its last request: it is in the
            # session's newest checkpoint, so a miss there is a fixture needle gone wrong
            last = next(f for f in s["facts"] if f["kind"] == "last_request")
            text = recover(store, session_key=key, config=config).text
            assert brief.present(last, text), (key, last, text)
        for s in fixture["skipped"]:
            assert s["session"] in stored


def test_present_is_any_needle_case_insensitive() -> None:
    fact = {"kind": "file_changed", "any_of": ["CHANGELOG.md", "tui-renderer.ts"]}
    assert brief.present(fact, "edited changelog.md")
    assert brief.present(fact, "src/TUI-Renderer.ts (modified)")
    assert not brief.present(fact, "README.md")


def test_examples_figures_are_computed(examples_figures: dict, fixture: dict) -> None:
    f = examples_figures
    keys = [
        "3185d1ef-21e2-4727-91d3-fda9d4ee95a1",
        "01a23556-7fab-7dd1-86d3-d100eb5ab801",
        "01a2354d-2a28-75c5-9931-4e663de4f734",
    ]
    assert f["sessions"] == 3
    assert f["facts"] == sum(len(fixture["sessions"][k]["facts"]) for k in keys) == 6
    assert len(f["sessions_absent_from_data"]) == 31
    assert f["digest_without_checkpoint"] == 0
    assert sum(f["compact_outcomes"].values()) == 3
    digest = f["columns"]["digest"]
    # each checkpoint holds the session's last prompt: all three last requests counted
    assert digest["last_requests"] == {"present": 3, "total": 3, "share": 1.0}
    assert 0 < digest["chars"]["median"] <= digest["chars"]["max"] <= 2_000
    cont = f["columns"]["continuation"]
    assert cont["last_requests"]["present"] == 3
    for col in f["columns"].values():
        assert col["all"]["total"] == 6
        assert sum(k["total"] for k in col["kinds"].values()) == 6
        assert sum(k["present"] for k in col["kinds"].values()) == col["all"]["present"]
        assert col["all"]["share"] == col["all"]["present"] / 6
    missed = sum(len(v) for v in f["misses"]["digest"].values())
    assert missed == 6 - digest["all"]["present"]
    if f["brief_available"]:
        assert f["columns"]["brief"]["chars"]["max"] <= 2_000
    else:
        assert "brief" not in f["columns"]


def test_digest_counts_each_fact_from_its_text(tmp_path: Path) -> None:
    """The digest column scores the text ``recover`` gives: a needle of the checkpoint's last
    prompt is present, one of the tool output (which no checkpoint holds) is not."""
    key = "01a2354d-2a28-75c5-9931-4e663de4f734"
    facts = [
        {"kind": "last_request", "any_of": ["Continued pi session"]},
        {"kind": "outcome", "any_of": ["calc.py"]},
    ]
    fixture = {"sessions": {key: {"source": "pi/x.jsonl", "project": "/p", "facts": facts}}}
    f = brief.measure(EXAMPLES, fixture)
    assert f["columns"]["digest"]["kinds"]["last_request"]["present"] == 1
    assert f["columns"]["digest"]["kinds"]["outcome"]["present"] == 0
    assert f["columns"]["continuation"]["all"] == {"present": 2, "total": 2, "share": 1.0}
    assert f["misses"]["digest"] == {key: [facts[1]]}


@dataclass
class _S:
    key: str
    project: str | None
    started_at: datetime | None
    ended_at: datetime | None


def test_newer_sessions_are_the_same_projects_later_ones() -> None:
    t = lambda h: datetime(2026, 12, 2, h, tzinfo=UTC)  # noqa: E731
    sessions = [
        _S("a", "/p", t(1), t(2)),
        _S("b", "/p", t(3), t(4)),
        _S("c", "/q", t(5), t(6)),
        _S("d", "/p", t(0), None),
        _S("e", "/p", t(1), t(2)),
    ]
    assert brief.newer_sessions(sessions, "a") == ["b", "e"]  # "e" ties, ordered by key
    assert brief.newer_sessions(sessions, "b") == []
    assert brief.newer_sessions(sessions, "d") == ["a", "b", "e"]


def test_continuation_text_reads_every_part() -> None:
    from continuity.continuation.view import ContinuationView

    view = ContinuationView(
        session="s",
        budget_bytes=1000,
        summary={"text": "SUM"},
        request={"seq": 5, "actor": "user", "text": "REQ"},
        messages=[
            {
                "seq": 4,
                "role": "assistant",
                "copied": False,
                "content": [{"type": "text", "text": "BEFORE"}],
            },
            {
                "seq": 6,
                "role": "assistant",
                "copied": False,
                "content": [
                    {"type": "tool_call", "id": "c", "name": "Bash", "arguments": {"command": "ls"}}
                ],
            },
            {
                "seq": 7,
                "role": "tool",
                "copied": False,
                "content": [
                    {"type": "tool_result", "call_id": "c", "is_error": False, "text": "OUT"}
                ],
            },
        ],
        notice="GAP",
        notes=["NOTE"],
    )
    assert (
        brief.continuation_text(view) == 'SUM\nGAP\nBEFORE\nREQ\nBash {"command": "ls"}\nOUT\nNOTE'
    )
    refused = ContinuationView(session="s", budget_bytes=1, refusal={"reason": "r", "detail": "d"})
    assert brief.continuation_text(refused) == "refused: r d"


def test_command_prints_the_table_and_json() -> None:
    def run(*a: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(ROOT / "bench" / "brief.py"), str(EXAMPLES), *a],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )

    text = run().stdout
    assert "(a) digest" in text and "(b) continuation" in text
    assert "goal: ≥ 90 % of facts at 2,000 characters, 100 % of last requests" in text
    assert ("(c) brief" in text) != ("not available on this checkout" in text)
    figures = json.loads(run("--json").stdout)
    assert figures["columns"]["digest"]["last_requests"]["present"] == 3
    assert "--misses" in run("--help").stdout
    bad = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "brief.py"), "--session", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "not a session of brief_facts.json: nope" in bad.stderr
