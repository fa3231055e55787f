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
        done = subprocess.run(
            [exe, *words[1:]], cwd=clone, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    imported, continued = outputs
    assert imported.splitlines()[-1] == (
        "4 files, 4 sessions, 127 rows, 0 bad lines, 0 duplicates, 0 files skipped"
    )
    lines = continued.splitlines()
    assert lines[0].startswith("session 01a23556-7fab-7dd1-86d3-d100eb5ab801: ")
    assert "Summary of earlier work in this session" in continued
    assert "previous request (seq 8, user): Turn before compaction" in lines
    assert (clone / "workspace" / "continuity.db").is_file()


def test_the_test_command_comes_second_and_ci_runs_it():
    """The README starts with two commands: the main job, then the tests, which ``.ci/run``
    runs verbatim."""
    second = bash_blocks()[1].strip()
    assert second == (
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/pytest -q"
    )
    assert second in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_own_sessions_come_right_after_the_brief_example():
    fourth = bash_blocks()[3].strip()
    assert fourth.endswith(
        "continuity import ~/.claude/projects ~/.codex/sessions ~/.pi/agent/sessions"
    )


def _as_shown(text: str) -> str:
    """A brief with what differs by machine and clock made the same: the age, the script's
    and the workspace's paths."""
    text = re.sub(r" · [^·\n]+ ago \(", " · AGE (", text)
    return re.sub(r"`\S+/continuity --home \S+ show", "`CLI show", text)


def test_the_brief_example_is_what_the_command_prints(tmp_path):
    """The README's brief example (its third command, run in the workspace of the first)
    prints the text shown under it, but for the age and the paths."""
    command = bash_blocks()[2].strip()
    shown = README[README.index(command) :]
    shown = shown[shown.index("```text\n") + 8 :]
    shown = shown[: shown.index("```")]
    clone = tmp_path / "clone"
    shutil.copytree(ROOT / "examples", clone / "examples")
    exe = str(Path(sys.executable).with_name("continuity"))
    env = {**os.environ, "CONTINUITY_HOME": str(clone / "workspace")}
    env.pop("CONTINUITY_DATABASE_URL", None)
    subprocess.run(
        [exe, "import", "examples/sessions"],
        cwd=clone,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    words = shlex.split(command)
    assert words[:2] == ["CONTINUITY_HOME=./workspace", ".venv/bin/continuity"]
    done = subprocess.run(
        [exe, *words[2:]], cwd=clone, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert _as_shown(done.stdout) == _as_shown(shown)


def test_readme_lists_every_api_path_the_daemon_serves(tmp_path, monkeypatch):
    """Each route of the app (docs pages aside) is named in the README's API table, with
    ``{a,b}`` groups spelled out; and each path the table names is served."""
    from continuity.daemon.server import create_app
    from continuity.store import open_store_raw
    from tests.daemon.test_server import _live

    monkeypatch.setenv("CONTINUITY_HOME", str(tmp_path))
    store = open_store_raw(f"sqlite:///{tmp_path}/c.db")
    try:
        app = create_app(_live(store, tmp_path))
        served = {
            (m, r.path.replace(":path}", "}"))
            for r in app.routes
            for m in getattr(r, "methods", ()) or ()
            if m != "HEAD"
        }
    finally:
        store.close()
    table = README[README.index("| method | path | what |") :]
    table = table[: table.index("\n\n")]
    listed = set()
    for row in table.splitlines()[2:]:
        methods, paths = [c.strip() for c in row.strip().strip("|").split("|")[:2]]
        for path in re.findall(r"`([^`]+)`", paths):
            path = path.split("?")[0]
            group = re.search(r"\{([^}]*,[^}]*)\}", path)
            options = group.group(1).split(",") if group else [None]
            for option in options:
                real = path.replace(group.group(0), option) if option else path
                real = real.replace("{claude-code}", "{harness}")
                for m in methods.split(","):
                    listed.add((m.strip(), real))
    harness = {(m, p) for m, p in listed if p.startswith("/api/harness/")}
    listed = (listed - harness) | {("POST", "/api/harness/{harness}/{event}")}
    docs = {("GET", p) for p in ("/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc")}
    assert listed == served - docs


def _config_block() -> str:
    start = README.index("```toml\n", README.index("## Configuration"))
    return README[start : README.index("```\n", start + 8)]


def test_readme_config_block_has_every_setting():
    """Every field of every section's settings model (``core.config.KNOWN_SECTIONS``) is in
    the README's config block, under its section, by the name config.toml takes."""
    import dataclasses

    from continuity.archive.archiver import ArchiveSettings
    from continuity.checkpoints.capture import CheckpointConfig
    from continuity.continuation.summarize.settings import SummarizerSettings
    from continuity.core.config import KNOWN_SECTIONS
    from continuity.daemon.server import DaemonSettings
    from continuity.lineage.memory_md import MemoryMdSettings
    from continuity.retrieval.settings import RetrievalSettings
    from continuity.team.settings import TeamSettings
    from continuity.transcripts.session_transcripts import TranscriptSettings

    models = {
        "archive": ArchiveSettings,
        "continuity": CheckpointConfig,
        "daemon": DaemonSettings,
        "memory_md": MemoryMdSettings,
        "retrieval": RetrievalSettings,
        "summarizer": SummarizerSettings,
        "team": TeamSettings,
        "transcripts": TranscriptSettings,
    }
    assert set(models) == set(KNOWN_SECTIONS)
    sections = re.split(r"^\[(\w+)\]", _config_block(), flags=re.M)
    written = {
        sections[i]: set(re.findall(r"^#? ?(\w+) =", sections[i + 1], flags=re.M))
        for i in range(1, len(sections), 2)
    }
    for name, model in models.items():
        fields = getattr(model, "model_fields", None)
        if fields is not None:
            names = {f.alias or key for key, f in fields.items()}
        else:
            names = {f.name for f in dataclasses.fields(model)}
        assert names - written.get(name, set()) == set(), name
        assert written.get(name, set()) - names == set(), name


def test_for_a_team_says_how_to_set_it_up_owner_first() -> None:
    """issue 41 review item 9: the section names the install extra pyproject has, puts the
    owner's steps (login roles, team init, add-member --team T) before the members', and the
    members' join uses the same --team; the two commands a team runs stay at the top."""
    import tomllib

    section = README[README.index("### For a team") :]
    section = section[: section.index("\n### ", 10)]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    named = re.findall(r"pip install -e '\.\[(\w+)\]'", section)
    assert named and all(n in extras for n in named) and "psycopg" in str(extras[named[0]])
    first_block = section[
        section.index("```bash") : section.index("```", section.index("```bash") + 7)
    ]
    assert "continuity team join" in first_block and "continuity team share" in first_block
    owner = [section.index(s, len(first_block)) for s in ("createuser", "team init", "add-member")]
    member = section.index("continuity team join URL", len(first_block))
    assert owner == sorted(owner) and owner[-1] < member
    added = set(re.findall(r"add-member \S+ \w+ --team (\w+)", section))
    joined = set(re.findall(r"team join \S+ --team (\w+)", section))
    assert added and joined == added
