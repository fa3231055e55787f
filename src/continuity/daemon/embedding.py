"""The daemon's background embedding (issue 40: "embedding runs in the background (the daemon
...), in batches, resumable, bounded in memory").

``EmbeddingThread`` runs ``retrieval.embedding.embed_pending`` in a thread of its own, one
pass of at most ``PASS_ROWS`` rows at a time (batches of ``[retrieval] batch_rows``), then
waits ``IDLE_SECONDS``, or less when ``nudge()`` says rows were written (the live capture
calls it after a turn's rows are stored). Before a pass it compares a cheap measure of what
the store holds (rows per session summed, memories counted) with the one the last finished
pass saw: a store that has not grown is not scanned. A nudge that names a session
(``nudge(session_key)``, the live capture's after an import) runs a pass over that session's
rows after the last one this thread embedded of it, not over the store (issue 45 item 10:
looking through every row for the ones without a vector, on every turn, was 20 % of the
daemon's time under load); the full pass still runs at start, after a memory is remembered,
and every ``IDLE_SECONDS`` while the store grows. ``stop()`` (the daemon's shutdown) is
asked between batches, so it returns within one batch (about 40 ms of encoding for 256 rows
on this machine) and at most ``STOP_SECONDS``. Writes take the live capture's database lock
(SQLite: the daemon's writers queue on it rather than in SQLite's busy handler). Without the
semantic extra, or with ``semantic = "off"``, nothing runs. Errors are logged and the next
pass tries again (a row that cannot be embedded is never lost: it stays found by words).
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import func, select

if TYPE_CHECKING:
    from continuity.store import SqlStore

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

    with store._conn() as conn:  # a read of the store's own tables
        rows = conn.execute(select(func.coalesce(func.sum(t.sessions.c.entry_count), 0))).scalar()
    return int(rows or 0), store.count_memories()


class EmbeddingThread:
    """The background embedding of ``store`` for the workspace ``home`` (module
    docstring). ``start()`` returns at once; ``stop()`` ends the thread within a batch."""

    def __init__(
        self,
        store: Any,
        home: Any,
        *,
        db_lock: Any = None,
        idle_seconds: float = IDLE_SECONDS,
        pass_rows: int = PASS_ROWS,
    ) -> None:
        self.store, self.home = store, home
        self._lock = db_lock if db_lock is not None else nullcontext()
        self.idle_seconds, self.pass_rows = idle_seconds, pass_rows
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._seen: tuple[int, int] | None = None
        #: sessions nudged since the last pass, and a full pass asked for (``nudge``)
        self._dirty: set[str] = set()
        self._full = True
        self._dirty_lock = threading.Lock()
        #: session key → the highest seq this thread embedded of it (the next pass's start)
        self._marks: dict[str, int] = {}
        self._last_full = time.monotonic()
        self._running = False
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
        self._thread = threading.Thread(
            target=self._run,
            args=(embedder, settings.batch_rows),
            name="continuity-embedding",
            daemon=True,
        )
        self._thread.start()
        return True

    def nudge(self, session_key: str | None = None) -> None:
        """Rows were written (of ``session_key``; None: anywhere, or a memory): run a pass
        soon (over that session's new rows only, when one is named)."""
        with self._dirty_lock:
            if session_key is None:
                self._full = True
            else:
                self._dirty.add(session_key)
        self._wake.set()

    def pending(self) -> int:
        """Passes waiting or running: the sessions nudged and not yet read, plus one while a
        pass runs or a full pass is due (``/health``'s ``embedding_pending``); 0 when the
        thread does not run (words-only search, or stopped): nothing will be embedded."""
        if self._thread is None or not self._thread.is_alive():
            return 0
        with self._dirty_lock:
            return len(self._dirty) + (1 if self._full or self._running else 0)

    def stop(self, timeout: float = STOP_SECONDS) -> None:
        """End the thread (it finishes the batch under way) and wait at most ``timeout``."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self, embedder: Any, batch_rows: int) -> None:
        from continuity.retrieval.embedding import embed_pending

        # the proxy is a SqlStore to its callers: every attribute is the store's
        store = cast("SqlStore", _Locked(self.store, self._lock))
        try:
            with self._lock:
                dropped = self.store.drop_orphan_vectors()
            if dropped:
                log.info("embedding: %d vectors of rows no longer stored dropped", dropped)
        except Exception:
            log.exception("embedding: dropping orphan vectors failed")
        self._warm(embedder)
        while not self._stop.is_set():
            try:
                with self._dirty_lock:
                    dirty, self._dirty = self._dirty, set()
                    full, self._full = self._full, False
                    self._running = True
                for key in sorted(dirty):
                    self._session_pass(store, embedder, batch_rows, key)
                if time.monotonic() - self._last_full >= self.idle_seconds:
                    full = True  # rows another process stored (the archiver) wait no longer
                size = store_size(self.store) if full else self._seen
                if full and size != self._seen:
                    self._last_full = time.monotonic()
                    report = embed_pending(
                        store,
                        embedder,
                        batch_rows=batch_rows,
                        limit=self.pass_rows,
                        should_stop=self._stop.is_set,
                    )
                    self.embedded += report.embedded
                    self.passes += 1
                    if report.embedded:
                        log.info(
                            "embedding: %d rows embedded, %d waiting", report.embedded, report.left
                        )
                    if report.left:
                        with self._dirty_lock:
                            self._full = True
                        continue  # more to do: the next pass at once
                    self._seen = size
            except Exception:  # logged; the next pass tries again
                log.exception("embedding pass failed")
            with self._dirty_lock:
                self._running = False
                busy = self._full or bool(self._dirty)
            if not busy:
                self._wake.wait(self.idle_seconds)
                self._wake.clear()

    def _warm(self, embedder: Any) -> None:
        """Load the stored vectors into the process's search index (``retrieval.index.
        shared_index``) before the first search asks: a search right after ``serve`` started
        paid for it (1.8 s on the 100 MB bench tree of issue 43, 0.2 s after). A failure is
        logged: the first search loads them then."""
        from continuity.retrieval.index import shared_index

        try:
            index = shared_index(self.store, embedder.model_id, "entries")
            log.debug("embedding: %d vectors loaded for search", len(index))
        except Exception:
            log.exception("embedding: loading the vectors for search failed")

    def _session_pass(self, store: Any, embedder: Any, batch_rows: int, key: str) -> None:
        """Embed ``key``'s rows after the last one embedded here (``_marks``)."""
        from continuity.retrieval.embedding import embed_pending

        start = self._marks.get(key, -1)
        report = embed_pending(
            store,
            embedder,
            batch_rows=batch_rows,
            limit=self.pass_rows,
            should_stop=self._stop.is_set,
            session=(key, start),
        )
        self.embedded += report.embedded
        self.passes += 1
        if report.last_seq is not None:  # every row of it up to there has its vector
            self._marks[key] = max(start, report.last_seq)
        if report.left:
            with self._dirty_lock:
                self._dirty.add(key)  # more of it waits: the next pass goes on
        if report.embedded:
            log.info("embedding: %d rows of session %s embedded", report.embedded, key)


__all__ = ["EmbeddingThread", "store_size", "PASS_ROWS", "IDLE_SECONDS"]
