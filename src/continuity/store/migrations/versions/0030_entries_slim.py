"""0030 entries slim: no stored entry id, the source path by number (issue 43 goal 2).

Why: ``entries`` repeated on every row what is known elsewhere. On a 50 MB tree of Claude Code
sessions (``bench/peers.py``, 33,805 rows) ``entries`` was 24.5 MB, of which ``source_path``
(the session file's full path on every row, 83 bytes a row) 2.8 MB and ``entry_id`` 1.35 MB
plus its unique index ``ux_entries_entry_id`` 1.9 MB. ``entry_id`` is always
``<session_key>:<seq>`` on every write path (import, live capture, the continuation
checkpoint, team copies: the copy keeps the session's key and seqs): it is derived at read
(``store.rows.entry_id_of``) and a lookup by id is one by the primary key
(``Store.entry_by_id``). The path is numbered once in ``source_paths`` (revision 0023, which
``source_lines`` uses): a row keeps its ``source_id``.

Upgrade: ``source_id`` is added and set from each row's path (a path ``source_paths`` lacks is
numbered first), then ``entry_id``, its index and ``source_path`` go. On SQLite the table is
recreated by Alembic's batch mode (the columns and indexes it keeps reflected as they are,
whatever type an earlier revision gave them); the full-text index names rows by
``(session_key, seq)`` (``entries_fts_rows``, revision 0014), never by the table's rowid, so it
stays consistent. A row whose stored id is not ``<session_key>:<seq>`` (no version ever wrote
one) stops the upgrade with ``StoreError`` naming it, instead of losing it. Downgrade: both
columns are written back from the key, seq and ``source_paths``, with the unique index.

Revision ID: 0030
Revises: 0028
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None

#: ``<session_key>:<seq>`` in SQL (SQLite and PostgreSQL both concatenate with ``||``).
_DERIVED = "session_key || ':' || CAST(seq AS TEXT)"


def _check_ids(bind: sa.Connection) -> None:
    """Raise ``StoreError`` when a stored entry id is not the derived one."""
    odd = bind.execute(
        sa.text(
            f"SELECT session_key, seq, entry_id FROM entries WHERE entry_id <> {_DERIVED} LIMIT 1"
        )
    ).first()
    if odd is None:
        return
    count = bind.execute(
        sa.text(f"SELECT count(*) FROM entries WHERE entry_id <> {_DERIVED}")
    ).scalar()
    from continuity.core.errors import StoreError

    raise StoreError(
        f"cannot upgrade to revision 0030: {count} row(s) of entries have an entry id other "
        f"than <session_key>:<seq> (first: session {odd[0]!r} seq {odd[1]} holds "
        f"{odd[2]!r}); no version of continuity writes such an id, so the database was "
        "changed by hand: fix those rows or restore a backup, then run `continuity db upgrade`"
    )


def upgrade() -> None:
    bind = op.get_bind()
    _check_ids(bind)
    op.add_column("entries", sa.Column("source_id", sa.Integer))
    op.execute(
        "INSERT INTO source_paths (path) SELECT source_path FROM entries "
        "WHERE source_path IS NOT NULL AND source_path NOT IN (SELECT path FROM source_paths) "
        "GROUP BY source_path ORDER BY source_path"
    )
    if bind.dialect.name == "postgresql":
        op.execute(
            "UPDATE entries SET source_id = p.source_id FROM source_paths p "
            "WHERE p.path = entries.source_path"
        )
    else:
        op.execute(
            "UPDATE entries SET source_id = (SELECT p.source_id FROM source_paths p "
            "WHERE p.path = entries.source_path) WHERE source_path IS NOT NULL"
        )
    with op.batch_alter_table("entries") as batch:
        batch.drop_index("ux_entries_entry_id")
        batch.drop_column("entry_id")
        batch.drop_column("source_path")


def downgrade() -> None:
    op.add_column("entries", sa.Column("entry_id", sa.String(300)))
    op.add_column("entries", sa.Column("source_path", sa.Text))
    op.execute(f"UPDATE entries SET entry_id = {_DERIVED}")
    op.execute(
        "UPDATE entries SET source_path = (SELECT p.path FROM source_paths p "
        "WHERE p.source_id = entries.source_id) WHERE source_id IS NOT NULL"
    )
    with op.batch_alter_table("entries") as batch:
        batch.alter_column("entry_id", existing_type=sa.String(300), nullable=False)
        batch.drop_column("source_id")
        batch.create_index("ux_entries_entry_id", ["entry_id"], unique=True)
