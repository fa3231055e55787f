"""continuity watch --once (issue 18 item 1): the sample folder's sessions are archived, a
second pass imports nothing."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "samples" / "claude-code"


def _run(args, env):
    return subprocess.run([sys.executable, "-m", "continuity.cli.hookcmd", *args] if False else
                          [str(Path(sys.executable).parent / "continuity"), *args],
                          env=env, capture_output=True, text=True, timeout=120)


def test_once_archives_the_samples_and_a_second_pass_adds_nothing(tmp_path):
    projects = tmp_path / "cc" / "projects"
    shutil.copytree(SAMPLES, projects)
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
           "CODEX_HOME": str(tmp_path / "none"), "PI_CODING_AGENT_DIR": str(tmp_path / "none"),
           "XDG_DATA_HOME": str(tmp_path / "none"), "CONTINUITY_HOME": str(tmp_path / "h")}
    env.pop("CONTINUITY_DATABASE_URL", None)
    first = _run(["watch", "--once"], env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "archived 5 files, 232 new rows"
    sessions = json.loads(_run(["sessions", "--json"], env).stdout)
    assert len(sessions) == 5
    again = _run(["watch", "--once"], env)
    assert again.returncode == 0 and again.stdout == ""
