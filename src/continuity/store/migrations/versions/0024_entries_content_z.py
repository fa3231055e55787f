"""0024 entries.content_z: a row's long content JSON kept as a zstd frame (issue 43, goal 2).

Why: ``entries.content`` (each row's blocks as JSON: its text, tool calls and results) was
the largest column of a workspace: 18.5 of 72 MB on a 50 MB tree of ``bench/peers.py``. A
row's JSON of at least 256 bytes whose zstd frame saves 10 % or more is now kept as that
frame in ``content_z`` with ``content`` empty (``store.rawcodec.encode_text``): 8.8 MB. The
column is nullable: rows written before keep their text and read as they did.

Revision ID: 0024
Revises: 0023
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("entries", sa.Column("content_z", sa.LargeBinary))


def downgrade() -> None:
    # A compressed row would read back empty: give each its text back first.
    import zstandard

    bind = op.get_bind()
    rows = sa.table(
        "entries",
        sa.column("session_key"),
        sa.column("seq"),
        sa.column("content"),
        sa.column("content_z", sa.LargeBinary),
    )
    dec = zstandard.ZstdDecompressor()
    found = bind.execute(
        sa.select(rows.c.session_key, rows.c.seq, rows.c.content_z).where(
            rows.c.content_z.is_not(None)
        )
    ).all()
    for key, seq, frame in found:
        text = dec.decompress(bytes(frame)).decode("utf-8", "surrogatepass")
        bind.execute(
            rows.update()
            .where(sa.and_(rows.c.session_key == key, rows.c.seq == seq))
            .values(content=text)
        )
    with op.batch_alter_table("entries") as batch:
        batch.drop_column("content_z")
