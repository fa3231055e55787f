"""continuity watch --once (issue 18 item 1): the sample folder's sessions are archived, a
second pass imports nothing."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "samples" / "claude-code"


def _run(args, env):
    return subprocess.run(
        [str(Path(sys.executable).parent / "continuity"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _claude_home(tmp_path):
    """A Claude Code home holding the 5 sample sessions, every other harness folder empty,
    and the environment that points continuity and the harnesses there (SQLite workspace)."""
    projects = tmp_path / "cc" / "projects"
    shutil.copytree(SAMPLES, projects)
    env = {
        **os.environ,
        "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
        "CODEX_HOME": str(tmp_path / "none"),
        "PI_CODING_AGENT_DIR": str(tmp_path / "none"),
        "XDG_DATA_HOME": str(tmp_path / "none"),
        "CONTINUITY_HOME": str(tmp_path / "h"),
    }
    env.pop("CONTINUITY_DATABASE_URL", None)
    env.pop("CONTINUITY_ARCHIVE__ENABLED", None)  # conftest switches archiving off
    return projects, env


def test_once_archives_the_samples_and_a_second_pass_adds_nothing(tmp_path):
    _projects, env = _claude_home(tmp_path)
    first = _run(["watch", "--once"], env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "archived 5 files, 232 new rows"
    sessions = json.loads(_run(["sessions", "--json"], env).stdout)
    assert len(sessions) == 5
    again = _run(["watch", "--once"], env)
    assert again.returncode == 0 and again.stdout == ""


def test_a_deleted_source_file_leaves_its_session_whole_and_marked_gone(tmp_path):
    """Claude Code deletes transcripts older than cleanupPeriodDays (issue 18): after the
    archive has a file, deleting it loses nothing; the next pass says so once, ``sessions``
    keeps all 5 sessions and names the one whose file is gone; ``import`` of the folder finds
    the file back when it returns."""
    projects, env = _claude_home(tmp_path)
    assert _run(["watch", "--once"], env).returncode == 0
    victim = projects / "short.jsonl"
    kept = victim.read_bytes()
    rows_before = {
        s["session"]: s["entries"] for s in json.loads(_run(["sessions", "--json"], env).stdout)
    }
    victim.unlink()
    gone = _run(["watch", "--once"], env)
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout.strip().startswith("1 source file(s) gone")
    after = json.loads(_run(["sessions", "--json"], env).stdout)
    assert {s["session"]: s["entries"] for s in after} == rows_before
    assert sorted(s["source"] for s in after) == ["gone"] + ["present"] * 4
    assert _run(["watch", "--once"], env).stdout == ""  # said once
    (tmp_path / "cc" / "settings.json").write_text('{"cleanupPeriodDays": 30}')
    doctor = _run(["doctor", "--json"], env)
    found = [c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "cleanup"]
    assert [
        (c["status"], c["data"]["cleanupPeriodDays"], c["data"]["sessions_gone"]) for c in found
    ] == [("warning", 30, 1)]
    victim.write_bytes(kept)
    back = _run(["import", str(projects), "--json"], env)
    assert back.returncode == 0 and json.loads(back.stdout)["sources_gone"] == 0
    assert {s["source"] for s in json.loads(_run(["sessions", "--json"], env).stdout)} == {
        "present"
    }


def _archiver(tmp_path, max_files=200):
    from continuity.archive.archiver import Archiver

    projects = tmp_path / "cc" / "projects"
    return projects, Archiver({"claude_code": projects}, home=tmp_path / "h", max_files=max_files)


def test_an_event_pass_imports_only_the_files_it_names(tmp_path):
    """Bounded work per event (issue 18): a pass given the paths of its file-system events
    imports those files (and what earlier passes left pending), not every changed file of
    the folder; the full rescan (no paths) then finds the rest."""
    from tests.archive.burst import write_sessions

    projects, archiver = _archiver(tmp_path)
    named, _other = write_sessions(projects, 2)
    first = archiver.run_pass({named, projects / "notes.txt", tmp_path / "elsewhere.jsonl"})
    assert (first.files, first.rows, first.pending) == (1, 4, 0)
    full = archiver.run_pass()
    assert (full.files, full.rows) == (1, 4)  # `other`, found by the rescan
    assert archiver.run_pass().files == 0


def test_an_event_pass_carries_the_pending_files_of_a_capped_pass(tmp_path):
    from tests.archive.burst import write_sessions

    projects, archiver = _archiver(tmp_path, max_files=3)
    write_sessions(projects, 5)
    capped = archiver.run_pass()
    assert (capped.files, capped.pending) == (3, 2)
    rest = archiver.run_pass(())  # no events: only what was pending
    assert (rest.files, rest.rows, rest.pending) == (2, 8, 0)


def test_an_event_for_a_removed_project_folder_marks_its_files_gone(tmp_path):
    from tests.archive.burst import write_sessions

    projects, archiver = _archiver(tmp_path)
    paths = write_sessions(projects, 100)  # 50 project folders, 2 sessions each
    assert archiver.run_pass().files == 100
    folder = paths[0].parent
    shutil.rmtree(folder)
    result = archiver.run_pass({folder})  # the event names the folder only
    assert (result.gone, result.files) == (2, 0)


def test_once_goes_on_past_the_cap_until_nothing_is_pending(tmp_path):
    """Found by a fresh user: `watch --once` (cron) remembered nothing between runs, so with
    more files than --max-files every run redid the oldest and never reached the rest."""
    _projects, env = _claude_home(tmp_path)
    done = _run(["watch", "--once", "--max-files", "2"], env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    shape = [re.sub(r"\d+ new rows?", "N rows", line) for line in lines]
    assert shape == [
        "archived 2 files, N rows, 3 pending",
        "archived 2 files, N rows, 1 pending",
        "archived 1 file, N rows",
    ]
    assert sum(int(re.search(r"(\d+) new row", line)[1]) for line in lines) == 232
    assert len(json.loads(_run(["sessions", "--json"], env).stdout)) == 5


def test_ctrl_c_stops_watch_with_exit_0(tmp_path):
    import signal
    import time

    _projects, env = _claude_home(tmp_path)
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "continuity"), "watch"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:  # a failure while waiting leaves no watch running
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            listed = _run(["sessions", "--json"], env)  # exit 2 until watch made the workspace
            if listed.returncode == 0 and len(json.loads(listed.stdout)) == 5:
                break
            time.sleep(0.5)
        time.sleep(1)  # inside the watcher's wait now
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=20)
    finally:
        proc.kill()
    assert code == 0, proc.stderr.read()


def test_a_session_just_created_is_archived_once_written_not_said_skipped(tmp_path):
    """Second review: ``watch`` said ``not archived: …`` for a session file a harness had
    just created (empty), which is archived as soon as its first line is written."""
    projects, archiver = _archiver(tmp_path)
    folder = projects / "-home-dev-demo"
    folder.mkdir(parents=True)
    new = folder / "00000000-0000-4000-8000-00000000abcd.jsonl"
    new.write_bytes(b"")
    first = archiver.run_pass()
    assert (first.files, first.skipped) == (0, [])
    line = {
        "type": "user",
        "sessionId": new.stem,
        "uuid": "u1",
        "timestamp": "2026-12-01T10:00:00Z",
        "cwd": "/home/dev/demo",
        "message": {"role": "user", "content": "hello"},
    }
    new.write_text(json.dumps(line) + "\n")
    second = archiver.run_pass()
    assert (second.files, second.rows, second.skipped) == (1, 1, [])


def _line(uuid, parent, stamp, text):
    return (
        json.dumps(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "type": "user",
                "message": {"role": "user", "content": text},
                "uuid": uuid,
                "cwd": "/tmp/proj",
                "sessionId": "11111111-0000-0000-0000-0000000000aa",
                "version": "2.1.0",
                "userType": "external",
                "timestamp": stamp,
            }
        )
        + "\n"
    )


def test_watch_prints_every_reader_warning_import_prints(tmp_path):
    """Issue 45 item 1: rows stamped out of range (year 9999, year 1, 1e20, NaN) made
    ``import`` print ``file:line: warning`` lines while ``watch --once`` printed only its
    total; a bad line appended after a pass was silent too. Both now print what ``import``
    prints."""
    projects, env = _claude_home(tmp_path)
    shutil.rmtree(projects)
    (projects / "p").mkdir(parents=True)
    f = projects / "p" / "bad.jsonl"
    f.write_text(
        _line("a1", None, "2026-12-05T10:00:00Z", "fine")
        + _line("a2", "a1", "9999-12-31T23:59:59Z", "far")
        + _line("a3", "a2", "0001-01-01T00:00:00Z", "old")
        + _line("a4", "a3", 1e20, "huge")
        + _line("a5", "a4", "NaN", "nan")
    )

    def warned(text: str) -> list[str]:
        return sorted(line.strip() for line in text.splitlines() if ": warning: " in line)

    imp = _run(["import", str(f), "--home", str(tmp_path / "other")], env)
    assert imp.returncode == 0, imp.stderr
    expected = warned(imp.stderr)
    assert [w.split(": warning:")[0] for w in expected] == [f"{f}:{n}" for n in (2, 3, 4, 5)]
    once = _run(["watch", "--once"], env)
    assert once.returncode == 0, once.stderr
    assert warned(once.stderr) == expected
    # a bad line appended while watching: the next pass says it (the Archiver's pass result)
    from continuity.archive.archiver import Archiver

    archiver = Archiver({"claude-code": projects}, home=tmp_path / "h")
    archiver.run_pass()
    with f.open("a") as fh:
        fh.write(_line("a6", "a5", "9999-12-31T23:59:59Z", "later"))
    result = archiver.run_pass()
    assert [(p.path, [line for line, _ in p.warnings]) for p in result.problems] == [(str(f), [6])]


def test_one_warning_left_over_is_said_in_the_singular(tmp_path):
    """Issue 45 item 2: "… 1 more warnings"; one left over is "1 more warning", in
    ``import`` and ``watch`` alike."""
    projects, env = _claude_home(tmp_path)
    shutil.rmtree(projects)
    (projects / "p").mkdir(parents=True)
    f = projects / "p" / "six.jsonl"
    f.write_text(
        "".join(
            _line(f"b{n}", f"b{n - 1}" if n else None, "9999-12-31T23:59:59Z", f"row {n}")
            for n in range(6)
        )
    )
    for args in (["import", str(f), "--home", str(tmp_path / "other")], ["watch", "--once"]):
        done = _run(args, env)
        assert done.returncode == 0, done.stderr
        assert f"{f}: … 1 more warning (" in done.stderr, (args, done.stderr)
        assert "more warnings" not in done.stderr
