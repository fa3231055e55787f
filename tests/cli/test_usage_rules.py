"""Issue 45 item 8: one rule for usage errors and for search/recall exit statuses.

Usage errors (an unknown option, a missing or bad argument, in any command) are ONE line on
stderr, exit 2: ``error: <what> (see continuity CMD --help)``, as the README promises (Click
printed a four-line block). ``search`` and ``recall`` follow grep and rg: an empty QUERY is a
usage error (exit 2) for both, no hit exits 1, a hit 0."""

from __future__ import annotations

import pytest

from continuity.store import open_store
from tests.cli.running import run_main


@pytest.mark.parametrize(
    ("args", "where", "what"),
    [
        (["search", "--bogus"], "continuity search", "No such option: --bogus"),
        (["search"], "continuity search", "Missing argument 'QUERY'"),
        (["sessions", "-n", "-1"], "continuity sessions", "Invalid value for '-n'"),
        (["nope"], "continuity", "No such command 'nope'"),
        (["hooks", "install", "nope"], "continuity hooks install", "Invalid value for 'HARNESS'"),
        (["memory", "render", "--bogus"], "continuity memory render", "No such option: --bogus"),
        (["show"], "continuity show", "Missing argument 'SESSION'"),
    ],
)
def test_a_usage_error_is_one_line(monkeypatch, capsys, tmp_path, args, where, what):
    """Every kind of usage error, in commands of every module: exactly one line on stderr,
    ``error: <what> (see <command> --help)``, nothing on stdout, exit 2."""
    code, out, err = run_main(
        monkeypatch, capsys, *args, *(["--home", tmp_path] if args[0] != "nope" else [])
    )
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith(f"error: {what}"), err
    assert err.rstrip("\n").endswith(f"(see {where} --help)"), err


def test_help_and_a_bare_group_still_print_help(monkeypatch, capsys):
    """The help is not an error line: ``--help`` exits 0 with the usage on stdout."""
    code, out, err = run_main(monkeypatch, capsys, "search", "--help")
    assert code == 0 and out.startswith("Usage: continuity search") and err == ""
    assert "1 when none did" in out


@pytest.mark.parametrize("command", ["search", "recall"])
@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_query_is_a_usage_error_for_search_and_recall(
    monkeypatch, capsys, tmp_path, command, query
):
    """``search ""`` was accepted (exit 0) while ``recall ""`` was refused: both are a usage
    error now, one line, exit 2."""
    code, out, err = run_main(monkeypatch, capsys, command, query, "--home", tmp_path)
    assert code == 2 and out == ""
    assert err == (
        f"error: Invalid value for 'QUERY': is empty: give the words to find "
        f"(see continuity {command} --help)\n"
    )


@pytest.mark.parametrize("command", ["show", "continue", "transcript", "checkpoints", "export"])
@pytest.mark.parametrize("session", ["", "  "])
def test_an_empty_session_is_a_usage_error(monkeypatch, capsys, tmp_path, command, session):
    """A fresh-user review: ``show ''`` said "no session matches ''" (exit 3) where ``search
    ''`` was a usage error; every SESSION argument now refuses an empty one, exit 2."""
    code, out, err = run_main(monkeypatch, capsys, command, session, "--home", tmp_path)
    assert (code, out) == (2, "")
    assert err == (
        "error: Invalid value for 'SESSION': is empty: give a session key or a unique prefix "
        f"of one (see continuity {command} --help)\n"
    )


@pytest.mark.parametrize("as_json", [[], ["--json"]])
def test_no_hit_exits_1_a_hit_0_for_search_and_recall(monkeypatch, capsys, tmp_path, as_json):
    """As grep and rg: a query that matches exits 0, one that matches nothing exits 1 (with
    --json too); search and recall alike."""
    from continuity.core.model import Entry, EntryKind, Role, Session, TextBlock
    from continuity.transcripts import memories as rc

    home = tmp_path / "ws"
    with open_store(home / "continuity.db") as store:
        store.upsert_session(Session("s-1", "claude-code", project="/tmp/p"))
        store.append(
            "s-1",
            [
                Entry(
                    seq=0,
                    kind=EntryKind.MESSAGE,
                    role=Role.USER,
                    blocks=[TextBlock("fix the alembic migration")],
                )
            ],
        )
        rc.remember(store, "alembic heads must be merged before upgrade")
    for command in ("search", "recall"):
        code, out, err = (
            run_main(
                monkeypatch, capsys, command, "alembic", *as_json, "--home", home, "--mode", "words"
            )
            if command == "search"
            else run_main(monkeypatch, capsys, command, "alembic", *as_json, "--home", home)
        )
        assert code == 0 and "alembic" in out, (command, err)
        code, out, err = run_main(
            monkeypatch, capsys, command, "zebracorn", *as_json, "--home", home
        )
        assert code == 1, (command, out, err)


def test_an_errors_fix_command_keeps_the_home_in_use(monkeypatch, capsys, tmp_path):
    """Issue 45 item 2, the kind beyond doctor: an error's fix (`continuity sessions` after
    an unknown session) printed bare acted on $CONTINUITY_HOME's workspace when run as
    printed; with --home given, it carries it, and run as printed it lists this one."""
    import re
    import shlex

    home = tmp_path / "ws"
    with open_store(home / "continuity.db") as store:
        from continuity.core.model import Session

        store.upsert_session(Session("s-1", "claude-code", project="/tmp/p"))
    code, out, err = run_main(monkeypatch, capsys, "show", "nokey", "--home", home)
    assert code == 3
    [command] = re.findall(r"`(continuity [^`]*)`", err)
    assert command == f"continuity sessions --home {home}"
    code, out, err = run_main(monkeypatch, capsys, *shlex.split(command)[1:], "--json")
    assert code == 0 and '"s-1"' in out


@pytest.mark.parametrize(
    ("args", "where", "what"),
    [
        (
            ["search", "foo", "--since", "yesterday"],
            "continuity search",
            "Invalid value: --since 'yesterday'",
        ),
        (
            ["search", "foo", "--until", "nope"],
            "continuity search",
            "Invalid value: --until 'nope'",
        ),
        (["search", "foo", "--mode", "bogus"], "continuity search", "Invalid value for '--mode'"),
        (["search", "foo", "--role", "bogus"], "continuity search", "Invalid value for '--role'"),
        (["export", "K", "--format", "pdf"], "continuity export", "Invalid value for '--format'"),
        (["sessions", "--home", ""], "continuity sessions", "Invalid value for '--home': is empty"),
        (["--home", "", "where"], "continuity", "Invalid value for '--home': is empty"),
        (
            ["memory", "render", "--project", ""],
            "continuity memory render",
            "Invalid value for '--project': is empty",
        ),
        (["models", "fetch", "bogus"], "continuity models fetch", "Invalid value for 'NAME'"),
        (["resume", "K", "--in", "bogus"], "continuity resume", "Invalid value for '--in'"),
    ],
)
def test_a_bad_value_found_inside_a_command_is_a_usage_error(
    monkeypatch, capsys, tmp_path, args, where, what
):
    """Fresh-user review: a bad option value a command checks itself (a --since that is no
    time, an unknown --mode, an empty --home, an unknown model or harness) printed
    ``continuity: ...``, exit 1, with no pointer to the help. It is a usage error like
    Click's own: one line ``error: <what> (see <command> --help)``, exit 2, before any store
    is opened (the workspace here does not exist and stays so)."""
    homed = [] if "--home" in args or args[0] == "models" else ["--home", tmp_path / "ws"]
    code, out, err = run_main(monkeypatch, capsys, *args, *homed)
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith(f"error: {what}"), err
    assert err.rstrip("\n").endswith(f"(see {where} --help)"), err
    assert not (tmp_path / "ws").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["search", "-phoenix"],
            "error: No such option: -p; to search for text that starts with '-', put -- "
            "before it: `continuity search -- -phoenix` (see continuity search --help)",
        ),
        (
            ["recall", "-phoenix", "--json"],
            "error: No such option: -p; to recall text that starts with '-', put -- before "
            "it: `continuity recall --json -- -phoenix` (see continuity recall --help)",
        ),
        (  # the options given stay before --, the global --home where it was
            ["--home", "/w s", "search", "-n", "5", "-x y"],
            "error: No such option: -x; to search for text that starts with '-', put -- "
            "before it: `continuity --home '/w s' search -n 5 -- '-x y'` "
            "(see continuity search --help)",
        ),
        (  # -n took "ope" as its value
            ["search", "-nope"],
            "error: Invalid value for '-n' / '--count': must be a whole number from 0 to 500 "
            "(got 'ope'); to search for text that starts with '-', put -- before it: "
            "`continuity search -- -nope` (see continuity search --help)",
        ),
        (  # a QUERY given already: the word is no QUERY, no hint
            ["search", "export", "-x"],
            "error: No such option: -x (see continuity search --help)",
        ),
        (  # a long option is an option mistyped
            ["search", "--phoenix"],
            "error: No such option: --phoenix (Possible options: --home) "
            "(see continuity search --help)",
        ),
        (  # not a command with a QUERY
            ["sessions", "-x"],
            "error: No such option: -x (see continuity sessions --help)",
        ),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_a_query_starting_with_a_dash_is_told_to_follow_double_dash(
    monkeypatch, capsys, args, said
):
    """Fresh-user review: ``search -phoenix`` said only "No such option: -p". For search and
    recall the error shows the command that searches for it, the word after ``--``."""
    code, out, err = run_main(monkeypatch, capsys, *args)
    assert (code, out, err) == (2, "", said + "\n")


def test_the_command_the_hint_shows_searches_for_the_word(monkeypatch, capsys, tmp_path):
    home = tmp_path / "ws"
    code, _out, err = run_main(
        monkeypatch, capsys, "remember", "run it with -phoenix to rise again", "--home", home
    )
    assert code == 0, err
    code, out, _err = run_main(monkeypatch, capsys, "recall", "--home", home, "--", "-phoenix")
    assert code == 0 and "run it with -phoenix to rise again" in out


def _many_rows(path, n: int) -> None:
    """A pi session file of ``n`` user rows, each holding the word "phoenix"."""
    import json

    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "01a2354d-2a28-75c5-9931-4e663de40000",
            "timestamp": "2026-12-02T05:49:39.241Z",
            "cwd": "/home/dev/projects/many",
        }
    ]
    for i in range(n):
        lines.append(
            {
                "type": "message",
                "id": f"m{i:07d}",
                "parentId": f"m{i - 1:07d}" if i else None,
                "timestamp": "2026-12-02T05:49:44.400Z",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": f"phoenix rises again {i}"}],
                    "timestamp": 1796190584373,
                },
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


CAPPED = (
    "note: 500 hits shown, the most search prints (-n 0); more may match: narrow it with "
    "--here, --project, --harness, --since, --until, --role or --tool\n"
)


@pytest.mark.parametrize("as_json", [False, True])
def test_search_n_0_says_when_it_stopped_at_500(monkeypatch, capsys, tmp_path, as_json):
    """Fresh-user review: ``search -n 0`` (all) stopped at 500 hits without a word. It still
    prints at most 500 (the one -n rule: 0 = all, up to the command's most) and says so on
    stderr when it found that many; -n 500 asked for 500, and fewer say nothing."""
    _many_rows(tmp_path / "many.jsonl", 501)
    home = tmp_path / "ws"
    code, _out, err = run_main(
        monkeypatch, capsys, "import", "--no-embed", tmp_path / "many.jsonl", "--home", home
    )
    assert code == 0, err
    json_flag = ["--json"] if as_json else []
    search = ["search", "phoenix", "--mode", "words", "--home", home, *json_flag]
    code, out, err = run_main(monkeypatch, capsys, *search, "-n", "0")
    hits = 500 * (2 if as_json else 1)  # --json: the text and the snippet of each hit
    assert (code, err) == (0, CAPPED)
    assert out.count("phoenix rises again") == hits
    code, out, err = run_main(monkeypatch, capsys, *search, "-n", "500")
    assert (code, err) == (0, "") and out.count("phoenix rises again") == hits
    code, out, err = run_main(monkeypatch, capsys, *search, "-n", "0", "--since", "2027-01-01")
    assert code == 1 and "note:" not in err


def test_the_count_help_says_what_0_means(monkeypatch, capsys):
    code, out, _err = run_main(monkeypatch, capsys, "search", "--help")
    assert code == 0
    assert "0 = all, up to 500: a note on stderr says when 500 were found and more may" in (
        " ".join(out.split())
    )
