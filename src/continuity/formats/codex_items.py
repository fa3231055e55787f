"""What a Codex response item holds, as blocks (spec/formats.md §2.3): message content (text
and ``data:`` URL images), reasoning summaries, tool call arguments and tool outputs with their
error flag.

These functions read one payload and never decide a row's kind, visibility or duplicate status:
that is ``continuity.formats.codex.CodexReader``. A problem is reported through ``warn`` (one
message string, the reader adds the line) and never raised.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

from continuity.core.model import (
    Block,
    MediaBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.core.text import clean, json_bytes
from continuity.formats.base import decode_media, text_of

#: Reports a problem of the payload being read (the reader adds the line number).
Warn = Callable[[str], None]

# Image wrappers newer Codex puts around an ``input_image`` in the user response item (not in the
# ``user_message`` event): ignored when matching the two.
_IMAGE_TAG = re.compile(r"^\s*(<image\b[^>]*>|</image>)\s*$", re.IGNORECASE)
_DATA_URL = re.compile(r"^data:([^;,]*)((?:;[^;,]*)*);base64,", re.IGNORECASE)
_EXIT_CODE_LINE = re.compile(r"^(?:Exit code:|Process exited with code)\s*(-?\d+)\s*$")
_IMAGE_TYPES = ("input_image", "output_image", "image")
#: Tool output strings longer than this (characters) are not parsed as JSON for an exit code.
_JSON_OUTPUT_LIMIT = 8 * 1024 * 1024

#: What ``parse_json`` returns for text that is not JSON.
NOT_JSON = object()


def is_image_tag(text: str) -> bool:
    """True when ``text`` is only an ``<image …>`` or ``</image>`` wrapper."""
    return bool(_IMAGE_TAG.match(text))


def deep_clean(value: Any) -> Any:
    """``value`` with every string cleaned of lone surrogates (dict keys included)."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {(clean(k) if isinstance(k, str) else k): deep_clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [deep_clean(v) for v in value]
    return value


def parse_json(text: str) -> Any:
    """``text`` parsed as JSON, or the sentinel ``NOT_JSON``. Lone surrogates are tolerated."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    try:
        return deep_clean(json.loads(text))
    except (ValueError, RecursionError):
        return NOT_JSON


def add_media(url: Any, blocks: list[Any], payloads: dict[str, bytes]) -> None:
    """Append the MediaBlock of a base64 ``data:`` URL to ``blocks`` and its bytes to
    ``payloads``; any other URL or value adds nothing."""
    if not isinstance(url, str):
        return
    match = _DATA_URL.match(url)
    if not match:
        return
    media, data = decode_media(match.group(1) or "application/octet-stream", url[match.end() :])
    blocks.append(media)
    payloads.update(data)


def content_blocks(content: Any, warn: Warn) -> tuple[list[str], list[Block], dict[str, bytes]]:
    """Texts, blocks (text and media in content order) and media payloads of a message
    ``content`` (a list of blocks, or a plain string). ``<image …>``/``</image>`` wrapper
    texts are dropped from the blocks: the media block stands in their place."""
    texts: list[str] = []
    blocks: list[Block] = []
    payloads: dict[str, bytes] = {}
    if isinstance(content, str):
        content = [content]
    if not isinstance(content, list):
        warn("message: content missing")
        return texts, blocks, payloads
    for block in content:
        value: Any = block
        if isinstance(block, dict):
            btype = block.get("type")
            if btype in _IMAGE_TYPES:
                add_media(block.get("image_url") or block.get("url"), blocks, payloads)
                continue
            value = next(
                (
                    block[k]
                    for k in ("text", "output_text", "input_text", "refusal")
                    if isinstance(block.get(k), str)
                ),
                None,
            )
            if value is None:
                if btype in ("input_text", "output_text", "text", "refusal"):
                    warn(f"message: {btype} block without text")
                else:
                    warn(f"message: unknown content block type {btype!r} skipped")
                continue
        if not isinstance(value, str):
            continue
        text = clean(value)
        texts.append(text)
        if text and not is_image_tag(text):
            blocks.append(TextBlock(text))
    return texts, blocks, payloads


def reasoning_blocks(p: dict) -> list[Block]:
    """Thinking blocks of a ``reasoning`` item: its summary texts when there are any, else
    its raw reasoning texts (none when it holds only encrypted content)."""
    blocks: list[Block] = []
    for source in ("summary", "content"):
        items = p.get(source)
        if not isinstance(items, list):
            continue
        for item in items:
            text = item.get("text") if isinstance(item, dict) else item
            if isinstance(text, str) and text.strip():
                blocks.append(ThinkingBlock(clean(text)))
        if blocks:  # the summary when there is one; raw reasoning text only as fallback
            break
    return blocks


def call_id(p: dict, kind: str, warn: Warn) -> str:
    """The item's ``call_id`` (else its ``id``), "" with a warning when it has neither."""
    for key in ("call_id", "id"):
        value = p.get(key)
        if isinstance(value, str) and value:
            return clean(value)
    warn(f"{kind}: call_id missing")
    return ""


def tool_call_block(kind: str, p: dict, warn: Warn) -> ToolCallBlock:
    """The call of a ``function_call`` (arguments: a JSON object, else the raw string),
    ``custom_tool_call`` (its ``input`` string) or ``local_shell_call`` (its ``action``)."""
    cid = call_id(p, kind, warn)
    name = text_of(p.get("name"))
    arguments: Any
    if kind == "function_call":
        raw = p.get("arguments")
        if isinstance(raw, dict):
            arguments = deep_clean(raw)
        elif isinstance(raw, str):
            parsed = parse_json(raw) if raw.strip() else NOT_JSON
            arguments = parsed if isinstance(parsed, dict) else clean(raw)
        else:
            warn("function_call: arguments missing")
            arguments = {}
    elif kind == "custom_tool_call":
        raw = p.get("input")
        if not isinstance(raw, str):
            warn("custom_tool_call: input missing")
        arguments = text_of(raw)
    else:  # local_shell_call
        name = name or "local_shell"
        action = p.get("action")
        if not isinstance(action, dict):
            warn("local_shell_call: action missing")
        arguments = deep_clean(action) if isinstance(action, dict) else {}
    if not name:
        warn(f"{kind}: name missing")
    return ToolCallBlock(cid, name, arguments)


def tool_search_block(kind: str, p: dict) -> ToolCallBlock | ToolResultBlock | None:
    """The call (``tool_search_call``) or result (``tool_search_output``) block of a tool
    search the client ran; None for one the server ran or one without a call id."""
    cid = p.get("call_id")
    if not isinstance(cid, str) or not cid or p.get("execution") == "server":
        return None
    if kind == "tool_search_call":
        args = p.get("arguments")
        return ToolCallBlock(
            clean(cid), "tool_search", deep_clean(args) if args is not None else {}
        )
    tools = p.get("tools")
    text = json_bytes(tools).decode() if tools is not None else ""
    return ToolResultBlock(clean(cid), p.get("status") == "failed", text)


def tool_output(output: Any) -> tuple[str, bool, list[MediaBlock], dict[str, bytes]]:
    """Text, error flag, media and payloads of a tool output (string, object or list).

    The text is the output's own text where it has one (a string; ``output``, ``content`` or
    ``content_items`` of an object; the ``text``/``output_text`` of list items). An output
    that is data without such text (an MCP tool's structured result ``{"rows": 3}``, a
    number, a list item of another type) is shown as its compact JSON (issue 20: it showed
    as empty), so nothing the tool returned is dropped from the transcript."""
    media: list[MediaBlock] = []
    payloads: dict[str, bytes] = {}
    if output is None:
        return "", False, media, payloads
    if isinstance(output, str):
        return clean(output), string_says_error(output), media, payloads
    if isinstance(output, list):
        texts: list[str] = []
        for item in output:
            if isinstance(item, str):
                texts.append(clean(item))
            elif isinstance(item, dict):
                if item.get("type") in _IMAGE_TYPES:
                    add_media(item.get("image_url") or item.get("url"), media, payloads)
                    continue
                value = item.get("text")
                if not isinstance(value, str):
                    value = item.get("output_text")
                texts.append(clean(value) if isinstance(value, str) else _as_json(item))
            else:
                texts.append(_as_json(item))
        return "\n".join(texts), False, media, payloads
    if isinstance(output, dict):
        inner = next(
            (
                output[k]
                for k in ("output", "content", "content_items")
                if output.get(k) is not None
            ),
            None,
        )
        if inner is None:
            text, is_error = _as_json(output), False
        else:
            text, is_error, media, payloads = tool_output(inner)
        if output.get("success") is False or exit_code_error(output):
            is_error = True
        return text, is_error, media, payloads
    return _as_json(output), False, media, payloads


def _as_json(value: Any) -> str:
    """``value`` as compact JSON text (``core.text.json_bytes``: non-ASCII kept)."""
    return clean(json_bytes(value).decode("utf-8"))


def exit_code_error(obj: dict) -> bool:
    """True when ``obj`` (or its ``metadata``) gives an integer exit code other than 0."""
    for holder in (obj, obj.get("metadata")):
        if isinstance(holder, dict):
            code = holder.get("exit_code")
            if isinstance(code, int) and not isinstance(code, bool):
                return code != 0
    return False


def string_says_error(output: str) -> bool:
    """True when a tool output string clearly states a non-zero exit code: the JSON shape
    ``{"output": …, "metadata": {"exit_code": N}}`` or an ``Exit code: N`` /
    ``Process exited with code N`` line in the header before ``Output:``."""
    stripped = output.lstrip()
    if stripped.startswith("{") and ('"exit_code"' in stripped or '"success"' in stripped):
        parsed = parse_json(stripped) if len(stripped) < _JSON_OUTPUT_LIMIT else NOT_JSON
        if isinstance(parsed, dict):
            return parsed.get("success") is False or exit_code_error(parsed)
    for header_line in output[:2048].splitlines()[:6]:
        if header_line.strip() == "Output:":
            break
        match = _EXIT_CODE_LINE.match(header_line.strip())
        if match:
            return int(match.group(1)) != 0
    return False
