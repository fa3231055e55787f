"""How a vector is stored: int8 with one scale, a quarter of ``float32`` (issue 43 goal 2).

A stored vector was ``dim`` little-endian ``float32`` (1,024 bytes at 256 dimensions): on the
100 MB tree of ``bench/peers.py`` the vectors took 78 MB, 0.77x of the input, more than the
rows. Now ``encode`` writes a ``float32`` scale then ``dim`` signed bytes (``dim + 4`` bytes,
260 at 256 dimensions): each component rounded to ``round(x / scale)`` with ``scale =
max|x| / 127``. ``decode`` reads either form, told apart by length (``4 * dim`` is never
``dim + 4`` for a whole ``dim`` above 1), so vectors stored before stay readable, and returns
unit-length ``float32`` rows (re-normalised after the rounding; a zero vector stays zero).

The rounding moves a unit vector's components by at most ``scale / 2`` (about 0.002 for a
256-dimensional unit vector whose largest component is 0.5), so a cosine moves by about
1e-3: below what separates a row's neighbours in ``bench/retrieval.py``, whose figures are
the same either way (its README gives both). Empty bytes (a row with nothing to embed) stay
empty: ``decode`` never sees them (``store.vectors`` skips them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: The largest magnitude of a stored component.
LEVELS = 127


def encode(vec: np.ndarray) -> bytes:
    """``vec`` (shape ``(dim,)``, any float dtype, not all zero) as stored: a little-endian
    ``float32`` scale then ``dim`` int8 components (``dim + 4`` bytes)."""
    import numpy as np

    v = np.asarray(vec, dtype=np.float32).reshape(-1)
    top = float(np.max(np.abs(v))) if v.size else 0.0
    scale = top / LEVELS if top > 0 else 1.0
    q = np.clip(np.rint(v / scale), -LEVELS, LEVELS).astype(np.int8)
    return np.float32(scale).astype("<f4").tobytes() + q.tobytes()


def decode(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """The rows of ``blobs`` as a ``(len(blobs), dim)`` ``float32`` matrix of unit rows; each
    blob is ``encode``'s form (``dim + 4`` bytes) or the earlier ``4 * dim`` bytes of
    ``float32``. Raises ``ValueError`` naming the length for any other size."""
    import numpy as np

    out = np.empty((len(blobs), dim), dtype=np.float32)
    small = dim + 4
    wide = 4 * dim
    q_rows = [i for i, b in enumerate(blobs) if len(b) == small]
    f_rows = [i for i, b in enumerate(blobs) if len(b) == wide]
    if len(q_rows) + len(f_rows) != len(blobs):
        bad = next(len(b) for b in blobs if len(b) not in (small, wide))
        raise ValueError(
            f"a stored vector of {bad} bytes is neither {small} (int8) nor {wide} (float32) "
            f"for {dim} dimensions"
        )
    if f_rows:
        raw = b"".join(blobs[i] for i in f_rows)
        out[f_rows] = np.frombuffer(raw, dtype="<f4").reshape(len(f_rows), dim)
    if q_rows:
        raw = np.frombuffer(b"".join(blobs[i] for i in q_rows), dtype=np.uint8)
        raw = raw.reshape(len(q_rows), small)
        scales = raw[:, :4].copy().view("<f4").reshape(-1, 1)
        mat = raw[:, 4:].copy().view(np.int8).astype(np.float32) * scales
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        out[q_rows] = np.divide(mat, norms, out=np.zeros_like(mat), where=norms > 0)
    return out


__all__ = ["LEVELS", "decode", "encode"]
