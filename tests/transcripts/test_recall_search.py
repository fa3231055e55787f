"""Full-text search of memories (``continuity.store.fts``): CJK segmentation on both backends
and revision 0011, and the bounded BM25 ranking on SQLite (issue 5)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from alembic import command
from hypothesis import given, settings, strategies as st
from sqlalchemy import text

from continuity.core.model import Memory
from continuity.store import _alembic_config, _engine, fts, migrate, open_store
from continuity.transcripts import memories as rc
from tests.conftest import BACKENDS

T0 = datetime(2026, 9, 1, 8, 0, tzinfo=UTC)
JAPANESE = "東京の天気は晴れです。明日の会議は十時に始まります。"
CHINESE = "我们决定使用半开区间来处理月份范围。"
KOREAN = "서울에서 배포합니다"


def contents(response: rc.RecallResponse) -> list[str]:
    return [r.content for r in response.results]


# --------------------------------------------------------------------------- segmentation


def test_search_text_spaces_every_cjk_character():
    """Each CJK character becomes its own token; Latin text and punctuation are unchanged."""
    assert fts.search_text("東京abc天気") == " 東  京 abc 天  気 "
    assert fts.search_text("서울에서 deploy") == " 서  울  에  서  deploy"
    assert fts.search_text("Export uses half-open ranges.") == "Export uses half-open ranges."
    assert fts.phrase_tokens("python的设计") == ["python", "的", "设", "计"]
    assert fts.phrase_tokens("天気") == ["天", "気"]
    assert fts.fts5_phrase("天気") == '"天 気"'
    assert fts.pg_tsquery(["export", "天気"]) == "(export) | (天 <-> 気)"


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), max_codepoint=0x2FFF)))
def test_search_text_leaves_text_without_cjk_unchanged(value):
    """Below U+3000 only Hangul Jamo is CJK: any other text is indexed exactly as before
    revision 0011, so Latin ranking cannot change."""
    if not any(0x1100 <= ord(c) <= 0x11FF for c in value):
        assert fts.search_text(value) == value


# --------------------------------------------------------------------------- CJK recall


@pytest.fixture
def cjk(store):
    """A Japanese, a Chinese, a Korean and an English memory."""
    for content in (JAPANESE, CHINESE, KOREAN, "Export uses half-open month ranges."):
        rc.remember(store, content, now=T0)
    return store


def test_recall_finds_a_word_inside_japanese_text(cjk):
    """天気 (weather) and 会議 (meeting) are found inside an unbroken Japanese run."""
    assert contents(rc.recall(cjk, "天気")) == [JAPANESE]
    assert contents(rc.recall(cjk, "会議はいつ")) == []  # いつ is not in the text: phrase
    assert contents(rc.recall(cjk, "会議")) == [JAPANESE]


def test_recall_finds_a_word_inside_chinese_text(cjk):
    """区间 (interval) is found inside the Chinese sentence; characters out of order are not."""
    assert contents(rc.recall(cjk, "区间")) == [CHINESE]
    assert contents(rc.recall(cjk, "间区")) == []
    assert sorted(contents(rc.recall(cjk, "月份 export"))) == sorted(
        [CHINESE, "Export uses half-open month ranges."]
    )


def test_recall_finds_a_korean_word_with_its_particle(cjk):
    """서울 (Seoul) is found in 서울에서 (in Seoul)."""
    assert contents(rc.recall(cjk, "서울")) == [KOREAN]


def test_recall_latin_ranking_unchanged_beside_cjk(cjk):
    """English words still stem and rank as before; a CJK memory never matches them."""
    rc.remember(cjk, "The nightly export job runs at 2am.", now=T0)
    found = rc.recall(cjk, "exporting month")
    assert contents(found) == [
        "Export uses half-open month ranges.",
        "The nightly export job runs at 2am.",
    ]
    assert found.results[0].score > found.results[1].score


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_migration_0011_reindexes_cjk_memories_from_before_it(db_url):
    """A CJK memory stored at revision 0010 is found by a word inside it after 0011."""
    engine = _engine(db_url)
    try:
        migrate(engine, "0010")
        with engine.begin() as conn:
            for mid, content in (("m1", JAPANESE), ("m2", "legacy remembered fact")):
                conn.execute(
                    text(
                        "INSERT INTO memories (memory_id, content, content_hash, type, tags, "
                        "importance, agent_id, created_at) VALUES (:m, :c, :m, 'fact', '[]', 0.5, "
                        "'default', :now)"
                    ),
                    {"m": mid, "c": content, "now": T0},
                )
        with open_store(db_url) as s:
            assert contents(rc.recall(s, "天気")) == [JAPANESE]
            assert contents(rc.recall(s, "legacy")) == ["legacy remembered fact"]
    finally:
        engine.dispose()


def test_migration_0011_downgrade_restores_the_insert_trigger(tmp_path):
    """Downgrading to 0010 re-indexes raw text and brings back the insert trigger."""
    url = f"sqlite:///{tmp_path / 'c.db'}"
    with open_store(url) as s:
        rc.remember(s, JAPANESE)
    engine = _engine(url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0010")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO memories (memory_id, content, content_hash, type, tags, importance,"
                    " agent_id, created_at) VALUES ('m2', 'inserted later', 'h', 'fact', '[]', 0.5,"
                    " 'default', :now)"
                ),
                {"now": T0},
            )
            indexed = conn.execute(text("SELECT content FROM memories_fts ORDER BY rowid")).all()
        assert [r[0] for r in indexed] == [JAPANESE, "inserted later"]
    finally:
        engine.dispose()


@pytest.mark.skipif("postgresql" not in BACKENDS, reason="needs PostgreSQL")
@settings(max_examples=60, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            [
                chr(c)
                for lo, hi in fts.CJK_RANGES
                for c in (lo - 1, lo, hi, hi + 1)
                if not 0xD800 <= c <= 0xDFFF
            ]
            + list("ab .é")
        ),
        max_size=12,
    )
)
def test_postgres_search_text_function_equals_python(pg_engine, value):
    """continuity_search_text (the PostgreSQL index expression) segments exactly like
    search_text, at both ends of every range."""
    with pg_engine.connect() as conn:
        assert conn.execute(
            text("SELECT continuity_search_text(:v)"), {"v": value}
        ).scalar() == fts.search_text(value)


@pytest.fixture(scope="module")
def pg_engine():
    from tests.conftest import _pg_database

    gen = _pg_database()
    url = next(gen)
    with open_store(url):
        pass
    engine = _engine(url)
    yield engine
    engine.dispose()
    gen.close()


# --------------------------------------------------------------------------- bounded ranking


def _exact(conn, terms: list[str]) -> dict[int, float]:
    """Every match's bm25 from one FTS5 query (no bound)."""
    match = " OR ".join(fts.fts5_phrase(t) for t in terms)
    return dict(
        conn.execute(
            text("SELECT rowid, bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH :q"),
            {"q": match},
        ).all()
    )


@pytest.fixture
def deploys(sqlite_store):
    """A rare zebra memory first, then six deploy memories (oldest first)."""
    rc.remember(sqlite_store, "zebra crossing near the deploy office", now=T0)
    for i in range(6):
        rc.remember(sqlite_store, f"deploy step {i} " + "filler " * i, now=T0)
    return sqlite_store


def test_common_word_ranks_only_its_newest_matches(deploys, monkeypatch):
    """With RANK_WINDOW 3 a word in 7 memories ranks the 3 newest; below the window it ranks
    every match exactly; when the window holds fewer than ``limit``, every match is ranked."""
    assert contents(rc.recall(deploys, "deploy", limit=2)) == [
        "deploy step 0",
        "deploy step 1 filler",
    ]
    monkeypatch.setattr(fts, "RANK_WINDOW", 3)
    assert contents(rc.recall(deploys, "deploy", limit=2)) == [
        "deploy step 3 filler filler filler",
        "deploy step 4 filler filler filler filler",
    ]
    assert len(rc.recall(deploys, "deploy", limit=10).results) == 7


def test_rare_word_memories_are_never_cut_by_the_window(deploys, monkeypatch):
    """The old memory holding the rare word is ranked, with the common word's contribution;
    the window's remaining budget (3 - 1) takes the newest deploy-only memories."""
    monkeypatch.setattr(fts, "RANK_WINDOW", 3)
    found = contents(rc.recall(deploys, "deploy zebra", limit=3))
    assert found == [
        "zebra crossing near the deploy office",
        "deploy step 4 filler filler filler filler",
        "deploy step 5 filler filler filler filler filler",
    ]


def test_narrow_filter_finds_an_old_memory_beyond_the_window(deploys, monkeypatch):
    """Another agent's only deploy memory, older than every window, is still recalled."""
    with deploys.batch(), deploys._conn() as conn:  # make it the oldest FTS row
        conn.execute(text("DELETE FROM memories"))
    rc.remember(deploys, "helper deploy runbook", agent_id="helper")
    for i in range(6):
        rc.remember(deploys, f"deploy step {i}")
    monkeypatch.setattr(fts, "RANK_WINDOW", 3)
    assert contents(rc.recall(deploys, "deploy", agent_id="helper")) == ["helper deploy runbook"]


WORDS = ["alpha", "beta", "gamma", "delta", "東京", "天気"]


@settings(max_examples=80, deadline=None)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=1, max_size=25
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True),
    window=st.integers(1, 30),
    k=st.integers(1, 100),
)
def test_bounded_scores_are_the_whole_query_bm25(tmp_path_factory, docs, query, window, k):
    """Whatever the window and k, every ranked row's score is its bm25 for the whole query,
    best first; when no term is common, the ranking is the exact one."""
    url = f"sqlite:///{tmp_path_factory.mktemp('fts') / 'c.db'}"
    with open_store(url) as s:
        with s.batch():
            for i, words in enumerate(docs):
                s.insert_memory(
                    Memory(f"m{i}", " ".join(words), f"h{i}", "fact", (), 0.5, None, "default", T0)
                )
        with s._conn() as conn:
            exact = _exact(conn, query)
            per_term = sum(len(_exact(conn, [term])) for term in query)
            ranked, complete = fts.rank_fts5(conn, query, k, window=window)
    for rowid, score in ranked:
        assert score == pytest.approx(exact[rowid], rel=1e-12)
    assert [s for _, s in ranked] == sorted(s for _, s in ranked)
    if len(ranked) > k:  # past the k-th only the rows tied with it (fts._cut)
        assert {s for _, s in ranked[k - 1 :]} == {ranked[k - 1][1]}
    if per_term <= window:  # no common term: the exact ranking, with every tie at the cut
        best = sorted(exact.values())
        tied = [s for s in best[k:] if k <= len(best) and s == best[k - 1]]
        assert [s for _, s in ranked] == best[:k] + tied
        assert complete == (len(exact) <= k)
    elif ranked and complete:
        assert len(ranked) <= k
