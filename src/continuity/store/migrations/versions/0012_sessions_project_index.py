"""0012 ix_sessions_project: find a folder's sessions without scanning every session (issue 12).

Why: the MCP tools and ``/api/sessions/current`` fall back to the most recently active stored
session of the server's folder when no session is live (``store.names.project_session``);
that query filters ``sessions.project``, which had no index, so it read the whole table on
every call from outside a running harness. An index only: no row changes.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_sessions_project", "sessions", ["project"])


def downgrade() -> None:
    op.drop_index("ix_sessions_project", table_name="sessions")
