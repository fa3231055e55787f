"""The summarizer's input, bounded before any call (B15, B17, B20) and redacted (B31).

A working view's rows become ``RowDigest``s: text redacted through ``continuity.redaction.funnel.redact``
(the one funnel) *before* any cut, so a cut never leaves half a secret; media become stubs
(``[image/png 48213 B omitted]``) and long base64 runs inside text become
``[base64 N bytes omitted]`` (an image never hides inside "text", B17); long texts and tool
outputs keep head and tail with a ``[… N bytes omitted …]`` marker (``text.clip_middle``, B20,
never cutting a character).

``pack_chunk`` takes rows oldest-first into one request whose messages (compact JSON, UTF-8)
fit the provider's input limit exactly: JSON escaping is per character, so a request's size is
the size of its empty shape plus the escaped size of each rendered row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from continuity.core.model import (
    Entry,
    MediaBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.core.tasklist import TaskItem, task_list
from continuity.core.text import clean, clip_middle, json_bytes, json_len, utf8_len
from continuity.redaction.funnel import redact
from continuity.redaction.structured import redact_value

#: Per-part caps in UTF-8 bytes (head + tail kept, B20).
TEXT_CAP = 6_000
THINKING_CAP = 600
ARGS_CAP = 800
RESULT_CAP = 3_000
#: A run of base64 characters at least this long is a payload, not text (B17).
BASE64_RUN = 400
_BASE64 = re.compile(rf"(?:data:[\w/+.-]+;base64,)?[A-Za-z0-9+/]{{{BASE64_RUN},}}={{0,2}}")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)
#: apply_patch's file headers with their kind (issue 39): ``*** Add File: p`` → created,
#: ``*** Update File: p`` → modified (``*** Move to: q`` after it: q modified, p deleted),
#: ``*** Delete File: p`` → deleted.
_PATCH_HEADER = re.compile(r"^\*\*\* (Update File|Add File|Delete File|Move to): (.+)$", re.M)
_PATCH_KIND = {
    "Add File": "created",
    "Update File": "modified",
    "Delete File": "deleted",
    "Move to": "created",
}
_PATH_KEYS = ("file_path", "path", "filePath", "notebook_path", "file", "filename")
READ_TOOLS = {"read", "read_file", "view", "cat", "open", "notebookread", "ls", "list_dir"}
WRITE_TOOLS = {
    "write",
    "edit",
    "multiedit",
    "apply_patch",
    "create",
    "write_file",
    "str_replace",
    "str_replace_based_edit_tool",
    "notebookedit",
    "replace",
}
#: Tools that write a whole file (Claude Code ``Write``, pi ``write``): ``created`` or
#: ``modified`` is decided by the reader (``continuation.facts``); the rest edit in place.
WHOLE_FILE_TOOLS = {"write", "create", "write_file"}
#: Shell wrappers around a command given as an argv list (Codex ``shell``/``local_shell``:
#: ``["bash", "-lc", "pytest -q"]``): the command is the script they run.
_SHELL_WRAPPERS = {
    "bash",
    "sh",
    "zsh",
    "dash",
    "fish",
    "/bin/bash",
    "/bin/sh",
    "/bin/zsh",
    "/usr/bin/bash",
    "/usr/bin/env",
}


def scrub(text: str) -> str:
    """Clean (B43) and redact (B31) one text: every string entering or leaving a summarizer
    passes here, and only here."""
    return redact(clean(text))


def _stub(match: re.Match[str]) -> str:
    run = match.group(0)
    sample = run[:4096]
    if (
        any(c.isdigit() for c in sample)
        and any(c.isupper() for c in sample)
        and any(c.islower() for c in sample)
    ):
        return f"[base64 {len(run)} bytes omitted]"
    return run  # a long run of one kind of character is text, not a payload


def strip_payloads(text: str) -> str:
    """``text`` with each base64 run (``BASE64_RUN``+ characters mixing upper case, lower
    case and digits) replaced by a stub."""
    if len(text) < BASE64_RUN:
        return text
    return _BASE64.sub(_stub, text)


def bounded(text: str, cap: int) -> str:
    """Redacted, payload-free ``text`` within ``cap`` UTF-8 bytes (head + marker + tail)."""
    return clip_middle(strip_payloads(scrub(text)), cap)


@dataclass(frozen=True, slots=True)
class CallDigest:
    """A tool call as the summarizer sees it: ``args`` is compact JSON (redacted, clipped),
    ``paths`` the file paths it names, ``command`` a shell command if any."""

    id: str
    name: str
    args: str
    paths: tuple[str, ...] = ()
    command: str | None = None
    #: issue 39: ``(path, kind)`` for each file a write tool names, ``kind`` ``created``,
    #: ``modified``, ``deleted`` (apply_patch headers; ``str_replace_based_edit_tool``'s
    #: ``create``) or ``written`` (a whole-file write: created or modified, the reader decides)
    changes: tuple[tuple[str, str], ...] = ()

    @property
    def kind(self) -> str:
        """``read``, ``write`` or ``other`` by the tool's name."""
        name = self.name.lower()
        if name in READ_TOOLS:
            return "read"
        if name in WRITE_TOOLS:
            return "write"
        return "other"


@dataclass(frozen=True, slots=True)
class ResultDigest:
    """A tool result: ``text`` redacted and clipped head + tail."""

    call_id: str
    is_error: bool
    text: str


@dataclass(frozen=True, slots=True)
class RowDigest:
    """One row of the working view, bounded: ``text`` (text blocks and media stubs),
    ``thinking``, the calls it makes and the results it carries; ``todos`` the task list its
    newest plan/todo call writes (B27), None when it makes none."""

    seq: int
    role: str
    is_request: bool
    text: str = ""
    thinking: str = ""
    calls: tuple[CallDigest, ...] = ()
    results: tuple[ResultDigest, ...] = ()
    todos: tuple[TaskItem, ...] | None = None


def _paths(name: str, arguments: Any) -> tuple[str, ...]:
    found: list[str] = []
    if isinstance(arguments, dict):
        for key in _PATH_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and value:
                found.append(value)
        for key in ("input", "patch"):
            if isinstance(arguments.get(key), str):
                found.extend(_PATCH_FILE.findall(arguments[key]))
    elif isinstance(arguments, str) and name.lower() == "apply_patch":
        found.extend(_PATCH_FILE.findall(arguments))
    return tuple(dict.fromkeys(scrub(p.strip())[:300] for p in found))


def _changes(name: str, arguments: Any) -> tuple[tuple[str, str], ...]:
    """``(path, kind)`` of each file a write call changes (``CallDigest.changes``), paths
    redacted and clipped like ``_paths``; () for a call that is not a write."""
    lowered = name.lower()
    if lowered not in WRITE_TOOLS:
        return ()
    found: list[tuple[str, str]] = []
    patch = arguments if isinstance(arguments, str) else None
    if isinstance(arguments, dict):
        patch = next(
            (arguments[k] for k in ("input", "patch") if isinstance(arguments.get(k), str)), None
        )
    if patch is not None:
        for head, path in _PATCH_HEADER.findall(patch):
            if head == "Move to" and found and found[-1][1] == "modified":
                found[-1] = (found[-1][0], "deleted")
            found.append((path, _PATCH_KIND[head]))
    if isinstance(arguments, dict):
        sub = arguments.get("command")
        if lowered in WHOLE_FILE_TOOLS or sub == "create":
            kind = "written"
        elif sub in ("view",):
            kind = ""
        else:
            kind = "modified"
        if kind:
            found.extend((p, kind) for p in _raw_paths(arguments))
    out: dict[str, str] = {}
    for path, kind in found:
        out[scrub(path.strip())[:300]] = kind
    return tuple((p, k) for p, k in out.items() if p)


def _raw_paths(arguments: dict) -> list[str]:
    return [v for v in (arguments.get(k) for k in _PATH_KEYS) if isinstance(v, str) and v]


def _command(name: str, arguments: Any) -> str | None:
    """The shell command a call runs (``command`` or ``cmd``: Claude Code ``Bash``, pi
    ``bash``, Codex ``exec_command``/``shell``/``local_shell``), redacted and clipped; an
    argv list is joined, a ``bash -lc SCRIPT`` wrapper gives SCRIPT. None for a read or
    write tool whose ``command`` is a subcommand (``str_replace_based_edit_tool``)."""
    if not isinstance(arguments, dict) or name.lower() in WRITE_TOOLS | READ_TOOLS:
        return None
    value = arguments.get("command") or arguments.get("cmd")
    if isinstance(value, list):
        argv = [str(v) for v in value]
        if (
            len(argv) >= 3
            and argv[0] in _SHELL_WRAPPERS
            and argv[-2].startswith("-")
            and "c" in argv[-2]
        ):
            value = argv[-1]
        else:
            value = " ".join(argv)
    if isinstance(value, str) and value.strip():
        return bounded(value.strip(), 300)
    return None


def _todos(arguments: Any) -> tuple[TaskItem, ...] | None:
    """The task list a plan/todo call writes (``continuity.core.tasklist``: Claude Code
    ``TodoWrite``, Codex ``update_plan``), titles and ids redacted and clipped; else None."""
    items = task_list(arguments)
    if items is None:
        return None
    return tuple(
        TaskItem(bounded(i.title, 240), i.status, bounded(i.id, 80) if i.id else None)
        for i in items
    )


def digest(entry: Entry) -> RowDigest:
    """The bounded, redacted digest of one view row."""
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[CallDigest] = []
    results: list[ResultDigest] = []
    todos = None
    for block in entry.blocks:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            thinking.append(block.text)
        elif isinstance(block, MediaBlock):
            texts.append(block.stub())
        elif isinstance(block, ToolCallBlock):
            raw = (
                block.arguments
                if isinstance(block.arguments, str)
                else json_bytes(redact_value(block.arguments)).decode()
            )  # issues 15, 45
            calls.append(
                CallDigest(
                    block.id,
                    scrub(block.name)[:100],
                    bounded(raw, ARGS_CAP),
                    _paths(block.name, block.arguments),
                    _command(block.name, block.arguments),
                    _changes(block.name, block.arguments),
                )
            )
            listed = _todos(block.arguments)
            todos = listed if listed is not None else todos  # the newest call wins
        elif isinstance(block, ToolResultBlock):
            text = block.text
            if block.media:
                stubs = " ".join(m.stub() for m in block.media)
                text = f"{text}\n{stubs}" if text else stubs
            results.append(ResultDigest(block.call_id, block.is_error, bounded(text, RESULT_CAP)))
    return RowDigest(
        entry.seq,
        entry.role.value,
        entry.is_request and entry.role is Role.USER,
        bounded("\n\n".join(texts), TEXT_CAP),
        bounded("\n".join(thinking), THINKING_CAP) if thinking else "",
        tuple(calls),
        tuple(results),
        todos,
    )


def render_row(row: RowDigest) -> str:
    """One row as transcript text for a model prompt."""
    head = f"[#{row.seq} {row.role}{', request' if row.is_request else ''}]"
    parts = [head]
    if row.text:
        parts.append(row.text)
    if row.thinking:
        parts.append(f"(thinking) {row.thinking}")
    for c in row.calls:
        parts.append(f"-> call {c.id} {c.name} {c.args}")
    for r in row.results:
        parts.append(f"<- result {r.call_id} ({'error' if r.is_error else 'ok'}): {r.text}")
    if row.todos is not None:  # the whole list, never clipped inside the call's arguments
        parts.append(
            "(task list) " + ("; ".join(f"[{t.status}] {t.label()}" for t in row.todos) or "empty")
        )
    return "\n".join(parts)


def escaped_len(text: str) -> int:
    """UTF-8 bytes ``text`` takes inside a JSON string (without the quotes)."""
    return json_len(text) - 2


def fit_row(text: str, room: int) -> str:
    """``text`` cut head + tail until its escaped size fits ``room`` bytes."""
    cap = room
    out = text
    while escaped_len(out) > room and cap > 0:
        cap = min(cap, utf8_len(out)) * 9 // 10
        out = clip_middle(text, cap)
    return out if escaped_len(out) <= room else ""


def pack_chunk(
    rendered: Sequence[str], start: int, base_bytes: int, limit: int
) -> tuple[list[str], int]:
    """Rows ``rendered[start:]`` taken oldest-first while the request stays within ``limit``
    bytes; ``base_bytes`` is the request's size with an empty transcript. Returns the rows
    (the first one cut to fit when it alone is too large; never none while rows remain) and
    the index after the last row taken."""
    room = limit - base_bytes
    taken: list[str] = []
    used = 0
    i = start
    sep = escaped_len("\n")
    while i < len(rendered):
        size = escaped_len(rendered[i]) + (sep if taken else 0)
        if used + size > room:
            if not taken:
                cut = fit_row(rendered[i], room)
                if cut:
                    taken.append(cut)
                    i += 1
            break
        taken.append(rendered[i])
        used += size
        i += 1
    return taken, i


def quoted_notes(notes: Iterable[str], total_cap: int = 4_000, each_cap: int = 1_000) -> list[str]:
    """Notes as quoted evidence: redacted, each within ``each_cap`` bytes, newest kept first
    within ``total_cap``, returned oldest first."""
    out: list[str] = []
    used = 0
    for note in reversed(list(notes)):
        text = bounded(note, each_cap)
        if used + utf8_len(text) > total_cap:
            break
        out.append(text)
        used += utf8_len(text)
    return list(reversed(out))
