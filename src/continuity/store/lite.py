"""The read path of a SQLite workspace without SQLAlchemy (issue 43 goal 3: start-up).

``LiteStore`` answers the reads the read commands make first (``sessions``, ``show``,
``continue``: sessions, rows, row metadata, the tool-call index, runs, notes) with the standard
library's ``sqlite3``, so those commands start without importing SQLAlchemy (with asyncio and
ssl, about 120 ms of a 500 ms start). It is the same ``Store`` interface: every other method
(writes included) is the full ``SqlStore``'s, opened on first use on the same database
(``__getattr__``), so a caller never sees a difference but the time. The conformance suite
(``tests/store/test_store.py``) runs over it as over ``SqlStore``.

It answers only for the schema it was written for (``READ_REVISION``, checked against the
database's ``alembic_version``): a database at another revision, a PostgreSQL URL, an
in-memory database or a file that is not there gives None from ``open_lite``, and the caller
opens the full store (which migrates, refuses or creates as it always did). Values are read
as ``SqlStore`` reads them: times stored naive UTC come back aware UTC through
``core.when.usable_time``, strings compared with a stored key follow the NUL rule
(``schema.nul_free``), ``startswith`` is SQLite's ``LIKE`` with ``/`` escapes as SQLAlchemy's
``autoescape`` writes it (case-insensitive for ASCII, as there).

Over 600 lines: one query per ``Store`` read it answers, each with its fallback to the full
store inside a ``batch()``, and the row decoders mirroring ``SqlStore``'s; split by table,
the pieces would share every helper and the snapshot logic.

May import: ``core``, ``store.base`` and ``store.records`` (never ``store.sql`` or SQLAlchemy at import).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from datetime import datetime

from continuity.core import paths
from continuity.core.model import (
    Entry,
    EntryKind,
    Role,
    Run,
    RunStatus,
    Session,
    ToolCallIndex,
)
from continuity.store import textdicts
from continuity.store.base import RowMeta
from continuity.store.rows import (
    COMPACTION_ROW,
    UNPAIRED_CALL,
    decode_entry,
    parse_entry_id,
    stored_time,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from continuity.core.records import Note
    from continuity.store.records import SourceState
    from continuity.store.sql import SqlStore

#: The schema revision these queries read (``store.HEAD_REVISION`` when written; a test keeps
#: them equal, so a new revision reviews this module).
READ_REVISION = "0034"
#: Columns of ``entries`` as ``store.bulk.ENTRY_COLUMNS`` lists them, ``source_id`` read as
#: its path (``schema.ENTRY_READ``; revision 0030), from ``_ENTRY_FROM``.
_ENTRY_SELECT = (
    "session_key, seq, native_id, parent_native_id, kind, role, type_name, "
    "visible, base_visible, is_request, sidechain, ts, cwd, content, meta, view_bytes, "
    "line_no, byte_offset, raw_sha256, content_z, p.path"
)
#: The rows with their source paths (``schema.entries_with_paths``).
_ENTRY_FROM = "entries LEFT OUTER JOIN source_paths p ON p.source_id = entries.source_id"
_SESSION_SELECT = (
    "SELECT s.session_key, s.agent_id, s.harness, s.project, s.source_path, s.title, "
    "s.started_at, s.ended_at, s.entry_count, s.forked_from, src.gone_at "
    "FROM sessions s LEFT OUTER JOIN sources src ON src.path = s.source_path"
)
_RUN_SELECT = (
    "SELECT run_id, session_key, agent_id, request_seq, status, end_seq, started_at, ended_at "
    "FROM runs"
)
#: Keys per ``IN (...)`` list (``SqlStore``'s chunk).
_CHUNK = 500
#: A ``sources`` row in ``SourceState``'s field order.
_SOURCE_SELECT = (
    'SELECT path, session_key, harness, inode, size, "offset", line_count, prefix_sha256, '
    "reader_state, updated_at, gone_at, pending_from FROM sources"
)


def _nf(value: str) -> str:
    """``store.schema.nul_free`` of a string compared with a stored one."""
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


def _like_prefix(prefix: str) -> str:
    """A ``LIKE`` pattern matching ``prefix`` literally then anything (``ESCAPE '/'``), as
    SQLAlchemy's ``startswith(autoescape=True)`` builds it."""
    return prefix.replace("/", "//").replace("%", "/%").replace("_", "/_") + "%"


_time = stored_time


def _aware(value: Any) -> datetime | None:
    """A stored time as ``SqlStore``'s ``_utc`` reads it: aware UTC, no range check."""
    if value is None:
        return None
    from datetime import UTC

    at = datetime.fromisoformat(value) if isinstance(value, str) else value
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def _run(r: Sequence[Any]) -> Run:
    run_id, key, agent_id, request_seq, status, end_seq, started, ended = r
    return Run(
        run_id,
        key,
        agent_id,
        request_seq,
        RunStatus(status),
        end_seq,
        _time(started),
        _time(ended),
    )


def _session(r: Sequence[Any]) -> Session:
    gone = _aware(r[10])
    return Session(
        key=r[0],
        harness=r[2],
        agent_id=r[1],
        project=r[3],
        source_path=r[4],
        started_at=_time(r[6]),
        ended_at=_time(r[7]),
        entry_count=r[8],
        title=r[5],
        forked_from=r[9],
        source_gone_at=gone,
    )


def _entry(r: Sequence[Any]) -> Entry:
    """A row of ``_ENTRY_SELECT`` (``schema.ENTRY_READ``'s columns)."""
    return decode_entry(r)


class LiteStore:
    """A ``Store`` over a SQLite workspace whose common reads run on ``sqlite3`` (see the
    module docstring); anything else is the ``SqlStore`` of the same URL, opened on first
    use (read-only as the command asked). Build it with ``open_lite``. Not for threads: one
    connection."""

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection, url: str, *, read_only: bool) -> None:
        self._db = conn
        self.url = url
        self._read_only = read_only
        self._full: SqlStore | None = None
        self._batching = self._depth = 0
        self._durable = True  # the open batch()'s ``durable``
        self._stack: ExitStack | None = None
        #: kept secrets found inside a reading ``batch()``, written when it ends
        self._pending: list[dict[str, object]] = []
        # revision 0032: the dictionaries of content frames (held weakly)
        textdicts.add_loader(self._load_text_dict)

    def _load_text_dict(self, dict_id: int) -> bytes | None:
        """``text_dicts.data`` of ``dict_id``, or None (``store.textdicts``' loader)."""
        rows = self._db.execute("SELECT data FROM text_dicts WHERE dict_id = ?", (dict_id,))
        row = rows.fetchone()
        return bytes(row[0]) if row is not None else None

    # ------------------------------------------------------------------ plumbing

    def full(self) -> SqlStore:
        """The ``SqlStore`` of the same database (opened on first call, kept)."""
        if self._full is None:
            from continuity.store import open_store_raw

            self._full = open_store_raw(self.url, read_only=self._read_only)
        return self._full

    @contextmanager
    def batch(self, *, durable: bool = True) -> Iterator[None]:
        """One transaction around the block, as ``SqlStore.batch`` (``durable`` as there). While it only reads, a
        read transaction of ``sqlite3`` (one snapshot: ``build_continuation`` reads a
        session's rows, index and runs as of one moment); from the first call the full
        store answers (a write, say) on, the full store's ``batch()``, which then holds
        every read too, so the block sees its own writes. Nested blocks join the outer one."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._depth = 1
        self._durable = durable
        self._stack = ExitStack()
        try:
            with self._stack:
                if self._full is not None:
                    self._join_full()
                else:
                    self._db.execute("BEGIN")
                yield
        finally:
            if self._db.in_transaction:
                self._db.rollback()  # a snapshot that only read: nothing to keep
            self._stack = None
            self._depth = self._batching = 0
            pending, self._pending = self._pending, []
            if pending:
                from continuity.core.errors import StoreError

                with suppress(StoreError):  # a cache: a read-only workspace computes it again
                    self._write_secrets(pending)

    def _join_full(self) -> SqlStore:
        """The full store; inside a ``batch()`` its own transaction, entered once."""
        full = self.full()
        if self._stack is not None and not self._batching:
            if self._db.in_transaction:
                self._db.rollback()
            self._stack.enter_context(full.batch(durable=self._durable))
            self._batching = 1
        return full

    def _through(self) -> SqlStore | None:
        """The full store while a ``batch()`` is open (reads go through its transaction)."""
        return self._full if self._batching else None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._join_full(), name)

    def make_durable(self) -> None:
        """``SqlStore.make_durable`` of the full store, when one was opened (only it writes)."""
        if self._full is not None:
            self._full.make_durable()

    def close(self) -> None:
        """Close the connection (and the full store, when one was opened)."""
        self._db.close()
        if self._full is not None:
            self._full.close()
            self._full = None

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        from continuity.core.errors import StoreError

        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"database error on {self.url}: {type(exc).__name__}: {exc}") from exc

    # ------------------------------------------------------------------ sessions

    def keep_titles(self, titles: Sequence[Any]) -> None:
        """``store.titles.TitleStoreMixin.keep_titles`` over ``sqlite3`` (a cache write, so a
        listing that computed titles keeps them without loading SQLAlchemy); inside a
        ``batch()`` the full store's. Raises ``StoreError`` when the database cannot be
        written (a read-only workspace)."""
        if not titles:
            return
        if self._depth:
            self._join_full().keep_titles(titles)
            return
        from continuity.core.errors import StoreError

        sql = (
            "INSERT INTO session_titles (session_key, own_sha256, line_sha256, entry_count, "
            "line) VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_key) DO UPDATE SET "
            "own_sha256 = excluded.own_sha256, line_sha256 = excluded.line_sha256, "
            "entry_count = excluded.entry_count, line = excluded.line"
        )
        rows = [
            (_nf(k.session_key), k.own_sha256, k.line_sha256, k.entry_count, _nf(k.line))
            for k in titles
        ]
        try:
            with self._db:  # one transaction, committed
                self._db.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise StoreError(f"database error on {self.url}: {type(exc).__name__}: {exc}") from exc

    def kept_titles(self, keys: Iterable[str]) -> dict[str, Any]:
        """``store.titles.TitleStoreMixin.kept_titles`` over ``sqlite3`` (revision 0025)."""
        if (full := self._through()) is not None:
            return full.kept_titles(keys)
        from continuity.store.records import KeptTitle

        wanted = [_nf(k) for k in dict.fromkeys(keys)]
        out: dict[str, Any] = {}
        for i in range(0, len(wanted), _CHUNK):
            part = wanted[i : i + _CHUNK]
            marks = ", ".join("?" * len(part))
            sql = (
                "SELECT session_key, own_sha256, line_sha256, entry_count, line "
                f"FROM session_titles WHERE session_key IN ({marks})"
            )
            for r in self._rows(sql, part):
                out[r[0]] = KeptTitle(*r)
        return out

    def kept_secrets(self, key: str) -> Any:
        """``store.titles.TitleStoreMixin.kept_secrets`` over ``sqlite3`` (revision 0028)."""
        if (full := self._through()) is not None:
            return full.kept_secrets(key)
        from continuity.store.base import decode_kept_secrets

        rows = self._rows(
            "SELECT own_sha256, entry_count, last_seq, secrets FROM session_secrets "
            "WHERE session_key = ?",
            (_nf(key),),
        )
        return decode_kept_secrets(key, *rows[0]) if rows else None

    def keep_secrets(self, kept: Any) -> None:
        """``store.titles.TitleStoreMixin.keep_secrets`` over ``sqlite3`` (a cache write):
        inside a ``batch()`` that joined the full store, the full store's; inside one that
        only reads (``show``, ``continue``: one snapshot), kept and written when it ends, so
        the fast path loads no SQLAlchemy. Raises ``StoreError`` when the database cannot be
        written (a read-only workspace) outside a batch; at a batch's end the write is
        skipped (a cache: computed again)."""
        from continuity.store.base import kept_secrets_row

        if self._batching:
            self._full.keep_secrets(kept)  # type: ignore[union-attr]
        elif self._depth:  # a read snapshot of sqlite3: written when the batch ends
            self._pending.append(kept_secrets_row(kept))
        else:
            self._write_secrets([kept_secrets_row(kept)])

    def _write_secrets(self, rows: list[dict[str, object]]) -> None:
        from continuity.core.errors import StoreError

        sql = (
            "INSERT INTO session_secrets (session_key, own_sha256, entry_count, last_seq, "
            "secrets) VALUES (:session_key, :own_sha256, :entry_count, :last_seq, :secrets) "
            "ON CONFLICT (session_key) DO UPDATE SET own_sha256 = excluded.own_sha256, "
            "entry_count = excluded.entry_count, last_seq = excluded.last_seq, "
            "secrets = excluded.secrets"
        )
        try:
            with self._db:  # one transaction, committed
                self._db.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise StoreError(f"database error on {self.url}: {type(exc).__name__}: {exc}") from exc

    def get_session(self, key: str) -> Session | None:
        if (full := self._through()) is not None:
            return full.get_session(key)
        rows = self._rows(_SESSION_SELECT + " WHERE s.session_key = ?", (_nf(key),))
        return _session(rows[0]) if rows else None

    def get_sessions(self, keys: Iterable[str]) -> dict[str, Session]:
        """``{key: session}`` of the known sessions among ``keys``."""
        if (full := self._through()) is not None:
            return full.get_sessions(keys)
        wanted = [_nf(k) for k in dict.fromkeys(keys)]
        out: dict[str, Session] = {}
        for i in range(0, len(wanted), _CHUNK):
            part = wanted[i : i + _CHUNK]
            marks = ", ".join("?" * len(part))
            for r in self._rows(_SESSION_SELECT + f" WHERE s.session_key IN ({marks})", part):
                out[r[0]] = _session(r)
        return out

    # ------------------------------------------------------------------ sources (issue 43 goal 4)

    def get_sources(self, paths: Sequence[str]) -> dict[str, SourceState]:
        """``{path: state}`` of the known sources among ``paths`` (as ``SqlStore``'s: one
        query per 500 paths)."""
        if (full := self._through()) is not None:
            return full.get_sources(paths)
        from continuity.store.records import SourceState  # the import's only: not at start

        wanted = list(dict.fromkeys(paths))
        out: dict[str, SourceState] = {}
        for i in range(0, len(wanted), _CHUNK):
            part = wanted[i : i + _CHUNK]
            marks = ", ".join("?" * len(part))
            for r in self._rows(_SOURCE_SELECT + f" WHERE path IN ({marks})", part):
                path, key, harness, inode, size, offset, lines, prefix, state = r[:9]
                out[path] = SourceState(
                    path,
                    key,
                    harness,
                    inode,
                    size,
                    offset,
                    lines,
                    prefix,
                    state,
                    _aware(r[9]),
                    _aware(r[10]) if r[10] else None,
                    r[11],
                )
        return out

    def source_presence(self) -> dict[str, bool]:
        """``{path: gone}`` of every recorded source, one query (as ``SqlStore``'s)."""
        if (full := self._through()) is not None:
            return full.source_presence()
        return {r[0]: r[1] is not None for r in self._rows("SELECT path, gone_at FROM sources")}

    def sessions_without_transcript(self, session_keys: Iterable[str]) -> list[str]:
        """Of the sessions ``session_keys``, those whose agent has no transcript row, sorted;
        keys of unknown sessions left out (as ``SqlStore``'s: one query per 500 keys)."""
        if (full := self._through()) is not None:
            return full.sessions_without_transcript(session_keys)
        keys = sorted({k for k in session_keys if k})
        out: list[str] = []
        for i in range(0, len(keys), _CHUNK):
            part = keys[i : i + _CHUNK]
            marks = ", ".join("?" * len(part))
            out.extend(
                r[0]
                for r in self._rows(
                    "SELECT s.session_key FROM sessions AS s LEFT OUTER JOIN "
                    "session_transcripts AS tr ON tr.session_key = s.session_key "
                    "AND tr.agent_id = s.agent_id "
                    f"WHERE s.session_key IN ({marks}) AND tr.session_key IS NULL",
                    part,
                )
            )
        return sorted(out)

    def find_sessions(self, prefix: str, *, limit: int = 20) -> list[Session]:
        """Sessions whose key starts with ``prefix``, byte for byte (``SqlStore``'s
        ``substr`` comparison), in key order."""
        if (full := self._through()) is not None:
            return full.find_sessions(prefix, limit=limit)
        prefix = _nf(prefix)
        sql = _SESSION_SELECT + " WHERE substr(s.session_key, 1, ?) = ? ORDER BY s.session_key"
        return [_session(r) for r in self._rows(sql + " LIMIT ?", (len(prefix), prefix, limit))]

    def list_sessions(
        self,
        *,
        limit: int = 0,
        harness: str | None = None,
        project: str | None = None,
        since: datetime | None = None,
    ) -> list[Session]:
        """``SqlStore.list_sessions``: newest activity first, filtered."""
        if (full := self._through()) is not None:
            return full.list_sessions(limit=limit, harness=harness, project=project, since=since)
        where: list[str] = []
        params: list[Any] = []
        if harness is not None:
            where.append("s.harness = ?")
            params.append(_nf(harness))
        if project is not None:
            folder = project.rstrip("/") or "/"
            where.append("(s.project = ? OR s.project LIKE ? ESCAPE '/')")
            params += [
                _nf(folder),
                _nf(_like_prefix(folder if folder.endswith("/") else folder + "/")),
            ]
        if since is not None:
            from datetime import UTC

            at = since.replace(tzinfo=UTC) if since.tzinfo is None else since.astimezone(UTC)
            where.append("coalesce(s.ended_at, s.updated_at) >= ?")
            params.append(at.replace(tzinfo=None).isoformat(" ", "microseconds"))
        sql = _SESSION_SELECT + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY coalesce(s.ended_at, s.updated_at) DESC, s.session_key"
        if limit:
            sql += " LIMIT ?"
            params.append(limit)
        return [_session(r) for r in self._rows(sql, params)]

    def notes_starting(self, prefix: str, session_keys: Sequence[str]) -> dict[str, list[str]]:
        """``SqlStore.notes_starting``: texts starting with ``prefix``, oldest first."""
        if (full := self._through()) is not None:
            return full.notes_starting(prefix, session_keys)
        keys = [_nf(k) for k in dict.fromkeys(session_keys)]
        found: dict[str, list[str]] = {}
        for i in range(0, len(keys), _CHUNK):
            part = keys[i : i + _CHUNK]
            marks = ", ".join("?" * len(part))
            sql = (
                f"SELECT session_key, text FROM notes WHERE session_key IN ({marks}) "
                "AND text LIKE ? ESCAPE '/' ORDER BY note_id"
            )
            for key, text in self._rows(sql, [*part, _nf(_like_prefix(prefix))]):
                found.setdefault(key, []).append(text)
        return found

    # ------------------------------------------------------------------ runs and notes

    def runs(self, session_key: str, *, agent_id: str | None = None) -> list[Run]:
        """The session's runs (of ``agent_id`` only, when given), by request seq."""
        if (full := self._through()) is not None:
            return full.runs(session_key, agent_id=agent_id)
        sql = f"{_RUN_SELECT} WHERE session_key = ?"
        params: list[Any] = [_nf(session_key)]
        if agent_id is not None:
            sql += " AND agent_id = ?"
            params.append(_nf(agent_id))
        return [_run(r) for r in self._rows(sql + " ORDER BY request_seq", params)]

    def last_run(
        self, session_key: str, *, agent_id: str | None = None, ended_only: bool = False
    ) -> Run | None:
        """The run with the highest request seq (only ended ones with ``ended_only``)."""
        if (full := self._through()) is not None:
            return full.last_run(session_key, agent_id=agent_id, ended_only=ended_only)
        sql = f"{_RUN_SELECT} WHERE session_key = ?"
        params: list[Any] = [_nf(session_key)]
        if agent_id is not None:
            sql += " AND agent_id = ?"
            params.append(_nf(agent_id))
        if ended_only:
            sql += " AND status != ?"
            params.append(RunStatus.RUNNING.value)
        rows = self._rows(sql + " ORDER BY request_seq DESC LIMIT 1", params)
        return _run(rows[0]) if rows else None

    def notes(self, session_key: str, *, limit: int = 20) -> list[Note]:
        """The newest ``limit`` notes of the session, oldest first."""
        if (full := self._through()) is not None:
            return full.notes(session_key, limit=limit)
        sql = (
            "SELECT session_key, text, note_id, created_at FROM notes WHERE session_key = ? "
            "ORDER BY note_id DESC LIMIT ?"
        )
        rows = self._rows(sql, (_nf(session_key), limit))
        if not rows:
            return []
        from continuity.core.records import Note  # only now: most sessions have none

        return [Note(k, text, note_id, _aware(at)) for k, text, note_id, at in reversed(rows)]

    # ------------------------------------------------------------------ entries

    def entries(
        self,
        session_key: str,
        *,
        after_seq: int = -1,
        limit: int = 1000,
        visible_only: bool = False,
    ) -> list[Entry]:
        """Rows with seq > ``after_seq`` in seq order, at most ``limit``."""
        if (full := self._through()) is not None:
            return full.entries(
                session_key, after_seq=after_seq, limit=limit, visible_only=visible_only
            )
        sql = f"SELECT {_ENTRY_SELECT} FROM {_ENTRY_FROM} WHERE session_key = ? AND seq > ?"
        if visible_only:
            sql += " AND visible = 1"
        rows = self._rows(sql + " ORDER BY seq LIMIT ?", (_nf(session_key), after_seq, limit))
        return [_entry(r) for r in rows]

    def entries_by_seq(self, session_key: str, seqs: Iterable[int]) -> list[Entry]:
        """The rows with these seqs, in seq order (missing seqs are absent)."""
        if (full := self._through()) is not None:
            return full.entries_by_seq(session_key, seqs)
        wanted = sorted(set(seqs))
        out: list[Entry] = []
        for i in range(0, len(wanted), _CHUNK):
            part = wanted[i : i + _CHUNK]
            marks = ", ".join("?" * len(part))
            sql = f"SELECT {_ENTRY_SELECT} FROM {_ENTRY_FROM} WHERE session_key = ? AND seq IN ({marks})"
            out.extend(_entry(r) for r in self._rows(sql, [_nf(session_key), *part]))
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
        """Visible rows' metadata with ``after_seq < seq < before_seq``."""
        if (full := self._through()) is not None:
            return full.rows_meta(
                session_key,
                after_seq=after_seq,
                before_seq=before_seq,
                limit=limit,
                newest_first=newest_first,
            )
        sql = (
            "SELECT seq, kind, role, is_request, view_bytes FROM entries "
            "WHERE session_key = ? AND visible = 1"
        )
        params: list[Any] = [_nf(session_key)]
        if after_seq is not None:
            sql += " AND seq > ?"
            params.append(after_seq)
        if before_seq is not None:
            sql += " AND seq < ?"
            params.append(before_seq)
        sql += f" ORDER BY seq {'DESC' if newest_first else 'ASC'} LIMIT ?"
        params.append(limit)
        return [
            RowMeta(seq, EntryKind(kind), Role(role), bool(req), size)
            for seq, kind, role, req, size in self._rows(sql, params)
        ]

    def latest_compaction(self, session_key: str) -> Entry | None:
        """The newest visible compaction row of the session, by seq."""
        if (full := self._through()) is not None:
            return full.latest_compaction(session_key)
        sql = (  # the partial index's condition as written there (ix_entries_compaction)
            f"SELECT {_ENTRY_SELECT} FROM {_ENTRY_FROM} WHERE session_key = ? AND {COMPACTION_ROW} "
            "AND visible = 1 ORDER BY seq DESC LIMIT 1"
        )
        rows = self._rows(sql, (_nf(session_key),))
        return _entry(rows[0]) if rows else None

    def entry_by_id(self, entry_id: str) -> Entry | None:
        """The row whose entry id is ``entry_id`` (``SqlStore.entry_by_id``: by the primary
        key), or None. Raises ``InputError`` for a malformed id."""
        key, seq = parse_entry_id(entry_id)
        if (full := self._through()) is not None:
            return full.entry_by_id(entry_id)
        sql = f"SELECT {_ENTRY_SELECT} FROM {_ENTRY_FROM} WHERE session_key = ? AND seq = ?"
        rows = self._rows(sql, (_nf(key), seq))
        return _entry(rows[0]) if rows else None

    def tool_calls(self, session_key: str, call_ids: Iterable[str]) -> dict[str, ToolCallIndex]:
        """Index rows of these call ids (ids never seen are absent), keyed as asked."""
        if (full := self._through()) is not None:
            return full.tool_calls(session_key, call_ids)
        asked = {_nf(i): i for i in set(call_ids)}
        ids = list(asked)
        out: dict[str, ToolCallIndex] = {}
        for i in range(0, len(ids), _CHUNK):
            part = ids[i : i + _CHUNK]
            marks = ", ".join("?" * len(part))
            sql = (
                "SELECT call_id, call_seq, result_seq FROM tool_calls "
                f"WHERE session_key = ? AND call_id IN ({marks})"
            )
            for call_id, call_seq, result_seq in self._rows(sql, [_nf(session_key), *part]):
                k: str = asked.get(call_id) or call_id
                out[k] = ToolCallIndex(k, call_seq if call_seq is not None else -1, result_seq)
        return out

    def tool_calls_from(self, session_key: str, seq: int) -> list[ToolCallIndex]:
        """Index rows whose call or result sits at ``seq`` or later: two index range reads,
        as ``store.sql._tool_calls_from`` (revision 0031)."""
        if (full := self._through()) is not None:
            return full.tool_calls_from(session_key, seq)
        sql = (
            "SELECT call_id, call_seq, result_seq FROM tool_calls "
            "WHERE session_key = ?1 AND result_seq >= ?2 UNION ALL "
            "SELECT call_id, call_seq, result_seq FROM tool_calls "
            f"WHERE session_key = ?1 AND call_seq >= ?2 AND ({UNPAIRED_CALL}) "
            "AND (result_seq IS NULL OR result_seq < ?2)"
        )
        return [
            ToolCallIndex(c, cs if cs is not None else -1, rs)
            for c, cs, rs in self._rows(sql, (_nf(session_key), seq))
        ]


def open_lite(url: str, *, read_only: bool = True) -> LiteStore | None:
    """A ``LiteStore`` on ``url`` when it is a SQLite file (``sqlite:///PATH``, no query)
    that exists and holds the schema at ``READ_REVISION``; else None (open the full store).
    Never creates, migrates or writes anything; never raises. ``read_only`` (a command that
    only reads): a database in a folder that cannot be written is opened as the full store
    opens it there, ``mode=ro`` (and ``immutable=1`` when no ``-wal``/``-shm`` file is
    beside it), so reading it leaves the folder as it was."""
    if not url.startswith("sqlite:///") or "?" in url:
        return None
    # the path as pathlib reads it, as text (``core.paths``: no pathlib at start-up)
    path = paths.expanded(url[len("sqlite:///") :])
    folder, name = paths.split(path)
    if not name or path == ":memory:" or not paths.is_file(path):
        return None
    uri = f"{paths.file_uri(path)}?mode=rw"
    if read_only and not (os.access(folder, os.W_OK) and os.access(path, os.W_OK)):
        # a read-only workspace (mode 0500): read it as the full store does
        # (``store._read_only_url``): nothing written, not even -wal/-shm files
        live = any(paths.exists(f"{path}{suffix}") for suffix in ("-wal", "-shm"))
        uri = f"{paths.file_uri(path)}?mode=ro" + ("" if live else "&immutable=1")
    try:
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
    except (sqlite3.Error, ValueError):
        return None
    try:
        conn.execute("PRAGMA busy_timeout=10000")
        found = conn.execute("SELECT version_num FROM alembic_version").fetchall()
    except sqlite3.Error:
        conn.close()
        return None
    if found != [(READ_REVISION,)]:
        conn.close()
        return None
    return LiteStore(conn, url, read_only=read_only)


__all__ = ["READ_REVISION", "LiteStore", "open_lite"]
