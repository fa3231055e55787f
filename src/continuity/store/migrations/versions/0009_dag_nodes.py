"""0009 dag_nodes: the nodes of the temporal DAG (issue 6, seed 000).

Why: sessions, threads and compactions are nodes of the temporal DAG the MEMORY.md projection's
"Temporal Index" reads. ``kind`` is ``session``, ``thread`` or ``compaction``; ``meta`` a JSON
object of kind-specific figures. New table: no old rows.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import Column, DateTime, String, Text

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dag_nodes",
        Column("node_id", String(300), primary_key=True),
        Column("agent_id", String(200), nullable=False),
        Column("kind", String(20), nullable=False),
        Column("label", Text, nullable=False),
        Column("content", Text, nullable=False),
        Column("project", Text),
        Column("session_key", String(200)),
        Column("thread_key", String(500)),
        Column("harness", String(40)),
        Column("source_ref", Text),
        Column("earliest_at", DateTime(timezone=True)),
        Column("latest_at", DateTime(timezone=True)),
        Column("meta", Text, nullable=False),
        Column("updated_at", DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_dag_nodes_latest", "dag_nodes", ["agent_id", "latest_at"])
    op.create_index("ix_dag_nodes_thread", "dag_nodes", ["agent_id", "thread_key"])
    op.create_index("ix_dag_nodes_session", "dag_nodes", ["session_key"])


def downgrade() -> None:
    op.drop_table("dag_nodes")
