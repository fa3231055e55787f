"""``continuity resume KEY --in opencode`` with the real OpenCode CLI (issue 42 items 3, 4): a
two-turn session each of Claude Code, Codex and pi wrote (``test_resume.SOURCES``, its project
moved into the test world) is imported, given a continuation checkpoint, resumed into OpenCode,
and the headless command ``resume`` printed (``opencode import FILE`` then ``opencode run
--session ID PROMPT``) runs one turn offline against ``fakemodel.FakeModel``.

From the fake model's log: the request holds the copy notice, the summary, the previous request
verbatim and the prompt in that order, with every tool call paired (the fake server answers an
unpaired history with the provider's 400; none was); the turn lands in OpenCode's own session
(``opencode export ID`` holds the prompt).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fakemodel import FakeModel, unpaired
from tests.e2e.test_opencode import OpenCodeWorld, ensure_opencode
from tests.e2e.test_resume import BUDGET, DATA, PROMPT, SOURCES


def _continuity(w: OpenCodeWorld, *args: str) -> Any:
    """``continuity ARGS --json`` as the world's user (its HOME and XDG folders: where resume
    writes the copy and finds OpenCode's config)."""
    done = subprocess.run(
        [sys.executable, "-m", "continuity.cli.app", *args, "--home", str(w.ws), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=w.project,
        env={**os.environ, **w.env(), "CONTINUITY_HOME": str(w.ws)},
    )
    assert done.returncode == 0, f"continuity {args} exited {done.returncode}:\n{done.stderr}"
    return json.loads(done.stdout)


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_resume_into_opencode_then_a_real_turn(
    tmp_path: Path, fake_model: FakeModel, source: str
) -> None:
    w = OpenCodeWorld(tmp_path, ensure_opencode(), fake_model)
    rel, old_project, request = SOURCES[source]
    src = tmp_path / "source" / Path(rel).name
    src.parent.mkdir()
    src.write_text(
        (DATA / rel).read_text(encoding="utf-8").replace(old_project, str(w.project)),
        encoding="utf-8",
    )
    _continuity(w, "import", str(src))
    (key,) = [s["session"] for s in _continuity(w, "sessions")]
    compacted = _continuity(w, "compact", key, "--force", "--budget", BUDGET)
    assert compacted["status"] == "compacted", compacted
    goal = compacted["checkpoint"]["summary"].splitlines()[1]

    written = _continuity(w, "resume", key, "--in", "opencode")
    path, sid = Path(written["path"]), written["session_id"]
    assert written["target"] == "opencode" and path.is_file() and sid.startswith("ses_")
    assert path == w.data / "continuity-resume" / f"{sid}.json"
    run = 'opencode import "$1" >/dev/null && exec opencode run --session "$2" "$3"'
    argv = ["sh", "-c", run, "sh", str(path), sid]
    assert written["headless"] == f"cd {w.project} && " + shlex.join(argv)
    rejected, first = len(fake_model.rejected), len(fake_model.requests)
    done = subprocess.run(
        ["bash", "-c", f"{written['headless']} {shlex.quote(PROMPT)}"],
        env=w.env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"opencode exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    assert fake_model.rejected[rejected:] == []  # no 400: every call was paired
    asked = [
        r
        for r in fake_model.model_requests(first)
        if PROMPT in json.dumps(r["body"], ensure_ascii=False) and r["body"].get("tools")
    ]
    assert asked, "opencode never sent the prompt to the model"
    body = asked[0]
    assert unpaired(body["path"].split("?")[0], body["body"]) is None
    calls = [c["id"] for m in body["body"]["messages"] for c in (m.get("tool_calls") or [])]
    answered = [m["tool_call_id"] for m in body["body"]["messages"] if m.get("role") == "tool"]
    assert calls and sorted(calls) == sorted(answered)  # the source's calls, each answered
    sent = json.dumps(body["body"], ensure_ascii=False)
    places = [
        sent.find(f"continues the {source} session {key}"),
        sent.find(json.dumps(goal, ensure_ascii=False)[1:-1]),
        sent.find(json.dumps(request)[1:-1]),
        sent.find(PROMPT),
    ]
    assert -1 not in places and places == sorted(places), (places, sent[:4000])
    assert "README.md" in sent[places[2] : places[3]]  # the kept turn's tool result
    exported = subprocess.run(
        [str(w.cli), "export", sid],
        env=w.env(),
        cwd=w.project,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert PROMPT in exported.stdout  # the turn was added to the resumed OpenCode session
