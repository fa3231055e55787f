"""Reader of pi coding-agent session JSONL (spec/formats.md §3).

The first line is the header (``type: "session"``; v1 has no ``version``, then ``version: 2`` and
``version: 3``). It becomes an EVENT entry so that seq order stays file order. Every later line is
an entry with ``id``/``parentId`` forming a tree; the importer follows the path from the leaf (the
last entry), this reader only sets ``native_id`` and ``parent_native_id``.

Legacy v1 entries carry no ids. pi migrates them in memory by chaining the entries linearly in file
order; we do the same with deterministic ids ``v1-<line number>`` (the first entry after the header
is ``v1-2``), stable across re-imports, and convert a v1 compaction's ``firstKeptEntryIndex``
(an index over the parsed objects of the whole file, header = 0) into such an id.

Mapping (decided with the lead):

- ``message`` by role: ``user`` → USER message (text + image blocks), a request when it has text
  (slash commands such as ``/mode`` included: pi stores what the person typed); ``assistant`` →
  ASSISTANT (text, thinking, toolCall) with run-end hints from ``stopReason``; ``toolResult`` →
  TOOL; ``bashExecution`` (a ``!`` command the person ran) → USER message rendering
  ``$ command / output / [exit N]``, never a request, CONTEXT when ``excludeFromContext``;
  ``custom`` (v2 ``hookMessage``) → USER message, never a request; other roles → OPAQUE;
- ``custom_message`` → USER message, never a request, except our extension's recovery context
  (``customType`` ``continuity-recovery``, ``RECOVERY_TYPE``): CONTEXT, like the recovery
  context Claude Code records as an attachment (issue 12); ``branch_summary`` → USER message with the
  summary (EVENT when empty); ``compaction`` → COMPACTION (trigger ``pi``), or, when its
  ``details`` carry our extension's continuation marker (``CHECKPOINT_DETAILS_KEY``: issue 14,
  seed 002), the continuation checkpoint it is (``continuation``, ``run_id``, trigger
  ``settled_turn``): pi's entry and our row are one checkpoint with one id, pi's;
- ``model_change``, ``thinking_level_change``, ``label``, ``session_info``, ``custom`` → EVENT
  (``session_info.name`` is the title, latest non-empty wins);
- anything else → OPAQUE (still with its ids, so the tree stays connected).
"""

from __future__ import annotations

from typing import Any, ClassVar

from continuity.core.model import (
    Block,
    CompactionInfo,
    Entry,
    EntryKind,
    MediaBlock,
    Role,
    RunStatus,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.formats.base import FormatReader, call_arguments, decode_media, text_of
from continuity.formats.jsonl import Line

_STOP_REASONS: dict[str, RunStatus | None] = {
    "stop": RunStatus.FINISHED,
    "length": RunStatus.FAILED,
    "error": RunStatus.FAILED,
    "aborted": RunStatus.INTERRUPTED,
    "toolUse": None,
}

_EVENT_TYPES = frozenset(
    {"model_change", "thinking_level_change", "label", "session_info", "custom"}
)


#: The ``customType`` of the recovery context our pi extension hands pi on a session's first
#: agent start (``daemon/hooks/pi_extension/continuity.ts``).
RECOVERY_TYPE = "continuity-recovery"
#: The key of a pi compaction's ``details`` under which our extension writes the typed
#: continuation marker of the checkpoint it made after a settled turn (issue 14, seed 002):
#: ``{"continuation": true, "run_id": ..., "covers": {"from_entry_id", "through_entry_id"}}``.
CHECKPOINT_DETAILS_KEY = "continuity"
#: The trigger our continuation checkpoints carry (``continuation.compaction.TRIGGER``).
CHECKPOINT_TRIGGER = "settled_turn"


def checkpoint_marker(data: dict) -> dict | None:
    """The continuation marker of a pi ``compaction`` entry (its ``details`` hold
    ``CHECKPOINT_DETAILS_KEY`` with ``continuation: true``), else None."""
    details = data.get("details")
    marker = details.get(CHECKPOINT_DETAILS_KEY) if isinstance(details, dict) else None
    if isinstance(marker, dict) and marker.get("continuation") is True:
        return marker
    return None


def read_entries(objects: list, session_key: str = "pi-working-view") -> list[Entry]:
    """pi session entries (parsed JSON objects, as pi hands an extension its branch) → our
    rows, by the same mapping an import applies (``PiReader``); a compaction keeps its
    summary. Each row's ``seq`` is its index. Objects that are not dicts are skipped. Never
    raises for odd input (the reader warns instead)."""
    reader = PiReader(f"{session_key}.jsonl", [{"type": "session", "version": 3, "cwd": ""}])
    out: list[Entry] = []
    for index, obj in enumerate(o for o in objects if isinstance(o, dict)):
        entry = reader.read(Line(index + 2, 0, b"", obj, None))
        if entry is not None:
            entry.seq = index
            out.append(entry)
    return out


#: How many recent message entries the reader remembers to place a ``retainedTail``.
RECENT_MESSAGES = 256


class PiReader(FormatReader):
    """Reader of pi session files (v1, v2 and v3)."""

    harness: ClassVar[str] = "pi"
    uses_tree: ClassVar[bool] = True

    def __init__(self, path: str, head: list[dict], state: dict | None = None) -> None:
        super().__init__(path, head, state)
        header = head[0] if head and isinstance(head[0], dict) else None
        self._v1 = False
        if header is not None and header.get("type") == "session":
            self._set_header_version(header)
        # v1 linear chain: id of the previous (non-header) entry.
        self._prev_id: str | None = None
        # Parsed objects seen so far (pi's entry index: header = 0) and the breakpoints
        # [index, line number] where that index stops being line number - 1 (blank/bad lines).
        self._count = 0
        self._breaks: list[list[int]] = []
        #: The last ``RECENT_MESSAGES`` message entries, ``"<role>:<message.timestamp>"`` → entry
        #: id: where a compaction's ``retainedTail`` (copies of kept messages) starts.
        self._recent: dict[str, str] = {}
        self.restore(state)

    # ------------------------------------------------------------------ detection

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:
        if not head:
            return False
        first = head[0]
        if (
            isinstance(first, dict)
            and first.get("type") == "session"
            and "cwd" in first
            and "payload" not in first
        ):
            return True
        for obj in head:
            if not isinstance(obj, dict) or obj.get("type") != "message":
                continue
            if "uuid" in obj or "sessionId" in obj:
                continue
            msg = obj.get("message")
            if isinstance(msg, dict) and isinstance(msg.get("role"), str):
                return True
        return False

    def key_from_head(self, head: list[dict]) -> str | None:
        if head and isinstance(head[0], dict) and head[0].get("type") == "session":
            sid = head[0].get("id")
            if isinstance(sid, str) and sid:
                return sid
        return None

    # ------------------------------------------------------------------ state

    def state(self) -> dict[str, Any]:
        out = super().state()
        out.update(
            {
                "v1": self._v1,
                "prev_id": self._prev_id,
                "count": self._count,
                "breaks": [list(b) for b in self._breaks],
                "recent": dict(self._recent),
            }
        )
        return out

    def restore(self, state: dict[str, Any] | None) -> None:
        super().restore(state)
        if not state:
            return
        self._v1 = bool(state.get("v1", self._v1))
        prev = state.get("prev_id")
        self._prev_id = prev if isinstance(prev, str) else None
        count = state.get("count")
        self._count = count if isinstance(count, int) and count >= 0 else 0
        recent = state.get("recent")
        if isinstance(recent, dict):
            self._recent = {
                k: v for k, v in recent.items() if isinstance(k, str) and isinstance(v, str)
            }
        breaks = state.get("breaks")
        if isinstance(breaks, list):
            self._breaks = [
                [int(b[0]), int(b[1])]
                for b in breaks
                if isinstance(b, (list, tuple)) and len(b) == 2
            ]

    # ------------------------------------------------------------------ helpers

    def _set_header_version(self, header: dict) -> None:
        version = header.get("version")
        if version is None:
            self._v1 = True
            self._facts.version = "1"
        else:
            self._v1 = (
                isinstance(version, (int, float)) and not isinstance(version, bool) and version < 2
            )
            self._facts.version = str(version)

    def _line_of_index(self, index: int) -> int:
        """The line number of pi's entry ``index`` (parsed objects, header = 0)."""
        base_index, base_line = 0, 1
        for b_index, b_line in self._breaks:
            if b_index > index:
                break
            base_index, base_line = b_index, b_line
        return base_line + (index - base_index)

    def _count_line(self, line: Line) -> None:
        index = self._count
        if self._line_of_index(index) != line.number:
            self._breaks.append([index, line.number])
        self._count += 1

    def _text_blocks(
        self, line: Line, content: Any, payloads: dict[str, bytes], where: str
    ) -> list[Block]:
        """Text and image blocks of a user-like ``content`` (string or block list)."""
        if isinstance(content, str):
            return [TextBlock(text_of(content))]
        blocks: list[Block] = []
        if content is None:
            self.warn(line, f"{where}: missing content")
            return blocks
        if not isinstance(content, list):
            self.warn(line, f"{where}: content is not a string or list")
            return blocks
        for block in content:
            if isinstance(block, str):
                blocks.append(TextBlock(text_of(block)))
                continue
            if not isinstance(block, dict):
                self.warn(line, f"{where}: non-object content block skipped")
                continue
            btype = block.get("type")
            if btype == "text":
                if not isinstance(block.get("text"), str):
                    self.warn(line, f"{where}: text block without text")
                blocks.append(TextBlock(text_of(block.get("text"))))
            elif btype == "image":
                blocks.append(self._media(line, block, payloads, where))
            else:
                self.warn(line, f"{where}: unknown content block {btype!r} skipped")
        return blocks

    def _media(self, line: Line, block: dict, payloads: dict[str, bytes], where: str) -> MediaBlock:
        data = block.get("data")
        if not isinstance(data, str):
            self.warn(line, f"{where}: image block without data")
        mime = block.get("mimeType")
        media, payload = decode_media(mime if isinstance(mime, str) else "", data)
        payloads.update(payload)
        return media

    # ------------------------------------------------------------------ reading

    def _timestamp(self, line: Line, value: Any, field: str) -> Any:
        """``time_field``: a value given that is not a time (issue 20) or is out of range
        (issue 45 item 1) is warned about, naming the field, and the row keeps no time."""
        return self.time_field(line, value, field)

    def read(self, line: Line) -> Entry | None:
        data = line.data or {}
        self._count_line(line)
        etype = data.get("type")
        type_name = etype if isinstance(etype, str) else ""
        timestamp = self._timestamp(line, data.get("timestamp"), "timestamp")

        if etype == "session":
            self.string_field(line, data, "id")  # the key: a wrong type is named, not used
            if line.number == 1 or self._count == 1:
                self._set_header_version(data)
            else:  # issue 20: never merged silently (pi writes one file per session)
                other = data.get("id")
                named = f" of session {other!r}" if isinstance(other, str) and other else ""
                self.warn(
                    line,
                    f"a second session header{named}: its rows are read as part "
                    "of this file's session (split the file to keep them apart)",
                )
            cwd = self.string_field(line, data, "cwd")
            cwd = text_of(cwd) or None
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

        # Ids: native for v2/v3, migrated (linear chain) for v1.
        if self._v1:
            native_id: str | None = f"v1-{line.number}"
            prev = self._prev_id or ""
            if prev == native_id or prev.startswith(native_id + "."):
                # Records glued on one line (jsonl rule 6): one id each, ``v1-<line>.<n>``.
                part = int(prev.rpartition(".")[2]) + 1 if prev != native_id else 2
                native_id = f"{native_id}.{part}"
            parent_id = self._prev_id
            self._prev_id = native_id
        else:
            native_id = self.string_field(line, data, "id")
            if native_id is None and not data.get("id"):  # a wrong type warned already
                self.warn(line, "entry without id")
            parent_id = self.string_field(line, data, "parentId")

        entry = Entry(
            kind=EntryKind.OPAQUE,
            role=Role.SYSTEM,
            timestamp=timestamp,
            native_id=native_id,
            parent_native_id=parent_id,
            type_name=type_name,
            visible=False,
        )
        try:
            self._fill(line, data, etype, entry)
        except Exception as exc:  # noqa: BLE001 - never raise on odd input (formats.md §5.1)
            self.warn(line, f"unreadable {type_name or 'entry'}: {exc}")
            entry.kind, entry.role, entry.blocks = EntryKind.OPAQUE, Role.SYSTEM, ()
            entry.visible, entry.is_request, entry.compaction = False, False, None
            entry.run_end, entry.payloads = None, None
        return entry

    def _fill(self, line: Line, data: dict, etype: Any, entry: Entry) -> None:
        if etype == "message":
            self._message(line, data, entry)
        elif etype in _EVENT_TYPES:
            entry.kind = EntryKind.EVENT
            if etype == "session_info":
                name = data.get("name")
                if isinstance(name, str) and name.strip():
                    self._facts.title = text_of(name.strip())
        elif etype == "compaction":
            self._compaction(line, data, entry)
        elif etype == "custom_message":
            payloads: dict[str, bytes] = {}
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.USER, True
            if data.get("customType") == RECOVERY_TYPE:  # what we injected: not conversation
                entry.kind, entry.visible = EntryKind.CONTEXT, False
                entry.type_name = f"custom_message/{RECOVERY_TYPE}"
            entry.blocks = tuple(
                self._text_blocks(line, data.get("content"), payloads, "custom_message")
            )
            entry.payloads = payloads or None
        elif etype == "branch_summary":
            summary = text_of(data.get("summary"))
            if summary.strip():
                entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.USER, True
                entry.blocks = (TextBlock(summary),)
            else:
                entry.kind = EntryKind.EVENT
        # anything else stays OPAQUE

    def _compaction(self, line: Line, data: dict, entry: Entry) -> None:
        summary = data.get("summary")
        if not isinstance(summary, str):
            self.warn(line, "compaction without summary")
        first_kept: str | None = None
        raw_kept = data.get("firstKeptEntryId")
        if isinstance(raw_kept, str) and raw_kept:
            first_kept = raw_kept
        else:
            index = data.get("firstKeptEntryIndex")
            if isinstance(index, int) and not isinstance(index, bool) and index > 0:
                first_kept = f"v1-{self._line_of_index(index)}"
        if first_kept is None:  # issue 18: a self-contained compaction names what it kept
            first_kept = self._retained_head(line, data.get("retainedTail"))
        entry.kind, entry.role, entry.visible = EntryKind.COMPACTION, Role.SYSTEM, True
        marker = checkpoint_marker(data)
        if marker is not None:  # ours (issue 14): the continuation checkpoint, one id, pi's
            run_id = marker.get("run_id")
            entry.compaction = CompactionInfo(
                summary=text_of(summary),
                first_kept_entry_id=first_kept,
                continuation=True,
                run_id=text_of(run_id) if isinstance(run_id, str) and run_id else None,
                trigger=CHECKPOINT_TRIGGER,
            )
            return
        entry.compaction = CompactionInfo(
            summary=text_of(summary), first_kept_entry_id=first_kept, trigger="pi"
        )

    def _retained_head(self, line: Line, tail: Any) -> str | None:
        """The id of the entry the first message of a compaction's ``retainedTail`` copies
        (newer pi harness builds embed the kept messages and may leave ``firstKeptEntryId``
        out: spec/formats.md §3.3, §3.5 "prefer retainedTail"), matched by role and message
        timestamp among the last ``RECENT_MESSAGES`` messages; None (with a warning) when the
        copies match no earlier entry, or when there is no tail."""
        if not isinstance(tail, list) or not tail:
            return None
        first = tail[0] if isinstance(tail[0], dict) else {}
        found = self._recent.get(f"{first.get('role')}:{first.get('timestamp')}")
        if found is None:
            self.warn(
                line,
                f"compaction: the {len(tail)} retained messages match no earlier "
                "entry (kept raw; the summary covers every row before it)",
            )
        return found

    def _remember(self, native_id: str | None, msg: dict) -> None:
        ts = msg.get("timestamp")
        if native_id and isinstance(ts, (int, float)) and not isinstance(ts, bool):
            key = f"{msg.get('role')}:{ts}"
            self._recent.pop(key, None)
            self._recent[key] = native_id
            while len(self._recent) > RECENT_MESSAGES:
                del self._recent[next(iter(self._recent))]

    def _message(self, line: Line, data: dict, entry: Entry) -> None:
        msg = data.get("message")
        if not isinstance(msg, dict):
            self.warn(line, "message entry without a message object")
            entry.type_name = "message"
            return
        role = msg.get("role")
        if role == "hookMessage":  # v2 name of the v3 `custom` role
            role = "custom"
        entry.type_name = f"message/{role}" if isinstance(role, str) else "message"
        if entry.timestamp is None:
            entry.timestamp = self._timestamp(line, msg.get("timestamp"), "message.timestamp")
        self._remember(entry.native_id, msg)
        payloads: dict[str, bytes] = {}

        if role == "user":
            blocks = self._text_blocks(line, msg.get("content"), payloads, "user")
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.USER, True
            entry.blocks = tuple(blocks)
            entry.is_request = any(isinstance(b, TextBlock) and b.text.strip() for b in blocks)
        elif role == "assistant":
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.ASSISTANT, True
            entry.blocks = tuple(self._assistant_blocks(line, msg.get("content"), payloads))
            stop = msg.get("stopReason")
            entry.run_end = _STOP_REASONS.get(stop) if isinstance(stop, str) else None
        elif role == "toolResult":
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.TOOL, True
            entry.blocks = (self._tool_result(line, msg, payloads),)
        elif role == "bashExecution":
            hidden = msg.get("excludeFromContext") is True
            entry.kind = EntryKind.CONTEXT if hidden else EntryKind.MESSAGE
            entry.role, entry.visible = Role.USER, not hidden
            entry.blocks = (TextBlock(self._bash_text(line, msg)),)
        elif role == "custom":
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.USER, True
            if msg.get("customType") == RECOVERY_TYPE:
                entry.kind, entry.visible = EntryKind.CONTEXT, False
            entry.blocks = tuple(self._text_blocks(line, msg.get("content"), payloads, "custom"))
        # other roles (incl. runtime-only compactionSummary/branchSummary) stay OPAQUE
        entry.payloads = payloads or None

    def _assistant_blocks(
        self, line: Line, content: Any, payloads: dict[str, bytes]
    ) -> list[Block]:
        if isinstance(content, str):
            return [TextBlock(text_of(content))] if content else []
        if content is None:
            return []
        if not isinstance(content, list):
            self.warn(line, "assistant: content is not a list")
            return []
        blocks: list[Block] = []
        for block in content:
            if not isinstance(block, dict):
                self.warn(line, "assistant: non-object content block skipped")
                continue
            btype = block.get("type")
            if btype == "text":
                if not isinstance(block.get("text"), str):
                    self.warn(line, "assistant: text block without text")
                blocks.append(TextBlock(text_of(block.get("text"))))
            elif btype == "thinking":
                if block.get("redacted") is True:
                    continue  # opaque payload: kept in the raw line only (§5.1 rule 8)
                blocks.append(ThinkingBlock(text_of(block.get("thinking"))))
            elif btype == "toolCall":
                call_id, name = block.get("id"), block.get("name")
                if not isinstance(call_id, str) or not call_id:
                    self.warn(line, "toolCall without id")
                if not isinstance(name, str):
                    self.warn(line, "toolCall without name")
                blocks.append(
                    ToolCallBlock(
                        text_of(call_id),
                        text_of(name),
                        self._arguments(line, block.get("arguments")),
                    )
                )
            elif btype == "image":
                blocks.append(self._media(line, block, payloads, "assistant"))
            else:
                self.warn(line, f"assistant: unknown content block {btype!r} skipped")
        return blocks

    def _arguments(self, line: Line, args: Any) -> Any:
        if args is None:
            self.warn(line, "toolCall without arguments")
            return {}
        return call_arguments(args)

    def _tool_result(self, line: Line, msg: dict, payloads: dict[str, bytes]) -> ToolResultBlock:
        call_id = msg.get("toolCallId")
        if not isinstance(call_id, str) or not call_id:
            self.warn(line, "toolResult without toolCallId")
        content = msg.get("content")
        texts: list[str] = []
        media: list[MediaBlock] = []
        if isinstance(content, str):
            texts.append(text_of(content))
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, str):
                    texts.append(text_of(block))
                elif isinstance(block, dict) and block.get("type") == "text":
                    texts.append(text_of(block.get("text")))
                elif isinstance(block, dict) and block.get("type") == "image":
                    media.append(self._media(line, block, payloads, "toolResult"))
                else:
                    self.warn(line, "toolResult: unknown content block skipped")
        else:
            self.warn(line, "toolResult without content")
        return ToolResultBlock(
            call_id=text_of(call_id),
            is_error=msg.get("isError") is True,
            text="\n".join(texts),
            media=tuple(media),
        )

    def _bash_text(self, line: Line, msg: dict) -> str:
        command = msg.get("command")
        if not isinstance(command, str):
            self.warn(line, "bashExecution without command")
        parts = [f"$ {text_of(command)}"]
        output = text_of(msg.get("output"))
        if output:
            parts.append(output.rstrip("\n"))
        if msg.get("truncated") is True:
            parts.append("[output truncated]")
        if msg.get("cancelled") is True:
            parts.append("[cancelled]")
        code = msg.get("exitCode")
        if isinstance(code, int) and not isinstance(code, bool):
            parts.append(f"[exit {code}]")
        return "\n".join(parts)
