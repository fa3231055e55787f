"""Harness adapters: a harness's hook stdin JSON → our endpoint body, and our endpoint's answer
→ the stdout that harness expects (spec/formats.md §4; pi: §3.7 and our extension).

**Input.** Claude Code and Codex send one JSON object with ``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name`` and per-event fields (``source``, ``prompt``, ``trigger``,
``custom_instructions``, ``compact_summary``, ``last_assistant_message``, ``stop_hook_active``,
``reason``, ``turn_id``, ``model``; PreToolUse ``tool_name``, ``tool_input``,
``tool_use_id``). Gemini CLI sends the same base fields (its AfterAgent's answer as
``prompt_response``, read as ``last_assistant_message``); Qwen Code 0.24.4 exactly Claude Code's
(its UserPromptSubmit also runs before each model request after tool results, with an empty
``prompt``: ``STEP_PROMPTS``). Copilot CLI sends camelCase ones (``sessionId``, ``cwd``,
``prompt``, ``source`` ``new``/``resume``, ``reason``; only its ``agentStop`` names the file,
``transcriptPath``), read by the same names. Our pi extension
(``pi_extension/continuity.ts``) sends the same field names, built from pi's extension events.
The session key is the first present of
``session_id``, ``sessionId``, ``session_key``, ``sessionKey`` (the origin's rule); the project is
``cwd``. A ``transcript_path`` that is empty or not absolute is dropped (B60: Claude Code has sent
an empty one; the daemon then uses the path it saw at session start). Unknown fields are ignored:
harnesses add fields between releases (formats.md §5).

**Output.** The ``context`` of a session-start, user-prompt-submit or pre-tool-use answer
(``HOOK_EVENT_NAMES``; the last two: recall at the point of action, issue 40) becomes, for
Claude Code, ``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext":
…}}`` kept under ``CONTEXT_LIMIT`` characters (above 10,000 Claude Code moves it to a file); for
Codex the same inside ``{"continue": true, "suppressOutput": true, …}``; for Gemini CLI the
same object with its event names (``GEMINI_EVENT_NAMES``: ``BeforeAgent`` for a prompt; it
escapes ``<`` and ``>`` in the text and prepends it to the prompt in a headless run); for
Copilot CLI ``{"additionalContext": …}`` (1.0.102: a session start's becomes a user message
before the prompt, a prompt's a ``<system_reminder>`` after it); for pi
``{"additionalContext": …}`` beside the endpoint's answer. No context: nothing printed.
Every other Claude Code and Codex event prints nothing: a hook of ours never answers
``"decision": "block"`` (B62: a blocking PreCompact disabled ``/compact``); pi gets the
endpoint's JSON answer.
"""

from __future__ import annotations

import json
import os
from typing import Any

from continuity.daemon.hooks.spool import HARNESSES

#: Claude Code moves injected context of more than 10,000 characters to a file (formats.md
#: §4.1); ours stays strictly under it.
CONTEXT_LIMIT = 10_000
CLIPPED_MARKER = "\n[… recovery context clipped]"
#: Our event → the ``hookEventName`` Claude Code and Codex expect in ``hookSpecificOutput``.
HOOK_EVENT_NAMES = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "pre-tool-use": "PreToolUse",
}
#: Gemini CLI's names for the same events (its hooks ``BeforeAgent`` for a submitted prompt).
GEMINI_EVENT_NAMES = {"session-start": "SessionStart", "user-prompt-submit": "BeforeAgent"}
#: The events whose context Copilot CLI gives the model (its sessionStart, userPromptSubmitted).
COPILOT_CONTEXT_EVENTS = ("session-start", "user-prompt-submit")
_KEY_FIELDS = ("session_id", "sessionId", "session_key", "sessionKey")
#: Harnesses whose UserPromptSubmit runs before every model request of a turn, the ones after
#: tool results with an empty ``prompt`` (Qwen Code 0.24.4, its client.ts: every message but a
#: retry, cron, notification...): such a step is no prompt of the user's, and context given
#: to it would stand after the tool results in the model's history (``LiveCapture.user_prompt``
#: counts nothing and answers nothing for it).
STEP_PROMPTS = ("qwen-code",)


class AdapterError(ValueError):
    """The hook input cannot become a body: names the field and the problem."""


def _text(payload: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = payload.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _path(payload: dict[str, Any], *names: str) -> str | None:
    value = _text(payload, *names)
    return value if value and os.path.isabs(value) else None


def parse_payload(raw: bytes) -> dict[str, Any]:
    """The hook stdin as a JSON object. Raises ``AdapterError`` when it is not one: not UTF-8,
    not JSON, or nested too deep for the parser (a ``RecursionError`` must never become a 500
    that the hook then spools and the replay retries forever)."""
    try:
        data = json.loads(raw.decode("utf-8") if raw.strip() else "{}")
    except RecursionError:
        raise AdapterError("stdin: JSON nested too deep") from None
    except (ValueError, UnicodeError) as exc:
        raise AdapterError(f"stdin: not JSON ({exc})") from None
    if not isinstance(data, dict):
        from continuity.core.text import json_type_name

        raise AdapterError(f"stdin: a JSON object is expected (got {json_type_name(data)})")
    return data


def to_body(harness: str, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Our endpoint body for ``event`` from a ``harness``'s hook input (module docstring).
    Raises ``AdapterError`` for an unknown harness or event, or no session id."""
    if harness not in HARNESSES:
        raise AdapterError(f"harness: must be one of {', '.join(HARNESSES)} (got {harness!r})")
    if event not in _EVENT_FIELDS:
        raise AdapterError(f"event: must be one of {', '.join(_EVENT_FIELDS)} (got {event!r})")
    key = _text(payload, *_KEY_FIELDS)
    if key is None:
        from continuity.core.text import json_type_name

        wrong = next((f for f in _KEY_FIELDS if payload.get(f) is not None), None)
        if wrong is not None and not isinstance(payload[wrong], str):
            raise AdapterError(f"{wrong}: expected a string, got {json_type_name(payload[wrong])}")
        raise AdapterError("session_id: missing from the hook input")
    body: dict[str, Any] = {
        "harness": harness,
        "session_key": key.strip(),
        "project": _text(payload, "cwd", "project"),
        "transcript_path": _path(payload, "transcript_path", "transcriptPath", "session_file"),
    }
    body.update(_EVENT_FIELDS[event](payload))
    return {k: v for k, v in body.items() if v is not None}


def _start(p: dict[str, Any]) -> dict[str, Any]:
    return {
        "source": _text(p, "source", "reason"),
        "model": _text(p, "model"),
        "parent_session_key": _text(p, "parent_session_id", "previous_session_id"),
    }


def _prompt(p: dict[str, Any]) -> dict[str, Any]:
    prompt = p.get("prompt", p.get("user_prompt"))
    return {"prompt": prompt if isinstance(prompt, str) else "", "turn_id": _text(p, "turn_id")}


def _pre(p: dict[str, Any]) -> dict[str, Any]:
    return {
        "trigger": _text(p, "trigger"),
        "context": _text(p, "custom_instructions", "customInstructions"),
    }


def _post(p: dict[str, Any]) -> dict[str, Any]:
    return {"trigger": _text(p, "trigger"), "summary": _text(p, "compact_summary", "summary")}


def _stop(p: dict[str, Any]) -> dict[str, Any]:
    return {
        "last_assistant_message": _text(p, "last_assistant_message", "prompt_response"),
        "stop_hook_active": bool(p.get("stop_hook_active", False)),
        "settled": p.get("settled", True) is not False,
        "turn_id": _text(p, "turn_id"),
        "checkpoint_in_harness": p.get("checkpoint_in_harness") is True or None,
    }


def _end(p: dict[str, Any]) -> dict[str, Any]:
    return {"reason": _text(p, "reason")}


def _tool(p: dict[str, Any]) -> dict[str, Any]:
    given = p.get("tool_input", p.get("input"))
    return {
        "tool_name": _text(p, "tool_name", "toolName") or "",
        "tool_input": given if isinstance(given, dict) else {},
        "tool_use_id": _text(p, "tool_use_id", "toolCallId"),
    }


_EVENT_FIELDS = {
    "session-start": _start,
    "user-prompt-submit": _prompt,
    "pre-compaction": _pre,
    "post-compaction": _post,
    "stop": _stop,
    "session-end": _end,
    "pre-tool-use": _tool,
}


def clip_context(text: str, limit: int = CONTEXT_LIMIT) -> str:
    """``text`` if it is shorter than ``limit`` characters, else its beginning (cut at a line
    end when one is near, never inside a character) plus ``CLIPPED_MARKER``, shorter than
    ``limit`` in all."""
    if len(text) < limit:
        return text
    room = limit - 1 - len(CLIPPED_MARKER)
    kept = text[:room]
    line_end = kept.rfind("\n")
    if line_end >= room - 200:
        kept = kept[:line_end]
    return kept.rstrip() + CLIPPED_MARKER


def render(harness: str, event: str, answer: dict[str, Any]) -> bytes:
    """The stdout ``harness`` expects for our ``answer`` to ``event`` (module docstring)."""
    context = answer.get("context") or ""
    if harness in ("pi", "opencode"):  # our extension / plugin reads the JSON
        out = {k: v for k, v in answer.items() if k != "context"}
        if event in HOOK_EVENT_NAMES:
            out["additionalContext"] = clip_context(context) if context else ""
        return _json(out)
    if harness == "copilot-cli":  # its hooks read a flat additionalContext
        if event not in COPILOT_CONTEXT_EVENTS or not context:
            return b""
        return _json({"additionalContext": clip_context(context)})
    names = GEMINI_EVENT_NAMES if harness == "gemini-cli" else HOOK_EVENT_NAMES
    if event not in names or not context:
        return b""
    specific = {
        "hookEventName": names[event],
        "additionalContext": clip_context(context),
    }
    if harness == "codex":
        return _json({"continue": True, "suppressOutput": True, "hookSpecificOutput": specific})
    return _json({"hookSpecificOutput": specific})


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")
