"""The vector index (issue 40): exact cosine similarity over every stored vector of a model,
in memory.

**Why exact, and in memory.** Vectors are unit-length ``float32`` (``embedder``), so cosine is
a dot product; a query is one matrix-vector product over the whole matrix (NumPy, BLAS) and a
partial sort: at 256 dimensions a million rows is 1 GB... no: 1M x 256 x 4 bytes = 1 GiB;
at the default 256 dimensions 100,000 rows are 100 MB and a query over them takes a few
milliseconds (``bench/retrieval.py`` measures it). No approximate structure, so nothing
trades recall for speed, and the ranking is the same on SQLite and PostgreSQL.

**Incremental.** ``refresh(store)`` reads only vectors with ``vector_id`` above the highest it
has seen (ids only grow: ``store.vectors``), in chunks of ``READ_CHUNK``; the matrix grows by
doubling (amortised O(1) per row, at most twice the rows' memory). Vectors of a row that was
deleted stay until the process restarts; callers look their rows up and drop what is gone.

**Ties** are broken by (session_key, seq), the order every ranking of the store uses.
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

    from continuity.store import SqlStore

#: Vectors read from the store per chunk by ``refresh``.
READ_CHUNK = 10_000
#: Rows of the first matrix (it doubles when full).
FIRST_CAPACITY = 1_024

Kind = Literal["entries", "memories"]


class VectorIndex:
    """Exact cosine search over the vectors of one model and kind. Rows are
    ``(session_key, seq)`` for entries, ``(memory_id, 0)`` for memories. Thread-safe: one
    lock around refresh and each query. Not for other models: vectors of another
    ``model_id`` are never loaded."""

    def __init__(self, model_id: str, dim: int, kind: Kind = "entries") -> None:
        import numpy as np

        self.model_id, self.dim, self.kind = model_id, dim, kind
        self._np = np
        self._lock = threading.Lock()
        self._mat = np.zeros((0, dim), dtype=np.float32)
        self._key = np.zeros(0, dtype=np.int32)  # index into self._keys
        self._seq = np.zeros(0, dtype=np.int64)
        self._keys: list[str] = []
        self._order: np.ndarray | None = None  # key id -> place among sorted keys
        self._key_ids: dict[str, int] = {}
        self._n = 0
        self.last_id = 0

    def __len__(self) -> int:
        return self._n

    def _grow(self, need: int) -> None:
        np = self._np
        cap = max(FIRST_CAPACITY, len(self._mat))
        while cap < need:
            cap *= 2
        if cap == len(self._mat):
            return
        for name in ("_mat", "_key", "_seq"):
            old = getattr(self, name)
            new = np.zeros((cap, *old.shape[1:]), dtype=old.dtype)
            new[: self._n] = old[: self._n]
            setattr(self, name, new)

    def add(self, rows: list[tuple[int, str, int, bytes]]) -> int:
        """Add ``(vector_id, key, seq, vector bytes)`` rows (ids above ``last_id``, in
        order; bytes as ``retrieval.quantize`` stores them); returns how many. Vectors of
        another dimension raise ``ValueError``."""
        from continuity.retrieval.quantize import decode

        with self._lock:
            rows = [r for r in rows if r[0] > self.last_id and r[3]]
            if not rows:
                return 0
            try:
                mat = decode([r[3] for r in rows], self.dim)
            except ValueError as exc:
                raise ValueError(
                    f"vectors of {self.model_id} are not all {self.dim}-dimensional: {exc}"
                ) from None
            self._grow(self._n + len(rows))
            end = self._n + len(rows)
            self._mat[self._n : end] = mat
            ids = []
            for _, key, _, _ in rows:
                kid = self._key_ids.get(key)
                if kid is None:
                    kid = self._key_ids[key] = len(self._keys)
                    self._keys.append(key)
                ids.append(kid)
            self._key[self._n : end] = ids
            self._seq[self._n : end] = [r[2] for r in rows]
            self._n = end
            self.last_id = rows[-1][0]
        return len(rows)

    def refresh(self, store: SqlStore) -> int:
        """Load the vectors stored since the last refresh; returns how many were added."""
        added = 0
        if self.kind == "entries":
            for chunk in store.iter_entry_vectors(
                self.model_id, after=self.last_id, chunk=READ_CHUNK
            ):
                added += self.add(chunk)
        else:
            for mchunk in store.iter_memory_vectors(
                self.model_id, after=self.last_id, chunk=READ_CHUNK
            ):
                added += self.add([(i, mid, 0, v) for i, mid, v in mchunk])
        return added

    def scores(
        self, query_vec: np.ndarray, *, sessions: Collection[str] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cosines)``: the positions of the rows allowed by ``sessions`` (None: all)
        and their cosine with ``query_vec`` (shape ``(dim,)``; a unit vector)."""
        np = self._np
        q = np.asarray(query_vec, dtype=np.float32).reshape(-1)[: self.dim]
        with self._lock:
            n = self._n
            if sessions is None:
                rows = np.arange(n)
                cos = self._mat[:n] @ q
            else:
                wanted = [self._key_ids[k] for k in sessions if k in self._key_ids]
                rows = np.flatnonzero(np.isin(self._key[:n], wanted))
                cos = self._mat[rows] @ q if len(rows) else np.zeros(0, dtype=np.float32)
        return rows, cos

    def top(
        self,
        query_vec: np.ndarray,
        k: int,
        *,
        sessions: Collection[str] | None = None,
        min_score: float | None = None,
    ) -> list[tuple[str, int, float]]:
        """The ``k`` rows most similar to ``query_vec``: ``(key, seq, cosine)`` best first,
        ties by (key, seq); only rows of ``sessions`` when given, only cosines above
        ``min_score`` when given."""
        rows, cos = self.scores(query_vec, sessions=sessions)
        return self.pick(rows, cos, k, min_score=min_score)

    def pick(
        self, rows: np.ndarray, cos: np.ndarray, k: int, *, min_score: float | None = None
    ) -> list[tuple[str, int, float]]:
        """The best ``k`` of ``scores``' answer (see ``top``); exact at the cut: every row
        scoring the same as the k-th is ranked by (key, seq) before cutting."""
        np = self._np
        if min_score is not None:
            keep = cos > min_score
            rows, cos = rows[keep], cos[keep]
        if k <= 0 or not len(rows):
            return []
        if k < len(rows):
            part = np.argpartition(cos, len(cos) - k)[len(cos) - k :]  # no negated copy
            floor = cos[part].min()
            chosen = np.flatnonzero(cos >= floor)
        else:
            chosen = np.arange(len(rows))
        out = [
            (self._keys[self._key[rows[i]]], int(self._seq[rows[i]]), float(cos[i])) for i in chosen
        ]
        out.sort(key=lambda r: (-r[2], r[0], r[1]))
        return out[:k]

    def ranks_of(
        self,
        rows: np.ndarray,
        cos: np.ndarray,
        keys: list[tuple[str, int]],
        *,
        min_score: float | None = None,
    ) -> dict[tuple[str, int], tuple[int, float] | None]:
        """The exact 1-based rank and cosine of each of ``keys`` in the full ranking of
        ``scores``' answer (``rows``, ``cos``; ties by (key, seq), only cosines above
        ``min_score``): None for a key not ranked (no vector, outside ``rows``, or at or below
        ``min_score``). One pass over ``cos`` per key (issue 40: a row found by words gets its
        exact vector rank without reading the vector list that deep)."""
        np = self._np
        out: dict[tuple[str, int], tuple[int, float] | None] = {}
        with self._lock:
            for key, seq in keys:
                kid = self._key_ids.get(key)
                pos = -1
                if kid is not None and len(rows):
                    hit = np.flatnonzero(
                        (self._key[: self._n] == kid) & (self._seq[: self._n] == seq)
                    )
                    if len(hit):
                        at = int(np.searchsorted(rows, hit[0]))
                        pos = at if at < len(rows) and rows[at] == hit[0] else -1
                if pos < 0 or (min_score is not None and cos[pos] <= min_score):
                    out[(key, seq)] = None
                    continue
                c = cos[pos]
                tied = rows[cos == c]  # rows of one cosine are ranked by (key, seq)
                order = self._key_order()
                tk, ts = order[self._key[tied]], self._seq[tied]
                me = order[kid]
                before = int(np.count_nonzero((tk < me) | ((tk == me) & (ts < seq))))
                out[(key, seq)] = (int(np.count_nonzero(cos > c)) + before + 1, float(c))
        return out

    def _key_order(self) -> np.ndarray:
        """Each key id's place among the keys sorted as strings (held lock; recomputed when
        keys were added): ties of one cosine compare (key, seq) in numpy, where comparing
        them in Python cost O(ties) per row (the bench tree repeats rows: hundreds of ties)."""
        np = self._np
        if self._order is None or len(self._order) != len(self._keys):
            order = np.empty(len(self._keys), dtype=np.int64)
            order[sorted(range(len(self._keys)), key=self._keys.__getitem__)] = np.arange(
                len(self._keys)
            )
            self._order = order
        return self._order

    def memory_bytes(self) -> int:
        """Bytes held by the matrix and row arrays (capacity, not rows)."""
        return int(self._mat.nbytes + self._key.nbytes + self._seq.nbytes)


_SHARED: dict[tuple[str, str, str], VectorIndex] = {}
_SHARED_LOCK = threading.Lock()


def shared_index(store: SqlStore, model_id: str, kind: Kind = "entries") -> VectorIndex:
    """The process's index of ``model_id`` vectors of ``kind`` in ``store``'s database (one
    per database URL, model and kind), refreshed before it is returned. The dimension is read
    from ``model_id`` (``name/dim``)."""
    dim = int(model_id.rsplit("/", 1)[1])
    key = (str(store.url), model_id, kind)
    with _SHARED_LOCK:
        index = _SHARED.get(key)
        if index is None:
            index = _SHARED[key] = VectorIndex(model_id, dim, kind)
    index.refresh(store)
    return index


def forget_shared() -> None:
    """Drop every shared index (tests; a store whose rows were replaced)."""
    with _SHARED_LOCK:
        _SHARED.clear()


__all__ = ["VectorIndex", "forget_shared", "shared_index", "READ_CHUNK"]
