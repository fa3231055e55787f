"""Qwen Code chat files (issue 42 item 2): ``~/.qwen/projects/<encoded cwd>/chats/<session
id>.jsonl``, observed from qwen 0.24.4 run offline (``tests/fixtures/qwen_code``) and read
against its bundled ``ChatRecordingService``.

Qwen Code began as a Gemini CLI fork but writes its own envelope, close to Claude Code's: one
record a line with ``uuid``, ``parentUuid`` (the previous record: a tree whose leaf path is the
conversation; a rewind re-roots it, so the rewound records fall off the path), ``sessionId``,
``timestamp``, ``type``, ``cwd``, ``version``, and per type:

- ``user`` (``provenance`` ``real_user`` for a typed prompt): ``message`` a Gemini API
  ``Content`` (``{role, parts}``); a UserPromptSubmit hook's context is its last text part,
  ``<qwen:user-prompt-submit-context>``…``</qwen:user-prompt-submit-context>`` (``HOOK_CONTEXT``,
  with ``systemPayload.hookContext``): text the hook added, not the user's, so it is left out
  of the row (the raw line keeps it), as Qwen Code leaves it out of its own display;
- ``assistant``: ``message`` (text, ``thought`` text, ``functionCall`` parts), ``model``,
  ``usageMetadata``;
- ``tool_result``: ``message`` (``functionResponse`` parts), ``toolCallResult`` (``callId``,
  ``status``, ``resultDisplay``...);
- ``system`` with a ``subtype`` and ``systemPayload``: ``chat_compression`` (``info``,
  ``compressedHistory``: the history the model continues from) is a compaction whose summary
  is the text of that history's first content; ``custom_title`` names the session; every
  other subtype (``ui_telemetry``, ``attribution_snapshot``, ``rewind``, ``session_model``...)
  is an event.

Any other ``type`` is opaque (counted, kept raw). A prompt not typed by the user (another
``provenance``) is context; a ``user`` text starting with ``formats.resumed.NOTICE_START`` is
the preface ``resume --in qwen-code`` writes (a compaction row, its summary). An ``assistant``
message with text and no call ends its run.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from continuity.core.model import (
    CompactionInfo,
    Entry,
    EntryKind,
    Role,
    RunStatus,
    TextBlock,
    ToolResultBlock,
)
from continuity.core.text import clean, object_at
from continuity.formats.base import FormatReader, str_field, text_of
from continuity.formats.gemini_cli import gemini_parts
from continuity.formats.jsonl import Line
from continuity.formats.resumed import NOTICE_START

HARNESS = "qwen-code"
#: How Qwen Code 0.24.4 wraps a UserPromptSubmit hook's ``additionalContext`` in the prompt
#: (its transcript-records.ts): the opening and closing line.
HOOK_CONTEXT = ("<qwen:user-prompt-submit-context>\n", "\n</qwen:user-prompt-submit-context>")
_FAILED_STATUSES = ("error", "cancelled")


def _is_qwen(obj: Any) -> bool:
    if not isinstance(obj, dict) or not isinstance(obj.get("sessionId"), str):
        return False
    message = obj.get("message")
    return "uuid" in obj and (
        (isinstance(message, dict) and isinstance(message.get("parts"), list))
        or isinstance(obj.get("provenance"), str)
    )


class QwenCodeReader(FormatReader):
    """Reader of Qwen Code chat JSONL files (see the module docstring)."""

    harness: ClassVar[str] = HARNESS
    uses_tree: ClassVar[bool] = True

    def __init__(self, path: str, head: list[dict], state: dict | None = None) -> None:
        super().__init__(path, head, state)
        self.restore(state)

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:
        return any(_is_qwen(o) for o in head[:5])

    def key_from_head(self, head: list[dict]) -> str | None:
        for obj in head:
            if _is_qwen(obj):
                return obj["sessionId"]
        return None

    def read(self, line: Line) -> Entry | None:
        data = line.data or {}
        kind = str_field(data, "type") or ""
        entry = Entry(
            kind=EntryKind.OPAQUE,
            role=Role.SYSTEM,
            visible=False,
            type_name=clean(kind) or "<missing type>",
            native_id=self.string_field(line, data, "uuid"),
            parent_native_id=self.string_field(line, data, "parentUuid"),
            timestamp=self.time_field(line, data.get("timestamp"), "timestamp"),
            cwd=text_of(data.get("cwd")) or None,
        )
        if entry.cwd:
            self._facts.cwd = entry.cwd
        version = text_of(data.get("version"))
        if version:
            self._facts.version = version
        try:
            if kind in ("user", "assistant", "tool_result"):
                self._message(line, data, kind, entry)
            elif kind == "system":
                self._system(line, data, entry)
        except Exception as exc:  # noqa: BLE001 - never raise on odd input (formats.md §5.1)
            self.warn(line, f"unreadable {kind or 'record'}: {type(exc).__name__}: {exc}")
            entry.kind, entry.role, entry.blocks, entry.visible = (
                EntryKind.OPAQUE,
                Role.SYSTEM,
                (),
                False,
            )
            entry.is_request, entry.compaction, entry.run_end = False, None, None
        return entry

    def _message(self, line: Line, data: dict, kind: str, entry: Entry) -> None:
        message = data.get("message")
        if not isinstance(message, dict):
            self.warn(line, f"{kind} without a message")
            entry.kind = EntryKind.EVENT
            return
        payloads: dict[str, bytes] = {}
        blocks, calls = gemini_parts(self, line, message.get("parts"), payloads)
        entry.payloads = payloads or None
        entry.visible = True
        if kind == "assistant":
            entry.kind, entry.role = EntryKind.MESSAGE, Role.ASSISTANT
            entry.blocks = (*blocks, *calls)
            if not calls and any(isinstance(b, TextBlock) and b.text.strip() for b in blocks):
                entry.run_end = RunStatus.FINISHED
        elif kind == "tool_result":
            result = object_at(data, "toolCallResult")
            failed = (str_field(result, "status") or "") in _FAILED_STATUSES
            entry.kind, entry.role = EntryKind.MESSAGE, Role.TOOL
            entry.blocks = tuple(
                dataclasses.replace(b, is_error=failed) if isinstance(b, ToolResultBlock) else b
                for b in blocks
            )
        else:
            if len(blocks) > 1 and _is_hook_context(blocks[-1]):
                blocks = blocks[:-1]  # the hook's text, not the user's (module docstring)
            text = "".join(b.text for b in blocks if isinstance(b, TextBlock)).strip()
            provenance = str_field(data, "provenance")
            entry.role, entry.blocks = Role.USER, tuple(blocks)
            if provenance not in (None, "real_user"):
                entry.kind, entry.visible = EntryKind.CONTEXT, False
                return
            if text.startswith(NOTICE_START):  # the preface `resume --in qwen-code` wrote
                entry.kind, entry.role = EntryKind.COMPACTION, Role.SYSTEM
                entry.compaction = CompactionInfo(summary=text)
                return
            entry.kind = EntryKind.MESSAGE
            entry.is_request = bool(text)

    def _system(self, line: Line, data: dict, entry: Entry) -> None:
        subtype = str_field(data, "subtype") or ""
        entry.kind, entry.type_name = EntryKind.EVENT, f"system/{clean(subtype) or '?'}"
        payload = object_at(data, "systemPayload")
        if subtype == "custom_title":
            title = text_of(payload.get("customTitle")).strip()
            if title:
                self._facts.title = title
        elif subtype == "chat_compression":
            history = payload.get("compressedHistory")
            first = history[0] if isinstance(history, list) and history else None
            parts = first.get("parts") if isinstance(first, dict) else None
            blocks, _ = gemini_parts(self, line, parts, {})
            summary = "\n".join(b.text for b in blocks if isinstance(b, TextBlock)).strip()
            if not summary:
                self.warn(line, "chat_compression without a summary in compressedHistory")
                return
            entry.kind, entry.role, entry.visible = EntryKind.COMPACTION, Role.USER, True
            entry.blocks = (TextBlock(summary),)
            entry.compaction = CompactionInfo(summary=summary)


def _is_hook_context(block: object) -> bool:
    """Whether ``block`` is the text part Qwen Code adds for a UserPromptSubmit hook's context
    (``HOOK_CONTEXT``), as its ``isUserPromptSubmitContextPartText`` tells it."""
    if not isinstance(block, TextBlock):
        return False
    text = block.text.strip()
    return (
        text.startswith(HOOK_CONTEXT[0])
        and text.endswith(HOOK_CONTEXT[1])
        and HOOK_CONTEXT[0].strip() not in text[len(HOOK_CONTEXT[0]) : -len(HOOK_CONTEXT[1])]
    )
