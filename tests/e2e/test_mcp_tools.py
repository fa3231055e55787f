"""Issue 39, "Done when": a model that calls continuity's MCP ``search`` tool from inside each
real harness (Claude Code, Codex, pi) gets rows of an earlier session, as the fake model's
request log shows.

Per harness, in a throwaway world: ``hooks install H`` (which now registers continuity's tools:
Claude Code its MCP server and the allow rule, Codex ``[mcp_servers.continuity]``, pi the
extension's own tools), the daemon up; session A, one prompt holding a code word, captured
live; then session B, whose prompt holds ``[mcp-search:WORD]``: the fake model finds
continuity's search tool among the tools the harness offers (loading it first where the harness
defers MCP tools: Claude Code's ``ToolSearch``, Codex's ``tool_search``) and calls it with
``{"query": WORD}``. The next model request carries the tool's result: it must hold a hit of
session A (its key, seq and a snippet with the word). ``hooks uninstall`` then restores the
harness's settings byte for byte.

Codex offers MCP tools only through ``tool_search``, and ``tool_search`` only for a model it
knows (with ``gpt-fake`` it offers no MCP tool at all: Codex 0.171 defers every MCP tool,
``tool_search_always_defer_mcp_tools``), so Codex's worlds name a model Codex knows
(``conftest.CODEX_MODEL``), still served by the fake model.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import HARNESSES, World, until
from tests.e2e.fakemodel import CONTINUITY_SEARCH, _qualified, offered_names

#: The name each harness's model sees continuity's search tool by (from the request log).
SEARCH_NAMES = {
    "claude-code": "mcp__continuity__search",
    "codex": "mcp__continuity__search",
    "pi": "continuity_search",
}


def _is_search_call(name: Any, namespace: Any = None) -> bool:
    return bool(CONTINUITY_SEARCH.match(_qualified(name, namespace)))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _text(
                b.get("text")
                if isinstance(b, dict) and "text" in b
                else b.get("content")
                if isinstance(b, dict)
                else b
            )
            for b in content
        )
    return "" if content is None else json.dumps(content)


def search_results(body: dict[str, Any]) -> list[str]:
    """The texts of the results of continuity's search calls in one model request (Anthropic
    ``tool_result`` blocks, Responses ``function_call_output`` items, Chat ``tool``
    messages), matched to their calls by id."""
    out: list[str] = []
    if isinstance(body.get("input"), list):  # Responses (Codex)
        ids = {
            i.get("call_id")
            for i in body["input"]
            if isinstance(i, dict)
            and i.get("type") == "function_call"
            and _is_search_call(i.get("name"), i.get("namespace"))
        }
        return [
            _text(i.get("output"))
            for i in body["input"]
            if isinstance(i, dict)
            and i.get("type") == "function_call_output"
            and i.get("call_id") in ids
        ]
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    ids = set()
    for m in messages:
        content = m.get("content")
        for b in content if isinstance(content, list) else []:
            if (
                isinstance(b, dict)
                and b.get("type") == "tool_use"
                and _is_search_call(b.get("name"))
            ):
                ids.add(b.get("id"))
        for c in m.get("tool_calls") or []:
            if isinstance(c, dict) and _is_search_call((c.get("function") or {}).get("name")):
                ids.add(c.get("id"))
    for m in messages:
        content = m.get("content")
        for b in content if isinstance(content, list) else []:
            if (
                isinstance(b, dict)
                and b.get("type") == "tool_result"
                and b.get("tool_use_id") in ids
            ):
                out.append(_text(b.get("content")))
        if m.get("role") == "tool" and m.get("tool_call_id") in ids:
            out.append(_text(m.get("content")))
    return out


def _answer(text: str) -> dict[str, Any]:
    """The tool's JSON answer in a result text (Codex puts "Wall time: ... Output:" first)."""
    return json.loads(text[text.index("{") :])


def _prompt_rows(world: World, word: str) -> list[dict[str, Any]]:
    # no hit yet exits 1, as grep (issue 45 item 8): polled until one is there
    return [
        json.loads(line)
        for line in world.continuity("search", word, "--json", check=False).stdout.splitlines()
    ]


@pytest.mark.parametrize("harness", HARNESSES)
def test_mcp_search_inside_the_harness_returns_rows_of_an_earlier_session(
    harness: str, clis: dict[str, Path], fake_model: Any, tmp_path: Path
) -> None:
    """Session B's model calls continuity's search tool (by the name this harness gives it)
    and the next request carries session A's hit: its key, seq and the word; uninstall
    restores the settings byte for byte; doctor's mcp check is ok meanwhile."""
    world = World(tmp_path / "world", harness, clis[harness], fake_model)
    before = world.settings_snapshot()
    tag = uuid.uuid4().hex[:8]
    word = f"zebra{tag}"
    try:
        installed = world.continuity_json("hooks", "install", harness)
        assert installed["mcp"]["tools"]["search"] == SEARCH_NAMES[harness], installed
        world.start_daemon()
        prompt_a = f"Task A {tag}: note the code word {word} for later"
        world.run_harness(prompt_a)
        key_a = until(
            lambda: next(
                (h["session"] for h in _prompt_rows(world, word) if h["role"] == "user"), None
            ),
            "session A's prompt row",
        )
        doctor = json.loads(
            world.continuity("doctor", "--json", "--harness", harness, check=False).stdout
        )
        mcp = [c for c in doctor["checks"] if c["check"] == "mcp"]
        assert [c["status"] for c in mcp] == ["ok"], mcp
        assert mcp[0]["data"]["tools"]["search"] == SEARCH_NAMES[harness]
        prompt_b = f"Task B {tag}: [mcp-search:{word}] what did we do before?"
        world.run_harness(prompt_b)
        requests = [r["body"] for r in world.requests_with(prompt_b)]
        assert requests, "no model request of session B"
        offered = set().union(*(offered_names(b) for b in requests))
        assert SEARCH_NAMES[harness] in offered, sorted(offered)
        results = [t for b in requests for t in search_results(b)]
        assert results, json.dumps(requests[-1])[:4000]
        found = _answer(results[0])
        hits = [h for h in found["hits"] if h["session"] == key_a]
        assert hits, found
        assert any(word in h["snippet"] for h in hits)
        assert all(h["show"] == f"continuity show {key_a} --seq {h['seq']}" for h in hits)
        world.stop_daemon()
    finally:
        world.close()
        (world.root / "model-requests.json").write_text(
            json.dumps(world.requests_with(""), indent=1, ensure_ascii=False)
        )
    world.continuity_json("hooks", "uninstall", harness)
    assert world.settings_snapshot() == before
    if harness == "claude-code":  # Claude Code's own state keeps no server of ours
        state = json.loads((world.home / ".claude.json").read_text())
        assert "continuity" not in (state.get("mcpServers") or {})


def test_search_results_reads_each_protocol() -> None:
    """search_results pairs each protocol's search call with its result, and only those."""
    anthropic = {
        "messages": [
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "mcp__continuity__search"},
                    {"type": "tool_use", "id": "t2", "name": "Bash"},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "HIT"}],
                    },
                    {"type": "tool_result", "tool_use_id": "t2", "content": "ls"},
                ],
            },
        ]
    }
    assert search_results(anthropic) == ["HIT"]
    responses = {
        "input": [
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "search",
                "namespace": "mcp__continuity",
            },
            {"type": "function_call_output", "call_id": "c1", "output": "HIT"},
        ]
    }
    assert search_results(responses) == ["HIT"]
    chat = {
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [{"id": "x", "function": {"name": "continuity_search"}}],
            },
            {"role": "tool", "tool_call_id": "x", "content": "HIT"},
        ]
    }
    assert search_results(chat) == ["HIT"]
    assert re.match(CONTINUITY_SEARCH, "mcp__continuity__search")
    assert _answer('Wall time: 0.4 seconds\nOutput:\n{"hits": []}') == {"hits": []}
