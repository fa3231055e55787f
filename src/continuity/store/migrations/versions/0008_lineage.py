"""0008 thread_heads: the newest state of each line of work (issue 6, seed 000 Tier 2).

Why: the MEMORY.md projection's "Thread Heads (Tier 2)" and "Open Threads" sections read one row
per (agent, thread); the consolidation pass upserts it and never lets an older session replace a
newer head. ``open_items`` is a JSON array of short texts (work left open by the thread's latest
session); ``source_ref`` the workspace-relative artifact the head was taken from. New table: no
old rows.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import Column, DateTime, String, Text

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "thread_heads",
        Column("agent_id", String(200), primary_key=True),
        Column("thread_key", String(500), primary_key=True),
        Column("label", Text, nullable=False),
        Column("project", Text),
        Column("session_key", String(200), nullable=False),
        Column("harness", String(40), nullable=False),
        Column("source_type", String(20), nullable=False),
        Column("source_ref", Text),
        Column("node_id", String(300), nullable=False),
        Column("sample", Text, nullable=False),
        Column("open_items", Text, nullable=False),
        Column("latest_at", DateTime(timezone=True), nullable=False),
        Column("updated_at", DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_thread_heads_latest", "thread_heads", ["agent_id", "latest_at"])


def downgrade() -> None:
    op.drop_table("thread_heads")
