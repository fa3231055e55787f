"""0025 session_titles: each session's redacted title kept (issue 43 goal 3, issue 44).

Why: a session's title is redacted by the session-wide rule, which needs the secrets of all
its rows; computed at every listing, ``continuity sessions`` read every row of the 50
sessions it lists (1.2 s on 50 sessions of 1 MB, where the goal is 100 ms). The kept line
is used while the session has the rows and own title it was computed from
(``store.titles``); a table of derived values only: dropping it loses nothing.

Revision ID: 0025
Revises: 0024
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "session_titles",
        sa.Column("session_key", sa.String(200), primary_key=True),
        sa.Column("own_sha256", sa.String(64), nullable=False),
        sa.Column("line_sha256", sa.String(64), nullable=False),
        sa.Column("entry_count", sa.Integer, nullable=False),
        sa.Column("line", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("session_titles")
