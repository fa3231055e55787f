"""A stored ``entries`` row as an ``Entry``: the one decoder of both read paths, the
SQLAlchemy store (``store.sql.SqlStore``) and the standard library's (``store.lite``, issue 43
goal 3), so the two cannot drift apart (the store conformance suite runs every read on both).

Standard library and ``orjson`` only; ``zstandard`` (``store.rawcodec``) is imported for a
row whose long content is kept as a zstd frame (revision 0024).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson

from continuity.core.codec import blocks_from_json
from continuity.core.model import CompactionInfo, Entry, EntryKind, Role, RunStatus, SourceRef
from continuity.core.when import usable_time

#: The enums by stored value (issue 17: a dict lookup costs less than the enum's call).
KINDS = {k.value: k for k in EntryKind}
ROLES = {r.value: r for r in Role}


def stored_time(value: Any) -> datetime | None:
    """A stored time (SQLite through ``sqlite3``: ``YYYY-MM-DD HH:MM:SS.ffffff`` text, naive
    UTC; SQLAlchemy: a ``datetime``) as aware UTC, or None out of range (``usable_time``)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return usable_time(value)


def decode_entry(values: Sequence[Any]) -> Entry:
    """The ``Entry`` of the 22 ``entries`` columns in table order (``session_key, seq,
    entry_id, native_id, parent_native_id, kind, role, type_name, visible, base_visible,
    is_request, sidechain, ts, cwd, content, meta_json, view_bytes, source_path, line_no,
    byte_offset, raw_sha256, content_z``), read by position (issue 17: a named attribute costs
    about as much as the rest of the decode). Raises ``ValueError`` for a kind or role no
    ``EntryKind``/``Role`` has."""
    (
        _key,
        seq,
        entry_id,
        native_id,
        parent_native_id,
        kind,
        role,
        type_name,
        visible,
        _base_visible,
        is_request,
        sidechain,
        ts,
        cwd,
        content,
        meta_json,
        _view_bytes,
        source_path,
        line_no,
        byte_offset,
        raw_sha256,
        content_z,
    ) = values
    if content_z is not None:  # revision 0024: a long content kept as a zstd frame
        from continuity.store.rawcodec import decode_text

        content = decode_text(bytes(content_z))
    compaction, run_end = None, None
    if meta_json:
        meta = orjson.loads(meta_json)
        if meta.get("run_end"):
            run_end = RunStatus(meta["run_end"])
        m = meta.get("compaction")
        if m:
            compaction = CompactionInfo(
                summary=m.get("summary", ""),
                covers_through_seq=m.get("covers_through_seq"),
                first_kept_entry_id=m.get("first_kept_entry_id"),
                continuation=bool(m.get("continuation")),
                run_id=m.get("run_id"),
                trigger=m.get("trigger"),
            )
    source = None
    if source_path is not None:
        source = SourceRef(source_path, line_no, byte_offset, raw_sha256 or "")
    return Entry(
        kind=KINDS.get(kind) or EntryKind(kind),
        role=ROLES.get(role) or Role(role),
        blocks=blocks_from_json(content),
        timestamp=stored_time(ts),
        native_id=native_id,
        parent_native_id=parent_native_id,
        type_name=type_name,
        visible=bool(visible),
        is_request=bool(is_request),
        sidechain=bool(sidechain),
        compaction=compaction,
        source=source,
        cwd=cwd,
        run_end=run_end,
        seq=seq,
        entry_id=entry_id,
    )


#: The conditions of two partial indexes (revision 0031), stated word for word by the queries
#: of both read paths that use them, so SQLite sees the index's own condition (``store.schema``
#: declares the indexes with these): a session's compactions (``ix_entries_compaction``) and
#: the tool calls not answered after them (``ix_tool_calls_unpaired``).
COMPACTION_ROW = "kind = 'compaction'"
UNPAIRED_CALL = "result_seq IS NULL OR result_seq < call_seq"

#: How many columns ``decode_entry`` takes (``tests/store/test_lite.py`` holds it to the table).
ENTRY_WIDTH = 22

__all__ = [
    "COMPACTION_ROW",
    "ENTRY_WIDTH",
    "KINDS",
    "ROLES",
    "UNPAIRED_CALL",
    "decode_entry",
    "stored_time",
]
