"""Session titles (issue 44): the harness's own, else the first request cut on a word, redacted
by the session-wide rule, the same in ``Workspace.sessions``, the browser's list and search."""

from __future__ import annotations

from dataclasses import replace

from continuity.api.workspace import Workspace
from continuity.browse.titles import cut_on_word, session_title, session_titles
from continuity.browse.view import by_project, list_view, session_view
from continuity.core.model import Session
from continuity.formats.importer import import_paths
from continuity.redaction.funnel import redact
from tests.builders import A, U, call, load
from tests.paths import SHARED_DATA

PASSWORD = "Tr0ub4dor-and-3-horses"


def test_cut_on_word():
    assert cut_on_word("fix  the\nparser") == "fix the parser"
    text = "word " * 30
    assert cut_on_word(text, 22) == "word word word word…"
    assert cut_on_word("x" * 100, 10) == "x" * 9 + "…"
    assert len(cut_on_word("a " * 200)) <= 80


def test_first_request_of_real_samples(sqlite_store):
    import_paths(
        sqlite_store,
        [
            SHARED_DATA / "claude-code" / "short.jsonl",
            SHARED_DATA / "claude-code" / "subagent.jsonl",
        ],
    )
    by_key = {s.key: s for s in sqlite_store.list_sessions()}
    short = by_key["55604662-cf2a-4331-851a-ec234028f8ca"]
    assert short.title is None  # Claude Code wrote no title line in this file
    assert session_title(sqlite_store, short) == "mix phx.server doesnt seem to start"
    sub = by_key["491e126e-1e71-469c-ade2-fcc8af567c74"]
    assert session_title(sqlite_store, sub) == (
        "/example:create-beads websearch to learn how to fastest setup credo, dialyzer…"
    )


def test_a_secret_found_in_any_row_is_redacted_in_the_title(sqlite_store, isolated_home):
    load(
        sqlite_store,
        [
            U(f"deploy with the password {PASSWORD} please"),
            A(call("c1", "Bash", env=[{"name": "DB_PASSWORD", "value": PASSWORD}])),
        ],
        key="s1",
    )
    load(sqlite_store, [U("a session without a title")], key="s2")
    own = Session(key="s1", harness="test", project="/p", title=f"rotate {PASSWORD} today")
    sqlite_store.upsert_session(replace(sqlite_store.get_session("s1"), title=own.title))
    s1 = sqlite_store.get_session("s1")
    # the text rule alone does not see a bare password; the session's Bash env names it
    assert redact(own.title or "") == own.title
    assert session_title(sqlite_store, s1) == "rotate [REDACTED:password] today"
    assert session_title(sqlite_store, s1, raw=True) == f"rotate {PASSWORD} today"
    sqlite_store.upsert_session(replace(s1, title=None))
    s1 = sqlite_store.get_session("s1")
    assert session_title(sqlite_store, s1) == "deploy with the password [REDACTED:password] please"
    titles = session_titles(sqlite_store, sqlite_store.list_sessions())
    assert titles == {
        "s1": "deploy with the password [REDACTED:password] please",
        "s2": "a session without a title",
    }
    # one rule everywhere: the API, the browser's list and its session page
    with Workspace.over(sqlite_store, isolated_home) as ws:
        assert {r.session: r.title for r in ws.sessions()} == titles
    listed, _more = list_view(sqlite_store)
    assert {s.key: s.title for s in listed} == titles
    assert session_view(sqlite_store, "s1", continuation=False).session.title == titles["s1"]


def test_sessions_grouped_by_project_newest_group_first():
    a1, b1, a2 = (
        Session(key=k, harness="test", project=p)
        for k, p in (("a1", "/a"), ("b1", "/b"), ("a2", "/a"))
    )
    none = Session(key="n", harness="test", project=None)
    groups = by_project([a1, b1, a2, none])
    assert [(p, [s.key for s in ss]) for p, ss in groups] == [
        ("/a", ["a1", "a2"]),
        ("/b", ["b1"]),
        (None, ["n"]),
    ]


def test_secrets_in_text_equals_the_full_scan_restricted_to_the_text(sqlite_store):
    """``secrets_in_text`` (the title's cheaper scan) finds what ``session_secrets`` finds,
    restricted to the text, whether or not the session is in the full scan's cache."""
    from continuity.redaction import session as scope
    from tests.browser.corpus import SECRET

    load(
        sqlite_store,
        [
            U(f"use {SECRET} here"),
            A(call("c1", "Bash", env=[{"name": "DB_PASSWORD", "value": PASSWORD}])),
            U("nothing secret in this one"),
        ],
        key="s3",
    )
    text = f"rotate {PASSWORD} and {SECRET} today"
    scope._cache.clear()
    cheap = scope.secrets_in_text(sqlite_store, "s3", text)
    full = scope.session_secrets(sqlite_store, "s3")
    assert cheap == {v: k for v, k in full.items() if v in text}
    assert set(cheap) == {PASSWORD, SECRET}
    assert scope.secrets_in_text(sqlite_store, "s3", text) == cheap  # from the cache now
    assert scope.secrets_in_text(sqlite_store, "s3", "no secret at all") == {}


def test_kept_titles_read_no_row_until_the_session_changes(sqlite_store, monkeypatch):
    """Issue 43 goal 3 (revision 0025): a title computed once is kept; listing the unchanged
    session again reads none of its rows; when the session grows, only its new rows are
    scanned, and a secret they reveal is hidden in the title; a new own title is used."""
    load(sqlite_store, [U(f"use {PASSWORD} for the deploy")], key="k")
    first = session_title(sqlite_store, sqlite_store.get_session("k"))
    assert first == f"use {PASSWORD} for the deploy"  # nothing marks it a secret yet
    (kept,) = sqlite_store.kept_titles(["k"]).values()
    assert (kept.entry_count, kept.line) == (1, first)

    reads: list[dict] = []
    entries = sqlite_store.entries

    def counted(key, **kw):  # type: ignore[no-untyped-def]
        reads.append(kw)
        return entries(key, **kw)

    monkeypatch.setattr(sqlite_store, "entries", counted)
    assert session_title(sqlite_store, sqlite_store.get_session("k")) == first
    assert reads == []  # kept: no row read

    load(
        sqlite_store,
        [A(call("c1", "Bash", env=[{"name": "DB_PASSWORD", "value": PASSWORD}]))],
        key="k",
    )
    grown = sqlite_store.get_session("k")
    assert session_title(sqlite_store, grown) == "use [REDACTED:password] for the deploy"
    scans = [kw for kw in reads if "after_seq" in kw]
    assert scans and all(kw["after_seq"] == 0 for kw in scans)  # only the row after seq 0
    assert sqlite_store.kept_titles(["k"])["k"].entry_count == 2

    reads.clear()
    sqlite_store.upsert_session(replace(grown, title="Rotate the deploy password"))
    renamed = sqlite_store.get_session("k")
    assert session_title(sqlite_store, renamed) == "Rotate the deploy password"
    assert session_titles(sqlite_store, [renamed]) == {"k": "Rotate the deploy password"}


def test_titles_of_a_read_only_workspace_are_computed_not_kept(
    tmp_path, isolated_home, monkeypatch
):
    """A workspace that cannot be written lists its titles all the same (computed, not kept;
    its folder is made unwritable to the store's check: the tests run as root, whom file
    modes do not stop)."""
    import os

    import continuity.store as store_pkg

    home = tmp_path / "ws"
    with Workspace.open(home) as ws:
        ws.import_([SHARED_DATA / "claude-code" / "short.jsonl"])
        titles = {r.session: r.title for r in ws.sessions()}
        ws.store().engine.dispose()
        with ws.store().engine.begin() as conn:
            conn.exec_driver_sql("DELETE FROM session_titles")
    real_access = os.access
    monkeypatch.setattr(
        store_pkg.os, "access", lambda p, mode: mode != os.W_OK and real_access(p, mode)
    )
    with Workspace.open(home, read_only=True) as ro:
        assert {r.session: r.title for r in ro.sessions()} == titles
        assert ro.store().kept_titles(list(titles)) == {}
    assert all(titles.values())
