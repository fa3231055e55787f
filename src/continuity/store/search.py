"""Full-text index of every entry of every session (issue 19: ``continuity search``).

**What is indexed.** ``entry_body(entry)``: the row's text, reasoning, tool calls (name and
arguments as JSON), tool results and compaction summary, in block order, cut to ``INDEX_CHARS``
characters (a multi-megabyte tool output is found by its first 100,000 characters), then
segmented like recall's index (``fts.search_text``: each CJK character its own token). Every
row is indexed, conversation or not (sidechains, events, subagent files), so a search finds
what any run saw. ``entry_tools(entry)``: the tool names the row calls, or answers when the
call sits in the same write (``--tool``; a result whose call came in an earlier write is found
by the call's row, not by its own).

**Where it is written.** ``SearchIndexWriter.put`` is called by ``bulk.BulkWriter.put_entries``,
the one place entry rows are inserted (import and live capture alike), in the same transaction
as the rows: the index never lags the log. Revision 0014 builds it for existing workspaces.

**Per dialect** (revision 0014, keyed by ``entries.entry_no`` since revision 0031; neither
table is in ``store.schema``: they are indexes):

- SQLite: the contentless FTS5 table ``entries_fts(body, tools)`` (tokenizer ``porter
  unicode61 remove_diacritics 2``, as recall), whose rowid is the row's ``entry_no``: the
  declared alias of ``entries``' own rowid, so the index needs no table naming its rows (an
  implicit rowid is not: ``VACUUM`` may renumber it), and never reused (``AUTOINCREMENT``), so
  the words a forgotten session left in the index (a contentless table cannot delete them)
  never come to name a later row. Contentless, so the text is not stored twice. Ranked by
  BM25 with the bounded window of ``fts.rank_fts5``.
- PostgreSQL: ``entries_fts(entry_no, tools, doc tsvector)`` with a GIN index on ``doc``
  (``to_tsvector('english', body)``), ranked by ``ts_rank`` with length normalisation.

Queries are plain words (``transcripts.memories.query_terms``): any of them matches, a CJK run
as the phrase of its characters; nothing in a query reaches SQL or FTS syntax.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import (
    Connection,
    bindparam,
    column,
    func,
    literal_column,
    or_,
    select,
    table,
    text,
    tuple_,
)
from sqlalchemy.engine import Dialect

from continuity.core.model import (
    Entry,
    Session,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.core.text import json_bytes
from continuity.store import fts, schema as t
from continuity.store.memory import _like_escape  # the one LIKE-escape rule of the store
from continuity.store.parts import SqlParts

#: Characters of a row's text that are indexed (see the module docstring).
INDEX_CHARS = 100_000
#: How many ranked candidates per wanted hit the bounded first round takes (SQLite).
PREFIX_FACTOR = 4
FILTERED_PREFIX_FACTOR = 40
FTS_TABLE = "entries_fts"

_PG_FTS = table(FTS_TABLE, column("entry_no"), column("tools"), column("doc"))
_PG_CONFIG = literal_column("'english'::regconfig")


def entry_body(entry: Entry) -> str:
    """The searchable text of ``entry`` (not yet segmented): each block's text on its own line
    (a tool call as ``NAME {arguments JSON}``, media as its stub), then the compaction summary
    when no block holds it; at most ``INDEX_CHARS`` characters."""
    parts: list[str] = []
    for block in entry.blocks:
        if isinstance(block, (TextBlock, ThinkingBlock, ToolResultBlock)):
            parts.append(block.text)
        elif isinstance(block, ToolCallBlock):
            args = block.arguments
            # json_bytes, not orjson.dumps: a harness's integer beyond 64 bits (issue 45 item 11)
            shown = args if isinstance(args, str) else json_bytes(args).decode("utf-8")
            parts.append(f"{block.name} {shown}")
    if (
        entry.compaction is not None
        and entry.compaction.summary
        and entry.compaction.summary not in parts
    ):
        parts.append(entry.compaction.summary)
    return "\n".join(p for p in parts if p)[:INDEX_CHARS]


_WORDS = re.compile(r"[^\W_]+")


def pg_words(body: str) -> str:
    """``body`` as PostgreSQL's parser should see it: its words (runs of letters and digits,
    the query's rule) joined by spaces. PostgreSQL's parser keeps ``versions/0013_x.py`` as one
    *file* token (and URLs, hosts, e-mail addresses likewise), where SQLite's ``unicode61``
    splits at every non-alphanumeric character; without this a word inside a path was found
    on SQLite only."""
    return " ".join(_WORDS.findall(body))


def entry_tools(entry: Entry, names: dict[str, str]) -> str:
    """The lower-cased tool names ``entry`` calls or answers (``names``: call id -> name of the
    calls known to the writer), space-separated with a space at each end (`` bash read ``);
    "" when none."""
    found: list[str] = []
    for block in entry.blocks:
        if isinstance(block, ToolCallBlock):
            found.append(block.name.lower())
        elif isinstance(block, ToolResultBlock) and block.call_id in names:
            found.append(names[block.call_id].lower())
    words = list(dict.fromkeys(" ".join(found).split()))
    return f" {' '.join(words)} " if words else ""


def search_body(entry: Entry) -> str:
    """The text the full-text index keeps for ``entry`` (``entry_body`` segmented by
    ``fts.search_text``), before the NUL rule."""
    return fts.search_text(entry_body(entry))


def _body(entry: Entry) -> str:
    """``search_body`` of ``entry``, from ``entry.prepared`` when it was made from these blocks
    and this compaction (``store.bulk.prepare``)."""
    p = entry.prepared
    if p is not None and p[0] is entry.blocks and p[2] is entry.compaction:
        return p[6]  # type: ignore[return-value]
    return search_body(entry)


def _call_names(entries: Sequence[Entry]) -> dict[str, str]:
    return {b.id: b.name for e in entries for b in e.blocks if isinstance(b, ToolCallBlock)}


class SearchIndexWriter:
    """Writes the index rows of appended entries, in the caller's transaction (one dialect,
    statements rendered once). ``put`` is the one call ``bulk.BulkWriter.put_entries`` makes,
    after the rows themselves: each document is keyed by its row's ``entry_no``."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect.name
        mark = "?" if dialect.paramstyle == "qmark" else "%s"
        # the rows' numbers, one range of (session_key, seq): on SQLite
        # ``ux_entries_session_seq`` holds the rowid, so no row is read
        self._numbers_sql = (
            f"SELECT seq, entry_no FROM entries WHERE session_key = {mark} "
            f"AND seq BETWEEN {mark} AND {mark}"
        )
        # VALUES, not INSERT ... SELECT: SQLite runs an INSERT ... SELECT in a statement
        # savepoint, at which FTS5 writes its pending terms out (measured: 7x the time)
        if self.dialect == "sqlite":
            self._sql = (
                f"INSERT INTO {FTS_TABLE} (rowid, body, tools) VALUES ({mark}, {mark}, {mark})"
            )
        else:
            self._sql = (
                f"INSERT INTO {FTS_TABLE} (entry_no, tools, doc) VALUES ({mark}, {mark}, "
                f"to_tsvector('english'::regconfig, {mark}))"
            )

    def put(self, conn: Connection, session_key: str, entries: Sequence[Entry]) -> None:
        """Index ``entries`` (their ``seq`` set, their rows stored) of ``session_key``. Text
        follows the NUL rule (``schema.nul_free``) like the rows themselves."""
        if not entries:
            return
        key = t.nul_free(session_key)
        seqs = [e.seq for e in entries]
        numbers = dict(conn.exec_driver_sql(self._numbers_sql, (key, min(seqs), max(seqs))).all())
        names = _call_names(entries)
        docs = [(numbers[e.seq], t.nul_free(_body(e)), entry_tools(e, names)) for e in entries]
        if self.dialect == "postgresql":
            docs = [(no, tools, pg_words(body)) for no, body, tools in docs]
        conn.exec_driver_sql(self._sql, docs)


@dataclass(frozen=True, slots=True)
class EntryFilter:
    """Conditions a hit must meet (all optional). ``projects``: the session's project is one
    of these folders or inside one; ``since``/``until``: the row's time (UTC, ``until``
    exclusive; rows without a time never match a time filter); ``role``: ``user``,
    ``assistant``, ``tool``, ...; ``tool``: the row calls or answers a tool of that name (case
    folded); ``session_key``: one session."""

    harness: str | None = None
    projects: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    role: str | None = None
    tool: str | None = None
    session_key: str | None = None


@dataclass(frozen=True, slots=True)
class EntryHit:
    """One matching row: its session, seq, relevance (higher is better; the scale is the
    backend's, only the order compares) and the row itself (read by the same statement)."""

    session_key: str
    seq: int
    score: float
    entry: Entry | None = None


def _conditions(f: EntryFilter) -> list[Any]:
    e, s = t.entries.c, t.sessions.c
    cond: list[Any] = []
    if f.harness:
        cond.append(s.harness == f.harness)
    if f.projects:
        cond.append(
            or_(
                *[
                    or_(
                        s.project == p,
                        s.project.like(_like_escape(p.rstrip("/")) + "/%", escape="\\"),
                    )
                    for p in f.projects
                ]
            )
        )
    if f.since is not None:
        cond.append(e.ts >= f.since)
    if f.until is not None:
        cond.append(e.ts < f.until)
    if f.role:
        cond.append(e.role == f.role)
    if f.session_key:
        cond.append(e.session_key == f.session_key)
    return cond


class EntrySearchMixin(SqlParts):
    """Mixin of ``SqlStore``: ``search_entries`` over the index this module writes."""

    def search_entries(
        self,
        terms: Sequence[str],
        *,
        limit: int,
        filters: EntryFilter | None = None,
        with_entries: bool = True,
    ) -> list[EntryHit]:
        """The rows matching any of ``terms`` (plain words, ``query_terms``) and ``filters``,
        best first, at most ``limit``; ties by (session_key, seq). On SQLite the candidates
        of a very common word are bounded to the newest ``fts.RANK_WINDOW`` matches when no
        filter narrows the search (``fts.rank_fts5``). ``with_entries`` False: hits without
        their rows (``entry`` None; issue 40: hybrid ranking reads a list deep and the rows
        of a few)."""
        if not terms or limit < 1:
            return []
        f = filters or EntryFilter()
        cond = _conditions(f)
        with self._conn() as conn:
            if self.dialect == "sqlite":
                return self._entries_fts5(conn, terms, f, cond, limit, with_entries)
            return self._entries_pg(conn, terms, f, cond, limit, with_entries)

    def entries_matching(
        self, terms: Sequence[str], rows: Sequence[tuple[str, int]]
    ) -> set[tuple[str, int]]:
        """Which of ``rows`` (session_key, seq) the index finds for any of ``terms`` (issue 40:
        hybrid ranking learns that a row found by meaning is in no words list at all)."""
        wanted = sorted(set(rows))
        if not terms or not wanted:
            return set()
        found: set[tuple[str, int]] = set()
        with self._conn() as conn:
            for i in range(0, len(wanted), 500):
                part = wanted[i : i + 500]
                if self.dialect == "sqlite":  # one FTS seek per row (rowid = entry_no)
                    found.update(
                        (r[0], r[1])
                        for r in conn.execute(
                            text(
                                f"SELECT e.session_key, e.seq FROM json_each(:rows) AS w "
                                f"JOIN entries AS e ON e.session_key = json_extract(w.value, "
                                f"'$[0]') AND e.seq = json_extract(w.value, '$[1]') WHERE EXISTS "
                                f"(SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :q AND "
                                f"{FTS_TABLE}.rowid = e.entry_no)"
                            ),
                            {
                                "rows": orjson.dumps(part).decode(),
                                "q": " OR ".join(fts.fts5_phrase(x) for x in terms),
                            },
                        )
                    )
                else:
                    e = t.entries.c
                    query = func.to_tsquery(_PG_CONFIG, fts.pg_tsquery(terms))
                    stmt = (
                        select(e.session_key, e.seq)
                        .select_from(t.entries.join(_PG_FTS, _PG_FTS.c.entry_no == e.entry_no))
                        .where(
                            tuple_(e.session_key, e.seq).in_(part),
                            _PG_FTS.c.doc.op("@@")(query),
                        )
                    )
                    found.update((r[0], r[1]) for r in conn.execute(stmt))
        return found

    def sessions_by_key(self, keys: Sequence[str]) -> dict[str, Session]:
        """``{key: session}`` of these keys, in one statement per 500."""
        wanted = sorted(set(keys))
        out: dict[str, Session] = {}
        with self._conn() as conn:
            for i in range(0, len(wanted), 500):
                stmt = self._sessions_select().where(
                    t.sessions.c.session_key.in_(wanted[i : i + 500])
                )
                for r in conn.execute(stmt):
                    out[r.session_key] = self._session(r)
        return out

    def filter_sessions(
        self,
        *,
        harness: str | None = None,
        projects: Sequence[str] = (),
        offset: int = 0,
        limit: int = 50,
    ) -> tuple[list[Session], bool]:
        """One page of sessions, newest activity first (``ended_at``, then ``updated_at``, as
        ``list_sessions``), of ``harness`` and inside one of ``projects`` (as
        ``EntryFilter.projects``) when given: ``(sessions, more)``, ``more`` when a later page
        has rows. ``offset``/``limit`` in sessions."""
        s = t.sessions.c
        cond = _conditions(EntryFilter(harness=harness, projects=tuple(projects)))
        stmt = (
            self._sessions_select()
            .where(*cond)
            .order_by(func.coalesce(s.ended_at, s.updated_at).desc(), s.session_key)
            .offset(max(0, offset))
            .limit(limit + 1)
        )
        with self._conn() as conn:
            rows = [self._session(r) for r in conn.execute(stmt)]
        return rows[:limit], len(rows) > limit

    @staticmethod
    def _joined(select_from: Any, entry_no: Any) -> Any:
        """``select_from`` joined to the row whose ``entry_no`` is ``entry_no`` and its
        session."""
        e, s = t.entries, t.sessions
        return select_from.join(e, e.c.entry_no == entry_no).join(
            s, s.c.session_key == e.c.session_key
        )

    def _entries_fts5(
        self,
        conn: Any,
        terms: Sequence[str],
        f: EntryFilter,
        cond: list[Any],
        limit: int,
        with_entries: bool = True,
    ) -> list[EntryHit]:
        e = t.entries.c
        if f.tool:
            cond = [
                *cond,
                e.entry_no.in_(
                    text(
                        f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH :tool_q"
                    ).bindparams(tool_q="tools : " + fts.fts5_phrase(f.tool.lower()))
                ),
            ]
        prefix = limit * (FILTERED_PREFIX_FACTOR if cond else PREFIX_FACTOR)
        ranked, complete = fts.rank_fts5(conn, terms, prefix, table=FTS_TABLE)
        score = dict(ranked)
        ids = func.json_each(bindparam("ids")).table_valued("value").alias("ids")
        stmt = (
            select(e.entry_no, e.session_key, e.seq)
            .select_from(self._joined(ids, ids.c.value))
            .where(*cond)
        )
        rows = conn.execute(stmt, {"ids": orjson.dumps(list(score)).decode()}).all()
        # No filter: the bounded ranking is the list at any limit (a deeper read, as hybrid
        # ranking's, must not rank every match instead: its top would change with the depth)
        if len(rows) >= limit or complete or not cond:
            # plain tuples (score, key, seq, entry_no): sorted without a Row attribute read per
            # comparison key (the bounded window and its ties: up to ~2,000 rows a read)
            hits = sorted((score[no], key, seq, no) for no, key, seq in rows)[:limit]
            best = [h[3] for h in hits]
            found = (
                {
                    r.entry_no: self._entry(r)
                    for r in conn.execute(
                        select(*t.ENTRY_READ, t.entries.c.entry_no).select_from(
                            t.entries_with_paths(self._joined(ids, ids.c.value))
                        ),
                        {"ids": orjson.dumps(best).decode()},
                    )
                }
                if with_entries
                else {}
            )
            return [EntryHit(key, seq, -sc, found.get(no)) for sc, key, seq, no in hits]
        # A narrow filter: rank every match that meets it, exactly.
        fts_t = table(FTS_TABLE, column("rowid"))
        rank = func.bm25(literal_column(FTS_TABLE))
        match = " OR ".join(fts.fts5_phrase(term) for term in terms)
        stmt = (
            select(*t.ENTRY_READ, rank.label("score"))
            .select_from(t.entries_with_paths(self._joined(fts_t, fts_t.c.rowid)))
            .where(text(f"{FTS_TABLE} MATCH :q").bindparams(q=match), *cond)
            .order_by(rank, e.session_key, e.seq)
            .limit(limit)
        )
        return [
            EntryHit(r.session_key, r.seq, -float(r.score), self._entry(r))
            for r in conn.execute(stmt)
        ]

    def _entries_pg(
        self,
        conn: Any,
        terms: Sequence[str],
        f: EntryFilter,
        cond: list[Any],
        limit: int,
        with_entries: bool = True,
    ) -> list[EntryHit]:
        e = t.entries.c
        query = func.to_tsquery(_PG_CONFIG, fts.pg_tsquery(terms))
        rank = func.ts_rank(_PG_FTS.c.doc, query, 1)
        if f.tool:
            cond = [*cond, func.strpos(_PG_FTS.c.tools, f" {f.tool.lower()} ") > 0]
        if not with_entries:
            stmt = (
                select(e.session_key, e.seq, rank.label("score"))
                .select_from(self._joined(_PG_FTS, _PG_FTS.c.entry_no))
                .where(_PG_FTS.c.doc.op("@@")(query), *cond)
                .order_by(rank.desc(), e.session_key, e.seq)
                .limit(limit)
            )
            return [EntryHit(r.session_key, r.seq, float(r.score)) for r in conn.execute(stmt)]
        stmt = (
            select(*t.ENTRY_READ, rank.label("score"))
            .select_from(t.entries_with_paths(self._joined(_PG_FTS, _PG_FTS.c.entry_no)))
            .where(_PG_FTS.c.doc.op("@@")(query), *cond)
            .order_by(rank.desc(), e.session_key, e.seq)
            .limit(limit)
        )
        return [
            EntryHit(r.session_key, r.seq, float(r.score), self._entry(r))
            for r in conn.execute(stmt)
        ]


__all__ = [
    "EntryFilter",
    "EntryHit",
    "EntrySearchMixin",
    "SearchIndexWriter",
    "entry_body",
    "entry_tools",
    "pg_words",
    "INDEX_CHARS",
]
