"""``bench/retrieval.py`` (issue 40, part D): its hand-written questions are well-formed and each
evidence item names a row the shared sessions hold, and the figures it prints are computed from
real rankings."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import SHARED_DATA

ROOT = Path(__file__).resolve().parents[2]


def _load_bench():
    spec = importlib.util.spec_from_file_location(
        "bench_retrieval", ROOT / "bench" / "retrieval.py"
    )
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


retrieval = _load_bench()


@pytest.fixture(scope="module")
def fixture() -> dict:
    return retrieval.load_fixture()


@pytest.fixture(scope="module")
def corpus():
    """The shared sessions imported once for the module (the copy in tests/fixtures)."""
    with retrieval.imported(SHARED_DATA) as store:
        return retrieval.read_corpus(store)


def test_fixture_is_well_formed(fixture: dict) -> None:
    assert retrieval.fixture_problems(fixture) == []
    questions, negatives = fixture["questions"], fixture["negatives"]
    assert len(questions) >= 80
    kinds = [q["kind"] for q in questions]
    assert set(kinds) == set(retrieval.KINDS)
    assert kinds.count("paraphrase") >= 20
    assert len(negatives) >= 15
    assert len({q["question"].casefold() for q in questions + negatives}) == len(questions) + len(
        negatives
    )


def test_every_evidence_item_names_an_imported_row(fixture: dict, corpus) -> None:
    """Each evidence item (not only each question) resolves to at least one row, so a typo in
    a session key or a substring fails here rather than silently scoring a miss."""
    unresolved = [
        (q["id"], q["evidence"][i])
        for q in fixture["questions"]
        for i, rows in retrieval.resolve(q, corpus).items()
        if not rows
    ]
    assert unresolved == []


def test_each_negative_names_a_project_of_the_corpus(fixture: dict, corpus) -> None:
    projects = set(corpus.projects.values())
    assert [n["id"] for n in fixture["negatives"] if n["project"] not in projects] == []


def test_fixture_problems_names_each_defect() -> None:
    bad = {
        "questions": [
            {
                "id": "a",
                "kind": "exact",
                "question": "x",
                "evidence": [{"session": "s", "contains": "y"}],
            },
            {"id": "a", "kind": "mood", "question": " ", "evidence": []},
            {
                "id": "b",
                "kind": "file",
                "question": "z",
                "evidence": [{"session": "", "contains": "y"}],
            },
        ],
        "negatives": [{"id": "n", "question": "q"}],
    }
    assert retrieval.fixture_problems(bad) == [
        "a: duplicate id",
        "a: empty question",
        "a: unknown kind 'mood'",
        "a: no evidence",
        "b evidence 0: needs a session and a non-blank substring",
        "n: a negative needs a project",
    ]


def test_grep_ranks_lines_by_query_words_matched(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text('{"t": "export job at night"}\n{"t": "the EXPORT job runs at 02:00"}\n')
    b.write_text('{"t": "job queue"}\n{"t": "unrelated"}\n')
    grep = retrieval.Grep([b, a])
    # a's line 2 holds all three words ("run" inside "RUNS"), its line 1 two, b's line 1 one
    assert grep.rank("when does the export job run?") == [(str(a), 2), (str(a), 1), (str(b), 1)]
    assert grep.rank("job") == [(str(a), 1), (str(a), 2), (str(b), 1)]  # ties: path, line
    assert grep.rank("the a of") == []  # stop words only


def test_ranks_and_summary() -> None:
    assert retrieval.first_rank([("s", 1), ("s", 2)], {("s", 2)}) == 2
    assert retrieval.first_rank([("s", 1)], {("t", 1)}) is None
    s = retrieval.summarise([1, 3, None, 6])
    assert s == {"n": 4, "hit1": 0.25, "recall5": 0.5, "mrr": (1 + 1 / 3 + 1 / 6) / 4}


def test_run_scores_each_mode_from_its_rankings(fixture: dict) -> None:
    """A run on a few questions (one per kind) and two negatives, with a tiny scale part:
    every available column holds one figure per kind, and grep is always there."""
    picked = {}
    for q in fixture["questions"]:
        picked.setdefault(q["kind"], q)
    small = {"questions": list(picked.values()), "negatives": fixture["negatives"][:2]}
    f = retrieval.run(SHARED_DATA, rows=1_000, queries=12, budget_s=20, fixture=small)
    assert f["unresolved"] == [] and f["questions"] == len(retrieval.KINDS)
    for mode in retrieval.MODES:
        col = f["quality"][mode]
        if mode in ("grep", "words"):
            assert col["available"]
        if col["available"]:
            assert set(col["kinds"]) == set(retrieval.KINDS)
            assert all(k["n"] == 1 for k in col["kinds"].values())
            ranks = [p["rank"] for p in col["per_question"].values()]
            assert col["all"] == retrieval.summarise(ranks)
    assert f["quality"]["hybrid"]["available"] == retrieval.hybrid_available()
    sc = f["scale"]
    # 12 queries, each mode in a child: the index loads, 2 warm up, 10 are timed
    assert sc["rows"] == 1_000 and sc["grep"]["n"] == 12
    assert sc["words"]["n"] == sc["words"]["of"] == 10
    if retrieval.hybrid_available():
        assert sc["hybrid"]["n"] >= 1 and sc["hybrid"]["first_call_s"] is not None
    text = retrieval.render(f)
    assert "goals (issue 40):" in text and "hybrid p99 < 50 ms at 1,000,000 rows" in text
    assert "not measured (fewer rows)" in text or not retrieval.hybrid_available()


def test_help_names_the_options() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "retrieval.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "--rows" in out and "--skip-scale" in out and "--misses" in out
