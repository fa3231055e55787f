"""Faults of the fresh-user review: config errors in every command (exit 2), ``doctor``'s
config check, ``--home ""``, a workspace that is a file, read-only workspaces, ``-n`` ranges,
``import`` of odd paths, ``hooks uninstall`` wording and ``remember``'s id on stdout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.running import run_main


def refuse_opening_to_write(monkeypatch) -> None:
    """Opening the database file to write fails as on a ``chmod 0500`` workspace (EACCES)."""
    import continuity.store as store

    def refusing(path, flags):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(store, "private_open", refusing)


COMMANDS = [
    ["sessions"],
    ["show", "abc"],
    ["continue", "abc"],
    ["where"],
    ["checkpoints", "abc"],
    ["recall", "x"],
    ["db", "upgrade"],
]
BAD_CONFIGS = {
    "misspelled section": (b"[continuty]\nretention_days = 3\n", "unknown section [continuty]"),
    "dash section": (b"[memory-md]\nenabled = true\n", "unknown section [memory-md]"),
    "invalid TOML": (b"[continuity\n", "not valid TOML"),
    "not UTF-8": (b"[continuity]\n# \xff\n", "not UTF-8 (byte 15)"),
}


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_every_command_refuses_a_bad_config_file(monkeypatch, capsys, tmp_path, command, case):
    content, message = BAD_CONFIGS[case]
    (tmp_path / "config.toml").write_bytes(content)
    code, _out, err = run_main(monkeypatch, capsys, *command, "--home", tmp_path)
    assert code == 2
    assert message in err and str(tmp_path / "config.toml") in err
    assert not (tmp_path / "continuity.db").exists()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_every_command_refuses_a_misspelled_env_override(monkeypatch, capsys, tmp_path, command):
    monkeypatch.setenv("CONTINUITY_CONTINUTY__RETENTION_DAYS", "3")
    code, _out, err = run_main(monkeypatch, capsys, *command, "--home", tmp_path)
    assert code == 2
    assert "$CONTINUITY_CONTINUTY__RETENTION_DAYS: unknown section 'continuty'" in err
    assert "did you mean $CONTINUITY_CONTINUITY__RETENTION_DAYS?" in err


def test_config_check_does_not_import_feature_models(tmp_path):
    """The start-up check is tomllib only: no feature's settings module gets imported."""
    import subprocess

    code = (
        "import sys; from continuity.cli.commands.common import check_workspace; "
        f"check_workspace(None, {str(tmp_path)!r}); "
        "print(sorted(m for m in sys.modules if m.startswith('continuity.') and "
        "m.split('.')[1] in ('checkpoints', 'daemon', 'lineage', 'transcripts', "
        "'continuation', 'store')))"
    )
    (tmp_path / "config.toml").write_text("[continuity]\nretention_days = 3\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "[]"


def test_doctor_reports_a_bad_value_of_any_section_as_a_check(monkeypatch, capsys, tmp_path):
    (tmp_path / "config.toml").write_text("[daemon]\nstop_seconds = 2\n")
    code, out, _err = run_main(monkeypatch, capsys, "doctor", "--home", tmp_path, "--json")
    import json

    checks = json.loads(out)["checks"]
    config = next(c for c in checks if c["check"] == "config")
    assert code == 1
    assert config["status"] == "problem"
    assert f"{tmp_path / 'config.toml'} [daemon] stop_seconds" in config["detail"]
    assert "(got 2)" in config["detail"]
    assert config["fix"].startswith(f"edit {tmp_path / 'config.toml'}")
    daemon = next(c for c in checks if c["check"] == "daemon")
    assert daemon["fix"].startswith("fix the config problem above first")


def test_doctor_reports_an_unknown_section_as_a_check(monkeypatch, capsys, tmp_path):
    (tmp_path / "config.toml").write_text("[continuty]\nretention_days = 3\n")
    code, out, _err = run_main(monkeypatch, capsys, "doctor", "--home", tmp_path)
    assert code == 1
    assert (
        f"PROBLEM config: {tmp_path / 'config.toml'}: unknown section [continuty]; "
        "did you mean [continuity]?"
    ) in out


def test_doctor_config_ok_without_a_file(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("CONTINUITY_ARCHIVE__ENABLED", raising=False)  # the tests' override
    _code, out, _err = run_main(monkeypatch, capsys, "doctor", "--home", tmp_path)
    assert (
        f"ok      config: {tmp_path / 'config.toml'} absent: defaults; every section valid" in out
    )


def test_doctor_names_the_overrides_and_an_override_to_fix(monkeypatch, capsys, tmp_path):
    """Review: with no config.toml doctor said "absent: defaults" while an override was in
    effect, and for a wrong override its fix said to edit config.toml, which did not exist."""
    monkeypatch.delenv("CONTINUITY_ARCHIVE__ENABLED", raising=False)  # the tests' override
    monkeypatch.setenv("CONTINUITY_CONTINUITY__PROMPT_INTERVAL", "3")
    _, out, _ = run_main(monkeypatch, capsys, "doctor", "--home", tmp_path)
    assert (
        f"ok      config: {tmp_path / 'config.toml'} absent: defaults; overridden by "
        "$CONTINUITY_CONTINUITY__PROMPT_INTERVAL; every section valid"
    ) in out
    monkeypatch.delenv("CONTINUITY_CONTINUITY__PROMPT_INTERVAL")
    monkeypatch.setenv("CONTINUITY_CONTINUITY__PROMPT_INTERVALL", "3")
    _code, out, _err = run_main(monkeypatch, capsys, "doctor", "--home", tmp_path, "--json")
    config = next(c for c in json.loads(out)["checks"] if c["check"] == "config")
    assert (config["status"], config["detail"], config["fix"]) == (
        "problem",
        "$CONTINUITY_CONTINUITY__PROMPT_INTERVALL: 'prompt_intervall' is not a "
        "setting of [continuity]; did you mean $CONTINUITY_CONTINUITY__PROMPT_INTERVAL?",
        "change or unset the environment variable named as the message says, then run "
        f"`continuity doctor --home {tmp_path}` again",
    )  # issue 45 item 2: the --home in use


# --------------------------------------------------------------------------- --home


@pytest.mark.parametrize("command", [*COMMANDS, ["serve"], ["doctor"]], ids=lambda c: c[0])
def test_empty_home_option_is_refused(monkeypatch, capsys, tmp_path, command):
    monkeypatch.chdir(tmp_path)
    code, _out, err = run_main(monkeypatch, capsys, *command, "--home", "")
    assert code == 2 and err.startswith(  # a usage error (issue 45): one line, with the help
        "error: Invalid value for '--home': is empty: give a workspace folder (see continuity"
    )
    assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_empty_continuity_home_falls_back_to_the_default(monkeypatch):
    from continuity.core.config import resolve_home

    monkeypatch.setenv("CONTINUITY_HOME", "")
    from platformdirs import user_data_dir

    assert resolve_home() == Path(user_data_dir("continuity", appauthor=False))


@pytest.mark.parametrize("command", [*COMMANDS, ["serve"], ["doctor"], ["mcp"]], ids=lambda c: c[0])
def test_home_that_is_a_file_is_refused(monkeypatch, capsys, tmp_path, command):
    target = tmp_path / "afile"
    target.write_text("x")
    code, _out, err = run_main(monkeypatch, capsys, *command, "--home", target)
    assert code == 2
    assert err.strip() == (
        f"continuity: --home {target}: is a file, not a folder; give a workspace folder"
    )


def test_hooks_install_refuses_a_home_that_is_a_file(monkeypatch, capsys, tmp_path):
    target, settings = tmp_path / "afile", tmp_path / "settings.json"
    target.write_text("x")
    code, _out, err = run_main(
        monkeypatch,
        capsys,
        "hooks",
        "install",
        "claude-code",
        "--settings",
        settings,
        "--home",
        target,
    )
    assert code == 2 and "is a file, not a folder" in err
    assert not settings.exists()


def test_continuity_home_that_is_a_file_is_refused(monkeypatch, tmp_path):
    from continuity.core.config import resolve_home
    from continuity.core.errors import ConfigError

    target = tmp_path / "afile"
    target.write_text("x")
    monkeypatch.setenv("CONTINUITY_HOME", str(target))
    with pytest.raises(ConfigError, match=r"^\$CONTINUITY_HOME .*afile: is a file, not a folder"):
        resolve_home()


# --------------------------------------------------------------------------- serve


def test_serve_under_a_file_is_one_line_exit_4(monkeypatch, capsys, tmp_path):
    """``--home FILE/sub``: making the workspace fails with NotADirectoryError."""
    target = tmp_path / "afile"
    target.write_text("x")
    code, _out, err = run_main(
        monkeypatch, capsys, "serve", "--home", target / "sub", "--port", "0"
    )
    assert code == 4
    assert err.strip() == (
        f"continuity: cannot write in the workspace folder {target / 'sub'} "
        f"({target / 'sub'}): Not a directory"
    )


def test_serve_in_a_read_only_workspace_is_one_line_exit_4(monkeypatch, capsys, tmp_path):
    """Root ignores mode 0500, so the refusal of ``daemon.lock`` is simulated."""
    import os

    real_open = os.open

    def refusing(path, flags, *args, **kwargs):
        if str(path).endswith("daemon.lock"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing)
    code, _out, err = run_main(monkeypatch, capsys, "serve", "--home", tmp_path, "--port", "0")
    assert code == 4
    assert err.strip() == (
        f"continuity: cannot write in the workspace folder {tmp_path} "
        f"({tmp_path / 'daemon.lock'}): Permission denied"
    )


# --------------------------------------------------------------------------- read-only workspace


@pytest.mark.parametrize(
    "command", [["sessions"], ["show", "abc"], ["continue", "abc"]], ids=lambda c: c[0]
)
def test_read_only_workspace_says_what_failed(monkeypatch, capsys, tmp_path, command):
    """An existing folder whose database cannot be created: the message no longer claims the
    folder could not be created. Root ignores mode 0500, so the refusal is simulated."""
    refuse_opening_to_write(monkeypatch)
    code, _out, err = run_main(monkeypatch, capsys, *command, "--home", tmp_path)
    assert code == 4
    assert err.strip() == (
        f"continuity: cannot write in the workspace folder {tmp_path} "
        "(continuity.db): Permission denied"
    )


def test_unwritable_folder_of_an_existing_database_is_named(monkeypatch, capsys, tmp_path):
    """SQLite cannot make its -wal file in a read-only folder: the OperationalError is
    completed with the reason (os.access simulated, as root may write anywhere)."""
    import os

    from sqlalchemy.exc import OperationalError

    import continuity.store as store

    def failing(engine, auto_migrate):
        raise OperationalError("PRAGMA", {}, Exception("unable to open database file"))

    real_access = os.access
    monkeypatch.setattr(store, "_migrate_to_head", failing)
    monkeypatch.setattr(
        os, "access", lambda p, m: False if Path(p) == tmp_path else real_access(p, m)
    )
    code, _out, err = run_main(monkeypatch, capsys, "sessions", "--home", tmp_path)
    assert code == 4
    assert err.strip() == (
        f"continuity: cannot open database sqlite:///{tmp_path}/continuity.db: "
        f"unable to open database file; the workspace folder {tmp_path} is "
        "not writable (SQLite writes its -wal and -shm files beside the "
        "database, even to read it)"
    )


# --------------------------------------------------------------------------- -n


@pytest.mark.parametrize(
    "command",
    [["sessions"], ["checkpoints", "abc"], ["recall", "x"], ["receipts", "abc"]],
    ids=lambda c: c[0],
)
@pytest.mark.parametrize(
    "count,message",
    [
        ("-1", "must be a whole number from 0 to "),
        ("9223372036854775808", "must be a whole number from 0 to "),
        ("1e3", "must be a whole number from 0 to "),
    ],
)
def test_every_count_option_has_one_rule(monkeypatch, capsys, tmp_path, command, count, message):
    """Issue 20: every -n is 0 (all) to its maximum; outside it, exit 2 naming -n, never a
    traceback (9223372036854775808 once overflowed SQLite's INTEGER)."""
    code, _out, err = run_main(monkeypatch, capsys, *command, "-n", count, "--home", tmp_path)
    assert code == 2
    assert "Invalid value for '-n'" in err and message in err and f"(got '{count}')" in err
    assert "Traceback" not in err and "Input should" not in err
    assert not (tmp_path / "continuity.db").exists()


def test_sessions_all_lists_past_the_count(monkeypatch, capsys, tmp_path):
    from tests.paths import SAMPLE_DIRS

    code, _, _ = run_main(monkeypatch, capsys, "import", *SAMPLE_DIRS, "--home", tmp_path, "--json")
    assert code == 0
    import json

    _, one, _ = run_main(monkeypatch, capsys, "sessions", "-n", "1", "--json", "--home", tmp_path)
    _, every, _ = run_main(monkeypatch, capsys, "sessions", "--all", "--json", "--home", tmp_path)
    assert len(json.loads(one)) == 1
    _, default, _ = run_main(monkeypatch, capsys, "sessions", "--json", "--home", tmp_path)
    assert len(json.loads(every)) == len(json.loads(default)) > 1
    _, zero, _ = run_main(monkeypatch, capsys, "sessions", "-n", "0", "--json", "--home", tmp_path)
    assert zero == every  # -n 0 is all, as everywhere


def test_count_zero_is_all_for_checkpoints_and_receipts(monkeypatch, capsys, tmp_path):
    import json

    from tests.paths import SAMPLE_DIRS

    run_main(monkeypatch, capsys, "import", *SAMPLE_DIRS, "--home", tmp_path, "--json")
    key = "compact-codex-001"
    _, every, _ = run_main(monkeypatch, capsys, "checkpoints", key, "--json", "--home", tmp_path)
    code, zero, _ = run_main(
        monkeypatch, capsys, "checkpoints", key, "-n", "0", "--json", "--home", tmp_path
    )
    assert code == 0 and zero == every and json.loads(zero)["count"] >= 1
    code, receipts, _err = run_main(
        monkeypatch, capsys, "receipts", key, "-n", "0", "--json", "--home", tmp_path
    )
    assert (code, json.loads(receipts)) == (0, [])


# --------------------------------------------------------------------------- import


def test_import_of_a_device_says_it_is_not_a_regular_file(monkeypatch, capsys, tmp_path):
    code, _out, err = run_main(monkeypatch, capsys, "import", "/dev/null", "--home", tmp_path)
    assert code == 2
    assert err.strip() == (
        "continuity: /dev/null: not a regular file or folder (a device, "
        "pipe or socket): give session files or folders"
    )


def _tree_with_unreadable_folder(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """A folder with one session file and a subfolder that cannot be listed (os.scandir
    refusing it: root may list a mode-000 folder)."""
    import os
    import shutil

    from tests.paths import SHARED_DATA

    tree = tmp_path / "tree"
    locked = tree / "locked"
    locked.mkdir(parents=True)
    shutil.copy(SHARED_DATA / "codex" / "with-compaction.jsonl", tree / "a.jsonl")
    (locked / "hidden.jsonl").write_text("{}\n")
    real = os.scandir

    def scandir(path="."):
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    return tree, locked


def test_import_reports_an_unreadable_subfolder(monkeypatch, capsys, tmp_path):
    tree, locked = _tree_with_unreadable_folder(tmp_path, monkeypatch)
    code, out, err = run_main(monkeypatch, capsys, "import", tree, "--home", tmp_path / "h")
    assert code == 2  # as for an unreadable file (InputError's code)
    assert f"skipped {locked}: cannot read folder: Permission denied" in err.splitlines()
    assert out.splitlines()[-1].endswith("1 file skipped")
    assert f"imported {(tree / 'a.jsonl').resolve()}" in out


def test_import_json_lists_an_unreadable_subfolder(monkeypatch, capsys, tmp_path):
    import json

    tree, locked = _tree_with_unreadable_folder(tmp_path, monkeypatch)
    code, out, _err = run_main(
        monkeypatch, capsys, "import", tree, "--home", tmp_path / "h", "--json"
    )
    failed = [f for f in json.loads(out)["files"] if f["status"] == "failed"]
    assert code == 2
    assert [(f["path"], f["reason"]) for f in failed] == [
        (str(locked), "cannot read folder: Permission denied")
    ]


def test_import_of_an_unreadable_file_has_the_same_exit_code(monkeypatch, capsys, tmp_path):
    """The rule the folder follows: an unreadable file is failed with exit code 2."""
    import builtins
    import shutil

    from tests.paths import SHARED_DATA

    target = tmp_path / "a.jsonl"
    shutil.copy(SHARED_DATA / "codex" / "with-compaction.jsonl", target)
    real = builtins.open

    def refusing(file, *args, **kwargs):
        if str(file) == str(target.resolve()):
            raise PermissionError(13, "Permission denied", str(file))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing)
    # the stand-in refuses in this process only: a parse worker (issue 43) would read the file
    monkeypatch.setenv("CONTINUITY_IMPORT_WORKERS", "1")
    code, _out, err = run_main(monkeypatch, capsys, "import", target, "--home", tmp_path / "h")
    assert code == 2
    assert f"skipped {target.resolve()}: cannot read: Permission denied" in err.splitlines()


# --------------------------------------------------------------------------- hooks uninstall


def test_uninstall_says_it_removed_only_our_hooks(monkeypatch, capsys, tmp_path):
    """Install created the file, the user added a setting: the file stays, our hooks go."""
    import json

    settings = tmp_path / "settings.json"
    code, _, _ = run_main(
        monkeypatch,
        capsys,
        "hooks",
        "install",
        "claude-code",
        "--settings",
        settings,
        "--home",
        tmp_path / "ws",
    )
    assert code == 0
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({**data, "theme": "dark"}))
    code, out, _err = run_main(
        monkeypatch, capsys, "hooks", "uninstall", "claude-code", "--settings", settings
    )
    assert code == 0
    assert out.splitlines() == [
        f"claude-code: removed continuity's hooks from {settings} (the "
        "file and its other settings are kept)"
    ]
    assert json.loads(settings.read_text()) == {"theme": "dark"}


def test_uninstall_says_where_the_backup_is_left(monkeypatch, capsys, tmp_path):
    import json

    from continuity.daemon.hooks.install import BACKUP_SUFFIX

    settings = tmp_path / "settings.json"
    settings.write_text('{"model": "x"}\n')
    run_main(
        monkeypatch,
        capsys,
        "hooks",
        "install",
        "claude-code",
        "--settings",
        settings,
        "--home",
        tmp_path / "ws",
    )
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "theme": "dark"}))
    code, out, _err = run_main(
        monkeypatch, capsys, "hooks", "uninstall", "claude-code", "--settings", settings
    )
    backup = settings.with_name(settings.name + BACKUP_SUFFIX)
    assert code == 0 and backup.is_file()
    assert out.splitlines() == [
        f"claude-code: removed continuity's hooks from {settings} (the file and its other "
        "settings are kept)",
        f"claude-code: the backup made at install is left at {backup} ({settings} changed "
        "since); delete it when you no longer need it",
    ]


# --------------------------------------------------------------------------- remember


def test_remember_prints_the_id_on_stdout(monkeypatch, capsys, tmp_path):
    import json

    code, out, err = run_main(
        monkeypatch, capsys, "remember", "the build needs make -j2", "--home", tmp_path
    )
    memory_id = out.strip()
    assert code == 0 and memory_id and "\n" not in memory_id
    assert err.strip() == f"remembered {memory_id}"
    code, again, err = run_main(
        monkeypatch, capsys, "remember", "the build needs make -j2", "--home", tmp_path
    )
    assert again.strip() == memory_id and err.strip() == f"already remembered {memory_id}"
    code, found, _ = run_main(monkeypatch, capsys, "recall", "build", "--json", "--home", tmp_path)
    assert [r["id"] for r in json.loads(found)["results"]] == [memory_id]


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """A workspace with the samples imported (read by the read-only tests)."""
    from typer.testing import CliRunner

    from continuity.cli.app import app
    from tests.paths import SAMPLE_DIRS

    path = tmp_path_factory.mktemp("ro-home")
    done = CliRunner().invoke(
        app, ["import", *map(str, SAMPLE_DIRS), "--home", str(path), "--json"]
    )
    assert done.exit_code == 0, done.output
    # a memory for recall to find: no hit exits 1 (grep's rule, issue 45 item 8)
    done = CliRunner().invoke(
        app, ["remember", "the orchestrator runs three workers", "--home", str(path)]
    )
    assert done.exit_code == 0, done.output
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["sessions", "--json"],
        ["show", "CC", "--json"],
        ["continue", "CC", "--json"],
        ["checkpoints", "CC", "--json"],
        ["recover", "CC", "--json"],
        ["receipts", "CC", "--json"],
        ["recall", "orchestrator", "--json"],
        ["transcript", "CC", "--json"],
        ["transcript", "CC"],
        ["prune", "--dry-run", "--json"],
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_read_only_workspace_is_read(monkeypatch, capsys, imported, command):
    """A workspace folder that cannot be written (mode 0500; simulated through os.access, as
    root may write anywhere): sessions, show, continue and (issue 45 item 8) checkpoints,
    recover, receipts and recall read its database read-only (SQLite ``mode=ro``, which
    refuses writes whoever runs it), print what they print in a writable one, and leave the
    folder as it was. So do `transcript` and `prune --dry-run` (fresh-user review: both
    failed with exit 4, "cannot write", though they only read)."""
    import os

    key = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    args = [key if a == "CC" else a for a in command]
    code, expected, _ = run_main(monkeypatch, capsys, *args, "--home", imported)
    assert code == 0
    before = {p.name: p.stat().st_mtime_ns for p in imported.iterdir()}
    real = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda p, m, **kw: (
            False
            if m & os.W_OK and Path(p) in (imported, imported / "continuity.db")
            else real(p, m, **kw)
        ),
    )
    refuse_opening_to_write(monkeypatch)  # what opening it to write gets
    code, out, err = run_main(monkeypatch, capsys, *args, "--home", imported)
    assert (code, err) == (0, "")
    assert out == expected
    assert {p.name: p.stat().st_mtime_ns for p in imported.iterdir()} == before


def test_read_only_database_file_is_read(monkeypatch, capsys, imported):
    """The database file itself cannot be opened to write (``chmod -R 0500``; simulated):
    ``sessions`` still lists what it holds."""
    import json

    code, expected, _ = run_main(monkeypatch, capsys, "sessions", "--json", "--home", imported)
    refuse_opening_to_write(monkeypatch)
    code, out, err = run_main(monkeypatch, capsys, "sessions", "--json", "--home", imported)
    assert (code, err) == (0, "") and out == expected and len(json.loads(out)) > 1


def test_read_only_workspace_is_read_for_real(tmp_path, imported):
    """Issue 45 item 8 without simulation: a copy of the workspace chmod'ed 0500 (folder)
    and 0400 (database) is read by `checkpoints` and `recall` in a child process. Root
    ignores file modes, so as root this test cannot make the folder unwritable: it is
    skipped then (test_read_only_workspace_is_read covers the same path, simulated)."""
    import json
    import os
    import shutil
    import subprocess

    if os.geteuid() == 0:
        pytest.skip("root writes through mode 0500: the simulated test covers this path")
    home = tmp_path / "ro"
    shutil.copytree(imported, home)
    key = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    cli = [str(Path(sys.executable).parent / "continuity")]
    want = [
        subprocess.run([*cli, *args, "--home", str(home)], capture_output=True, text=True)
        for args in (["checkpoints", key, "--json"], ["recall", "orchestrator", "--json"])
    ]
    for f in home.iterdir():
        f.chmod(0o400)
    home.chmod(0o500)
    try:
        for args, expected in zip(
            (["checkpoints", key, "--json"], ["recall", "orchestrator", "--json"]),
            want,
            strict=True,
        ):
            got = subprocess.run([*cli, *args, "--home", str(home)], capture_output=True, text=True)
            assert (got.returncode, got.stdout) == (0, expected.stdout), got.stderr
            json.loads(got.stdout)
    finally:
        home.chmod(0o700)


def test_read_only_transcript_of_a_session_not_yet_captured(monkeypatch, capsys, imported):
    """`transcript` of an imported session whose transcript row was never written (it is
    captured on first read) in a read-only workspace: rendered in memory, the same text a
    writable workspace captures and prints, nothing written."""
    import os
    import sqlite3

    key = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    code, expected, _ = run_main(monkeypatch, capsys, "transcript", key, "--home", imported)
    assert code == 0
    with sqlite3.connect(imported / "continuity.db") as db:
        db.execute("DELETE FROM session_transcripts")
    before = {p.name: p.stat().st_mtime_ns for p in imported.iterdir()}
    real = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda p, m, **kw: (
            False
            if m & os.W_OK and Path(p) in (imported, imported / "continuity.db")
            else real(p, m, **kw)
        ),
    )
    refuse_opening_to_write(monkeypatch)
    code, out, err = run_main(monkeypatch, capsys, "transcript", key, "--home", imported)
    assert (code, err) == (0, "")
    assert out == expected and "orchestrator" in out.lower()
    assert {p.name: p.stat().st_mtime_ns for p in imported.iterdir()} == before
