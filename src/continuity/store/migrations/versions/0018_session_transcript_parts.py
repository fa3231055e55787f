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
costs a page or two. Existing text moves to part 0 of its row, unchanged.

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "session_transcript_parts",
        sa.Column("agent_id", sa.String(200), primary_key=True),
        sa.Column("session_key", sa.String(200), primary_key=True),
        sa.Column("part", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("content", sa.Text, nullable=False),
    )
    op.execute("INSERT INTO session_transcript_parts (agent_id, session_key, part, content) "
               "SELECT agent_id, session_key, 0, content FROM session_transcripts "
               "WHERE content <> ''")
    with op.batch_alter_table("session_transcripts") as batch:
        batch.drop_column("content")


def downgrade() -> None:
    with op.batch_alter_table("session_transcripts") as batch:
        batch.add_column(sa.Column("content", sa.Text, nullable=False, server_default=""))
    conn = op.get_bind()
    parts = sa.table("session_transcript_parts", sa.column("agent_id"),
                     sa.column("session_key"), sa.column("part"), sa.column("content"))
    rows = sa.table("session_transcripts", sa.column("agent_id"), sa.column("session_key"),
                    sa.column("content"))
    texts: dict[tuple[str, str], list[str]] = {}
    for agent, key, text in conn.execute(sa.select(parts.c.agent_id, parts.c.session_key,
                                                   parts.c.content)
                                         .order_by(parts.c.agent_id, parts.c.session_key,
                                                   parts.c.part)):
        texts.setdefault((agent, key), []).append(text)
    for (agent, key), chunks in texts.items():
        conn.execute(sa.update(rows).where(rows.c.agent_id == agent, rows.c.session_key == key)
                     .values(content="".join(chunks)))
    op.drop_table("session_transcript_parts")
