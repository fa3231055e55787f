"""Transcript text's paragraph unit and its read-time sanitized projection (seed 000): ``paragraph``
builds the ``Label: …`` paragraphs that ``continuity.transcripts.session_transcripts`` stores, and ``project`` turns
stored text (or raw JSON lines) into what a reader may see: tool calls as markers, tool output
and reasoning left out, secrets redacted. The stored row is never changed.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from continuity.redaction.funnel import redact


def paragraph(label: str, text: str) -> str:
    """``Label: first line`` and the following lines indented by two spaces (empty lines stay
    empty), the unit of transcript text."""
    first, *rest = text.split("\n")
    head = f"{label}: {first}" if first else f"{label}:"
    return "\n".join([head, *("  " + line if line else "" for line in rest)])


# ---------------------------------------------------------------------------- sanitized projection

_LABEL_LINE = re.compile(
    r"^(tool call|function call|tool result|tool error|tool output|function result|tool|function"
    r"|user|human|assistant|system|developer|summary|thinking|reasoning|thought)[ \t]*:[ \t]?(.*)$",
    re.IGNORECASE,
)
_KEEP_LABELS = {
    "user": "User",
    "human": "User",
    "assistant": "Assistant",
    "system": "System",
    "developer": "System",
    "summary": "Summary",
}
_CALL_LABELS = {"tool call", "function call"}
_CALL_TYPES = {
    "tool_use",
    "tool_call",
    "function_call",
    "custom_tool_call",
    "server_tool_use",
    "toolcall",
}
_OMIT_TYPES = {
    "tool_result",
    "tool_response",
    "function_call_output",
    "function_result",
    "custom_tool_call_output",
    "tool_output",
    "tool_return",
    "toolresult",
    "thinking",
    "redacted_thinking",
    "reasoning",
    "analysis",
    "thought",
}
_JSON_ROLES = {
    "user": "User",
    "human": "User",
    "assistant": "Assistant",
    "model": "Assistant",
    "agent": "Assistant",
    "ai": "Assistant",
    "system": "System",
    "developer": "System",
}
_TEXT_PARTS = {"text", "input_text", "output_text"}


def marker(name: str) -> str:
    """The one-line stand-in of a tool call in a projection: ``[tool call: NAME]``."""
    return f"[tool call: {' '.join(str(name).split()) or 'tool'}]"


def project(content: str, *, redact_secrets: bool = True) -> str:
    """The read-time sanitized projection of a stored transcript (seed 000): each tool call
    becomes ``[tool call: NAME]``, tool outputs and reasoning are left out, everything else is
    kept as written; then secrets are redacted (``continuity.redaction.funnel``). The stored row is never
    changed.

    Reads transcript text (labels ``User``/``Human``, ``Assistant``, ``System``/``Developer``,
    ``Summary`` kept; ``Tool call``/``Function call`` become markers; ``Tool result``, ``Tool
    error``, ``Tool``, ``Function``, ``Thinking``, ``Reasoning`` and the lines under them left out
    until the next label at the start of a line), JSON lines in the shapes of Claude Code, Codex,
    pi and chat APIs (``message``/``payload`` envelopes, ``role``, ``content`` parts,
    ``tool_calls``), and mixtures; runs of blank lines become one."""
    out: list[str] = []
    keep = True
    for line in content.split("\n"):
        label = _LABEL_LINE.match(line)
        if label:
            name, rest = label.group(1).lower(), label.group(2)
            keep = name in _KEEP_LABELS
            if keep:
                _start(out, f"{_KEEP_LABELS[name]}: {rest}".rstrip())
            elif name in _CALL_LABELS:
                _start(out, marker(rest.split()[0] if rest.split() else "tool"))
            continue
        if not keep:
            continue
        if line.startswith("{"):
            try:
                data = orjson.loads(line)
            except orjson.JSONDecodeError:
                data = None
            if isinstance(data, dict):
                for text in _json_paragraphs(data, None):
                    _start(out, text)
                continue
        out.append(line)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")
    return redact(text) if redact_secrets else text


def _start(out: list[str], text: str) -> None:
    if out and out[-1] != "":
        out.append("")
    out.append(text)


def _tool_name(data: dict[str, Any]) -> str:
    for key in ("name", "tool", "tool_name", "toolName", "recipient_name"):
        if isinstance(data.get(key), str):
            return data[key]
    function = data.get("function")
    return function.get("name", "tool") if isinstance(function, dict) else "tool"


def _json_paragraphs(data: dict[str, Any], role: str | None) -> list[str]:
    kind = str(data.get("type", "")).lower()
    if kind in _CALL_TYPES:
        return [marker(_tool_name(data))]
    if kind in _OMIT_TYPES or data.get("thought") is True:
        return []
    own_role = data.get("role") or data.get("speaker") or data.get("author")
    for key in ("message", "payload", "item"):
        if isinstance(data.get(key), dict):
            return _json_paragraphs(data[key], own_role or role)
    label = _JSON_ROLES.get(str(own_role or role or "").lower())
    content = data.get("content", data.get("text"))
    parts = content if isinstance(content, list) else [content]
    out: list[str] = []
    for part in parts:
        if isinstance(part, str) and part.strip() and label:
            out.append(paragraph(label, part))
        elif isinstance(part, dict):
            kind = str(part.get("type", "")).lower()
            if kind in _CALL_TYPES:
                out.append(marker(_tool_name(part)))
            elif kind in _TEXT_PARTS and label and str(part.get("text", "")).strip():
                out.append(paragraph(label, str(part["text"])))
    for call in data.get("tool_calls") or data.get("calls") or []:
        if isinstance(call, dict):
            out.append(marker(_tool_name(call)))
    return out
