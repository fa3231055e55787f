"""Lossless session transcripts (seed 000, "Lossless Session Transcripts"): the canonical JSONL
file per harness, the ``session_transcripts`` row per session, completion, and the read-time
sanitized projection.

**Transcript text** (``render_entry``; the content of a ``session_transcripts`` row). A session's
visible ``message`` and ``compaction`` rows, in seq order, each block as one labelled paragraph:
``User: …``, ``Assistant: …``, ``System: …``, ``Thinking: …``, ``Tool call: NAME`` (arguments
as compact JSON, or the raw string, on the next lines), ``Tool result: …`` / ``Tool error: …``,
``Summary: …`` (a compaction). Media are ``[image/png 48213 B omitted]`` stubs. A paragraph's
lines after its first are indented by two spaces, so a line of content can never pass for a
label (a tool output that prints ``User: hi`` stays inside its result); paragraphs are separated
by one blank line. Nothing is cut, collapsed or redacted: the stored row is lossless.

**Canonical JSONL** at ``<workspace>/memory/<harness>/transcripts/transcript.jsonl`` (harness
folded by ``safe_name``; session keys live only inside records, never in paths): one
``TranscriptRecord`` per row, its ``content`` that row's paragraphs. Writers hold ``flock`` on a
sibling ``.lock`` file, repair a torn last line before appending (B36), write each record with
one ``write`` call, and fsync before returning. ``replace_session`` rewrites one session's
records through a temp file and ``os.replace``, leaving every other session's lines untouched.
A torn line cut off by the repair is lost from the file but not from the database: the next
snapshot (``sync_session``) rewrites the session it belonged to from the database (named by the
fragment, else every session whose records no longer match its row), so the file is complete
again.

**Row rules** (``put_transcript``): same hash changes nothing; a different hash replaces the
content, sets ``updated_at`` and re-opens a completed row; completion sets ``completed_at`` only
where it is NULL (idempotent, first completion wins), so "write then complete" in one call gives a
changed session its new completion time. Completion paths: ``end_session``,
``recover_after_clear`` and ``sweep_idle`` (``[transcripts] idle_limit_minutes``, default 240,
origin: the 4 h session TTL). ``completed_at`` is when the row was marked.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import orjson
from pydantic import BaseModel, ConfigDict, Field

from continuity.config import load_section, resolve_home
from continuity.errors import AmbiguousSession, ContinuityError, InputError, SessionNotFound
from continuity.model import (
    Entry,
    EntryKind,
    MediaBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    TranscriptRow,
)
from continuity.redact import redact
from continuity.text import clean, json_bytes

if TYPE_CHECKING:
    from continuity.importer import ImportReport
    from continuity.store import SqlStore

log = logging.getLogger(__name__)

SCHEMA = "continuity.transcript.v1"
FILE_NAME = "transcript.jsonl"
PAGE_ROWS = 500  # rows read per store page while rendering a session
_TAIL_CHUNK = 64 * 1024


class TranscriptSettings(BaseModel):
    """The ``[transcripts]`` section of ``config.toml``."""

    model_config = ConfigDict(extra="forbid")

    #: Sessions whose transcript has not changed for this long are completed by ``sweep_idle``
    #: (origin: 4 h session TTL). Whole minutes, 1 .. 43,200 (30 days).
    idle_limit_minutes: int = Field(240, ge=1, le=43_200)


def settings(home: str | os.PathLike[str] | None = None) -> TranscriptSettings:
    """``[transcripts]`` of the workspace's config (``ConfigError`` names a bad field)."""
    return load_section("transcripts", TranscriptSettings, home)


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _iso(value: datetime) -> str:
    return value.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


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


def content_hash(content: str) -> str:
    """Lowercase hex SHA-256 of the UTF-8 ``content`` (no normalisation)."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def storable(text: str) -> str:
    """``text`` safe for every backend: lone surrogates (B43) and NUL (PostgreSQL TEXT refuses
    it) become U+FFFD. Valid text without NUL is returned unchanged."""
    text = clean(text)
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


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

    @property
    def content_sha256(self) -> str:
        return content_hash(self.content)

    @property
    def id(self) -> str:
        key = json_bytes([self.schema, self.agent_id, self.harness, self.session_key,
                          self.seq, self.role, self.content_sha256])
        return hashlib.sha256(key).hexdigest()[:32]

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the line, fields in documented order, ``id`` last."""
        return {"schema": self.schema, "captured_at": self.captured_at,
                "agent_id": self.agent_id, "harness": self.harness,
                "session_key": self.session_key, "project": self.project, "seq": self.seq,
                "role": self.role, "content": self.content, "source_format": self.source_format,
                "source_path": self.source_path, "source_line": self.source_line,
                "content_sha256": self.content_sha256, "id": self.id}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TranscriptRecord":
        """Parse a line's object. Raises ``ValueError`` for a missing field or an ``id`` or
        ``content_sha256`` that does not match the fields (a corrupted or edited line)."""
        try:
            record = cls(data["agent_id"], data["harness"], data["session_key"],
                         data.get("project"), int(data["seq"]), data["role"], data["content"],
                         data["source_format"], data.get("source_path"), data["captured_at"],
                         data.get("source_line"), data["schema"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a transcript record: missing or bad field {exc}") from None
        if data.get("content_sha256") != record.content_sha256 or data.get("id") != record.id:
            raise ValueError("id or content_sha256 does not match the record's fields")
        return record


# Beyond what JSON escapes (< U+0020): DEL, C1 controls (U+0085 NEL among them) and the Unicode
# line and paragraph separators, which some line readers (str.splitlines, JavaScript) split on.
_LINE_BREAKERS = re.compile("[\x7f-\x9f\u2028\u2029]")


def _json_line(value: Any) -> bytes:
    line = json_bytes(value).decode("utf-8")
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def append(self, records: Iterable[TranscriptRecord]) -> int:
        """Append records, one ``write`` each, after repairing a torn tail; returns how many."""
        with self._locked():
            return self._append_locked(records)

    def _append_locked(self, records: Iterable[TranscriptRecord]) -> int:
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            self._repair(fd)
            count = 0
            for record in records:
                _write_all(fd, encode_record(record))
                count += 1
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
        with open(self.path.with_name(self.path.name + ".torn"), "ab") as torn:
            torn.write(tail + b"\n")
        os.ftruncate(fd, start)
        self.torn_bytes += len(tail)
        self.torn_sessions.append(_identity(tail))
        log.warning("%s: dropped a torn last line of %d bytes (kept in %s.torn)",
                    self.path, len(tail), self.path.name)
        return len(tail)

    def replace_session(self, agent_id: str, session_key: str,
                        records: Iterable[TranscriptRecord]) -> int:
        """Make ``records`` the session's only records (a snapshot), atomically: readers see the
        old file or the new one. Other sessions' lines are copied byte for byte; when the file
        holds no line of this session the records are simply appended. Returns how many."""
        with self._locked():
            for stale in self.path.parent.glob(".transcript-*.tmp"):  # a crashed snapshot's
                stale.unlink(missing_ok=True)
            self._repair_locked()
            if not self._holds_session(agent_id, session_key):
                return self._append_locked(records)
            fd, tmp = tempfile.mkstemp(prefix=".transcript-", suffix=".tmp",
                                       dir=self.path.parent)
            try:
                count = self._rewrite(fd, agent_id, session_key, records)
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
            return count

    def _rewrite(self, fd: int, agent_id: str, session_key: str,
                 records: Iterable[TranscriptRecord]) -> int:
        needle = b'"session_key":' + _json_line(session_key)
        with open(self.path, "rb") as src:
            for line in src:  # _repair_locked ran: every line ends with a newline
                if needle in line and _belongs(line, agent_id, session_key):
                    continue
                _write_all(fd, line)
        count = 0
        for record in records:
            _write_all(fd, encode_record(record))
            count += 1
        return count

    def _holds_session(self, agent_id: str, session_key: str) -> bool:
        if not self.path.exists():
            return False
        needle = b'"session_key":' + _json_line(session_key)
        with open(self.path, "rb") as src:
            return any(needle in line and _belongs(line, agent_id, session_key) for line in src)

    def digests(self) -> dict[tuple[str, str], str]:
        """``content_hash`` of each session's records joined as ``sync_session`` joins them
        (file order), by ``(agent_id, session_key)``: equal to the session's row hash when its
        records in the file are complete and current."""
        parts: dict[tuple[str, str], list[str]] = {}
        for record in self.read():
            parts.setdefault((record.agent_id, record.session_key), []).append(record.content)
        return {k: content_hash("\n\n".join(v)) for k, v in parts.items()}

    def read(self, *, session_key: str | None = None, agent_id: str | None = None,
             bad: list[tuple[int, str]] | None = None) -> Iterator[TranscriptRecord]:
        """Stream the records (of one session when ``session_key`` is given), in file order.
        Lines that are not valid records are appended to ``bad`` as ``(line_no, reason)``; an
        unterminated last line (a write in progress or a crash) is left out."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as src:
            for number, line in enumerate(src, 1):
                if not line.endswith(b"\n"):
                    return
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


def _write_all(fd: int, data: bytes) -> None:
    """One ``write`` for the whole buffer; loops only on a short write (e.g. disk nearly full)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_FIELD = {name: re.compile(rb'"' + name.encode() + rb'":("(?:[^"\\]|\\.)*")')
          for name in ("agent_id", "session_key")}


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


def _belongs(line: bytes, agent_id: str, session_key: str) -> bool:
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return (isinstance(data, dict) and data.get("session_key") == session_key
            and data.get("agent_id") == agent_id)


# ---------------------------------------------------------------------------- rendering rows

_TEXT_LABEL = {Role.USER: "User", Role.ASSISTANT: "Assistant", Role.SYSTEM: "System",
               Role.TOOL: "Tool result"}


def paragraph(label: str, text: str) -> str:
    """``Label: first line`` and the following lines indented by two spaces (empty lines stay
    empty), the unit of transcript text."""
    first, *rest = text.split("\n")
    head = f"{label}: {first}" if first else f"{label}:"
    return "\n".join([head, *("  " + line if line else "" for line in rest)])


def _block_paragraph(role: Role, block: Any) -> str:
    if isinstance(block, TextBlock):
        return paragraph(_TEXT_LABEL[role], block.text)
    if isinstance(block, ThinkingBlock):
        return paragraph("Thinking", block.text)
    if isinstance(block, ToolCallBlock):
        name = " ".join(block.name.split()) or "tool"
        args = block.arguments if isinstance(block.arguments, str) else json_bytes(
            block.arguments).decode("utf-8")
        return paragraph("Tool call", f"{name}\n{args}")
    if isinstance(block, ToolResultBlock):
        body = "\n".join([block.text, *(m.stub() for m in block.media)]) if block.media \
            else block.text
        return paragraph("Tool error" if block.is_error else "Tool result", body)
    if isinstance(block, MediaBlock):
        return paragraph(_TEXT_LABEL[role], block.stub())
    return ""


def render_entry(entry: Entry) -> str:
    """The transcript text of one row (module docstring); ``""`` for rows that are not
    conversation (context, events, opaque lines) or carry nothing."""
    if entry.kind is EntryKind.COMPACTION:
        return paragraph("Summary", entry.compaction.summary) if entry.compaction else ""
    if entry.kind is not EntryKind.MESSAGE:
        return ""
    parts = [_block_paragraph(entry.role, b) for b in entry.blocks]
    return storable("\n\n".join(p for p in parts if p))


# ---------------------------------------------------------------------------- session_transcripts


@dataclass(frozen=True, slots=True)
class TranscriptWrite:
    """What ``put_transcript`` did: a new row, a content change, a completion (each or none)."""

    inserted: bool = False
    changed: bool = False
    completed: bool = False


def check_identity(session_key: str, agent_id: str, harness: str) -> None:
    """The row's identity rules: ``session_key`` not blank and at most 200 characters,
    ``agent_id`` 1..200 and ``harness`` 1..40 characters (the store's columns). Raises
    ``InputError`` naming the field."""
    if not session_key.strip() or len(session_key) > 200:
        raise InputError(f"session_key: must be 1..200 characters (got {session_key!r})")
    if not agent_id or len(agent_id) > 200:
        raise InputError(f"agent_id: must be 1..200 characters (got {agent_id!r})")
    if not harness or len(harness) > 40:
        raise InputError(f"harness: must be 1..40 characters (got {harness!r})")


def put_transcript(store: "SqlStore", session_key: str, content: str, *,
                   agent_id: str = "default", harness: str = "manual", project: str | None = None,
                   completed_at: datetime | None = None,
                   now: datetime | None = None) -> TranscriptWrite:
    """Write a session's transcript row by the row rules (module docstring), in one transaction.
    Raises ``InputError`` naming ``session_key`` (blank or over 200 characters), ``agent_id`` or
    ``harness`` (over 40 characters)."""
    key = session_key
    check_identity(key, agent_id, harness)
    text = storable(content)
    digest, at = content_hash(text), now or _now()
    with store.batch():
        row = TranscriptRow(key, agent_id, harness, project, text, digest, at, at, None)
        inserted = store.insert_transcript(row)
        changed = not inserted and store.update_transcript_content(
            key, agent_id, content=text, content_hash=digest, harness=harness, project=project,
            updated_at=at)
        completed = completed_at is not None and store.complete_transcript(
            key, agent_id, completed_at)
    return TranscriptWrite(inserted, changed, completed)


@dataclass(frozen=True, slots=True)
class SyncResult:
    """One session's transcript capture: records written to the JSONL (0: file untouched) and
    what happened to its row."""

    session_key: str
    records: int
    write: TranscriptWrite
    path: Path


def _session_rows(store: "SqlStore", key: str) -> Iterator[Entry]:
    after = -1
    while True:
        page = store.entries(key, after_seq=after, limit=PAGE_ROWS, visible_only=True)
        yield from page
        if len(page) < PAGE_ROWS:
            return
        after = page[-1].seq


def _records(store: "SqlStore", session: Any, captured: str) -> list[TranscriptRecord]:
    """The session's records: its visible rows rendered (read in pages of ``PAGE_ROWS``)."""
    records: list[TranscriptRecord] = []
    for entry in _session_rows(store, session.key):
        text = render_entry(entry)
        if text:
            src = entry.source
            records.append(TranscriptRecord(
                session.agent_id, session.harness, session.key, session.project, entry.seq,
                entry.role.value, text, "jsonl", src.path if src else session.source_path,
                captured, src.line if src else None))
    return records


def sync_session(store: "SqlStore", session_key: str, *,
                 home: str | os.PathLike[str] | None = None,
                 completed_at: datetime | None = None, fsync: bool = True) -> SyncResult:
    """Capture an imported session's transcript: render its visible rows (one rendered text per
    row kept, never the log's entries), then, when the text differs from the stored row (or the
    JSONL file is missing), replace the session's records in its harness's JSONL, and write the
    row. When that write cut off a torn line of another session, that session's records are
    rewritten from the database too (``restore_torn``). Raises ``SessionNotFound`` for an
    unknown key, ``InputError`` for a key, agent or harness the row refuses (nothing written),
    ``ContinuityError`` when the file cannot be written."""
    session = store.get_session(session_key)
    if session is None:
        raise SessionNotFound(session_key)
    check_identity(session.key, session.agent_id, session.harness)  # before any write
    records = _records(store, session, _iso(_now()))
    content = "\n\n".join(r.content for r in records)
    path = transcript_path(home, session.harness)
    written = 0
    if store.transcript_hash(session.key, session.agent_id) != content_hash(content) \
            or not path.exists():
        log_file = TranscriptLog(path, fsync=fsync)
        try:
            written = log_file.replace_session(session.agent_id, session.key, records)
            restore_torn(store, log_file, home=home, done=(session.agent_id, session.key))
        except OSError as exc:
            raise ContinuityError(f"cannot write the transcript file {path}: "
                                  f"{exc.strerror or exc}") from exc
    write = put_transcript(store, session.key, content, agent_id=session.agent_id,
                           harness=session.harness, project=session.project,
                           completed_at=completed_at)
    return SyncResult(session.key, written, write, path)


def restore_torn(store: "SqlStore", log_file: TranscriptLog, *,
                 home: str | os.PathLike[str] | None = None,
                 done: tuple[str, str] | None = None) -> list[tuple[str, str]]:
    """Rewrite from the database the sessions whose records ``log_file`` lost to a torn-tail
    repair (``log_file.torn_sessions``, then cleared): the session the fragment names, or, when
    it names none, every session whose records in the file no longer match its row's hash.
    Only imported sessions of the file's harness can be rewritten; ``done`` (a session just
    snapshotted, so already complete) is skipped. Returns the ``(agent_id, session_key)``
    rewritten; raises ``OSError`` when the file cannot be written."""
    if not log_file.torn_sessions:
        return []
    suspects = {s for s in log_file.torn_sessions if s is not None}
    if None in log_file.torn_sessions:
        for (agent, key), digest in log_file.digests().items():
            stored = store.transcript_hash(key, agent)
            if stored is not None and stored != digest:
                suspects.add((agent, key))
    log_file.torn_sessions.clear()
    suspects.discard(done)  # type: ignore[arg-type]
    restored = []
    for agent, key in sorted(suspects):
        session = store.get_session(key)
        if session is None or session.agent_id != agent \
                or transcript_path(home, session.harness) != log_file.path:
            continue
        log_file.replace_session(agent, key, _records(store, session, _iso(_now())))
        log.warning("%s: rewrote the records of session %r from the database after a torn "
                    "line", log_file.path, key)
        restored.append((agent, key))
    return restored


@dataclass
class ImportSync:
    """What ``sync_import_report`` did: how many sessions were ``captured``, and each session
    that ``failed`` as ``(session_key, reason)`` (one line each)."""

    captured: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)


def sync_import_report(store: "SqlStore", report: "ImportReport",
                       home: str | os.PathLike[str] | None = None) -> ImportSync:
    """Fill transcripts after ``continuity import``: every session of ``report`` (an
    ``importer.ImportReport``) whose file imported gets its JSONL snapshot and row, and so does
    an unchanged one that has no row yet. A session whose last activity is older than the idle
    limit is completed at once. A session that fails (a ``ContinuityError`` or ``ValueError``:
    a key the row refuses, an unwritable file, a database error) is counted in ``failed`` with
    its reason and the others go on; each is also logged as a warning. Raises ``ConfigError``
    for bad ``[transcripts]`` settings."""
    limit = timedelta(minutes=settings(home).idle_limit_minutes)
    now = _now()
    wanted = [f.session_key for f in report.files
              if f.session_key and f.status in ("imported", "unchanged")]
    fresh = {f.session_key for f in report.files if f.status == "imported"}
    out = ImportSync()
    for key in dict.fromkeys(wanted):
        try:
            session = store.get_session(key)
            if session is None:
                continue
            if key not in fresh and store.transcript_hash(key, session.agent_id) is not None:
                continue
            idle = session.ended_at is not None and session.ended_at < now - limit
            sync_session(store, key, home=home, completed_at=now if idle else None)
        except (ContinuityError, ValueError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            out.failed.append((key, reason))
            log.warning("transcript of session %r not captured: %s", key, reason)
            continue
        out.captured += 1
    return out


def sync_import(store: "SqlStore", report: "ImportReport",
                home: str | os.PathLike[str] | None = None) -> int:
    """``sync_import_report(...).captured``: how many sessions were captured (failures are
    logged; call ``sync_import_report`` to get them)."""
    return sync_import_report(store, report, home).captured


# ---------------------------------------------------------------------------- completion paths


def end_session(store: "SqlStore", session_key: str, *, agent_id: str = "default",
                home: str | os.PathLike[str] | None = None, at: datetime | None = None) -> bool:
    """Session end: capture the final transcript of an imported session, then mark its row
    completed at ``at`` (default now). True when this call completed the row."""
    at = at or _now()
    session = store.get_session(session_key)
    if session is not None:
        return sync_session(store, session_key, home=home, completed_at=at).write.completed
    return store.complete_transcript(session_key, agent_id, at)


def recover_after_clear(store: "SqlStore", new_session_key: str, *, agent_id: str = "default",
                        previous_key: str | None = None, harness: str | None = None,
                        project: str | None = None, at: datetime | None = None) -> str | None:
    """A session started after a ``clear`` (Claude Code sends no session end then): in one
    transaction, complete ``previous_key``'s open row, else the most recently updated open row of
    the same agent (same harness and project when given), never ``new_session_key`` itself.
    Returns the key completed, or None."""
    at = at or _now()
    with store.batch():
        if previous_key and previous_key != new_session_key \
                and store.complete_transcript(previous_key, agent_id, at):
            return previous_key
        found = store.open_transcripts(agent_id=agent_id, harness=harness, project=project,
                                       exclude=[new_session_key], newest_first=True, limit=1)
        if found and store.complete_transcript(found[0][0], agent_id, at):
            return found[0][0]
    return None


def sweep_idle(store: "SqlStore", *, home: str | os.PathLike[str] | None = None,
               now: datetime | None = None, idle_limit: timedelta | None = None,
               limit: int = 100) -> list[tuple[str, str]]:
    """TTL sweep: complete up to ``limit`` open rows whose content has not changed for
    ``idle_limit`` (default ``[transcripts] idle_limit_minutes``), oldest first. Returns the
    ``(session_key, agent_id)`` pairs completed."""
    now = now or _now()
    idle = idle_limit or timedelta(minutes=settings(home).idle_limit_minutes)
    done = []
    for key, agent in store.open_transcripts(updated_before=now - idle, limit=limit):
        if store.complete_transcript(key, agent, now):
            done.append((key, agent))
    return done


# ---------------------------------------------------------------------------- reading


def load_transcript(store: "SqlStore", name: str, *, agent_id: str | None = None,
                    home: str | os.PathLike[str] | None = None) -> TranscriptRow:
    """The transcript row of session ``name`` (a key, or a unique prefix of an imported
    session's key). An imported session without a row yet is captured first. Raises
    ``SessionNotFound`` / ``AmbiguousSession``."""
    found = store.get_transcripts([name], agent_id or "default")
    if name in found:
        return found[name]
    session = store.get_session(name)
    if session is None:
        matches = store.find_sessions(name, limit=21)
        if not matches:
            raise SessionNotFound(name)
        if len(matches) > 1:
            raise AmbiguousSession(name, [s.key for s in matches])
        session = matches[0]
    agent = agent_id or session.agent_id
    row = store.get_transcripts([session.key], agent).get(session.key)
    if row is None:
        sync_session(store, session.key, home=home)
        row = store.get_transcripts([session.key], agent).get(session.key)
    if row is None:  # pragma: no cover - sync_session always writes the row
        raise ContinuityError(f"no transcript for session {session.key!r}")
    return row



# ---------------------------------------------------------------------------- sanitized projection

_LABEL_LINE = re.compile(
    r"^(tool call|function call|tool result|tool error|tool output|function result|tool|function"
    r"|user|human|assistant|system|developer|summary|thinking|reasoning|thought)[ \t]*:[ \t]?(.*)$",
    re.IGNORECASE)
_KEEP_LABELS = {"user": "User", "human": "User", "assistant": "Assistant", "system": "System",
                "developer": "System", "summary": "Summary"}
_CALL_LABELS = {"tool call", "function call"}
_CALL_TYPES = {"tool_use", "tool_call", "function_call", "custom_tool_call", "server_tool_use",
               "toolcall"}
_OMIT_TYPES = {"tool_result", "tool_response", "function_call_output", "function_result",
               "custom_tool_call_output", "tool_output", "tool_return", "toolresult", "thinking",
               "redacted_thinking", "reasoning", "analysis", "thought"}
_JSON_ROLES = {"user": "User", "human": "User", "assistant": "Assistant", "model": "Assistant",
               "agent": "Assistant", "ai": "Assistant", "system": "System",
               "developer": "System"}
_TEXT_PARTS = {"text", "input_text", "output_text"}


def marker(name: str) -> str:
    """The one-line stand-in of a tool call in a projection: ``[tool call: NAME]``."""
    return f"[tool call: {' '.join(str(name).split()) or 'tool'}]"


def project(content: str, *, redact_secrets: bool = True) -> str:
    """The read-time sanitized projection of a stored transcript (seed 000): each tool call
    becomes ``[tool call: NAME]``, tool outputs and reasoning are left out, everything else is
    kept as written; then secrets are redacted (``continuity.redact``). The stored row is never
    changed.

    Reads transcript text (labels ``User``/``Human``, ``Assistant``, ``System``/``Developer``,
    ``Summary`` kept; ``Tool call``/``Function call`` become markers; ``Tool result``, ``Tool
    error``, ``Tool``, ``Function``, ``Thinking``, ``Reasoning`` and the lines under them left out
    until the next label at the start of a line), JSON lines in the shapes of Claude Code, Codex,
    pi and chat APIs (``message``/``payload`` envelopes, ``role``, ``content`` parts,
    ``tool_calls``), and mixtures; runs of blank lines become one."""
    out: list[str] = []
    keep = True
    for line in content.split("\n"):
        label = _LABEL_LINE.match(line)
        if label:
            name, rest = label.group(1).lower(), label.group(2)
            keep = name in _KEEP_LABELS
            if keep:
                _start(out, f"{_KEEP_LABELS[name]}: {rest}".rstrip())
            elif name in _CALL_LABELS:
                _start(out, marker(rest.split()[0] if rest.split() else "tool"))
            continue
        if not keep:
            continue
        if line.startswith("{"):
            try:
                data = orjson.loads(line)
            except orjson.JSONDecodeError:
                data = None
            if isinstance(data, dict):
                for text in _json_paragraphs(data, None):
                    _start(out, text)
                continue
        out.append(line)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")
    return redact(text) if redact_secrets else text


def _start(out: list[str], text: str) -> None:
    if out and out[-1] != "":
        out.append("")
    out.append(text)


def _tool_name(data: dict[str, Any]) -> str:
    for key in ("name", "tool", "tool_name", "toolName", "recipient_name"):
        if isinstance(data.get(key), str):
            return data[key]
    function = data.get("function")
    return function.get("name", "tool") if isinstance(function, dict) else "tool"


def _json_paragraphs(data: dict[str, Any], role: str | None) -> list[str]:
    kind = str(data.get("type", "")).lower()
    if kind in _CALL_TYPES:
        return [marker(_tool_name(data))]
    if kind in _OMIT_TYPES or data.get("thought") is True:
        return []
    own_role = data.get("role") or data.get("speaker") or data.get("author")
    for key in ("message", "payload", "item"):
        if isinstance(data.get(key), dict):
            return _json_paragraphs(data[key], own_role or role)
    label = _JSON_ROLES.get(str(own_role or role or "").lower())
    content = data.get("content", data.get("text"))
    parts = content if isinstance(content, list) else [content]
    out: list[str] = []
    for part in parts:
        if isinstance(part, str) and part.strip() and label:
            out.append(paragraph(label, part))
        elif isinstance(part, dict):
            kind = str(part.get("type", "")).lower()
            if kind in _CALL_TYPES:
                out.append(marker(_tool_name(part)))
            elif kind in _TEXT_PARTS and label and str(part.get("text", "")).strip():
                out.append(paragraph(label, str(part["text"])))
    for call in data.get("tool_calls") or data.get("calls") or []:
        if isinstance(call, dict):
            out.append(marker(_tool_name(call)))
    return out
