"""0013 applied_events: the ids of the hook events the daemon applied (issue 21).

Why: a spooled event replayed after a daemon kill could land twice in a transcript (6 of
12,721 in the issue's run): the id was remembered in a file after the event's effects were
written, so a kill in between applied it again. The id now commits in the same transaction as
the transcript row the event changes, and a replay skips ids found here. A new table only.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "applied_events",
        sa.Column("event_id", sa.String(64), primary_key=True),
        sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("applied_events")
