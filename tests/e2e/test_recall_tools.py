"""End to end with the real Claude Code (issue 40): recall before a tool runs. Claude Code's
PreToolUse hook asks the daemon before an edit and before a shell command, and the model's
next request carries the answer.

Scripted turns (``fakemodel.Story``, Anthropic Messages only): session A runs ``echo
export-writer-ready --verbose`` and writes ``export_writer.py``; a decision naming that file is
remembered for A. Session B runs ``echo export-writer-check`` (the same program, other
arguments) and edits ``export_writer.py`` (its prompt shares no word with A: the prompt's own
recall is empty, and would otherwise already have quoted A's rows): B's requests after those calls hold recall blocks
naming A's working invocation and the file's decision. Codex's and pi's tool recall are
covered by ``tests/daemon`` (Codex's hook is the same endpoint; pi's extension is run under
Node).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from continuity.retrieval.at_action import RECALL_HEADING
from tests.e2e.conftest import World, run_recorded, until
from tests.e2e.fakemodel import Step, Story
from tests.e2e.test_harnesses import _new_session
from tests.e2e.test_recall import _recall_blocks

DECISION = "Decision: export_writer.py keeps one open file handle per export"


class ToolRun:
    def __init__(self, world: World) -> None:
        self.world = world
        self.key_a = ""
        self.requests: list[Any] = []
        self.failed: str | None = None


def _claude(w: World, prompt: str) -> None:
    argv = [str(w.cli), "-p", prompt, "--allowedTools", "Bash,Read,Write,Edit"]
    done = subprocess.run(
        argv,
        env=w.env(),
        cwd=w.project,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"claude exited {done.returncode}:\n{done.stdout}\n{done.stderr}"


def _scenario(rec: ToolRun) -> None:
    w, model = rec.world, rec.world.model
    target = str(w.project / "export_writer.py")
    # B's prompt shares no word with A's rows: the prompt's own recall (which would quote A's
    # rows first, and the same rows are never given twice) stays empty
    pa, pb = "Story alpha: prepare the export writer", "Polish the lighthouse rhythm"
    w.continuity_json("hooks", "install", w.harness)
    w.start_daemon()
    try:
        model.story = Story(
            pa,
            (
                Step("Bash", {"command": "echo export-writer-ready --verbose"}),
                Step("Write", {"file_path": target, "content": "ROWS = []\n"}),
            ),
            "Prepared.",
        )
        _claude(w, pa)
        rec.key_a = _new_session(w, set(), pa)
        until(
            lambda: any(
                cp["trigger"] == "session_end"
                for cp in w.continuity_json("checkpoints", rec.key_a)["checkpoints"]
            ),
            "A's end: every row of A imported",
        )
        w.continuity("remember", DECISION, "--type", "decision", "--source", rec.key_a)
        model.story = Story(
            pb,
            (
                Step("Bash", {"command": "echo export-writer-check"}),
                Step("Read", {"file_path": target}),
                Step(
                    "Edit",
                    {"file_path": target, "old_string": "ROWS = []", "new_string": "ROWS = [1]"},
                ),
            ),
            "Touched up.",
        )
        _claude(w, pb)
        rec.requests = [r["body"] for r in w.requests_with(pb)]
    finally:
        model.story = None
    w.stop_daemon()


@pytest.fixture(scope="module")
def run(
    clis: dict[str, Path], fake_model: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ToolRun]:
    world = World(
        tmp_path_factory.mktemp("recall-tools-claude-code"),
        "claude-code",
        clis["claude-code"],
        fake_model,
    )
    rec = ToolRun(world)
    run_recorded(world, rec, _scenario)
    yield rec


def _blocks(rec: ToolRun) -> list[str]:
    if rec.failed:
        pytest.fail(rec.failed, pytrace=False)
    assert rec.requests, "B's model requests were not logged"
    return list(dict.fromkeys(b for body in rec.requests for b in _recall_blocks(body)))


def test_a_shell_command_gets_its_last_working_invocation(run: ToolRun) -> None:
    blocks = _blocks(run)
    found = [b for b in blocks if "`echo export-writer-ready --verbose`" in b]
    assert found, blocks
    assert f"last worked (exit 0) in session {run.key_a}" in found[0]


def test_an_edit_gets_the_files_decision(run: ToolRun) -> None:
    blocks = _blocks(run)
    assert any(DECISION in b for b in blocks), blocks
    assert all(len(RECALL_HEADING) + len(b) <= 1_200 for b in blocks)
