"""``continuity resume`` with the real CLIs (issue 13, item 5) for a run that crashed mid-call:
a session each real CLI wrote (``../shared/data/real-harness``, its project folder moved into
the test world), cut right after its last turn's tool call, is imported, resumed into another
harness, and the target's real CLI runs one non-interactive turn on the written session, with
the headless command ``resume`` printed (issue 45 item 3; a second identical resume reuses the
copy). No checkpoint can be made while a call is in flight, so there is no summary: the target
must receive the synthetic "effects unknown" result for the call, every call paired (the fake
server answers an unpaired history with the provider's 400). The resumed file imports as a new
session linked to its source. Every source → target pair of complete sessions runs in
``test_resume_matrix.py``; ``SOURCES`` here are its Claude Code, Codex and pi sources.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import World, until
from tests.e2e.fakemodel import FakeModel, unpaired
from tests.paths import SHARED_DATA

DATA = SHARED_DATA / "real-harness"

#: One two-turn session per harness, as the real CLI wrote it, and the project it ran in.
SOURCES = {
    "claude-code": (
        "claude-code/projects/-home-dev-projects-claude-demo/"
        "43f9cd0f-7b54-4119-a54f-d17e128ccde6.jsonl",
        "/home/dev/projects/claude-demo",
        "Also add a multiply function",
    ),
    "codex": (
        "codex/sessions/2026/12/02/"
        "rollout-2026-12-02T05-44-03-01a23548-0b9f-7a51-b432-4e4efd240d37.jsonl",
        "/home/dev/projects/codex-demo",
        "Now add a subtract function (tui turn 2)",
    ),
    "pi": (
        "pi/sessions/--home-dev-projects-pi-demo--/"
        "2026-12-02T05-49-39-241Z_01a2354d-2a28-75c5-9931-4e663de4f734.jsonl",
        "/home/dev/projects/pi-demo",
        "Continued pi session",
    ),
}
PROMPT = "Resumed turn: carry on from the continuation"
#: The compaction budget that summarises the first turn(s) and keeps the last one verbatim.
BUDGET = "3000"
#: The crashed-mid-call variant, one pair per source (each target once).
DANGLING = [("claude-code", "codex"), ("codex", "pi"), ("pi", "claude-code")]


def _source_file(world: World, source: str, *, dangling: bool) -> Path:
    """The real session file with its project folder moved to the world's; cut after the last
    tool call's line when ``dangling``."""
    rel, old_project, _ = SOURCES[source]
    lines = (
        (DATA / rel)
        .read_text(encoding="utf-8")
        .replace(old_project, str(world.project))
        .splitlines(keepends=True)
    )
    if dangling:
        last_call = max(i for i, line in enumerate(lines) if _is_call(json.loads(line)))
        lines = lines[: last_call + 1]
    path = world.root / "source" / Path(rel).name
    path.parent.mkdir()
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _is_call(obj: dict[str, Any]) -> bool:
    if obj.get("type") == "response_item":
        return (obj.get("payload") or {}).get("type") == "function_call"
    content = (obj.get("message") or {}).get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") in ("tool_use", "toolCall") for b in content
    )


#: The headless command `resume` prints for each target (issue 45 item 3), its prompt last.
HEADLESS = {
    "claude-code": "claude -p --resume {sid}",
    "codex": "codex exec resume {sid}",
    "pi": "pi -p --session {path}",
}


def _run_target(world: World, written: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """One non-interactive turn of the target on the written session: the headless command
    `resume` printed, run as printed by a shell (from any folder: it starts with its own
    ``cd``), with the prompt as its last argument (issue 45 item 3)."""
    line = written["headless"]
    assert line == f"cd {world.project} && " + HEADLESS[world.harness].format(
        sid=written["session_id"], path=written["path"]
    ), line
    return subprocess.run(
        ["bash", "-c", f"{line} {shlex.quote(PROMPT)}"],
        env=world.env(),
        cwd=world.root,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def _resume(
    tmp_path: Path,
    clis: dict[str, Path],
    fake_model: FakeModel,
    source: str,
    target: str,
    *,
    dangling: bool,
) -> None:
    world = World(tmp_path, target, clis[target], fake_model)
    try:
        src = _source_file(world, source, dangling=dangling)
        before = src.read_bytes()
        world.continuity("import", str(src))
        key = world.continuity_json("sessions")[0]["session"]
        goal = None
        if not dangling:  # compaction waits while a call is in flight: no summary then
            compacted = world.continuity_json("compact", key, "--force", "--budget", BUDGET)
            assert compacted["status"] == "compacted", compacted
            # "- Latest request (#N): ..." of the first turn, the summary's second line
            goal = compacted["checkpoint"]["summary"].splitlines()[1]
        view = world.continuity_json("continue", key)
        request = SOURCES[source][2]
        assert view["request"]["text"] == request

        written = world.continuity_json("resume", key, "--in", target)
        path = Path(written["path"])
        assert path.is_file() and written["target"] == target
        assert written["command"].startswith(f"cd {world.project} && ")
        # issue 45 item 3: the same resume again is the same copy (nothing new written)
        again = world.continuity_json("resume", key, "--in", target)
        assert again == {**written, "reused": True} and written["reused"] is False
        assert list(world.session_files().rglob("*.jsonl")) == [path]
        if target == "codex":  # codex exec runs in a git repository (a user's project is one)
            subprocess.run(["git", "init", "-q", str(world.project)], check=True)
        size = path.stat().st_size
        rejected = len(fake_model.rejected)
        first = len(fake_model.requests)

        done = _run_target(world, written)
        assert done.returncode == 0, (
            f"{target} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
        )
        assert fake_model.rejected[rejected:] == []  # no 400: every call was paired
        asked = [
            r
            for r in fake_model.model_requests(first)
            if PROMPT in json.dumps(r["body"], ensure_ascii=False)
        ]
        assert asked, f"{target} never sent the prompt to the model"
        body = asked[0]
        assert unpaired(body["path"].split("?")[0], body["body"]) is None
        sent = json.dumps(body["body"], ensure_ascii=False)
        notice = f"continues the {source} session {key}"
        places = [
            sent.find(notice),
            sent.find(json.dumps(goal or notice, ensure_ascii=False)[1:-1]),
            sent.find(json.dumps(request)[1:-1]),
            sent.find(PROMPT),
        ]
        assert -1 not in places, (places, sent[:4000])
        assert places == sorted(places), places  # notice, summary, request, ..., new prompt
        tail = sent[places[2] : places[3]]
        if dangling:
            assert "has no recorded result" in tail, tail[:3000]
        else:
            assert "README.md" in tail and "calc.py" in tail, tail[:3000]  # the kept result
            assert "has no recorded result" not in tail
        assert "Fake model answer" in sent  # the session's own answers reached the model
        # The target accepted the file: its turn was appended to the written session.
        grown = path.read_bytes()
        assert len(grown) > size and PROMPT.encode() in grown[size:]
        assert src.read_bytes() == before  # the source is never touched

        # Our importer takes the resumed file as a new session linked to its source.
        world.continuity("import", str(path))
        sessions = {s["session"]: s for s in world.continuity_json("sessions")}
        assert written["session_id"] in {k.split("/")[0] for k in sessions}
        assert key in sessions and len(sessions) == 2
        copy = next(s for k, s in sessions.items() if k != key)
        assert (copy["copy_of"], copy["original"]) == (key, key)
        assert (sessions[key]["copy_of"], sessions[key]["original"]) == (None, None)
        # the copy has grown by the target's turn: no longer the copy resume wrote
        third = world.continuity_json("resume", key, "--in", target)
        assert third["reused"] is False and third["path"] != written["path"]
    finally:
        world.close()


@pytest.mark.parametrize(("source", "target"), DANGLING)
def test_resume_of_a_run_that_crashed_mid_call(
    tmp_path: Path, clis: dict[str, Path], fake_model: FakeModel, source: str, target: str
) -> None:
    _resume(tmp_path, clis, fake_model, source, target, dangling=True)


def test_claude_code_compact_start_gets_the_essentials_once(
    tmp_path: Path, clis: dict[str, Path], fake_model: FakeModel
) -> None:
    """Item 4 with the real Claude Code: after ``/compact`` its SessionStart (``source``
    ``compact``) gets the continuation's essentials from our hook; the next model request holds
    them once, the previous request verbatim inside them, under the 10,000-character limit."""
    world = World(tmp_path, "claude-code", clis["claude-code"], fake_model)
    try:
        world.continuity_json("hooks", "install", "claude-code")
        world.start_daemon()
        task = "Task A: fix the March totals in report.py"
        world.run_harness(task)
        key = until(
            lambda: next(
                (
                    s["session"]
                    for s in world.continuity_json("sessions")
                    if s["harness"] == "claude-code"
                ),
                None,
            ),
            "session A",
        )
        until(
            lambda: (
                (world.continuity_json("continue", key).get("request") or {}).get("text") == task
            ),
            "A's continuation",
        )
        compact = subprocess.run(
            [str(world.cli), "-p", "/compact", "--continue"],
            env=world.env(),
            cwd=world.project,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        assert compact.returncode == 0, compact.stderr
        first = len(fake_model.requests)
        rejected = len(fake_model.rejected)
        world.run_harness("Task B after the compaction", resume=True)
        asked = [
            r
            for r in fake_model.model_requests(first)
            if "Task B after the compaction" in json.dumps(r["body"], ensure_ascii=False)
        ]
        assert asked and fake_model.rejected[rejected:] == []
        sent = json.dumps(asked[0]["body"], ensure_ascii=False)
        assert sent.count("## Continuation of the previous work") == 1
        assert f"<previous-request>\\n{task}\\n</previous-request>" in sent
        # issue 39: the essentials name the MCP tool only when it is installed for Claude
        # Code (the install record), else this install's CLI
        from continuity.daemon.hooks.install import installed_mcp_tools

        tool = installed_mcp_tools(world.ws, "claude-code").get("continuation")
        if tool:
            assert (
                f'one MCP `{tool}` call away (session \\"{key}\\", loaded with `ToolSearch`)'
            ) in sent
        else:
            ours = sent.split("## Continuation of the previous work", 1)[1][:4000]
            assert "call away" not in ours and f" continue {key}`." in ours
        contexts = [
            b.get("text", "")
            for m in asked[0]["body"].get("messages", [])
            for b in (
                m.get("content")
                if isinstance(m.get("content"), list)
                else [{"text": m.get("content")}]
            )
            if isinstance(b, dict)
            and isinstance(b.get("text"), str)
            and "Continuation of the previous work" in b["text"]
        ]
        # the block holds Claude Code's own text around ours (its deferred tools before, the
        # date after): ours is what follows the hook's prefix, up to Claude Code's next part
        ours = [
            re.split(
                r"\n\n(?:# |Today's date is )",
                c.split("SessionStart hook additional context: ", 1)[-1],
                maxsplit=1,
            )[0]
            for c in contexts
        ]
        assert ours and all(len(c) < 10_000 for c in ours), [len(c) for c in ours]
    finally:
        world.close()
