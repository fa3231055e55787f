"""0029 raw_keys_binary: a raw line's SHA-256 kept as its 32 bytes, not 64 hex characters.

Why (issue 43 goal 2: the store no bigger than its input): the key of each kept line
(``raw_lines.sha256``) and every reference to it (``source_lines.raw_sha256``,
``entries.raw_sha256``, ``import_issues.raw_sha256``) was the digest's hex text, twice the
bytes of the digest, and on SQLite ``raw_lines`` (a rowid table) held it a second time in its
primary-key index. On the 50 MB tree of ``bench/peers.py`` (33,805 rows) those were
``raw_lines`` 2.76 MB and its key's index 2.83 MB, ``source_lines`` 3.05 MB and 64 bytes of
each ``entries`` row. Now each is a BLOB (bytea on PostgreSQL) of 32 bytes, and on SQLite
``raw_lines`` is a ``WITHOUT ROWID`` table keyed by it (the key is the table, as
``source_lines`` since 0023). The code still sees hex (``store.schema.Sha256`` converts).

Every row is kept: each hex value is converted to its bytes (PostgreSQL: ``decode(x,
'hex')``; SQLite: the table is copied into one whose column is a BLOB, as SQLite cannot change
a column's type, then its indexes are created again as they were). NULL stays NULL. The
downgrade converts back (lowercase hex, as ``hexdigest()`` writes it) and makes ``raw_lines``
a rowid table again.

On SQLite the copied tables are read from the database (their columns, primary key and
index statements as this revision finds them) rather than written out here: only the digest
column's type changes, so the copy keeps every other column as it is.

Revision ID: 0029
Revises: 0028
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None

#: ``(table, column)`` of every raw line key: the key of ``raw_lines`` and each reference to it.
KEYS = (
    ("entries", "raw_sha256"),
    ("import_issues", "raw_sha256"),
    ("source_lines", "raw_sha256"),
    ("raw_lines", "sha256"),
)
#: Tables that are ``WITHOUT ROWID`` on SQLite after the upgrade (before it: ``source_lines``).
WITHOUT_ROWID_AFTER = {"source_lines", "raw_lines"}
WITHOUT_ROWID_BEFORE = {"source_lines"}


def _unhex(value: str | None) -> bytes | None:
    return None if value is None else bytes.fromhex(value)


def _hex(value: bytes | None) -> str | None:
    return None if value is None else bytes(value).hex()


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table, column in KEYS:
            op.alter_column(
                table,
                column,
                type_=sa.LargeBinary,
                existing_type=sa.String(64),
                postgresql_using=f"decode({column}, 'hex')",
            )
        return
    for table, column in KEYS:
        _sqlite_copy(table, column, sa.LargeBinary(), _unhex, table in WITHOUT_ROWID_AFTER)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table, column in KEYS:
            op.alter_column(
                table,
                column,
                type_=sa.String(64),
                existing_type=sa.LargeBinary,
                postgresql_using=f"encode({column}, 'hex')",
            )
        return
    for table, column in KEYS:
        _sqlite_copy(table, column, sa.String(64), _hex, table in WITHOUT_ROWID_BEFORE)


def _sqlite_copy(
    table: str,
    column: str,
    type_: sa.types.TypeEngine,
    convert: Callable[[Any], Any],
    without_rowid: bool,
) -> None:
    """Replace SQLite table ``table`` by a copy whose ``column`` has ``type_`` and holds
    ``convert`` of each old value (every other column, the primary key and the indexes as
    they were; ``without_rowid``: the copy is a ``WITHOUT ROWID`` table)."""
    bind = op.get_bind()
    function = f"continuity_0029{convert.__name__}"  # on this connection only
    raw: Any = bind.connection.driver_connection  # sqlite3's
    raw.create_function(function, 1, convert, deterministic=True)
    old = sa.Table(table, sa.MetaData(), autoload_with=bind)
    indexes = (
        bind.exec_driver_sql(
            "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
            "AND sql IS NOT NULL ORDER BY name",
            (table,),
        )
        .scalars()
        .all()
    )
    copy_name = f"{table}_0029"
    copy = sa.Table(
        copy_name,
        sa.MetaData(),
        *(
            sa.Column(c.name, type_ if c.name == column else c.type, nullable=c.nullable)
            for c in old.columns
        ),
        sa.PrimaryKeyConstraint(*(c.name for c in old.primary_key.columns)),
        sqlite_with_rowid=not without_rowid,
    )
    copy.create(bind)
    q = bind.dialect.identifier_preparer.quote
    names = ", ".join(q(c.name) for c in old.columns)
    values = ", ".join(
        f"{function}({q(c.name)})" if c.name == column else q(c.name) for c in old.columns
    )
    bind.exec_driver_sql(f"INSERT INTO {q(copy_name)} ({names}) SELECT {values} FROM {q(table)}")
    op.drop_table(table)
    op.rename_table(copy_name, table)
    for statement in indexes:
        bind.exec_driver_sql(statement)
