"""0026 team_sync: what this workspace has pushed to a team store, and the team's session
index pulled from it (issue 41 item 1).

Why: ``continuity sync`` pushes only what is new since its watermarks, per table
(``team_marks``: the sessions' ``updated_at`` and the checkpoints' id last seen), and per
session how far its rows went, under which set of session-wide secrets and with how many
of them visible (``team_pushed``: a new secret found in a later row, or earlier rows put
off or on the conversation path, re-pushes the earlier rows). The team's session index
(``team_index``) is what ``sessions --team`` reads offline. Each is keyed by the team
store's own id, so joining another store starts over. Three new tables; nothing else
changes. The downgrade drops them.

Revision ID: 0026
Revises: 0025
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "team_marks",
        sa.Column("team_store", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(40), primary_key=True),
        sa.Column("mark", sa.Text, nullable=False),
    )
    op.create_table(
        "team_pushed",
        sa.Column("team_store", sa.String(64), primary_key=True),
        sa.Column("session_key", sa.String(200), primary_key=True),
        sa.Column("pushed_seq", sa.Integer, nullable=False),
        sa.Column("secrets_sha", sa.String(64), nullable=False),
        sa.Column("visible_rows", sa.Integer),
        sa.Column("pushed_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "team_index",
        sa.Column("team_store", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(200), primary_key=True),
        sa.Column("machine", sa.String(200), primary_key=True),
        sa.Column("session_key", sa.String(200), primary_key=True),
        sa.Column("author", sa.Text, nullable=False),
        sa.Column("project", sa.Text, nullable=False),
        sa.Column("harness", sa.String(40), nullable=False),
        sa.Column("title", sa.Text),
        sa.Column("started_at", sa.DateTime(timezone=True)),
        sa.Column("ended_at", sa.DateTime(timezone=True)),
        sa.Column("entry_count", sa.Integer, nullable=False),
        sa.Column("pushed_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("team_index")
    op.drop_table("team_pushed")
    op.drop_table("team_marks")
