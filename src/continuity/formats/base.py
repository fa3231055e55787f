"""The reader interface every harness format implements, and helpers they share.

A reader turns the lines of one session file into ``Entry`` rows (one entry per parsed line,
opaque or not, so that seq order is file order and nothing is lost). It never touches the store:
the importer (``continuity.formats.importer``) feeds it lines, assigns seqs, de-duplicates by native id,
resolves compaction coverage, follows pi trees from their leaf and derives runs.

Contract for a reader class:

- ``harness``: the harness name (``claude-code``, ``codex``, ``pi``, ``gemini-cli``: the
  registry's names, ``formats.registry``);
- ``sniff(head)``: True when the parsed first objects of a file look like this format;
- ``__init__(path, head, state)``: ``head`` as given to ``sniff``; ``state`` is what ``state()``
  returned after the last line of a previous import of the same file (None on a first import),
  so a growing file resumes where it stopped;
- ``read(line)``: the entry for one parsed line (``line.data`` is a dict), or None to skip it
  (counted as ``skipped`` with ``skip_reason``); ``records(line)`` may split a line's
  record into several, each read on its own (default: the line's records). Set ``kind``, ``role``, ``blocks``,
  ``timestamp``, ``native_id``, ``type_name``, ``visible``, ``is_request``, ``sidechain``,
  ``compaction``, ``cwd``, ``run_end`` and ``payloads``; leave ``seq``/``source`` to the importer;
- ``session_key``: the session id, known from ``head`` (fallback: the file stem);
- ``facts()``: ``SessionFacts`` as known so far (latest cwd, title);
- ``warnings``: list of ``(line_number, message)`` for fields a view needed but were missing;
- ``uses_tree``: True when entries form a parent tree whose leaf path is the conversation (pi);
- ``continues_session``: True when this file is a later part of a session another file began
  (a Codex history paginated across files): the importer appends it to that session instead
  of keying it ``<key>/<file stem>``;
- ``sibling_paths``: the stored paths (``formats.discovery.path_key``) of files that hold this
  file's session too (Gemini CLI's legacy ``.json`` chat and the ``.jsonl`` it migrates to):
  a new file whose session was imported from one of them joins that session;
- ``document_records``: for a format written as one JSON document (``formats.document``), the
  member whose array holds its records (Gemini CLI's ``messages``); None: a document is read
  as one record.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import functools
import hashlib
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar

import orjson

from continuity.core.model import Entry, MediaBlock
from continuity.core.text import clean, json_type_name
from continuity.core.when import TIME_RANGE_TEXT, usable_time
from continuity.formats.jsonl import Line


@dataclass(slots=True)
class SessionFacts:
    """What a reader knows about its session beyond the rows: latest ``cwd`` (the project),
    a ``title``, the ``agent_id`` and the harness format ``version``; ``forked_from``: the
    harness's id of the session this one was forked from (Codex ``forked_from_id``, issue 18),
    which the importer stores as a session key (``core.keys.session_key``)."""

    cwd: str | None = None
    title: str | None = None
    version: str | None = None
    agent_id: str = "default"
    forked_from: str | None = None


class FormatReader:
    """Base class of the harness readers (see the module docstring for the contract)."""

    harness: ClassVar[str] = ""
    uses_tree: ClassVar[bool] = False
    document_records: ClassVar[str | None] = None

    def __init__(self, path: str, head: list[dict], state: dict | None = None) -> None:
        self.path = path
        self.head = head
        #: See the module docstring; a reader sets it from ``head``.
        self.continues_session = False
        #: See the module docstring; a reader sets it from ``path``.
        self.sibling_paths: tuple[str, ...] = ()
        self.warnings: list[tuple[int, str]] = []
        self.skip_reason: str = ""
        self._facts = SessionFacts()
        key = self.key_from_head(head)
        #: the head named no session, so ``session_key`` is the file stem: a guess, which a
        #: re-read of a known file does not follow (second review: a Claude Code file cut to
        #: its first line, a snapshot line without ``sessionId``, became a second session)
        named = key if isinstance(key, str) and key else None
        self.key_from_file_name = named is None
        self.session_key = clean(named) if named is not None else self.file_name(path)

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    @classmethod
    def file_name(cls, path: str) -> str:
        """The name that tells this file from others of the harness: the session key when the
        head names none, and the suffix ``<key>/<name>`` when another file holds the key
        (``importer``). Default: the file stem; a harness whose file name is always the same
        names its folder instead (Copilot CLI's ``session-state/<id>/events.jsonl``)."""
        return file_stem(path)

    @classmethod
    def claims(cls, obj: Any) -> bool:
        """Whether the one record ``obj`` looks like a line of this format: the vote of
        ``formats.detect`` (default: ``sniff`` of that line alone). A reader whose lines are
        recognised only together (a header first) says so for each line here."""
        return cls.sniff([obj])

    def key_from_head(self, head: list[dict]) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def read(self, line: Line) -> Entry | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def records(self, line: Line) -> tuple[dict, ...]:
        """The records the importer reads from ``line``, one row each, in order (default: the
        line's own records, ``Line.records``). A reader whose format packs several rows into
        one record (a Gemini CLI message holding its tool calls and their results, issue 42)
        returns more; each shares the line's source position and raw bytes."""
        return line.records

    def facts(self) -> SessionFacts:
        """The session facts known so far."""
        return self._facts

    def state(self) -> dict[str, Any]:
        """JSON-serialisable state to resume after the last line read (default: facts only)."""
        return {"cwd": self._facts.cwd, "title": self._facts.title, "version": self._facts.version}

    def restore(self, state: dict[str, Any] | None) -> None:
        """Apply a ``state()`` from an earlier import (called by subclasses' ``__init__``)."""
        if state:
            self._facts.cwd = state.get("cwd")
            self._facts.title = state.get("title")
            self._facts.version = state.get("version")

    def warn(self, line: Line, message: str) -> None:
        """Record a warning about ``line`` (formats.md §5.1 rule 6)."""
        self.warnings.append((line.number, message))

    def time_field(self, line: Line, value: Any, field: str) -> datetime | None:
        """``parse_timestamp(value)``; a value given that is not a time, or a time out of
        range (``9999-12-31T23:59:59Z``: issue 45 item 1), is warned about, naming the field
        (the warning carries the line: ``path:line``), and the row keeps no time. The line
        itself is stored raw, so nothing of it is lost."""
        parsed, problem = read_timestamp(value)
        if problem is not None:
            shown = value if isinstance(value, (str, int, float)) else type(value).__name__
            self.warn(line, f"{field}: {str(shown)[:80]!r} {problem}; the row has no time")
        return parsed

    def string_field(self, line: Line, data: dict, key: str) -> str | None:
        """``data[key]`` when it is a non-empty string, else None; a value of another type (a
        list or an object where an id belongs) is dropped with a warning naming the raw key,
        ``"uuid: expected a string, got array (dropped)"`` (README: a field of the wrong type
        never stops an import and is named). Missing, null and "" are dropped silently: they
        are the formats' own ways of saying "none"."""
        value = data.get(key)
        if isinstance(value, str):
            return value or None
        if value is not None:
            self.warn(line, f"{key}: expected a string, got {json_type_name(value)} (dropped)")
        return None


def file_stem(path: str) -> str:
    """File name without directory and ``.jsonl`` extension."""
    name = os.path.basename(path)
    return name[:-6] if name.endswith(".jsonl") else name


def parse_timestamp(value: Any) -> datetime | None:
    """An aware UTC datetime from an ISO-8601 string or an epoch number (a number below 10^11 is
    seconds, else milliseconds: formats.md §5.1 rule 7). None when absent, unparseable or out
    of range (``core.when.usable_time``; ``read_timestamp`` says which)."""
    return read_timestamp(value)[0]


def read_timestamp(value: Any) -> tuple[datetime | None, str | None]:
    """``(time, problem)`` for a timestamp field's ``value`` (``parse_timestamp``): the aware
    UTC time, or None with ``problem`` saying why a value that was given is not used: ``"is
    not a time"`` (``"yesterday"``, ``"2026-13-45"``, a list) or ``"is out of range
    (<range>)"`` (``9999-12-31T23:59:59Z``, year 1, an epoch of 10^20: issue 45 item 1).
    Absent (None, ``""``) is ``(None, None)``. Never raises."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    out_of_range = f"is out of range ({TIME_RANGE_TEXT})"
    parsed: datetime | None = None
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if value != value:  # NaN
                return None, "is not a time"
            secs = value if value < 1e11 else value / 1000.0
            parsed = datetime.fromtimestamp(secs, tz=UTC)
        elif isinstance(value, str):
            text = value.strip()
            if text.endswith(("Z", "z")):
                text = text[:-1] + "+00:00"
            parsed = datetime.fromisoformat(text)
    except (OverflowError, OSError):
        return None, out_of_range
    except ValueError as exc:  # fromtimestamp says "year 10000 is out of range" as ValueError
        return None, out_of_range if "out of range" in str(exc) and not isinstance(
            value, str
        ) else "is not a time"
    if parsed is None:
        return None, "is not a time"
    usable = usable_time(parsed)
    return (usable, None) if usable is not None else (None, out_of_range)


def str_field(obj: Any, key: str) -> str | None:
    """``obj[key]`` when ``obj`` is a dict and the value a string, else None: the type check
    for fields compared with sets or used as keys (issue 16: a ``type`` holding a list raised
    ``TypeError: unhashable type`` while sniffing a file)."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, str) else None


def text_of(value: Any) -> str:
    """Clean text from a value that should be a string (None and non-strings give "")."""
    return clean(value) if isinstance(value, str) else ""


def decode_media(media_type: str, data: Any) -> tuple[MediaBlock, dict[str, bytes]]:
    """A ``MediaBlock`` and its payload map ``{sha256: bytes}`` from base64 ``data``.

    Undecodable base64 is kept as its UTF-8 bytes (never lost, never in text)."""
    raw: bytes
    if isinstance(data, str):
        try:
            raw = base64.b64decode(data, validate=False)
        except (binascii.Error, ValueError):
            raw = data.encode("utf-8", "replace")
    else:
        raw = b""
    digest = hashlib.sha256(raw).hexdigest()
    return MediaBlock(media_type or "application/octet-stream", len(raw), digest), {digest: raw}


# ---------------------------------------------------------------------------- field checks


def clean_deep(value: Any) -> Any:
    """A JSON-like ``value`` (str, dict, list, tuple, scalars) with lone surrogates in every
    string (dict keys too) replaced by U+FFFD; the same object when nothing changed."""
    if isinstance(value, (dict, list)):
        try:  # issue 17: orjson refuses a lone surrogate, in C; most values have none
            orjson.dumps(value)
            return value
        except (TypeError, orjson.JSONEncodeError):  # or a value it cannot encode: walk it
            pass
    return _clean_deep(value)


def call_arguments(args: Any) -> Any:
    """A tool call's arguments as a ``ToolCallBlock`` keeps them: the object a JSON string
    holds (``'{"path": "a.py"}'`` becomes ``{"path": "a.py"}``), else that string as clean
    text (arguments that are no object: Codex custom tools, the Agents SDK's
    ``custom_tool_call``); any other value with every string cleaned (``clean_deep``). Never
    raises."""
    if isinstance(args, str):
        try:
            parsed = orjson.loads(args)
        except orjson.JSONDecodeError:
            return text_of(args)
        return clean_deep(parsed) if isinstance(parsed, dict) else text_of(args)
    return clean_deep(args)


def _clean_deep(value: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        out = {
            _clean_deep(k) if isinstance(k, str) else k: _clean_deep(v) for k, v in value.items()
        }
        same = len(out) == len(value) and all(
            k is k2 and v is v2 for (k, v), (k2, v2) in zip(out.items(), value.items(), strict=True)
        )
        return value if same else out
    if isinstance(value, (list, tuple)):
        items = [_clean_deep(v) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items) if isinstance(value, tuple) else items
    return value


def nesting_depth(value: Any, limit: int) -> int:
    """How deeply lists and dicts nest in the JSON-like ``value`` (a scalar 0, ``[]`` 1,
    ``{"a": [1]}`` 2), without recursion; counting stops at the first level past ``limit``
    (then ``limit + 1``)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        )
        if children is None:
            continue
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return deepest


def _checked(obj: Any, where: str, problems: list[str]) -> Any:
    """A copy of dataclass ``obj`` (a block, ``CompactionInfo``) whose ``str`` fields hold
    strings (a wrong type becomes None for an optional field, "" for a required one, with a
    problem noted), with surrogate-free text everywhere; ``obj`` itself when all was well."""
    changes: dict[str, Any] = {}
    for name, kind in _field_kinds(type(obj)):
        value = getattr(obj, name)
        if kind in ("str", "str | None"):
            if value is None and kind == "str | None":
                continue
            if not isinstance(value, str):
                problems.append(
                    f"{where}{name}: expected a string, got {json_type_name(value)} (dropped)"
                )
                changes[name] = None if kind == "str | None" else ""
            elif (fixed := clean(value)) is not value:
                changes[name] = fixed
        elif dataclasses.is_dataclass(value):
            fixed = _checked(value, f"{where}{name}.", problems)
            if fixed is not value:
                changes[name] = fixed
        elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            items = tuple(
                _checked(v, f"{where}{name}[{i}].", problems) for i, v in enumerate(value)
            )
            if any(a is not b for a, b in zip(items, value, strict=True)):
                changes[name] = items
        elif name == "arguments":
            fixed = clean_deep(value)
            if fixed is not value:
                changes[name] = fixed
    return dataclasses.replace(obj, **changes) if changes else obj


@functools.cache
def _field_kinds(cls: type) -> tuple[tuple[str, str], ...]:
    """``(name, annotation text)`` of each field of dataclass ``cls`` (issue 17: computed once
    per class, not once per block: ``dataclasses.fields`` was a tenth of the import's checks)."""
    return tuple((f.name, str(f.type)) for f in dataclasses.fields(cls))


def check_entry(entry: Entry) -> list[str]:
    """Make the reader's ``entry`` safe to store, in place, and return what was wrong (issue
    16: a field that should be a string holding a list or an object raised ``TypeError:
    unhashable type``; a lone surrogate from a JSON escape raised ``UnicodeEncodeError``).

    Every ``str`` field of the entry, its compaction and its blocks must hold a string: a wrong
    type is dropped (None, or "" for a required field) and named in the result
    (``"native_id: expected a string, got array (dropped)"``); lone surrogates become U+FFFD in
    every stored text (tool call arguments too). The raw line is kept as read, so nothing is
    lost. The one place the importer checks field types, whatever the reader."""
    problems: list[str] = []
    for name in ("native_id", "parent_native_id", "cwd", "run_id", "type_name"):
        value = getattr(entry, name)
        if value is None and name != "type_name":
            continue
        if not isinstance(value, str):
            problems.append(f"{name}: expected a string, got {json_type_name(value)} (dropped)")
            setattr(entry, name, "" if name == "type_name" else None)
        else:
            setattr(entry, name, clean(value))
    if entry.compaction is not None:
        entry.compaction = _checked(entry.compaction, "compaction.", problems)
    entry.blocks = tuple(_checked(b, f"blocks[{i}].", problems) for i, b in enumerate(entry.blocks))
    return problems


def check_facts(facts: SessionFacts) -> SessionFacts:
    """``facts`` with every field a surrogate-free string (a wrong type: None, or "default"
    for ``agent_id``)."""

    def one(value: Any) -> str | None:
        return clean(value) if isinstance(value, str) else None

    return SessionFacts(
        cwd=one(facts.cwd),
        title=one(facts.title),
        version=one(facts.version),
        agent_id=one(facts.agent_id) or "default",
        forked_from=one(facts.forked_from) or None,
    )
