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


def test_a_session_is_scanned_once_for_many_hits(store):
    """The collected secrets are cached per (session, row count, title): a second output of
    the same session reads no row; a session that grew is read from its last row read on."""
    _load(store)
    session_secrets(store, KEY)
    reads = []
    original = store.entries

    def counting(*args, **kwargs):
        reads.append(kwargs.get("after_seq"))
        return original(*args, **kwargs)

    store.entries = counting  # type: ignore[method-assign]
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
