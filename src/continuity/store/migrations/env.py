"""Alembic environment: runs on the connection that ``continuity.store.migrate`` passes in.

One transaction per revision (``transaction_per_migration``), so a failed revision leaves the
schema at the previous one.
"""

from __future__ import annotations

from alembic import context

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only through continuity.store.migrate
    raise RuntimeError("run migrations through continuity.store.migrate(engine)")

context.configure(
    connection=connection,
    target_metadata=None,
    transaction_per_migration=True,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
