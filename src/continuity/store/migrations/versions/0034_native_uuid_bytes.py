"""0034 native uuid bytes: on SQLite a row's native id and parent id that are UUIDs are kept
as their 16 bytes (issue 43 goal 2: store <= 1.0x the input).

Why: Claude Code names every line and its parent by a UUID, 36 characters of text in
``entries.native_id`` and ``parent_native_id``: 14.6 MB of the 217 MB database of
``bench/peers.py``'s 323 MB tree. As 16 bytes (a BLOB) they take 8 MB less. Only the
canonical form (lowercase hex, hyphenated: what ``str(uuid.UUID(x))`` writes) is turned into
bytes, so reading gives back the very text (``store.rows.native_stored`` / ``native_loaded``,
``schema.NativeId``); SQLite never finds a BLOB equal to a text, so the two forms cannot be
confused. PostgreSQL keeps the text: this revision changes nothing there.

Upgrade (SQLite): every text id of the canonical form becomes its 16 bytes, a batch of rows
at a time in ``entry_no`` order. Downgrade (SQLite): every 16-byte id becomes the UUID's text
again. No column or index changes: ``ix_entries_native_hash`` holds numbers computed from the
text, the same before and after.

Revision ID: 0034
Revises: 0033
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from alembic import op
from sqlalchemy import text

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None

_BATCH = 5_000

#: ``store.rows._CANONICAL_UUID`` as this revision applies it (migrations inline the rules
#: they apply, style.md §3)
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")


def _to_bytes(value: Any) -> Any:
    if isinstance(value, str) and len(value) == 36 and _CANONICAL_UUID.match(value):
        return bytes.fromhex(value.replace("-", ""))
    return value


def _to_text(value: Any) -> Any:
    if isinstance(value, bytes) and len(value) == 16:
        h = value.hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return value


def _convert(conn: Any, kind: str, convert: Callable[[Any], Any]) -> None:
    """Rewrite, by ``convert``, the ids of every row whose id or parent id is stored as
    ``kind`` (SQLite's ``typeof``: 'text' going up, 'blob' going down)."""
    last = 0
    while True:
        rows = conn.execute(
            text(
                "SELECT entry_no, native_id, parent_native_id FROM entries "
                "WHERE entry_no > :last AND (typeof(native_id) = :kind "
                "OR typeof(parent_native_id) = :kind) ORDER BY entry_no LIMIT :n"
            ),
            {"last": last, "kind": kind, "n": _BATCH},
        ).all()
        if not rows:
            return
        changed = [
            {"no": no, "id": convert(nid), "parent": convert(parent)}
            for no, nid, parent in rows
            if convert(nid) != nid or convert(parent) != parent
        ]
        if changed:
            conn.execute(
                text(
                    "UPDATE entries SET native_id = :id, parent_native_id = :parent "
                    "WHERE entry_no = :no"
                ),
                changed,
            )
        last = rows[-1][0]


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        _convert(conn, "text", _to_bytes)


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "sqlite":
        _convert(conn, "blob", _to_text)
