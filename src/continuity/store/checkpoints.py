"""Store methods for session checkpoints (issue 3): insert with the per-session cap, newest by
session/project, list by session, prune by age.

A mixin of ``SqlStore``: methods use ``self._conn()`` (joins an open ``batch()``) and the tables
of ``continuity.store.schema``. "Newest" is ``created_at`` (the event time of the checkpoint),
then ``checkpoint_id`` (insertion order) for equal times. Times are stored as UTC.

A row that cannot be read back (issue 15: a corrupt JSON column after a bad manual edit or a
disk error, an unknown trigger) is *damaged*: readers skip it and keep serving the rest;
``checkpoint_page`` names each one (``DamagedCheckpoint``) so the CLI and the API can report it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cache
from typing import Any

import orjson
from sqlalchemy import Connection, String, and_, bindparam, delete, func, select, type_coerce

from continuity.core.model import Checkpoint, CheckpointTrigger, end_stands
from continuity.core.when import as_utc as _utc
from continuity.store import schema as t
from continuity.store.parts import SqlParts

_C = t.session_checkpoints.c
_NEWEST_FIRST = (_C.created_at.desc(), _C.checkpoint_id.desc())
#: Rows read per step while looking for the newest readable checkpoint.
_SCAN_ROWS = 16
log = logging.getLogger("continuity.store")


@dataclass(frozen=True, slots=True)
class DamagedCheckpoint:
    """A stored checkpoint row that cannot be read back (issue 15): its id and session, the
    column that failed (``memory_queries``, ``recent_remembers``, ``trigger``, ...) and why
    (the decoder's message, clipped to 200 characters; the row's content is never shown)."""

    checkpoint_id: int
    session_key: str
    column: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """``{"id", "session", "column", "detail"}`` for JSON outputs."""
        return {
            "id": self.checkpoint_id,
            "session": self.session_key,
            "column": self.column,
            "detail": self.detail,
        }


class _Damaged(Exception):
    def __init__(self, column: str, detail: str) -> None:
        super().__init__(column, detail)
        self.column, self.detail = column, detail


def _column(row: Any, name: str, decode: Any) -> Any:
    try:
        return decode(getattr(row, name))
    except (ValueError, TypeError) as exc:  # orjson.JSONDecodeError is a ValueError
        raise _Damaged(name, str(exc)[:200]) from None


def _stored_time(value: Any) -> datetime:
    """A stored ``created_at`` read without SQLAlchemy's processor (``_ROWS``): a datetime
    (PostgreSQL's driver) or SQLite's ISO text. Raises ``ValueError``/``TypeError`` for
    anything else (a damaged row, issue 15)."""
    if isinstance(value, datetime):
        return _utc(value)
    if not isinstance(value, str):
        raise TypeError(f"not a time: {type(value).__name__}")
    return _utc(datetime.fromisoformat(value))


def _typed(kind: type) -> Any:
    def check(value: Any) -> Any:
        if not isinstance(value, kind) or isinstance(value, bool):
            raise TypeError(f"not {kind.__name__}: {type(value).__name__}")
        return value

    return check


#: The checkpoint columns as read back: ``created_at`` without SQLAlchemy's result processor,
#: which raised for a damaged value while the rows were fetched, before any row could be
#: skipped (a bad manual edit such as ``created_at = 'garbage'``; issue 15).
_ROWS = select(
    *[
        type_coerce(c, String).label(c.name) if c.name == "created_at" else c
        for c in t.session_checkpoints.c
    ]
)


# The statements of a checkpoint write, built once and run with bound parameters (issue 17:
# building a statement costs SQLAlchemy more than SQLite takes to run it; see store.sql).


@cache
def _insert() -> Any:
    return t.session_checkpoints.insert()


@cache
def _session_ends() -> Any:
    return and_(
        _C.session_key == bindparam("b_key"), _C.trigger == CheckpointTrigger.SESSION_END.value
    )


@cache
def _newest_end() -> Any:
    return _ROWS.where(_session_ends()).order_by(*_NEWEST_FIRST).limit(1)


@cache
def _delete_ends() -> Any:
    return delete(t.session_checkpoints).where(_session_ends())


@cache
def _beyond_cap() -> Any:
    return (
        select(_C.checkpoint_id)
        .where(_C.session_key == bindparam("b_key"))
        .order_by(*_NEWEST_FIRST)
        .offset(bindparam("b_cap"))
    )


@cache
def _delete_ids() -> Any:
    return delete(t.session_checkpoints).where(
        _C.checkpoint_id.in_(bindparam("b_ids", expanding=True))
    )


@cache
def _page(limited: bool) -> Any:
    stmt = _ROWS.where(_C.session_key == bindparam("b_key")).order_by(*_NEWEST_FIRST)
    return stmt.limit(bindparam("b_limit")) if limited else stmt


def _strings(text: str | None) -> tuple[str, ...]:
    value = orjson.loads(text or "[]")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("not a JSON list of strings")
    return tuple(value)


def _row_checkpoint(row: Any) -> Checkpoint:
    """The checkpoint of one stored row. Raises ``_Damaged`` naming the column that cannot
    be decoded."""
    return Checkpoint(
        session_key=row.session_key,
        harness=row.harness,
        project=row.project,
        project_normalized=row.project_normalized,
        trigger=_column(row, "trigger", CheckpointTrigger),
        digest=_column(row, "digest", _typed(str)),
        prompt_count=_column(row, "prompt_count", _typed(int)),
        memory_queries=_column(row, "memory_queries", _strings),
        recent_remembers=_column(row, "recent_remembers", _strings),
        created_at=_column(row, "created_at", _stored_time),
        checkpoint_id=row.checkpoint_id,
    )


def read_rows(rows: Iterable[Any]) -> tuple[list[Checkpoint], list[DamagedCheckpoint]]:
    """The readable checkpoints of ``rows`` (in their order) and the damaged ones, each
    logged once as a warning (issue 15: skip a damaged row, keep serving the rest)."""
    good: list[Checkpoint] = []
    damaged: list[DamagedCheckpoint] = []
    for row in rows:
        try:
            good.append(_row_checkpoint(row))
        except _Damaged as exc:
            bad = DamagedCheckpoint(row.checkpoint_id, row.session_key, exc.column, exc.detail)
            log.warning(
                "checkpoint %s of %s is damaged (%s: %s): skipped",
                bad.checkpoint_id,
                bad.session_key,
                bad.column,
                bad.detail,
            )
            damaged.append(bad)
    return good, damaged


class CheckpointStoreMixin(SqlParts):
    """Mixin of ``SqlStore``: session checkpoints (issue 3): insert with the per-session cap,
    newest by session/project, list by session, prune by age."""

    def insert_checkpoint(self, checkpoint: Checkpoint, *, max_per_session: int) -> Checkpoint:
        """Insert ``checkpoint`` and, in the same transaction, delete the session's oldest rows
        beyond ``max_per_session`` (seed 000: per-session cap). ``created_at`` defaults to now.
        Returns the stored checkpoint (with ``checkpoint_id``). Raises ``ValueError`` for a cap
        below 1.

        A session ends once (issue 22): a ``session_end`` replaces the session's earlier
        ``session_end`` rows in the same transaction (the session went on after them: a file
        imported while it grew, a live end after an import's). When the session already has a
        ``session_end`` that stands against this one (``core.model.end_stands``: later, or at
        the same time with the same digest and prompt count), nothing is written and that row
        is returned."""
        if max_per_session < 1:
            raise ValueError(f"max_per_session must be at least 1 (got {max_per_session})")
        created = _utc(checkpoint.created_at or datetime.now(UTC))
        values = {
            "session_key": checkpoint.session_key,
            "harness": checkpoint.harness,
            "project": checkpoint.project,
            "project_normalized": checkpoint.project_normalized,
            "trigger": checkpoint.trigger.value,
            "digest": checkpoint.digest,
            "prompt_count": checkpoint.prompt_count,
            "memory_queries": orjson.dumps(list(checkpoint.memory_queries)).decode(),
            "recent_remembers": orjson.dumps(list(checkpoint.recent_remembers)).decode(),
            "created_at": created,
        }
        with self._conn() as conn:
            if checkpoint.trigger is CheckpointTrigger.SESSION_END:
                # One transaction with the insert, the session's row held: two writers of one
                # session's end (an import, the daemon) never both write.
                self.lock_session(checkpoint.session_key)
                kept = self._replace_session_end(conn, checkpoint.session_key, created, checkpoint)
                if kept is not None:
                    return kept
            result = conn.execute(_insert(), values)
            key = result.inserted_primary_key
            assert key is not None  # a single-row INSERT always reports its key
            new_id = key[0]
            self._apply_cap(conn, checkpoint.session_key, max_per_session)
        fields = {name: getattr(checkpoint, name) for name in Checkpoint.__slots__}
        return Checkpoint(**{**fields, "created_at": created, "checkpoint_id": new_id})

    @staticmethod
    def _replace_session_end(
        conn: Connection, session_key: str, created: datetime, new: Checkpoint
    ) -> Checkpoint | None:
        """The session's newest ``session_end`` when it is after ``created``, or at it and the
        same as ``new`` (then ``new`` is not written); else delete the session's
        ``session_end`` rows, None."""
        newest = conn.execute(_newest_end(), {"b_key": session_key}).first()
        if newest is None:
            return None
        try:
            kept = _row_checkpoint(newest)
        except _Damaged:  # a damaged end is replaced, never kept (issue 15)
            kept = None
        if (
            kept is not None
            and kept.created_at is not None
            and end_stands(kept, replace(new, created_at=created))
        ):
            return kept
        conn.execute(_delete_ends(), {"b_key": session_key})
        return None

    @staticmethod
    def _apply_cap(conn: Connection, session_key: str, max_per_session: int) -> None:
        ids = [
            r[0]
            for r in conn.execute(_beyond_cap(), {"b_key": session_key, "b_cap": max_per_session})
        ]
        for i in range(0, len(ids), 500):  # bounded IN-lists
            conn.execute(_delete_ids(), {"b_ids": ids[i : i + 500]})

    def _newest_readable(self, where: Any) -> Checkpoint | None:
        """The newest readable checkpoint matching ``where``: damaged rows are skipped (issue
        15), read ``_SCAN_ROWS`` at a time."""
        offset = 0
        while True:
            stmt = _ROWS.where(where).order_by(*_NEWEST_FIRST).offset(offset).limit(_SCAN_ROWS)
            with self._conn() as conn:
                rows = conn.execute(stmt).all()
            good, _ = read_rows(rows)
            if good:
                return good[0]
            if len(rows) < _SCAN_ROWS:
                return None
            offset += _SCAN_ROWS

    def latest_checkpoint(self, session_key: str) -> Checkpoint | None:
        """The session's newest readable checkpoint (no age limit), or None. A damaged newer
        row is skipped (issue 15)."""
        return self._newest_readable(_C.session_key == session_key)

    def latest_project_checkpoint(
        self, project_normalized: str, *, since: datetime, exclude_session: str | None = None
    ) -> Checkpoint | None:
        """The newest checkpoint of any session of ``project_normalized`` created strictly
        after ``since`` (of a session other than ``exclude_session`` when given), or None. A
        damaged row is skipped (issue 15)."""
        cond = [_C.project_normalized == project_normalized, _C.created_at > _utc(since)]
        if exclude_session is not None:
            cond.append(_C.session_key != exclude_session)
        return self._newest_readable(and_(*cond))

    def project_checkpoint_sessions(
        self, project_normalized: str, *, since: datetime | None = None, limit: int = 10
    ) -> list[tuple[str, datetime]]:
        """``(session_key, newest checkpoint's created_at)`` of the sessions of
        ``project_normalized`` with a checkpoint created strictly after ``since`` (None: any
        age), newest first, at most ``limit`` (issue 39: the project brief finds the sessions
        of a project, also those known only from their checkpoints). One grouped query."""
        newest = type_coerce(func.max(_C.created_at), String).label("newest")
        cond = [_C.project_normalized == project_normalized]
        if since is not None:
            cond.append(_C.created_at > _utc(since))
        stmt = (
            select(_C.session_key, newest)
            .where(and_(*cond))
            .group_by(_C.session_key)
            .order_by(newest.desc(), _C.session_key)
            .limit(limit)
        )
        out = []
        with self._conn() as conn:
            for r in conn.execute(stmt):
                try:
                    out.append((r.session_key, _stored_time(r.newest)))
                except (ValueError, TypeError):  # a damaged time (issue 15): skipped
                    continue
        return out

    def checkpoint_page(
        self, session_key: str, *, limit: int = 0
    ) -> tuple[list[Checkpoint], list[DamagedCheckpoint]]:
        """The session's newest ``limit`` readable checkpoints (0: all), oldest first, and the
        damaged rows (issue 15) newer than the oldest of them (all of them when fewer are
        readable), oldest first. Issue 45 item 4b: a damaged row never takes a readable one's
        place: ``limit=2`` with a damaged newest row gives the two newest readable ones, read
        in pages that double until ``limit`` readable rows are found or the rows run out."""
        if not limit:
            with self._conn() as conn:
                rows = conn.execute(_page(False), {"b_key": session_key}).all()
            return read_rows(reversed(rows))
        fetch = limit
        while True:
            with self._conn() as conn:
                rows = conn.execute(_page(True), {"b_key": session_key, "b_limit": fetch}).all()
            readable = 0
            for i, row in enumerate(rows):  # newest first
                try:
                    _row_checkpoint(row)
                except _Damaged:
                    continue
                readable += 1
                if readable == limit:
                    return read_rows(reversed(rows[: i + 1]))
            if len(rows) < fetch:  # every row read: fewer readable ones than asked for
                return read_rows(reversed(rows))
            fetch *= 2

    def checkpoints(self, session_key: str, *, limit: int = 0) -> list[Checkpoint]:
        """The readable checkpoints among the session's newest ``limit`` rows (0: all), oldest
        first; damaged rows are skipped (``checkpoint_page`` names them)."""
        return self.checkpoint_page(session_key, limit=limit)[0]

    def prune_checkpoints(self, *, older_than: datetime, dry_run: bool = False) -> int:
        """Delete every checkpoint created before ``older_than`` and return how many went,
        except the newest checkpoint of a session whose transcript row is not completed (a
        live session keeps something to recover; signet-behaviour.md §1.5). ``dry_run``:
        delete nothing, return how many would go (``prune --dry-run``, issue 20)."""
        st = t.session_transcripts.c
        live = select(st.session_key).where(st.completed_at.is_(None))
        ranked = (
            select(
                _C.checkpoint_id,
                func.row_number()
                .over(partition_by=_C.session_key, order_by=_NEWEST_FIRST)
                .label("rn"),
            )
            .where(_C.session_key.in_(live))
            .subquery()
        )
        kept = select(ranked.c.checkpoint_id).where(ranked.c.rn == 1)
        doomed = and_(_C.created_at < _utc(older_than), _C.checkpoint_id.not_in(kept))
        with self._conn() as conn:
            if dry_run:
                return conn.execute(
                    select(func.count()).select_from(t.session_checkpoints).where(doomed)
                ).scalar_one()
            return conn.execute(delete(t.session_checkpoints).where(doomed)).rowcount or 0
