"""Issue 43 goal 1: the import's row batches commit without a WAL sync each, and the import
ends with one (``SqlStore.batch(durable=False)``, ``make_durable``; README "Durability").

The sync setting is read back from SQLite (``PRAGMA synchronous``: 1 NORMAL, 2 FULL) and the
syncs are counted where they happen (``os.fsync`` of the WAL file), so each test fails when
a batch leaks its setting into the pool or an import ends without the sync."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from continuity.core.model import Session
from continuity.formats.importer import import_file, import_files
from continuity.store import open_store
from continuity.store.sql import SqlStore
from tests.paths import SHARED_DATA

CLAUDE = SHARED_DATA / "claude-code" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
NORMAL, FULL = 1, 2


def _synchronous(store: SqlStore) -> int:
    with store._conn() as conn:
        return int(conn.exec_driver_sql("PRAGMA synchronous").scalar_one())


@pytest.fixture
def store(tmp_path: Path):
    with open_store(f"sqlite:///{tmp_path / 'continuity.db'}") as s:
        yield s


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files ``os.fsync`` was called on, by path."""
    paths: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        paths.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return paths


def test_a_relaxed_batch_commits_with_normal_and_leaves_full(store: SqlStore, tmp_path: Path):
    assert _synchronous(store) == FULL
    with store.batch(durable=False):
        assert _synchronous(store) == NORMAL
        store.upsert_session(Session(key="s1", harness="claude-code"))
    assert store.get_session("s1") is not None
    for _ in range(3):  # every pooled connection a later batch gets is FULL again
        assert _synchronous(store) == FULL
    with store.batch():
        assert _synchronous(store) == FULL


def test_a_relaxed_batch_that_fails_rolls_back_and_leaves_full(store: SqlStore):
    with pytest.raises(RuntimeError), store.batch(durable=False):
        store.upsert_session(Session(key="s2", harness="claude-code"))
        raise RuntimeError("boom")
    assert store.get_session("s2") is None
    assert _synchronous(store) == FULL


def test_a_nested_relaxed_batch_joins_the_durable_one(store: SqlStore):
    with store.batch(), store.batch(durable=False):
        assert _synchronous(store) == FULL
    assert store._unsynced is False


def test_make_durable_syncs_the_wal_once(store: SqlStore, tmp_path: Path, synced: list[str]):
    store.make_durable()
    assert synced == []  # nothing committed without a sync yet
    with store.batch(durable=False):
        store.upsert_session(Session(key="s3", harness="claude-code"))
    store.make_durable()
    assert synced == [str(tmp_path / "continuity.db-wal")]
    store.make_durable()
    assert len(synced) == 1


def test_import_files_ends_with_one_sync(store: SqlStore, tmp_path: Path, synced: list[str]):
    """Three copies of a real session: three files' batches, one WAL sync at the end."""
    files = []
    for n in range(3):
        f = tmp_path / "tree" / f"{n}" / CLAUDE.name
        f.parent.mkdir(parents=True)
        f.write_bytes(CLAUDE.read_bytes())
        files.append(f)
    reports = list(import_files(store, files))
    assert [r.status for r in reports] == ["imported"] * 3
    assert synced == [str(tmp_path / "continuity.db-wal")]
    assert store._unsynced is False


def test_import_file_returns_durable(store: SqlStore, tmp_path: Path, synced: list[str]):
    report = import_file(store, CLAUDE)
    assert report.status == "imported" and report.imported > 0
    assert synced == [str(tmp_path / "continuity.db-wal")]
    assert store._unsynced is False
