"""Reader of the session files ``continuity.adapters.agents_sdk.ContinuitySession`` writes for
the OpenAI Agents SDK (harness name ``openai-agents``).

The SDK keeps no session file of its own: its ``Session`` protocol hands a backend the items of
a conversation (``add_items``), asks for the last one back (``pop_item``) or for none
(``clear_session``). Our adapter records each of those as one JSON line, nothing ever deleted:

- line 1, the header: ``{"type": "openai-agents.session", "version": 1, "id": <session id>,
  "timestamp": <ISO 8601>, "cwd": <folder or null>}``;
- an item: ``{"type": "item", "id": "i<n>", "parent_id": <id or null>, "timestamp": ...,
  "item": <the SDK item exactly as given>}``;
- a pop: ``{"type": "pop", "id": "i<n>", "parent_id": <the item now last, or null>, "pops":
  <the popped item's id>, "timestamp": ...}``;
- a clear: ``{"type": "clear", "id": "i<n>", "parent_id": null, "timestamp": ...}``.

``id``/``parent_id`` form a tree whose leaf (the last line) is the conversation, as in pi: the
importer follows the path from the leaf (``uses_tree``), so a popped item and everything before
a clear fall off it (kept, not visible), and ``show``, ``search`` and ``continue`` see the
conversation the SDK sees.

Mapping of an item (the Responses API input item shapes the SDK stores, ``TResponseInputItem``):

- a message (``role`` with ``type`` absent or ``"message"``): ``user`` → USER message, a request
  when it holds text; ``assistant`` → ASSISTANT (``output_text`` and ``refusal`` as text);
  ``system``/``developer`` → CONTEXT (instructions, never a request, not in views);
  ``input_image``/``input_file`` parts → media blocks (their size, never their data, travels);
- ``function_call`` / ``custom_tool_call`` and every ``*_call`` with a ``call_id``
  (``computer_call``, ``local_shell_call``, ``shell_call``, ``apply_patch_call``...) →
  ASSISTANT tool call (``arguments`` parsed when it is a JSON object, else the string);
  ``*_call_output`` with a ``call_id`` → TOOL result, paired by ``call_id``;
- ``reasoning`` → ASSISTANT thinking (its summary texts);
- other ``*_call`` items without ``call_id`` (hosted tools: web or file search, MCP, image
  generation, code interpreter: the call holds its own result) → ASSISTANT text ``[<type>]``;
- the SDK's own ``compaction`` and ``item_reference`` items, the header, pops and clears →
  EVENT rows (not conversation); anything else → OPAQUE. Every line stays raw in the store.
"""

from __future__ import annotations

from typing import Any, ClassVar

import orjson

from continuity.core.model import (
    Block,
    Entry,
    EntryKind,
    MediaBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.formats.base import FormatReader, call_arguments, text_of
from continuity.formats.jsonl import Line

#: The harness name sessions of this format are stored under.
HARNESS = "openai-agents"
#: The ``type`` of the header line (one the other formats' sniffing never accepts).
HEADER_TYPE = "openai-agents.session"
#: The format version the adapter writes.
VERSION = 1
_TEXT_PARTS = frozenset({"input_text", "output_text", "text"})
_MEDIA_PARTS = {"input_image": "image", "input_file": "file", "input_audio": "audio"}
_EVENT_ITEMS = frozenset({"compaction", "item_reference"})


def call_kind(item: dict) -> str | None:
    """``"call"`` for an item that calls a tool and expects an output item paired by
    ``call_id`` (``function_call``, ``custom_tool_call``, ``computer_call``...), ``"output"``
    for such an output (``function_call_output``...), else None."""
    kind = item.get("type")
    if not isinstance(kind, str) or not isinstance(item.get("call_id"), str):
        return None
    if kind.endswith("_call_output"):
        return "output"
    if kind.endswith("_call"):
        return "call"
    return None


class AgentsSdkReader(FormatReader):
    """Reader of ``openai-agents`` session files (module docstring)."""

    harness: ClassVar[str] = HARNESS
    uses_tree: ClassVar[bool] = True

    def __init__(self, path: str, head: list[dict], state: dict | None = None) -> None:
        super().__init__(path, head, state)
        self.restore(state)

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:
        return bool(head) and isinstance(head[0], dict) and head[0].get("type") == HEADER_TYPE

    def key_from_head(self, head: list[dict]) -> str | None:
        if head and isinstance(head[0], dict) and head[0].get("type") == HEADER_TYPE:
            sid = head[0].get("id")
            if isinstance(sid, str) and sid:
                return sid
        return None

    def read(self, line: Line) -> Entry | None:
        data = line.data or {}
        kind = data.get("type")
        timestamp = self.time_field(line, data.get("timestamp"), "timestamp")
        if kind == HEADER_TYPE:
            self.string_field(line, data, "id")  # the key: a wrong type is named, not used
            version = data.get("version")
            self._facts.version = str(version) if version is not None else None
            cwd = text_of(self.string_field(line, data, "cwd")) or None
            if cwd:
                self._facts.cwd = cwd
            return Entry(
                kind=EntryKind.EVENT,
                role=Role.SYSTEM,
                timestamp=timestamp,
                type_name="session",
                visible=False,
                cwd=cwd,
            )
        entry = Entry(
            kind=EntryKind.OPAQUE,
            role=Role.SYSTEM,
            timestamp=timestamp,
            native_id=self.string_field(line, data, "id"),
            parent_native_id=self.string_field(line, data, "parent_id"),
            type_name=kind if isinstance(kind, str) else "",
            visible=False,
        )
        if kind in ("pop", "clear"):
            entry.kind = EntryKind.EVENT
            return entry
        if kind != "item":
            return entry  # a line of a later version: kept raw, OPAQUE
        item = data.get("item")
        if not isinstance(item, dict):
            self.warn(line, "item: expected an object (kept raw)")
            return entry
        try:
            self._item(line, item, entry)
        except Exception as exc:  # noqa: BLE001 - never raise on odd input (formats.md §5.1)
            self.warn(line, f"unreadable item: {exc}")
            entry.kind, entry.role, entry.blocks, entry.visible = (
                EntryKind.OPAQUE,
                Role.SYSTEM,
                (),
                False,
            )
            entry.is_request, entry.payloads = False, None
        return entry

    def _item(self, line: Line, item: dict, entry: Entry) -> None:
        itype = item.get("type")
        role = item.get("role")
        entry.type_name = f"item/{itype if isinstance(itype, str) else 'message'}"
        if isinstance(role, str) and itype in (None, "message"):
            entry.type_name = f"item/message/{role}"
            blocks = self._content(line, item.get("content"))
            entry.blocks = tuple(blocks)
            if role == "user":
                entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.USER, True
                entry.is_request = any(isinstance(b, TextBlock) and b.text.strip() for b in blocks)
                if entry.is_request and self._facts.title is None:
                    self._facts.title = " ".join(entry.text().split())[:80] or None
            elif role == "assistant":
                entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.ASSISTANT, True
            else:  # system, developer: instructions, not conversation
                entry.kind, entry.role = EntryKind.CONTEXT, Role.SYSTEM
            return
        paired = call_kind(item)
        if paired == "call":
            name = item.get("name")
            if not isinstance(name, str):
                name = itype.removesuffix("_call") if isinstance(itype, str) else ""
            args: Any = item.get("arguments", item.get("input", item.get("action", {})))
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.ASSISTANT, True
            entry.blocks = (
                ToolCallBlock(text_of(item["call_id"]), text_of(name), call_arguments(args)),
            )
        elif paired == "output":
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.TOOL, True
            output = item.get("output")
            text = (
                output
                if isinstance(output, str)
                else "\n".join(
                    b.text for b in self._content(line, output) if isinstance(b, TextBlock)
                )
                if isinstance(output, list)
                else orjson.dumps(output).decode()
                if output is not None
                else ""
            )
            is_error = item.get("status") == "failed" or item.get("is_error") is True
            entry.blocks = (ToolResultBlock(text_of(item["call_id"]), is_error, text_of(text)),)
        elif itype == "reasoning":
            summary = item.get("summary")
            texts = (
                [text_of(s.get("text")) for s in summary if isinstance(s, dict)]
                if isinstance(summary, list)
                else []
            )
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.ASSISTANT, True
            entry.blocks = (ThinkingBlock("\n\n".join(t for t in texts if t)),)
        elif itype in _EVENT_ITEMS:
            entry.kind = EntryKind.EVENT
        elif isinstance(itype, str) and itype.endswith("_call"):
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.ASSISTANT, True
            entry.blocks = (TextBlock(f"[{itype}]"),)
        # anything else stays OPAQUE (kept raw)

    def _content(self, line: Line, content: Any) -> list[Block]:
        """Text and media blocks of a message's ``content`` (a string or a list of parts)."""
        if isinstance(content, str):
            return [TextBlock(text_of(content))]
        if not isinstance(content, list):
            if content is not None:
                self.warn(line, "content: expected a string or a list")
            return []
        blocks: list[Block] = []
        for part in content:
            if isinstance(part, str):
                blocks.append(TextBlock(text_of(part)))
                continue
            if not isinstance(part, dict):
                continue
            ptype = part.get("type")
            if ptype in _TEXT_PARTS:
                blocks.append(TextBlock(text_of(part.get("text"))))
            elif ptype == "refusal":
                blocks.append(TextBlock(text_of(part.get("refusal"))))
            elif ptype in _MEDIA_PARTS:
                size = len(orjson.dumps(part)) if part else 0
                blocks.append(MediaBlock(_MEDIA_PARTS[ptype], size))
            else:
                self.warn(line, f"content: unknown part {ptype!r} skipped (kept raw)")
        return blocks
