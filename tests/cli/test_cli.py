"""The `continuity` command: import, sessions, show, continue, where, db upgrade, their JSON
shapes, session resolution and the exit codes of the README (2 bad input, 3 unknown or
ambiguous session, 5 continuation refused)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from continuity.cli import app as cli
from continuity.cli.app import app
from continuity.core.errors import AmbiguousSession
from continuity.store import HEAD_REVISION
from tests.paths import SAMPLE_DIRS, SHARED_DATA

CC_5C = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
CONTRACT_KEYS = {
    "session",
    "budget_bytes",
    "used_bytes",
    "summary",
    "request",
    "gap",
    "gaps",
    "messages",
    "notes",
    "copied",
    "clipped",
    "refusal",
}

runner = CliRunner()


def invoke(*args: str):
    """Run the Typer app in-process; fail on an unexpected exception."""
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def run_main(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """Run the console-script entry point ``continuity.cli.app.main`` in-process:
    (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["continuity", *map(str, args)])
    with pytest.raises(SystemExit) as exc:
        cli.main()
    cap = capsys.readouterr()
    return exc.value.code, cap.out, cap.err


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A workspace with every sample imported once (tests pass it with --home)."""
    path = tmp_path_factory.mktemp("cli-home")
    result = runner.invoke(app, ["import", *map(str, SAMPLE_DIRS), "--home", str(path), "--json"])
    assert result.exit_code == 0, result.output
    return path


# --------------------------------------------------------------------------- import


def test_cli_import_text_summary(tmp_path):
    """import prints one line per file, bad lines as file:line on stderr, then totals."""
    result = invoke("import", SHARED_DATA / "codex", "--home", tmp_path)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[-1] == ("5 files, 5 sessions, 75 rows, 1 bad line, 0 duplicates, 0 files skipped")
    sample = SHARED_DATA / "codex" / "sample-session.jsonl"
    assert (
        f"imported {sample}: codex session sample-session-1, 9 rows from 10 lines "
        "(6 non-conversation kept raw, 1 unknown kept raw, 1 bad)"
    ) in lines
    assert (
        f"imported {SHARED_DATA / 'codex' / 'with-compaction.jsonl'}: codex session "
        "compact-codex-001, 20 rows from 20 lines (3 non-conversation kept raw)"
    ) in lines
    shapes, detail = (
        SHARED_DATA / "codex" / "event-shapes.jsonl",
        SHARED_DATA / "codex" / "interaction-detail.jsonl",
    )
    assert result.stderr.splitlines() == [
        f"  {shapes}:11: warning: function_call: arguments missing",
        f"  {shapes}:12: warning: response_item/function_call_output: output missing",
        f"  {shapes}:13: warning: custom_tool_call: input missing",
        f"  {shapes}:14: warning: response_item/custom_tool_call_output: output missing",
        f"  {detail}:6: warning: custom_tool_call: input missing",
        f"  {sample}:10: not JSON: invalid literal, expected 'true': line 1 column 1 (char 0)",
        "9 checkpoints replayed, 5 transcripts written",
        "38 rows embedded for search by meaning",
    ]  # issue 40: the rows with text
    again = invoke("import", SHARED_DATA / "codex", "--home", tmp_path)
    assert again.stdout.splitlines()[-1] == (
        "5 files, 5 sessions, 0 rows, 0 bad lines, 0 duplicates, 0 files skipped"
    )
    # issue 20: unchanged files are summed in one line, not one line each
    assert again.stdout.splitlines() == [
        "unchanged 5 files (nothing new since the last import)",
        "5 files, 5 sessions, 0 rows, 0 bad lines, 0 duplicates, 0 files skipped",
    ]
    assert again.stderr.splitlines() == ["0 checkpoints replayed, 0 transcripts written"]


def test_cli_import_json_shape_and_totals(tmp_path):
    """import --json gives totals, sessions and one report per file."""
    result = invoke("import", *SAMPLE_DIRS, "--home", tmp_path, "--json")
    assert result.exit_code == 0 and result.stderr == ""
    report = json.loads(result.stdout)
    assert set(report) == {
        "totals",
        "sessions",
        "files",
        "checkpoints_replayed",
        "transcripts_written",
        "transcripts_failed",
        "sources_gone",
        "sources_back",
        "embedded",
        "checkpoints_failed",
    }
    assert report["embedded"]["left"] == 0 and report["embedded"]["embedded"] > 0
    assert report["transcripts_failed"] == [] and report["checkpoints_failed"] == []
    assert (report["checkpoints_replayed"], report["transcripts_written"]) == (27, 12)
    assert report["totals"] == {
        "files": 12,
        "sessions": 12,
        "lines_read": 1333,
        "imported": 1332,
        "duplicate": 0,
        "opaque": 3,
        "non_conversation": 221,
        "errors": 1,
        "skipped_files": 0,
        "absent_paths": 0,
    }
    assert len(report["sessions"]) == 12 and CC_5C in report["sessions"]
    by_name = {Path(f["path"]).name: f for f in report["files"]}
    f = by_name["sample-session.jsonl"]
    assert set(f) == {
        "path",
        "harness",
        "version",
        "session",
        "status",
        "reason",
        "lines_read",
        "imported",
        "blank",
        "duplicate",
        "opaque",
        "non_conversation",
        "skipped",
        "skip_reasons",
        "errors",
        "warnings",
        "types",
        "first_timestamp",
        "last_timestamp",
        "offset",
        "resumed_from",
        "pending_tail_bytes",
        "copy_of",
        "waiting",
        "absent",
        "forgotten",
    }
    assert f["copy_of"] is None  # not a file `continuity resume` wrote (issue 13)
    assert f["waiting"] is False  # it has complete lines
    assert (f["harness"], f["session"], f["status"], f["lines_read"], f["imported"]) == (
        "codex",
        "sample-session-1",
        "imported",
        10,
        9,
    )
    assert [e["line"] for e in f["errors"]] == [10]
    assert f["offset"] == 2147 and f["resumed_from"] == 0
    assert by_name["large-session.jsonl"]["imported"] == 1019
    again = json.loads(invoke("import", *SAMPLE_DIRS, "--home", tmp_path, "--json").stdout)
    assert {f["status"] for f in again["files"]} == {"unchanged"}
    assert again["totals"]["imported"] == 0


def test_cli_import_waits_for_a_concurrent_import_of_the_same_file(monkeypatch, capsys, tmp_path):
    """Issue 21: an import colliding with another import of the same file (two StoreConflicts,
    then the other is done) waits and then does its own part: exit 0, the file imported, no
    failure (it failed after the second attempt before)."""
    from continuity.core.errors import StoreConflict
    from continuity.formats import importer

    real = importer._import_once
    contested = (SHARED_DATA / "codex" / "with-compaction.jsonl").resolve()
    tries: list[Path] = []

    def racing(store, p, report, progress, *rest):  # type: ignore[no-untyped-def]
        if p == contested and len(tries) < 3:
            tries.append(p)
            raise StoreConflict("UNIQUE constraint failed: entries.session_key, entries.seq")
        return real(store, p, report, progress, *rest)

    monkeypatch.setattr(importer, "_import_once", racing)
    code, out, _err = run_main(
        monkeypatch, capsys, "import", SHARED_DATA / "codex", "--home", tmp_path, "--json"
    )
    report = json.loads(out)
    assert code == 0 and len(tries) == 3
    assert [f["status"] for f in report["files"] if Path(f["path"]) == contested] == ["imported"]
    assert not [f for f in report["files"] if f["status"] == "failed"]


def test_cli_import_concurrent_failure_exits_4(monkeypatch, capsys, tmp_path):
    """Issue 22: a file that another import kept writing for longer than the import waits
    (issue 21: ``CONFLICT_WAIT_SECONDS``, 0.2 s here; a StoreConflict on every attempt) is
    reported failed, the other files import, and the exit code is 4 (it was 0); --json
    still prints the whole report, with the same exit code."""
    from continuity.core.errors import StoreConflict
    from continuity.formats import importer

    real = importer._import_once
    contested = (SHARED_DATA / "codex" / "with-compaction.jsonl").resolve()
    tries: list[Path] = []

    def racing(store, p, report, progress, *rest):  # type: ignore[no-untyped-def]
        if p == contested:
            tries.append(p)
            raise StoreConflict("UNIQUE constraint failed: entries.session_key, entries.seq")
        return real(store, p, report, progress, *rest)

    monkeypatch.setattr(importer, "_import_once", racing)
    monkeypatch.setattr(importer, "CONFLICT_WAIT_SECONDS", 0.2)
    code, out, err = run_main(
        monkeypatch, capsys, "import", SHARED_DATA / "codex", "--home", tmp_path
    )
    assert code == 4 and len(tries) >= 2  # retried, backing off, until the wait ran out
    assert out.splitlines()[-1] == (
        "5 files, 4 sessions, 55 rows, 1 bad line, 0 duplicates, 1 file skipped"
    )
    assert (
        f"skipped {contested}: another import was writing this file at the same time; "
        "import it again"
    ) in err.splitlines()
    assert err.splitlines()[-1] == "error: 1 file failed to import; import it again"
    code, out, _ = run_main(
        monkeypatch, capsys, "import", SHARED_DATA / "codex", "--home", tmp_path / "json", "--json"
    )
    failed = [f for f in json.loads(out)["files"] if f["status"] == "failed"]
    assert code == 4 and [Path(f["path"]) for f in failed] == [contested]


def test_cli_import_missing_path_exit_2(monkeypatch, capsys, tmp_path):
    """A path that does not exist is bad input: exit 2 and one line naming it."""
    missing = tmp_path / "nowhere"
    code, out, err = run_main(monkeypatch, capsys, "import", missing)
    assert code == 2 and out == ""
    assert err == f"continuity: {missing}: no such file or directory\n"


def test_cli_import_empty_folder_exit_2(monkeypatch, capsys, tmp_path):
    """A folder without *.jsonl files is bad input too."""
    code, _, err = run_main(monkeypatch, capsys, "import", tmp_path)
    assert code == 2
    assert err == f"continuity: no *.jsonl session files under {tmp_path}\n"


# --------------------------------------------------------------------------- sessions, show


def test_cli_sessions_json_newest_first(home):
    """sessions --json lists every session, newest activity first; -n limits it."""
    result = invoke("sessions", "--json", "--home", home)
    assert result.exit_code == 0
    sessions = json.loads(result.stdout)
    assert len(sessions) == 12
    assert set(sessions[0]) == {
        "session",
        "harness",
        "agent_id",
        "project",
        "title",
        "source_path",
        "source",
        "source_gone_at",
        "started_at",
        "ended_at",
        "entries",
        "parent",
        "forked_from",
        "copy_of",
        "original",
    }
    # Ordered by each file's newest timestamp (checked against the files).
    assert [(s["session"], s["ended_at"]) for s in sessions[:3]] == [
        ("019e963d-6bd6-7ade-8a49-256ac3391bdd", "2026-06-05T05:24:31.430000Z"),
        ("019e9625-802f-7e91-840a-cfe88d14117a", "2026-06-05T04:58:26.713000Z"),
        ("interaction-detail-session", "2026-04-29T12:00:13Z"),
    ]
    assert [s["session"] for s in sessions[3:]] == [
        "event-shapes-session",
        "sample-session-1",
        "d6e0bada-1959-4eec-a9d2-0bfade768d8f",
        "491e126e-1e71-469c-ade2-fcc8af567c74",
        "55604662-cf2a-4331-851a-ec234028f8ca",
        "d703a1a9-1b7b-4fb1-b512-c9738b1fe617",
        "compact-codex-001",
        CC_5C,
        "1af7fc5e-8455-4414-9ccd-011d40f70b2a",
    ]
    by_key = {s["session"]: s for s in sessions}
    assert (by_key[CC_5C]["harness"], by_key[CC_5C]["entries"]) == ("claude-code", 53)
    top3 = json.loads(invoke("sessions", "--json", "-n", "3", "--home", home).stdout)
    assert [s["session"] for s in top3] == [s["session"] for s in sessions[:3]]
    text = invoke("sessions", "--home", home)
    assert text.exit_code == 0 and "compact-codex-001" in text.stdout


def test_cli_show_prefix_json_and_all(home):
    """show resolves a unique prefix; --json gives visible rows, --all every row."""
    result = invoke("show", "5c0375b4", "--home", home)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0].startswith(f"{CC_5C} claude-code")
    visible = json.loads(invoke("show", "5c0375b4", "--json", "--home", home).stdout)
    assert visible["session"] == CC_5C
    # 53 lines: 22 sidechain lines and 1 isMeta prompt are outside the conversation.
    assert len(visible["entries"]) == 30
    assert all(e["visible"] for e in visible["entries"])
    first = visible["entries"][0]
    assert set(first) >= {
        "seq",
        "entry_id",
        "native_id",
        "kind",
        "role",
        "type",
        "visible",
        "is_request",
        "timestamp",
        "content",
        "source",
    }
    every = json.loads(invoke("show", "5c0375b4", "--json", "--all", "--home", home).stdout)
    assert [e["seq"] for e in every["entries"]] == list(range(53))
    assert sum(not e["visible"] for e in every["entries"]) == 23
    assert every["entries"][0]["source"]["line"] == 1


def test_cli_show_ambiguous_prefix_exit_3(monkeypatch, capsys, home):
    """A prefix naming two sessions exits 3 and names both candidates."""
    code, out, err = run_main(monkeypatch, capsys, "show", "019e96", "--home", home)
    assert code == 3 and out == ""
    assert err == (
        "continuity: '019e96' matches 2 sessions (019e9625-802f-7e91-840a-"
        "cfe88d14117a, 019e963d-6bd6-7ade-8a49-256ac3391bdd); give more of the key\n"
    )


def test_cli_prefix_of_a_session_and_its_subagents_names_the_session(tmp_path):
    """``S`` and ``S/agent-x`` (a 2.x subagent file): a prefix of both names S; a prefix that
    also matches an unrelated session stays ambiguous."""
    from continuity.cli.commands.common import resolve_session
    from continuity.core.model import Session
    from continuity.store import open_store

    with open_store(f"sqlite:///{tmp_path / 'c.db'}") as store:
        for key in ("S1111111-aaaa", "S1111111-aaaa/agent-abc123", "S1111111-aaaa/agent-def"):
            store.upsert_session(Session(key=key, harness="claude-code"))
        assert resolve_session(store, "S1111111") == "S1111111-aaaa"
        assert resolve_session(store, "S1111111-aaaa/agent-a") == "S1111111-aaaa/agent-abc123"
        store.upsert_session(Session(key="S1111111-bbbb", harness="claude-code"))
        with pytest.raises(AmbiguousSession):
            resolve_session(store, "S1111111")


def test_cli_unknown_session_exit_3(monkeypatch, capsys, home):
    """An unknown session exits 3 with one line, for show and continue alike."""
    for command in ("show", "continue"):
        code, out, err = run_main(monkeypatch, capsys, command, "zzz", "--home", home)
        assert code == 3 and out == ""
        assert err == (
            "continuity: no session matches 'zzz'; run `continuity sessions "
            f"--home {home}` to list the imported ones\n"
        )  # issue 45 item 2


def test_cli_main_error_subprocess_one_line(home):
    """The installed entry point turns an error into exit 3 and one stderr line, no traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "continuity.cli.app", "show", "nope", "--home", str(home)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 3
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("continuity: no session matches 'nope'")


# --------------------------------------------------------------------------- continue


def test_cli_continue_json_contract(home):
    """continue --json on the README's example session gives its documented values."""
    result = invoke("continue", "compact-codex", "--json", "--home", home)
    assert result.exit_code == 0
    d = json.loads(result.stdout)
    assert set(d) == CONTRACT_KEYS
    assert (d["session"], d["budget_bytes"]) == ("compact-codex-001", 240_000)
    assert d["summary"]["entry_id"] == "compact-codex-001:12"
    assert d["summary"]["covers_through_seq"] == 11
    assert d["request"] == {
        "seq": 13,
        "actor": "user",
        "text": "Now add the authentication middleware",
    }
    assert d["refusal"] is None and d["used_bytes"] <= d["budget_bytes"]
    assert all(m["seq"] > 13 for m in d["messages"])
    text = invoke("continue", "compact-codex-001", "--home", home)
    assert text.exit_code == 0
    assert "previous request (seq 13, user): Now add the authentication middleware" in text.stdout


@pytest.mark.parametrize("budget", [5_000, 20_000])
def test_cli_continue_budget_respected(home, budget):
    """--budget bounds used_bytes for the largest sample session."""
    result = invoke("continue", "d703a1a9", "--json", "--budget", str(budget), "--home", home)
    assert result.exit_code == 0
    d = json.loads(result.stdout)
    assert d["budget_bytes"] == budget
    assert d["refusal"] is None
    assert 0 < d["used_bytes"] <= budget


def test_cli_continue_refusal_exit_5(monkeypatch, capsys, home):
    """A budget too small for the protected context is refused with exit 5."""
    result = invoke("continue", "compact-codex-001", "--budget", "10", "--home", home)
    assert result.exit_code == 5
    assert result.stdout.startswith("refused: protected_context_over_budget — ")
    assert "budget is 10" in result.stdout
    d = json.loads(
        invoke("continue", "compact-codex-001", "--budget", "10", "--json", "--home", home).stdout
    )
    assert d["refusal"]["reason"] == "protected_context_over_budget"
    assert (d["summary"], d["request"], d["messages"], d["used_bytes"]) == (None, None, [], 0)
    code, _, _ = run_main(
        monkeypatch, capsys, "continue", "compact-codex-001", "--budget", "10", "--home", home
    )
    assert code == 5


# --------------------------------------------------------------------------- where, db, help


def test_cli_where_names_home_and_database(tmp_path, isolated_home):
    """where prints the workspace and its SQLite URL, from --home or $CONTINUITY_HOME."""
    result = invoke("where", "--home", tmp_path / "ws")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        f"home: {tmp_path / 'ws'}",
        f"database: sqlite:///{tmp_path / 'ws' / 'continuity.db'}",
    ]
    env = invoke("where")
    assert env.stdout.splitlines() == [
        f"home: {isolated_home}",
        f"database: sqlite:///{isolated_home / 'continuity.db'}",
    ]


def test_cli_db_upgrade_creates_schema(tmp_path):
    """db upgrade migrates a fresh workspace to the newest revision."""
    import sqlite3

    result = invoke("db", "upgrade", "--home", tmp_path)
    assert result.exit_code == 0
    assert result.stderr == f"created the schema at revision {HEAD_REVISION}\n"
    again = invoke("db", "upgrade", "--home", tmp_path)
    assert again.stderr == f"schema is up to date (revision {HEAD_REVISION})\n"
    db = tmp_path / "continuity.db"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [
            (HEAD_REVISION,)
        ]
    assert invoke("db", "upgrade", "--home", tmp_path).exit_code == 0


@pytest.mark.parametrize(
    "command",
    [[], ["import"], ["sessions"], ["show"], ["continue"], ["where"], ["db"], ["db", "upgrade"]],
)
def test_cli_help_exits_0(command):
    """--help of the app and every command exits 0 with a usage line."""
    result = invoke(*command, "--help")
    assert result.exit_code == 0
    assert "Usage" in result.stdout


def test_cli_b45_non_utf8_console_never_fails_on_emoji(tmp_path):
    """B45: under a cp1252 stdout, ``continue`` prints ``?`` for what it cannot show and
    ``continue --json`` is UTF-8 JSON with the emoji intact; neither raises."""
    path = tmp_path / "emo.jsonl"
    path.write_text(
        json.dumps(
            {
                "type": "user",
                "sessionId": "emo1",
                "uuid": "e1",
                "parentUuid": None,
                "timestamp": "2026-09-01T08:00:00.000Z",
                "cwd": "/x",
                "message": {"role": "user", "content": "ship it 🎉 💩"},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    env = {
        "PYTHONIOENCODING": "cp1252",
        "CONTINUITY_HOME": str(tmp_path / "home"),
        "PATH": "/usr/bin:/bin",
    }
    code = "from continuity.cli.app import main; main()"

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", code, *args], env=env, capture_output=True, timeout=60
        )

    assert run("import", str(path)).returncode == 0
    text = run("continue", "emo1")
    assert text.returncode == 0, text.stderr
    assert b"previous request (seq 0, user): ship it ? ?" in text.stdout
    as_json = run("continue", "emo1", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout.decode("utf-8"))["request"]["text"] == "ship it 🎉 💩"


def test_cli_two_imports_of_one_file_at_once_both_succeed(tmp_path):
    """Issue 21: users run the daemon's archiving and a manual import together. Two
    processes importing the same file into one workspace at the same moment both exit 0,
    and the workspace holds the session once, with the rows of a single import."""
    import subprocess

    source = SHARED_DATA / "pi"
    home = tmp_path / "ws"
    cmd = [
        sys.executable,
        "-m",
        "continuity.cli.app",
        "import",
        str(source),
        "--home",
        str(home),
        "--json",
    ]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    reports = [json.loads(o[0]) for o in outs]
    assert all(f["status"] != "failed" for r in reports for f in r["files"])
    single = tmp_path / "single"
    done = subprocess.run(
        [*cmd[:5], "--home", str(single), "--json"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    from continuity.store import open_store

    def counts(ws: Path) -> list[tuple[str, int]]:
        with open_store(f"sqlite:///{ws / 'continuity.db'}") as store:
            return sorted(
                (s.key, len(store.entries(s.key, limit=100_000))) for s in store.list_sessions()
            )

    assert counts(home) == counts(single)


def test_cli_subagent_file_is_named_a_subagent_of_its_parent(tmp_path):
    """Issue 18: a 2.x ``<S>/subagents/agent-a1b2c3.jsonl`` is its own session ``S/agent-a1b2c3``
    linked to ``S``: ``sessions --json`` gives its ``parent`` (None for ``S``) and ``show``
    names its parent."""
    from tests.formats.test_importer import cc_pairs, jl

    sid = "5b7c2e90-aaaa"
    folder = tmp_path / "projects" / "-home-ana-ledger"
    (folder / sid / "subagents").mkdir(parents=True)
    (folder / f"{sid}.jsonl").write_bytes(jl(*cc_pairs(2, sid=sid)))
    fixture = (
        Path(__file__).resolve().parents[1] / "fixtures/claude_code/subagents/agent-a1b2c3.jsonl"
    )
    (folder / sid / "subagents" / fixture.name).write_bytes(fixture.read_bytes())
    home = tmp_path / "home"
    assert invoke("import", tmp_path / "projects", "--home", home).exit_code == 0
    listed = json.loads(invoke("sessions", "--json", "--home", home).stdout)
    assert sorted((s["session"], s["agent_id"], s["parent"]) for s in listed) == [
        (sid, "default", None),
        (f"{sid}/agent-a1b2c3", "a1b2c3", sid),
    ]
    shown = invoke("show", f"{sid}/agent-a1b2c3", "--home", home).stdout
    assert f"subagent a1b2c3 of session {sid}" in shown
    assert "subagent" not in invoke("show", sid, "--home", home).stdout.splitlines()[0]


def test_cli_db_upgrade_says_from_which_revision(tmp_path):
    """A fresh-user review: ``db upgrade`` of a database one revision behind said "schema is
    up to date" (the store upgrades as it opens); it says what it upgraded."""
    from sqlalchemy import create_engine

    from continuity.store import migrate

    engine = create_engine(f"sqlite:///{tmp_path / 'continuity.db'}")
    migrate(engine, "0032")
    engine.dispose()
    result = invoke("db", "upgrade", "--home", tmp_path)
    assert (result.exit_code, result.stderr) == (
        0,
        f"upgraded the schema from revision 0032 to {HEAD_REVISION}\n",
    )


def test_import_line_counts_one_row_and_one_line_in_the_singular(tmp_path):
    """Fresh-user review: a one-line file was reported as ``1 rows from 1 lines``."""
    path = tmp_path / "one.jsonl"
    path.write_text(
        '{"type":"user","uuid":"0f8e1c2a-5b3d-4e6f-8a9b-0c1d2e3f4a5b","parentUuid":null,'
        '"sessionId":"one-line","timestamp":"2026-12-08T01:00:00Z","cwd":"/w",'
        '"message":{"role":"user","content":"hello"}}\n'
    )
    result = invoke("import", path, "--home", tmp_path / "ws", "--no-embed")
    assert result.exit_code == 0, result.output
    assert f"imported {path}: claude-code session one-line, 1 row from 1 line" in result.stdout
