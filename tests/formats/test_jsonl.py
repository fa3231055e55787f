"""``formats.jsonl.LineReader`` across read chunks (issue 22): a line spanning many chunks reads
exactly as it would from one chunk (numbers, offsets, raw bytes, parse, oversize, pending
tail). Its speed (linear in the line's length) is a figure of ``bench/lines.py``, not a test."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings, strategies as st

from continuity.formats import jsonl
from continuity.formats.jsonl import LineReader


def _read(data: bytes, chunk: int, monkeypatch: pytest.MonkeyPatch, **kw: object):
    """Every line (as comparable tuples) and the reader's final counters, read ``chunk``
    bytes at a time."""
    with monkeypatch.context() as m:
        m.setattr(jsonl, "CHUNK_BYTES", chunk)
        reader = LineReader(io.BytesIO(data), **kw)  # type: ignore[arg-type]
        lines = [
            (ln.number, ln.offset, ln.raw, ln.data, ln.error, ln.blank, ln.salvaged)
            for ln in reader
        ]
    return lines, (reader.offset, reader.line, reader.blank, reader.pending_tail)


def test_long_line_split_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 300,000-byte line read in 1,000-byte chunks (301 chunks) is one line with its exact
    bytes and offset; the lines around it, a CRLF line, a blank line and an unterminated
    last line keep their numbers and offsets."""
    big = json.dumps(
        {"type": "user", "content": "é" * 150_000}, ensure_ascii=False
    ).encode()  # 300,031 bytes
    first, crlf, last = b'{"n": 1}', b'{"n": 3}\r', b'{"n": 5}'
    data = first + b"\n" + big + b"\n" + crlf + b"\n\n" + last
    lines, counters = _read(data, 1000, monkeypatch)
    assert [(n, off, len(raw)) for n, off, raw, *_ in lines] == [
        (1, 0, 8),
        (2, 9, 300_031),
        (3, 300_041, 9),
        (5, 300_052, 8),
    ]
    assert lines[1][2] == big and lines[1][3] == {"type": "user", "content": "é" * 150_000}
    assert lines[2][2] == crlf and lines[2][3] == {"n": 3}
    assert counters == (len(data), 5, 1, 0)  # offset past the accepted last line, 1 blank


def test_oversize_line_split_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over ``max_line_bytes`` (10,000) a 50,000-byte line spanning 51 chunks is one oversize
    line holding its first 10,000 bytes, its length told without the LF; the next line starts
    right after its LF. Unterminated at the end, it is a pending tail of its full length."""
    long = b'{"x": "' + b"a" * 49_991 + b'"}'  # 50,000 bytes
    data = long + b"\n" + b'{"n": 2}\n' + long
    lines, counters = _read(data, 1000, monkeypatch, max_line_bytes=10_000)
    assert [(n, off, raw, d) for n, off, raw, d, *_ in lines] == [
        (1, 0, long[:10_000], None),
        (2, 50_001, b'{"n": 2}', {"n": 2}),
    ]
    # Its length without the LF (it said 50,001 when the line spanned chunks).
    assert lines[0][4].startswith("oversize: line of 50000 bytes is over the 10000-byte limit")
    assert counters == (50_010, 2, 0, 50_000)


_LINE = st.one_of(
    st.dictionaries(st.text(max_size=5), st.text(max_size=40), max_size=3).map(
        lambda d: json.dumps(d, ensure_ascii=False).encode()
    ),
    st.binary(max_size=30).map(lambda b: b.replace(b"\n", b" ")),
    st.sampled_from(
        [
            b"",
            b"\r",
            b"   ",
            b'{"a": 1}\r',
            b"\x00\x00" + b'{"b": 2}',
            b'{"torn',
            b"\xef\xbb\xbf{}",
            b'{"s": "\\ud83c"}',
        ]
    ),
)


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(_LINE, max_size=12),
    end_lf=st.booleans(),
    chunk=st.integers(1, 40),
    limit=st.sampled_from([20, 1 << 20]),
)
def test_chunk_size_never_changes_what_is_read(
    lines: list[bytes], end_lf: bool, chunk: int, limit: int
) -> None:
    """Property: any chunk size (1 to 40 bytes) reads the same lines and counters as one
    chunk holding the whole file, also with a line limit that makes some lines oversize."""
    data = b"\n".join(lines) + (b"\n" if end_lf and lines else b"")
    mp = pytest.MonkeyPatch()
    try:
        whole = _read(data, 1 << 20, mp, max_line_bytes=limit)
        assert _read(data, chunk, mp, max_line_bytes=limit) == whole
    finally:
        mp.undo()


_RECORD = st.dictionaries(
    st.sampled_from(["type", "uuid", "text", "n"]),
    st.one_of(st.text(max_size=20), st.integers(), st.none()),
    min_size=1,
    max_size=4,
).map(lambda d: d if isinstance(d.get("type"), str) else {**d, "type": "t"})
#: (every record of the three harnesses has a string ``type``: rule 6 relies on it after a
#: torn fragment)


@settings(max_examples=200, deadline=None)
@given(
    records=st.lists(_RECORD, min_size=2, max_size=6),
    fragment=st.sampled_from([b"", b'{"type":"user","message":{"content":"hal', b"\x00" * 7]),
)
def test_glued_records_are_all_read_in_order(records: list[dict], fragment: bytes) -> None:
    """Property (issue 18): records glued on one line (a lost newline), after a torn fragment
    or NULs or not, are all read, in order; the line keeps its bytes and says what was cut."""
    body = fragment + b"".join(json.dumps(r, ensure_ascii=False).encode() for r in records)
    (line,) = list(LineReader(io.BytesIO(body + b"\n")))
    assert line.records == tuple(records)
    assert line.raw == body and line.error is None
    assert line.salvaged is not None and f"{len(records)} records glued" in line.salvaged
    assert ("cut off" in line.salvaged) == bool(fragment)


@pytest.mark.parametrize("first", [b"\xef\xbb\xbf", b"\xef\xbb\xbf  ", b"\xef\xbb\xbf\r"])
def test_a_first_line_holding_only_a_bom_is_blank(first):
    """Fresh-user review: a byte order mark alone on the first line was a bad line ("not
    JSON: Input is a zero-length, empty document"), the same blank line without it not."""
    lines = list(LineReader(io.BytesIO(first + b'\n{"a":1}\n'), keep_blank=True))
    assert [(x.number, x.blank, x.data, x.error) for x in lines] == [
        (1, True, None, None),
        (2, False, {"a": 1}, None),
    ]
    assert lines[0].raw == first
