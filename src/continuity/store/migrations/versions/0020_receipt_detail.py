"""0020 refusal_receipts.detail: why a continuation checkpoint was refused, in a few words.

Why (issue 45 item 7): a receipt said only its closed reason, so an HTTP 500 from the
summarizer and a reply without the required sections both read ``provider_failure``. The
reason stays the closed set; ``detail`` adds a short phrase of ours (``HTTP 500``, ``the
reply has 1 of the 9 required sections``), never summary text or model output. A nullable
column: NULL for every receipt written before.

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("refusal_receipts", sa.Column("detail", sa.String(200)))


def downgrade() -> None:
    with op.batch_alter_table("refusal_receipts") as batch:
        batch.drop_column("detail")
