"""Hostile inputs for the fuzz tests (issue 21, item 2): hypothesis strategies for session
files of the three harness formats and for hook and memory request bodies, built to reach the
slow and fragile paths that random bytes never reach: deep nesting, huge numbers, long keys,
many tool calls with repeated or empty ids, long runs of one character, many small lines, and
Unicode edge cases (lone surrogates, combining marks, line separators, NUL, RTL, ZWJ).

Each file is a few KB to about a MB: ``session_file()`` draws ``(harness, lines)``;
``hook_body(event)`` a Claude Code hook payload; ``remember_body()`` / ``recall_body()`` the
memory endpoints' JSON bodies."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, settings, strategies as st

#: the session ids ``session_file`` writes (``own_session`` makes them unique)
HEADS = (b"s-fuzz", b"codex-fuzz", b"pi-fuzz")


def file_settings(max_examples: int, deadline: int | None) -> Any:
    """The hypothesis settings of the session-file fuzz tests: derandomized, no example
    database, the health checks that large generated files trip turned off."""
    return settings(
        max_examples=max_examples,
        deadline=deadline,
        derandomize=True,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )


def own_session(lines: list[bytes], n: int) -> bytes:
    """The file of ``session_file``'s ``lines``, its session id made the ``n``-th one's own."""
    data = b"".join(line + b"\n" for line in lines)
    for head in HEADS:
        data = data.replace(head, head + b"-%d" % n)
    return data


#: one-character runs (repeated to a length drawn per use)
RUN_CHARS = [
    "a",
    " ",
    "\n",
    "*",
    "`",
    "=",
    "-",
    "/",
    "\\",
    "{",
    "[",
    "\u00e9",
    "\u0301",
    "\u200d",
    "\u202e",
    "\ufeff",
    "\u2028",
    "\x00",
    "\ud83d\ude00",
    "A",
    "0",
    ":",
    "#",
    "<",
    "&",
    "%",
    "'",
    '"',
    "\t",
    "\r",
]
#: Unicode edge cases written into texts, ids and keys
EDGES = [
    "\ud800",
    "a\udfffb",
    "\udc80",
    "\x00",
    "\u2028\u2029",
    "\u0085",
    "e\u0301" * 50,
    "\u202eevil\u202c",
    "\U0001f469\u200d\U0001f4bb",
    "\ufffe\uffff",
    "\U0010ffff",
    "\x7f\x9f",
    "",
    " ",
    "null",
    "\\u0000",
]


@st.composite
def hostile_text(draw: st.DrawFn, max_run: int = 20_000) -> str:
    """A text: a long run of one character, an edge case, a mix, or a long plain word."""
    how = draw(st.sampled_from(["run", "run", "edge", "mix", "words", "plain"]))
    if how == "run":
        return draw(st.sampled_from(RUN_CHARS)) * draw(st.integers(1, max_run))
    if how == "edge":
        return draw(st.sampled_from(EDGES))
    if how == "mix":
        parts = draw(
            st.lists(
                st.one_of(st.sampled_from(EDGES), st.sampled_from(RUN_CHARS)),
                min_size=1,
                max_size=40,
            )
        )
        return "".join(parts) * draw(st.integers(1, 200))
    if how == "words":
        word = draw(
            st.sampled_from(
                [
                    "sk-",
                    "ghp_",
                    "AKIA",
                    "password=",
                    "Bearer ",
                    "x",
                    "é",
                    "http://",
                    "a.b",
                    "--",
                    "0x",
                ]
            )
        )
        return (word + " ") * draw(st.integers(1, 2_000))
    return draw(st.text(max_size=200))


def nested(depth: int, leaf: Any = "x", kind: str = "list") -> Any:
    """A value nested ``depth`` levels deep (lists or objects), built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


def _dump(value: Any) -> bytes:
    """JSON as a harness writes it, lone surrogates as ``\\uXXXX`` escapes; a value too deep for
    ``json.dumps`` is written by hand."""
    try:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    except RecursionError:
        return b'"deep"'


def _deep_json(depth: int, kind: str) -> bytes:
    """Nesting written directly as text (any depth, no recursion)."""
    if kind == "list":
        return b"[" * depth + b'"x"' + b"]" * depth
    return b'{"a":' * depth + b'"x"' + b"}" * depth


@st.composite
def hostile_value(draw: st.DrawFn) -> Any:
    """A JSON value a field should not hold: deep, huge, long-keyed, wrong-typed, edgy."""
    how = draw(
        st.sampled_from(
            ["text", "text", "number", "deep", "keys", "list", "null", "bool", "object"]
        )
    )
    if how == "text":
        return draw(hostile_text())
    if how == "number":
        return draw(
            st.one_of(
                st.integers(-(2**200), 2**200),
                st.floats(allow_nan=False),
                st.sampled_from([1e308, -1e308, 2**63, -(2**63) - 1, 0, -0.0]),
            )
        )
    if how == "deep":
        return nested(draw(st.integers(10, 900)), kind=draw(st.sampled_from(["list", "dict"])))
    if how == "keys":
        return {draw(hostile_text(max_run=5_000)): 1 for _ in range(draw(st.integers(1, 3)))}
    if how == "list":
        return [draw(st.sampled_from(["", "x", None, 1]))] * draw(st.integers(0, 3_000))
    if how == "object":
        return {f"k{i}": i for i in range(draw(st.integers(0, 3_000)))}
    return None if how == "null" else draw(st.booleans())


# ---------------------------------------------------------------------------- session files


def _cc(kind: str, n: int, session: str, content: Any, parent: str | None = None) -> dict:
    role = "assistant" if kind == "assistant" else "user"
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/p",
        "sessionId": session,
        "version": "2.1.38",
        "type": kind,
        "message": {"role": role, "content": content},
        "uuid": f"00000000-0000-4000-8000-{n:012d}",
        "timestamp": f"2026-02-10T22:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
    }


def _codex(n: int, payload: dict, kind: str = "response_item") -> dict:
    return {
        "timestamp": f"2025-10-28T04:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        "type": kind,
        "payload": payload,
    }


def _pi(n: int, message: dict, parent: str | None) -> dict:
    return {
        "type": "message",
        "id": f"{n:08x}",
        "parentId": parent,
        "timestamp": f"2026-06-05T05:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        "message": message,
    }


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[list[str], int]:
    """Ids for many tool calls: repeated, empty, long, or edgy; and how many calls."""
    pool = draw(st.sampled_from([[""], ["same"], ["a", "b"], ["x" * 5_000], EDGES]))
    count = draw(st.integers(1, 20 if len(pool[0]) > 100 else 1_000))
    return [pool[i % len(pool)] for i in range(count)], count


def _head(harness: str) -> list[bytes]:
    if harness == "claude-code":
        return [_dump(_cc("user", 0, "s-fuzz", "hello"))]
    if harness == "codex":
        return [
            _dump(
                _codex(
                    0,
                    {
                        "id": "codex-fuzz",
                        "timestamp": "2025-10-28T04:00:00.000Z",
                        "cwd": "/work/p",
                        "originator": "codex_cli_rs",
                        "cli_version": "0.77.0",
                    },
                    "session_meta",
                )
            )
        ]
    return [
        _dump(
            {
                "type": "session",
                "version": 3,
                "id": "pi-fuzz",
                "timestamp": "2026-06-05T05:24:28.246Z",
                "cwd": "/work/p",
            }
        )
    ]


@st.composite
def _body_lines(draw: st.DrawFn, harness: str) -> list[bytes]:
    shape = draw(st.sampled_from(["tools", "text", "value", "deep", "small", "results"]))
    lines: list[bytes] = []
    if shape == "deep":
        depth = draw(st.integers(500, 50_000))
        raw = _deep_json(depth, draw(st.sampled_from(["list", "dict"])))
        if harness == "claude-code":
            prefix = b'{"type":"user","sessionId":"s-fuzz","uuid":"d","message":{"role":"user","content":'
        elif harness == "codex":
            prefix = b'{"timestamp":"2025-10-28T04:00:01.000Z","type":"response_item","payload":'
        else:
            prefix = b'{"type":"message","id":"d","parentId":null,"message":'
        return [prefix + raw + b"}"]
    if shape == "small":
        line = draw(
            st.sampled_from(
                [
                    b"{}",
                    b"[]",
                    b"1",
                    b'""',
                    b'{"type":"user"}',
                    b'{"type":"message"}',
                    b" ",
                    b"null",
                    b"\xff",
                    b'{"type":"response_item","payload":{}}',
                ]
            )
        )
        return [line] * draw(st.integers(100, 5_000))
    if shape in ("tools", "results"):
        ids, _count = draw(tool_calls())
        name = draw(st.sampled_from(["Bash", "", "x" * 3_000, "TodoWrite", "update_plan"]))
        args = draw(
            st.sampled_from(
                [
                    {},
                    {"command": "ls"},
                    {"todos": []},
                    {"plan": "x"},
                    {"todos": [{"content": "t", "status": "pending"}] * 50},
                ]
            )
        )
        if harness == "claude-code":
            use = [{"type": "tool_use", "id": i, "name": name, "input": args} for i in ids]
            res = [{"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in ids]
            lines.append(_dump(_cc("assistant", 1, "s-fuzz", use)))
            if shape == "results":
                lines.append(_dump(_cc("user", 2, "s-fuzz", res)))
                lines += [_dump(_cc("user", 3 + k, "s-fuzz", res[:1])) for k in range(50)]
        elif harness == "codex":
            for k, i in enumerate(ids):
                lines.append(
                    _dump(
                        _codex(
                            k,
                            {
                                "type": "function_call",
                                "name": name,
                                "arguments": json.dumps(args),
                                "call_id": i,
                            },
                        )
                    )
                )
                if shape == "results":
                    lines.append(
                        _dump(
                            _codex(
                                k, {"type": "function_call_output", "call_id": i, "output": "ok"}
                            )
                        )
                    )
        else:
            use = [{"type": "toolCall", "id": i, "name": name, "arguments": args} for i in ids]
            lines.append(_dump(_pi(1, {"role": "assistant", "content": use}, None)))
            if shape == "results":
                lines += [
                    _dump(
                        _pi(
                            2 + k,
                            {
                                "role": "toolResult",
                                "toolCallId": i,
                                "toolName": name,
                                "content": [{"type": "text", "text": "ok"}],
                            },
                            f"{1 + k:08x}",
                        )
                    )
                    for k, i in enumerate(ids[:500])
                ]
        return lines
    text = draw(hostile_text()) if shape == "text" else draw(hostile_value())
    for n in range(1, draw(st.integers(1, 5)) + 1):
        if harness == "claude-code":
            lines.append(
                _dump(
                    _cc(
                        draw(st.sampled_from(["user", "assistant"])),
                        n,
                        "s-fuzz",
                        [{"type": "text", "text": text}] if shape == "text" else text,
                    )
                )
            )
        elif harness == "codex":
            lines.append(
                _dump(
                    _codex(
                        n,
                        {
                            "type": "message",
                            "role": draw(st.sampled_from(["user", "assistant"])),
                            "content": [{"type": "input_text", "text": text}]
                            if shape == "text"
                            else text,
                        },
                    )
                )
            )
        else:
            lines.append(
                _dump(
                    _pi(
                        n,
                        {
                            "role": draw(st.sampled_from(["user", "assistant"])),
                            "content": [{"type": "text", "text": text}]
                            if shape == "text"
                            else text,
                        },
                        None,
                    )
                )
            )
    return lines


@st.composite
def session_file(draw: st.DrawFn) -> tuple[str, list[bytes]]:
    """``(harness, lines)``: a recognisable head, then 1 to 3 hostile parts."""
    harness = draw(st.sampled_from(["claude-code", "codex", "pi"]))
    lines = _head(harness)
    for _ in range(draw(st.integers(1, 3))):
        lines += draw(_body_lines(harness))
    return harness, lines


# ---------------------------------------------------------------------------- request bodies


@st.composite
def hook_body(draw: st.DrawFn) -> bytes:
    """A Claude Code hook payload (raw bytes) with hostile field values, or hostile JSON."""
    how = draw(
        st.sampled_from(["fields", "fields", "deep", "huge-number", "long-key", "not-object"])
    )
    if how == "deep":
        return _deep_json(draw(st.integers(100, 100_000)), draw(st.sampled_from(["list", "dict"])))
    if how == "huge-number":
        return b'{"session_id":"s","prompt":' + b"9" * draw(st.integers(20, 50_000)) + b"}"
    if how == "long-key":
        return b'{"' + b"k" * draw(st.integers(1, 200_000)) + b'":1,"session_id":"s"}'
    if how == "not-object":
        return draw(st.sampled_from([b"[]", b"1", b"null", b'"x"', b"", b"\xff\xfe", b"{"]))
    body: dict[str, Any] = {
        "session_id": "s-hook",
        "cwd": "/work/p",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "hello",
    }
    for field in draw(
        st.lists(
            st.sampled_from(
                [
                    "session_id",
                    "cwd",
                    "prompt",
                    "source",
                    "transcript_path",
                    "trigger",
                    "last_assistant_message",
                    "custom_instructions",
                    "agent_id",
                    "stop_hook_active",
                ]
            ),
            min_size=1,
            max_size=3,
        )
    ):
        body[field] = draw(hostile_value())
    return _dump(body)


@st.composite
def remember_body(draw: st.DrawFn) -> bytes:
    """A ``/api/memory/remember`` body with a hostile content, tags or type."""
    body: dict[str, Any] = {"content": draw(hostile_text())}
    if draw(st.booleans()):
        body["tags"] = draw(
            st.one_of(st.lists(hostile_text(max_run=200), max_size=50), hostile_value())
        )
    if draw(st.booleans()):
        body[draw(st.sampled_from(["type", "source_id", "importance", "transcript"]))] = draw(
            hostile_value()
        )
    return _dump(body)


@st.composite
def recall_body(draw: st.DrawFn) -> bytes:
    """A ``/api/memory/recall`` body with a hostile query or limits."""
    body: dict[str, Any] = {"query": draw(hostile_text())}
    if draw(st.booleans()):
        body[draw(st.sampled_from(["limit", "expand", "tags", "type", "since"]))] = draw(
            hostile_value()
        )
    return _dump(body)
