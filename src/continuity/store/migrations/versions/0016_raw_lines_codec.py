"""0016 raw_lines.codec: a raw line may be stored zstd-compressed (issue 17, goal 3).

Why: ``raw_lines`` held every distinct line's bytes as they are, the largest table of a
workspace (a third of it on the benchmark corpus). A line whose zstd frame is smaller by
enough (``store.rawcodec``) is now kept compressed, marked ``codec = 1``; the bytes read back
are the original ones, byte for byte. A nullable column: rows written before stay as they
are (NULL: stored as is), so nothing is rewritten.

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("raw_lines", sa.Column("codec", sa.SmallInteger))


def downgrade() -> None:
    # A compressed line would read back as its frame: make every row plain again first.
    from continuity.store.rawcodec import decode

    bind = op.get_bind()
    rows = sa.table(
        "raw_lines",
        sa.column("sha256"),
        sa.column("data", sa.LargeBinary),
        sa.column("codec", sa.SmallInteger),
    )
    for sha, data, codec in bind.execute(sa.select(rows).where(rows.c.codec.is_not(None))).all():
        bind.execute(
            rows.update()
            .where(rows.c.sha256 == sha)
            .values(data=decode(bytes(data), codec), codec=None)
        )
    with op.batch_alter_table("raw_lines") as batch:
        batch.drop_column("codec")
