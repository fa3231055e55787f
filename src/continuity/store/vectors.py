"""Store methods for the embeddings of entries and memories (issue 40, revision 0019).

A mixin of ``SqlStore``. Only primitives: what text is embedded (redacted), by which model and
in which batches is ``continuity.retrieval.embedding``; how vectors are searched is
``continuity.retrieval.index``.

- ``entries_to_embed`` / ``memories_to_embed``: rows without a vector of ``model``, bounded by
  ``limit`` (an anti-join on the unique index; ``after`` resumes a pass where its last batch
  ended, so a pass over N rows reads each once instead of re-scanning the embedded ones).
- ``put_entry_vectors`` / ``put_memory_vectors``: insert, skipping a row that already has a
  vector of the model (idempotent: a pass interrupted after its write and run again adds
  nothing). On PostgreSQL the writers of vectors take one transaction-level advisory lock, so
  ``vector_id`` values (a sequence, handed out at insert) are committed in increasing order
  and a reader that saw id N has seen every id below N. SQLite has one writer at a time.
- ``iter_entry_vectors`` / ``iter_memory_vectors``: chunks in ``vector_id`` order after
  ``after``, empty vectors (rows with nothing to embed) skipped.
- ``drop_orphan_vectors``: the vectors whose entry or memory is gone. Nothing deletes sessions,
  entries or memories today (no such primitive exists); a future delete calls this in its
  transaction, and the daemon's embedding thread calls it when it starts.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from functools import cache
from typing import Any

import orjson
from sqlalchemy import and_, bindparam, delete, exists, func, select, text, tuple_

from continuity.core.model import Entry, Memory
from continuity.store import schema as t
from continuity.store.parts import SqlParts

#: PostgreSQL advisory lock key of vector writers (any constant; "cv40").
_PG_LOCK = 0x63763430


@cache
def _insert_ignore(dialect: str, table_name: str) -> Any:
    tbl = t.metadata.tables[table_name]
    return t.upsert_insert(dialect, tbl).on_conflict_do_nothing().returning(tbl.c.vector_id)


def _no_entry_vector(model: str) -> Any:
    v = t.entry_vectors.c
    return ~exists().where(
        and_(v.model == model, v.session_key == t.entries.c.session_key, v.seq == t.entries.c.seq)
    )


def _no_memory_vector(model: str) -> Any:
    v = t.memory_vectors.c
    return ~exists().where(and_(v.model == model, v.memory_id == t.memories.c.memory_id))


class VectorStoreMixin(SqlParts):
    """Mixin of ``SqlStore``: the ``entry_vectors`` and ``memory_vectors`` primitives."""

    # ------------------------------------------------------------------ entries

    def entries_to_embed(
        self,
        model: str,
        *,
        limit: int,
        after: tuple[str, int] | None = None,
        sessions: Collection[str] | None = None,
    ) -> list[tuple[str, int, Entry]]:
        """``(session_key, seq, entry)`` of at most ``limit`` rows (of every session, or of
        ``sessions``) without a vector of ``model``, in (session_key, seq) order, after the
        position ``after`` when given (issue 40 extension of the plan: a pass resumes where
        its previous batch ended)."""
        e = t.entries.c
        cond = [_no_entry_vector(model)]
        if after is not None:
            cond.append(tuple_(e.session_key, e.seq) > tuple_(*after))
        if sessions is not None:
            if not sessions:
                return []
            cond.append(e.session_key.in_(sorted(sessions)))
        stmt = (
            select(*t.ENTRY_READ)
            .select_from(t.entries_with_paths())
            .where(*cond)
            .order_by(e.session_key, e.seq)
            .limit(max(0, limit))
        )
        with self._conn() as conn:
            return [(r.session_key, r.seq, self._entry(r)) for r in conn.execute(stmt)]

    def count_entries_to_embed(self, model: str) -> int:
        """How many rows have no vector of ``model``."""
        stmt = select(func.count()).select_from(t.entries).where(_no_entry_vector(model))
        with self._conn() as conn:
            return int(conn.execute(stmt).scalar() or 0)

    def put_entry_vectors(self, model: str, rows: Sequence[tuple[str, int, bytes]]) -> int:
        """Store ``(session_key, seq, vector bytes)`` rows under ``model``, in one
        transaction; a row that already has a vector of ``model`` is left as it is. Returns
        how many were inserted."""
        values = [
            {"model": model, "session_key": key, "seq": seq, "vector": bytes(vec)}
            for key, seq, vec in rows
        ]
        return self._put_vectors("entry_vectors", values)

    def iter_entry_vectors(
        self, model: str, *, after: int = 0, chunk: int = 10_000
    ) -> Iterator[list[tuple[int, str, int, bytes]]]:
        """Chunks of ``(vector_id, session_key, seq, vector bytes)`` of ``model`` with
        ``vector_id > after``, in ``vector_id`` order, at most ``chunk`` a chunk; empty
        vectors skipped (each chunk its own short read: no transaction held between)."""
        v = t.entry_vectors.c
        cols = (v.vector_id, v.session_key, v.seq, v.vector)
        for rows in self._iter_vectors(t.entry_vectors, cols, model, after, chunk):
            yield [(r[0], r[1], r[2], bytes(r[3])) for r in rows]

    # ------------------------------------------------------------------ memories

    def memories_to_embed(
        self, model: str, *, limit: int, after: str | None = None
    ) -> list[tuple[str, Memory]]:
        """``(memory_id, memory)`` of at most ``limit`` memories (of every agent) without a
        vector of ``model``, in memory_id order, after ``after`` when given."""
        m = t.memories.c
        cond = [_no_memory_vector(model)]
        if after is not None:
            cond.append(m.memory_id > after)
        stmt = select(t.memories).where(*cond).order_by(m.memory_id).limit(max(0, limit))
        with self._conn() as conn:
            return [(r.memory_id, self._memory(r)) for r in conn.execute(stmt)]

    def count_memories_to_embed(self, model: str) -> int:
        """How many memories have no vector of ``model``."""
        stmt = select(func.count()).select_from(t.memories).where(_no_memory_vector(model))
        with self._conn() as conn:
            return int(conn.execute(stmt).scalar() or 0)

    def put_memory_vectors(self, model: str, rows: Sequence[tuple[str, bytes]]) -> int:
        """Store ``(memory_id, vector bytes)`` rows under ``model`` (as
        ``put_entry_vectors``); returns how many were inserted."""
        values = [{"model": model, "memory_id": mid, "vector": bytes(vec)} for mid, vec in rows]
        return self._put_vectors("memory_vectors", values)

    def iter_memory_vectors(
        self, model: str, *, after: int = 0, chunk: int = 10_000
    ) -> Iterator[list[tuple[int, str, bytes]]]:
        """Chunks of ``(vector_id, memory_id, vector bytes)`` of ``model`` (as
        ``iter_entry_vectors``)."""
        v = t.memory_vectors.c
        for rows in self._iter_vectors(
            t.memory_vectors, (v.vector_id, v.memory_id, v.vector), model, after, chunk
        ):
            yield [(r[0], r[1], bytes(r[2])) for r in rows]

    # ------------------------------------------------------------------ lookups

    def entries_at(self, rows: Sequence[tuple[str, int]]) -> dict[tuple[str, int], Entry]:
        """``{(session_key, seq): entry}`` of these rows (missing rows are absent), 500 a
        statement: how hybrid search reads the rows it found by vectors. On SQLite the keys
        are a ``json_each`` table joined to the primary key: SQLite 3.40 runs a row-value
        ``(session_key, seq) IN (...)`` as a scan of every entry (0.4-1.1 s a statement at
        1,000,000 rows, ``bench/retrieval.py``); PostgreSQL uses its index for it."""
        wanted = sorted(set(rows))
        out: dict[tuple[str, int], Entry] = {}
        e = t.entries.c
        with self._conn() as conn:
            for i in range(0, len(wanted), 500):
                part = wanted[i : i + 500]
                if self.dialect == "sqlite":
                    keys = func.json_each(bindparam("keys")).table_valued("value").alias("k")
                    stmt = select(*t.ENTRY_READ).select_from(
                        t.entries_with_paths(
                            keys.join(
                                t.entries,
                                and_(
                                    e.session_key == func.json_extract(keys.c.value, "$[0]"),
                                    e.seq == func.json_extract(keys.c.value, "$[1]"),
                                ),
                            )
                        )
                    )
                    result = conn.execute(
                        stmt, {"keys": orjson.dumps([list(k) for k in part]).decode()}
                    )
                else:
                    result = conn.execute(
                        select(*t.ENTRY_READ)
                        .select_from(t.entries_with_paths())
                        .where(tuple_(e.session_key, e.seq).in_(part))
                    )
                for r in result:
                    out[(r.session_key, r.seq)] = self._entry(r)
        return out

    def memories_by_id(self, ids: Sequence[str]) -> dict[str, Memory]:
        """``{memory_id: memory}`` of these ids (missing ones are absent), 500 a statement."""
        wanted = sorted(set(ids))
        out: dict[str, Memory] = {}
        with self._conn() as conn:
            for i in range(0, len(wanted), 500):
                stmt = select(t.memories).where(t.memories.c.memory_id.in_(wanted[i : i + 500]))
                for r in conn.execute(stmt):
                    out[r.memory_id] = self._memory(r)
        return out

    def session_keys_where(
        self, *, harness: str | None = None, projects: Sequence[str] = ()
    ) -> list[str]:
        """The keys of the sessions of ``harness`` inside one of ``projects`` (as
        ``EntryFilter``), in key order."""
        from continuity.store.search import EntryFilter, _conditions

        cond = _conditions(EntryFilter(harness=harness, projects=tuple(projects)))
        stmt = select(t.sessions.c.session_key).where(*cond).order_by(t.sessions.c.session_key)
        with self._conn() as conn:
            return [r[0] for r in conn.execute(stmt)]

    # ------------------------------------------------------------------ both

    def max_vector_id(self, model: str, kind: str = "entries") -> int:
        """The highest ``vector_id`` of ``model`` (0: none); ``kind`` "entries"|"memories"."""
        tbl = t.entry_vectors if kind == "entries" else t.memory_vectors
        stmt = select(func.coalesce(func.max(tbl.c.vector_id), 0)).where(tbl.c.model == model)
        with self._conn() as conn:
            return int(conn.execute(stmt).scalar() or 0)

    def drop_orphan_vectors(self) -> int:
        """Delete the vectors (any model) whose entry or memory no longer exists; returns how
        many. Rows are never deleted today; this is what a delete of sessions or memories
        runs, and what the daemon's embedding thread runs when it starts."""
        ev, mv = t.entry_vectors.c, t.memory_vectors.c
        gone_entry = ~exists().where(
            and_(t.entries.c.session_key == ev.session_key, t.entries.c.seq == ev.seq)
        )
        gone_memory = ~exists().where(t.memories.c.memory_id == mv.memory_id)
        with self._conn() as conn:
            n = conn.execute(delete(t.entry_vectors).where(gone_entry)).rowcount or 0
            n += conn.execute(delete(t.memory_vectors).where(gone_memory)).rowcount or 0
        return n

    def _put_vectors(self, table_name: str, values: list[dict[str, Any]]) -> int:
        if not values:
            return 0
        inserted = 0
        with self.batch(), self._conn() as conn:
            if self.dialect == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK})
            stmt = _insert_ignore(self.dialect, table_name)
            for i in range(0, len(values), 500):
                inserted += len(conn.execute(stmt, values[i : i + 500]).all())
        return inserted

    def _iter_vectors(
        self, tbl: Any, cols: Sequence[Any], model: str, after: int, chunk: int
    ) -> Iterator[list[Any]]:
        # (model, vector_id) is indexed: a range scan in id order, no sort
        stmt = (
            select(*cols)
            .where(tbl.c.model == bindparam("b_model"), tbl.c.vector_id > bindparam("b_after"))
            .order_by(tbl.c.vector_id)
            .limit(bindparam("b_limit"))
        )
        last = after
        while True:
            with self._conn() as conn:
                rows = conn.execute(
                    stmt, {"b_model": model, "b_after": last, "b_limit": max(1, chunk)}
                ).all()
            if not rows:
                return
            last = rows[-1][0]
            kept = [r for r in rows if r[-1]]  # an empty vector: nothing was embedded
            if kept:
                yield kept
            if len(rows) < chunk:
                return


__all__ = ["VectorStoreMixin"]
