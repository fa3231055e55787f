"""The GitHub Copilot CLI writer of ``continuity resume`` (issue 42 item 3), learnt from the
session-state files copilot 1.0.102 writes (``formats.copilot_cli``) and proven with it
(``tests/e2e/test_copilot_live.py``: ``copilot --resume <id> -p PROMPT`` offline, in BYOK mode).

Where: ``<home>/session-state/<session id>/events.jsonl``, where ``home`` is ``$COPILOT_HOME`` or
``~/.copilot``; the session id is a random UUID, as Copilot CLI's. Opened by ``copilot --resume
<id>`` (any folder: the session records its own; the printed commands ``cd`` to the project
first). Copilot CLI writes the session's ``workspace.yaml`` and its other files itself when it
opens it, and appends its events to the same file.

What: one event a line, ``{"type", "data", "id", "timestamp", "parentId"}`` (``parentId``: the
previous event's ``id``, a chain): ``session.start`` (``sessionId``, ``version`` 1, ``producer``
``continuity-resume``, ``copilotVersion`` ``FORMAT_VERSION``, ``startTime``, ``context.cwd``:
1.0.102 refuses a session without the first five, "Session file is corrupted (line 1: missing
field `copilotVersion`)"; the ``continuityResume`` marker beside its ``data``, which 1.0.102
keeps and ignores, though its schema names no such field), then the preamble and each user turn as a
``user.message`` (``content``), each assistant turn as an ``assistant.message`` (``content``:
its text; ``toolRequests``: ``{toolCallId, name, arguments, type: "function"}``) and each of
its results as a ``tool.execution_complete`` (``toolCallId``, ``success``, ``result.content``
or, for an error, ``error.message``). Copilot CLI 1.0.102 rebuilds its Chat Completions history
from exactly these: the user messages, the assistant message with its ``tool_calls``, one
``tool`` message per call.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from continuity.resume import files
from continuity.resume.convert import Resumed, Turn

TARGET = "copilot-cli"
#: The variable naming Copilot CLI's home folder (``copilot help environment``).
HOME_VARIABLE = "COPILOT_HOME"
EVENTS_FILE = "events.jsonl"
#: The Copilot CLI version whose session-state format the copy follows (the registry's
#: ``verified_version``, the one the e2e suite opens copies with).
FORMAT_VERSION = "1.0.102"


def harness_home(env: Mapping[str, str], override: Path | None = None) -> Path:
    """Copilot CLI's home: ``override``, else ``$COPILOT_HOME``, else ``~/.copilot``."""
    return files.harness_home(env, override, HOME_VARIABLE, ".copilot")


def project_folder(home: Path, project: str) -> Path:
    """``<home>/session-state``: Copilot CLI keeps every project's sessions there (each
    records its folder in ``context.cwd``)."""
    return home / "session-state"


def file_name(session_id: str, now: datetime) -> str:
    """``<session id>/events.jsonl`` (a folder per session)."""
    return f"{session_id}/{EVENTS_FILE}"


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def render(resumed: Resumed, session_id: str, now: datetime) -> list[dict[str, Any]]:
    """The session's events (module docstring); timestamps from ``now`` (UTC), 1 ms apart."""
    src = resumed.source
    clock = [now]
    lines: list[dict[str, Any]] = []

    def add(kind: str, data: dict[str, Any], **extra: Any) -> None:
        at = _stamp(clock[0])
        clock[0] += timedelta(milliseconds=1)
        lines.append(
            {
                "type": kind,
                "data": data,
                "id": str(uuid.uuid4()),
                "timestamp": at,
                "parentId": lines[-1]["id"] if lines else None,
                **extra,
            }
        )

    add(
        "session.start",
        {
            "sessionId": session_id,
            "version": 1,
            "producer": "continuity-resume",
            "copilotVersion": FORMAT_VERSION,
            "startTime": _stamp(now),
            "context": {"cwd": src.project},
        },
        continuityResume={"session": src.key, "harness": src.harness, "path": src.path},
    )
    if resumed.preamble:
        add("user.message", {"content": resumed.preamble})
    turns = resumed.turns
    for i, turn in enumerate(turns):
        if turn.kind == "user":
            add("user.message", {"content": "\n\n".join(t for t in turn.texts() if t)})
        elif turn.kind == "assistant":
            add("assistant.message", _assistant(turn))
            after = turns[i + 1] if i + 1 < len(turns) else None
            for result in after.parts if after is not None and after.kind == "results" else []:
                add("tool.execution_complete", _result(result))
    return lines


def _assistant(turn: Turn) -> dict[str, Any]:
    return {
        "messageId": str(uuid.uuid4()),
        "content": "\n\n".join(t for t in turn.texts() if t),
        "toolRequests": [
            {
                "toolCallId": call.id,
                "name": call.name,
                "arguments": call.arguments,
                "type": "function",
            }
            for call in turn.calls()
        ],
    }


def _result(result: Any) -> dict[str, Any]:
    if result.is_error:
        return {
            "toolCallId": result.call_id,
            "success": False,
            "error": {"message": result.text},
        }
    return {"toolCallId": result.call_id, "success": True, "result": {"content": result.text}}


def command(session_id: str, path: Path, project: str) -> list[str]:
    """The command that opens the session (run in ``project``)."""
    return ["copilot", "--resume", session_id]


def headless(session_id: str, path: Path, project: str) -> list[str]:
    """One turn on the session without its interface (run in ``project``; the prompt last).
    No permission is granted: add ``--allow-all-tools`` (or ``--allow-tool ...``) for tools
    Copilot CLI would ask about."""
    return ["copilot", "--resume", session_id, "-p"]


def named(path: Path, session_id: str) -> bool:
    """Whether Copilot CLI finds session ``session_id`` at ``path`` (its folder's name)."""
    return path.name == EVENTS_FILE and path.parent.name == session_id


def candidates(home: Path, folder: Path) -> list[Path]:
    """The files an identical earlier copy may be (issue 45 item 3: reused when intact)."""
    return sorted(folder.glob(f"*/{EVENTS_FILE}"))


def new_id() -> str:
    """A new session id (a random UUID, as Copilot CLI's)."""
    return str(uuid.uuid4())
