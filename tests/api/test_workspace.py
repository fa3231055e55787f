"""``continuity.Workspace`` (issue 46 item 1): each method's ``to_dict()`` is what the matching
command's ``--json`` prints on the same workspace, real values from ``examples/sessions``, the
documented errors, a cheap ``import continuity``, and the README's one-line snippet."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import continuity
from continuity.api.results import Continuation, SessionRecord
from tests.cli.running import run_main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "sessions"
CODEX = "01a23556-7fab-7dd1-86d3-d100eb5ab801"  # the compacted Codex sample
#: What ``continue 01a23556`` shows as the previous request (examples/sessions/codex).
CODEX_REQUEST = "Turn before compaction"


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Any:
    home = tmp_path_factory.mktemp("api") / "w"
    with continuity.Workspace.open(home) as opened:
        opened.import_([EXAMPLES], embed=False)
        yield opened


def cli_json(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    ws: Any,
    *args: object,
    code: int = 0,
) -> Any:
    """The ``--json`` output of ``continuity ARGS --json`` on ``ws``'s workspace, named by
    ``CONTINUITY_HOME`` (no ``--home``: the reopen commands a search prints stay bare)."""
    monkeypatch.setenv("CONTINUITY_HOME", str(ws.home))
    got, out, err = run_main(monkeypatch, capsys, *args, "--json")
    assert got == code, err
    return json.loads(out)


def test_import_reports_what_the_cli_reports(tmp_path: Path, monkeypatch, capsys) -> None:
    with continuity.Workspace.open(tmp_path / "lib") as lib:
        done = lib.import_([str(EXAMPLES)], embed=False)
    assert done.totals.sessions == 4 and done.totals.files == 4
    assert done.exit_code == 0 and done.totals.errors == 0
    assert CODEX in done.sessions
    assert {f.harness for f in done.files} == {"claude-code", "codex", "pi"}
    monkeypatch.setenv("CONTINUITY_HOME", str(tmp_path / "cli"))
    code, out, err = run_main(monkeypatch, capsys, "import", EXAMPLES, "--no-embed", "--json")
    assert code == 0, err
    assert done.to_dict() == json.loads(out)
    again = continuity.Workspace.open(tmp_path / "lib").import_([EXAMPLES], embed=False)
    assert again.totals.imported == 0 and {f.status for f in again.files} == {"unchanged"}


def test_open_makes_a_private_workspace(tmp_path: Path) -> None:
    home = tmp_path / "new" / "w"
    continuity.Workspace.open(home).close()
    assert home.stat().st_mode & 0o777 == 0o700
    assert (home / "continuity.db").stat().st_mode & 0o777 == 0o600


def test_open_takes_a_database_url(tmp_path: Path, ws) -> None:
    url = f"sqlite:///{ws.home / 'continuity.db'}"
    with continuity.Workspace.open(url) as other:
        assert other.url == url
        assert len(other.sessions(0)) == 4


def test_open_without_a_target_is_the_cli_default_workspace(ws, monkeypatch) -> None:
    monkeypatch.setenv("CONTINUITY_HOME", str(ws.home))
    monkeypatch.delenv("CONTINUITY_DATABASE_URL", raising=False)
    with continuity.Workspace.open() as default:
        assert default.home == ws.home
        assert {s.session for s in default.sessions()} == {s.session for s in ws.sessions()}
    (ws.home.parent / "a-file").write_text("x")
    with pytest.raises(continuity.ConfigError, match="is a file"):
        continuity.Workspace.open(ws.home.parent / "a-file")


def test_sessions_match_the_cli(ws, monkeypatch, capsys) -> None:
    found = ws.sessions()
    assert len(found) == 4 and all(isinstance(s, SessionRecord) for s in found)
    assert {s.harness for s in found} == {"claude-code", "codex", "pi"}
    assert [s.to_dict() for s in found] == cli_json(monkeypatch, capsys, ws, "sessions")
    pis = ws.sessions(harness="pi")
    assert [s.session[:8] for s in pis] == ["01a2354d"]
    assert ws.sessions(1)[0].session == found[0].session


def test_show_matches_the_cli_and_redacts(ws, monkeypatch, capsys) -> None:
    rows = ws.show("01a23556")
    assert rows.session == CODEX and rows.redacted is True
    assert any(e["seq"] == 13 for e in rows.entries)
    assert rows.to_dict() == cli_json(monkeypatch, capsys, ws, "show", "01a23556")
    assert ws.show("01a23556", raw=True).to_dict() == cli_json(
        monkeypatch, capsys, ws, "show", "01a23556", "--raw"
    )
    assert next(e["seq"] for e in ws.show("01a23556", seq=13).entries) == 8


def test_search_matches_the_cli(ws, monkeypatch, capsys) -> None:
    hits = ws.search("compaction", limit=5, mode="words")
    assert hits and hits[0].session == CODEX
    assert hits[0].show_command.startswith(f"continuity show {CODEX} --seq ")
    monkeypatch.setenv("CONTINUITY_HOME", str(ws.home))
    code, out, _ = run_main(
        monkeypatch, capsys, "search", "compaction", "-n", "5", "--mode", "words", "--json"
    )
    assert code == 0
    assert [h.to_dict() for h in hits] == [json.loads(line) for line in out.splitlines()]
    assert ws.search("zzzqqq", mode="words") == []


def test_continuation_matches_the_cli(ws, monkeypatch, capsys) -> None:
    view = ws.continuation("01a23556")
    assert isinstance(view, Continuation)
    assert view.request is not None and view.request.text == CODEX_REQUEST
    assert view.summary is not None and view.summary.covers_through_seq >= 0
    assert view.refusal is None and view.used_bytes <= view.budget_bytes == 240_000
    assert view.to_dict() == cli_json(monkeypatch, capsys, ws, "continue", "01a23556")
    assert Continuation.from_dict(view.to_dict()) == view


def test_a_refused_continuation_is_a_value_not_an_error(ws, monkeypatch, capsys) -> None:
    view = ws.continuation("01a23556", budget_bytes=10)
    assert view.refusal is not None
    assert view.refusal.reason == "protected_context_over_budget"
    assert view.request is None and view.messages == ()
    assert view.to_dict() == cli_json(
        monkeypatch, capsys, ws, "continue", "01a23556", "--budget", "10", code=5
    )


def test_a_key_names_one_session_as_on_the_command_line(ws) -> None:
    with pytest.raises(continuity.SessionNotFound):
        ws.continuation("no-such-session")
    with pytest.raises(continuity.AmbiguousSession) as caught:
        ws.show("01a235")  # 01a23556 (codex) and 01a2354d (pi)
    assert len(caught.value.candidates) == 2
    with pytest.raises(continuity.InputError, match="mode"):
        ws.search("x", mode="fuzzy")
    with pytest.raises(continuity.InputError, match="since"):
        ws.sessions(since="last tuesday")


def test_checkpoints_match_the_cli(ws, monkeypatch, capsys) -> None:
    made = ws.checkpoint("01a2354d", reason="before the API test")
    assert made.trigger == "explicit" and "before the API test" in made.digest
    listed = ws.checkpoints("01a2354d")
    assert listed.checkpoints[-1] == made and listed.count == len(listed.checkpoints)
    assert listed.to_dict() == cli_json(monkeypatch, capsys, ws, "checkpoints", "01a2354d")
    assert ws.checkpoints("01a2354d", limit=1).checkpoints == (made,)
    with pytest.raises(continuity.InputError, match="reason"):
        ws.checkpoint("01a2354d", reason="  ")


def test_over_wraps_an_open_store_and_leaves_it_open(ws, monkeypatch) -> None:
    """``Workspace.over`` (the daemon's one shared store): the answers of the workspace that
    opened the store; leaving the block never closes the store, and the closed wrapper
    refuses to open another."""
    store = ws.store()
    closed: list[bool] = []
    monkeypatch.setattr(store, "close", lambda: closed.append(True))
    with continuity.Workspace.over(store, ws.home) as lib:
        assert (lib.url, lib.home) == (ws.url, ws.home)
        assert lib.continuation("01a23556") == ws.continuation("01a23556")
        assert lib.checkpoints("01a2354d") == ws.checkpoints("01a2354d")
    assert closed == [] and ws.store() is store
    with pytest.raises(continuity.StoreError, match="closed"):
        lib.store()
    continuity.Workspace.over(store, ws.home).close()
    assert closed == []


def test_search_near_boosts_the_askers_folder(ws) -> None:
    """``near`` (the MCP server's folder, not the process's): rows of that project score
    higher than the same rows asked from elsewhere."""
    folder = next(s.project for s in ws.sessions(0) if s.session == CODEX)
    assert folder
    near = {(h.session, h.seq): h.score for h in ws.search("compaction", mode="words", near=folder)}
    far = {
        (h.session, h.seq): h.score
        for h in ws.search("compaction", mode="words", near="/nowhere/else")
    }
    codex = [k for k in near if k[0] == CODEX and k in far]
    assert codex and all(near[k] > far[k] for k in codex)


def test_remember_and_recall_match_the_cli(ws, monkeypatch, capsys) -> None:
    done = ws.remember(
        "The export job stamps UTC with a Z suffix", type="decision", tags=["export"]
    )
    assert done.deduped is False and done.type == "decision"
    assert ws.remember("The export job stamps UTC with a Z suffix").deduped is True
    found = ws.recall("export UTC")
    assert [r.id for r in found.results] == [done.id]
    assert found.to_dict() == cli_json(monkeypatch, capsys, ws, "recall", "export UTC")
    with pytest.raises(continuity.InputError):
        ws.remember("the")


def test_compact_and_resume(ws, tmp_path: Path, monkeypatch, capsys) -> None:
    done = ws.compact("01a2354d", budget_bytes=1_000, summarizer="extractive")
    assert done.status == "compacted" and done.checkpoint is not None
    assert done.view_bytes == 1_911 and done.view_bytes_after is not None
    assert done.view_bytes_after <= 1_000
    again = ws.compact("01a2354d", budget_bytes=1_000, summarizer="extractive")
    assert (again.status, again.reason) == ("not_needed", "already_compacted_this_turn")
    refused = ws.compact("3185d1ef", budget_bytes=300, summarizer="extractive")
    assert refused.status == "refused" and refused.receipt is not None
    assert refused.receipt.reason == "over_bound" and refused.checkpoint is None
    assert type(refused).from_dict(refused.to_dict()) == refused


def test_resume_matches_the_cli(tmp_path: Path, monkeypatch, capsys) -> None:
    from tests.resume.test_resume import _workspace

    home, project = _workspace(tmp_path)  # session abc-123 of the folder proj, which exists
    target = tmp_path / "pi-home"
    with continuity.Workspace.open(home) as ws:
        written = cli_json(
            monkeypatch, capsys, ws, "resume", "abc", "--in", "pi", "--target-home", target
        )
        same = ws.resume("abc", into="pi", target_home=target)
        assert same.reused is True and Path(same.path).is_file()
        assert same.cwd == str(project) and same.command[0] == "pi"
        assert {**same.to_dict(), "reused": False} == written
        with pytest.raises(continuity.InputError, match="unknown harness"):
            ws.resume("abc", into="emacs")
    with continuity.Workspace.open(tmp_path / "ex") as examples:  # /home/dev/... is not here
        examples.import_([EXAMPLES], embed=False)
        with pytest.raises(continuity.InputError, match="does not exist here"):
            examples.resume("01a23556", into="pi", target_home=target)


def test_brief_matches_the_cli(ws, monkeypatch, capsys) -> None:
    from continuity.daemon.hooks.live import harness_reach

    project = "/home/dev/projects/export-demo"
    got = ws.brief(project, window="any", reach=harness_reach(str(ws.home), None))
    assert [s.key[:8] for s in got.sessions] == ["a152301b"]
    assert "The nightly export stamps local time" in got.text
    shown = cli_json(monkeypatch, capsys, ws, "brief", "--project", project, "--window", "any")
    mine = got.to_dict()
    assert mine.pop("now") and shown.pop("now")
    assert mine == shown
    assert len(ws.brief(project, window="any", budget_chars=300).text) <= 300
    with pytest.raises(continuity.InputError, match="budget_chars"):
        ws.brief(project, budget_chars=50)


def test_usage_matches_the_cli(ws, monkeypatch, capsys) -> None:
    """issue 44 item 1: the same report as ``usage --json``, by day and by harness."""
    got = ws.usage(by="harness")
    assert isinstance(got, continuity.UsageReport)
    # examples/sessions: the Claude Code one prices (claude-opus-5-5), the fake models do not
    assert [(r.key, r.messages, r.input_tokens, r.unpriced_models) for r in got.rows] == [
        ("claude-code", 11, 1000, ()),
        ("pi", 6, 300, ("fake-model",)),
        ("codex", 3, 150, ("gpt-fake",)),
    ]
    assert got.to_dict() == cli_json(monkeypatch, capsys, ws, "usage", "--by", "harness")
    assert ws.usage().to_dict() == cli_json(monkeypatch, capsys, ws, "usage")
    assert ws.usage(since="2999-01-01").rows == ()


def test_usage_messages_read_once_and_summed_per_chart(ws) -> None:
    """The browser's usage page: the messages once, then per day and model, per project."""
    from continuity.usage import breakdown, group

    messages = ws.usage_messages()
    assert all(isinstance(m, continuity.MessageUsage) for m in messages)
    assert len(messages) == 11 + 6 + 3
    days = breakdown(messages, "day", "model")
    by_day = ws.usage(by="day")
    assert list(days) == [r.key for r in by_day.rows]
    for row in by_day.rows:
        assert sum(r.input_tokens for r in days[row.key]) == row.input_tokens
    projects = group(messages, "project")
    assert sum(r.messages for r in projects) == 20
    assert ws.usage_messages(harness="langgraph") == []


def test_every_name_in_all_resolves() -> None:
    for name in continuity.__all__:
        assert getattr(continuity, name) is not None, name
    assert issubclass(continuity.SessionNotFound, continuity.ContinuityError)
    assert continuity.Workspace.__module__ == "continuity.api.workspace"


def test_import_continuity_loads_no_database_library() -> None:
    """``import continuity`` (and ``continuity.cli``, the hook's path) stays cheap: PEP 562."""
    code = (
        "import sys, continuity, continuity.cli\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sqlalchemy', "
        "'pydantic', 'typer', 'rich') or m.startswith('continuity.api.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    timed = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import continuity"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "continuity" in timed.stderr and "sqlalchemy" not in timed.stderr


def test_the_readme_snippet_prints_the_request(tmp_path: Path) -> None:
    """README, "As a library": the issue's bar, run as the README shows it (from a project
    root holding examples/; ``w`` is made there)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(x for x in readme.splitlines() if x.startswith(".venv/bin/python -c"))
    code = line.split(" -c ", 1)[1].strip().strip('"')
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == CODEX_REQUEST + "\n"
    assert (tmp_path / "w" / "continuity.db").is_file()


# ---------------------------------------------------------------------- bad input (a fresh-user
# review of the library): each a clear continuity error naming the argument, nothing written


def test_one_path_or_tag_given_as_a_str_is_one_item(tmp_path: Path) -> None:
    """A str is a sequence of characters: ``import_("/tmp/x")`` imported ``/``, ``t``, ``m``
    ... (the whole file system) and ``tags="deploy"`` stored six one-letter tags."""
    with continuity.Workspace.open(tmp_path / "w") as lib:
        one = lib.import_(str(EXAMPLES / "pi"), embed=False)
        assert (one.totals.files, one.totals.sessions) == (1, 1)
        saved = lib.remember("We deploy with the blue-green script", tags="deploy")
        found = lib.recall("blue-green").to_dict()["results"]
        assert [m["tags"] for m in found if m["id"] == saved.id] == [["deploy"]]
        with pytest.raises(continuity.InputError, match="paths: give a list of them, not int"):
            lib.import_(5, embed=False)  # type: ignore[arg-type]


@pytest.mark.parametrize("budget", [0, -5, True, 1.5, 2**70])
def test_a_budget_outside_the_cli_range_is_refused_by_every_method(ws: Any, budget: Any) -> None:
    for call in (
        lambda: ws.continuation("01a23556", budget_bytes=budget),
        lambda: ws.compact("01a23556", budget_bytes=budget),
        lambda: ws.resume("01a23556", into="pi", budget_bytes=budget),
    ):
        with pytest.raises(continuity.InputError, match=r"^budget_bytes: must be"):
            call()


def test_counts_and_harness_are_checked(ws: Any) -> None:
    with pytest.raises(continuity.InputError, match=r"^limit: must be an integer, 0 or more"):
        ws.checkpoints("01a23556", limit=-1)
    with pytest.raises(continuity.InputError, match=r"^limit: must be an integer, 0 or more"):
        ws.sessions(-1)
    with pytest.raises(continuity.InputError, match=r"^harness: 'vim' is not one of claude-code"):
        ws.sessions(harness="vim")
    assert [s.harness for s in ws.sessions(harness="pi")] == ["pi"]
    with pytest.raises(continuity.InputError, match=r"^target_home: empty"):
        ws.resume("01a23556", into="pi", target_home="")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("postgresql+psycopg://", r"names no database"),
        ("sqlite://", r"an in-memory database keeps nothing"),
        ("sqlite:///:memory:", r"an in-memory database keeps nothing"),
        (5, r"^target: a workspace folder or a database URL, not int"),
    ],
)
def test_open_refuses_a_target_that_cannot_be_a_workspace(target: Any, message: str) -> None:
    with pytest.raises(continuity.InputError, match=message):
        continuity.Workspace.open(target)


def test_read_only_open_of_an_absent_folder_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(continuity.InputError, match=r"no workspace there \(read_only"):
        continuity.Workspace.open(tmp_path / "absent", read_only=True)
    assert not (tmp_path / "absent").exists()


def test_a_closed_workspace_is_not_silently_reopened(tmp_path: Path) -> None:
    with continuity.Workspace.open(tmp_path / "w") as lib:
        assert lib.sessions() == []
    with pytest.raises(continuity.StoreError, match="this Workspace was closed"):
        lib.sessions()
