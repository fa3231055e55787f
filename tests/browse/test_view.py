"""The browse view model and its Markdown (issue 19): paging, pairing across pages, checkpoint
placement, text cleaning, and that no secret survives a snippet (property)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from continuity.browse.search import snippet
from continuity.browse.view import PAGE_ROWS, clean_text, session_view
from tests.browser.corpus import SECRET, build
from tests.builders import A, T, U, call, load


def test_pages_of_a_long_session(sqlite_store):
    rows = []
    for i in range(250):
        rows += [A(call(f"c{i}", "Read", path=f"/f{i}")), T(f"c{i}", text=f"content {i}")]
    load(sqlite_store, [U("go"), *rows], key="long")
    first = session_view(sqlite_store, "long", continuation=False)
    assert (first.first_seq, first.last_seq, first.total) == (0, PAGE_ROWS - 1, 501)
    assert first.prev_from is None and first.next_from == PAGE_ROWS
    # The call at the page's last row gets its result from the next page.
    last = first.rows[-1]
    assert last.blocks[0].kind == "tool_call" and last.blocks[0].result_seq == PAGE_ROWS
    n = (PAGE_ROWS - 1) // 2
    assert last.blocks[0].result.text == f"content {n} c{n}"
    second = session_view(sqlite_store, "long", from_seq=PAGE_ROWS, continuation=False)
    assert second.first_seq == PAGE_ROWS and second.prev_from == 0
    assert second.rows[0].answered_above == []  # its call is on the previous page
    assert second.rows[2].answered_above == [PAGE_ROWS + 1]  # its call is just above
    focus = session_view(sqlite_store, "long", focus_seq=300, continuation=False)
    assert focus.first_seq == 295 and focus.focus_seq == 300
    part = session_view(
        sqlite_store, "long", from_seq=10, until_seq=14, limit=None, continuation=False
    )
    assert [r.seq for r in part.rows] == [10, 11, 12, 13, 14]


def test_checkpoint_is_placed_after_the_row_before_it(sqlite_store):
    build(sqlite_store)
    view = session_view(sqlite_store, "cc-alembic")
    placed = [(r.seq, c.trigger) for r in view.rows for c in r.checkpoints]
    assert placed == [(2, "pre_compaction")] and view.checkpoints_before == []
    assert view.rows[3].compaction and view.rows[3].covers == 2
    assert SECRET not in view.rows[4].blocks[0].text
    assert SECRET in session_view(sqlite_store, "cc-alembic", raw=True).rows[4].blocks[0].text


def test_clean_text_shows_ansi_and_controls_as_escapes():
    assert (
        clean_text("\x1b[1;31mred\x1b[0m \x07bell\x00", raw=True)
        == "\\x1b[1;31mred\\x1b[0m \\x07bell\\x00"
    )  # issue 45: the README's one rule
    assert clean_text("a\tb\nc", raw=True) == "a\tb\nc"


@settings(max_examples=60, deadline=None)
@given(
    before=st.text(alphabet="abc xyz\n.,", max_size=900),
    after=st.text(alphabet="abc xyz\n.,", max_size=900),
)
def test_no_secret_survives_a_snippet(before, after):
    text = f"{before} alembic {after} token {SECRET} {before}"
    shown, _spans = snippet(text, ["alembic"])
    assert SECRET not in shown and "ZYXWVUTSRQPONMLK" not in shown
    shown, _ = snippet(text, ["token"])
    assert "ZYXWVUTSRQPONMLK" not in shown


def test_the_continuation_panel_shows_the_previous_request(sqlite_store):
    """Issue 44: the panel read a ``content`` list the continuation's request does not carry
    (it carries ``text``), so "Request (row 4)" stood over an empty box on every session, in
    the browser and in ``export --format html``."""
    from continuity.browse.render import session_page

    build(sqlite_store)
    view = session_view(sqlite_store, "cc-alembic")
    assert view.continuation is not None and view.continuation.request_seq == 4
    request = view.continuation.request
    assert request.startswith("the key is [REDACTED:") and request.endswith("\\x1b[0m")
    assert SECRET not in request and "and this text is <script>window.pwned" in request
    html = session_page(view, standalone=True)
    panel = html[html.index('id="continuation"') : html.index("</section>")]
    assert "<pre>the key is [REDACTED:" in panel
    assert "and this text is &lt;script&gt;window.pwned = 1&lt;/script&gt;" in panel


def test_the_conversation_view_hides_rows_outside_it(sqlite_store):
    """Issue 44: queue operations, attachments and snapshots hidden unless every row is asked
    for; a focused row outside the conversation shows every row."""
    build(sqlite_store)
    conv = session_view(sqlite_store, "cc-edit", conversation=True)
    assert [r.seq for r in conv.rows] == [1, 3, 4, 6] and conv.conversation
    assert conv.next_from is None
    every = session_view(sqlite_store, "cc-edit")
    assert [r.seq for r in every.rows] == [0, 1, 2, 3, 4, 5, 6] and not every.conversation
    focus = session_view(sqlite_store, "cc-edit", conversation=True, focus_seq=2)
    assert not focus.conversation and [r.seq for r in focus.rows] == [0, 1, 2, 3, 4, 5, 6]
    paged = session_view(sqlite_store, "cc-edit", conversation=True, limit=2)
    assert [r.seq for r in paged.rows] == [1, 3] and paged.next_from == 4
