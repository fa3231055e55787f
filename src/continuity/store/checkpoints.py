"""Store methods for session checkpoints (issue 3): insert with the per-session cap, newest by
session/project, list by session, prune by age.

A mixin of ``SqlStore``: methods use ``self._conn()`` (joins an open ``batch()``) and the tables
of ``continuity.store.schema``. "Newest" is ``created_at`` (the event time of the checkpoint),
then ``checkpoint_id`` (insertion order) for equal times. Times are stored as UTC.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import orjson
from sqlalchemy import Connection, and_, delete, func, select

from continuity.core.model import Checkpoint, CheckpointTrigger
from continuity.store import schema as t

_C = t.session_checkpoints.c
_NEWEST_FIRST = (_C.created_at.desc(), _C.checkpoint_id.desc())


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def _row_checkpoint(row: Any) -> Checkpoint:
    return Checkpoint(
        session_key=row.session_key, harness=row.harness, project=row.project,
        project_normalized=row.project_normalized, trigger=CheckpointTrigger(row.trigger),
        digest=row.digest, prompt_count=row.prompt_count,
        memory_queries=tuple(orjson.loads(row.memory_queries or "[]")),
        recent_remembers=tuple(orjson.loads(row.recent_remembers or "[]")),
        created_at=_utc(row.created_at), checkpoint_id=row.checkpoint_id)


class CheckpointStoreMixin:
    """Mixin of ``SqlStore``: session checkpoints (issue 3): insert with the per-session cap,
    newest by session/project, list by session, prune by age."""

    def insert_checkpoint(self, checkpoint: Checkpoint, *, max_per_session: int) -> Checkpoint:
        """Insert ``checkpoint`` and, in the same transaction, delete the session's oldest rows
        beyond ``max_per_session`` (seed 000: per-session cap). ``created_at`` defaults to now.
        Returns the stored checkpoint (with ``checkpoint_id``). Raises ``ValueError`` for a cap
        below 1."""
        if max_per_session < 1:
            raise ValueError(f"max_per_session must be at least 1 (got {max_per_session})")
        created = _utc(checkpoint.created_at or datetime.now(timezone.utc))
        values = {
            "session_key": checkpoint.session_key, "harness": checkpoint.harness,
            "project": checkpoint.project, "project_normalized": checkpoint.project_normalized,
            "trigger": checkpoint.trigger.value, "digest": checkpoint.digest,
            "prompt_count": checkpoint.prompt_count,
            "memory_queries": orjson.dumps(list(checkpoint.memory_queries)).decode(),
            "recent_remembers": orjson.dumps(list(checkpoint.recent_remembers)).decode(),
            "created_at": created,
        }
        with self._conn() as conn:  # type: ignore[attr-defined]
            result = conn.execute(t.session_checkpoints.insert().values(**values))
            new_id = result.inserted_primary_key[0]
            self._apply_cap(conn, checkpoint.session_key, max_per_session)
        fields = {name: getattr(checkpoint, name) for name in Checkpoint.__slots__}
        return Checkpoint(**{**fields, "created_at": created, "checkpoint_id": new_id})

    @staticmethod
    def _apply_cap(conn: Connection, session_key: str, max_per_session: int) -> None:
        beyond = (select(_C.checkpoint_id).where(_C.session_key == session_key)
                  .order_by(*_NEWEST_FIRST).offset(max_per_session))
        ids = [r[0] for r in conn.execute(beyond)]
        if ids:
            conn.execute(delete(t.session_checkpoints).where(_C.checkpoint_id.in_(ids)))

    def latest_checkpoint(self, session_key: str) -> Checkpoint | None:
        """The session's newest checkpoint (no age limit), or None."""
        stmt = (select(t.session_checkpoints).where(_C.session_key == session_key)
                .order_by(*_NEWEST_FIRST).limit(1))
        with self._conn() as conn:  # type: ignore[attr-defined]
            row = conn.execute(stmt).first()
        return _row_checkpoint(row) if row else None

    def latest_project_checkpoint(self, project_normalized: str, *, since: datetime,
                                  exclude_session: str | None = None) -> Checkpoint | None:
        """The newest checkpoint of any session of ``project_normalized`` created strictly
        after ``since`` (of a session other than ``exclude_session`` when given), or None."""
        cond = [_C.project_normalized == project_normalized, _C.created_at > _utc(since)]
        if exclude_session is not None:
            cond.append(_C.session_key != exclude_session)
        stmt = (select(t.session_checkpoints).where(and_(*cond))
                .order_by(*_NEWEST_FIRST).limit(1))
        with self._conn() as conn:  # type: ignore[attr-defined]
            row = conn.execute(stmt).first()
        return _row_checkpoint(row) if row else None

    def checkpoints(self, session_key: str, *, limit: int = 0) -> list[Checkpoint]:
        """The session's newest ``limit`` checkpoints (0: all), oldest first."""
        stmt = (select(t.session_checkpoints).where(_C.session_key == session_key)
                .order_by(*_NEWEST_FIRST))
        if limit:
            stmt = stmt.limit(limit)
        with self._conn() as conn:  # type: ignore[attr-defined]
            rows = conn.execute(stmt).all()
        return [_row_checkpoint(r) for r in reversed(rows)]

    def prune_checkpoints(self, *, older_than: datetime) -> int:
        """Delete every checkpoint created before ``older_than`` and return how many went,
        except the newest checkpoint of a session whose transcript row is not completed (a
        live session keeps something to recover; signet-behaviour.md §1.5)."""
        st = t.session_transcripts.c
        live = select(st.session_key).where(st.completed_at.is_(None))
        ranked = (select(_C.checkpoint_id, func.row_number().over(
            partition_by=_C.session_key, order_by=_NEWEST_FIRST).label("rn"))
            .where(_C.session_key.in_(live)).subquery())
        kept = select(ranked.c.checkpoint_id).where(ranked.c.rn == 1)
        stmt = delete(t.session_checkpoints).where(and_(
            _C.created_at < _utc(older_than), _C.checkpoint_id.not_in(kept)))
        with self._conn() as conn:  # type: ignore[attr-defined]
            return conn.execute(stmt).rowcount or 0
