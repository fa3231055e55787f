"""Plain data types of what continuity keeps beside the session log: a session's notes (seed
002), checkpoints and their triggers (seed 000), refusal receipts of the continuation
checkpoint (seed 002), leases, transcript rows and memories (seed 000).

They live apart from ``core.model`` (issue 43 goal 3: start-up) so that the read commands
(``sessions``, ``show``, ``continue``), which never build them (``continue`` builds a note
only for a session that has one), do not build their classes: each frozen
dataclass costs about 0.6 ms at import (its generated methods compiled by ``exec``).
``core.model`` re-exports every name here on first use, so ``from continuity.core.model import
Checkpoint`` keeps working. No I/O; imports nothing of ours.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Note:
    """A note that travels with a session outside its transcript rows (seed 002: notes)."""

    session_key: str
    text: str
    note_id: int | None = None
    created_at: datetime | None = None


class CheckpointTrigger(str, enum.Enum):
    """The five checkpoint triggers of seed 000 ("Session Checkpoints")."""

    PERIODIC = "periodic"
    PRE_COMPACTION = "pre_compaction"
    SESSION_END = "session_end"
    AGENT = "agent"
    EXPLICIT = "explicit"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A session checkpoint row (seed 000): a redacted markdown ``digest`` of the session's
    focus, with ``prompt_count``, ``memory_queries`` and ``recent_remembers`` (JSON arrays in the
    store). ``project_normalized`` is the resolved real path of ``project`` (or the raw value)."""

    session_key: str
    harness: str
    project: str | None
    project_normalized: str | None
    trigger: CheckpointTrigger
    digest: str
    prompt_count: int
    memory_queries: tuple[str, ...] = ()
    recent_remembers: tuple[str, ...] = ()
    created_at: datetime | None = None
    checkpoint_id: int | None = None


def end_stands(stored: Checkpoint, new: Checkpoint) -> bool:
    """Whether the ``stored`` ``session_end`` stands against a ``new`` one of the same
    session (issue 22: a session ends once, the later end replaces the earlier): it does when
    it is later, or at the same instant with the same digest and prompt count. One at the
    same instant that differs was written before rows of that instant arrived (a file that
    grew by lines stamped with its last line's time), so ``new`` replaces it. Times missing
    on either side: the stored one stands only when both are missing."""
    if stored.created_at is None or new.created_at is None:
        return stored.created_at is None and new.created_at is None
    return stored.created_at > new.created_at or (
        stored.created_at == new.created_at
        and (stored.digest, stored.prompt_count) == (new.digest, new.prompt_count)
    )


# --------------------------------------------------------------------------- continuation checkpoint (seed 002)


class ReceiptReason(str, enum.Enum):
    """Closed reasons of a refusal receipt (seed 002: continuation_checkpoint_refused)."""

    CANCELLED = "cancelled"
    TRUNCATED = "truncated"
    EMPTY = "empty"
    OVER_BOUND = "over_bound"
    PROVIDER_FAILURE = "provider_failure"


#: The longest ``RefusalReceipt.detail`` kept (characters).
DETAIL_MAX = 200


def receipt_detail(text: str | None) -> str | None:
    """``text`` as a receipt's detail: one line (control characters become spaces), at most
    ``DETAIL_MAX`` characters, None when blank (issue 45 item 7)."""
    if not text:
        return None
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return line[:DETAIL_MAX] or None


@dataclass(frozen=True, slots=True)
class RefusalReceipt:
    """A checkpoint that was not made: run id and closed reason, never summary text or a raw
    exception (seed 002). ``detail`` (issue 45 item 7): a short phrase of ours saying which
    check failed or what the provider answered (``HTTP 500``, ``the reply has 1 of the 9
    required sections``), never model output; None on receipts written before it."""

    session_key: str
    run_id: str | None
    reason: ReceiptReason
    created_at: datetime | None = None
    receipt_id: int | None = None
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class Lease:
    """Ownership of a session for writing: ``token`` is the fencing token, strictly increasing
    per session; the store rejects writes that carry an older token."""

    session_key: str
    owner: str
    token: int
    acquired_at: datetime
    expires_at: datetime


# --------------------------------------------------------------------------- transcripts and memories (seed 000)


@dataclass(frozen=True, slots=True)
class TranscriptRow:
    """A ``session_transcripts`` row (seed 000): the canonical transcript text of one session
    of one agent, its sha256 ``content_hash`` (hex of the UTF-8 content), and completion time."""

    session_key: str
    agent_id: str
    harness: str
    project: str | None
    content: str
    content_hash: str
    created_at: datetime | None = None
    updated_at: datetime | None = None
    completed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Memory:
    """A remembered memory (redacted content, de-duplicated by ``content_hash``)."""

    memory_id: str
    content: str
    content_hash: str
    type: str = "fact"
    tags: tuple[str, ...] = ()
    importance: float = 0.5
    source_id: str | None = None
    agent_id: str = "default"
    created_at: datetime | None = None
