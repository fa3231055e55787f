"""0019 vectors: the embeddings of entries and memories (issue 40: hybrid search).

Why: search and recall rank by meaning as well as by words; a row's vector is computed once,
in the background, from its redacted text (``continuity.retrieval.embedding``), and kept here
so the in-memory index (``retrieval.index``) is rebuilt from the store by reading bytes, not by
embedding again. Two tables, one per kind of row:

- ``entry_vectors(vector_id, model, session_key, seq, vector)``, unique (model, session_key,
  seq), and an index on (model, vector_id): a reader takes a model's vectors after an id in
  id order (without it SQLite picked the unique index and sorted every vector of the model
  for each chunk);
- ``memory_vectors(vector_id, model, memory_id, vector)``, the same indexes by memory_id.

``vector_id`` only grows (SQLite ``AUTOINCREMENT``: an id is never reused after a delete;
PostgreSQL ``SERIAL``), so a reader that saw ids up to N reads only ids above N. ``model`` is
the embedder's ``model_id`` (``wordllama-l2-supercat/256``): vectors of two models are never
compared. ``vector`` is float32 little-endian bytes, b"" for a row with nothing to embed.
Plain tables on both dialects: the search is exact cosine in memory (NumPy), so neither
sqlite-vec nor pgvector is needed. Existing rows have no vector: the embedding pass finds
them (nothing to backfill here).

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "entry_vectors",
        sa.Column("vector_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("model", sa.String(100), nullable=False),
        sa.Column("session_key", sa.String(200), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ux_entry_vectors", "entry_vectors", ["model", "session_key", "seq"], unique=True
    )
    op.create_index("ix_entry_vectors_id", "entry_vectors", ["model", "vector_id"])
    op.create_table(
        "memory_vectors",
        sa.Column("vector_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("model", sa.String(100), nullable=False),
        sa.Column("memory_id", sa.String(64), nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("ux_memory_vectors", "memory_vectors", ["model", "memory_id"], unique=True)
    op.create_index("ix_memory_vectors_id", "memory_vectors", ["model", "vector_id"])


def downgrade() -> None:
    op.drop_table("memory_vectors")
    op.drop_table("entry_vectors")
