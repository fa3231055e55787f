"""Store conformance: every test runs on each backend in ``conftest.BACKENDS``."""

from __future__ import annotations

from datetime import UTC

import pytest

from continuity.core.errors import InputError, StoreConflict
from continuity.core.model import (
    Entry,
    EntryKind,
    MediaBlock,
    Note,
    Role,
    Run,
    RunStatus,
    Session,
    SourceRef,
    TextBlock,
)
from continuity.store.base import ImportIssue, RawLine, SourceState
from tests.builders import CP, A, T, U, call, load


def test_store_upsert_session_then_get_returns_fields(store):
    """A session reads back with the fields written and entry_count 0."""
    store.upsert_session(Session(key="k1", harness="pi", project="/p", title="t"))
    got = store.get_session("k1")
    assert (got.key, got.harness, got.project, got.title, got.entry_count) == (
        "k1",
        "pi",
        "/p",
        "t",
        0,
    )
    assert store.get_session("missing") is None


def test_store_append_assigns_entry_ids_and_counts(store):
    """Appended rows read back in seq order with their blocks; entry_count follows."""
    key = load(store, [U("fix the parser"), A(call("c1", path="a.py")), T("c1")])
    rows = store.entries(key)
    assert [r.seq for r in rows] == [0, 1, 2]
    assert [r.entry_id for r in rows] == ["s1:0", "s1:1", "s1:2"]
    assert rows[0].text() == "fix the parser" and rows[0].is_request
    assert rows[1].tool_calls()[0].arguments == {"path": "a.py"}
    assert rows[2].tool_results()[0].text == "ok c1"
    assert store.get_session(key).entry_count == 3


def test_store_entry_ids_are_derived_and_found_by_the_primary_key(store):
    """Revision 0030 (issue 43 goal 2): no entry id is stored. Every read gives
    ``<session_key>:<seq>`` (a key holding colons too), an id given on append is replaced by
    it, and ``entry_by_id`` finds the row by the key and seq the id's last colon splits."""
    load(store, [U("one"), A(text="two")], key="a:b")
    given = U("three")
    given.entry_id = "something-else"
    load(store, [given], key="a:b")
    assert given.entry_id == "a:b:2"
    rows = store.entries("a:b")
    assert [r.entry_id for r in rows] == ["a:b:0", "a:b:1", "a:b:2"]
    assert [r.entry_id for r in store.entries_by_seq("a:b", [2, 0])] == ["a:b:0", "a:b:2"]
    found = store.entry_by_id("a:b:1")
    assert found is not None and (found.seq, found.text(), found.entry_id) == (1, "two", "a:b:1")
    assert found == rows[1]
    assert store.entry_by_id("a:b:3") is None and store.entry_by_id("a:9") is None


@pytest.mark.parametrize("bad", ["", "k", "k:", ":3", "k:-1", "k:1.0", "k:07", "k:x", "k:٣"])
def test_store_entry_by_id_refuses_a_malformed_id(store, bad):
    """An id that is not ``<key>:<seq>`` as the store writes it is an ``InputError`` naming
    it, on every read path (never a lookup of some other row)."""
    load(store, [U("one")], key="k")
    with pytest.raises(
        InputError, match=r"entry id .* is malformed: an entry id is <session key>:<seq>"
    ):
        store.entry_by_id(bad)


def test_store_row_source_path_reads_back_per_file(store):
    """Revision 0030: a row's source path is stored by number (``source_paths``) and reads
    back as written on every read path: two files, rows without a source, a path with NUL
    (stored by the NUL rule, as before), and ``stored_lines`` by path."""
    rows = [
        Entry(
            EntryKind.MESSAGE,
            Role.USER,
            (TextBlock("a"),),
            source=SourceRef("/p/a.jsonl", 1, 0, "a" * 64),
        ),
        Entry(
            EntryKind.MESSAGE,
            Role.USER,
            (TextBlock("b"),),
            source=SourceRef("/p/b.jsonl", 4, 90, "b" * 64),
        ),
        Entry(EntryKind.MESSAGE, Role.USER, (TextBlock("c"),)),
        Entry(
            EntryKind.MESSAGE,
            Role.USER,
            (TextBlock("d"),),
            source=SourceRef("/p/a.jsonl", 2, 10, "c" * 64),
        ),
        Entry(
            EntryKind.MESSAGE,
            Role.USER,
            (TextBlock("e"),),
            source=SourceRef("/p/n\x00l", 1, 0, "d" * 64),
        ),
    ]
    key = load(store, rows)
    got = store.entries(key)
    assert [r.source for r in got] == [
        SourceRef("/p/a.jsonl", 1, 0, "a" * 64),
        SourceRef("/p/b.jsonl", 4, 90, "b" * 64),
        None,
        SourceRef("/p/a.jsonl", 2, 10, "c" * 64),
        SourceRef("/p/n\ufffdl", 1, 0, "d" * 64),
    ]
    assert store.entry_by_id(f"{key}:1").source == got[1].source
    assert store.latest_compaction(key) is None
    assert store.stored_lines(key, "/p/a.jsonl") == {(1, "a" * 64), (2, "c" * 64)}
    assert store.stored_lines(key, "/p/b.jsonl") == {(4, "b" * 64)}
    assert store.stored_lines(key, "/p/none.jsonl") == set()
    assert store.stored_lines("other", "/p/a.jsonl") == set()


def test_store_append_rejects_seq_gap(store):
    """A row whose seq does not continue the log is refused and nothing is written."""
    store.upsert_session(Session(key="k", harness="t"))
    e = U("x")
    e.seq = 5
    with pytest.raises(StoreConflict, match="expected 0"):
        store.append("k", [e])
    assert store.entries("k") == []


def test_store_batch_rolls_back_whole(store):
    """An error inside batch() leaves none of its writes."""
    store.upsert_session(Session(key="k", harness="t"))
    with pytest.raises(RuntimeError), store.batch():
        e = U("x")
        e.seq = 0
        store.append("k", [e])
        raise RuntimeError("boom")
    assert store.entries("k") == []
    assert store.get_session("k").entry_count == 0


def test_store_tool_call_index_tracks_first_result(store):
    """The index knows each call's seq and its first result; unknown ids are absent."""
    key = load(store, [U("go"), A(call("c1"), call("c2")), T("c1"), T("c1"), U("next")])
    idx = store.tool_calls(key, ["c1", "c2", "nope"])
    assert idx["c1"].call_seq == 1 and idx["c1"].result_seq == 2
    assert idx["c2"].call_seq == 1 and idx["c2"].result_seq is None
    assert "nope" not in idx
    assert {p.call_id for p in store.tool_calls_from(key, 2)} == {"c1"}


def test_store_tool_calls_from_is_every_pair_touching_the_tail(store):
    """Revision 0031: ``tool_calls_from(key, s)`` is exactly the index rows whose call or
    result sits at ``s`` or later, though it reads two index ranges (the answered pairs by
    result, the rest by call): a pair on either side of ``s``, a call with no result, a result
    with no call, and a result stored before its call."""
    rows = [
        U("go"),
        A(call("c1"), call("c2")),
        T("c1"),
        T("x9"),  # no call
        A(call("c3")),  # no result
        T("c2"),
        A(call("c4")),  # no result
        T("c5"),  # before its call
        A(call("c5")),
        U("end"),
    ]
    key = load(store, rows)
    index = {"c1": (1, 2), "c2": (1, 5), "x9": (-1, 3), "c3": (4, None), "c4": (6, None)}
    index["c5"] = (8, 7)
    for s in range(11):
        want = {
            cid: pair
            for cid, pair in index.items()
            if pair[0] >= s or (pair[1] is not None and pair[1] >= s)
        }
        got = store.tool_calls_from(key, s)
        assert len(got) == len(want), s
        assert {p.call_id: (p.call_seq, p.result_seq) for p in got} == want, s


def test_store_orphan_result_indexed_without_call(store):
    """A result whose call never appeared is indexed with call_seq -1."""
    key = load(store, [U("go"), T("t9")])
    assert store.tool_calls(key, ["t9"])["t9"].call_seq == -1


def test_store_rows_meta_bounds_and_order(store):
    """rows_meta honours both bounds and the order, and skips invisible rows."""
    rows = [U("a"), A(text="b"), U("c"), A(text="d")]
    rows[1].visible = False
    key = load(store, rows)
    assert [m.seq for m in store.rows_meta(key)] == [3, 2, 0]
    assert [m.seq for m in store.rows_meta(key, after_seq=0, newest_first=False)] == [2, 3]
    assert [m.seq for m in store.rows_meta(key, before_seq=3, limit=1)] == [2]
    meta = store.rows_meta(key, limit=1)[0]
    assert meta.view_bytes == len(
        b'{"seq":3,"role":"assistant","copied":false,"content":[{"type":"text","text":"d"}]}'
    )


def test_store_latest_compaction_by_seq(store):
    """The newest compaction wins by seq; its coverage reads back."""
    key = load(store, [U("a"), CP("one"), U("b"), CP("two"), U("c")])
    got = store.latest_compaction(key)
    assert got.seq == 3 and got.compaction.summary == "two"
    assert got.compaction.covers_through_seq == 2
    assert store.latest_compaction("other") is None


def test_store_runs_last_ended(store):
    """last_run(ended_only) skips a running run; other sessions are untouched."""
    key = load(
        store,
        [U("a"), A(text="x"), U("b")],
        runs=[(0, RunStatus.INTERRUPTED), (2, RunStatus.RUNNING)],
    )
    assert store.last_run(key).request_seq == 2
    ended = store.last_run(key, ended_only=True)
    assert (ended.request_seq, ended.status) == (0, RunStatus.INTERRUPTED)
    assert store.last_run("nobody") is None
    store.put_runs([Run("s1:2", key, "default", 2, RunStatus.FINISHED, 2)])
    assert store.last_run(key, ended_only=True).request_seq == 2


def test_store_notes_newest_limit_oldest_first(store):
    """B58: the newest ``limit`` notes, oldest first."""
    for i in range(5):
        store.add_note(Note("s", f"n{i}"))
    assert [n.text for n in store.notes("s", limit=3)] == ["n2", "n3", "n4"]
    assert store.notes("other") == []


def test_store_notes_starting_by_session_and_literal_prefix(store):
    """Issue 45 item 3: the notes of the asked sessions that start with the prefix, taken
    literally (``%`` and ``_`` are no wildcards), oldest first; others left out; more keys
    than one query takes."""
    store.add_note(Note("a", "Resumed copy of x"))
    store.add_note(Note("a", "unrelated"))
    store.add_note(Note("a", "Resumed copy of y"))
    store.add_note(Note("b", "Resumed_copy of z"))
    store.add_note(Note("c", "Resumed copy of w"))
    keys = ["a", "b", *(f"k{i}" for i in range(1_200))]
    assert store.notes_starting("Resumed copy of ", keys) == {
        "a": ["Resumed copy of x", "Resumed copy of y"]
    }
    assert store.notes_starting("Resumed_copy", ["a", "b"]) == {"b": ["Resumed_copy of z"]}
    assert store.notes_starting("%", ["a", "b", "c"]) == {}
    assert store.notes_starting("Resumed", []) == {}


def test_store_find_sessions_escapes_wildcards(store):
    for key in ("ab_1", "abx1", "zz"):
        store.upsert_session(Session(key=key, harness="t"))
    assert [s.key for s in store.find_sessions("ab")] == ["ab_1", "abx1"]
    assert [s.key for s in store.find_sessions("ab_")] == ["ab_1"]
    assert store.find_sessions("%") == []


def test_store_raw_lines_are_lossless_and_idempotent(store):
    lines = [
        RawLine("/f", 1, 0, "a" * 64, b'{"x":1}\r'),
        RawLine("/f", 2, 9, "b" * 64, b"\x00\x00"),
    ]
    store.put_raw_lines(lines)
    store.put_raw_lines(lines)
    assert list(store.raw_lines("/f")) == lines
    assert list(store.raw_lines("/other")) == []


def test_store_media_and_issues_and_sources(store):
    store.upsert_session(Session(key="k", harness="t"))
    e = Entry(
        EntryKind.MESSAGE,
        Role.USER,
        (MediaBlock("image/png", 3, "d" * 64),),
        payloads={"d" * 64: b"\x89PN"},
        seq=0,
        source=SourceRef("/f", 1, 0, "e" * 64),
    )
    store.append("k", [e])
    assert store.media("d" * 64) == b"\x89PN"
    assert store.entries("k")[0].source.line == 1
    store.put_issues([ImportIssue("/f", 10, 99, 17, "not JSON", "c" * 64)])
    assert store.issues("/f")[0].line_no == 10 and store.issues("/g") == []
    state = SourceState("/f", "k", "codex", 7, 100, 90, 10, "f" * 64, '{"a":1}')
    store.put_source(state)
    store.put_source(state)
    got = store.get_source("/f")
    assert (got.offset, got.line_count, got.reader_state) == (90, 10, '{"a":1}')


def test_store_set_on_path_restores_reader_visibility(store):
    rows = [U("a"), A(text="b")]
    rows[1].visible = False
    key = load(store, rows)
    store.set_on_path(key, [0, 1], False)
    assert store.rows_meta(key) == []
    store.set_on_path(key, [0, 1], True)
    assert [m.seq for m in store.rows_meta(key)] == [0]


def test_store_text_roundtrip_non_ascii(store):
    key = load(store, [U("emoji 🎉 and ü")])
    assert store.entries(key)[0].blocks == (TextBlock("emoji 🎉 and ü"),)


def test_store_nul_in_text_becomes_replacement_char(store):
    """PostgreSQL refuses NUL in text: every backend stores U+FFFD instead (raw bytes keep it)."""
    store.upsert_session(Session(key="k", harness="t", project="/p\x00q"))
    e = U("nul \x00 here")
    e.seq = 0
    store.append("k", [e])
    assert store.entries("k")[0].text() == "nul \x00 here"  # JSON escapes it inside content
    assert store.get_session("k").project == "/p\ufffdq"


def test_store_lock_session_holds_the_row_until_commit(store):
    """lock_session: False for an unknown session (and for another session it changes
    nothing); inside batch() a second writer of the same session waits for the first to
    commit and then reads what it wrote (replay's read-then-insert stays atomic)."""
    import threading
    import time

    from continuity.core.model import Checkpoint, CheckpointTrigger
    from continuity.store import open_store

    assert store.lock_session("missing") is False
    store.upsert_session(Session(key="k", harness="t"))
    store.upsert_session(Session(key="other", harness="t"))
    with store.batch():
        assert store.lock_session("other") is True
    assert store.get_session("other").entry_count == 0
    locked, seen, committed = threading.Event(), [], []

    def first() -> None:
        with store.batch():
            store.lock_session("k")
            locked.set()
            time.sleep(0.5)
            store.insert_checkpoint(
                Checkpoint(
                    session_key="k",
                    harness="t",
                    project=None,
                    project_normalized=None,
                    trigger=CheckpointTrigger.EXPLICIT,
                    digest="d",
                    prompt_count=1,
                ),
                max_per_session=50,
            )
        committed.append(time.monotonic())

    with open_store(store.url) as second:
        second.get_session("k")  # connected and migrated before the first writer starts
        worker = threading.Thread(target=first)
        worker.start()
        assert locked.wait(10)
        with second.batch():
            assert second.lock_session("k") is True
            seen.append(len(second.checkpoints("k")))
        worker.join(10)
    assert seen == [1] and committed  # it read the first writer's row: it waited


def test_transcript_compare_and_set_replaces_only_the_expected_text(store):
    """Issue 17: the daemon appends live turns with one compare-and-set on the hash it wrote
    last (``expected_hash``). A row another writer changed is left alone (False), the
    expected one is replaced and re-opened (True); without ``expected_hash`` the old rule
    holds (replace when the hash differs)."""
    from datetime import datetime

    from continuity.core.model import TranscriptRow

    at = datetime(2026, 12, 3, tzinfo=UTC)
    assert store.insert_transcript(
        TranscriptRow("k", "default", "pi", "/p", "one", "h1", at, at, at)
    )
    kw = {"harness": "pi", "project": "/p", "updated_at": at}
    assert not store.update_transcript_content(
        "k", "default", content="one two", content_hash="h2", expected_hash="h0", **kw
    )
    row = store.get_transcripts(["k"], "default")["k"]
    assert (row.content, row.content_hash, row.completed_at) == ("one", "h1", at)
    assert store.update_transcript_content(
        "k", "default", content="one two", content_hash="h2", expected_hash="h1", **kw
    )
    row = store.get_transcripts(["k"], "default")["k"]
    assert (row.content, row.content_hash, row.completed_at) == ("one two", "h2", None)
    assert not store.update_transcript_content(
        "k", "default", content="one two", content_hash="h2", **kw
    )
    assert not store.update_transcript_content(
        "nope", "default", content="x", content_hash="h9", expected_hash="h2", **kw
    )


def test_store_sources_by_path_presence_and_sessions_without_transcript(store):
    """The reads an unchanged re-import makes (issue 43 goal 4: ``cli.fast`` takes them from
    ``store.lite``): every field of a source back as written, gone marks, and the sessions
    with no transcript row among the keys asked (unknown keys left out)."""
    store.upsert_session(Session(key="k", harness="codex"))
    a = SourceState("/f/a.jsonl", "k", "codex", 7, 100, 90, 10, "f" * 64, '{"a":1}')
    b = SourceState("/f/b.jsonl", "k", "codex", None, 5, 5, 1, "0" * 64, None, pending_from=3)
    store.put_source(a)
    store.put_source(b)
    got = store.get_sources(["/f/a.jsonl", "/f/b.jsonl", "/f/none.jsonl"])
    assert sorted(got) == ["/f/a.jsonl", "/f/b.jsonl"]
    fields = ("path", "session_key", "harness", "inode", "size", "offset", "line_count")
    for want in (a, b):
        have = got[want.path]
        assert [getattr(have, f) for f in fields] == [getattr(want, f) for f in fields]
        assert (have.prefix_sha256, have.reader_state) == (want.prefix_sha256, want.reader_state)
        assert have.pending_from == want.pending_from and have.gone_at is None
        assert have.updated_at is not None and have.updated_at.tzinfo is not None
    assert store.source_presence() == {"/f/a.jsonl": False, "/f/b.jsonl": False}
    assert store.mark_sources(["/f/b.jsonl"], gone=True) == 1
    assert store.source_presence() == {"/f/a.jsonl": False, "/f/b.jsonl": True}
    assert store.get_sources(["/f/b.jsonl"])["/f/b.jsonl"].gone_at is not None
    assert store.sessions_without_transcript(["k", "unknown", ""]) == ["k"]


def test_any_applied_event_says_whether_hooks_ever_delivered(store):
    """``doctor`` asks it before it calls a capture stopped: False in a store only imported
    into, True once a hook event was applied; ``applied_events`` finds the ids."""
    from datetime import UTC, datetime

    assert store.any_applied_event() is False
    assert store.mark_events_applied(["a" * 32, "a" * 32, ""], datetime.now(UTC)) == 1
    assert store.any_applied_event() is True
    assert store.applied_events(["a" * 32, "b" * 32]) == {"a" * 32}
