"""A LangGraph agent whose threads survive a crash, kept in a continuity workspace.

    pip install 'continuity[langgraph]'
    python examples/langgraph_agent.py --home ./w --thread t1 --say hello \\
        --say "what is 2+2?" --crash
    python examples/langgraph_agent.py --home ./w --thread t1 --say "and now?"
    continuity sessions --home ./w        # the thread t1 is a session of harness langgraph
    continuity continue t1 --home ./w     # its bounded continuation

The "model" is scripted (it answers ``echo N: <the request>``), so the example runs offline and
its output is exact. Each ``--say`` is one turn of the thread; ``--crash`` ends the process
right after the last turn's checkpoint without closing anything (``os._exit``), as a kill
would. Prints one JSON object: the thread, how many messages the thread held before this run
(``resumed_from``) and every message of its state as ``[type, content]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from continuity.adapters.langgraph import ContinuitySaver


def scripted_model(state: MessagesState) -> dict:
    """The model node: answers the last request with ``echo N: <its text>``, N counting the
    answers of the thread (so a resumed thread goes on counting)."""
    answers = sum(1 for m in state["messages"] if isinstance(m, AIMessage))
    request = state["messages"][-1].content
    return {"messages": [AIMessage(f"echo {answers + 1}: {request}")]}


def build(saver: ContinuitySaver):  # type: ignore[no-untyped-def]
    graph = StateGraph(MessagesState)
    graph.add_node("model", scripted_model)
    graph.add_edge(START, "model")
    return graph.compile(checkpointer=saver)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", help="the continuity workspace folder (default: the CLI's)")
    parser.add_argument("--thread", default="demo", help="the LangGraph thread_id")
    parser.add_argument("--say", action="append", default=[], help="a user turn (repeatable)")
    parser.add_argument(
        "--crash", action="store_true", help="exit without closing anything after the last turn"
    )
    args = parser.parse_args(argv)

    saver = ContinuitySaver.open(args.home)
    app = build(saver)
    config = {"configurable": {"thread_id": args.thread}}
    before = len(app.get_state(config).values.get("messages", []))
    for text in args.say:
        app.invoke({"messages": [HumanMessage(text)]}, config)
    messages = app.get_state(config).values.get("messages", [])
    print(
        json.dumps(
            {
                "thread": args.thread,
                "resumed_from": before,
                "messages": [[m.type, m.content] for m in messages],
            }
        )
    )
    sys.stdout.flush()
    if args.crash:
        os._exit(0)  # no close, no cleanup: what the checkpoints hold is all there is
    saver.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
