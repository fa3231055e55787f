"""0021 langgraph: the tables of the LangGraph adapter (issue 46 item 2).

Why: ``continuity.adapters.langgraph.ContinuitySaver`` keeps a LangGraph graph's checkpoints
in the workspace's own database, so a crashed agent resumes its thread from the last
checkpoint, on SQLite and PostgreSQL alike; ``ContinuityStore`` keeps LangGraph's long-term
memory items beside continuity's memories. Four tables, the layout LangGraph's own SQL savers
use (a checkpoint row, one blob per channel version, one row per pending write):

- ``langgraph_checkpoints(thread_id, checkpoint_ns, checkpoint_id)``: the checkpoint without
  its channel values and its metadata, each as LangGraph's serde wrote it (a type name and
  bytes); ``parent_checkpoint_id``; ``run_id`` (from the metadata, indexed: ``delete_for_runs``);
- ``langgraph_blobs(thread_id, checkpoint_ns, channel, version)``: one channel's value at one
  version (``blob_type`` ``empty`` for a channel without a value), so a checkpoint that
  changes one channel stores only that channel;
- ``langgraph_writes(thread_id, checkpoint_ns, checkpoint_id, task_id, idx)``: a task's
  pending write (``channel``, ``task_path``, the value as serde wrote it);
- ``langgraph_store_items(namespace, item_key)``: a ``BaseStore`` item, its namespace labels
  joined by ``.`` (LangGraph forbids ``.`` in a label), its value as serde wrote it, and the
  ``memory_id`` of the continuity memory holding its text (NULL when nothing was indexed).

Ids are text of any length (LangGraph does not bound them); values are bytes (BLOB, bytea).

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def _keys(*names: str) -> list[sa.Column]:
    return [sa.Column(name, sa.Text, primary_key=True) for name in names]


def upgrade() -> None:
    op.create_table(
        "langgraph_checkpoints",
        *_keys("thread_id", "checkpoint_ns", "checkpoint_id"),
        sa.Column("parent_checkpoint_id", sa.Text),
        sa.Column("run_id", sa.Text),
        sa.Column("checkpoint_type", sa.String(40), nullable=False),
        sa.Column("checkpoint", sa.LargeBinary, nullable=False),
        sa.Column("metadata_type", sa.String(40), nullable=False),
        sa.Column("metadata", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_langgraph_checkpoints_run", "langgraph_checkpoints", ["run_id"])
    op.create_table(
        "langgraph_blobs",
        *_keys("thread_id", "checkpoint_ns", "channel", "version"),
        sa.Column("blob_type", sa.String(40), nullable=False),
        sa.Column("blob", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "langgraph_writes",
        *_keys("thread_id", "checkpoint_ns", "checkpoint_id", "task_id"),
        sa.Column("idx", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("channel", sa.Text, nullable=False),
        sa.Column("task_path", sa.Text, nullable=False),
        sa.Column("value_type", sa.String(40), nullable=False),
        sa.Column("value", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "langgraph_store_items",
        *_keys("namespace", "item_key"),
        sa.Column("value_type", sa.String(40), nullable=False),
        sa.Column("value", sa.LargeBinary, nullable=False),
        sa.Column("memory_id", sa.String(64)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_langgraph_store_items_memory", "langgraph_store_items", ["memory_id"])


def downgrade() -> None:
    op.drop_table("langgraph_store_items")
    op.drop_table("langgraph_writes")
    op.drop_table("langgraph_blobs")
    op.drop_table("langgraph_checkpoints")
