"""``SqlStore``: the store over SQLAlchemy Core, for SQLite (default) and PostgreSQL.

Dialect differences live in ``_on_connect_sqlite`` (WAL, busy timeout), ``_utc`` (SQLite keeps
naive datetimes; we store UTC and read back aware UTC) and ``store.bulk`` (the import's big
inserts, rendered once per dialect, conflict-free where a row may exist).

Over 600 lines: ``SqlStore``, the one implementation of the ``Store`` protocol (``store.base``),
over SQLite and PostgreSQL; its memory, bulk and schema parts already live in ``store.memory``,
``store.bulk`` and ``store.schema``.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cache
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    and_,
    bindparam,
    event,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from continuity.core.errors import StoreConflict, StoreError
from continuity.core.model import (
    Entry,
    EntryKind,
    Note,
    Role,
    Run,
    RunStatus,
    Session,
    ToolCallIndex,
)
from continuity.core.when import usable_time
from continuity.store import rawcodec, schema as t, textdicts
from continuity.store.base import ImportIssue, RawLine, RowMeta, SourceState
from continuity.store.bulk import ENTRY_COLUMNS, BulkWriter, source_ids
from continuity.store.checkpoints import CheckpointStoreMixin
from continuity.store.fencing import FencingStoreMixin
from continuity.store.forget import ForgetStoreMixin
from continuity.store.langgraph import LangGraphStoreMixin
from continuity.store.lineage import LineageStoreMixin
from continuity.store.memory import MemoryStoreMixin
from continuity.store.rawcodec import TextDict
from continuity.store.rows import (
    COMPACTION_ROW,
    ENTRY_WIDTH,
    UNPAIRED_CALL,
    decode_entry,
    parse_entry_id,
)
from continuity.store.search import EntrySearchMixin
from continuity.store.team import TeamSyncStoreMixin
from continuity.store.titles import TitleStoreMixin
from continuity.store.vectors import VectorStoreMixin

_CHUNK = 500  # bound on IN-lists and executemany batches

#: ``SqlStore._entry`` unpacks the columns of ``entries`` by position: the table's, in the
#: order the bulk insert names them (``store.bulk.ENTRY_COLUMNS``: one list for both), read
#: as ``schema.ENTRY_READ`` (``source_id`` as its path)
_ENTRY_COLUMNS = ENTRY_COLUMNS
_ENTRY_WIDTH = len(t.ENTRY_READ)
#: ... with ``entry_no`` (revision 0031), which the database numbers and no ``Entry`` holds,
#: before the last (``native_hash``, revision 0033)
_TABLE_ORDER = (*_ENTRY_COLUMNS[:-1], "entry_no", _ENTRY_COLUMNS[-1])
if tuple(c.name for c in t.entries.columns) != _TABLE_ORDER:  # pragma: no cover
    raise RuntimeError("store.sql._ENTRY_COLUMNS no longer matches schema.entries")
if _ENTRY_WIDTH != ENTRY_WIDTH:  # pragma: no cover
    raise RuntimeError("schema.ENTRY_READ no longer matches store.rows.decode_entry")


def _entries_select() -> Any:
    """A select of the rows as ``SqlStore._entry`` decodes them (``schema.ENTRY_READ`` from
    ``entries`` joined to ``source_paths``); the caller adds its ``where``."""
    return select(*t.ENTRY_READ).select_from(t.entries_with_paths())


def _utc(value: datetime | None) -> datetime | None:
    """``value`` as aware UTC. The times a row, a session or a run carries are read through
    ``core.when.usable_time`` instead (issue 45 item 1): one stored out of range by an
    earlier version (``9999-12-31T23:59:59Z``) reads as None, so no caller's arithmetic
    overflows on it; the row's raw line keeps the value."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _now() -> datetime:
    return datetime.now(UTC)


# Statements of the per-session hot path, built once (``functools.cache``) and run with bound
# parameters. Issue 17: building a statement and its cache key costs SQLAlchemy 150-300 µs,
# several times what SQLite takes to run it; an import of 1,000 small files ran 29,000 of them.
# A reused statement keeps its cache key, so its compiled form is found at once. Names of
# parameters compared in a WHERE start with ``b_`` (an UPDATE's SET takes the column names).


@cache
def _session_by_key() -> Any:
    return SqlStore._sessions_select().where(t.sessions.c.session_key == bindparam("b_key"))


@cache
def _insert(table_name: str) -> Any:
    return t.metadata.tables[table_name].insert()


@cache
def _session_exists() -> Any:
    return select(t.sessions.c.session_key).where(t.sessions.c.session_key == bindparam("b_key"))


@cache
def _session_count() -> Any:
    return select(t.sessions.c.entry_count).where(t.sessions.c.session_key == bindparam("b_key"))


@cache
def _session_update() -> Any:
    return update(t.sessions).where(t.sessions.c.session_key == bindparam("b_key"))


@cache
def _session_touch() -> Any:
    c = t.sessions.c
    return (
        update(t.sessions)
        .where(c.session_key == bindparam("b_key"))
        .values(entry_count=c.entry_count)
    )


@cache
def _session_for_update() -> Any:
    c = t.sessions.c
    return select(c.session_key).where(c.session_key == bindparam("b_key")).with_for_update()


@cache
def _entries_after(visible_only: bool) -> Any:
    c = t.entries.c
    cond = [c.session_key == bindparam("b_key"), c.seq > bindparam("b_after")]
    if visible_only:
        cond.append(c.visible.is_(True))
    return _entries_select().where(and_(*cond)).order_by(c.seq).limit(bindparam("b_limit"))


@cache
def _tool_calls_from() -> Any:
    """The tool-call index rows of session ``b_key`` whose call or result sits at ``b_seq`` or
    later, as two index range reads (revision 0031): the pairs answered at or after it
    (``ix_tool_calls_result_seq``), then the calls at or after it not answered after them and
    not in the first half (``ix_tool_calls_unpaired``, whose condition is
    ``rows.UNPAIRED_CALL`` word for word). Together exactly ``call_seq >= b_seq OR
    result_seq >= b_seq``, which SQLite ran as two range reads of two whole indexes."""
    c = t.tool_calls.c
    key, seq = bindparam("b_key"), bindparam("b_seq")
    answered = select(t.tool_calls).where(c.session_key == key, c.result_seq >= seq)
    unpaired = select(t.tool_calls).where(
        c.session_key == key,
        c.call_seq >= seq,
        text(f"({UNPAIRED_CALL})"),
        or_(c.result_seq.is_(None), c.result_seq < seq),
    )
    return answered.union_all(unpaired)


@cache
def _runs_delete() -> Any:
    return t.runs.delete().where(t.runs.c.run_id.in_(bindparam("b_ids", expanding=True)))


@cache
def _source_by_path() -> Any:
    return select(t.sources).where(t.sources.c.path == bindparam("b_path"))


@cache
def _source_exists() -> Any:
    return select(t.sources.c.path).where(t.sources.c.path == bindparam("b_path"))


@cache
def _source_update() -> Any:
    return update(t.sources).where(t.sources.c.path == bindparam("b_path"))


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _on_connect_sqlite(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA busy_timeout=10000")  # first: switching to WAL can wait on a writer
    cur.execute("PRAGMA journal_mode=WAL")
    # FULL: an acknowledged write survives power loss too (B57; README "Durability").
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA cache_size=-65536")  # 64 MiB page cache: recall ranks many pages
    cur.close()


class SqlStore(
    CheckpointStoreMixin,
    FencingStoreMixin,
    MemoryStoreMixin,
    LineageStoreMixin,
    EntrySearchMixin,
    VectorStoreMixin,
    LangGraphStoreMixin,
    TitleStoreMixin,
    TeamSyncStoreMixin,
    ForgetStoreMixin,
):
    """The ``Store`` implementation. Build it with ``continuity.store.open_store``.

    The core primitives (sessions, entries, runs, notes, sources) are here; the mixins add the
    primitives of checkpoints, fencing and memories, one module each."""

    def __init__(self, engine: Engine, url: str) -> None:
        self.engine = engine
        self.url = url
        self.dialect = engine.dialect.name
        self._local = threading.local()
        self._bulk = BulkWriter(engine.dialect)
        #: a ``batch(durable=False)`` committed since the last ``make_durable()``
        self._unsynced = False
        #: the text dictionary rows are written with (revision 0032), once the store has one
        self._text_dict: TextDict | None = None
        #: long rows written since this store last looked for enough of them to train one
        #: (None: it has not looked yet)
        self._untrained: int | None = None
        if self.dialect == "sqlite":
            event.listen(engine, "connect", _on_connect_sqlite)
        textdicts.add_loader(self._load_text_dict)  # held weakly

    # ------------------------------------------------------------------ plumbing

    @contextmanager
    def batch(self, *, durable: bool = True) -> Iterator[None]:
        """One transaction around every call in the block (nested blocks join the outer one).

        ``durable=False`` (the import's row batches, issue 43 goal 1): on SQLite the commit
        does not sync the WAL (``synchronous=NORMAL`` for this transaction only; the
        connection goes back to the pool with ``FULL``): it survives a ``kill -9`` at once,
        and an OS crash or power loss once a later durable commit or ``make_durable()`` has
        synced the WAL. Only for writes that can be made again from what is on disk (an
        imported file's rows, with the source's progress in the same transaction). Ignored
        on PostgreSQL and when nested (the outer block's commit decides)."""
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        try:
            if durable or self.dialect != "sqlite":
                with self.engine.begin() as conn, self._as_batch(conn):
                    yield
                return
            with self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA synchronous=NORMAL")  # outside any transaction
                conn.commit()
                try:
                    with conn.begin(), self._as_batch(conn):
                        yield
                finally:
                    self._unsynced = True
                    try:
                        conn.exec_driver_sql("PRAGMA synchronous=FULL")
                        conn.commit()
                    except SQLAlchemyError:
                        conn.invalidate()  # never back in the pool with NORMAL
        except IntegrityError as exc:
            raise StoreConflict(
                f"conflicting write on {self._safe_url()}: "
                f"{str(getattr(exc, 'orig', None) or exc).splitlines()[0]}"
            ) from exc
        except SQLAlchemyError as exc:
            raise StoreError(
                f"database error on {self._safe_url()}: {exc.__class__.__name__}: "
                f"{str(getattr(exc, 'orig', None) or exc).splitlines()[0]}"
            ) from exc

    @contextmanager
    def _as_batch(self, conn: Connection) -> Iterator[None]:
        """``conn`` as this thread's open batch while the block runs."""
        self._local.conn = conn
        try:
            yield
        finally:
            self._local.conn = None

    def make_durable(self) -> None:
        """Make every commit so far survive an OS crash or power loss (``batch(durable=False)``
        left some unsynced): on SQLite, fsync the WAL file, which is what a ``synchronous=FULL``
        commit does once its frames are written (a WAL that is gone was checkpointed, and a
        checkpoint syncs the database file). Nothing to do on PostgreSQL or when every commit
        was durable. Raises ``StoreError`` naming the file when it cannot be synced."""
        if not self._unsynced:
            return
        self._unsynced = False
        with self.engine.connect() as conn:
            rows = conn.exec_driver_sql("PRAGMA database_list").all()
        wal = next((f"{row[2]}-wal" for row in rows if row[1] == "main" and row[2]), None)
        if wal is None:
            return  # an in-memory database: nothing on disk to sync
        try:
            fd = os.open(wal, os.O_RDONLY)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"cannot sync {wal}: {exc.strerror or exc}") from exc
        try:
            os.fsync(fd)
        except OSError as exc:
            raise StoreError(f"cannot sync {wal}: {exc.strerror or exc}") from exc
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ text dictionaries

    def text_dict(self) -> TextDict | None:
        """The dictionary this store's rows' content JSON is compressed with (issue 43 goal 2,
        revision 0032: the one with the lowest id in ``text_dicts``), None until the store has
        trained one (``_train_text_dict``). Read once, then kept (a dictionary another
        process trains later is found when this one would train)."""
        if self._text_dict is None and self._untrained is None:
            with self._conn() as conn:
                self._text_dict = self._stored_text_dict(conn)
            self._untrained = 0
        return self._text_dict

    @staticmethod
    def _stored_text_dict(conn: Connection) -> TextDict | None:
        c = t.text_dicts.c
        row = conn.execute(select(c.data).order_by(c.dict_id).limit(1)).first()
        if row is None:
            return None
        d = TextDict(bytes(row[0]))
        rawcodec.remember_text_dict(d)
        return d

    def _load_text_dict(self, dict_id: int) -> bytes | None:
        """``text_dicts.data`` of ``dict_id``, or None (``store.textdicts``' loader)."""
        c = t.text_dicts.c
        with self._conn() as conn:
            row = conn.execute(select(c.data).where(c.dict_id == dict_id)).first()
        return bytes(row[0]) if row is not None else None

    def _keep_text_dict(self, conn: Connection, d: TextDict) -> None:
        """Make sure ``d`` is stored in the transaction of the rows made with it: one made in
        a transaction that was rolled back would otherwise be missing for the next ones."""
        c = t.text_dicts.c
        if conn.execute(select(c.dict_id).where(c.dict_id == d.dict_id)).first() is None:
            conn.execute(insert(t.text_dicts).values(dict_id=d.dict_id, data=d.data))

    def _train_text_dict(self, conn: Connection, long_rows: int) -> None:
        """After ``long_rows`` rows were stored with a ``content_z`` frame: once the store holds
        ``rawcodec.DICT_TRAIN_ROWS`` of them and no dictionary, train one on the newest of
        them (at most ``rawcodec.DICT_SAMPLE_BYTES`` of their JSON) and keep it, so the rows
        written from then on use it. Looks at most once per ``DICT_TRAIN_ROWS // 4`` long rows
        written (and once when the store is opened), so a small store is not read again for
        every turn. Rows already stored are never rewritten."""
        if self._text_dict is not None:
            return
        if self._untrained is not None:
            self._untrained += long_rows
            if self._untrained < rawcodec.DICT_TRAIN_ROWS // 4:
                return
        self._untrained = 0
        found = self._stored_text_dict(conn)  # another process may have trained one
        if found is not None:
            self._text_dict = found
            return
        e = t.entries.c
        frames = conn.execute(
            select(e.content_z)
            .where(e.content_z.is_not(None))
            .order_by(e.entry_no.desc())
            .limit(rawcodec.DICT_TRAIN_ROWS)
        ).all()
        if len(frames) < rawcodec.DICT_TRAIN_ROWS:
            return
        # (a damaged store whose dictionary row was lost trains a new one on what it can read)
        samples: list[bytes] = []
        size = 0
        for (frame,) in frames:
            try:
                data = rawcodec.decode_text(bytes(frame)).encode("utf-8", "surrogatepass")
            except StoreError:  # a frame of a dictionary the store lost: not a sample
                continue
            samples.append(data)
            size += len(data)
            if size >= rawcodec.DICT_SAMPLE_BYTES:
                break
        d = rawcodec.train_text_dict(samples)
        if d is None:
            return
        rawcodec.remember_text_dict(d)
        self._keep_text_dict(conn, d)
        self._text_dict = d

    @contextmanager
    def _conn(self) -> Iterator[Connection]:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        with self.batch():
            yield self._local.conn

    def _safe_url(self) -> str:
        from sqlalchemy.engine import make_url

        return make_url(self.url).render_as_string(hide_password=True)

    def close(self) -> None:
        """Release every pooled connection."""
        self.engine.dispose()

    # ------------------------------------------------------------------ sessions

    def upsert_session(self, session: Session) -> None:
        """Insert or update a session row (``entry_count`` is owned by ``append``)."""
        now = _now()
        values = {
            "agent_id": session.agent_id,
            "harness": session.harness,
            "project": session.project,
            "source_path": session.source_path,
            "title": session.title,
            "started_at": session.started_at,
            "ended_at": session.ended_at,
            "updated_at": now,
        }
        if session.forked_from is not None:  # a later page or a growth never clears it
            values["forked_from"] = session.forked_from
        with self._conn() as conn:
            found = conn.execute(_session_exists(), {"b_key": session.key}).first()
            if found is None:
                conn.execute(
                    _insert("sessions"),
                    {"session_key": session.key, "entry_count": 0, "created_at": now, **values},
                )
            else:
                conn.execute(_session_update(), {"b_key": session.key, **values})

    @staticmethod
    def _session(row: Any) -> Session:
        gone = getattr(row, "source_gone_at", None)
        return Session(
            key=row.session_key,
            harness=row.harness,
            agent_id=row.agent_id,
            project=row.project,
            source_path=row.source_path,
            started_at=usable_time(row.started_at),
            ended_at=usable_time(row.ended_at),
            entry_count=row.entry_count,
            title=row.title,
            forked_from=row.forked_from,
            source_gone_at=_utc(gone) if gone else None,
        )

    @staticmethod
    def _sessions_select() -> Any:
        """``SELECT`` of session rows with their source's ``gone_at`` as ``source_gone_at``
        (issue 18: ``source: gone``), one outer join on the sources' primary key."""
        return select(t.sessions, t.sources.c.gone_at.label("source_gone_at")).select_from(
            t.sessions.outerjoin(t.sources, t.sources.c.path == t.sessions.c.source_path)
        )

    def get_session(self, key: str) -> Session | None:
        with self._conn() as conn:
            row = conn.execute(_session_by_key(), {"b_key": key}).first()
        return self._session(row) if row else None

    def get_sessions(self, keys: Iterable[str]) -> dict[str, Session]:
        """``{key: session}`` of the known sessions among ``keys``, one query per 500 keys
        (issue 17: the phases after an import read a chunk's sessions at once, not one by
        one)."""
        out: dict[str, Session] = {}
        with self._conn() as conn:
            for part in _chunks(list(dict.fromkeys(keys))):
                stmt = self._sessions_select().where(t.sessions.c.session_key.in_(part))
                out.update((r.session_key, self._session(r)) for r in conn.execute(stmt))
        return out

    def lock_session(self, key: str) -> bool:
        """Hold session ``key``'s row until the open transaction ends (call it first inside
        ``batch()``): on PostgreSQL a ``SELECT … FOR UPDATE`` row lock; on SQLite a no-op
        write, which takes the database's write lock (a second writer waits up to the busy
        timeout, then sees what the first committed). False when there is no such session."""
        with self._conn() as conn:
            if self.dialect == "sqlite":
                return bool(conn.execute(_session_touch(), {"b_key": key}).rowcount)
            return conn.execute(_session_for_update(), {"b_key": key}).first() is not None

    def find_sessions(self, prefix: str, *, limit: int = 20) -> list[Session]:
        """Sessions whose key starts with ``prefix``, compared byte for byte (case-sensitive
        on every backend; no wildcards)."""
        key = t.sessions.c.session_key
        stmt = (
            self._sessions_select()
            .where(func.substr(key, 1, len(prefix)) == prefix)
            .order_by(key)
            .limit(limit)
        )
        with self._conn() as conn:
            return [self._session(r) for r in conn.execute(stmt)]

    def project_sessions(self, projects: Sequence[str], *, limit: int = 20) -> list[Session]:
        """At most ``limit`` sessions whose ``project`` is one of ``projects`` (exact
        strings), newest activity first (``ended_at``, then ``updated_at``)."""
        order = func.coalesce(t.sessions.c.ended_at, t.sessions.c.updated_at)
        stmt = (
            self._sessions_select()
            .where(t.sessions.c.project.in_(list(projects)))
            .order_by(order.desc(), t.sessions.c.session_key)
            .limit(limit)
        )
        with self._conn() as conn:
            return [self._session(r) for r in conn.execute(stmt)]

    def list_sessions(
        self,
        *,
        limit: int = 0,
        harness: str | None = None,
        project: str | None = None,
        since: datetime | None = None,
    ) -> list[Session]:
        """Sessions, newest activity first (``ended_at``, then ``updated_at``); ``limit`` 0 =
        all. Filters (``continuity sessions``, issue 20): ``harness`` exactly; ``project``
        the folder or any folder under it (``/a/b`` matches ``/a/b`` and ``/a/b/c``, not
        ``/a/bc``); ``since`` last activity at or after it (an aware datetime)."""
        c = t.sessions.c
        activity = func.coalesce(c.ended_at, c.updated_at)
        stmt = self._sessions_select().order_by(activity.desc(), c.session_key)
        if harness is not None:
            stmt = stmt.where(c.harness == harness)
        if project is not None:
            folder = project.rstrip("/") or "/"
            stmt = stmt.where(
                or_(
                    c.project == folder,
                    c.project.startswith(
                        folder if folder.endswith("/") else folder + "/", autoescape=True
                    ),
                )
            )
        if since is not None:
            stmt = stmt.where(activity >= _utc(since))
        if limit:
            stmt = stmt.limit(limit)
        with self._conn() as conn:
            return [self._session(r) for r in conn.execute(stmt)]

    # ------------------------------------------------------------------ entries

    def append(self, session_key: str, entries: Sequence[Entry]) -> None:
        """Append rows (see ``Store.append``). Raises ``StoreConflict`` on a seq gap (another
        writer appended first) and ``ValueError`` for an unknown session."""
        if not entries:
            return
        with self._conn() as conn:
            count = conn.execute(_session_count(), {"b_key": session_key}).scalar()
            if count is None:
                raise ValueError(f"unknown session {session_key!r}: upsert it first")
            for i, entry in enumerate(entries):
                if entry.seq != count + i:
                    raise StoreConflict(
                        f"seq {entry.seq} breaks the log of {session_key!r} "
                        f"(expected {count + i}): another writer appended"
                    )
            for entry in entries:  # revision 0030: derived, not stored (store.rows.entry_id_of)
                entry.entry_id = f"{session_key}:{entry.seq}"
            d = self._text_dict
            if d is not None:
                self._keep_text_dict(conn, d)
            long_rows = self._bulk.put_entries(conn, session_key, entries, d)
            if d is None:
                self._train_text_dict(conn, long_rows)
            conn.execute(
                _session_update(),
                {"b_key": session_key, "entry_count": count + len(entries), "updated_at": _now()},
            )

    @staticmethod
    def _entry(row: Any, offset: int = 0) -> Entry:
        """The ``Entry`` of a result row whose columns ``offset ..`` are ``schema.ENTRY_READ``
        (``select(*t.ENTRY_READ)``, after ``offset`` other columns). Issue 17: read by
        position, not by name (a named ``Row`` attribute costs about as much as the rest of
        the decode), and the enums by dict."""
        return decode_entry(row[offset : offset + _ENTRY_WIDTH])

    def entries(
        self,
        session_key: str,
        *,
        after_seq: int = -1,
        limit: int = 1000,
        visible_only: bool = False,
    ) -> list[Entry]:
        """Rows with seq > ``after_seq`` in seq order, at most ``limit``."""
        params = {"b_key": session_key, "b_after": after_seq, "b_limit": limit}
        with self._conn() as conn:
            return [
                self._entry(r) for r in conn.execute(_entries_after(bool(visible_only)), params)
            ]

    def entries_by_seq(self, session_key: str, seqs: Iterable[int]) -> list[Entry]:
        """The rows with these seqs, in seq order (missing seqs are absent)."""
        wanted = sorted(set(seqs))
        out: list[Entry] = []
        with self._conn() as conn:
            for part in _chunks(wanted):
                stmt = _entries_select().where(
                    and_(t.entries.c.session_key == session_key, t.entries.c.seq.in_(part))
                )
                out.extend(self._entry(r) for r in conn.execute(stmt))
        out.sort(key=lambda e: e.seq)
        return out

    def rows_meta(
        self,
        session_key: str,
        *,
        after_seq: int | None = None,
        before_seq: int | None = None,
        limit: int = 256,
        newest_first: bool = True,
    ) -> list[RowMeta]:
        """Visible rows with ``after_seq < seq < before_seq`` (bounds optional), metadata only,
        newest first (or oldest first), at most ``limit``."""
        c = t.entries.c
        cond = [c.session_key == session_key, c.visible.is_(True)]
        if after_seq is not None:
            cond.append(c.seq > after_seq)
        if before_seq is not None:
            cond.append(c.seq < before_seq)
        order = c.seq.desc() if newest_first else c.seq.asc()
        stmt = (
            select(c.seq, c.kind, c.role, c.is_request, c.view_bytes)
            .where(and_(*cond))
            .order_by(order)
            .limit(limit)
        )
        with self._conn() as conn:
            return [
                RowMeta(r.seq, EntryKind(r.kind), Role(r.role), bool(r.is_request), r.view_bytes)
                for r in conn.execute(stmt)
            ]

    def latest_compaction(self, session_key: str) -> Entry | None:
        """The newest visible compaction row of the session, by seq (never by parent chain)."""
        c = t.entries.c
        stmt = (
            _entries_select()
            .where(
                and_(
                    c.session_key == session_key,
                    # the partial index's condition, word for word (ix_entries_compaction)
                    text(COMPACTION_ROW),
                    c.visible.is_(True),
                )
            )
            .order_by(c.seq.desc())
            .limit(1)
        )
        with self._conn() as conn:
            row = conn.execute(stmt).first()
        return self._entry(row) if row else None

    def entry_by_id(self, entry_id: str) -> Entry | None:
        """The row whose entry id is ``entry_id`` (``<session_key>:<seq>``, revision 0030: read
        by the primary key, no id is stored), or None when there is none. Raises
        ``InputError`` for a malformed id (``store.rows.parse_entry_id``)."""
        key, seq = parse_entry_id(entry_id)
        c = t.entries.c
        stmt = _entries_select().where(and_(c.session_key == key, c.seq == seq))
        with self._conn() as conn:
            row = conn.execute(stmt).first()
        return self._entry(row) if row else None

    def tool_calls(self, session_key: str, call_ids: Iterable[str]) -> dict[str, ToolCallIndex]:
        """Index rows of these call ids (ids never seen are absent)."""
        with self._conn() as conn:
            rows = self._bulk.tool_call_rows(conn, session_key, list(set(call_ids)))
        return {
            k: ToolCallIndex(k, r.call_seq if r.call_seq is not None else -1, r.result_seq)
            for k, r in rows.items()
        }

    def tool_calls_from(self, session_key: str, seq: int) -> list[ToolCallIndex]:
        """Index rows whose call or result sits at ``seq`` or later (a bounded window's pairs;
        ``call_seq`` -1 marks a result whose call never appeared)."""
        with self._conn() as conn:
            return [
                ToolCallIndex(r.call_id, r.call_seq if r.call_seq is not None else -1, r.result_seq)
                for r in conn.execute(_tool_calls_from(), {"b_key": session_key, "b_seq": seq})
            ]

    def native_seqs(self, session_key: str, native_ids: Iterable[str]) -> dict[str, int]:
        """``{native_id: seq}`` of the first row with each native id."""
        with self._conn() as conn:
            return self._bulk.native_seqs(conn, session_key, native_ids)

    def tree_links(
        self, session_key: str
    ) -> Iterator[tuple[int, str | None, str | None, bool, bool]]:
        """``(seq, native_id, parent_native_id, visible, base_visible)`` of every row in seq
        order: ``base_visible`` is the reader's verdict, ``visible`` also needs the row on the
        conversation path."""
        c = t.entries.c
        stmt = (
            select(c.seq, c.native_id, c.parent_native_id, c.visible, c.base_visible)
            .where(c.session_key == session_key)
            .order_by(c.seq)
        )
        with self._conn() as conn:
            rows = conn.execute(stmt).all()
        for seq, native_id, parent_native_id, visible, base_visible in rows:
            yield seq, native_id, parent_native_id, bool(visible), bool(base_visible)

    def set_on_path(self, session_key: str, seqs: Iterable[int], on_path: bool) -> None:
        """Put rows on or off the conversation path (a pi leaf path): a row is visible when
        its reader said so (``base_visible``) and it is on the path."""
        c = t.entries.c
        with self._conn() as conn:
            for part in _chunks(sorted(set(seqs))):
                where = and_(c.session_key == session_key, c.seq.in_(part))
                if on_path:
                    conn.execute(update(t.entries).where(where).values(visible=c.base_visible))
                else:
                    conn.execute(update(t.entries).where(where).values(visible=False))

    def media(self, sha256: str) -> bytes | None:
        with self._conn() as conn:
            return conn.execute(select(t.media.c.data).where(t.media.c.sha256 == sha256)).scalar()

    # ------------------------------------------------------------------ runs and notes

    def put_runs(self, runs: Sequence[Run]) -> None:
        """Insert or replace runs by ``run_id``."""
        if not runs:
            return
        with self._conn() as conn:
            ids = [r.run_id for r in runs]
            for part in _chunks(ids):
                conn.execute(_runs_delete(), {"b_ids": list(part)})
            rows = [
                {
                    "run_id": r.run_id,
                    "session_key": r.session_key,
                    "agent_id": r.agent_id,
                    "request_seq": r.request_seq,
                    "end_seq": r.end_seq,
                    "status": r.status.value,
                    "started_at": r.started_at,
                    "ended_at": r.ended_at,
                }
                for r in runs
            ]
            for part in _chunks(rows):
                conn.execute(_insert("runs"), list(part))

    def replace_runs(self, session_key: str, runs: Sequence[Run]) -> None:
        """Replace every run of the session with ``runs`` (a re-derivation)."""
        with self._conn() as conn:
            conn.execute(t.runs.delete().where(t.runs.c.session_key == session_key))
            self.put_runs(runs)

    @staticmethod
    def _run(r: Any) -> Run:
        return Run(
            r.run_id,
            r.session_key,
            r.agent_id,
            r.request_seq,
            RunStatus(r.status),
            r.end_seq,
            usable_time(r.started_at),
            usable_time(r.ended_at),
        )

    def runs(self, session_key: str, *, agent_id: str | None = None) -> list[Run]:
        c = t.runs.c
        cond = [c.session_key == session_key]
        if agent_id is not None:
            cond.append(c.agent_id == agent_id)
        with self._conn() as conn:
            return [
                self._run(r)
                for r in conn.execute(select(t.runs).where(and_(*cond)).order_by(c.request_seq))
            ]

    def last_run(
        self, session_key: str, *, agent_id: str | None = None, ended_only: bool = False
    ) -> Run | None:
        """The run with the highest request seq (only ended ones with ``ended_only``)."""
        c = t.runs.c
        cond = [c.session_key == session_key]
        if agent_id is not None:
            cond.append(c.agent_id == agent_id)
        if ended_only:
            cond.append(c.status != RunStatus.RUNNING.value)
        stmt = select(t.runs).where(and_(*cond)).order_by(c.request_seq.desc()).limit(1)
        with self._conn() as conn:
            row = conn.execute(stmt).first()
        return self._run(row) if row else None

    def add_note(self, note: Note) -> Note:
        created = note.created_at or _now()
        with self._conn() as conn:
            result = conn.execute(
                t.notes.insert().values(
                    session_key=note.session_key, text=note.text, created_at=created
                )
            )
            key = result.inserted_primary_key
            assert key is not None  # a single-row INSERT always reports its key
            note_id = key[0]
        return Note(note.session_key, note.text, note_id, created)

    def notes(self, session_key: str, *, limit: int = 20) -> list[Note]:
        """The newest ``limit`` notes of the session, oldest first."""
        c = t.notes.c
        stmt = (
            select(t.notes)
            .where(c.session_key == session_key)
            .order_by(c.note_id.desc())
            .limit(limit)
        )
        with self._conn() as conn:
            rows = conn.execute(stmt).all()
        return [Note(r.session_key, r.text, r.note_id, _utc(r.created_at)) for r in reversed(rows)]

    def notes_starting(self, prefix: str, session_keys: Sequence[str]) -> dict[str, list[str]]:
        """The texts of the notes of ``session_keys`` that start with ``prefix`` (taken
        literally: ``%`` and ``_`` are no wildcards), oldest first, by session; sessions
        without one are left out. One query per 500 keys (issue 45 item 3: ``sessions``
        marks copies by their copy note without a query per session)."""
        c = t.notes.c
        keys = list(dict.fromkeys(session_keys))
        found: dict[str, list[str]] = {}
        with self._conn() as conn:
            for i in range(0, len(keys), 500):
                stmt = (
                    select(c.session_key, c.text)
                    .where(
                        c.session_key.in_(keys[i : i + 500]),
                        c.text.startswith(prefix, autoescape=True),
                    )
                    .order_by(c.note_id)
                )
                for key, text in conn.execute(stmt):
                    found.setdefault(key, []).append(text)
        return found

    # ------------------------------------------------------------------ sources and raw lines

    def get_source(self, path: str) -> SourceState | None:
        with self._conn() as conn:
            r = conn.execute(_source_by_path(), {"b_path": path}).first()
        return None if r is None else self._source(r)

    def get_sources(self, paths: Sequence[str]) -> dict[str, SourceState]:
        """``{path: state}`` of the known sources among ``paths``, one query per 500 paths
        (issue 17: an unchanged re-import of 10,000 files asks 20 times, not 10,000)."""
        out: dict[str, SourceState] = {}
        with self._conn() as conn:
            for part in _chunks(list(dict.fromkeys(paths))):
                for r in conn.execute(select(t.sources).where(t.sources.c.path.in_(part))):
                    out[r.path] = self._source(r)
        return out

    def sources(self) -> list[SourceState]:
        """Every recorded source file, by path (issue 44: ``continuity usage`` reads the
        usage of each one's kept lines), one query."""
        with self._conn() as conn:
            return [
                self._source(r) for r in conn.execute(select(t.sources).order_by(t.sources.c.path))
            ]

    @staticmethod
    def _source(r: Any) -> SourceState:
        return SourceState(
            r.path,
            r.session_key,
            r.harness,
            r.inode,
            r.size,
            r.offset,
            r.line_count,
            r.prefix_sha256,
            r.reader_state,
            _utc(r.updated_at),
            _utc(r.gone_at) if r.gone_at else None,
            r.pending_from,
        )

    def source_presence(self) -> dict[str, bool]:
        """``{path: gone}`` of every recorded source (issue 18: the archive's rescan checks
        each path still exists), one query."""
        c = t.sources.c
        with self._conn() as conn:
            return {r.path: r.gone_at is not None for r in conn.execute(select(c.path, c.gone_at))}

    def mark_sources(self, paths: Sequence[str], *, gone: bool) -> int:
        """Mark the sources at ``paths`` gone (their file was found missing: ``gone_at`` now,
        kept when already set) or back (``gone_at`` cleared); returns the rows changed. The
        sessions and their rows are untouched (issue 18: a session outlives its file)."""
        c = t.sources.c
        changed = 0
        with self._conn() as conn:
            for part in _chunks(list(dict.fromkeys(paths))):
                cond = c.gone_at.is_(None) if gone else c.gone_at.is_not(None)
                done = conn.execute(
                    update(t.sources)
                    .where(c.path.in_(part), cond)
                    .values(gone_at=_now() if gone else None)
                )
                changed += done.rowcount or 0
        return changed

    def claim_source(self, path: str, expected: SourceState | None) -> None:
        """Compare-and-set guard of an import's batch (issue 45): inside the batch's
        transaction, check that the stored progress of ``path`` is still ``expected`` (the
        state the import started from, or its previous batch wrote; None: no progress stored).
        Compared: inode, offset, line count and prefix hash. On PostgreSQL a transaction-scoped
        advisory lock on the path serialises the importers of one file first (SQLite's
        ``BEGIN IMMEDIATE`` already holds the write lock). Raises ``StoreConflict`` when another
        import moved it meanwhile: the caller retries from the new state, so no line is stored
        twice."""
        with self._conn() as conn:
            if self.dialect == "postgresql":
                lock = int.from_bytes(
                    hashlib.sha256(path.encode("utf-8", "surrogatepass")).digest()[:8],
                    "big",
                    signed=True,
                )
                conn.exec_driver_sql("SELECT pg_advisory_xact_lock(%s)", (lock,))
            r = conn.execute(_source_by_path(), {"b_path": path}).first()
        now = None if r is None else (r.inode, r.offset, r.line_count, r.prefix_sha256)
        then = (
            None
            if expected is None
            else (expected.inode, expected.offset, expected.line_count, expected.prefix_sha256)
        )
        if now != then:
            shown = "none" if now is None else f"offset {now[1]}"
            was = "none" if then is None else f"offset {then[1]}"
            raise StoreConflict(
                f"another import of {path} stored its progress meanwhile "
                f"({was} when this import began, {shown} now)"
            )

    def put_source(self, state: SourceState) -> None:
        values = {
            "session_key": state.session_key,
            "harness": state.harness,
            "inode": state.inode,
            "size": state.size,
            "offset": state.offset,
            "line_count": state.line_count,
            "prefix_sha256": state.prefix_sha256,
            "reader_state": state.reader_state,
            "updated_at": _now(),
            "gone_at": None,  # read again: the file is there
            "pending_from": state.pending_from,
        }
        with self._conn() as conn:
            if conn.execute(_source_exists(), {"b_path": state.path}).first():
                conn.execute(_source_update(), {"b_path": state.path, **values})
            else:
                conn.execute(_insert("sources"), {"path": state.path, **values})

    def stored_lines(self, session_key: str, path: str) -> set[tuple[int, str]]:
        """``{(line_no, raw_sha256)}`` of the session's rows read from ``path``: the lines of
        the file already stored as rows, by number and bytes (the importer's duplicate check
        when it reads lines of a file again: rewritten, or truncated and then restored)."""
        c = t.entries.c
        number = select(t.source_paths.c.source_id).where(t.source_paths.c.path == path)
        stmt = select(c.line_no, c.raw_sha256).where(
            and_(c.session_key == session_key, c.source_id == number.scalar_subquery())
        )
        with self._conn() as conn:
            return {(r[0], r[1]) for r in conn.execute(stmt)}

    def settle_sources(self, paths: Sequence[str]) -> None:
        """Mark the derived data of these sources current (``SourceState.pending_from`` NULL):
        the checkpoint replay and the transcript phase ran on their rows. One statement per
        500 paths."""
        c = t.sources.c
        with self._conn() as conn:
            for part in _chunks(list(dict.fromkeys(paths))):
                conn.execute(
                    update(t.sources)
                    .where(c.path.in_(part), c.pending_from.is_not(None))
                    .values(pending_from=None)
                )

    def put_raw_lines(
        self, lines: Sequence[RawLine], packed: rawcodec.Packed | None = None
    ) -> None:
        """Keep raw bytes content-addressed and map each source line to them (idempotent).
        ``packed``: ``rawcodec.pack_lines(lines)``, made elsewhere (``BulkWriter.put_raw_lines``)."""
        if not lines:
            return
        with self._conn() as conn:
            self._bulk.put_raw_lines(conn, lines, packed)

    def forget_source_lines(self, path: str) -> int:
        """Delete the line positions (``source_lines``) of ``path`` before a rewritten file is
        read again from its start, so that they describe the file as it is now; the lines'
        bytes stay in ``raw_lines`` (rows still point at them by SHA-256). Returns the number
        of positions deleted. Call it inside the re-read's first ``batch()``: the positions
        are replaced in the same transaction as the first new ones."""
        with self._conn() as conn:
            source_id = source_ids(conn, [path], create=False).get(path)
            if source_id is None:
                return 0
            return conn.execute(
                t.source_lines.delete().where(t.source_lines.c.source_id == source_id)
            ).rowcount

    def source_line_keys(self, path: str) -> list[tuple[int, int, str]]:
        """``(line_no, byte_offset, raw_sha256)`` of every line of ``path`` the imports kept
        a position for (``source_lines``: blank lines too), in line order; ``raw_sha256`` is
        the line's SHA-256 in hex. Empty for a path never imported. What
        ``formats.discovery.same_lines`` compares a copied file's lines with."""
        sl = t.source_lines.c
        with self._conn() as conn:
            source_id = source_ids(conn, [path], create=False).get(path)
            if source_id is None:
                return []
            rows = conn.execute(
                select(sl.line_no, sl.byte_offset, sl.raw_sha256)
                .where(sl.source_id == source_id)
                .order_by(sl.line_no)
            )
            return [(r.line_no, r.byte_offset, r.raw_sha256) for r in rows]

    def raw_lines(self, path: str) -> Iterator[RawLine]:
        """Every kept line of ``path`` in line order, with its exact bytes."""
        sl, rl, rb = t.source_lines.c, t.raw_lines.c, t.raw_blocks.c
        cache = rawcodec.BlockCache()
        last = 0
        with self._conn() as conn:
            source_id = source_ids(conn, [path], create=False).get(path)
        if source_id is None:
            return
        while True:
            stmt = (
                select(
                    sl.line_no,
                    sl.byte_offset,
                    sl.raw_sha256,
                    rl.data,
                    rl.codec,
                    rl.block_id,
                    rl.block_index,
                )
                .join(t.raw_lines, rl.sha256 == sl.raw_sha256)
                .where(and_(sl.source_id == source_id, sl.line_no > last))
                .order_by(sl.line_no)
                .limit(_CHUNK)
            )
            with self._conn() as conn:
                rows = conn.execute(stmt).all()
                blocks: dict[int, list[bytes]] = {}
                for block_id in {r.block_id for r in rows if r.codec == rawcodec.BLOCK}:
                    if (kept := cache.get(block_id)) is not None:
                        blocks[block_id] = kept
                missing = list({r.block_id for r in rows if r.codec == rawcodec.BLOCK} - {*blocks})
                for part in _chunks(missing):
                    for block_id, frame in conn.execute(
                        select(rb.block_id, rb.data).where(rb.block_id.in_(part))
                    ):
                        blocks[block_id] = rawcodec.unpack(bytes(frame))
                        cache.put(block_id, blocks[block_id])
            if not rows:
                return
            for r in rows:
                if r.codec == rawcodec.BLOCK:
                    data = blocks[r.block_id][r.block_index]
                else:
                    data = rawcodec.decode(bytes(r.data), r.codec)
                yield RawLine(path, r.line_no, r.byte_offset, r.raw_sha256, data)
            last = rows[-1].line_no

    def put_issues(self, issues: Sequence[ImportIssue]) -> None:
        if not issues:
            return
        now = _now()
        with self._conn() as conn:
            conn.execute(
                t.import_issues.insert(),
                [
                    {
                        "path": i.path,
                        "line_no": i.line_no,
                        "byte_offset": i.byte_offset,
                        "byte_length": i.byte_length,
                        "reason": i.reason,
                        "raw_sha256": i.raw_sha256,
                        "created_at": now,
                    }
                    for i in issues
                ],
            )

    def issues(self, path: str | None = None) -> list[ImportIssue]:
        c = t.import_issues.c
        stmt = select(t.import_issues).order_by(c.path, c.line_no)
        if path is not None:
            stmt = stmt.where(c.path == path)
        with self._conn() as conn:
            return [
                ImportIssue(r.path, r.line_no, r.byte_offset, r.byte_length, r.reason, r.raw_sha256)
                for r in conn.execute(stmt)
            ]


__all__ = ["SqlStore"]
