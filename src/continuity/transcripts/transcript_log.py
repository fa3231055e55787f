"""The canonical transcript JSONL file (seed 000, "Lossless Session Transcripts"): its path, its
records and their ids, and the locked, durable writer with torn-tail repair and per-session
snapshots. ``continuity.transcripts.session_transcripts`` renders sessions into records and keeps the database row.

**Canonical JSONL** at ``<workspace>/memory/<harness>/transcripts/transcript.jsonl`` (harness
folded by ``safe_name``; session keys live only inside records, never in paths): one
``TranscriptRecord`` per row, its ``content`` that row's paragraphs. Writers hold ``flock`` on a
sibling ``.lock`` file, repair a torn last line before appending (B36), write whole records
(never part of one) in writes of up to about ``WRITE_CHUNK_BYTES``, and fsync before returning.
``replace_session`` rewrites one session's (``replace_sessions`` several at once, one copy of
the file) records through a temp file and ``os.replace``, leaving every other session's lines untouched.
A torn line cut off by the repair is lost from the file but not from the database: the next
snapshot (``transcripts.sync_session``) rewrites the session it belonged to from the database
(named by the fragment, else every session whose records no longer match its row), so the file
is complete again. An import appends before its database commit, through ``append_journaled``:
``<file>.appending`` holds where the append began until the commit, so a kill in between never
leaves a record twice (the resumed import skips the records found after that offset).

**Live records are superseded, not rewritten.** A ``live`` record (``source_format``
``"live"``: a turn the daemon's hook delivered before the harness's file was imported) stands
for rows not yet imported. Once they are, the session's rendered rows are appended, and a
non-live record of a session supersedes every earlier ``live`` record of that session:
``read`` (and so ``digests``) leaves those out, and the ones after the session's last non-live
record are its pending turns; a record appended twice by two writers at once (same ``id``) is
read once. So a settled turn appends its new rows (O(turn)) instead of
rewriting every session's lines (O(file): under load the rewrite held the file's lock for
hundreds of milliseconds while each hook's append waited, issue 45 item 10). The superseded
lines stay in the file as the record of what the hooks delivered, with their event ids.

Over 600 lines: the canonical JSONL's format and its one locked, durable writer (records, ids,
torn-tail repair, snapshots, the live-record supersession rule) change together: the reader and
the writer must agree on every rule.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from continuity.core.config import resolve_home
from continuity.core.errors import ContinuityError
from continuity.core.private import private_dir, private_open, write_whole
from continuity.core.text import json_bytes

log = logging.getLogger(__name__)

SCHEMA = "continuity.transcript.v1"
FILE_NAME = "transcript.jsonl"
_TAIL_CHUNK = 64 * 1024
#: issue 17: appended records go to the file in writes of whole lines of about this many bytes
#: (one ``write`` per record was a tenth of the transcript phase); the lock keeps them whole
WRITE_CHUNK_BYTES = 1024 * 1024
#: beside the file: where an import's append began, until its database commit (issue 45 item 9)
JOURNAL_SUFFIX = ".appending"


# ---------------------------------------------------------------------------- names and records

_UNSAFE = re.compile(r"[^a-z0-9._-]+")


def safe_name(name: str) -> str:
    """``name`` folded into one safe path segment: trimmed, lower-cased, each run of characters
    other than ``a-z 0-9 . _ -`` turned into ``-``, edge dots and dashes removed (so ``..`` and
    ``../../etc`` cannot climb), at most 64 characters; empty gives ``unknown``."""
    folded = _UNSAFE.sub("-", name.strip().lower()).strip(".-")[:64].strip(".-")
    return folded or "unknown"


def transcript_path(home: str | os.PathLike[str] | None, harness: str) -> Path:
    """``<workspace>/memory/<safe_name(harness)>/transcripts/transcript.jsonl``."""
    return resolve_home(home) / "memory" / safe_name(harness) / "transcripts" / FILE_NAME


@contextmanager
def import_capture_lock(home: str | os.PathLike[str] | None) -> Iterator[None]:
    """Hold ``<workspace>/memory/import.lock`` (``fcntl.flock``, exclusive; the kernel frees
    it if the holder dies) for one import's transcript phase: two imports of one workspace
    at once each found the sessions without a transcript row and both appended their records,
    so the JSONL held every record twice (fresh-user review, issue 17). The second now waits,
    then sees the rows the first wrote. Raises ``ContinuityError`` when the lock file cannot
    be made."""
    folder = resolve_home(home) / "memory"
    try:
        private_dir(folder)
        fd = os.open(folder / "import.lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise ContinuityError(
            f"cannot lock the transcripts in {folder}: {exc.strerror or exc}"
        ) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def content_hash(content: str) -> str:
    """Lowercase hex SHA-256 of the UTF-8 ``content`` (no normalisation)."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


class TextDigest:
    """The running ``content_hash`` of a text that only grows, without keeping the text: the
    daemon appends each live turn to a transcript row and needs the hash of the whole text,
    and hashing it whole on every turn cost O(session) per turn (issue 17).

    ``TextDigest(text).hex == content_hash(text)``; ``d.extended(tail).hex ==
    content_hash(text + tail)`` (a new digest: ``d`` is unchanged, so a failed write keeps
    the old one); ``empty``: whether the text is empty (its first paragraph takes no
    separator)."""

    __slots__ = ("_sha", "empty", "hex")

    def __init__(self, text: str = "", *, _sha: Any = None) -> None:
        self._sha = _sha if _sha is not None else hashlib.sha256(text.encode("utf-8"))
        self.empty = _sha is None and not text
        self.hex = self._sha.hexdigest()

    def extended(self, tail: str) -> TextDigest:
        """The digest of this text followed by ``tail``."""
        if not tail:
            return self
        sha = self._sha.copy()
        sha.update(tail.encode("utf-8"))
        return TextDigest(_sha=sha)


@dataclass(frozen=True, slots=True)
class TranscriptRecord:
    """One line of the canonical JSONL: one row of one session.

    ``content_sha256`` is the hex SHA-256 of ``content``; ``id`` is the first 32 hex characters
    of the SHA-256 of the compact JSON array ``[schema, agent_id, harness, session_key, seq,
    role, content_sha256]``: stable across re-captures (``captured_at`` and the source fields
    are left out), different for any change of who, where or what.
    """

    agent_id: str
    harness: str
    session_key: str
    project: str | None
    seq: int
    role: str
    content: str
    source_format: str
    source_path: str | None
    captured_at: str
    source_line: int | None = None
    schema: str = SCHEMA
    #: the hook event that delivered a ``live`` record (issue 21: a replay finds it by this
    #: id and never writes it twice); None, and absent from the line, for any other record
    event_id: str | None = None

    @property
    def content_sha256(self) -> str:
        return content_hash(self.content)

    @property
    def id(self) -> str:
        return self._id(self.content_sha256)

    def _id(self, content_sha256: str) -> str:
        key = json_bytes(
            [
                self.schema,
                self.agent_id,
                self.harness,
                self.session_key,
                self.seq,
                self.role,
                content_sha256,
            ]
        )
        return hashlib.sha256(key).hexdigest()[:32]

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the line, fields in documented order, ``id`` last (``event_id``
        before it, only on a live record that has one)."""
        digest = self.content_sha256  # hashed once for both fields
        out = {
            "schema": self.schema,
            "captured_at": self.captured_at,
            "agent_id": self.agent_id,
            "harness": self.harness,
            "session_key": self.session_key,
            "project": self.project,
            "seq": self.seq,
            "role": self.role,
            "content": self.content,
            "source_format": self.source_format,
            "source_path": self.source_path,
            "source_line": self.source_line,
            "content_sha256": digest,
        }
        if self.event_id is not None:
            out["event_id"] = self.event_id
        out["id"] = self._id(digest)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TranscriptRecord:
        """Parse a line's object. Raises ``ValueError`` for a missing field or an ``id`` or
        ``content_sha256`` that does not match the fields (a corrupted or edited line)."""
        try:
            record = cls(
                data["agent_id"],
                data["harness"],
                data["session_key"],
                data.get("project"),
                int(data["seq"]),
                data["role"],
                data["content"],
                data["source_format"],
                data.get("source_path"),
                data["captured_at"],
                data.get("source_line"),
                data["schema"],
                data.get("event_id"),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a transcript record: missing or bad field {exc}") from None
        if data.get("content_sha256") != record.content_sha256 or data.get("id") != record.id:
            raise ValueError("id or content_sha256 does not match the record's fields")
        return record


# Beyond what JSON escapes (< U+0020): DEL, C1 controls (U+0085 NEL among them) and the Unicode
# line and paragraph separators, which some line readers (str.splitlines, JavaScript) split on.
_LINE_BREAKERS = re.compile("[\x7f-\x9f\u2028\u2029]")


#: the UTF-8 bytes that begin every character ``_LINE_BREAKERS`` matches: DEL, the lead byte
#: of U+0080..U+00BF (C1 controls) and the three bytes of U+2028 / U+2029
_BREAKER_BYTES = (b"\x7f", b"\xc2", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def _json_line(value: Any) -> bytes:
    data = json_bytes(value)
    if not any(b in data for b in _BREAKER_BYTES):  # issue 17: most lines hold none
        return data
    line = data.decode("utf-8")
    return _LINE_BREAKERS.sub(lambda m: f"\\u{ord(m.group()):04x}", line).encode("utf-8")


def encode_record(record: TranscriptRecord) -> bytes:
    """One JSONL line (with its ``\\n``): every control character and line separator escaped, so
    one record is always exactly one line for any line reader."""
    return _json_line(record.to_dict()) + b"\n"


# ---------------------------------------------------------------------------- the JSONL file


class TranscriptLog:
    """The canonical JSONL file of one harness (see the module docstring).

    ``fsync`` (default on) makes every ``append``/``replace_session`` durable before it returns
    (B57); turn it off only where durability does not matter (tests, bulk rebuilds). POSIX only
    (``fcntl.flock``): the lock is released by the kernel if its holder dies, so it never goes
    stale. Files are created owner-only (0600): transcripts are raw and may hold secrets.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.fsync = fsync
        self.torn_bytes = 0  # bytes of torn tails this object dropped (also logged)
        #: ``(agent_id, session_key)`` of each torn tail dropped, None when the fragment does not
        #: name its session; the consumer (``sync_session``) clears it.
        self.torn_sessions: list[tuple[str, str] | None] = []

    @contextmanager
    def _locked(self) -> Iterator[None]:
        private_dir(self.path.parent)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def append(self, records: Iterable[TranscriptRecord]) -> int:
        """Append records (whole lines, ``WRITE_CHUNK_BYTES`` per write) after repairing a torn
        tail; returns how many."""
        with self._locked():
            return self._append_locked(records)

    @property
    def journal_path(self) -> Path:
        """``<file>.appending``: the offset where an import's uncommitted append began."""
        return self.path.with_name(self.path.name + JOURNAL_SUFFIX)

    def append_journaled(self, records: Iterable[TranscriptRecord]) -> int:
        """Append as ``append`` does, for a writer whose database commit comes after the
        append (an import's transcript phase), so that a kill between the two never leaves a
        record twice (issue 45 item 9: 41 of 2,000 killed imports and watches wrote records
        again on resume, because the rows stayed due while their records were in the file).

        Before appending, the file's size is written to ``journal_path`` (kept if one is there:
        an earlier append was never committed). When a journal is there, the records from its
        offset to the end are read (bounded: only what was written since that append began) and
        any record whose ``id`` is among them is skipped. ``commit_journal`` removes the journal
        once the database holds the rows' new state. Returns how many records were written."""
        with self._locked():
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                self._repair(fd)
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
            start = self._journal_offset()
            if start is None or start > size:
                start = None
                write_whole(self.journal_path, b"%d\n" % size, 0o600)
            there = self._ids_from(start) if start is not None else set()
            return self._append_locked(r for r in records if not there or r.id not in there)

    def commit_journal(self) -> None:
        """Remove ``journal_path``: the appends it covers are committed in the database."""
        self.journal_path.unlink(missing_ok=True)

    def _journal_offset(self) -> int | None:
        try:
            return max(0, int(self.journal_path.read_bytes().split()[0]))
        except (OSError, ValueError, IndexError):
            return None

    def _ids_from(self, offset: int) -> set[str]:
        """The ``id`` of every record from ``offset`` (moved to the next line start) to the end."""
        ids: set[str] = set()
        with open(self.path, "rb") as src:
            if offset:
                src.seek(offset - 1)
                if src.read(1) != b"\n":
                    src.readline()  # the offset fell inside a line: start at the next one
            for line in src:
                try:
                    found = orjson.loads(line).get("id")
                except (orjson.JSONDecodeError, AttributeError):
                    continue
                if isinstance(found, str):
                    ids.add(found)
        return ids

    def _append_locked(self, records: Iterable[TranscriptRecord]) -> int:
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            self._repair(fd)
            count = 0
            chunk: list[bytes] = []
            size = 0
            for record in records:
                line = encode_record(record)
                chunk.append(line)
                size += len(line)
                count += 1
                if size >= WRITE_CHUNK_BYTES:
                    _write_all(fd, b"".join(chunk))
                    chunk, size = [], 0
            if chunk:
                _write_all(fd, b"".join(chunk))
            if self.fsync and count:
                os.fsync(fd)
            return count
        finally:
            os.close(fd)

    def repair_tail(self) -> int:
        """Repair an unterminated last line now (see ``_repair``); returns bytes dropped."""
        with self._locked():
            return self._repair_locked()

    def _repair_locked(self) -> int:
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            return self._repair(fd)
        finally:
            os.close(fd)

    def _repair(self, fd: int) -> int:
        """B36: a last line without ``\\n`` is a crash's fragment. If it still parses as a JSON
        object it only lost its newline, which is added; otherwise it is cut off (its bytes go
        to ``<file>.torn`` and a warning is logged) so the next record starts a fresh line."""
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return 0
        start = size
        while start > 0:
            chunk_start = max(0, start - _TAIL_CHUNK)
            nl = os.pread(fd, start - chunk_start, chunk_start).rfind(b"\n")
            if nl >= 0:
                start = chunk_start + nl + 1
                break
            start = chunk_start
        tail = os.pread(fd, size - start, start)
        try:
            if isinstance(orjson.loads(tail), dict):
                _write_all(fd, b"\n")
                return 0
        except orjson.JSONDecodeError:
            pass
        torn_path = self.path.with_name(self.path.name + ".torn")
        with os.fdopen(
            private_open(torn_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab"
        ) as torn:
            torn.write(tail + b"\n")
        os.ftruncate(fd, start)
        self.torn_bytes += len(tail)
        self.torn_sessions.append(_identity(tail))
        log.warning(
            "%s: dropped a torn last line of %d bytes (kept in %s.torn)",
            self.path,
            len(tail),
            self.path.name,
        )
        return len(tail)

    def replace_session(
        self, agent_id: str, session_key: str, records: Iterable[TranscriptRecord]
    ) -> int:
        """Make ``records`` the session's only records (a snapshot), atomically: readers see the
        old file or the new one. Other sessions' lines are copied byte for byte; when the file
        holds no line of this session the records are simply appended. Returns how many."""
        return self.replace_sessions({(agent_id, session_key): records})

    def replace_sessions(
        self, snapshots: Mapping[tuple[str, str], Iterable[TranscriptRecord]]
    ) -> int:
        """``replace_session`` of several sessions in one rewrite of the file: ``snapshots``
        maps ``(agent_id, session_key)`` to its new records, written in the mapping's order
        after every other line (copied byte for byte). One pass over the file, however many
        sessions: an import that snapshots N sessions rewrote the whole file N times (O(N x
        file); 0.9 s per session with a 130 MB file). When the file holds no line of any of
        them, the records are appended. Atomic (readers see the old file or the new one);
        returns how many records were written."""
        if not snapshots:
            return 0
        with self._locked():
            for stale in self.path.parent.glob(".transcript-*.tmp"):  # a crashed snapshot's
                stale.unlink(missing_ok=True)
            self._repair_locked()
            wanted = _Wanted(snapshots)
            if not self._holds_any(wanted):
                return sum(self._append_locked(records) for records in snapshots.values())
            fd, tmp = tempfile.mkstemp(prefix=".transcript-", suffix=".tmp", dir=self.path.parent)
            try:
                count = self._rewrite(fd, wanted, snapshots)
                if self.fsync:
                    os.fsync(fd)
                os.close(fd)
                fd = -1
                os.replace(tmp, self.path)
            except BaseException:
                if fd >= 0:
                    os.close(fd)
                os.unlink(tmp)
                raise
            if self.fsync:
                _fsync_dir(self.path.parent)
            if self._journal_offset() is not None:  # offsets moved: the next check reads all
                write_whole(self.journal_path, b"0\n", 0o600)
            return count

    def _rewrite(
        self,
        fd: int,
        wanted: _Wanted,
        snapshots: Mapping[tuple[str, str], Iterable[TranscriptRecord]],
    ) -> int:
        with open(self.path, "rb") as src:
            for line in src:  # _repair_locked ran: every line ends with a newline
                if wanted.holds(line):
                    continue
                _write_all(fd, line)
        count = 0
        for records in snapshots.values():
            for record in records:
                _write_all(fd, encode_record(record))
                count += 1
        return count

    def _holds_any(self, wanted: _Wanted) -> bool:
        if not self.path.exists():
            return False
        with open(self.path, "rb") as src:
            return any(wanted.holds(line) for line in src)

    def digests(self) -> dict[tuple[str, str], str]:
        """``content_hash`` of each session's records joined as ``sync_session`` joins them
        (file order), by ``(agent_id, session_key)``: equal to the session's row hash when its
        records in the file are complete and current."""
        parts: dict[tuple[str, str], list[str]] = {}
        for record in self.read():
            parts.setdefault((record.agent_id, record.session_key), []).append(record.content)
        return {k: content_hash("\n\n".join(v)) for k, v in parts.items()}

    def live_events(self) -> Iterator[TranscriptRecord]:
        """Stream the records that carry an ``event_id`` (live turns, issue 21), in file order:
        one pass over the file, parsing only the lines that hold the key (JSON escapes every
        quote inside a value, so the bytes ``"event_id":"`` only occur as the key)."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as src:
            for line in src:
                if b'"event_id":"' not in line or not line.endswith(b"\n"):
                    continue
                try:
                    record = TranscriptRecord.from_dict(orjson.loads(line))
                except (orjson.JSONDecodeError, ValueError):
                    continue
                if record.event_id:
                    yield record

    def read(
        self,
        *,
        session_key: str | None = None,
        agent_id: str | None = None,
        bad: list[tuple[int, str]] | None = None,
    ) -> Iterator[TranscriptRecord]:
        """Stream the current records (of one session when ``session_key`` is given), in file
        order: a session's ``live`` records followed by a non-live record of that session are
        superseded and left out (module docstring). Lines that are not valid records are
        appended to ``bad`` as ``(line_no, reason)``; an unterminated last line (a write in
        progress or a crash) is left out. Two passes over the file when it holds live records
        (the first finds the superseded ones), one otherwise."""
        if not self.path.exists():
            return
        superseded = self._superseded()
        with open(self.path, "rb") as src:
            for number, line in enumerate(src, 1):
                if not line.endswith(b"\n"):
                    return
                if number in superseded:
                    continue
                try:
                    record = TranscriptRecord.from_dict(orjson.loads(line))
                except (orjson.JSONDecodeError, ValueError) as exc:
                    if bad is not None:
                        bad.append((number, str(exc)))
                    continue
                if session_key is not None and record.session_key != session_key:
                    continue
                if agent_id is not None and record.agent_id != agent_id:
                    continue
                yield record

    def _superseded(self) -> set[int]:
        """The line numbers (1-based) ``read`` leaves out: the ``live`` records that a later
        non-live record of the same session supersedes, and, in a session that has live
        records, a non-live record whose ``id`` an earlier one already has (two writers that
        appended the same new rows at once: the second copy adds nothing). Module
        docstring."""
        live: dict[tuple[str, str], list[int]] = {}
        ids: dict[tuple[str, str], set[bytes]] = {}
        out: set[int] = set()
        with open(self.path, "rb") as src:
            for number, line in enumerate(src, 1):
                if not line.endswith(b"\n"):
                    break
                is_live = _LIVE in line
                if not is_live and not ids:
                    continue  # no live record so far: no need to know whose line this is
                who = _identity(line)
                if who is None:
                    continue
                if is_live:
                    live.setdefault(who, []).append(number)
                    ids.setdefault(who, set())
                elif who in ids:
                    out.update(live.pop(who, ()))
                    at = line.rfind(b'"id":"')
                    record_id = line[at + 6 : at + 38] if at >= 0 else b""
                    if record_id in ids[who]:
                        out.add(number)
                    elif record_id:
                        ids[who].add(record_id)
        return out


def _write_all(fd: int, data: bytes) -> None:
    """One ``write`` for the whole buffer; loops only on a short write (e.g. disk nearly full)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


#: the bytes of a ``live`` record's format field (JSON escapes every quote inside a value, so
#: these bytes only occur as the field itself)
_LIVE = b'"source_format":"live"'

_FIELD = {
    name: re.compile(rb'"' + name.encode() + rb'":("(?:[^"\\]|\\.)*")')
    for name in ("agent_id", "session_key")
}


def _identity(fragment: bytes) -> tuple[str, str] | None:
    """``(agent_id, session_key)`` named by a torn record's fragment, None when it was cut
    before both."""
    found = []
    for name in ("agent_id", "session_key"):
        m = _FIELD[name].search(fragment)
        if m is None:
            return None
        try:
            found.append(orjson.loads(m.group(1)))
        except orjson.JSONDecodeError:
            return None
    return found[0], found[1]


class _Wanted:
    """Which lines belong to a set of ``(agent_id, session_key)`` sessions: the session key is
    found with one search per line (``_FIELD``; JSON escapes every quote inside a value, so
    ``"session_key":"`` only occurs as the key), and only a line whose key is wanted is
    parsed to check its agent."""

    __slots__ = ("_agents",)

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        #: each wanted session key as it is written in a line, with its wanted agents
        self._agents: dict[bytes, set[str]] = {}
        for agent, key in pairs:
            self._agents.setdefault(_json_line(key), set()).add(agent)

    def holds(self, line: bytes) -> bool:
        """Whether ``line`` is a record of one of the sessions."""
        m = _FIELD["session_key"].search(line)
        if m is None:
            return False
        agents = self._agents.get(m.group(1))
        if not agents:
            return False
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError:
            return False
        return (
            isinstance(data, dict)
            and data.get("agent_id") in agents
            and data.get("session_key") == orjson.loads(m.group(1))
        )
