"""0005 session_transcripts: the canonical transcript index of seed 000 (origin: migration 040).

Why: issue 5. One row per (agent_id, session_key); ``content_hash`` is the sha256 hex of the
UTF-8 content; ``completed_at`` NULL means the session is still open.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import Column, DateTime, String, Text

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "session_transcripts",
        Column("session_key", String(200), primary_key=True),
        Column("agent_id", String(200), primary_key=True),
        Column("harness", String(40), nullable=False),
        Column("project", Text),
        Column("content", Text, nullable=False),
        Column("content_hash", String(64), nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
        Column("updated_at", DateTime(timezone=True), nullable=False),
        Column("completed_at", DateTime(timezone=True)),
    )
    op.create_index(
        "ix_transcripts_agent_completed", "session_transcripts", ["agent_id", "completed_at"]
    )
    op.create_index(
        "ix_transcripts_agent_hash", "session_transcripts", ["agent_id", "content_hash"]
    )


def downgrade() -> None:
    op.drop_table("session_transcripts")
