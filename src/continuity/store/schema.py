"""Table definitions (SQLAlchemy Core) used by the running code.

Migrations never import this module: each Alembic revision inlines the tables it creates
(style.md §3). ``tests/store/test_migrations.py`` checks that the head revision and this
metadata agree (no diff).

Over 600 lines: every table of the workspace is declared here, once, so that the metadata
the head revision is compared with is one object; each table is a short declaration with the
comment saying which issue and revision it serves, and splitting them by concern would only
spread that comparison over several modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    Table,
)
from sqlalchemy.types import TypeDecorator

from continuity.store.rows import COMPACTION_ROW, UNPAIRED_CALL, native_loaded, native_stored


def nul_free(value: Any) -> Any:
    """The one NUL rule of stored text: a ``str`` holding NUL (U+0000) gets U+FFFD in its place;
    any other value is returned as is. PostgreSQL's text type refuses NUL (SQLite stores it) and
    harness JSON can hold ``\\u0000``, so both backends store the same text; the raw line (bytes)
    keeps the original. Applied by ``_NulFree`` columns and by ``store.bulk``."""
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", "\ufffd")
    return value


class _NulFree(TypeDecorator):
    """Text that never carries NUL (``nul_free``)."""

    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return nul_free(value)


class Text(_NulFree):
    impl = sa.Text
    cache_ok = True


class String(_NulFree):
    impl = sa.String
    cache_ok = True


class NativeId(String):
    """A harness's id of a row or of its parent (``entries.native_id``, ``parent_native_id``):
    text in Python. On SQLite (revision 0034, issue 43 goal 2) a canonical UUID, Claude Code's
    ids, is stored as its 16 bytes and any other id as its text (``store.rows.native_stored``;
    36 characters became 16 bytes on 404,240 ids of ``bench/peers.py``'s 323 MB tree: 8 MB);
    PostgreSQL keeps the text. Either form goes through the NUL rule (``nul_free``). The one
    conversion of these ids: SQLAlchemy statements through this type, the bulk inserts and
    the import's look-up (``store.bulk``) through ``stored``, the ``sqlite3`` read path
    through ``store.rows.decode_entry``."""

    cache_ok = True

    @staticmethod
    def stored(value: Any, dialect_name: str) -> Any:
        """``value`` as ``dialect_name``'s database keeps it."""
        value = nul_free(value)
        return native_stored(value) if dialect_name == "sqlite" else value

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return self.stored(value, dialect.name)

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        return native_loaded(value)


class Sha256(TypeDecorator):
    """A raw line's SHA-256 digest (revision 0029, issue 43 goal 2): 64 lowercase hex
    characters in Python (``hashlib``'s ``hexdigest()``, what ``RawLine.sha256`` and
    ``SourceRef.raw_sha256`` hold), its 32 bytes in the database (BLOB on SQLite, bytea on
    PostgreSQL), half the size of the hex text in the row and in every index holding it.
    Binding a string that is not hex raises ``ValueError``; an empty string is stored as empty
    bytes and reads back empty. The one conversion of these keys: every SQLAlchemy statement
    and the bulk inserts (``store.bulk``, through ``stored``) go through it; the ``sqlite3``
    read path (``store.rows.decode_entry``) turns the bytes into hex itself."""

    impl = LargeBinary
    cache_ok = True

    @staticmethod
    def stored(value: str | None) -> bytes | None:
        """The stored form of the hex digest ``value`` (None stays None)."""
        return None if value is None else bytes.fromhex(value)

    def process_bind_param(self, value: Any, dialect: Any) -> Any:
        return self.stored(value)

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        return None if value is None else bytes(value).hex()


metadata = MetaData()

sessions = Table(
    "sessions",
    metadata,
    Column("session_key", String(200), primary_key=True),
    Column("agent_id", String(200), nullable=False),
    Column("harness", String(40), nullable=False),
    Column("project", Text),
    Column("source_path", Text),
    Column("title", Text),
    Column("started_at", DateTime(timezone=True)),
    Column("ended_at", DateTime(timezone=True)),
    Column("entry_count", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("forked_from", String(200)),  # revision 0015: a Codex fork's parent session
)
Index("ix_sessions_updated", sessions.c.updated_at)
Index("ix_sessions_project", sessions.c.project)  # revision 0012

entries = Table(
    "entries",
    metadata,
    Column("session_key", String(200), nullable=False),
    Column("seq", Integer, nullable=False),
    # revision 0030: no entry_id column (it is always "<session_key>:<seq>", store.rows)
    # revision 0034: a UUID as its 16 bytes on SQLite (``NativeId``)
    Column("native_id", NativeId(200)),
    Column("parent_native_id", NativeId(200)),
    Column("kind", String(20), nullable=False),
    Column("role", String(20), nullable=False),
    Column("type_name", String(100), nullable=False),
    Column("visible", Boolean, nullable=False),
    Column("base_visible", Boolean, nullable=False),
    Column("is_request", Boolean, nullable=False),
    Column("sidechain", Boolean, nullable=False),
    Column("ts", DateTime(timezone=True)),
    Column("cwd", Text),
    Column("content", Text, nullable=False),
    Column("meta", Text),
    Column("view_bytes", Integer, nullable=False),
    Column("line_no", Integer),
    Column("byte_offset", Integer),
    Column("raw_sha256", Sha256),  # revision 0029: 32 bytes, was 64 hex characters
    # revision 0024 (issue 43): a row's content JSON as a zstd frame where that pays
    # (``store.rawcodec.encode_text``); ``content`` is then empty
    Column("content_z", LargeBinary),
    # revision 0030 (issue 43 goal 2): the row's source file as ``source_paths.source_id``
    # (NULL: no source), where its path's text was on every row
    Column("source_id", Integer),
    # revision 0031 (issue 43 goals 1-2): the row's number, never reused (SQLite
    # ``AUTOINCREMENT``, a PostgreSQL sequence): on SQLite the declared alias of the table's
    # rowid (no byte of its own, kept by ``VACUUM``), and the key of the full-text index
    # (``store.search``) on both. Last, so a row's other columns keep their positions.
    Column(
        "entry_no",
        BigInteger().with_variant(Integer(), "sqlite"),
        primary_key=True,
        autoincrement=True,
    ),
    # revision 0033 (issue 43 goal 2): ``store.rows.native_hash`` of (session_key, native_id),
    # NULL for a row with no native id; the import finds a session's rows by native id through
    # its index, a fifth of the size of one of (session_key, native_id). After ``entry_no``:
    # where the revision's ADD COLUMN puts it.
    Column("native_hash", BigInteger),
    sqlite_autoincrement=True,
)
#: revision 0031: a row by (session, seq), every read of the log (the primary key before)
Index("ux_entries_session_seq", entries.c.session_key, entries.c.seq, unique=True)
#: Revision 0031's partial indexes state their condition for SQLite only (``sqlite_where``):
#: PostgreSQL has the same ones (the revision creates them), but ``postgresql_where`` here
#: would import PostgreSQL's dialect in every process that loads this module (about 35 ms of
#: start-up, issue 43 goal 3), and Alembic's comparison reads no condition on either backend;
#: ``tests/store/test_index_audit.py`` checks on both that each query seeks its index.
#:
#: the import's look-up of a session's rows by native id (``native_seqs``): only rows that
#: have one (revision 0031: Codex rows have none); revision 0033: by the 4-byte number of
#: (session_key, native_id), where the index of both held the two texts (19.8 MB of the
#: 320 MB bench tree's 232.7 MB database)
Index(
    "ix_entries_native_hash",
    entries.c.native_hash,
    sqlite_where=entries.c.native_hash.is_not(None),
)
#: revision 0031: a session's newest compaction (``latest_compaction``), the one query that
#: needs the kind; it replaced an index of every row by (session, kind, seq)
Index(
    "ix_entries_compaction",
    entries.c.session_key,
    entries.c.seq,
    sqlite_where=sa.text(COMPACTION_ROW),
)

#: Where each tool call and its first result sit. Revision 0031: on SQLite a ``WITHOUT
#: ROWID`` table (its key is the table: no second copy in an index), and the pairs of a tail
#: (``tool_calls_from``: a call or result at a seq or later) found by the result's seq, plus
#: the few calls not answered after them (no result yet, or a result written before the
#: call) by the call's seq.
tool_calls = Table(
    "tool_calls",
    metadata,
    Column("session_key", String(200), primary_key=True),
    Column("call_id", String(300), primary_key=True),
    Column("call_seq", Integer),
    Column("result_seq", Integer),
    sqlite_with_rowid=False,
)
#: ``tool_calls_from``'s first half: the pairs answered at or after a seq
Index("ix_tool_calls_result_seq", tool_calls.c.session_key, tool_calls.c.result_seq)
#: ``tool_calls_from``'s second half (its condition is the index's, word for word)
Index(
    "ix_tool_calls_unpaired",
    tool_calls.c.session_key,
    tool_calls.c.call_seq,
    sqlite_where=sa.text(UNPAIRED_CALL),
)

runs = Table(
    "runs",
    metadata,
    Column("run_id", String(300), primary_key=True),
    Column("session_key", String(200), nullable=False),
    Column("agent_id", String(200), nullable=False),
    Column("request_seq", Integer, nullable=False),
    Column("end_seq", Integer, nullable=False),
    Column("status", String(20), nullable=False),
    Column("started_at", DateTime(timezone=True)),
    Column("ended_at", DateTime(timezone=True)),
)
Index("ix_runs_session", runs.c.session_key, runs.c.agent_id, runs.c.request_seq)

notes = Table(
    "notes",
    metadata,
    Column("note_id", Integer, primary_key=True, autoincrement=True),
    Column("session_key", String(200), nullable=False),
    Column("text", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
Index("ix_notes_session", notes.c.session_key, notes.c.note_id)

sources = Table(
    "sources",
    metadata,
    Column("path", Text, primary_key=True),
    Column("session_key", String(200), nullable=False),
    Column("harness", String(40), nullable=False),
    Column("inode", Integer),
    Column("size", Integer, nullable=False),
    Column("offset", Integer, nullable=False),
    Column("line_count", Integer, nullable=False),
    Column("prefix_sha256", String(64), nullable=False),
    Column("reader_state", Text),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("gone_at", DateTime(timezone=True)),  # revision 0015: the file was found missing
    # revision 0017: the first seq whose checkpoints and transcript are still due (NULL: none)
    Column("pending_from", Integer),
)

#: Each kept line once, by the SHA-256 of its bytes. Revision 0029 (issue 43 goal 2): the
#: digest as its 32 bytes (``Sha256``), and on SQLite a ``WITHOUT ROWID`` table keyed by it
#: (the key is the table: no second copy of it in an index).
raw_lines = Table(
    "raw_lines",
    metadata,
    Column("sha256", Sha256, primary_key=True),
    Column("data", LargeBinary, nullable=False),
    # revision 0016: NULL = ``data`` is the line's bytes; 1 = a zstd frame of them
    # (``store.rawcodec``; the sha256 is always of the original bytes)
    Column("codec", SmallInteger),
    # revision 0022: codec 2 = the bytes are line ``block_index`` of ``raw_blocks`` row
    # ``block_id`` (``data`` empty)
    Column("block_id", Integer),
    Column("block_index", Integer),
    sqlite_with_rowid=False,
)

#: revision 0022 (issue 43): lines kept by block (``store.rawcodec``): a zstd frame of lines
#: joined by ``\n``.
raw_blocks = Table(
    "raw_blocks",
    metadata,
    Column("block_id", Integer, primary_key=True, autoincrement=True),
    Column("data", LargeBinary, nullable=False),
    Column("codec", SmallInteger, nullable=False),
)

#: revision 0032 (issue 43 goal 2): the dictionaries a store trained on its rows' content JSON
#: (``store.rawcodec.TextDict``), by zstd's dictionary id, which each frame made with one names
text_dicts = Table(
    "text_dicts",
    metadata,
    Column("dict_id", BigInteger, primary_key=True, autoincrement=False),
    Column("data", LargeBinary, nullable=False),
)

#: revision 0023 (issue 43: "store a source path once per file"): each source file's path
#: once, numbered; ``source_lines`` names its file by that number.
source_paths = Table(
    "source_paths",
    metadata,
    Column("source_id", Integer, primary_key=True, autoincrement=True),
    Column("path", Text, nullable=False),
)
Index("ux_source_paths_path", source_paths.c.path, unique=True)

#: Each kept line's position in its file as last read. Revision 0023: keyed by
#: ``source_paths.source_id`` instead of the path's text, and on SQLite a ``WITHOUT ROWID``
#: table (the key is the table: no second copy of it in an index).
source_lines = Table(
    "source_lines",
    metadata,
    Column("source_id", Integer, primary_key=True, autoincrement=False),
    Column("line_no", Integer, primary_key=True, autoincrement=False),
    Column("byte_offset", Integer, nullable=False),
    Column("raw_sha256", Sha256, nullable=False),  # revision 0029: 32 bytes
    sqlite_with_rowid=False,
)

#: What a read of ``entries`` selects (revision 0030), in ``store.rows.decode_entry``'s
#: order: the table's columns with ``source_id`` given as its path (``source_paths.path``,
#: labelled ``source_path``); select them from ``entries_with_paths(...)``.
ENTRY_READ: tuple[Any, ...] = tuple(
    source_paths.c.path.label("source_path") if c.name == "source_id" else c
    for c in entries.columns
    # revision 0031: the database's number, which no ``Entry`` holds; revision 0033: the
    # look-up number of the native id, which the id itself gives
    if c.name not in ("entry_no", "native_hash")
)


def entries_with_paths(from_: Any = None) -> Any:
    """``from_`` (default: ``entries``; a join that holds ``entries``) left-joined to
    ``source_paths`` by the row's ``source_id``, for a select of ``ENTRY_READ``."""
    return (entries if from_ is None else from_).outerjoin(
        source_paths, source_paths.c.source_id == entries.c.source_id
    )


#: revision 0025 (issue 43 goal 3, issue 44): each session's redacted title line, kept with
#: what it was computed from (``store.titles``); a cache, computed again when lost.
session_titles = Table(
    "session_titles",
    metadata,
    Column("session_key", String(200), primary_key=True),
    Column("own_sha256", String(64), nullable=False),
    Column("line_sha256", String(64), nullable=False),
    Column("entry_count", Integer, nullable=False),
    Column("line", Text, nullable=False),
)

#: revision 0028 (issue 43 goal 3): each session's secret values found by the session-wide
#: rule (``redaction.session``), kept with what they were computed from (``store.titles``); a
#: cache, computed again when lost. Local only: team sync never pushes it.
session_secrets = Table(
    "session_secrets",
    metadata,
    Column("session_key", String(200), primary_key=True),
    Column("own_sha256", String(64), nullable=False),
    Column("entry_count", Integer, nullable=False),
    Column("last_seq", Integer, nullable=False),
    Column("secrets", Text, nullable=False),
)

media = Table(
    "media",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("data", LargeBinary, nullable=False),
)

import_issues = Table(
    "import_issues",
    metadata,
    Column("issue_id", Integer, primary_key=True, autoincrement=True),
    Column("path", Text, nullable=False),
    Column("line_no", Integer, nullable=False),
    Column("byte_offset", Integer, nullable=False),
    Column("byte_length", Integer, nullable=False),
    Column("reason", Text, nullable=False),
    Column("raw_sha256", Sha256, nullable=False),  # revision 0029: 32 bytes
    Column("created_at", DateTime(timezone=True), nullable=False),
)
Index("ix_import_issues_path", import_issues.c.path, import_issues.c.line_no)

# ---------------------------------------------------------------------------- checkpoints (0002)

session_checkpoints = Table(
    "session_checkpoints",
    metadata,
    Column("checkpoint_id", Integer, primary_key=True, autoincrement=True),
    Column("session_key", String(200), nullable=False),
    Column("harness", String(40), nullable=False),
    Column("project", Text),
    Column("project_normalized", Text),
    Column("trigger", String(20), nullable=False),
    Column("digest", Text, nullable=False),
    Column("prompt_count", Integer, nullable=False),
    Column("memory_queries", Text, nullable=False),
    Column("recent_remembers", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
Index("ix_checkpoints_session", session_checkpoints.c.session_key, session_checkpoints.c.created_at)
Index(
    "ix_checkpoints_project",
    session_checkpoints.c.project_normalized,
    session_checkpoints.c.created_at,
)
Index("ix_checkpoints_created", session_checkpoints.c.created_at)

# ---------------------------------------------------------------------------- fencing (0003, 0004)

session_leases = Table(
    "session_leases",
    metadata,
    Column("session_key", String(200), primary_key=True),
    Column("owner", String(200), nullable=False),
    Column("token", Integer, nullable=False),
    Column("acquired_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)

refusal_receipts = Table(
    "refusal_receipts",
    metadata,
    Column("receipt_id", Integer, primary_key=True, autoincrement=True),
    Column("session_key", String(200), nullable=False),
    Column("run_id", String(300)),
    Column("reason", String(20), nullable=False),
    Column("token", Integer),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("detail", String(200)),  # revision 0020: which check failed (issue 45 item 7)
)
Index("ix_receipts_session", refusal_receipts.c.session_key, refusal_receipts.c.receipt_id)

# ---------------------------------------------------------------------------- transcripts (0005)

#: Seed 000's transcript index. Its ``content`` (the session's text) is kept in
#: ``session_transcript_parts`` since revision 0018 and read back whole by
#: ``Store.get_transcripts``, so this row holds only small columns.
session_transcripts = Table(
    "session_transcripts",
    metadata,
    Column("session_key", String(200), primary_key=True),
    Column("agent_id", String(200), primary_key=True),
    Column("harness", String(40), nullable=False),
    Column("project", Text),
    Column("content_hash", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("completed_at", DateTime(timezone=True)),
)
Index(
    "ix_transcripts_agent_completed",
    session_transcripts.c.agent_id,
    session_transcripts.c.completed_at,
)
Index(
    "ix_transcripts_agent_hash", session_transcripts.c.agent_id, session_transcripts.c.content_hash
)

#: Revision 0018 (issue 17): a ``session_transcripts`` row's text, in parts written once and
#: never updated: the text is the parts joined in ``part`` order (part 0 the text as first
#: written or last replaced, each later part an append starting with its ``"\n\n"``
#: separator); ``content_hash`` hashes the whole. An append inserts a part, a replace deletes
#: them and inserts part 0, so changing the small row never rewrites the text. Each part is
#: compressed as a raw line is (``store.rawcodec``): written once, read whole.
session_transcript_parts = Table(
    "session_transcript_parts",
    metadata,
    Column("agent_id", String(200), primary_key=True),
    Column("session_key", String(200), primary_key=True),
    Column("part", Integer, primary_key=True, autoincrement=False),
    # the part's UTF-8 text as ``store.rawcodec`` keeps it (a zstd frame where that pays)
    Column("data", LargeBinary, nullable=False),
    Column("codec", SmallInteger),
)

# ---------------------------------------------------------------------------- applied events (0013)

#: The hook events the daemon applied (issue 21: exactly once). A live turn's event id is
#: inserted in the transaction that adds the turn to its ``session_transcripts`` row, any other
#: event's once its handler returned; a spool replay skips the ids found here.
applied_events = Table(
    "applied_events",
    metadata,
    Column("event_id", String(64), primary_key=True),
    Column("applied_at", DateTime(timezone=True), nullable=False),
)

# ---------------------------------------------------------------------------- memories (0006)

memories = Table(
    "memories",
    metadata,
    Column("memory_id", String(64), primary_key=True),
    Column("content", Text, nullable=False),
    Column("content_hash", String(64), nullable=False),
    Column("type", String(40), nullable=False),
    Column("tags", Text, nullable=False),
    Column("importance", Float, nullable=False),
    Column("source_id", String(200)),
    Column("agent_id", String(200), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
Index("ux_memories_hash", memories.c.agent_id, memories.c.content_hash, unique=True)
Index("ix_memories_source", memories.c.source_id)

# ---------------------------------------------------------------------------- vectors (0019)

#: issue 40: the embedding of each entry under one model (``store.vectors``). ``vector_id``
#: grows with every insert (never reused: SQLite ``AUTOINCREMENT``; on PostgreSQL writers of
#: vectors are serialised, so ids are committed in order) and is how the in-memory index
#: reads only what is new; ``vector``: float32 little-endian bytes, or b"" for a row with
#: nothing to embed (so it is not scanned again).
entry_vectors = Table(
    "entry_vectors",
    metadata,
    Column("vector_id", Integer, primary_key=True, autoincrement=True),
    Column("model", String(100), nullable=False),
    Column("session_key", String(200), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("vector", LargeBinary, nullable=False),
    sqlite_autoincrement=True,
)
Index(
    "ux_entry_vectors",
    entry_vectors.c.model,
    entry_vectors.c.session_key,
    entry_vectors.c.seq,
    unique=True,
)
Index("ix_entry_vectors_id", entry_vectors.c.model, entry_vectors.c.vector_id)

#: issue 40: the embedding of each memory under one model (as ``entry_vectors``).
memory_vectors = Table(
    "memory_vectors",
    metadata,
    Column("vector_id", Integer, primary_key=True, autoincrement=True),
    Column("model", String(100), nullable=False),
    Column("memory_id", String(64), nullable=False),
    Column("vector", LargeBinary, nullable=False),
    sqlite_autoincrement=True,
)
Index("ux_memory_vectors", memory_vectors.c.model, memory_vectors.c.memory_id, unique=True)
Index("ix_memory_vectors_id", memory_vectors.c.model, memory_vectors.c.vector_id)

# ---------------------------------------------------------------------------- lineage (0008, 0009, 0010)

thread_heads = Table(
    "thread_heads",
    metadata,
    Column("agent_id", String(200), primary_key=True),
    Column("thread_key", String(500), primary_key=True),
    Column("label", Text, nullable=False),
    Column("project", Text),
    Column("session_key", String(200), nullable=False),
    Column("harness", String(40), nullable=False),
    Column("source_type", String(20), nullable=False),
    Column("source_ref", Text),
    Column("node_id", String(300), nullable=False),
    Column("sample", Text, nullable=False),
    Column("open_items", Text, nullable=False),
    Column("latest_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)
Index("ix_thread_heads_latest", thread_heads.c.agent_id, thread_heads.c.latest_at)

dag_nodes = Table(
    "dag_nodes",
    metadata,
    Column("node_id", String(300), primary_key=True),
    Column("agent_id", String(200), nullable=False),
    Column("kind", String(20), nullable=False),
    Column("label", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("project", Text),
    Column("session_key", String(200)),
    Column("thread_key", String(500)),
    Column("harness", String(40)),
    Column("source_ref", Text),
    Column("earliest_at", DateTime(timezone=True)),
    Column("latest_at", DateTime(timezone=True)),
    Column("meta", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)
Index("ix_dag_nodes_latest", dag_nodes.c.agent_id, dag_nodes.c.latest_at)
Index("ix_dag_nodes_thread", dag_nodes.c.agent_id, dag_nodes.c.thread_key)
Index("ix_dag_nodes_session", dag_nodes.c.session_key)

dag_edges = Table(
    "dag_edges",
    metadata,
    Column("src_id", String(300), primary_key=True),
    Column("dst_id", String(300), primary_key=True),
    Column("kind", String(20), primary_key=True),
    Column("agent_id", String(200), nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
)
Index("ix_dag_edges_dst", dag_edges.c.dst_id)


def upsert_insert(dialect: str, table: Table) -> Any:
    """An ``INSERT`` of ``table`` with ``on_conflict_do_*`` (SQLite's or PostgreSQL's own
    ``insert``), for ``dialect`` ``"sqlite"`` or ``"postgresql"``. The dialect module is
    imported here, on first use: importing ``sqlalchemy.dialects.postgresql`` costs a process
    on SQLite about 35 ms (issue 17, goal 5: CLI start)."""
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    else:
        from sqlalchemy.dialects.postgresql import insert
    return insert(table)


def upsert_replace(dialect: str, table: Table, keys: Sequence[str]) -> Any:
    """``upsert_insert`` of ``table`` that, on a conflict on the columns ``keys``, replaces
    every other column with the inserted row's (insert or replace, one statement)."""
    stmt = upsert_insert(dialect, table)
    return stmt.on_conflict_do_update(
        index_elements=list(keys),
        set_={c.name: stmt.excluded[c.name] for c in table.columns if c.name not in keys},
    )


def _graph_keys(*names: str) -> list[Column]:
    """The text primary-key columns ``names`` of a LangGraph table (ids of any length)."""
    return [Column(name, Text, primary_key=True) for name in names]


# ---------------------------------------------------------------------------- LangGraph (0021)

#: issue 46 item 2: the LangGraph adapter's checkpoints (``store.langgraph``,
#: ``continuity.adapters.langgraph``). A checkpoint without its channel values, and its
#: metadata, as LangGraph's serde wrote them (type name, bytes); ``run_id`` from the metadata.
langgraph_checkpoints = Table(
    "langgraph_checkpoints",
    metadata,
    *_graph_keys("thread_id", "checkpoint_ns", "checkpoint_id"),
    Column("parent_checkpoint_id", Text),
    Column("run_id", Text),
    Column("checkpoint_type", String(40), nullable=False),
    Column("checkpoint", LargeBinary, nullable=False),
    Column("metadata_type", String(40), nullable=False),
    Column("metadata", LargeBinary, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
Index("ix_langgraph_checkpoints_run", langgraph_checkpoints.c.run_id)

#: one channel's value at one version (``blob_type`` "empty": the channel had no value)
langgraph_blobs = Table(
    "langgraph_blobs",
    metadata,
    *_graph_keys("thread_id", "checkpoint_ns", "channel", "version"),
    Column("blob_type", String(40), nullable=False),
    Column("blob", LargeBinary, nullable=False),
)

#: a task's pending write against one checkpoint; ``idx`` its place in the task's writes, or
#: LangGraph's negative index of a special write (error, interrupt, ...)
langgraph_writes = Table(
    "langgraph_writes",
    metadata,
    *_graph_keys("thread_id", "checkpoint_ns", "checkpoint_id", "task_id"),
    Column("idx", Integer, primary_key=True, autoincrement=False),
    Column("channel", Text, nullable=False),
    Column("task_path", Text, nullable=False),
    Column("value_type", String(40), nullable=False),
    Column("value", LargeBinary, nullable=False),
)

#: a LangGraph ``BaseStore`` item: namespace labels joined by ".", the value as serde wrote
#: it, and the continuity memory holding its text (``memory_id``, NULL: nothing indexed)
langgraph_store_items = Table(
    "langgraph_store_items",
    metadata,
    *_graph_keys("namespace", "item_key"),
    Column("value_type", String(40), nullable=False),
    Column("value", LargeBinary, nullable=False),
    Column("memory_id", String(64)),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)
Index("ix_langgraph_store_items_memory", langgraph_store_items.c.memory_id)

# ---------------------------------------------------------------------------- team sync (0026)

#: issue 41: a watermark per table of what ``continuity sync`` pushed to team store
#: ``team_store`` (its id): ``sessions`` (an ISO ``updated_at``), ``checkpoints`` (an id).
team_marks = Table(
    "team_marks",
    metadata,
    Column("team_store", String(64), primary_key=True),
    Column("name", String(40), primary_key=True),
    Column("mark", Text, nullable=False),
)

#: issue 41: per session, the last seq pushed, the digest of the session-wide secrets the
#: pushed rows were redacted with (another digest: every row again) and how many of the rows
#: through that seq were visible when the session's push ended (NULL: a push was cut short;
#: another count: rows moved on or off the conversation path, every row again).
team_pushed = Table(
    "team_pushed",
    metadata,
    Column("team_store", String(64), primary_key=True),
    Column("session_key", String(200), primary_key=True),
    Column("pushed_seq", Integer, nullable=False),
    Column("secrets_sha", String(64), nullable=False),
    Column("visible_rows", Integer),
    Column("pushed_at", DateTime(timezone=True), nullable=False),
)

#: issue 41: the team's session index as last pulled (``sessions --team``).
team_index = Table(
    "team_index",
    metadata,
    Column("team_store", String(64), primary_key=True),
    Column("owner", String(200), primary_key=True),
    Column("machine", String(200), primary_key=True),
    Column("session_key", String(200), primary_key=True),
    Column("author", Text, nullable=False),
    Column("project", Text, nullable=False),
    Column("harness", String(40), nullable=False),
    Column("title", Text),
    Column("started_at", DateTime(timezone=True)),
    Column("ended_at", DateTime(timezone=True)),
    Column("entry_count", Integer, nullable=False),
    Column("pushed_at", DateTime(timezone=True), nullable=False),
)

# ---------------------------------------------------------------------------- forget (0027)

#: issue 41 item 2: one tombstone per session ``continuity forget`` deleted: its key, the
#: ``--pattern`` that found it (NULL: by key) and when. An import never stores a forgotten
#: session again; ``continuity sync`` deletes this machine's copy of it in the team store.
forgotten = Table(
    "forgotten",
    metadata,
    Column("forget_id", Integer, primary_key=True, autoincrement=True),
    Column("session_key", String(200), nullable=False),
    Column("pattern", Text),
    Column("forgotten_at", DateTime(timezone=True), nullable=False),
    sqlite_autoincrement=True,
)
Index("ix_forgotten_session", forgotten.c.session_key)

#: issue 41 item 4: a teammate's session pulled into this workspace (``resume`` of a session
#: only the team store holds): the copy's key here, where it came from (team store, owner,
#: machine, key) and its author. ``continuity sync`` never pushes a copy as this member's own.
team_copies = Table(
    "team_copies",
    metadata,
    Column("session_key", String(200), primary_key=True),
    Column("team_store", String(64), nullable=False),
    Column("owner", String(200), nullable=False),
    Column("machine", String(200), nullable=False),
    Column("original_key", String(200), nullable=False),
    Column("author", Text, nullable=False),
    Column("pulled_at", DateTime(timezone=True), nullable=False),
)
