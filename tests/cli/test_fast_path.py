"""The read commands' fast path (``continuity.cli.fast``, issue 43 goal 3) prints what the
Typer application printed: stdout and stderr byte for byte, and the exit status, for each
command with and without ``--json`` on the sample workspace (``examples/sessions``). The
baseline runs ``continuity.cli.app.main`` with the SQLAlchemy store (``store.lite`` off), as
every command ran before; the fast path runs the console entry and must load neither Typer,
Rich, SQLAlchemy nor pydantic."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The console script's own entry; ``LOADED`` names a file that gets the heavy modules loaded.
FAST = (
    "import atexit, os, sys\n"
    "def _loaded():\n"
    "    heavy = ('typer', 'rich.console', 'sqlalchemy', 'pydantic')\n"
    "    found = sorted({h for h in heavy for m in sys.modules if m == h or m.startswith(h + '.')})\n"
    "    open(os.environ['LOADED'], 'w').write(' '.join(found))\n"
    "atexit.register(_loaded)\n"
    "sys.argv[0] = 'continuity'\n"
    "from continuity.cli.hookcmd import console\n"
    "console()\n"
)
#: The Typer application over the SQLAlchemy store: what every command ran before.
BASELINE = (
    "import sys\n"
    "import continuity.store.lite as lite\n"
    "lite.open_lite = lambda *a, **k: None\n"
    "sys.argv[0] = 'continuity'\n"
    "from continuity.cli.app import main\n"
    "main()\n"
)
CLAUDE, CODEX, PI = "3185d1ef", "01a23556", "01a2354d"
#: Command lines the fast path runs.
FAST_CASES = [
    ["sessions"],
    ["sessions", "--json"],
    ["sessions", "-n", "2"],
    ["sessions", "--count=1", "--json"],
    ["sessions", "--all", "--harness", "pi"],
    ["sessions", "--project", "/home/dev/projects", "--json"],
    ["sessions", "--since", "2026-12-03"],
    ["sessions", "--harness", "opencode"],  # none: the hint on stderr
    ["sessions", "--harness", "gemini-cli", "--json"],  # a registry harness (issue 42)
    ["show", CLAUDE],
    ["show", CLAUDE, "--json"],
    ["show", CODEX, "--all"],
    ["show", "a152301b", "--seq", "10"],
    ["show", "a152301b", "--seq", "34"],  # row 34: an Edit, as a diff (issue 44)
    ["show", "a152301b", "--seq=10", "--json"],
    ["show", PI, "--raw"],
    ["show", PI, "--raw", "--json"],
    ["show", "nosuchsession"],  # SessionNotFound: one line, its exit status
    ["show", "01a23"],  # AmbiguousSession
    ["show", CLAUDE, "--seq", "99999"],  # no such row
    ["continue", CLAUDE],
    ["continue", CLAUDE, "--json"],
    ["continue", CODEX],
    ["continue", CODEX, "--json"],
    ["continue", PI, "--budget", "3000"],
    ["continue", "a152301b", "--budget=500", "--json"],
    ["continue", "nosuchsession", "--json"],
    ["continue", "a152301b", "--budget", "10"],  # refused: exit 5
    ["continue", "a152301b", "--budget", "10", "--json"],
    # issue 43 goal 4: a re-import that finds nothing new
    ["import", "--no-embed", str(ROOT / "examples/sessions")],
    ["import", str(ROOT / "examples/sessions"), "--no-embed", "--json"],
]
#: Command lines the fast path leaves to Typer (help, usage errors, unknown options).
TYPER_CASES = [
    ["sessions", "--help"],
    ["show", "-h"],
    ["continue", CLAUDE, "--version"],
    ["show"],
    ["sessions", "-n", "-1"],
    ["sessions", "--harness", "nope"],
    ["sessions", "--since", "yesterday-ish"],
    ["continue", CLAUDE, "--budget", "0"],
    ["show", CLAUDE, "--bogus"],
    ["sessions", "--project", "-x"],  # a value that reads as an option
    ["import", "--no-embed", str(ROOT / "examples/nosuchfolder")],  # a path not there
    ["import", "--no-embed", ""],  # an empty path
]


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTINUITY_")}
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR", "COLUMNS"):
        env.pop(name, None)
    env.update(CONTINUITY_HOME=str(home), **extra)
    return env


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample workspace: ``examples/sessions`` imported (no vectors)."""
    home = tmp_path_factory.mktemp("fast") / "workspace"
    subprocess.run(
        [sys.executable, "-c", BASELINE, "import", "--no-embed", str(ROOT / "examples/sessions")],
        env=_env(home),
        check=True,
        capture_output=True,
    )
    return home


def _both(home: Path, argv: list[str], tmp_path: Path, **extra: str) -> tuple[Any, Any, str]:
    loaded = tmp_path / "loaded.txt"
    fast = subprocess.run(
        [sys.executable, "-c", FAST, *argv],
        env=_env(home, LOADED=str(loaded), **extra),
        capture_output=True,
        check=False,
    )
    base = subprocess.run(
        [sys.executable, "-c", BASELINE, *argv],
        env=_env(home, **extra),
        capture_output=True,
        check=False,
    )
    return fast, base, loaded.read_text()


@pytest.mark.parametrize("argv", FAST_CASES, ids=" ".join)
def test_fast_path_prints_what_typer_printed(sample: Path, tmp_path: Path, argv: list[str]):
    fast, base, loaded = _both(sample, argv, tmp_path)
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        base.returncode,
        base.stdout,
        base.stderr,
    )
    assert base.stdout or base.stderr  # each case prints something
    if fast.returncode == 0:
        assert loaded == ""  # the fast path ran: no Typer, Rich's console, SQLAlchemy, pydantic


@pytest.mark.parametrize(
    "argv",
    [["sessions"], ["show", CLAUDE, "--json"], ["continue", CODEX], ["show", "nosuchsession"]],
    ids=" ".join,
)
@pytest.mark.parametrize("spelling", ["--home", "--home="])
def test_home_before_the_command_takes_the_fast_path(
    sample: Path, tmp_path: Path, argv: list[str], spelling: str
):
    """Fresh-user review: ``continuity --home PATH sessions`` (the README's ``--home`` before
    the command, as ``git -C``) ran every read command through Typer. It now prints what
    ``sessions --home PATH`` prints, through the fast path."""
    elsewhere = tmp_path / "elsewhere"  # CONTINUITY_HOME names another workspace
    elsewhere.mkdir()
    home = str(sample)
    lead = [f"--home={home}"] if spelling == "--home=" else ["--home", home]
    loaded = tmp_path / "loaded.txt"
    fast = subprocess.run(
        [sys.executable, "-c", FAST, *lead, *argv],
        env=_env(elsewhere, LOADED=str(loaded)),
        capture_output=True,
        check=False,
    )
    base = subprocess.run(
        [sys.executable, "-c", BASELINE, *argv, "--home", home],
        env=_env(elsewhere),
        capture_output=True,
        check=False,
    )
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        base.returncode,
        base.stdout,
        base.stderr,
    )
    assert base.stdout or base.stderr
    if fast.returncode == 0:  # (an error is printed by the CLI, as without --home first)
        assert loaded.read_text() == ""  # the fast path ran


def test_home_after_command_moves_only_a_leading_home():
    from continuity.cli.hookcmd import home_after_command

    assert home_after_command(["--home", "/w", "show", "k"]) == ["show", "--home", "/w", "k"]
    assert home_after_command(["--home=/w", "search", "--", "-x"]) == [
        "search",
        "--home",
        "/w",
        "--",
        "-x",
    ]
    unchanged = [
        ["show", "k", "--home", "/w"],
        ["--home", "/w", "show", "--home", "/v"],  # twice: left to the CLI's rule
        ["--home", "sessions"],  # no path
        [],
    ]
    for argv in unchanged:
        assert home_after_command(argv) == argv


@pytest.mark.parametrize("argv", TYPER_CASES, ids=" ".join)
def test_what_the_fast_path_cannot_take_runs_as_before(
    sample: Path, tmp_path: Path, argv: list[str]
):
    fast, base, loaded = _both(sample, argv, tmp_path)
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        base.returncode,
        base.stdout,
        base.stderr,
    )
    assert "typer" in loaded.split()  # Typer ran it


#: Modules no read command's fast path loads (issue 43 goal 3, each 0.5 to 3 ms of its
#: start): ``typing`` (annotations only, under ``TYPE_CHECKING``; ``store.protocol``'s
#: ``Store`` is the one run-time ``Protocol``), ``hashlib`` (OpenSSL's ``libcrypto``:
#: ``core.digest`` hashes the kept answers' checks), ``pathlib`` (with ``urllib.parse`` and
#: ``ipaddress``: ``core.paths`` reads an absolute workspace path as text), ``threading``,
#: ``base64``, ``api.workspace``, ``core.records`` (``Note`` too: the session has no note).
NOT_ON_ANY = (
    "typing",
    "pathlib",
    "urllib",
    "ipaddress",
    "hashlib",
    "_hashlib",
    "threading",
    "base64",
    "continuity.api.workspace",
    "continuity.store.protocol",
    "continuity.core.records",
)
#: ... and per command: ``store.records`` (frozen dataclasses it never builds), ``difflib``
#: and ``browse.diffs`` (for an edit's diff: the session has none), and for ``sessions`` the
#: redaction (its titles are kept).
NOT_LOADED = {
    "sessions": (*NOT_ON_ANY, "continuity.redaction"),
    "show": (*NOT_ON_ANY, "continuity.store.records", "difflib", "continuity.browse.diffs"),
    "continue": (*NOT_ON_ANY, "continuity.store.records", "difflib", "continuity.browse.diffs"),
}


@pytest.mark.parametrize(
    "argv",
    [
        ["sessions"],
        ["sessions", "--json"],
        ["show", CLAUDE],
        ["show", CLAUDE, "--json"],
        ["continue", CLAUDE],
        ["continue", CLAUDE, "--json"],
    ],
)
def test_the_fast_path_loads_only_what_the_command_uses(
    sample: Path, tmp_path: Path, argv: list[str]
):
    avoid = NOT_LOADED[argv[0]]
    check = (
        "import atexit, os, sys\n"
        f"avoid = {avoid!r}\n"
        "def _loaded():\n"
        "    found = sorted(m for m in sys.modules if m.startswith(avoid))\n"
        "    ours = any(m.startswith('continuity.store.lite') for m in sys.modules)\n"
        "    open(os.environ['LOADED'], 'w').write(' '.join(found) if ours else 'no lite')\n"
        "atexit.register(_loaded)\n"
        "sys.argv[0] = 'continuity'\n"
        "from continuity.cli.hookcmd import console\n"
        "console()\n"
    )
    loaded = tmp_path / "loaded.txt"
    for _ in range(2):  # the first ``sessions`` may compute and keep the titles
        done = subprocess.run(
            [sys.executable, "-c", check, *argv],
            env=_env(sample, LOADED=str(loaded)),
            capture_output=True,
            check=False,
        )
    assert done.returncode == 0 and done.stdout
    assert loaded.read_text() == ""  # the fast path ran (store.lite) and loaded none of them


@pytest.mark.parametrize(
    "spelling", ["{P}", "{P}/", "{D}/./{N}", "/{P}", "{D}//{N}", "{N}", "./{N}/", "~/{N}"]
)
def test_each_spelling_of_the_workspace_reads_as_before(
    sample: Path, tmp_path: Path, spelling: str
):
    """The fast path reads the workspace's path as text (``core.paths``: no pathlib at
    start-up, issue 43 goal 3); every spelling of it, by ``--home`` or ``CONTINUITY_HOME``,
    relative to the working folder or to ``~``, gives what the Typer path gives. So does a
    file given as the workspace: its message names the path as pathlib writes it."""
    home = spelling.format(P=sample, D=sample.parent, N=sample.name)
    loaded = tmp_path / "loaded.txt"
    runs = [
        ({}, ["show", CLAUDE, "--home", home]),
        ({}, ["sessions", "--json", "--home", home]),
        ({"CONTINUITY_HOME": home}, ["continue", CLAUDE]),
        ({}, ["show", CLAUDE, "--home", home.replace(sample.name, f"{sample.name}/continuity.db")]),
    ]
    for extra, argv in runs:
        env = {**_env(sample, LOADED=str(loaded), HOME=str(sample.parent)), **extra}
        fast, base = (
            subprocess.run(
                [sys.executable, "-c", code, *argv],
                env=env,
                cwd=sample.parent,
                capture_output=True,
                check=False,
            )
            for code in (FAST, BASELINE)
        )
        assert (fast.returncode, fast.stdout, fast.stderr) == (
            base.returncode,
            base.stdout,
            base.stderr,
        ), argv
        if fast.returncode == 0:
            assert fast.stdout and loaded.read_text() == ""  # the fast path answered
        else:  # the file: the fast path's ``cli.app.failed`` said it, as the command does
            assert b": is a file, not a folder" in fast.stderr


def test_show_asks_the_tool_names_browse_diffs_reads_before_loading_it():
    """``cli.lines.edit_lines`` imports ``browse.diffs`` only for a call whose name is one
    ``edit_diffs`` reads (issue 43 goal 3): its copy of the names is the module's own, and
    ``edit_diffs`` reads no other name (an edit of another name would be shown as JSON)."""
    from continuity.browse.diffs import EDIT_TOOLS, edit_diffs
    from continuity.cli.lines import EDIT_TOOLS as ASKED

    assert ASKED == EDIT_TOOLS
    edit = {"file_path": "a.py", "old_string": "x", "new_string": "y", "content": "z"}
    assert edit_diffs("Edit", edit) is not None and edit_diffs("Write", edit) is not None
    assert edit_diffs("Bash", edit) is None and edit_diffs("NotebookEdit", edit) is None


def test_a_console_rich_styles_is_left_to_rich(sample: Path, tmp_path: Path):
    """``FORCE_COLOR`` makes Rich style a pipe as a terminal: the text goes through Typer and
    Rich (``--json`` does not: it never goes through Rich)."""
    fast, base, loaded = _both(
        sample, ["show", CLAUDE], tmp_path, FORCE_COLOR="1", TERM="xterm-256color"
    )
    assert (fast.returncode, fast.stdout) == (base.returncode, base.stdout)
    assert b"\x1b[" in fast.stdout and "typer" in loaded.split()
    fast, base, loaded = _both(sample, ["show", CLAUDE, "--json"], tmp_path, FORCE_COLOR="1")
    assert fast.stdout == base.stdout and loaded == ""


@pytest.mark.parametrize("argv", [["sessions"], ["sessions", "--json"], ["show", CLAUDE]])
def test_a_fresh_workspace_runs_as_before(tmp_path: Path, argv: list[str]):
    """No database yet (an empty folder): the fast path leaves it to the full store, which
    creates it."""
    (tmp_path / "fresh").mkdir()
    fast, base, _ = _both(tmp_path / "fresh", argv, tmp_path)
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        base.returncode,
        base.stdout,
        base.stderr,
    )
    assert base.stdout or base.stderr  # [], "no sessions yet: ...", or the session not found


@pytest.mark.parametrize("by", ["--home", "CONTINUITY_HOME"])
@pytest.mark.parametrize(
    "argv",
    [
        ["sessions"],
        ["sessions", "--json"],
        ["show", CLAUDE],
        ["continue", CLAUDE, "--json"],
        ["search", "export"],
        ["recall", "export", "--json"],
    ],
    ids=" ".join,
)
def test_an_absent_workspace_is_the_same_error_on_both_paths(
    tmp_path: Path, argv: list[str], by: str
):
    """A read command creates no workspace (fresh-user review): both paths say which folder
    is missing, exit 2, and leave it absent."""
    missing = tmp_path / "no" / "such"
    if by == "--home":
        fast, base, _ = _both(tmp_path, [*argv, "--home", str(missing)], tmp_path)
    else:
        fast, base, _ = _both(missing, argv, tmp_path)
    source = "--home" if by == "--home" else "$CONTINUITY_HOME"
    fix = f" --home {missing}" if by == "--home" else ""
    said = (
        f"continuity: no workspace at {missing}: {source} names a folder that does not exist "
        f"(nothing has been imported there); check {source}, or import into it: "
        f"`continuity import PATH...{fix}`\n"
    )
    assert (fast.returncode, fast.stdout, fast.stderr.decode()) == (2, b"", said)
    assert (base.returncode, base.stdout, base.stderr.decode()) == (2, b"", said)
    assert not (tmp_path / "no").exists()


def test_expected_outputs_are_real(sample: Path, tmp_path: Path):
    """The compared outputs hold what the commands show (a comparison of two empty outputs
    would pass too): the four sessions, a tool call, the continuation's header."""
    fast, _, _ = _both(sample, ["sessions"], tmp_path)
    assert fast.stdout.count(b"\n") == 5 and b"3185d1ef-21e2-4727-91d3-fda9d4ee95a1" in fast.stdout
    fast, _, _ = _both(sample, ["show", CLAUDE], tmp_path)
    assert "→ Bash".encode() in fast.stdout
    fast, base, loaded = _both(sample, ["show", "a152301b", "--seq", "34"], tmp_path)
    edit = (  # issue 44: an Edit as a unified diff, not JSON with literal \n
        "   34 assistant: → Edit [toolu_ddde6c48cf9f460a9b6f] "
        "/home/dev/projects/export-demo/export.py (+1 -1)\n"
        "        @@\n"
        "        -    return datetime.now().strftime(FORMAT)\n"
        "        +    return datetime.now(timezone.utc).strftime(FORMAT)\n"
    )
    assert edit.encode() in fast.stdout and fast.stdout == base.stdout and loaded == ""
    fast, _, _ = _both(sample, ["continue", CODEX], tmp_path)
    assert fast.stdout.startswith(b"session 01a23556-7fab-7dd1-86d3-d100eb5ab801: ")


def test_tabs_are_widened_as_rich_widens_them():
    """``output.plain_line`` against Rich's own rendering, wide characters included."""
    import io

    from rich.console import Console
    from rich.text import Text

    from continuity.cli.output import plain_line

    for text in ["a\tb", "\t", "abcdefgh\tx", "日本\tx\ty", "x\n\ty\tz", "é\t", "a\t\tb", "no tab"]:
        buf = io.StringIO()
        Console(file=buf, soft_wrap=True, highlight=False).print(Text(text))
        assert plain_line(text) == buf.getvalue(), text


def test_an_import_with_anything_new_runs_as_before(tmp_path: Path):
    """Issue 43 goal 4: the fast path answers only a re-import that finds nothing new. A file
    that grew, a file that is new, a recorded file that is gone and settings the import's
    phases check each leave it to the Typer path, which imports as before."""
    import shutil

    sessions = tmp_path / "sessions"
    shutil.copytree(ROOT / "examples/sessions", sessions)
    home = tmp_path / "ws"
    argv = ["import", "--no-embed", str(sessions)]
    loaded = tmp_path / "loaded.txt"

    def fast(**extra: str) -> tuple[Any, str]:
        done = subprocess.run(
            [sys.executable, "-c", FAST, *argv],
            env=_env(home, LOADED=str(loaded), **extra),
            capture_output=True,
            check=False,
        )
        return done, loaded.read_text()

    done, heavy = fast()  # the first import: everything new
    assert done.returncode == 0 and "typer" in heavy.split()
    done, heavy = fast()  # nothing new: the fast path
    assert (done.returncode, heavy) == (0, "")
    assert done.stdout.startswith(b"unchanged ") and b" 0 rows, " in done.stdout
    pi = next(sessions.rglob("*.jsonl"))
    line = pi.read_bytes().splitlines(keepends=True)[-1]
    with pi.open("ab") as fh:  # the file grew by a copy of its last line
        fh.write(line)
    done, heavy = fast()
    assert done.returncode == 0 and "typer" in heavy.split() and b"imported " in done.stdout
    done, heavy = fast()
    assert heavy == ""
    (home / "config.toml").write_text("[transcripts]\nidle_limit_minutes = 30\n")
    done, heavy = fast()  # settings the transcripts phase validates: Typer checks them
    assert done.returncode == 0 and "typer" in heavy.split()
    (home / "config.toml").unlink()
    gone = next(p for p in sessions.rglob("*.jsonl") if p != pi)
    moved = tmp_path / gone.name
    gone.rename(moved)
    done, heavy = fast()  # a recorded file gone: the Typer path marks it
    assert "typer" in heavy.split() and b"source file(s) gone" in done.stderr
    moved.rename(gone)
    done, heavy = fast()  # back: marked back by the Typer path, then nothing new
    assert "typer" in heavy.split()
    done, heavy = fast()
    assert heavy == "" and done.stderr == b"0 checkpoints replayed, 0 transcripts written\n"
    argv.remove("--no-embed")
    done, heavy = fast()  # embedding asked for: the Typer path embeds what waits
    assert done.returncode == 0 and "typer" in heavy.split()


def test_an_opencode_folder_below_the_folder_named_leaves_the_import_to_typer(tmp_path: Path):
    """Fresh-user review of issue 42: `import DIR` finds an OpenCode data folder below DIR
    too, whose mirrors every import brings up to date; the fast path, which cannot, leaves
    such an import to the Typer path (it did so only for a folder named itself)."""
    import shutil

    sessions = tmp_path / "sessions"
    shutil.copytree(ROOT / "examples/sessions", sessions)
    shutil.copytree(ROOT / "tests/fixtures/opencode/sqlite", sessions / "share" / "opencode")
    home = tmp_path / "ws"
    loaded = tmp_path / "loaded.txt"
    argv = ["import", "--no-embed", str(sessions)]
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", FAST, *argv],
            env=_env(home, LOADED=str(loaded)),
            capture_output=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "typer" in loaded.read_text().split()
    assert (
        b"ses_dc89fe0f0ffem5dFCryXxhDChw"
        in subprocess.run(
            [sys.executable, "-c", FAST, "sessions", "--all", "--json"],
            env=_env(home, LOADED=str(loaded)),
            capture_output=True,
            check=True,
        ).stdout
    )


def test_the_fast_path_takes_every_harness_sessions_takes():
    """``sessions --harness`` takes the same names on both paths: the registry's harnesses with
    import and the frameworks (a harness added to the registry is fast at once)."""
    from continuity.cli.commands.common import SessionHarness
    from continuity.cli.fast import FRAMEWORKS
    from continuity.formats.registry import names

    assert {*names("import"), *FRAMEWORKS} == {h.value for h in SessionHarness}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A copy of the sample workspace with its daemon running (``continuity serve``, a free
    loopback port), for ``search`` as the daemon's client (issue 43 goal 3)."""
    import shutil
    import socket
    import time

    home = tmp_path_factory.mktemp("served") / "workspace"
    subprocess.run(
        [sys.executable, "-c", BASELINE, "import", str(ROOT / "examples/sessions")],
        env=_env(home),
        check=True,
        capture_output=True,
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (home / "config.toml").write_text(f"[daemon]\nport = {port}\n")
    daemon = subprocess.Popen(
        [sys.executable, "-m", "continuity.cli.app", "serve", "--home", str(home)],
        env=_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (home / "daemon.url").exists():
        assert daemon.poll() is None and time.monotonic() < deadline, "the daemon did not start"
        time.sleep(0.1)
    yield home
    daemon.terminate()
    daemon.wait(30)
    shutil.rmtree(home, ignore_errors=True)


SEARCH_CASES = [
    ["search", "export job"],
    ["search", "export job", "--json"],
    ["search", "export", "-n", "3"],
    ["search", "compaction", "--mode", "words", "--role", "user"],
    ["search", "session", "--harness", "pi", "--json"],
    ["search", "Edit", "--tool", "Edit", "--since", "2026-01-01"],
]


@pytest.mark.parametrize("argv", SEARCH_CASES, ids=" ".join)
def test_search_as_the_daemons_client_prints_what_the_command_printed(
    served: Path, tmp_path: Path, argv: list[str]
):
    fast, base, loaded = _both(served, argv, tmp_path)
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        base.returncode,
        base.stdout,
        base.stderr,
    )
    assert fast.returncode == 0 and fast.stdout  # every case finds something
    assert loaded == ""  # the daemon answered: no Typer, Rich, SQLAlchemy, pydantic here


def test_search_as_the_daemons_client_loads_no_orjson(served: Path, tmp_path: Path):
    """The client speaks JSON with the daemon through the standard library's ``json``:
    ``orjson`` imports ``dataclasses``, ``inspect``, ``uuid`` and ``json`` (about 10 ms of a
    55 ms search, issue 43 goal 3), and nothing of the text output needs it. The workspace's
    ``config.toml`` is judged by the daemon: no ``tomllib`` (10 ms more, with ``typing``)."""
    assert (served / "config.toml").is_file()
    check = (
        "import atexit, os, sys\n"
        "def _loaded():\n"
        "    avoid = ('orjson', 'dataclasses', 'inspect', 'uuid', 'typer', 'sqlalchemy',\n"
        "             'tomllib', 'typing')\n"
        "    open(os.environ['LOADED'], 'w').write(' '.join(sorted(m for m in sys.modules\n"
        "        if m.startswith(avoid))))\n"
        "atexit.register(_loaded)\n"
        "sys.argv[0] = 'continuity'\n"
        "from continuity.cli.hookcmd import console\n"
        "console()\n"
    )
    loaded = tmp_path / "loaded.txt"
    done = subprocess.run(
        [sys.executable, "-c", check, "search", "export job"],
        env=_env(served, LOADED=str(loaded)),
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0 and b"export" in done.stdout
    assert loaded.read_text() == ""


BAD_CONFIGS = {
    "unknown section": "[continuty]\nretention_days = 3\n",
    "two unknown sections": "[continuty]\n[deamon]\n",
    "not TOML": "[daemon\n",
    "not UTF-8": b"[daemon]\n# \xff\n",
}


def _not_here(path: str) -> None:
    raise AssertionError(f"the client read {path} itself")


@pytest.mark.parametrize("bad", list(BAD_CONFIGS), ids=str)
@pytest.mark.parametrize("command", ["search", "recall"])
def test_a_bad_config_is_the_commands_error_with_the_daemon_running(
    served: Path, tmp_path: Path, bad: str, command: str
):
    """The client leaves reading ``config.toml`` to the running daemon (issue 43 goal 3); a
    file the daemon refuses ends in the command's own error, exit 2, with an unknown
    ``CONTINUITY_`` section of the client's environment joined as the command joins it."""
    config = served / "config.toml"
    good = config.read_bytes()
    text = BAD_CONFIGS[bad]
    try:
        config.write_bytes(good + (text.encode() if isinstance(text, str) else text))
        for extra in ({}, {"CONTINUITY_CONTINUTY__RETENTION_DAYS": "3"}):
            fast, base, _ = _both(served, [command, "export job"], tmp_path, **extra)
            assert (fast.returncode, fast.stdout, fast.stderr) == (
                base.returncode,
                base.stdout,
                base.stderr,
            )
            assert fast.returncode == 2 and str(config).encode() in fast.stderr, fast.stderr
    finally:
        config.write_bytes(good)
    fast, base, _ = _both(
        served, [command, "export job"], tmp_path, CONTINUITY_CONTINUTY__RETENTION_DAYS="3"
    )
    assert (fast.returncode, fast.stderr) == (base.returncode, base.stderr)
    assert fast.returncode == 2 and b"CONTINUITY_CONTINUITY__RETENTION_DAYS" in fast.stderr


@pytest.mark.parametrize("command", ["search", "recall"])
def test_the_client_takes_the_daemons_verdict_on_the_config(
    remembered: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
):
    """With the daemon running, the client never reads ``config.toml`` itself (``tomllib``:
    10 ms of its start): it answers from the daemon's verdict. A setting override in its own
    environment, which the daemon would not see, leaves the search to the command."""
    from continuity.cli import fast as client
    from continuity.core import config as settings

    monkeypatch.setattr(settings, "load_config_file", _not_here)
    run = client._search if command == "search" else client._recall
    assert run(["export job"], {"--json"}, {"--home": str(remembered)}) == 0
    assert "export job" in capsys.readouterr().out.lower()
    monkeypatch.setenv("CONTINUITY_RETRIEVAL__DIM", "abc")
    with pytest.raises(client._Unsure):
        run(["export job"], {"--json"}, {"--home": str(remembered)})


@pytest.mark.parametrize("command", ["search", "recall"])
@pytest.mark.parametrize(
    "override",
    [
        {"CONTINUITY_RETRIEVAL__DIM": "abc"},  # refused by the command
        {"CONTINUITY_RETRIEVAL__BOGUS": "1"},  # no such setting
        {"CONTINUITY_DAEMON__PORT": "1"},  # finds the daemon: the client may still answer
    ],
    ids=lambda o: next(iter(o)),
)
def test_a_setting_override_gives_what_the_command_gives_with_the_daemon_running(
    remembered: Path, tmp_path: Path, command: str, override: dict[str, str]
):
    """Fresh-user review: with the daemon running, ``CONTINUITY_RETRIEVAL__DIM=abc continuity
    search`` printed hits (the daemon searched with its own settings); without it, exit 2.
    Now both give the command's answer."""
    fast, base, _ = _both(remembered, [command, "export job"], tmp_path, **override)
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        base.returncode,
        base.stdout,
        base.stderr,
    )
    if "DAEMON" not in next(iter(override)):
        assert fast.returncode == 2 and b"CONTINUITY_RETRIEVAL__" in fast.stderr


def test_a_verdict_on_the_config_is_checked_as_the_command_checks_the_file(
    monkeypatch: pytest.MonkeyPatch,
):
    """``check_verdict``: the file's problems first, then the environment's, joined."""
    from continuity.core.config import check_verdict
    from continuity.core.errors import ConfigError

    for name in [n for n in os.environ if n.startswith("CONTINUITY_")]:
        monkeypatch.delenv(name)
    check_verdict({"problems": []})
    with pytest.raises(ConfigError) as refused:
        check_verdict({"error": "/w/config.toml: not valid TOML"})
    assert str(refused.value) == "/w/config.toml: not valid TOML"
    monkeypatch.setenv("CONTINUITY_DEAMON__PORT", "1")
    with pytest.raises(ConfigError) as said:
        check_verdict({"problems": ["/w/config.toml: unknown section [x]; known sections: ..."]})
    assert str(said.value) == (
        "/w/config.toml: unknown section [x]; known sections: ...; "
        "$CONTINUITY_DEAMON__PORT: unknown section 'deamon'; did you mean $CONTINUITY_DAEMON__PORT?"
    )


def test_the_config_verdict_is_kept_until_the_file_changes(tmp_path: Path):
    """``core.config.config_verdict`` answers from the file's stat while it stays, and reads
    the file again when it is rewritten, even to the same size."""
    from continuity.core.config import config_verdict

    config = tmp_path / "config.toml"
    config.write_text("[daemon]\n")
    assert config_verdict(str(config)) == {"problems": []}
    config.write_text("[deamon]\n")  # same size, new bytes
    verdict = config_verdict(str(config))
    assert verdict == {"problems": [f"{config}: unknown section [deamon]; did you mean [daemon]?"]}
    assert config_verdict(str(config)) is verdict
    config.write_text("[daemon\n")
    assert str(config_verdict(str(config))["error"]).startswith(f"{config}: not valid TOML")


def test_search_without_a_daemon_or_a_match_searches_in_process(served: Path, tmp_path: Path):
    """No match: the in-process command says why (exit 1); no daemon (``sample`` has none):
    it searches in-process, as before."""
    fast, base, loaded = _both(served, ["search", "zzqqxxnomatch"], tmp_path)
    assert (
        (fast.returncode, fast.stdout, fast.stderr)
        == (base.returncode, base.stdout, base.stderr)
        == (1, b"", b"no row matches 'zzqqxxnomatch'\n")
    )
    # the daemon said it: no search again in-process (it cost 1.8 s on the bench tree)
    assert loaded == ""
    for argv in (
        ["search", "and or not"],  # stop words only: the command says why
        ["search", "zzqq\x1b[31mxx"],  # a control character, shown as its escape
        ["search", "zzqqxxnomatch", "--json"],  # no JSON line; why, on stderr
        ["search", "the", "--json"],
    ):
        fast, base, loaded = _both(served, argv, tmp_path)
        assert (fast.returncode, fast.stdout, fast.stderr) == (
            base.returncode,
            base.stdout,
            base.stderr,
        )
        assert fast.returncode == 1 and loaded == "", argv
        assert fast.stderr.startswith(b"no row matches"), argv  # a review: --json said nothing
        if "--json" in argv:
            assert fast.stdout == b"", argv
    fast, base, loaded = _both(served, ["search", "zzqq:smile:xx"], tmp_path)
    assert (fast.returncode, fast.stderr) == (base.returncode, base.stderr)
    assert "typer" in loaded.split()  # a colon: the command says it (Rich's emoji codes)
    home = tmp_path / "nodaemon"
    import shutil

    shutil.copytree(served, home, ignore=lambda _d, names: [n for n in names if "daemon" in n])
    fast, base, loaded = _both(home, ["search", "export job"], tmp_path)
    assert (fast.returncode, fast.stdout) == (base.returncode, base.stdout)
    assert fast.returncode == 0 and "typer" in loaded.split()


@pytest.mark.parametrize(
    ("values", "asked"), [({}, 20), ({"-n": "3"}, 3), ({"--count": "0"}, 500), ({"-n": "500"}, 500)]
)
def test_search_asks_the_daemon_for_the_count_the_command_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, values: dict[str, str], asked: int
):
    """Without ``-n`` the client asked the daemon for 500 hits and printed them all, where
    the command prints its default 20 (the sample's queries have fewer than 20 hits, so the
    byte-for-byte cases above could not see it; found on the 100 MB bench tree)."""
    from continuity.cli import fast
    from continuity.cli.commands.browse import MAX_HITS

    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(
        fast, "_daemon_search", lambda home, body, config: sent.append(body) or ([], None)
    )
    given = {"--json", *values}
    (tmp_path / "ws").mkdir()  # search only reads: an absent workspace is an error first
    with pytest.raises(fast._Unsure):  # no hit, no word from the daemon: the command says
        fast._search(["export"], given, {"--home": str(tmp_path / "ws"), **values})
    assert [b["limit"] for b in sent] == [asked]
    assert fast.MAX_HITS == MAX_HITS


def test_search_n_0_as_the_daemons_client_says_when_it_stopped_at_500(
    sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
):
    """``-n 0`` that got 500 hits from the daemon: the note the command prints
    (``cli.commands.browse``; ``tests/cli/test_usage_rules.py`` runs it on 501 rows)."""
    import json

    from continuity.cli import fast

    hit = json.loads(
        subprocess.run(
            [sys.executable, "-c", BASELINE, "search", "export", "--json", "-n", "1"],
            env=_env(sample),
            check=True,
            capture_output=True,
        ).stdout
    )
    monkeypatch.setattr(
        fast, "_daemon_search", lambda home, body, config: ([dict(hit)] * body["limit"], None)
    )
    home = {"--home": str(sample)}
    assert fast._search(["export"], {"--json"}, {**home, "-n": "0"}) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 500
    assert err == (
        "note: 500 hits shown, the most search prints (-n 0); more may match: narrow it with "
        "--here, --project, --harness, --since, --until, --role or --tool\n"
    )
    assert fast._search(["export"], set(), {**home, "-n": "500"}) == 0
    assert capsys.readouterr().err == ""


@pytest.fixture(scope="module")
def remembered(served: Path) -> Path:
    """The served workspace with three memories, one from a session (for ``--expand``)."""
    key = "3185d1ef-21e2-4727-91d3-fda9d4ee95a1"  # the Claude Code example session
    for argv in (
        ["remember", "We deploy staging with make deploy-staging", "--type", "decision"],
        ["remember", "The export job retries three times", "--tag", "ops", "--source", key],
        ["remember", "Staging runs on the small cluster", "--tag", "ops", "--tag", "infra"],
    ):
        subprocess.run(
            [sys.executable, "-c", BASELINE, *argv],
            env=_env(served),
            check=True,
            capture_output=True,
        )
    # The daemon embeds new memories in the background; until it has, its recall fuses the
    # words alone and scores them lower than the command does (seen: 0.0524 against 0.0786).
    # Wait for a vector of each memory when the daemon has an embedder (up to 30 s).
    import sqlite3
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        db = sqlite3.connect(served / "continuity.db")
        try:
            memories, vectors, any_vector = db.execute(
                "SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM memory_vectors),"
                " (SELECT count(*) FROM entry_vectors)"
            ).fetchone()
        finally:
            db.close()
        if vectors >= memories or not any_vector:
            break
        time.sleep(0.2)
    return served


RECALL_CASES = [
    ["recall", "deploy staging"],
    ["recall", "deploy staging", "--json"],
    ["recall", "staging", "-n", "1"],
    ["recall", "staging", "--limit=0"],
    ["recall", "export job", "--expand"],
    ["recall", "export job", "--expand", "--json"],
    ["recall", "staging", "--type", "decision"],
    ["recall", "zzqqnomatch"],
    ["recall", "zzqqnomatch", "--json"],
    ["recall", "zzqqnomatch", "--type", "rule", "--json"],
]


@pytest.mark.parametrize("argv", RECALL_CASES, ids=" ".join)
def test_recall_as_the_daemons_client_prints_what_the_command_printed(
    remembered: Path, tmp_path: Path, argv: list[str]
):
    """Issue 43 goal 3: ``recall`` with the daemon running is its client (the command alone
    loads the embedding model and the vectors: 1.4 s on the sample workspace), and prints
    the same bytes on both streams with the same exit status (1: nothing matched)."""
    fast, base, loaded = _both(remembered, argv, tmp_path)
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        base.returncode,
        base.stdout,
        base.stderr,
    )
    assert fast.stdout or fast.stderr
    assert fast.returncode == (1 if "zzqqnomatch" in argv else 0)
    assert loaded == ""  # the daemon answered: no Typer, Rich, SQLAlchemy, pydantic here


def test_recall_takes_the_command_path_for_what_it_leaves_to_click(
    remembered: Path, tmp_path: Path
):
    """``--tag`` repeats (Click reads it), a colon could be an emoji code to Rich: the
    command runs, with the same output."""
    for argv in (["recall", "staging", "--tag", "ops"], ["recall", "zzqq:smile:"]):
        fast, base, loaded = _both(remembered, argv, tmp_path)
        assert (fast.returncode, fast.stdout, fast.stderr) == (
            base.returncode,
            base.stdout,
            base.stderr,
        )
        assert "typer" in loaded.split(), argv


def test_the_console_entry_sends_every_fast_command_to_the_fast_path():
    """``recall`` was added to ``cli.fast`` and not to the console's list: it never ran."""
    from continuity.cli.fast import COMMANDS
    from continuity.cli.hookcmd import FAST_COMMANDS

    assert set(COMMANDS) == FAST_COMMANDS


@pytest.mark.parametrize(
    "argv",
    [
        [b"show", b"\xff"],
        [b"continue", b"ab\xfe"],
        [b"search", b"export", b"--tool", b"\xff"],
        [b"recall", b"deploy", b"--tag", b"\xff"],
    ],
    ids=["show", "continue", "search --tool", "recall --tag"],
)
def test_an_argument_that_is_not_utf8_is_a_usage_error(sample: Path, argv: list[bytes]):
    """Fresh-user review: a session key or a filter holding bytes that are not UTF-8 ended
    in a traceback (SQLite and orjson refuse the lone surrogates Python gives them as); it is
    one line naming the argument, exit 2, on either path."""
    done = subprocess.run(
        [os.fsencode(sys.executable), b"-c", FAST.encode(), *argv],
        env=_env(sample, LOADED=os.devnull),
        capture_output=True,
        check=False,
    )
    shown = argv[-1].decode("utf-8", "backslashreplace")
    assert done.returncode == 2, done.stderr
    assert done.stderr.decode() == (
        f'continuity: the argument "{shown}" holds bytes that are not UTF-8 text; give it as UTF-8\n'
    )


@pytest.mark.parametrize(
    "argv",
    [["show", CLAUDE], ["continue", CLAUDE], ["search", "export", "--mode", "words"], ["--help"]],
    ids=" ".join,
)
def test_a_closed_pipe_ends_the_command_quietly(sample: Path, argv: list[str]):
    """``continuity show KEY | head`` printed "continuity: Broken pipe" and exited 4; a reader
    that goes away ends the command without a word and the status of a command SIGPIPE ended
    (141, as ``git log | head``; not 1, which ``search`` says for no match), on the fast path
    (``show``, ``continue``) as on Typer's (``search`` without a daemon, ``--help``)."""
    done = _into_a_closed_pipe(FAST, sample, argv)
    assert (done.returncode, done.stderr) == (141, b"")


def _into_a_closed_pipe(program: str, home: Path, argv: list[str]) -> Any:
    """``program`` run with ``argv``, its standard output a pipe whose reader is gone before
    it writes (what ``| head`` leaves once it has read its lines)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-c", program, *argv],
            env=_env(home, LOADED=os.devnull),
            stdout=write,
            stderr=subprocess.PIPE,
            check=False,
        )
    finally:
        os.close(write)


def test_show_raw_warns_before_the_rows(sample: Path):
    """``show --raw | head -1`` lost its warning: it came after the rows, and the command
    ended at the closed pipe before it. It is now said first, on both paths."""
    for program, json in ((FAST, []), (BASELINE, []), (FAST, ["--json"]), (BASELINE, ["--json"])):
        done = _into_a_closed_pipe(program, sample, ["show", CLAUDE, "--raw", *json])
        assert (done.returncode, done.stderr) == (
            141,
            b"warning: --raw: secrets in this session are NOT redacted in the output\n",
        )
