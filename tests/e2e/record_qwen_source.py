"""Record the two-turn Qwen Code session of ``test_qwen_live.MATRIX_SOURCE`` (the resume
matrix's Qwen Code source, issue 42): the real qwen 0.24.4 (the e2e cache, installed when
missing), run headless offline against the fake model (``tests/e2e/fakemodel.py``).

    .venv/bin/python -m tests.e2e.record_qwen_source [--out DIR]

In a throwaway folder (deleted afterwards): a HOME and the project ``qwen-demo`` holding
``README.md`` and ``calc.py``; ``qwen -p "List the files in this project" --yolo`` (the fake
model runs its usual shell call, then answers), then ``qwen --continue -p "List the project's
files once more [shell:ls]" --yolo`` (the fake model's ``[shell:COMMAND]`` marker: the call
runs ``ls``). The chat file qwen wrote is copied to ``--out`` (default
``tests/fixtures/qwen_code/matrix``) as ``projects/-home-dev-projects-qwen-demo/chats/<id>.jsonl``
with the throwaway HOME rewritten to ``/home/dev`` and the project to
``/home/dev/projects/qwen-demo``; nothing else changes. It fails, writing nothing, when the
second turn's result does not list both files or a throwaway path is left. No continuity hooks
are installed: the file is Qwen Code's alone. Prints the path written (a new session each run:
update ``MATRIX_SOURCE``).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from tests.e2e.fakemodel import FakeModel
from tests.e2e.test_import_harnesses import ensure_cli
from tests.e2e.test_qwen_live import ROOT, QwenWorld

OUT = ROOT / "tests" / "fixtures" / "qwen_code" / "matrix"
HOME = "/home/dev"
PROJECT = "/home/dev/projects/qwen-demo"
TURNS = ("List the files in this project", "List the project's files once more [shell:ls]")


def record(out: Path) -> Path:
    """Run the two turns and write the rewritten chat file under ``out``; returns its path.
    Raises ``SystemExit`` naming what is wrong (nothing written)."""
    model = FakeModel().start()
    try:
        with tempfile.TemporaryDirectory(prefix="qwen-source-") as tmp:
            world = QwenWorld(Path(tmp), "qwen-code", ensure_cli("qwen-code"), model)
            (world.project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
            world.run_harness(TURNS[0])
            world.run_harness(TURNS[1], resume=True)
            (chat,) = world.session_files().glob("*/chats/*.jsonl")
            text = (
                chat.read_text(encoding="utf-8")
                .replace(str(world.project), PROJECT)
                .replace(str(world.home), HOME)
            )
            if tmp in text or str(ROOT) in text:
                raise SystemExit(f"a throwaway path is left in {chat.name}")
            if not re.search(r"Output: README\.md\\ncalc\.py", text):
                raise SystemExit("turn 2's result does not list README.md and calc.py")
    finally:
        model.stop()
    target = out / "projects" / re.sub(r"[^A-Za-z0-9]", "-", PROJECT) / "chats" / chat.name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    print(record(args.out))


if __name__ == "__main__":
    main(sys.argv[1:])
