"""0023 source_paths: a source file's path stored once, not on each of its lines (issue 43).

Why: ``source_lines`` (each kept line's position: file, line, byte offset, digest) held the
file's path on every line, and again in its primary-key index: 9.0 of 97 MB of a workspace
on a 50 MB tree of ``bench/peers.py`` (1 MB files of about 700 lines, paths of 80 bytes).
``source_paths`` numbers each path once; ``source_lines`` is keyed by ``(source_id,
line_no)`` and, on SQLite, is a ``WITHOUT ROWID`` table, so its key is the table itself.

The rows are copied (every position keeps its file, line, offset and digest) and the old
table dropped; the downgrade copies them back with their paths.

Revision ID: 0023
Revises: 0022
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "source_paths",
        sa.Column("source_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("path", sa.Text, nullable=False),
    )
    op.create_index("ux_source_paths_path", "source_paths", ["path"], unique=True)
    op.execute(
        "INSERT INTO source_paths (path) SELECT path FROM source_lines GROUP BY path ORDER BY path"
    )
    op.create_table(
        "source_lines_0023",
        sa.Column("source_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("line_no", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("byte_offset", sa.Integer, nullable=False),
        sa.Column("raw_sha256", sa.String(64), nullable=False),
        sqlite_with_rowid=False,
    )
    op.execute(
        "INSERT INTO source_lines_0023 (source_id, line_no, byte_offset, raw_sha256) "
        "SELECT p.source_id, l.line_no, l.byte_offset, l.raw_sha256 "
        "FROM source_lines l JOIN source_paths p ON p.path = l.path"
    )
    op.drop_table("source_lines")
    op.rename_table("source_lines_0023", "source_lines")


def downgrade() -> None:
    op.create_table(
        "source_lines_0022",
        sa.Column("path", sa.Text, primary_key=True),
        sa.Column("line_no", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("byte_offset", sa.Integer, nullable=False),
        sa.Column("raw_sha256", sa.String(64), nullable=False),
    )
    op.execute(
        "INSERT INTO source_lines_0022 (path, line_no, byte_offset, raw_sha256) "
        "SELECT p.path, l.line_no, l.byte_offset, l.raw_sha256 "
        "FROM source_lines l JOIN source_paths p ON p.source_id = l.source_id"
    )
    op.drop_table("source_lines")
    op.rename_table("source_lines_0022", "source_lines")
    op.drop_index("ux_source_paths_path", table_name="source_paths")
    op.drop_table("source_paths")
