"""Conformance of the entries full-text index (issue 19) on SQLite and PostgreSQL: what is
found, ranked, filtered, and that a query is never syntax."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from continuity.browse.search import parse_when, search, snippet
from continuity.core.errors import InputError
from continuity.core.model import Entry, EntryKind, Role, Session, TextBlock
from continuity.store.search import EntryFilter, entry_body
from tests.builders import CP, A, T, U, call, load

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def _session(store, key, rows, *, harness="claude-code", project="/w/app", agent="default"):
    store.upsert_session(Session(key=key, harness=harness, project=project, agent_id=agent))
    for i, e in enumerate(rows):
        e.timestamp = e.timestamp or T0 + timedelta(hours=i)
    load(store, rows, key=key)
    store.upsert_session(
        Session(
            key=key,
            harness=harness,
            project=project,
            agent_id=agent,
            entry_count=store.get_session(key).entry_count,
        )
    )


@pytest.fixture
def corpus(store):
    _session(
        store,
        "cc1",
        [
            U("how do I add an alembic migration for the index?"),
            A(
                call("c1", "Bash", command="alembic revision -m entries_fts"),
                text="Running alembic now",
            ),
            T("c1", text="Generating versions/0013_entries_fts.py done"),
            CP("Summary: we wrote the zebra migration"),
        ],
    )
    _session(
        store,
        "cx1",
        [
            U("fix the flaky test in parser.py"),
            A(
                text="The parser test failed with token=sk-ant-api03-AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH"
                "IIIIJJJJ and alembic is unrelated"
            ),
            U("数据库迁移失败了"),
        ],
        harness="codex",
        project="/w/other",
    )
    _session(store, "cc1/agent-x", [U("subagent reads the alembic docs")], agent="x")
    return store


def test_finds_text_tool_arguments_results_and_summaries(corpus):
    got = {(h.session, h.seq) for h in search(corpus, "alembic", limit=50)}
    assert got == {("cc1", 0), ("cc1", 1), ("cx1", 1), ("cc1/agent-x", 0)}
    assert [(h.session, h.seq) for h in search(corpus, "0013_entries_fts")] == [
        ("cc1", 2),
        ("cc1", 1),
    ]
    assert [(h.session, h.seq) for h in search(corpus, "0013")] == [("cc1", 2)]
    assert [(h.session, h.seq) for h in search(corpus, "zebra")] == [("cc1", 3)]


def test_hit_names_session_harness_project_and_reopen_commands(corpus):
    hit = next(h for h in search(corpus, "subagent") if h.session == "cc1/agent-x")
    assert (hit.harness, hit.project, hit.agent, hit.subagent) == (
        "claude-code",
        "/w/app",
        "x",
        True,
    )
    assert hit.show_command == "continuity show cc1/agent-x --seq 0"
    assert hit.resume_command == "continuity resume cc1/agent-x --in claude-code"
    assert hit.time == "2026-11-01T12:00:00Z"
    assert hit.snippet[hit.spans[0][0] : hit.spans[0][1]].lower() == "subagent"


def test_ranking_prefers_more_matches(store):
    _session(
        store, "r", [U("alembic once among many other words here"), U("alembic alembic alembic")]
    )
    assert [h.seq for h in search(store, "alembic")] == [1, 0]


def test_filters(corpus):
    def keys(**f):
        return sorted(
            (h.session, h.seq)
            for h in search(corpus, "alembic", limit=50, filters=EntryFilter(**f))
        )

    assert keys(harness="codex") == [("cx1", 1)]
    assert keys(projects=("/w/app",)) == [("cc1", 0), ("cc1", 1), ("cc1/agent-x", 0)]
    assert keys(projects=("/w",)) == keys()  # a parent folder holds both projects
    assert keys(projects=("/w/ap",)) == []  # a prefix that is not a folder
    assert keys(role="user") == [("cc1", 0), ("cc1/agent-x", 0)]
    assert keys(tool="bash") == [("cc1", 1)]
    assert keys(tool="Bash") == [("cc1", 1)]
    assert keys(since=T0 + timedelta(minutes=30)) == [("cc1", 1), ("cx1", 1)]
    assert keys(until=T0 + timedelta(minutes=30)) == [("cc1", 0), ("cc1/agent-x", 0)]
    assert keys(session_key="cx1") == [("cx1", 1)]


def test_tool_result_is_found_by_the_tool_name_of_its_call(corpus):
    got = sorted(
        (h.session, h.seq) for h in search(corpus, "generating", filters=EntryFilter(tool="bash"))
    )
    assert got == [("cc1", 2)]


@pytest.mark.parametrize(
    "query",
    [
        '"alembic',
        "alembic'",
        "alembic AND OR NOT",
        "alembic*",
        "(alembic",
        "alembic) NEAR(",
        "col:alembic",
        "^alembic",
        "alembic; DROP TABLE entries; --",
        "{alembic}",
    ],
)
def test_operators_quotes_and_punctuation_are_words(corpus, query):
    got = {(h.session, h.seq) for h in search(corpus, query, limit=50)}
    assert ("cc1", 0) in got and ("cx1", 1) in got


@pytest.mark.parametrize("query", ['"', "***", "AND", "the of", ""])
def test_nothing_searchable_finds_nothing(corpus, query):
    assert search(corpus, query) == []


def test_cjk_word_inside_unbroken_text(corpus):
    assert [(h.session, h.seq) for h in search(corpus, "迁移")] == [("cx1", 2)]
    assert search(corpus, "迁库") == []


def test_snippet_is_redacted(corpus):
    hit = next(h for h in search(corpus, "unrelated"))
    assert "sk-ant-api03" not in hit.snippet and "AAAABBBB" not in hit.snippet
    raw = next(h for h in search(corpus, "unrelated", raw=True))
    assert "sk-ant-api03-AAAABBBB" in raw.snippet


def test_index_is_written_with_the_rows_in_one_transaction(store):
    store.upsert_session(Session(key="tx", harness="test"))
    row = U("walrus")
    row.seq = 0
    with pytest.raises(RuntimeError), store.batch():
        store.append("tx", [row])
        assert [h.seq for h in search(store, "walrus")] == [0]
        raise RuntimeError("abort")
    assert search(store, "walrus") == []


def test_a_forgotten_session_s_words_never_find_a_later_row(store):
    """Issue 41 item 2, revision 0031: forgetting the newest session leaves its words in
    SQLite's contentless index (it cannot delete them); a row stored afterwards never takes its
    number, so a search for a forgotten word finds nothing. (Numbers were max + 1 of the rows
    left: the new row took the forgotten one's, and "secretword" found "cherry tart".)"""
    _session(store, "keep", [U("apple pie")])
    _session(store, "gone", [U("zebrafish secretword")])
    assert [h.session for h in search(store, "secretword")] == ["gone"]
    store.forget_session("gone")
    _session(store, "later", [U("cherry tart")])
    assert search(store, "secretword") == []
    assert search(store, "zebrafish") == []
    assert [(h.session, h.seq) for h in search(store, "cherry")] == [("later", 0)]
    assert [(h.session, h.seq) for h in search(store, "apple")] == [("keep", 0)]


def test_snippet_window_and_spans():
    text = "x " * 200 + "the Alembic migration " + "y " * 200
    shown, spans = snippet(text, ["alembic"])
    assert len(shown) <= 162 and shown.startswith("…") and shown.endswith("…")
    assert [shown[a:b] for a, b in spans] == ["Alembic"]
    shown, spans = snippet("run the migrations now", ["migrations"])
    assert shown == "run the migrations now" and [shown[a:b] for a, b in spans] == ["migrations"]


def test_entry_body_covers_every_block_kind():
    e = A(call("c9", "Read", path="/etc/hosts"), text="looking")
    assert entry_body(e) == 'looking\nRead {"path":"/etc/hosts"}'
    assert entry_body(CP("the summary")) == "the summary"
    assert (
        entry_body(Entry(EntryKind.MESSAGE, Role.USER, (TextBlock("a" * 200_000),)))
        == "a" * 100_000
    )


def test_parse_when():
    now = datetime(2026, 12, 2, 15, 0, tzinfo=UTC)
    assert parse_when("7d", now=now) == datetime(2026, 11, 25, 15, 0, tzinfo=UTC)
    assert parse_when("12h", now=now) == datetime(2026, 12, 2, 3, 0, tzinfo=UTC)
    assert parse_when("2026-11-30") == datetime(2026, 11, 30, tzinfo=UTC)
    with pytest.raises(InputError, match="--until"):
        parse_when("yesterday", field_name="--until")


def test_entries_matching_tells_which_rows_hold_a_word(corpus):
    """Issue 40: of the rows asked about, those the index finds for any of the words (the
    same stemming and segmentation as search); unknown rows and other words give nothing."""
    rows = [("cc1", 0), ("cc1", 1), ("cx1", 0), ("cx1", 2), ("nope", 0)]
    assert corpus.entries_matching(["alembic"], rows) == {("cc1", 0), ("cc1", 1)}
    assert corpus.entries_matching(["flaky", "migrations"], rows) == {("cc1", 0), ("cx1", 0)}
    assert corpus.entries_matching(["zzz"], rows) == set()
    assert corpus.entries_matching([], rows) == set() == corpus.entries_matching(["x"], [])


def test_rows_of_the_same_text_rank_by_key_at_any_limit(store):
    """Twelve sessions hold the same row, so it scores the same in each: ``limit=1`` gives the
    first of ``limit=12``'s order (score, then session key), not one SQLite met first. The
    first FTS5 round takes ``4 x limit`` rows, a cut inside the run of equal scores; it took
    the newest four and ranked ``k08`` first."""
    for i in range(12):
        _session(store, f"k{i:02d}", [U("zebra crossing ahead")])
    every = [(h.session_key, h.seq) for h in store.search_entries(["zebra"], limit=12)]
    assert every == [(f"k{i:02d}", 0) for i in range(12)]
    for limit in (1, 2, 5):
        got = [(h.session_key, h.seq) for h in store.search_entries(["zebra"], limit=limit)]
        assert got == every[:limit]
