"""Lossless transcripts: records and their ids, the JSONL file (torn tails, snapshots, escaping,
safe paths), the session_transcripts row rules and completion paths, the rendering of rows and
the sanitized projection, import filling, and the `transcript` command."""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.core.errors import ConfigError, InputError
from continuity.core.model import Session, ThinkingBlock, ToolResultBlock
from continuity.formats.importer import import_paths
from continuity.transcripts import session_transcripts as tr
from continuity.transcripts.transcript_log import TranscriptLog, TranscriptRecord
from tests.builders import CP, A, T, U, call, load, stored_transcript
from tests.paths import SAMPLE_DIRS

T0 = datetime(2026, 9, 1, 8, 0, tzinfo=UTC)


def rec(
    seq: int = 0,
    content: str = "hello",
    *,
    key: str = "s1",
    agent: str = "default",
    role: str = "user",
    captured: str = "2026-09-01T08:00:00.000Z",
    path: str | None = "/src/a.jsonl",
) -> TranscriptRecord:
    return TranscriptRecord(
        agent, "claude-code", key, "/p", seq, role, content, "jsonl", path, captured, seq + 1
    )


# --------------------------------------------------------------------------- records


def test_record_id_is_sha256_of_identity_fields():
    """The id is the first 32 hex of SHA-256 over the compact JSON of the identity fields."""
    r = rec(3, "Found it")
    digest = hashlib.sha256(b"Found it").hexdigest()
    expected = hashlib.sha256(
        json.dumps(
            [tr.SCHEMA, "default", "claude-code", "s1", 3, "user", digest], separators=(",", ":")
        ).encode()
    ).hexdigest()[:32]
    assert r.id == expected and len(r.id) == 32


def test_record_id_stable_across_capture_and_source_changes_only():
    """Re-capturing (time, source path) keeps the id; any identity field changes it."""
    base = rec(1, "x")
    assert rec(1, "x", captured="2030-01-01T00:00:00.000Z", path="/moved.jsonl").id == base.id
    others = [
        rec(2, "x"),
        rec(1, "y"),
        rec(1, "x", key="s2"),
        rec(1, "x", agent="a2"),
        rec(1, "x", role="assistant"),
    ]
    assert len({base.id, *(o.id for o in others)}) == 6


def test_record_content_sha256_is_hex_of_utf8():
    """content_sha256 is the lowercase hex SHA-256 of the UTF-8 content, no normalisation."""
    text = "héllo 🎉 \r\n  "
    assert rec(0, text).content_sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert tr.content_hash(text) == rec(0, text).content_sha256


def test_record_from_dict_rejects_tampered_content():
    """A line whose content no longer matches its hash and id is refused."""
    data = rec(0, "original").to_dict()
    assert TranscriptRecord.from_dict(dict(data)) == rec(0, "original")
    data["content"] = "edited"
    with pytest.raises(ValueError, match="does not match"):
        TranscriptRecord.from_dict(data)


def test_record_dict_field_order_ends_with_id():
    """The line's fields come in the documented order, id last."""
    assert list(rec().to_dict()) == [
        "schema",
        "captured_at",
        "agent_id",
        "harness",
        "session_key",
        "project",
        "seq",
        "role",
        "content",
        "source_format",
        "source_path",
        "source_line",
        "content_sha256",
        "id",
    ]


def test_encode_record_is_one_line_for_every_line_breaker():
    """Controls, DEL, C1 (NEL) and U+2028/U+2029 are escaped: one record, one line."""
    nasty = "a\nb\rc\x00d\x0be\x0cf\x1cg\x1dh\x1ei\x85j\u2028k\u2029l\x7fm\x9fn\ud83c"
    line = tr.encode_record(rec(0, tr.storable(nasty)))
    assert line.count(b"\n") == 1 and line.endswith(b"\n")
    text = line.decode("utf-8")
    assert len(text.splitlines()) == 1
    assert TranscriptRecord.from_dict(json.loads(text)).content == tr.storable(nasty)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_encode_record_fast_path_matches_the_escaping_rule(text):
    """Issue 17: the byte-level shortcut gives exactly the line the regex rule gives, for any
    text (the line breakers among ASCII, Latin-1 and the general punctuation block included)."""
    import re

    from continuity.core.text import json_bytes

    record = rec(0, tr.storable(text))
    expected = (
        re.sub(
            "[\x7f-\x9f\u2028\u2029]",
            lambda m: f"\\u{ord(m.group()):04x}",
            json_bytes(record.to_dict()).decode("utf-8"),
        ).encode("utf-8")
        + b"\n"
    )
    assert tr.encode_record(record) == expected


def test_append_writes_whole_lines_past_the_write_chunk(tmp_path, monkeypatch):
    """Records appended in several writes (chunk of 100 bytes) are still whole, in order."""
    from continuity.transcripts import transcript_log

    monkeypatch.setattr(transcript_log, "WRITE_CHUNK_BYTES", 100)
    log = TranscriptLog(tmp_path / "t.jsonl")
    assert log.append([rec(i, f"row {i} " * 5) for i in range(7)]) == 7
    lines = (tmp_path / "t.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 8
    assert [TranscriptRecord.from_dict(json.loads(x)).seq for x in lines[:-1]] == list(range(7))


# --------------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    "name, folded",
    [
        ("claude-code", "claude-code"),
        ("Claude Code", "claude-code"),
        ("../../etc", "etc"),
        ("..", "unknown"),
        ("", "unknown"),
        ("a/b\\c", "a-b-c"),
        ("  .hidden ", "hidden"),
    ],
)
def test_safe_name_folds_into_one_segment(name, folded):
    """Harness names become one safe segment; dots and slashes never climb."""
    assert tr.safe_name(name) == folded


def test_session_key_never_reaches_a_path(sqlite_store, isolated_home):
    """A session key like ../../etc/passwd and a hostile harness write only under memory/."""
    load(sqlite_store, [U("hi")], key="../../etc/passwd")
    sqlite_store.upsert_session(Session(key="../../etc/passwd", harness="../../etc"))
    tr.sync_session(sqlite_store, "../../etc/passwd", home=isolated_home, fsync=False)
    files = sorted(
        p.relative_to(isolated_home).as_posix() for p in isolated_home.rglob("*") if p.is_file()
    )
    assert files == [
        "memory/etc/transcripts/transcript.jsonl",
        "memory/etc/transcripts/transcript.jsonl.lock",
    ]
    [record] = TranscriptLog(isolated_home / files[0]).read()
    assert record.session_key == "../../etc/passwd" and record.harness == "../../etc"


# --------------------------------------------------------------------------- the JSONL file


def test_log_append_then_read_round_trips(tmp_path):
    """Appended records read back equal, in order; the count is returned."""
    log = TranscriptLog(tmp_path / "t" / "transcript.jsonl", fsync=False)
    records = [rec(i, f"turn {i}") for i in range(3)]
    assert log.append(records) == 3
    assert list(log.read()) == records
    assert list(log.read(session_key="other")) == []


def test_log_repairs_torn_tail_before_append(tmp_path):
    """B36: a crash fragment is cut (kept in .torn) and the next record parses."""
    path = tmp_path / "transcript.jsonl"
    log = TranscriptLog(path, fsync=False)
    log.append([rec(0)])
    fragment = b'{"type":"message","text":"hal'
    with open(path, "ab") as fh:
        fh.write(fragment)
    log.append([rec(1, "after")])
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3
    assert [TranscriptRecord.from_dict(json.loads(x)).seq for x in lines[:2]] == [0, 1]
    assert log.torn_bytes == len(fragment)
    assert path.with_name("transcript.jsonl.torn").read_bytes() == fragment + b"\n"


def test_log_keeps_complete_record_missing_only_its_newline(tmp_path):
    """A last line that still parses only gets its newline; nothing is dropped."""
    path = tmp_path / "transcript.jsonl"
    path.write_bytes(tr.encode_record(rec(0)).rstrip(b"\n"))
    log = TranscriptLog(path, fsync=False)
    assert log.repair_tail() == 0
    log.append([rec(1)])
    assert [r.seq for r in log.read()] == [0, 1]


def test_log_read_reports_bad_lines_and_skips_unterminated_tail(tmp_path):
    """Bad lines are listed with line numbers; a tail being written is not read."""
    path = tmp_path / "transcript.jsonl"
    path.write_bytes(
        tr.encode_record(rec(0)) + b"not json\n" + tr.encode_record(rec(1)) + b'{"partial": '
    )
    bad: list[tuple[int, str]] = []
    assert [r.seq for r in TranscriptLog(path).read(bad=bad)] == [0, 1]
    assert [n for n, _ in bad] == [2]


def test_log_replace_session_keeps_other_sessions_byte_for_byte(tmp_path):
    """A snapshot replaces one session's records; other lines keep their bytes and order."""
    path = tmp_path / "transcript.jsonl"
    log = TranscriptLog(path, fsync=False)
    log.append(
        [
            rec(0, "a0", key="a"),
            rec(0, "b0", key="b"),
            rec(1, "a1", key="a"),
            rec(1, "b1", key="b"),
            rec(0, "a-other-agent", key="a", agent="x"),
        ]
    )
    others = [
        ln
        for ln in path.read_bytes().splitlines(keepends=True)
        if b'"session_key":"b"' in ln or b'"agent_id":"x"' in ln
    ]
    inode = path.stat().st_ino
    assert log.replace_session("default", "a", [rec(0, "A0", key="a")]) == 1
    lines = path.read_bytes().splitlines(keepends=True)
    assert lines[:3] == others
    assert [r.content for r in log.read(session_key="a", agent_id="default")] == ["A0"]
    assert path.stat().st_ino != inode  # replaced by rename, never rewritten in place
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "transcript.jsonl",
        "transcript.jsonl.lock",
    ]


def test_log_replace_sessions_rewrites_the_file_once_for_several_sessions(tmp_path, monkeypatch):
    """Several snapshots in one pass: each named session's records (that agent's only, keys
    with quotes and line separators included) are replaced, in the mapping's order after every
    other line, whose bytes and order are kept; the file is copied once, not once a session."""
    path = tmp_path / "transcript.jsonl"
    log = TranscriptLog(path, fsync=False)
    odd = 'q"\u2028k'
    log.append(
        [
            rec(0, "a0", key="a"),
            rec(0, "b0", key="b"),
            rec(0, "odd0", key=odd),
            rec(1, "a1", key="a"),
            rec(0, "c0", key="c"),
            rec(0, "a-other-agent", key="a", agent="x"),
        ]
    )
    others = [
        ln
        for ln in path.read_bytes().splitlines(keepends=True)
        if b'"session_key":"b"' in ln or b'"agent_id":"x"' in ln
    ]
    replaced: list[str] = []
    real = tr.os.replace
    monkeypatch.setattr(tr.os, "replace", lambda a, b: (replaced.append(str(b)), real(a, b)))
    written = log.replace_sessions(
        {
            ("default", "c"): [rec(0, "C0", key="c")],
            ("default", "a"): [rec(0, "A0", key="a"), rec(1, "A1", key="a")],
            ("default", odd): [rec(0, "ODD0", key=odd)],
        }
    )
    assert written == 4 and replaced == [str(path)]
    assert path.read_bytes().splitlines(keepends=True)[:2] == others
    assert [(r.agent_id, r.session_key, r.content) for r in log.read()] == [
        ("default", "b", "b0"),
        ("x", "a", "a-other-agent"),
        ("default", "c", "C0"),
        ("default", "a", "A0"),
        ("default", "a", "A1"),
        ("default", odd, "ODD0"),
    ]


def test_log_replace_sessions_appends_when_the_file_holds_none_of_them(tmp_path):
    """No line of any named session in the file: their records are appended in place."""
    path = tmp_path / "transcript.jsonl"
    log = TranscriptLog(path, fsync=False)
    log.append([rec(0, key="b")])
    inode = path.stat().st_ino
    assert log.replace_sessions({("default", "a"): [rec(0, key="a")], ("x", "b"): []}) == 1
    assert path.stat().st_ino == inode
    assert [r.session_key for r in log.read()] == ["b", "a"]


def test_log_replace_session_failure_leaves_file_unchanged(tmp_path):
    """A snapshot that fails midway leaves the old file whole and no temp file behind."""
    path = tmp_path / "transcript.jsonl"
    log = TranscriptLog(path, fsync=False)
    log.append([rec(0, key="a"), rec(0, key="b")])
    before = path.read_bytes()

    def failing():
        yield rec(0, "new", key="a")
        raise RuntimeError("disk gone")

    with pytest.raises(RuntimeError):
        log.replace_session("default", "a", failing())
    assert path.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_log_replace_session_appends_when_session_absent(tmp_path):
    """A session with no records yet is appended without rewriting the file."""
    path = tmp_path / "transcript.jsonl"
    log = TranscriptLog(path, fsync=False)
    log.append([rec(0, key="b")])
    inode = path.stat().st_ino
    log.replace_session("default", "a", [rec(0, key="a")])
    assert path.stat().st_ino == inode
    assert [r.session_key for r in log.read()] == ["b", "a"]


def test_log_replace_session_repairs_torn_tail_first(tmp_path):
    """A snapshot over a file with a crash fragment keeps the fragment in .torn, not silently."""
    path = tmp_path / "transcript.jsonl"
    log = TranscriptLog(path, fsync=False)
    log.append([rec(0, key="a"), rec(0, key="b")])
    with open(path, "ab") as fh:
        fh.write(b'{"half')
    log.replace_session("default", "a", [rec(1, key="a")])
    assert [(r.session_key, r.seq) for r in log.read()] == [("b", 0), ("a", 1)]
    assert path.with_name("transcript.jsonl.torn").read_bytes() == b'{"half\n'


# --------------------------------------------------------------------------- row rules


def test_put_transcript_new_row_has_hash_and_is_open(store):
    """A new row: sha256 of the UTF-8 content, created = updated, not completed."""
    w = tr.put_transcript(store, "s1", "User: hé", harness="pi", project="/p", now=T0)
    assert w == tr.TranscriptWrite(inserted=True)
    row = store.get_transcripts(["s1"], "default")["s1"]
    assert row.content_hash == hashlib.sha256("User: hé".encode()).hexdigest()
    assert (row.created_at, row.updated_at, row.completed_at) == (T0, T0, None)
    assert (row.harness, row.project, row.agent_id) == ("pi", "/p", "default")


def test_put_transcript_unchanged_content_changes_nothing(store):
    """Writing the same content later leaves updated_at and completion as they were."""
    tr.put_transcript(store, "s1", "same", now=T0, completed_at=T0)
    w = tr.put_transcript(store, "s1", "same", now=T0 + timedelta(hours=1))
    assert w == tr.TranscriptWrite()
    row = store.get_transcripts(["s1"], "default")["s1"]
    assert (row.updated_at, row.completed_at) == (T0, T0)


def test_put_transcript_changed_content_updates_and_reopens(store):
    """Changed content sets updated_at and re-opens a completed row."""
    tr.put_transcript(store, "s1", "v1", now=T0, completed_at=T0)
    later = T0 + timedelta(minutes=5)
    assert tr.put_transcript(store, "s1", "v2", now=later).changed
    row = store.get_transcripts(["s1"], "default")["s1"]
    assert (row.content, row.created_at, row.updated_at, row.completed_at) == (
        "v2",
        T0,
        later,
        None,
    )


def test_complete_transcript_is_idempotent_first_completion_wins(store):
    """Marking complete twice keeps the first time; the second reports no change."""
    tr.put_transcript(store, "s1", "v1", now=T0)
    assert store.complete_transcript("s1", "default", T0 + timedelta(hours=1))
    assert not store.complete_transcript("s1", "default", T0 + timedelta(hours=2))
    assert not tr.put_transcript(store, "s1", "v1", completed_at=T0 + timedelta(hours=3)).completed
    assert store.get_transcripts(["s1"], "default")["s1"].completed_at == T0 + timedelta(hours=1)
    assert not store.complete_transcript("missing", "default", T0)


def test_put_transcript_changed_with_completion_closes_new_revision(store):
    """Changed content given with a completion time is written, then completed at that time."""
    tr.put_transcript(store, "s1", "v1", now=T0, completed_at=T0)
    done = T0 + timedelta(hours=2)
    assert tr.put_transcript(store, "s1", "v2", now=done, completed_at=done) == tr.TranscriptWrite(
        changed=True, completed=True
    )
    assert store.get_transcripts(["s1"], "default")["s1"].completed_at == done


def test_put_transcript_rows_are_per_agent(store):
    """The same session key under two agents is two rows."""
    tr.put_transcript(store, "s1", "main", now=T0)
    tr.put_transcript(store, "s1", "helper", agent_id="helper", now=T0)
    assert store.get_transcripts(["s1"], "default")["s1"].content == "main"
    assert store.get_transcripts(["s1"], "helper")["s1"].content == "helper"


def test_put_transcript_rejects_blank_key_and_stores_nul_safely(store):
    """A blank key is an InputError naming the field; NUL becomes U+FFFD (PostgreSQL-safe)."""
    with pytest.raises(InputError, match="session_key"):
        tr.put_transcript(store, "  ", "x")
    tr.put_transcript(store, "s1", "a\x00b")
    assert store.get_transcripts(["s1"], "default")["s1"].content == "a\ufffdb"


def test_extend_transcript_writes_only_the_new_text_as_a_part(store):
    """Issue 17 (revision 0018): text that only grew is written as the row's next part (the
    parts before it stay as they are); the row reads as the whole text with the hash of the
    whole, updated and re-opened; a replace leaves one part, the new text."""
    tr.put_transcript(store, "s1", "User: a", harness="pi", now=T0, completed_at=T0)
    row = store.get_transcripts(["s1"], "default")["s1"]
    later = T0 + timedelta(minutes=1)
    w = tr.extend_transcript(store, row, "\n\nAssistant: b", harness="pi", project="/p", now=later)
    assert w == tr.TranscriptWrite(changed=True)
    row = store.get_transcripts(["s1"], "default")["s1"]
    tr.extend_transcript(
        store, row, "\n\nUser: c\x00", harness="pi", project="/p", now=later + timedelta(minutes=1)
    )
    assert stored_transcript(store, "s1") == ["User: a", "\n\nAssistant: b", "\n\nUser: c\ufffd"]
    row = store.get_transcripts(["s1"], "default")["s1"]
    whole = "User: a\n\nAssistant: b\n\nUser: c\ufffd"
    assert row.content == whole
    assert row.content_hash == hashlib.sha256(whole.encode()).hexdigest()
    assert (row.project, row.updated_at, row.completed_at) == (
        "/p",
        later + timedelta(minutes=1),
        None,
    )
    assert tr.put_transcript(store, "s1", "User: z", harness="pi", now=later).changed
    assert stored_transcript(store, "s1") == ["User: z"]
    assert store.get_transcripts(["s1"], "default")["s1"].content == "User: z"


def test_extend_transcript_after_another_writer_writes_the_whole_text(store):
    """An extend from a row read before another writer changed it writes the whole text
    (the caller's read plus its tail), not a part on top of text it never saw; the store's
    compare-and-set refuses the stale hash."""
    tr.put_transcript(store, "s1", "v1", now=T0)
    stale = store.get_transcripts(["s1"], "default")["s1"]
    tr.put_transcript(store, "s1", "v2", now=T0)
    assert not store.append_transcript(
        "s1",
        "default",
        tail="\n\nx",
        content_hash=tr.content_hash("v1\n\nx"),
        expected_hash=stale.content_hash,
        harness="manual",
        project=None,
        updated_at=T0,
    )
    assert stored_transcript(store, "s1") == ["v2"]
    w = tr.extend_transcript(
        store,
        stale,
        "\n\nmore",
        harness="manual",
        project=None,
        completed_at=T0 + timedelta(hours=1),
    )
    assert w == tr.TranscriptWrite(changed=True, completed=True)
    assert stored_transcript(store, "s1") == ["v1\n\nmore"]
    assert not store.append_transcript(
        "missing",
        "default",
        tail="\n\nx",
        content_hash="0" * 64,
        expected_hash="1" * 64,
        harness="manual",
        project=None,
        updated_at=T0,
    )


def test_transcript_parts_are_compressed_where_that_pays(store):
    """Revision 0018: a long part is kept as a zstd frame (codec 1) and a short one as its
    bytes (codec NULL); both read back exact, on each backend."""
    from sqlalchemy import select

    from continuity.store import schema

    long_text = "\n\n".join(
        f"Assistant: step {i} of the migration plan, héllo 世界" for i in range(400)
    )
    tr.put_transcript(store, "s1", long_text, now=T0)
    row = store.get_transcripts(["s1"], "default")["s1"]
    tr.extend_transcript(store, row, "\n\nUser: ok", harness="manual", project=None, now=T0)
    p = schema.session_transcript_parts.c
    with store.engine.connect() as conn:
        stored = conn.execute(select(p.part, p.codec, p.data).order_by(p.part)).all()
    assert [(n, codec) for n, codec, _ in stored] == [(0, 1), (1, None)]
    assert len(stored[0][2]) < len(long_text.encode()) // 5
    assert bytes(stored[1][2]) == b"\n\nUser: ok"
    assert store.get_transcripts(["s1"], "default")["s1"].content == long_text + "\n\nUser: ok"


def _pages(db: Path) -> list[bytes]:
    """The database file's 4 KiB pages after a WAL checkpoint (every commit in the file)."""
    import sqlite3

    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = db.read_bytes()
    return [data[i : i + 4096] for i in range(0, len(data), 4096)]


@pytest.mark.parametrize("completed", [False, True])
def test_append_to_a_long_row_changes_a_few_pages_not_its_text(tmp_path, completed):
    """Issue 17 (revision 0018): an append to a 1 MB transcript row (open, or completed and
    completed again as an import does) changes a handful of the database's pages, not the
    ~130 pages of the row's compressed text (the text is in parts written once; the row
    holds small columns)."""
    from continuity.store import open_store

    db = tmp_path / "c.db"
    with open_store(f"sqlite:///{db}") as store:
        text = "\n\n".join(
            f"User: line {i} " + hashlib.sha256(str(i).encode()).hexdigest() * 3
            for i in range(5_000)
        )  # 1 MB that compresses to about half
        tr.put_transcript(store, "s1", text, now=T0, completed_at=T0 if completed else None)
        row = store.get_transcripts(["s1"], "default")["s1"]
        before = _pages(db)
        tr.extend_transcript(
            store,
            row,
            "\n\nUser: one more",
            harness="manual",
            project=None,
            now=T0 + timedelta(hours=1),
            completed_at=T0 + timedelta(hours=1) if completed else None,
        )
        after = _pages(db)
        row = store.get_transcripts(["s1"], "default")["s1"]
    assert row.content == text + "\n\nUser: one more"
    assert row.completed_at == (T0 + timedelta(hours=1) if completed else None)
    changed = sum(1 for a, b in zip(before, after, strict=False) if a != b) + abs(
        len(after) - len(before)
    )
    assert len(before) > 120 and changed <= 8, (changed, len(before))


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(st.tuples(st.booleans(), st.text(max_size=30)), min_size=1, max_size=12))
def test_property_a_row_reads_as_every_write_applied(sqlite_store, steps):
    """Any sequence of appends (extend_transcript) and replaces (put_transcript) leaves a row
    that reads as the same writes applied to one string, with that string's hash."""
    key = f"p{hashlib.sha256(repr(steps).encode()).hexdigest()[:16]}"
    expected = ""
    for replace, text in steps:
        text = tr.storable(text)
        row = sqlite_store.get_transcripts([key], "default").get(key)
        if replace or row is None:
            tr.put_transcript(sqlite_store, key, text, now=T0)
            expected = text
        else:
            tail = f"\n\n{text}" if row.content else text
            tr.extend_transcript(sqlite_store, row, tail, harness="manual", project=None, now=T0)
            expected += tail
    row = sqlite_store.get_transcripts([key], "default")[key]
    assert row.content == expected
    assert row.content_hash == hashlib.sha256(expected.encode()).hexdigest()


@given(st.text(), st.lists(st.text(), max_size=5))
def test_property_text_digest_equals_the_hash_of_the_whole_text(first, tails):
    """The daemon's running hash (``TextDigest``) of a text grown by ``tails`` equals
    ``content_hash`` of the whole text at every step, and extending leaves the old digest."""
    digest, text = tr.TextDigest(first), first
    assert digest.hex == tr.content_hash(first) and digest.empty == (first == "")
    for tail in tails:
        grown = digest.extended(tail)
        assert digest.hex == tr.content_hash(text)
        text += tail
        digest = grown
        assert digest.hex == tr.content_hash(text)


# --------------------------------------------------------------------------- completion paths


def test_end_session_captures_and_completes(store, isolated_home):
    """Session end renders the final transcript and completes the row once."""
    load(store, [U("fix it"), A(text="done")])
    assert tr.end_session(store, "s1", home=isolated_home, at=T0)
    row = store.get_transcripts(["s1"], "default")["s1"]
    assert row.content == "User: fix it\n\nAssistant: done" and row.completed_at == T0
    assert not tr.end_session(store, "s1", home=isolated_home, at=T0 + timedelta(hours=1))


def test_recover_after_clear_completes_previous_then_latest_open(store):
    """Clear-start recovery completes the named previous row, else the newest open one."""
    for i, key in enumerate(["old", "newer", "current"]):
        tr.put_transcript(store, key, key, harness="claude-code", now=T0 + timedelta(minutes=i))
    assert tr.recover_after_clear(store, "current", previous_key="old", at=T0) == "old"
    assert tr.recover_after_clear(store, "current", at=T0) == "newer"
    assert tr.recover_after_clear(store, "current", at=T0) is None
    assert store.get_transcripts(["current"], "default")["current"].completed_at is None


def test_recover_after_clear_respects_harness_and_project(store):
    """Only an open row of the same harness and project is completed."""
    tr.put_transcript(store, "pi-row", "x", harness="pi", project="/a", now=T0)
    tr.put_transcript(store, "cc-row", "x", harness="claude-code", project="/b", now=T0)
    assert tr.recover_after_clear(store, "new", harness="pi", project="/b") is None
    assert tr.recover_after_clear(store, "new", harness="pi", project="/a") == "pi-row"


def test_sweep_idle_completes_rows_idle_past_the_configured_limit(store, isolated_home):
    """The TTL sweep reads [transcripts] idle_limit_minutes and completes only idle rows."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text("[transcripts]\nidle_limit_minutes = 30\n")
    tr.put_transcript(store, "idle", "x", now=T0)
    tr.put_transcript(store, "busy", "x", now=T0 + timedelta(minutes=20))
    now = T0 + timedelta(minutes=40)
    assert tr.sweep_idle(store, home=isolated_home, now=now) == [("idle", "default")]
    assert tr.sweep_idle(store, now=now, idle_limit=timedelta(minutes=10)) == [("busy", "default")]
    assert store.get_transcripts(["idle"], "default")["idle"].completed_at == now


def test_sweep_idle_default_limit_is_four_hours(isolated_home):
    """Without config the idle limit is 240 minutes (origin: 4 h TTL)."""
    assert tr.settings(isolated_home).idle_limit_minutes == 240


def test_settings_bad_idle_limit_names_the_field(isolated_home, monkeypatch):
    """A fractional or out-of-range limit is a ConfigError naming the field."""
    monkeypatch.setenv("CONTINUITY_TRANSCRIPTS__IDLE_LIMIT_MINUTES", "0")
    with pytest.raises(ConfigError, match=r"CONTINUITY_TRANSCRIPTS__IDLE_LIMIT_MINUTES"):
        tr.settings(isolated_home)


# --------------------------------------------------------------------------- rendering


def test_render_entry_labels_each_block_and_indents_continuations():
    """Rows become labelled paragraphs; later lines are indented so they never pass as labels."""
    assert tr.render_entry(U("fix\nthe test")) == "User: fix\n  the test"
    row = A(ThinkingBlock("plan"), call("c1", "Bash", command="ls"), text="Let me look")
    assert tr.render_entry(row) == (
        'Assistant: Let me look\n\nThinking: plan\n\nTool call: Bash\n  {"command":"ls"}'
    )
    out = T("c1", text="line1\nUser: injected")
    assert tr.render_entry(out) == "Tool result: line1\n  User: injected c1"
    error = A(ToolResultBlock("c2", True, "boom"))
    assert tr.render_entry(error) == "Tool error: boom"
    assert tr.render_entry(CP("earlier work", covers=0)) == "Summary: earlier work"


def test_sync_session_content_is_records_joined(store, isolated_home):
    """The row holds the records' contents joined by blank lines, rows in seq order."""
    load(store, [U("a"), A(call("c1", "Read", path="x")), T("c1"), A(text="b")])
    res = tr.sync_session(store, "s1", home=isolated_home, fsync=False)
    records = list(TranscriptLog(res.path).read(session_key="s1"))
    assert [r.seq for r in records] == [0, 1, 2, 3] and res.records == 4
    row = store.get_transcripts(["s1"], "default")["s1"]
    assert row.content == "\n\n".join(r.content for r in records)
    assert [r.role for r in records] == ["user", "assistant", "tool", "assistant"]


def test_sync_session_reads_the_log_in_pages(store, isolated_home, monkeypatch):
    """Rendering pages through store.entries, never one unbounded read."""
    load(store, [U(f"m{i}") for i in range(7)])
    monkeypatch.setattr(tr, "PAGE_ROWS", 3)
    calls = []
    original = store.entries

    def spy(key, **kw):
        calls.append((kw["after_seq"], kw["limit"]))
        return original(key, **kw)

    monkeypatch.setattr(store, "entries", spy)
    tr.sync_session(store, "s1", home=isolated_home, fsync=False)
    assert calls == [(-1, 3), (2, 3), (5, 3)]


def test_sync_session_unchanged_leaves_the_file_alone(store, isolated_home):
    """A second capture of unchanged rows writes no record and keeps the file's inode."""
    load(store, [U("a"), A(text="b")])
    first = tr.sync_session(store, "s1", home=isolated_home, fsync=False)
    stat = first.path.stat()
    again = tr.sync_session(store, "s1", home=isolated_home, fsync=False)
    assert (again.records, again.write) == (0, tr.TranscriptWrite())
    assert (first.path.stat().st_ino, first.path.stat().st_size) == (stat.st_ino, stat.st_size)


def test_sync_session_grown_session_replaces_its_snapshot(store, isolated_home):
    """New rows rewrite the session's records whole (no duplicates) and re-open its row."""
    load(store, [U("a")])
    tr.sync_session(store, "s1", home=isolated_home, fsync=False, completed_at=T0)
    load(store, [A(text="b")])
    res = tr.sync_session(store, "s1", home=isolated_home, fsync=False)
    assert res.write.changed
    assert [r.seq for r in TranscriptLog(res.path).read()] == [0, 1]
    assert store.get_transcripts(["s1"], "default")["s1"].completed_at is None


def test_sync_import_fills_every_session_of_shared_data(store, shared_data, isolated_home):
    """Importing ../shared/data gives every session a row and matching JSONL records."""
    report = import_paths(store, SAMPLE_DIRS)
    assert tr.sync_import(store, report, isolated_home) == len(report.sessions) == 12
    rows = store.get_transcripts(report.sessions, "default")
    sessions = {s.key: s for s in store.list_sessions()}
    for key in report.sessions:
        agent = sessions[key].agent_id
        row = rows.get(key) or store.get_transcripts([key], agent)[key]
        assert row.content and row.content_hash == tr.content_hash(row.content)
        log = TranscriptLog(tr.transcript_path(isolated_home, sessions[key].harness))
        records = list(log.read(session_key=key, agent_id=agent))
        assert "\n\n".join(r.content for r in records) == row.content
        assert {r.source_format for r in records} == {
            {
                "claude-code": "claude-code-jsonl",
                "codex": "codex-rollout-jsonl",
                "pi": "pi-session-jsonl",
            }[sessions[key].harness]
        }
        assert row.completed_at is not None  # the samples are long idle
    assert tr.sync_import(store, import_paths(store, SAMPLE_DIRS), isolated_home) == 0


def test_sync_import_report_one_failing_session_does_not_stop_the_others(
    store, shared_data, isolated_home, caplog
):
    """A session whose key the row refuses is returned with its reason (and logged); every
    other session is captured, and nothing of the failing one is written."""
    from continuity.formats.importer import FileReport

    report = import_paths(store, [shared_data / "claude-code"])
    store.upsert_session(Session(key=" ", harness="claude-code"))
    report.files.insert(0, FileReport("/src/blank.jsonl", session_key=" "))
    done = tr.sync_import_report(store, report, isolated_home)
    assert done.failed == [(" ", "session_key: must be 1..200 characters (got ' ')")]
    assert done.captured == len(report.sessions) - 1 == 5
    assert set(store.get_transcripts(report.sessions, "default")) == set(report.sessions) - {" "}
    assert "transcript of session ' ' not captured: session_key: must be" in caplog.text


def test_sync_import_keeps_its_count_and_logs_failures(store, shared_data, isolated_home):
    """``sync_import`` still returns the captured count when a session fails."""
    from continuity.formats.importer import FileReport

    report = import_paths(store, [shared_data / "claude-code" / "short.jsonl"])
    store.upsert_session(Session(key=" ", harness="claude-code"))
    report.files.append(FileReport("/src/blank.jsonl", session_key=" "))
    assert tr.sync_import(store, report, isolated_home) == 1


@pytest.mark.parametrize("cut", ["mid-record", "before-its-key"])
def test_torn_record_is_rewritten_from_the_database_on_the_next_snapshot(
    store, shared_data, isolated_home, cut
):
    """A file cut mid-record loses that line at the next write; the session it belonged to
    is rewritten from the database there, so all its records are present and parse."""
    first = import_paths(store, [shared_data / "claude-code" / "short.jsonl"])
    assert tr.sync_import(store, first, isolated_home) == 1
    key = first.sessions[0]
    path = tr.transcript_path(isolated_home, "claude-code")
    seqs = [r.seq for r in TranscriptLog(path).read(session_key=key)]
    assert len(seqs) >= 2
    data = path.read_bytes()
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: len(data) - 40] if cut == "mid-record" else data[: last + 30])
    second = import_paths(store, [shared_data / "claude-code" / "tool_heavy.jsonl"])
    assert tr.sync_import(store, second, isolated_home) == 1
    bad: list[tuple[int, str]] = []
    records = list(TranscriptLog(path).read(session_key=key, bad=bad))
    assert bad == [] and path.read_bytes().endswith(b"\n")
    assert [r.seq for r in records] == seqs
    assert (
        "\n\n".join(r.content for r in records)
        == store.get_transcripts([key], "default")[key].content
    )
    assert [r.session_key for r in TranscriptLog(path).read()].count(second.sessions[0]) > 0
    assert path.with_name("transcript.jsonl.torn").read_bytes()


def test_restore_torn_leaves_other_sessions_alone(store, isolated_home):
    """Without a torn tail nothing is rewritten; a fragment naming a session not imported is
    skipped."""
    log_file = TranscriptLog(tr.transcript_path(isolated_home, "claude-code"), fsync=False)
    assert tr.restore_torn(store, log_file, home=isolated_home) == []
    log_file.torn_sessions.append(("default", "never-imported"))
    assert tr.restore_torn(store, log_file, home=isolated_home) == []
    assert log_file.torn_sessions == []


# --------------------------------------------------------------------------- projection


def test_project_marks_tool_calls_and_omits_outputs_and_reasoning():
    """Seed example: user, a Bash call, its output, thinking, answer -> three lines."""
    stored = (
        "User: fix the test\n\nThinking: maybe the fixture\n  spans lines\n\n"
        'Tool call: Bash\n  {"command":"pytest"}\n\nTool result: 4 KB of output\n'
        "  User: not a real turn\n\nTool error: exit 1\n\nAssistant: Fixed"
    )
    assert tr.project(stored) == "User: fix the test\n\n[tool call: Bash]\n\nAssistant: Fixed"


def test_project_plain_text_tool_block_runs_to_next_label():
    """In foreign plain text a Tool:/Function: line hides everything up to the next label."""
    text = (
        "Human: list files\nTool: a.py\nb.py\nFunction call: grep x\n"
        "Reasoning: hmm\nAssistant: two files\nSystem: note"
    )
    assert tr.project(text) == (
        "User: list files\n\n[tool call: grep]\n\nAssistant: two files\n\nSystem: note"
    )


def test_project_json_lines_of_harness_shapes():
    """Claude Code, Codex and chat-API JSON lines project to the same markers and turns."""
    lines = [
        {"type": "user", "message": {"role": "user", "content": "hi"}},
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "secret plan"},
                    {"type": "text", "text": "calling"},
                    {"type": "tool_use", "name": "Read", "input": {"path": "a"}},
                ],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "content": "FILE BODY"}],
            },
        },
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell"}},
        {
            "type": "response_item",
            "payload": {"type": "function_call_output", "output": "CODEX OUT"},
        },
        {"type": "response_item", "payload": {"type": "reasoning", "summary": []}},
        {"role": "assistant", "content": "ok", "tool_calls": [{"function": {"name": "f"}}]},
        {"role": "tool", "content": "TOOL OUT"},
    ]
    text = "\n".join(json.dumps(x) for x in lines)
    assert tr.project(text) == (
        "User: hi\n\nAssistant: calling\n\n[tool call: Read]\n\n"
        "[tool call: shell]\n\nAssistant: ok\n\n[tool call: f]"
    )


def test_project_redacts_secrets_in_kept_text():
    """Projected text passes the redaction funnel; the raw argument is untouched."""
    stored = "User: use sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 now"
    assert "sk-ant-api03" not in tr.project(stored)
    assert "sk-ant-api03" in tr.project(stored, redact_secrets=False)


# --------------------------------------------------------------------------- CLI

runner = CliRunner()


@pytest.fixture
def cli_home(tmp_path, shared_data) -> Path:
    """A workspace with the Claude Code samples imported and their transcripts filled."""
    from continuity.store import open_store

    home = tmp_path / "cli"
    with open_store(home / "continuity.db") as s:
        tr.sync_import(s, import_paths(s, [shared_data / "claude-code"]), home)
    return home


def test_cli_transcript_sanitized_shows_markers_and_no_tool_output(cli_home):
    """`transcript --sanitized` shows [tool call: NAME] and none of the tool outputs."""
    raw = runner.invoke(app, ["transcript", "5c0375b4", "--home", str(cli_home)])
    clean = runner.invoke(app, ["transcript", "5c0375b4", "--sanitized", "--home", str(cli_home)])
    assert raw.exit_code == 0 and clean.exit_code == 0
    assert "Tool result: Todos have been modified successfully" in raw.stdout
    assert "[tool call: TodoWrite]" in clean.stdout and "[tool call: Glob]" in clean.stdout
    for label in ("Tool result:", "Tool error:", "Tool call:", "Thinking:"):
        assert label not in clean.stdout
    assert "Todos have been modified" not in clean.stdout


def test_cli_transcript_json_and_stored_row_untouched(cli_home):
    """--json gives the row's fields; projecting never rewrites the stored row."""
    before = runner.invoke(app, ["transcript", "5c0375b4", "--json", "--home", str(cli_home)])
    after_sanitized = runner.invoke(
        app, ["transcript", "5c0375b4", "--sanitized", "--json", "--home", str(cli_home)]
    )
    again = runner.invoke(app, ["transcript", "5c0375b4", "--json", "--home", str(cli_home)])
    first, projected, second = (json.loads(r.stdout) for r in (before, after_sanitized, again))
    assert first == second and projected["sanitized"] is True
    assert first["session"] == "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    assert first["content_hash"] == tr.content_hash(first["content"])
    assert first["harness"] == "claude-code" and first["sanitized"] is False


def test_cli_transcript_unknown_session_exit_3(cli_home, monkeypatch, capsys):
    """An unknown session is one line on stderr naming `continuity sessions`, exit 3."""
    from continuity.cli import app as cli

    monkeypatch.setattr(sys, "argv", ["continuity", "transcript", "nope", "--home", str(cli_home)])
    with pytest.raises(SystemExit) as exc:
        cli.main()
    assert exc.value.code == 3
    assert "continuity sessions" in capsys.readouterr().err


def test_look_back_reads_the_last_rows_first_and_wider_only_when_none_renders(
    sqlite_store, tmp_path, monkeypatch
):
    """Issue 43: whether the stored transcript already ends with the rows before an import's
    first new row is checked on the last ``FIRST_LOOK_BACK_ROWS`` rows (3 here) when one of
    them renders; only when none does (events, context) is the wider look-back read."""
    from continuity.core.model import Entry as E, EntryKind, Role, TextBlock

    monkeypatch.setattr(tr, "FIRST_LOOK_BACK_ROWS", 3)
    talk = [U(f"question {i}") if i % 2 == 0 else A(text=f"answer {i}") for i in range(10)]
    load(sqlite_store, talk, key="s")
    content = "\n\n".join(tr.render_entry(e) for e in sqlite_store.entries("s"))

    capture = tr._ImportCapture(sqlite_store, tmp_path, tr.ImportSync())
    assert capture._holds_rows_before("s", 10, content)
    assert capture.out.rows_read == 3  # the last three rows, not the 50 of the look-back
    assert not capture._holds_rows_before("s", 10, content.rsplit("\n\n", 1)[0])

    events = [E(EntryKind.EVENT, Role.SYSTEM, (TextBlock(f"tick {i}"),)) for i in range(4)]
    load(sqlite_store, events, key="s")  # seq 10..13 render nothing
    capture = tr._ImportCapture(sqlite_store, tmp_path, tr.ImportSync())
    assert capture._holds_rows_before("s", 14, content)
    assert capture.out.rows_read == 3 + 14  # none of the last three renders: all 14 read


def test_a_transcript_is_named_as_every_command_names_a_session(sqlite_store, isolated_home):
    """A fresh-user review: a prefix of a session and of its subagent's session (``S``,
    ``S/agent-x``) named the session in ``show``, and ``transcript`` called it ambiguous;
    both now take ``store.names.resolve_session``. A prefix of two sessions stays ambiguous."""
    from continuity.core.errors import AmbiguousSession

    load(sqlite_store, [U("the main session"), A(text="done")], key="3185d1ef-main")
    load(sqlite_store, [U("the subagent's task"), A(text="ok")], key="3185d1ef-main/agent-x")
    load(sqlite_store, [U("another session")], key="3185d1ff-other")
    row = tr.load_transcript(sqlite_store, "3185d1e")
    assert row.session_key == "3185d1ef-main" and "the main session" in row.content
    assert tr.load_transcript(sqlite_store, "3185d1ef-main/ag").session_key == (
        "3185d1ef-main/agent-x"
    )
    with pytest.raises(AmbiguousSession) as caught:
        tr.load_transcript(sqlite_store, "3185d1")
    assert caught.value.candidates == [
        "3185d1ef-main",
        "3185d1ef-main/agent-x",
        "3185d1ff-other",
    ]
