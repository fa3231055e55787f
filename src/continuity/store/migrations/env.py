"""Alembic environment: runs on the connection that ``continuity.store.migrate`` passes in.

The caller's connection is already in a transaction (``continuity.store._schema_transaction``),
so Alembic opens none of its own: the whole upgrade, every revision and the ``alembic_version``
row, commits at once or not at all (issue 22).
"""

from __future__ import annotations

from alembic import context

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only through continuity.store.migrate
    raise RuntimeError("run migrations through continuity.store.migrate(engine)")

context.configure(
    connection=connection,
    target_metadata=None,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
