"""0033 native hash: the import's look-up by native id through a 4-byte number (issue 43
goal 2: store <= 1.0x the input).

Why: ``ix_entries_native`` (session_key, native_id) held both texts of every row that has a
native id, a 36-character session key and a 36-character id on a Claude Code row: 19.8 MB of
the 232.7 MB database of ``bench/peers.py``'s 320 MB tree, for one query (``native_seqs``: a
session's first row with each of some ids). ``entries.native_hash`` keeps the first 4 bytes
of BLAKE2b of the key, NUL and the id (``store.rows.native_hash``), and the partial index
``ix_entries_native_hash`` holds only that number and the row's number; the look-up finds the
candidates by it and compares the key and the id themselves, so two ids that share a number
cannot be confused.

Upgrade: the column is added (last, after ``entry_no``) and computed for every row that has
a native id, a batch of rows at a time in ``entry_no`` order; the old index is dropped, the
new one made. Downgrade: the old index made again, the column dropped.

Revision ID: 0033
Revises: 0032
"""

from __future__ import annotations

from typing import Any

from alembic import op
from sqlalchemy import text

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None

_BATCH = 5_000


def _native_hash(session_key: str, native_id: str) -> int:
    """``store.rows.native_hash`` as this revision computes it (migrations inline the rules
    they apply, style.md §3): BLAKE2b-32 of key, NUL, id (NUL as U+FFFD), signed big-endian."""
    from hashlib import blake2b

    key, nid = session_key.replace("\x00", "\ufffd"), native_id.replace("\x00", "\ufffd")
    digest = blake2b(f"{key}\x00{nid}".encode("utf-8", "surrogatepass"), digest_size=4).digest()
    return int.from_bytes(digest, "big", signed=True)


def _fill(conn: Any) -> None:
    last = None
    while True:
        rows = conn.execute(
            text(
                "SELECT entry_no, session_key, native_id FROM entries "
                "WHERE native_id IS NOT NULL AND native_id <> ''"
                + ("" if last is None else " AND entry_no > :last")
                + " ORDER BY entry_no LIMIT :n"
            ),
            {"n": _BATCH} if last is None else {"n": _BATCH, "last": last},
        ).all()
        if not rows:
            return
        conn.execute(
            text("UPDATE entries SET native_hash = :h WHERE entry_no = :no"),
            [{"h": _native_hash(key, nid), "no": no} for no, key, nid in rows],
        )
        last = rows[-1][0]


def upgrade() -> None:
    conn = op.get_bind()
    conn.execute(text("ALTER TABLE entries ADD COLUMN native_hash BIGINT"))
    _fill(conn)
    conn.execute(text("DROP INDEX ix_entries_native"))
    conn.execute(
        text(
            "CREATE INDEX ix_entries_native_hash ON entries (native_hash) "
            "WHERE native_hash IS NOT NULL"
        )
    )


def downgrade() -> None:
    conn = op.get_bind()
    conn.execute(text("DROP INDEX ix_entries_native_hash"))
    conn.execute(
        text(
            "CREATE INDEX ix_entries_native ON entries (session_key, native_id) "
            "WHERE native_id IS NOT NULL"
        )
    )
    conn.execute(text("ALTER TABLE entries DROP COLUMN native_hash"))
