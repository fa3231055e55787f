"""Lossless session transcripts (seed 000, "Lossless Session Transcripts"): the rendering of a
session's rows into transcript text, the ``session_transcripts`` row per session, its snapshot
into the canonical JSONL file (``continuity.transcripts.transcript_log``), completion, and reading. The
read-time sanitized projection is ``continuity.transcripts.projection``; the names of both modules stay
importable from here.

**Transcript text** (``render_entry``; the content of a ``session_transcripts`` row). A session's
visible ``message`` and ``compaction`` rows, in seq order, each block as one labelled paragraph:
``User: …``, ``Assistant: …``, ``System: …``, ``Thinking: …``, ``Tool call: NAME`` (arguments
as compact JSON, or the raw string, on the next lines), ``Tool result: …`` / ``Tool error: …``,
``Summary: …`` (a compaction). Media are ``[image/png 48213 B omitted]`` stubs. A paragraph's
lines after its first are indented by two spaces, so a line of content can never pass for a
label (a tool output that prints ``User: hi`` stays inside its result); paragraphs are separated
by one blank line. Nothing is cut, collapsed or redacted: the stored row is lossless.

**Canonical JSONL**: one record per rendered row in
``<workspace>/memory/<harness>/transcripts/transcript.jsonl``; file format, locking, torn-tail
repair (B36) and snapshots are described in ``continuity.transcripts.transcript_log``. ``sync_session``
replaces a session's records there and rewrites from the database any session a torn-tail repair
cut short (``restore_torn``).

**Row rules** (``put_transcript``): same hash changes nothing; a different hash replaces the
content, sets ``updated_at`` and re-opens a completed row (``extend_transcript``: the same for
text that only grew, writing just what it added as the row's next part, revision 0018); completion
sets ``completed_at`` only
where it is NULL (idempotent, first completion wins), so "write then complete" in one call gives a
changed session its new completion time. Completion paths: ``end_session``,
``recover_after_clear`` and ``sweep_idle`` (``[transcripts] idle_limit_minutes``, default 240,
origin: the 4 h session TTL). ``completed_at`` is when the row was marked.

Over 600 lines: rendering a session into records, the ``session_transcripts`` row and the
append-or-rewrite sync of the JSONL share one invariant (the file's records equal the rows'
rendering, ``FileState``), kept in one place so it is checked in one place.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from continuity.core.config import load_section
from continuity.core.errors import ContinuityError, InputError, SessionNotFound
from continuity.core.model import (
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
from continuity.core.text import clean, json_bytes
from continuity.store import iter_entries
from continuity.store.names import resolve_session
from continuity.transcripts.projection import (  # noqa: F401 (re-exported: module docstring)
    marker,
    paragraph,
    project as project,  # explicit: parameters named ``project`` do not redefine it
)
from continuity.transcripts.transcript_log import (  # noqa: F401 (re-exported)
    FILE_NAME,
    SCHEMA,
    TextDigest,
    TranscriptLog,
    TranscriptRecord,
    content_hash,
    encode_record,
    import_capture_lock,
    safe_name,
    transcript_path,
)

if TYPE_CHECKING:
    from continuity.formats.importer import ImportReport
    from continuity.store import SqlStore

log = logging.getLogger(__name__)

PAGE_ROWS = 500  # rows read per store page while rendering a session


class TranscriptSettings(BaseModel):
    """The ``[transcripts]`` section of ``config.toml``."""

    model_config = ConfigDict(extra="forbid")

    #: Sessions whose transcript has not changed for this long are completed by ``sweep_idle``
    #: (origin: 4 h session TTL). Whole minutes, 1 .. 43,200 (30 days).
    idle_limit_minutes: int = Field(default=240, ge=1, le=43_200)


def settings(home: str | os.PathLike[str] | None = None) -> TranscriptSettings:
    """``[transcripts]`` of the workspace's config (``ConfigError`` names a bad field)."""
    return load_section("transcripts", TranscriptSettings, home)


def _now() -> datetime:
    return datetime.now(UTC)


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def storable(text: str) -> str:
    """``text`` safe for every backend: lone surrogates (B43) and NUL (PostgreSQL TEXT refuses
    it) become U+FFFD. Valid text without NUL is returned unchanged."""
    text = clean(text)
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


# ---------------------------------------------------------------------------- rendering rows

_TEXT_LABEL = {
    Role.USER: "User",
    Role.ASSISTANT: "Assistant",
    Role.SYSTEM: "System",
    Role.TOOL: "Tool result",
}


def _block_paragraph(role: Role, block: Any) -> str:
    if isinstance(block, TextBlock):
        return paragraph(_TEXT_LABEL[role], block.text)
    if isinstance(block, ThinkingBlock):
        return paragraph("Thinking", block.text)
    if isinstance(block, ToolCallBlock):
        name = " ".join(block.name.split()) or "tool"
        args = (
            block.arguments
            if isinstance(block.arguments, str)
            else json_bytes(block.arguments).decode("utf-8")
        )
        return paragraph("Tool call", f"{name}\n{args}")
    if isinstance(block, ToolResultBlock):
        body = (
            "\n".join([block.text, *(m.stub() for m in block.media)]) if block.media else block.text
        )
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


def put_transcript(
    store: SqlStore,
    session_key: str,
    content: str,
    *,
    agent_id: str = "default",
    harness: str = "manual",
    project: str | None = None,
    completed_at: datetime | None = None,
    now: datetime | None = None,
) -> TranscriptWrite:
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
            key,
            agent_id,
            content=text,
            content_hash=digest,
            harness=harness,
            project=project,
            updated_at=at,
        )
        completed = completed_at is not None and store.complete_transcript(
            key, agent_id, completed_at
        )
    return TranscriptWrite(inserted, changed, completed)


def extend_transcript(
    store: SqlStore,
    row: TranscriptRow,
    tail: str,
    *,
    harness: str,
    project: str | None,
    completed_at: datetime | None = None,
    now: datetime | None = None,
) -> TranscriptWrite:
    """Append ``tail`` to the session's row by the row rules (module docstring), in one
    transaction: its text becomes ``row.content + tail`` exactly (``row``: the stored row as
    read; ``tail`` starts with the ``"\n\n"`` separator unless ``row.content`` is empty).
    While the stored hash is still ``row.content_hash``, only ``tail`` is written
    (``Store.append_transcript``, revision 0018; issue 17: the cost is the new text's bytes,
    not the session's); when another writer changed the row meanwhile, the whole text is
    written (``put_transcript``). ``harness`` / ``project`` are set as ``put_transcript`` sets
    them. Raises ``InputError`` as ``put_transcript``."""
    tail = storable(tail)
    check_identity(row.session_key, row.agent_id, harness)
    if not tail:
        return put_transcript(
            store,
            row.session_key,
            row.content,
            agent_id=row.agent_id,
            harness=harness,
            project=project,
            completed_at=completed_at,
            now=now,
        )
    text = row.content + tail
    digest, at = content_hash(text), now or _now()
    with store.batch():
        if store.append_transcript(
            row.session_key,
            row.agent_id,
            tail=tail,
            content_hash=digest,
            expected_hash=row.content_hash,
            harness=harness,
            project=project,
            updated_at=at,
            completed_at=completed_at,
        ):
            return TranscriptWrite(False, True, completed_at is not None)
        return put_transcript(
            store,
            row.session_key,
            text,
            agent_id=row.agent_id,
            harness=harness,
            project=project,
            completed_at=completed_at,
            now=at,
        )


@dataclass(frozen=True, slots=True)
class SyncResult:
    """One session's transcript capture: records written to the JSONL (0: file untouched) and
    what happened to its row."""

    session_key: str
    records: int
    write: TranscriptWrite
    path: Path
    #: rows read from the store to render the session
    rows_read: int = 0
    #: what the file holds of the session after this capture (``FileState``; None: not
    #: known); pass it to the next ``sync_session`` of the session to append instead of
    #: rewriting
    state: FileState | None = None
    #: whether the records were appended (True) or the session's lines rewritten (False)
    appended: bool = False
    #: the running hash of the row's text as written (``TextDigest``: a live writer extends
    #: it turn by turn, ``LiveTurns``)
    row_digest: TextDigest | None = None


@dataclass(frozen=True)
class FileState:
    """What a harness's canonical JSONL holds of one session, as its last capture left it:
    the first ``records`` records ``sync_session`` renders, whose contents joined with
    ``"\\n\\n"`` hash to ``digest`` (``content_hash``), followed by nothing but ``live``
    records. A writer that keeps it (the daemon, per live session) hands it to the next
    ``sync_session``, which then appends the session's new records, superseding its live ones
    (``transcript_log`` module docstring), instead of rewriting the file (issue 45 item 10)."""

    records: int
    digest: str
    #: the seq of the last row those records render (None: not known) and the length of
    #: their joined text in characters: with both, the next capture renders only the rows
    #: after ``last_seq`` (the caller vouches that no row up to it changed since)
    last_seq: int | None = None
    chars: int | None = None


def _session_rows(
    store: SqlStore, key: str, after_seq: int = -1, known: Sequence[Entry] | None = None
) -> Iterator[Entry]:
    return iter_entries(
        store, key, after_seq=after_seq, visible_only=True, page_rows=PAGE_ROWS, known=known
    )


def source_format(harness: str) -> str:
    """The ``source_format`` of an imported row's record: the harness's session-file format
    (``claude-code-jsonl``, ``codex-rollout-jsonl``, ``pi-session-jsonl``); live turns from a
    hook say ``live``."""
    return {
        "claude-code": "claude-code-jsonl",
        "codex": "codex-rollout-jsonl",
        "pi": "pi-session-jsonl",
    }.get(harness, f"{harness}-jsonl")


def _records(
    store: SqlStore,
    session: Any,
    captured: str,
    read: list[int] | None = None,
    *,
    after_seq: int = -1,
    known: Sequence[Entry] | None = None,
) -> list[TranscriptRecord]:
    """The session's records: its visible rows after ``after_seq`` rendered (read in pages
    of ``PAGE_ROWS``, or taken from ``known``: ``store.iter_entries``; ``read[0]`` counts
    the rows read from the store)."""
    records: list[TranscriptRecord] = []
    first_known = known[0].seq if known else None
    for entry in _session_rows(store, session.key, after_seq, known):
        if read is not None and (first_known is None or entry.seq < first_known):
            read[0] += 1
        text = render_entry(entry)
        if text:
            src = entry.source
            records.append(
                TranscriptRecord(
                    session.agent_id,
                    session.harness,
                    session.key,
                    session.project,
                    entry.seq,
                    entry.role.value,
                    text,
                    source_format(session.harness),
                    src.path if src else session.source_path,
                    captured,
                    src.line if src else None,
                )
            )
    return records


def sync_session(
    store: SqlStore,
    session_key: str,
    *,
    home: str | os.PathLike[str] | None = None,
    completed_at: datetime | None = None,
    fsync: bool = True,
    known: FileState | None = None,
) -> SyncResult:
    """Capture an imported session's transcript: render its visible rows (one rendered text per
    row kept, never the log's entries), then, when the text differs from the stored row (or the
    JSONL file is missing), write the session's records to its harness's JSONL, and write the
    row. ``known``: what the caller knows the file holds of the session (``FileState``, from
    its last ``SyncResult.state``); when those records are still the first ones rendered and
    there are new ones, only the new ones are appended (they supersede the session's live
    records); otherwise the session's records are replaced (``TranscriptLog.replace_session``,
    a rewrite of the file). When that write cut off a torn line of another session, that
    session's records are rewritten from the database too (``restore_torn``). Raises
    ``SessionNotFound`` for an unknown key, ``InputError`` for a key, agent or harness the row
    refuses (nothing written), ``ContinuityError`` when the file cannot be written."""
    session = store.get_session(session_key)
    if session is None:
        raise SessionNotFound(session_key)
    check_identity(session.key, session.agent_id, session.harness)  # before any write
    if known is not None and known.last_seq is not None and known.chars is not None:
        done = _sync_new_rows(
            store, session, known, home=home, completed_at=completed_at, fsync=fsync
        )
        if done is not None:
            return done
    read = [0]
    records = _records(store, session, _iso(_now()), read)
    content = "\n\n".join(r.content for r in records)
    digest = content_hash(content)
    path = transcript_path(home, session.harness)
    written, appended = 0, False
    valid = _holds_prefix(known, records)
    state = known if valid else None
    if store.transcript_hash(session.key, session.agent_id) != digest or not path.exists():
        log_file = TranscriptLog(path, fsync=fsync)
        try:
            if state is not None and state.records < len(records) and path.exists():
                written = log_file.append(records[state.records :])
                appended = True
            else:
                written = log_file.replace_session(session.agent_id, session.key, records)
            restore_torn(store, log_file, home=home, done=(session.agent_id, session.key))
        except OSError as exc:
            raise ContinuityError(
                f"cannot write the transcript file {path}: {exc.strerror or exc}"
            ) from exc
        state = FileState(len(records), digest, records[-1].seq if records else -1, len(content))
    # else nothing is written: the file's records of the session may be live ones whose text
    # equals the rows', so only a state known before stays known (None: the next write
    # rewrites the session's records)
    write = put_transcript(
        store,
        session.key,
        content,
        agent_id=session.agent_id,
        harness=session.harness,
        project=session.project,
        completed_at=completed_at,
    )
    return SyncResult(
        session.key, written, write, path, read[0], state, appended, TextDigest(storable(content))
    )


def _sync_new_rows(
    store: SqlStore,
    session: Any,
    known: FileState,
    *,
    home: str | os.PathLike[str] | None,
    completed_at: datetime | None,
    fsync: bool,
) -> SyncResult | None:
    """``sync_session`` of a session whose capture ``known`` covers every row up to
    ``known.last_seq``: only the rows after it are rendered (O(turn), issue 45 item 10: the
    whole session was rendered at every settled turn) and appended, and the row becomes its
    first ``known.chars`` characters (the text that capture wrote; live turns written after
    it are dropped, as the new rows hold them) followed by theirs. None when the stored row
    does not start with that text (another writer): the caller does the full capture."""
    if known.chars is None or known.last_seq is None:  # not a capture's state: full capture
        return None
    row = store.get_transcripts([session.key], session.agent_id).get(session.key)
    if row is None or len(row.content) < known.chars:
        return None
    base = row.content[: known.chars]
    if content_hash(base) != known.digest:
        return None
    read = [0]
    new = _records(store, session, _iso(_now()), read, after_seq=known.last_seq)
    joined = "\n\n".join(r.content for r in new)
    content = base + ("\n\n" + joined if base and joined else joined)
    path = transcript_path(home, session.harness)
    written = 0
    if new:
        log_file = TranscriptLog(path, fsync=fsync)
        try:
            written = log_file.append(new)  # supersede the session's live records
            restore_torn(store, log_file, home=home, done=(session.agent_id, session.key))
        except OSError as exc:
            raise ContinuityError(
                f"cannot write the transcript file {path}: {exc.strerror or exc}"
            ) from exc
    elif not path.exists():
        return None
    else:  # no new row: the row keeps its text (live turns after the capture stay current)
        write = put_transcript(
            store,
            session.key,
            row.content,
            agent_id=session.agent_id,
            harness=session.harness,
            project=session.project,
            completed_at=completed_at,
        )
        return SyncResult(
            session.key, 0, write, path, read[0], known, True, TextDigest(row.content)
        )
    write = put_transcript(
        store,
        session.key,
        content,
        agent_id=session.agent_id,
        harness=session.harness,
        project=session.project,
        completed_at=completed_at,
    )
    digest = TextDigest(storable(content))
    state = FileState(known.records + len(new), content_hash(content), new[-1].seq, len(content))
    return SyncResult(session.key, written, write, path, read[0], state, True, digest)


def _holds_prefix(known: FileState | None, records: Sequence[TranscriptRecord]) -> bool:
    """Whether the ``known`` records are still the first of ``records`` (same texts)."""
    if known is None or not 0 <= known.records <= len(records):
        return False
    return content_hash("\n\n".join(r.content for r in records[: known.records])) == known.digest


def restore_torn(
    store: SqlStore,
    log_file: TranscriptLog,
    *,
    home: str | os.PathLike[str] | None = None,
    done: tuple[str, str] | None = None,
    skip: Iterable[tuple[str, str]] = (),
) -> list[tuple[str, str]]:
    """Rewrite from the database the sessions whose records ``log_file`` lost to a torn-tail
    repair (``log_file.torn_sessions``, then cleared): the session the fragment names, or, when
    it names none, every session whose records in the file no longer match its row's hash.
    Only imported sessions of the file's harness can be rewritten; ``done`` (a session just
    snapshotted, so already complete) is skipped, and so is each of ``skip``. Returns the ``(agent_id, session_key)``
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
    suspects.discard(done)
    suspects.difference_update(skip)
    restored = []
    for agent, key in sorted(suspects):
        session = store.get_session(key)
        if (
            session is None
            or session.agent_id != agent
            or transcript_path(home, session.harness) != log_file.path
        ):
            continue
        log_file.replace_session(agent, key, _records(store, session, _iso(_now())))
        log.warning(
            "%s: rewrote the records of session %r from the database after a torn line",
            log_file.path,
            key,
        )
        restored.append((agent, key))
    return restored


@dataclass
class ImportSync:
    """What ``sync_import_report`` did: how many sessions were ``captured``, and each session
    that ``failed`` as ``(session_key, reason)`` (one line each). ``records_appended``: records
    added to the JSONL files by appending; ``sessions_rewritten``: sessions whose records had
    to be replaced (a snapshot rewrite of the file, ``TranscriptLog.replace_session``);
    ``rows_read``: rows read from the store to render them (issue 17: an unchanged re-import
    reads none, a grown session only its new rows); ``rows_handed``: rows rendered from the
    ones the import kept (``ImportReport.new_rows``), not read at all."""

    captured: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    records_appended: int = 0
    sessions_rewritten: int = 0
    rows_read: int = 0
    rows_handed: int = 0


_UNREAD: Any = object()

#: rows before an import's first new row read to check that the stored row holds them
LOOK_BACK_ROWS = 50
#: the rows read first of those (``_ImportCapture._holds_rows_before``)
FIRST_LOOK_BACK_ROWS = 5

#: Rendered text gathered before one append per harness file and one transaction of rows
#: (issue 17: one fsync for many small sessions, memory bounded by this, in characters).
GROUP_CHARS = 16 * 1024 * 1024


@dataclass
class _Pending:
    session: Any
    records: list[TranscriptRecord]
    #: the stored row the records extend (None: the session has none yet)
    row: TranscriptRow | None
    #: the text the records add to ``row``'s (with its leading separator when extending)
    tail: str
    completed_at: datetime | None
    #: the source files whose due rows this capture derives (``Store.settle_sources``)
    settles: list[str]


@dataclass
class _Snapshot:
    """A session an import must snapshot (``_ImportCapture.snapshot``)."""

    session: Any
    completed_at: datetime | None
    settles: list[str]


class _ImportCapture:
    """The transcript phase of one import (``sync_import_report``): sessions whose records
    only need appending are gathered, then written as one append (one fsync) per harness file
    followed by one transaction of rows; any other session is snapshotted at once."""

    def __init__(
        self, store: SqlStore, home: str | os.PathLike[str] | None, out: ImportSync
    ) -> None:
        self.store, self.home, self.out = store, home, out
        self.pending: list[_Pending] = []
        self.chars = 0
        #: sessions whose records must be replaced (``snapshot``), in the order met
        self.snapshots: list[_Snapshot] = []

    def records(
        self, session: Any, after_seq: int, known: Sequence[Entry] | None = None
    ) -> list[TranscriptRecord]:
        read = [0]
        out = _records(self.store, session, _iso(_now()), read, after_seq=after_seq, known=known)
        self.out.rows_read += read[0]
        if known:
            self.out.rows_handed += sum(1 for e in known if e.seq > after_seq and e.visible)
        return out

    def session(
        self,
        session: Any,
        first_new_seq: int | None,
        old_rows_changed: bool,
        completed_at: datetime | None,
        known: Sequence[Entry] | None = None,
        row: Any = _UNREAD,
        settles: Sequence[str] = (),
    ) -> None:
        """Capture one session that the import changed: append its new records when its row
        and file hold every earlier one, else snapshot it (``sync_session``). ``known``: the
        rows the import added (``ImportReport.new_rows``), used instead of reading them when
        they reach the session's newest row. ``row``: its transcript row, when the caller
        read it (None: it has none). ``settles``: the source paths whose due rows
        (``SourceState.pending_from``) are derived once this session is captured: cleared in
        the transaction of its transcript row."""
        if known and known[-1].seq != session.entry_count - 1:
            known = None  # another writer added rows after them: read everything
        check_identity(session.key, session.agent_id, session.harness)
        if row is _UNREAD:
            row = self.store.get_transcripts([session.key], session.agent_id).get(session.key)
        path = transcript_path(self.home, session.harness)
        if row is None:  # never captured: every record is new, the file holds none of them
            records, old = self.records(session, -1, known), ""
        elif (
            first_new_seq is not None
            and not old_rows_changed
            and path.exists()
            and self._holds_rows_before(session.key, first_new_seq, row.content)
        ):
            records, old = self.records(session, first_new_seq - 1, known), row.content
        else:  # snapshotted with the others at the end: one rewrite of the file for all
            self.snapshots.append(_Snapshot(session, completed_at, list(settles)))
            return
        new = "\n\n".join(r.content for r in records)
        tail = f"\n\n{new}" if old and new else new
        self.pending.append(_Pending(session, records, row, tail, completed_at, list(settles)))
        self.chars += len(new)
        if self.chars >= GROUP_CHARS:
            self.flush()

    def _holds_rows_before(self, key: str, first_new_seq: int, content: str) -> bool:
        """Whether ``content`` (the stored row) ends with the last row before
        ``first_new_seq`` that renders, looked for among the ``LOOK_BACK_ROWS`` rows before
        it: a capture that never ran for some earlier rows (a crash between the import and
        this phase) shows, and the session is snapshotted instead of extended. The last
        ``FIRST_LOOK_BACK_ROWS`` rows are read first: one of them renders in almost every
        session, and then it is the last of the wider look-back too (issue 43: the look-back
        was 2 of the 6 ms each session an import grew cost the transcript phase)."""
        texts: list[str] = []
        for back in dict.fromkeys((min(FIRST_LOOK_BACK_ROWS, LOOK_BACK_ROWS), LOOK_BACK_ROWS)):
            rows = self.store.entries(
                key,
                after_seq=max(-1, first_new_seq - 1 - back),
                limit=back,
                visible_only=True,
            )
            self.out.rows_read += len(rows)
            texts = [t for t in (render_entry(e) for e in rows if e.seq < first_new_seq) if t]
            if texts or first_new_seq <= back:  # found, or no row before the ones read
                break
        if not texts:
            return not content and first_new_seq <= LOOK_BACK_ROWS
        return content == texts[-1] or content.endswith("\n\n" + texts[-1])

    def flush(self) -> None:
        """Write the gathered sessions (``_write``); when that fails, each of them is counted
        in ``failed`` with the reason (none of their rows was written)."""
        pending, self.pending, self.chars = self.pending, [], 0
        try:
            self._write(pending)
        except (ContinuityError, ValueError) as exc:
            for p in pending:
                _failed(self.out, p.session.key, exc)

    def snapshot(self) -> None:
        """Replace the records of every session ``session`` could not extend (a row before its
        first new one changed, or the file lacks them): each rendered from its visible rows,
        as ``sync_session`` does, but written in one ``TranscriptLog.replace_sessions`` per
        harness file and group of ``GROUP_CHARS`` characters, not one rewrite of the whole
        file per session (an import that snapshotted N sessions copied the file N times). A
        session whose records and row are already current is not written. A session that
        fails is counted in ``failed`` with the reason; the others go on."""
        queued, self.snapshots = self.snapshots, []
        group: list[tuple[_Snapshot, list[TranscriptRecord], str]] = []
        chars = 0
        for snap in queued:
            try:
                read = [0]
                records = _records(self.store, snap.session, _iso(_now()), read)
                self.out.rows_read += read[0]
            except Exception as exc:  # noqa: BLE001 - issue 45 item 1: one session's failure
                _failed(self.out, snap.session.key, exc)
                continue
            content = "\n\n".join(r.content for r in records)
            group.append((snap, records, content))
            chars += len(content)
            if chars >= GROUP_CHARS:
                self._replace(group)
                group, chars = [], 0
        if group:
            self._replace(group)

    def _replace(self, group: list[tuple[_Snapshot, list[TranscriptRecord], str]]) -> None:
        """Write one group of snapshots (``snapshot``): the files first, then each row."""
        by_path: dict[Path, dict[tuple[str, str], list[TranscriptRecord]]] = {}
        for snap, records, content in group:
            s = snap.session
            path = transcript_path(self.home, s.harness)
            if self.store.transcript_hash(s.key, s.agent_id) != content_hash(content) or (
                not path.exists()
            ):
                by_path.setdefault(path, {})[(s.agent_id, s.key)] = records
        broken: dict[Path, ContinuityError] = {}
        for path, snaps in by_path.items():
            log_file = TranscriptLog(path)
            try:
                log_file.replace_sessions(snaps)
                restore_torn(self.store, log_file, home=self.home, skip=snaps.keys())
            except OSError as exc:
                broken[path] = ContinuityError(
                    f"cannot write the transcript file {path}: {exc.strerror or exc}"
                )
        for snap, records, content in group:
            s = snap.session
            path = transcript_path(self.home, s.harness)
            try:
                if path in broken:
                    raise broken[path]
                put_transcript(
                    self.store,
                    s.key,
                    content,
                    agent_id=s.agent_id,
                    harness=s.harness,
                    project=s.project,
                    completed_at=snap.completed_at,
                )
                if snap.settles:
                    self.store.settle_sources(snap.settles)
            except Exception as exc:  # noqa: BLE001 - issue 45 item 1: one session's failure
                _failed(self.out, s.key, exc)
                continue
            if records and (s.agent_id, s.key) in by_path.get(path, {}):
                self.out.sessions_rewritten += 1
            self.out.captured += 1

    def _write(self, pending: list[_Pending]) -> None:
        """Append the records (whole lines, one fsync per harness file), then write the
        rows in one transaction. Raises ``ContinuityError`` when a file cannot be written."""
        by_path: dict[Path, list[TranscriptRecord]] = {}
        for p in pending:
            if p.records:
                by_path.setdefault(transcript_path(self.home, p.session.harness), []).extend(
                    p.records
                )
        written: list[TranscriptLog] = []
        for path, records in by_path.items():
            log_file = TranscriptLog(path)
            try:
                # journaled: a kill before the commit below never makes a record twice
                self.out.records_appended += log_file.append_journaled(records)
                written.append(log_file)
                restore_torn(self.store, log_file, home=self.home)
            except OSError as exc:
                raise ContinuityError(
                    f"cannot write the transcript file {path}: {exc.strerror or exc}"
                ) from exc
        with self.store.batch():
            for p in pending:
                s = p.session
                if p.row is None:
                    put_transcript(
                        self.store,
                        s.key,
                        p.tail,
                        agent_id=s.agent_id,
                        harness=s.harness,
                        project=s.project,
                        completed_at=p.completed_at,
                    )
                else:
                    extend_transcript(
                        self.store,
                        p.row,
                        p.tail,
                        harness=s.harness,
                        project=s.project,
                        completed_at=p.completed_at,
                    )
            self.store.settle_sources([path for p in pending for path in p.settles])
        for log_file in written:
            log_file.commit_journal()
        self.out.captured += len(pending)


def sync_import_report(
    store: SqlStore,
    report: ImportReport,
    home: str | os.PathLike[str] | None = None,
    *,
    progress: Callable[[int], None] | None = None,
) -> ImportSync:
    """Fill transcripts after ``continuity import`` (issue 17: the cost grows with new rows
    only). A session whose file added or changed rows is captured: when it has no row yet,
    or only gained rows after those its row and file already hold, its new records are
    appended to its harness's JSONL (gathered, one fsync per ``GROUP_CHARS``) and its row
    extended; when the import changed earlier rows (a pi leaf path moved) it is snapshotted
    (``sync_session``: the file rewritten). An unchanged session is not read at all, unless
    it has no row yet (one query finds those). A session whose last activity is older than the
    idle limit is completed at once. A session that fails (a ``ContinuityError`` or
    ``ValueError``: a key the row refuses, an unwritable file, a database error; or any other
    exception, issue 45 item 1) is counted in ``failed`` with its reason and the others go
    on; each is also logged as a warning.
    ``progress(1)`` is called after each session. The rows the import kept
    (``ImportReport.new_rows``) are rendered as they are, not read back.

    The last phase of an import (after ``checkpoints.replay_import``): a session's files'
    due rows (``SourceState.pending_from``, also those an interrupted import left, which it
    derives too) are marked derived in the transaction of its transcript row
    (``Store.settle_sources``); a session that failed stays due. Raises ``ConfigError`` for
    bad ``[transcripts]`` settings."""
    limit = timedelta(minutes=settings(home).idle_limit_minutes)
    with import_capture_lock(home):  # one import's capture at a time per workspace
        return _sync_import_report(store, report, home, limit, progress)


def _sync_import_report(
    store: SqlStore,
    report: ImportReport,
    home: str | os.PathLike[str] | None,
    limit: timedelta,
    progress: Callable[[int], None] | None,
) -> ImportSync:
    now = _now()
    changed: dict[str, list[Any]] = {}
    unchanged: dict[str, None] = {}
    taken = [
        (key, f)
        for f in report.files
        if (key := f.session_key) and f.status in ("imported", "unchanged")
    ]
    # issue 45 item 9: what is due now, under the capture lock, not when this import read
    # its files: another import of the same files may have derived and settled them meanwhile
    due = store.get_sources([f.path for _, f in taken if f.changed and not f.old_rows_changed])
    starts: dict[str, int | None] = {}
    for key, f in taken:
        state = due.get(f.path)
        start = f.derive_from if state is None else state.pending_from
        if f.old_rows_changed or (f.changed and start is not None):
            changed.setdefault(key, []).append(f)  # rows due, or moved (pi)
            starts[f.path] = start
        else:
            unchanged[key] = None
    missing = store.sessions_without_transcript([k for k in unchanged if k not in changed])
    wanted = [(k, changed.get(k, [])) for k in dict.fromkeys([*changed, *missing])]
    out = ImportSync()
    capture = _ImportCapture(store, home, out)
    handed = report.new_rows()
    sessions = store.get_sessions(k for k, _ in wanted)  # issue 17: one query, not one each
    by_agent: dict[str, list[str]] = {}
    for s in sessions.values():
        by_agent.setdefault(s.agent_id, []).append(s.key)
    rows = {
        k: r
        for agent, keys in by_agent.items()
        for k, r in store.get_transcripts(keys, agent).items()
    }
    for key, files in wanted:
        try:
            session = sessions.get(key)
            if session is None:
                continue
            idle = session.ended_at is not None and session.ended_at < now - limit
            firsts = [s for f in files if (s := starts[f.path]) is not None]
            capture.session(
                session,
                min(firsts) if firsts else None,
                any(f.old_rows_changed for f in files) or not files,
                now if idle else None,
                handed.get(key),
                rows.get(key),
                [f.path for f in files],
            )
        except Exception as exc:  # noqa: BLE001 - issue 45 item 1: one session's failure,
            _failed(out, key, exc)  # whatever it is, never stops the others' transcripts
        if progress:
            progress(1)
    capture.flush()
    capture.snapshot()
    return out


def _failed(out: ImportSync, key: str, exc: Exception) -> None:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    if not isinstance(exc, (ContinuityError, ValueError)):  # a fault, not a refusal: say which
        reason = f"{type(exc).__name__}: {reason}"
    out.failed.append((key, reason))
    log.warning("transcript of session %r not captured: %s", key, reason)


def sync_import(
    store: SqlStore, report: ImportReport, home: str | os.PathLike[str] | None = None
) -> int:
    """``sync_import_report(...).captured``: how many sessions were captured (failures are
    logged; call ``sync_import_report`` to get them)."""
    return sync_import_report(store, report, home).captured


# ---------------------------------------------------------------------------- completion paths


def end_session(
    store: SqlStore,
    session_key: str,
    *,
    agent_id: str = "default",
    home: str | os.PathLike[str] | None = None,
    at: datetime | None = None,
) -> bool:
    """Session end: capture the final transcript of an imported session, then mark its row
    completed at ``at`` (default now). True when this call completed the row."""
    at = at or _now()
    session = store.get_session(session_key)
    if session is not None:
        return sync_session(store, session_key, home=home, completed_at=at).write.completed
    return store.complete_transcript(session_key, agent_id, at)


def recover_after_clear(
    store: SqlStore,
    new_session_key: str,
    *,
    agent_id: str = "default",
    previous_key: str | None = None,
    harness: str | None = None,
    project: str | None = None,
    at: datetime | None = None,
) -> str | None:
    """A session started after a ``clear`` (Claude Code sends no session end then): in one
    transaction, complete ``previous_key``'s open row, else the most recently updated open row of
    the same agent (same harness and project when given), never ``new_session_key`` itself.
    Returns the key completed, or None."""
    at = at or _now()
    with store.batch():
        if (
            previous_key
            and previous_key != new_session_key
            and store.complete_transcript(previous_key, agent_id, at)
        ):
            return previous_key
        found = store.open_transcripts(
            agent_id=agent_id,
            harness=harness,
            project=project,
            exclude=[new_session_key],
            newest_first=True,
            limit=1,
        )
        if found and store.complete_transcript(found[0][0], agent_id, at):
            return found[0][0]
    return None


def sweep_idle(
    store: SqlStore,
    *,
    home: str | os.PathLike[str] | None = None,
    now: datetime | None = None,
    idle_limit: timedelta | None = None,
    limit: int = 100,
) -> list[tuple[str, str]]:
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


def _read_only(store: SqlStore) -> bool:
    """True when ``store`` was opened read-only (a SQLite ``mode=ro`` URL)."""
    engine = getattr(store, "engine", None)
    return engine is not None and engine.url.query.get("mode") == "ro"


def load_transcript(
    store: SqlStore,
    name: str,
    *,
    agent_id: str | None = None,
    home: str | os.PathLike[str] | None = None,
) -> TranscriptRow:
    """The transcript row of session ``name`` (a key, or a unique prefix of an imported
    session's key). An imported session without a row yet is captured first; in a store opened
    read-only (a read-only workspace, ``open_store(read_only=True)``) it is rendered in memory
    instead, nothing written (issue 45: ``transcript`` only reads). Raises
    ``SessionNotFound`` / ``AmbiguousSession``."""
    found = store.get_transcripts([name], agent_id or "default")
    if name in found:
        return found[name]
    # the one naming rule of every command (a fresh-user review: a prefix of a session and of
    # its subagents' sessions named the session in `show`, and was ambiguous here)
    key = resolve_session(store, name)
    session = store.get_session(key)
    if session is None:  # pragma: no cover - resolve_session returns a stored key
        raise SessionNotFound(name)
    agent = agent_id or session.agent_id
    row = store.get_transcripts([session.key], agent).get(session.key)
    if row is None and _read_only(store):
        content = "\n\n".join(r.content for r in _records(store, session, _iso(_now())))
        return TranscriptRow(
            session.key, agent, session.harness, session.project, content, content_hash(content)
        )
    if row is None:
        sync_session(store, session.key, home=home)
        row = store.get_transcripts([session.key], agent).get(session.key)
    if row is None:  # pragma: no cover - sync_session always writes the row
        raise ContinuityError(f"no transcript for session {session.key!r}")
    return row
