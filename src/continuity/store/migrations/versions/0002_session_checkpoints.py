"""0002 session_checkpoints: seed 000's checkpoint rows.

Why: issue 3. One row per checkpoint with the seed's fields; indexed for "newest by session",
"newest by project" and pruning by age. ``memory_queries`` and ``recent_remembers`` hold JSON
arrays as text (portable across SQLite and PostgreSQL).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import Column, DateTime, Integer, String, Text

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "session_checkpoints",
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
    op.create_index("ix_checkpoints_session", "session_checkpoints", ["session_key", "created_at"])
    op.create_index(
        "ix_checkpoints_project", "session_checkpoints", ["project_normalized", "created_at"]
    )
    op.create_index("ix_checkpoints_created", "session_checkpoints", ["created_at"])


def downgrade() -> None:
    op.drop_table("session_checkpoints")
