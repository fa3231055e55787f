"""0001 initial schema: sessions, entries, tool-call index, runs, notes, sources, raw lines, media.

Why: the foundation (issue 2). Entries keep every line of every source file (kind ``event`` or
``opaque`` for non-conversation lines), so seq order is file order; raw line bytes are kept
content-addressed in ``raw_lines`` and mapped per source line in ``source_lines`` (lossless).
``entries.view_bytes`` is the UTF-8 size of the row as a continuation message, so a continuation
selects its tail without reading content. ``tool_calls`` answers "does this call have a result
anywhere in the log" with one indexed read.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import Boolean, Column, DateTime, Integer, LargeBinary, String, Text

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sessions",
        Column("session_key", String(200), primary_key=True),
        Column("agent_id", String(200), nullable=False),
        Column("harness", String(40), nullable=False),
        Column("project", Text),
        Column("source_path", Text),
        Column("title", Text),
        Column("started_at", DateTime(timezone=True)),
        Column("ended_at", DateTime(timezone=True)),
        Column("entry_count", Integer, nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
        Column("updated_at", DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_sessions_updated", "sessions", ["updated_at"])

    op.create_table(
        "entries",
        Column("session_key", String(200), primary_key=True),
        Column("seq", Integer, primary_key=True, autoincrement=False),
        Column("entry_id", String(300), nullable=False),
        Column("native_id", String(200)),
        Column("parent_native_id", String(200)),
        Column("kind", String(20), nullable=False),
        Column("role", String(20), nullable=False),
        Column("type_name", String(100), nullable=False),
        Column("visible", Boolean, nullable=False),
        Column("base_visible", Boolean, nullable=False),
        Column("is_request", Boolean, nullable=False),
        Column("sidechain", Boolean, nullable=False),
        Column("ts", DateTime(timezone=True)),
        Column("cwd", Text),
        Column("content", Text, nullable=False),
        Column("meta", Text),
        Column("view_bytes", Integer, nullable=False),
        Column("source_path", Text),
        Column("line_no", Integer),
        Column("byte_offset", Integer),
        Column("raw_sha256", String(64)),
    )
    op.create_index("ux_entries_entry_id", "entries", ["entry_id"], unique=True)
    op.create_index("ix_entries_native", "entries", ["session_key", "native_id"])
    op.create_index("ix_entries_kind", "entries", ["session_key", "kind", "seq"])

    op.create_table(
        "tool_calls",
        Column("session_key", String(200), primary_key=True),
        Column("call_id", String(300), primary_key=True),
        Column("call_seq", Integer),
        Column("result_seq", Integer),
    )
    op.create_index("ix_tool_calls_call_seq", "tool_calls", ["session_key", "call_seq"])
    op.create_index("ix_tool_calls_result_seq", "tool_calls", ["session_key", "result_seq"])

    op.create_table(
        "runs",
        Column("run_id", String(300), primary_key=True),
        Column("session_key", String(200), nullable=False),
        Column("agent_id", String(200), nullable=False),
        Column("request_seq", Integer, nullable=False),
        Column("end_seq", Integer, nullable=False),
        Column("status", String(20), nullable=False),
        Column("started_at", DateTime(timezone=True)),
        Column("ended_at", DateTime(timezone=True)),
    )
    op.create_index("ix_runs_session", "runs", ["session_key", "agent_id", "request_seq"])

    op.create_table(
        "notes",
        Column("note_id", Integer, primary_key=True, autoincrement=True),
        Column("session_key", String(200), nullable=False),
        Column("text", Text, nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_notes_session", "notes", ["session_key", "note_id"])

    op.create_table(
        "sources",
        Column("path", Text, primary_key=True),
        Column("session_key", String(200), nullable=False),
        Column("harness", String(40), nullable=False),
        Column("inode", Integer),
        Column("size", Integer, nullable=False),
        Column("offset", Integer, nullable=False),
        Column("line_count", Integer, nullable=False),
        Column("prefix_sha256", String(64), nullable=False),
        Column("reader_state", Text),
        Column("updated_at", DateTime(timezone=True), nullable=False),
    )

    op.create_table(
        "raw_lines",
        Column("sha256", String(64), primary_key=True),
        Column("data", LargeBinary, nullable=False),
    )

    op.create_table(
        "source_lines",
        Column("path", Text, primary_key=True),
        Column("line_no", Integer, primary_key=True, autoincrement=False),
        Column("byte_offset", Integer, nullable=False),
        Column("raw_sha256", String(64), nullable=False),
    )

    op.create_table(
        "media",
        Column("sha256", String(64), primary_key=True),
        Column("data", LargeBinary, nullable=False),
    )

    op.create_table(
        "import_issues",
        Column("issue_id", Integer, primary_key=True, autoincrement=True),
        Column("path", Text, nullable=False),
        Column("line_no", Integer, nullable=False),
        Column("byte_offset", Integer, nullable=False),
        Column("byte_length", Integer, nullable=False),
        Column("reason", Text, nullable=False),
        Column("raw_sha256", String(64), nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_import_issues_path", "import_issues", ["path", "line_no"])


def downgrade() -> None:
    for table in (
        "import_issues",
        "media",
        "source_lines",
        "raw_lines",
        "sources",
        "notes",
        "runs",
        "tool_calls",
        "entries",
        "sessions",
    ):
        op.drop_table(table)
