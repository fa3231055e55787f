"""0027 forgotten: the tombstones ``continuity forget`` writes (issue 41 item 2), and the
team sessions copied into this workspace (issue 41 item 4).

Why: a forgotten session's rows are deleted from the workspace, but its source file is still
where the harness left it and a copy of it may be in the team store; the tombstone is what
keeps an import from storing it again and what ``continuity sync`` carries to the team store
(the copy this machine pushed is deleted there). One row per forgotten session: its key, the
``--pattern`` that found it (NULL: forgotten by key) and when.

``team_copies``: a teammate's session ``resume`` pulled from the team store into this
workspace (its rows, redacted as pushed, under the folder where the repository lives here)
is a copy, never this member's own: ``sync`` must not push it back as theirs. One row per
copy: its key here, the team store, the owner, machine and key it came from, the author, and
when it was pulled.

Two new tables; nothing else changes. The downgrade drops them (the sessions stay deleted;
only the guard goes; copies become ordinary sessions).

Revision ID: 0027
Revises: 0026
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0026"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "forgotten",
        sa.Column("forget_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("session_key", sa.String(200), nullable=False),
        sa.Column("pattern", sa.Text),
        sa.Column("forgotten_at", sa.DateTime(timezone=True), nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_forgotten_session", "forgotten", ["session_key"])
    op.create_table(
        "team_copies",
        sa.Column("session_key", sa.String(200), primary_key=True),
        sa.Column("team_store", sa.String(64), nullable=False),
        sa.Column("owner", sa.String(200), nullable=False),
        sa.Column("machine", sa.String(200), nullable=False),
        sa.Column("original_key", sa.String(200), nullable=False),
        sa.Column("author", sa.Text, nullable=False),
        sa.Column("pulled_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("team_copies")
    op.drop_index("ix_forgotten_session", table_name="forgotten")
    op.drop_table("forgotten")
