"""Every pair resumes (issue 42, Done when): for each source → target pair among the harnesses
with live capture, recovery and resume (``continuity harnesses --json``: ``resume`` true and a
``verified_version``), a session the source's real CLI wrote is imported, given a continuation
checkpoint when it has a turn to summarise (``compact --force``), resumed into the target
(``resume KEY --in TARGET``), and the target's real CLI runs one headless turn on the written
session, offline against ``fakemodel.FakeModel``, with the command ``resume`` printed.

Each pair asserts, from the fake model's request log: the run exits 0; no request was refused
(the fake server answers a history with a tool call and no result, or a result with no call,
with that provider's 400, as the real APIs do); the request carrying the new prompt holds the
copy notice, the summary (when there is one), the source's last request verbatim, the kept tool
result of the source's last turn and the prompt, in that order, every call answered; and the
turn landed in the written session (the file grew by it, or OpenCode's own export holds it).

The sources are sessions each CLI wrote itself: Claude Code, Codex and pi from
``../shared/data/real-harness`` (two turns; the second lists README.md and calc.py), Qwen Code
and Copilot CLI from ``test_qwen_live.MATRIX_SOURCE`` and ``test_copilot_live.MATRIX_SOURCE``
(the same two turns), OpenCode and Gemini CLI from their ``tests/fixtures`` recordings
(``README.md`` in each says how they were recorded). The recorded project folder is rewritten to the test
world's, as a user's own folder would be. A target's world is its live test's (``World`` and
its subclasses), so the CLI runs as it does there.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from continuity.formats import registry
from tests.e2e.conftest import World
from tests.e2e.fakemodel import FakeModel, unpaired
from tests.e2e.test_copilot_live import MATRIX_SOURCE as COPILOT_SOURCE, REPO, CopilotWorld
from tests.e2e.test_gemini_live import GeminiWorld
from tests.e2e.test_import_harnesses import ensure_cli
from tests.e2e.test_opencode import OpenCodeWorld, ensure_opencode
from tests.e2e.test_qwen_live import MATRIX_SOURCE as QWEN_SOURCE, QwenWorld
from tests.e2e.test_resume import DATA, SOURCES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROMPT = "Matrix turn: carry on from the continuation"
#: The compaction budget that summarises the first turn and keeps the last one verbatim.
BUDGET = "3000"
#: The fake model's shell command's output: the tool result every recorded fixture turn holds.
TOOL_RAN = "continuity-e2e-tool-ran"


@dataclass(frozen=True)
class Source:
    """A session one harness's CLI wrote: ``path`` (a file or a folder) is copied into the
    world with ``project`` (the folder it was recorded in) rewritten to the world's project;
    ``request`` is its last request, ``result`` a word of its last turn's tool result;
    ``turns`` its complete turns (two: one is summarised); ``cut`` drops the lines from the
    first one holding it on (a recording's unanswered last prompt)."""

    path: Path
    project: str
    request: str
    result: str
    turns: int
    cut: str | None = None


def _real(harness: str) -> Source:
    rel, project, request = SOURCES[harness]
    return Source(DATA / rel, project, request, "calc.py", 2)


MATRIX_SOURCES: dict[str, Source] = {
    "claude-code": _real("claude-code"),
    "codex": _real("codex"),
    "pi": _real("pi"),
    # one turn (`opencode run "list the files please"`), OpenCode's JSON storage layout
    "opencode": Source(
        FIXTURES / "opencode" / "json",
        "/tmp/oc-try/root/project",
        '"list the files please"',  # `opencode run` stores its prompt quoted
        TOOL_RAN,
        1,
    ),
    # the first turn of the recording: its second prompt never got an answer (README.md there)
    "gemini-cli": Source(
        FIXTURES / "gemini_cli" / "tmp",
        "/home/dev/project",
        "List the files here",
        TOOL_RAN,
        1,
        cut='{"$set":{"sessionId"',
    ),
    # two turns qwen recorded (tests/e2e/record_qwen_source.py); the second lists the project
    "qwen-code": Source(REPO / QWEN_SOURCE[0], QWEN_SOURCE[1], QWEN_SOURCE[2], "calc.py", 2),
    # two turns, the second a `bash` call listing and reading README.md and calc.py
    "copilot-cli": Source(
        REPO / COPILOT_SOURCE[0], COPILOT_SOURCE[1], COPILOT_SOURCE[2], "calc.py", 2
    ),
}


def _materialise(source: Source, into: Path, project: Path) -> Path:
    """``source.path`` copied under ``into`` with its project folder rewritten (text files;
    a SQLite file is copied as it is); returns the copy's path."""
    dest = into / source.path.name
    files = [source.path] if source.path.is_file() else sorted(source.path.rglob("*"))
    for path in files:
        if path.is_dir():
            continue
        target = dest if path == source.path else dest / path.relative_to(source.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            shutil.copyfile(path, target)
            continue
        lines = text.replace(source.project, str(project)).splitlines(keepends=True)
        if source.cut:
            at = next((i for i, line in enumerate(lines) if source.cut in line), len(lines))
            lines = lines[:at]
        target.write_text("".join(lines), encoding="utf-8")
    return dest


# ------------------------------------------------------------------------------- targets


class OpenCodeTarget(OpenCodeWorld):
    """``OpenCodeWorld`` with ``World``'s ``close`` (nothing runs in its background)."""

    def close(self) -> None:
        """Nothing to stop."""


def _grew(world: Any, written: dict[str, Any], size: int) -> bool:
    grown = Path(written["path"]).read_bytes()
    return len(grown) > size and PROMPT.encode() in grown[size:]


def _opencode_landed(world: Any, written: dict[str, Any], size: int) -> bool:
    exported = subprocess.run(
        [str(world.cli), "export", written["session_id"]],
        env=world.env(),
        cwd=world.project,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return PROMPT in exported.stdout


@dataclass(frozen=True)
class Target:
    """How a target harness's world is made and how its turn is seen to have landed."""

    make: Callable[[Path, FakeModel], Any]
    landed: Callable[[Any, dict[str, Any], int], bool] = _grew
    #: the headless command's program, as ``resume`` prints it after ``cd PROJECT && ``
    program: str = ""
    #: a second identical resume gives the same copy (issue 45 item 3); OpenCode's copies are
    #: read only through ``opencode import``, which gives each its own session: never reused
    reuses: bool = True


def _world(harness: str) -> Callable[[Path, FakeModel], Any]:
    from tests.e2e.conftest import ensure_clis

    return lambda root, model: World(root, harness, ensure_clis()[harness], model)


TARGETS: dict[str, Target] = {
    "claude-code": Target(_world("claude-code"), program="claude -p --resume "),
    "codex": Target(_world("codex"), program="codex exec resume "),
    "pi": Target(_world("pi"), program="pi -p --session "),
    "opencode": Target(
        lambda root, model: OpenCodeTarget(root, ensure_opencode(), model),
        _opencode_landed,
        program="sh -c ",
        reuses=False,
    ),
    "gemini-cli": Target(
        lambda root, model: GeminiWorld(root, "gemini-cli", ensure_cli("gemini-cli"), model),
        program="gemini --resume ",
    ),
    "qwen-code": Target(
        lambda root, model: QwenWorld(root, "qwen-code", ensure_cli("qwen-code"), model),
        program="qwen --resume ",
    ),
    "copilot-cli": Target(
        lambda root, model: CopilotWorld(root, "copilot-cli", ensure_cli("copilot-cli"), model),
        program="copilot --resume ",
    ),
}

PROVEN = tuple(
    h.name
    for h in registry.harnesses()
    if all(h.supports.get(f) for f in ("live", "recovery", "resume")) and h.verified_version
)
PAIRS = [(s, t) for s in PROVEN for t in PROVEN]


def test_every_proven_harness_is_in_the_matrix() -> None:
    """The matrix covers every harness the registry says has live capture, recovery and resume
    with a verified CLI: a harness marked so without a source and a target here fails."""
    assert len(PROVEN) >= 5, PROVEN
    assert set(PROVEN) <= set(MATRIX_SOURCES) & set(TARGETS), (
        sorted(set(PROVEN) - set(MATRIX_SOURCES)),
        sorted(set(PROVEN) - set(TARGETS)),
    )


@pytest.mark.parametrize(("source", "target"), PAIRS)
def test_resume_pair_then_a_real_turn_in_the_target(
    tmp_path: Path, fake_model: FakeModel, source: str, target: str
) -> None:
    spec, kit = MATRIX_SOURCES[source], TARGETS[target]
    world = kit.make(tmp_path / "world", fake_model)
    try:
        src = _materialise(spec, tmp_path / "source", world.project)
        world.continuity_json("import", str(src))
        sessions = [s for s in world.continuity_json("sessions") if s["harness"] == source]
        keys = [s["session"] for s in sessions if "/" not in s["session"]]
        assert len(keys) == 1, sessions
        key = keys[0]
        goal = None
        if spec.turns > 1:
            compacted = world.continuity_json("compact", key, "--force", "--budget", BUDGET)
            assert compacted["status"] == "compacted", compacted
            # "- Latest request (#N): ..." of the first turn, the summary's second line
            goal = compacted["checkpoint"]["summary"].splitlines()[1]
        assert world.continuity_json("continue", key)["request"]["text"] == spec.request

        written = world.continuity_json("resume", key, "--in", target)
        assert written["target"] == target and Path(written["path"]).is_file()
        assert written["headless"].startswith(f"cd {world.project} && {kit.program}"), written
        # issue 45 item 3: the same resume again is the same copy (nothing new written)
        if kit.reuses:
            again = world.continuity_json("resume", key, "--in", target)
            assert again == {**written, "reused": True} and written["reused"] is False
        before = {p: p.read_bytes() for p in [src, *src.rglob("*")] if p.is_file()}
        if target == "codex":  # codex exec runs in a git repository (a user's project is one)
            subprocess.run(["git", "init", "-q", str(world.project)], check=True)
        size = Path(written["path"]).stat().st_size
        rejected, first = len(fake_model.rejected), len(fake_model.requests)

        done = subprocess.run(
            ["bash", "-c", f"{written['headless']} {shlex.quote(PROMPT)}"],
            env=world.env(),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, (
            f"{target} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        assert fake_model.rejected[rejected:] == []  # no 400: every call was paired
        asked = [
            r
            for r in fake_model.model_requests(first)
            if PROMPT in json.dumps(r["body"], ensure_ascii=False) and _offers_tools(r["body"])
        ]
        assert asked, f"{target} never sent the prompt to the model"
        body = asked[0]
        assert unpaired(body["path"].split("?")[0], body["body"]) is None
        sent = json.dumps(body["body"], ensure_ascii=False)
        places = [
            sent.find(f"continues the {source} session {key}"),
            sent.find(json.dumps(goal or spec.request, ensure_ascii=False)[1:-1]),
            sent.find(json.dumps(spec.request, ensure_ascii=False)[1:-1]),
            sent.find(PROMPT),
        ]
        assert -1 not in places, (places, sent[:4000])
        assert places == sorted(places), places  # notice, summary, request, ..., the prompt
        tail = sent[places[2] : places[3]]
        assert spec.result in tail, tail[:3000]  # the last turn's kept tool result
        assert "has no recorded result" not in tail
        assert kit.landed(world, written, size), f"{target}: the turn is not in its session"
        assert {p: p.read_bytes() for p in before} == before  # the source is never touched
    finally:
        world.close()


def _offers_tools(body: dict[str, Any]) -> bool:
    """A turn's main request offers tools (a side request, e.g. OpenCode's title, does not)."""
    return bool(body.get("tools"))
