"""Issue 45 item 6: nothing stored reaches a terminal raw. Every C0 control but tab and newline,
DEL, every C1 control and the bidi embeddings, overrides and isolates (U+202A-U+202E,
U+2066-U+2069) are put in a session's prompts, tool output, compaction summary, transcript,
title, project and a memory; every text output of the CLI shows each as a visible escape, and
every ``--json`` output carries each JSON-escaped (the value intact once parsed, no raw byte
of it on stdout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.core.config import database_url
from continuity.core.model import Session
from continuity.store import open_store
from tests.builders import CP, A, T, U, call, load
from tests.cli.running import run_main
from tests.daemon.test_mcp import daemon_down  # noqa: F401 - fixture

runner = CliRunner()
KEY = "sess-hostile-terminal"

#: what must never reach a terminal raw (tab and newline are layout, and kept)
CONTROLS = [chr(c) for c in [*range(0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)]]
BIDI = [chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]]
HOSTILE = "".join(CONTROLS + BIDI)
#: a recognisable text carrying all of them (the words are searchable)
PAYLOAD = f"zebracrossing alpha{HOSTILE}omega \x1b[31mred\x1b[0m \u202eexe.txt\u202c"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    from continuity.transcripts.session_transcripts import put_transcript

    path = tmp_path / "ws"
    project = tmp_path / "proj"
    project.mkdir()
    with open_store(database_url(path)) as store:
        load(
            store,
            [
                U(f"please run it: {PAYLOAD}"),
                A(call("c1", "Bash", command=f"echo {PAYLOAD}"), text=f"running {PAYLOAD}"),
                T("c1", text=f"output {PAYLOAD}"),
                CP(f"Summary: {PAYLOAD}"),
                U(f"again {PAYLOAD}"),
                A(text=f"done {PAYLOAD}"),
            ],
            key=KEY,
        )
        found = store.get_session(KEY)
        store.upsert_session(
            Session(
                key=KEY,
                harness="test",
                project=str(project),
                title=f"title {PAYLOAD}",
                started_at=found.started_at,
                ended_at=found.ended_at,
            )
        )
        put_transcript(
            store,
            KEY,
            f"User: {PAYLOAD}\n\nTool call: Bash\n\nTool result: {PAYLOAD}\n\nAssistant: {PAYLOAD}",
        )
    r = runner.invoke(app, ["remember", f"zebracrossing memory {PAYLOAD}", "--home", str(path)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(
        app, ["checkpoint", KEY, "--reason", f"before the deploy {PAYLOAD}", "--home", str(path)]
    )
    assert r.exit_code == 0, r.output
    return path


def invoke(*args: object):
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def _project(home: Path) -> str:
    return str(home.parent / "proj")


TEXT_OUTPUTS = [
    ["show", KEY],
    ["show", KEY, "--all"],
    ["show", KEY, "--seq", "2"],
    ["transcript", KEY],
    ["transcript", KEY, "--sanitized"],
    ["transcript", KEY, "--raw"],
    ["export", KEY],
    ["search", "zebracrossing"],
    ["recall", "zebracrossing"],
    ["sessions"],
    ["continue", KEY],
    ["checkpoints", KEY],
    ["recover", KEY],
    ["brief", "--project", "{project}"],
    ["lineage", KEY],
]
JSON_OUTPUTS = [
    ["show", KEY, "--json"],
    ["show", KEY, "--all", "--json"],
    ["transcript", KEY, "--json"],
    ["transcript", KEY, "--sanitized", "--json"],
    ["export", KEY, "--format", "jsonl"],
    ["search", "zebracrossing", "--json"],
    ["recall", "zebracrossing", "--json"],
    ["sessions", "--json"],
    ["continue", KEY, "--json"],
    ["checkpoints", KEY, "--json"],
    ["recover", KEY, "--json"],
    ["brief", "--project", "{project}", "--json"],
]


def _name(argv: list[str]) -> str:
    return " ".join(a for a in argv if a != KEY)


def _run(home: Path, argv: list[str]):
    argv = [a.replace("{project}", _project(home)) for a in argv]
    r = invoke(*argv, "--home", home)
    assert r.exit_code == 0, (argv, r.output)
    return r


def _raw_ones(text: str) -> list[str]:
    return sorted({f"U+{ord(c):04X}" for c in text if c in HOSTILE})


@pytest.mark.parametrize("argv", TEXT_OUTPUTS, ids=_name)
def test_text_outputs_escape_every_control_and_bidi_character(home, argv):
    """No C0 (but tab, newline), DEL, C1 or bidi control reaches stdout or stderr raw, and the
    text around them is still there."""
    r = _run(home, argv)
    assert _raw_ones(r.stdout) == [] and _raw_ones(r.stderr) == []
    if argv[0] not in ("sessions", "lineage", "checkpoints", "recover", "brief"):
        assert "omega" in r.stdout or "zebracrossing" in r.stdout


@pytest.mark.parametrize("argv", JSON_OUTPUTS, ids=_name)
def test_json_outputs_escape_them_and_keep_the_value(home, argv):
    """``--json`` (and JSON Lines) never writes them raw: each is a ``\\uXXXX`` escape, so the
    parsed value still holds it (the exact stored text, redaction aside)."""
    r = _run(home, argv)
    assert _raw_ones(r.stdout) == []
    lines = r.stdout.splitlines() if argv[0] in ("export", "search") else [r.stdout]
    values = [json.loads(line) for line in lines if line.strip()]
    assert values
    if argv[0] in ("show", "transcript", "export", "search", "continue"):
        assert "\u202e" in json.dumps(values, ensure_ascii=False)


def test_mcp_tools_hand_an_agent_no_raw_control(home, daemon_down):
    """What the MCP tools return is shown by the agent's harness in a terminal: search
    snippets and shown rows carry no raw control or bidi character. (The continuation is the
    next run's input, the stored text redacted, not a display: it is left exact.)"""
    from continuity.daemon.mcp_server import ContinuityTools

    tools = ContinuityTools(home=home)
    for name, kwargs in (
        ("search", {"query": "zebracrossing"}),
        ("show", {"session": KEY, "seq": 2}),
    ):
        result = json.dumps(getattr(tools, name)(**kwargs), ensure_ascii=False)
        assert "omega" in result, name
        assert _raw_ones(result) == [], name


def test_mcp_show_and_search_escape_the_project_and_keep_ansi_visible(home, daemon_down):
    """Fresh-user review: MCP ``show`` removed ANSI sequences entirely (the text changed, not
    shown) and handed the session's project (holding U+202E) raw. Both follow the README's
    one rule: ``\\x1b[31mred``, ``\\u202e``."""
    from continuity.daemon.mcp_server import ContinuityTools

    evil = str(home.parent / EVIL)
    with open_store(database_url(home)) as store:
        found = store.get_session(KEY)
        store.upsert_session(
            Session(
                key=KEY,
                harness="test",
                project=evil,
                title=found.title,
                started_at=found.started_at,
                ended_at=found.ended_at,
            )
        )
    tools = ContinuityTools(home=home)
    shown = json.dumps(tools.show(session=KEY, seq=2), ensure_ascii=False)
    assert _raw_ones(shown) == [] and "\\\\x1b[31mred" in shown, shown[:800]
    assert "w\\\\x1b[31m\\\\u202ex" in shown
    hits = json.dumps(tools.search(query="zebracrossing"), ensure_ascii=False)
    assert _raw_ones(hits) == [] and "w\\\\x1b[31m\\\\u202ex" in hits


def test_browser_pages_show_no_raw_control(home):
    """The browser's pages (the list, a session, a search) print the title, project and texts
    with every control and bidi character escaped (autoescape stops HTML, not U+202E)."""
    from datetime import timedelta

    from fastapi.testclient import TestClient

    from continuity.checkpoints.capture import CheckpointConfig
    from continuity.daemon.hooks.live import LiveCapture
    from continuity.daemon.server import create_app

    with open_store(database_url(home)) as store:
        live = LiveCapture(
            store,
            home=home,
            config=CheckpointConfig(),
            budget_bytes=240_000,
            stop_seconds=10,
            idle_limit=timedelta(hours=4),
            tick_seconds=0.05,
        )
        with TestClient(create_app(live), base_url="http://127.0.0.1") as client:
            for url in ("/", f"/session?key={KEY}", "/search?q=zebracrossing"):
                r = client.get(url)
                # the list shows the title cut at 80 characters (issue 44), before "omega"
                seen = "title zebracrossing alpha" if url == "/" else "omega"
                assert r.status_code == 200 and seen in r.text, url
                assert _raw_ones(r.text) == [], url


# ------------------------------------------------------------ errors and paths the CLI prints
#: a folder name carrying ESC (an ANSI colour) and U+202E (right-to-left override)
EVIL = "w\x1b[31m\u202ex"


@pytest.mark.parametrize("argv", [["where"], ["doctor"], ["memory", "render"]], ids=" ".join)
def test_a_workspace_path_is_printed_escaped(monkeypatch, capsys, tmp_path, argv):
    """Fresh-user review: `where`, `doctor` and `memory render` printed a --home holding ESC
    and U+202E raw. Every path the CLI prints is shown escaped, as the README says."""
    ws = tmp_path / EVIL
    ws.mkdir()
    _code, out, err = run_main(monkeypatch, capsys, "--home", ws, *argv)
    assert _raw_ones(out) == [] and _raw_ones(err) == [], (out, err)
    assert "w\\x1b[31m\\u202ex" in out + err


@pytest.mark.parametrize(
    "argv",
    [
        ["memory", "render", "--project", f"/no{EVIL}"],
        ["search", "foo", f"--bogus{EVIL}"],
        ["show", f"nokey{EVIL}"],
    ],
    ids=lambda a: a[0],
)
def test_an_error_line_is_printed_escaped(monkeypatch, capsys, tmp_path, argv):
    """An error naming what the user typed (a path, an option, a key) shows its control and
    bidi characters escaped: usage errors (Click's) and the CLI's own errors alike."""
    (tmp_path / "ws").mkdir()  # show only reads: without a workspace it says that first
    code, out, err = run_main(monkeypatch, capsys, *argv, "--home", tmp_path / "ws")
    assert code != 0
    assert _raw_ones(out) == [] and _raw_ones(err) == [], err
    assert "\\x1b[31m\\u202e" in err, err


def test_resume_error_naming_a_project_folder_is_escaped(monkeypatch, capsys, tmp_path):
    """`resume KEY --in codex` of a session whose project folder (holding ESC and U+202E) is
    gone: the error names the folder escaped."""
    home = tmp_path / "ws"
    with open_store(database_url(home)) as store:
        store.upsert_session(Session("33333333-aaaa", "claude-code", project=str(tmp_path / EVIL)))
    code, _out, err = run_main(
        monkeypatch, capsys, "resume", "33333333", "--in", "codex", "--home", home
    )
    assert code != 0 and "does not exist" in err, err
    assert _raw_ones(err) == [] and "\\x1b[31m\\u202ex" in err, err


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "zebracrossing"],
        ["checkpoints", KEY],
        ["brief", "--project", "{project}"],
        ["export", KEY, "--format", "md"],
    ],
    ids=_name,
)
def test_text_outputs_use_the_one_escape_rule(home, argv):
    """The README's one rule, everywhere: ESC as ``\\x1b``, CR as ``\\r``, U+202E as
    ``\\u202e``, C1 CSI as ``\\x9b``. Fresh-user review: search showed control pictures
    (``␛``) and U+FFFD for U+202E and C1; checkpoints and brief turned CR into a space;
    export's Markdown title dropped ``\\x1b[31m``."""
    r = _run(home, argv)
    text = r.stdout
    for escape in ("\\x1b[31mred", "\\u202eexe.txt", "\\r", "\\x9b"):
        assert escape in text, (escape, text[:2000])
    # (NUL alone is stored as U+FFFD, a storage rule: PostgreSQL text holds no NUL)
    assert not {"\u241b", "\u2407"} & set(text)
    assert text.count("\ufffd") <= text.count("alpha")
