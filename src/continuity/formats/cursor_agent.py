"""Cursor agent transcripts (issue 42 item 2): ``~/.cursor/projects/<encoded workspace>/
agent-transcripts/<session id>/<session id>.jsonl``, a subagent's under
``<session id>/subagents/<id>.jsonl``. Cursor's agent is not on npm and needs a Cursor login,
so this reader was written from public reports of the format ([doc]: issue threads of other
session readers, e.g. coding_agent_session_search#306) and is tested on a synthetic fixture
(``tests/fixtures/cursor_agent``), not a recorded one.

One record a line, an Anthropic-style message: ``{"role": "user" | "assistant", "message":
{"content": a string or blocks}}``; blocks ``text``, ``thinking`` and ``tool_use`` (``name``,
``input``; an ``id`` when present). Between turns ``{"type": "turn_ended", "status":
"success" | "error", "error"?}``. The transcripts hold no timestamps, no session id, no tool
results and no working folder: the session key is the file's folder (``<session id>``, a
subagent's ``<session id>/<id>``), rows have no time, and a call without an ``id`` gets
``cursor-<line>-<n>`` so the continuation can answer it (its effects unknown). A user text
wrapped in ``<user_query>`` tags is the request without them (the line stays raw). A
``turn_ended`` ends its run (``success``: finished; an error: failed, ``User aborted``:
interrupted). Any other record is opaque (counted, kept raw).
"""

from __future__ import annotations

import os
import re
from typing import Any, ClassVar

from continuity.core.model import (
    Block,
    Entry,
    EntryKind,
    Role,
    RunStatus,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from continuity.core.text import clean
from continuity.formats.base import FormatReader, call_arguments, file_stem, str_field, text_of
from continuity.formats.jsonl import Line

HARNESS = "cursor-agent"
_USER_QUERY = re.compile(r"^\s*<user_query>\s*(.*?)\s*</user_query>\s*$", re.DOTALL)


def _is_cursor(obj: Any) -> bool:
    """A Cursor transcript record: a ``turn_ended`` marker, or ``{role, message: {content}}``
    without the envelope keys of the other formats (any role: an unknown one is opaque)."""
    if not isinstance(obj, dict):
        return False
    if obj.get("type") == "turn_ended" and "status" in obj:
        return True
    message = obj.get("message")
    return (
        isinstance(obj.get("role"), str)
        and isinstance(message, dict)
        and "content" in message
        and not any(k in obj for k in ("type", "uuid", "sessionId", "id", "timestamp"))
    )


class CursorAgentReader(FormatReader):
    """Reader of Cursor agent JSONL transcripts (see the module docstring)."""

    harness: ClassVar[str] = HARNESS

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:
        objs = [o for o in head[:5] if isinstance(o, dict)]
        return (
            bool(objs)
            and all(_is_cursor(o) for o in objs)
            and any(o.get("role") in ("user", "assistant") for o in objs)
        )

    @classmethod
    def claims(cls, obj: Any) -> bool:
        return _is_cursor(obj)

    def key_from_head(self, head: list[dict]) -> str | None:
        folder, stem = os.path.split(os.path.dirname(self.path)), file_stem(self.path)
        if folder[1] == "subagents":
            return f"{os.path.basename(folder[0])}/{stem}"
        return stem

    def read(self, line: Line) -> Entry | None:
        data = line.data or {}
        role = str_field(data, "role")
        kind = str_field(data, "type")
        entry = Entry(
            kind=EntryKind.OPAQUE,
            role=Role.SYSTEM,
            visible=False,
            type_name=clean(role or kind or "") or "<missing role>",
        )
        try:
            if kind == "turn_ended":
                entry.kind = EntryKind.EVENT
                status = str_field(data, "status") or ""
                error = text_of(data.get("error"))
                if status == "success":
                    entry.run_end = RunStatus.FINISHED
                elif "abort" in error.lower():
                    entry.run_end = RunStatus.INTERRUPTED
                else:
                    entry.run_end = RunStatus.FAILED
                if error:
                    entry.blocks = (TextBlock(error),)
            elif role in ("user", "assistant") and isinstance(data.get("message"), dict):
                self._message(line, role, data["message"].get("content"), entry)
        except Exception as exc:  # noqa: BLE001 - never raise on odd input (formats.md §5.1)
            self.warn(line, f"unreadable record: {type(exc).__name__}: {exc}")
            entry.kind, entry.role, entry.blocks, entry.visible = (
                EntryKind.OPAQUE,
                Role.SYSTEM,
                (),
                False,
            )
            entry.is_request, entry.run_end = False, None
        return entry

    def _message(self, line: Line, role: str, content: Any, entry: Entry) -> None:
        blocks: list[Block] = []
        items = [content] if isinstance(content, str) else content
        for n, block in enumerate(items if isinstance(items, list) else []):
            if isinstance(block, str):
                blocks.append(TextBlock(text_of(block)))
                continue
            kind = str_field(block, "type")
            if kind == "text":
                text = text_of(block.get("text"))
                if role == "user" and (m := _USER_QUERY.match(text)):
                    text = m.group(1)
                blocks.append(TextBlock(text))
            elif kind == "thinking":
                blocks.append(ThinkingBlock(text_of(block.get("thinking") or block.get("text"))))
            elif kind == "tool_use":
                call_id = text_of(block.get("id")) or f"cursor-{line.number}-{n}"
                blocks.append(
                    ToolCallBlock(
                        call_id, text_of(block.get("name")), call_arguments(block.get("input"))
                    )
                )
            else:
                self.warn(line, f"content: unknown block type {kind or '?'!r} (kept raw)")
        entry.kind, entry.visible, entry.blocks = EntryKind.MESSAGE, True, tuple(blocks)
        if role == "user":
            entry.role = Role.USER
            entry.is_request = any(isinstance(b, TextBlock) and b.text.strip() for b in blocks)
        else:
            entry.role = Role.ASSISTANT
