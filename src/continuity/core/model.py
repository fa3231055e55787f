"""Plain data types of continuity: sessions, runs, entries, content blocks, compactions, notes.

No I/O happens here. Every other layer speaks in these types; the store persists them and the
formats produce them. Terms follow `shared/spec/continuation.md`:

- a **session** is one conversation of one harness (a Claude Code transcript, a Codex rollout, a pi
  session file), named by its ``key``;
- its **entries** are the append-only rows of the session log, each with a session-local ``seq``
  (0, 1, 2, ... in append order, which is file order for imported sessions, never timestamp order);
- a **run** is one request handled by one agent: it starts at a request row and ends
  ``finished``, ``failed`` or ``interrupted`` (``running`` while live);
- a **compaction** row carries a summary of the rows it covers (seq ``0..covers_through_seq``).

Byte figures are UTF-8 bytes throughout.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime

from continuity.core.exports import lazy_exports

TYPE_CHECKING = False  # not ``typing``'s: the read commands never load it (issue 43 goal 3)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    _Class = TypeVar("_Class", bound=type)


def pickled_by_fields(cls: _Class) -> _Class:
    """Pickle instances of the slotted dataclass ``cls`` as ``cls(*init_fields)``.

    A frozen dataclass with slots unpickles through ``dataclasses._dataclass_setstate``, which
    calls ``dataclasses.fields()`` for every object: a parallel import's writer (issue 43 goal
    1, ``formats.parallel``) spent about 1.5 s of a 320 MB import there, unpickling the rows'
    blocks and raw lines its workers parsed. Its own ``__init__`` with the values read by one
    ``operator.attrgetter`` does the same in half the time (``Entry``, not frozen, pickled
    its slots as a dict). Only for classes whose fields without ``init`` keep their
    defaults (the blocks' ``type``). Returns ``cls``."""
    from dataclasses import fields
    from operator import attrgetter

    names = tuple(f.name for f in fields(cls) if f.init)
    get = attrgetter(*names)
    one = len(names) == 1  # attrgetter of one name gives the value, not a tuple

    def reduce(self: object) -> tuple[Callable[..., object], tuple[object, ...]]:
        return cls, (get(self),) if one else get(self)

    cls.__reduce__ = reduce  # type: ignore[method-assign]
    return cls


class Role(str, enum.Enum):
    """Who authored a row, as the continuation view names it (`continue --json` ``role``)."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class EntryKind(str, enum.Enum):
    """What a row is.

    - ``message``: conversation (user text, assistant text/thinking/tool calls, tool results);
    - ``context``: text the harness injected in a user or developer row (meta lines, slash-command
      echoes, system reminders, Codex environment context): kept, never a request, not in views;
    - ``compaction``: a summary row (harness compaction or our continuation checkpoint);
    - ``event``: known non-conversation lines (progress, snapshots, token counts, settings);
    - ``opaque``: a line of a type this version does not know (formats.md §5.1 rule 5).
    """

    MESSAGE = "message"
    CONTEXT = "context"
    COMPACTION = "compaction"
    EVENT = "event"
    OPAQUE = "opaque"


class RunStatus(str, enum.Enum):
    """How a run ended (seed 002: finished, failed or interrupted; ``running`` while live)."""

    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


ENDED_RUN_STATUSES = (RunStatus.FINISHED, RunStatus.FAILED, RunStatus.INTERRUPTED)


# --------------------------------------------------------------------------- content blocks


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class TextBlock:
    """Plain text (UTF-8; never contains a lone surrogate, see ``continuity.core.text.clean``)."""

    text: str
    type: str = field(default="text", init=False)


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """Model reasoning shown as text. Opaque signatures stay in the raw line, never here."""

    text: str
    type: str = field(default="thinking", init=False)


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class MediaBlock:
    """An image or file. The payload lives in the media table keyed by ``sha256``; only its
    media type and decoded byte length travel in views (seed 002: base64 payloads do not consume
    the text-history budget)."""

    media_type: str
    bytes: int
    sha256: str = ""
    type: str = field(default="media", init=False)

    def stub(self) -> str:
        """The text marker used where a view needs text, e.g. ``[image/png 48213 B omitted]``."""
        return f"[{self.media_type} {self.bytes} B omitted]"


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class ToolCallBlock:
    """A tool call: ``id`` pairs it with its result; ``arguments`` is a JSON object, or the raw
    string when the harness recorded one that is not an object (Codex custom tools)."""

    id: str
    name: str
    arguments: Any
    type: str = field(default="tool_call", init=False)


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    """The result of tool call ``call_id``. ``text`` is the output as text; media inside the
    result are listed in ``media`` (their stubs are appended to the text in views)."""

    call_id: str
    is_error: bool
    text: str
    media: tuple[MediaBlock, ...] = ()
    synthetic: bool = False
    type: str = field(default="tool_result", init=False)


Block = TextBlock | ThinkingBlock | MediaBlock | ToolCallBlock | ToolResultBlock


# --------------------------------------------------------------------------- rows


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class SourceRef:
    """Where a row came from: file path, 1-based line number, byte offset and the SHA-256 of
    the raw line bytes (the raw line itself is kept, content-addressed, in the store)."""

    path: str
    line: int
    offset: int
    raw_sha256: str


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class CompactionInfo:
    """What a compaction row says.

    ``covers_through_seq``: the last seq the summary covers (-1: nothing before it). Rows with
    seq at or below it are never copied into a continuation again. A reader leaves it ``None``:
    the importer resolves it from ``first_kept_entry_id`` (the kept row's seq - 1) or, when that
    id is absent or not an earlier row, as this row's seq - 1 (everything before it). ``first_kept_entry_id`` is the
    harness's pointer (pi ``firstKeptEntryId``); a self-retaining checkpoint points at itself.
    ``continuation`` is the typed marker of seed 002's continuation checkpoint, with ``run_id``.
    """

    summary: str
    covers_through_seq: int | None = None
    first_kept_entry_id: str | None = None
    continuation: bool = False
    run_id: str | None = None
    trigger: str | None = None


@pickled_by_fields
@dataclass(slots=True)
class Entry:
    """One row of a session log.

    ``seq`` is assigned by the store on append (session-local, 0-based, append order).
    ``entry_id`` is our stable id, always ``<session_key>:<seq>`` (set by the store on append
    and derived from the key and seq at read, never stored: revision 0030); a harness's own
    id is ``native_id``. ``visible`` says whether the row belongs to the main
    conversation (sidechains, progress, unknown lines and rows off a pi leaf path are not).
    ``is_request`` marks a request a person typed: it opens a run. ``run_end`` is a reader's
    hint that this row ends the current run with that status (Codex ``task_complete``, pi
    ``stopReason: error``, an interrupt marker); the last hint in a run wins. ``payloads`` carries
    decoded media bytes by sha256 from a reader to the store (never kept on the row).
    ``prepared``: what the store writes for the row, made where it was parsed
    (``store.bulk.prepare``, issue 43 goal 1: a parallel import's workers); never compared.
    """

    kind: EntryKind
    role: Role
    blocks: tuple[Block, ...] = ()
    timestamp: datetime | None = None
    native_id: str | None = None
    parent_native_id: str | None = None
    type_name: str = ""
    visible: bool = True
    is_request: bool = False
    sidechain: bool = False
    compaction: CompactionInfo | None = None
    source: SourceRef | None = None
    cwd: str | None = None
    run_end: RunStatus | None = None
    payloads: dict[str, bytes] | None = None
    seq: int = -1
    entry_id: str = ""
    run_id: str | None = None
    prepared: tuple[object, ...] | None = field(default=None, compare=False, repr=False)

    def text(self) -> str:
        """The row's text blocks joined by blank lines (thinking and tool traffic excluded)."""
        return "\n\n".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    def tool_calls(self) -> list[ToolCallBlock]:
        """The tool calls this row makes, in order."""
        return [b for b in self.blocks if isinstance(b, ToolCallBlock)]

    def tool_results(self) -> list[ToolResultBlock]:
        """The tool results this row carries, in order."""
        return [b for b in self.blocks if isinstance(b, ToolResultBlock)]


@dataclass(frozen=True, slots=True)
class Session:
    """A session: ``key`` (the harness's session id), ``agent_id`` ("default" for the main
    agent), ``harness`` (``claude-code``, ``codex``, ``pi``), ``project`` (the latest cwd) and the
    source file it was read from. ``forked_from``: the stored key of the session a Codex
    rollout was forked from (``session_meta.forked_from_id``, issue 18), else None.
    ``source_gone_at``: when the archive found ``source_path`` deleted (the session stays
    whole: ``source: gone``, issue 18), None while the file exists or was never checked."""

    key: str
    harness: str
    agent_id: str = "default"
    project: str | None = None
    source_path: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    entry_count: int = 0
    title: str | None = None
    forked_from: str | None = None
    source_gone_at: datetime | None = None

    @property
    def parent_key(self) -> str | None:
        """The session this one is a subagent of, or None: a subagent's own session (a Claude
        Code ``<session>/subagents/agent-<id>.jsonl`` file, ``agent_id`` not "default") is
        keyed ``<parent key>/<file stem>`` (``ClaudeCodeReader.key_from_head``)."""
        if self.agent_id == "default" or "/" not in self.key:
            return None
        return self.key.rpartition("/")[0] or None


@dataclass(frozen=True, slots=True)
class Run:
    """One request handled by one agent on one session (seed 002).

    ``request_seq`` is the seq of the exact request row; ``end_seq`` the last row of the run.
    """

    run_id: str
    session_key: str
    agent_id: str
    request_seq: int
    status: RunStatus
    end_seq: int
    started_at: datetime | None = None
    ended_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ToolCallIndex:
    """Where a tool call and its first result sit in the log (``result_seq`` None: no result
    anywhere in the log)."""

    call_id: str
    call_seq: int
    result_seq: int | None


#: The largest row number a user may ask for (``--seq``, ``--since-seq``): the largest value a
#: 64-bit signed integer column (SQLite's INTEGER, PostgreSQL's BIGINT) holds.
MAX_SEQ = 2**63 - 1


#: What ``core.records`` holds, re-exported here on first use (PEP 562): importing this module
#: builds only the session log's types (issue 43 goal 3).
_RECORDS = (
    "Note",
    "CheckpointTrigger",
    "Checkpoint",
    "end_stands",
    "ReceiptReason",
    "DETAIL_MAX",
    "receipt_detail",
    "RefusalReceipt",
    "Lease",
    "TranscriptRow",
    "Memory",
)


__getattr__, __dir__ = lazy_exports(  # ``continuity.core.records``' names, on first use
    "continuity.core", dict.fromkeys(_RECORDS, "records"), module=__name__
)


if TYPE_CHECKING:  # the names as a type checker sees them
    from typing import Any

    from continuity.core.records import (
        DETAIL_MAX as DETAIL_MAX,
        Checkpoint as Checkpoint,
        CheckpointTrigger as CheckpointTrigger,
        Lease as Lease,
        Memory as Memory,
        Note as Note,
        ReceiptReason as ReceiptReason,
        RefusalReceipt as RefusalReceipt,
        TranscriptRow as TranscriptRow,
        end_stands as end_stands,
        receipt_detail as receipt_detail,
    )
