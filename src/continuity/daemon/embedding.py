"""The daemon's background embedding (issue 40: "embedding runs in the background (the daemon
...), in batches, resumable, bounded in memory").

``EmbeddingThread`` runs ``retrieval.embedding.embed_pending`` in a thread of its own, one
pass of at most ``PASS_ROWS`` rows at a time (batches of ``[retrieval] batch_rows``), then
waits ``IDLE_SECONDS``, or less when ``nudge()`` says rows were written (the live capture
calls it after a turn's rows are stored). Before a pass it compares a cheap measure of what
the store holds (rows per session summed, memories counted) with the one the last finished
pass saw: a store that has not grown is not scanned. ``stop()`` (the daemon's shutdown) is
asked between batches, so it returns within one batch (about 40 ms of encoding for 256 rows
on this machine) and at most ``STOP_SECONDS``. Writes take the live capture's database lock
(SQLite: the daemon's writers queue on it rather than in SQLite's busy handler). Without the
semantic extra, or with ``semantic = "off"``, nothing runs. Errors are logged and the next
pass tries again (a row that cannot be embedded is never lost: it stays found by words).
"""

from __future__ import annotations

import logging
import threading
from contextlib import nullcontext
from typing import Any

from sqlalchemy import func, select

log = logging.getLogger("continuity.daemon")

#: Rows (and memories) embedded per pass before the thread looks at stop and nudges again.
PASS_ROWS = 4_096
#: Seconds between passes when nothing nudges.
IDLE_SECONDS = 30.0
#: Seconds ``stop`` waits for the thread.
STOP_SECONDS = 10.0


class _Locked:
    """``store`` with its vector writes under ``lock``."""

    def __init__(self, store: Any, lock: Any) -> None:
        self._store, self._lock = store, lock

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def put_entry_vectors(self, *args: Any, **kw: Any) -> int:
        with self._lock:
            return self._store.put_entry_vectors(*args, **kw)

    def put_memory_vectors(self, *args: Any, **kw: Any) -> int:
        with self._lock:
            return self._store.put_memory_vectors(*args, **kw)


def store_size(store: Any) -> tuple[int, int]:
    """``(rows, memories)``: the sessions' ``entry_count`` summed and the memories counted
    (two small reads; ``entries`` itself is not scanned)."""
    from continuity.store import schema as t

    with store._conn() as conn:  # noqa: SLF001 - a read of the store's own tables
        rows = conn.execute(select(func.coalesce(func.sum(t.sessions.c.entry_count), 0))).scalar()
    return int(rows or 0), store.count_memories()


class EmbeddingThread:
    """The background embedding of ``store`` for the workspace ``home`` (module
    docstring). ``start()`` returns at once; ``stop()`` ends the thread within a batch."""

    def __init__(self, store: Any, home: Any, *, db_lock: Any = None,
                 idle_seconds: float = IDLE_SECONDS, pass_rows: int = PASS_ROWS) -> None:
        self.store, self.home = store, home
        self._lock = db_lock if db_lock is not None else nullcontext()
        self.idle_seconds, self.pass_rows = idle_seconds, pass_rows
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen: tuple[int, int] | None = None
        self.embedded = 0
        self.passes = 0

    def start(self) -> bool:
        """Start the thread; False (nothing started) when search is words-only."""
        from continuity.retrieval.embedder import load_embedder
        from continuity.retrieval.settings import retrieval_settings

        try:
            settings = retrieval_settings(self.home)
            embedder = load_embedder(settings)
        except Exception as exc:  # noqa: BLE001 - a bad [retrieval]: words-only, said once
            log.warning("embedding: off: %s", exc)
            return False
        if embedder is None:
            log.info("embedding: off (words-only search)")
            return False
        self._thread = threading.Thread(target=self._run, args=(embedder, settings.batch_rows),
                                        name="continuity-embedding", daemon=True)
        self._thread.start()
        return True

    def nudge(self) -> None:
        """Rows were written: run a pass soon."""
        self._wake.set()

    def stop(self, timeout: float = STOP_SECONDS) -> None:
        """End the thread (it finishes the batch under way) and wait at most ``timeout``."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self, embedder: Any, batch_rows: int) -> None:
        from continuity.retrieval.embedding import embed_pending

        store = _Locked(self.store, self._lock)
        try:
            with self._lock:
                dropped = self.store.drop_orphan_vectors()
            if dropped:
                log.info("embedding: %d vectors of rows no longer stored dropped", dropped)
        except Exception:  # noqa: BLE001
            log.exception("embedding: dropping orphan vectors failed")
        while not self._stop.is_set():
            try:
                size = store_size(self.store)
                if size != self._seen:
                    report = embed_pending(store, embedder, batch_rows=batch_rows,
                                           limit=self.pass_rows, should_stop=self._stop.is_set)
                    self.embedded += report.embedded
                    self.passes += 1
                    if report.embedded:
                        log.info("embedding: %d rows embedded, %d waiting", report.embedded,
                                 report.left)
                    if report.left:
                        continue  # more to do: the next pass at once
                    self._seen = size
            except Exception:  # noqa: BLE001 - logged; the next pass tries again
                log.exception("embedding pass failed")
            self._wake.wait(self.idle_seconds)
            self._wake.clear()


__all__ = ["EmbeddingThread", "store_size", "PASS_ROWS", "IDLE_SECONDS"]
