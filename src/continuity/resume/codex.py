"""The Codex writer of ``continuity resume`` (issue 13; formats.md §2).

Where: ``$CODEX_HOME`` (else ``~/.codex``) ``/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-
<uuid>.jsonl`` (local date and time, as Codex names them); ``codex resume <id>`` (and ``codex
exec resume <id>``) finds it by its id.

What: a ``session_meta`` line (the new thread id, the project folder as ``cwd``, and
``continuityResume``: the source session, which our importer links the new session to), a
``compacted`` item whose ``message`` is the preamble and whose ``replacement_history`` is that
preamble as one user message (Codex rebuilds its history from it; our importer reads it as the
session's compaction), then the turns as ``response_item`` lines: ``message`` (``input_text``
for the user, ``output_text`` for the assistant), ``function_call`` (arguments as a JSON
string) and, right after, one ``function_call_output`` per call (the Responses API has no error
flag on an output: an error result, the synthetic "effects unknown" one included, says so in
its text).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from continuity.core.text import json_bytes
from continuity.resume import files
from continuity.resume.convert import Call, Resumed, Turn
from continuity.resume.files import uuid7

TARGET = "codex"
#: The Codex release whose rollouts these lines follow (harnesses.md).
VERSION = "0.171.0"


#: The variable naming this harness's home folder (``--target-home`` sets it for the
#: command that opens the new session).
HOME_VARIABLE = "CODEX_HOME"


def harness_home(env: Mapping[str, str], override: Path | None = None) -> Path:
    """Codex's home: ``override``, else ``$CODEX_HOME``, else ``~/.codex``."""
    return files.harness_home(env, override, HOME_VARIABLE, ".codex")


def project_folder(home: Path, project: str, now: datetime) -> Path:
    """``<home>/sessions/YYYY/MM/DD`` of ``now`` in local time (Codex groups by date)."""
    local = now.astimezone()
    return home / "sessions" / f"{local:%Y}" / f"{local:%m}" / f"{local:%d}"


def file_name(session_id: str, now: datetime) -> str:
    """``rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl`` (local time)."""
    return f"rollout-{now.astimezone():%Y-%m-%dT%H-%M-%S}-{session_id}.jsonl"


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def render(resumed: Resumed, session_id: str, now: datetime) -> list[dict[str, Any]]:
    """The rollout's lines (module docstring); timestamps from ``now`` (UTC), 1 ms apart."""
    src = resumed.source
    clock = [now]

    def line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        clock[0] += timedelta(milliseconds=1)
        return {"timestamp": _stamp(clock[0]), "type": kind, "payload": payload}

    summary_item = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": resumed.preamble}],
    }
    lines = [
        line(
            "session_meta",
            {
                "id": session_id,
                "session_id": session_id,
                "timestamp": _stamp(now),
                "cwd": src.project,
                "originator": "continuity_resume",
                "cli_version": VERSION,
                "source": "exec",
                "instructions": None,
                "continuityResume": {"session": src.key, "harness": src.harness, "path": src.path},
            },
        ),
        line("compacted", {"message": resumed.preamble, "replacement_history": [summary_item]}),
    ]
    for turn in resumed.turns:
        lines.extend(line("response_item", item) for item in _items(turn))
    return lines


def _items(turn: Turn) -> list[dict[str, Any]]:
    if turn.kind == "user":
        return [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": t} for t in turn.texts()]
                or [{"type": "input_text", "text": ""}],
            }
        ]
    if turn.kind == "results":
        return [
            {"type": "function_call_output", "call_id": r.call_id, "output": r.text}
            for r in turn.parts
        ]
    items: list[dict[str, Any]] = []
    texts = [p for p in turn.parts if isinstance(p, str) and p]
    if texts:
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": t} for t in texts],
            }
        )
    for part in turn.parts:
        if isinstance(part, Call):
            items.append(
                {
                    "type": "function_call",
                    "name": part.name,
                    "arguments": json_bytes(part.arguments).decode(),
                    "call_id": part.id,
                }
            )
    return items


def command(session_id: str, path: Path, project: str) -> list[str]:
    """The command that opens the session (run in ``project``)."""
    return ["codex", "resume", session_id]


def headless(session_id: str, path: Path, project: str) -> list[str]:
    """The command that runs one turn on the session without its interface (run in
    ``project``; the prompt is its last argument), issue 45 item 3."""
    return ["codex", "exec", "resume", session_id]


def named(path: Path, session_id: str) -> bool:
    """Whether ``path`` is where the harness finds session ``session_id``
    (Codex finds a rollout by the id at the end of its name)."""
    return path.name.startswith("rollout-") and path.name.endswith(f"-{session_id}.jsonl")


def candidates(home: Path, folder: Path) -> list[Path]:
    """The files an identical earlier copy may be (issue 45 item 3: reused when intact)."""
    return sorted(home.glob("sessions/*/*/*/rollout-*.jsonl"))


def new_id() -> str:
    """A new thread id (UUID v7, as Codex's)."""
    return uuid7()
