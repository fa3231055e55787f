"""Store methods of ``continuity forget`` (issue 41 item 2, revision 0027): a tombstone per
forgotten session and the deletion of what the workspace's reads show of it.

``forget_session`` deletes, in one transaction, the session's rows and everything read from
them: the rows (``entries``) and their tool-call index, runs, notes, title, checkpoints,
leases, refusal receipts, canonical transcript rows, row vectors, the search index's rows
(PostgreSQL), the memories whose source it is (and their vectors), its lineage nodes and
thread heads, its source files' line positions, this workspace's team-sync marks of it and
its lines of the pulled team index; then the session itself; and writes the tombstone. What
stays, unreachable from any read: the raw line archive's bytes (``raw_lines``,
``raw_blocks``: content-addressed and shared, a line may belong to another session too) and,
on SQLite, the words of the rows in the contentless full-text index (FTS5 deletes a document
only given the exact text it indexed, which a contentless index does not keep). A document is
keyed by its row's ``entries.entry_no``, which is never given to another row (revision 0031:
``AUTOINCREMENT``), so once the rows are gone no search finds those words. Files outside the
database (the harness's own session file, the canonical transcript JSONL, lineage artifacts)
are not changed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, func, or_, select, text

from continuity.store import schema as t
from continuity.store.parts import SqlParts


class ForgetStoreMixin(SqlParts):
    """Mixin of ``SqlStore``: tombstones and the deletion of a forgotten session."""

    def forget_session(
        self, key: str, *, pattern: str | None = None, at: datetime | None = None
    ) -> dict[str, int]:
        """Delete session ``key`` (module docstring) and write its tombstone (``pattern``:
        what found it; ``at``: when, default now), in one transaction. Returns the rows
        deleted per table (only tables that had some). A key that holds nothing gets its
        tombstone all the same (a session not imported yet is kept from ever being)."""
        counts: dict[str, int] = {}

        def drop(name: str, stmt: Any) -> None:
            n = conn.execute(stmt).rowcount or 0
            if n > 0:
                counts[name] = counts.get(name, 0) + n

        with self._conn() as conn:
            paths = [
                r[0]
                for r in conn.execute(
                    select(t.sources.c.path).where(t.sources.c.session_key == key)
                )
            ]
            session_path = conn.execute(
                select(t.sessions.c.source_path).where(t.sessions.c.session_key == key)
            ).scalar()
            if session_path and session_path not in paths:
                paths.append(session_path)
            if self.dialect == "postgresql":  # SQLite: see the module docstring
                drop(
                    "entries_fts",
                    text(
                        "DELETE FROM entries_fts WHERE entry_no IN "
                        "(SELECT entry_no FROM entries WHERE session_key = :k)"
                    ).bindparams(k=key),
                )
            memory_ids = select(t.memories.c.memory_id).where(t.memories.c.source_id == key)
            drop(
                "memory_vectors",
                delete(t.memory_vectors).where(t.memory_vectors.c.memory_id.in_(memory_ids)),
            )
            drop("memories", delete(t.memories).where(t.memories.c.source_id == key))
            nodes = select(t.dag_nodes.c.node_id).where(t.dag_nodes.c.session_key == key)
            drop(
                "dag_edges",
                delete(t.dag_edges).where(
                    or_(t.dag_edges.c.src_id.in_(nodes), t.dag_edges.c.dst_id.in_(nodes))
                ),
            )
            for table in (
                t.entry_vectors,
                t.tool_calls,
                t.runs,
                t.notes,
                t.session_titles,
                t.session_secrets,
                t.session_checkpoints,
                t.session_leases,
                t.refusal_receipts,
                t.session_transcript_parts,
                t.session_transcripts,
                t.dag_nodes,
                t.thread_heads,
                t.team_pushed,
                t.team_index,
                t.team_copies,
                t.entries,
            ):
                drop(table.name, delete(table).where(table.c.session_key == key))
            if paths:
                ids = select(t.source_paths.c.source_id).where(t.source_paths.c.path.in_(paths))
                drop(
                    "source_lines",
                    delete(t.source_lines).where(t.source_lines.c.source_id.in_(ids)),
                )
            drop("sessions", delete(t.sessions).where(t.sessions.c.session_key == key))
            conn.execute(
                t.forgotten.insert().values(
                    session_key=key, pattern=pattern, forgotten_at=at or datetime.now(UTC)
                )
            )
        return counts

    def is_forgotten(self, key: str) -> bool:
        """Whether session ``key``, or the session it is a part of (``key`` below
        ``<forgotten>/``: a Claude Code subagent's file), was forgotten."""
        parts = key.split("/")
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        c = t.forgotten.c
        with self._conn() as conn:
            found = conn.execute(
                select(func.count()).select_from(t.forgotten).where(c.session_key.in_(candidates))
            ).scalar()
        return bool(found)

    def tombstones(self, after: int = 0) -> list[tuple[int, str]]:
        """``(forget id, session key)`` of the tombstones after id ``after``, oldest first
        (what ``continuity sync`` has still to carry)."""
        c = t.forgotten.c
        with self._conn() as conn:
            rows = conn.execute(
                select(c.forget_id, c.session_key).where(c.forget_id > after).order_by(c.forget_id)
            )
            return [(r.forget_id, r.session_key) for r in rows]


__all__ = ["ForgetStoreMixin"]
