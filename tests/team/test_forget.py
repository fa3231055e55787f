"""``continuity forget`` (issue 41 item 2): a session forgotten by key or by a pattern of its
redacted text is deleted from the workspace, stays deleted through a re-import of its source
file (grown or not), and the next sync deletes the member's copy in the team store, which no
later sync brings back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from continuity.formats.importer import import_file
from continuity.store import SqlStore, open_store
from continuity.team.forget import forget, matching_sessions
from continuity.team.settings import TeamSettings
from continuity.team.sync import sync
from tests.cli.running import run_main
from tests.daemon.test_server_e2e import ClaudeCode
from tests.team.conftest import TeamDb, add_session, git_clone

APP = "git:github.com/acme/app"
SECRET = "sk-proj-Zq8mW3xR7tY2uV9pL4kN6bH1"


def _file_session(tmp_path: Path, key: str, cwd: Path, texts: list[str]) -> ClaudeCode:
    writer = ClaudeCode(tmp_path / "cc" / f"{key}.jsonl", key, str(cwd))
    for i, words in enumerate(texts):
        (writer.user if i % 2 == 0 else writer.assistant)(words)
    return writer


def _search(store: SqlStore, words: str) -> list[str]:
    from continuity.browse.search import search

    return sorted({h.session for h in search(store, words, limit=20, mode="words")})


def test_forget_by_key_deletes_and_a_reimport_never_restores(
    workspace: Any, tmp_path: Path
) -> None:
    _, store = workspace("ana")
    repo = git_clone(tmp_path / "app", "git@github.com:acme/app.git")
    gone = _file_session(tmp_path, "cc-gone", repo, ["the quokka migration", "done quokka"])
    kept = _file_session(tmp_path, "cc-kept", repo, ["the wombat migration", "done wombat"])
    for w in (gone, kept):
        assert import_file(store, w.path).status == "imported"
    assert _search(store, "quokka") == ["cc-gone"]
    done = forget(store, ["cc-gone"])
    assert done.sessions == ["cc-gone"] and done.deleted["entries"] == 2
    assert done.deleted["sessions"] == 1
    assert store.get_session("cc-gone") is None and store.is_forgotten("cc-gone")
    assert store.is_forgotten("cc-gone/agent-1") and not store.is_forgotten("cc-gone-2")
    assert _search(store, "quokka") == [] and _search(store, "wombat") == ["cc-kept"]
    again = import_file(store, gone.path)  # unchanged: nothing to do
    assert again.imported == 0 and store.get_session("cc-gone") is None
    gone.user("one more quokka question")  # the harness writes on: still never imported
    grown = import_file(store, gone.path)
    assert (grown.status, grown.imported) == ("skipped", 0)
    assert "forgotten" in (grown.reason or "")
    assert store.get_session("cc-gone") is None and _search(store, "quokka") == []
    assert store.get_session("cc-kept").entry_count == 2  # type: ignore[union-attr]


def test_forget_by_pattern_matches_what_show_shows(workspace: Any, tmp_path: Path) -> None:
    _, store = workspace("ana")
    add_session(store, "s-cust", tmp_path, ["the ACME-Customer-42 invoice is wrong", "ok"])
    add_session(store, "s-other", tmp_path, ["nothing about customers here"])
    add_session(store, "s-secret", tmp_path, [f"export OPENAI_API_KEY={SECRET}"])
    assert matching_sessions(store, "acme-customer-42") == ["s-cust"]
    # a secret is redacted in what show prints: its value is never a pattern's match
    assert matching_sessions(store, SECRET[:20]) == []
    assert matching_sessions(store, "[REDACTED:") == ["s-secret"]
    dry = forget(store, pattern="acme-customer-42", dry_run=True)
    assert dry.sessions == ["s-cust"] and store.get_session("s-cust") is not None
    done = forget(store, pattern="acme-customer-42")
    assert done.sessions == ["s-cust"] and store.get_session("s-cust") is None
    assert store.get_session("s-other") is not None
    from continuity.core.errors import InputError

    with pytest.raises(InputError, match="at least 3 characters"):
        forget(store, pattern="ab")


def test_sync_carries_the_tombstone_to_the_team_store(
    team_db: TeamDb, workspace: Any, tmp_path: Path
) -> None:
    _, store = workspace("ana")
    repo = git_clone(tmp_path / "ana" / "app", "git@github.com:acme/app.git")
    add_session(store, "s-keep", repo, ["keep this one"])
    add_session(store, "s-drop", repo, ["the customer list", "more of it"])
    add_session(store, "s-drop/agent-x", repo, ["a subagent of it"])
    settings = TeamSettings(
        url=team_db.url("ana"), name="core", author="Ana", machine="ana-laptop", shared=[APP]
    )
    assert sync(store, settings).sessions == 3
    done = forget(store, ["s-drop"])
    assert done.sessions == ["s-drop", "s-drop/agent-x"]
    report = sync(store, settings)
    assert report.forgotten == 2 and report.rows == 0
    keys = team_db.sql("SELECT DISTINCT session_key FROM continuity_team.entries")
    assert [r[0] for r in keys] == ["s-keep"]
    assert team_db.sql("SELECT session_key FROM continuity_team.sessions") == [("s-keep",)]
    assert "customer list" not in json.dumps(
        [list(r) for r in team_db.sql("SELECT row_json, body FROM continuity_team.entries")]
    )
    # a full re-sync (the shares changed: every session looked at) restores nothing
    settings2 = settings.model_copy(update={"shared": [APP, "git:github.com/acme/other"]})
    again = sync(store, settings2)
    assert (again.forgotten, again.rows) == (0, 0)
    assert team_db.sql("SELECT count(*) FROM continuity_team.sessions") == [(1,)]
    assert [r["session_key"] for r in store.team_index(None)] == ["s-keep"]


def test_cli_forget(isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    with open_store(f"sqlite:///{isolated_home / 'continuity.db'}") as store:
        add_session(store, "abc-123", isolated_home, ["the quokka plan"])
        add_session(store, "abd-456", isolated_home, ["the wombat plan"])
    code, _, err = run_main(monkeypatch, capsys, "forget")
    assert code == 2 and "--pattern" in err
    code, out, _ = run_main(monkeypatch, capsys, "forget", "--pattern", "QUOKKA", "--dry-run")
    assert code == 0 and out.split() == ["abc-123"]
    code, out, err = run_main(monkeypatch, capsys, "forget", "abc", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["sessions"] == ["abc-123"] and data["deleted"]["entries"] == 1
    code, _, err = run_main(monkeypatch, capsys, "forget", "abc-123")
    assert code == 0 and "forgotten before" in err
    code, _, err = run_main(monkeypatch, capsys, "forget", "zzz")
    assert code == 3
    code, out, _ = run_main(monkeypatch, capsys, "sessions", "--json")
    assert [s["session"] for s in json.loads(out)] == ["abd-456"]


def test_forget_takes_the_resumed_copies_of_a_session_with_it(
    workspace: Any, tmp_path: Path
) -> None:
    from continuity.core.model import Note
    from continuity.formats.resumed import copy_note
    from continuity.team.sync import copies_of

    _, store = workspace("ana")
    add_session(store, "orig", tmp_path, ["the quokka plan"])
    add_session(store, "cx-copy", tmp_path, ["the quokka plan, in Codex"])
    add_session(store, "pi-copy", tmp_path, ["the quokka plan, in pi"])
    add_session(store, "other", tmp_path, ["the wombat plan"])
    store.add_note(Note("cx-copy", copy_note({"session": "orig", "harness": "claude-code"})))
    store.add_note(  # a copy of the copy
        Note(
            "pi-copy",
            copy_note(
                {
                    "session": "cx-copy",
                    "harness": "codex",
                    "original": {"session": "orig", "harness": "claude-code"},
                }
            ),
        )
    )
    assert copies_of(store, ["orig"]) == sorted(
        ["cx-copy", "pi-copy"], key=lambda k: [s.key for s in store.list_sessions()].index(k)
    )
    assert copies_of(store, ["other"]) == []
    done = forget(store, ["orig"])
    assert sorted(done.sessions) == ["cx-copy", "orig", "pi-copy"]
    assert store.is_forgotten("cx-copy") and store.get_session("other") is not None


def test_reimporting_a_forgotten_file_is_no_error(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    gone = _file_session(tmp_path, "cc-gone", tmp_path, ["the quokka plan", "done"])
    assert run_main(monkeypatch, capsys, "import", gone.path)[0] == 0
    assert run_main(monkeypatch, capsys, "forget", "cc-gone")[0] == 0
    gone.user("one more quokka question")  # the harness writes on
    code, _, err = run_main(monkeypatch, capsys, "import", gone.path)
    assert code == 0, err
    assert f"skipped {gone.path}: forgotten" in " ".join(err.split())
    assert "error" not in err
    code, out, _ = run_main(monkeypatch, capsys, "import", gone.path, "--json")
    assert code == 0 and json.loads(out)["files"][0]["forgotten"] is True
    # a file that is no session file beside it still makes the import an error
    junk = tmp_path / "notes.jsonl"
    junk.write_text('{"hello": 1}\n', encoding="utf-8")
    assert run_main(monkeypatch, capsys, "import", gone.path, junk)[0] == 2
