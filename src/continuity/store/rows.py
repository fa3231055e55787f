"""A stored ``entries`` row as an ``Entry``: the one decoder of both read paths, the
SQLAlchemy store (``store.sql.SqlStore``) and the standard library's (``store.lite``, issue 43
goal 3), so the two cannot drift apart (the store conformance suite runs every read on both).

Standard library and ``orjson`` only; ``zstandard`` (``store.rawcodec``) is imported for a
row whose long content is kept as a zstd frame (revision 0024).

Revision 0030 (issue 43 goal 2): a row's entry id is not stored. It is always
``<session_key>:<seq>`` (``entry_id_of``), derived here from the row's key; a lookup by entry id
is one by the primary key (``parse_entry_id``). The row's source path is read through
``source_paths`` (both read paths join it), so the decoder gets the path's text as before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

import orjson

from continuity.core.codec import blocks_from_json
from continuity.core.errors import InputError
from continuity.core.model import CompactionInfo, Entry, EntryKind, Role, RunStatus, SourceRef
from continuity.core.when import usable_time

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any

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


def entry_id_of(session_key: str, seq: int) -> str:
    """The entry id of row ``seq`` of session ``session_key``: ``<session_key>:<seq>`` (revision
    0030: derived, never stored; a key may hold colons, the seq never does, so the last colon
    splits it back: ``parse_entry_id``)."""
    return f"{session_key}:{seq}"


#: A canonical UUID as text: 8-4-4-4-12 lowercase hex digits (``str(uuid.UUID(...))``, what
#: Claude Code writes as a line's ``uuid`` and ``parentUuid``).
_CANONICAL_UUID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z"
).match


def native_stored(native_id: str | None) -> str | bytes | None:
    """How SQLite keeps a row's native id or parent id (revision 0034, issue 43 goal 2;
    ``schema.NativeId``): a canonical UUID (36 characters of lowercase hex and hyphens, as
    ``str(uuid.UUID(x))`` writes it) as its 16 bytes (a BLOB; 20 bytes less in the row),
    any other id (pi's 8 hex digits, an uppercase or braced UUID, an empty string) as its
    text, unchanged. Only the canonical form is turned into bytes, so ``native_loaded`` gives
    back the very text; SQLite never finds a BLOB equal to a text, so the two forms cannot be
    confused. The NUL rule is the caller's (a UUID holds no NUL)."""
    if isinstance(native_id, str) and len(native_id) == 36 and _CANONICAL_UUID(native_id):
        return bytes.fromhex(native_id.replace("-", ""))
    return native_id


def native_loaded(value: str | bytes | None) -> str | None:
    """The native id ``native_stored`` kept as ``value``: 16 bytes as the canonical UUID text
    (lowercase, hyphenated), text and None as they are. Raises ``ValueError`` for bytes of
    another length (no revision writes them)."""
    if not isinstance(value, bytes):
        return value
    if len(value) != 16:
        raise ValueError(f"a stored native id of {len(value)} bytes, not 16")
    h = value.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def native_hash(session_key: str, native_id: str | None) -> int | None:
    """The number ``entries.native_hash`` keeps for a row (revision 0033, issue 43 goal 2), by
    which the import finds a session's rows by native id (``ix_entries_native_hash``): the
    first 4 bytes of BLAKE2b over the UTF-8 of ``session_key``, NUL, ``native_id``, as a
    signed 32-bit integer (big-endian; SQLite stores it in 4 bytes where a 64-bit one took
    8), both after the NUL rule (``schema.nul_free``: NUL as U+FFFD, as they are stored).
    None when the row has no native id. Two ids that share a number are told apart by the
    look-up itself, which also compares the key and the id; the number only finds the
    candidates (in a store of a million ids, an id's number is another's about once in
    4,000 look-ups: one row more read), and its index is a fifth of one of (session_key,
    native_id).

    Fixed forever: every stored row holds it, so a change is a revision that computes it
    again (revision 0033 inlines this function for its upgrade)."""
    if not native_id:
        return None
    global _blake2b
    if _blake2b is None:  # hashlib's, without OpenSSL's load (the fast path's start)
        from _blake2 import blake2b as _blake2b
    if "\x00" in session_key or "\x00" in native_id:
        session_key, native_id = (
            session_key.replace("\x00", "\ufffd"),
            native_id.replace("\x00", "\ufffd"),
        )
    data = f"{session_key}\x00{native_id}".encode("utf-8", "surrogatepass")
    return int.from_bytes(_blake2b(data, digest_size=4).digest(), "big", signed=True)


#: ``_blake2.blake2b``, imported by the first ``native_hash`` (an import inside the function
#: each time cost as much as the hash: 216,400 calls in a 320 MB import)
_blake2b: Any = None


def parse_entry_id(entry_id: str) -> tuple[str, int]:
    """``(session_key, seq)`` of an entry id (``entry_id_of``), split at its last colon.
    Raises ``InputError`` naming the id for one that is not a non-empty key, a colon and a
    seq as ``entry_id_of`` writes it (decimal, from 0, no leading zero: ``"k:-1"``,
    ``"k:1.0"``, ``"k:07"``, ``":3"`` and ``"k"`` are no row's id)."""
    key, colon, seq = entry_id.rpartition(":")
    if not (colon and key and seq.isascii() and seq.isdigit() and str(int(seq)) == seq):
        raise InputError(
            f"entry id {entry_id!r} is malformed: an entry id is <session key>:<seq> "
            "(the session's key, a colon, the row's number from 0)"
        )
    return key, int(seq)


def decode_entry(values: Sequence[Any]) -> Entry:
    """The ``Entry`` of the 21 columns ``schema.ENTRY_READ`` names (``session_key, seq,
    native_id, parent_native_id, kind, role, type_name, visible, base_visible, is_request,
    sidechain, ts, cwd, content, meta_json, view_bytes, line_no, byte_offset, raw_sha256,
    content_z, source_path``: ``entries``' columns in table order, its ``source_id`` read as
    the path ``source_paths`` numbers), read by position (issue 17: a named attribute costs
    about as much as the rest of the decode). ``entry_id`` is ``entry_id_of(session_key,
    seq)`` (revision 0030). ``native_id`` and ``parent_native_id`` are text, or (``sqlite3``'s
    read of a UUID, revision 0034) the 16 bytes ``native_stored`` kept, given as the UUID's
    text. ``raw_sha256`` is hex (SQLAlchemy's read, through
    ``schema.Sha256``) or the stored 32 bytes (``sqlite3``'s, ``store.lite``), given as hex
    either way (revision 0029). Raises ``ValueError`` for a kind or role no ``EntryKind``/``Role``
    has."""
    (
        key,
        seq,
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
        line_no,
        byte_offset,
        raw_sha256,
        content_z,
        source_path,
    ) = values
    if native_id.__class__ is bytes:  # sqlite3's read of a UUID kept as 16 bytes (0034)
        native_id = native_loaded(native_id)
    if parent_native_id.__class__ is bytes:
        parent_native_id = native_loaded(parent_native_id)
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
        if isinstance(raw_sha256, bytes):  # sqlite3's read: the stored 32 bytes (revision 0029)
            raw_sha256 = raw_sha256.hex()
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
        entry_id=f"{key}:{seq}",
    )


#: The conditions of two partial indexes (revision 0031), stated word for word by the queries
#: of both read paths that use them, so SQLite sees the index's own condition (``store.schema``
#: declares the indexes with these): a session's compactions (``ix_entries_compaction``) and
#: the tool calls not answered after them (``ix_tool_calls_unpaired``).
COMPACTION_ROW = "kind = 'compaction'"
UNPAIRED_CALL = "result_seq IS NULL OR result_seq < call_seq"

#: How many columns ``decode_entry`` takes (``tests/store/test_lite.py`` holds it to the table).
ENTRY_WIDTH = 21

__all__ = [
    "COMPACTION_ROW",
    "ENTRY_WIDTH",
    "KINDS",
    "ROLES",
    "UNPAIRED_CALL",
    "decode_entry",
    "entry_id_of",
    "parse_entry_id",
    "stored_time",
]
