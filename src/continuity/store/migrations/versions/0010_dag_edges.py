"""0010 dag_edges: the timed edges of the temporal DAG (issue 6, seed 000).

Why: "continues" (a session follows the previous session of its thread), "compacted_into" (a
session's rows were compacted into a compaction node) and "mentions" (a session names a thread)
link the nodes of revision 0009; ``at`` is when the relation began. Edges always point from the
later node to the earlier one or from a session to what it names, so the graph has no cycle.
New table: no old rows.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import Column, DateTime, String

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dag_edges",
        Column("src_id", String(300), primary_key=True),
        Column("dst_id", String(300), primary_key=True),
        Column("kind", String(20), primary_key=True),
        Column("agent_id", String(200), nullable=False),
        Column("at", DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_dag_edges_dst", "dag_edges", ["dst_id"])


def downgrade() -> None:
    op.drop_table("dag_edges")
