"""docs/cli.md, the command-line reference, is every command's ``--help`` as the CLI prints it
now (issue 46 item 3): ``cog --check`` regenerates it in memory and fails when the file differs.
`.ci/run` runs the same check; here it runs with the tests, in about a second, so a help text
changed without ``cog -r docs/cli.md`` fails where the change was made."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "cli.md"


def cog_check(path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``cog --check PATH`` in a fresh interpreter (cog runs the generator embedded in the
    file), with ``env`` added to the environment."""
    return subprocess.run(
        [sys.executable, "-m", "cogapp", "--check", str(path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
        cwd=ROOT,
    )


def test_reference_is_current_whatever_the_terminal():
    # the generator fixes the width and turns colour off: neither COLUMNS nor a forced colour
    # may change a byte (else the check would flap between machines)
    done = cog_check(REFERENCE, COLUMNS="40", FORCE_COLOR="1", TERM="xterm-256color")
    assert done.returncode == 0, (
        f"docs/cli.md is stale: run `.venv/bin/cog -r docs/cli.md`\n{done.stdout}{done.stderr}"
    )


def test_reference_lists_every_command_and_subcommand():
    from continuity.cli.commands import COMMANDS, GROUPS

    headings = re.findall(
        r"^## `(continuity[^`]*)`$", REFERENCE.read_text(encoding="utf-8"), flags=re.MULTILINE
    )
    assert headings[0] == "continuity"
    assert len(headings) == len(set(headings))
    # the lazily loaded modules' commands and groups (COMMANDS, GROUPS), the core ones, and
    # the subcommands of each group
    expected = {f"continuity {name}" for name in [*COMMANDS, *GROUPS]} | {
        "continuity import",
        "continuity sessions",
        "continuity show",
        "continuity continue",
        "continuity where",
        "continuity db",
        "continuity db upgrade",
        "continuity hooks install",
        "continuity hooks uninstall",
        "continuity memory render",
        "continuity models list",
        "continuity models fetch",
    }
    assert expected <= set(headings), sorted(expected - set(headings))


def test_a_stale_reference_fails_the_check(tmp_path):
    stale = tmp_path / "cli.md"
    text = REFERENCE.read_text(encoding="utf-8")
    assert "List imported sessions, newest first." in text
    stale.write_text(
        text.replace("List imported sessions, newest first.", "List sessions."), encoding="utf-8"
    )
    done = cog_check(stale)
    assert done.returncode != 0
    assert "changed" in done.stdout + done.stderr


def test_readme_harness_table_is_current() -> None:
    """The README's harness table is generated from the registry (issue 42 item 1)."""
    done = cog_check(ROOT / "README.md")
    assert done.returncode == 0, (
        f"README.md is stale: run `.venv/bin/cog -r README.md`\n{done.stdout}{done.stderr}"
    )
    assert "| `gemini-cli` |" in (ROOT / "README.md").read_text(encoding="utf-8")
