"""Record ``tests/fixtures/copilot_cli/matrix``: the real two-turn GitHub Copilot CLI session of
``test_copilot_live.MATRIX_SOURCE`` (issue 42 item 4, the cross-harness resume matrix).

Runs the pinned copilot (``test_import_harnesses.IMPORT_CLIS``) offline against the fake model
(``tests/e2e/fakemodel.py``, Chat Completions, BYOK: no GitHub login) in a throwaway world whose
project holds ``README.md`` and ``calc.py``, no hooks installed:

1. ``copilot -p "What is in this project?" --session-id <ID>``: the fake model's default turn
   (a ``bash`` call of ``SHELL_COMMAND``, then text);
2. ``copilot -p "Now show me README.md and calc.py" --continue``: the same session, the model's
   ``bash`` call this time ``ls && cat README.md calc.py`` (``LIST_COMMAND``; the recorder
   swaps the fake model's shell arguments for this turn only), then text.

The session's ``events.jsonl`` and ``workspace.yaml`` are copied to
``tests/fixtures/copilot_cli/matrix/session-state/<ID>/`` with the world's folders rewritten
(the project to ``MATRIX_SOURCE[1]``, the home folder to ``/home/dev``). Run from the
repository: ``.venv/bin/python -m tests.e2e.record_copilot_matrix``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from tests.e2e import fakemodel
from tests.e2e.test_copilot_live import MATRIX_SOURCE, REPO, CopilotWorld
from tests.e2e.test_import_harnesses import ensure_cli

LIST_COMMAND = "ls && cat README.md calc.py"
README = "# calc\n\nA tiny calculator: `add` and `subtract` in calc.py.\n"
CALC = "def add(a, b):\n    return a + b\n\n\ndef subtract(a, b):\n    return a - b\n"
FIRST = "What is in this project?"


def record() -> Path:
    """Record the session (module docstring); returns the fixture folder written."""
    rel, project_as, request = MATRIX_SOURCE
    session_id = Path(rel).parent.name
    model = fakemodel.FakeModel().start()
    root = Path(tempfile.mkdtemp(prefix="copilot-matrix-"))
    world = CopilotWorld(root, "copilot-cli", ensure_cli("copilot-cli"), model)
    original = fakemodel.shell_args
    try:
        (world.project / "README.md").write_text(README)
        (world.project / "calc.py").write_text(CALC)
        _run(world, FIRST, session_id)

        def listing(tool: str) -> dict[str, Any]:
            return {"command": LIST_COMMAND}

        fakemodel.shell_args = listing
        world.run_harness(request, resume=True)
        fakemodel.shell_args = original
        folder = world.session_files() / session_id
        out = REPO / Path(rel).parent
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        for name in ("events.jsonl", "workspace.yaml"):
            text = (folder / name).read_text(encoding="utf-8")
            text = text.replace(str(world.project), project_as)
            text = text.replace(str(world.home), "/home/dev").replace(str(world.root), "/home/dev")
            (out / name).write_text(text, encoding="utf-8")
        return out
    finally:
        fakemodel.shell_args = original
        world.close()
        model.stop()
        shutil.rmtree(root, ignore_errors=True)


def _run(world: CopilotWorld, prompt: str, session_id: str) -> None:
    import subprocess

    done = subprocess.run(
        [
            str(world.cli),
            "-p",
            prompt,
            "--allow-all-tools",
            "--no-auto-update",
            f"--session-id={session_id}",
        ],
        env=world.env(),
        cwd=world.project,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        raise SystemExit(f"copilot exited {done.returncode}:\n{done.stdout}\n{done.stderr}")


if __name__ == "__main__":
    print(record())
