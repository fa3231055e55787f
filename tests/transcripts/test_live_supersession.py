"""Issue 45 item 10: a live session's settled turn appends its new rows' records to the
canonical JSONL instead of rewriting the file. The reading rule that makes that exact: a
session's ``live`` records are superseded by a later non-live record of that session, and a
record appended twice (same id) in a session with live records is read once."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings, strategies as st

from continuity.core.model import Session
from continuity.transcripts.session_transcripts import (
    FileState,
    TranscriptLog,
    TranscriptRecord,
    content_hash,
    sync_session,
    transcript_path,
)
from tests.builders import A, U

AT = "2026-12-06T10:00:00.000Z"


def rec(
    key: str, seq: int, text: str, *, live: bool = False, event_id: str | None = None
) -> TranscriptRecord:
    return TranscriptRecord(
        "default",
        "claude-code",
        key,
        "/p",
        seq,
        "user",
        text,
        "live" if live else "claude-code-jsonl",
        None,
        AT,
        event_id=event_id,
    )


def test_live_records_are_superseded_by_a_later_row_of_their_session(tmp_path: Path) -> None:
    log = TranscriptLog(tmp_path / "transcript.jsonl")
    log.append(
        [
            rec("a", 0, "User: one"),
            rec("a", 1, "User: two", live=True),
            rec("b", 0, "User: b live", live=True),
            rec("a", 1, "User: two"),
            rec("a", 2, "User: three", live=True),
        ]
    )
    got = [(r.session_key, r.content, r.source_format) for r in log.read()]
    assert got == [
        ("a", "User: one", "claude-code-jsonl"),
        ("b", "User: b live", "live"),  # b has no later row: still pending
        ("a", "User: two", "claude-code-jsonl"),
        ("a", "User: three", "live"),
    ]  # after a's last row: pending
    assert [r.content for r in log.read(session_key="a")] == [
        "User: one",
        "User: two",
        "User: three",
    ]
    assert log.digests()[("default", "a")] == content_hash("User: one\n\nUser: two\n\nUser: three")


def test_a_row_appended_twice_in_a_live_session_is_read_once(tmp_path: Path) -> None:
    """Two writers that appended the same new rows at once (the second copy adds nothing);
    a session that never had live records is read as written."""
    log = TranscriptLog(tmp_path / "transcript.jsonl")
    log.append(
        [
            rec("a", 0, "User: one", live=True),
            rec("a", 0, "User: one"),
            rec("a", 1, "User: two"),
            rec("a", 1, "User: two"),
            rec("c", 0, "User: c"),
            rec("c", 0, "User: c"),
        ]
    )
    assert [(r.session_key, r.seq) for r in log.read()] == [("a", 0), ("a", 1), ("c", 0), ("c", 0)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ab"), st.booleans()), max_size=30))
def test_reading_equals_the_rule_applied_in_memory(tmp_path_factory, steps) -> None:
    """Property: for any interleaving of live and row records of two sessions, ``read``
    gives, in file order, each session's rows and only the live records after its last row."""
    path = tmp_path_factory.mktemp("log") / "transcript.jsonl"
    records = [rec(key, i, f"{key} {i}", live=live) for i, (key, live) in enumerate(steps)]
    TranscriptLog(path).append(records)
    last_row = {r.session_key: i for i, r in enumerate(records) if r.source_format != "live"}
    expected = [
        r
        for i, r in enumerate(records)
        if r.source_format != "live" or i > last_row.get(r.session_key, -1)
    ]
    assert list(TranscriptLog(path).read()) == expected


def _session(store, key: str, rows: int) -> None:
    store.upsert_session(Session(key=key, harness="claude-code", project="/p"))
    entries = [U(f"prompt {i}") if i % 2 == 0 else A(text=f"answer {i}") for i in range(rows)]
    for seq, e in enumerate(entries):
        e.seq = seq
    store.append(key, entries)


def _grow(store, key: str, start: int, rows: int) -> None:
    entries = [
        U(f"prompt {i}") if i % 2 == 0 else A(text=f"answer {i}")
        for i in range(start, start + rows)
    ]
    for seq, e in zip(range(start, start + rows), entries, strict=True):
        e.seq = seq
    store.append(key, entries)


def test_a_known_capture_appends_and_leaves_every_other_line_in_place(
    store, isolated_home: Path
) -> None:
    """With the ``FileState`` of its last capture, a grown session's new records are appended
    after its live record: the file keeps its inode and every byte it had, and reads exactly
    as a rewrite would (the live record superseded)."""
    _session(store, "s1", 2)
    _session(store, "other", 2)
    sync_session(store, "other", home=isolated_home)
    first = sync_session(store, "s1", home=isolated_home)
    text = "User: prompt 0\n\nAssistant: answer 1"
    assert first.state == FileState(2, content_hash(text), 1, len(text))
    path = transcript_path(isolated_home, "claude-code")
    TranscriptLog(path).append([rec("s1", 2, "User: prompt 2", live=True)])
    before, inode = path.read_bytes(), os.stat(path).st_ino
    _grow(store, "s1", 2, 2)
    second = sync_session(store, "s1", home=isolated_home, known=first.state)
    assert second.appended and second.records == 2
    assert os.stat(path).st_ino == inode and path.read_bytes().startswith(before)
    contents = [r.content for r in TranscriptLog(path).read(session_key="s1")]
    assert contents == [
        "User: prompt 0",
        "Assistant: answer 1",
        "User: prompt 2",
        "Assistant: answer 3",
    ]
    row = store.get_transcripts(["s1"], "default")["s1"]
    assert row.content == "\n\n".join(contents)
    assert TranscriptLog(path).digests()[("default", "s1")] == row.content_hash
    assert second.state == FileState(4, row.content_hash, 3, len(row.content))
    assert second.rows_read == 2  # only the new rows were read


def test_a_stale_file_state_rewrites_the_session(store, isolated_home: Path) -> None:
    """A ``FileState`` that no longer matches the rendered rows (another writer, a wrong
    count) makes the capture replace the session's records, as without one."""
    _session(store, "s2", 2)
    sync_session(store, "s2", home=isolated_home)
    _grow(store, "s2", 2, 1)
    path = transcript_path(isolated_home, "claude-code")
    inode = os.stat(path).st_ino
    done = sync_session(store, "s2", home=isolated_home, known=FileState(2, "0" * 64))
    assert not done.appended and os.stat(path).st_ino != inode
    assert [r.seq for r in TranscriptLog(path).read(session_key="s2")] == [0, 1, 2]


def test_a_known_capture_renders_only_the_new_rows(store, isolated_home: Path) -> None:
    """With the ``FileState`` of its last capture (its last seq and text length), a settled
    turn reads and renders only the rows after it; the live turns the row was given since are
    replaced by them; a turn without new rows leaves the row as it is."""
    _session(store, "s3", 40)
    first = sync_session(store, "s3", home=isolated_home)
    assert first.rows_read == 40 and first.state.last_seq == 39
    row = store.get_transcripts(["s3"], "default")["s3"]
    tx_extend = row.content + "\n\nUser: prompt 40"  # a live turn written after the capture
    from continuity.transcripts.session_transcripts import put_transcript

    put_transcript(store, "s3", tx_extend, harness="claude-code", project="/p")
    _grow(store, "s3", 40, 2)
    second = sync_session(store, "s3", home=isolated_home, known=first.state)
    assert second.rows_read == 2 and second.appended and second.records == 2
    row = store.get_transcripts(["s3"], "default")["s3"]
    full = [f"User: prompt {i}" if i % 2 == 0 else f"Assistant: answer {i}" for i in range(42)]
    assert row.content == "\n\n".join(full)
    path = transcript_path(isolated_home, "claude-code")
    assert [r.content for r in TranscriptLog(path).read(session_key="s3")] == full
    assert second.state == FileState(42, row.content_hash, 41, len(row.content))
    third = sync_session(store, "s3", home=isolated_home, known=second.state)
    assert third.rows_read == 0 and third.records == 0 and third.state == second.state
    assert store.get_transcripts(["s3"], "default")["s3"].content == row.content


def test_a_row_another_writer_changed_gets_the_full_capture(store, isolated_home: Path) -> None:
    """The stored row no longer starts with the text the last capture wrote: every row is
    rendered again and the row written whole."""
    _session(store, "s4", 4)
    first = sync_session(store, "s4", home=isolated_home)
    from continuity.transcripts.session_transcripts import put_transcript

    put_transcript(
        store, "s4", "User: something else entirely", harness="claude-code", project="/p"
    )
    _grow(store, "s4", 4, 1)
    again = sync_session(store, "s4", home=isolated_home, known=first.state)
    assert again.rows_read == 5  # all rendered again (the file still held the known
    path = transcript_path(isolated_home, "claude-code")  # records: the new one appended)
    assert [r.seq for r in TranscriptLog(path).read(session_key="s4")] == [0, 1, 2, 3, 4]
    row = store.get_transcripts(["s4"], "default")["s4"]
    assert row.content.startswith("User: prompt 0") and row.content.endswith("User: prompt 4")
