"""Importer batches (issue 2): a file imported in many small batches ends exactly as in one;
a failed batch leaves nothing of itself and the next import resumes from the batch before; a
fresh import never reads back its own lines."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import continuity.formats.importer as importer
from continuity.core.errors import StoreError
from continuity.formats.importer import import_file
from continuity.store import iter_entries

SAMPLES = [
    "claude-code/subagent.jsonl",
    "claude-code/tool_heavy.jsonl",
    "pi/large-session.jsonl",
    "codex/with-compaction.jsonl",
]


def snapshot(store, path: Path) -> dict:
    """Everything an import leaves for ``path`` that does not name the path or the session key:
    rows, runs, tool-call index, raw lines, source offset, session span and issues."""
    src = store.get_source(str(path))
    key = src.session_key
    rows = [
        (
            e.seq,
            e.native_id,
            e.parent_native_id,
            e.kind,
            e.role,
            e.blocks,
            e.visible,
            e.is_request,
            e.sidechain,
            e.timestamp,
            e.compaction,
            e.run_end,
            e.source.line,
            e.source.offset,
            e.source.raw_sha256,
        )
        for e in iter_entries(store, key)
    ]
    runs = [(r.request_seq, r.end_seq, r.status, r.started_at, r.ended_at) for r in store.runs(key)]
    calls = sorted((c.call_id, c.call_seq, c.result_seq) for c in store.tool_calls_from(key, 0))
    raw = [(r.line_no, r.byte_offset, r.sha256, r.data) for r in store.raw_lines(str(path))]
    session = store.get_session(key)
    return {
        "rows": rows,
        "runs": runs,
        "calls": calls,
        "raw": raw,
        "offset": (src.offset, src.line_count),
        "session": (session.entry_count, session.started_at, session.ended_at, session.title),
        "issues": [(i.line_no, i.reason) for i in store.issues(str(path))],
    }


def _copy(shared_data: Path, name: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(shared_data / name, folder / Path(name).name))


@pytest.mark.parametrize("name", SAMPLES)
def test_small_batches_end_as_one_batch(store, shared_data, tmp_path, monkeypatch, name):
    whole = import_file(store, _copy(shared_data, name, tmp_path / "whole"))
    expected = snapshot(store, Path(whole.path))
    monkeypatch.setattr(importer, "BATCH_LINES", 7)
    calls = []
    monkeypatch.setattr(store, "raw_lines", lambda path: calls.append(path) or iter(()))
    small = import_file(store, _copy(shared_data, name, tmp_path / "small"))
    monkeypatch.undo()
    assert calls == []  # a fresh import never reads its own lines back
    assert (small.status, small.imported, small.duplicate, small.errors) == (
        whole.status,
        whole.imported,
        whole.duplicate,
        whole.errors,
    )
    assert snapshot(store, Path(small.path)) == expected


def test_failed_batch_leaves_nothing_and_import_resumes(store, shared_data, tmp_path, monkeypatch):
    """Batch 3 of pi/large-session (1,019 lines, 100 a batch) fails at its last write: the store
    keeps batches 1-2 whole, the report says failed, and the next import ends as an
    uninterrupted one."""
    ref = import_file(store, _copy(shared_data, "pi/large-session.jsonl", tmp_path / "ref"))
    expected = snapshot(store, Path(ref.path))

    path = _copy(shared_data, "pi/large-session.jsonl", tmp_path / "cut")
    monkeypatch.setattr(importer, "BATCH_LINES", 100)
    real_put = store.put_source
    puts = []

    def failing_put(state):
        puts.append(state.offset)
        if len(puts) == 3:
            raise StoreError("disk full (test)")
        real_put(state)

    monkeypatch.setattr(store, "put_source", failing_put)
    cut = import_file(store, path)
    assert (cut.status, cut.reason) == ("failed", "disk full (test)")
    src = store.get_source(str(path))
    assert (src.line_count, src.offset) == (200, puts[1])
    assert store.get_session(src.session_key).entry_count == 200
    assert [r.line_no for r in store.raw_lines(str(path))] == list(range(1, 201))
    monkeypatch.undo()

    rest = import_file(store, path)
    assert (rest.status, rest.resumed_from, rest.imported) == ("imported", puts[1], 1019 - 200)
    assert snapshot(store, path) == expected
