"""The session record of a LangGraph thread (issue 46 item 2), written by
``continuity.adapters.langgraph`` and read here like any harness's session file.

One JSON object a line, one line per message of the graph state's ``messages`` channel, in
the order the thread's checkpoints first held them, a message written again when its content
changed (the importer keeps both copies and shows the newer, ``formats.repeats``):

``{"langgraph": 1, "thread_id": T, "checkpoint_id": C, "recorded_at": ISO-8601, "cwd": D,
"message": {"type": "human"|"ai"|"tool"|"system"|..., "data": {...}}}``

``message`` is LangChain's own dict of the message (``langchain_core.messages.message_to_dict``:
content, id, tool calls, tool_call_id, additional and response metadata...), kept whole in the
raw line; the row takes what a view needs:

- ``human``: a user request (text of ``content``: the string, or the text parts of a list);
- ``ai``: assistant text and a ``ToolCallBlock`` per ``tool_calls`` item (``id``, ``name``,
  ``args``); without tool calls it ends the run (``run_end`` finished);
- ``tool``: the result of ``tool_call_id`` (``status`` "error": an error result);
- ``system``: context (kept, never a request, not in views);
- any other type (``remove``, a custom message): an opaque row, its line kept.

The session key is the thread id (``core.keys.session_key``), the harness ``langgraph``.
"""

from __future__ import annotations

from typing import Any

from continuity.core.model import (
    Block,
    Entry,
    EntryKind,
    Role,
    RunStatus,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.formats.base import FormatReader
from continuity.formats.jsonl import Line

#: the field every line of a record carries, with the format's version
MARKER = "langgraph"
HARNESS = "langgraph"


def content_text(content: Any) -> str:
    """The text of a LangChain message ``content``: the string itself, or the ``text`` of the
    text parts of a list (strings, ``{"type": "text", "text": ...}``) joined by blank lines;
    other parts (images, tool-use parts) are left to the raw line."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        p if isinstance(p, str) else p.get("text")
        for p in content
        if isinstance(p, str) or (isinstance(p, dict) and p.get("type") == "text")
    ]
    return "\n\n".join(p for p in parts if isinstance(p, str) and p)


class LangGraphReader(FormatReader):
    """Reader of the LangGraph session record (module docstring)."""

    harness = HARNESS

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:
        first = head[0] if head else None
        return (
            isinstance(first, dict)
            and isinstance(first.get(MARKER), int)
            and isinstance(first.get("thread_id"), str)
            and isinstance(first.get("message"), dict)
        )

    def key_from_head(self, head: list[dict]) -> str | None:
        first = head[0] if head else None
        return first.get("thread_id") if isinstance(first, dict) else None

    def __init__(self, path: str, head: list[dict], state: dict | None = None) -> None:
        super().__init__(path, head, state)
        self.restore(state)

    def read(self, line: Line) -> Entry | None:
        data = line.data or {}
        message = data.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("data"), dict):
            self.warn(line, "message: expected an object with type and data (kept opaque)")
            return Entry(
                kind=EntryKind.OPAQUE,
                role=Role.SYSTEM,
                visible=False,
                timestamp=self.time_field(line, data.get("recorded_at"), "recorded_at"),
            )
        body = message["data"]
        kind_name = self.string_field(line, message, "type") or ""
        cwd = self.string_field(line, data, "cwd")
        if cwd:
            self._facts.cwd = cwd
        entry = Entry(
            kind=EntryKind.MESSAGE,
            role=Role.ASSISTANT,
            type_name=kind_name,
            timestamp=self.time_field(line, data.get("recorded_at"), "recorded_at"),
            native_id=self.string_field(line, body, "id"),
            cwd=cwd,
        )
        text = content_text(body.get("content"))
        blocks: list[Block] = [TextBlock(text)] if text else []
        if kind_name == "human":
            entry.role, entry.is_request = Role.USER, True
            if self._facts.title is None and text.strip():
                self._facts.title = text.strip().splitlines()[0][:200]
        elif kind_name == "ai":
            calls = body.get("tool_calls") if isinstance(body.get("tool_calls"), list) else []
            for call in calls:
                if isinstance(call, dict) and isinstance(call.get("name"), str):
                    blocks.append(
                        ToolCallBlock(str(call.get("id") or ""), call["name"], call.get("args", {}))
                    )
            if not calls:
                entry.run_end = RunStatus.FINISHED
        elif kind_name == "tool":
            entry.role = Role.TOOL
            blocks = [
                ToolResultBlock(
                    self.string_field(line, body, "tool_call_id") or "",
                    body.get("status") == "error",
                    text,
                )
            ]
        elif kind_name == "system":
            entry.kind, entry.role = EntryKind.CONTEXT, Role.SYSTEM
        else:
            entry.kind, entry.role, entry.visible = EntryKind.OPAQUE, Role.SYSTEM, False
        entry.blocks = tuple(blocks)
        return entry
