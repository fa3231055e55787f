"""Claude Code transcript reader (spec/formats.md §1).

One entry per line, never merged: an assistant API response spans several lines (one content
block each) and each becomes its own entry. Mapping (decided by the lead):

- ``user`` lines: ``isCompactSummary`` → ``compaction`` (summary = its text, trigger from the
  preceding ``compact_boundary``); ``isMeta`` or text Claude Code injected (slash-command
  wrappers of local commands, ``<local-command-stdout>``, ``<system-reminder>``, background
  notifications, bash-mode echoes) → ``context``; tool results → role ``tool`` (results first,
  then text, then media); ``[Request interrupted by user…`` → a visible user message with
  ``run_end`` interrupted; any other text → a typed request.
- Slash commands: a user line holding only a command wrapper (``<command-name>/X</command-name>``,
  optional ``<command-message>``/``<command-args>``) is what the person typed. A built-in local
  command (``LOCAL_COMMANDS``: /model, /clear, /mcp …) stays context; any other (``/init``,
  ``/review``, custom and plugin commands) is a typed request whose one text block is
  ``"/name"`` plus ``" " + args`` when the args are non-empty. The ``isMeta`` line holding the
  expanded prompt stays context.
- ``assistant`` lines: text / thinking / tool_use blocks (``redacted_thinking`` is skipped, the
  raw line keeps it); ``stop_reason: end_turn`` → finished; ``isApiErrorMessage`` → failed.
- ``system`` lines: ``local_command`` → ``context``; every other subtype (``compact_boundary``,
  ``api_error`` included) → event. ``api_error`` lines are often retry notices: no run hint.
  A ``compact_boundary`` (a new root: its parent is its ``logicalParentUuid``) gives its
  summary line the trigger and, in 2.1.33x, ``compactMetadata.preservedSegment.headUuid`` as
  the first kept row (the rows it preserves, written before the boundary, stay in view:
  the summary covers only the rows before them). A ``microcompact_boundary`` (tool results
  cleared from the model's context, no summary) is an event saying how many; nothing leaves
  our view.
- tool results: text items, media, and ``tool_reference`` items (ToolSearch loading a deferred
  tool) as the text ``loaded tool: NAME``, one line each.
- ``progress``, snapshots, queue operations, titles, the one-field markers and the 2.1.332
  request and bookkeeping records (``api-request*``, ``atis-latch``, ``tools-used``,
  ``cost-state``) → events;
  ``attachment`` → context; anything else → opaque.
- ``isSidechain`` lines in a session file (1.x in-file subagents) are sidechain rows: invisible,
  never requests, no run hints. A subagent side file (2.x ``subagents/agent-<id>.jsonl``: its
  first user/assistant line is a sidechain line) is the child session itself: there its sidechain
  lines are its main line (visible, ``sidechain=False``, the Task prompt a request, run hints
  apply). ``toolUseResult`` never feeds a view (raw only).

Over 600 lines: one reader of one format: Claude Code's line types (user, assistant blocks, tool
results, summaries, compaction boundaries, sidechains, subagent side files, system and
attachment lines) share the reader's state (the title source, the compaction trigger, the side-
file flag); split by line type, that state would pass between modules.
"""

from __future__ import annotations

import os
import re
from typing import Any, ClassVar

import orjson

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
from continuity.formats.base import (
    FormatReader,
    decode_media,
    file_stem,
    str_field,
    text_of,
)
from continuity.formats.jsonl import Line

#: Conversational line types (they carry the envelope: uuid, parentUuid, sessionId, cwd ...).
CONVERSATION_TYPES = frozenset({"user", "assistant", "system", "progress", "attachment"})

#: Known metadata line types: events, not conversation (kept raw, never in a view, a
#: transcript or a digest). Claude Code 2.1.332 added the request records (``api-request``,
#: ``api-request-blob``, ``api-request-shape``: what it sent the model), ``atis-latch``,
#: ``tools-used`` and ``cost-state`` (issue 12; ``../shared/spec/harnesses.md``).
EVENT_TYPES = frozenset(
    {
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "summary",
        "ai-title",
        "custom-title",
        "last-prompt",
        "pr-link",
        "permission-mode",
        "mode",
        "agent-name",
        "agent-setting",
        "bridge-session",
        "continued-in",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "atis-latch",
        "tools-used",
        "cost-state",
    }
)

#: The text a ``tool_reference`` item of a tool result stands for (ToolSearch loading a
#: deferred MCP tool, Claude Code 2.1.332: ``{"type": "tool_reference", "tool_name": N}``).
TOOL_REFERENCE_TEXT = "loaded tool: {}"

#: Every top-level ``type`` Claude Code is known to write.
CLAUDE_TYPES = CONVERSATION_TYPES | EVENT_TYPES

#: Codex envelope types (a ``payload`` object under one of these is a Codex rollout).
_CODEX_TYPES = frozenset(
    {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
)

#: Prefixes of user text that Claude Code injected rather than a person typed.
INJECTED_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<command-contents>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<system-reminder>",
    "<task-notification>",
    "<bash-notification>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
    "<ide_opened_file>",
    "<ide_selection>",
    "<ide_diagnostics>",
    "Caveat: The messages below were generated by the user while running local commands",
)

INTERRUPT_PREFIX = "[Request interrupted by user"

#: Older releases wrote the compaction summary without ``isCompactSummary``.
COMPACT_SUMMARY_PREFIX = "This session is being continued from a previous conversation"

#: Built-in Claude Code commands that print local output instead of prompting the model: their
#: wrapper lines are context, not requests. Any other slash command (``/init``, ``/review``,
#: custom and plugin commands) sends a prompt, so its wrapper is what the person asked.
LOCAL_COMMANDS = frozenset(
    {
        "clear",
        "compact",
        "model",
        "cost",
        "help",
        "config",
        "status",
        "memory",
        "permissions",
        "context",
        "doctor",
        "login",
        "logout",
        "mcp",
        "resume",
        "exit",
        "quit",
        "add-dir",
        "agents",
        "hooks",
        "ide",
        "vim",
        "terminal-setup",
        "theme",
        "upgrade",
        "usage",
        "export",
        "rewind",
        "statusline",
        "todos",
        "tasks",
        "bashes",
        "output-style",
        "plugin",
        "plugins",
        "release-notes",
        "privacy-settings",
        "fast",
        "effort",
        "sandbox",
        "stats",
        "feedback",
        "bug",
        "install-github-app",
        "migrate-installer",
        "allowed-tools",
        "keybindings",
        "color",
        "copy",
        "rename",
        "fork",
        "branch",
        "skills",
        "extra-usage",
        "remote-control",
        "mobile",
        "desktop",
        "tag",
    }
)

_WRAPPER_TAG = re.compile(
    r"<(command-name|command-message|command-args|command-contents)>(.*?)</\1>", re.DOTALL
)

_TITLE_RANK = {"summary": 0, "ai-title": 1, "custom-title": 2}


def _is_injected(text: str) -> bool:
    return text.lstrip().startswith(INJECTED_PREFIXES)


def _slash_command(text: str) -> tuple[str, str] | None:
    """``(name without "/", args)`` when ``text`` is only a slash-command wrapper, else None."""
    tags: dict[str, str] = {}

    def take(match: re.Match[str]) -> str:
        tags.setdefault(match.group(1), match.group(2))
        return ""

    rest = _WRAPPER_TAG.sub(take, text)
    if rest.strip() or "command-name" not in tags:
        return None
    name = tags["command-name"].strip().lstrip("/").strip()
    if not name:
        return None
    return name, tags.get("command-args", "").strip()


def _is_interrupt(text: str) -> bool:
    return text.lstrip().startswith(INTERRUPT_PREFIX)


def _tool_arguments(value: Any) -> Any:
    """A dict for an object or a JSON string holding one; otherwise the raw string."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            return text_of(value)
        return parsed if isinstance(parsed, dict) else text_of(value)
    return {}


class ClaudeCodeReader(FormatReader):
    """Reader of Claude Code ``<session-id>.jsonl`` transcripts (and subagent files)."""

    harness: ClassVar[str] = "claude-code"

    def __init__(self, path: str, head: list[dict], state: dict | None = None) -> None:
        super().__init__(path, head, state)
        #: ``compactMetadata.trigger`` of a boundary not yet followed by its summary line.
        self._compact_trigger: str | None = None
        #: ``compactMetadata.preservedSegment.headUuid`` of that boundary: the first row the
        #: compaction kept (2.1.33x: the rows it preserves stay in view).
        self._compact_kept: str | None = None
        #: Which line type set the current title (custom titles outrank generated ones).
        self._title_source: str | None = None
        #: True in a subagent side file (its own conversation is the main line), False in a
        #: session file, None until the first user/assistant line is known.
        self._side_file: bool | None = self._side_file_from_head(head)
        self._facts.agent_id = self._agent_from_head(path, head)
        self.restore(state)

    # ------------------------------------------------------------------ detection

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:
        found = False
        for obj in head:
            if not isinstance(obj, dict):
                continue
            kind = str_field(obj, "type")
            if kind == "session":  # pi header
                return False
            if isinstance(obj.get("payload"), dict) and (
                kind in _CODEX_TYPES or ("uuid" not in obj and "sessionId" not in obj)
            ):
                return False  # Codex envelope
            if kind not in CLAUDE_TYPES:
                continue
            if (
                "sessionId" in obj
                or "uuid" in obj
                or "parentUuid" in obj
                or kind in ("file-history-snapshot", "queue-operation")
                or (kind == "summary" and "leafUuid" in obj)
            ):
                found = True
        return found

    def key_from_head(self, head: list[dict]) -> str | None:
        """The session key (formats.md §1.9): the file's own name when it is one of the head's
        ``sessionId`` values (real files are ``<sessionId>.jsonl``; a resumed file starts with
        lines replayed from the earlier session), else the ``sessionId`` of most head lines
        (the first of equals). A 2.x subagent file (its first conversational line a sidechain
        line) shares its parent's id and is keyed ``<sessionId>/<file stem>``, whatever order
        the files are imported in. None when no head line has a ``sessionId``."""
        counts: dict[str, int] = {}
        for obj in head:
            if isinstance(obj, dict):
                sid = obj.get("sessionId")
                if isinstance(sid, str) and sid:
                    counts[sid] = counts.get(sid, 0) + 1
        if not counts:
            return None
        stem = file_stem(self.path)
        sid = stem if stem in counts else max(counts, key=lambda k: counts[k])
        if self._side_file_from_head(head) and stem != sid:
            return f"{sid}/{stem}"
        return sid

    @staticmethod
    def _side_file_from_head(head: list[dict]) -> bool | None:
        """Whether the first user/assistant line is a sidechain line (None: none in the head)."""
        for obj in head:
            if isinstance(obj, dict) and obj.get("type") in ("user", "assistant"):
                return obj.get("isSidechain") is True
        return None

    @staticmethod
    def _agent_from_head(path: str, head: list[dict]) -> str:
        """A 2.x subagent file (``subagents/agent-<id>.jsonl``) is its own agent: its first
        conversational line is a sidechain line with ``agentId``. Otherwise "default"."""
        for obj in head:
            if not isinstance(obj, dict) or obj.get("type") not in ("user", "assistant"):
                continue
            if obj.get("isSidechain") is True:
                agent = obj.get("agentId")
                if isinstance(agent, str) and agent:
                    return agent
                stem = os.path.basename(path)
                if stem.startswith("agent-") and stem.endswith(".jsonl") and len(stem) > 12:
                    return stem[len("agent-") : -len(".jsonl")]
            break
        return "default"

    # ------------------------------------------------------------------ state

    def state(self) -> dict[str, Any]:
        out = super().state()
        out["compact_trigger"] = self._compact_trigger
        out["compact_kept"] = self._compact_kept
        out["title_source"] = self._title_source
        out["side_file"] = self._side_file
        out["agent_id"] = self._facts.agent_id
        return out

    def restore(self, state: dict[str, Any] | None) -> None:
        super().restore(state)
        if state:
            trigger = state.get("compact_trigger")
            self._compact_trigger = trigger if isinstance(trigger, str) else None
            kept = state.get("compact_kept")
            self._compact_kept = kept if isinstance(kept, str) else None
            source = state.get("title_source")
            self._title_source = source if isinstance(source, str) else None
            side = state.get("side_file")
            if isinstance(side, bool):
                self._side_file = side
            agent = state.get("agent_id")
            if isinstance(agent, str) and agent:
                self._facts.agent_id = agent

    # ------------------------------------------------------------------ reading

    def read(self, line: Line) -> Entry | None:
        data = line.data or {}
        kind = data.get("type")
        if not isinstance(kind, str):
            kind = None
        type_name = kind or "<missing type>"
        entry = Entry(kind=EntryKind.OPAQUE, role=Role.SYSTEM, type_name=type_name, visible=False)
        if self._side_file is None and kind in ("user", "assistant"):
            # The head held no conversational line: the first one read decides.
            self._side_file = data.get("isSidechain") is True
            if self._side_file:
                self._facts.agent_id = self._agent_from_head(self.path, [data])
        self._envelope(line, entry, data)
        try:
            if kind == "user":
                self._user(line, data, entry)
            elif kind == "assistant":
                self._assistant(line, data, entry)
            elif kind == "system":
                self._system(line, data, entry)
            elif kind == "attachment":
                self._attachment(data, entry)
            elif kind in EVENT_TYPES:
                self._event(data, entry)
        except Exception as exc:  # noqa: BLE001 - never raise on odd input (formats.md §5.1)
            self.warn(line, f"unreadable {type_name} line: {type(exc).__name__}: {exc}")
            entry.kind, entry.role, entry.blocks = EntryKind.OPAQUE, Role.SYSTEM, ()
            entry.visible = entry.is_request = False
            entry.compaction = entry.run_end = entry.payloads = None
        if entry.sidechain:
            entry.visible = False
            entry.is_request = False
            entry.run_end = None
        return entry

    def _envelope(self, line: Line, entry: Entry, data: dict) -> None:
        ts, field = data.get("timestamp"), "timestamp"
        if ts is None and isinstance(data.get("snapshot"), dict):
            ts, field = data["snapshot"].get("timestamp"), "snapshot.timestamp"
        entry.timestamp = self.time_field(line, ts, field)
        entry.native_id = self.string_field(line, data, "uuid")
        entry.parent_native_id = self.string_field(line, data, "parentUuid")
        self.string_field(line, data, "sessionId")  # the key comes from the head; named here
        # In a subagent side file the sidechain lines are that (child) session's main line.
        entry.sidechain = data.get("isSidechain") is True and not self._side_file
        cwd = self.string_field(line, data, "cwd")
        if cwd:
            entry.cwd = text_of(cwd)
            if not entry.sidechain or self._facts.cwd is None:
                self._facts.cwd = entry.cwd
        version = data.get("version")
        if isinstance(version, str) and version:
            self._facts.version = version

    # ---- user

    def _user(self, line: Line, data: dict, entry: Entry) -> None:
        entry.role = Role.USER
        entry.kind = EntryKind.MESSAGE
        entry.visible = True
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if content is None:
            self.warn(line, "user line without message.content")

        results: list[Block] = []
        texts: list[tuple[str, bool]] = []  # (text, injected)
        media: list[Block] = []
        payloads: dict[str, bytes] = {}
        unknown = 0
        if isinstance(content, str):
            texts.append((text_of(content), _is_injected(content)))
        elif isinstance(content, list):
            for block in content:
                btype = block.get("type") if isinstance(block, dict) else None
                if btype == "text":
                    text = block.get("text")
                    if not isinstance(text, str):
                        self.warn(line, "text block without text")
                    texts.append((text_of(text), _is_injected(text_of(text))))
                elif btype == "tool_result":
                    results.append(self._tool_result(line, block, payloads))
                elif btype in ("image", "document"):
                    got = self._media(line, block, payloads)
                    if got is not None:
                        media.append(got)
                else:
                    unknown += 1
                    self.warn(line, f"unknown user content block {btype!r} skipped")
        elif content is not None:
            self.warn(line, f"user message.content of type {type(content).__name__}")
        if payloads:
            entry.payloads = payloads

        all_text = "\n\n".join(t for t, _ in texts if t)

        # Compaction summary (formats.md §1.6).
        if data.get("isCompactSummary") is True or (
            not results
            and all_text.lstrip().startswith(COMPACT_SUMMARY_PREFIX)
            and not data.get("isMeta")
        ):
            if entry.sidechain:  # a subagent's own compaction: keep it out of the main log
                entry.kind, entry.visible = EntryKind.CONTEXT, False
                entry.blocks = tuple(TextBlock(t) for t, _ in texts if t)
                return
            entry.kind, entry.role, entry.visible = EntryKind.COMPACTION, Role.SYSTEM, True
            entry.blocks = (TextBlock(all_text),) if all_text else ()
            if not all_text:
                self.warn(line, "compaction summary without text")
            entry.compaction = CompactionInfo(
                summary=all_text,
                first_kept_entry_id=self._compact_kept,
                trigger=self._compact_trigger,
            )
            self._compact_trigger = self._compact_kept = None
            return

        if results:
            entry.role = Role.TOOL
            entry.blocks = (
                tuple(results) + tuple(TextBlock(t) for t, _ in texts if t) + tuple(media)
            )
            return

        if data.get("isMeta") is True:
            entry.kind, entry.visible = EntryKind.CONTEXT, False
            entry.blocks = tuple(TextBlock(t) for t, _ in texts if t) + tuple(media)
            return

        typed = [t for t, injected in texts if t and not injected]
        if not results and texts and not typed:
            command = _slash_command("\n".join(t for t, _ in texts if t))
            if command is not None and command[0].lower() not in LOCAL_COMMANDS:
                # A prompt command the person typed: the request is the command as typed.
                name, args = command
                entry.blocks = (TextBlock(f"/{name} {args}" if args else f"/{name}"), *media)
                entry.is_request = True
                return
        if texts and not typed and any(t for t, _ in texts):
            # Only injected text (slash-command wrapper, stdout, reminder, notification).
            entry.kind, entry.visible = EntryKind.CONTEXT, False
            entry.blocks = tuple(TextBlock(t) for t, _ in texts if t) + tuple(media)
            return

        if typed and all(_is_interrupt(t) for t in typed):
            entry.blocks = tuple(TextBlock(t) for t in typed) + tuple(media)
            entry.run_end = RunStatus.INTERRUPTED
            return

        if not typed and not media and unknown:
            entry.kind, entry.visible = EntryKind.OPAQUE, False
            entry.role = Role.SYSTEM
            return

        # A typed prompt: injected blocks riding along (IDE context, reminders) stay raw only.
        entry.blocks = tuple(TextBlock(t) for t in typed) + tuple(media)
        entry.is_request = bool(typed)

    def _tool_result(self, line: Line, block: dict, payloads: dict[str, bytes]) -> ToolResultBlock:
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str) or not call_id:
            self.warn(line, "tool_result without tool_use_id")
            call_id = ""
        content = block.get("content")
        parts: list[str] = []
        media: list[MediaBlock] = []
        if isinstance(content, str):
            parts.append(text_of(content))
        elif isinstance(content, list):
            for item in content:
                itype = item.get("type") if isinstance(item, dict) else None
                if itype == "text":
                    parts.append(text_of(item.get("text")))
                elif itype in ("image", "document"):
                    got = self._media(line, item, payloads)
                    if isinstance(got, MediaBlock):
                        media.append(got)
                    elif isinstance(got, TextBlock):  # a text document: its text is the result's
                        parts.append(got.text)
                elif itype == "tool_reference":  # issue 12: ToolSearch loaded a tool
                    parts.append(TOOL_REFERENCE_TEXT.format(text_of(item.get("tool_name"))))
                else:
                    self.warn(line, f"unknown tool_result content block {itype!r} skipped")
        elif content is None:
            if "content" not in block:
                self.warn(line, f"tool_result {call_id} without content")
        else:
            self.warn(line, f"tool_result {call_id} content of type {type(content).__name__}")
        return ToolResultBlock(
            call_id=text_of(call_id),
            is_error=block.get("is_error") is True,
            text="\n".join(parts),
            media=tuple(media),
        )

    def _media(self, line: Line, block: dict, payloads: dict[str, bytes]) -> Block | None:
        source = block.get("source")
        if not isinstance(source, dict):
            self.warn(line, f"{block.get('type')} block without source")
            return None
        stype = source.get("type")
        if stype == "base64":
            mblock, payload = decode_media(text_of(source.get("media_type")), source.get("data"))
            payloads.update(payload)
            return mblock
        if stype == "text" and isinstance(source.get("data"), str):
            return TextBlock(text_of(source["data"]))
        self.warn(line, f"{block.get('type')} block with {stype!r} source skipped")
        return None

    # ---- assistant

    def _assistant(self, line: Line, data: dict, entry: Entry) -> None:
        entry.role = Role.ASSISTANT
        entry.kind = EntryKind.MESSAGE
        entry.visible = True
        message = data.get("message")
        if not isinstance(message, dict):
            self.warn(line, "assistant line without message")
            message = {}
        content = message.get("content")
        blocks: list[Block] = []
        known = 0
        unknown = 0
        if isinstance(content, str):
            blocks.append(TextBlock(text_of(content)))
            known += 1
        elif isinstance(content, list):
            for block in content:
                btype = block.get("type") if isinstance(block, dict) else None
                if btype == "text":
                    known += 1
                    text = block.get("text")
                    if not isinstance(text, str):
                        self.warn(line, "text block without text")
                    blocks.append(TextBlock(text_of(text)))
                elif btype == "thinking":
                    known += 1
                    thought = text_of(block.get("thinking"))
                    if thought:
                        blocks.append(ThinkingBlock(thought))
                elif btype == "redacted_thinking":
                    known += 1  # opaque payload: raw line only (formats.md §5.1 rule 8)
                elif btype == "tool_use":
                    known += 1
                    blocks.append(self._tool_call(line, block))
                else:
                    unknown += 1
                    self.warn(line, f"unknown assistant content block {btype!r} skipped")
        else:
            self.warn(line, "assistant line without message.content")
        if unknown and not known:
            entry.kind, entry.role, entry.visible = EntryKind.OPAQUE, Role.SYSTEM, False
            return
        entry.blocks = tuple(blocks)
        if data.get("isApiErrorMessage") is True:
            entry.run_end = RunStatus.FAILED
        elif message.get("stop_reason") in ("end_turn", "stop_sequence"):
            entry.run_end = RunStatus.FINISHED

    def _tool_call(self, line: Line, block: dict) -> ToolCallBlock:
        call_id = block.get("id")
        if not isinstance(call_id, str) or not call_id:
            self.warn(line, "tool_use without id")
            call_id = ""
        name = block.get("name")
        if not isinstance(name, str):
            self.warn(line, f"tool_use {call_id} without name")
            name = ""
        if not isinstance(block.get("input"), (dict, str)):
            self.warn(line, f"tool_use {call_id} without an input object")
        return ToolCallBlock(
            id=text_of(call_id), name=text_of(name), arguments=_tool_arguments(block.get("input"))
        )

    # ---- system, attachment, events

    def _system(self, line: Line, data: dict, entry: Entry) -> None:
        subtype = data.get("subtype")
        entry.role = Role.SYSTEM
        entry.visible = False
        if isinstance(subtype, str) and subtype:
            entry.type_name = f"system/{subtype}"
        content = data.get("content")
        text = text_of(content)
        if subtype == "local_command":
            entry.kind = EntryKind.CONTEXT
            entry.blocks = (TextBlock(text),) if text else ()
            return
        entry.kind = EntryKind.EVENT
        if text:
            entry.blocks = (TextBlock(text),)
        if subtype in ("compact_boundary", "microcompact_boundary"):
            # A new root (``parentUuid: null``); the chain goes on through its logical parent.
            logical = data.get("logicalParentUuid")
            if entry.parent_native_id is None and isinstance(logical, str) and logical:
                entry.parent_native_id = logical
        if subtype == "compact_boundary":
            meta = data.get("compactMetadata")
            meta = meta if isinstance(meta, dict) else {}
            if not entry.sidechain:
                self._compact_trigger = text_of(meta.get("trigger")) or None
                segment = meta.get("preservedSegment")
                head = segment.get("headUuid") if isinstance(segment, dict) else None
                self._compact_kept = head if isinstance(head, str) and head else None
        elif subtype == "microcompact_boundary":
            # Claude Code cleared old tool results from the model's context (no summary): an
            # event naming what it cleared; every row stays in our view and transcript.
            meta = data.get("microcompactMetadata")
            meta = meta if isinstance(meta, dict) else {}
            ids = meta.get("compactedToolIds")
            n = len(ids) if isinstance(ids, list) else 0
            saved = meta.get("tokensSaved")
            entry.blocks = (
                TextBlock(
                    f"microcompact: {n} tool results cleared from the model's context"
                    + (f", {saved} tokens saved" if isinstance(saved, int) else "")
                ),
            )

    def _attachment(self, data: dict, entry: Entry) -> None:
        """Injected payloads (queued prompts, hook output, tool deltas): context, kept raw."""
        entry.kind, entry.role, entry.visible = EntryKind.CONTEXT, Role.USER, False
        att = data.get("attachment")
        if isinstance(att, dict):
            atype = att.get("type")
            if isinstance(atype, str) and atype:
                entry.type_name = f"attachment/{atype}"
            for key in ("prompt", "content"):
                text = att.get(key)
                if isinstance(text, str) and text:
                    entry.blocks = (TextBlock(text_of(text)),)
                    break

    def _event(self, data: dict, entry: Entry) -> None:
        kind = data.get("type")
        entry.kind, entry.role, entry.visible = EntryKind.EVENT, Role.SYSTEM, False
        if kind == "progress":
            inner = data.get("data")
            if isinstance(inner, dict) and isinstance(inner.get("type"), str) and inner["type"]:
                entry.type_name = f"progress/{inner['type']}"
        elif kind == "queue-operation":
            op = data.get("operation")
            if isinstance(op, str) and op:
                entry.type_name = f"queue-operation/{op}"
        elif kind in _TITLE_RANK:
            key = {"summary": "summary", "ai-title": "aiTitle", "custom-title": "customTitle"}[kind]
            title = text_of(data.get(key)).strip()
            current = _TITLE_RANK.get(self._title_source or "", -1)
            if title and _TITLE_RANK[kind] >= current:
                self._facts.title = title
                self._title_source = kind
