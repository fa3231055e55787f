"""Record the example Claude Code session ``examples/sessions/claude-code/<session>.jsonl`` that
shows a real fix (issue 39): the real Claude Code CLI, run offline against the fake model
(``tests/e2e/fakemodel.py``, its opt-in ``Story`` mode), fixes a tiny Python project.

    .venv/bin/python -m tests.e2e.record_export_session [--out DIR] [--keep]

What it does, in a throwaway folder (deleted afterwards unless ``--keep``):

1. a throwaway HOME (``<tmp>/dev``) and in it the project ``projects/export-demo``: ``export.py``,
   whose ``stamp()`` stamps local time with a ``Z`` suffix (the bug), and
   ``tests/test_export.py`` (three tests, one of which fails on that bug), committed to git;
2. ``claude -p "The nightly export stamps local time; make it use UTC and keep the tests green"
   --allowedTools Bash Read Edit`` there (Claude Code 2.1.332 from the e2e cache,
   ``tests/e2e/conftest.py``; the environment ``World.env`` gives it: no network but the fake
   model). The scripted model takes one tool call per request, and Claude Code really runs
   each: ``python -m pytest -q`` (Bash; fails: 1 failed, 2 passed), reads ``export.py`` (Read),
   fixes it (Edit: ``datetime.now()`` → ``datetime.now(timezone.utc)``), runs
   ``python -m pytest -q`` again (3 passed); then it answers with the outcome and a decision;
3. checks that the tool results are those (else it fails and writes nothing), and copies the
   transcript Claude Code wrote under ``$HOME/.claude/projects/`` to ``--out`` (default
   ``examples/sessions/claude-code``) with the throwaway HOME rewritten to ``/home/dev``
   (``/home/dev/projects/export-demo``), as ``examples/sessions/README.md`` says. Nothing else
   is changed; a path of the throwaway folder or of this checkout left after the rewrite fails
   the recording.

Each run records a new session (a new key, new times); its output is the path written. No
continuity hooks are installed: the transcript is Claude Code's alone.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from tests.e2e.conftest import cache_dir
from tests.e2e.fakemodel import FakeModel, Step, Story

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "examples" / "sessions" / "claude-code"
PROMPT = "The nightly export stamps local time; make it use UTC and keep the tests green"
RECORDED_HOME = "/home/dev"
PROJECT = "projects/export-demo"

EXPORT_PY = '''\
"""Nightly export: the day's rows, stamped with the time they were exported."""

from datetime import datetime, timezone

FORMAT = "%Y-%m-%dT%H:%M:%SZ"  # ISO-8601 in UTC ("Z"): what the consumers parse


def stamp() -> str:
    """When the export ran."""
    return datetime.now().strftime(FORMAT)


def parse(stamped: str) -> datetime:
    """A stamp read back, as the consumers read it: UTC."""
    return datetime.strptime(stamped, FORMAT).replace(tzinfo=timezone.utc)


def export(rows: list[dict]) -> dict:
    """The export document: the rows and their stamp."""
    return {"exported_at": stamp(), "rows": list(rows)}
'''

TEST_EXPORT_PY = '''\
import time
from datetime import datetime, timedelta, timezone

import pytest

from export import FORMAT, export, parse, stamp

ONE_MINUTE = timedelta(minutes=1)


@pytest.fixture
def server_clock(monkeypatch):
    """The export server's clock: five and a half hours ahead of UTC."""
    monkeypatch.setenv("TZ", "IST-5:30")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_stamp_is_utc(server_clock):
    stamped, now = parse(stamp()), datetime.now(timezone.utc)
    assert abs(now - stamped) < ONE_MINUTE


def test_stamp_keeps_the_iso_format():
    assert datetime.strptime(stamp(), FORMAT) and stamp().endswith("Z")


def test_export_carries_rows_and_stamp():
    out = export([{"id": 1}])
    assert out["rows"] == [{"id": 1}] and out["exported_at"].endswith("Z")
'''

BUG = "    return datetime.now().strftime(FORMAT)\n"
FIX = "    return datetime.now(timezone.utc).strftime(FORMAT)\n"
REPLY = (
    "Fixed: export.py now stamps UTC with datetime.now(timezone.utc); all 3 tests pass. "
    "I decided to keep the ISO-8601 format with a Z suffix so existing consumers still "
    "parse it."
)


def story(project: Path) -> Story:
    """The scripted turn (module docstring, step 2), for the project at ``project``."""
    tests = {"command": "python -m pytest -q", "description": "Run the test suite"}
    return Story(
        prompt=PROMPT,
        reply=REPLY,
        steps=(
            Step("Bash", tests, "I'll run the tests first to see what fails."),
            Step(
                "Read",
                {"file_path": str(project / "export.py")},
                "test_stamp_is_utc fails: the stamp is local time. Reading export.py.",
            ),
            Step(
                "Edit",
                {
                    "file_path": str(project / "export.py"),
                    "old_string": BUG,
                    "new_string": FIX,
                    "replace_all": False,
                },
                "stamp() calls datetime.now() without a timezone; passing timezone.utc fixes it.",
            ),
            Step("Bash", tests, "Running the tests again."),
        ),
    )


def make_project(project: Path, env: dict[str, str]) -> None:
    (project / "tests").mkdir(parents=True)
    (project / "export.py").write_text(EXPORT_PY)
    (project / "tests" / "test_export.py").write_text(TEST_EXPORT_PY)
    (project / "README.md").write_text("# export-demo\n\nThe nightly export job.\n")
    git = {
        **env,
        "GIT_AUTHOR_NAME": "dev",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "dev",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
    }
    for argv in (
        ["git", "-c", "init.defaultBranch=main", "init", "-q"],
        ["git", "add", "."],
        ["git", "commit", "-q", "-m", "Nightly export"],
    ):
        subprocess.run(argv, cwd=project, env=git, check=True, capture_output=True)


def environment(root: Path, home: Path, cli: Path, model: FakeModel) -> dict[str, str]:
    """``World.env`` (tests/e2e/conftest.py), with this Python's folder on PATH so that the
    project's ``python -m pytest`` runs."""
    path = os.pathsep.join([str(cli.parent), str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    (root / "tmp").mkdir(exist_ok=True)
    return {
        "PATH": path,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": str(root / "tmp"),
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": "sk-ant-e2e-fake",
        "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def rewrite(text: str, home: Path) -> str:
    """The throwaway HOME as ``/home/dev``: as a path, and as Claude Code names a project's
    folder under ``~/.claude/projects`` (every character but letters and digits a ``-``)."""
    dashed = re.sub(r"[^A-Za-z0-9]", "-", str(home))
    return text.replace(str(home), RECORDED_HOME).replace(
        dashed, re.sub(r"[^A-Za-z0-9]", "-", RECORDED_HOME)
    )


def tool_results(lines: list[dict]) -> list[str]:
    """The text of each tool result of the transcript, in order."""
    out = []
    for line in lines:
        content = (line.get("message") or {}).get("content") if line.get("type") == "user" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                value = block.get("content")
                out.append(
                    value
                    if isinstance(value, str)
                    else " ".join(
                        str(b.get("text", "")) for b in value or [] if isinstance(b, dict)
                    )
                )
    return out


def record(out: Path, keep: bool) -> Path:
    cli = cache_dir() / "node_modules" / ".bin" / "claude"
    if not os.access(cli, os.X_OK):
        sys.exit(f"record: no Claude Code at {cli} (run the e2e suite once: it installs it)")
    root = Path(tempfile.mkdtemp(prefix="continuity-record-"))
    home = root / "dev"
    project = home / PROJECT
    model = FakeModel(story=story(project)).start()
    try:
        env = environment(root, home, cli, model)
        (home / ".claude").mkdir(parents=True)
        (home / ".claude" / "settings.json").write_text('{\n  "theme": "dark"\n}\n')
        make_project(project, env)
        done = subprocess.run(
            [str(cli), "-p", PROMPT, "--allowedTools", "Bash", "Read", "Edit"],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            sys.exit(f"record: claude exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        files = list((home / ".claude" / "projects").glob("*/*.jsonl"))
        if len(files) != 1:
            sys.exit(f"record: expected one transcript, found {files}")
        raw = files[0].read_text(encoding="utf-8")
        results = tool_results([json.loads(line) for line in raw.splitlines() if line.strip()])
        problems = []
        if len(results) != 4:
            problems.append(f"{len(results)} tool results, not 4")
        else:
            if "1 failed, 2 passed" not in results[0]:
                problems.append("the first test run did not fail 1 of 3")
            if "def stamp()" not in results[1]:
                problems.append("the Read did not show export.py")
            if "has been updated" not in results[2]:
                problems.append("the Edit did not apply")
            if "3 passed" not in results[3]:
                problems.append("the second test run did not pass 3")
        if FIX not in (project / "export.py").read_text():
            problems.append("export.py was not fixed")
        if REPLY not in raw:
            problems.append("the final answer is missing")
        text = rewrite(raw, home)
        for leftover in (str(root), str(ROOT)):
            if leftover in text:
                problems.append(f"{leftover} is still in the transcript")
        if problems:
            sys.exit("record: " + "; ".join(problems) + "\n" + "\n---\n".join(results))
        out.mkdir(parents=True, exist_ok=True)
        target = out / files[0].name
        target.write_text(text, encoding="utf-8")
        return target
    finally:
        model.stop()
        if keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=textwrap.dedent(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"folder to write to ({OUT})")
    parser.add_argument("--keep", action="store_true", help="keep the throwaway folder")
    args = parser.parse_args()
    print(record(args.out, args.keep))


if __name__ == "__main__":
    main()
