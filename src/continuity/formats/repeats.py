"""Rows that repeat a native id (issue 18, the lossless rule of spec/formats.md §5).

A harness writes one id per record, yet the same id comes back: Claude Code's resume and
compaction replay a line under its uuid (identical content), and a line can be written twice
when the first write was incomplete (an assistant line with no content, then the full one).
The rule here, for every harness alike:

- a copy whose content equals an earlier row with that id (same kind, role, request flag,
  run-end hint, blocks and compaction summary: ``fingerprint``) is a duplicate: not stored again (its raw
  line is kept, as every line is);
- a copy whose content differs is stored as a row of its own (same native id) and a warning
  names both lines; the *usable* copy wins in the view (``usable``: it has blocks and is not
  opaque), the newer one when both or neither are: the loser is put out of view;
- the same line read again (same line number and bytes: a rewritten file re-read) is always
  a duplicate, whatever this version's reader makes of it;
- parent links to the id keep pointing at the first row (``Store.native_seqs``: first seq).

Copies are compared with the first stored row of the id and every row of it this import
stored, so a third copy equal to the second is a duplicate within one import.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from continuity.core.codec import blocks_to_json
from continuity.core.model import Entry, EntryKind
from continuity.store.protocol import Store


def fingerprint(entry: Entry) -> str:
    """SHA-256 hex of what a row says: kind, role, request flag, run-end hint, blocks (their
    JSON) and the compaction summary. Envelope fields (time, session id, cwd, line) are not part of it."""
    h = hashlib.sha256()
    run_end = entry.run_end.value if entry.run_end is not None else ""
    h.update(f"{entry.kind.value}|{entry.role.value}|{int(entry.is_request)}|{run_end}|".encode())
    h.update(blocks_to_json(entry.blocks).encode() if entry.blocks else b"")
    if entry.compaction is not None:
        h.update(b"|" + entry.compaction.summary.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def usable(entry: Entry) -> bool:
    """Whether a row can stand in the view: it has blocks and is not opaque."""
    return bool(entry.blocks) and entry.kind is not EntryKind.OPAQUE


class _Copy:
    """One row holding a native id: this batch's (``entry``) or a stored one (``seq``); its
    fingerprint is computed only when a copy of the id turns up."""

    __slots__ = ("entry", "seq", "line", "_fp", "wins")

    def __init__(self, entry: Entry, stored: bool) -> None:
        self.entry = entry
        self.seq = entry.seq if stored else None
        self.line = entry.source.line if entry.source else None
        self._fp: str | None = None
        self.wins = usable(entry)

    def same_line(self, other: _Copy) -> bool:
        """The same line read again (same number and bytes: a re-read of the file)."""
        a, b = self.entry.source, other.entry.source
        return a is not None and b is not None and (a.line, a.raw_sha256) == (b.line, b.raw_sha256)

    @property
    def fingerprint(self) -> str:
        if self._fp is None:
            self._fp = fingerprint(self.entry)
        return self._fp


#: ``RepeatFilter.fresh``'s bits of the ids passed (2**23: 1 MiB; a session of a million ids
#: sets at most an eighth of them, so at most one new id in eight is looked up for nothing)
PASSED_BITS = 1 << 23


@dataclass
class RepeatFilter:
    """Sorts one import's rows by native id (``filter``, one call per batch, then ``stored``
    once the batch is written).

    ``duplicates`` counts the identical copies dropped, ``warnings`` gets ``(line, text)`` per
    differing copy; ``hide`` collects the seqs of stored rows a newer copy replaced in view
    (the caller puts them out of view in the same transaction, then clears it). Memory: the
    current batch's ids, plus every id seen more than once."""

    store: Store
    session_key: str
    #: The session held no rows when this import began, so each of its stored rows is one
    #: this filter passed: an id it never passed is not asked of the store (issue 43 goal 1:
    #: on a fresh import that look-up was 5 % of the writer's time and found nothing). The
    #: ids passed are kept as bits of ``PASSED_BITS`` (by their hash): a bit set by another
    #: id only costs a look-up, and memory stays 1 MiB whatever the session's size. It
    #: assumes no other writer adds rows to the session meanwhile (a file's import holds its
    #: source's claim); one that did would have its copy of an id kept as a row of its own,
    #: never lost.
    fresh: bool = False
    duplicates: int = 0
    warnings: list[tuple[int, str]] = field(default_factory=list)
    hide: list[int] = field(default_factory=list)
    _copies: dict[str, list[_Copy]] = field(default_factory=dict)
    _passed: bytearray | None = None

    def filter(self, entries: list[Entry]) -> list[Entry]:
        """The rows of ``entries`` to store, in order: identical copies dropped, differing
        copies kept (their visibility set by the rule above)."""
        ids = [e.native_id for e in entries if e.native_id and e.native_id not in self._copies]
        passed = self._passed
        if self.fresh:
            if passed is None:
                passed = self._passed = bytearray(PASSED_BITS // 8)
            mask = PASSED_BITS - 1
            ids = [i for i in ids if passed[(h := hash(i) & mask) >> 3] & (1 << (h & 7))]
        stored = self.store.native_seqs(self.session_key, ids) if ids else {}
        if stored:
            for row in self.store.entries_by_seq(self.session_key, stored.values()):
                if row.native_id and row.native_id not in self._copies:
                    self._copies[row.native_id] = [_Copy(row, True)]
        out: list[Entry] = []
        for e in entries:
            nid = e.native_id
            if not nid:
                out.append(e)
                continue
            copies = self._copies.get(nid)
            if copies is None:
                self._copies[nid] = [_Copy(e, False)]
                out.append(e)
                continue
            new = _Copy(e, False)
            if any(c.same_line(new) for c in copies) or any(
                c.fingerprint == new.fingerprint for c in copies
            ):
                self.duplicates += 1
                continue
            self._differing(new, copies)
            out.append(e)
        if passed is not None:
            mask = PASSED_BITS - 1
            for e in out:
                if e.native_id:
                    h = hash(e.native_id) & mask
                    passed[h >> 3] |= 1 << (h & 7)
        return out

    def _differing(self, new: _Copy, copies: list[_Copy]) -> None:
        e = new.entry
        winner = next((c for c in reversed(copies) if c.wins), None)
        if new.wins or winner is None:
            for c in copies:  # every earlier copy leaves the view
                c.wins = False
                if c.seq is None:
                    c.entry.visible = False
                elif c.entry.visible:
                    self.hide.append(c.seq)
                    c.entry.visible = False
            new.wins = True
            used = "this one is used in the view"
        else:
            e.visible = False
            used = f"line {winner.line} stays in the view (this copy has no usable content)"
        if new.line is not None:
            self.warnings.append(
                (
                    new.line,
                    f"{e.native_id} repeats line {copies[0].line} "
                    f"with different content: both kept; {used}",
                )
            )
        copies.append(new)

    def stored(self) -> None:
        """After the batch is written (its rows have seqs): forget the ids seen once (the
        store answers for them now), keep those seen more than once."""
        for nid in [k for k, v in self._copies.items() if len(v) == 1]:
            del self._copies[nid]
        for copies in self._copies.values():
            for c in copies:
                if c.seq is None:
                    c.seq = c.entry.seq
