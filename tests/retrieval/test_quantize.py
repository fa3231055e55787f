"""How vectors are stored (``retrieval.quantize``, issue 43 goal 2): int8 with a scale, read
back as unit vectors; vectors stored before as float32 stay readable."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from continuity.retrieval.quantize import decode, encode

DIM = 256


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def test_a_quarter_of_the_bytes_and_the_same_direction():
    v = _unit(1)
    blob = encode(v)
    assert len(blob) == DIM + 4 and len(v.astype("<f4").tobytes()) == 4 * DIM
    back = decode([blob], DIM)[0]
    assert back.dtype == np.float32 and abs(float(np.linalg.norm(back)) - 1.0) < 1e-5
    assert float(back @ v) > 0.9999


def test_float32_and_int8_rows_read_together_in_order():
    a, b, c = _unit(2), _unit(3), _unit(4)
    got = decode([encode(a), b.astype("<f4").tobytes(), encode(c)], DIM)
    assert got.shape == (3, DIM)
    assert np.array_equal(got[1], b)  # stored before: read as it was
    assert float(got[0] @ a) > 0.9999 and float(got[2] @ c) > 0.9999


def test_a_vector_of_another_size_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"of 12 bytes is neither 260 \(int8\) nor 1024"):
        decode([encode(_unit(5)), b"x" * 12], DIM)


@settings(max_examples=200, deadline=None)
@given(
    arrays(
        np.float32,
        st.integers(2, 64),
        elements=st.floats(-1e3, 1e3, allow_nan=False, width=32),
    )
)
def test_decode_of_encode_keeps_the_direction(v):
    """Any non-zero vector comes back as its unit vector within the rounding: a cosine of
    at least 0.999 with the original (``LEVELS`` = 127 steps on its largest component)."""
    norm = float(np.linalg.norm(v.astype(np.float64)))
    if norm < 1e-3:
        return
    back = decode([encode(v)], len(v))[0]
    assert abs(float(np.linalg.norm(back)) - 1.0) < 1e-4
    assert float(back.astype(np.float64) @ (v.astype(np.float64) / norm)) > 0.999


def test_cosines_move_less_than_neighbours_differ():
    """The ranking of 500 random unit vectors against a query changes by at most swaps of
    neighbours closer than the rounding (the order of cosines apart by more than 0.01 is
    kept)."""
    rng = np.random.default_rng(7)
    mat = rng.standard_normal((500, DIM)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    q = _unit(8)
    exact = mat @ q
    stored = decode([encode(r) for r in mat], DIM) @ q
    assert float(np.max(np.abs(exact - stored))) < 0.005
    far = np.abs(exact[:, None] - exact[None, :]) > 0.01
    assert np.array_equal(
        (exact[:, None] > exact[None, :])[far], (stored[:, None] > stored[None, :])[far]
    )
