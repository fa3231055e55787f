"""0031 index audit: only the indexes a query uses (issue 43 goals 1 and 2).

Why: on a 50 MB tree of ``bench/peers.py`` (33,805 rows) the secondary structures of
``entries`` and ``tool_calls`` took 15.9 of 63.8 MB, each written on every import. Every
query of the store, browse, continuation, resume, daemon, CLI and team code was run under
``EXPLAIN QUERY PLAN`` (``bench/README.md``, "Index audit"); what each structure serves:

- ``entries_fts_rows`` (3.5 MB with its unique index) named the row behind each document of
  the full-text index. The index is now keyed by ``entries.entry_no``, a new column: on
  SQLite the declared alias of the table's rowid (no byte of its own, and kept by ``VACUUM``,
  which may renumber an implicit rowid), ``AUTOINCREMENT`` so that a number whose words a
  forgotten session left in the contentless index (it cannot delete them) is never given to
  a new row, which a search for the forgotten words then found (the numbers were max + 1);
  on PostgreSQL a ``BIGSERIAL`` primary key, the key of ``entries_fts`` there instead of
  (session_key, seq). (session_key, seq) becomes the unique index ``ux_entries_session_seq``.
- ``ix_entries_kind`` (session_key, kind, seq) on every row (2.2 MB) served one query:
  a session's newest compaction. It is replaced by ``ix_entries_compaction``, the same over
  compaction rows only. (The sum of the view bytes after a seq reads those rows through
  (session_key, seq).)
- ``ix_entries_native`` (session_key, native_id) serves the import's look-up by native id; it
  now holds only rows that have one (a Codex row has none).
- ``tool_calls`` kept its key twice (the rowid table and its primary-key index): on SQLite it
  is now a ``WITHOUT ROWID`` table. Its two seq indexes served one query, the pairs of a tail
  (a call or result at a seq or later); it is now answered by ``ix_tool_calls_result_seq``
  and the small ``ix_tool_calls_unpaired`` (calls without a result after them).

SQLite rebuilds ``entries`` with the columns it has (read from the table, so a revision that
changed other columns before this one is kept as it is), each row's ``entry_no`` its search
id, so the full-text index is kept as it is; a workspace that forgot a session has its
index built again, which drops the forgotten words (their ids may have been reused).

Revision ID: 0031
Revises: 0028
"""

from __future__ import annotations

from typing import Any

import orjson
from alembic import op
from sqlalchemy import text

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None

_BATCH = 1_000
_COMPACTION = "kind = 'compaction'"
_UNPAIRED = "result_seq IS NULL OR result_seq < call_seq"
#: entries' indexes this revision replaces (the others are created again as they were)
_REPLACED = ("ix_entries_kind", "ix_entries_native", "ix_entries_compaction")


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _columns(conn: Any, table: str) -> list[tuple[str, str]]:
    """``(name, definition)`` of each column of ``table`` as SQLite holds it."""
    out = []
    for _cid, name, kind, notnull, default, _pk in conn.exec_driver_sql(
        f"PRAGMA table_info({_q(table)})"
    ):
        spec = f"{_q(name)} {kind}" + (" NOT NULL" if notnull else "")
        out.append((name, spec + (f" DEFAULT {default}" if default is not None else "")))
    return out


def _indexes(conn: Any, table: str, leave: tuple[str, ...]) -> list[str]:
    """The ``CREATE INDEX`` statements of ``table``'s own indexes but ``leave``."""
    return [
        sql
        for name, sql in conn.exec_driver_sql(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
            "AND sql IS NOT NULL",
            (table,),
        )
        if name not in leave
    ]


def _index_rows(conn: Any, after: int) -> None:
    """Index the rows of ``entries`` numbered above ``after`` in ``entries_fts`` (SQLite) by
    their ``entry_no``, as ``store.search.SearchIndexWriter`` does, in (session, seq) order; a
    result's tool name is that of its call stored before it in the session."""
    if (
        conn.exec_driver_sql("SELECT 1 FROM entries WHERE entry_no > ? LIMIT 1", (after,)).first()
        is None
    ):
        return  # one seek: nothing to read
    from continuity.core.codec import blocks_from_json
    from continuity.core.model import CompactionInfo, Entry, EntryKind, Role, ToolCallBlock
    from continuity.store.fts import search_text
    from continuity.store.rawcodec import decode_text
    from continuity.store.search import entry_body, entry_tools

    rows = conn.exec_driver_sql(
        "SELECT entry_no, session_key, kind, role, content, content_z, meta FROM entries "
        "WHERE entry_no > ? ORDER BY session_key, seq",
        (after,),
    )
    session, names = None, {}
    while batch := rows.fetchmany(_BATCH):
        docs = []
        for entry_no, key, kind, role, content, content_z, meta in batch:
            if key != session:
                session, names = key, {}
            if content_z is not None:
                content = decode_text(bytes(content_z))
            summary = (orjson.loads(meta).get("compaction") or {}).get("summary") if meta else None
            e = Entry(
                kind=EntryKind(kind),
                role=Role(role),
                blocks=blocks_from_json(content),
                compaction=CompactionInfo(summary=summary) if summary else None,
            )
            names.update((b.id, b.name) for b in e.blocks if isinstance(b, ToolCallBlock))
            body = search_text(entry_body(e)).replace("\x00", "\ufffd")
            docs.append((entry_no, body, entry_tools(e, names)))
        conn.exec_driver_sql("INSERT INTO entries_fts (rowid, body, tools) VALUES (?, ?, ?)", docs)


def _sqlite_entries_up(conn: Any) -> None:
    columns = _columns(conn, "entries")
    kept = _indexes(conn, "entries", _REPLACED)
    names = ", ".join(_q(n) for n, _ in columns)
    from_e = ", ".join(f"e.{_q(n)}" for n, _ in columns)
    conn.exec_driver_sql(
        "CREATE TABLE entries_0031 ("
        + ", ".join(spec for _, spec in columns)
        + ", entry_no INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT)"
    )
    # each row keeps its search id, so the full-text index stays as it is
    conn.exec_driver_sql(
        f"INSERT INTO entries_0031 ({names}, entry_no) SELECT {from_e}, r.search_id "
        "FROM entries AS e JOIN entries_fts_rows AS r "
        "ON r.session_key = e.session_key AND r.seq = e.seq ORDER BY r.search_id"
    )
    # never a number the index holds words of (a forgotten session's included)
    top = conn.exec_driver_sql(
        "SELECT max(coalesce((SELECT max(id) FROM entries_fts_docsize), 0), "
        "coalesce((SELECT max(entry_no) FROM entries_0031), 0))"
    ).scalar()
    if top:
        done = conn.exec_driver_sql(
            "UPDATE sqlite_sequence SET seq = ? WHERE name = 'entries_0031'", (top,)
        ).rowcount
        if not done:
            conn.exec_driver_sql(
                "INSERT INTO sqlite_sequence (name, seq) VALUES ('entries_0031', ?)", (top,)
            )
    conn.exec_driver_sql(
        f"INSERT INTO entries_0031 ({names}) SELECT {from_e} FROM entries AS e "
        "WHERE NOT EXISTS (SELECT 1 FROM entries_fts_rows AS r "
        "WHERE r.session_key = e.session_key AND r.seq = e.seq) ORDER BY e.session_key, e.seq"
    )
    conn.exec_driver_sql("DROP TABLE entries")
    conn.exec_driver_sql("DROP TABLE entries_fts_rows")
    conn.exec_driver_sql("ALTER TABLE entries_0031 RENAME TO entries")
    for sql in [
        "CREATE UNIQUE INDEX ux_entries_session_seq ON entries (session_key, seq)",
        *kept,
        "CREATE INDEX ix_entries_native ON entries (session_key, native_id) "
        "WHERE native_id IS NOT NULL",
        f"CREATE INDEX ix_entries_compaction ON entries (session_key, seq) WHERE {_COMPACTION}",
    ]:
        conn.exec_driver_sql(sql)
    if conn.exec_driver_sql("SELECT 1 FROM forgotten LIMIT 1").first() is not None:
        # a forgotten session's words may name rows written after it: index every row again
        conn.exec_driver_sql("INSERT INTO entries_fts (entries_fts) VALUES ('delete-all')")
        _index_rows(conn, 0)
    else:  # the rows the index lacked (none expected: it is written with the rows)
        _index_rows(conn, int(top or 0))


def _sqlite_tool_calls(conn: Any, *, rowid: bool) -> None:
    """Rebuild ``tool_calls`` as a rowid table (``rowid``, before 0031) or ``WITHOUT
    ROWID``, with that revision's indexes."""
    conn.exec_driver_sql(
        "CREATE TABLE tool_calls_0031 (session_key VARCHAR(200) NOT NULL, "
        "call_id VARCHAR(300) NOT NULL, call_seq INTEGER, result_seq INTEGER, "
        "PRIMARY KEY (session_key, call_id))" + ("" if rowid else " WITHOUT ROWID")
    )
    conn.exec_driver_sql(
        "INSERT INTO tool_calls_0031 (session_key, call_id, call_seq, result_seq) "
        "SELECT session_key, call_id, call_seq, result_seq FROM tool_calls "
        "ORDER BY session_key, call_id"
    )
    conn.exec_driver_sql("DROP TABLE tool_calls")
    conn.exec_driver_sql("ALTER TABLE tool_calls_0031 RENAME TO tool_calls")
    conn.exec_driver_sql(
        "CREATE INDEX ix_tool_calls_result_seq ON tool_calls (session_key, result_seq)"
    )
    conn.exec_driver_sql(
        "CREATE INDEX ix_tool_calls_call_seq ON tool_calls (session_key, call_seq)"
        if rowid
        else f"CREATE INDEX ix_tool_calls_unpaired ON tool_calls (session_key, call_seq) "
        f"WHERE {_UNPAIRED}"
    )


_PG_UP = [
    # entries: numbered rows, (session_key, seq) a unique index
    "ALTER TABLE entries ADD COLUMN entry_no BIGSERIAL NOT NULL",
    "ALTER TABLE entries DROP CONSTRAINT entries_pkey",
    "ALTER TABLE entries ADD CONSTRAINT entries_pkey PRIMARY KEY (entry_no)",
    "CREATE UNIQUE INDEX ux_entries_session_seq ON entries (session_key, seq)",
    # the full-text index keyed by entry_no
    "CREATE TABLE entries_fts_0031 AS SELECT e.entry_no, f.tools, f.doc FROM entries_fts AS f "
    "JOIN entries AS e ON e.session_key = f.session_key AND e.seq = f.seq",
    "DROP TABLE entries_fts",
    "ALTER TABLE entries_fts_0031 RENAME TO entries_fts",
    "ALTER TABLE entries_fts ALTER COLUMN entry_no SET NOT NULL, "
    "ALTER COLUMN tools SET NOT NULL, ALTER COLUMN doc SET NOT NULL",
    "ALTER TABLE entries_fts ADD CONSTRAINT entries_fts_pkey PRIMARY KEY (entry_no)",
    "CREATE INDEX ix_entries_fts_doc ON entries_fts USING GIN (doc)",
    # the narrower indexes
    "DROP INDEX ix_entries_kind",
    "DROP INDEX ix_entries_native",
    "CREATE INDEX ix_entries_native ON entries (session_key, native_id) "
    "WHERE native_id IS NOT NULL",
    f"CREATE INDEX ix_entries_compaction ON entries (session_key, seq) WHERE {_COMPACTION}",
    "DROP INDEX ix_tool_calls_call_seq",
    f"CREATE INDEX ix_tool_calls_unpaired ON tool_calls (session_key, call_seq) WHERE {_UNPAIRED}",
]

_PG_DOWN = [
    "DROP INDEX ix_tool_calls_unpaired",
    "CREATE INDEX ix_tool_calls_call_seq ON tool_calls (session_key, call_seq)",
    "DROP INDEX ix_entries_compaction",
    "DROP INDEX ix_entries_native",
    "CREATE INDEX ix_entries_native ON entries (session_key, native_id)",
    "CREATE INDEX ix_entries_kind ON entries (session_key, kind, seq)",
    "CREATE TABLE entries_fts_0014 AS SELECT e.session_key, e.seq, f.tools, f.doc "
    "FROM entries_fts AS f JOIN entries AS e ON e.entry_no = f.entry_no",
    "DROP TABLE entries_fts",
    "ALTER TABLE entries_fts_0014 RENAME TO entries_fts",
    "ALTER TABLE entries_fts ALTER COLUMN session_key SET NOT NULL, "
    "ALTER COLUMN seq SET NOT NULL, ALTER COLUMN tools SET NOT NULL, "
    "ALTER COLUMN doc SET NOT NULL",
    "ALTER TABLE entries_fts ADD CONSTRAINT entries_fts_pkey PRIMARY KEY (session_key, seq)",
    "CREATE INDEX ix_entries_fts_doc ON entries_fts USING GIN (doc)",
    "DROP INDEX ux_entries_session_seq",
    "ALTER TABLE entries DROP CONSTRAINT entries_pkey",
    "ALTER TABLE entries ADD CONSTRAINT entries_pkey PRIMARY KEY (session_key, seq)",
    "ALTER TABLE entries DROP COLUMN entry_no",
]


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        _sqlite_entries_up(conn)
        _sqlite_tool_calls(conn, rowid=False)
    else:
        for statement in _PG_UP:
            conn.execute(text(statement))


def _sqlite_entries_down(conn: Any) -> None:
    columns = [(n, spec) for n, spec in _columns(conn, "entries") if n != "entry_no"]
    kept = _indexes(conn, "entries", (*_REPLACED, "ux_entries_session_seq"))
    names = ", ".join(_q(n) for n, _ in columns)
    conn.exec_driver_sql(
        "CREATE TABLE entries_0028 ("
        + ", ".join(spec for _, spec in columns)
        + ", PRIMARY KEY (session_key, seq))"
    )
    conn.exec_driver_sql(
        f"INSERT INTO entries_0028 ({names}) SELECT {names} FROM entries ORDER BY entry_no"
    )
    conn.exec_driver_sql(
        "CREATE TABLE entries_fts_rows (search_id INTEGER PRIMARY KEY, "
        "session_key TEXT NOT NULL, seq INTEGER NOT NULL)"
    )
    conn.exec_driver_sql(
        "INSERT INTO entries_fts_rows (search_id, session_key, seq) "
        "SELECT entry_no, session_key, seq FROM entries ORDER BY entry_no"
    )
    conn.exec_driver_sql("DROP TABLE entries")
    conn.exec_driver_sql("DELETE FROM sqlite_sequence WHERE name = 'entries'")
    conn.exec_driver_sql("ALTER TABLE entries_0028 RENAME TO entries")
    for sql in [
        "CREATE UNIQUE INDEX ux_entries_fts_rows ON entries_fts_rows (session_key, seq)",
        *kept,
        "CREATE INDEX ix_entries_native ON entries (session_key, native_id)",
        "CREATE INDEX ix_entries_kind ON entries (session_key, kind, seq)",
    ]:
        conn.exec_driver_sql(sql)


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        _sqlite_tool_calls(conn, rowid=True)
        _sqlite_entries_down(conn)
    else:
        for statement in _PG_DOWN:
            conn.execute(text(statement))
