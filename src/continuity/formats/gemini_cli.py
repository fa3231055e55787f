"""Gemini CLI chat files (issue 42 item 2): ``~/.gemini/tmp/<project>/chats/session-*.jsonl``
(``$GEMINI_CLI_HOME/.gemini/tmp/...`` when that variable is set), learnt from Gemini CLI's
``chatRecordingService`` and observed from gemini 0.61.0 run offline
(``tests/fixtures/gemini_cli``); and the legacy ``session-*.json`` chats of Gemini CLI 0.2.0
to 0.38.2 (``tests/fixtures/gemini_cli_legacy``, written from 0.38.2's source).

One file is JSONL, appended to (a record a line):

- a **metadata** line: ``sessionId``, ``projectHash``, ``startTime``, ``lastUpdated``,
  ``kind`` (``main`` / ``subagent``), optional ``summary``, ``directories``; read as a
  ``session`` event with native id ``<sessionId>#session`` (one row for the session, however
  many files and rewrites repeat it);
- **message** records (``id``, ``timestamp``, ``type``, ``content``: a string or Gemini API
  parts): ``user``; ``gemini`` (the model: ``thoughts`` ``[{subject, description,
  timestamp}]``, ``toolCalls`` ``[{id, name, args, result (functionResponse parts), status,
  resultDisplay, ...}]``, ``tokens``, ``model``); ``info``, ``error``, ``warning``. Gemini CLI
  appends a message again under its id when it changes (a ``gemini`` record first without,
  then with its ``toolCalls``): the copy with content wins the view (``formats.repeats``);
- ``{"$set": {...}}``: a metadata update; a ``$set`` of ``messages`` rebuilds the conversation
  (a resume writes one): each message in it is read as a row, so one seen before is a
  duplicate and one seen only there (the ``<session_context>`` Gemini CLI injects) is kept;
- ``{"$rewindTo": id}``: the user rewound to message ``id`` (an event; the rows after it stay
  in view: not applied yet).

Rows: a ``user`` message is a typed request, unless its text starts as Gemini CLI's own
(``<session_context>``, ``<hook_context>``: context; the preface ``resume --in gemini-cli``
writes, ``formats.resumed.NOTICE_START``: a compaction row, its summary) or it holds only ``functionResponse``
parts (Gemini CLI echoes each tool result as a user message after the ``gemini`` record that
holds it: that echo is context when its calls' results are already read, else the tool
results); a ``gemini`` message is the assistant's text, thoughts (thinking) and tool calls,
and each tool call's ``result`` a tool-result row of its own (``records``: native id
``<message id>#result/<call id>``); a ``gemini`` message with text and no tool call ends its
run. ``info``/``warning`` are events, ``error`` an event that ends its run as failed. Any
other ``type`` is opaque (counted, kept raw). The project is read from ``.project_root``
beside ``chats/`` (Gemini CLI writes the project's path there), else the first of
``directories``.

**Legacy chats** (issue 42 leftover): until 0.38.2 Gemini CLI wrote a session as one JSON
object, ``{sessionId, projectHash, startTime, lastUpdated, messages: [...], summary?,
directories?, kind?}`` (``JSON.stringify(conversation, null, 2)``), to
``chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of the id>.json`` (a subagent's to
``chats/<parent id>/<id>.json``), rewritten whole on each change; ``messages`` are the records
the JSONL appends. Such a file is read as a document (``formats.document``,
``document_records``): its members but ``messages`` are the metadata record, then each
message is read as its JSONL line is, so it gives the rows of its migration; a changed file
is read again whole and adds only the messages it did not hold (or holds changed: a
``gemini`` message given its tool calls later), as a JSONL's repeats do. A metadata record
that holds ``messages`` itself (a legacy chat written on one line) is read the same way.
Before 0.29.0 the project's folder was named by ``projectHash`` (the SHA-256 of its path)
and held no ``.project_root``: such a chat names no project.

From 0.39.0 a resume of a legacy chat migrates it: Gemini CLI writes ``<same name>.jsonl``
(the metadata, every message, then ``{"$set": {"sessionId"}}``) and appends there, leaving the
``.json`` as it was. The two are one session (``sibling_paths``): whichever is imported
second joins the session of the first, its repeated messages are duplicates, and only what
the JSONL added after the migration (the ``$set``, later messages) adds rows.

Not read yet: the ``checkpoints/`` folder.
"""

from __future__ import annotations

import os
from pathlib import Path
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
from continuity.core.text import clean
from continuity.formats.base import (
    FormatReader,
    call_arguments,
    clean_deep,
    decode_media,
    str_field,
    text_of,
)
from continuity.formats.jsonl import Line
from continuity.formats.resumed import NOTICE_START

HARNESS = "gemini-cli"
MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
#: Text Gemini CLI injects as a user message (its ``isIgnoredUserContent``).
CONTEXT_PREFIXES = ("<session_context>", "<hook_context>")
#: The key of the records ``records`` adds for a tool call's result (never in a real file:
#: Gemini CLI's own keys are JSON names without a NUL).
_RESULT_KEY = "\x00gemini-cli-result"
_FAILED_STATUSES = ("error", "cancelled")
#: How many folders above the file ``.project_root`` is looked for (chats/, chats/<parent>/).
_ROOT_LEVELS = 3


def _is_metadata(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("sessionId"), str)
        and isinstance(obj.get("projectHash"), str)
        and "id" not in obj
    )


class GeminiCliReader(FormatReader):
    """Reader of Gemini CLI chat files, JSONL and legacy documents (see the module
    docstring)."""

    harness: ClassVar[str] = HARNESS
    document_records: ClassVar[str | None] = "messages"

    def __init__(self, path: str, head: list[dict], state: dict | None = None) -> None:
        super().__init__(path, head, state)
        #: ids of the tool calls whose results were read (an echoed result is context)
        self._answered: set[str] = set()
        for obj in head:
            if _is_metadata(obj):
                self._metadata(obj)
                break
        self._facts.cwd = self._project_root() or self._facts.cwd
        # the legacy chat and the JSONL Gemini CLI migrates it to hold one session
        if path.endswith(".json"):
            self.sibling_paths = (path + "l",)
        elif path.endswith(".jsonl"):
            self.sibling_paths = (path[:-1],)
        self.restore(state)

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:
        return any(_is_metadata(o) for o in head[:3])

    @classmethod
    def file_name(cls, path: str) -> str:
        """The file stem, without ``.jsonl`` or a legacy chat's ``.json``."""
        name = os.path.basename(path)
        return name[:-5] if name.endswith(".json") else super().file_name(path)

    @classmethod
    def claims(cls, obj: Any) -> bool:
        """Its metadata line, an update ``{"$set": {...}}``, or a message record
        ``{id, timestamp, type, content}``."""
        if not isinstance(obj, dict):
            return False
        if _is_metadata(obj) or isinstance(obj.get("$set"), dict):
            return True
        return (
            isinstance(obj.get("id"), str)
            and isinstance(obj.get("type"), str)
            and "timestamp" in obj
            and ("content" in obj or "toolCalls" in obj)
            and not any(k in obj for k in ("message", "uuid", "sessionId", "data"))
        )

    def key_from_head(self, head: list[dict]) -> str | None:
        for obj in head:
            if _is_metadata(obj):
                key = obj["sessionId"]
                parent = os.path.basename(os.path.dirname(self.path))
                if obj.get("kind") == "subagent" and parent and parent != "chats":
                    return f"{parent}/{key}"
                return key
        return None

    def state(self) -> dict[str, Any]:
        out = super().state()
        out["answered"] = sorted(self._answered)
        out["agent_id"] = self._facts.agent_id
        return out

    def restore(self, state: dict[str, Any] | None) -> None:
        super().restore(state)
        if state:
            answered = state.get("answered")
            if isinstance(answered, list):
                self._answered = {a for a in answered if isinstance(a, str)}
            agent = state.get("agent_id")
            if isinstance(agent, str) and agent:
                self._facts.agent_id = agent

    def _metadata(self, meta: dict) -> None:
        summary = text_of(meta.get("summary")).strip()
        if summary:
            self._facts.title = summary
        dirs = meta.get("directories")
        if isinstance(dirs, list) and dirs and isinstance(dirs[0], str) and not self._facts.cwd:
            self._facts.cwd = clean(dirs[0])
        if meta.get("kind") == "subagent":
            self._facts.agent_id = text_of(meta.get("sessionId")) or "subagent"

    def _project_root(self) -> str | None:
        """The project folder Gemini CLI wrote to ``.project_root`` beside ``chats/``."""
        folder = Path(self.path).parent
        for _ in range(_ROOT_LEVELS):
            marker = folder / ".project_root"
            try:
                text = marker.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                folder = folder.parent
                continue
            return clean(text) or None
        return None

    # ------------------------------------------------------------------------ records

    def records(self, line: Line) -> tuple[dict, ...]:
        """Each record of ``line``; a ``gemini`` message with tool call results is followed by
        one record per result; a ``$set`` of ``messages``, or a metadata record holding
        ``messages`` (a legacy chat on one line), by each message it holds."""
        out: list[dict] = []
        for record in line.records:
            if _is_metadata(record) and isinstance(record.get("messages"), list):
                header = {k: v for k, v in record.items() if k != "messages"}
                out.append(header)
                for message in record["messages"]:
                    if isinstance(message, dict):
                        out.extend(self.records(_with(line, message)))
                continue
            out.append(record)
            calls = record.get("toolCalls") if record.get("type") == "gemini" else None
            if isinstance(calls, list):
                for call in calls:
                    if isinstance(call, dict) and call.get("result") is not None:
                        out.append({_RESULT_KEY: call, "message": record})
            update = record.get("$set")
            messages = update.get("messages") if isinstance(update, dict) else None
            if isinstance(messages, list):
                for message in messages:
                    if isinstance(message, dict):
                        out.extend(self.records(_with(line, message)))
        return tuple(out)

    def read(self, line: Line) -> Entry | None:
        data = line.data or {}
        entry = Entry(kind=EntryKind.OPAQUE, role=Role.SYSTEM, visible=False)
        try:
            if _RESULT_KEY in data:
                self._result(line, data, entry)
            elif _is_metadata(data):
                self._metadata(data)
                entry.kind, entry.type_name = EntryKind.EVENT, "session"
                entry.native_id = f"{clean(data['sessionId'])}#session"
                entry.timestamp = self.time_field(line, data.get("startTime"), "startTime")
            elif isinstance(data.get("$set"), dict):
                update = data["$set"]
                self._metadata(update)
                names = sorted(k for k in update if isinstance(k, str))
                entry.kind, entry.type_name = EntryKind.EVENT, "$set:" + ",".join(names)
            elif isinstance(data.get("$rewindTo"), str):
                entry.kind, entry.type_name = EntryKind.EVENT, "$rewindTo"
            elif isinstance(data.get("id"), str):
                self._message(line, data, entry)
            else:
                kind = str_field(data, "type")
                entry.type_name = clean(kind) if kind else "<missing type>"
        except Exception as exc:  # noqa: BLE001 - never raise on odd input (formats.md §5.1)
            self.warn(line, f"unreadable record: {type(exc).__name__}: {exc}")
            entry.kind, entry.role, entry.blocks, entry.visible = (
                EntryKind.OPAQUE,
                Role.SYSTEM,
                (),
                False,
            )
            entry.is_request, entry.run_end, entry.payloads = False, None, None
        return entry

    def _message(self, line: Line, data: dict, entry: Entry) -> None:
        kind = str_field(data, "type") or ""
        entry.type_name = clean(kind) or "<missing type>"
        entry.native_id = text_of(data["id"]) or None
        entry.timestamp = self.time_field(line, data.get("timestamp"), "timestamp")
        if kind not in MESSAGE_TYPES:
            return  # opaque: a type this version does not know
        payloads: dict[str, bytes] = {}
        blocks, calls = gemini_parts(self, line, data.get("content"), payloads)
        if kind == "user":
            self._user(line, blocks, entry)
        elif kind == "gemini":
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.ASSISTANT, True
            thoughts = [
                ThinkingBlock(_thought_text(t))
                for t in data.get("thoughts") or []
                if isinstance(t, dict) and _thought_text(t)
            ]
            seen = {b.id for b in calls}
            for call in data.get("toolCalls") or []:
                if isinstance(call, dict) and text_of(call.get("id")) not in seen:
                    calls.append(self._call(line, call))
            entry.blocks = (*thoughts, *blocks, *calls)
            if calls:
                entry.run_end = None
            elif any(isinstance(b, TextBlock) and b.text.strip() for b in blocks):
                entry.run_end = RunStatus.FINISHED
        else:  # info, warning, error: what Gemini CLI showed the user
            entry.kind, entry.role, entry.visible = EntryKind.EVENT, Role.SYSTEM, False
            entry.blocks = tuple(blocks)
            if kind == "error":
                entry.run_end = RunStatus.FAILED
        entry.payloads = payloads or None

    def _user(self, line: Line, blocks: list[Block], entry: Entry) -> None:
        results = [b for b in blocks if isinstance(b, ToolResultBlock)]
        text = "".join(b.text for b in blocks if isinstance(b, TextBlock)).strip()
        entry.role, entry.blocks = Role.USER, tuple(blocks)
        if results and not text:
            if all(r.call_id in self._answered for r in results):
                # the echo of results already read from the gemini record's toolCalls
                entry.kind, entry.visible, entry.type_name = (
                    EntryKind.CONTEXT,
                    False,
                    "user/functionResponse",
                )
                return
            self._answered.update(r.call_id for r in results)
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.TOOL, True
            return
        if text.startswith(CONTEXT_PREFIXES):
            entry.kind, entry.visible = EntryKind.CONTEXT, False
            return
        if text.startswith(NOTICE_START):  # the preface `resume --in gemini-cli` wrote
            entry.kind, entry.role, entry.visible = EntryKind.COMPACTION, Role.SYSTEM, True
            entry.compaction = CompactionInfo(summary=text)
            return
        entry.kind, entry.visible = EntryKind.MESSAGE, True
        entry.is_request = bool(text) and not text.startswith(("/", "?"))
        if not entry.is_request and not text:
            self.warn(line, "user message without text")

    def _call(self, line: Line, call: dict) -> ToolCallBlock:
        call_id = text_of(call.get("id"))
        name = text_of(call.get("name"))
        if not call_id or not name:
            self.warn(line, "toolCalls: a call without id or name")
        return ToolCallBlock(call_id, name, call_arguments(call.get("args") or {}))

    def _result(self, line: Line, data: dict, entry: Entry) -> None:
        call = data[_RESULT_KEY]
        message = data.get("message") or {}
        call_id = text_of(call.get("id"))
        payloads: dict[str, bytes] = {}
        result = call.get("result")
        texts: list[str] = []
        media: list[MediaBlock] = []
        if isinstance(result, str):
            texts.append(text_of(result))
        else:
            parts = result if isinstance(result, list) else [result]
            for part in parts:
                if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                    texts.append(_response_text(part["functionResponse"]))
                elif isinstance(part, dict) and isinstance(part.get("inlineData"), dict):
                    media.append(_media(part["inlineData"], payloads))
                elif isinstance(part, dict) and isinstance(part.get("text"), str):
                    texts.append(text_of(part["text"]))
        if not any(texts) and isinstance(call.get("resultDisplay"), str):
            texts.append(text_of(call["resultDisplay"]))
        if not any(texts) and not media:
            self.warn(line, f"toolCalls: the result of {call_id or '?'} has no text")
        self._answered.add(call_id)
        entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.TOOL, True
        entry.type_name = "gemini/toolResult"
        entry.native_id = f"{text_of(message.get('id'))}#result/{call_id}"
        entry.timestamp = self.time_field(
            line, call.get("timestamp") or message.get("timestamp"), "toolCalls.timestamp"
        )
        status = str_field(call, "status") or ""
        entry.blocks = (
            ToolResultBlock(call_id, status in _FAILED_STATUSES, "\n".join(texts), tuple(media)),
        )
        entry.payloads = payloads or None


def gemini_parts(
    reader: FormatReader, line: Line, content: Any, payloads: dict[str, bytes]
) -> tuple[list[Block], list[ToolCallBlock]]:
    """Blocks of a Gemini API ``content`` (a string, a part or a list of parts; Gemini CLI's
    and Qwen Code's messages): text, thought text as thinking, inline data as media, function
    responses as tool results; function calls returned apart (they follow the text). Odd
    parts are warned about on ``reader`` (naming the line), never raised."""
    if content is None or content == "":
        return [], []
    parts = content if isinstance(content, list) else [content]
    blocks: list[Block] = []
    calls: list[ToolCallBlock] = []
    for part in parts:
        if isinstance(part, str):
            if part:
                blocks.append(TextBlock(text_of(part)))
        elif not isinstance(part, dict):
            reader.warn(line, "content: a part that is not an object (skipped)")
        elif isinstance(part.get("text"), str):
            text = text_of(part["text"])
            blocks.append(ThinkingBlock(text) if part.get("thought") else TextBlock(text))
        elif isinstance(part.get("functionCall"), dict):
            fc = part["functionCall"]
            calls.append(
                ToolCallBlock(
                    text_of(fc.get("id")),
                    text_of(fc.get("name")),
                    call_arguments(fc.get("args") or {}),
                )
            )
        elif isinstance(part.get("functionResponse"), dict):
            fr = part["functionResponse"]
            blocks.append(ToolResultBlock(text_of(fr.get("id")), False, _response_text(fr)))
        elif isinstance(part.get("inlineData"), dict):
            blocks.append(_media(part["inlineData"], payloads))
        else:
            reader.warn(line, f"content: unknown part {sorted(map(str, part))[:3]} (kept raw)")
    return blocks, calls


def _with(line: Line, record: dict) -> Line:
    from dataclasses import replace

    return replace(line, data=record, more=())


def _thought_text(thought: dict) -> str:
    subject = text_of(thought.get("subject")).strip()
    description = text_of(thought.get("description")).strip()
    return f"{subject}: {description}" if subject and description else subject or description


def _response_text(response: dict) -> str:
    """A ``functionResponse``'s text: its ``response.output`` (or ``error``), else the
    response as JSON."""
    body = response.get("response")
    if isinstance(body, dict):
        for key in ("output", "error", "content"):
            if isinstance(body.get(key), str):
                return text_of(body[key])
        return orjson.dumps(clean_deep(body)).decode()
    return text_of(body)


def _media(inline: dict, payloads: dict[str, bytes]) -> MediaBlock:
    block, payload = decode_media(text_of(inline.get("mimeType")), inline.get("data"))
    payloads.update(payload)
    return block
