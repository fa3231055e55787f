"""0004 refusal_receipts: a checkpoint that was not made, with its closed reason.

Why: issue 4 (seed 002: continuation_checkpoint_refused). Holds the run id and reason only,
never summary text or a raw exception. ``token`` is the fencing token the write carried.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import Column, DateTime, Integer, String

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "refusal_receipts",
        Column("receipt_id", Integer, primary_key=True, autoincrement=True),
        Column("session_key", String(200), nullable=False),
        Column("run_id", String(300)),
        Column("reason", String(20), nullable=False),
        Column("token", Integer),
        Column("created_at", DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_receipts_session", "refusal_receipts", ["session_key", "receipt_id"])


def downgrade() -> None:
    op.drop_table("refusal_receipts")
