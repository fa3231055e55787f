"""The README stays true: its first command works from a clone alone (issue 20), and its lists
of API paths and configuration keys are the ones the code has."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def bash_blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", README, flags=re.S)


def test_first_command_imports_the_shipped_samples_only():
    first = bash_blocks()[0].strip()
    assert "../shared" not in first
    assert "import examples/sessions" in first
    size = sum(p.stat().st_size for p in (ROOT / "examples" / "sessions").rglob("*") if p.is_file())
    assert size < 400_000  # "a small sample set": the clone stays light


def test_first_command_works_from_a_clone_alone(tmp_path):
    """Runs the README's first command after its install step, in a folder that holds only a
    copy of ``examples/`` (no ``../shared`` beside it), with the installed ``continuity``."""
    first = bash_blocks()[0].strip()
    steps = [s.strip() for s in first.split("&&")]
    assert steps[:2] == ["python3 -m venv .venv", ".venv/bin/pip install -q -e ."]
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "examples", clone / "examples")
    exe = str(Path(sys.executable).with_name("continuity"))
    outputs = []
    for step in steps[2:]:
        words = shlex.split(step)
        env = dict(os.environ)
        env.pop("CONTINUITY_HOME", None)
        env.pop("CONTINUITY_DATABASE_URL", None)
        while "=" in words[0]:
            name, value = words.pop(0).split("=", 1)
            env[name] = value
        assert words[0] == ".venv/bin/continuity"
        done = subprocess.run([exe, *words[1:]], cwd=clone, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    imported, continued = outputs
    assert imported.splitlines()[-1] == ("3 files, 3 sessions, 81 rows, 0 bad lines, "
                                         "0 duplicates, 0 files skipped")
    lines = continued.splitlines()
    assert lines[0].startswith("session 01a23556-7fab-7dd1-86d3-d100eb5ab801: ")
    assert "Summary of earlier work in this session" in continued
    assert "previous request (seq 8, user): Turn before compaction" in lines
    assert (clone / "workspace" / "continuity.db").is_file()


def test_own_sessions_come_right_after_the_first_command():
    second = bash_blocks()[1].strip()
    assert second.endswith("continuity import ~/.claude/projects ~/.codex/sessions "
                           "~/.pi/agent/sessions")
