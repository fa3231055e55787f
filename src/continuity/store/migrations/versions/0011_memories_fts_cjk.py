"""0011 memories full-text index segments CJK text: a word inside Chinese, Japanese or Korean
text is found (issue 5).

Why: SQLite's ``unicode61`` tokenizer and PostgreSQL's parser make an unbroken run of CJK
characters one token, so recalling a word inside such a run found nothing. The index now holds
``continuity.store.fts.search_text(content)`` (a space around every CJK character; other text
unchanged) and queries match a CJK term as the phrase of its characters. One concern, the index
of revision 0007, on each dialect:

- **SQLite**: the insert trigger ``memories_fts_ai`` is dropped: ``insert_memory`` writes the FTS
  row itself with the segmented text (SQLite has no way to run ``search_text`` in a trigger
  without an application function every connection would need). The delete trigger stays; the
  update trigger stays too and indexes the raw new text (continuity never updates a memory's
  content; an outside UPDATE stays searchable, CJK runs in it as one token). Existing rows are
  re-indexed here, in batches of 1,000.
- **PostgreSQL**: the function ``continuity_search_text(text)`` (``fts.pg_function_sql``, the
  same character class in ``regexp_replace``) and the GIN index ``ix_memories_search_fts`` on
  ``to_tsvector('english', continuity_search_text(content))`` replace
  ``ix_memories_content_fts``; PostgreSQL builds it over existing rows.

Latin text is indexed exactly as before (``search_text`` leaves it unchanged).

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

from continuity.store.fts import PG_FUNCTION, pg_function_sql, search_text

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_BATCH = 1_000
_AI_TRIGGER = (
    "CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN "
    "INSERT INTO memories_fts (memory_id, content) VALUES (new.memory_id, "
    "new.content); END"
)
_PG_OLD_INDEX = (
    "CREATE INDEX ix_memories_content_fts ON memories "
    "USING GIN (to_tsvector('english'::regconfig, content))"
)
_PG_NEW_INDEX = (
    "CREATE INDEX ix_memories_search_fts ON memories USING GIN "
    f"(to_tsvector('english'::regconfig, {PG_FUNCTION}(content)))"
)


def _reindex_sqlite(segment: bool) -> None:
    """Refill ``memories_fts`` from ``memories`` (segmented or raw), ``_BATCH`` rows a time."""
    conn = op.get_bind()
    conn.execute(text("DELETE FROM memories_fts"))
    rows = conn.execute(text("SELECT memory_id, content FROM memories ORDER BY rowid"))
    insert = text("INSERT INTO memories_fts (memory_id, content) VALUES (:m, :c)")
    while batch := rows.fetchmany(_BATCH):
        conn.execute(insert, [{"m": m, "c": search_text(c) if segment else c} for m, c in batch])


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS memories_fts_ai")
        _reindex_sqlite(segment=True)
    elif dialect == "postgresql":
        op.execute(pg_function_sql())
        op.execute("DROP INDEX IF EXISTS ix_memories_content_fts")
        op.execute(_PG_NEW_INDEX)
    else:  # pragma: no cover - other dialects are not supported
        raise NotImplementedError(f"no full-text index for dialect {dialect!r}")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _reindex_sqlite(segment=False)
        op.execute(_AI_TRIGGER)
    else:
        op.execute("DROP INDEX IF EXISTS ix_memories_search_fts")
        op.execute(_PG_OLD_INDEX)
        op.execute(f"DROP FUNCTION IF EXISTS {PG_FUNCTION}(text)")
