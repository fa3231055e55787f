"""Store methods for session_transcripts rows and memories with full-text recall (issue 5).

A mixin of ``SqlStore``: methods use ``self._conn()`` (joins an open ``batch()``) and the tables
of ``continuity.store.schema``. Only primitives live here; the rules (what "unchanged content"
means, when a row completes, redaction, de-duplication) are in ``continuity.transcripts.session_transcripts`` and
``continuity.transcripts.memories``.

Each write primitive is one conditional statement on its row, so it is race-free on its own and
says whether it changed a row: ``insert_transcript`` / ``insert_memory`` skip an existing key,
``update_transcript_content`` writes only a different hash, ``append_transcript`` only onto
the hash it expects, ``complete_transcript`` only an open row. What goes with a row is written
in its transaction: a transcript's text in ``session_transcript_parts`` (revision 0018), on
SQLite a memory's ``memories_fts`` row. Full-text search is dialect-specific (revisions 0007,
0011): SQLite FTS5 ranked by
BM25 (candidates of very common words bounded, ``continuity.store.fts``), PostgreSQL
``to_tsvector('english', continuity_search_text(content))`` ranked by ``ts_rank`` with length
normalisation; both index CJK characters one a token (``fts.search_text``).

Over 600 lines: the store's transcript-row and memory methods with their full-text recall on
both backends (SQLite FTS5, PostgreSQL tsvector); the two dialects' queries sit side by side so
they stay equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

import orjson
from sqlalchemy import (
    ColumnElement,
    LargeBinary,
    SmallInteger,
    and_,
    bindparam,
    column,
    delete,
    func,
    insert,
    literal_column,
    select,
    table,
    text,
    update,
)

from continuity.core.model import Memory, TranscriptRow
from continuity.core.when import as_utc as _utc
from continuity.store import fts, rawcodec, schema as t
from continuity.store.parts import SqlParts

_CHUNK = 500
_PG_CONFIG = literal_column("'english'::regconfig")
_FTS = table("memories_fts", column("rowid"), column("memory_id"), column("content"))
_FTS_INSERT = text("INSERT INTO memories_fts (memory_id, content) VALUES (:m, :c)")
#: How many ranked ids per wanted result the first FTS5 round takes; the agent and the filters
#: are applied to them afterwards, so a filtered search takes more (one round in most cases).
PREFIX_FACTOR = 4
FILTERED_PREFIX_FACTOR = 40


def _by_fts_rowid(cond: list[Any]) -> Any:
    """The memories meeting ``cond`` whose FTS rows have the rowids in the JSON array ``:ids``,
    with ``fts_rowid``: FTS rowid lookups, then primary-key lookups (one statement)."""
    ids = func.json_each(bindparam("ids")).table_valued("value").alias("ids")
    return (
        select(t.memories, _FTS.c.rowid.label("fts_rowid"))
        .select_from(
            ids.join(_FTS, _FTS.c.rowid == ids.c.value).join(
                t.memories, t.memories.c.memory_id == _FTS.c.memory_id
            )
        )
        .where(*cond)
    )


#: Unary + keeps SQLite from looking rows up through the (agent_id, content_hash) index, i.e.
#: every memory of the agent, instead of by the ranked primary keys.
_AGENT = literal_column("+memories.agent_id")
_OF_AGENT_BY_FTS_ROWID = _by_fts_rowid([bindparam("agent") == _AGENT])


def _like_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Conditions a recalled memory must meet (all optional; ``tags``: every tag present)."""

    type: str | None = None
    tags: tuple[str, ...] = ()
    source_id: str | None = None
    importance_min: float | None = None
    since: datetime | None = None
    until: datetime | None = None


@cache
def _insert_ignore(dialect: str, table_name: str) -> Any:
    """``INSERT .. ON CONFLICT DO NOTHING RETURNING <primary key>`` of the table (the columns
    are the parameters' keys), built once (issue 17: building it cost more than running it)."""
    tbl = t.metadata.tables[table_name]
    return (
        t.upsert_insert(dialect, tbl).on_conflict_do_nothing().returning(*tbl.primary_key.columns)
    )


@cache
def _complete_transcript() -> Any:
    c = t.session_transcripts.c
    return update(t.session_transcripts).where(
        and_(
            c.session_key == bindparam("b_key"),
            c.agent_id == bindparam("b_agent"),
            c.completed_at.is_(None),
        )
    )


@cache
def _replace_transcript() -> Any:
    c = t.session_transcripts.c
    return update(t.session_transcripts).where(
        and_(
            c.session_key == bindparam("b_key"),
            c.agent_id == bindparam("b_agent"),
            c.content_hash != bindparam("b_hash"),
        )
    )


@cache
def _replace_transcript_if() -> Any:
    c = t.session_transcripts.c
    return update(t.session_transcripts).where(
        and_(
            c.session_key == bindparam("b_key"),
            c.agent_id == bindparam("b_agent"),
            c.content_hash == bindparam("b_expected"),
        )
    )


@cache
def _append_part() -> Any:
    """Insert ``:b_data`` / ``:b_codec`` as the row's next part (one past its highest
    ``part``; 0 when it has none): one statement, run after the compare-and-set on the row in
    the same transaction, which holds the row's write lock."""
    p = t.session_transcript_parts.c
    agent, key = bindparam("b_agent", type_=t.String(200)), bindparam("b_key", type_=t.String(200))
    nxt = select(
        agent,
        key,
        func.coalesce(func.max(p.part), -1) + 1,
        bindparam("b_data", type_=LargeBinary()),
        bindparam("b_codec", type_=SmallInteger()),
    ).where(and_(p.agent_id == agent, p.session_key == key))
    return insert(t.session_transcript_parts).from_select(
        ["agent_id", "session_key", "part", "data", "codec"], nxt
    )


def part_text(data: bytes, codec: int | None) -> str:
    """A transcript part's text from its stored ``data`` and ``codec`` (``store.rawcodec``).
    Raises ``ValueError`` for an unknown codec or bytes that are not UTF-8."""
    return rawcodec.decode(bytes(data), codec).decode("utf-8")


@cache
def _drop_parts() -> Any:
    p = t.session_transcript_parts.c
    return delete(t.session_transcript_parts).where(
        and_(p.agent_id == bindparam("b_agent"), p.session_key == bindparam("b_key"))
    )


@cache
def _parts_of():  # the type is inferred: Select of (session_key, data, codec)
    p = t.session_transcript_parts.c
    return (
        select(p.session_key, p.data, p.codec)
        .where(
            and_(
                p.agent_id == bindparam("b_agent"),
                p.session_key.in_(bindparam("b_keys", expanding=True)),
            )
        )
        .order_by(p.session_key, p.part)
    )


@cache
def _transcript_hash() -> Any:
    c = t.session_transcripts.c
    return select(c.content_hash).where(
        and_(c.session_key == bindparam("b_key"), c.agent_id == bindparam("b_agent"))
    )


@cache
def _transcripts_of() -> Any:
    c = t.session_transcripts.c
    return select(t.session_transcripts).where(
        and_(
            c.agent_id == bindparam("b_agent"),
            c.session_key.in_(bindparam("b_keys", expanding=True)),
        )
    )


class MemoryStoreMixin(SqlParts):
    """Mixin of ``SqlStore``: session_transcripts rows and memories with full-text recall
    (issue 5)."""

    def in_batch(self) -> bool:
        """Whether a ``batch()`` transaction is open in this thread (then writes join it)."""
        return getattr(self._local, "conn", None) is not None

    # ------------------------------------------------------------------ session_transcripts

    def _insert_ignore_one(self, conn: Any, tbl: Any, values: dict[str, Any]) -> bool:
        """INSERT .. ON CONFLICT DO NOTHING RETURNING: whether the row went in (``rowcount`` is
        not reliable for it under psycopg, a returned row is). The statement is built once per
        table and columns (issue 17)."""
        stmt = _insert_ignore(self.dialect, tbl.name)
        return conn.execute(stmt, values).first() is not None

    def insert_transcript(self, row: TranscriptRow) -> bool:
        """Insert ``row`` unless (agent_id, session_key) exists; True when inserted (its text
        as part 0, revision 0018). ``created_at``/``updated_at`` must be set by the caller."""
        values = {
            "session_key": row.session_key,
            "agent_id": row.agent_id,
            "harness": row.harness,
            "project": row.project,
            "content_hash": row.content_hash,
            "created_at": row.created_at,
            "updated_at": row.updated_at,
            "completed_at": row.completed_at,
        }
        with self._conn() as conn:
            if not self._insert_ignore_one(conn, t.session_transcripts, values):
                return False
            self._write_part(conn, row.session_key, row.agent_id, row.content)
            return True

    @staticmethod
    def _write_part(conn: Any, session_key: str, agent_id: str, text_part: str) -> None:
        """Add ``text_part`` as the row's next part (nothing for empty text)."""
        if text_part:
            data, codec = rawcodec.encode(t.nul_free(text_part).encode("utf-8"))
            conn.execute(
                _append_part(),
                {"b_key": session_key, "b_agent": agent_id, "b_data": data, "b_codec": codec},
            )

    def update_transcript_content(
        self,
        session_key: str,
        agent_id: str,
        *,
        content: str,
        content_hash: str,
        harness: str,
        project: str | None,
        updated_at: datetime,
        expected_hash: str | None = None,
    ) -> bool:
        """Replace the row's whole text with ``content`` when its hash differs from
        ``content_hash``: sets ``updated_at``, re-opens it (``completed_at`` NULL), and its
        parts become the one part ``content`` (revision 0018). True when a row changed. With
        ``expected_hash``, only a row whose stored hash is that one is replaced (a
        compare-and-set)."""
        params: dict[str, Any]
        if expected_hash is not None:
            if expected_hash == content_hash:
                return False
            stmt, params = _replace_transcript_if(), {"b_expected": expected_hash}
        else:
            stmt, params = _replace_transcript(), {"b_hash": content_hash}
        params.update(
            {
                "b_key": session_key,
                "b_agent": agent_id,
                "content_hash": content_hash,
                "harness": harness,
                "project": project,
                "updated_at": updated_at,
                "completed_at": None,
            }
        )
        with self._conn() as conn:
            if conn.execute(stmt, params).rowcount != 1:
                return False
            conn.execute(_drop_parts(), {"b_key": session_key, "b_agent": agent_id})
            self._write_part(conn, session_key, agent_id, content)
            return True

    def append_transcript(
        self,
        session_key: str,
        agent_id: str,
        *,
        tail: str,
        content_hash: str,
        expected_hash: str,
        harness: str,
        project: str | None,
        updated_at: datetime,
        completed_at: datetime | None = None,
    ) -> bool:
        """Append ``tail`` to the row's text when its stored hash is ``expected_hash`` (a
        compare-and-set): the row's text becomes its old text + ``tail`` exactly (the caller
        puts the ``"\n\n"`` separator at the start of ``tail``), its hash ``content_hash``
        (the caller's sha256 of that whole text), ``updated_at`` set, ``completed_at`` set to
        the given value (None: re-opened; a time: changed and completed then, as
        ``update_transcript_content`` + ``complete_transcript`` would leave it). ``tail`` is
        inserted as the row's next part and the row's small columns are updated (revision
        0018): the cost is the new text's bytes, not the session's (issue 17: a live turn,
        a grown session's import). True when appended; False when the row is missing, its
        hash is not ``expected_hash`` (another writer changed it: the caller re-reads), or
        ``tail`` is empty."""
        if not tail or expected_hash == content_hash:
            return False
        params = {
            "b_key": session_key,
            "b_agent": agent_id,
            "b_expected": expected_hash,
            "content_hash": content_hash,
            "harness": harness,
            "project": project,
            "updated_at": updated_at,
            "completed_at": completed_at,
        }
        with self._conn() as conn:
            if conn.execute(_replace_transcript_if(), params).rowcount != 1:
                return False
            self._write_part(conn, session_key, agent_id, tail)
            return True

    def complete_transcript(self, session_key: str, agent_id: str, at: datetime) -> bool:
        """Set ``completed_at`` = ``at`` where it is NULL (first completion wins); True when a
        row changed, False when it was already complete or does not exist."""
        params = {"b_key": session_key, "b_agent": agent_id, "completed_at": at}
        with self._conn() as conn:
            return conn.execute(_complete_transcript(), params).rowcount == 1

    def mark_events_applied(self, event_ids: Iterable[str], at: datetime) -> int:
        """Record hook event ids as applied at ``at`` (issue 21; ids already recorded are
        skipped); returns how many went in. Inside a ``batch()`` it joins that transaction, so
        the ids commit with the rows the events wrote, or not at all."""
        count = 0
        with self._conn() as conn:
            for event_id in dict.fromkeys(i for i in event_ids if i):
                count += self._insert_ignore_one(
                    conn, t.applied_events, {"event_id": event_id, "applied_at": at}
                )
        return count

    def applied_events(self, event_ids: Iterable[str]) -> set[str]:
        """The ids among ``event_ids`` recorded as applied (one query per 500 ids)."""
        ids = sorted({i for i in event_ids if i})
        c = t.applied_events.c
        found: set[str] = set()
        with self._conn() as conn:
            for i in range(0, len(ids), _CHUNK):
                found.update(
                    conn.execute(
                        select(c.event_id).where(c.event_id.in_(ids[i : i + _CHUNK]))
                    ).scalars()
                )
        return found

    def any_applied_event(self) -> bool:
        """Whether any hook event was ever applied to this store (``applied_events`` holds
        a row): the workspace has been captured by hooks, not only imported into. What
        ``doctor`` asks before it calls a harness's capture stopped."""
        c = t.applied_events.c
        with self._conn() as conn:
            return conn.execute(select(c.event_id).limit(1)).first() is not None

    @staticmethod
    def _transcript(r: Any, parts: Sequence[str] = ()) -> TranscriptRow:
        return TranscriptRow(
            r.session_key,
            r.agent_id,
            r.harness,
            r.project,
            "".join(parts),
            r.content_hash,
            _utc(r.created_at),
            _utc(r.updated_at),
            _utc(r.completed_at),
        )

    def get_transcripts(
        self, session_keys: Iterable[str], agent_id: str
    ) -> dict[str, TranscriptRow]:
        """``{session_key: row}`` of this agent's rows for these keys (keys without a row are
        absent), each with its whole text (its parts joined in order, revision 0018). Two
        queries per 500 keys (the rows, their parts)."""
        keys = sorted({k for k in session_keys if k})
        out: dict[str, TranscriptRow] = {}
        with self._conn() as conn:
            for i in range(0, len(keys), _CHUNK):
                params = {"b_agent": agent_id, "b_keys": keys[i : i + _CHUNK]}
                rows = conn.execute(_transcripts_of(), params).all()
                if not rows:
                    continue
                parts: dict[str, list[str]] = {}
                for key, data, codec in conn.execute(_parts_of(), params):
                    parts.setdefault(key, []).append(part_text(data, codec))
                out.update(
                    {r.session_key: self._transcript(r, parts.get(r.session_key, ())) for r in rows}
                )
        return out

    def sessions_without_transcript(self, session_keys: Iterable[str]) -> list[str]:
        """Of the imported sessions ``session_keys``, those whose agent has no transcript row
        (one query per 500 keys; issue 17: an unchanged re-import of 10,000 files asks once,
        not per session). Keys of unknown sessions are left out."""
        keys = sorted({k for k in session_keys if k})
        s, tr = t.sessions.c, t.session_transcripts.c
        out: list[str] = []
        with self._conn() as conn:
            for i in range(0, len(keys), _CHUNK):
                stmt = (
                    select(s.session_key)
                    .select_from(
                        t.sessions.outerjoin(
                            t.session_transcripts,
                            and_(tr.session_key == s.session_key, tr.agent_id == s.agent_id),
                        )
                    )
                    .where(s.session_key.in_(keys[i : i + _CHUNK]), tr.session_key.is_(None))
                )
                out.extend(r[0] for r in conn.execute(stmt))
        return sorted(out)

    def transcript_hash(self, session_key: str, agent_id: str) -> str | None:
        """The stored ``content_hash`` of the row (None: no row), without reading its content."""
        with self._conn() as conn:
            return conn.execute(
                _transcript_hash(), {"b_key": session_key, "b_agent": agent_id}
            ).scalar()

    def open_transcripts(
        self,
        *,
        agent_id: str | None = None,
        updated_before: datetime | None = None,
        harness: str | None = None,
        project: str | None = None,
        exclude: Sequence[str] = (),
        newest_first: bool = False,
        limit: int = 100,
    ) -> list[tuple[str, str]]:
        """``(session_key, agent_id)`` of incomplete rows matching the conditions, ordered by
        ``updated_at`` (oldest first unless ``newest_first``), at most ``limit``."""
        c = t.session_transcripts.c
        cond: list[ColumnElement[bool]] = [c.completed_at.is_(None)]
        if agent_id is not None:
            cond.append(c.agent_id == agent_id)
        if updated_before is not None:
            cond.append(c.updated_at < updated_before)
        if harness is not None:
            cond.append(c.harness == harness)
        if project is not None:
            cond.append(c.project == project)
        if exclude:
            cond.append(c.session_key.not_in(list(exclude)))
        order = (
            (c.updated_at.desc(), c.session_key) if newest_first else (c.updated_at, c.session_key)
        )
        stmt = select(c.session_key, c.agent_id).where(and_(*cond)).order_by(*order).limit(limit)
        with self._conn() as conn:
            return [(r.session_key, r.agent_id) for r in conn.execute(stmt)]

    # ------------------------------------------------------------------ memories

    def insert_memory(self, memory: Memory) -> bool:
        """Insert ``memory`` unless its id or (agent_id, content_hash) exists; True when
        inserted. ``created_at`` must be set by the caller."""
        values = {
            "memory_id": memory.memory_id,
            "content": memory.content,
            "content_hash": memory.content_hash,
            "type": memory.type,
            "tags": orjson.dumps(list(memory.tags)).decode(),
            "importance": memory.importance,
            "source_id": memory.source_id,
            "agent_id": memory.agent_id,
            "created_at": memory.created_at,
        }
        with self._conn() as conn:
            inserted = self._insert_ignore_one(conn, t.memories, values)
            if inserted and self.dialect == "sqlite":  # revision 0011: no insert trigger
                conn.execute(
                    _FTS_INSERT, {"m": memory.memory_id, "c": fts.search_text(memory.content)}
                )
            return inserted

    @staticmethod
    def _memory(r: Any) -> Memory:
        return Memory(
            r.memory_id,
            r.content,
            r.content_hash,
            r.type,
            tuple(orjson.loads(r.tags)),
            r.importance,
            r.source_id,
            r.agent_id,
            _utc(r.created_at),
        )

    def memory_by_hash(self, agent_id: str, content_hash: str) -> Memory | None:
        """The agent's memory with this content hash (None: none)."""
        c = t.memories.c
        with self._conn() as conn:
            r = conn.execute(
                select(t.memories).where(
                    and_(c.agent_id == agent_id, c.content_hash == content_hash)
                )
            ).first()
        return self._memory(r) if r else None

    def memories_from(self, source_id: str, *, limit: int = 20) -> list[Memory]:
        """The memories whose source is session ``source_id`` (any agent), newest first, at
        most ``limit`` (issue 39: the project brief shows a session's remembered decisions)."""
        c = t.memories.c
        stmt = (
            select(t.memories)
            .where(c.source_id == source_id)
            .order_by(c.created_at.desc(), c.memory_id)
            .limit(limit)
        )
        with self._conn() as conn:
            return [self._memory(r) for r in conn.execute(stmt)]

    def search_memories(
        self,
        terms: Sequence[str],
        *,
        agent_id: str,
        limit: int,
        filters: MemoryFilter | None = None,
    ) -> list[tuple[Memory, float]]:
        """The agent's memories matching any of ``terms`` (plain words: letters and digits
        only; a CJK run is matched as the phrase of its characters, ``fts.search_text``), best
        first, with a relevance score (higher is better; the scale is the backend's, only the
        order compares across backends). On SQLite the candidates of a common word are bounded
        (``fts.rank_fts5``)."""
        if not terms:
            return []
        cond = [t.memories.c.agent_id == agent_id, *self._filter_conditions(filters)]
        if self.dialect == "sqlite":
            cond[0] = agent_id == _AGENT
            factor = PREFIX_FACTOR if len(cond) == 1 else FILTERED_PREFIX_FACTOR
            return self._search_fts5(terms, agent_id, cond, limit, limit * factor)
        vector = func.to_tsvector(_PG_CONFIG, getattr(func, fts.PG_FUNCTION)(t.memories.c.content))
        query = func.to_tsquery(_PG_CONFIG, fts.pg_tsquery(terms))
        rank = func.ts_rank(vector, query, 1)
        stmt = (
            select(t.memories, rank.label("score"))
            .where(vector.op("@@")(query), *cond)
            .order_by(rank.desc(), t.memories.c.memory_id)
            .limit(limit)
        )
        with self._conn() as conn:
            return [(self._memory(r), float(r.score)) for r in conn.execute(stmt)]

    def _search_fts5(
        self, terms: Sequence[str], agent_id: str, cond: list[Any], limit: int, prefix: int
    ) -> list[tuple[Memory, float]]:
        """The ``prefix`` best FTS5 rows (``fts.rank_fts5``: BM25 over the FTS table alone,
        no join before sorting), then the memories among them that meet ``cond``, fetched by
        FTS rowid in one query: when at least ``limit`` survive, or the ranking held every
        candidate, they are the best matches meeting ``cond``. Otherwise (a narrow filter, or
        another agent's memories ranking first) one query joins every match with ``memories``
        and ranks exactly those meeting ``cond``. Ties are ordered by ``memory_id``."""
        with self._conn() as conn:
            ranked, complete = fts.rank_fts5(conn, terms, prefix)
            score = dict(ranked)
            ids = orjson.dumps(list(score)).decode()
            if len(cond) == 1:  # the agent alone: one statement built once
                rows = conn.execute(_OF_AGENT_BY_FTS_ROWID, {"ids": ids, "agent": agent_id}).all()
            else:
                rows = conn.execute(_by_fts_rowid(cond), {"ids": ids}).all()
            if len(rows) >= limit or complete:
                hits = sorted(rows, key=lambda r: (score[r.fts_rowid], r.memory_id))[:limit]
                return [(self._memory(r), -score[r.fts_rowid]) for r in hits]
            match = " OR ".join(fts.fts5_phrase(term) for term in terms)
            rank = func.bm25(literal_column("memories_fts"))
            stmt = (
                select(t.memories, rank.label("score"))
                .select_from(t.memories.join(_FTS, _FTS.c.memory_id == t.memories.c.memory_id))
                .where(text("memories_fts MATCH :q").bindparams(q=match), *cond)
                .order_by(rank, t.memories.c.memory_id)
                .limit(limit)
            )
            return [(self._memory(r), -float(r.score)) for r in conn.execute(stmt)]

    @staticmethod
    def _filter_conditions(f: MemoryFilter | None) -> list[Any]:
        if f is None:
            return []
        c = t.memories.c
        cond: list[Any] = []
        if f.type is not None:
            cond.append(c.type == f.type)
        for tag in f.tags:
            needle = "%" + _like_escape(orjson.dumps(tag).decode()) + "%"
            cond.append(c.tags.like(needle, escape="\\"))
        if f.source_id is not None:
            cond.append(c.source_id == f.source_id)
        if f.importance_min is not None:
            cond.append(c.importance >= f.importance_min)
        if f.since is not None:
            cond.append(c.created_at >= f.since)
        if f.until is not None:
            cond.append(c.created_at < f.until)
        return cond

    def count_memories(self, agent_id: str | None = None) -> int:
        """How many memories (of one agent, or all)."""
        stmt = select(func.count()).select_from(t.memories)
        if agent_id is not None:
            stmt = stmt.where(t.memories.c.agent_id == agent_id)
        with self._conn() as conn:
            return int(conn.execute(stmt).scalar() or 0)
