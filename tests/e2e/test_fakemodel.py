"""The fake model server refuses unpaired tool calls the way the provider APIs do (issue 13):
HTTP 400 with the provider's error shape, so an e2e run that sends a broken history fails."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.e2e.fakemodel import FakeModel, unpaired

USE = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}


@pytest.mark.parametrize(("path", "body", "ok"), [
    ("/v1/messages", {"messages": [{"role": "assistant", "content": [USE]},
                                   {"role": "user", "content": [RESULT]}]}, True),
    ("/v1/messages", {"messages": [{"role": "assistant", "content": [USE]},
                                   {"role": "user", "content": "next"}]}, False),
    ("/v1/messages", {"messages": [{"role": "user", "content": [RESULT]}]}, False),
    ("/v1/messages", {"messages": [{"role": "assistant", "content": [USE]},
                                   {"role": "user", "content": [RESULT, RESULT]}]}, False),
    ("/v1/responses", {"input": [{"type": "function_call", "call_id": "c"},
                                 {"type": "function_call_output", "call_id": "c"}]}, True),
    ("/v1/responses", {"input": [{"type": "function_call", "call_id": "c"}]}, False),
    ("/v1/responses", {"input": [{"type": "function_call_output", "call_id": "c"}]}, False),
    ("/v1/chat/completions", {"messages": [
        {"role": "assistant", "tool_calls": [{"id": "c"}]},
        {"role": "tool", "tool_call_id": "c"}, {"role": "user", "content": "x"}]}, True),
    ("/v1/chat/completions", {"messages": [
        {"role": "assistant", "tool_calls": [{"id": "c"}, {"id": "d"}]},
        {"role": "tool", "tool_call_id": "c"}, {"role": "user", "content": "x"}]}, False),
    ("/v1/chat/completions", {"messages": [{"role": "tool", "tool_call_id": "c"}]}, False),
])
def test_unpaired_histories_are_told_apart(path: str, body: dict, ok: bool) -> None:
    assert (unpaired(path, body) is None) is ok


def test_the_server_answers_400_in_the_providers_shape() -> None:
    server = FakeModel().start()
    try:
        bodies = {"/v1/messages": {"messages": [{"role": "assistant", "content": [USE]},
                                                {"role": "user", "content": "next"}]},
                  "/v1/responses": {"input": [{"type": "function_call", "call_id": "c9"}]}}
        for path, body in bodies.items():
            request = urllib.request.Request(server.url + path, json.dumps(body).encode(),
                                             {"Content-Type": "application/json"})
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
