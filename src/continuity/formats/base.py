"""The reader interface every harness format implements, and helpers they share.

A reader turns the lines of one session file into ``Entry`` rows (one entry per parsed line,
opaque or not, so that seq order is file order and nothing is lost). It never touches the store:
the importer (``continuity.formats.importer``) feeds it lines, assigns seqs, de-duplicates by native id,
resolves compaction coverage, follows pi trees from their leaf and derives runs.

Contract for a reader class:

- ``harness``: the harness name (``claude-code``, ``codex``, ``pi``);
- ``sniff(head)``: True when the parsed first objects of a file look like this format;
- ``__init__(path, head, state)``: ``head`` as given to ``sniff``; ``state`` is what ``state()``
  returned after the last line of a previous import of the same file (None on a first import),
  so a growing file resumes where it stopped;
- ``read(line)``: the entry for one parsed line (``line.data`` is a dict), or None to skip it
  (counted as ``skipped`` with ``skip_reason``). Set ``kind``, ``role``, ``blocks``,
  ``timestamp``, ``native_id``, ``type_name``, ``visible``, ``is_request``, ``sidechain``,
  ``compaction``, ``cwd``, ``run_end`` and ``payloads``; leave ``seq``/``source`` to the importer;
- ``session_key``: the session id, known from ``head`` (fallback: the file stem);
- ``facts()``: ``SessionFacts`` as known so far (latest cwd, title);
- ``warnings``: list of ``(line_number, message)`` for fields a view needed but were missing;
- ``uses_tree``: True when entries form a parent tree whose leaf path is the conversation (pi).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, ClassVar

from continuity.formats.jsonl import Line
from continuity.core.model import Entry, MediaBlock
from continuity.core.text import clean


@dataclass(slots=True)
class SessionFacts:
    """What a reader knows about its session beyond the rows: latest ``cwd`` (the project),
    a ``title``, the ``agent_id`` and the harness format ``version``."""

    cwd: str | None = None
    title: str | None = None
    version: str | None = None
    agent_id: str = "default"


class FormatReader:
    """Base class of the harness readers (see the module docstring for the contract)."""

    harness: ClassVar[str] = ""
    uses_tree: ClassVar[bool] = False

    def __init__(self, path: str, head: list[dict], state: dict | None = None) -> None:
        self.path = path
        self.head = head
        self.warnings: list[tuple[int, str]] = []
        self.skip_reason: str = ""
        self._facts = SessionFacts()
        self.session_key = self.key_from_head(head) or file_stem(path)

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def key_from_head(self, head: list[dict]) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def read(self, line: Line) -> Entry | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def facts(self) -> SessionFacts:
        """The session facts known so far."""
        return self._facts

    def state(self) -> dict[str, Any]:
        """JSON-serialisable state to resume after the last line read (default: facts only)."""
        return {"cwd": self._facts.cwd, "title": self._facts.title,
                "version": self._facts.version}

    def restore(self, state: dict[str, Any] | None) -> None:
        """Apply a ``state()`` from an earlier import (called by subclasses' ``__init__``)."""
        if state:
            self._facts.cwd = state.get("cwd")
            self._facts.title = state.get("title")
            self._facts.version = state.get("version")

    def warn(self, line: Line, message: str) -> None:
        """Record a warning about ``line`` (formats.md §5.1 rule 6)."""
        self.warnings.append((line.number, message))


def file_stem(path: str) -> str:
    """File name without directory and ``.jsonl`` extension."""
    name = os.path.basename(path)
    return name[:-6] if name.endswith(".jsonl") else name


def parse_timestamp(value: Any) -> datetime | None:
    """An aware UTC datetime from an ISO-8601 string or an epoch number (a number below 10^11 is
    seconds, else milliseconds: formats.md §5.1 rule 7). None when absent or unparseable."""
    if value is None or isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)):
            secs = value if value < 1e11 else value / 1000.0
            return datetime.fromtimestamp(secs, tz=timezone.utc)
        if isinstance(value, str) and value:
            text = value.strip()
            if text.endswith("Z"):
                text = text[:-1] + "+00:00"
            parsed = datetime.fromisoformat(text)
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=timezone.utc)
            return parsed.astimezone(timezone.utc)
    except (ValueError, OverflowError, OSError):
        return None
    return None


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
