"""Session files that are one JSON document, not JSONL (issue 42: Gemini CLI's legacy chats,
``chats/session-*.json``, written whole by ``JSON.stringify(conversation, null, 2)`` until
Gemini CLI 0.38.2 and rewritten whole on every change).

The importer is line based (spec/formats.md §5: each line kept raw, read, de-duplicated by
native id). A document is read as *parts* that stand in for lines, so that rule holds as it
is:

- ``is_document(path)``: the file's first line (after a byte order mark) is ``{`` alone and
  its second begins a member name (``"``) or ends the object (``}``), as a pretty-printed
  object's lines do. A JSONL file's lines are records, each beginning ``{``: one whose
  first line was torn down to ``{`` stays JSONL (its bad line reported, the rest read); a
  document written on one line is a JSONL line and is read as one.
- ``file_head(path)``: what format detection reads: a document's one object (``[doc]``, or
  ``[]`` when it does not parse), else ``jsonl.read_head``. ``problem(path)`` says why a
  document does not parse (the importer's reason for skipping it).
- ``DocumentReader``: ``LineReader``'s interface (iterate ``Line``; ``offset``, ``line``,
  ``blank``, ``pending_tail``) over a document. With ``records`` (the member whose array
  holds the records: Gemini CLI's ``messages``) the file is cut into parts at line starts:
  the first part runs up to the line where the first record starts and holds the
  document's other members as one record (its *header*: what Gemini CLI's migration writes
  as the JSONL's first line), then one part per record, from the line it starts on to the
  next one's (the last part also holds the document's end). A part's ``raw`` is its exact
  bytes without the line feed that ends it, so the parts joined by line feeds are the file
  byte for byte (``browse.view.source_copy``); its ``number`` the line it starts on; its
  records ``data`` then ``more``. Records that share a line share a part. Without
  ``records`` the whole file is one part holding the document.

Cutting on records keeps raw storage linear in what changed: a rewrite that appended a
message stores the new message's part and the changed header and last part again; the
unchanged parts are the same bytes, which the store keeps once (content-addressed). A
document that does not parse (truncated, invalid) is one bad part (its raw kept); one over
``DOCUMENT_MAX_BYTES`` is not parsed and its first bytes are kept, as an oversize line's.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from collections.abc import Iterator
from typing import BinaryIO

import orjson

from continuity.core.text import json_type_name
from continuity.formats.jsonl import BOM, DEFAULT_MAX_LINE_BYTES, Line, LineReader, read_head

#: A document larger than this many bytes is not parsed (Gemini CLI parses its chats whole
#: too; memory holds the bytes, their text and the parsed records at once).
DOCUMENT_MAX_BYTES = 256 * 1024 * 1024
#: bytes read to find the first line
_FIRST_LINE_BYTES = 4096
_SPACE = " \t\n\r"
_DECODER = json.JSONDecoder()


def is_document(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds one pretty-printed JSON object: its first line (a byte order
    mark and a CR aside) is ``{`` alone, and its second begins ``"`` or ``}`` (spaces aside).
    False when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            start = fh.read(_FIRST_LINE_BYTES)
    except OSError:
        return False
    if start.startswith(BOM):
        start = start[len(BOM) :]
    end = start.find(b"\n")
    if end < 0 or start[:end].strip() != b"{":
        return False
    return start[end + 1 :].lstrip(b" \t\r\n")[:1] in (b'"', b"}")


def _load(data: bytes) -> object:
    """The JSON value of ``data`` (orjson; the standard parser for what orjson refuses but
    JSON allows, escaped lone surrogates: B43). Raises ``ValueError`` saying where it fails."""
    if data.startswith(BOM):
        data = data[len(BOM) :]
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        try:
            return json.loads(data.decode("utf-8"))
        except UnicodeDecodeError as bad:
            raise ValueError(f"invalid UTF-8 at byte {bad.start}") from None
        except RecursionError:
            raise ValueError("JSON nested too deep") from None
        except ValueError:
            raise ValueError(str(exc)) from None


def _read(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes; raises ``ValueError`` for one over ``DOCUMENT_MAX_BYTES``."""
    size = os.path.getsize(path)
    if size > DOCUMENT_MAX_BYTES:
        raise ValueError(f"{size} bytes, over the {DOCUMENT_MAX_BYTES}-byte limit of a document")
    with open(path, "rb") as fh:
        return fh.read()


def problem(path: str | os.PathLike[str]) -> str | None:
    """Why the document ``path`` cannot be read: ``"not a complete JSON document (truncated or
    invalid): <where the parse stopped>"`` and the like; None when it reads as one object."""
    try:
        value = _load(_read(path))
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    except ValueError as exc:
        return f"not a complete JSON document (truncated or invalid): {exc}"
    if not isinstance(value, dict):
        return f"a JSON document that is not an object: {json_type_name(value)}"
    return None


def file_head(path: str) -> list[dict]:
    """The parsed head format detection reads (``formats.detect``): a document's one object
    (``[]`` when it does not parse: ``problem`` says why), else ``jsonl.read_head``. Raises
    ``OSError`` as reading the file does."""
    if not is_document(path):
        return read_head(path)
    try:
        value = _load(_read(path))
    except ValueError:
        return []
    return [value] if isinstance(value, dict) else []


class DocumentReader:
    """``LineReader``'s interface over a document (module docstring): iterating yields its
    parts as ``Line``s in file order; after each, ``offset`` is the byte offset past it (its
    line feed included) and ``line`` the lines read, so a batch stored mid-file records where
    it got. ``blank`` and ``pending_tail`` are always 0 (a document has no blank lines
    between records, and one that does not parse is a bad part, not a tail)."""

    def __init__(self, stream: BinaryIO, *, records: str | None) -> None:
        self._stream = stream
        self.records = records
        self.offset = 0
        self.line = 0
        self.blank = 0
        self.pending_tail = 0

    def __iter__(self) -> Iterator[Line]:
        stream = self._stream
        stream.seek(0)
        data = stream.read(DOCUMENT_MAX_BYTES + 1)
        if len(data) > DOCUMENT_MAX_BYTES:
            stream.seek(0, os.SEEK_END)
            self.offset, self.line = stream.tell(), 1
            kept = data[:DEFAULT_MAX_LINE_BYTES]
            yield Line(
                1,
                0,
                kept,
                None,
                f"oversize: a document over the {DOCUMENT_MAX_BYTES}-byte limit; its first "
                f"{len(kept)} bytes kept raw, not parsed",
            )
            return
        lines = _line_feeds(data)
        total = len(lines) + (0 if data.endswith(b"\n") else 1) if data else 0
        try:
            parts = split(data, self.records, lines)
        except ValueError as exc:
            self.offset, self.line = len(data), total
            raw = data[:-1] if data.endswith(b"\n") else data
            yield Line(
                1, 0, raw, None, f"not a complete JSON document (truncated or invalid): {exc}"
            )
            return
        for i, part in enumerate(parts):
            last = i + 1 == len(parts)
            self.offset = len(data) if last else part.offset + len(part.raw) + 1
            self.line = total if last else parts[i + 1].number - 1
            yield part


def _line_feeds(data: bytes) -> list[int]:
    return [m.start() for m in re.finditer(b"\n", data)]


def split(data: bytes, records: str | None, feeds: list[int] | None = None) -> list[Line]:
    """The parts of the document ``data`` (module docstring; ``feeds``: the byte offsets of
    its line feeds, computed when not given). Raises ``ValueError`` (``json.JSONDecodeError``
    saying the line and column) for bytes that are not one JSON object."""
    feeds = _line_feeds(data) if feeds is None else feeds
    start = len(BOM) if data.startswith(BOM) else 0
    try:
        text = data[start:].decode("utf-8")
    except UnicodeDecodeError as bad:
        raise ValueError(f"invalid UTF-8 at byte {start + bad.start}") from None
    try:
        header, items = _scan(text, records)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
    # the line each record starts on; a part begins there when nothing but spaces precede it
    char_feeds = [m.start() for m in re.finditer("\n", text)]
    cuts = [0]
    owners: list[int] = []  # the part each record belongs to
    for pos, _ in items:
        line = bisect.bisect_left(char_feeds, pos)
        line_start = char_feeds[line - 1] + 1 if line else 0
        if line > cuts[-1] and not text[line_start:pos].strip(_SPACE):
            cuts.append(line)
        owners.append(len(cuts) - 1)
    grouped: list[list[object]] = [[] for _ in cuts]
    for owner, (_, value) in zip(owners, items, strict=True):
        grouped[owner].append(value)
    parts: list[Line] = []
    for i, first in enumerate(cuts):
        begin = feeds[first - 1] + 1 if first else 0
        # a part ends at the line feed before the next one's first line, the last at the end
        # of the file (its final line feed, when it has one, ends it as a line's does)
        last = len(data) - 1 if data.endswith(b"\n") else len(data)
        end = feeds[cuts[i + 1] - 1] if i + 1 < len(cuts) else last
        values = ([header] if i == 0 else []) + grouped[i]
        objects = [v for v in values if isinstance(v, dict)]
        others = len(values) - len(objects)
        raw = data[begin:end]
        if not objects:
            kind = json_type_name(values[0]) if values else "nothing"
            parts.append(Line(first + 1, begin, raw, None, f"not a JSON object: {kind}"))
            continue
        note = (
            f"{others} member{'s' if others > 1 else ''} of {records!r} that "
            f"{'are' if others > 1 else 'is'} not an object (kept raw, not read)"
            if others
            else None
        )
        parts.append(
            Line(first + 1, begin, raw, objects[0], None, salvaged=note, more=tuple(objects[1:]))
        )
    return parts


def _skip(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos] in _SPACE:
        pos += 1
    return pos


def _expect(text: str, pos: int, what: str) -> json.JSONDecodeError:
    return json.JSONDecodeError(f"expected {what}", text, pos)


def _scan(text: str, records: str | None) -> tuple[dict, list[tuple[int, object]]]:
    """``(header, records)`` of the JSON object ``text``: its members but ``records``, and
    ``(character offset, value)`` of each element of the ``records`` array (the last such
    member wins, as in ``JSON.parse``). Without ``records`` the header is the whole object.
    Raises ``json.JSONDecodeError``."""
    pos = _skip(text, 0)
    if not text.startswith("{", pos):
        raise _expect(text, pos, "'{' (a JSON object)")
    header: dict = {}
    items: list[tuple[int, object]] = []
    pos = _skip(text, pos + 1)
    if text.startswith("}", pos):
        pos += 1
    else:
        while True:
            if not text.startswith('"', pos):
                raise _expect(text, pos, "a member name")
            name, pos = _DECODER.raw_decode(text, pos)
            pos = _skip(text, pos)
            if not text.startswith(":", pos):
                raise _expect(text, pos, "':'")
            pos = _skip(text, pos + 1)
            if records is not None and name == records and text.startswith("[", pos):
                header.pop(name, None)
                items, pos = _elements(text, pos)
            else:
                value, pos = _DECODER.raw_decode(text, pos)
                header[name] = value
                if name == records:
                    items = []
            pos = _skip(text, pos)
            if text.startswith(",", pos):
                pos = _skip(text, pos + 1)
                continue
            if text.startswith("}", pos):
                pos += 1
                break
            raise _expect(text, pos, "',' or '}'")
    if _skip(text, pos) != len(text):
        raise json.JSONDecodeError("extra data after the document", text, _skip(text, pos))
    return header, items


def _elements(text: str, pos: int) -> tuple[list[tuple[int, object]], int]:
    """The elements of the array at ``pos`` (its ``[``) with their offsets, and the offset
    past its ``]``."""
    items: list[tuple[int, object]] = []
    pos = _skip(text, pos + 1)
    if text.startswith("]", pos):
        return items, pos + 1
    while True:
        value, stop = _DECODER.raw_decode(text, pos)
        items.append((pos, value))
        pos = _skip(text, stop)
        if text.startswith(",", pos):
            pos = _skip(text, pos + 1)
            continue
        if text.startswith("]", pos):
            return items, pos + 1
        raise _expect(text, pos, "',' or ']'")


def line_source(
    stream: BinaryIO,
    *,
    document: bool,
    records: str | None,
    start_offset: int = 0,
    start_line: int = 0,
) -> LineReader | DocumentReader:
    """What a file's import iterates: a ``DocumentReader`` (``records``: the reader class's
    ``document_records``) for a ``document`` (``is_document``), which is always read from its
    start, else a ``LineReader`` from ``start_offset`` keeping blank lines."""
    if document:
        return DocumentReader(stream, records=records)
    return LineReader(stream, start_offset=start_offset, start_line=start_line, keep_blank=True)


__all__ = [
    "DOCUMENT_MAX_BYTES",
    "DocumentReader",
    "file_head",
    "is_document",
    "line_source",
    "problem",
    "split",
]
