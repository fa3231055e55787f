"""Two imports of one file at once (issue 45 leftover): each batch checks, inside its
transaction, that the file's stored progress is still the one its import began from
(``Store.claim_source``), so an import that read the progress before another one committed
retries from the new progress instead of storing the file's lines a second time."""

from __future__ import annotations

from pathlib import Path

import pytest

from continuity.core.errors import StoreConflict
from continuity.formats.importer import import_paths

CODEX = next(
    (Path(__file__).resolve().parents[2] / "examples" / "sessions" / "codex").glob("*.jsonl")
)


def _stale_once(store, monkeypatch, stale):
    """``get_source`` and ``get_sources`` answer ``stale`` the first time each is asked: what
    an import read just before another one committed."""
    real_one, real_many = store.get_source, store.get_sources
    calls = {"n": 0, "many": 0}

    def get_source(path):
        calls["n"] += 1
        return stale if calls["n"] == 1 else real_one(path)

    def get_sources(paths):
        calls["many"] += 1
        if calls["many"] > 1:
            return real_many(paths)
        return dict.fromkeys(paths, stale) if stale is not None else {}

    monkeypatch.setattr(store, "get_source", get_source)
    monkeypatch.setattr(store, "get_sources", get_sources)
    return calls


def test_an_import_that_read_stale_progress_stores_no_line_twice(store, tmp_path, monkeypatch):
    """Codex rows carry no native id, so only the progress check keeps the racing import
    from appending every line again (before the fix: 2x the rows)."""
    path = tmp_path / CODEX.name
    path.write_bytes(CODEX.read_bytes())
    first = import_paths(store, [path]).files[0]
    assert first.status == "imported" and first.imported > 10
    key = first.session_key
    rows = store.get_session(key).entry_count
    assert rows == first.imported

    calls = _stale_once(store, monkeypatch, None)  # read before the first import committed
    second = import_paths(store, [path]).files[0]
    assert calls["n"] >= 2  # it retried from the stored progress
    assert second.status == "unchanged"
    assert store.get_session(key).entry_count == rows


def test_a_grown_file_raced_imports_only_the_new_lines(store, tmp_path, monkeypatch):
    lines = CODEX.read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    path = tmp_path / CODEX.name
    path.write_bytes(b"".join(lines[:half]))
    first = import_paths(store, [path]).files[0]
    key = first.session_key
    before = store.get_source(first.path)
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[half:]))
    grown = import_paths(store, [path]).files[0]
    rows = store.get_session(key).entry_count
    assert grown.imported > 0 and rows == first.imported + grown.imported

    _stale_once(store, monkeypatch, before)  # it saw the progress of the first import only
    again = import_paths(store, [path]).files[0]
    assert again.status == "unchanged"
    assert store.get_session(key).entry_count == rows


def test_claim_source_names_the_file_and_both_offsets(store, tmp_path):
    path = tmp_path / CODEX.name
    path.write_bytes(CODEX.read_bytes())
    report = import_paths(store, [path]).files[0]
    stored = store.get_source(report.path)
    store.claim_source(report.path, stored)  # unchanged: no error
    with pytest.raises(StoreConflict) as caught:
        store.claim_source(report.path, None)
    assert str(caught.value) == (
        f"another import of {report.path} stored its progress "
        f"meanwhile (none when this import began, offset "
        f"{stored.offset} now)"
    )
    assert Path(report.path).stat().st_size == stored.offset
