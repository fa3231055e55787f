"""The bodies of the daemon's endpoints (pydantic), harness-neutral: what ``adapters.to_body``
produces from a hook's stdin, and what any client may POST to ``/api/hooks/<event>``.

Unknown fields are refused (a typo names itself in the 422 answer). Lengths are characters.
Text is never refused for its content: lone surrogates become U+FFFD and an oversized
``prompt``, ``last_assistant_message``, ``context`` or ``summary`` is clipped head + tail with
the ``[… N bytes omitted …]`` marker (``CLIPPED_FIELDS``); only a structurally invalid body is.
Values harnesses add between releases (``source``, ``trigger``, ``reason``) are free strings of
at most 40 characters, not closed enums, so a new value never drops an event. A session key
is never refused for its shape either: ``session_key`` and ``parent_session_key`` go through
``continuity.core.keys.session_key``, the rule ``continuity import`` applies to the same
harness's files (issue 22), so live capture and import name a session alike.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from continuity.core.keys import MAX_KEY_CHARS, session_key
from continuity.core.text import clean, clip_middle

Harness = Literal[
    "claude-code", "codex", "pi", "opencode", "gemini-cli", "qwen-code", "copilot-cli"
]
#: Fields holding a session key: made a stored key by ``continuity.core.keys.session_key``
#: (the rule import uses too, issue 22) before anything else, never refused for their shape.
KEY_FIELDS = ("session_key", "parent_session_key")
MAX_PROMPT_CHARS = 1_000_000
MAX_MESSAGE_CHARS = 4_000_000
MAX_CONTEXT_CHARS = 100_000


#: Free-text fields clipped (head + tail, ``continuity.core.text.clip_middle``, UTF-8 bytes, so
#: never more characters either) rather than refused: an oversized prompt is still a prompt
#: the user typed, and a refused hook event is lost.
CLIPPED_FIELDS = {
    "prompt": MAX_PROMPT_CHARS,
    "last_assistant_message": MAX_MESSAGE_CHARS,
    "context": MAX_CONTEXT_CHARS,
    "summary": MAX_MESSAGE_CHARS,
}


def _tidy(data: Any) -> Any:
    """Every string value of a body with lone surrogates replaced by U+FFFD (B43), and the
    ``CLIPPED_FIELDS`` clipped to their limits. Anything else is left to validation."""
    if not isinstance(data, dict):
        return data
    out = {}
    for name, value in data.items():
        if isinstance(value, str) and name in KEY_FIELDS and value:
            value = session_key(value)
        elif isinstance(value, str):
            value = clean(value)
            if name in CLIPPED_FIELDS:
                value = clip_middle(value, CLIPPED_FIELDS[name])
        out[name] = value
    return out


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", str_max_length=MAX_MESSAGE_CHARS)

    @model_validator(mode="before")
    @classmethod
    def _tidy_text(cls, data: Any) -> Any:
        return _tidy(data)


class HookBody(_Body):
    """Fields every hook event carries: the ``harness``, the ``session_key`` (the harness's
    session id), the ``project`` (cwd), the ``transcript_path`` the harness writes (absolute),
    the ``agent_id`` (``default`` for the main agent), and the event's ``event_id`` and ``at``
    (set by the hook command; used to replay a spooled event exactly once, at its own time)."""

    harness: Harness
    session_key: str = Field(min_length=1, max_length=MAX_KEY_CHARS)
    project: str | None = Field(default=None, max_length=4096)
    transcript_path: str | None = Field(default=None, max_length=4096)
    agent_id: str = Field(default="default", min_length=1, max_length=200)
    event_id: str | None = Field(default=None, min_length=1, max_length=64)
    at: datetime | None = None

    @field_validator("transcript_path")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError("must be an absolute path")
        return value

    @field_validator("at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        if value < EARLIEST_EVENT or value > datetime.now(UTC) + timedelta(days=1):
            raise ValueError("must be between 2000-01-01T00:00:00Z and one day from now")
        return value


#: Hook times before this are refused: they would date checkpoints in year 1 and prune them.
EARLIEST_EVENT = datetime(2000, 1, 1, tzinfo=UTC)


class SessionStartBody(HookBody):
    """``session-start``: ``source`` is ``startup``, ``resume``, ``clear``, ``compact``,
    ``fork`` … (Claude Code, Codex; pi's ``reason``)."""

    source: str = Field(default="startup", min_length=1, max_length=40)
    model: str | None = Field(default=None, max_length=200)
    parent_session_key: str | None = Field(default=None, max_length=200)


class UserPromptBody(HookBody):
    """``user-prompt-submit``: the ``prompt`` as typed (may be empty: an image-only turn)."""

    prompt: str = Field(default="", max_length=MAX_PROMPT_CHARS)
    turn_id: str | None = Field(default=None, max_length=200)


class PreCompactionBody(HookBody):
    """``pre-compaction``: ``trigger`` (``manual``, ``auto``; pi ``threshold``, ``overflow``)
    and the user's compaction instructions as ``context`` (seed 000: "session context")."""

    trigger: str | None = Field(default=None, max_length=40)
    context: str | None = Field(default=None, max_length=MAX_CONTEXT_CHARS)


class PostCompactionBody(HookBody):
    """``post-compaction``: the harness compacted; ``summary`` is its summary when it sends
    one (Claude Code ``compact_summary``)."""

    trigger: str | None = Field(default=None, max_length=40)
    summary: str | None = None


class StopBody(HookBody):
    """``stop``: a turn settled (Claude Code and Codex ``Stop``, pi ``agent_settled``).
    ``settled`` false: it ended without settling successfully (the policy then does nothing).
    ``checkpoint_in_harness`` true: the harness writes the continuation checkpoint into its
    own session (our pi extension, issue 14), so the daemon's policy writes none of its own
    (one checkpoint, never two)."""

    last_assistant_message: str | None = None
    stop_hook_active: bool = False
    settled: bool = True
    turn_id: str | None = Field(default=None, max_length=200)
    checkpoint_in_harness: bool = False


class SessionEndBody(HookBody):
    """``session-end``: ``reason`` as the harness gives it (``clear``, ``logout``,
    ``prompt_input_exit``, ``other``; ours: ``idle``, ``superseded``)."""

    reason: str | None = Field(default=None, max_length=40)


class PreToolUseBody(HookBody):
    """``pre-tool-use`` (issue 40: recall before an edit or a shell command): the tool about to
    run, ``tool_name`` as the harness names it (``Edit``, ``Bash``, ``apply_patch``, pi's
    ``edit``/``bash``), and its arguments ``tool_input``. A question, never recorded: it is
    not journaled, spooled nor replayed."""

    tool_name: str = Field(min_length=1, max_length=200)
    tool_input: dict[str, Any] = Field(default_factory=dict)
    tool_use_id: str | None = Field(default=None, max_length=200)


BODIES: dict[str, type[HookBody]] = {
    "session-start": SessionStartBody,
    "user-prompt-submit": UserPromptBody,
    "pre-compaction": PreCompactionBody,
    "post-compaction": PostCompactionBody,
    "stop": StopBody,
    "session-end": SessionEndBody,
    "pre-tool-use": PreToolUseBody,
}


class ContinuationSummaryBody(HookBody):
    """``POST /api/continuation/summary`` (issue 14): summarize the working view a harness is
    about to compact, for its own continuation checkpoint. ``entries``: the working view as
    the harness's session entries in its order (pi: the newest compaction, its kept entries,
    every entry after it; media payloads replaced by stubs); ``request_entry_id``: the native
    id of the request that opened the run (the run id is derived from it);
    ``deadline_seconds``: how long the harness waits at most (the daemon's ``[daemon]
    stop_seconds`` bounds it further)."""

    entries: list[dict[str, Any]] = Field(max_length=200_000)
    request_entry_id: str | None = Field(default=None, max_length=200)
    deadline_seconds: float | None = Field(default=None, gt=0, le=3600)


class ContinuationRefusedBody(HookBody):
    """``POST /api/continuation/refused``: a continuation checkpoint the harness refused
    without the daemon's answer (the daemon did not answer in time, or not at all):
    ``reason`` of seed 002's closed set (``core.model.ReceiptReason``), ``detail`` a few
    words on why (``no answer from the daemon within 40 s``; issue 45 item 7),
    ``request_entry_id`` as above."""

    reason: Literal["cancelled", "truncated", "empty", "over_bound", "provider_failure"]
    detail: str | None = Field(default=None, max_length=200)
    request_entry_id: str | None = Field(default=None, max_length=200)


class CheckpointBody(_Body):
    """``POST /api/checkpoints``: an ``agent`` (an agent's tool) or ``explicit`` (a person)
    checkpoint with the caller's ``reason``, of ``session_key``, or else of the most recently
    active live session of ``project``."""

    reason: str = Field(min_length=1, max_length=10_000)
    trigger: Literal["agent", "explicit"] = "explicit"
    session_key: str | None = Field(default=None, min_length=1, max_length=MAX_KEY_CHARS)
    project: str | None = Field(default=None, min_length=1, max_length=4096)
