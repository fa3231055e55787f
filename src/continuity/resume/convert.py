"""The shared cross-format step of ``continuity resume`` (issue 13): a continuation view, as
``continue --json`` gives it, turned into a harness-neutral list of turns that every target
writer can render without breaking its provider's rules.

``to_turns(view, source, target)`` returns a ``Resumed``: the text that stands first (the copy
notice naming the source session, then the view's quoted summary, notes and named gaps), and the
conversation in reading order (messages before the request, the request verbatim, the rest) as
``Turn`` objects:

- ``user``: text parts only (the request keeps its original actor in ``Turn.actor``);
- ``assistant``: text parts and ``Call`` objects (consecutive assistant rows are one turn, the
  way Claude Code splits one reply over several lines);
- ``results``: the ``Result`` objects answering the calls of the assistant turn just before it,
  one per call, in call order.

Rules (the provider APIs answer anything else with HTTP 400; README "The continue --json
contract"):

- every call has exactly one result, right after its turn: a result found later in the view
  is moved up to it, a second result for a call and a result whose call is not in the view
  are dropped, and a call left without one gets the synthetic "effects unknown" error result
  (``view.UNKNOWN_EFFECTS``);
- ids are made valid for the target: ``[A-Za-z0-9_-]``, at most 64 characters (Anthropic
  ``tool_use.id``; OpenAI ``call_id``), unique in the file, the same id on a call and its result;
- tool names are made valid the same way (``^[a-zA-Z0-9_-]{1,64}$``); a shell call (Codex
  ``exec_command``/``shell``/``local_shell``, Claude Code ``Bash``, pi ``bash``) becomes the
  target's own shell tool with its argument shape, so the next run reads it as its own;
- media stay stubs (``[image/png 90480 B omitted]``): payloads never travel;
- thinking stays text of the same assistant turn, marked as earlier reasoning (a target
  provider refuses a thinking block it did not sign).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from continuity.continuation.view import COPY_LABEL, UNKNOWN_EFFECTS, ContinuationView
from continuity.formats.resumed import NOTE_PREFIX, NOTICE_START

#: The harnesses ``resume`` writes for (the importer's harness names).
TARGETS = ("claude-code", "codex", "pi", "opencode", "gemini-cli", "qwen-code", "copilot-cli")


def not_a_target(target: str) -> str:
    """Why ``resume --in target`` is refused (``target`` not in ``TARGETS``): a harness the
    registry knows (``formats.registry``) but whose ``resume`` flag is off is named as such,
    with the ones continuity can resume into; any other name is an unknown harness.
    Fresh-user review of issue 42: ``--in kilo`` said "unknown harness 'kilo'" while
    ``continuity harnesses`` lists Kilo."""
    from continuity.formats.registry import names

    can = ", ".join(TARGETS)
    if target in names():
        imports = " (it imports its sessions)" if target in names("import") else ""
        return (
            f"{target!r} is a harness continuity knows{imports} but cannot resume into yet "
            f"(`continuity harnesses`: resume no); it can resume into {can}"
        )
    return f"unknown harness {target!r}: choose one of {can}"


#: The provider id rule (Anthropic ``tool_use.id``, OpenAI ``call_id``/tool names).
_ID_BAD = re.compile(r"[^A-Za-z0-9_-]")
MAX_ID = 64

#: Shell tools by harness and how each spells its command argument.
SHELL_TOOL = {
    "claude-code": ("Bash", "command"),
    "codex": ("exec_command", "cmd"),
    "pi": ("bash", "command"),
    "opencode": ("bash", "command"),
    "gemini-cli": ("run_shell_command", "command"),
    "qwen-code": ("run_shell_command", "command"),
    "copilot-cli": ("bash", "command"),
}
_SHELL_NAMES = {
    "Bash",
    "bash",
    "exec_command",
    "shell",
    "local_shell",
    "shell_command",
    "run_shell_command",
}


@dataclass
class Call:
    """A tool call in the target's spelling: ``id`` valid for it, ``name``, ``arguments`` (a
    JSON object), ``original_name`` as recorded in the source."""

    id: str
    name: str
    arguments: dict[str, Any]
    original_name: str


@dataclass
class Result:
    """The one result of call ``call_id``: its text, whether it is an error, whether
    continuity made it (``synthetic``: the source never recorded one)."""

    call_id: str
    name: str
    text: str
    is_error: bool = False
    synthetic: bool = False


@dataclass
class Turn:
    """One turn: ``kind`` is ``user``, ``assistant`` or ``results``; ``parts`` holds text
    strings and ``Call`` objects (assistant) or ``Result`` objects (results); ``actor`` the
    original actor of a user turn; ``request`` marks the previous request, verbatim."""

    kind: str
    parts: list[Any] = field(default_factory=list)
    actor: str = "user"
    request: bool = False

    def texts(self) -> list[str]:
        return [p for p in self.parts if isinstance(p, str)]

    def calls(self) -> list[Call]:
        return [p for p in self.parts if isinstance(p, Call)]

    def content(self, on_text: Any, on_call: Any) -> list[dict[str, Any]]:
        """The parts of an assistant turn as a writer's blocks, in order: ``on_text(str)``
        for each non-empty text, ``on_call(Call)`` for each call."""
        return [
            on_call(p) if isinstance(p, Call) else on_text(p)
            for p in self.parts
            if isinstance(p, Call) or p
        ]


@dataclass
class Source:
    """The session being resumed: its ``key``, ``harness``, ``project`` folder and the file it
    was read from (``path``, None for a live session without one). ``chain``: when it is
    itself a copy, the sessions it was copied from, nearest first and the original last
    (``formats.resumed.copy_chain``: ``{"session", "harness"}`` each); empty otherwise."""

    key: str
    harness: str
    project: str
    path: str | None = None
    chain: list[dict[str, str]] = field(default_factory=list)

    @property
    def original(self) -> dict[str, str]:
        """``{"session", "harness"}`` of the session the chain started from (itself when it
        is no copy)."""
        return self.chain[-1] if self.chain else {"session": self.key, "harness": self.harness}


@dataclass
class Resumed:
    """What a writer renders: ``preamble`` (the copy notice, the quoted summary, notes, named
    gaps: the text the next run reads first), ``summary`` (the view's quoted summary text or
    None), ``turns`` in reading order, and ``source``."""

    source: Source
    preamble: str
    summary: str | None
    turns: list[Turn]


#: The labels ``continuation.view.summary_text`` puts on a summary (a copy's preface has its
#: own, issue 45 item 3), then what it wraps.
_WRAPPED = re.compile(
    r"\A(?:Summary of earlier work in this session \(rows \d+–-?\d+\)|"
    + re.escape(COPY_LABEL)
    + r"), quoted for reference\. It is not an "
    r"instruction\.\n<summary>\n(.*)\n</summary>\Z",
    re.S,
)
_LABEL = "Summary of earlier work in this session ("


def copy_notice(source: Source) -> str:
    """The first words of every resumed file: it is a copy and which session it continues.
    Issue 45 item 3: a copy of a copy says so once, naming the original and the chain of
    copies (never one notice inside another)."""
    where = f" ({source.path})" if source.path else ""
    head = (
        f"{NOTICE_START} it continues the {source.harness} session {source.key}{where} in "
        f"{source.project}"
    )
    if not source.chain:
        return (
            f"{head}. The source session is unchanged. What follows is the continuation "
            "of that session: the summary of earlier work, the previous request verbatim "
            "and the most recent exchanges."
        )
    original = source.original
    hops = " → ".join([*(c["session"] for c in reversed(source.chain)), source.key])
    return (
        f"{head}, itself a copy: the original is the {original['harness']} session "
        f"{original['session']} (copied {hops}). The source sessions are unchanged. What "
        "follows is the continuation: the summary of earlier work, the previous request "
        "verbatim and the most recent exchanges."
    )


def summary_section(summary: str, source: Source) -> str:
    """The view's summary as a resumed file states it (issue 45 item 3). The summary of a
    session that is itself a resumed copy (its checkpoint is the copy's own preface, labelled
    rows 0–0 of that copy) is unwrapped: its copy notice is dropped (the new one names the
    original and the chain) and what it quoted stands, labelled as earlier work of the
    original session. Any other summary keeps its rows, labelled as rows of the session they
    are rows of (``source``), not of "this session" (the copy)."""
    wrapped = _WRAPPED.match(summary)
    if wrapped is not None and wrapped.group(1).startswith(NOTICE_START):
        inner = wrapped.group(1).split("\n\n", 1)
        rest = inner[1] if len(inner) == 2 else ""
        original = source.original["session"]
        if rest.startswith(_LABEL):  # written before issue 45: relabel it now
            rest = (
                f"Summary of earlier work in the original session {original} ("
                + rest[len(_LABEL) :]
            )
        return rest
    if summary.startswith(_LABEL):
        whose = (
            f"the original session {source.key}" if not source.chain else f"session {source.key}"
        )
        return f"Summary of earlier work in {whose} (" + summary[len(_LABEL) :]
    return summary


def media_stub(media_type: str, size: int) -> str:
    """``[image/png 90480 B omitted]``: the text a media block becomes (payloads never travel,
    README: "media stay stubs")."""
    return f"[{media_type} {size} B omitted]"


def to_turns(view: ContinuationView, source: Source, target: str) -> Resumed:
    """The view as turns for ``target`` (module docstring). ``view`` must not be a refusal
    (``ValueError``); ``target`` one of ``TARGETS`` (``ValueError``)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}")
    if view.refusal:
        raise ValueError("a refused continuation has no turns")
    before, after = view.before_request()
    rows: list[tuple[str, list[dict[str, Any]], dict[str, Any] | None]] = []
    for m in before:
        rows.append((m["role"], m["content"], None))
    if view.request is not None:
        content = [{"type": "text", "text": view.request["text"]}]
        content += [
            {"type": "media", "media_type": s["media_type"], "bytes": s["bytes"]}
            for s in view.request.get("media") or []
        ]
        rows.append(("user", content, view.request))
    for m in after:
        rows.append((m["role"], m["content"], None))
    ids = _Ids(target)
    turns = _pair(_raw_turns(rows, ids, target), target)
    parts = [copy_notice(source)]
    summary = summary_section(view.summary["text"], source) if view.summary else None
    if summary:
        parts.append(summary)
    # a copy's own copy note is said by the notice above (issue 45 item 3: once)
    notes = [n for n in view.notes if not n.startswith(NOTE_PREFIX)]
    if notes:
        parts.append(
            "Notes kept with the session, quoted for reference:\n"
            + "\n".join(f"- {n}" for n in notes)
        )
    if view.notice:
        parts.append(f"Rows left out: {view.notice}")
    return Resumed(source=source, preamble="\n\n".join(parts), summary=summary, turns=turns)


# ------------------------------------------------------------------------ building turns


class _Ids:
    """Source ids → ids valid for the target, one for one and unique (module docstring)."""

    def __init__(self, target: str) -> None:
        self.prefix = {
            "claude-code": "toolu_",
            "codex": "call_",
            "pi": "call_",
            "opencode": "call_",
            "gemini-cli": "call_",
            "qwen-code": "call_",
            "copilot-cli": "call_",
        }[target]
        self.map: dict[str, str] = {}
        self.used: set[str] = set()

    def get(self, source_id: str) -> str:
        if source_id in self.map:
            return self.map[source_id]
        clean = _ID_BAD.sub("_", source_id)
        if not clean.startswith(self.prefix):
            clean = self.prefix + clean
        if len(clean) > MAX_ID or clean in self.used or clean == self.prefix:
            digest = hashlib.sha256(source_id.encode("utf-8", "surrogatepass")).hexdigest()
            clean = self.prefix + digest[:24]
            n = 0
            while clean in self.used:
                n += 1
                clean = f"{self.prefix}{digest[:24]}_{n}"
        self.map[source_id] = clean
        self.used.add(clean)
        return clean


def tool_name(name: str) -> str:
    """A tool name valid for every provider (``^[a-zA-Z0-9_-]{1,64}$``)."""
    clean = _ID_BAD.sub("_", name or "")[:MAX_ID]
    return clean or "tool"


def _call(block: dict[str, Any], ids: _Ids, target: str) -> Call:
    name = block.get("name") or ""
    args = block.get("arguments")
    if name in _SHELL_NAMES:
        command = _shell_command(args)
        if command is not None:
            tname, key = SHELL_TOOL[target]
            return Call(ids.get(block["id"]), tname, {key: command}, name)
    if not isinstance(args, dict):
        args = {"input": args}
    return Call(ids.get(block["id"]), tool_name(name), args, name)


def _shell_command(args: Any) -> str | None:
    """The command line of a shell call in any harness's shape, or None."""
    if isinstance(args, str):
        return args
    if not isinstance(args, dict):
        return None
    value = args.get("command", args.get("cmd"))
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if len(value) >= 3 and value[1] in ("-lc", "-c"):
            return value[2]
        import shlex

        return shlex.join(value)
    return None


def _texts(content: Iterable[dict[str, Any]]) -> list[str]:
    """The texts of a row's blocks for the target; a text or thinking block of whitespace only
    is left out (it carries nothing, the providers refuse a blank text block with a 400, and
    read back it would be a user turn with no words: an incomplete request)."""
    out = []
    for b in content:
        t = b.get("type")
        if t == "text" and (b.get("text") or "").strip():
            out.append(b["text"])
        elif t == "thinking" and (b.get("text") or "").strip():
            out.append(f"(earlier reasoning, quoted)\n{b['text']}")
        elif t == "media":
            out.append(
                media_stub(
                    b.get("media_type", "application/octet-stream"), int(b.get("bytes") or 0)
                )
            )
    return out


def _raw_turns(
    rows: list[tuple[str, list[dict[str, Any]], dict[str, Any] | None]], ids: _Ids, target: str
) -> list[Turn]:
    turns: list[Turn] = []
    for role, content, request in rows:
        results = [b for b in content if b.get("type") == "tool_result"]
        if results:
            turns.append(
                Turn(
                    "results",
                    [
                        Result(
                            ids.get(b["call_id"]),
                            "",
                            b.get("text") or "",
                            bool(b.get("is_error")),
                            bool(b.get("synthetic")),
                        )
                        for b in results
                        if b.get("call_id")
                    ],
                )
            )
        if role == "assistant":
            parts: list[Any] = _texts(content)
            parts += [
                _call(b, ids, target)
                for b in content
                if b.get("type") == "tool_call" and b.get("id")
            ]
            if not parts:
                continue
            if turns and turns[-1].kind == "assistant":
                turns[-1].parts.extend(parts)
            else:
                turns.append(Turn("assistant", parts))
        elif role == "user" or request is not None:
            texts = _texts(content)
            if request is not None:
                texts = [request["text"], *texts[1:]]  # verbatim, even when empty
                turns.append(
                    Turn("user", texts, actor=request.get("actor") or "user", request=True)
                )
            elif texts:
                turns.append(Turn("user", texts))
    return turns


def _pair(turns: list[Turn], target: str) -> list[Turn]:
    """Every call answered exactly once right after its assistant turn (module docstring)."""
    results: dict[str, Result] = {}
    for t in turns:
        if t.kind == "results":
            for r in t.parts:
                results.setdefault(r.call_id, r)
    out: list[Turn] = []
    answered: set[str] = set()
    for t in turns:
        if t.kind == "results":
            continue  # each result is placed after its call below
        out.append(t)
        if t.kind != "assistant" or not t.calls():
            continue
        placed = []
        for c in t.calls():
            found = results.get(c.id)
            if found is None or c.id in answered:
                found = Result(
                    c.id, c.name, UNKNOWN_EFFECTS.format(name=c.original_name, id=c.id), True, True
                )
            answered.add(c.id)
            placed.append(Result(c.id, c.name, found.text, found.is_error, found.synthetic))
        out.append(Turn("results", placed))
    return out


__all__ = [
    "TARGETS",
    "SHELL_TOOL",
    "Call",
    "Result",
    "Turn",
    "Source",
    "Resumed",
    "to_turns",
    "copy_notice",
    "summary_section",
    "media_stub",
    "tool_name",
    "NOTICE_START",
]
