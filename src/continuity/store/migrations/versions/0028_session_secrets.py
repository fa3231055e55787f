"""0028 session_secrets: each session's secret values, found once and kept (issue 43 goal 3).

Why: every output that shows a session's rows redacts them by the session-wide rule (a secret
found in any row is hidden in every row, ``redaction.session``), which scans every row of the
session. The scan was cached per process only, so each ``show``, ``continue`` and one-shot
``search`` scanned again, and a daemon ``search`` whose 20 hits fell in 20 sessions of 1 MB
scanned 20 sessions (7 s on the 100 MB tree of ``bench/peers.py``) since its cache held 32.
Kept with what it was computed from (the session's own title's SHA-256, its row count, the
last row scanned), a session that only grew is scanned from its first new row; an unchanged
one not at all. A table of derived values: dropping it loses nothing (it is computed again).

The values are the secrets themselves: they never leave this database (team sync pushes
redacted rows only, and never this table), which holds the same values in ``raw_lines``.

Revision ID: 0028
Revises: 0027
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "session_secrets",
        sa.Column("session_key", sa.String(200), primary_key=True),
        sa.Column("own_sha256", sa.String(64), nullable=False),
        sa.Column("entry_count", sa.Integer, nullable=False),
        sa.Column("last_seq", sa.Integer, nullable=False),
        sa.Column("secrets", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("session_secrets")
