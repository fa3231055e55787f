"""Builders of stored sessions for the brief's tests: a project's sessions with times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from continuity.checkpoints.capture import normalize_project
from continuity.core.model import (
    Checkpoint,
    CheckpointTrigger,
    Entry,
    EntryKind,
    Memory,
    Role,
    Session,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)

NOW = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
PROJECT = "/srv/app"


def user(text: str) -> Entry:
    return Entry(EntryKind.MESSAGE, Role.USER, (TextBlock(text),), is_request=True)


def say(text: str) -> Entry:
    return Entry(EntryKind.MESSAGE, Role.ASSISTANT, (TextBlock(text),))


def bash(call_id: str, command: str) -> Entry:
    return Entry(
        EntryKind.MESSAGE, Role.ASSISTANT, (ToolCallBlock(call_id, "Bash", {"command": command}),)
    )


def edit(call_id: str, path: str) -> Entry:
    return Entry(
        EntryKind.MESSAGE,
        Role.ASSISTANT,
        (
            ToolCallBlock(
                call_id, "Edit", {"file_path": path, "old_string": "a", "new_string": "b"}
            ),
        ),
    )


def result(call_id: str, text: str, error: bool = False) -> Entry:
    return Entry(EntryKind.MESSAGE, Role.TOOL, (ToolResultBlock(call_id, error, text),))


def session(
    store,
    key: str,
    rows: list[Entry],
    *,
    ago: timedelta,
    harness: str = "claude-code",
    project: str = PROJECT,
) -> str:
    """Store session ``key`` of ``project`` whose rows end ``ago`` before ``NOW`` (one
    second apart)."""
    end = NOW - ago
    start = end - timedelta(seconds=len(rows))
    store.upsert_session(Session(key=key, harness=harness, project=project, started_at=start))
    for i, e in enumerate(rows):
        e.seq = i
        e.timestamp = start + timedelta(seconds=i + 1)
    store.append(key, rows)
    return key


def checkpoint(
    store,
    key: str,
    *,
    ago: timedelta,
    digest: str = "## Session Checkpoint",
    remembers: tuple[str, ...] = (),
    trigger=CheckpointTrigger.PERIODIC,
    harness: str = "claude-code",
    project: str = PROJECT,
) -> None:
    store.insert_checkpoint(
        Checkpoint(
            key,
            harness,
            project,
            normalize_project(project),
            trigger,
            digest,
            1,
            (),
            remembers,
            created_at=NOW - ago,
        ),
        max_per_session=50,
    )


def memory(store, text: str, source: str, type_: str = "decision") -> None:
    import hashlib

    h = hashlib.sha256(text.encode()).hexdigest()
    store.insert_memory(
        Memory(f"m-{h[:12]}", text, h, type_, (), 0.8, source, "default", NOW - timedelta(hours=1))
    )
