"""The parse half of a file's import: a session file's lines into a batch of rows, raw lines
and issues, with no store (issue 43 goal 1: it runs in the importer's process, or in a worker
process of ``formats.parallel`` that hands the batches to the one process that stores them).

``LineParser.take(line)`` reads one line (``formats.jsonl.Line``) through the harness reader
(``FormatReader.records``, ``read``), keeps its raw bytes (``RawLine``), reports a bad line as an
``ImportIssue`` and in ``report.errors`` (``path:line``, spec/formats.md §5.1 rule 6, B35), a
field problem in ``report.warnings`` (``check_entry``, issue 16), and a record nested deeper than
``MAX_NESTING`` as an issue with its raw line kept (issue 17). The importer stores what
accumulates in ``pending``/``raw``/``issues`` and calls ``reset``.
"""

from __future__ import annotations

from dataclasses import replace

from continuity.core.codec import blocks_to_json
from continuity.core.model import Entry, SourceRef
from continuity.core.text import clean
from continuity.formats.base import FormatReader, check_entry, nesting_depth
from continuity.formats.jsonl import Line
from continuity.formats.reports import FileReport
from continuity.store.base import ImportIssue, RawLine

#: Deepest JSON nesting of a record that is read into a row (a deeper one is reported, its raw
#: line kept): every later step (field checks, the stored blocks, the search index) must
#: handle the row's values, and orjson encodes at most 255 levels (a 256-level tool input
#: failed the whole batch with a traceback: fresh-user review, issue 17).
MAX_NESTING = 200


class LineParser:
    """One file's lines into rows: ``pending`` (entries with their ``SourceRef``), ``raw``
    (every line, blank ones too), ``issues`` and ``batch_bytes`` (raw bytes taken since the
    last ``reset``); counters, errors, warnings and skip reasons go to ``report``."""

    def __init__(self, reader: FormatReader, path_str: str, report: FileReport) -> None:
        self.reader, self.path_str, self.report = reader, path_str, report
        self.pending: list[Entry] = []
        self.raw: list[RawLine] = []
        self.issues: list[ImportIssue] = []
        self.batch_bytes = 0

    def reset(self) -> None:
        """Start the next batch (the caller took ``pending``, ``raw`` and ``issues``)."""
        self.pending, self.raw, self.issues, self.batch_bytes = [], [], [], 0

    def take(self, line: Line) -> None:
        """Read ``line`` into the batch (see the module docstring)."""
        if not line.blank:
            self.report.lines_read += 1
        digest = line.sha256
        self.raw.append(RawLine(self.path_str, line.number, line.offset, digest, line.raw))
        self.batch_bytes += len(line.raw)
        if line.blank:
            return
        if line.salvaged is not None:
            self.report.warnings.append((line.number, line.salvaged))
        if line.data is None:
            self._issue(line, clean(line.error or "unreadable"), digest)
            return
        # Rule 6 (issue 18): a line holding glued records reads each, in order; a reader may
        # read one record as several rows (``FormatReader.records``: a Gemini CLI message
        # holding its tool calls and their results, issue 42)
        # counted once a line: a document's part (``formats.document``) can hold many records
        braces = line.raw.count(b"[") + line.raw.count(b"{")
        for record in self.reader.records(line):
            self._read(
                line if record is line.data else replace(line, data=record, more=()),
                digest,
                braces,
            )

    def _issue(self, line: Line, reason: str, digest: str) -> None:
        self.issues.append(
            ImportIssue(self.path_str, line.number, line.offset, len(line.raw), reason, digest)
        )
        self.report.errors.append((line.number, reason))

    def _read(self, line: Line, digest: str, braces: int) -> None:
        """Read one record of ``line`` (``braces``: the ``[`` and ``{`` its raw bytes hold)."""
        if braces > MAX_NESTING:  # cheap pre-check
            depth = nesting_depth(line.data, MAX_NESTING)
            if depth > MAX_NESTING:
                reason = (
                    f"JSON nested more than {MAX_NESTING} levels deep (not read; the raw "
                    "line is kept)"
                )
                self._issue(line, reason, digest)
                return
        try:
            entry = self.reader.read(line)
        except Exception as exc:  # noqa: BLE001 - a reader bug must not lose the rest of the file
            self._issue(line, clean(f"reader error: {exc.__class__.__name__}: {exc}"), digest)
            return
        if entry is None:
            self.report.skipped += 1
            self.report.skip_reasons[self.reader.skip_reason or "skipped"] += 1
            return
        for problem in check_entry(entry):  # issue 16: wrong types, lone surrogates
            self.report.warnings.append((line.number, problem))
        if braces > 200:
            # orjson encodes at most 255 levels; a deeper value must still encode, or the
            # line is reported instead of failing its whole batch.
            try:
                blocks_to_json(entry.blocks)
            except ValueError as exc:
                self._issue(line, str(exc), digest)
                return
        entry.source = SourceRef(self.path_str, line.number, line.offset, digest)
        self.pending.append(entry)
