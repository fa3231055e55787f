"""Records of the import's bookkeeping and the kept title lines: ``SourceState`` (a source
file's import progress), ``RawLine`` (a source line's raw bytes), ``ImportIssue`` (a line that
could not be imported), ``KeptTitle`` (a session's kept title line, ``store.titles``).

They live apart from ``store.base`` (issue 43 goal 3: start-up) so that ``show`` and
``continue``, which never touch them, do not build them (about 0.6 ms a frozen dataclass, its
generated methods compiled by ``exec``); ``store.base`` and ``continuity.store`` re-export them
on first use. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from continuity.core.model import pickled_by_fields


@dataclass(frozen=True, slots=True)
class SourceState:
    """Import progress of one source file (spec/formats.md §5.2): ``offset`` is the byte offset
    after the last complete line read, ``line_count`` the lines consumed before it,
    ``prefix_sha256`` the SHA-256 of the first 64 KiB, ``reader_state`` the reader's JSON state."""

    path: str
    session_key: str
    harness: str
    inode: int | None
    size: int
    offset: int
    line_count: int
    prefix_sha256: str
    reader_state: str | None
    updated_at: datetime | None = None
    #: when the archive found the file missing (issue 18), None while it exists
    gone_at: datetime | None = None
    #: issue 17: the first seq of this file's rows whose checkpoint replay and transcript are
    #: still due (an import stored them and was interrupted before those phases ran); None
    #: when nothing is due. Set with the rows, cleared by ``Store.settle_sources``.
    pending_from: int | None = None


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class RawLine:
    """One source line's raw bytes with its position (lossless retention, formats.md §5.4)."""

    path: str
    line_no: int
    byte_offset: int
    sha256: str
    data: bytes


@dataclass(frozen=True, slots=True)
class KeptTitle:
    """A session's kept title line: ``line`` (redacted, at most ``browse.titles.REDACT_CHARS``
    characters, one line) computed from the own title hashing to ``own_sha256`` and the
    unredacted line hashing to ``line_sha256``, with rows ``0 .. entry_count - 1`` scanned."""

    session_key: str
    own_sha256: str
    line_sha256: str
    entry_count: int
    line: str


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class ImportIssue:
    """A line that could not be imported: ``path:line_no``, where it is and why."""

    path: str
    line_no: int
    byte_offset: int
    byte_length: int
    reason: str
    raw_sha256: str
