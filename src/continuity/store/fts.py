"""Full-text search of memories (issue 5) and of entries (issue 19, ``store.search``): the text the
index holds, the phrases a query
matches, and the bounded BM25 ranking on SQLite. Used by ``store.memory`` and revision 0011.

**CJK segmentation.** SQLite's ``unicode61`` tokenizer and PostgreSQL's parser both make an
unbroken run of letters one token, and Chinese, Japanese and Korean are written without spaces
between words, so a word inside such a run was never found. ``search_text`` puts a space on
each side of every CJK character (``CJK_RANGES``: Han, kana, Hangul, Bopomofo), so each is its
own token; a query term is matched as the phrase of its tokens (``phrase_tokens``), i.e. as a
substring of the run. Text without CJK characters is unchanged, so Latin indexing and ranking
are exactly as before. The same function segments the text written to the index (SQLite: the
``memories_fts`` row written by ``insert_memory``; revision 0011 rebuilds old rows) and every
query term; PostgreSQL's expression index calls ``continuity_search_text(content)``, a SQL
function built by ``pg_function_sql`` from the same character class (the tests check that
both give the same text).

**Bounded ranking (SQLite).** FTS5 computes BM25 for every row a query matches (1-2 us a row
and phrase on the benchmark machine), so a word found in 15% of 100,000 memories cost 20-40 ms
and set recall's p99. ``rank_fts5`` ranks at most ``RANK_WINDOW`` rows: the query's phrases are
taken rarest first while their match counts add up to at most ``RANK_WINDOW`` (*rare*; the rest
are *common*); every memory holding a rare phrase is ranked, and of the memories holding only
common phrases the most recently indexed fill the rest of the window. Scores are always FTS5's
BM25 of the whole query (a sum over phrases; see ``_mixed``), so a query without a common
phrase is ranked exactly as before. ``store.memory`` ranks every match exactly instead when
fewer than ``limit`` of the bounded candidates meet the agent and the filters.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from sqlalchemy import text

#: Code point ranges segmented one character a token (inclusive): Hangul Jamo, the ideographic
#: iteration and closing marks (々〆〇), Hiragana and Katakana, Bopomofo, Hangul compatibility
#: Jamo, Katakana phonetic extensions, CJK Extension A, CJK Unified Ideographs, Hangul Jamo
#: extended A, Hangul syllables and Jamo extended B, CJK compatibility ideographs, halfwidth
#: Katakana, and CJK Extensions B-H with the compatibility supplement (planes 2 and 3).
CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x1100, 0x11FF),
    (0x3005, 0x3007),
    (0x3040, 0x30FF),
    (0x3100, 0x312F),
    (0x3130, 0x318F),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7FF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x323AF),
)
CJK_CLASS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES)
_CJK = re.compile(f"[{CJK_CLASS}]")
#: Phrases found in more memories than this are "common" (see the module docstring).
RANK_WINDOW = 1000
PG_FUNCTION = "continuity_search_text"


def search_text(value: str) -> str:
    """``value`` as the full-text index sees it: a space before and after every CJK character
    (``CJK_RANGES``), everything else unchanged (same length in characters when there is no
    CJK character). Issue 43 goal 1: ASCII text (most rows; ``str.isascii`` is O(1)) and text
    without a CJK character are returned as they are, without the substitution's pass."""
    if value.isascii() or _CJK.search(value) is None:
        return value
    return _CJK.sub(r" \g<0> ", value)


def phrase_tokens(term: str) -> list[str]:
    """The tokens of a query ``term`` (letters and digits) after ``search_text``: one for a
    Latin word, one per character of a CJK run (matched in order, as a phrase)."""
    return search_text(term).split()


def pg_function_sql() -> str:
    """``CREATE OR REPLACE FUNCTION continuity_search_text(text)``: ``search_text`` in SQL
    (``regexp_replace`` with the same character class; needs a UTF-8 database). IMMUTABLE, so
    an expression index may use it."""
    return (
        f"CREATE OR REPLACE FUNCTION {PG_FUNCTION}(content text) RETURNS text "
        "LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS "
        f"$$SELECT regexp_replace(content, '[{CJK_CLASS}]', ' \\& ', 'g')$$"
    )


def pg_tsquery(terms: Sequence[str]) -> str:
    """The ``to_tsquery`` text of ``terms``: each term the phrase of its tokens (``<->``), the
    terms joined with ``|``."""
    return " | ".join("(" + " <-> ".join(phrase_tokens(t)) + ")" for t in terms)


def fts5_phrase(term: str) -> str:
    """One FTS5 phrase: the term's tokens in double quotes (quotes doubled inside)."""
    return '"' + " ".join(phrase_tokens(term)).replace('"', '""') + '"'


@lru_cache(maxsize=8)
def _statements(table: str) -> tuple[Any, Any]:
    """``(ranked, windowed)`` of the FTS5 table ``table`` (``memories_fts`` or
    ``entries_fts``): the best ``:k`` rows of ``:q`` by BM25, and the newest ``:w`` matches
    ranked, with ``n``: how many of the newest ``:w`` + 1 there are (``n`` > ``:w``: older
    matches were left out; a constant subquery, evaluated once)."""
    ranked = text(
        f"SELECT rowid, bm25({table}) AS s FROM {table} WHERE {table} MATCH :q ORDER BY s LIMIT :k"
    )
    windowed = text(
        f"SELECT rowid, s, (SELECT count(*) FROM (SELECT 1 FROM {table} WHERE "
        f"{table} MATCH :q LIMIT :w + 1)) AS n FROM (SELECT rowid, "
        f"bm25({table}) AS s FROM {table} WHERE {table} MATCH :q "
        f"ORDER BY rowid DESC LIMIT :w) ORDER BY s LIMIT :k"
    )
    return ranked, windowed


def _cut(rows: Sequence[Any], k: int) -> list[tuple[int, float]]:
    """The best ``k`` of ``rows`` (an FTS5 ranking, best first: ``(rowid, bm25, ...)``) as
    ``(rowid, bm25)``, and past the ``k``-th every row scoring the same as it. Rows of the
    same text score the same, and a cut inside their run kept the ones SQLite met first, so
    which of them a caller ranked (by score, then its own key) depended on ``k``: ``search
    -n 5`` gave rows that were not the first five of ``search -n 50`` (found on the 320 MB
    tree of ``bench/peers.py``, whose sessions repeat). With the ties every prefix a caller
    cuts is one total order. Every statement here ranks at most ``RANK_WINDOW`` rows (the
    window, or rare phrases whose matches fit in it), so they are all read and cut here:
    no second query for the ties."""
    out = [(r[0], r[1]) for r in rows[:k]]
    if len(rows) > k:
        last = rows[k - 1][1]
        out.extend((r[0], r[1]) for r in itertools.takewhile(lambda r: r[1] == last, rows[k:]))
    return out


def _capped_counts(conn: Any, phrases: list[str], cap: int, table: str) -> list[int]:
    """How many rows match each phrase, counting at most ``cap`` (one statement)."""
    parts = ", ".join(
        f"(SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH :q{i} LIMIT :cap))"
        for i in range(len(phrases))
    )
    params: dict[str, Any] = {f"q{i}": p for i, p in enumerate(phrases)}
    return list(conn.execute(text(f"SELECT {parts}"), {**params, "cap": cap}).one())


def rank_fts5(
    conn: Any,
    terms: Sequence[str],
    k: int,
    window: int | None = None,
    *,
    table: str = "memories_fts",
) -> tuple[list[tuple[int, float]], bool]:
    """The best ``k`` FTS5 rows for ``terms`` (any of them): ``([(rowid, bm25)], complete)``,
    best (lowest bm25) first, and past the ``k``-th every row scoring the same as it
    (``_cut``: a caller ordering ties by its own key cuts the same order at any ``k``);
    ``complete`` when the list holds every match (no query hit ``k``
    and no window was full: a caller that filters the rows and keeps too few must rank every
    match itself). ``window`` (default ``RANK_WINDOW``) bounds the common phrases' candidates;
    see the module docstring. Cost: one FTS5 query for one term; else one statement of capped
    counts, then one FTS5 query (no common phrase, or only common ones) or three (``_mixed``)."""
    window = RANK_WINDOW if window is None else window
    ranked_sql, windowed_sql = _statements(table)
    fetch = max(k, window) + 1  # every row ranked (at most the window), cut by ``_cut``
    phrases = list(dict.fromkeys(fts5_phrase(t) for t in terms))
    if len(phrases) == 1:  # its newest `window` matches: every match when it is not common
        rows = conn.execute(windowed_sql, {"q": phrases[0], "w": window, "k": fetch}).all()
        return _cut(rows, k), len(rows) <= k and not _full(rows, window)
    counts = dict(zip(phrases, _capped_counts(conn, phrases, window + 1, table), strict=True))
    rare: list[str] = []
    total = 0
    for p in sorted(phrases, key=counts.__getitem__):
        if total + counts[p] > window:
            break
        rare.append(p)
        total += counts[p]
    common = [p for p in phrases if p not in rare]
    if not common:
        rows = conn.execute(ranked_sql, {"q": " OR ".join(phrases), "k": fetch}).all()
        return _cut(rows, k), len(rows) <= k
    some_common = "(" + " OR ".join(common) + ")"
    if rare:
        return _mixed(
            conn,
            some_common,
            "(" + " OR ".join(p for p in phrases if p in rare) + ")",
            window - total,
            k,
            table,
            fetch,
        )
    rows = conn.execute(windowed_sql, {"q": some_common, "w": window, "k": fetch}).all()
    return _cut(rows, k), len(rows) <= k and not _full(rows, window)


def _mixed(
    conn: Any, common: str, rare: str, left: int, k: int, table: str, fetch: int
) -> tuple[list[tuple[int, float]], bool]:
    """``rank_fts5`` for a query with common and rare phrases, in three FTS5 queries of which
    only one computes the common phrases' IDF twice over: the rows holding both (``common AND
    rare``: the whole query's bm25), every row holding a rare phrase ranked by the rare phrases
    alone, and the newest ``left`` rows holding a common phrase ranked by those alone. A row
    without the other group's phrases has its whole-query bm25 in the second or third list
    (the other group adds 0); a row holding both gets it from the first. BM25 terms are
    positive, so a row scored by one group alone never ranks better than it should: a row that
    belongs in the best ``k`` is in the best ``k`` of its list; when the first list is cut at
    ``k``, ranks past its last row are dropped (rows holding both beyond it may be missing)."""
    ranked_sql, windowed_sql = _statements(table)
    both_rows = conn.execute(ranked_sql, {"q": f"{common} AND {rare}", "k": fetch}).all()
    both = _cut(both_rows, k)
    rare_rows = conn.execute(ranked_sql, {"q": rare, "k": fetch}).all()
    parts = [_cut(rare_rows, k)]
    was_cut = [len(rare_rows) > k]
    cut = left <= 0  # the rare phrases took the whole window: no common-only candidate
    if not cut:
        common_rows = conn.execute(windowed_sql, {"q": common, "w": left, "k": fetch}).all()
        parts.append(_cut(common_rows, k))
        was_cut.append(len(common_rows) > k)
        cut = _full(common_rows, left)
    score = {r[0]: r[1] for r in both}
    for rows in parts:
        for r in rows:
            score.setdefault(r[0], r[1])
    merged = sorted(score.items(), key=lambda r: (r[1], r[0]))
    if len(both_rows) > k:
        merged = [r for r in merged if r[1] <= both[-1][1]]
    if len(merged) > k:  # the best k, and the rows tied with the k-th (``_cut``)
        merged = [r for r in merged if r[1] <= merged[k - 1][1]]
    return merged, not cut and len(both_rows) <= k and not any(was_cut)


def _full(windowed: list[Any], window: int) -> bool:
    """Whether a windowed result left older matches out."""
    return bool(windowed) and windowed[0][2] > window
