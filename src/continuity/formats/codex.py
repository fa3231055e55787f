"""Reader of Codex CLI rollout JSONL (spec/formats.md §2).

Every line is an envelope ``{timestamp, type, payload}``. ``response_item`` lines are what the
model saw (messages, reasoning, tool calls and outputs); ``event_msg`` lines are UI/telemetry
events, two of which (``user_message``, ``agent_message``) repeat response-item messages
(§2.5). Codex has no per-line ids, so ``native_id`` stays None (the importer keys Codex rows on
file identity + offset + line hash, §5.3).

Duplicate handling (§2.5): within one turn, a ``(role, text)`` pair seen once as a response item
and once as an event is shown once. The first of the pair seen is the visible row; the later one
becomes a hidden ``event`` row. Both orders occur in real files (``real-exec-0.135.jsonl``: the
user response item precedes its event, the ``agent_message`` event precedes its response item).
An event with no response-item counterpart (``sample-session.jsonl``) is simply visible. Only
SHA-256 prefixes of the texts are kept in ``state()``, so a grown file resumes mid-turn.

This module decides each row's kind, role, visibility and duplicate status, and tracks turns;
what a response item's payload holds (content, reasoning, tool call arguments, tool outputs and
their error flag) is read into blocks by ``continuity.formats.codex_items``.

Over 600 lines: one reader of one format: Codex's envelope has a dozen payload types (messages,
reasoning, function, custom and local-shell calls and outputs, compactions, turn contexts,
events), and they share the reader's state (call ids, the turn's model, the compaction marker);
split by payload type, that state would pass between modules.
"""

from __future__ import annotations

import hashlib
import re
from functools import partial
from typing import Any

from continuity.core.model import (
    Block,
    CompactionInfo,
    Entry,
    EntryKind,
    Role,
    RunStatus,
    TextBlock,
    ToolResultBlock,
)
from continuity.core.text import clean
from continuity.formats.base import (
    FormatReader,
    decode_media,
    parse_timestamp,
    str_field,
    text_of,
)
from continuity.formats.codex_items import (
    add_media,
    call_id,
    content_blocks,
    is_image_tag,
    reasoning_blocks,
    tool_call_block,
    tool_output,
    tool_search_block,
)
from continuity.formats.jsonl import Line

TOP_LEVEL_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")

#: Top-level records 0.169+ writes that hold no conversation (kept raw, counted as known):
#: the workspace state at a turn's start and the per-response token usage.
RECORD_TYPES = frozenset({"world_state", "token_usage_record"})

#: What the reader says instead of an empty summary when Codex compacted on the server and
#: kept only an encrypted summary (a ``compaction`` item with ``encrypted_content``).
ENCRYPTED_COMPACTION_TEXT = (
    "Codex compacted the conversation on the server; its summary is encrypted and cannot be "
    "read here. The earlier rows are kept as they are (not summarised)."
)

# Text Codex itself injects into user-role messages (codex-rs contextual user fragments plus the
# legacy tags); a user message whose text starts with one of these is context, not a request.
INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<instructions>",
    "<skill>",
    "<skill ",
    "<user_shell_command>",
    "<turn_aborted>",
    "<plugins>",
    "<subagents>",
    "<subagent_notification>",
)

# event_msg kinds we know (anything else is opaque, §5.1 rule 5).
KNOWN_EVENTS = frozenset(
    {
        "task_started",
        "turn_started",
        "task_complete",
        "turn_complete",
        "turn_aborted",
        "error",
        "user_message",
        "agent_message",
        "token_count",
        "exec_command_end",
        "patch_apply_end",
        "image_generation_end",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "agent_reasoning_section_break",
        "context_compacted",
        "mcp_tool_call_end",
        "web_search_end",
        "thread_rolled_back",
        "thread_name_updated",
        "item_completed",
        "stream_error",
        "warning",
        "entered_review_mode",
        "exited_review_mode",
        "undo_completed",
        "view_image_tool_call",
        "plan_update",
        "background_event",
        "session_configured",
        "turn_diff",
        "shutdown_complete",
        "collab_agent_spawn_end",
        "collab_agent_interaction_end",
        "collab_waiting_end",
        "collab_close_end",
        "collab_resume_end",
        "dynamic_tool_call_response",
        "thread_settings_applied",
    }
)

_TURN_START_EVENTS = ("task_started", "turn_started")
_TURN_END_EVENTS = ("task_complete", "turn_complete")
# How many unmatched duplicate keys per side a turn keeps (bounds state() on turn-less files).
_MAX_PENDING = 256


def is_injected(text: str) -> bool:
    """True when ``text`` is context Codex injected into a user-role message."""
    head = text.lstrip()[:64].lower()
    return head.startswith(INJECTED_PREFIXES)


def _dedupe_key(role: str, texts: list[str]) -> str | None:
    """A short hash of a message's role and whitespace-normalised text (None: no text)."""
    parts = [t for t in texts if not is_image_tag(t)]
    norm = " ".join(" ".join(parts).split())
    if not norm:
        return None
    digest = hashlib.sha256(f"{role}\x00{norm}".encode("utf-8", "replace")).hexdigest()
    return digest[:24]


class CodexReader(FormatReader):
    """Reads Codex CLI rollouts (``~/.codex/sessions/…/rollout-*.jsonl``)."""

    harness = "codex"

    def __init__(self, path: str, head: list[dict], state: dict | None = None) -> None:
        super().__init__(path, head, state)
        self._turn_id: str | None = None
        # Unmatched duplicate keys of the current turn, per source: key -> count.
        self._pending_ri: dict[str, int] = {}
        self._pending_ev: dict[str, int] = {}
        self.continues_session = self._later_page(head)
        self.restore(state)
        self._facts.forked_from = self._forked_from(head)

    @staticmethod
    def _forked_from(head: list[dict]) -> str | None:
        """The ``forked_from_id`` of the file's first ``session_meta`` (spec/formats.md §2.1:
        ``codex fork`` writes a new rollout naming the thread it was forked from; the parent's
        own ``session_meta`` copied after it is not this file's), else None. Read from the
        head, so an import that resumes mid-file still knows it (issue 18)."""
        for obj in head[:20]:
            if isinstance(obj, dict) and obj.get("type") == "session_meta":
                payload = obj.get("payload")
                value = payload.get("forked_from_id") if isinstance(payload, dict) else None
                return clean(value.strip()) if isinstance(value, str) and value.strip() else None
        return None

    @staticmethod
    def _later_page(head: list[dict]) -> bool:
        """A later page of a history paginated across files (0.169+ ``history_mode:
        "paginated"``, every line numbered by ``ordinal``): its first line's ordinal is past 0,
        so an earlier file holds the thread's start."""
        for obj in head[:1]:
            ordinal = obj.get("ordinal") if isinstance(obj, dict) else None
            return isinstance(ordinal, int) and not isinstance(ordinal, bool) and ordinal > 0
        return False

    # ------------------------------------------------------------------ detection

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:
        for obj in head[:20]:
            if str_field(obj, "type") in TOP_LEVEL_TYPES and isinstance(obj.get("payload"), dict):
                return True
        return False

    def key_from_head(self, head: list[dict]) -> str | None:
        for obj in head:
            if isinstance(obj, dict) and obj.get("type") == "session_meta":
                payload = obj.get("payload")
                if isinstance(payload, dict):
                    sid = payload.get("id")
                    if isinstance(sid, str) and sid.strip():
                        return clean(sid.strip())
        # Rollout file names end in the thread UUID: rollout-<date>T<time>-<uuid>.jsonl
        match = re.search(
            r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\.jsonl)?$",
            getattr(self, "path", "") or "",
            re.IGNORECASE,
        )
        return match.group(1) if match else None

    # ------------------------------------------------------------------ state

    def state(self) -> dict[str, Any]:
        out = super().state()
        out["codex"] = {
            "turn_id": self._turn_id,
            "pending_ri": dict(self._pending_ri),
            "pending_ev": dict(self._pending_ev),
        }
        return out

    def restore(self, state: dict[str, Any] | None) -> None:
        super().restore(state)
        own = state.get("codex") if isinstance(state, dict) else None
        if isinstance(own, dict):
            turn = own.get("turn_id")
            self._turn_id = turn if isinstance(turn, str) else None
            for name in ("pending_ri", "pending_ev"):
                value = own.get(name)
                target = self._pending_ri if name == "pending_ri" else self._pending_ev
                target.clear()
                if isinstance(value, dict):
                    target.update(
                        {
                            k: v
                            for k, v in value.items()
                            if isinstance(k, str) and isinstance(v, int) and v > 0
                        }
                    )

    # ------------------------------------------------------------------ turns and duplicates

    def _start_turn(self, turn_id: Any, *, explicit: bool) -> None:
        """A turn starts: forget unmatched duplicates unless it is the turn we are already in
        (``turn_context`` repeats the ``task_started`` turn id). A ``turn_context`` without a
        turn id (older Codex) says nothing about turns."""
        tid = turn_id if isinstance(turn_id, str) and turn_id else None
        if tid is None and not explicit:
            return
        if tid is not None and tid == self._turn_id:
            return
        if tid is not None and self._turn_id is None and not explicit:
            # First turn id learned from turn_context: adopt it, keep what is pending.
            self._turn_id = tid
            return
        self._turn_id = tid
        self._pending_ri.clear()
        self._pending_ev.clear()

    def _first_of_pair(self, key: str | None, *, from_event: bool) -> bool:
        """Record one side of a possible (response item, event) pair; True when this row is the
        visible one (no unmatched counterpart from the other source was seen in this turn)."""
        if key is None:
            return True
        mine, other = (
            (self._pending_ev, self._pending_ri)
            if from_event
            else (self._pending_ri, self._pending_ev)
        )
        count = other.get(key, 0)
        if count > 0:
            if count == 1:
                del other[key]
            else:
                other[key] = count - 1
            return False
        mine[key] = mine.pop(key, 0) + 1  # re-insert: most recent last
        while len(mine) > _MAX_PENDING:
            del mine[next(iter(mine))]
        return True

    # ------------------------------------------------------------------ reading

    def read(self, line: Line) -> Entry | None:
        try:
            return self._read(line)
        except Exception as exc:  # noqa: BLE001 - never raise on odd input (contract)
            self.warn(line, f"unreadable codex line: {type(exc).__name__}: {exc}")
            data = line.data if isinstance(line.data, dict) else {}
            top = data.get("type")
            return Entry(
                kind=EntryKind.OPAQUE,
                role=Role.SYSTEM,
                visible=False,
                type_name=top if isinstance(top, str) and top else "unknown",
                timestamp=parse_timestamp(data.get("timestamp")),
            )  # warned in _read

    def _read(self, line: Line) -> Entry | None:
        data = line.data or {}
        top = data.get("type")
        ts = self.time_field(line, data.get("timestamp"), "timestamp")
        payload = data.get("payload")
        if top in RECORD_TYPES:
            return Entry(
                kind=EntryKind.EVENT, role=Role.SYSTEM, visible=False, type_name=top, timestamp=ts
            )
        if top not in TOP_LEVEL_TYPES:
            name = top if isinstance(top, str) and top else "unknown"
            return Entry(
                kind=EntryKind.OPAQUE,
                role=Role.SYSTEM,
                visible=False,
                type_name=clean(name),
                timestamp=ts,
            )
        if not isinstance(payload, dict):
            self.warn(line, f"{top}: payload missing or not an object")
            payload = {}
        if top == "session_meta":
            return self._session_meta(line, payload, ts)
        if top == "turn_context":
            return self._turn_context(line, payload, ts)
        if top == "compacted":
            return self._compacted(line, payload, ts)
        kind = payload.get("type")
        if not isinstance(kind, str) or not kind:
            return Entry(
                kind=EntryKind.OPAQUE, role=Role.SYSTEM, visible=False, type_name=top, timestamp=ts
            )
        entry = (
            self._response_item(line, kind, payload)
            if top == "response_item"
            else self._event(line, kind, payload)
        )
        entry.timestamp = ts
        return entry

    # -- top-level kinds

    def _session_meta(self, line: Line, payload: dict, ts: Any) -> Entry:
        self.string_field(line, payload, "id")  # the key: a wrong type is named, not used
        cwd = text_of(self.string_field(line, payload, "cwd")) or None
        if cwd:
            self._facts.cwd = cwd
        version = text_of(payload.get("cli_version"))
        if version:
            self._facts.version = version
        return Entry(
            kind=EntryKind.EVENT,
            role=Role.SYSTEM,
            visible=False,
            type_name="session_meta",
            timestamp=ts,
            cwd=cwd,
        )

    def _turn_context(self, line: Line, payload: dict, ts: Any) -> Entry:
        self._start_turn(payload.get("turn_id"), explicit=False)
        cwd = text_of(self.string_field(line, payload, "cwd")) or None
        if cwd:
            self._facts.cwd = cwd
        return Entry(
            kind=EntryKind.EVENT,
            role=Role.SYSTEM,
            visible=False,
            type_name="turn_context",
            timestamp=ts,
            cwd=cwd,
        )

    def _compacted(self, line: Line, payload: dict, ts: Any) -> Entry:
        """A compaction row with its summary. A remote compaction (``message`` empty, the
        summary an encrypted ``compaction`` item of ``replacement_history``) is never an empty
        summary: it is an event saying so, and the rows before it stay in view (a gap only
        when they do not fit the budget, named like every gap)."""
        summary = payload.get("message")
        history = payload.get("replacement_history")
        encrypted = isinstance(history, list) and any(
            isinstance(item, dict)
            and item.get("type") in ("compaction", "compaction_summary")
            and item.get("encrypted_content")
            for item in history
        )
        if not isinstance(summary, str) or not summary.strip():
            if not encrypted:
                self.warn(line, "compacted: summary message missing")
            return Entry(
                kind=EntryKind.EVENT,
                role=Role.SYSTEM,
                visible=False,
                type_name="compacted/encrypted" if encrypted else "compacted/empty",
                timestamp=ts,
                blocks=(TextBlock(ENCRYPTED_COMPACTION_TEXT),) if encrypted else (),
            )
        return Entry(
            kind=EntryKind.COMPACTION,
            role=Role.SYSTEM,
            visible=True,
            type_name="compacted",
            timestamp=ts,
            compaction=CompactionInfo(summary=text_of(summary)),
        )

    # -- response items

    def _response_item(self, line: Line, kind: str, p: dict) -> Entry:
        type_name = f"response_item/{clean(kind)}"
        if kind == "message":
            return self._message(line, p, type_name)
        if kind == "reasoning":
            blocks = reasoning_blocks(p)
            if not blocks:
                # Only encrypted content: nothing to show (it stays in the raw line).
                return Entry(
                    kind=EntryKind.EVENT, role=Role.ASSISTANT, visible=False, type_name=type_name
                )
            return Entry(
                kind=EntryKind.MESSAGE,
                role=Role.ASSISTANT,
                blocks=tuple(blocks),
                type_name=type_name,
            )
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            block = tool_call_block(kind, p, partial(self.warn, line))
            return Entry(
                kind=EntryKind.MESSAGE, role=Role.ASSISTANT, blocks=(block,), type_name=type_name
            )
        if kind in ("function_call_output", "custom_tool_call_output"):
            return self._tool_output(line, p, type_name)
        if kind in ("tool_search_call", "tool_search_output"):
            return self._tool_search(kind, p, type_name)
        if kind == "image_generation_call":
            return self._image_generation(line, p, type_name)
        if kind in (
            "compaction",
            "ghost_snapshot",
            "web_search_call",
            "compaction_trigger",
            "context_compaction",
        ):
            return Entry(kind=EntryKind.EVENT, role=Role.SYSTEM, visible=False, type_name=type_name)
        return Entry(kind=EntryKind.OPAQUE, role=Role.SYSTEM, visible=False, type_name=type_name)

    def _tool_search(self, kind: str, p: dict, type_name: str) -> Entry:
        """A tool search the client ran (its call or output); one the server ran is a hidden
        event."""
        role = Role.ASSISTANT if kind == "tool_search_call" else Role.TOOL
        block = tool_search_block(kind, p)
        if block is None:
            return Entry(kind=EntryKind.EVENT, role=role, visible=False, type_name=type_name)
        return Entry(kind=EntryKind.MESSAGE, role=role, blocks=(block,), type_name=type_name)

    def _image_generation(self, line: Line, p: dict, type_name: str) -> Entry:
        """A generated image (a PNG in ``result``); without one an empty message (with a
        warning unless the call is still running or failed)."""
        result = p.get("result")
        if not isinstance(result, str) or not result:
            if p.get("status") not in ("in_progress", "generating", "failed"):
                self.warn(line, "image_generation_call: result missing")
            return Entry(kind=EntryKind.MESSAGE, role=Role.ASSISTANT, type_name=type_name)
        media, payloads = decode_media("image/png", result)
        return Entry(
            kind=EntryKind.MESSAGE,
            role=Role.ASSISTANT,
            blocks=(media,),
            payloads=payloads,
            type_name=type_name,
        )

    def _message(self, line: Line, p: dict, type_name: str) -> Entry:
        role = p.get("role")
        texts, blocks, payloads = content_blocks(p.get("content"), partial(self.warn, line))
        entry = Entry(
            kind=EntryKind.MESSAGE,
            role=Role.USER,
            blocks=tuple(blocks),
            type_name=type_name,
            payloads=payloads or None,
        )
        if role == "user":
            if any(is_injected(t) for t in texts if t.strip()):
                entry.kind = EntryKind.CONTEXT
                entry.visible = False
                return entry
            typed = any(t.strip() and not is_image_tag(t) for t in texts)
            if not self._first_of_pair(_dedupe_key("user", texts), from_event=False):
                entry.kind = EntryKind.EVENT
                entry.visible = False
                return entry
            entry.is_request = typed
            return entry
        if role in ("developer", "system"):
            entry.role = Role.SYSTEM
            entry.kind = EntryKind.CONTEXT
            entry.visible = False
            return entry
        if role == "assistant":
            entry.role = Role.ASSISTANT
            if p.get("phase") == "final_answer":
                entry.run_end = RunStatus.FINISHED
            if not self._first_of_pair(_dedupe_key("assistant", texts), from_event=False):
                entry.kind = EntryKind.EVENT
                entry.visible = False
            return entry
        entry.role = Role.SYSTEM
        entry.kind = EntryKind.OPAQUE
        entry.visible = False
        return entry

    def _tool_output(self, line: Line, p: dict, type_name: str) -> Entry:
        warn = partial(self.warn, line)
        cid = call_id(p, type_name.split("/", 1)[1], warn)
        output = p.get("output")
        if output is None:
            warn(f"{type_name}: output missing")
        text, is_error, media, payloads = tool_output(output)
        block = ToolResultBlock(cid, is_error, text, tuple(media))
        return Entry(
            kind=EntryKind.MESSAGE,
            role=Role.TOOL,
            blocks=(block,),
            type_name=type_name,
            payloads=payloads or None,
        )

    # -- events

    def _event(self, line: Line, kind: str, p: dict) -> Entry:
        type_name = f"event_msg/{clean(kind)}"
        if kind not in KNOWN_EVENTS:
            return Entry(
                kind=EntryKind.OPAQUE, role=Role.SYSTEM, visible=False, type_name=type_name
            )
        if kind in ("user_message", "agent_message"):
            return self._event_message(line, kind, p, type_name)
        entry = Entry(kind=EntryKind.EVENT, role=Role.SYSTEM, visible=False, type_name=type_name)
        if kind in _TURN_START_EVENTS:
            self._start_turn(p.get("turn_id"), explicit=True)
        elif kind in _TURN_END_EVENTS:
            entry.run_end = RunStatus.FINISHED
        elif kind == "turn_aborted":
            entry.run_end = RunStatus.INTERRUPTED
        elif kind == "error":
            entry.run_end = RunStatus.FAILED
            message = text_of(p.get("message"))
            if message:
                entry.blocks = (TextBlock(message),)
        elif kind == "thread_name_updated":
            name = text_of(p.get("thread_name")) or text_of(p.get("name"))
            if name:
                self._facts.title = name
        return entry

    def _event_message(self, line: Line, kind: str, p: dict, type_name: str) -> Entry:
        message = p.get("message")
        if not isinstance(message, str):
            self.warn(line, f"{type_name}: message missing")
        text = text_of(message)
        if kind == "agent_message":
            entry = Entry(
                kind=EntryKind.MESSAGE,
                role=Role.ASSISTANT,
                blocks=(TextBlock(text),) if text else (),
                type_name=type_name,
            )
            if p.get("phase") == "final_answer":
                entry.run_end = RunStatus.FINISHED
            if not self._first_of_pair(_dedupe_key("assistant", [text]), from_event=True):
                entry.kind = EntryKind.EVENT
                entry.visible = False
            return entry
        blocks: list[Block] = [TextBlock(text)] if text else []
        payloads: dict[str, bytes] = {}
        images = p.get("images")
        if isinstance(images, list):
            for url in images:
                add_media(url, blocks, payloads)
        entry = Entry(
            kind=EntryKind.MESSAGE,
            role=Role.USER,
            blocks=tuple(blocks),
            type_name=type_name,
            payloads=payloads or None,
        )
        legacy_kind = p.get("kind")
        if legacy_kind in ("user_instructions", "environment_context") or (
            text.strip() and is_injected(text)
        ):
            entry.kind = EntryKind.CONTEXT
            entry.visible = False
            return entry
        if not self._first_of_pair(_dedupe_key("user", [text]), from_event=True):
            entry.kind = EntryKind.EVENT
            entry.visible = False
            return entry
        entry.is_request = bool(text.strip())
        return entry
