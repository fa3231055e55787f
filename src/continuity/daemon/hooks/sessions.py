"""What ``LiveCapture`` keeps per session, and what it reads from the store for it.

- ``LiveSession``: a live session as the daemon knows it.
- ``history``/``History``: a stored session's prompts, to rebuild its checkpoint state after a
  daemon restart (seed 000's accumulator is in memory; the origin lost it on restart).
- ``project_checkpoints`` and ``busy_timeout_first``: stand-ins for store changes (see each).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from continuity import checkpoints as cps
from continuity.core.model import Checkpoint
from continuity.store import SqlStore


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class LiveSession:
    """What the daemon knows of a live session: where the harness writes its transcript, the
    key the import gave it (``store_key``; it differs only for a second file claiming the same
    id), when it was last heard from, its stored row count and live turns since (the seq of
    the next live record), the live turns not yet in its transcript row (paragraph, time),
    the running hash of the row's text as last written, and the last continuation policy outcome."""

    key: str
    harness: str
    agent_id: str
    project: str | None = None
    transcript_path: str | None = None
    store_key: str | None = None
    last_seen: datetime = field(default_factory=_now)
    entry_count: int = 0
    live_turns: int = 0
    pending: list[tuple[str, datetime, str | None]] = field(default_factory=list)
    #: the running hash of the row's text as last written (``TextDigest``; None: unknown)
    row_digest: Any = None
    #: the row's stored ``content_hash`` as last written or read (the append's expected hash)
    row_hash: str | None = None
    #: what the canonical JSONL holds of the session since this daemon last captured it
    #: (``transcripts.FileState``; None: unknown, the next capture rewrites its records)
    file_state: Any = None
    last_outcome: dict[str, Any] | None = None


def busy_timeout_first(store: SqlStore) -> None:
    """SQLite: make every connection the daemon uses run the store's connect PRAGMAs, with
    ``busy_timeout`` first. Two stand-ins until ``store`` does both itself:

    - ``open_store`` migrates through the engine before ``SqlStore`` registers its connect
      hook, so the pooled connections it keeps never got ``journal_mode=WAL`` and
      ``synchronous=FULL`` (without WAL every commit fsyncs the rollback journal): the pool is
      emptied so that each connection is made again, through the hook;
    - the hook runs ``PRAGMA journal_mode=WAL`` before ``busy_timeout``, and that fails at once
      with "database is locked" while another connection writes (the daemon opens connections
      from many threads): ``busy_timeout`` is set first, by a hook of ours placed before it.
    """
    if store.dialect != "sqlite":
        return
    from sqlalchemy import event

    def first(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA busy_timeout=10000")

    event.listen(store.engine, "connect", first, insert=True)
    store.engine.dispose()


def as_stored(store: SqlStore, cp: Checkpoint) -> Checkpoint:
    """The stored row of checkpoint ``cp`` just written (with its ``checkpoint_id``), else
    ``cp`` itself (a write the queue will retry)."""
    latest = store.latest_checkpoint(cp.session_key)
    if latest is not None and latest.trigger is cp.trigger and latest.created_at == cp.created_at:
        return latest
    return cp


def _requests(store: SqlStore, key: str) -> Iterator[Any]:
    after = -1
    while True:
        page = store.entries(key, after_seq=after, limit=1000, visible_only=True)
        yield from (e for e in page if e.is_request)
        if len(page) < 1000:
            return
        after = page[-1].seq


@dataclass
class History:
    """A stored session's prompts: texts in order, how many came after its newest
    checkpoint, and that checkpoint's time."""

    prompts: list[str]
    since_checkpoint: int
    checkpoint_at: datetime | None

    def apply(self, state: cps.SessionState) -> None:
        """Refill a fresh state: every prompt counts in the total (and its snippet), those
        after the newest checkpoint in the interval count."""
        for text in self.prompts:
            state.record_prompt(text)
        state.interval_prompts = self.since_checkpoint
        if self.checkpoint_at is not None:
            state.last_checkpoint_at = max(self.checkpoint_at, state.started_at)


def history(store: SqlStore, key: str) -> History:
    """The prompts of stored session ``key`` (its request rows), for a rebuilt state."""
    latest = store.latest_checkpoint(key)
    since = latest.created_at if latest else None
    prompts, after = [], 0
    for row in _requests(store, key):
        prompts.append(row.text())
        if since is None or row.timestamp is None or row.timestamp > since:
            after += 1
    return History(prompts, after, since)


def live_history(store: SqlStore, key: str, agent_id: str) -> History | None:
    """The prompts of a live session with no imported rows (no transcript file), for a state
    rebuilt after a daemon restart: the ``User:`` paragraphs of its ``session_transcripts``
    row (a paragraph's later lines are indented, so a line starting ``User: `` opens one).
    With a checkpoint they all count as before it (the row keeps no prompt times), so in the
    total only. None without a row."""
    row = store.get_transcripts([key], agent_id).get(key)
    if row is None:
        return None
    prompts: list[str] = []
    current: list[str] | None = None
    for line in row.content.split("\n"):
        if line.startswith("User: ") or line == "User:":
            current = [line[6:]]
            prompts.append("")
        elif current is not None and (line.startswith("  ") or not line):
            current.append(line[2:])
        else:
            current = None
        if current is not None:
            prompts[-1] = "\n".join(current).strip("\n")
    latest = store.latest_checkpoint(key)
    after = 0 if latest is not None else len(prompts)  # no times: all before the checkpoint
    return History(prompts, after, latest.created_at if latest else None)


def project_checkpoints(store: SqlStore, project: str, *, limit: int) -> list[Checkpoint]:
    """The newest ``limit`` checkpoints of any session of ``project`` (normalized), newest
    first. Stand-in until the store offers this primitive (``project_checkpoints``)."""
    from sqlalchemy import select

    from continuity.store import checkpoints as store_cps, schema

    c = schema.session_checkpoints.c
    normalized = cps.normalize_project(project) or project
    stmt = (
        select(schema.session_checkpoints)
        .where(c.project_normalized == normalized)
        .order_by(c.created_at.desc(), c.checkpoint_id.desc())
        .limit(limit)
    )
    with store._conn() as conn:  # see the docstring
        rows = conn.execute(stmt).all()
    return store_cps.read_rows(rows)[0]  # damaged rows skipped (issue 15)
