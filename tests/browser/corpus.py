"""A small workspace every browse test reads: three sessions (Claude Code with a compaction, a
checkpoint, a long tool output, media, hostile HTML/ANSI and a secret; a Codex one; a Claude
Code one with an Edit, markdown and rows outside the conversation, untitled: issue 44) and a
subagent session."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from continuity.core.model import (
    Checkpoint,
    CheckpointTrigger,
    Entry,
    EntryKind,
    MediaBlock,
    Role,
    Session,
    TextBlock,
)
from tests.builders import CP, A, T, U, call, load

#: The Edit of the ``cc-edit`` session (issue 44: shown as a unified diff).
EDIT_OLD = "def parse(path):\n    return load(path)\n"
EDIT_NEW = 'def parse_file(path):\n    """Parse the file at path."""\n    return load(path)\n'
EDIT_REQUEST = "Rename parse to parse_file in parser.py and give it a docstring"
#: The assistant's answer, in markdown (with raw HTML that must not pass).
EDIT_ANSWER = (
    "Renamed **parse** to `parse_file`:\n\n- parser.py: the new name\n- a docstring\n\n"
    '<img src=x onerror="window.pwned = 3"> done'
)

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
SECRET = "sk-ant-api03-ZYXWVUTSRQPONMLKJIHGFEDCBA0123456789abcdefgh"
HOSTILE = (
    '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> \x1b[31mred\x1b[0m'
)
LONG = "\n".join(f"line {i} of the migration log" for i in range(80))


def _session(store, key, rows, *, harness, project, title, agent="default"):
    store.upsert_session(
        Session(key=key, harness=harness, project=project, agent_id=agent, title=title)
    )
    for i, e in enumerate(rows):
        e.timestamp = T0 + timedelta(minutes=i)
    load(store, rows, key=key)
    store.upsert_session(
        Session(
            key=key,
            harness=harness,
            project=project,
            agent_id=agent,
            title=title,
            started_at=T0,
            ended_at=T0 + timedelta(hours=1),
            entry_count=store.get_session(key).entry_count,
        )
    )


def build(store) -> None:
    """Fill ``store`` with the corpus."""
    media = Entry(
        EntryKind.MESSAGE,
        Role.USER,
        (TextBlock("here is the screenshot"), MediaBlock("image/png", 48213)),
    )
    _session(
        store,
        "cc-alembic",
        [
            U("add an alembic migration for the search index"),
            A(call("c1", "Bash", command="alembic upgrade head"), text="I will run the migration"),
            T("c1", text=LONG),
            CP("Summary: the migration for the search index was written and applied"),
            U(f"the key is {SECRET} and this text is {HOSTILE}"),
            media,
            A(text="Done: the alembic revision 0013 indexes every entry"),
        ],
        harness="claude-code",
        project="/home/ana/app",
        title="Alembic search index",
    )
    store.insert_checkpoint(
        Checkpoint(
            session_key="cc-alembic",
            harness="claude-code",
            project="/home/ana/app",
            project_normalized="/home/ana/app",
            trigger=CheckpointTrigger.PRE_COMPACTION,
            digest="## Checkpoint digest\nworking on the alembic index",
            prompt_count=2,
            created_at=T0 + timedelta(minutes=2, seconds=30),
        ),
        max_per_session=50,
    )
    _session(
        store,
        "cx-parser",
        [
            U("fix the flaky parser test"),
            A(text="alembic is not involved; the parser test is fixed"),
        ],
        harness="codex",
        project="/home/ana/other",
        title="Flaky parser",
    )
    hidden = {"visible": False}
    _session(
        store,
        "cc-edit",
        [
            Entry(EntryKind.EVENT, Role.SYSTEM, type_name="queue-operation/enqueue", **hidden),
            U(EDIT_REQUEST),
            Entry(
                EntryKind.CONTEXT,
                Role.SYSTEM,
                (TextBlock("date: 2026-11-20"),),
                type_name="attachment/date",
                **hidden,
            ),
            A(
                call(
                    "e1",
                    "Edit",
                    file_path="/home/ana/app/parser.py",
                    old_string=EDIT_OLD,
                    new_string=EDIT_NEW,
                ),
                text="I will rename it.",
            ),
            T("e1", text="The file /home/ana/app/parser.py has been updated."),
            Entry(EntryKind.EVENT, Role.SYSTEM, type_name="file-history-snapshot", **hidden),
            A(text=EDIT_ANSWER),
        ],
        harness="claude-code",
        project="/home/ana/app",
        title=None,
    )
    _session(
        store,
        "cc-alembic/agent-7",
        [U("subagent: read the alembic docs")],
        harness="claude-code",
        project="/home/ana/app",
        title=None,
        agent="7",
    )
