"""0014 entries full-text index: ``continuity search`` over every entry of every session
(issue 19).

Why: finding "where did I solve this before" across sessions needs a ranked text index of the
rows themselves; a LIKE scan over a million rows cannot rank and takes seconds. The index
(``continuity.store.search``) is written by ``bulk.BulkWriter.put_entries`` in the same
transaction as the rows; this revision creates it and indexes the rows already stored, in
batches of 1,000 (``entry_body`` of each row, the same text new rows get).

- **SQLite**: ``entries_fts_rows(search_id INTEGER PRIMARY KEY, session_key, seq)`` with a
  unique index on (session_key, seq), and the contentless FTS5 table ``entries_fts(body,
  tools)`` keyed by ``search_id`` (tokenizer as recall's ``memories_fts``).
- **PostgreSQL**: ``entries_fts(session_key, seq, tools, doc tsvector)``, primary key
  (session_key, seq), GIN index ``ix_entries_fts_doc`` on ``doc``.

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import orjson
from alembic import op
from sqlalchemy import text

from continuity.core.codec import blocks_from_json
from continuity.core.model import CompactionInfo, Entry, EntryKind, Role
from continuity.store.fts import search_text
from continuity.store.search import entry_body, entry_tools, pg_words

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_BATCH = 1_000
_SQLITE_UP = [
    "CREATE TABLE entries_fts_rows (search_id INTEGER PRIMARY KEY, session_key TEXT NOT NULL, "
    "seq INTEGER NOT NULL)",
    "CREATE UNIQUE INDEX ux_entries_fts_rows ON entries_fts_rows (session_key, seq)",
    "CREATE VIRTUAL TABLE entries_fts USING fts5(body, tools, content='', "
    "tokenize = 'porter unicode61 remove_diacritics 2')",
]
_PG_UP = [
    "CREATE TABLE entries_fts (session_key VARCHAR(200) NOT NULL, seq INTEGER NOT NULL, "
    "tools TEXT NOT NULL, doc TSVECTOR NOT NULL, PRIMARY KEY (session_key, seq))",
    "CREATE INDEX ix_entries_fts_doc ON entries_fts USING GIN (doc)",
]


def _entry(kind: str, role: str, content: str, meta: str | None) -> Entry:
    summary = (orjson.loads(meta).get("compaction") or {}).get("summary") if meta else None
    return Entry(
        kind=EntryKind(kind),
        role=Role(role),
        blocks=blocks_from_json(content),
        compaction=CompactionInfo(summary=summary) if summary else None,
    )


def _backfill(sqlite: bool) -> None:
    conn = op.get_bind()
    rows = conn.execute(
        text(
            "SELECT session_key, seq, kind, role, content, meta FROM entries "
            "ORDER BY session_key, seq"
        )
    )
    search_id = 0
    while batch := rows.fetchmany(_BATCH):
        docs = []
        for key, seq, kind, role, content, meta in batch:
            e = _entry(kind, role, content, meta)
            docs.append(
                (key, seq, search_text(entry_body(e)).replace("\x00", "\ufffd"), entry_tools(e, {}))
            )
        if sqlite:
            ids = range(search_id + 1, search_id + 1 + len(docs))
            conn.execute(
                text(
                    "INSERT INTO entries_fts_rows (search_id, session_key, seq) VALUES (:i, :k, :s)"
                ),
                [{"i": i, "k": k, "s": s} for i, (k, s, _, _) in zip(ids, docs, strict=True)],
            )
            conn.execute(
                text("INSERT INTO entries_fts (rowid, body, tools) VALUES (:i, :b, :t)"),
                [{"i": i, "b": b, "t": tl} for i, (_, _, b, tl) in zip(ids, docs, strict=True)],
            )
            search_id += len(docs)
        else:
            conn.execute(
                text(
                    "INSERT INTO entries_fts (session_key, seq, tools, doc) VALUES "
                    "(:k, :s, :t, to_tsvector('english'::regconfig, :b))"
                ),
                [{"k": k, "s": s, "t": tl, "b": pg_words(b)} for k, s, b, tl in docs],
            )


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect not in ("sqlite", "postgresql"):  # pragma: no cover - not supported
        raise NotImplementedError(f"no full-text index for dialect {dialect!r}")
    for statement in _SQLITE_UP if dialect == "sqlite" else _PG_UP:
        op.execute(statement)
    _backfill(dialect == "sqlite")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS entries_fts")
        op.execute("DROP TABLE IF EXISTS entries_fts_rows")
    else:
        op.execute("DROP TABLE IF EXISTS entries_fts")
