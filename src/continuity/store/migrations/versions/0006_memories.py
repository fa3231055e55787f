"""0006 memories: remembered memories, de-duplicated by content hash per agent.

Why: issue 5 (remember/recall). ``tags`` holds a JSON array as text. Full-text search is added
by the revision after this one (dialect-specific).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import Column, DateTime, Float, String, Text

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "memories",
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
    op.create_index("ux_memories_hash", "memories", ["agent_id", "content_hash"], unique=True)
    op.create_index("ix_memories_source", "memories", ["source_id"])


def downgrade() -> None:
    op.drop_table("memories")
