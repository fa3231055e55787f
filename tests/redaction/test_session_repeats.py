"""Issue 45 review items 1 and 2: a secret found in one row of a session is redacted wherever
the session repeats it (another row, its title), and a search snippet is redacted as ``show``
redacts the row (structured arguments, within the session)."""

from __future__ import annotations

import json

from continuity.browse.search import search
from continuity.browse.view import session_view
from continuity.core.model import Session
from continuity.redaction import redact
from continuity.redaction.session import in_session, session_secrets
from tests.builders import A, T, U, call, load

KEY = "sess-repeats"


def _load(store, title: str | None = None) -> None:
    load(
        store,
        [
            U("set it up; the password is hunter2hunter2xyz"),
            A(
                call(
                    "a",
                    "Bash",
                    command="run",
                    env=[{"name": "DB_PASSWORD", "value": "plainpropval4455"}],
                )
            ),
            T("a", text="ok"),
            A(
                call(
                    "b",
                    "Write",
                    file_path="k8s.json",
                    content=json.dumps(
                        {"secretName": "X_SIGNING_SECRET", "value": "k8sSigningVal7788"}
                    ),
                )
            ),
            T("b", text="ok"),
            A(text="later prose repeats plainpropval4455 and again; short pw7 stays"),
        ],
        key=KEY,
    )
    if title is not None:
        found = store.get_session(KEY)
        store.upsert_session(
            Session(
                key=KEY,
                harness="test",
                title=title,
                started_at=found.started_at,
                ended_at=found.ended_at,
            )
        )


def test_session_secrets_are_the_values_found_in_any_row(store):
    _load(store)
    assert session_secrets(store, KEY) == {
        "hunter2hunter2xyz": "password",
        "plainpropval4455": "password",
        "k8sSigningVal7788": "secret",
    }
    assert session_secrets(store, "no-such-session") == {}


def test_a_repeat_in_another_row_and_the_title_is_redacted(store):
    _load(store, title="pw hunter2hunter2xyz")
    view = session_view(store, KEY, limit=None)
    assert view.session.title == "pw [REDACTED:password]"
    assert view.rows[-1].blocks[0].text == (
        "later prose repeats [REDACTED:password] and again; short pw7 stays"
    )
    raw = session_view(store, KEY, limit=None, raw=True)
    assert "plainpropval4455" in raw.rows[-1].blocks[0].text
    # outside a session's scope the text alone holds no detectable secret
    assert redact("later prose repeats plainpropval4455") == "later prose repeats plainpropval4455"
    with in_session(store, KEY):
        assert redact("say plainpropval4455") == "say [REDACTED:password]"
    assert redact("say plainpropval4455") == "say plainpropval4455"


def test_search_snippets_are_redacted_as_show_redacts_the_row(store):
    _load(store, title="pw hunter2hunter2xyz")
    hits = search(store, "X_SIGNING_SECRET", mode="words")
    assert [h.snippet for h in hits] == [
        'Write {"file_path":"k8s.json","content":"{\\"secretName\\": \\"X_SIGNING_SECRET\\", '
        '\\"value\\": \\"[REDACTED:secret]\\"}"}'
    ]
    assert hits[0].title == "pw [REDACTED:password]"
    hits = search(store, "later prose", mode="words")
    assert [h.snippet for h in hits] == [
        "later prose repeats [REDACTED:password] and again; short pw7 stays"
    ]


def _count_reads(store) -> list:
    """The ``after_seq`` of each ``store.entries`` call from now on (``del store.entries``
    restores it)."""
    reads: list = []
    original = store.entries

    def counting(*args, **kwargs):
        reads.append(kwargs.get("after_seq"))
        return original(*args, **kwargs)

    store.entries = counting  # type: ignore[method-assign]
    return reads


def test_a_session_is_scanned_once_for_many_hits(store):
    """The collected secrets are cached per (session, row count, title): a second output of
    the same session reads no row; a session that grew is read from its last row read on."""
    _load(store)
    session_secrets(store, KEY)
    reads = _count_reads(store)
    try:
        assert "plainpropval4455" in session_secrets(store, KEY)
        assert reads == []
        load(store, [U("now the token is ghp_Zx8fK2mQ9vLr4TnB7wYc1HdS6gPa3JeU0kNo")], key=KEY)
        grown = session_secrets(store, KEY)
        assert "ghp_Zx8fK2mQ9vLr4TnB7wYc1HdS6gPa3JeU0kNo" in grown
        assert "plainpropval4455" in grown
        assert reads == [5]  # only the row after the last one read (seq 5)
    finally:
        del store.entries


def _forget_process_cache() -> None:
    """As a new process starts: nothing in ``redaction.session``'s per-process cache."""
    from continuity.redaction import session as scope

    with scope._lock:
        scope._cache.clear()


def test_a_session_is_scanned_once_across_processes(store):
    """Issue 43 goal 3 (revision 0028): the secrets found are kept in the store with the
    row count and own title they were found under, so a new process (its cache empty) reads
    no row of an unchanged session; one that grew is read from its first new row; a new own
    title is scanned again from the start; a damaged kept row is computed again."""
    _load(store)
    first = session_secrets(store, KEY)
    kept = store.kept_secrets(KEY)
    assert (kept.entry_count, kept.last_seq) == (6, 5)
    assert kept.secrets == first
    assert set(first) == {"hunter2hunter2xyz", "plainpropval4455", "k8sSigningVal7788"}

    reads = _count_reads(store)
    try:
        _forget_process_cache()
        assert session_secrets(store, KEY) == first
        assert reads == []  # kept: no row read

        load(store, [U("now the token is ghp_Zx8fK2mQ9vLr4TnB7wYc1HdS6gPa3JeU0kNo")], key=KEY)
        _forget_process_cache()
        grown = session_secrets(store, KEY)
        assert reads == [5]  # only the rows after seq 5
        assert set(grown) == set(first) | {"ghp_Zx8fK2mQ9vLr4TnB7wYc1HdS6gPa3JeU0kNo"}
        assert (store.kept_secrets(KEY).entry_count, store.kept_secrets(KEY).last_seq) == (7, 6)

        reads.clear()
        _forget_process_cache()
        found = store.get_session(KEY)
        store.upsert_session(
            Session(key=KEY, harness="test", title="renamed", started_at=found.started_at)
        )
        assert session_secrets(store, KEY) == grown
        assert reads == [-1]  # a new own title: scanned from the start

        with store.engine.begin() as conn:
            conn.exec_driver_sql("UPDATE session_secrets SET secrets = '[1'")
        assert store.kept_secrets(KEY) is None  # damaged: never trusted
        reads.clear()
        _forget_process_cache()
        assert session_secrets(store, KEY) == grown
        assert reads == [-1]
    finally:
        del store.entries


def test_kept_secrets_read_and_written_through_lite(tmp_path):
    """``store.lite`` reads and writes the kept secrets as ``SqlStore`` does (the fast path of
    ``show`` and ``continue``), NUL characters included."""
    from continuity.store import open_store
    from continuity.store.base import KeptSecrets
    from continuity.store.lite import open_lite

    url = f"sqlite:///{tmp_path / 'continuity.db'}"
    with open_store(url) as full:
        _load(full)
        found = session_secrets(full, KEY)
    lite = open_lite(url)
    assert lite is not None
    assert lite.kept_secrets(KEY) == KeptSecrets(KEY, _sha(""), 6, 5, found)
    lite.keep_secrets(KeptSecrets(KEY, _sha(""), 6, 5, {"nul\x00value1": "password"}))
    with open_store(url) as full:
        assert full.kept_secrets(KEY).secrets == {"nul\x00value1": "password"}
    assert lite.kept_secrets("no-such-session") is None

    # inside a reading batch (the fast path's one snapshot) the write waits for its end
    with open_store(url) as full, full.engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM session_secrets")
    _forget_process_cache()
    lite = open_lite(url, read_only=False)
    assert lite is not None
    with lite.batch():
        assert session_secrets(lite, KEY) == found
        assert lite.kept_secrets(KEY) is None  # not yet: the snapshot only reads
    assert lite.kept_secrets(KEY) == KeptSecrets(KEY, _sha(""), 6, 5, found)
    assert lite._full is None  # no SQLAlchemy store was opened


def test_forget_deletes_the_kept_secrets(store):
    """``forget`` leaves no secret of the session at rest in the kept secrets."""
    _load(store)
    session_secrets(store, KEY)
    assert store.kept_secrets(KEY) is not None
    store.forget_session(KEY)
    assert store.kept_secrets(KEY) is None


def _sha(title: str) -> str:
    """What the kept answer is found under: the rules' digest and the own title."""
    import hashlib

    from continuity.redaction.session import rules_digest

    return hashlib.sha256(rules_digest().encode() + b"\0" + title.encode()).hexdigest()


def test_kept_secrets_found_by_other_rules_are_scanned_again(store, monkeypatch):
    """An upgrade that changes the redaction rules (a new detector) makes every kept answer
    untrusted: the session is scanned again from its first row."""
    from continuity.redaction import session as scope

    _load(store)
    found = session_secrets(store, KEY)
    _forget_process_cache()
    reads = _count_reads(store)
    try:
        assert session_secrets(store, KEY) == found and reads == []
        _forget_process_cache()
        monkeypatch.setattr(scope, "rules_digest", lambda: "other rules")
        assert session_secrets(store, KEY) == found
        assert reads == [-1]  # scanned from the start
    finally:
        del store.entries
