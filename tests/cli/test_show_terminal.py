"""The terminal (issue 44 item 3): ``show --tail N`` / ``--from SEQ --to SEQ``, a pager on a
TTY only, and shell completion of session keys, harnesses, ``--in`` targets and formats."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.running import run_main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sessions" / "claude-code"
KEY = "3185d1ef-21e2-4727-91d3-fda9d4ee95a1"
EXE = str(Path(sys.executable).with_name("continuity"))


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("show") / "ws"
    subprocess.run(
        [EXE, "import", str(EXAMPLE / f"{KEY}.jsonl"), "--home", str(path)],
        check=True,
        capture_output=True,
    )
    return path


def _seqs(out: str) -> list[int]:
    return [int(line.split()[0]) for line in out.splitlines()[1:] if line[:5].strip().isdigit()]


def test_tail_and_a_seq_range(monkeypatch, capsys, home):
    code, out, _ = run_main(monkeypatch, capsys, "show", "3185", "--home", home)
    assert code == 0 and _seqs(out) == [4, 23, 24, 25, 28]  # the conversation
    code, out, _ = run_main(monkeypatch, capsys, "show", "3185", "--tail", "2", "--home", home)
    assert code == 0 and _seqs(out) == [25, 28]
    code, out, _ = run_main(
        monkeypatch, capsys, "show", "3185", "--from", "5", "--to", "24", "--home", home
    )
    assert code == 0 and _seqs(out) == [23, 24]
    code, out, _ = run_main(
        monkeypatch, capsys, "show", "3185", "--all", "--from", "1", "--tail", "3", "--json",
        "--home", home,
    )  # fmt: skip
    assert code == 0 and [e["seq"] for e in json.loads(out)["entries"]] == [31, 32, 33]
    code, _, err = run_main(
        monkeypatch, capsys, "show", "3185", "--from", "9", "--to", "3", "--home", home
    )
    assert code == 2 and "--to 3 is before --from 9" in err
    code, _, err = run_main(
        monkeypatch, capsys, "show", "3185", "--seq", "4", "--tail", "3", "--home", home
    )
    assert code == 2 and "--tail, --from and --to do not apply" in err


def _on_a_tty(argv: list[str], env: dict[str, str]) -> str:
    master, slave = pty.openpty()
    done = subprocess.run(argv, stdout=slave, stderr=slave, stdin=slave, env=env, timeout=60)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert done.returncode == 0
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_pager_on_a_tty_and_never_when_piped(home):
    env = {**os.environ, "PAGER": "sed 's/^/PAGED: /'", "TERM": "xterm", "COLUMNS": "120"}
    seen = _on_a_tty([EXE, "show", "3185", "--tail", "1", "--home", str(home)], env)
    assert "PAGED: " in seen and "Fake model answer" in seen
    seen = _on_a_tty([EXE, "show", "3185", "--tail", "1", "--no-pager", "--home", str(home)], env)
    assert "PAGED" not in seen and "Fake model answer" in seen
    piped = subprocess.run(
        [EXE, "show", "3185", "--tail", "1", "--home", str(home)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "PAGED" not in piped.stdout and "Fake model answer" in piped.stdout


def _complete(words: str, env_home: Path | None = None, cword: int | None = None) -> list[str]:
    """What bash completion offers for the word at ``cword`` (default: the last)."""
    env = {**os.environ, "_CONTINUITY_COMPLETE": "complete_bash", "COMP_WORDS": words}
    last = len(words.split()) - (0 if words.endswith(" ") else 1)
    env["COMP_CWORD"] = str(last if cword is None else cword)
    if env_home is not None:
        env["CONTINUITY_HOME"] = str(env_home)
    done = subprocess.run([EXE], env=env, capture_output=True, text=True, timeout=60)
    return done.stdout.split()


def test_completion_of_keys_harnesses_targets_and_formats(home):
    assert _complete(f"continuity --home {home} show 318") == [KEY]
    assert _complete(f"continuity show 318 --home {home}", cword=2) == [KEY]  # --home after it
    assert _complete("continuity export ", env_home=home) == [KEY]
    assert _complete("continuity show zz", env_home=home) == []
    assert _complete("continuity resume x --in c") == ["claude-code", "codex", "copilot-cli"]
    assert _complete("continuity resume x --in q") == ["qwen-code"]
    assert _complete("continuity export x --format ") == ["md", "html", "jsonl", "source"]
    assert _complete("continuity sessions --harness o") == ["opencode", "openai-agents"]
    assert _complete("continuity search q --harness p") == ["pi"]
