"""0017 sources.pending_from: rows an import stored whose checkpoints and transcript are due.

Why (issue 17, fresh-user review): an import stores a file's rows, then replays their
checkpoints and writes their transcript. An import interrupted between the two (Ctrl-C,
SIGTERM, a kill, a crash) left the rows stored and the file recorded as read, so the next
import found the file unchanged and never derived them: those sessions kept no checkpoints.
The import now records, in the transaction of the rows, the first seq still to derive; the
phases clear it once they ran, and an import finding it set derives them, unchanged file or
not. A nullable column: NULL (nothing due) for every row written before.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("sources", sa.Column("pending_from", sa.Integer))


def downgrade() -> None:
    with op.batch_alter_table("sources") as batch:
        batch.drop_column("pending_from")
