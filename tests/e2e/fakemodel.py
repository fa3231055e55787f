"""A fake model server for the end-to-end suite (issue 12): the three real harnesses run offline
against it.

It listens on 127.0.0.1 only, on a free port, and speaks just enough of three wire protocols
(harnesses.md, "Running a harness offline"):

- **Anthropic Messages** (Claude Code): ``POST /v1/messages`` streamed as SSE
  (``message_start``, ``content_block_start/delta/stop``, ``message_delta``, ``message_stop``),
  and ``POST /v1/messages/count_tokens``;
- **OpenAI Responses** (Codex): ``POST /v1/responses`` streamed as SSE (``response.created``,
  ``response.output_item.added/done``, ``response.output_text.delta``, ``response.completed``);
- **OpenAI Chat Completions** (pi): ``POST /v1/chat/completions`` streamed as SSE;
- **Gemini API** (Gemini CLI, issue 42): ``POST /v1beta/models/MODEL:streamGenerateContent``
  (``?alt=sse``: each event one ``GenerateContentResponse``), ``:generateContent`` (one JSON
  response) and ``:countTokens`` (``{"totalTokens": 100}``). The shell tool is
  ``run_shell_command``; a history whose ``model`` turn's ``functionCall`` parts are not
  answered by as many ``functionResponse`` parts in the next ``user`` turn (or a response
  without its call) is answered 400 ``INVALID_ARGUMENT`` as the Gemini API does.

Any other path answers 200 ``{}``. A model request whose history breaks tool-call pairing is
answered the way the real API answers it (issue 13): HTTP 400 with that provider's error shape
(``unpaired``: Anthropic wants each ``tool_use`` answered by a ``tool_result`` in the very next
user message and no result without its call; the Responses API each ``function_call`` answered
by a ``function_call_output`` and no output without its call; Chat Completions an assistant
message with ``tool_calls`` followed by one ``tool`` message per call id, and no ``tool``
message without one). Such requests are logged too. **Every** request is logged (method, path, parsed JSON body)
in ``FakeModel.requests``, in arrival order: the log is the proof of what reached the model.

**Script** (per request, stateless, so retries and side requests do not shift it): a request
that offers a shell tool and whose last message is not a tool result gets a call of that tool
running ``SHELL_COMMAND``; any other request gets the text ``REPLY_TEXT``. So every user turn is
"a tool call, then text", and calls are always answered. A Chat Completions request (pi) whose
last user text holds ``[big:N]`` instead gets ``BIG_COMMAND`` calls until N tool results follow
that user message, then the text: a long turn of tool output (issue 14). A Chat Completions
request whose last user text holds ``[shell:COMMAND]`` (COMMAND up to the closing ``]``) gets
its shell call run COMMAND instead of ``SHELL_COMMAND`` (a recorded session that lists the
project, ``tests/e2e/test_qwen_live.py``'s ``MATRIX_SOURCE``).

**MCP search** (issue 39). A request whose last user message holds ``[mcp-search:WORD]`` makes
the model use continuity's search tool, found by its name among the tools offered (the name
holds ``continuity`` and ends in ``search``: Claude Code and Codex ``mcp__continuity__search``,
pi ``continuity_search``, Copilot CLI ``continuity-search``), with ``{"query": WORD}``; once
that call is answered, the text. A
harness that defers MCP tools offers only a search over them first: Claude Code's
``ToolSearch`` (called with ``select:<the deferred name>``, the name read from the request),
Codex's ``tool_search`` (a ``tool_search_call`` item, ``{"query": "continuity search"}``); the
model calls that once, then the tool it loaded. Codex binds an MCP server's tools only once the
server is up (it omits a pending server from a step: "omitting pending optional MCP server");
ours takes about a second to start, a real model seconds to answer, this one none: so the
``tool_search`` step is answered after ``TOOL_SEARCH_DELAY`` seconds, and when the search found
nothing (the server was still starting when the step began; Codex then adds "deferred tool
namespaces: mcp__continuity" to the next request) the model searches again, at most
``TOOL_SEARCH_TRIES`` times.

**Stories** (opt-in, Anthropic Messages only). ``FakeModel(story=Story(...))`` scripts one
multi-step turn of Claude Code (``tests/e2e/record_export_session.py`` records an example
session with it). A request that offers tools and whose messages hold a user message with
``Story.prompt`` in its text is answered with step N of ``Story.steps``, N being the number of
``tool_result`` blocks after the last such user message: each step one tool call (its name and
input, optionally after a short text), then ``Story.reply`` once every step is answered. Like
the default script it is stateless per request. Every other request, and every request of a
``FakeModel()`` without a story, is answered by the default script above, unchanged.

``FakeSummaryProvider`` is an OpenAI-compatible chat endpoint for continuity's ``openai``
summarizer that fails on purpose: ``mode`` ``500`` (HTTP 500), ``empty`` (an empty reply),
``sections`` (a reply with one of the required sections, quoting ``SECTIONS_SECRET``: issue 45
item 7) or ``slow`` (answers only after ``SLOW_SECONDS``: a summary still running when pi is
stopped).
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SHELL_COMMAND = "echo continuity-e2e-tool-ran"
REPLY_TEXT = "Fake model answer: the command ran."
#: One ``[big:N]`` call's command: 600 lines of 63 bytes (about 38 KB, under pi's 50 KB / 2000
#: line cut of a bash result).
BIG_LINE = "continuity-big-output-line-0123456789abcdefghijklmnopqrstuvwxyz"
BIG_COMMAND = f"yes {BIG_LINE} | head -n 600"
SLOW_SECONDS = 60.0
#: Shell tools by harness: Claude Code ``Bash``, Codex ``exec_command``/``shell``, pi ``bash``,
#: Gemini CLI and Qwen Code ``run_shell_command``, Factory Droid ``Execute``.
SHELL_TOOLS = (
    "Bash",
    "exec_command",
    "shell",
    "bash",
    "local_shell",
    "run_shell_command",
    "Execute",
)


@dataclass(frozen=True)
class Step:
    """One scripted model reply of a ``Story``: a call of tool ``tool`` with ``input``, after
    the text ``say`` when it is not empty."""

    tool: str
    input: dict[str, Any]
    say: str = ""


@dataclass(frozen=True)
class Story:
    """A scripted Claude Code turn (module docstring, Stories): the turn whose user text holds
    ``prompt`` gets ``steps`` one request at a time, then the text ``reply``."""

    prompt: str
    steps: tuple[Step, ...]
    reply: str


class FakeModel:
    """The server (``start()`` → base URL ``http://127.0.0.1:PORT``; ``stop()``). ``requests``:
    ``[{"method", "path", "body"}]`` (``body``: the parsed JSON, or the raw text when it is not
    JSON). ``story``: an opt-in scripted turn (module docstring, Stories); None (the default):
    the default script only."""

    def __init__(self, story: Story | None = None) -> None:
        self.story = story
        self.requests: list[dict[str, Any]] = []
        #: The requests answered with 400 for unpaired tool calls: ``[{"path", "message"}]``.
        self.rejected: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _body(self) -> Any:
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size) if size else b""
                try:
                    return json.loads(raw) if raw else None
                except ValueError:
                    return raw.decode("utf-8", "replace")

            def do_GET(self) -> None:
                owner._log("GET", self.path, None)
                self._json({})

            def do_HEAD(self) -> None:
                owner._log("HEAD", self.path, None)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                body = self._body()
                owner._log("POST", self.path, body)
                path = self.path.split("?", 1)[0]
                problem = unpaired(path, body) if isinstance(body, dict) else None
                if problem is not None:
                    owner.rejected.append({"path": self.path, "message": problem[0]})
                    self._json(problem[1], status=400)
                elif path.endswith("/messages/count_tokens"):
                    self._json({"input_tokens": 100})
                elif path.endswith("/messages"):
                    self._sse(
                        anthropic_events(body if isinstance(body, dict) else {}, story=owner.story)
                    )
                elif path.endswith("/responses"):
                    self._sse(responses_events(body if isinstance(body, dict) else {}))
                elif path.endswith("/chat/completions"):
                    self._sse(chat_events(body if isinstance(body, dict) else {}), named=False)
                elif path.endswith(":countTokens"):
                    self._json({"totalTokens": 100})
                elif path.endswith(":streamGenerateContent"):
                    reply = gemini_response(body if isinstance(body, dict) else {})
                    self._sse([("", reply)], named=False)
                elif path.endswith(":generateContent"):
                    self._json(gemini_response(body if isinstance(body, dict) else {}))
                else:
                    self._json({})

            def _json(self, value: Any, status: int = 200) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events: list[tuple[str, Any]], named: bool = True) -> None:
                chunks = []
                for name, data in events:
                    payload = data if isinstance(data, str) else json.dumps(data)
                    chunks.append(
                        (f"event: {name}\n" if named and name else "") + f"data: {payload}\n\n"
                    )
                raw = "".join(chunks).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeModel:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _log(self, method: str, path: str, body: Any) -> None:
        with self._lock:
            self.requests.append({"method": method, "path": path, "body": body})

    def model_requests(self, since: int = 0) -> list[dict[str, Any]]:
        """The logged requests from the ``since``-th on that asked the model for a reply (any
        of the protocols; Gemini: its streamed ``generateContent``, Gemini CLI's turns)."""
        with self._lock:
            return [
                r
                for r in self.requests[since:]
                if r["method"] == "POST"
                and isinstance(r["body"], dict)
                and r["path"]
                .split("?")[0]
                .endswith(
                    ("/messages", "/responses", "/chat/completions", ":streamGenerateContent")
                )
            ]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()


def unpaired(path: str, body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """``(message, error body)`` when the request's history has a tool call without exactly
    one result right after it, or a result without its call (module docstring); else None.
    The error bodies are the providers' own shapes: Anthropic ``{"type": "error", "error":
    {"type": "invalid_request_error", "message"}}``, OpenAI ``{"error": {"message", "type":
    "invalid_request_error", "param", "code"}}``."""
    if path.endswith("/messages/count_tokens"):
        return None
    message = None
    if path.endswith("/messages"):
        message = _anthropic_unpaired(body.get("messages") or [])
        if message is not None:
            return message, {
                "type": "error",
                "error": {"type": "invalid_request_error", "message": message},
            }
        return None
    if path.endswith((":streamGenerateContent", ":generateContent")):
        message = _gemini_unpaired(body.get("contents") or [])
        if message is not None:
            return message, {
                "error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}
            }
        return None
    if path.endswith("/responses"):
        message = _responses_unpaired(body.get("input"))
    elif path.endswith("/chat/completions"):
        message = _chat_unpaired(body.get("messages") or [])
    if message is None:
        return None
    return message, {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "messages" if "chat" in path else "input",
            "code": None,
        }
    }


def _blocks(message: Any, kind: str) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    return (
        [b for b in content if isinstance(b, dict) and b.get("type") == kind]
        if isinstance(content, list)
        else []
    )


def _anthropic_unpaired(messages: list[Any]) -> str | None:
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        if m.get("role") == "assistant":
            ids = [b.get("id") for b in _blocks(m, "tool_use")]
            if not ids:
                continue
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            answered = (
                [b.get("tool_use_id") for b in _blocks(nxt, "tool_result")]
                if isinstance(nxt, dict) and nxt.get("role") == "user"
                else []
            )
            missing = [x for x in ids if answered.count(x) != 1]
            if missing:
                return (
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(map(str, missing))}. Each `tool_use` "
                    "block must have a corresponding `tool_result` block in the next "
                    "message."
                )
        elif m.get("role") == "user":
            results = [b.get("tool_use_id") for b in _blocks(m, "tool_result")]
            prev = messages[i - 1] if i > 0 else None
            calls = (
                [b.get("id") for b in _blocks(prev, "tool_use")]
                if isinstance(prev, dict) and prev.get("role") == "assistant"
                else []
            )
            stray = [x for x in results if x not in calls]
            if stray:
                return (
                    f"messages.{i}.content.0: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {stray[0]}. Each `tool_result` block must have "
                    "a corresponding `tool_use` block in the previous message."
                )
    return None


_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def _responses_unpaired(items: Any) -> str | None:
    if not isinstance(items, list):
        return None
    calls: list[str] = []
    outputs: dict[str, int] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") in _CALLS:
            calls.append(str(item.get("call_id")))
        elif item.get("type") in _OUTPUTS:
            cid = str(item.get("call_id"))
            if cid not in calls:
                return f"No tool call found for function call output with call_id {cid}."
            outputs[cid] = outputs.get(cid, 0) + 1
    for cid in calls:
        if outputs.get(cid, 0) != 1:
            return f"No tool output found for function call {cid}."
    return None


def _chat_unpaired(messages: list[Any]) -> str | None:
    open_ids: list[str] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        if m.get("role") == "tool":
            cid = m.get("tool_call_id")
            if cid not in open_ids:
                return (
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'."
                )
            open_ids.remove(cid)
            continue
        if open_ids:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not "
                f"have response messages: {', '.join(open_ids)}"
            )
        if m.get("role") == "assistant":
            open_ids = [str(c.get("id")) for c in m.get("tool_calls") or [] if isinstance(c, dict)]
    if open_ids:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not "
            f"have response messages: {', '.join(open_ids)}"
        )
    return None


def _tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("functionDeclarations"), list):
            names.extend(
                str(f["name"]) for f in tool["functionDeclarations"] if isinstance(f, dict)
            )
        elif isinstance(tool, dict):
            name = tool.get("name") or (tool.get("function") or {}).get("name")
            if name:
                names.append(name)
    return names


#: Claude Code lists the tools it defers (MCP tools among them) in its system text, loaded by
#: ``ToolSearch`` (harnesses.md): the list runs from this line to the next blank line.
_DEFERRED_HEAD = re.compile(
    r"deferred tools are now available via ToolSearch[^\n]*\n((?:[^\n]+\n)+)"
)
#: ... and the MCP servers still connecting when it sent the request, whose tools
#: (``mcp__<server>__*``) ``ToolSearch`` waits for: one server name a line.
_CONNECTING_HEAD = re.compile(r"MCP servers are still connecting[^\n]*\n((?:[^\n]+\n)+)")


def _tool_entries(body: dict[str, Any], *, builtin: bool = False) -> list[tuple[str, str | None]]:
    """``(name, namespace)`` of every tool a request offers: its ``tools`` (a Responses
    namespace's tools with the namespace's name) and its ``tool_search`` outputs' tools; with
    ``builtin``, the built-in ``tool_search``/``web_search`` too, named by their type."""
    found: list[tuple[str, str | None]] = []

    def collect(tools: Any, namespace: str | None = None) -> None:
        for t in tools or []:
            if not isinstance(t, dict):
                continue
            if t.get("type") == "namespace":
                collect(t.get("tools"), t.get("name"))
            elif t.get("name") or (t.get("function") or {}).get("name"):
                found.append((str(t.get("name") or t["function"]["name"]), namespace))
            elif builtin and t.get("type") in ("tool_search", "web_search"):
                found.append((str(t["type"]), None))

    collect(body.get("tools"))
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "tool_search_output":
            collect(item.get("tools"))
    return found


def offered_names(body: dict[str, Any]) -> set[str]:
    """Every tool name a request offers the model: its ``tools`` (Responses namespaces
    flattened, ``namespace__name``), ``tool_search`` outputs, and the tools a harness defers
    behind its tool search: Codex's MCP tools (``mcp__*``: every one is found through its
    ``tool_search``), Claude Code's deferred list (reachable through ``ToolSearch``), and
    for each MCP server it says is still connecting, the pattern ``mcp__<server>__*``
    (``offers`` matches it)."""
    names: set[str] = set()
    for name, namespace in _tool_entries(body, builtin=True):
        names.add(_qualified(name, namespace))
    if "tool_search" in names:  # Codex 0.171 offers every MCP tool through it alone
        names.add("mcp__*")
    if "ToolSearch" in names:
        text = json.dumps(body).replace("\\n", "\n")
        for found in _DEFERRED_HEAD.finditer(text):
            names.update(n.strip() for n in found.group(1).split("\n") if n.strip())
        for found in _CONNECTING_HEAD.finditer(text):
            names.update(f"mcp__{n.strip()}__*" for n in found.group(1).split("\n") if n.strip())
    return names


def offers(offered: set[str], name: str) -> bool:
    """True when ``name`` is among ``offered`` (``offered_names``), a pattern included."""
    return name in offered or any(o.endswith("*") and name.startswith(o[:-1]) for o in offered)


def _shell_tool(body: dict[str, Any]) -> str | None:
    names = _tool_names(body)
    for wanted in SHELL_TOOLS:
        if wanted in names:
            return wanted
    return None


def _last_is_tool_result(body: dict[str, Any]) -> bool:
    if isinstance(body.get("input"), list):  # Responses
        items = [i for i in body["input"] if isinstance(i, dict)]
        return bool(items) and items[-1].get("type") in (
            "function_call_output",
            "custom_tool_call_output",
            "local_shell_call_output",
        )
    if isinstance(body.get("contents"), list):  # Gemini
        turns = [c for c in body["contents"] if isinstance(c, dict)]
        return bool(turns) and any(
            isinstance(p, dict) and "functionResponse" in p for p in turns[-1].get("parts") or []
        )
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if not messages:
        return False
    last = messages[-1]
    if last.get("role") == "tool":  # Chat Completions
        return True
    content = last.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


#: Seconds the model takes to ask Codex's tool_search (module docstring, MCP search).
TOOL_SEARCH_DELAY = 3.0
#: How often the model asks Codex's tool_search before it gives up (module docstring).
TOOL_SEARCH_TRIES = 3
#: What the model asks Codex's tool_search for.
TOOL_SEARCH_QUERY = "continuity search"
MCP_SEARCH = re.compile(r"\[mcp-search:([^\]\s]+)\]")
#: A name of continuity's search tool as a harness offers it (``mcp__continuity__search``,
#: ``continuity_search``, Copilot CLI's ``continuity-search``).
CONTINUITY_SEARCH = re.compile(r"^(?:mcp__)?continuity(?:_{1,2}|-)search$")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(
        str(b.get("text", ""))
        for b in content or []
        if isinstance(b, dict) and b.get("type") in ("text", "input_text")
    )


def _after_marker(items: list[dict[str, Any]], is_user_text: Any) -> tuple[str, list] | None:
    """``(WORD, the items after it)`` for the last user message holding ``[mcp-search:WORD]``
    (``is_user_text(item)``: its text when it is a user message, else None); user messages
    without it after that one (tool results, a recovery context) do not end the turn."""
    for i in range(len(items) - 1, -1, -1):
        found = MCP_SEARCH.search(is_user_text(items[i]) or "")
        if found:
            return found.group(1), items[i + 1 :]
    return None


def _qualified(name: Any, namespace: Any = None) -> str:
    """A tool's name as one string: Codex puts an MCP server's tools in a namespace
    (``mcp__continuity``) holding ``search``: ``mcp__continuity__search``."""
    if not namespace or str(name).startswith(str(namespace)):
        return str(name)
    return f"{namespace}{'' if str(namespace).endswith('_') else '__'}{name}"


def _search_name(names: Any) -> str | None:
    return next((n for n in names if isinstance(n, str) and CONTINUITY_SEARCH.match(n)), None)


def mcp_search_step(protocol: str, body: dict[str, Any]) -> tuple[str, Any] | None:
    """The scripted step of an ``[mcp-search:WORD]`` turn (module docstring): ``("call",
    (tool name, arguments, extra))`` for a function/tool call, ``("tool_search", arguments)``
    for Codex's tool search, ``("text", None)``; None when the turn has no marker."""
    if protocol == "responses":
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        marked = _after_marker(
            items,
            lambda i: (
                _text_of(i.get("content"))
                if i.get("type") == "message" and i.get("role") == "user"
                else None
            ),
        )
        if marked is None:
            return None
        word, after = marked
        called = [
            _qualified(i.get("name"), i.get("namespace"))
            for i in after
            if i.get("type") == "function_call"
        ]
        if _search_name(called):
            return "text", None
        for name, namespace in _tool_entries(body):
            if CONTINUITY_SEARCH.match(_qualified(name, namespace)):
                return "call", (
                    name,
                    {"query": word},
                    {"namespace": namespace} if namespace else {},
                )
        searched = sum(1 for i in after if i.get("type") == "tool_search_call")
        if searched < TOOL_SEARCH_TRIES and any(
            isinstance(t, dict) and t.get("type") == "tool_search" for t in body.get("tools") or []
        ):
            return "tool_search", {"query": TOOL_SEARCH_QUERY, "limit": 8}
        return "text", None
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    marked = _after_marker(
        messages, lambda m: _text_of(m.get("content")) if m.get("role") == "user" else None
    )
    if marked is None:
        return None
    word, after = marked
    if protocol == "anthropic":
        called = [
            b.get("name")
            for m in after
            if m.get("role") == "assistant"
            for b in _blocks(m, "tool_use")
        ]
    else:
        called = [
            (c.get("function") or {}).get("name")
            for m in after
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []
            if isinstance(c, dict)
        ]
    if _search_name(called):
        return "text", None
    name = _search_name(_tool_names(body))
    if name:
        return "call", (name, {"query": word}, {})
    if protocol == "anthropic" and "ToolSearch" in _tool_names(body) and "ToolSearch" not in called:
        deferred = re.search(r"mcp__continuity__search\b", json.dumps(body))
        return "call", (
            "ToolSearch",
            {
                "query": "select:" + (deferred.group(0) if deferred else "mcp__continuity__search"),
                "max_results": 5,
            },
            {},
        )
    return "text", None


def _call_id() -> str:
    return "call_" + uuid.uuid4().hex[:20]


def story_step(story: Story, body: dict[str, Any]) -> Step | str | None:
    """The scripted reply of ``story`` to an Anthropic Messages request (module docstring,
    Stories): the ``Step`` to take, the final text, or None when the request is not of the
    story's turn (it offers no tools, or no user message holds ``story.prompt``)."""
    if not _tool_names(body):
        return None
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    start = next(
        (
            i
            for i in range(len(messages) - 1, -1, -1)
            if messages[i].get("role") == "user"
            and story.prompt in _text_of(messages[i].get("content"))
        ),
        None,
    )
    if start is None:
        return None
    answered = sum(
        len(_blocks(m, "tool_result")) for m in messages[start + 1 :] if m.get("role") == "user"
    )
    return story.steps[answered] if answered < len(story.steps) else story.reply


def _story_events(step: Step | str) -> tuple[list[tuple[str, Any]], str]:
    """The content blocks of a story's reply (``story_step``) and its stop reason."""
    texts = [step] if isinstance(step, str) else [step.say] if step.say else []
    events: list[tuple[str, Any]] = []
    for index, text in enumerate(texts):
        events += [
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": text},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    if isinstance(step, str):
        return events, "end_turn"
    index = len(texts)
    events += [
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_" + uuid.uuid4().hex[:20],
                    "name": step.tool,
                    "input": {},
                },
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(step.input)},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]
    return events, "tool_use"


def anthropic_events(body: dict[str, Any], story: Story | None = None) -> list[tuple[str, Any]]:
    """The SSE events of one Anthropic Messages reply (module docstring, Script; Stories when
    ``story`` is given)."""
    tool = _shell_tool(body)
    msg_id = "msg_" + uuid.uuid4().hex[:20]
    events: list[tuple[str, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "fake"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 100, "output_tokens": 1},
                },
            },
        )
    ]
    scripted = story_step(story, body) if story is not None else None
    if scripted is not None:
        blocks, stop = _story_events(scripted)
        return [
            *events,
            *blocks,
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 20},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    step = mcp_search_step("anthropic", body)
    if step is not None:
        tool, args = (step[1][0], step[1][1]) if step[0] == "call" else (None, None)
    elif tool and not _last_is_tool_result(body):
        args = {"command": SHELL_COMMAND, "description": "Run the e2e command"}
    else:
        tool = None
    if tool:
        events += [
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {
                        "type": "tool_use",
                        "id": "toolu_" + uuid.uuid4().hex[:20],
                        "name": tool,
                        "input": {},
                    },
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(args)},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]
        stop = "tool_use"
    else:
        events += [
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": REPLY_TEXT},
                },
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]
        stop = "end_turn"
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def responses_events(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """The SSE events of one OpenAI Responses reply (module docstring, Script)."""
    tool = _shell_tool(body)
    resp_id = "resp_" + uuid.uuid4().hex[:20]
    base = {
        "id": resp_id,
        "object": "response",
        "status": "in_progress",
        "model": body.get("model", "fake"),
        "output": [],
    }
    events: list[tuple[str, Any]] = [
        ("response.created", {"type": "response.created", "response": base})
    ]
    step = mcp_search_step("responses", body)
    item = None
    if step is not None and step[0] == "call":
        name, args, extra = step[1]
        item = {
            "type": "function_call",
            "id": "fc_" + uuid.uuid4().hex[:20],
            "status": "completed",
            "name": name,
            "arguments": json.dumps(args),
            "call_id": _call_id(),
            **extra,
        }
    elif step is not None and step[0] == "tool_search":
        time.sleep(TOOL_SEARCH_DELAY)  # a real model's seconds: the MCP server comes up
        item = {
            "type": "tool_search_call",
            "id": "ts_" + uuid.uuid4().hex[:20],
            "status": "completed",
            "execution": "client",
            "call_id": _call_id(),
            "arguments": step[1],
        }
    elif step is None and tool and not _last_is_tool_result(body):
        args = (
            {"cmd": SHELL_COMMAND}
            if tool == "exec_command"
            else {"command": ["bash", "-lc", SHELL_COMMAND]}
        )
        item = {
            "type": "function_call",
            "id": "fc_" + uuid.uuid4().hex[:20],
            "status": "completed",
            "name": tool,
            "arguments": json.dumps(args),
            "call_id": _call_id(),
        }
    if item is not None:
        events += [
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": item},
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
        ]
    else:
        item_id = "msg_" + uuid.uuid4().hex[:20]
        started = {
            "type": "message",
            "id": item_id,
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        }
        done = {
            **started,
            "status": "completed",
            "content": [{"type": "output_text", "text": REPLY_TEXT, "annotations": []}],
        }
        events += [
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": started},
            ),
            (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item_id,
                    "output_index": 0,
                    "content_index": 0,
                    "delta": REPLY_TEXT,
                },
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": done},
            ),
        ]
        item = done
    events.append(
        (
            "response.completed",
            {
                "type": "response.completed",
                "response": {
                    **base,
                    "status": "completed",
                    "output": [item],
                    "usage": {
                        "input_tokens": 100,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 20,
                        "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": 120,
                    },
                },
            },
        )
    )
    return events


def _last_user_text(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The text of the last user message of a Chat Completions body and the messages after
    it (``("", [])`` without one)."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users:
        return "", []
    content = messages[users[-1]].get("content")
    text = (
        content
        if isinstance(content, str)
        else " ".join(b.get("text", "") for b in content or [] if isinstance(b, dict))
    )
    return text, messages[users[-1] + 1 :]


def _big_calls_left(body: dict[str, Any]) -> int:
    """``[big:N]`` in the last user message of a Chat Completions body: N less the tool
    results after it (0 without the marker)."""
    import re

    text, after = _last_user_text(body)
    found = re.search(r"\[big:(\d+)\]", text)
    if not found:
        return 0
    done = sum(1 for m in after if m.get("role") == "tool")
    return max(0, int(found.group(1)) - done)


def _shell_marker(body: dict[str, Any]) -> str | None:
    """COMMAND of a ``[shell:COMMAND]`` in the last user message of a Chat Completions body
    (module docstring), else None."""
    import re

    found = re.search(r"\[shell:([^\]]+)\]", _last_user_text(body)[0])
    return found.group(1) if found else None


def shell_args(tool: str, command: str = SHELL_COMMAND) -> dict[str, Any]:
    """The arguments of the shell call of ``command`` (default ``SHELL_COMMAND``):
    ``{"command"}``, plus the risk fields Factory Droid's ``Execute`` refuses a call without."""
    args: dict[str, Any] = {"command": command}
    if tool == "Execute":
        args |= {"riskLevel": "low", "riskLevelReason": "It only prints a word."}
    return args


def chat_events(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """The SSE chunks of one OpenAI Chat Completions reply (module docstring, Script)."""
    tool = _shell_tool(body)
    cid = "chatcmpl-" + uuid.uuid4().hex[:20]
    model = body.get("model", "fake")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[str, Any]:
        return (
            "",
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": 1796190000,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            },
        )

    events = [chunk({"role": "assistant", "content": ""})]
    big = _big_calls_left(body) if tool else 0
    step = mcp_search_step("chat", body)
    if step is not None:
        if step[0] == "call":
            events.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": _call_id(),
                                "type": "function",
                                "function": {
                                    "name": step[1][0],
                                    "arguments": json.dumps(step[1][1]),
                                },
                            }
                        ]
                    }
                )
            )
            events.append(chunk({}, "tool_calls"))
        else:
            events.append(chunk({"content": REPLY_TEXT}))
            events.append(chunk({}, "stop"))
    elif big:
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": _call_id(),
                            "type": "function",
                            "function": {
                                "name": tool,
                                "arguments": json.dumps({"command": BIG_COMMAND}),
                            },
                        }
                    ]
                }
            )
        )
        events.append(chunk({}, "tool_calls"))
    elif tool and not _last_is_tool_result(body):
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": _call_id(),
                            "type": "function",
                            "function": {
                                "name": tool,
                                "arguments": json.dumps(
                                    shell_args(tool, _shell_marker(body) or SHELL_COMMAND)
                                ),
                            },
                        }
                    ]
                }
            )
        )
        events.append(chunk({}, "tool_calls"))
    else:
        events.append(chunk({"content": REPLY_TEXT}))
        events.append(chunk({}, "stop"))
    usage = (
        "",
        {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": 1796190000,
            "model": model,
            "choices": [],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        },
    )
    return [*events, usage, ("", "[DONE]")]


def gemini_response(body: dict[str, Any]) -> dict[str, Any]:
    """One Gemini ``GenerateContentResponse`` (module docstring, Script): a
    ``run_shell_command`` call of ``SHELL_COMMAND`` when the request offers it and its last
    turn is not a function response, else the text ``REPLY_TEXT``. A request that offers no
    tools (Gemini CLI's side requests: next speaker, titles) gets the text too."""
    tool = _shell_tool(body)
    if tool and not _last_is_tool_result(body):
        part: dict[str, Any] = {
            "functionCall": {"id": _call_id(), "name": tool, "args": {"command": SHELL_COMMAND}}
        }
    else:
        part = {"text": REPLY_TEXT}
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": 100,
            "candidatesTokenCount": 20,
            "totalTokenCount": 120,
        },
        "modelVersion": str(body.get("model") or "gemini-fake"),
    }


def _gemini_unpaired(contents: list[Any]) -> str | None:
    """The Gemini API's rule: the function calls of a ``model`` turn are answered by as many
    ``functionResponse`` parts in the very next turn, and no response comes without a call."""
    waiting = 0
    for i, turn in enumerate(contents):
        parts = turn.get("parts") if isinstance(turn, dict) else None
        parts = [p for p in parts or [] if isinstance(p, dict)]
        calls = sum(1 for p in parts if "functionCall" in p)
        answers = sum(1 for p in parts if "functionResponse" in p)
        if answers != waiting:
            return (
                f"Please ensure that the number of function response parts is equal to the "
                f"number of function call parts of the function call turn (contents[{i}])."
            )
        waiting = calls
    return None


#: What the ``sections`` reply quotes: a token-like secret and words of its own, none of which
#: may reach a refusal receipt or the line pi prints (issue 45 item 7).
SECTIONS_SECRET = "ghp_" + "Q7" * 18
SECTIONS_REPLY = f"## Goal\n- ship it with {SECTIONS_SECRET}\nthe summary ends here, unfinished"


class FakeSummaryProvider:
    """An OpenAI-compatible ``/v1/chat/completions`` (not streamed) that fails as ``mode``
    says (module docstring); ``requests`` logs each request's path. ``release`` ends a
    ``slow`` wait early (the server stops cleanly)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.requests: list[str] = []
        self.release = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(size)
                owner.requests.append(self.path)
                if owner.mode == "500":
                    return self._send(500, {"error": {"message": "fake provider failure"}})
                if owner.mode == "slow":
                    owner.release.wait(SLOW_SECONDS)
                text = (
                    ""
                    if owner.mode == "empty"
                    else SECTIONS_REPLY
                    if owner.mode == "sections"
                    else "## Goal\n- late\n## Progress\n## Next steps\n"
                )
                self._send(
                    200,
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                    },
                )

            def _send(self, status: int, value: Any) -> None:
                data = json.dumps(value).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client went away (a cancelled summary)
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> FakeSummaryProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
