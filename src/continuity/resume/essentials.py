"""The continuation's essentials for a fresh Claude Code context (issue 13, item 4): what
SessionStart with ``source`` ``compact`` or ``clear`` injects besides the recovery digest.

``essentials(store, session_key, max_chars)`` returns an ``Essentials`` whose ``text`` is at
most ``max_chars`` characters (Claude Code keeps ``additionalContext`` under 10,000
characters; the caller gives what the recovery digest left of it):

- the previous request verbatim, with its actor and row, between ``<previous-request>`` tags
  (cut in the middle, characters, with a marker saying how many were left out, only when it
  alone is over the room);
- the pointer of the checkpoint that takes effect: its entry id and the rows it covers (the
  summary itself is not repeated: Claude Code's own compaction summary is in the context);
- the named gaps (``seq a–b omitted; look them up in continuity's record ...``);
- one line saying where the rest is (summary, recent exchanges with every call paired): the
  MCP ``continuation`` tool by the name the harness sees it, only when that harness has it,
  else this install's ``continue`` command, else nothing (issue 39: the text names no tool
  the harness lacks; ``reach``, the brief's ``Reach``: ``mcp`` and ``cli``).

It is quoted as evidence (the heading, then ``checkpoints.recovery.FRAMING``, the same line
as every injected text, issue 39), never as instructions. ``mark`` names
what was injected (session, request row, checkpoint), so the daemon never injects the same
essentials twice. None when the continuation is refused, or has neither a request nor a
checkpoint, or ``max_chars`` is too small to say anything useful.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from continuity.checkpoints.recovery import FRAMING
from continuity.continuation.view import build_continuation

HEADING = "## Continuation of the previous work\n"
#: Below this many characters there is no room for the request and the pointer.
MIN_CHARS = 400


@dataclass(frozen=True)
class Essentials:
    """``text`` to inject (at most the ``max_chars`` asked) and its ``mark``."""

    text: str
    mark: str
    session_key: str


def _cut_chars(text: str, room: int) -> str:
    """``text`` cut in the middle to at most ``room`` characters with a marker."""
    if len(text) <= room:
        return text
    keep = max(0, room - 60)
    head, tail = text[: keep // 2], text[len(text) - (keep - keep // 2) :] if keep else ""
    return f"{head}\n[… {len(text) - len(head) - len(tail)} characters omitted …]\n{tail}"


def essentials(
    store: Any, session_key: str, max_chars: int, *, reach: Any = None
) -> Essentials | None:
    """The essentials of SESSION's continuation within ``max_chars`` characters (module
    docstring). ``reach``: what the reader has to get the rest (``mcp``: ``{logical tool:
    name}``, ``cli``: a command prefix or None; the brief's ``Reach``); None names nothing.
    Raises ``SessionNotFound``."""
    if max_chars < MIN_CHARS:
        return None
    view = build_continuation(store, session_key)
    if view.refusal or (view.request is None and view.summary is None):
        return None
    intro = f"{HEADING}{FRAMING}\nWhere session {session_key} stood:\n"
    pointer = "Checkpoint: " + (
        f"{view.summary['entry_id']}, a summary of rows up to {view.summary['covers_through_seq']}."
        if view.summary
        else "none yet."
    )
    gaps = f"\nLeft out: {view.notice}" if view.notice else ""
    rest = _rest(session_key, reach)
    tail = f"{pointer}{gaps}{rest}"
    request = ""
    if view.request is not None:
        open_tag = (
            f"Previous request (verbatim, {view.request['actor']}, row "
            f"{view.request['seq']}):\n<previous-request>\n"
        )
        close_tag = "\n</previous-request>\n"
        room = max_chars - len(intro) - len(tail) - len(open_tag) - len(close_tag)
        if room < 80:
            return None
        request = open_tag + _cut_chars(view.request["text"], room) + close_tag
    text = intro + request + tail
    if len(text) > max_chars:
        return None
    digest = hashlib.sha256(session_key.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    seq = view.request["seq"] if view.request else -1
    entry = view.summary["entry_id"] if view.summary else ""
    mark = "essentials-" + hashlib.sha256(f"{digest}|{seq}|{entry}".encode()).hexdigest()[:32]
    return Essentials(text, mark, session_key)


def _rest(session_key: str, reach: Any) -> str:
    """Where the rest of the continuation is, naming only what ``reach`` holds."""
    mcp = getattr(reach, "mcp", None) or {}
    cli = getattr(reach, "cli", None)
    what = "The rest (the checkpoint's summary and the recent exchanges, every tool call paired)"
    if mcp.get("continuation"):
        loader = getattr(reach, "loader", None)
        load = f", loaded with `{loader}`" if loader else ""
        return (
            f"\n{what} is one MCP `{mcp['continuation']}` call away "
            f'(session "{session_key}"{load}).'
        )
    if cli:
        return f"\n{what}: `{cli} continue {session_key}`."
    return ""


__all__ = ["Essentials", "essentials", "HEADING"]
