"""Store methods for the lineage (issue 6): thread heads and the temporal DAG's nodes and edges,
plus the ranked read of durable memories the MEMORY.md projection needs.

A mixin of ``SqlStore``: methods use ``self._conn()`` (joins an open ``batch()``) and the tables
of ``continuity.store.schema`` (revisions 0008-0010). Only primitives live here; what a thread
is, which edges a session gets and how MEMORY.md orders rows are rules of
``continuity.lineage.consolidation`` and ``continuity.lineage.memory_md``.

- **Thread heads**: one row per ``(agent_id, thread_key)``. ``upsert_thread_head`` is one
  conditional statement: it writes only when the new ``latest_at`` is not older than the stored
  one (seed 000: a head never moves back in time), so two passes racing on one thread keep the
  newer head.
- **DAG**: nodes are upserted whole; edges are ``(src_id, dst_id, kind)`` with a time ``at``.
  ``replace_edges`` deletes the given sources' edges of one kind and inserts the new set in the
  caller's transaction, so a recomputed chain is never seen half-written.

Times are stored as UTC and read back as aware UTC datetimes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import ColumnElement, and_, delete, func, or_, select

from continuity.core.model import Memory
from continuity.core.when import as_utc as _utc
from continuity.store import schema as t
from continuity.store.parts import SqlParts

_CHUNK = 500
NODE_KINDS = ("session", "thread", "compaction")
EDGE_KINDS = ("continues", "compacted_into", "mentions")


@dataclass(frozen=True, slots=True)
class ThreadHead:
    """The newest state of one thread (a line of work, e.g. one project) of one agent.

    ``sample`` is one short text (the memory sentence of the newest summary, at most 240
    characters); ``open_items`` the work its latest session left open; ``source_type`` where
    the head came from (``summary``, ``compaction`` or ``transcript``) and ``source_ref`` that
    artifact's workspace-relative path; ``node_id`` the session's DAG node."""

    agent_id: str
    thread_key: str
    label: str
    project: str | None
    session_key: str
    harness: str
    source_type: str
    source_ref: str | None
    node_id: str
    sample: str
    latest_at: datetime
    updated_at: datetime
    open_items: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DagNode:
    """A node of the temporal DAG: ``kind`` is one of ``NODE_KINDS``; ``earliest_at`` ..
    ``latest_at`` the time it spans; ``content`` one short text; ``meta`` kind-specific
    figures (JSON-serialisable)."""

    node_id: str
    agent_id: str
    kind: str
    label: str
    content: str
    updated_at: datetime
    project: str | None = None
    session_key: str | None = None
    thread_key: str | None = None
    harness: str | None = None
    source_ref: str | None = None
    earliest_at: datetime | None = None
    latest_at: datetime | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DagEdge:
    """A timed edge ``src_id -> dst_id`` of ``kind`` (one of ``EDGE_KINDS``)."""

    src_id: str
    dst_id: str
    kind: str
    agent_id: str
    at: datetime


def _upsert(dialect: str, tbl: Any) -> Any:
    return t.upsert_insert(dialect, tbl)


class LineageStoreMixin(SqlParts):
    """Mixin of ``SqlStore``: thread heads, DAG nodes and edges, ranked memories (issue 6)."""

    # ------------------------------------------------------------------ thread heads

    def upsert_thread_head(self, head: ThreadHead) -> bool:
        """Insert ``head``, or replace the stored head of its ``(agent_id, thread_key)`` when
        ``head.latest_at`` is not older than the stored one. True when a row was written.
        Raises ``ValueError`` for a naive ``latest_at``."""
        if head.latest_at.tzinfo is None:
            raise ValueError("latest_at: must be timezone-aware")
        values = {
            "agent_id": head.agent_id,
            "thread_key": head.thread_key,
            "label": head.label,
            "project": head.project,
            "session_key": head.session_key,
            "harness": head.harness,
            "source_type": head.source_type,
            "source_ref": head.source_ref,
            "node_id": head.node_id,
            "sample": head.sample,
            "open_items": orjson.dumps(list(head.open_items)).decode(),
            "latest_at": _utc(head.latest_at),
            "updated_at": _utc(head.updated_at),
        }
        tbl = t.thread_heads
        stmt = _upsert(self.dialect, tbl).values(**values)
        stmt = stmt.on_conflict_do_update(
            index_elements=[tbl.c.agent_id, tbl.c.thread_key],
            set_={k: stmt.excluded[k] for k in values if k not in ("agent_id", "thread_key")},
            where=tbl.c.latest_at <= stmt.excluded.latest_at,
        ).returning(tbl.c.thread_key)
        with self._conn() as conn:
            return conn.execute(stmt).first() is not None

    @staticmethod
    def _head(r: Any) -> ThreadHead:
        return ThreadHead(
            r.agent_id,
            r.thread_key,
            r.label,
            r.project,
            r.session_key,
            r.harness,
            r.source_type,
            r.source_ref,
            r.node_id,
            r.sample,
            _utc(r.latest_at),
            _utc(r.updated_at),
            tuple(orjson.loads(r.open_items)),
        )

    def thread_heads(
        self, agent_id: str, *, project: str | None = None, limit: int = 0
    ) -> list[ThreadHead]:
        """The agent's thread heads, newest ``latest_at`` first (then ``thread_key``); only
        those of ``project`` when given; 0 = all."""
        c = t.thread_heads.c
        cond = [c.agent_id == agent_id]
        if project is not None:
            cond.append(c.project == project)
        stmt = select(t.thread_heads).where(and_(*cond)).order_by(c.latest_at.desc(), c.thread_key)
        if limit:
            stmt = stmt.limit(limit)
        with self._conn() as conn:
            return [self._head(r) for r in conn.execute(stmt)]

    def thread_head(self, agent_id: str, thread_key: str) -> ThreadHead | None:
        """The head of one thread (None: no such thread)."""
        c = t.thread_heads.c
        with self._conn() as conn:
            r = conn.execute(
                select(t.thread_heads).where(
                    and_(c.agent_id == agent_id, c.thread_key == thread_key)
                )
            ).first()
        return self._head(r) if r else None

    # ------------------------------------------------------------------ DAG nodes

    def put_dag_nodes(self, nodes: Sequence[DagNode]) -> None:
        """Insert or replace ``nodes`` (by ``node_id``). Raises ``ValueError`` for a kind not
        in ``NODE_KINDS``."""
        if not nodes:
            return
        rows = []
        for n in nodes:
            if n.kind not in NODE_KINDS:
                raise ValueError(f"kind: must be one of {NODE_KINDS} (got {n.kind!r})")
            rows.append(
                {
                    "node_id": n.node_id,
                    "agent_id": n.agent_id,
                    "kind": n.kind,
                    "label": n.label,
                    "content": n.content,
                    "project": n.project,
                    "session_key": n.session_key,
                    "thread_key": n.thread_key,
                    "harness": n.harness,
                    "source_ref": n.source_ref,
                    "earliest_at": _utc(n.earliest_at),
                    "latest_at": _utc(n.latest_at),
                    "meta": orjson.dumps(n.meta, option=orjson.OPT_SORT_KEYS).decode(),
                    "updated_at": _utc(n.updated_at),
                }
            )
        tbl = t.dag_nodes
        with self._conn() as conn:
            for row in rows:
                stmt = _upsert(self.dialect, tbl).values(**row)
                stmt = stmt.on_conflict_do_update(
                    index_elements=[tbl.c.node_id],
                    set_={k: stmt.excluded[k] for k in row if k != "node_id"},
                )
                conn.execute(stmt)

    @staticmethod
    def _node(r: Any) -> DagNode:
        return DagNode(
            r.node_id,
            r.agent_id,
            r.kind,
            r.label,
            r.content,
            _utc(r.updated_at),
            r.project,
            r.session_key,
            r.thread_key,
            r.harness,
            r.source_ref,
            _utc(r.earliest_at),
            _utc(r.latest_at),
            orjson.loads(r.meta),
        )

    def dag_nodes(
        self,
        agent_id: str,
        *,
        kinds: Sequence[str] = (),
        project: str | None = None,
        thread_key: str | None = None,
        session_key: str | None = None,
        limit: int = 0,
    ) -> list[DagNode]:
        """The agent's nodes matching every condition given, newest ``latest_at`` first (then
        ``node_id``); 0 = all."""
        c = t.dag_nodes.c
        cond = [c.agent_id == agent_id]
        if kinds:
            cond.append(c.kind.in_(list(kinds)))
        if project is not None:
            cond.append(c.project == project)
        if thread_key is not None:
            cond.append(c.thread_key == thread_key)
        if session_key is not None:
            cond.append(c.session_key == session_key)
        stmt = select(t.dag_nodes).where(and_(*cond)).order_by(c.latest_at.desc(), c.node_id)
        if limit:
            stmt = stmt.limit(limit)
        with self._conn() as conn:
            return [self._node(r) for r in conn.execute(stmt)]

    def dag_node(self, node_id: str) -> DagNode | None:
        """One node by id (None: none)."""
        with self._conn() as conn:
            r = conn.execute(select(t.dag_nodes).where(t.dag_nodes.c.node_id == node_id)).first()
        return self._node(r) if r else None

    # ------------------------------------------------------------------ DAG edges

    def replace_edges(
        self, agent_id: str, kind: str, src_ids: Iterable[str], edges: Sequence[DagEdge]
    ) -> None:
        """Delete the agent's ``kind`` edges leaving ``src_ids``, then insert ``edges`` (each
        of that kind; duplicates of one key keep the first), in one transaction. Raises
        ``ValueError`` for an unknown kind or an edge of another kind or agent."""
        if kind not in EDGE_KINDS:
            raise ValueError(f"kind: must be one of {EDGE_KINDS} (got {kind!r})")
        if any(e.kind != kind or e.agent_id != agent_id for e in edges):
            raise ValueError(f"edges: every edge must be a {kind!r} edge of agent {agent_id!r}")
        sources = sorted(set(src_ids))
        c = t.dag_edges.c
        rows = {
            (e.src_id, e.dst_id): {
                "src_id": e.src_id,
                "dst_id": e.dst_id,
                "kind": kind,
                "agent_id": agent_id,
                "at": _utc(e.at),
            }
            for e in reversed(edges)
        }
        with self._conn() as conn:
            for i in range(0, len(sources), _CHUNK):
                conn.execute(
                    delete(t.dag_edges).where(
                        and_(
                            c.agent_id == agent_id,
                            c.kind == kind,
                            c.src_id.in_(sources[i : i + _CHUNK]),
                        )
                    )
                )
            if rows:
                values = list(rows.values())
                for i in range(0, len(values), _CHUNK):
                    conn.execute(
                        _upsert(self.dialect, t.dag_edges).on_conflict_do_nothing(),
                        values[i : i + _CHUNK],
                    )

    def dag_edges(
        self, agent_id: str, *, node_ids: Iterable[str] | None = None, kinds: Sequence[str] = ()
    ) -> list[DagEdge]:
        """The agent's edges (touching any of ``node_ids`` at either end when given), ordered
        by ``at``, then source, destination and kind."""
        c = t.dag_edges.c
        cond: list[Any] = [c.agent_id == agent_id]
        if kinds:
            cond.append(c.kind.in_(list(kinds)))
        order = (c.at, c.src_id, c.dst_id, c.kind)
        with self._conn() as conn:
            if node_ids is None:
                rows = list(conn.execute(select(t.dag_edges).where(and_(*cond)).order_by(*order)))
            else:
                ids, seen, rows = sorted(set(node_ids)), set(), []
                for i in range(0, len(ids), _CHUNK):
                    part = ids[i : i + _CHUNK]
                    for r in conn.execute(
                        select(t.dag_edges).where(
                            and_(*cond, or_(c.src_id.in_(part), c.dst_id.in_(part)))
                        )
                    ):
                        if (r.src_id, r.dst_id, r.kind) not in seen:
                            seen.add((r.src_id, r.dst_id, r.kind))
                            rows.append(r)
                rows.sort(key=lambda r: (_utc(r.at), r.src_id, r.dst_id, r.kind))
        return [DagEdge(r.src_id, r.dst_id, r.kind, r.agent_id, _utc(r.at)) for r in rows]

    # ------------------------------------------------------------------ ranked memories

    def _ranked_where(
        self,
        agent_id: str,
        types: Sequence[str],
        exclude_types: Sequence[str],
        project: str | None,
        exclude_prefixes: Sequence[str],
    ) -> list[Any]:
        m, s = t.memories.c, t.sessions.c
        cond = [m.agent_id == agent_id]
        if types:
            cond.append(m.type.in_(list(types)))
        if exclude_types:
            cond.append(m.type.not_in(list(exclude_types)))
        if project is not None:
            cond.append(or_(s.project == project, s.project.is_(None)))
        for prefix in exclude_prefixes:
            escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            cond.append(or_(s.project.is_(None), ~s.project.like(escaped + "%", escape="\\")))
        return cond

    def ranked_memories(
        self,
        agent_id: str,
        *,
        types: Sequence[str] = (),
        exclude_types: Sequence[str] = (),
        project: str | None = None,
        exclude_prefixes: Sequence[str] = (),
        limit: int = 0,
    ) -> list[tuple[Memory, str | None]]:
        """The agent's memories with the project of their source session (None: no source, or
        a source that is not an imported session), by importance (highest first), then newest
        ``created_at``, then ``memory_id``. Filters: only ``types`` when given, never
        ``exclude_types``; with ``project``, memories of that project or of none; never those
        whose project starts with one of ``exclude_prefixes``. 0 = all."""
        m, s = t.memories.c, t.sessions.c
        stmt = (
            select(t.memories, s.project.label("session_project"))
            .select_from(t.memories.outerjoin(t.sessions, s.session_key == m.source_id))
            .where(
                and_(*self._ranked_where(agent_id, types, exclude_types, project, exclude_prefixes))
            )
            .order_by(m.importance.desc(), m.created_at.desc(), m.memory_id)
        )
        if limit:
            stmt = stmt.limit(limit)
        with self._conn() as conn:
            return [
                (
                    Memory(
                        r.memory_id,
                        r.content,
                        r.content_hash,
                        r.type,
                        tuple(orjson.loads(r.tags)),
                        r.importance,
                        r.source_id,
                        r.agent_id,
                        _utc(r.created_at),
                    ),
                    r.session_project,
                )
                for r in conn.execute(stmt)
            ]

    def count_ranked_memories(
        self,
        agent_id: str,
        *,
        types: Sequence[str] = (),
        exclude_types: Sequence[str] = (),
        project: str | None = None,
        exclude_prefixes: Sequence[str] = (),
    ) -> int:
        """How many memories ``ranked_memories`` would return without a limit."""
        m, s = t.memories.c, t.sessions.c
        stmt = (
            select(func.count())
            .select_from(t.memories.outerjoin(t.sessions, s.session_key == m.source_id))
            .where(
                and_(*self._ranked_where(agent_id, types, exclude_types, project, exclude_prefixes))
            )
        )
        with self._conn() as conn:
            return int(conn.execute(stmt).scalar() or 0)

    # ------------------------------------------------------------------ completed transcripts

    def completed_transcripts(self, agent_id: str | None = None) -> list[tuple[str, str, str]]:
        """``(session_key, agent_id, content_hash)`` of every completed session_transcripts
        row (of one agent when given), oldest completion first (then key)."""
        c = t.session_transcripts.c
        cond: list[ColumnElement[bool]] = [c.completed_at.is_not(None)]
        if agent_id is not None:
            cond.append(c.agent_id == agent_id)
        stmt = (
            select(c.session_key, c.agent_id, c.content_hash)
            .where(and_(*cond))
            .order_by(c.completed_at, c.session_key, c.agent_id)
        )
        with self._conn() as conn:
            return [(r.session_key, r.agent_id, r.content_hash) for r in conn.execute(stmt)]
