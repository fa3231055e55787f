"""Hybrid ranking (issue 40): paraphrases found by vectors, phrases honoured, boosts, words
only without an embedder, and the top equal to a brute-force full fused ranking."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from continuity.core.model import Session
from continuity.retrieval import hybrid
from continuity.retrieval.embedding import embed_pending
from continuity.retrieval.hybrid import (
    MIN_COSINE,
    full_ranking,
    hybrid_entries,
    hybrid_memories,
    in_project,
)
from continuity.retrieval.index import VectorIndex
from continuity.retrieval.settings import RetrievalSettings
from continuity.store.search import EntryFilter, entry_body
from continuity.transcripts.memories import remember
from tests.builders import A, U, load

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _session(store, key, texts, *, project="/w/app", start=NOW - timedelta(days=10)):
    rows = [U(t) if i % 2 == 0 else A(text=t) for i, t in enumerate(texts)]
    for i, e in enumerate(rows):
        e.timestamp = start + timedelta(minutes=i)
    load(store, rows, key=key)
    store.upsert_session(
        Session(
            key=key,
            harness="claude-code",
            project=project,
            entry_count=store.get_session(key).entry_count,
        )
    )


@pytest.fixture
def corpus(store, embedder):
    _session(
        store,
        "term",
        [
            "the terminal pane flickers when the window is resized",
            "The xterm.js viewport scrollTop reset to 0 on every write; now it keeps the "
            "user's position unless they were at the bottom",
            "run the tests again",
        ],
    )
    _session(
        store,
        "db",
        [
            "add an alembic migration for the export job table",
            "the exported job failed with a timeout in postgres",
            "npm install failed with EACCES on the cache folder",
        ],
        project="/w/other",
    )
    embed_pending(store, embedder)
    return store


def test_paraphrase_found_by_vectors_where_words_find_nothing(corpus):
    """issue 40's example: "where did we fix the scroll-back bug?" names no word of the row
    about the xterm.js viewport's scrollTop; vectors rank it first, hybrid too."""
    query = "where did we fix the scroll-back bug?"
    words = hybrid_entries(corpus, query, limit=5, mode="words", now=NOW)
    assert words == []
    vectors = hybrid_entries(corpus, query, limit=5, mode="vectors", now=NOW)
    assert (vectors[0].session_key, vectors[0].seq) == ("term", 1)
    assert vectors[0].vector_rank == 1 and vectors[0].cosine > MIN_COSINE
    assert vectors[0].words_rank is None and "scrollTop" in entry_body(vectors[0].entry)
    best = hybrid_entries(corpus, query, limit=5, now=NOW)[0]
    assert (best.session_key, best.seq, best.vector_rank) == ("term", 1, 1)


def test_quoted_phrase_must_appear_as_written(corpus):
    """issue 40: "export job" does not match "exported job"."""
    hits = hybrid_entries(corpus, '"export job"', limit=10, now=NOW)
    assert [(h.session_key, h.seq) for h in hits] == [("db", 0)]
    loose = {
        (h.session_key, h.seq)
        for h in hybrid_entries(corpus, "export job", limit=10, mode="words", now=NOW)
    }
    assert {("db", 0), ("db", 1)} <= loose


def test_same_project_boost_breaks_a_near_tie(store, embedder):
    """Two rows alike in words and meaning: the asker's project ranks first, by 1.1x."""
    _session(store, "a", ["the parser test is flaky on ci"], project="/w/a")
    _session(store, "b", ["the parser test is flaky on ci"], project="/w/b")
    embed_pending(store, embedder)
    plain = hybrid_entries(store, "parser flaky", limit=2, now=NOW)
    assert [h.session_key for h in plain] == ["a", "b"]  # a tie: by key
    boosted = hybrid_entries(store, "parser flaky", limit=2, now=NOW, project="/w/b/")
    assert [h.session_key for h in boosted] == ["b", "a"]
    recency = 1 + hybrid.RECENCY_WEIGHT * 0.5 ** (10 / hybrid.RECENCY_HALF_LIFE_DAYS)
    assert [(h.words_rank, h.vector_rank) for h in boosted] == [(2, 2), (1, 1)]
    # words weigh 1, vectors VECTOR_WEIGHT (0.5), over RRF_K (20) + rank
    assert boosted[0].score == pytest.approx(recency * 1.1 * (1 / 22 + 0.5 / 22))
    assert boosted[1].score == pytest.approx(recency * (1 / 21 + 0.5 / 21))
    assert in_project("/w/b/sub", "/w/b") and not in_project("/w/bb", "/w/b")


def test_recency_boost_prefers_the_newer_of_equal_rows(store, embedder):
    _session(store, "old", ["deploy the docker image"], start=NOW - timedelta(days=300))
    _session(store, "new", ["deploy the docker image"], start=NOW - timedelta(days=1))
    embed_pending(store, embedder)
    hits = hybrid_entries(store, "docker deploy", limit=2, now=NOW)
    assert [h.session_key for h in hits] == ["new", "old"]


def test_words_only_without_embedder_and_unembedded_rows_found(store, embedder, monkeypatch):
    """A row not yet embedded is found by words; with semantic off the mode is words."""
    _session(store, "s", ["the zebra migration ran"])
    hits = hybrid_entries(store, "zebra", limit=5, now=NOW)
    assert [(h.session_key, h.seq, h.words_rank, h.vector_rank) for h in hits] == [
        ("s", 0, 1, None)
    ]
    off = RetrievalSettings(semantic="off")
    assert [h.vector_rank for h in hybrid_entries(store, "zebra", limit=5, settings=off)] == [None]
    assert hybrid_entries(store, "the of", limit=5, settings=off) == []


def test_hybrid_memories_ranks_paraphrases_and_filters(store, embedder):
    remember(
        store,
        "we decided to keep the xterm.js viewport scrollTop unless at the bottom",
        type="decision",
    )
    remember(store, "postgres GIN index for the tsvector column", type="fact")
    embed_pending(store, embedder)
    hits = hybrid_memories(store, "terminal scroll position", limit=3)
    assert hits[0].memory.type == "decision" and hits[0].vector_rank == 1
    from continuity.store.memory import MemoryFilter

    assert hybrid_memories(
        store, "terminal scroll position", limit=3, filters=MemoryFilter(type="fact")
    ) == [] or all(
        h.memory.type == "fact"
        for h in hybrid_memories(
            store, "terminal scroll position", limit=3, filters=MemoryFilter(type="fact")
        )
    )


# ---------------------------------------------------------------- exactness, by brute force

VOCAB = [
    "alpha",
    "beta",
    "gamma",
    "scroll",
    "viewport",
    "export",
    "job",
    "parser",
    "test",
    "docker",
    "deploy",
    "flaky",
]
_COUNTER = itertools.count()


def _brute(store, embedder, query, filters, project, limit, mode):
    """Every row's full words rank and vector rank, fused without bounds."""
    from continuity.retrieval.quantize import decode

    q = hybrid.parse_query(query)
    keys = store.session_keys_where(projects=filters.projects)
    rows = [(k, e) for k in keys for e in store.entries(k)]
    ranks: dict[tuple[str, int], list] = {(k, e.seq): [None, None] for k, e in rows}
    if mode in ("hybrid", "words") and q.terms:
        hits = [
            h
            for h in store.search_entries(q.terms, limit=100_000, filters=filters)
            if q.matches(entry_body(h.entry))
        ]
        for r, h in enumerate(hits, 1):
            ranks[(h.session_key, h.seq)][0] = r
    if mode in ("hybrid", "vectors"):
        vecs = {
            (k, s): decode([v], embedder.dim)[0]
            for c in store.iter_entry_vectors(embedder.model_id)
            for _, k, s, v in c
            if (k, s) in ranks
        }
        qv = embedder.encode([q.text.replace('"', " ")])[0]
        order = list(vecs)
        cos = np.stack([vecs[k] for k in order]) @ qv if order else []
        scored = sorted(
            (
                (-float(c), k)
                for c, k in zip(cos, order, strict=True)
                if c > hybrid.MIN_COSINE
                and q.matches(entry_body({(k2, e.seq): e for k2, e in rows}[k]))
            )
        )
        for r, (_, k) in enumerate(scored, 1):
            ranks[k][1] = r
    entries = {(k, e.seq): e for k, e in rows}
    projects = {k: store.get_session(k).project for k in keys}
    items = []
    for key, (w, v) in ranks.items():
        b = hybrid._recency(entries[key].timestamp, NOW)
        if project and in_project(projects[key[0]], project):
            b *= 1 + hybrid.PROJECT_WEIGHT
        items.append((key, [w, v], b))
    return full_ranking(items, limit)


@pytest.mark.parametrize("mode", ["hybrid", "words", "vectors"])
def test_top_equals_brute_force_full_ranking(sqlite_store, embedder, monkeypatch, mode):
    """On random small stores, with lists starting at depth 1 (so the bounds and the
    deepening are what prove the top), the result equals the full fused ranking's top."""
    monkeypatch.setattr(hybrid, "FIRST_DEPTH", 1)
    # every row in the vector list (none cut as noise): rows found by words sit deep in it
    monkeypatch.setattr(hybrid, "MIN_COSINE", -1.0)
    monkeypatch.setattr(hybrid, "MEANING_ONLY_COSINE", -1.0)
    store = sqlite_store
    reads = []
    real_read = hybrid._List.read

    def read(self):
        reads.append((self, self.depth))  # the list kept alive: ids are never reused
        real_read(self)

    monkeypatch.setattr(hybrid._List, "read", read)
    placed = []
    real_ranks = VectorIndex.ranks_of

    def ranks_of(self, rows, cos, keys, **kw):
        got = real_ranks(self, rows, cos, keys, **kw)
        placed.extend(v for v in got.values() if v is not None)
        return got

    monkeypatch.setattr(VectorIndex, "ranks_of", ranks_of)

    @hsettings(
        max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )
    @given(
        texts=st.lists(
            st.lists(st.sampled_from(VOCAB), min_size=1, max_size=5), min_size=1, max_size=40
        ),
        ages=st.lists(st.integers(0, 200), min_size=40, max_size=40),
        query=st.lists(
            st.sampled_from([*VOCAB, '"export job"', '"scroll viewport"']), min_size=1, max_size=3
        ),
        limit=st.integers(1, 4),
        boost_project=st.booleans(),
    )
    def check(texts, ages, query, limit, boost_project):
        n = next(_COUNTER)
        base = f"/p{n}"
        for i, words in enumerate(texts):
            key = f"e{n}-{i % 3}"
            if store.get_session(key) is None:
                store.upsert_session(Session(key=key, harness="pi", project=f"{base}/{i % 2}"))
            row = U(" ".join(words))
            row.timestamp = NOW - timedelta(days=ages[i])
            load(store, [row], key=key)
            store.upsert_session(
                Session(
                    key=key,
                    harness="pi",
                    project=f"{base}/{i % 2}",
                    entry_count=store.get_session(key).entry_count,
                )
            )
        embed_pending(store, embedder)
        f = EntryFilter(projects=(base,))
        project = f"{base}/1" if boost_project else None
        text = " ".join(query)
        got = hybrid_entries(
            store, text, limit=limit, filters=f, project=project, now=NOW, mode=mode
        )
        want = _brute(store, embedder, text, f, project, limit, mode)
        assert [((h.session_key, h.seq)) for h in got] == [k for k, _ in want]
        assert [h.score for h in got] == pytest.approx([s for _, s in want])

    check()
    # the examples went through the bounds: some list was read more than once
    # (test_the_bound_deepens_the_list_until_no_unseen_row_can_win proves a set depth)
    depths: dict[int, set[int]] = {}
    for lst, depth in reads:
        depths.setdefault(id(lst), set()).add(depth)
    assert max(len(d) for d in depths.values()) >= 2


def test_the_bound_deepens_the_list_until_no_unseen_row_can_win(
    sqlite_store, embedder, monkeypatch
):
    """Every row is old and in another project, so none earns a boost; an unseen row could
    still earn the full boost (recency x project), so the words list read from depth 1 must
    double until 1 / (k + 1) beats that bound at depth d + 1: the depths read are exactly
    1, 2, 4, 8 (k = 20, boosts up to 1.1 x 1.1: 1.21 / (21 + d) < 1 / 21 needs d >= 5)."""
    monkeypatch.setattr(hybrid, "FIRST_DEPTH", 1)
    store = sqlite_store
    for i in range(12):
        r = U("zebra " * (12 - i) + f"note {i}")
        r.timestamp = NOW - timedelta(days=400)
        load(store, [r], key="old")
    store.upsert_session(
        Session(
            key="old",
            harness="pi",
            project="/far/away",
            entry_count=store.get_session("old").entry_count,
        )
    )
    reads = []
    real_read = hybrid._List.read

    def read(self):
        reads.append(self.depth)
        real_read(self)

    monkeypatch.setattr(hybrid._List, "read", read)
    got = hybrid_entries(store, "zebra", limit=1, project="/near", now=NOW, mode="words")
    want = _brute(store, embedder, "zebra", EntryFilter(), "/near", 1, "words")
    assert [(h.session_key, h.seq) for h in got] == [k for k, _ in want] == [("old", 0)]
    assert reads == [1, 2, 4, 8]


def test_row_found_by_words_deep_in_the_vector_list_is_placed_exactly(
    sqlite_store, embedder, monkeypatch
):
    """The only row holding the query's word is about something else: it is first by words
    and far down the vector list; its vector rank is counted (``ranks_of``), not read, and the
    result equals the brute-force full ranking."""
    monkeypatch.setattr(hybrid, "FIRST_DEPTH", 1)
    monkeypatch.setattr(hybrid, "MIN_COSINE", -1.0)
    monkeypatch.setattr(hybrid, "MEANING_ONLY_COSINE", -1.0)
    store = sqlite_store
    rows = [f"the docker image build for service {i} pushes to the registry" for i in range(30)]
    rows.append("zebra grocery list: apples, bread, milk and cheese for the weekend")
    for i, text in enumerate(rows):
        r = U(text)
        r.timestamp = NOW - timedelta(days=3)
        load(store, [r], key=f"k{i % 4}")
        store.upsert_session(
            Session(
                key=f"k{i % 4}",
                harness="pi",
                project="/z/a",
                entry_count=store.get_session(f"k{i % 4}").entry_count,
            )
        )
    embed_pending(store, embedder)
    placed = []
    real = VectorIndex.ranks_of

    def ranks_of(self, rows, cos, keys, **kw):
        got = real(self, rows, cos, keys, **kw)
        placed.extend(got.values())
        return got

    monkeypatch.setattr(VectorIndex, "ranks_of", ranks_of)
    f = EntryFilter(projects=("/z",))
    for limit in (1, 5, 20, 31):
        got = hybrid_entries(store, "zebra docker registry", limit=limit, filters=f, now=NOW)
        want = _brute(store, embedder, "zebra docker registry", f, None, limit, "hybrid")
        assert [(h.session_key, h.seq) for h in got] == [k for k, _ in want]
        assert [h.score for h in got] == pytest.approx([s for _, s in want])
    zebra = next(
        h
        for h in hybrid_entries(store, "zebra docker registry", limit=40, filters=f, now=NOW)
        if "zebra" in entry_body(h.entry)
    )
    assert zebra.vector_rank > 5 and any(p and p[0] == zebra.vector_rank for p in placed)


def test_ranks_of_equals_a_full_sort():
    """``ranks_of`` gives each row's 1-based place in the full ranking (ties by key, seq),
    within a sessions subset too, and None at or below ``min_score``."""
    import numpy as np

    rng = np.random.default_rng(5)
    index = VectorIndex("m/8", 8)
    vecs = rng.standard_normal((60, 8)).astype(np.float32)
    vecs[7] = vecs[3]  # a tie
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index.add([(i + 1, f"s{i % 5}", i, vecs[i].tobytes()) for i in range(60)])
    q = vecs[3]
    for sessions in (None, ["s1", "s3"]):
        rows, cos = index.scores(q, sessions=sessions)
        full = index.pick(rows, cos, 1000)
        keys = [(k, s) for k, s, _ in full]
        got = index.ranks_of(rows, cos, keys)
        assert [got[k][0] for k in keys] == list(range(1, len(keys) + 1))
        assert index.ranks_of(rows, cos, [("zz", 0)]) == {("zz", 0): None}
        cut = index.ranks_of(rows, cos, keys, min_score=0.0)
        assert all(
            (v is None) == (c <= 0.0) for (_, _, c), v in zip(full, cut.values(), strict=True)
        )


def test_ranks_of_many_ties_by_key_then_seq_as_keys_grow():
    """Rows of one cosine are placed by (key, seq) as strings compare, not by the order the
    keys arrived (``s10`` before ``s9``), also after keys are added between queries (the
    key order is computed again); the tie count runs in numpy (the bench tree repeats rows:
    hundreds of ties per cosine)."""
    import numpy as np

    index = VectorIndex("m/4", 4)
    same = np.array([1, 0, 0, 0], dtype=np.float32)
    other = np.array([0, 1, 0, 0], dtype=np.float32)
    keys = ["s9", "s10", "b", "s1"]  # arrival order differs from string order
    rows = [(i + 1, keys[i % 4], i // 4, (same if i % 3 else other).tobytes()) for i in range(24)]
    index.add(rows)

    def check() -> None:
        r, cos = index.scores(same)
        full = index.pick(r, cos, 1000)
        want = sorted(((-round(c, 5), k, s) for k, s, c in full))
        assert [(k, s) for _, k, s in want] == [(k, s) for k, s, _ in full]
        got = index.ranks_of(r, cos, [(k, s) for k, s, _ in full])
        assert [got[(k, s)][0] for k, s, _ in full] == list(range(1, len(full) + 1))

    check()
    index.add([(25, "a0", 0, same.tobytes()), (26, "s0", 7, same.tobytes())])
    check()
    r, cos = index.scores(same)
    assert index.ranks_of(r, cos, [("a0", 0)])[("a0", 0)] == (1, 1.0)  # first of the ties


def test_a_note_is_one_line_on_stderr_when_logging_is_not_configured() -> None:
    """A fresh-user review: a library caller (no logging configured) saw the note twice, the
    second time bare, from Python's last-resort log handler."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "from continuity.retrieval import hybrid; hybrid._tell('a note')"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stderr.splitlines() == ["continuity: a note"]


def test_without_the_extra_words_only_and_said_once(store, embedder, monkeypatch, capsys):
    """issue 40: without the semantic extra everything works by words and says so once."""
    from continuity.retrieval import embedder as emb

    _session(store, "s", ["the zebra migration ran", "where did we fix the scroll-back bug"])
    embed_pending(store, embedder)
    monkeypatch.setattr(emb, "semantic_available", lambda: False)
    monkeypatch.setattr(emb, "_NOTED", False)
    first = hybrid_entries(store, "zebra", limit=5, now=NOW)
    second = hybrid_entries(store, "terminal viewport position", limit=5, now=NOW)
    assert [(h.session_key, h.seq, h.vector_rank) for h in first] == [("s", 0, None)]
    assert second == []  # no shared word, and no vectors
    assert capsys.readouterr().err.count(emb.MISSING_EXTRA) == 1
    # once per user too: a new process (here: the flag reset) says nothing more
    assert emb.noted_marker().is_file()
    monkeypatch.setattr(emb, "_NOTED", False)
    hybrid_entries(store, "zebra", limit=5, now=NOW)
    assert emb.MISSING_EXTRA not in capsys.readouterr().err


def test_the_words_only_note_says_once_across_processes(tmp_path):
    """A fresh-user review: the quick start installs without the semantic extra, and every
    ``import`` and one-shot ``search`` said the note again. Said by the first process, then
    by none; a cache that cannot be written leaves it said once per process."""
    import os
    import subprocess
    import sys

    code = (
        "from continuity.retrieval import embedder as emb\n"
        "from continuity.retrieval.settings import RetrievalSettings\n"
        "emb.semantic_available = lambda: False\n"
        "said = []\n"
        "emb.semantic_note(RetrievalSettings(), said.append)\n"
        "emb.semantic_note(RetrievalSettings(), said.append)\n"
        "print(len(said))\n"
    )
    env = {**os.environ, "CONTINUITY_MODELS_DIR": str(tmp_path / "cache" / "models")}

    def said() -> str:
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    assert [said(), said()] == ["1", "0"]
    marker = tmp_path / "cache" / "words-only-noted"
    assert marker.is_file() and oct(marker.stat().st_mode & 0o777) == "0o600"
    blocked = tmp_path / "file"
    blocked.write_text("")
    env["CONTINUITY_MODELS_DIR"] = str(blocked / "models")  # its parent is a file: no marker
    assert [said(), said()] == ["1", "1"]


@pytest.mark.parametrize("mode", ["hybrid", "words"])
def test_a_short_list_is_the_head_of_a_long_one_when_a_word_is_common(
    sqlite_store, embedder, monkeypatch, mode
):
    """``search -n 3`` gives the first three rows of ``search -n 30`` (found on the 320 MB
    tree of ``bench/peers.py``, whose sessions repeat: five of ten queries differed). The
    word is in more rows than the bounded ranking ranks (``RANK_WINDOW``, 20 here), so words
    rank the newest 20 of them; a deeper read of the words list (30 rows here) ranked every
    match instead, and the older sessions' rows, first by key, came to the top."""
    from continuity.store import fts

    monkeypatch.setattr(fts, "RANK_WINDOW", 20)
    monkeypatch.setattr(hybrid, "FIRST_DEPTH", 1)
    store = sqlite_store
    for i in range(30):
        _session(
            store, f"s{i:02d}", ["deploy the staging server", "done"], start=NOW - timedelta(1)
        )
    embed_pending(store, embedder)
    short = hybrid_entries(store, "deploy", limit=3, now=NOW, mode=mode)
    long = hybrid_entries(store, "deploy", limit=30, now=NOW, mode=mode)
    assert len(short) == 3
    assert [(h.session_key, h.seq) for h in short] == [(h.session_key, h.seq) for h in long[:3]]
    assert [h.score for h in short] == [h.score for h in long[:3]]
    # the bounded words list: the newest 20 rows holding the word (the same text), by key;
    # in hybrid the older ten follow, found by meaning alone
    assert [h.session_key for h in long[:20]] == [f"s{i:02d}" for i in range(10, 30)]
    assert len(long) == (30 if mode == "hybrid" else 20)
