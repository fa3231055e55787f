"""The extraction of what a session did (issue 39, item 3): ``continuation.facts.extract_facts``
over the real sample sessions of each harness and over built rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from continuity.continuation.facts import (
    OUTPUT_SAMPLE_BYTES,
    SessionFacts,
    exit_code,
    extract_facts,
    sample,
)
from continuity.continuation.summarize.bounds import digest
from continuity.core.model import Entry, EntryKind, Role, ToolCallBlock, ToolResultBlock
from continuity.core.text import utf8_len
from continuity.formats.importer import import_paths
from continuity.store import iter_entries
from tests.builders import A, U, call
from tests.paths import SHARED_DATA

REAL = SHARED_DATA / "real-harness"


def _facts_of(store, path: Path, key: str | None = None) -> SessionFacts:
    import_paths(store, [path])
    sessions = store.list_sessions()
    key = key or sessions[0].key
    return extract_facts(digest(e) for e in iter_entries(store, key))


def _facts(rows: list[Entry]) -> SessionFacts:
    for i, e in enumerate(rows):
        e.seq = i
    return extract_facts(digest(e) for e in rows)


def R(call_id: str, text: str, *, error: bool = False) -> Entry:
    """A tool row answering ``call_id`` with ``text``."""
    return Entry(EntryKind.MESSAGE, Role.TOOL, (ToolResultBlock(call_id, error, text),))


# ------------------------------------------------------------------ the real sessions


def test_pi_large_session_commands_edits_and_the_unresolved_publish(sqlite_store):
    """pi (legacy v1, 1,019 rows): its ``bash`` commands with pi's own exit lines, its
    ``edit``/``write`` files, the failed ``npm run publish`` left unresolved at the end."""
    f = _facts_of(sqlite_store, SHARED_DATA / "pi" / "large-session.jsonl")
    assert f.rows == 1019 and f.last_seq == 1018
    assert dict(f.tools) == {"bash": 192, "edit": 146, "read": 50, "write": 3}
    assert f.requests[-1] == (987, "yeah, do it all")
    publish = next(
        c for c in f.commands if c.command == "cd /Users/dev/workspaces/pi-mono && npm run publish"
    )
    assert (publish.seq, publish.ok, publish.exit_code, publish.is_test) == (1006, False, 1, False)
    assert publish.output.startswith("> pi-monorepo@0.0.2 publish\n")
    assert utf8_len(publish.output) <= OUTPUT_SAMPLE_BYTES
    push = next(c for c in f.commands if c.command.endswith("git push origin main"))
    assert push.ok is True and "17d213a..45ffe0a  main -> main" in push.output
    # every distinct command once
    assert len({c.command for c in f.commands}) == len(f.commands)
    error = next(e for e in f.errors if e.source.endswith("npm run publish"))
    assert error.seq == 1007 and not error.resolved
    assert error.first_line.startswith("src/theme/theme.ts(5,15): error TS2305:")
    assert error.last_line.startswith("npm error command sh -c tsgo -p tsconfig.build.json")
    # the commit that husky refused was made later: resolved
    commit = next(e for e in f.errors if 'git commit -m "Release v0.8.0"' in e.source)
    assert commit.resolved and commit.last_line == "husky - pre-commit script failed (code 2)"
    # grep finding nothing (exit 1, no output) is an answer, not an error
    assert not any(e.source.startswith('grep -n "console') for e in f.errors)
    files = {t.path: t.change for t in f.files}
    assert files["packages/coding-agent/test/test-theme-colors.ts"] == "created"  # pi write
    assert files["packages/coding-agent/src/theme/theme.ts"] == "modified"  # pi edit
    assert files["README.md"] == "read"
    assert [t.path for t in f.changed_files if t.path == "README.md"] == []
    assert (
        "#987 yeah, do it all → ended with an unresolved error from `cd "
        "/Users/dev/workspaces/pi-mono && npm run publish` (#1007)" in f.open_items
    )
    assert (
        "The build is failing because the TUI package hasn't exported the theme interfaces."
        in f.decisions
    )


def test_codex_exec_command_exit_code_and_sample(sqlite_store):
    """Codex ``exec_command`` (``cmd``): the exit code from its "Process exited with code N"
    header, the output without the header."""
    path = next((REAL / "codex").rglob("rollout-*-01a23547-4f15-*.jsonl"))
    f = _facts_of(sqlite_store, path)
    assert [(c.command, c.ok, c.exit_code, c.output) for c in f.commands] == [
        ("ls", True, 0, "README.md\ncalc.py")
    ]
    assert f.requests == ((7, "List the files in this project"),)
    assert f.done == (
        "#7 List the files in this project → Fake model answer: I listed the "
        "project directory; it contains the files shown above.",
    )
    assert f.errors == () and f.open_items == ()


def test_codex_shell_heredoc_creates_a_file(sqlite_store):
    """Codex ``shell`` writing a file with ``cat > path << 'EOF'``: the file is created."""
    f = _facts_of(sqlite_store, SHARED_DATA / "codex" / "with-compaction.jsonl")
    assert [(t.path, t.change) for t in f.files] == [("src/middleware/auth.py", "created")]
    assert next(c.command for c in f.commands) == "cat src/routes.py"
    assert f.requests[-1] == (13, "Now add the authentication middleware")


def test_claude_code_failed_edit_resolved_by_multiedit_and_tasks(sqlite_store):
    """Claude Code: an ``Edit`` refused ("File has not been read yet") and a later
    ``MultiEdit`` of the same file: the error is resolved, the file modified; TodoWrite's
    completed items are done."""
    f = _facts_of(
        sqlite_store, SHARED_DATA / "claude-code" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    )
    edit = next(e for e in f.errors if e.source == "Edit /path/to/Demo/CLAUDE.md")
    assert edit.resolved and edit.seq == 45
    assert (
        edit.first_line == "<tool_use_error>File has not been read yet. Read it first before "
        "writing to it.</tool_use_error>"
    )
    assert ("/path/to/Demo/CLAUDE.md", "modified") in [(t.path, t.change) for t in f.files]
    assert ("/path/to/Demo/todo-app/package.json", "read") in [(t.path, t.change) for t in f.files]
    assert "[done] Update CLAUDE.md with latest project information" in f.done
    assert [t.status for t in f.tasks] == ["completed"] * 4


def test_claude_code_write_refused_is_not_a_change(sqlite_store):
    """A ``Write`` the user never permitted changed nothing: no file, an unresolved error."""
    f = _facts_of(
        sqlite_store, SHARED_DATA / "claude-code" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
    )
    assert f.changed_files == ()
    assert [e.source for e in f.unresolved_errors] == ["Write /path/to/Demo/CLAUDE.md"]


# ------------------------------------------------------------------ built rows


def test_last_invocation_of_each_command_and_pi_exit_lines():
    f = _facts(
        [
            U("run the tests"),
            A(call("c1", "bash", command="pytest -q")),
            R(
                "c1",
                "F.\nFAILED tests/test_x.py::test_y - assert 1 == 2\n1 failed, 1 passed\n\n\n"
                "Command exited with code 1",
                error=True,
            ),
            A(call("c2", "bash", command="pytest  -q")),
            R("c2", "..\n2 passed in 0.1s"),
            A(text="All tests pass now."),
        ]
    )
    assert [(c.command, c.seq, c.ok, c.exit_code, c.is_test, c.output) for c in f.commands] == [
        ("pytest -q", 3, True, None, True, "..\n2 passed in 0.1s")
    ]
    assert [(e.seq, e.source, e.first_line, e.last_line, e.resolved) for e in f.errors] == [
        (
            2,
            "pytest -q",
            "FAILED tests/test_x.py::test_y - assert 1 == 2",
            "1 failed, 1 passed",
            True,
        )
    ]
    assert f.failing_tests == ()  # the newest run passed
    assert f.done == ("#0 run the tests → All tests pass now.",)


def test_failing_tests_of_the_newest_run_and_codex_exit_code():
    f = _facts(
        [
            U("fix it"),
            A(call("c1", "exec_command", cmd="go test ./...")),
            R(
                "c1",
                "Exit code: 1\nWall time: 2.1 seconds\nOutput:\n--- FAIL: TestParse (0.00s)\n"
                "    parse_test.go:12: got 3\nFAIL\nFAIL\texample.com/p\t0.01s",
            ),
            A(call("c2", "bash", command="npx jest")),
            R(
                "c2",
                "FAIL src/a.test.ts\n  ✕ adds (3 ms)\nTests: 1 failed\nCommand exited with code 1",
                error=True,
            ),
            A(call("c3", "Bash", command="cargo test")),
            R("c3", "test tests::it_works ... FAILED\ntest result: FAILED", error=True),
        ]
    )
    assert [(c.command, c.ok, c.exit_code) for c in f.commands] == [
        ("go test ./...", False, 1),
        ("npx jest", False, 1),
        ("cargo test", False, None),
    ]
    assert f.failing_tests == ("TestParse", "src/a.test.ts", "tests::it_works")
    assert f.open_items == ("#0 fix it → ended with an unresolved error from `cargo test` (#6)",)
    assert f.done == ()


def test_apply_patch_kinds_and_write_tools():
    patch = (
        "*** Begin Patch\n*** Add File: src/new.py\n+x = 1\n*** Update File: src/old.py\n"
        "@@\n-a\n+b\n*** Delete File: src/gone.py\n*** Update File: a.txt\n"
        "*** Move to: b.txt\n*** End Patch"
    )
    f = _facts(
        [
            U("change things"),
            A(call("c1", "Read", file_path="/r/x.md")),
            R("c1", "# x"),
            A(ToolCallBlock("c2", "apply_patch", patch)),
            R("c2", "Success. Updated the following files:\nA src/new.py"),
            A(call("c3", "edit", path="lib/e.ts", oldText="a", newText="b")),
            R("c3", "Successfully replaced text in lib/e.ts."),
            A(call("c4", "write", path="lib/w.ts", content="x")),
            R("c4", "Successfully wrote 1 bytes to lib/w.ts"),
            A(call("c5", "Write", file_path="/r/x.md", content="y")),
            R("c5", "The file /r/x.md has been updated."),
            A(call("c6", "Edit", file_path="/r/fail.md", old_string="a", new_string="b")),
            R("c6", "<tool_use_error>String to replace not found</tool_use_error>", error=True),
            A(call("c7", "bash", command="rm -f build/out.js && echo hi > notes.txt")),
            R("c7", ""),
        ]
    )
    assert [(t.path, t.change) for t in f.files] == [
        ("src/new.py", "created"),
        ("src/old.py", "modified"),
        ("src/gone.py", "deleted"),
        ("a.txt", "deleted"),
        ("b.txt", "created"),
        ("lib/e.ts", "modified"),
        ("lib/w.ts", "created"),
        ("/r/x.md", "modified"),
        ("build/out.js", "deleted"),
        ("notes.txt", "created"),
    ]
    assert "/r/fail.md" not in [t.path for t in f.files]
    assert [e.source for e in f.unresolved_errors] == ["Edit /r/fail.md"]


def test_dangling_call_urls_decisions_and_tasks():
    f = _facts(
        [
            U("see https://example.com/issue/7, then deploy"),
            A(
                call(
                    "t1",
                    "TodoWrite",
                    todos=[
                        {"content": "Commit the fix", "status": "pending"},
                        {"content": "Deploy", "status": "in_progress"},
                    ],
                )
            ),
            R("t1", "ok"),
            A(call("c1", "Bash", command="git commit -m fix")),
            R("c1", "[main 1a2b3c] fix"),
            A(call("w1", "WebFetch", url="https://docs.example.org/a")),
            A(call("c2", "Bash", command="./deploy.sh")),
            A(text="I decided to use blue-green deploys because downtime is not allowed. Done?"),
        ]
    )
    assert f.urls == ("https://example.com/issue/7", "https://docs.example.org/a")
    assert f.decisions == ("I decided to use blue-green deploys because downtime is not allowed.",)
    assert [c.ok for c in f.commands] == [True, None]
    assert f.done == ("[done] Commit the fix by `git commit -m fix` (#4)",)
    assert f.open_items == (
        "[in progress] Deploy",
        'WebFetch `{"url":"https://docs.example.org/a"}` (#5) has no recorded result: its '
        "effects are unknown",
        "Bash `./deploy.sh` (#6) has no recorded result: its effects are unknown",
    )
    assert f.dangling == 2
    assert f.last_answer == (
        7,
        "I decided to use blue-green deploys because downtime is not allowed. Done?",
    )


def test_outputs_are_sampled_never_copied_whole():
    log = "\n".join(
        f"2026-12-01T10:{i // 60:02d}:{i % 60:02d} INFO line {i} " + "x" * 40 for i in range(900)
    )  # ~48 KB
    f = _facts([U("look at the log"), A(call("c1", "bash", command="cat app.log")), R("c1", log)])
    out = f.commands[0].output
    assert out.splitlines()[0].startswith("2026-12-01T10:00:00 INFO line 0 ")
    assert out.splitlines()[-1].startswith("2026-12-01T10:14:59 INFO line 899 ")
    assert utf8_len(out) <= OUTPUT_SAMPLE_BYTES
    assert "bytes omitted …]" in out


def test_exit_code_forms():
    assert exit_code("Chunk ID: 1\nProcess exited with code 3\nOutput:\nx") == 3
    assert exit_code("boom\n\nCommand exited with code 2") == 2
    assert exit_code("Exit code 127\n/bin/sh: nope: not found") == 127
    assert exit_code('{"output":"x","metadata":{"exit_code":5}}') == 5
    assert exit_code("$ make\n[exit 2]") == 2
    assert exit_code("all good") is None
    assert sample("Chunk ID: 1\nWall time: 0 s\nProcess exited with code 0\nOutput:\nok\n") == "ok"


def test_no_rows_and_odd_rows():
    assert extract_facts([]) == SessionFacts()
    f = _facts([R("nobody", "orphan result"), Entry(EntryKind.MESSAGE, Role.ASSISTANT, ())])
    assert f.rows == 2 and f.commands == () and f.errors == ()


# ------------------------------------------------------------------ properties

SECRET = "sk-ant-api03-Q7x9Lm2Vb8Nc4Kd1Rf6Tg3Hy5Ju0Ik"
_names = st.sampled_from(
    [
        "bash",
        "Bash",
        "exec_command",
        "edit",
        "write",
        "Read",
        "Edit",
        "apply_patch",
        "shell",
        "WebFetch",
    ]
)
_commands = st.sampled_from(
    ["pytest -q", "npm test", "ls", "git push", "grep x y", f"echo {SECRET}", "cat > f.txt <<'EOF'"]
)
_texts = st.text(max_size=200) | st.sampled_from(
    [
        f"token {SECRET} leaked",
        "Command exited with code 1",
        "Exit code: 2\nOutput:\nboom",
        "FAILED tests/a.py::t",
        "Traceback (most recent call last):\n  x\nValueError: no",
    ]
)


@st.composite
def _rows(draw):
    rows: list[Entry] = []
    ids = [f"c{i}" for i in range(6)]
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["user", "assistant", "call", "result"]))
        if kind == "user":
            rows.append(U(draw(_texts), request=draw(st.booleans())))
        elif kind == "assistant":
            rows.append(A(text=draw(_texts) or None))
        elif kind == "call":
            name = draw(_names)
            args = draw(
                st.sampled_from(
                    [
                        {"command": draw(_commands)},
                        {"cmd": draw(_commands)},
                        {"path": draw(st.sampled_from(["a.py", "b/c.ts", SECRET]))},
                        {"file_path": "/x/y.md"},
                        {},
                    ]
                )
            )
            rows.append(A(ToolCallBlock(draw(st.sampled_from(ids)), name, args)))
        else:
            rows.append(R(draw(st.sampled_from(ids)), draw(_texts), error=draw(st.booleans())))
    return rows


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_rows())
def test_property_extraction_never_raises_and_keeps_its_invariants(rows):
    f = _facts(rows)
    assert len({c.command for c in f.commands}) == len(f.commands)
    assert set(f.changed_files) <= set(f.files)
    assert len({t.path for t in f.files}) == len(f.files)
    assert f.rows == len(rows)
    assert set(f.unresolved_errors) <= set(f.errors)
    assert all(utf8_len(c.output) <= OUTPUT_SAMPLE_BYTES for c in f.commands)
    assert SECRET not in repr(f)


@pytest.mark.parametrize("harness", ["claude-code", "codex", "pi"])
def test_every_real_session_extracts_without_secrets_or_repeats(sqlite_store, harness):
    import_paths(sqlite_store, [SHARED_DATA / harness, REAL / harness])
    for s in sqlite_store.list_sessions():
        f = extract_facts(digest(e) for e in iter_entries(sqlite_store, s.key))
        assert len({c.command for c in f.commands}) == len(f.commands)
        assert set(f.changed_files) <= set(f.files)
        assert f.rows > 0


def test_steps_and_pipelines_respect_quotes():
    """A ``|``, ``;`` or ``&&`` inside quotes is part of an argument (pi's session greps
    ``"Detected truecolor\\|Detected.*background"``): its "no match" exit 1 is no error."""
    from continuity.continuation.facts import last_stage, steps

    assert steps('cd /r && grep -A 5 "a\\|b; c" x.ts || echo "x && y"; ls') == [
        'grep -A 5 "a\\|b; c" x.ts',
        'echo "x && y"',
        "ls",
    ]
    assert last_stage('grep "a|b" f | wc -l') == "wc -l"
    f = _facts(
        [
            U("look"),
            A(call("c1", "bash", command='grep -A 5 "Detected x\\|No y" src/t.ts')),
            R("c1", "Command exited with code 1", error=True),
        ]
    )
    assert f.commands[0].ok is False and f.commands[0].exit_code == 1
    assert f.errors == () and f.failed_calls == 0


def test_pi_user_commands_are_commands_not_requests():
    """pi's ``!make test`` (a user row ``$ command / output / [exit N]``, no request) is a
    command with its exit status and output, not a request and not the agent's tool call."""
    f = _facts(
        [
            U("build it"),
            A(text="Built."),
            U("$ make test\ncc -o app app.c\n2 tests failed\n[exit 2]", request=False),
        ]
    )
    assert f.requests == ((0, "build it"),)
    assert [(c.command, c.ok, c.exit_code, c.is_test, c.output) for c in f.commands] == [
        ("make test", False, 2, True, "cc -o app app.c\n2 tests failed")
    ]
    assert [(e.source, e.last_line) for e in f.errors] == [("make test", "2 tests failed")]
    assert f.tools == () and f.failed_calls == 0
    assert f.done == ("#0 build it → Built.",)


def test_pi_bash_execution_rows_of_a_real_v3_log(sqlite_store):
    """The pi v3 fixture's ``bashExecution`` entries (``!pytest -q``, exit 0) are commands."""
    path = Path(__file__).resolve().parents[1] / "fixtures" / "pi" / "v3-compaction.jsonl"
    f = _facts_of(sqlite_store, path)
    pytest_run = next(c for c in f.commands if c.command == "pytest -q")
    assert (pytest_run.ok, pytest_run.exit_code, pytest_run.is_test, pytest_run.output) == (
        True,
        0,
        True,
        "3 passed",
    )
    assert "/review export.py" in [t for _, t in f.requests]
