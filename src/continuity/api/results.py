"""The plain values ``Workspace`` returns (issue 46): frozen dataclasses whose fields are the
keys of the matching ``--json`` output and whose ``to_dict()`` is that output exactly
(``tests/api/test_workspace.py`` compares them with the CLI's).

Lists are tuples (so a value is immutable as far as its own fields go); nested JSON objects
that have no fixed shape (a content block, a file report's counters, tool-call arguments) stay
``dict``s. Times are ISO 8601 strings with ``Z`` for UTC, as ``--json`` prints them. Byte
figures (``budget_bytes``, ``used_bytes``, ``view_bytes``) are UTF-8 bytes of compact JSON
(seed 002's unit); ``brief`` counts characters.

Values returned as they already exist elsewhere: ``continuity.browse.search.SearchHit``
(``search``), ``continuity.brief.build.Brief`` (``brief``),
``continuity.resume.session.Written`` (``resume``), and the pydantic models
``continuity.transcripts.memories.RememberResponse`` and ``RecallResponse`` (``remember``,
``recall``); each has the same ``to_dict()``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple, Self, cast


def _plain(value: Any) -> Any:
    """``value`` as JSON data: a record by its ``to_dict``, tuples as lists, dicts walked."""
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (LineError, LineWarning)):
        return value._asdict()
    if isinstance(value, (tuple, list)):
        items: Sequence[Any] = cast("Sequence[Any]", value)
        return [_plain(v) for v in items]
    if isinstance(value, dict):
        fields: dict[str, Any] = cast("dict[str, Any]", value)
        return {k: _plain(v) for k, v in fields.items()}
    return value


def _frozen(value: Any) -> Any:
    """A JSON list as a tuple (its lists too, as a span ``[start, end]``); anything else as
    it is."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in cast("list[Any]", value))
    return value


def _nested(kind: Any, data: Mapping[str, Any]) -> Any:
    """``data`` as ``kind``: a ``Record`` by ``from_dict``, a named tuple by its fields."""
    return kind.from_dict(data) if issubclass(kind, Record) else kind(**data)


class Record:
    """What every result shares: ``to_dict()`` (the ``--json`` shape) and ``from_dict()``.

    ``NESTED`` maps a field to the record type of its object (or of each item of its list);
    a field whose metadata has ``omit_none`` is left out of ``to_dict`` when None (as
    ``request.media``, absent when the request holds no media); one whose metadata has
    ``json: False`` is not part of the JSON (``from_dict`` gives it its default)."""

    NESTED: ClassVar[dict[str, Any]] = {}

    def to_dict(self) -> dict[str, Any]:
        """The object the matching ``--json`` prints (plain dicts, lists, strings, numbers,
        booleans and None)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.metadata.get("json") is False or (value is None and f.metadata.get("omit_none")):
                continue
            out[f.metadata.get("key", f.name)] = _plain(value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """The record of ``data`` (a ``--json`` object of this shape). Raises ``KeyError``
        for a missing key and ``TypeError`` for an unknown one."""
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            key = f.metadata.get("key", f.name)
            if f.metadata.get("json") is False:
                continue  # not part of the JSON: its default
            if key not in data and f.metadata.get("omit_none"):
                kwargs[f.name] = None
                continue
            value = data[key]
            nested = cls.NESTED.get(f.name)
            if nested is not None and isinstance(value, list):
                value = tuple(_nested(nested, v) for v in cast("list[Any]", value))
            elif nested is not None and isinstance(value, Mapping):
                value = _nested(nested, cast("Mapping[str, Any]", value))
            kwargs[f.name] = _frozen(value)
        extra = set(data) - {f.metadata.get("key", f.name) for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        if extra:
            raise TypeError(f"{cls.__name__}: unknown keys {sorted(extra)}")
        return cls(**kwargs)


# ---------------------------------------------------------------------------- import


@dataclass(frozen=True)
class ImportTotals(Record):
    """Sums over the files of one import: files read (not counting absent paths), sessions
    touched, lines read, rows imported, duplicate lines, unknown lines kept raw (``opaque``),
    known non-conversation lines kept raw, bad lines (``errors``), files skipped or failed,
    and paths given that do not exist (``absent_paths``)."""

    files: int
    sessions: int
    lines_read: int
    imported: int
    duplicate: int
    opaque: int
    non_conversation: int
    errors: int
    skipped_files: int
    absent_paths: int


@dataclass(frozen=True)
class EmbedCounts(Record):
    """What the embedding after an import did: rows and memories given a vector
    (``embedded``), ``skipped`` (nothing to embed), ``left`` (still waiting: interrupted)."""

    embedded: int
    skipped: int
    left: int


@dataclass(frozen=True)
class SessionFailure(Record):
    """A session whose checkpoints or transcript could not be derived, and why."""

    session: str
    reason: str


class LineError(NamedTuple):
    """A bad line of an imported file: its number (1-based) and why."""

    line: int
    reason: str


class LineWarning(NamedTuple):
    """A line the reader imported with a warning: its number (1-based) and the warning."""

    line: int
    message: str


@dataclass(frozen=True)
class FileImport(Record):
    """What the import did with one file (or a path given that does not exist:
    ``absent``): its ``harness`` and format ``version``, the ``session`` it holds,
    ``status`` imported|unchanged|skipped|failed and the ``reason``, lines read, rows
    ``imported``, blank, duplicate, unknown kept raw (``opaque``), known non-conversation and
    skipped lines (``skip_reasons``, ``types``: counts by kind), the bad lines (``errors``)
    and ``warnings``, the times of its first and last rows, how far it was read (``offset``,
    bytes; ``resumed_from``; ``pending_tail_bytes`` of an unfinished last line), the session
    a ``continuity resume`` copy continues (``copy_of``), ``waiting`` (no complete line
    yet), and ``forgotten`` (skipped: its session was forgotten, ``continuity forget``).
    ``formats.importer.FileReport.to_dict`` is its JSON."""

    NESTED: ClassVar[dict[str, Any]] = {"errors": LineError, "warnings": LineWarning}

    path: str
    harness: str | None
    version: str | None
    session: str | None
    status: str
    reason: str | None
    lines_read: int
    imported: int
    blank: int
    duplicate: int
    opaque: int
    non_conversation: int
    skipped: int
    skip_reasons: dict[str, int]
    errors: tuple[LineError, ...]
    warnings: tuple[LineWarning, ...]
    types: dict[str, int]
    first_timestamp: str | None
    last_timestamp: str | None
    offset: int
    resumed_from: int
    pending_tail_bytes: int
    copy_of: str | None
    waiting: bool
    absent: bool
    forgotten: bool = False


@dataclass(frozen=True)
class ImportResult(Record):
    """The figures ``continuity import --json`` prints: the ``totals``, the ``sessions``
    touched, one ``FileImport`` per file or path, the checkpoints replayed and transcripts
    written, the source files found gone (or back) since the last import, and the sessions
    whose transcript or checkpoints failed. ``embedded`` is None when
    nothing was embedded (``embed=False``, no semantic extra, or the model did not load).
    ``exit_code``: what the command exits with; not part of ``to_dict``."""

    NESTED: ClassVar[dict[str, Any]] = {
        "totals": ImportTotals,
        "embedded": EmbedCounts,
        "files": FileImport,
        "transcripts_failed": SessionFailure,
        "checkpoints_failed": SessionFailure,
    }

    totals: ImportTotals
    sessions: tuple[str, ...]
    files: tuple[FileImport, ...]
    checkpoints_replayed: int
    embedded: EmbedCounts | None
    transcripts_written: int
    sources_gone: int
    sources_back: int
    transcripts_failed: tuple[SessionFailure, ...]
    checkpoints_failed: tuple[SessionFailure, ...]

    #: The ``import`` command's exit code (``formats.importer.ImportReport.exit_code``, issue
    #: 22): 0 when no file failed, else the highest failure code (4 a store problem, 2 a file
    #: that cannot be read); 2 when every file was skipped (none a session file) unless one is
    #: only waiting for its first line. Not part of ``to_dict``.
    exit_code: int = field(default=0, metadata={"json": False})


# ---------------------------------------------------------------------------- sessions and rows


@dataclass(frozen=True)
class SessionRecord(Record):
    """One session as ``continuity sessions --json`` lists it: its key (``session``),
    harness, agent, project folder, title (redacted), the file it was imported from and
    whether that file is still there (``source``: present|gone|None), start and end times,
    its number of rows (``entries``), the session a subagent's belongs to (``parent``), a
    Codex fork's parent (``forked_from``), and for a copy ``continuity resume`` wrote, the
    session it continues (``copy_of``) and the one its chain of copies started from
    (``original``)."""

    session: str
    harness: str
    agent_id: str
    project: str | None
    title: str | None
    source_path: str | None
    source: str | None
    source_gone_at: str | None
    started_at: str | None
    ended_at: str | None
    entries: int
    parent: str | None
    forked_from: str | None
    copy_of: str | None
    original: str | None


@dataclass(frozen=True)
class SessionRows(Record):
    """A session's rows as ``continuity show --json`` prints them: ``entries`` in log order,
    each ``{seq, kind, role, visible, content, ...}`` (``core.codec.entry_view``), every
    string redacted unless ``redacted`` is False (``raw=True``)."""

    session: str
    source: str | None
    forked_from: str | None
    redacted: bool
    entries: tuple[dict[str, Any], ...]
    #: issue 41: a teammate's session read from the team store (``show --team``): its
    #: ``{author, machine, owner, project}``; absent for a session of this workspace
    team: dict[str, Any] | None = dataclasses.field(default=None, metadata={"omit_none": True})


# ---------------------------------------------------------------------------- continuation


@dataclass(frozen=True)
class ContinuationSummary(Record):
    """The newest compaction of the session: its row (``entry_id``), the last seq it covers,
    and ``text``, the summary quoted as earlier work (README, the ``continue --json``
    contract)."""

    entry_id: str
    covers_through_seq: int
    text: str


@dataclass(frozen=True)
class ContinuationRequest(Record):
    """The previous run's request, verbatim (redacted): its row ``seq``, who asked
    (``actor``), its ``text``, and ``media`` stubs ``{type, media_type, bytes, block}`` when
    the row holds images or files (None, and absent from ``to_dict``, otherwise)."""

    seq: int
    actor: str
    text: str
    media: tuple[dict[str, Any], ...] | None = field(default=None, metadata={"omit_none": True})


@dataclass(frozen=True)
class ContinuationMessage(Record):
    """One row of the tail: ``seq``, ``role`` (user|assistant|tool), ``copied`` (true when
    it is a copy, not a reused row) and its ``content`` blocks (``text``, ``thinking``,
    ``tool_call {id, name, arguments}``, ``tool_result {call_id, is_error, text}``,
    ``media``)."""

    seq: int
    role: str
    copied: bool
    content: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class ContinuationGap(Record):
    """One range of rows left out that the summary does not cover, ``from_seq..to_seq``
    inclusive (the request, shown on its own, may sit inside it)."""

    from_seq: int
    to_seq: int


@dataclass(frozen=True)
class ContinuationGapNotice(Record):
    """``gap``: one range spanning every omitted range, with the notice text."""

    from_seq: int
    to_seq: int
    text: str | None


@dataclass(frozen=True)
class Refusal(Record):
    """Why no continuation was given: ``reason`` one of ``protected_context_over_budget``,
    ``incomplete_request``, ``source_read_failure``, and a ``detail`` in our words."""

    reason: str
    detail: str


@dataclass(frozen=True)
class Continuation(Record):
    """The bounded continuation of seed 002, as ``continuity continue --json`` prints it
    (README: the ``continue --json`` contract): the newest ``summary``, the previous
    ``request`` verbatim, the tail ``messages`` within ``budget_bytes`` (UTF-8 bytes;
    ``used_bytes`` spent) with every tool call paired, ``gap``/``gaps`` left out, ``notes``,
    ``copied``, ``clipped``; or a ``refusal`` (then no summary, request or messages).
    Read it as: summary, the messages before the request, the request, the other messages
    (``before_request``)."""

    NESTED: ClassVar[dict[str, Any]] = {
        "summary": ContinuationSummary,
        "request": ContinuationRequest,
        "gap": ContinuationGapNotice,
        "gaps": ContinuationGap,
        "messages": ContinuationMessage,
        "refusal": Refusal,
    }

    session: str
    budget_bytes: int
    used_bytes: int
    summary: ContinuationSummary | None
    request: ContinuationRequest | None
    gap: ContinuationGapNotice | None
    gaps: tuple[ContinuationGap, ...]
    messages: tuple[ContinuationMessage, ...]
    notes: tuple[str, ...]
    copied: bool
    clipped: bool
    refusal: Refusal | None
    #: issue 41: a teammate's session read from the team store (``continue --team``): its
    #: ``{author, machine, owner, project}``; absent for a session of this workspace
    team: dict[str, Any] | None = dataclasses.field(default=None, metadata={"omit_none": True})

    def before_request(
        self,
    ) -> tuple[tuple[ContinuationMessage, ...], tuple[ContinuationMessage, ...]]:
        """``messages`` split around the request, in reading order: those with a seq below
        ``request.seq`` and the others (all of them after, without a request)."""
        if self.request is None:
            return (), self.messages
        seq = self.request.seq
        return (
            tuple(m for m in self.messages if m.seq < seq),
            tuple(m for m in self.messages if m.seq >= seq),
        )


# ---------------------------------------------------------------------------- checkpoints


@dataclass(frozen=True)
class Checkpoint(Record):
    """A session checkpoint (seed 000) as ``checkpoint --json`` prints it: ``id``, session,
    harness, project (and its normalized form), ``trigger`` (periodic, pre_compaction,
    session_end, explicit, agent), the prompts counted, the memory queries and recent
    remembers it carries, ``created_at`` and the redacted ``digest``."""

    id: int
    session: str
    harness: str
    project: str | None
    project_normalized: str | None
    trigger: str
    prompt_count: int
    memory_queries: tuple[str, ...]
    recent_remembers: tuple[str, ...]
    created_at: str | None
    digest: str


@dataclass(frozen=True)
class DamagedCheckpoint(Record):
    """A stored checkpoint that cannot be read back: its ``id``, ``session``, the ``column``
    that failed and why (``detail``); the row's content is never shown."""

    id: int
    session: str
    column: str
    detail: str


@dataclass(frozen=True)
class CheckpointList(Record):
    """``continuity checkpoints --json``: the session's checkpoints oldest first, their
    ``count``, and the rows skipped as ``damaged``."""

    NESTED: ClassVar[dict[str, Any]] = {"checkpoints": Checkpoint, "damaged": DamagedCheckpoint}

    session: str
    count: int
    checkpoints: tuple[Checkpoint, ...]
    damaged: tuple[DamagedCheckpoint, ...]


# ---------------------------------------------------------------------------- compaction


@dataclass(frozen=True)
class CompactionCheckpoint(Record):
    """The continuation checkpoint ``compact`` wrote: its row (``entry_id``, ``seq``), the
    last seq its summary covers, the first row kept verbatim, the continuation marker, the
    run, and the ``summary`` text."""

    entry_id: str
    seq: int
    covers_through_seq: int | None
    first_kept_entry_id: str | None
    continuation: Any
    run_id: str | None
    summary: str


@dataclass(frozen=True)
class RefusalReceipt(Record):
    """A refused checkpoint: receipt id, session, run, closed ``reason`` (cancelled,
    truncated, empty, over_bound, provider_failure, ...), ``detail`` and time."""

    receipt_id: int
    session: str
    run_id: str | None
    reason: str
    detail: str | None
    created_at: str | None


@dataclass(frozen=True)
class CompactResult(Record):
    """What ``continuity compact --json`` prints: ``status`` compacted|refused|not_needed,
    the run, the budget and the working view's size before and after (UTF-8 view bytes),
    the summary's ``chunks``, where the verbatim tail starts (``kept_from_seq``), and
    exactly one of ``checkpoint`` (written), ``receipt`` (refused) or neither (``reason``
    says why none was needed)."""

    NESTED: ClassVar[dict[str, Any]] = {
        "checkpoint": CompactionCheckpoint,
        "receipt": RefusalReceipt,
    }

    session: str
    status: str
    run_id: str | None
    budget_bytes: int
    view_bytes: int
    view_bytes_after: int | None
    chunks: int
    kept_from_seq: int | None
    checkpoint: CompactionCheckpoint | None
    receipt: RefusalReceipt | None
    reason: str | None


__all__ = [
    "Checkpoint",
    "CheckpointList",
    "CompactResult",
    "CompactionCheckpoint",
    "Continuation",
    "ContinuationGap",
    "ContinuationGapNotice",
    "ContinuationMessage",
    "ContinuationRequest",
    "ContinuationSummary",
    "DamagedCheckpoint",
    "EmbedCounts",
    "FileImport",
    "ImportResult",
    "ImportTotals",
    "LineError",
    "LineWarning",
    "Record",
    "Refusal",
    "RefusalReceipt",
    "SessionFailure",
    "SessionRecord",
    "SessionRows",
]
