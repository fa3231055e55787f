"""How a raw line's bytes are kept in ``raw_lines.data`` (issue 17, goal 3: one copy of each
raw line, compressed where that pays).

A line of at least ``MIN_BYTES`` is stored as a zstd frame (level ``LEVEL``, through the
``zstandard`` binding) when the frame saves at least ``MIN_SAVING`` of its bytes; else as
it is. ``codec`` says which: ``None`` the bytes themselves, ``ZSTD`` (1) a frame. The line's
SHA-256 is always of the original bytes, so deduplication and lossless checks do not depend
on how a line is kept. Measured on the 50 MB corpus of ``bench/scale.py`` (real Claude Code and pi lines, 42,370
of them): level 3 keeps raw lines in 46% of their bytes; ``encode`` runs at about 65 MB/s and
``decode`` at about 180 MB/s on one core of the 2-core benchmark machine (0.8 s of CPU for
those 50 MB, about 5% of their import).
"""

from __future__ import annotations

import threading

import zstandard

ZSTD = 1
LEVEL = 3
MIN_BYTES = 128
MIN_SAVING = 0.10

_local = threading.local()


def _compressor() -> zstandard.ZstdCompressor:
    # A compressor is not safe to share between threads (the daemon writes from several).
    c = getattr(_local, "compressor", None)
    if c is None:
        c = _local.compressor = zstandard.ZstdCompressor(level=LEVEL, write_checksum=False)
    return c


def encode(data: bytes) -> tuple[bytes, int | None]:
    """``(stored bytes, codec)`` of a line's ``data``: a zstd frame and ``ZSTD`` when the line
    has at least ``MIN_BYTES`` and the frame is at least ``MIN_SAVING`` smaller, else
    ``(data, None)``."""
    if len(data) < MIN_BYTES:
        return data, None
    frame = _compressor().compress(data)
    if len(frame) <= len(data) * (1 - MIN_SAVING):
        return frame, ZSTD
    return data, None


def decode(stored: bytes, codec: int | None) -> bytes:
    """The line's original bytes from what ``encode`` stored. Raises ``ValueError`` for an
    unknown codec, ``zstandard.ZstdError`` for a damaged frame."""
    if codec is None:
        return stored
    if codec == ZSTD:
        d = getattr(_local, "decompressor", None)
        if d is None:
            d = _local.decompressor = zstandard.ZstdDecompressor()
        return d.decompress(stored)
    raise ValueError(f"raw line stored with unknown codec {codec!r}")


__all__ = ["MIN_BYTES", "MIN_SAVING", "LEVEL", "ZSTD", "decode", "encode"]
