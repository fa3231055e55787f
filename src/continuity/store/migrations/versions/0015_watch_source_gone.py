"""0015 sources.gone_at, sessions.forked_from: an archived session outlives its file (issue 18).

Why: the archive (``continuity watch``, the daemon) keeps every session a harness wrote, also
after the harness deletes the file (Claude Code's ``cleanupPeriodDays``). ``sources.gone_at``
is when a rescan found the recorded file missing (NULL while it exists), so ``sessions`` and
``show`` say ``source: gone`` and ``doctor`` counts what the archive saved. A Codex rollout
forked from another (``session_meta.forked_from_id``) names that session in
``sessions.forked_from``, so the thread reads as one. Two nullable columns: no row changes.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("sources", sa.Column("gone_at", sa.DateTime(timezone=True)))
    op.add_column("sessions", sa.Column("forked_from", sa.String(200)))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("forked_from")
    with op.batch_alter_table("sources") as batch:
        batch.drop_column("gone_at")
