"""Streaming JSONL line reader shared by every format (spec/formats.md §5.1, §5.4).

Rules it implements, so no reader has to:

1. bytes are split on LF (0x0A) only, one trailing CR stripped: U+2028/U+2029 inside JSON strings
   never split a line;
2. each line stands alone: a line that fails to parse is yielded with ``error`` set (raw kept) and
   reading goes on (B35: a NUL-filled line is one bad line, not the end of the file);
3. a final line without LF that fails to parse is a *pending tail* (the harness is mid-write): it
   is not yielded, and ``LineReader.offset`` stays before it so the next import retries it;
4. UTF-8 only; invalid bytes make the line an error; a leading BOM is stripped; blank lines are
   counted and skipped (yielded with ``blank=True`` when ``keep_blank``, so a caller can keep
   their bytes);
5. a line longer than ``max_line_bytes`` (default 64 MiB) is not parsed: it is yielded raw with
   error ``oversize``;
6. a bad line that holds complete records (a crash's torn fragment or a run of NULs, then
   the next append written right after it: B35, B36; or two records glued by a lost newline,
   ``{...}{...}``: issue 18) yields every record it holds, the first as ``data`` and the
   others in ``more``, with ``salvaged`` saying what was found and what was cut off; the raw
   line is kept whole.

Memory stays flat: the file is read in 1 MiB chunks and only the current line is held. Time is
linear in the file's size, also for one line spanning many chunks (issue 22).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import orjson

from continuity.core.text import json_type_name

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
CHUNK_BYTES = 1024 * 1024
BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class Line:
    """One physical line of a JSONL file.

    ``number`` is 1-based; ``offset`` the byte offset of its first byte; ``raw`` its exact bytes
    without the LF (a trailing CR is kept in ``raw`` for losslessness, stripped for parsing).
    ``data`` is the parsed JSON object; ``error`` says why not (then ``data`` is None).
    """

    number: int
    offset: int
    raw: bytes
    data: dict | None
    error: str | None
    blank: bool = False
    #: Rule 6: why the line was bad, when ``data`` is the first complete record found in it.
    salvaged: str | None = None
    #: Rule 6: the records after ``data`` on the same line (glued by a lost newline), in order.
    more: tuple[dict, ...] = ()

    @property
    def records(self) -> tuple[dict, ...]:
        """Every record the line holds, in order: ``data`` then ``more`` (empty when none)."""
        if self.data is None:
            return ()
        return (self.data, *self.more) if self.more else (self.data,)

    @property
    def sha256(self) -> str:
        """SHA-256 hex of ``raw``."""
        return hashlib.sha256(self.raw).hexdigest()


class LineReader:
    """Iterate the lines of ``stream`` from byte ``start_offset`` (line numbers continue from
    ``start_line``, the count of lines before that offset).

    After iteration, ``offset`` is the byte offset just past the last complete line (or an
    accepted unterminated last line), ``line`` the number of lines consumed, ``blank`` the blank
    lines skipped and ``pending_tail`` the byte length of an unparsed, unterminated tail.
    """

    def __init__(
        self,
        stream: BinaryIO,
        *,
        start_offset: int = 0,
        start_line: int = 0,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        keep_blank: bool = False,
    ) -> None:
        self._stream = stream
        self.keep_blank = keep_blank
        self.offset = start_offset
        self.line = start_line
        self.blank = 0
        self.pending_tail = 0
        self.max_line_bytes = max_line_bytes

    def __iter__(self) -> Iterator[Line]:
        loads, JSONDecodeError = orjson.loads, orjson.JSONDecodeError
        stream = self._stream
        # Resuming just after an unterminated last line that was accepted: its LF arrives now
        # and closes that line; it is not a new (blank) line.
        skip_lf = False
        if self.offset > 0:
            stream.seek(self.offset - 1)
            skip_lf = stream.read(1) != b"\n"
        stream.seek(self.offset)
        # The current line's bytes before this chunk, as the chunks' tails: joined once when
        # its LF arrives, and only the new chunk is searched for an LF, so a line of n bytes
        # costs O(n) whatever the number of chunks it spans (issue 22: growing one ``bytes``
        # and searching it from its start again each chunk was quadratic).
        parts: list[bytes] = []
        parts_len = 0
        line_start = self.offset  # file offset of the current line's first byte
        chunk_start = self.offset  # file offset of chunk[0]
        oversize_from: int | None = None  # file offset of an oversize line being skipped
        oversize_head = b""
        while True:
            chunk = stream.read(CHUNK_BYTES)
            if not chunk:
                break
            pos = 0
            if oversize_from is not None:
                nl = chunk.find(b"\n")
                if nl < 0:
                    chunk_start += len(chunk)
                    continue
                self.line += 1
                pos = nl + 1
                line_start = self.offset = chunk_start + pos
                # Its length without the LF, as for an oversize line inside one chunk.
                yield Line(
                    self.line,
                    oversize_from,
                    oversize_head,
                    None,
                    self._oversize(chunk_start + nl - oversize_from),
                )
                oversize_from = None
            while True:
                nl = chunk.find(b"\n", pos)
                if nl < 0:
                    break
                if parts:
                    parts.append(chunk[pos:nl])
                    raw = b"".join(parts)
                    parts, parts_len = [], 0
                else:
                    raw = chunk[pos:nl]
                line_offset = line_start
                pos = nl + 1
                line_start = chunk_start + pos
                if skip_lf:
                    skip_lf = False
                    if not raw.strip(b"\r"):
                        self.offset = line_start
                        continue
                self.line += 1
                self.offset = line_start
                if len(raw) > self.max_line_bytes:
                    yield Line(
                        self.line,
                        line_offset,
                        raw[: self.max_line_bytes],
                        None,
                        self._oversize(len(raw)),
                    )
                    continue
                # Fast path: a line orjson reads as an object is good as it is (orjson allows
                # the trailing CR as whitespace and refuses NUL, a BOM and blank input, which
                # ``_parse`` then sorts out).
                try:
                    data = loads(raw)
                except JSONDecodeError:
                    data = None
                if data.__class__ is dict:
                    yield Line(self.line, line_offset, raw, data, None)
                    continue
                item = self._parse(raw, line_offset)
                if item is not None:
                    yield item
            if pos < len(chunk):
                parts.append(chunk[pos:] if pos else chunk)
                parts_len += len(chunk) - pos
                skip_lf = False
            chunk_start += len(chunk)
            if parts_len > self.max_line_bytes:
                # Keep a bounded prefix of the oversize line (raw, content-addressed) and skip
                # the rest up to its LF without buffering it.
                oversize_from = line_start
                oversize_head = b"".join(parts)[: self.max_line_bytes]
                parts, parts_len = [], 0
        if oversize_from is not None:
            self.pending_tail = chunk_start - oversize_from
            return
        if parts:
            buf = b"".join(parts)
            # Unterminated last line: accepted if it parses, else a pending tail (rule 3).
            stripped = buf[:-1] if buf.endswith(b"\r") else buf
            if not stripped.strip():
                return
            data, error = _decode(stripped, first=self.line == 0)
            if error is None and data is not None:
                self.line += 1
                self.offset = line_start + len(buf)
                yield Line(self.line, line_start, buf, data, None)
            else:
                self.pending_tail = len(buf)

    def _oversize(self, n_bytes: int) -> str:
        return (
            f"oversize: line of {n_bytes} bytes is over the {self.max_line_bytes}-byte "
            "limit; kept raw (its first bytes), not parsed"
        )

    def _parse(self, raw: bytes, offset: int) -> Line | None:
        body = raw[:-1] if raw.endswith(b"\r") else raw
        if not (body[len(BOM) :] if self.line == 1 and body.startswith(BOM) else body).strip():
            # blank, also when all the first line holds is the byte order mark
            self.blank += 1
            return Line(self.line, offset, raw, None, None, blank=True) if self.keep_blank else None
        data, error = _decode(body, first=self.line == 1)
        if data is None and error is not None:
            found = salvage(body[len(BOM) :] if self.line == 1 and body.startswith(BOM) else body)
            if found is not None:
                return Line(
                    self.line,
                    offset,
                    raw,
                    found.records[0],
                    None,
                    salvaged=found.describe(error),
                    more=found.records[1:],
                )
        return Line(self.line, offset, raw, data, error)


#: Rule 6 looks at most this many record starts, on lines of at most this many bytes.
SALVAGE_STARTS = 64
SALVAGE_MAX_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Salvage:
    """What rule 6 found on a bad line: ``records`` (one or more complete JSON objects, in
    order) and ``cut_bytes``, the UTF-8 bytes between or before them that are no record
    (a torn fragment, NULs)."""

    records: tuple[dict, ...]
    cut_bytes: int
    #: Whether the cut bytes come after the last record (a record, then a torn fragment).
    trailing: bool = False

    def describe(self, error: str) -> str:
        """The warning for the line: ``"<error>; <what was found>"``."""
        if len(self.records) == 1:
            where = "after" if self.trailing else "before"
            return (
                f"{error}; {self.cut_bytes} bytes {where} a complete record cut off "
                "(kept raw), the record imported"
            )
        text = (
            f"{error}; {len(self.records)} records glued on one line (a lost newline), "
            "each imported"
        )
        if self.cut_bytes:
            text += f"; {self.cut_bytes} bytes that are no record cut off (kept raw)"
        return text


def salvage(body: bytes) -> Salvage | None:
    """The complete JSON objects a bad line holds (rule 6), or None (none, or the line is over
    ``SALVAGE_MAX_BYTES``).

    The line is read as a *head* and a *tail*: the head is the run of objects that starts at
    byte 0, one right after the other (whitespace between them allowed: ``{..}{..}``, a lost
    newline); the tail the run of objects that reaches the line's end from the earliest
    ``{"`` after the head (at most ``SALVAGE_STARTS`` tried) where one does and its first
    object has a string ``type`` (every record of the three harnesses has one; an object
    nested in a torn fragment, ``{"a":{"b":1}`` then the next record, rarely does), else the
    earliest start where the rest is one object. Bytes between them (a torn fragment, NULs)
    are cut off. A record holding bytes that are not UTF-8 is no record."""
    if len(body) > SALVAGE_MAX_BYTES:
        return None
    text = body.decode("utf-8", "surrogateescape")
    head, end = _objects_from(text, len(text) - len(text.lstrip(_SPACE)), to_end=False)
    if end >= len(text):
        return Salvage(tuple(head), 0) if len(head) > 1 else None
    records, tail_start = head, None
    pos, last = end, None
    for _ in range(SALVAGE_STARTS):
        pos = text.find('{"', pos + 1)
        if pos < 0:
            break
        tail, _ = _objects_from(text, pos, to_end=True)
        if not tail:
            continue
        if isinstance(tail[0].get("type"), str):
            records, tail_start = head + tail, pos
            break
        if len(tail) == 1 and last is None:
            last = pos, tail
    else:
        pos = -1
    if tail_start is None and last is not None:
        # No run starting with a typed record: the one object the line ends with.
        records, tail_start = head + last[1], last[0]
    if not records:
        return None
    cut = len(text[end:tail_start].encode("utf-8", "surrogateescape"))
    return Salvage(tuple(records), cut, trailing=tail_start is None)


_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


def _objects_from(text: str, pos: int, *, to_end: bool) -> tuple[list[dict], int]:
    """The JSON objects in a row from ``pos`` and the position after the last (whitespace
    skipped). With ``to_end``, all or nothing: ``([], pos)`` unless they reach the end."""
    out: list[dict] = []
    start = pos
    n = len(text)
    while pos < n:
        try:
            value, stop = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            break
        if not isinstance(value, dict):
            break
        try:
            text[pos:stop].encode("utf-8")  # surrogate-escaped bytes: not UTF-8, no record
        except UnicodeEncodeError:
            break
        out.append(value)
        pos = stop
        while pos < n and text[pos] in _SPACE:
            pos += 1
    if to_end and pos < n:
        return [], start
    return out, pos


def _decode(body: bytes, *, first: bool) -> tuple[dict | None, str | None]:
    if first and body.startswith(BOM):
        body = body[len(BOM) :]
    if b"\x00" in body:
        return None, "NUL bytes in line (interrupted write)"
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        data = _decode_lenient(body)
        if data is None:
            try:
                body.decode("utf-8")
            except UnicodeDecodeError as bad:
                return None, f"invalid UTF-8 at byte {bad.start}"
            if "recursion" in str(exc) or "depth limit" in str(exc):
                return None, "JSON nested too deep (over 1,024 levels)"
            return None, f"not JSON: {exc}"
    if not isinstance(data, dict):
        return None, f"not a JSON object: {json_type_name(data)}"
    return data, None


def _decode_lenient(body: bytes) -> object | None:
    """orjson rejects escaped lone surrogates (``"\\ud83c"``), which tools do emit (B43): the
    standard parser accepts them, and readers pass all text through ``text.clean``."""
    import json

    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def read_head(path: str, *, max_lines: int = 50, max_bytes: int = 256 * 1024) -> list[dict]:
    """Parsed objects of the first lines of ``path``: the input of format detection. Lines are
    read whole (``LineReader``: rule 6 salvage, a BOM, lines up to its 64 MiB limit), at most
    ``max_lines`` of them, and no line is started past ``max_bytes``: a first line of a few MB
    (a pasted screenshot) is still read, so it never hides the file's format. Bad lines are
    skipped; a pending unterminated tail is read if it parses; every record of a line holding
    glued records counts."""
    out: list[dict] = []
    with open(path, "rb") as fh:
        lines = LineReader(fh)
        for i, line in enumerate(lines):
            out.extend(line.records)  # glued records too (rule 6)
            if i + 1 >= max_lines or lines.offset >= max_bytes:
                break
    return out
