"""0018 session_transcript_parts: a transcript row's text appended in parts.

Why (issue 17, goal 2: cost grows with new bytes only): a ``session_transcripts`` row held the
session's whole text in one value, so every append (a grown session's import, each live turn
the daemon writes) rewrote the whole text: on the 50 MB benchmark corpus 665 of the 3,905 pages
an append changed were that one value. An append now writes its text as the row's next part;
the row's full text is ``content`` followed by its parts in ``part`` order (each part carries
its own ``"\\n\\n"`` separator), and ``content_hash`` stays the sha256 of that full text. A
replace writes ``content`` whole and deletes the parts. Every row written before has no parts,
so its text is unchanged.

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import Column, Integer, String, Text

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "session_transcript_parts",
        Column("agent_id", String(200), primary_key=True),
        Column("session_key", String(200), primary_key=True),
        Column("part", Integer, primary_key=True, autoincrement=False),
        Column("content", Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("session_transcript_parts")
