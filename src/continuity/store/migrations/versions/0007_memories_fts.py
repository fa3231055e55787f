"""0007 memories full-text search: the index behind ``continuity.transcripts.memories`` (issue 5).

Why: ``recall`` ranks memories by full-text relevance, and a LIKE scan over 100,000 memories misses
the 10 ms goal and cannot rank. The two dialects index differently, so this revision branches on
``op.get_bind().dialect.name``:

- **SQLite**: an FTS5 table ``memories_fts(memory_id UNINDEXED, content)`` with the
  ``porter unicode61 remove_diacritics 2`` tokenizer (English stemming, case and accents folded),
  ranked with BM25. It holds its own copy of the text rather than being external-content over
  ``memories``: that would key it by the implicit rowid of ``memories``, which has no INTEGER
  PRIMARY KEY, so ``VACUUM`` could renumber rows and silently point the index at other memories.
  Three triggers keep it equal to ``memories`` (insert, delete, update of content). Deleting
  finds the row by the unindexed ``memory_id`` (a scan of the FTS table; memories are deleted
  rarely). A later revision that rebuilds ``memories`` with ``batch_alter_table`` drops these
  triggers and must create them again.
- **PostgreSQL**: a GIN expression index ``ix_memories_content_fts`` on
  ``to_tsvector('english', content)``, ranked with ``ts_rank`` (length-normalised). No column is
  added, so ``store.schema`` stays dialect-neutral; queries must use the same expression.

Old rows: the SQLite table is filled from existing memories in the same step (it is an index,
created full like any ``CREATE INDEX``); PostgreSQL builds the index over existing rows itself.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_SQLITE_UP = [
    "CREATE VIRTUAL TABLE memories_fts USING fts5("
    "memory_id UNINDEXED, content, tokenize = 'porter unicode61 remove_diacritics 2')",
    "INSERT INTO memories_fts (memory_id, content) SELECT memory_id, content FROM memories",
    "CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN "
    "INSERT INTO memories_fts (memory_id, content) VALUES (new.memory_id, new.content); END",
    "CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN "
    "DELETE FROM memories_fts WHERE memory_id = old.memory_id; END",
    "CREATE TRIGGER memories_fts_au AFTER UPDATE OF memory_id, content ON memories BEGIN "
    "DELETE FROM memories_fts WHERE memory_id = old.memory_id; "
    "INSERT INTO memories_fts (memory_id, content) VALUES (new.memory_id, new.content); END",
]
_SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS memories_fts_au",
    "DROP TRIGGER IF EXISTS memories_fts_ad",
    "DROP TRIGGER IF EXISTS memories_fts_ai",
    "DROP TABLE IF EXISTS memories_fts",
]
_PG_UP = [
    "CREATE INDEX ix_memories_content_fts ON memories "
    "USING GIN (to_tsvector('english'::regconfig, content))"
]
_PG_DOWN = ["DROP INDEX IF EXISTS ix_memories_content_fts"]


def _run(statements: list[str]) -> None:
    for statement in statements:
        op.execute(statement)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        _run(_SQLITE_UP)
    elif dialect == "postgresql":
        _run(_PG_UP)
    else:  # pragma: no cover - other dialects are not supported
        raise NotImplementedError(f"no full-text index for dialect {dialect!r}")


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    _run(_SQLITE_DOWN if dialect == "sqlite" else _PG_DOWN)
