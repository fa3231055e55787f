"""The fake model server refuses unpaired tool calls the way the provider APIs do (issue 13):
HTTP 400 with the provider's error shape, so an e2e run that sends a broken history fails."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.e2e.fakemodel import (
    REPLY_TEXT,
    SHELL_COMMAND,
    FakeModel,
    Step,
    Story,
    anthropic_events,
    chat_events,
    gemini_response,
    story_step,
    unpaired,
)

USE = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}


@pytest.mark.parametrize(
    ("path", "body", "ok"),
    [
        (
            "/v1/messages",
            {
                "messages": [
                    {"role": "assistant", "content": [USE]},
                    {"role": "user", "content": [RESULT]},
                ]
            },
            True,
        ),
        (
            "/v1/messages",
            {
                "messages": [
                    {"role": "assistant", "content": [USE]},
                    {"role": "user", "content": "next"},
                ]
            },
            False,
        ),
        ("/v1/messages", {"messages": [{"role": "user", "content": [RESULT]}]}, False),
        (
            "/v1/messages",
            {
                "messages": [
                    {"role": "assistant", "content": [USE]},
                    {"role": "user", "content": [RESULT, RESULT]},
                ]
            },
            False,
        ),
        (
            "/v1/responses",
            {
                "input": [
                    {"type": "function_call", "call_id": "c"},
                    {"type": "function_call_output", "call_id": "c"},
                ]
            },
            True,
        ),
        ("/v1/responses", {"input": [{"type": "function_call", "call_id": "c"}]}, False),
        ("/v1/responses", {"input": [{"type": "function_call_output", "call_id": "c"}]}, False),
        (
            "/v1/chat/completions",
            {
                "messages": [
                    {"role": "assistant", "tool_calls": [{"id": "c"}]},
                    {"role": "tool", "tool_call_id": "c"},
                    {"role": "user", "content": "x"},
                ]
            },
            True,
        ),
        (
            "/v1/chat/completions",
            {
                "messages": [
                    {"role": "assistant", "tool_calls": [{"id": "c"}, {"id": "d"}]},
                    {"role": "tool", "tool_call_id": "c"},
                    {"role": "user", "content": "x"},
                ]
            },
            False,
        ),
        ("/v1/chat/completions", {"messages": [{"role": "tool", "tool_call_id": "c"}]}, False),
    ],
)
def test_unpaired_histories_are_told_apart(path: str, body: dict, ok: bool) -> None:
    assert (unpaired(path, body) is None) is ok


def test_the_server_answers_400_in_the_providers_shape() -> None:
    server = FakeModel().start()
    try:
        bodies = {
            "/v1/messages": {
                "messages": [
                    {"role": "assistant", "content": [USE]},
                    {"role": "user", "content": "next"},
                ]
            },
            "/v1/responses": {"input": [{"type": "function_call", "call_id": "c9"}]},
        }
        for path, body in bodies.items():
            request = urllib.request.Request(
                server.url + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
            )
            with pytest.raises(urllib.error.HTTPError) as caught:
                urllib.request.urlopen(request, timeout=10)
            assert caught.value.code == 400
            error = json.loads(caught.value.read())
            if path == "/v1/messages":
                assert error["type"] == "error"
                assert error["error"]["type"] == "invalid_request_error"
                assert "toolu_1" in error["error"]["message"]
            else:
                assert error["error"]["message"] == "No tool output found for function call c9."
        assert [r["path"] for r in server.rejected] == list(bodies)
    finally:
        server.stop()


GEMINI = "/v1beta/models/gemini-fake:streamGenerateContent"
SHELL_DECL = {"functionDeclarations": [{"name": "run_shell_command"}]}
CALL = {"functionCall": {"id": "c1", "name": "run_shell_command", "args": {}}}
ANSWER = {"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {}}}


@pytest.mark.parametrize(
    ("contents", "ok"),
    [
        ([{"role": "user", "parts": [{"text": "hi"}]}], True),
        ([{"role": "model", "parts": [CALL]}, {"role": "user", "parts": [ANSWER]}], True),
        # Gemini CLI 0.61.0's resume sent this: two responses for one call
        ([{"role": "model", "parts": [CALL]}, {"role": "user", "parts": [ANSWER, ANSWER]}], False),
        ([{"role": "model", "parts": [CALL]}, {"role": "user", "parts": [{"text": "x"}]}], False),
        ([{"role": "user", "parts": [ANSWER]}], False),
    ],
)
def test_gemini_pairing_is_the_gemini_apis(contents: list, ok: bool) -> None:
    problem = unpaired(GEMINI, {"contents": contents})
    assert (problem is None) is ok
    if problem is not None:
        assert problem[1]["error"]["status"] == "INVALID_ARGUMENT"


def test_gemini_script_calls_the_shell_then_answers() -> None:
    first = gemini_response(
        {"contents": [{"role": "user", "parts": [{"text": "go"}]}], "tools": [SHELL_DECL]}
    )
    (part,) = first["candidates"][0]["content"]["parts"]
    assert part["functionCall"]["name"] == "run_shell_command"
    assert part["functionCall"]["args"] == {"command": SHELL_COMMAND}
    after = gemini_response(
        {
            "contents": [{"role": "model", "parts": [CALL]}, {"role": "user", "parts": [ANSWER]}],
            "tools": [SHELL_DECL],
        }
    )
    assert after["candidates"][0]["content"]["parts"] == [{"text": REPLY_TEXT}]


def _chat_call(body: dict) -> dict | None:
    """The function of the tool call in a Chat Completions reply's chunks, else None."""
    for _, chunk in chat_events(body):
        for choice in chunk.get("choices", []) if isinstance(chunk, dict) else []:
            for call in choice["delta"].get("tool_calls") or []:
                return call["function"]
    return None


def test_a_shell_marker_sets_the_chat_shell_calls_command() -> None:
    """``[shell:ls]`` in the last user text makes the shell call run ``ls`` (the recorded Qwen
    Code source of ``test_qwen_live.MATRIX_SOURCE``); without it, ``SHELL_COMMAND``."""
    tools = [{"type": "function", "function": {"name": "run_shell_command", "parameters": {}}}]
    asked = {
        "messages": [{"role": "user", "content": [{"type": "text", "text": "list [shell:ls]"}]}],
        "tools": tools,
    }
    assert json.loads(_chat_call(asked)["arguments"]) == {"command": "ls"}
    plain = {"messages": [{"role": "user", "content": "list"}], "tools": tools}
    assert json.loads(_chat_call(plain)["arguments"]) == {"command": SHELL_COMMAND}


# --------------------------------------------------------------------------- stories

STORY = Story(
    prompt="fix the stamp",
    reply="Fixed.",
    steps=(
        Step("Bash", {"command": "pytest"}, "Running the tests."),
        Step("Read", {"file_path": "/p/export.py"}),
    ),
)
TOOLS = [{"name": "Bash"}, {"name": "Read"}]


def _turn(*results: str, prompt: str = "please fix the stamp") -> dict:
    """An Anthropic body: the user's prompt, then one call and result per ``results``."""
    messages: list[dict] = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
    for i, text in enumerate(results):
        messages += [
            {"role": "assistant", "content": [{**USE, "id": f"t{i}"}]},
            {"role": "user", "content": [{**RESULT, "tool_use_id": f"t{i}", "content": text}]},
        ]
    return {"model": "m", "tools": TOOLS, "messages": messages}


def _reply(events: list) -> list:
    """The content blocks and stop reason of an SSE reply, without its random ids."""
    out = []
    for name, data in events:
        if name == "content_block_start":
            block = dict(data["content_block"])
            block.pop("id", None)
            out.append(block)
        elif name == "content_block_delta":
            out.append(data["delta"])
        elif name == "message_delta":
            out.append(data["delta"]["stop_reason"])
    return out


def test_a_story_takes_one_step_per_tool_result_then_answers() -> None:
    assert story_step(STORY, _turn()) == STORY.steps[0]
    assert story_step(STORY, _turn("1 failed")) == STORY.steps[1]
    assert story_step(STORY, _turn("1 failed", "def stamp")) == "Fixed."
    assert _reply(anthropic_events(_turn(), story=STORY)) == [
        {"type": "text", "text": ""},
        {"type": "text_delta", "text": "Running the tests."},
        {"type": "tool_use", "name": "Bash", "input": {}},
        {"type": "input_json_delta", "partial_json": '{"command": "pytest"}'},
        "tool_use",
    ]
    assert _reply(anthropic_events(_turn("a", "b"), story=STORY)) == [
        {"type": "text", "text": ""},
        {"type": "text_delta", "text": "Fixed."},
        "end_turn",
    ]


def test_requests_outside_the_story_get_the_default_script() -> None:
    """Another prompt, a request offering no tools, or no story at all: the default script
    (a call of ``SHELL_COMMAND``, then ``REPLY_TEXT``), as without stories."""
    other = _turn(prompt="something else")
    no_tools = {**_turn(), "tools": []}
    assert story_step(STORY, other) is None and story_step(STORY, no_tools) is None
    for body in (other, _turn()):
        default = _reply(anthropic_events(body))
        assert default[1] == {
            "type": "input_json_delta",
            "partial_json": json.dumps(
                {"command": SHELL_COMMAND, "description": "Run the e2e command"}
            ),
        }
    assert _reply(anthropic_events(other, story=STORY)) == _reply(anthropic_events(other))
    assert _reply(anthropic_events(no_tools, story=STORY))[1] == {
        "type": "text_delta",
        "text": REPLY_TEXT,
    }
