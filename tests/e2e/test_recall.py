"""End to end with the real Claude Code, Codex and pi (issue 40, "Done when"): a paraphrased
prompt receives the earlier session's decision, and an unrelated prompt receives nothing.

Per harness, in a throwaway world (``conftest.World``):

1. ``hooks install``, the daemon; session A runs prompt ``PA`` (the fake model: one shell call,
   then text); a decision is remembered for A: ``continuity remember "…" --type decision
   --source A``;
2. session B's prompt ``PB`` asks the decision's question in other words: a model request of
   B (the fake model's log) holds the recall block (``RECALL_HEADING``, then the evidence
   framing), injected by the UserPromptSubmit hook (Claude Code, Codex) or pi's
   ``before_agent_start``, and it quotes the decision;
3. session C's prompt ``PC`` is unrelated to everything: no request of C holds a recall block,
   and the evidence framing appears there only inside the session-start brief (which C gets,
   as every new session of a project with earlier work: issue 39).

The same command (the fake model's ``SHELL_COMMAND``) runs in every session: PreToolUse asks,
and gets nothing (the last working invocation is the same text).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from continuity.checkpoints.recovery import FRAMING
from continuity.retrieval.at_action import RECALL_HEADING
from tests.e2e.conftest import HARNESSES, World, run_recorded
from tests.e2e.test_harnesses import BRIEF_HEAD, _new_session, _recovery_text

DECISION = (
    "Decision: exported invoice reports are written as CSV files, never Parquet, "
    "because finance opens them in Excel"
)
PA = "Set up the nightly invoice export for the finance team"
PB = "Which file format should the invoice export job save into?"
PC = "Write a haiku about autumn leaves falling"


@dataclass
class RecallRun:
    world: World
    key_a: str = ""
    requests: dict[str, list[Any]] = field(default_factory=dict)
    failed: str | None = None


def _scenario(rec: RecallRun) -> None:
    w = rec.world
    w.continuity_json("hooks", "install", w.harness)
    w.start_daemon()
    w.run_harness(PA)
    rec.key_a = _new_session(w, set(), PA)
    w.continuity("remember", DECISION, "--type", "decision", "--source", rec.key_a)
    for name, prompt in (("b", PB), ("c", PC)):
        w.run_harness(prompt)
        rec.requests[name] = [r["body"] for r in w.requests_with(prompt)]
    w.stop_daemon()


@pytest.fixture(scope="module", params=HARNESSES)
def run(
    request: pytest.FixtureRequest,
    clis: dict[str, Path],
    fake_model: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RecallRun]:
    harness = request.param
    world = World(tmp_path_factory.mktemp(f"recall-{harness}"), harness, clis[harness], fake_model)
    rec = RecallRun(world)
    run_recorded(world, rec, _scenario)
    yield rec


def _ok(rec: RecallRun) -> RecallRun:
    if rec.failed:
        pytest.fail(f"{rec.world.harness}: {rec.failed}", pytrace=False)
    return rec


def _recall_blocks(body: dict[str, Any]) -> list[str]:
    """Each recall block in a model request, after its ``RECALL_HEADING``: to the end of its
    text or its first blank line (the block has none; Claude Code goes on in the same text
    with its own lines), read from the request as JSON text (the harnesses wrap injected text
    differently)."""
    text = json.dumps(body, ensure_ascii=False)
    head = json.dumps(RECALL_HEADING, ensure_ascii=False)[1:-1]
    out = []
    for part in text.split(head)[1:]:
        end = part.find('"')
        while end > 0 and part[end - 1] == "\\":
            end = part.find('"', end + 1)
        out.append(json.loads('"' + part[:end] + '"').split("\n\n", 1)[0])
    return out


def test_a_paraphrased_prompt_receives_the_earlier_decision(run: RecallRun) -> None:
    """A request of B holds the recall block, framed as evidence, quoting A's decision (the
    decision's words differ from B's prompt)."""
    rec = _ok(run)
    assert rec.requests["b"], "B's model requests were not logged"
    blocks = [b for body in rec.requests["b"] for b in _recall_blocks(body)]
    assert blocks, json.dumps(rec.requests["b"][0])[:3000]
    first = blocks[0]
    assert first.startswith(FRAMING + "\n"), first
    assert DECISION in first and f"session {rec.key_a}" in first, first
    assert len(RECALL_HEADING) + len(first) <= 1_200


def test_an_unrelated_prompt_receives_nothing(run: RecallRun) -> None:
    """No request of C holds a recall block; the framing appears in C's requests only inside
    the session-start brief (each request: as many times as the brief holds it)."""
    rec = _ok(run)
    assert rec.requests["c"], "C's model requests were not logged"
    for body in rec.requests["c"]:
        assert _recall_blocks(body) == [], json.dumps(body)[:3000]
        brief = _recovery_text(rec.world.harness, body, BRIEF_HEAD) or ""
        assert json.dumps(body, ensure_ascii=False).count(FRAMING) == brief.count(FRAMING)
