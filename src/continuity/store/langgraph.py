"""Store methods of the LangGraph adapter (issue 46 item 2, revision 0021).

A mixin of ``SqlStore``. Only primitives over bytes: what the bytes hold (LangGraph's serde:
a type name and bytes per value) and the checkpointer contract are
``continuity.adapters.langgraph``; this module imports nothing of LangGraph, so the store
works without the ``langgraph`` extra installed.

- checkpoints (``langgraph_checkpoints``): ``put_graph_checkpoint`` (the row and its new
  channel blobs in one transaction; a checkpoint put again replaces its row),
  ``graph_checkpoints`` (newest first by checkpoint id, then thread and namespace; paged with
  ``after``), ``graph_blobs`` (the values of a checkpoint's channel versions);
- pending writes (``langgraph_writes``): ``put_graph_writes`` (a regular write already stored
  for the same task and index stays as it is, a special write, negative ``idx``, replaces:
  the rule of LangGraph's own savers), ``graph_writes``;
- ``delete_graph_threads``, ``delete_graph_runs``, ``copy_graph_thread``,
  ``prune_graph_checkpoints``: whole threads, runs, copies and pruning, each one transaction;
- store items (``langgraph_store_items``): ``put_graph_item``, ``graph_items``,
  ``delete_graph_item``, ``graph_items_under``, ``graph_namespaces``.

Every id is text; the caller turns LangGraph's int or float channel versions into text.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, delete, or_, select, true, tuple_

from continuity.store import schema as t

#: a value as LangGraph's serde wrote it: (type name, bytes)
Typed = tuple[str, bytes]


@dataclass(frozen=True, slots=True)
class GraphCheckpointRow:
    """One ``langgraph_checkpoints`` row: ``checkpoint`` and ``metadata`` as serde wrote them
    (type name, bytes); ``run_id`` the metadata's run id or None."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    run_id: str | None
    checkpoint: Typed
    metadata: Typed


@dataclass(frozen=True, slots=True)
class GraphWrite:
    """One pending write of task ``task_id`` against a checkpoint: its ``idx`` (the write's
    place in the task's writes, or a negative special index), ``channel``, ``task_path`` and
    the value as serde wrote it."""

    task_id: str
    idx: int
    channel: str
    task_path: str
    value: Typed


@dataclass(frozen=True, slots=True)
class GraphItem:
    """One ``BaseStore`` item: ``namespace`` (labels joined by "."), ``key``, the value as serde
    wrote it, the continuity memory holding its text (None: not indexed), aware UTC times."""

    namespace: str
    key: str
    value: Typed
    memory_id: str | None
    created_at: datetime
    updated_at: datetime


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _row(r: Any) -> GraphCheckpointRow:
    return GraphCheckpointRow(
        r.thread_id,
        r.checkpoint_ns,
        r.checkpoint_id,
        r.parent_checkpoint_id,
        r.run_id,
        (r.checkpoint_type, bytes(r.checkpoint)),
        (r.metadata_type, bytes(r.metadata)),
    )


def _item(r: Any) -> GraphItem:
    return GraphItem(
        r.namespace,
        r.item_key,
        (r.value_type, bytes(r.value)),
        r.memory_id,
        _utc(r.created_at),
        _utc(r.updated_at),
    )


class LangGraphStoreMixin:
    """Mixin of ``SqlStore``: the primitives of ``continuity.adapters.langgraph``."""

    dialect: str

    # ------------------------------------------------------------------ checkpoints

    def put_graph_checkpoint(
        self, row: GraphCheckpointRow, blobs: Mapping[tuple[str, str], Typed]
    ) -> None:
        """Store ``row`` (replacing a row of the same thread, namespace and id) and its
        ``blobs`` (``{(channel, version): value}``; a blob already stored for a channel
        version stays: a version names one value)."""
        c = t.langgraph_checkpoints
        values = {
            "thread_id": row.thread_id,
            "checkpoint_ns": row.checkpoint_ns,
            "checkpoint_id": row.checkpoint_id,
            "parent_checkpoint_id": row.parent_checkpoint_id,
            "run_id": row.run_id,
            "checkpoint_type": row.checkpoint[0],
            "checkpoint": row.checkpoint[1],
            "metadata_type": row.metadata[0],
            "metadata": row.metadata[1],
            "created_at": datetime.now(UTC),
        }
        stmt = t.upsert_insert(self.dialect, c)
        stmt = stmt.on_conflict_do_update(
            index_elements=["thread_id", "checkpoint_ns", "checkpoint_id"],
            set_={
                k: stmt.excluded[k]
                for k in values
                if k not in ("thread_id", "checkpoint_ns", "checkpoint_id")
            },
        )
        with self._conn() as conn:  # type: ignore[attr-defined]
            conn.execute(stmt, values)
            if blobs:
                conn.execute(
                    t.upsert_insert(self.dialect, t.langgraph_blobs).on_conflict_do_nothing(),
                    [
                        {
                            "thread_id": row.thread_id,
                            "checkpoint_ns": row.checkpoint_ns,
                            "channel": channel,
                            "version": version,
                            "blob_type": kind,
                            "blob": data,
                        }
                        for (channel, version), (kind, data) in blobs.items()
                    ],
                )

    def graph_checkpoints(
        self,
        *,
        thread_id: str | None = None,
        checkpoint_ns: str | None = None,
        checkpoint_id: str | None = None,
        before_id: str | None = None,
        after: tuple[str, str, str] | None = None,
        limit: int = 100,
    ) -> list[GraphCheckpointRow]:
        """At most ``limit`` checkpoint rows, newest first (checkpoint id descending, then
        thread id and namespace descending), of ``thread_id`` / ``checkpoint_ns`` /
        ``checkpoint_id`` when given (None: any), with an id below ``before_id`` when given,
        and after the position ``after`` = (checkpoint_id, thread_id, checkpoint_ns) of the
        last row of a previous page."""
        c = t.langgraph_checkpoints.c
        cond = [
            column == value
            for column, value in (
                (c.thread_id, thread_id),
                (c.checkpoint_ns, checkpoint_ns),
                (c.checkpoint_id, checkpoint_id),
            )
            if value is not None
        ]
        if before_id is not None:
            cond.append(c.checkpoint_id < before_id)
        if after is not None:
            cond.append(tuple_(c.checkpoint_id, c.thread_id, c.checkpoint_ns) < tuple_(*after))
        stmt = (
            select(t.langgraph_checkpoints)
            .where(and_(true(), *cond))
            .order_by(c.checkpoint_id.desc(), c.thread_id.desc(), c.checkpoint_ns.desc())
            .limit(max(0, limit))
        )
        with self._conn() as conn:  # type: ignore[attr-defined]
            return [_row(r) for r in conn.execute(stmt)]

    def graph_blobs(
        self, thread_id: str, checkpoint_ns: str, versions: Mapping[str, str]
    ) -> dict[str, Typed]:
        """``{channel: value}`` of the blobs stored for ``versions`` (``{channel: version}``);
        a channel whose version has no blob is left out."""
        if not versions:
            return {}
        c = t.langgraph_blobs.c
        stmt = select(c.channel, c.version, c.blob_type, c.blob).where(
            c.thread_id == thread_id,
            c.checkpoint_ns == checkpoint_ns,
            tuple_(c.channel, c.version).in_(list(versions.items())),
        )
        with self._conn() as conn:  # type: ignore[attr-defined]
            return {
                r.channel: (r.blob_type, bytes(r.blob))
                for r in conn.execute(stmt)
                if versions.get(r.channel) == r.version
            }

    # ------------------------------------------------------------------ pending writes

    def put_graph_writes(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, writes: Sequence[GraphWrite]
    ) -> None:
        """Store ``writes`` against a checkpoint, in one transaction: a write whose (task_id,
        idx) is stored already stays when ``idx`` >= 0 and is replaced when ``idx`` < 0 (a
        special write: error, interrupt, resume, scheduled)."""
        if not writes:
            return
        tbl = t.langgraph_writes
        keys = ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"]

        def values(w: GraphWrite) -> dict[str, Any]:
            return {
                "thread_id": thread_id,
                "checkpoint_ns": checkpoint_ns,
                "checkpoint_id": checkpoint_id,
                "task_id": w.task_id,
                "idx": w.idx,
                "channel": w.channel,
                "task_path": w.task_path,
                "value_type": w.value[0],
                "value": w.value[1],
            }

        keep = [values(w) for w in writes if w.idx >= 0]
        replace = [values(w) for w in writes if w.idx < 0]
        with self._conn() as conn:  # type: ignore[attr-defined]
            if keep:
                conn.execute(t.upsert_insert(self.dialect, tbl).on_conflict_do_nothing(), keep)
            if replace:
                stmt = t.upsert_insert(self.dialect, tbl)
                stmt = stmt.on_conflict_do_update(
                    index_elements=keys,
                    set_={
                        k: stmt.excluded[k] for k in ("channel", "task_path", "value_type", "value")
                    },
                )
                conn.execute(stmt, replace)

    def graph_writes(
        self, thread_id: str, checkpoint_ns: str, checkpoint_ids: Collection[str]
    ) -> dict[str, list[GraphWrite]]:
        """``{checkpoint_id: writes}`` of the given checkpoints, each list in LangGraph's
        ``writes_sort_key`` order (task_path, task_id, idx)."""
        if not checkpoint_ids:
            return {}
        c = t.langgraph_writes.c
        stmt = (
            select(t.langgraph_writes)
            .where(
                c.thread_id == thread_id,
                c.checkpoint_ns == checkpoint_ns,
                c.checkpoint_id.in_(sorted(checkpoint_ids)),
            )
            .order_by(c.checkpoint_id, c.task_path, c.task_id, c.idx)
        )
        out: dict[str, list[GraphWrite]] = {}
        with self._conn() as conn:  # type: ignore[attr-defined]
            for r in conn.execute(stmt):
                out.setdefault(r.checkpoint_id, []).append(
                    GraphWrite(
                        r.task_id, r.idx, r.channel, r.task_path, (r.value_type, bytes(r.value))
                    )
                )
        return out

    # ------------------------------------------------------------------ whole threads

    def delete_graph_threads(self, thread_ids: Iterable[str]) -> None:
        """Delete every checkpoint, blob and write of ``thread_ids`` (all namespaces)."""
        ids = sorted(set(thread_ids))
        if not ids:
            return
        with self._conn() as conn:  # type: ignore[attr-defined]
            for tbl in (t.langgraph_writes, t.langgraph_blobs, t.langgraph_checkpoints):
                conn.execute(delete(tbl).where(tbl.c.thread_id.in_(ids)))

    def delete_graph_runs(self, run_ids: Iterable[str]) -> None:
        """Delete the checkpoints whose metadata names one of ``run_ids``, and their writes
        (blobs stay: a later checkpoint may still name their versions)."""
        ids = sorted(set(run_ids))
        if not ids:
            return
        c, w = t.langgraph_checkpoints.c, t.langgraph_writes.c
        with self._conn() as conn:  # type: ignore[attr-defined]
            doomed = conn.execute(
                select(c.thread_id, c.checkpoint_ns, c.checkpoint_id).where(c.run_id.in_(ids))
            ).all()
            for part in range(0, len(doomed), 300):
                keys = [tuple(r) for r in doomed[part : part + 300]]
                conn.execute(
                    delete(t.langgraph_writes).where(
                        tuple_(w.thread_id, w.checkpoint_ns, w.checkpoint_id).in_(keys)
                    )
                )
            conn.execute(delete(t.langgraph_checkpoints).where(c.run_id.in_(ids)))

    def copy_graph_thread(self, source: str, target: str) -> int:
        """Copy every checkpoint, blob and write of thread ``source`` to thread ``target``
        (rows the target has already stay); the number of checkpoints the source has."""
        with self._conn() as conn:  # type: ignore[attr-defined]
            count = 0
            for tbl in (t.langgraph_checkpoints, t.langgraph_blobs, t.langgraph_writes):
                rows = [
                    dict(r._mapping, thread_id=target)
                    for r in conn.execute(select(tbl).where(tbl.c.thread_id == source))
                ]
                if tbl is t.langgraph_checkpoints:
                    count = len(rows)
                if rows:
                    conn.execute(t.upsert_insert(self.dialect, tbl).on_conflict_do_nothing(), rows)
            return count

    def prune_graph_checkpoints(
        self,
        thread_id: str,
        keep: Collection[tuple[str, str]],
        keep_blobs: Collection[tuple[str, str, str]],
    ) -> None:
        """Delete thread ``thread_id``'s checkpoints but ``keep`` ((checkpoint_ns,
        checkpoint_id)), their writes, and its blobs but ``keep_blobs`` ((checkpoint_ns,
        channel, version)); one transaction. Empty ``keep``: the whole thread."""
        c, w, b = t.langgraph_checkpoints.c, t.langgraph_writes.c, t.langgraph_blobs.c
        kept, kept_blobs = sorted(keep), sorted(keep_blobs)
        with self._conn() as conn:  # type: ignore[attr-defined]
            for tbl, cond in (
                (t.langgraph_writes, tuple_(w.checkpoint_ns, w.checkpoint_id).in_(kept)),
                (t.langgraph_checkpoints, tuple_(c.checkpoint_ns, c.checkpoint_id).in_(kept)),
                (t.langgraph_blobs, tuple_(b.checkpoint_ns, b.channel, b.version).in_(kept_blobs)),
            ):
                stmt = delete(tbl).where(tbl.c.thread_id == thread_id)
                conn.execute(
                    stmt.where(~cond)
                    if (kept_blobs if tbl is t.langgraph_blobs else kept)
                    else stmt
                )

    # ------------------------------------------------------------------ store items

    def put_graph_item(self, namespace: str, key: str, value: Typed, memory_id: str | None) -> None:
        """Insert or replace item ``key`` of ``namespace`` (``created_at`` kept on a
        replace, ``updated_at`` now)."""
        now = datetime.now(UTC)
        stmt = t.upsert_insert(self.dialect, t.langgraph_store_items)
        stmt = stmt.on_conflict_do_update(
            index_elements=["namespace", "item_key"],
            set_={
                "value_type": stmt.excluded.value_type,
                "value": stmt.excluded.value,
                "memory_id": stmt.excluded.memory_id,
                "updated_at": stmt.excluded.updated_at,
            },
        )
        with self._conn() as conn:  # type: ignore[attr-defined]
            conn.execute(
                stmt,
                {
                    "namespace": namespace,
                    "item_key": key,
                    "value_type": value[0],
                    "value": value[1],
                    "memory_id": memory_id,
                    "created_at": now,
                    "updated_at": now,
                },
            )

    def graph_items(self, pairs: Collection[tuple[str, str]]) -> dict[tuple[str, str], GraphItem]:
        """``{(namespace, key): item}`` of the stored items among ``pairs``."""
        if not pairs:
            return {}
        c = t.langgraph_store_items.c
        stmt = select(t.langgraph_store_items).where(
            tuple_(c.namespace, c.item_key).in_(sorted(pairs))
        )
        with self._conn() as conn:  # type: ignore[attr-defined]
            return {(r.namespace, r.item_key): _item(r) for r in conn.execute(stmt)}

    def delete_graph_item(self, namespace: str, key: str) -> None:
        """Delete item ``key`` of ``namespace`` (none: nothing happens). The continuity memory
        holding its text stays (memories are never deleted)."""
        c = t.langgraph_store_items.c
        with self._conn() as conn:  # type: ignore[attr-defined]
            conn.execute(
                delete(t.langgraph_store_items).where(c.namespace == namespace, c.item_key == key)
            )

    def graph_items_under(
        self,
        prefix: str,
        *,
        memory_ids: Collection[str] | None = None,
        offset: int = 0,
        limit: int = 100,
    ) -> list[GraphItem]:
        """Items whose namespace is ``prefix`` or lies under it (``prefix`` "" : every item),
        newest update first, skipping ``offset``, at most ``limit``; with ``memory_ids`` only
        the items whose text is one of those memories."""
        c = t.langgraph_store_items.c
        cond = (
            []
            if not prefix
            else [or_(c.namespace == prefix, c.namespace.startswith(prefix + ".", autoescape=True))]
        )
        if memory_ids is not None:
            if not memory_ids:
                return []
            cond.append(c.memory_id.in_(sorted(memory_ids)))
        stmt = (
            select(t.langgraph_store_items)
            .where(and_(true(), *cond))
            .order_by(c.updated_at.desc(), c.namespace, c.item_key)
            .offset(max(0, offset))
            .limit(max(0, limit))
        )
        with self._conn() as conn:  # type: ignore[attr-defined]
            return [_item(r) for r in conn.execute(stmt)]

    def graph_namespaces(self) -> list[str]:
        """Every namespace that holds an item (labels joined by "."), sorted."""
        c = t.langgraph_store_items.c
        with self._conn() as conn:  # type: ignore[attr-defined]
            return [
                r[0] for r in conn.execute(select(c.namespace).distinct().order_by(c.namespace))
            ]


__all__ = ["GraphCheckpointRow", "GraphItem", "GraphWrite", "LangGraphStoreMixin", "Typed"]
