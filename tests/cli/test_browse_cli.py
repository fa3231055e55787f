"""``continuity search``, ``export`` and ``show --seq`` (issue 19): output, JSON lines, filters,
redaction, exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.core.config import database_url
from continuity.core.errors import ContinuityError
from continuity.store import open_store
from tests.browser.corpus import HOSTILE, SECRET, build

runner = CliRunner()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    with open_store(database_url(path)) as store:
        build(store)
    return path


def invoke(*args: object):
    """Run the app in-process; a ``ContinuityError`` is kept (``code`` gives its exit code,
    as ``cli.app.main`` maps it), any other exception raised."""
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, (SystemExit, ContinuityError)):
        raise result.exception
    return result


def code(result) -> int:
    """The exit code ``continuity`` would end with."""
    if isinstance(result.exception, ContinuityError):
        return result.exception.exit_code
    return result.exit_code


def test_search_json_is_one_object_per_line(home):
    r = invoke("search", "alembic", "--json", "--home", home)
    assert r.exit_code == 0
    hits = [json.loads(line) for line in r.stdout.splitlines()]
    assert {(h["session"], h["seq"]) for h in hits} == {
        ("cc-alembic", 0),
        ("cc-alembic", 1),
        ("cc-alembic", 6),
        ("cx-parser", 1),
        ("cc-alembic/agent-7", 0),
    }
    assert {h["harness"] for h in hits} == {"claude-code", "codex"}
    sub = next(h for h in hits if h["session"] == "cc-alembic/agent-7")
    assert sub["subagent"] is True and sub["agent"] == "7"
    codex = next(h for h in hits if h["harness"] == "codex")
    assert codex["show_command"] == f"continuity show cx-parser --seq 1 --home {home}"
    assert codex["resume_command"] == f"continuity resume cx-parser --in codex --home {home}"
    assert codex["project"] == "/home/ana/other" and codex["time"] == "2026-11-20T09:01:00Z"


def test_search_text_output_and_filters(home):
    r = invoke("search", "alembic", "--harness", "codex", "-n", "5", "--home", home)
    assert r.exit_code == 0
    assert r.stdout.splitlines()[0].startswith("cx-parser #1 assistant · codex · /home/ana/other")
    assert "continuity show cx-parser --seq 1" in r.stdout
    r = invoke(
        "search",
        "alembic",
        "--project",
        "/home/ana/app",
        "--role",
        "user",
        "--json",
        "--home",
        home,
    )
    assert sorted(json.loads(x)["session"] for x in r.stdout.splitlines()) == [
        "cc-alembic",
        "cc-alembic/agent-7",
    ]
    r = invoke("search", "alembic", "--tool", "bash", "--json", "--home", home)
    assert [json.loads(x)["seq"] for x in r.stdout.splitlines()] == [1]
    r = invoke("search", "alembic", "--since", "2026-11-20T09:05", "--json", "--home", home)
    assert [json.loads(x)["seq"] for x in r.stdout.splitlines()] == [6]


def test_search_here_is_the_current_folder(home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = invoke("search", "alembic", "--here", "--json", "--home", home)
    assert r.exit_code == 1 and r.stdout == ""  # issue 45 item 8: no hit exits 1, as grep


def test_search_redacts_snippets(home):
    r = invoke("search", "key", "--json", "--home", home)
    assert SECRET not in r.stdout and "ZYXWVUTSRQ" not in r.stdout
    assert "[REDACTED" in r.stdout


@pytest.mark.parametrize(
    "args,needle", [(["--since", "yesterday"], "--since"), (["--role", "robot"], "--role")]
)
def test_search_bad_input_exits_2(home, args, needle):
    r = invoke("search", "alembic", *args, "--home", home)
    assert code(r) == 2 and needle in r.output and "see continuity search --help" in r.output


def test_search_nothing_found(home):
    r = invoke("search", '"***"', "--home", home)
    assert r.exit_code == 1 and r.stdout == ""  # issue 45 item 8: no hit exits 1, as grep


def test_export_past_the_last_row_says_so(home):
    """Issue 44, fresh-user review: ``export --since-seq 400`` of a shorter session printed
    ``- seq: None–None of 46 rows``."""
    md = invoke("export", "cc-alembic", "--since-seq", "400", "--home", home).stdout
    assert "- no rows in seq 400–end (7 rows)" in md and "None" not in md
    md = invoke(
        "export", "cc-alembic", "--since-seq", "400", "--until-seq", "500", "--home", home
    ).stdout
    assert "- no rows in seq 400–500 (7 rows)" in md
    md = invoke("export", "cc-alembic", "--since-seq", "1", "--home", home).stdout
    assert "- seq: 1–" in md


def test_export_markdown_html_jsonl(home, tmp_path):
    md = invoke("export", "cc-alembic", "--home", home).stdout
    assert md.startswith("# Alembic search index\n")
    assert "## Compaction at row 3" in md and "**Tool call** `Bash`" in md
    assert SECRET not in md and "\\<script\\>" in md  # escaped, never HTML
    out = tmp_path / "s.html"
    r = invoke("export", "cc-alembic", "--format", "html", "--output", out, "--home", home)
    assert r.exit_code == 0
    html = out.read_text()
    assert html.startswith("<!doctype html>") and "<script>" not in html
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    assert 'href="/search"' not in html  # self-contained: no navigation to the server
    lines = invoke(
        "export",
        "cc-alembic",
        "--format",
        "jsonl",
        "--since-seq",
        "1",
        "--until-seq",
        "4",
        "--home",
        home,
    ).stdout.splitlines()
    rows = [json.loads(x) for x in lines]
    assert [r["seq"] for r in rows] == [1, 2, 3, 4]
    assert rows[0]["content"][1]["name"] == "Bash"
    assert SECRET not in lines[3] and HOSTILE.split("<")[0] in rows[3]["content"][0]["text"]


def test_export_raw_warns(home):
    r = invoke("export", "cc-alembic", "--format", "jsonl", "--raw", "--home", home)
    assert SECRET in r.stdout
    assert "warning: --raw" in r.stderr


def test_export_unknown_session_and_bad_format(home):
    assert code(invoke("export", "nope", "--home", home)) == 3
    assert code(invoke("export", "cc-alembic", "--format", "pdf", "--home", home)) == 2


def test_show_seq_opens_the_rows_around_a_hit(home):
    r = invoke("show", "cc-alembic", "--seq", "6", "--json", "--home", home)
    assert [e["seq"] for e in json.loads(r.stdout)["entries"]] == [1, 2, 3, 4, 5, 6]
    assert code(invoke("show", "cc-alembic", "--seq", "99", "--home", home)) == 2


def test_review_faults_are_one_line_errors(home, tmp_path):
    """Fresh-user review: an age before year 1, a row number past 64 bits and an --output that
    is not a regular file are exit 2 with one line (an OverflowError traceback before; export
    replaced /dev/full with a regular file); ``-n 0`` is all hits up to the cap."""
    r = invoke("search", "alembic", "--since", "99999999d", "--home", home)
    assert code(r) == 2 and "before year 1" in r.output
    r = invoke("show", "cx-parser", "--seq", str(2**64), "--home", home)
    assert code(r) == 2
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link.md"
    link.symlink_to(tmp_path / "target.md")
    for bad in (fifo, link, Path("/dev/null")):
        r = invoke("export", "cx-parser", "--output", bad, "--home", home)
        assert code(r) == 2 and "not a regular file" in str(r.exception), bad
    assert link.is_symlink() and not (tmp_path / "target.md").exists()
    r = invoke("search", "alembic", "-n", "0", "--json", "--home", home)
    assert code(r) == 0 and r.output.count("\n") >= 1


def test_search_text_shows_control_characters_never_sends_them(home):
    """A transcript's terminal escapes reach the screen as visible symbols (review: search
    printed the ESC byte raw, so a title-setting sequence ran). Issue 45: as the README's
    one rule (``\\x1b``, ``\\u202e``, not control pictures), the highlighted spans moved
    with the characters they cover."""
    from continuity.cli.commands.common import styled_escaped

    shown = styled_escaped("a\x1b]0;PWNED\x07b \u202ered zebra", [(18, 23, "bold")])
    assert shown.plain == "a\\x1b]0;PWNED\\x07b \\u202ered zebra"
    [span] = shown.spans
    assert shown.plain[span.start : span.end] == "zebra"


def test_search_of_stop_words_only_says_why(home):
    """Review: ``search AND`` found nothing without a word why; the index (as recall's, and
    PostgreSQL's english configuration) leaves common words out."""
    r = invoke("search", "AND or not", "--home", home)
    assert r.exit_code == 1 and "only common English words" in r.stderr
    # with --json too: stdout holds JSON lines only, none here; the why goes to stderr
    # (a fresh-user review: `search the --json` exited 1 with nothing said)
    r = invoke("search", "the", "--json", "--home", home)
    assert (r.exit_code, r.stdout) == (1, "")
    assert r.stderr.startswith("no row matches 'the': it holds only common English words")


def test_an_opencode_session_is_filtered_and_hinted_only_with_runnable_commands(tmp_path):
    """Fresh-user review: ``sessions`` listed OpenCode sessions but refused
    ``--harness opencode`` (exit 2), and ``search`` hinted ``continuity resume KEY --in
    opencode`` when ``resume`` could not write OpenCode sessions; since issue 42 it can, and
    the hint is that runnable command."""
    from continuity.core.model import Entry, EntryKind, Role, Session, TextBlock

    home = tmp_path / "ws"
    with open_store(database_url(home)) as store:
        store.upsert_session(Session(key="ses_1", harness="opencode", project="/p"))
        store.append(
            "ses_1",
            [
                Entry(
                    kind=EntryKind.MESSAGE,
                    role=Role.USER,
                    blocks=(TextBlock("migrate the zebrafish table"),),
                    seq=0,
                    is_request=True,
                )
            ],
        )
        store.upsert_session(Session(key="pi-1", harness="pi", project="/p"))
    r = invoke("sessions", "--harness", "opencode", "--json", "--home", home)
    assert code(r) == 0, r.output
    assert [s["session"] for s in json.loads(r.stdout)] == ["ses_1"]
    r = invoke("search", "zebrafish", "--json", "--home", home)
    (hit,) = [json.loads(line) for line in r.stdout.splitlines()]
    # issue 42: OpenCode is a resume target now, so its hint runs (resume --in opencode)
    assert (
        hit["resume_command"] == f"continuity resume ses_1 --in opencode --home {home}"
        and hit["show_command"] == f"continuity show ses_1 --seq 0 --home {home}"
    )
    r = invoke("search", "zebrafish", "--home", home)
    assert "continuity show ses_1 --seq 0" in r.stdout
    assert "continuity resume ses_1 --in opencode" in r.stdout


def test_a_file_name_or_project_with_a_newline_stays_on_one_output_line(tmp_path):
    """Fresh-user review: ``import`` of ``a<newline>b/x<newline>y.jsonl`` printed the name
    over three lines, and a project holding a newline or a tab split the piped ``sessions``
    line and its tab-separated fields. Both are shown with ``\\n`` and ``\\t``."""
    from tests.paths import SHARED_DATA

    folder = tmp_path / "a\nb"
    folder.mkdir()
    (folder / "x\ny.jsonl").write_bytes((SHARED_DATA / "claude-code" / "short.jsonl").read_bytes())
    (folder / "t.jsonl").write_text(
        '{"type":"user","uuid":"u1","sessionId":"s-tab","cwd":"/a\\nb\\tc",'
        '"message":{"role":"user","content":"hi"}}\n'
    )
    home = tmp_path / "ws"
    r = invoke("import", folder, "--home", home)
    assert code(r) == 0, r.output
    imported = sorted(line for line in r.stdout.splitlines() if line.startswith("imported "))
    assert [line.split(":")[0] for line in imported] == [
        f"imported {tmp_path}/a\\nb/t.jsonl",
        f"imported {tmp_path}/a\\nb/x\\ny.jsonl",
    ]
    r = invoke("sessions", "--home", home)
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    # eight fields: the six, copy_of (issue 45 item 3), empty for a session that is no copy,
    # and the title (issue 44: the first request)
    assert len(rows) == 3 and {len(row) for row in rows} == {8}
    assert rows[0][-2:] == ["copy_of", "title"] and [row[-2] for row in rows[1:]] == ["", ""]
    assert ["s-tab", "/a\\nb\\tc"] in [row[:3:2] for row in rows]
    assert sorted(row[-1] for row in rows[1:]) == ["hi", "mix phx.server doesnt seem to start"]


def _source_export(home, key):
    r = invoke("export", key, "--format", "source", "--raw", "--home", home)
    assert code(r) == 0, r.output
    return r.stdout_bytes, r.stderr


@pytest.mark.parametrize(
    "name",
    ["claude-code/tool_heavy.jsonl", "codex/with-compaction.jsonl", "pi/v3-short-session.jsonl"],
)
def test_export_source_gives_the_imported_file_back_byte_for_byte(tmp_path, name):
    """Fresh-user review: nothing let a user get the raw lines back or check them against the
    file. ``export --format source --raw`` rebuilds the file from the kept raw lines."""
    from tests.paths import SHARED_DATA

    path = tmp_path / "s.jsonl"
    path.write_bytes((SHARED_DATA / name).read_bytes())
    home = tmp_path / "ws"
    assert code(invoke("import", path, "--home", home)) == 0
    (session,) = json.loads(invoke("sessions", "--json", "--home", home).stdout)
    data, note = _source_export(home, session["session"])
    assert data == path.read_bytes()
    lines = data.count(b"\n")
    assert note.splitlines()[-1] == (
        f"{path}: {lines} lines, {len(data)} bytes from the store; the file on disk: identical"
    )


def test_export_source_keeps_bom_crlf_blank_and_bad_lines_and_checks_the_file(tmp_path):
    """A byte order mark, CRLF ends, blank lines, a bad line and a last line without a newline
    all come back as they were; a grown, changed or deleted file is reported as such."""
    row = (
        '{"type":"user","uuid":"u%d","sessionId":"k-1","cwd":"/a",'
        '"message":{"role":"user","content":"hi %d"}}'
    )
    original = (
        b"\xef\xbb\xbf" + (row % (1, 1)).encode() + b"\r\n\n{not json\n" + (row % (2, 2)).encode()
    )
    path = tmp_path / "k-1.jsonl"
    path.write_bytes(original)
    home = tmp_path / "ws"
    assert code(invoke("import", path, "--home", home)) == 0
    data, note = _source_export(home, "k-1")
    assert data == original and note.endswith("the file on disk: identical\n")
    path.write_bytes(original + b"\n" + (row % (3, 3)).encode() + b"\n")
    assert _source_export(home, "k-1")[1].endswith("the file on disk: grown\n")
    path.write_bytes(original.replace(b"hi 2", b"hi 9"))
    at = original.index(b"hi 2") + 3
    assert _source_export(home, "k-1")[1].endswith(
        f"the file on disk: differs at byte offset {at}\n"
    )
    path.unlink()
    data, note = _source_export(home, "k-1")
    assert data == original and note.endswith("the file on disk: gone\n")


def test_export_source_needs_raw_and_a_whole_file(home):
    r = invoke("export", "s", "--format", "source", "--home", home)
    assert code(r) == 2 and "add --raw" in str(r.exception)
    r = invoke("export", "s", "--format", "source", "--raw", "--since-seq", "1", "--home", home)
    assert code(r) == 2 and "do not apply" in str(r.exception)


@pytest.mark.parametrize("change", ["same length", "longer", "fewer lines"])
def test_a_file_rewritten_in_place_is_described_as_it_is_now(tmp_path, change):
    """Fresh-user review: a line rewritten in place got no ``source_lines`` row (the old
    line's position stayed), so later offsets were stale and the file could not be rebuilt.
    After the re-read, the positions are the file's as it is now (the old lines' bytes stay
    kept: rows still point at them), and ``export --format source`` gives the file back."""
    row = (
        '{"type":"user","uuid":"u%d","sessionId":"k-2","cwd":"/a",'
        '"message":{"role":"user","content":"%s"}}\n'
    )
    lines = [row % (i, f"line {i}") for i in range(1, 6)]
    path = tmp_path / "k-2.jsonl"
    path.write_text("".join(lines))
    home = tmp_path / "ws"
    assert code(invoke("import", path, "--home", home)) == 0
    if change == "same length":
        lines[1] = row % (2, "LINE 2")
    elif change == "longer":
        lines[1] = row % (2, "line 2, now rather longer")
    else:
        lines = lines[:1] + lines[3:]
    path.write_text("".join(lines))
    assert code(invoke("import", path, "--home", home)) == 0
    data, note = _source_export(home, "k-2")
    assert data == path.read_bytes() and note.endswith("the file on disk: identical\n")
    with open_store(database_url(home)) as store:
        kept = list(store.raw_lines(str(path)))
    offsets = [sum(len(x) for x in lines[:i]) for i in range(len(lines))]
    assert [(r.line_no, r.byte_offset) for r in kept] == list(enumerate(offsets, 1))


def test_export_source_of_a_file_replaced_by_another_session_says_so(tmp_path):
    """Fresh-user review: when another session's file took the path, both sessions exported
    a mix of the two files, and the check blamed the file on disk. The session whose file was
    replaced is refused by name; the file now there exports whole."""
    from tests.paths import SHARED_DATA

    path = tmp_path / "same.jsonl"
    home = tmp_path / "ws"
    path.write_bytes((SHARED_DATA / "claude-code" / "short.jsonl").read_bytes())
    assert code(invoke("import", path, "--home", home)) == 0
    path.write_bytes((SHARED_DATA / "claude-code" / "tool_heavy.jsonl").read_bytes())
    assert code(invoke("import", path, "--home", home)) == 0
    keys = {s["session"] for s in json.loads(invoke("sessions", "--json", "--home", home).stdout)}
    assert len(keys) == 2
    old = "55604662-cf2a-4331-851a-ec234028f8ca"
    (new,) = keys - {old}
    r = invoke("export", old, "--format", "source", "--raw", "--home", home)
    assert code(r) == 1 and f"now holds session {new}" in str(r.exception)
    data, note = _source_export(home, new)
    assert data == path.read_bytes() and note.endswith("the file on disk: identical\n")


def test_export_never_overwrites_an_imported_session_file_nor_reads_a_fifo(tmp_path):
    """Fresh-user review: ``-o`` naming the session's own file replaced the harness's file
    (new inode, mode 0600); a FIFO put at the file's path made the check hang."""
    from tests.paths import SHARED_DATA

    path = tmp_path / "s.jsonl"
    original = (SHARED_DATA / "claude-code" / "short.jsonl").read_bytes()
    path.write_bytes(original)
    home = tmp_path / "ws"
    assert code(invoke("import", path, "--home", home)) == 0
    inode = path.stat().st_ino
    (tmp_path / "link.jsonl").symlink_to(path)
    for target in (path, tmp_path / "link.jsonl"):
        for fmt in ("source", "md"):
            r = invoke("export", "55604662", "--format", fmt, "--raw", "-o", target, "--home", home)
            assert code(r) == 2 and "imported session file" in str(r.exception)
    assert (path.stat().st_ino, path.read_bytes()) == (inode, original)
    path.unlink()
    os.mkfifo(path)
    data, note = _source_export(home, "55604662")
    assert data == original and note.endswith("the file on disk: not a regular file\n")


def test_one_line_messages_for_a_missing_file_and_a_project_with_a_newline(tmp_path):
    """Fresh-user review: ``import "missing<newline>file.jsonl"`` and ``show``'s header (a
    project holding a newline and a tab) split their line."""
    r = invoke("import", str(tmp_path / "miss\nx.jsonl"), "--home", tmp_path / "ws")
    assert code(r) == 2
    assert str(r.exception) == f"{tmp_path}/miss\\nx.jsonl: no such file or directory"
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"type":"user","uuid":"u1","sessionId":"k-3","cwd":"/a\\nb\\tc",'
        '"message":{"role":"user","content":"hi"}}\n'
    )
    assert code(invoke("import", path, "--home", tmp_path / "ws")) == 0
    r = invoke("show", "k-3", "--home", tmp_path / "ws")
    assert r.stdout.splitlines()[0] == "k-3 claude-code /a\\nb\\tc"


def test_a_hits_reopen_command_run_as_printed_opens_it_in_the_same_workspace(home):
    """Issue 45 item 2, the same kind in ``search``: with --home, the reopen command each hit
    prints carries it, so run as printed (another workspace in $CONTINUITY_HOME) it shows
    that row, not "no session matches"."""
    import shlex

    r = invoke("search", "alembic", "--harness", "codex", "-n", "1", "--home", home)
    [line] = [x.strip() for x in r.stdout.splitlines() if x.strip().startswith("continuity show")]
    command = line.split("   |   ")[0]
    assert command == f"continuity show cx-parser --seq 1 --home {home}"
    shown = invoke(*shlex.split(command)[1:])
    assert shown.exit_code == 0, shown.output
    assert "cx-parser" in shown.stdout


def test_export_md_and_html_show_the_conversation_unless_all(home):
    """Issue 44: md and html export the conversation (--conversation-only by default), --all
    every row; jsonl every row unless --conversation-only."""
    md = invoke("export", "cc-edit", "--home", home).stdout
    assert [line for line in md.splitlines() if line.startswith("## ")] == [
        "## #1 user · request · 2026-11-20T09:01:00Z",
        "## #3 assistant · 2026-11-20T09:03:00Z",
        "## #6 assistant · 2026-11-20T09:06:00Z",
    ]
    assert "queue\\-operation" not in md and "```diff" in md
    every = invoke("export", "cc-edit", "--all", "--home", home).stdout
    assert "_event queue\\-operation/enqueue, no content_" in every
    html = invoke("export", "cc-edit", "--format", "html", "--home", home).stdout
    assert "Showing the conversation" in html and 'id="row-0"' not in html
    assert (
        'id="row-0"'
        in invoke("export", "cc-edit", "--format", "html", "--all", "--home", home).stdout
    )
    seqs = [
        json.loads(x)["seq"]
        for x in invoke(
            "export", "cc-edit", "--format", "jsonl", "--home", home
        ).stdout.splitlines()
    ]
    assert seqs == [0, 1, 2, 3, 4, 5, 6]
    conv = invoke("export", "cc-edit", "--format", "jsonl", "--conversation-only", "--home", home)
    assert [json.loads(x)["seq"] for x in conv.stdout.splitlines()] == [1, 3, 4, 6]


def test_search_refuses_an_unknown_harness_as_sessions_does(home):
    """Fresh-user review of issue 42, defect 4: ``search QUERY --harness gemini`` printed "no
    row matches" and ended 1; an unknown name is a usage error (exit 2) naming the value and
    the known ones, as ``sessions --harness`` says it."""
    r = invoke("search", "alembic", "--harness", "gemini", "--home", home)
    assert code(r) == 2
    assert "'gemini' is not one of" in r.output and "'gemini-cli'" in r.output
    assert "no row matches" not in r.output
    r = invoke("search", "alembic", "--harness", "gemini-cli", "--home", home)
    assert code(r) == 1 and "no row matches" in r.output  # known, just no gemini-cli rows
