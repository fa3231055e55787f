"""0018 session_transcript_parts: a transcript row's text in parts of its own table.

Why (issue 17, goal 2: cost grows with new bytes only): a ``session_transcripts`` row held the
session's whole text in its ``content`` column, so every change to the row rewrote the whole
text: an append (a grown session's import, each live turn the daemon writes), and even a
completion, which only sets ``completed_at`` (SQLite writes a record whole when its size
changes, overflow pages included; on the 50 MB benchmark corpus 665 of the 3,905 pages an
append changed were those values). The text now lives in ``session_transcript_parts``: the
row's text is its parts joined in ``part`` order (each appended part carries its own
``"\\n\\n"`` separator), written once and never updated; ``content_hash`` stays the sha256 of
the whole text. An append inserts one part; a replace deletes the parts and inserts the new
text as part 0; the ``session_transcripts`` row keeps only small columns, so updating it
costs a page or two. Parts are written once and read whole, so each is kept as a raw line is
(``store.rawcodec``: a zstd frame where that pays; transcript text compresses to about a
sixth on the benchmark corpus). Existing text moves to part 0 of its row, unchanged.

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from continuity.store.rawcodec import decode as _decode, encode as _encode

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


_PARTS = sa.table(
    "session_transcript_parts",
    sa.column("agent_id"),
    sa.column("session_key"),
    sa.column("part"),
    sa.column("data"),
    sa.column("codec"),
)
_ROWS = sa.table(
    "session_transcripts", sa.column("agent_id"), sa.column("session_key"), sa.column("content")
)


def upgrade() -> None:
    op.create_table(
        "session_transcript_parts",
        sa.Column("agent_id", sa.String(200), primary_key=True),
        sa.Column("session_key", sa.String(200), primary_key=True),
        sa.Column("part", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("codec", sa.SmallInteger),
    )
    conn = op.get_bind()
    keys = conn.execute(
        sa.select(_ROWS.c.agent_id, _ROWS.c.session_key)
        .where(_ROWS.c.content != "")
        .order_by(_ROWS.c.agent_id, _ROWS.c.session_key)
    ).all()
    for agent, key in keys:  # one row's text in memory at a time
        content = conn.execute(
            sa.select(_ROWS.c.content).where(_ROWS.c.agent_id == agent, _ROWS.c.session_key == key)
        ).scalar_one()
        data, codec = _encode(content.encode("utf-8"))
        conn.execute(
            sa.insert(_PARTS).values(
                agent_id=agent, session_key=key, part=0, data=data, codec=codec
            )
        )
    with op.batch_alter_table("session_transcripts") as batch:
        batch.drop_column("content")


def downgrade() -> None:
    with op.batch_alter_table("session_transcripts") as batch:
        batch.add_column(sa.Column("content", sa.Text, nullable=False, server_default=""))
    conn = op.get_bind()
    keys = conn.execute(
        sa.select(_PARTS.c.agent_id, _PARTS.c.session_key)
        .distinct()
        .order_by(_PARTS.c.agent_id, _PARTS.c.session_key)
    ).all()
    for agent, key in keys:
        chunks = conn.execute(
            sa.select(_PARTS.c.data, _PARTS.c.codec)
            .where(_PARTS.c.agent_id == agent, _PARTS.c.session_key == key)
            .order_by(_PARTS.c.part)
        ).all()
        text = "".join(_decode(bytes(d), c).decode("utf-8") for d, c in chunks)
        conn.execute(
            sa.update(_ROWS)
            .where(_ROWS.c.agent_id == agent, _ROWS.c.session_key == key)
            .values(content=text)
        )
    op.drop_table("session_transcript_parts")
