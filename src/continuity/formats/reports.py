"""What an import did, file by file (spec/formats.md §5.6): ``FileReport`` and
``ImportReport``, the shapes ``continuity import --json`` prints.

Standard library only (no store, no reader): ``cli.fast`` builds the reports of a re-import
that found nothing new without importing SQLAlchemy (issue 43 goal 4), and the importer
(``formats.importer``, which re-exports both) builds every other.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from continuity.core.model import Entry


@dataclass
class FileReport:
    """What one file's import did (formats.md §5.6). ``errors`` holds ``(line, reason)``."""

    path: str
    harness: str | None = None
    version: str | None = None
    session_key: str | None = None
    status: str = "imported"  # imported | unchanged | skipped | failed
    reason: str | None = None
    lines_read: int = 0
    imported: int = 0
    blank: int = 0
    duplicate: int = 0
    opaque: int = 0
    #: known lines that hold no conversation (events, injected context: Claude Code's
    #: ``api-request``, ``attachment`` ... lines), kept raw; ``opaque`` counts unknown ones
    non_conversation: int = 0
    skipped: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)
    warnings: list[tuple[int, str]] = field(default_factory=list)
    skip_reasons: Counter = field(default_factory=Counter)
    types: Counter = field(default_factory=Counter)
    first_timestamp: datetime | None = None
    last_timestamp: datetime | None = None
    offset: int = 0
    pending_tail_bytes: int = 0
    resumed_from: int = 0
    #: the source session a file ``continuity resume`` wrote continues (issue 13), else None
    copy_of: str | None = None
    #: the exit code a ``failed`` file stands for (``core.errors``: 2 the file cannot be read,
    #: 4 the store refused it, e.g. a concurrent import of the same file), else None.
    failure_code: int | None = None
    #: issue 17: the seq of the first row this import added (None: it added none), so the
    #: phases after the import (checkpoint replay, transcripts) read only the new rows.
    first_new_seq: int | None = None
    #: issue 17: this import changed rows stored before it (a pi leaf path moved and put
    #: earlier rows on or off the path): derived data must be rebuilt, not only extended.
    old_rows_changed: bool = False
    #: issue 17: the rows this import added (seqs ``first_new_seq`` on, to the session's
    #: newest), as the store holds them (``store.bulk.as_stored``; visibility changes made
    #: later in the import followed), when the import was asked to keep them
    #: (``import_files(keep_rows=True)``) and their lines came to at most ``KEEP_ROWS_BYTES``;
    #: else None: read them from the store. Not part of ``to_dict``.
    new_rows: list[Entry] | None = field(default=None, repr=False, compare=False)
    #: issue 17 (fresh-user review): the first seq of rows an earlier import stored whose
    #: checkpoints and transcript are still due (``SourceState.pending_from``: that import
    #: was interrupted before its phases ran), else None. The phases derive them now.
    pending_from: int | None = None
    #: fresh-user review: a ``skipped`` file that holds no complete line yet (empty, or a
    #: first line still being written, as when a harness has just started the session): it
    #: is imported once it has one, and is never an error (``ImportReport.exit_code``)
    waiting: bool = False
    #: a path given that does not exist (issue 45 item 8: a missing folder such as
    #: ~/.pi/agent/sessions is an absent folder, not a skipped file); ``status`` "failed"
    absent: bool = False
    #: issue 41 review: a ``skipped`` file whose session was forgotten (``continuity
    #: forget``): skipped on purpose, never an error (``ImportReport.exit_code``)
    forgotten: bool = False

    @property
    def changed(self) -> bool:
        """Whether this import added or changed rows of its session, or found rows of an
        earlier one still to derive (``pending_from``); an unchanged file, a file that only
        gained blank lines or an unfinished line, did not."""
        return self.imported > 0 or self.old_rows_changed or self.pending_from is not None

    @property
    def derive_from(self) -> int | None:
        """The first seq the phases after the import derive: this import's first new row or
        an earlier import's first pending one, the lower (None: neither)."""
        seqs = [s for s in (self.first_new_seq, self.pending_from) if s is not None]
        return min(seqs) if seqs else None

    def fail(self, reason: str, code: int) -> None:
        """Mark the file ``failed`` with ``reason`` and the exit code ``code`` it stands for."""
        self.status, self.reason, self.failure_code = "failed", reason, code

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape of this report."""
        return {
            "path": self.path,
            "harness": self.harness,
            "version": self.version,
            "session": self.session_key,
            "status": self.status,
            "reason": self.reason,
            "lines_read": self.lines_read,
            "imported": self.imported,
            "blank": self.blank,
            "duplicate": self.duplicate,
            "opaque": self.opaque,
            "non_conversation": self.non_conversation,
            "skipped": self.skipped,
            "skip_reasons": dict(self.skip_reasons),
            "errors": [{"line": n, "reason": r} for n, r in self.errors],
            "warnings": [{"line": n, "message": m} for n, m in self.warnings],
            "types": dict(self.types),
            "first_timestamp": _iso(self.first_timestamp),
            "last_timestamp": _iso(self.last_timestamp),
            "offset": self.offset,
            "resumed_from": self.resumed_from,
            "pending_tail_bytes": self.pending_tail_bytes,
            "copy_of": self.copy_of,
            "waiting": self.waiting,
            "absent": self.absent,
            "forgotten": self.forgotten,
        }


@dataclass
class ImportReport:
    """The reports of every file of one import call."""

    files: list[FileReport] = field(default_factory=list)

    def new_rows(self) -> dict[str, list[Entry]]:
        """``{session_key: rows}``: the rows this import added to each session that one
        imported file added rows to and kept them (``FileReport.new_rows``). A session that
        several files of this import added to is absent: its rows are read from the store."""
        files: dict[str, list[FileReport]] = {}
        for f in self.files:
            if f.session_key and f.status in ("imported", "unchanged") and f.changed:
                files.setdefault(f.session_key, []).append(f)
        return {key: fs[0].new_rows for key, fs in files.items() if len(fs) == 1 and fs[0].new_rows}

    @property
    def sessions(self) -> list[str]:
        """Distinct session keys touched, in order."""
        return list(dict.fromkeys(f.session_key for f in self.files if f.session_key))

    def totals(self) -> dict[str, int]:
        """Sums over the files: files, sessions, lines, rows, duplicates, errors, skipped files,
        and the paths given that do not exist (``absent_paths``: neither files nor skipped
        files, issue 45 item 8)."""
        return {
            "files": sum(1 for f in self.files if not f.absent),
            "sessions": len(self.sessions),
            "lines_read": sum(f.lines_read for f in self.files),
            "imported": sum(f.imported for f in self.files),
            "duplicate": sum(f.duplicate for f in self.files),
            "opaque": sum(f.opaque for f in self.files),
            "non_conversation": sum(f.non_conversation for f in self.files),
            "errors": sum(len(f.errors) for f in self.files),
            "skipped_files": sum(
                1 for f in self.files if f.status in ("skipped", "failed") and not f.absent
            ),
            "absent_paths": sum(1 for f in self.files if f.absent),
        }

    @property
    def exit_code(self) -> int:
        """The import command's exit code (issue 22): 0 when no file ``failed`` (a file that
        is not a session file is ``skipped``, not failed), else the highest failure code of
        its files (4 a store problem, 2 a file that cannot be read), so a script sees that
        some file must be imported again; 2 when every file was skipped (nothing in the
        import was a session file), unless every skipped file is only waiting for its first
        line (``FileReport.waiting``: a session just started) or was forgotten
        (``FileReport.forgotten``: skipped on purpose, issue 41 review). One waiting file
        among files that are not session files does not make the import a success (a
        fresh-user review)."""
        failed = max((f.failure_code or 1 for f in self.files if f.status == "failed"), default=0)
        if failed or not self.files:
            return failed
        # issue 20: every input skipped (none a session file) is not a success
        if any(f.status in ("imported", "unchanged") for f in self.files):
            return 0
        return 0 if all(f.waiting or f.forgotten for f in self.files) else 2

    def to_dict(self) -> dict[str, Any]:
        return {
            "totals": self.totals(),
            "sessions": self.sessions,
            "files": [f.to_dict() for f in self.files],
        }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


__all__ = ["FileReport", "ImportReport"]
