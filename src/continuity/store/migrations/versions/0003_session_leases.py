"""0003 session_leases: one owner per session with an increasing fencing token.

Why: issue 4 (seed 002, fenced writes). A write carrying a token older than the session's
newest is rejected in the same transaction as the write.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import Column, DateTime, Integer, String

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "session_leases",
        Column("session_key", String(200), primary_key=True),
        Column("owner", String(200), nullable=False),
        Column("token", Integer, nullable=False),
        Column("acquired_at", DateTime(timezone=True), nullable=False),
        Column("expires_at", DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("session_leases")
