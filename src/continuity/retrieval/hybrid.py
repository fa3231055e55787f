"""Hybrid ranking (issue 40): full-text BM25 fused with vector similarity, with a recency and a
same-project boost, and quoted phrases honoured.

**The two lists.** *Words*: the store's full-text ranking (``store.search_entries``, FTS5 BM25
on SQLite, ``ts_rank`` on PostgreSQL; ``search_memories`` for memories) of the query's words
(``query.Query.terms``). *Vectors*: the exact cosine ranking of the query's embedding against
every stored vector of the model (``index.VectorIndex``), rows above ``MIN_COSINE`` only (below
it the packaged model's scores are noise: unrelated texts score -0.1..0.2 against each other,
a paraphrase 0.35 and more). Both lists hold only rows meeting the filters and every quoted
phrase (``Query.matches`` on ``entry_body``): a row's rank is its rank among those rows.

**The score** (weighted reciprocal rank fusion, Cormack et al. 2009; ``RRF_K`` = 20,
``VECTOR_WEIGHT`` = 0.5)::

    score = boost x (1/(20 + words_rank) + 0.5/(20 + vector_rank))

a term counting 0 when the row is not in that list. The constants are measured, not taken
from the paper: with RRF's usual k = 60 and equal weights, a row ranked 1st by words and absent
from the vectors list (a command, a path, code: text the static model embeds poorly) fell
below rows both lists rank around 40th, and hybrid lost to words alone (``bench/retrieval.py``
on its 104 questions: hit@1 0.46 against 0.51). k = 20 with the vectors at half weight keeps
the words' first rows first and still lets a paraphrase found only by meaning in: hit@1 0.48,
recall@5 0.82 (words 0.80), paraphrase recall@5 0.68 (words 0.52), before the boosts. ``boost`` is multiplicative:
``(1 + RECENCY_WEIGHT x 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)) x (1 + PROJECT_WEIGHT when
the row's session is of ``project`` or inside it)``; at most 1.1 x 1.1 = 1.21, so it reorders
near-ties and never lifts a row past one a list ranks clearly better. A row's age is ``now``
minus its time (a memory's ``created_at``) in whole days (so a score does not change
between two calls of the same day); a row without a time gets no recency boost.
Ties are broken by (session_key, seq) (memories: memory_id).

**Exact.** The result equals the first ``limit`` of the full fused ranking (every row of both
lists), though the lists are read only to a depth: a row absent from a list read to depth
``d`` (``s`` rows survived its filters) has at most ``1/(60 + s + 1)`` from it, a row in
neither list at most ``max boost x`` the sum of both such bounds (the threshold argument of
Fagin's TA). The lists start at ``FIRST_DEPTH`` (or ``limit`` when more). A row that could be in
the top but lacks a list's rank is first placed exactly when that is cheap: its vector rank is
counted from the cosines already computed (``VectorIndex.ranks_of``; not with a row filter),
and a row holding none of the query's words is in no words list
(``store.entries_matching``); otherwise the list is read twice as deep, as it is while a row
never seen could still reach the ``limit``-th score. A list read to its end is exact. ``tests/retrieval/
test_hybrid.py`` compares the result with a brute-force full ranking on random stores.

**Meaning alone.** When no row meeting the filters holds any word of the query, the vectors
list keeps only rows above ``MEANING_ONLY_COSINE`` (0.4): nonsense finds nothing rather than
the rows nearest to it. A query without a searchable word (punctuation, stop words) finds
nothing in every mode, as by words.

**Without vectors.** When ``load_embedder`` gives None (``semantic = "off"``, or the extra is
missing: ``semantic_note`` says so once), "hybrid" and "vectors" rank by words alone; a row not
yet embedded is found by words all the same (it is only absent from the vectors list).

Over 600 lines: one ranking: the two lists (words, vectors), their fusion, the boosts and the
phrase rule are one formula; its tuning constants are documented beside the code that uses them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from continuity.core.errors import ConfigError
from continuity.core.model import Entry, Memory
from continuity.redaction.funnel import redact
from continuity.retrieval.query import Query, parse_query
from continuity.store.memory import MemoryFilter
from continuity.store.search import EntryFilter, entry_body, entry_tools

if TYPE_CHECKING:
    from continuity.retrieval.settings import RetrievalSettings
    from continuity.store import SqlStore

#: Reciprocal rank fusion's constant (Cormack, Clarke, Buettcher 2009 use 60; measured here,
#: see the module docstring).
RRF_K = 20
#: The vectors list's weight in the fusion (the words list weighs 1; module docstring).
VECTOR_WEIGHT = 0.5
#: A row of right now scores up to this much more (multiplicative: x 1.1), halving every
#: ``RECENCY_HALF_LIFE_DAYS`` of age.
RECENCY_WEIGHT = 0.1
RECENCY_HALF_LIFE_DAYS = 30.0
#: A row of the asker's project scores this much more (multiplicative: x 1.1).
PROJECT_WEIGHT = 0.1
#: Cosines at or below this are not in the vectors list (see the module docstring).
MIN_COSINE = 0.2
#: The cosine a row found by meaning alone must clear when no row holds any word of the
#: query (nonsense, or words the project never used): the packaged model gives unrelated
#: text up to about 0.3 and the issue's paraphrase ("where did we fix the scroll-back bug?")
#: 0.51 against its row.
MEANING_ONLY_COSINE = 0.4
#: Rows read from each list first (then twice as many while the top is not proved). Issue
#: 43: a words read costs about the same at 50 or 200 rows (FTS5 scores every candidate of
#: its bounded window either way), and at 50 most searches read each list three times; at
#: 100 the 320 MB tree's hybrid search took 43 ms instead of 61 (median of 30 queries).
FIRST_DEPTH = 100

Mode = Literal["hybrid", "words", "vectors"]
MODES: tuple[str, ...] = ("hybrid", "words", "vectors")


@dataclass(slots=True)
class RankedHit:
    """One ranked row: ``session_key``/``seq`` (for a memory: ``memory_id`` and 0), the fused
    ``score`` (higher is better; see the module docstring), its 1-based rank in each list
    (None: not in it), its ``cosine`` with the query and ``bm25`` (the store's relevance,
    higher better) when known, and the row (``entry``; ``memory`` for a memory)."""

    session_key: str
    seq: int
    score: float
    words_rank: int | None
    vector_rank: int | None
    cosine: float | None
    bm25: float | None
    entry: Entry | None
    memory: Memory | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_key": self.session_key,
            "seq": self.seq,
            "score": self.score,
            "words_rank": self.words_rank,
            "vector_rank": self.vector_rank,
            "cosine": self.cosine,
            "bm25": self.bm25,
        }


Key = tuple[str, int]


#: What ``_List.resolve`` answers for a row: its exact (rank, raw score) in the full list, or
#: None when the row is not in the list at all.
Resolved = tuple[int, float] | None


@dataclass(slots=True)
class _List:
    """One ranked list read to ``depth``: ``items`` in rank order (key, raw score, row) of the
    rows that passed the filters, ``done`` when the list was read to its end. ``resolve``
    (optional): the exact place of rows beyond the depth, ``{key: Resolved}`` for the keys it
    can decide (the others stay bounded)."""

    fetch: Callable[[int], tuple[list[tuple[Key, float, Any]], bool]]
    depth: int
    resolve: Callable[[list[Key]], dict[Key, Resolved]] | None = None
    weight: float = 1.0
    items: list[tuple[Key, float, Any]] = field(default_factory=list)
    done: bool = False
    known: dict[Key, Resolved] = field(default_factory=dict)
    tried: set[Key] = field(default_factory=set)
    #: the words list: whether a read found any row holding a word (before a phrase filter)
    matched: bool = False
    #: the depth ``items`` were read to (``_fuse`` reads a list only when it is not yet)
    read_to: int = 0

    def read(self) -> None:
        if self.read_to == self.depth:
            return  # read already at this depth (the words list, for the meaning floor)
        self.items, self.done = self.fetch(self.depth)
        self.read_to = self.depth

    def bound(self) -> float:
        """The most a row absent from this list gets from it."""
        return 0.0 if self.done else self.weight / (RRF_K + len(self.items) + 1)

    def settle(self, keys: Iterable[Key]) -> bool:
        """Ask ``resolve`` about ``keys`` not asked before; True when it decided any."""
        ask = [k for k in keys if k not in self.tried]
        if not ask or self.resolve is None:
            return False
        self.tried.update(ask)
        got = self.resolve(ask)
        self.known.update(got)
        return bool(got)


def _recency(at: datetime | None, now: datetime) -> float:
    if at is None:
        return 1.0
    at = at if at.tzinfo else at.replace(tzinfo=UTC)
    age = max(0, (now - at).days)  # whole days: a score is stable within the day
    return 1.0 + RECENCY_WEIGHT * 0.5 ** (age / RECENCY_HALF_LIFE_DAYS)


def in_project(folder: str | None, project: str | None) -> bool:
    """Whether ``folder`` is ``project`` or inside it."""
    if not folder or not project:
        return False
    p = project.rstrip("/")
    return folder == project or folder.rstrip("/") == p or folder.startswith(p + "/")


def _fuse(
    lists: list[_List],
    limit: int,
    boost: Callable[[Key], float | None],
    max_boost: float,
    read_rows: Callable[[list[Key]], None],
) -> list[tuple[Key, float, list[int | None], list[Any]]]:
    """The exact top ``limit`` of the fused ranking of ``lists`` (module docstring):
    ``(key, score, ranks per list, raw scores per list)``. A row missing from a list read to
    a depth is first placed exactly by the list's ``resolve`` when it can, else the list is
    read deeper, until the bounds prove the top. ``boost(key)`` is None until the row was read
    (between 1 and ``max_boost`` then); ``read_rows(keys)`` reads the rows that could reach
    the top, so a deep list costs its keys, not its rows."""
    for lst in lists:
        lst.read()
    while True:
        seen: dict[Key, list[Any]] = {}
        for li, lst in enumerate(lists):
            for rank, (key, raw, _row) in enumerate(lst.items, 1):
                slot = seen.setdefault(key, [[None] * len(lists), [None] * len(lists)])
                slot[0][li], slot[1][li] = rank, raw
        scored = []
        for key, (ranks, raws) in seen.items():
            missing: list[int] = []
            slack = 0.0
            for i, lst in enumerate(lists):
                if ranks[i] is not None or lst.done:
                    continue
                if key in lst.known:
                    placed = lst.known[key]
                    if placed is not None:
                        ranks[i], raws[i] = placed
                    continue
                missing.append(i)
                slack += lst.bound()
            b = boost(key)
            lo, hi = (1.0, max_boost) if b is None else (b, b)
            known = sum(
                lst.weight / (RRF_K + r)
                for lst, r in zip(lists, ranks, strict=True)
                if r is not None
            )
            scored.append((lo * known, hi * (known + slack), key, ranks, raws, missing, b is None))
        scored.sort(key=lambda s: (-s[0], s[2]))
        top, rest = scored[:limit], scored[limit:]
        unsure: dict[int, list[Key]] = {}
        unread = [s[2] for s in top if s[6]]  # a row of the top must have its exact score
        for s in top:
            for i in s[5]:
                unsure.setdefault(i, []).append(s[2])
        deepen_all = False
        if len(top) == limit:
            floor = top[-1][0]
            for s in rest:
                if (s[5] or s[6]) and s[1] >= floor:
                    if s[6]:
                        unread.append(s[2])
                    for i in s[5]:
                        unsure.setdefault(i, []).append(s[2])
            deepen_all = max_boost * sum(lst.bound() for lst in lists) >= floor
        else:  # fewer candidates than wanted: every list must be read to its end
            deepen_all = True
        deepen_all = deepen_all and not all(lst.done for lst in lists)
        if not unsure and not deepen_all and not unread:
            return [(s[2], s[0], s[3], s[4]) for s in top]
        if unread:
            read_rows(unread)
            continue  # their boosts known: weigh again
        if any(lists[i].settle(keys) for i, keys in unsure.items()):
            continue  # rows placed exactly: weigh again before reading deeper
        deepen = set(unsure) | (
            {i for i, lst in enumerate(lists) if not lst.done} if deepen_all else set()
        )
        for i in deepen:
            if not lists[i].done:
                lists[i].depth *= 2
                lists[i].read()


class _Rows:
    """The rows (entries or memories) hybrid ranking has read, and their boosts: ``get``
    gives a row read (None: gone), ``boost`` None for a row not read yet; ``read(keys)`` reads
    rows in one batch (``fetch``: keys -> {key: row}), and their sessions' projects
    (``session_of(key, row)``: the session whose project counts)."""

    def __init__(
        self,
        fetch: Callable[[list[Key]], dict[Key, Any]],
        when: Callable[[Any], datetime | None],
        session_of: Callable[[Key, Any], str | None],
        store: Any,
        project: str | None,
        now: datetime,
    ) -> None:
        self.rows: dict[Key, Any] = {}
        self._boosts: dict[Key, float] = {}
        self.fetch, self.when, self.session_of = fetch, when, session_of
        self.store, self.project, self.now = store, project, now
        self._folders: dict[str, str | None] = {}

    def add(self, key: Key, row: Any) -> None:
        if row is not None and key not in self.rows:
            self.rows[key] = row

    def read(self, keys: list[Key]) -> None:
        want = [k for k in dict.fromkeys(keys) if k not in self.rows]
        if want:
            got = self.fetch(want)
            for k in want:
                self.rows[k] = got.get(k)
        if self.project:
            sessions = {self.session_of(k, self.rows[k]) for k in keys if self.rows.get(k)}
            need = sorted(s for s in sessions if s and s not in self._folders)
            if need:
                found = self.store.sessions_by_key(need)
                self._folders.update({k: (found[k].project if k in found else None) for k in need})

    def boost(self, key: Key) -> float | None:
        if key in self._boosts:
            return self._boosts[key]
        if key not in self.rows:
            return None
        row = self.rows[key]
        b = _recency(self.when(row) if row is not None else None, self.now)
        if self.project and row is not None:
            src = self.session_of(key, row)
            if src is not None and src not in self._folders:
                return None  # its session's project not read yet
            if in_project(self._folders.get(src) if src else None, self.project):
                b *= 1.0 + PROJECT_WEIGHT
        self._boosts[key] = b
        return b


def _now(now: datetime | None) -> datetime:
    return now if now is not None else datetime.now(UTC)


def _embedder(settings: RetrievalSettings | None, mode: str) -> Any:
    from continuity.retrieval.embedder import load_embedder, semantic_note
    from continuity.retrieval.settings import RetrievalSettings

    if mode == "words":
        return None
    settings = settings or RetrievalSettings()
    try:
        found = load_embedder(settings)
    except ConfigError as exc:  # a model that does not load: words, said once (review)
        _say_once(f"{exc}; ranking by words only")
        return None
    if found is None:  # semantic_note says it once per process itself
        semantic_note(settings, _tell)
    return found


def _tell(msg: str) -> None:
    """``continuity: MSG`` on stderr (the daemon's stderr is its log), once: it was also
    logged as a warning, which with no handler configured Python's last-resort handler
    printed a second time, bare (a fresh-user review); the log now gets it at debug level."""
    import logging
    import sys

    logging.getLogger(__name__).debug("%s", msg)
    print(f"continuity: {msg}", file=sys.stderr)


_SAID: set[str] = set()


def _say_once(msg: str) -> None:
    """``_tell(msg)`` once per process and message."""
    if msg not in _SAID:
        _SAID.add(msg)
        _tell(msg)


def _query_vector(embedder: Any, q: Query) -> Any:
    return embedder.encode([redact(q.text.replace('"', " "))])[0]


def _entry_ok(entry: Entry | None, f: EntryFilter, q: Query) -> bool:
    if entry is None:
        return False
    ts = entry.timestamp
    if (f.since is not None or f.until is not None) and ts is None:
        return False
    if f.since is not None and ts is not None and ts < f.since:
        return False
    if f.until is not None and ts is not None and ts >= f.until:
        return False
    if f.role and entry.role.value != f.role:
        return False
    if f.tool and f" {f.tool.lower()} " not in entry_tools(entry, {}):
        return False
    return q.matches(entry_body(entry))


def _check(limit: int, mode: str) -> None:
    from continuity.core.errors import InputError

    if mode not in MODES:
        raise InputError(f"mode {mode!r}: one of {', '.join(MODES)}")
    if limit < 0:
        raise InputError(f"limit {limit}: must be 0 or more")


def hybrid_entries(
    store: SqlStore,
    query: str,
    *,
    limit: int,
    filters: EntryFilter | None = None,
    project: str | None = None,
    now: datetime | None = None,
    settings: RetrievalSettings | None = None,
    mode: Mode = "hybrid",
) -> list[RankedHit]:
    """The best ``limit`` rows of every session for ``query`` (words and "quoted phrases")
    meeting ``filters``, ranked by ``mode``: "hybrid" (words and vectors fused), "words"
    (BM25 alone, with the boosts), "vectors" (cosine alone, with the boosts); see the module
    docstring for the score, the boosts (``project``: the asker's folder; ``now``: for ages,
    default the current time) and why the top is exact. Each hit carries its ``entry``.
    Raises ``InputError`` for an unknown mode or a negative limit; ``ConfigError`` from
    ``load_embedder`` for a bad ``[retrieval]`` model."""
    _check(limit, mode)
    q = parse_query(query)
    f = filters or EntryFilter()
    terms = q.terms
    embedder = _embedder(settings, mode)
    if embedder is None:  # no vectors: every mode ranks by words (as --help says)
        mode = "words"
    if limit == 0 or not terms:  # no searchable word: nothing, as by words (review)
        return []
    row_filter = bool(f.since or f.until or f.role or f.tool or q.phrases)
    lists: list[_List] = []
    depth = max(FIRST_DEPTH, limit)
    rows = _Rows(
        store.entries_at, lambda e: e.timestamp, lambda key, _e: key[0], store, project, _now(now)
    )

    if mode in ("hybrid", "words") and terms:

        def words(d: int) -> tuple[list[tuple[Key, float, Any]], bool]:
            hits = store.search_entries(terms, limit=d, filters=f, with_entries=False)
            lists[0].matched = lists[0].matched or bool(hits)
            keys = [(h.session_key, h.seq) for h in hits]
            if q.phrases:  # the phrase filter needs the rows' text
                rows.read(keys)
                keys = [
                    k
                    for k in keys
                    if rows.rows.get(k) is not None and q.matches(entry_body(rows.rows[k]))
                ]
            score = {(h.session_key, h.seq): h.score for h in hits}
            return [(k, score[k], None) for k in keys], len(hits) < d

        def no_words(keys: list[Key]) -> dict[Key, Resolved]:
            """Rows holding none of the words are in no words list (exactly absent)."""
            found = store.entries_matching(terms, keys)
            return {k: None for k in keys if k not in found}

        lists.append(_List(words, depth, no_words))

    if embedder is not None and mode in ("hybrid", "vectors"):
        from continuity.retrieval.index import shared_index

        index = shared_index(store, embedder.model_id, "entries")
        sessions = None
        if f.session_key:
            sessions = [f.session_key]
        if f.harness or f.projects:
            keys = store.session_keys_where(harness=f.harness, projects=f.projects)
            sessions = [k for k in keys if sessions is None or k in sessions]
        vrows, cos = index.scores(_query_vector(embedder, q), sessions=sessions)
        # No row holds a word of the query: what meaning alone finds must be close to it
        # (fresh-user review: "xyzzyplughfoo" listed 20 unrelated rows at cosine 0.2-0.3).
        # The words list read first answers it (before its phrase filter: any row holding
        # a word), so the check costs no query of its own.
        if lists:
            lists[0].read()
            any_word = lists[0].matched
        else:
            any_word = bool(store.search_entries(terms, limit=1, filters=f, with_entries=False))
        floor = MIN_COSINE if any_word else MEANING_ONLY_COSINE

        def vectors(d: int) -> tuple[list[tuple[Key, float, Any]], bool]:
            picked = index.pick(vrows, cos, d, min_score=floor)
            keys = [(k, s) for k, s, _ in picked]
            if row_filter:  # the filters need the rows
                rows.read(keys)
                keys = {k for k in keys if _entry_ok(rows.rows.get(k), f, q)}
                return [((k, s), c, None) for k, s, c in picked if (k, s) in keys], len(picked) < d
            return [((k, s), c, None) for k, s, c in picked], len(picked) < d

        def placed(keys: list[Key]) -> dict[Key, Resolved]:
            """The exact vector rank of rows found by words (none with a row filter: the
            rank would be among the rows meeting it)."""
            return dict(index.ranks_of(vrows, cos, keys, min_score=floor))

        lists.append(_List(vectors, depth, None if row_filter else placed, weight=VECTOR_WEIGHT))

    if not lists:
        return []
    max_boost = (1.0 + RECENCY_WEIGHT) * (1.0 + PROJECT_WEIGHT if project else 1.0)
    fused = _fuse(lists, limit, rows.boost, max_boost, rows.read)
    wi = 0 if mode in ("hybrid", "words") and terms else None
    vi = (len(lists) - 1) if embedder is not None and mode in ("hybrid", "vectors") else None
    rows.read([key for key, _, _, _ in fused])
    return [
        RankedHit(
            key[0],
            key[1],
            score,
            ranks[wi] if wi is not None else None,
            ranks[vi] if vi is not None else None,
            raws[vi] if vi is not None else None,
            raws[wi] if wi is not None else None,
            rows.rows.get(key),
        )
        for key, score, ranks, raws in fused
        if rows.rows.get(key) is not None
    ]


def _memory_ok(m: Memory | None, agent_id: str, f: MemoryFilter | None, q: Query) -> bool:
    if m is None or m.agent_id != agent_id:
        return False
    if f is not None:
        if f.type is not None and m.type != f.type:
            return False
        if any(tag not in m.tags for tag in f.tags):
            return False
        if f.source_id is not None and m.source_id != f.source_id:
            return False
        if f.importance_min is not None and m.importance < f.importance_min:
            return False
        at = m.created_at
        if f.since is not None and (at is None or at < f.since):
            return False
        if f.until is not None and (at is None or at >= f.until):
            return False
    return q.matches(m.content)


def hybrid_memories(
    store: SqlStore,
    query: str,
    *,
    limit: int,
    filters: MemoryFilter | None = None,
    agent_id: str = "default",
    project: str | None = None,
    now: datetime | None = None,
    settings: RetrievalSettings | None = None,
    mode: Mode = "hybrid",
) -> list[RankedHit]:
    """``hybrid_entries`` for the memories of ``agent_id`` (``recall``): the words list is
    ``store.search_memories``; a memory's age is its ``created_at``, its project its source
    session's. Hits carry ``memory`` (``session_key`` is the memory id, ``seq`` 0). Raises as
    ``hybrid_entries``."""
    _check(limit, mode)
    q = parse_query(query)
    terms = q.terms
    embedder = _embedder(settings, mode)
    if embedder is None:
        mode = "words"
    if limit == 0 or not terms:
        return []
    lists: list[_List] = []
    depth = max(FIRST_DEPTH, limit)

    def fetch(keys: list[Key]) -> dict[Key, Any]:
        found = store.memories_by_id([k for k, _ in keys])
        return {(mid, 0): m for mid, m in found.items()}

    rows = _Rows(
        fetch, lambda m: m.created_at, lambda _key, m: m.source_id, store, project, _now(now)
    )
    if mode in ("hybrid", "words") and terms:

        def words(d: int) -> tuple[list[tuple[Key, float, Any]], bool]:
            found = store.search_memories(terms, agent_id=agent_id, limit=d, filters=filters)
            for m, _ in found:
                rows.add((m.memory_id, 0), m)
            return (
                [((m.memory_id, 0), score, None) for m, score in found if q.matches(m.content)],
                len(found) < d,
            )

        lists.append(_List(words, depth))
    if embedder is not None and mode in ("hybrid", "vectors"):
        from continuity.retrieval.index import shared_index

        index = shared_index(store, embedder.model_id, "memories")
        vrows, cos = index.scores(_query_vector(embedder, q))

        def vectors(d: int) -> tuple[list[tuple[Key, float, Any]], bool]:
            picked = index.pick(vrows, cos, d, min_score=MIN_COSINE)
            rows.read([(k, 0) for k, _, _ in picked])  # the agent and filters need the rows
            return (
                [
                    ((k, 0), c, None)
                    for k, _, c in picked
                    if _memory_ok(rows.rows.get((k, 0)), agent_id, filters, q)
                ],
                len(picked) < d,
            )

        # other agents' memories: no exact placing
        lists.append(_List(vectors, depth, weight=VECTOR_WEIGHT))
    if not lists:
        return []
    max_boost = (1.0 + RECENCY_WEIGHT) * (1.0 + PROJECT_WEIGHT if project else 1.0)
    fused = _fuse(lists, limit, rows.boost, max_boost, rows.read)
    wi = 0 if mode in ("hybrid", "words") and terms else None
    vi = (len(lists) - 1) if embedder is not None and mode in ("hybrid", "vectors") else None
    rows.read([key for key, _, _, _ in fused])
    return [
        RankedHit(
            key[0],
            0,
            score,
            ranks[wi] if wi is not None else None,
            ranks[vi] if vi is not None else None,
            raws[vi] if vi is not None else None,
            raws[wi] if wi is not None else None,
            None,
            rows.rows.get(key),
        )
        for key, score, ranks, raws in fused
        if rows.rows.get(key) is not None
    ]


def full_ranking(
    items: Iterable[tuple[Key, list[int | None], float]],
    limit: int,
    weights: tuple[float, ...] = (1.0, VECTOR_WEIGHT),
) -> list[tuple[Key, float]]:
    """The fused ranking computed from every row's full ranks (``(key, [rank per list],
    boost)``; ``weights``: each list's, words then vectors), first ``limit``: the brute force
    ``_fuse`` must equal (tests)."""
    scored = [
        (
            key,
            boost
            * sum(w / (RRF_K + r) for w, r in zip(weights, ranks, strict=False) if r is not None),
        )
        for key, ranks, boost in items
    ]
    scored = [s for s in scored if s[1] > 0]
    scored.sort(key=lambda s: (-s[1], s[0]))
    return scored[:limit]


__all__ = [
    "RankedHit",
    "hybrid_entries",
    "hybrid_memories",
    "parse_query",
    "in_project",
    "full_ranking",
    "MODES",
    "RRF_K",
    "VECTOR_WEIGHT",
    "RECENCY_WEIGHT",
    "RECENCY_HALF_LIFE_DAYS",
    "PROJECT_WEIGHT",
    "MIN_COSINE",
    "MEANING_ONLY_COSINE",
    "FIRST_DEPTH",
]
