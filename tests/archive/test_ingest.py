"""Issue 17: the import hands the rows it adds to the checkpoint replay and the transcript
phase (``archive.ingest``, ``FileReport.new_rows``) instead of those phases reading them back.

What is handed on must be exactly what the store holds (``store.bulk.as_stored``, visibility
changes followed), and the checkpoints, transcript rows and transcript files must be the same
as the phases reading every row from the store, however the files fall into chunks.
"""

from __future__ import annotations

import dataclasses
import itertools
import shutil
from pathlib import Path

import pytest
from hypothesis import given

from continuity.archive import ingest as ingest_mod
from continuity.archive.ingest import ingest
from continuity.checkpoints.capture import CheckpointConfig
from continuity.checkpoints.recovery import replay_import
from continuity.core.model import Entry, EntryKind, Role, TextBlock
from continuity.formats import importer
from continuity.formats.importer import ImportReport, discover, import_files
from continuity.store import iter_entries, open_store
from continuity.transcripts.session_transcripts import sync_import_report
from continuity.transcripts.transcript_log import TranscriptLog, transcript_path
from tests.hostile import file_settings, own_session, session_file
from tests.paths import SAMPLE_DIRS, SHARED_DATA

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
#: every sample session, the hand-made fixtures (pi branches and compactions, Claude Code
#: subagents and compactions, Codex) and the importer's edge cases
CORPUS = [
    *SAMPLE_DIRS,
    SHARED_DATA / "real-harness",
    FIXTURES / "pi",
    FIXTURES / "claude_code",
    FIXTURES / "codex",
    FIXTURES / "importer",
]


def _stored(store, f) -> list[Entry]:
    return store.entries(f.session_key, after_seq=f.first_new_seq - 1, limit=10**9)


def _files(root: Path) -> list[Path]:
    return discover([str(p) for p in CORPUS if p.exists()], unreadable=[], home=root / "h")


def test_new_rows_equal_the_stored_rows_for_every_sample(tmp_path):
    """Each imported file's kept rows equal what the store reads back for them, field by
    field (seq, ids, visibility after the pi leaf path, blocks, compaction, source)."""
    files = _files(tmp_path)
    assert len(files) > 40
    with open_store(tmp_path / "a.db") as store:
        reports = list(import_files(store, files, keep_rows=True))
        checked = 0
        for f in reports:
            if f.status != "imported" or not f.imported:
                continue
            assert f.new_rows is not None, f.path
            assert f.new_rows == _stored(store, f), f.path
            checked += len(f.new_rows)
    assert checked > 2000
    # without keep_rows nothing is held
    with open_store(tmp_path / "b.db") as store:
        assert all(f.new_rows is None for f in import_files(store, files))


def test_new_rows_follow_a_leaf_path_that_moves_on_a_grown_file(tmp_path):
    """pi branches: the first import ends on one branch; the appended lines continue the
    other, so rows of both imports change visibility. The kept rows of the second import
    still equal the stored ones, and a row put off the path is invisible in both."""
    lines = (FIXTURES / "pi" / "v3-branch.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "branch.jsonl"
    path.write_bytes(b"".join(lines[: len(lines) // 2]))
    with open_store(tmp_path / "a.db") as store:
        (first,) = import_files(store, [path], keep_rows=True)
        assert first.new_rows == _stored(store, first)
        path.write_bytes(b"".join(lines))
        (second,) = import_files(store, [path], keep_rows=True)
        assert second.status == "imported" and second.imported > 0
        assert second.new_rows == _stored(store, second)
        everything = store.entries(second.session_key, limit=10**9)
        assert any(not e.visible for e in everything)  # the branch left behind


def test_rows_over_the_keep_bound_are_read_back(tmp_path, monkeypatch):
    """A file whose lines exceed ``KEEP_ROWS_BYTES`` keeps no rows (memory stays bounded):
    its report has ``new_rows`` None, and ``ImportReport.new_rows`` leaves it out."""
    monkeypatch.setattr(importer, "KEEP_ROWS_BYTES", 1000)
    monkeypatch.setattr(importer, "BATCH_LINES", 5)  # several batches: the bound trips midway
    sample = SHARED_DATA / "claude-code" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    with open_store(tmp_path / "a.db") as store:
        (f,) = import_files(store, [sample], keep_rows=True)
    assert f.imported > 5 and f.new_rows is None
    assert ImportReport([f]).new_rows() == {}


def _outcome(store, home: Path, keys: list[str]) -> dict:
    """Everything the phases wrote: checkpoints, transcript rows, transcript files (without
    the wall-clock ``captured`` stamp)."""
    checkpoints = {
        k: [dataclasses.replace(c, checkpoint_id=None) for c in store.checkpoints(k)] for k in keys
    }
    rows = {}
    for k in keys:
        session = store.get_session(k)
        row = store.get_transcripts([k], session.agent_id).get(k)
        rows[k] = row.content if row else None
    files = {}
    for harness in ("claude-code", "codex", "pi", "opencode"):
        path = transcript_path(home, harness)
        if path.exists():
            files[harness] = [
                dataclasses.replace(r, captured_at="") for r in TranscriptLog(path).read()
            ]
    return {"checkpoints": checkpoints, "rows": rows, "files": files}


@pytest.mark.parametrize("chunk_bytes", [1, ingest_mod.CHUNK_BYTES])
def test_ingest_writes_what_reading_the_rows_back_writes(tmp_path, monkeypatch, chunk_bytes):
    """The whole corpus through ``ingest`` (one chunk per file, or the default chunks) and
    through the phases reading every row back: the same checkpoints, transcript rows and
    transcript records. The rows were handed on, not read (``rows_read`` 0 on a fresh
    import), and no report holds them afterwards."""
    files = _files(tmp_path)
    config = CheckpointConfig()
    with open_store(tmp_path / "read.db") as store:
        report = ImportReport(list(import_files(store, files)))
        replayed = replay_import(store, report, config=config)
        sync = sync_import_report(store, report, tmp_path / "read")
        keys = [k for k in report.sessions if store.get_session(k)]
        expected = _outcome(store, tmp_path / "read", keys)
    monkeypatch.setattr(ingest_mod, "CHUNK_BYTES", chunk_bytes)
    with open_store(tmp_path / "handed.db") as store:
        result = ingest(store, files, config=config, home=tmp_path / "handed")
        got = _outcome(store, tmp_path / "handed", keys)
    assert result.checkpoints_replayed == replayed > 50
    assert result.transcripts.captured == sync.captured
    assert sync.rows_read > 1000 and sync.rows_handed == 0
    assert result.transcripts.rows_read == 0
    assert result.transcripts.rows_handed == sync.rows_read
    assert got == expected
    assert all(f.new_rows is None for f in result.report.files)


def test_ingest_of_a_grown_file_reads_only_the_look_back(tmp_path):
    """A file imported, then grown: the second ``ingest`` hands its new rows on; it reads
    only the rows before them that check the stored transcript (``LOOK_BACK_ROWS``), and the
    records equal those of one import of the whole file."""
    sample = SHARED_DATA / "claude-code" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    lines = sample.read_bytes().splitlines(keepends=True)
    path = tmp_path / sample.name
    path.write_bytes(b"".join(lines[: len(lines) // 2]))
    config = CheckpointConfig()
    with open_store(tmp_path / "a.db") as store:
        ingest(store, [path], config=config, home=tmp_path / "a")
        path.write_bytes(b"".join(lines))
        result = ingest(store, [path], config=config, home=tmp_path / "a")
        (f,) = result.report.files
        grown = _outcome(store, tmp_path / "a", [f.session_key])
    assert f.imported > 0
    assert 0 < result.transcripts.rows_read <= 50  # the look-back only
    assert result.transcripts.rows_handed > 0
    whole = tmp_path / "whole" / sample.name
    whole.parent.mkdir()
    shutil.copy(path, whole)
    with open_store(tmp_path / "b.db") as store:
        ingest(store, [whole], config=config, home=tmp_path / "b")
        once = _outcome(store, tmp_path / "b", [f.session_key])
    assert grown["checkpoints"] == once["checkpoints"]
    assert grown["rows"] == once["rows"]
    strip = [dataclasses.replace(r, source_path="") for r in grown["files"]["claude-code"]]
    assert strip == [dataclasses.replace(r, source_path="") for r in once["files"]["claude-code"]]


def _row(seq: int, visible: bool = True) -> Entry:
    return Entry(
        kind=EntryKind.MESSAGE,
        role=Role.USER,
        blocks=(TextBlock(f"r{seq}"),),
        visible=visible,
        seq=seq,
    )


class _Pages:
    """A store of rows 0..n-1 that counts what is read."""

    def __init__(self, n: int) -> None:
        self.rows = [_row(i, visible=i % 3 != 0) for i in range(n)]
        self.read = 0

    def entries(self, key, *, after_seq=-1, limit=1000, visible_only=False):
        out = [e for e in self.rows if e.seq > after_seq and (e.visible or not visible_only)]
        out = out[:limit]
        self.read += len(out)
        return out


@pytest.mark.parametrize("after", [-1, 3, 9, 10, 14, 19])
@pytest.mark.parametrize("visible_only", [False, True])
def test_iter_entries_reads_only_the_rows_before_the_known_ones(after, visible_only):
    """Rows 0..19 stored, 10..19 known: the rows after ``after`` come out in seq order, the
    known ones from memory (the stored copies of 10..19 are replaced by marked ones to show
    which were used), the rows before 10 from the store in pages of 4."""
    store = _Pages(20)
    known = [dataclasses.replace(e, type_name="known") for e in store.rows[10:]]
    got = list(
        iter_entries(
            store, "k", after_seq=after, visible_only=visible_only, page_rows=4, known=known
        )
    )
    want = [e.seq for e in store.rows if e.seq > after and (e.visible or not visible_only)]
    assert [e.seq for e in got] == want
    assert all(e.type_name == "known" for e in got if e.seq >= 10)
    assert all(e.type_name == "" for e in got if e.seq < 10)


def test_iter_entries_refuses_known_rows_with_a_gap():
    store = _Pages(5)
    with pytest.raises(ValueError, match=r"not consecutive \(seqs 1\.\.4, 3 rows\)"):
        list(iter_entries(store, "k", known=[_row(1), _row(2), _row(4)]))


def test_fuzz_hostile_new_rows_equal_the_stored_rows(tmp_path: Path):
    """Hostile files (NUL, lone surrogates, long type names, deep nesting, repeated ids):
    whatever the readers make of them, the kept rows equal the stored rows."""
    counter = itertools.count()
    with open_store(tmp_path / "fuzz.db") as store:

        @file_settings(max_examples=25, deadline=None)
        @given(case=session_file())
        def run(case: tuple[str, list[bytes]]) -> None:
            harness, lines = case
            n = next(counter)
            data = own_session(lines, n)  # a session of its own
            path = tmp_path / f"{harness}-{n}.jsonl"
            path.write_bytes(data)
            for f in import_files(store, [path], keep_rows=True):
                if f.status == "imported" and f.imported:
                    assert f.new_rows == _stored(store, f)

        run()


@pytest.mark.parametrize("phase", ["replay", "transcripts"])
def test_an_import_interrupted_before_its_phases_is_derived_by_the_next(
    tmp_path, monkeypatch, phase
):
    """Fresh-user review: Ctrl-C (or a kill) after a chunk's rows were stored but before its
    checkpoint replay or transcript phase ran left those sessions without checkpoints for
    good: the next import found the files unchanged. Their rows stay due
    (``SourceState.pending_from``) and the next import derives them: the same checkpoints,
    transcript rows and records as one uninterrupted import, and nothing due after it."""
    from continuity.archive import ingest as mod
    from continuity.checkpoints import recovery

    files = _files(tmp_path)
    config = CheckpointConfig()
    with open_store(tmp_path / "once.db") as store:
        ingest(store, files, config=config, home=tmp_path / "once")
        keys = list(dict.fromkeys(s.key for s in store.list_sessions(limit=0)))
        expected = _outcome(store, tmp_path / "once", keys)
    monkeypatch.setattr(mod, "CHUNK_BYTES", 20_000)  # several chunks: the second one stops
    calls = {"n": 0}
    real = recovery.replay_import if phase == "replay" else mod.sync_import_report

    def interrupted(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    target = "replay_import" if phase == "replay" else "sync_import_report"
    with open_store(tmp_path / "cut.db") as store:
        if phase == "replay":
            monkeypatch.setattr(recovery, "replay_import", interrupted)
        else:
            monkeypatch.setattr(mod, target, interrupted)
        with pytest.raises(KeyboardInterrupt):
            ingest(store, files, config=config, home=tmp_path / "cut")
        monkeypatch.undo()
        due = [
            s
            for s in store.get_sources([importer.path_key(p) for p in files]).values()
            if s.pending_from is not None
        ]
        assert due  # rows stored, their phases never ran
        again = ingest(store, files, config=config, home=tmp_path / "cut")
        assert {f.status for f in again.report.files} <= {"unchanged", "imported"}
        assert again.checkpoints_replayed > 0
        got = _outcome(store, tmp_path / "cut", keys)
        assert not [
            s
            for s in store.get_sources([importer.path_key(p) for p in files]).values()
            if s.pending_from is not None
        ]
    assert got["checkpoints"] == expected["checkpoints"]
    assert got["rows"] == expected["rows"]
    assert sorted(got["files"]) == sorted(expected["files"])
    for harness in got["files"]:  # the same records (a resumed file's order may differ)
        key = lambda r: (r.session_key, r.seq)  # noqa: E731
        assert sorted(got["files"][harness], key=key) == sorted(expected["files"][harness], key=key)


def test_ingest_freezes_the_heap_while_it_runs_and_thaws_it_after(tmp_path):
    """Issue 43 goal 1: the objects alive before ``ingest`` are frozen while it runs (the
    collector's full passes skip them), the young generation's threshold raised, and both
    undone when it returns or raises, so nothing is left uncollectable."""
    import gc

    sample = SHARED_DATA / "claude-code" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    seen: list[int] = []

    def done(_report) -> None:
        seen.append(gc.get_freeze_count())
        assert gc.get_threshold()[0] == ingest_mod.YOUNG_THRESHOLD

    def fail(_report) -> None:
        raise KeyboardInterrupt

    assert gc.get_freeze_count() == 0
    threshold = gc.get_threshold()
    assert threshold[0] != ingest_mod.YOUNG_THRESHOLD
    with open_store(tmp_path / "a.db") as store:
        ingest(store, [sample], config=CheckpointConfig(), home=tmp_path / "h", done=done)
        assert len(seen) == 1 and seen[0] > 1000
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == threshold
        with pytest.raises(KeyboardInterrupt):
            ingest(store, [sample], config=CheckpointConfig(), home=tmp_path / "h2", done=fail)
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == threshold


def test_frozen_heap_overlapping_uses_restore_the_thresholds_once_the_last_ends():
    """Two overlapping ``ingest`` calls (the daemon's threads): the heap stays frozen until
    the last ends, and the thresholds found before the first come back (the second must not
    keep the raised one it found)."""
    import gc

    before = gc.get_threshold()
    with ingest_mod._frozen_heap():
        first = ingest_mod._frozen_heap()
        first.__enter__()
        assert gc.get_threshold()[0] == ingest_mod.YOUNG_THRESHOLD
    assert gc.get_freeze_count() > 0  # one still runs
    assert gc.get_threshold()[0] == ingest_mod.YOUNG_THRESHOLD
    first.__exit__(None, None, None)
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before
