"""Bulk writes of the import's big tables (entries, raw lines, source lines, tool calls, media).

An import writes one row per line into several tables. Run through SQLAlchemy's compiled
``insert()``, each row pays for parameter construction and one type-processor call per column,
more than SQLite takes to store it. Here each statement is rendered once per dialect (every
column named, one placeholder each, ``ON CONFLICT DO NOTHING`` where a row may already exist:
SQLite 3.24+ and PostgreSQL both speak it) and run through ``Connection.exec_driver_sql``, i.e.
the DBAPI's own ``executemany`` over plain tuples, in the caller's transaction.

The values are converted column by column by the rules of the columns' types: text columns by
``schema.nul_free`` (the one NUL rule, which the ``_NulFree`` types apply elsewhere; a column
without NUL is left as it is after one scan), raw line keys by ``schema.Sha256.stored`` (hex to
32 bytes, revision 0029; a third of the time of the type's bind processor, which wraps each
value again), every other column by its SQLAlchemy bind processor for the dialect (SQLite's
datetimes; booleans and bytes only when they are not plain ``bool``/``bytes``). So a row reads
back the same whichever path wrote it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    Connection,
    DateTime,
    LargeBinary,
    Table,
    and_,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Dialect

from continuity.core.codec import blocks_to_json, message_bytes
from continuity.core.errors import StoreError
from continuity.core.model import Entry, ToolCallBlock, ToolResultBlock
from continuity.core.text import json_bytes
from continuity.store import rawcodec, schema as t
from continuity.store.base import RawLine
from continuity.store.rows import native_hash, native_loaded
from continuity.store.search import SearchIndexWriter, search_body

_CHUNK = 500  # bound on IN-lists


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


#: Column order of ``entry_row`` (the bulk insert of ``entries`` names these columns): the
#: table's, less ``entry_no`` (the database numbers the rows), which sits before the last one
#: (revision 0033 added ``native_hash`` after it).
ENTRY_COLUMNS = (
    "session_key",
    "seq",
    "native_id",
    "parent_native_id",
    "kind",
    "role",
    "type_name",
    "visible",
    "base_visible",
    "is_request",
    "sidechain",
    "ts",
    "cwd",
    "content",
    "meta",
    "view_bytes",
    "line_no",
    "byte_offset",
    "raw_sha256",
    "content_z",
    "source_id",
    "native_hash",
)


def _nul_free_column(values: Sequence[Any]) -> Sequence[Any]:
    """``values`` with ``schema.nul_free`` applied; the same sequence when none holds NUL (one
    scan of the joined text instead of a call per value)."""
    try:
        if "\x00" not in "".join(filter(None, values)):
            return values
    except TypeError:  # a value that is not text: let the rule decide for each
        pass
    return list(map(t.nul_free, values))


def _digest_column(values: Sequence[Any]) -> Sequence[Any]:
    """Hex digests as stored (``schema.Sha256.stored``): their 32 bytes, None as None."""
    return list(map(t.Sha256.stored, values))


#: Values that sqlite3 and psycopg bind exactly as the type's bind processor would make them
#: (a bool as 1/0 or true/false, bytes as a BLOB or bytea): a column holding only these skips
#: the processor.
_AS_IS: dict[type, set[type]] = {Boolean: {bool, type(None)}, LargeBinary: {bytes, type(None)}}


#: SQLAlchemy's SQLite ``DATETIME`` storage format (its default, which the schema keeps)
_SQLITE_TIME_FORMAT = (
    "%(year)04d-%(month)02d-%(day)02d %(hour)02d:%(minute)02d:%(second)02d.%(microsecond)06d"
)


def _sqlite_time_column(process: Callable[[Any], Any]) -> Callable[[Sequence[Any]], list[Any]]:
    """A SQLite ``DATETIME`` column's converter: a ``datetime`` as the text SQLAlchemy's
    bind processor ``process`` makes of it (``_SQLITE_TIME_FORMAT``: the fields, the zone
    left out), through ``datetime.isoformat``, a fifth of its cost (issue 43 goal 1: 216,400
    times per 323 MB import); any other value through ``process``."""
    dt = datetime

    def convert(values: Sequence[Any]) -> list[Any]:
        return [
            v.isoformat(" ", "microseconds")[:26] if v.__class__ is dt else process(v)
            for v in values
        ]

    return convert


def _column_converter(
    column: Any, dialect: Dialect
) -> Callable[[Sequence[Any]], Sequence[Any]] | None:
    """The function that turns one column's Python values into what the DBAPI gets (None when
    they go as they are): the NUL rule for our text types, else the type's bind processor
    (for SQLite's ``DATETIME`` a faster equal one: ``_sqlite_time_column``), skipped for a
    column of ``_AS_IS`` values only."""
    if isinstance(column.type, t.NativeId):  # before _NulFree, which it is
        name = dialect.name
        return lambda values: [t.NativeId.stored(v, name) for v in values]
    if isinstance(column.type, t._NulFree):
        if column.type.impl_instance.dialect_impl(dialect).bind_processor(dialect) is not None:
            raise StoreError(f"column {column} needs a bind processor the bulk path lacks")
        return _nul_free_column
    if isinstance(column.type, t.Sha256):
        return _digest_column
    impl = column.type.dialect_impl(dialect)
    process = impl.bind_processor(dialect)
    if process is None:
        return None
    if getattr(impl, "_storage_format", None) == _SQLITE_TIME_FORMAT and isinstance(
        column.type, DateTime
    ):
        return _sqlite_time_column(process)
    as_is = next((kinds for base, kinds in _AS_IS.items() if isinstance(column.type, base)), set())

    def convert(values: Sequence[Any]) -> Sequence[Any]:
        if as_is and set(map(type, values)) <= as_is:
            return values
        return list(map(process, values))

    return convert


class BulkInsert:
    """An INSERT of ``columns`` of ``table``, rendered once for ``dialect`` (``ignore``: rows
    whose key exists are skipped). ``run(conn, rows)`` takes value tuples in column order."""

    def __init__(
        self, table: Table, columns: Sequence[str], dialect: Dialect, *, ignore: bool = False
    ) -> None:
        style = dialect.paramstyle
        if style not in ("qmark", "format", "pyformat"):
            raise StoreError(f"unsupported DBAPI parameter style {style!r}")
        mark = "?" if style == "qmark" else "%s"
        prep = dialect.identifier_preparer
        self.columns = tuple(columns)
        cols = [table.c[name] for name in columns]
        self.sql = (
            f"INSERT INTO {prep.format_table(table)} "
            f"({', '.join(prep.quote(c.name) for c in cols)}) "
            f"VALUES ({', '.join([mark] * len(cols))})"
            + (" ON CONFLICT DO NOTHING" if ignore else "")
        )
        self.converters = [
            (i, fn) for i, c in enumerate(cols) if (fn := _column_converter(c, dialect)) is not None
        ]

    def run(self, conn: Connection, rows: Iterable[tuple[Any, ...]]) -> None:
        """Insert ``rows`` (tuples in column order) with one executemany, values converted
        column by column."""
        rows = list(rows)
        if not rows:
            return
        columns: list[Sequence[Any]] = list(zip(*rows, strict=True))
        changed = False
        for i, convert in self.converters:
            done = convert(columns[i])
            if done is not columns[i]:
                columns[i], changed = done, True
        conn.exec_driver_sql(self.sql, list(zip(*columns, strict=True)) if changed else rows)


def source_ids(conn: Connection, paths: Iterable[str], *, create: bool) -> dict[str, int]:
    """``{path: source_id}`` of ``paths`` in ``source_paths`` (revision 0023: a source file's
    path once); with ``create``, a path not there yet is added first (idempotent: two writers
    adding one path both get its one id). Without it, an unknown path is left out."""
    c = t.source_paths.c
    stored = {p: t.nul_free(p) for p in paths}  # a path is stored by the one NUL rule
    wanted = list(dict.fromkeys(stored.values()))
    found: dict[str, int] = {}
    for part in _chunks(wanted):
        found.update(conn.execute(select(c.path, c.source_id).where(c.path.in_(part))).all())
    missing = [p for p in wanted if p not in found]
    if missing and create:
        conn.execute(
            t.upsert_insert(conn.dialect.name, t.source_paths).on_conflict_do_nothing(),
            [{"path": p} for p in missing],
        )
        for part in _chunks(missing):
            found.update(conn.execute(select(c.path, c.source_id).where(c.path.in_(part))).all())
    return {p: found[s] for p, s in stored.items() if s in found}


def prepare(e: Entry, text_dict: rawcodec.TextDict | None = None) -> None:
    """Set ``e.prepared`` to what ``entry_row`` and the search index make of its blocks
    (issue 43 goal 1): a parallel import's worker calls it on each row it parsed, so the one
    writer process does not. ``(blocks, role, compaction, content, content_z, view_bytes at
    seq 0, search body)``, the first three the objects it was made from: a writer that
    changed any of them (a new tuple of blocks) makes the rest again. ``content`` is ""
    when ``content_z`` holds it (it is not sent twice). ``text_dict``: the store's dictionary
    (``SqlStore.text_dict``), which the frame is made with; a frame made with an older one, or
    none, stays valid (each frame names its dictionary)."""
    content = blocks_to_json(e.blocks)
    content_z = rawcodec.encode_text(content, text_dict)
    role = e.role.value
    e.prepared = (
        e.blocks,
        role,
        e.compaction,
        "" if content_z is not None else content,
        content_z,
        message_bytes(0, role, e.blocks, stored_json=content),
        search_body(e),
    )


def _prepared(e: Entry) -> tuple[str, bytes | None, int] | None:
    """``(content, content_z, view_bytes)`` of ``e.prepared`` for its ``seq`` (``content`` ""
    when ``content_z`` holds it, as ``entries.content`` stores it), or None when
    it is not there or was made from other blocks or another role. ``view_bytes``: the size
    at seq 0 plus the seq's digits beyond the one of ``0``."""
    p = e.prepared
    if p is None or p[0] is not e.blocks or p[1] != e.role.value:
        return None
    return p[3], p[4], p[5] + len(str(e.seq)) - 1  # type: ignore[return-value]


def entry_row(
    session_key: str,
    e: Entry,
    source_id: int | None = None,
    text_dict: rawcodec.TextDict | None = None,
) -> tuple[Any, ...]:
    """The ``entries`` values of ``e`` in ``ENTRY_COLUMNS`` order (``seq`` already set):
    content as stored JSON (issue 43: a long one as a zstd frame in ``content_z``, ``content``
    then empty), ``meta`` the compaction and run-end hint as JSON, ``view_bytes`` the UTF-8
    size of the row as a view message, ``source_id`` the number ``source_paths`` gives the
    row's source path (revision 0030; None: no source), ``text_dict`` the dictionary a
    content frame is made with (revision 0032; a row ``prepare`` made keeps its frame),
    ``native_hash`` the number the look-up by native id finds it by (revision 0033,
    ``store.rows.native_hash``). No entry id: it is derived (``store.rows.entry_id_of``)."""
    meta_dict: dict[str, Any] = {}
    if e.compaction is not None:
        c = e.compaction
        meta_dict["compaction"] = {
            "summary": c.summary,
            "covers_through_seq": c.covers_through_seq,
            "first_kept_entry_id": c.first_kept_entry_id,
            "continuation": c.continuation,
            "run_id": c.run_id,
            "trigger": c.trigger,
        }
    if e.run_end is not None:
        meta_dict["run_end"] = e.run_end.value
    meta = json_bytes(meta_dict).decode() if meta_dict else None
    src = e.source
    role = e.role.value
    made = _prepared(e)
    if made is not None:
        content, content_z, view_bytes = made
    else:
        content = blocks_to_json(e.blocks)
        content_z = rawcodec.encode_text(content, text_dict)
        view_bytes = message_bytes(e.seq, role, e.blocks, stored_json=content)
    return (
        session_key,
        e.seq,
        e.native_id,
        e.parent_native_id,
        e.kind.value,
        role,
        e.type_name[:100],
        e.visible,
        e.visible,
        e.is_request,
        e.sidechain,
        e.timestamp,
        e.cwd,
        "" if content_z is not None else content,
        meta,
        view_bytes,
        src.line if src else None,
        src.offset if src else None,
        src.raw_sha256 if src else None,
        content_z,
        source_id,
        native_hash(session_key, e.native_id),
    )


def as_stored(entries: Iterable[Entry]) -> None:
    """Make each of ``entries`` (rows ``put_entries`` has written) equal, in place, to the
    ``Entry`` the store reads back for it (issue 17: the import hands its new rows to the
    checkpoint replay and the transcript phase instead of them reading the rows again): no
    ``payloads`` or ``run_id`` (neither is a column of ``entries``), ``type_name`` cut to 100
    characters and NUL as U+FFFD in the text columns (``schema.nul_free``), as ``entry_row``
    stores them. Blocks and the compaction round-trip through their JSON unchanged, and
    timestamps are already UTC (``formats.base.parse_timestamp``); the visibility a later
    statement changes (``Store.set_on_path``) is the caller's to follow."""
    nul = t.nul_free
    for e in entries:
        e.payloads = None
        e.run_id = None
        e.prepared = None  # written: what the store made of it is not kept twice
        if len(e.type_name) > 100:
            e.type_name = e.type_name[:100]
        for name in ("entry_id", "native_id", "parent_native_id", "type_name", "cwd"):
            value = getattr(e, name)
            if value and "\x00" in value:
                setattr(e, name, nul(value))


class BulkWriter:
    """The bulk statements of one store (one dialect), built once, and the two lookups an
    import makes per batch (native ids, tool-call index rows) as plain SQL."""

    def __init__(self, dialect: Dialect) -> None:
        mark = "?" if dialect.paramstyle == "qmark" else "%s"
        q = dialect.identifier_preparer.quote
        self._mark = mark
        self._dialect_name = dialect.name
        # revision 0033: the candidates by ``native_hash`` (``ix_entries_native_hash``), then
        # the key and the id themselves (two ids may share a number). The key's term is kept
        # from the planner's index choice (SQLite's unary +, an expression on PostgreSQL):
        # else SQLite read all of the session's rows through ``ux_entries_session_seq``
        key_term = (
            f"+{q('session_key')}" if dialect.name == "sqlite" else f"{q('session_key')} || ''"
        )
        self._native_sql = (
            f"SELECT {q('native_id')}, min({q('seq')}) FROM {q('entries')} "
            f"WHERE {q('native_hash')} IN ({{marks}}) AND {key_term} = {mark} "
            f"AND {q('native_id')} IN ({{marks}}) GROUP BY {q('native_id')}"
        )
        self._calls_sql = (
            f"SELECT {q('call_id')}, {q('call_seq')}, {q('result_seq')} FROM "
            f"{q('tool_calls')} WHERE {q('session_key')} = {mark} AND "
            f"{q('call_id')} IN ({{marks}})"
        )
        # the raw lines kept already among a batch's, as plain SQL (issue 43 goal 1: the
        # SQLAlchemy select's IN-list took more to build than SQLite to answer); keys as
        # stored, 32 bytes (``schema.Sha256``)
        self._kept_sql = (
            f"SELECT {q('sha256')} FROM {q('raw_lines')} WHERE {q('sha256')} IN ({{marks}})"
        )
        self.entries = BulkInsert(t.entries, ENTRY_COLUMNS, dialect)
        self.raw_lines = BulkInsert(
            t.raw_lines,
            ("sha256", "data", "codec", "block_id", "block_index"),
            dialect,
            ignore=True,
        )
        self.source_lines = BulkInsert(
            t.source_lines,
            ("source_id", "line_no", "byte_offset", "raw_sha256"),
            dialect,
            ignore=True,
        )
        self.media = BulkInsert(t.media, ("sha256", "data"), dialect, ignore=True)
        self.tool_calls = BulkInsert(
            t.tool_calls, ("session_key", "call_id", "call_seq", "result_seq"), dialect
        )
        self.search = SearchIndexWriter(dialect)

    def _select_in(
        self,
        conn: Connection,
        sql: str,
        key: str,
        ids: Sequence[str],
        lead: Callable[[Sequence[str]], Sequence[Any]] | None = None,
    ) -> list[Any]:
        """Rows of ``sql`` for the session ``key`` and ``ids`` (its IN-list), ``_CHUNK`` ids at
        a time; key and ids follow the NUL rule, as the stored values did. ``lead``: the values
        of an IN-list of the same length ahead of the key's mark, made from each chunk of ids
        (``native_seqs``: their numbers).

        On PostgreSQL the lookup runs unprepared: psycopg prepares a statement seen 5 times,
        and the server then plans it once for any parameters; a plan made for one session's
        ids made the next session's lookups 20-30x slower (measured: 120 ms instead of 5 ms)."""
        key = t.nul_free(key)
        raw: Any = conn.connection.driver_connection  # sqlite3's or psycopg's: untyped here
        threshold = getattr(raw, "prepare_threshold", False)
        if threshold is not False:
            raw.prepare_threshold = None
        try:
            out: list[Any] = []
            for i in range(0, len(ids), _CHUNK):
                part = [t.nul_free(x) for x in ids[i : i + _CHUNK]]
                marks = ", ".join([self._mark] * len(part))
                first = lead(part) if lead is not None else ()
                out.extend(conn.exec_driver_sql(sql.format(marks=marks), (*first, key, *part)))
            return out
        finally:
            if threshold is not False:
                raw.prepare_threshold = threshold

    def native_seqs(self, conn: Connection, key: str, ids: Iterable[str]) -> dict[str, int]:
        """``{native_id: seq}`` of the session's first row with each of ``ids`` (keyed by the
        ids as asked, also when the stored one had its NUL replaced)."""
        asked = {t.nul_free(i): i for i in set(ids) if i}
        name = self._dialect_name
        rows = self._select_in(
            conn,
            self._native_sql,
            key,
            [t.NativeId.stored(i, name) for i in asked],  # revision 0034: a UUID as bytes
            lead=lambda part: [native_hash(key, native_loaded(x)) for x in part],
        )
        out: dict[str, int] = {}
        for stored, seq in rows:
            native = native_loaded(stored) or ""  # never empty: the query asks for ids
            out[asked.get(native, native)] = seq
        return out

    def tool_call_rows(self, conn: Connection, key: str, ids: Sequence[str]) -> dict[str, Any]:
        """``{call_id: row}`` (``row.call_seq``, ``row.result_seq``) of the session's tool-call
        index rows among ``ids`` (keyed by the ids as asked)."""
        asked = {t.nul_free(i): i for i in ids}
        rows = self._select_in(conn, self._calls_sql, key, list(asked))
        out: dict[str, Any] = {}
        for r in rows:
            call_id: str = r.call_id
            out[asked.get(call_id, call_id)] = r
        return out

    def put_raw_lines(
        self, conn: Connection, lines: Sequence[RawLine], packed: rawcodec.Packed | None = None
    ) -> None:
        """Each distinct line's bytes once by SHA-256, and every line's position (idempotent).

        The lines not kept yet are packed by ``store.rawcodec.pack``: in blocks (one
        ``raw_blocks`` row each, its lines ``codec`` 2) or alone (a zstd frame where that
        pays). ``packed``: ``pack_lines(lines)`` made elsewhere (a parallel import's worker,
        issue 43 goal 1), taken when none of the lines is kept yet (else they are packed
        again without those). A line another writer keeps first (a race between two imports
        of files sharing a line) stays as that writer kept it; the block row written here for
        it then holds bytes no row reads, never a wrong one."""
        distinct = {ln.sha256: ln.data for ln in lines}
        count = len(distinct)
        for part in _chunks(list(distinct)):
            marks = ", ".join([self._mark] * len(part))
            found = conn.exec_driver_sql(
                self._kept_sql.format(marks=marks), tuple(map(t.Sha256.stored, part))
            )
            for (sha,) in found:
                distinct.pop(bytes(sha).hex(), None)  # kept already: not packed again
        if packed is not None and len(distinct) == count:
            alone, blocks = packed
        else:
            alone, blocks = rawcodec.pack(list(distinct.items()))
        rows = [(sha, data, codec, None, None) for sha, data, codec in alone]
        for block in blocks:
            key = conn.execute(
                insert(t.raw_blocks).values(data=block.frame, codec=rawcodec.ZSTD)
            ).inserted_primary_key
            if key is None:  # never: an INSERT of one row has its key
                raise StoreError("the database returned no key for a raw block")
            block_id = key[0]
            rows += [(sha, b"", rawcodec.BLOCK, block_id, i) for i, sha in enumerate(block.shas)]
        self.raw_lines.run(conn, rows)
        ids = source_ids(conn, {ln.path for ln in lines}, create=True)
        self.source_lines.run(
            conn, [(ids[ln.path], ln.line_no, ln.byte_offset, ln.sha256) for ln in lines]
        )

    def put_entries(
        self,
        conn: Connection,
        session_key: str,
        entries: Sequence[Entry],
        text_dict: rawcodec.TextDict | None = None,
    ) -> int:
        """Insert the rows, their media payloads (by SHA-256, idempotent) and their tool-call
        index, and their full-text index rows (``store.search``, issue 19). Each row's source
        path is stored as its ``source_paths`` number (revision 0030; a path not numbered yet
        is added); content frames are made with ``text_dict`` (revision 0032). A row whose
        (session, seq) exists raises ``IntegrityError``. Returns how many rows were stored
        with a ``content_z`` frame."""
        ids = source_ids(conn, {e.source.path for e in entries if e.source}, create=True)
        rows = [
            entry_row(session_key, e, ids[e.source.path] if e.source else None, text_dict)
            for e in entries
        ]
        self.entries.run(conn, rows)
        z = ENTRY_COLUMNS.index("content_z")
        self.search.put(conn, session_key, entries)
        media = {
            digest: (digest, data) for e in entries for digest, data in (e.payloads or {}).items()
        }
        self.media.run(conn, media.values())
        self._index_tool_calls(conn, session_key, entries)
        return sum(1 for row in rows if row[z] is not None)

    def _index_tool_calls(self, conn: Connection, key: str, entries: Sequence[Entry]) -> None:
        """Record where each call id's call and first result sit; a row seen earlier keeps its
        seqs and gains only the one it lacked. Ids are keyed as stored (``nul_free``): a NUL
        id and a U+FFFD id (a lone surrogate's replacement) are one stored id, and counting
        them as two made the insert fail with a UNIQUE conflict (issue 21's fuzzing)."""
        calls: dict[str, int] = {}
        results: dict[str, int] = {}
        for e in entries:
            for block in e.blocks:
                if isinstance(block, ToolCallBlock):
                    calls.setdefault(t.nul_free(block.id), e.seq)
                elif isinstance(block, ToolResultBlock):
                    results.setdefault(t.nul_free(block.call_id), e.seq)
        ids = list({*calls, *results})
        if not ids:
            return
        existing = self.tool_call_rows(conn, key, ids)
        inserts = []
        c = t.tool_calls.c
        for call_id in ids:
            have = existing.get(call_id)
            call_seq, result_seq = calls.get(call_id), results.get(call_id)
            if have is None:
                inserts.append((key, call_id, call_seq, result_seq))
                continue
            new_call = have.call_seq if have.call_seq is not None else call_seq
            new_result = have.result_seq if have.result_seq is not None else result_seq
            if (new_call, new_result) != (have.call_seq, have.result_seq):
                conn.execute(
                    update(t.tool_calls)
                    .where(and_(c.session_key == key, c.call_id == call_id))
                    .values(call_seq=new_call, result_seq=new_result)
                )
        self.tool_calls.run(conn, inserts)


__all__ = [
    "BulkInsert",
    "BulkWriter",
    "ENTRY_COLUMNS",
    "as_stored",
    "entry_row",
    "prepare",
    "source_ids",
]
