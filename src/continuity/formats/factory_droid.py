"""Factory Droid sessions (issue 42 item 2): ``~/.factory/sessions/<encoded cwd>/<session
id>.jsonl`` (a ``<session id>.settings.json`` beside it), observed from droid 0.215.0 run
offline with a custom model (``customModels`` in ``~/.factory/settings.json``, Chat Completions:
no Factory login) against ``tests/e2e/fakemodel.py`` (``tests/fixtures/factory_droid``).

One record a line:

- ``session_start``: ``id`` (the session key), ``title``, ``cwd``, ``version`` (2 seen);
- ``message``: ``id``, ``parentId``, ``timestamp``, ``message`` ``{role, content}`` with
  Anthropic-style blocks: ``text``, ``thinking``, ``tool_use`` (``id``, ``name``, ``input``),
  ``tool_result`` (``tool_use_id``, ``is_error``, ``content``: a string or text blocks),
  ``image`` (base64 ``source``). A user message whose id starts ``context-`` is text Droid
  injects (system reminders): context. A user message holding only tool results is the tool
  row;
- ``agent_turn_outcome`` (``turnId``, ``reason``: ``completed`` ends the run finished, an
  ``error``/``failed`` one failed, ``cancelled``/``interrupted`` interrupted): an event.

Any other record type is opaque (counted, kept raw); an unknown block type is warned about.
"""

from __future__ import annotations

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
    ToolResultBlock,
)
from continuity.core.text import clean, object_at
from continuity.formats.base import (
    FormatReader,
    call_arguments,
    decode_media,
    str_field,
    text_of,
)
from continuity.formats.jsonl import Line

HARNESS = "factory-droid"
_OUTCOMES = {
    "completed": RunStatus.FINISHED,
    "error": RunStatus.FAILED,
    "failed": RunStatus.FAILED,
    "cancelled": RunStatus.INTERRUPTED,
    "interrupted": RunStatus.INTERRUPTED,
    "aborted": RunStatus.INTERRUPTED,
}


def _is_start(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and obj.get("type") == "session_start"
        and isinstance(obj.get("id"), str)
        and "cwd" in obj
    )


class FactoryDroidReader(FormatReader):
    """Reader of Factory Droid session JSONL files (see the module docstring)."""

    harness: ClassVar[str] = HARNESS

    def __init__(self, path: str, head: list[dict], state: dict | None = None) -> None:
        super().__init__(path, head, state)
        for obj in head:
            if _is_start(obj):
                self._start(obj)
                break
        self.restore(state)

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:
        return bool(head) and _is_start(head[0])

    @classmethod
    def claims(cls, obj: Any) -> bool:
        """Its header, or a ``message`` line ``{type, id, message: {role}}`` (the envelope
        pi's v3 lines share: the file's location decides between the two, ``detect``)."""
        return _is_start(obj) or (
            isinstance(obj, dict)
            and obj.get("type") == "message"
            and isinstance(obj.get("id"), str)
            and isinstance(obj.get("message"), dict)
            and isinstance(obj["message"].get("role"), str)
        )

    def key_from_head(self, head: list[dict]) -> str | None:
        return head[0]["id"] if head and _is_start(head[0]) else None

    def _start(self, obj: dict) -> None:
        cwd, title = text_of(obj.get("cwd")), text_of(obj.get("title")).strip()
        if cwd:
            self._facts.cwd = cwd
        if title:
            self._facts.title = title
        version = obj.get("version")
        if isinstance(version, (int, str)) and not isinstance(version, bool):
            self._facts.version = str(version)

    def read(self, line: Line) -> Entry | None:
        data = line.data or {}
        kind = str_field(data, "type") or ""
        entry = Entry(
            kind=EntryKind.OPAQUE,
            role=Role.SYSTEM,
            visible=False,
            type_name=clean(kind) or "<missing type>",
            native_id=self.string_field(line, data, "id"),
            parent_native_id=self.string_field(line, data, "parentId"),
            timestamp=self.time_field(line, data.get("timestamp"), "timestamp"),
        )
        try:
            if kind == "session_start":
                self._start(data)
                entry.kind, entry.cwd = EntryKind.EVENT, self._facts.cwd
                entry.native_id = f"{entry.native_id}#session" if entry.native_id else None
            elif kind == "agent_turn_outcome":
                entry.kind = EntryKind.EVENT
                reason = str_field(data, "reason") or ""
                entry.run_end = _OUTCOMES.get(reason, RunStatus.FAILED if reason else None)
            elif kind == "message":
                self._message(line, object_at(data, "message"), entry)
        except Exception as exc:  # noqa: BLE001 - never raise on odd input (formats.md §5.1)
            self.warn(line, f"unreadable {kind or 'record'}: {type(exc).__name__}: {exc}")
            entry.kind, entry.role, entry.blocks, entry.visible = (
                EntryKind.OPAQUE,
                Role.SYSTEM,
                (),
                False,
            )
            entry.is_request, entry.run_end, entry.payloads = False, None, None
        return entry

    def _message(self, line: Line, message: dict, entry: Entry) -> None:
        role = str_field(message, "role")
        entry.type_name = f"message/{clean(role) if role else '?'}"
        if role not in ("user", "assistant"):
            return  # opaque
        payloads: dict[str, bytes] = {}
        blocks = self._blocks(line, message.get("content"), payloads)
        entry.blocks, entry.payloads = tuple(blocks), payloads or None
        entry.kind, entry.visible = EntryKind.MESSAGE, True
        if role == "assistant":
            entry.role = Role.ASSISTANT
            return
        text = "".join(b.text for b in blocks if isinstance(b, TextBlock)).strip()
        if any(isinstance(b, ToolResultBlock) for b in blocks) and not text:
            entry.role = Role.TOOL
            return
        entry.role = Role.USER
        if (entry.native_id or "").startswith("context-"):
            entry.kind, entry.visible = EntryKind.CONTEXT, False
            return
        entry.is_request = bool(text)

    def _blocks(self, line: Line, content: Any, payloads: dict[str, bytes]) -> list[Block]:
        if isinstance(content, str):
            return [TextBlock(text_of(content))] if content else []
        out: list[Block] = []
        for block in content if isinstance(content, list) else []:
            kind = str_field(block, "type")
            if kind == "text":
                out.append(TextBlock(text_of(block.get("text"))))
            elif kind == "thinking":
                out.append(ThinkingBlock(text_of(block.get("thinking") or block.get("text"))))
            elif kind == "tool_use":
                out.append(
                    ToolCallBlock(
                        text_of(block.get("id")),
                        text_of(block.get("name")),
                        call_arguments(block.get("input")),
                    )
                )
            elif kind == "tool_result":
                out.append(
                    ToolResultBlock(
                        text_of(block.get("tool_use_id")),
                        block.get("is_error") is True,
                        _result_text(block.get("content")),
                    )
                )
            elif kind == "image":
                source = object_at(block, "source")
                media, payload = decode_media(text_of(source.get("media_type")), source.get("data"))
                payloads.update(payload)
                out.append(media)
            else:
                self.warn(line, f"content: unknown block type {kind or '?'!r} (kept raw)")
        return out


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return text_of(content)
    if isinstance(content, list):
        return "\n".join(
            text_of(b.get("text")) for b in content if isinstance(b, dict) and "text" in b
        )
    return ""
