"""Small builders of session logs for tests: ``U("text")``, ``A(call("c1"))``, ``T("c1")``..."""

from __future__ import annotations

from continuity.core.model import (
    CompactionInfo,
    Entry,
    EntryKind,
    Role,
    Run,
    RunStatus,
    Session,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.store.protocol import Store


def U(text: str, *, request: bool = True) -> Entry:
    """A user row; a request unless ``request=False``."""
    return Entry(EntryKind.MESSAGE, Role.USER, (TextBlock(text),), is_request=request)


def A(*blocks: object, text: str | None = None) -> Entry:
    """An assistant row with tool calls (``call(...)``) and/or text."""
    out = [TextBlock(text)] if text else []
    out.extend(blocks)  # type: ignore[arg-type]
    return Entry(EntryKind.MESSAGE, Role.ASSISTANT, tuple(out))  # type: ignore[arg-type]


def call(call_id: str, name: str = "read", **args: object) -> ToolCallBlock:
    return ToolCallBlock(call_id, name, dict(args))


def T(*call_ids: str, text: str = "ok", error: bool = False) -> Entry:
    """A tool row answering ``call_ids``."""
    return Entry(
        EntryKind.MESSAGE,
        Role.TOOL,
        tuple(ToolResultBlock(c, error, f"{text} {c}") for c in call_ids),
    )


def CP(summary: str, covers: int | None = None, *, first_kept: str | None = None) -> Entry:
    """A compaction row covering seq 0..covers (default: everything before it)."""
    return Entry(
        EntryKind.COMPACTION,
        Role.SYSTEM,
        (),
        compaction=CompactionInfo(summary, covers, first_kept),
    )


def load(
    store: Store,
    rows: list[Entry],
    *,
    key: str = "s1",
    runs: list[tuple[int, RunStatus]] | None = None,
) -> str:
    """Append ``rows`` to session ``key`` (seq = index) and derive its runs: each request opens
    a run; ``runs`` overrides statuses by request seq. Returns the key."""
    store.upsert_session(Session(key=key, harness="test"))
    start = store.get_session(key).entry_count  # type: ignore[union-attr]
    for i, e in enumerate(rows):
        e.seq = start + i
        if e.compaction is not None and e.compaction.covers_through_seq is None:
            c = e.compaction
            e.compaction = CompactionInfo(c.summary, e.seq - 1, c.first_kept_entry_id)
    store.append(key, rows)
    overrides = dict(runs or [])
    reqs = [e.seq for e in rows if e.is_request]
    out = []
    for i, seq in enumerate(reqs):
        end = (reqs[i + 1] - 1) if i + 1 < len(reqs) else rows[-1].seq
        status = overrides.get(seq, RunStatus.FINISHED)
        out.append(Run(f"{key}:{seq}", key, "default", seq, status, end))
    store.put_runs(out)
    return key


def stored_transcript(store: object, key: str, agent: str = "default") -> list[str] | None:
    """What the database holds of a transcript row's text, read raw (revision 0018): its
    parts in order (None: no row)."""
    from sqlalchemy import and_, select

    from continuity.store import schema
    from continuity.store.memory import part_text

    c, p = schema.session_transcripts.c, schema.session_transcript_parts.c
    with store.engine.connect() as conn:  # type: ignore[attr-defined]
        found = conn.execute(
            select(c.content_hash).where(and_(c.session_key == key, c.agent_id == agent))
        ).scalar()
        parts = conn.execute(
            select(p.data, p.codec)
            .where(and_(p.session_key == key, p.agent_id == agent))
            .order_by(p.part)
        ).all()
    return None if found is None else [part_text(d, codec) for d, codec in parts]
