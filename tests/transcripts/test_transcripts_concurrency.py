"""Concurrent appends to one canonical transcript file: 8 processes x 1,000 records, each record
its own append call (lock, tail check, one write), so the writers interleave as much as they can.
"""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from continuity.transcripts.transcript_log import TranscriptLog, TranscriptRecord

WRITERS = 8
RECORDS = 1000


def _record(writer: int, n: int) -> TranscriptRecord:
    # Content long enough that a torn or interleaved write would show, with a line separator
    # and a control character that must stay escaped.
    content = f"writer {writer} record {n} " + "x" * (n % 97) + "\u2028\x1b" + "é" * (n % 13)
    return TranscriptRecord(
        "default",
        "pi",
        f"session-{writer}",
        "/p",
        n,
        "assistant",
        content,
        "live",
        None,
        "2026-09-01T08:00:00.000Z",
    )


def _writer(path: str, writer: int) -> None:
    log = TranscriptLog(path, fsync=False)
    for n in range(RECORDS):
        log.append([_record(writer, n)])


def test_transcript_log_concurrent_appends_every_line_is_one_record(tmp_path: Path):
    """B38 (file side): 8 processes x 1,000 appends under the file lock: every line parses
    and equals exactly one submitted record; no two writers' records ever interleave in a line."""
    path = tmp_path / "memory" / "pi" / "transcripts" / "transcript.jsonl"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(path), w)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * WRITERS

    data = path.read_bytes()
    assert data.endswith(b"\n")
    lines = data.split(b"\n")[:-1]
    assert len(lines) == WRITERS * RECORDS
    submitted = {_record(w, n).id: _record(w, n) for w in range(WRITERS) for n in range(RECORDS)}
    seen = set()
    per_writer_order: dict[str, list[int]] = {}
    for line in lines:
        record = TranscriptRecord.from_dict(json.loads(line))
        assert record == submitted[record.id]
        seen.add(record.id)
        per_writer_order.setdefault(record.session_key, []).append(record.seq)
    assert seen == set(submitted)
    # Each writer's records land in the order it appended them.
    assert all(order == list(range(RECORDS)) for order in per_writer_order.values())


def test_two_imports_at_once_write_each_record_once(tmp_path: Path):
    """Fresh-user review (issue 17): two ``continuity import`` of one folder at once into one
    workspace each found the sessions without a transcript row and appended their records, so
    the JSONL held each record twice. The transcript phase now runs under the workspace's
    ``memory/import.lock``: each (session, seq) is in the file once, and the second import
    finds the rows the first wrote."""
    import re
    import subprocess
    import sys

    from tests.paths import SHARED_DATA

    short = (SHARED_DATA / "claude-code" / "short.jsonl").read_text(encoding="utf-8")
    ids = sorted(set(re.findall(r'"(?:sessionId|uuid|parentUuid)":"([0-9a-f-]{36})"', short)))
    folder = tmp_path / "sessions"
    folder.mkdir()
    for n in range(120):
        text = short
        for i, old in enumerate(ids):
            text = text.replace(old, f"{n:08x}-0000-4000-8000-{i:012x}")
        (folder / f"{n:08x}.jsonl").write_text(text, encoding="utf-8")
    exe = str(Path(sys.executable).with_name("continuity"))
    home = tmp_path / "home"
    cmd = [exe, "import", str(folder), "--home", str(home), "--json"]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e[-500:] for _, e in outs]
    lines = (
        (home / "memory" / "claude-code" / "transcripts" / "transcript.jsonl")
        .read_bytes()
        .splitlines()
    )
    keys = [(r["session_key"], r["seq"]) for r in map(json.loads, lines)]
    assert len(keys) == len(set(keys)) > 0
    assert len({k for k, _ in keys}) == 120


def test_an_import_whose_due_rows_another_import_derived_meanwhile_appends_them_once(
    tmp_path: Path,
) -> None:
    """Issue 45 item 9 (found by ``bench/soak.py``'s runs of ``import`` beside ``watch``): two
    imports of a grown file at once both see its new rows due (the first has not derived
    them yet); the second waits for the capture lock, and then its report still says the rows
    from seq N on are due, though the first derived them and settled the file. A pi session
    whose last row before N renders like its newest one (the same ``ls`` twice) fooled the
    tail check, and the row got the new text twice. The second must find the file settled
    and append nothing: the row equals one uninterrupted import's."""
    from continuity.formats.importer import import_paths
    from continuity.store import open_store
    from continuity.transcripts.session_transcripts import sync_import_report
    from tests.paths import SHARED_DATA

    src = next((SHARED_DATA / "real-harness" / "pi" / "sessions").glob("*/*_01a2354d-*.jsonl"))
    lines = src.read_bytes().splitlines(keepends=True)
    grown = tmp_path / "sessions" / src.name
    grown.parent.mkdir()
    grown.write_bytes(b"".join(lines[:11]))
    home = tmp_path / "home"
    with open_store(f"sqlite:///{tmp_path / 'race.db'}") as store:
        sync_import_report(store, import_paths(store, [grown]), home)
        with grown.open("ab") as fh:
            fh.write(b"".join(lines[11:]))
        first = import_paths(store, [grown])  # imports the new rows: due
        second = import_paths(store, [grown])  # nothing new, but the rows are still due
        assert [f.derive_from for f in second.files] == [f.derive_from for f in first.files]
        sync_import_report(store, first, home)
        sync_import_report(store, second, home)  # after the first: the rows are settled
        key = first.files[0].session_key
        raced = store.get_transcripts([key], "default")[key].content
    once = tmp_path / "once"
    with open_store(f"sqlite:///{tmp_path / 'once.db'}") as store:
        sync_import_report(store, import_paths(store, [grown]), once)
        expected = store.get_transcripts([key], "default")[key].content
    assert raced == expected
    records = [
        json.loads(line)
        for line in (home / "memory" / "pi" / "transcripts" / "transcript.jsonl")
        .read_text()
        .splitlines()
    ]
    seqs = [r["seq"] for r in records if r["session_key"] == key]
    assert len(seqs) == len(set(seqs))


class _Killed(BaseException):
    """Stands for a kill -9: no handler of ours catches it (they catch ``Exception``)."""


def test_a_kill_between_the_append_and_the_commit_writes_no_record_twice(
    tmp_path: Path, monkeypatch
) -> None:
    """Issue 45 item 9 (``bench/soak.py``: 41 of 2,000 killed imports and watches): the
    transcript phase appends a grown session's records to the JSONL, then commits the rows in
    the database; killed in between, the rows stay due and the next import appended the same
    records again. The append is journaled: the resumed import skips the records the killed one
    wrote, so the file holds each record once and equals one uninterrupted import's."""
    from continuity.formats.importer import import_paths
    from continuity.store import open_store
    from continuity.transcripts import session_transcripts as st
    from tests.paths import SHARED_DATA

    src = next((SHARED_DATA / "real-harness" / "pi" / "sessions").glob("*/*_01a2354d-*.jsonl"))
    lines = src.read_bytes().splitlines(keepends=True)
    grown = tmp_path / "sessions" / src.name
    grown.parent.mkdir()
    grown.write_bytes(b"".join(lines[:11]))
    home = tmp_path / "home"
    path = home / "memory" / "pi" / "transcripts" / "transcript.jsonl"
    with open_store(f"sqlite:///{tmp_path / 'kill.db'}") as store:
        st.sync_import_report(store, import_paths(store, [grown]), home)
        with grown.open("ab") as fh:
            fh.write(b"".join(lines[11:]))
        before = path.stat().st_size

        def killed(*a, **kw):
            raise _Killed()

        monkeypatch.setattr(st, "extend_transcript", killed)  # after the append, in the commit
        with pytest.raises(_Killed):
            st.sync_import_report(store, import_paths(store, [grown]), home)
        monkeypatch.undo()
        assert path.stat().st_size > before  # the killed import did append its records
        journal = path.with_name("transcript.jsonl.appending")
        left = journal.read_bytes() if journal.exists() else None
        st.sync_import_report(store, import_paths(store, [grown]), home)  # the resume
    once = tmp_path / "once"
    with open_store(f"sqlite:///{tmp_path / 'once.db'}") as store:
        st.sync_import_report(store, import_paths(store, [grown]), once)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    expected = [
        json.loads(line)
        for line in (once / "memory" / "pi" / "transcripts" / "transcript.jsonl")
        .read_text()
        .splitlines()
    ]
    assert len(records) == len({r["id"] for r in records}) == len(expected) > 11
    assert [r["id"] for r in records] == [r["id"] for r in expected]
    # the journal named where the killed append began, and the commit removed it
    assert left == b"%d\n" % before and not journal.exists()
