"""The embedding pass (issue 40): rows and memories without a vector of the embedder's model
get one, computed from their redacted text.

**What is embedded** (``embed_text``): ``store.search.entry_body`` (the text search indexes),
passed whole through ``redaction.funnel.redact`` (whole, so that a secret defined late in a row
and repeated early is redacted where it repeats), then cut to ``embedder.EMBED_CHARS``: only
redacted text ever reaches the model (issue 40: "on redacted text only"). A memory's content
is redacted when remembered; it passes the funnel again here all the same.

**How** (``embed_pending``): batches of ``batch_rows`` rows read from the store
(``entries_to_embed``, resuming after the previous batch's last row), encoded, written in one
transaction per batch (``put_entry_vectors``): one batch in memory at a time; a crash loses at
most the batch being encoded, and the next run skips what is stored (the unique key makes a
repeated write a no-op, so nothing is duplicated either). A row with nothing to embed gets an
empty vector, so it is not read again. Entries first, then memories.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from continuity.core.model import Entry
from continuity.redaction.funnel import redact
from continuity.store.search import entry_body

if TYPE_CHECKING:
    import numpy as np

    from continuity.retrieval.embedder import Embedder
    from continuity.store import SqlStore


def _embed_chars() -> int:
    from continuity.retrieval.embedder import EMBED_CHARS

    return EMBED_CHARS


def embed_text(entry: Entry) -> str:
    """The text of ``entry`` that is embedded: its redacted ``entry_body``, at most
    ``EMBED_CHARS`` (2,000) characters; "" when the row has no text."""
    return redact(entry_body(entry))[: _embed_chars()]


def memory_text(content: str) -> str:
    """The text of a memory that is embedded: ``content`` redacted, cut like ``embed_text``."""
    return redact(content)[: _embed_chars()]


@dataclass(frozen=True, slots=True)
class EmbedReport:
    """What a pass did: ``embedded`` rows and memories given a vector, ``skipped`` with
    nothing to embed (stored as empty vectors), ``left`` still waiting when it returned
    (stopped, or ``limit`` reached)."""

    embedded: int
    skipped: int
    left: int
    #: a ``session`` pass: the seq of the last row it gave a vector (None: none)
    last_seq: int | None = None

    def to_dict(self) -> dict[str, int]:
        return {"embedded": self.embedded, "skipped": self.skipped, "left": self.left}


def _as_bytes(vectors: np.ndarray, texts: list[str]) -> list[bytes]:
    from continuity.retrieval.quantize import encode

    out = []
    for vec, text in zip(vectors, texts, strict=True):
        out.append(encode(vec) if text.strip() and vec.any() else b"")
    return out


def pending_count(store: SqlStore, model_id: str) -> int:
    """Entries and memories without a vector of ``model_id`` (``doctor``, progress totals)."""
    return store.count_entries_to_embed(model_id) + store.count_memories_to_embed(model_id)


#: The most rows without a vector ``waiting_count`` reads to tell which have text.
WAITING_SCAN_ROWS = 100_000


def waiting_count(
    store: SqlStore, model_id: str, *, scan: int = WAITING_SCAN_ROWS
) -> tuple[int, bool]:
    """``(count, exact)``: the rows and memories that a pass WILL embed with ``model_id``,
    rows without text (an event, an empty message: stored as an empty vector, never
    embedded) left out (issue 40 leftover, issue 45: doctor counted them as waiting).
    Reads at most ``scan`` rows without a vector; ``exact`` is False when more were left
    unread (then ``count`` is a lower bound)."""
    from continuity.store.search import entry_body

    count = seen = 0
    cursor: tuple[str, int] | None = None
    exact = True
    while True:
        room = min(1000, scan - seen)
        if room <= 0:
            exact = not store.entries_to_embed(model_id, limit=1, after=cursor)
            break
        rows = store.entries_to_embed(model_id, limit=room, after=cursor)
        if not rows:
            break
        count += sum(1 for _k, _s, e in rows if entry_body(e).strip())
        seen += len(rows)
        cursor = (rows[-1][0], rows[-1][1])
    return count + store.count_memories_to_embed(model_id), exact


def embed_pending(
    store: SqlStore,
    embedder: Embedder,
    *,
    batch_rows: int = 256,
    limit: int | None = None,
    progress: Callable[[int, int], Any] | None = None,
    should_stop: Callable[[], bool] | None = None,
    session: tuple[str, int] | None = None,
) -> EmbedReport:
    """Embed the entries, then the memories, that have no vector of ``embedder.model_id``, in
        batches of ``batch_rows`` (see the module docstring). ``limit``: at most this many rows
        and memories in this call (None: all); ``progress(done, total)`` after each batch, in rows;
        ``should_stop()`` is asked before each batch (the daemon's shutdown). Safe to run
        concurrently with another pass (a row embedded twice is stored once). Returns an
        ``EmbedReport`` (``left`` is counted only when the pass stopped before the end: a full
    count is a scan of every row).

        ``session``: ``(session_key, seq)``: only that session's rows after ``seq`` (no memories;
        ``left`` is then 0 or 1, "more of it waits"): the daemon's pass after a turn, which reads
        the turn's new rows instead of looking through every row of the store (issue 45 item 10:
        that look was a scan of all rows per turn)."""
    if session is not None:
        return _embed_session(
            store, embedder, session, batch_rows=batch_rows, limit=limit, should_stop=should_stop
        )
    model, batch_rows = embedder.model_id, max(1, batch_rows)
    total = pending_count(store, model) if progress else 0
    if limit is not None:
        total = min(total, limit)
    done = embedded = skipped = 0

    def room() -> int:
        return batch_rows if limit is None else min(batch_rows, limit - done)

    def stop() -> bool:
        return room() <= 0 or bool(should_stop and should_stop())

    cursor: tuple[str, int] | None = None
    while not stop():
        rows = store.entries_to_embed(model, limit=room(), after=cursor)
        if not rows:
            break
        n_empty = _embed_rows(store, embedder, rows)
        cursor = (rows[-1][0], rows[-1][1])
        embedded, skipped, done = (
            embedded + len(rows) - n_empty,
            skipped + n_empty,
            done + len(rows),
        )
        if progress:
            progress(done, max(total, done))
    after: str | None = None
    while not stop():
        mems = store.memories_to_embed(model, limit=room(), after=after)
        if not mems:
            break
        texts = [memory_text(m.content) for _, m in mems]
        vectors = _as_bytes(embedder.encode(texts), texts)
        store.put_memory_vectors(
            model, [(mid, v) for (mid, _), v in zip(mems, vectors, strict=True)]
        )
        after = mems[-1][0]
        n_empty = sum(1 for v in vectors if not v)
        embedded, skipped, done = (
            embedded + len(mems) - n_empty,
            skipped + n_empty,
            done + len(mems),
        )
        if progress:
            progress(done, max(total, done))
    finished = not stop()  # every loop ended on an empty batch: nothing waits
    return EmbedReport(embedded, skipped, 0 if finished else pending_count(store, model))


def _embed_session(
    store: SqlStore,
    embedder: Embedder,
    session: tuple[str, int],
    *,
    batch_rows: int,
    limit: int | None,
    should_stop: Callable[[], bool] | None,
) -> EmbedReport:
    model, batch_rows = embedder.model_id, max(1, batch_rows)
    key, cursor = session[0], (session[0], session[1])
    done = embedded = skipped = 0
    last: int | None = None
    while limit is None or done < limit:
        if should_stop and should_stop():
            return EmbedReport(embedded, skipped, 1, last)
        room = batch_rows if limit is None else min(batch_rows, limit - done)
        rows = store.entries_to_embed(model, limit=room, after=cursor, sessions=(key,))
        if not rows:
            return EmbedReport(embedded, skipped, 0, last)
        n_empty = _embed_rows(store, embedder, rows)
        cursor = (rows[-1][0], rows[-1][1])
        embedded, skipped, done = (
            embedded + len(rows) - n_empty,
            skipped + n_empty,
            done + len(rows),
        )
        last = cursor[1]
    return EmbedReport(embedded, skipped, 1, last)


def _embed_rows(store: SqlStore, embedder: Embedder, rows: Sequence[tuple[str, int, Any]]) -> int:
    """Encode ``(session_key, seq, entry)`` rows and store their vectors (one transaction);
    returns how many had nothing to embed (stored as empty vectors)."""
    texts = [embed_text(e) for _, _, e in rows]
    vectors = _as_bytes(embedder.encode(texts), texts)
    store.put_entry_vectors(
        embedder.model_id, [(k, q, v) for (k, q, _), v in zip(rows, vectors, strict=True)]
    )
    return sum(1 for v in vectors if not v)


__all__ = ["EmbedReport", "embed_pending", "embed_text", "memory_text", "pending_count"]
