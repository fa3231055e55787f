"""An OpenAI Agents SDK agent whose session lives in continuity (issue 46 item 2).

Run it offline: ``python examples/agents_sdk_agent.py [WORKSPACE]`` (needs ``pip install
'continuity[agents]'``; no API key, no network). The model is scripted (``ScriptedModel``, the
SDK's ``Model`` interface answering from a list): the first run calls a tool (``word_count``)
and answers; the second run, on the same ``ContinuitySession``, must see the first run's items
(request, tool call, tool output, answer) in its model input, which the script checks and
prints. Then ``continuity --home WORKSPACE sessions`` and ``show chat-1`` show the session.

Prints one JSON object: what each model call received (``inputs``: item types and roles per
call), the two final outputs and the workspace; exits 1 when the second run's input lacks the
first run's items.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from typing import Any

from agents import (
    Agent,
    Model,
    ModelResponse,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from continuity.adapters.agents_sdk import ContinuitySession


def message(text: str, n: int) -> ResponseOutputMessage:
    """An assistant message output item with ``text``."""
    return ResponseOutputMessage(
        id=f"msg_{n}",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


class ScriptedModel(Model):
    """A ``Model`` answering each call with the next list of output items of ``script``,
    recording every call's input items in ``inputs`` (offline: no provider is called)."""

    def __init__(self, script: list[list[Any]]) -> None:
        self.script = list(script)
        self.inputs: list[list[dict[str, Any]]] = []

    async def get_response(
        self,
        system_instructions,
        input,
        model_settings,
        tools,
        output_schema,
        handoffs,
        tracing,
        *,
        previous_response_id,
        conversation_id,
        prompt,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else input
        self.inputs.append([dict(i) for i in items])
        if not self.script:
            raise RuntimeError("the scripted model has no answer left")
        return ModelResponse(output=self.script.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):  # pragma: no cover - not used
        raise NotImplementedError("ScriptedModel answers get_response only")


@function_tool
def word_count(text: str) -> int:
    """Count the words of ``text``."""
    return len(text.split())


async def main(home: str) -> int:
    set_tracing_disabled(True)
    model = ScriptedModel(
        [
            [
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id="call_1",
                    name="word_count",
                    arguments=json.dumps({"text": "the quick brown fox"}),
                    id="fc_1",
                    status="completed",
                )
            ],
            [message("The text has 4 words.", 1)],
            [message("Earlier you asked me to count the words of 'the quick brown fox': 4.", 2)],
        ]
    )
    agent = Agent(
        name="counter", instructions="Count words with the tool.", model=model, tools=[word_count]
    )
    session = ContinuitySession("chat-1", home=home)
    try:
        first = await Runner.run(agent, "How many words in 'the quick brown fox'?", session=session)
        second = await Runner.run(agent, "What did I ask you before?", session=session)
    finally:
        session.close()
    second_input = model.inputs[-1]
    kinds = [i.get("type") or i.get("role") for i in second_input]
    texts = json.dumps(second_input)
    remembered = (
        "function_call" in kinds
        and "function_call_output" in kinds
        and "the quick brown fox" in texts
        and "The text has 4 words." in texts
    )
    print(
        json.dumps(
            {
                "workspace": home,
                "session": session.session_id,
                "record": str(session.path),
                "inputs": [[i.get("type") or "message", i.get("role")] for i in second_input],
                "calls": len(model.inputs),
                "first_output": first.final_output,
                "second_output": second.final_output,
                "second_run_saw_first": remembered,
            }
        )
    )
    return 0 if remembered else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())))
