"""How a raw line's bytes are kept (issue 17, goal 3: one copy of each raw line, compressed
where that pays; issue 43, goal 2: compressed by block).

**By block** (``BLOCK``, revision 0022): the new lines of one write, in the order they were
read, are joined with ``\\n`` into blocks of about ``BLOCK_BYTES`` and each block is one zstd
frame in ``raw_blocks``; a line's ``raw_lines`` row then holds no bytes, only its block and
its index in it. Lines of one session repeat their structure (keys, ids, paths, the same file
read twice), which a frame over many lines finds and a frame per line cannot: on the real
sessions of ``../shared/data`` (3.05 MB) per-line frames keep 45 % of the bytes, 64 KiB
blocks 25 %; on a 50 MB tree of ``bench/peers.py`` the raw lines' pages went from 32.2 MB
(``raw_lines`` and its key) to 13.8 MB (``raw_blocks`` 8.2 MB beside it), and their CPU with
them (one frame per 128 KiB instead of one per line). Since 8 Dec 2026 (issue 43 goal 2) a
block holds up to 1 MiB (ClickHouse's ``max_compress_block_size``): a frame finds what repeats
over a whole MiB of one session (the same file read again, the same long tool result), not
only what repeats within 128 KiB. On the shared real sessions (small files) blocks keep 19.2 %
of the bytes instead of 21.7 %; on ``bench/peers.py``'s 323 MB tree, whose files repeat
their real lines with fresh ids, ``raw_blocks`` went from 52.5 MB to 20.9 MB, and the writer
compresses faster (766 MB/s at 1 MiB against 426 MB/s at 128 KiB, level 3). Lines are only
ever read a whole file at a time (``Store.raw_lines``, which keeps the last blocks decoded:
``BlockCache``); decoding a 1 MiB block takes about 0.7 ms.

**A line alone** (one new line in a write, a line holding ``\\n`` (never from a JSONL split,
but the store takes any bytes), or a line of at least ``BLOCK_BYTES``):
a line of at least ``MIN_BYTES`` is stored as a zstd frame (level ``LEVEL``, through the
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
from collections.abc import Sequence

import zstandard

from continuity.store import textdicts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.store.records import RawLine

ZSTD = 1
#: ``raw_lines.codec`` of a line kept in a block: ``data`` is empty, ``block_id`` and
#: ``block_index`` say where its bytes are.
BLOCK = 2
#: A block is closed once its lines reach this many bytes (uncompressed); 128 KiB before
#: 8 Dec 2026 (blocks of any size read back: each is one frame).
BLOCK_BYTES = 1024 * 1024
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
    if codec == BLOCK:
        raise ValueError("a raw line kept in a block has no bytes of its own: read its block")
    raise ValueError(f"raw line stored with unknown codec {codec!r}")


#: A row's content JSON shorter than this many bytes is stored as text (revision 0024).
MIN_TEXT_BYTES = 256
#: ... or this many, once the store has a text dictionary (revision 0032): with the
#: dictionary a short row's JSON (``[{"type":"text","text":...}]``) compresses too.
MIN_DICT_TEXT_BYTES = 64


# ---------------------------------------------------------------------------- text dictionaries
#
# Issue 43 goal 2 (revision 0032): a row's content JSON is one small zstd frame, and a frame
# of a few hundred bytes finds little to repeat inside itself. A dictionary trained on the
# store's own rows (the JSON keys, the tool names and arguments, the text a user's sessions
# repeat) gives every frame that history to refer to. A frame names its dictionary (zstd's
# dictionary id in its header), so frames made with and without one, or with two different
# ones, sit side by side and each decodes alone; a dictionary is never changed or deleted.

#: a trained dictionary's size in bytes (zstd's default, 110 KiB)
DICT_BYTES = 112_640
#: a store trains its dictionary once it holds this many long rows (``content_z``) ...
DICT_TRAIN_ROWS = 2_000
#: ... from its newest rows, at most this many bytes of their content JSON
DICT_SAMPLE_BYTES = 8 * 1024 * 1024


class TextDict:
    """One trained dictionary: ``dict_id`` (zstd's, the number its frames carry, > 0) and its
    ``data`` (the bytes a store keeps in ``text_dicts``). Raises ``ValueError`` for bytes that
    are not a zstd dictionary."""

    __slots__ = ("data", "dict_id", "zdict")

    def __init__(self, data: bytes) -> None:
        zdict = zstandard.ZstdCompressionDict(data, dict_type=zstandard.DICT_TYPE_FULLDICT)
        try:
            dict_id = zdict.dict_id()
        except zstandard.ZstdError as exc:
            raise ValueError(f"not a zstd dictionary: {exc}") from None
        if not dict_id:
            raise ValueError("not a zstd dictionary: it has no dictionary id")
        self.data, self.dict_id, self.zdict = data, dict_id, zdict

    def __reduce__(self) -> tuple[type[TextDict], tuple[bytes]]:
        return TextDict, (self.data,)


def train_text_dict(samples: Sequence[bytes]) -> TextDict | None:
    """A dictionary trained on ``samples`` (content JSON, UTF-8), or None when zstd finds too
    little in them to train on (too few or too uniform samples)."""
    try:
        zdict = zstandard.train_dictionary(DICT_BYTES, list(samples), level=LEVEL)
    except zstandard.ZstdError:
        return None
    return TextDict(zdict.as_bytes())


_known: dict[int, TextDict] = {}
_known_lock = threading.Lock()


def remember_text_dict(d: TextDict) -> None:
    """Make ``d`` known to ``decode_text`` in this process."""
    with _known_lock:
        _known.setdefault(d.dict_id, d)


def _text_dict(dict_id: int) -> TextDict:
    d = _known.get(dict_id)
    if d is None:
        data = textdicts.load(dict_id)
        if data is None:
            from continuity.core.errors import StoreError

            raise StoreError(
                f"a row's content needs text dictionary {dict_id}, which no open store holds "
                "(its text_dicts row is gone: the database is damaged; restore it from a "
                "backup, or import the sessions again into a new workspace)"
            )
        remember_text_dict(TextDict(data))
        d = _known[dict_id]
    return d


def _text_compressor(d: TextDict | None) -> zstandard.ZstdCompressor:
    if d is None:
        return _compressor()
    cache = getattr(_local, "text_compressors", None)
    if cache is None:
        cache = _local.text_compressors = {}
    c = cache.get(d.dict_id)
    if c is None:
        c = cache[d.dict_id] = zstandard.ZstdCompressor(
            level=LEVEL, dict_data=d.zdict, write_checksum=False, write_dict_id=True
        )
    return c


def encode_text(text: str, text_dict: TextDict | None = None) -> bytes | None:
    """A row's content JSON (issue 43, revision 0024: ``entries.content_z``) as a zstd frame
    when it has at least ``MIN_TEXT_BYTES`` UTF-8 bytes (``MIN_DICT_TEXT_BYTES`` with
    ``text_dict``, revision 0032: the frame is made with it) and the frame saves at least
    ``MIN_SAVING`` of them; else None (kept as text). Measured on a 50 MB tree of
    ``bench/peers.py``: the 18.5 MB of content JSON kept in 8.8 MB without a dictionary."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) < (MIN_TEXT_BYTES if text_dict is None else MIN_DICT_TEXT_BYTES):
        return None
    frame = _text_compressor(text_dict).compress(data)
    return frame if len(frame) <= len(data) * (1 - MIN_SAVING) else None


def frame_dict_id(head: bytes) -> int:
    """The dictionary id a content frame names (0: none), read from its header: ``head`` is
    the frame or its first 18 bytes (a zstd frame header's most). A damaged header gives 0
    (``decode_text`` says what is wrong with such a frame when it is read)."""
    try:
        return int(zstandard.get_frame_parameters(head).dict_id)
    except zstandard.ZstdError:
        return 0


def decode_text(frame: bytes) -> str:
    """The content JSON ``encode_text`` compressed, with the dictionary its frame names (if
    any: from this process's known ones, else from the open stores). Raises
    ``zstandard.ZstdError`` for a damaged frame, ``core.errors.StoreError`` (exit code 4)
    for a dictionary no open store holds."""
    dict_id = zstandard.get_frame_parameters(frame).dict_id
    if not dict_id:
        return decode(frame, ZSTD).decode("utf-8", "surrogatepass")
    cache = getattr(_local, "text_decompressors", None)
    if cache is None:
        cache = _local.text_decompressors = {}
    d = cache.get(dict_id)
    if d is None:
        d = cache[dict_id] = zstandard.ZstdDecompressor(dict_data=_text_dict(dict_id).zdict)
    return d.decompress(frame).decode("utf-8", "surrogatepass")


def pack(
    lines: Sequence[tuple[str, bytes]],
) -> tuple[list[tuple[str, bytes, int | None]], list[Block]]:
    """Split ``lines`` (``(sha256, bytes)``, in the order they were read) into the lines kept
    alone and the blocks.

    Returns ``(alone, blocks)``: ``alone`` as ``(sha256, stored bytes, codec)`` (``encode``),
    ``blocks`` as ``Block``s of at least two lines each, every frame at most
    ``BLOCK_BYTES`` plus its last line before compression. Every line is in exactly one of
    them, once."""
    alone: list[tuple[str, bytes, int | None]] = []
    blocks: list[Block] = []
    group: list[tuple[str, bytes]] = []
    size = 0

    def close() -> None:
        nonlocal size
        if len(group) == 1:
            sha, data = group[0]
            alone.append((sha, *encode(data)))
        elif group:
            frame = _compressor().compress(b"\n".join(data for _, data in group))
            blocks.append(Block(frame, [sha for sha, _ in group]))
        group.clear()
        size = 0

    for sha, data in lines:
        if b"\n" in data or len(data) >= BLOCK_BYTES:
            alone.append((sha, *encode(data)))
            continue
        group.append((sha, data))
        size += len(data) + 1
        if size >= BLOCK_BYTES:
            close()
    close()
    return alone, blocks


class Block:
    """One block to store: ``frame`` (a zstd frame of the lines joined by ``\\n``) and the
    SHA-256 of each line in it, in order (a line's index in ``shas`` is its ``block_index``)."""

    __slots__ = ("frame", "shas")

    def __init__(self, frame: bytes, shas: list[str]) -> None:
        self.frame = frame
        self.shas = shas

    def __reduce__(self) -> tuple[type[Block], tuple[bytes, list[str]]]:
        return Block, (self.frame, self.shas)


#: ``pack``'s answer: ``(alone, blocks)``
Packed = tuple[list[tuple[str, bytes, int | None]], list[Block]]


def pack_lines(lines: Sequence[RawLine]) -> Packed:
    """``pack`` of the distinct lines of ``lines`` (by SHA-256, first seen first), as
    ``store.bulk.BulkWriter.put_raw_lines`` packs them when none is kept yet."""
    return pack(list({ln.sha256: ln.data for ln in lines}.items()))


def unpack(frame: bytes) -> list[bytes]:
    """The lines of a block, in order, from its stored frame. Raises ``zstandard.ZstdError``
    for a damaged frame."""
    return decode(frame, ZSTD).split(b"\n")


class BlockCache:
    """The lines of the last ``size`` blocks read, by block id: a reader of a whole file
    decodes each block once (its lines are next to each other)."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._blocks: dict[int, list[bytes]] = {}

    def get(self, block_id: int) -> list[bytes] | None:
        return self._blocks.get(block_id)

    def put(self, block_id: int, lines: list[bytes]) -> None:
        if len(self._blocks) >= self.size:
            self._blocks.pop(next(iter(self._blocks)))
        self._blocks[block_id] = lines


__all__ = [
    "BLOCK",
    "BLOCK_BYTES",
    "LEVEL",
    "MIN_BYTES",
    "MIN_SAVING",
    "ZSTD",
    "Block",
    "BlockCache",
    "MIN_TEXT_BYTES",
    "MIN_DICT_TEXT_BYTES",
    "DICT_BYTES",
    "DICT_SAMPLE_BYTES",
    "DICT_TRAIN_ROWS",
    "TextDict",
    "decode",
    "decode_text",
    "encode",
    "encode_text",
    "pack",
    "remember_text_dict",
    "train_text_dict",
    "unpack",
]
