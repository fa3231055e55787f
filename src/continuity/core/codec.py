"""Encoding of content blocks: to and from stored JSON, and to the view wire shape.

Two shapes, one place:

- **stored** (``blocks_to_json`` / ``blocks_from_json``): every field, media by sha256;
- **view** (``block_view``): the `continue --json` contract of the README: ``text {text}``,
  ``thinking {text}``, ``tool_call {id, name, arguments}``, ``tool_result {call_id, is_error,
  text}``, ``media {media_type, bytes}``. Media inside a tool result become stubs appended to its
  text; payloads never travel (seed 002: base64 is outside the text budget).

An image never hides inside text (spec/continuation.md, issue 15): in the view shape, every
base64 ``data:`` URL inside a text, thinking or tool-result text becomes the media stub
``[image/png 90480 B omitted]`` (its type and decoded bytes) where it stood
(``stub_data_urls``).

``message_view`` builds one view message ``{seq, role, copied, content}`` and ``message_bytes`` its
UTF-8 compact-JSON length, the figure the store keeps per row so that a continuation can select
a tail without reading its content.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import orjson

from continuity.core.model import (
    Block,
    Entry,
    MediaBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.core.text import json_bytes, json_len

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any


def block_to_dict(block: Block) -> dict[str, Any]:
    """Stored shape of one block (all fields)."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingBlock):
        return {"type": "thinking", "text": block.text}
    if isinstance(block, MediaBlock):
        return {
            "type": "media",
            "media_type": block.media_type,
            "bytes": block.bytes,
            "sha256": block.sha256,
        }
    if isinstance(block, ToolCallBlock):
        return {
            "type": "tool_call",
            "id": block.id,
            "name": block.name,
            "arguments": block.arguments,
        }
    if isinstance(block, ToolResultBlock):
        out: dict[str, Any] = {
            "type": "tool_result",
            "call_id": block.call_id,
            "is_error": block.is_error,
            "text": block.text,
        }
        if block.media:
            out["media"] = [block_to_dict(m) for m in block.media]
        if block.synthetic:
            out["synthetic"] = True
        return out
    raise TypeError(f"not a content block: {block!r}")


def block_from_dict(data: dict[str, Any]) -> Block:
    """Inverse of ``block_to_dict``. Raises ``ValueError`` naming an unknown block type."""
    kind = data.get("type")
    if kind == "text":
        return TextBlock(data["text"])
    if kind == "thinking":
        return ThinkingBlock(data["text"])
    if kind == "media":
        return MediaBlock(data["media_type"], int(data["bytes"]), data.get("sha256", ""))
    if kind == "tool_call":
        return ToolCallBlock(data["id"], data["name"], data.get("arguments"))
    if kind == "tool_result":
        media = tuple(block_from_dict(m) for m in data.get("media", ()))
        return ToolResultBlock(
            data["call_id"],
            bool(data["is_error"]),
            data.get("text", ""),
            media,  # pyright: ignore[reportArgumentType] - see below
            bool(data.get("synthetic", False)),
        )
    # (media: rows stored before a Claude Code text document went to the result's text may
    # hold a text block there; it is read back as stored, never dropped)
    raise ValueError(f"unknown stored block type {kind!r}")


def blocks_to_json(blocks: Iterable[Block]) -> str:
    """Stored JSON text of a row's blocks."""
    return json_bytes([block_to_dict(b) for b in blocks]).decode("utf-8")


def blocks_from_json(text: str) -> tuple[Block, ...]:
    """Blocks from their stored JSON text."""
    return tuple(block_from_dict(d) for d in orjson.loads(text))


#: A base64 ``data:`` URL: its media type (may be empty), parameters, and payload (case
#: ignored). Compiled on first use (``re``'s cache): few texts hold one (issue 43 goal 3).
_DATA_URL = (
    r"(?i)data:([\w.+-]+/[\w.+-]+|)((?:;[\w.+-]+=[\w.+-]+)*);base64,"
    r"([A-Za-z0-9+/]+={0,2})"
)
#: Payloads shorter than this (characters) are left as text (a data URL mentioned in prose).
DATA_URL_MIN = 16


def _data_url_stub(match: re.Match[str]) -> str:
    payload = match.group(3)
    if len(payload) < DATA_URL_MIN:
        return match.group(0)
    size = len(payload.rstrip("=")) * 3 // 4
    return MediaBlock(match.group(1).lower() or "application/octet-stream", size).stub()


def stub_data_urls(text: str) -> str:
    """``text`` with each base64 ``data:`` URL (payload of ``DATA_URL_MIN``+ characters)
    replaced, where it stood, by its media stub ``[<type> <decoded bytes> B omitted]`` (issue
    15: a 120,653-byte image travelled as tool-result text). Text without one is returned
    unchanged (the same object)."""
    if "base64," not in text:
        return text
    return re.sub(_DATA_URL, _data_url_stub, text)


def block_view(block: Block) -> dict[str, Any]:
    """View shape of one block (the `continue --json` contract). Data URLs inside texts
    become media stubs (``stub_data_urls``)."""
    if isinstance(block, (TextBlock, ThinkingBlock)):
        return {"type": block.type, "text": stub_data_urls(block.text)}
    if isinstance(block, ToolResultBlock):
        text = stub_data_urls(block.text)
        if block.media:
            stubs = " ".join(m.stub() for m in block.media)
            text = f"{text}\n{stubs}" if text else stubs
        out = {
            "type": "tool_result",
            "call_id": block.call_id,
            "is_error": block.is_error,
            "text": text,
        }
        if block.synthetic:
            out["synthetic"] = True
        return out
    if isinstance(block, MediaBlock):
        return {"type": "media", "media_type": block.media_type, "bytes": block.bytes}
    return block_to_dict(block)


def message_view(seq: int, role: str, blocks: Iterable[Block], copied: bool) -> dict[str, Any]:
    """One view message: ``{"seq", "role", "copied", "content"}``."""
    return {"seq": seq, "role": role, "copied": copied, "content": [block_view(b) for b in blocks]}


def message_bytes(
    seq: int,
    role: str,
    blocks: Iterable[Block],
    copied: bool = False,
    stored_json: str | None = None,
) -> int:
    """UTF-8 length of the compact JSON of ``message_view(...)``.

    ``stored_json`` (the row's ``blocks_to_json``) lets rows without media or synthetic results,
    whose view content is byte-identical to the stored content, skip a second serialisation.
    """
    blocks = tuple(blocks)
    if (
        stored_json is not None
        and "base64," not in stored_json
        and not any(
            isinstance(b, MediaBlock)
            or (isinstance(b, ToolResultBlock) and (b.media or b.synthetic))
            for b in blocks
        )
    ):
        head = f'{{"seq":{seq},"role":"{role}","copied":{"true" if copied else "false"},"content":'
        return len(head) + len(stored_json.encode("utf-8")) + 1
    return json_len(message_view(seq, role, blocks, copied))


def iso_time(value: Any) -> str | None:
    """An aware datetime as ISO 8601 with ``Z`` for UTC (``2026-11-20T09:01:00Z``); None stays
    None."""
    return value.isoformat().replace("+00:00", "Z") if value else None


def entry_view(e: Entry) -> dict[str, Any]:
    """One stored row as plain JSON data, blocks in their view shape (``block_view``): ``{seq,
    entry_id, native_id, kind, role, type, visible, is_request, timestamp, content}`` plus
    ``compaction {summary, covers_through_seq, first_kept_entry_id, continuation}`` and
    ``source {path, line}`` when the row has them. The one shape of ``show --json`` rows and
    of ``export --format jsonl`` lines (which add the session and a few flags)."""
    out: dict[str, Any] = {
        "seq": e.seq,
        "entry_id": e.entry_id,
        "native_id": e.native_id,
        "kind": e.kind.value,
        "role": e.role.value,
        "type": e.type_name,
        "visible": e.visible,
        "is_request": e.is_request,
        "timestamp": iso_time(e.timestamp),
        "content": [block_view(b) for b in e.blocks],
    }
    if e.compaction is not None:
        out["compaction"] = {
            "summary": e.compaction.summary,
            "covers_through_seq": e.compaction.covers_through_seq,
            "first_kept_entry_id": e.compaction.first_kept_entry_id,
            "continuation": e.compaction.continuation,
        }
    if e.source is not None:
        out["source"] = {"path": e.source.path, "line": e.source.line}
    return out
