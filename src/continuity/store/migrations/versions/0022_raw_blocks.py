"""0022 raw_blocks: raw lines compressed by block (issue 43, goal 2: store <= 1.0x the input).

Why: each raw line was its own zstd frame (revision 0016), which cannot use what the lines of
a session share (their keys, ids, paths, a file read twice): per-line frames kept 45 % of the
bytes of the real sessions in ``../shared/data``, frames of 64 KiB of lines 25 %.
``raw_blocks`` holds a frame of many lines joined by ``\\n`` (``store.rawcodec``); a line
kept there has ``raw_lines.codec = 2``, empty ``data``, and ``block_id`` / ``block_index``
(its place in the block). Nullable columns and a new table: lines written before stay as
they are, nothing is rewritten.

Revision ID: 0022
Revises: 0021
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "raw_blocks",
        sa.Column("block_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("codec", sa.SmallInteger, nullable=False),
    )
    op.add_column("raw_lines", sa.Column("block_id", sa.Integer))
    op.add_column("raw_lines", sa.Column("block_index", sa.Integer))


def downgrade() -> None:
    # A line kept in a block has no bytes of its own: give each one its bytes back first.
    import zstandard

    bind = op.get_bind()
    lines = sa.table(
        "raw_lines",
        sa.column("sha256"),
        sa.column("data", sa.LargeBinary),
        sa.column("codec", sa.SmallInteger),
        sa.column("block_id", sa.Integer),
        sa.column("block_index", sa.Integer),
    )
    blocks = sa.table("raw_blocks", sa.column("block_id"), sa.column("data", sa.LargeBinary))
    dec = zstandard.ZstdDecompressor()
    for block_id, frame in bind.execute(sa.select(blocks.c.block_id, blocks.c.data)).all():
        parts = dec.decompress(bytes(frame)).split(b"\n")
        rows = bind.execute(
            sa.select(lines.c.sha256, lines.c.block_index).where(lines.c.block_id == block_id)
        ).all()
        for sha, index in rows:
            bind.execute(
                lines.update()
                .where(lines.c.sha256 == sha)
                .values(data=parts[index], codec=None, block_id=None, block_index=None)
            )
    with op.batch_alter_table("raw_lines") as batch:
        batch.drop_column("block_index")
        batch.drop_column("block_id")
    op.drop_table("raw_blocks")
