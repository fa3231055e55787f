"""Issue 20, the command line a newcomer trusts: inputs that tell the truth, output that never
misleads, conventions people know. Each test holds the value a defect got wrong."""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import UTC
from pathlib import Path

import pytest

from tests.cli.test_fresh_user import run_main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "sessions"
PI_SAMPLE = next((EXAMPLES / "pi").glob("*.jsonl"))
CODEX_KEY = "01a23556-7fab-7dd1-86d3-d100eb5ab801"
EXPORT_KEY = "a152301b-7e98-4e16-af99-a3dcddb5f37a"  # the Claude Code session fixing export.py


# --------------------------------------------------------------------------- import inputs


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_import_of_a_device_or_fifo_is_not_a_regular_file(monkeypatch, capsys, tmp_path, kind):
    if kind == "device":
        target = Path("/dev/zero")
    else:
        target = tmp_path / "pipe.jsonl"
        os.mkfifo(target)
    code, _out, err = run_main(monkeypatch, capsys, "import", target, "--home", tmp_path / "h")
    assert code == 2
    assert err.strip() == (
        f"continuity: {target}: not a regular file or folder (a device, "
        "pipe or socket): give session files or folders"
    )


def test_import_of_a_missing_and_a_good_path_imports_the_good_one(monkeypatch, capsys, tmp_path):
    missing = tmp_path / "missing"
    code, out, err = run_main(
        monkeypatch, capsys, "import", missing, PI_SAMPLE, "--home", tmp_path / "h"
    )
    assert code == 2
    # issue 45 item 8: a path that does not exist (a folder of a harness not installed) is
    # an absent path, neither a file nor a skipped file
    assert f"absent {missing}: no such file or directory" in err.splitlines()
    assert err.splitlines()[-1] == (
        "error: 1 path could not be read (shown as skipped or "
        "absent above, with the reason); the others were imported"
    )
    assert out.splitlines()[-1] == (
        "1 file, 1 session, 15 rows, 0 bad lines, 0 duplicates, "
        "0 files skipped, 1 path absent (no such file or folder)"
    )
    code, out, err = run_main(
        monkeypatch, capsys, "import", missing, PI_SAMPLE, "--json", "--home", tmp_path / "h"
    )
    totals = json.loads(out)["totals"]
    assert (totals["files"], totals["skipped_files"], totals["absent_paths"]) == (1, 0, 1)
    code, out, _ = run_main(monkeypatch, capsys, "sessions", "--json", "--home", tmp_path / "h")
    assert [s["session"] for s in json.loads(out)] == ["01a2354d-2a28-75c5-9931-4e663de4f734"]


def test_an_import_where_every_file_was_skipped_exits_2(monkeypatch, capsys, tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text('{"theme": "dark"}\n')
    code, _out, err = run_main(monkeypatch, capsys, "import", other, "--home", tmp_path / "h")
    assert code == 2
    assert err.splitlines()[-1] == (
        "error: nothing imported: the file is not a session file of a harness "
        "continuity reads (`continuity harnesses` lists them and their folders)"
    )


def test_a_waiting_file_does_not_hide_files_that_are_not_sessions(monkeypatch, capsys, tmp_path):
    """A fresh-user review: three files that are not session files and one empty one exited
    0 (the empty one is waiting), though without it the same import exits 2."""
    folder = tmp_path / "g"
    folder.mkdir()
    for n in range(3):
        (folder / f"junk{n}.jsonl").write_text('{"hello": "world"}\n')
    (folder / "empty.jsonl").write_bytes(b"")
    code, _out, _err = run_main(monkeypatch, capsys, "import", folder, "--home", tmp_path / "h")
    assert code == 2
    (folder / "empty.jsonl").write_bytes(PI_SAMPLE.read_bytes())
    code, _out, _err = run_main(monkeypatch, capsys, "import", folder, "--home", tmp_path / "h")
    assert code == 0


def test_a_session_just_started_is_waiting_not_an_error(monkeypatch, capsys, tmp_path):
    """Fresh-user review: a session file a harness has just created (empty, or holding the
    start of its first line) made the import fail with "not a session file" and exit 2, so
    a cron or watch job reported errors for every new session. It is ``waiting`` (exit 0),
    and once the first line is whole the next import imports it."""
    folder = tmp_path / "new"
    folder.mkdir()
    empty, partial = folder / "empty.jsonl", folder / "partial.jsonl"
    empty.write_bytes(b"")
    data = PI_SAMPLE.read_bytes()
    partial.write_bytes(data[:100])
    assert b"\n" not in data[:100]
    code, out, err = run_main(
        monkeypatch, capsys, "import", folder, "--home", tmp_path / "h", "--json"
    )
    assert code == 0
    files = {Path(f["path"]).name: f for f in json.loads(out)["files"]}
    assert [
        (files[n]["status"], files[n]["waiting"], files[n]["reason"])
        for n in ("empty.jsonl", "partial.jsonl")
    ] == [
        ("skipped", True, "empty: nothing to import yet (imported once it has a line)"),
        ("skipped", True, "no complete line yet (imported once its first line is written)"),
    ]
    code, out, err = run_main(monkeypatch, capsys, "import", partial, "--home", tmp_path / "h")
    assert code == 0
    assert (
        f"waiting {partial}: no complete line yet (imported once its first line is "
        "written)" in err.splitlines()
    )
    assert out.splitlines()[-1] == (
        "1 file, 0 sessions, 0 rows, 0 bad lines, 0 duplicates, "
        "1 file skipped (1 waiting for their first line)"
    )
    partial.write_bytes(data)
    code, out, err = run_main(monkeypatch, capsys, "import", partial, "--home", tmp_path / "h")
    assert code == 0
    assert out.splitlines()[-1] == (
        "1 file, 1 session, 15 rows, 0 bad lines, 0 duplicates, 0 files skipped"
    )


@pytest.mark.parametrize(
    "encoding,name",
    [("utf-16", "UTF-16-LE"), ("utf-16-be", "UTF-16-BE"), ("utf-16-le", "UTF-16-LE")],
)
def test_a_utf16_file_is_named_by_its_encoding(monkeypatch, capsys, tmp_path, encoding, name):
    target = tmp_path / "u16.jsonl"
    target.write_bytes(PI_SAMPLE.read_text(encoding="utf-8").encode(encoding))
    code, _out, err = run_main(monkeypatch, capsys, "import", target, "--home", tmp_path / "h")
    assert code == 2
    assert (
        f"skipped {target}: not a session file (format not recognised): it is {name} "
        f"text, not UTF-8; convert it first (iconv -f {name} -t UTF-8 FILE > FILE.jsonl)"
    ) in err.splitlines()


def test_a_symlinked_folder_is_followed_once_and_a_loop_ends(monkeypatch, capsys, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    shutil.copy(PI_SAMPLE, real / "s.jsonl")
    tree = tmp_path / "tree" / "a"
    tree.mkdir(parents=True)
    (tree / "linked").symlink_to(real, target_is_directory=True)
    (tree / "loop").symlink_to(tmp_path / "tree", target_is_directory=True)
    (tree / "again").symlink_to(real, target_is_directory=True)
    code, out, err = run_main(
        monkeypatch, capsys, "import", tmp_path / "tree", "--json", "--home", tmp_path / "h"
    )
    assert code == 0, err
    files = json.loads(out)["files"]
    assert [(f["path"], f["status"]) for f in files] == [(str(real / "s.jsonl"), "imported")]


# --------------------------------------------------------------------------- continue, show text


def _console(width: int = 80, terminal: bool = True):
    import io

    from rich.console import Console

    return Console(
        file=io.StringIO(),
        width=width,
        force_terminal=terminal,
        color_system=None,
        highlight=False,
        soft_wrap=True,
    )


def _view(**kw):
    from continuity.api.results import Continuation
    from continuity.continuation.view import ContinuationView, Gap, gap_notice

    gaps = [Gap(2, 49)]
    return Continuation.from_dict(
        ContinuationView(
            session="s1",
            budget_bytes=240_000,
            used_bytes=1_234,
            gaps=gaps,
            notice=gap_notice(gaps),
            **kw,
        ).to_dict()
    )


def test_continue_text_shows_the_gap_notice_and_user_brackets():
    from continuity.cli.render import continuation_text

    console = _console()
    view = _view(
        request={"seq": 50, "actor": "user", "text": "fix [bold]this[/] and [red]"},
        messages=[
            {
                "seq": 51,
                "role": "assistant",
                "copied": False,
                "content": [{"type": "text", "text": "see [link=x]y[/link]"}],
            }
        ],
    )
    continuation_text(console, view)
    lines = console.file.getvalue().splitlines()
    assert lines[0] == (
        "session s1: 1,234 of 240,000 bytes (long texts are cut here, marked; "
        "--json has them whole)"
    )
    assert lines[1] == (
        "[seq 2–49 omitted; look them up in continuity's record before relying "
        "on them or repeating "
        "unresolved work]"
    )
    assert lines[2] == "previous request (seq 50, user): fix [bold]this[/] and [red]"
    assert lines[3] == "   51 assistant: see [link=x]y[/link]"


def test_continue_text_shows_ansi_escapes_instead_of_obeying_them():
    from continuity.cli.render import continuation_text

    console = _console()
    view = _view(request={"seq": 50, "actor": "user", "text": "\x1b[31mred\x1b[0m\rover"})
    continuation_text(console, view)
    assert "\x1b" not in console.file.getvalue() and "\r" not in console.file.getvalue()
    assert (
        "previous request (seq 50, user): \\x1b[31mred\\x1b[0m\\rover"
        in console.file.getvalue().splitlines()
    )


def test_every_display_cut_says_what_it_left_out():
    from continuity.cli.render import continuation_text

    console = _console(width=10_000)
    args = {"command": "x" * 1_000}
    messages = [
        {
            "seq": 51,
            "role": "assistant",
            "copied": False,
            "content": [
                {"type": "text", "text": "é" * 1_500},
                {"type": "tool_call", "id": "c1", "name": "shell", "arguments": args},
            ],
        },
        {
            "seq": 52,
            "role": "tool",
            "copied": False,
            "content": [
                {"type": "tool_result", "call_id": "c1", "is_error": False, "text": "r" * 5_000}
            ],
        },
    ]
    continuation_text(console, _view(messages=messages))
    lines = console.file.getvalue().splitlines()
    assert lines[2] == "   51 assistant: " + "é" * 1_000 + " [… 1,000 bytes omitted]"
    args_json = '{"command":"' + "x" * 1_000 + '"}'
    assert lines[3] == (
        "   51 assistant: → shell [c1] "
        + args_json[:400]
        + f" [… {len(args_json) - 400:,} bytes omitted]"
    )
    assert lines[4] == "   52 tool: ← [c1] " + "r" * 600 + " [… 4,400 bytes omitted]"


def test_show_text_escapes_markup_from_the_transcript(monkeypatch, capsys, tmp_path):
    target = tmp_path / "s.jsonl"
    text = PI_SAMPLE.read_text(encoding="utf-8").replace(
        "Interactive pi turn 1: list files", "[bold]list[/] \\u001b[2J files"
    )
    target.write_text(text, encoding="utf-8")
    code, _, err = run_main(monkeypatch, capsys, "import", target, "--home", tmp_path)
    assert code == 0, err
    code, out, _ = run_main(monkeypatch, capsys, "show", "01a2354d", "--home", tmp_path)
    assert "    3 user (request): [bold]list[/] \\x1b[2J files" in out.splitlines()


# --------------------------------------------------------------------------- sessions layout


def _records(sessions, copies=None):
    """The ``SessionRecord``s ``continuity sessions`` renders (issue 46)."""
    from continuity.api.results import SessionRecord
    from continuity.api.shapes import session_dict

    return [
        SessionRecord.from_dict(session_dict(s, (copies or {}).get(s.key), title=s.title))
        for s in sessions
    ]


def _sessions():
    from datetime import datetime, timedelta

    from continuity.core.model import Session

    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    long_key = "a-very-long-session-key-that-would-hide-every-other-column-" + "x" * 60
    sessions = [
        Session(
            key="01a23556-7fab-7dd1-86d3-d100eb5ab801",
            harness="codex",
            project="/home/dev/projects/a-project-with-a-rather-long-name/and/deeper/still",
            ended_at=now - timedelta(minutes=5),
            entry_count=32,
            title="Fix the flaky parser test that fails on every third run of the suite",
        ),
        Session(
            key="01a2354d-2a28-75c5-9931-4e663de4f734",
            harness="pi",
            project="/home/dev/pi",
            ended_at=now - timedelta(days=3),
            entry_count=15,
        ),
        Session(
            key=long_key,
            harness="claude-code",
            project=None,
            ended_at=now - timedelta(days=90),
            entry_count=7,
        ),
    ]
    return now, sessions, long_key


def test_sessions_fits_80_columns_with_short_keys_and_relative_times():
    from continuity.cli.render import sessions_table

    now, sessions, _long_key = _sessions()
    console = _console(width=80)
    sessions_table(console, _records(sessions), now=now)
    lines = console.file.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    assert lines[0].split() == ["session", "harness", "project", "rows", "active", "title"]
    # issue 44: the project shortened from the left, the title last, cut to the width left
    assert lines[1].split()[:6] == ["01a23556", "codex", "…/and/deeper/still", "32", "5", "min"]
    assert lines[1].split()[6:8] == ["ago", "Fix"] and lines[1].endswith("…")
    assert len(lines[1]) == 80
    assert "01a2354d" in lines[-3] or any(ln.split()[:2] == ["01a2354d", "pi"] for ln in lines)
    assert any(
        ln.split()[:2] == ["a-very-l", "claude-code"] and ln.endswith("2026-09-03")
        for ln in (x.rstrip() for x in lines)
    )
    assert lines[-1] == "short keys: any unique prefix works; --json or a pipe shows them whole"


def test_sessions_in_a_terminal_marks_copies_in_80_columns():
    """Issue 45 item 3: a `continuity resume` copy shows whose copy it is (the source's short
    key) in a `copy of` column, only when a copy is listed; still 80 columns."""
    from continuity.cli.render import sessions_table

    now, sessions, _long_key = _sessions()
    copies = {sessions[0].key: {"session": sessions[1].key, "original": sessions[1].key}}
    console = _console(width=80)
    sessions_table(console, _records(sessions, copies), now=now)
    lines = console.file.getvalue().splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    assert lines[0].split()[-3:] == ["copy", "of", "title"]
    assert lines[1].split()[:2] == ["01a23556", "codex"] and lines[1].split()[7] == "01a2354d"
    pi_row = next(ln for ln in lines if ln.split()[:2] == ["01a2354d", "pi"])
    assert pi_row.split()[-1] == "ago"  # no copy, no title: empty cells
    plain = _console(width=80)
    sessions_table(plain, _records(sessions), now=now)
    assert "copy" not in plain.file.getvalue().splitlines()[0]


def test_sessions_piped_prints_full_values():
    from continuity.cli.render import sessions_table

    now, sessions, long_key = _sessions()
    console = _console(width=80, terminal=False)
    sessions_table(console, _records(sessions), now=now)
    lines = console.file.getvalue().splitlines()
    assert lines[0] == "session\tharness\tproject\tentries\tlast_activity\tsource\tcopy_of\ttitle"
    assert lines[3].startswith(f"{long_key}\tclaude-code\t\t7\t2026-09-03T12:00:00Z\t")
    assert lines[1].split("\t")[2] == sessions[0].project
    assert lines[1].split("\t")[-1] == sessions[0].title  # whole, last (issue 44)


def test_short_keys_are_unique_prefixes():
    from continuity.cli.render import short_keys

    keys = ["01a23547-4f15", "01a23547-cc57", "abc", "01a2354d-0000"]
    assert short_keys(keys) == {
        "01a23547-4f15": "01a23547-4",
        "01a23547-cc57": "01a23547-c",
        "abc": "abc",
        "01a2354d-0000": "01a2354d",
    }


# --------------------------------------------------------------------------- conventions


def _all_commands():
    """Every command path of the app: ["sessions"], ["db", "upgrade"], ["hooks", "install"]..."""
    from continuity.cli.app import command

    found = []

    def walk(cmd, path):
        subs = getattr(cmd, "commands", None)
        if subs:
            if path:
                found.append(path)
            for name, sub in subs.items():
                walk(sub, [*path, name])
        else:
            found.append(path)

    walk(command(), [])
    return found


COMMAND_PATHS = _all_commands()


def test_the_command_list_is_complete():
    names = {" ".join(p) for p in COMMAND_PATHS}
    assert {
        "import",
        "sessions",
        "show",
        "continue",
        "db upgrade",
        "hooks install",
        "serve",
        "mcp",
        "doctor",
        "prune",
        "remember",
        "recall",
    } <= names


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=lambda p: " ".join(p))
def test_every_command_has_version_and_short_help(monkeypatch, capsys, path):
    from continuity.core.version import package_version

    code, out, err = run_main(monkeypatch, capsys, *path, "--version")
    assert (code, out, err) == (0, f"continuity {package_version()}\n", "")
    code, out, err = run_main(monkeypatch, capsys, *path, "-h")
    assert code == 0 and out.startswith(f"Usage: continuity {' '.join(path)}".rstrip())


def test_version_is_the_package_metadata(monkeypatch, capsys):
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    code, out, _ = run_main(monkeypatch, capsys, "--version")
    assert (code, out) == (0, f"continuity {declared}\n")


#: What a user should never read in a --help: our seeds, bug numbers, format placeholders,
#: Python type names, implementation asides.
JARGON = [
    "seed 0",
    "seed 002",
    "B57",
    "B45",
    "issue ",
    "{session}",
    "<list[",
    "<Path>",
    "<int>",
    "<str>",
    "(fallback)",
    "spec/",
    "formats.md",
]


@pytest.mark.parametrize("path", [[], *COMMAND_PATHS], ids=lambda p: " ".join(p) or "root")
def test_help_speaks_to_users(monkeypatch, capsys, path):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run_main(monkeypatch, capsys, *path, "--help")
    assert code == 0
    found = [word for word in JARGON if word.lower() in out.lower()]
    assert found == [], f"continuity {' '.join(path)} --help says {found}:\n{out}"
    assert re.search(r"\bB\d{2}\b", out) is None, out


def test_shell_completion_is_offered(monkeypatch, capsys):
    code, out, _ = run_main(monkeypatch, capsys, "--help")
    assert code == 0 and "--install-completion" in out and "--show-completion" in out
    import subprocess
    import sys

    done = subprocess.run(
        [str(Path(sys.executable).with_name("continuity"))],
        env={
            **os.environ,
            "_CONTINUITY_COMPLETE": "complete_bash",
            "COMP_WORDS": "continuity sess",
            "COMP_CWORD": "1",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "sessions" in done.stdout.split()


def test_home_before_the_command(monkeypatch, capsys, tmp_path):
    code, _, err = run_main(monkeypatch, capsys, "--home", tmp_path, "import", PI_SAMPLE)
    assert code == 0, err
    code, out, _ = run_main(monkeypatch, capsys, "--home", tmp_path, "sessions", "--json")
    assert [s["session"] for s in json.loads(out)] == ["01a2354d-2a28-75c5-9931-4e663de4f734"]
    code, out, _ = run_main(monkeypatch, capsys, "--home", tmp_path, "where")
    assert out.splitlines()[0] == f"home: {tmp_path}"
    # after the command wins
    other = tmp_path / "other"
    code, out, _ = run_main(monkeypatch, capsys, "--home", tmp_path, "where", "--home", other)
    assert out.splitlines()[0] == f"home: {other}"
    code, _, err = run_main(monkeypatch, capsys, "--home", "", "sessions")
    assert code == 2 and "'--home': is empty" in err


def test_no_colour_when_piped_or_under_no_color(tmp_path):
    import subprocess
    import sys

    exe = str(Path(sys.executable).with_name("continuity"))
    subprocess.run(
        [exe, "import", str(PI_SAMPLE), "--home", str(tmp_path)], check=True, capture_output=True
    )
    piped = subprocess.run(
        [exe, "show", "01a2354d", "--home", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert (
        "\x1b" not in piped.stdout and "    3 user (request): Interactive pi turn 1" in piped.stdout
    )
    code = (
        "import os, sys; os.environ['NO_COLOR'] = '1'; "
        "from continuity.cli.commands.common import _consoles; o, e = _consoles(); "
        "print(o.color_system, e.color_system)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TERM": "xterm-256color"},
    )
    assert done.stdout.strip() == "None None"


# --------------------------------------------------------------------------- sessions filters


@pytest.fixture(scope="module")
def examples_home(tmp_path_factory) -> Path:
    from typer.testing import CliRunner

    from continuity.cli.app import app

    home = tmp_path_factory.mktemp("examples")
    done = CliRunner().invoke(app, ["import", str(EXAMPLES), "--home", str(home), "--json"])
    assert done.exit_code == 0, done.output
    return home


def _keys(monkeypatch, capsys, home, *args):
    code, out, err = run_main(monkeypatch, capsys, "sessions", "--json", "--home", home, *args)
    assert code == 0, err
    return [s["session"] for s in json.loads(out)]


def test_sessions_filters(monkeypatch, capsys, examples_home):
    every = _keys(monkeypatch, capsys, examples_home)
    assert len(every) == 4
    assert _keys(monkeypatch, capsys, examples_home, "--harness", "pi") == [
        "01a2354d-2a28-75c5-9931-4e663de4f734"
    ]
    assert _keys(
        monkeypatch, capsys, examples_home, "--project", "/home/dev/projects/codex-demo"
    ) == [CODEX_KEY]
    assert _keys(monkeypatch, capsys, examples_home, "--project", "/home/dev/projects") == every
    assert _keys(monkeypatch, capsys, examples_home, "--project", "/home/dev/projects/codex") == []
    # the samples' last activity: codex 2026-12-02 06:00:05.765, claude-code 05:53:46, pi
    # 05:50:0x; the export session 2026-12-06 02:52:02
    assert _keys(monkeypatch, capsys, examples_home, "--since", "2026-12-02T05:55") == [
        EXPORT_KEY,
        CODEX_KEY,
    ]
    assert _keys(monkeypatch, capsys, examples_home, "--since", "2026-12-02T06:55+01:00") == [
        EXPORT_KEY,
        CODEX_KEY,
    ]
    assert _keys(monkeypatch, capsys, examples_home, "--since", "2026-12-03") == [EXPORT_KEY]
    assert _keys(monkeypatch, capsys, examples_home, "--since", "2026-12-07") == []
    assert len(_keys(monkeypatch, capsys, examples_home, "--since", "5200w")) == 4


def test_sessions_bad_since_is_exit_2(monkeypatch, capsys, examples_home):
    code, _out, err = run_main(
        monkeypatch, capsys, "sessions", "--since", "yesterday", "--home", examples_home
    )
    assert code == 2
    assert err.strip() == (
        "error: Invalid value: --since 'yesterday': give a date (2026-11-30), "
        "a time (2026-11-30T14:00) or an age (90min, 12h, 7d, 2w) (see "
        "continuity sessions --help)"
    )  # a usage error (issue 45)


def test_parse_since_ages():
    from datetime import datetime

    from continuity.cli.commands.common import parse_since

    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    assert parse_since("90min", now=now) == datetime(2026, 12, 2, 10, 30, tzinfo=UTC)
    assert parse_since("7d", now=now) == datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
    assert parse_since("2026-12-01", now=now) == datetime(2026, 12, 1, tzinfo=UTC)


# --------------------------------------------------------------------------- home, remember, consolidate


def test_a_relative_home_is_made_absolute(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CONTINUITY_HOME", "rel-ws")
    code, out, _ = run_main(monkeypatch, capsys, "where")
    assert out.splitlines() == [
        f"home: {tmp_path / 'rel-ws'}",
        f"database: sqlite:///{tmp_path / 'rel-ws'}/continuity.db",
    ]
    monkeypatch.delenv("CONTINUITY_HOME")
    code, out, _ = run_main(monkeypatch, capsys, "where", "--home", "sub/ws")
    assert out.splitlines()[0] == f"home: {tmp_path / 'sub' / 'ws'}"
    (tmp_path / "afile").write_text("x")
    code, _, err = run_main(monkeypatch, capsys, "where", "--home", "afile")
    assert code == 2 and err.strip() == (
        f"continuity: --home {tmp_path / 'afile'}: is a file, not a folder; give a workspace folder"
    )


def test_remember_reads_stdin_and_a_file(monkeypatch, capsys, tmp_path):
    import io
    import sys

    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO(b"the deploy key rotates monthly\n"))
    )
    code, _out, err = run_main(monkeypatch, capsys, "remember", "-", "--home", tmp_path)
    assert code == 0, err
    note = tmp_path / "note.txt"
    note.write_text("backups live in bucket ops-archive\n", encoding="utf-8")
    code, _out2, err = run_main(monkeypatch, capsys, "remember", "--file", note, "--home", tmp_path)
    assert code == 0, err
    code, found, _ = run_main(
        monkeypatch, capsys, "recall", "deploy bucket", "--json", "--home", tmp_path
    )
    assert sorted(r["content"] for r in json.loads(found)["results"]) == [
        "backups live in bucket ops-archive",
        "the deploy key rotates monthly",
    ]
    code, _, err = run_main(
        monkeypatch, capsys, "remember", "x", "--file", note, "--home", tmp_path
    )
    assert code == 2 and "give the TEXT, - to read it from stdin, or --file FILE" in err


@pytest.mark.parametrize("text", ["the and of", "🎉 🎉", "!!! ---"])
def test_remember_refuses_a_text_recall_could_never_find(monkeypatch, capsys, tmp_path, text):
    code, out, err = run_main(monkeypatch, capsys, "remember", text, "--home", tmp_path)
    assert (code, out) == (2, "")
    assert err.startswith("continuity: content: no word recall could find it by in ")


def test_consolidate_after_the_manifest_was_deleted_says_it_wrote_it(
    monkeypatch, capsys, examples_home, tmp_path
):
    home = tmp_path / "h"
    shutil.copytree(examples_home, home)
    code, out, err = run_main(monkeypatch, capsys, "consolidate", "3185d1ef", "--home", home)
    assert code == 0, err
    manifests = sorted((home / "memory").glob("*--manifest.md"))
    assert len(manifests) == 1
    manifests[0].unlink()
    code, out, err = run_main(monkeypatch, capsys, "consolidate", "3185d1ef", "--home", home)
    assert code == 0, err
    assert out.strip() == (
        "3185d1ef-21e2-4727-91d3-fda9d4ee95a1: consolidated, 1 file written, 0 memories"
    )
    assert manifests[0].is_file()


# --------------------------------------------------------------------------- formats: nothing dropped silently


@pytest.mark.parametrize(
    "output,text,is_error",
    [
        ({"rows": 3, "names": ["a", "é"]}, '{"rows":3,"names":["a","é"]}', False),
        ({"stdout": "hi", "exit_code": 1}, '{"stdout":"hi","exit_code":1}', True),
        ({"content": {"a": 1}}, '{"a":1}', False),
        (
            [{"type": "resource", "uri": "file:///x"}, {"type": "text", "text": "ok"}],
            '{"type":"resource","uri":"file:///x"}\nok',
            False,
        ),
        (42, "42", False),
        ({"output": "plain"}, "plain", False),
        (None, "", False),
    ],
)
def test_a_codex_tool_output_object_is_rendered(output, text, is_error):
    from continuity.formats.codex_items import tool_output

    assert tool_output(output)[:2] == (text, is_error)


def _pi_lines():
    return PI_SAMPLE.read_text(encoding="utf-8").splitlines()


def test_pi_second_session_header_and_bad_timestamp_warn(monkeypatch, capsys, tmp_path):
    lines = _pi_lines()
    header = json.loads(lines[0])
    message = json.loads(lines[3])
    message["timestamp"] = "yesterday"
    lines[3] = json.dumps(message)
    lines.insert(5, json.dumps({**header, "id": "other-session"}))
    target = tmp_path / "odd.jsonl"
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run_main(
        monkeypatch, capsys, "import", target, "--json", "--home", tmp_path / "h"
    )
    assert code == 0, err
    (f,) = json.loads(out)["files"]
    assert f["warnings"] == [
        {"line": 4, "message": "timestamp: 'yesterday' is not a time; the row has no time"},
        {
            "line": 6,
            "message": "a second session header of session 'other-session': its rows "
            "are read as part of this file's session (split the file to "
            "keep them apart)",
        },
    ]


# --------------------------------------------------------------------------- read-only, old schema


def test_a_read_only_workspace_with_an_old_schema_says_what_to_run(monkeypatch, capsys, tmp_path):
    """The database is at an older revision and the folder cannot be written (simulated, as
    root may write anywhere): the one line names `continuity db upgrade` (with the --home in
    use, issue 45 item 2) and who can run it."""
    from sqlalchemy import create_engine

    import continuity.store as store

    db = tmp_path / "continuity.db"
    engine = create_engine(f"sqlite:///{db}")
    store.migrate(engine, "0009")
    engine.dispose()
    real = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda p, m, **kw: False if m & os.W_OK and Path(p) in (tmp_path, db) else real(p, m, **kw),
    )

    def refusing(path, flags):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(store, "private_open", refusing)
    code, _out, err = run_main(monkeypatch, capsys, "sessions", "--home", tmp_path)
    assert code == 4
    assert err.strip() == (
        f"continuity: database schema is at 0009, this version needs {store.HEAD_REVISION}: "
        f"run `continuity db upgrade --home {tmp_path}` as a user who can write the workspace "
        f"folder {tmp_path} "
        "(it is read-only here, so it was opened read-only and cannot be migrated)"
    )


def test_the_installed_hook_command_answers_version_too():
    import subprocess
    import sys

    from continuity.core.version import package_version

    exe = str(Path(sys.executable).with_name("continuity"))
    done = subprocess.run([exe, "hook", "--version"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"continuity {package_version()}\n",
        "",
    )


def test_import_of_an_empty_path_is_exit_2(tmp_path):
    """Review: ``import ""`` imported the current folder (Typer reads "" as "."), exit 0."""
    from typer.testing import CliRunner

    from continuity.cli.app import app

    r = CliRunner().invoke(app, ["import", "", "--home", str(tmp_path / "ws")])
    from continuity.core.errors import InputError

    assert isinstance(r.exception, InputError) and "an empty path" in str(r.exception)
    assert not (tmp_path / "ws" / "continuity.db").exists()


def test_continue_text_cuts_a_long_request_as_its_header_says():
    """Fresh-user review: ``continue --budget 2000000`` printed a 1 MB request whole in the
    text view, whose header says long texts are cut and marked; it is cut at 2,000 bytes like
    any text block (``--json`` keeps it whole)."""
    from continuity.cli.render import TEXT_BYTES, continuation_text

    console = _console()
    continuation_text(console, _view(request={"seq": 50, "actor": "user", "text": "é" * 500_000}))
    (line,) = [x for x in console.file.getvalue().splitlines() if x.startswith("previous")]
    assert line == (
        "previous request (seq 50, user): " + "é" * (TEXT_BYTES // 2) + " [… 998,000 bytes omitted]"
    )
