"""The pi writer of ``continuity resume`` (issue 13; formats.md §3).

Where: pi's agent folder (``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent``) ``/sessions/
--<encoded project>--/<timestamp>_<uuid>.jsonl`` (the project folder with one leading slash
dropped and each ``/``, ``\\`` and ``:`` turned into ``-``; the timestamp's ``:`` and ``.`` as
``-``), opened by ``pi --session <file>``.

What: the v3 header (``type: session``, ``version: 3``, the new id, ``cwd``, and
``continuityResume``: the source session, which our importer links the new session to), the
turns as ``message`` entries on one ``id``/``parentId`` chain (``user``; ``assistant`` with
``text`` and ``toolCall`` parts; one ``toolResult`` message per call right after), and last a
``compaction`` entry whose ``summary`` is the preamble and whose ``firstKeptEntryId`` is the
first turn: pi sends the summary first, then the kept turns, as after its own compaction.
Assistant messages name the provider and model of pi's settings (``defaultProvider``,
``defaultModel``) so that pi restores the user's own model for the session.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from continuity.resume import files
from continuity.resume.convert import Resumed, Turn
from continuity.resume.files import uuid7

TARGET = "pi"


#: The variable naming this harness's home folder (``--target-home`` sets it for the
#: command that opens the new session).
HOME_VARIABLE = "PI_CODING_AGENT_DIR"


def harness_home(env: Mapping[str, str], override: Path | None = None) -> Path:
    """pi's agent folder: ``override``, else ``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent``."""
    return files.harness_home(env, override, HOME_VARIABLE, ".pi", "agent")


def project_folder(home: Path, project: str) -> Path:
    """``<home>/sessions/--<encoded project>--`` (pi's ``getDefaultSessionDir``)."""
    name = project[1:] if project[:1] in ("/", "\\") else project
    for ch in "/\\:":
        name = name.replace(ch, "-")
    return home / "sessions" / f"--{name}--"


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def file_name(session_id: str, now: datetime) -> str:
    """``<timestamp>_<id>.jsonl``."""
    return f"{_stamp(now).replace(':', '-').replace('.', '-')}_{session_id}.jsonl"


def _model(home: Path) -> tuple[str, str]:
    """pi's default provider and model from ``<home>/settings.json`` (else placeholders pi
    replaces with its own default)."""
    try:
        settings = json.loads((home / "settings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        settings = {}
    if not isinstance(settings, dict):
        settings = {}
    provider = settings.get("defaultProvider")
    model = settings.get("defaultModel")
    return (
        provider if isinstance(provider, str) else "continuity",
        model if isinstance(model, str) else "resumed",
    )


def render(
    resumed: Resumed, session_id: str, now: datetime, home: Path | None = None
) -> list[dict[str, Any]]:
    """The session file's lines (module docstring); timestamps from ``now`` (UTC)."""
    src = resumed.source
    provider, model = _model(home) if home is not None else ("continuity", "resumed")
    clock = [now]
    ids: set[str] = set()

    def next_id() -> str:
        while True:
            value = secrets.token_hex(4)
            if value not in ids:
                ids.add(value)
                return value

    def tick() -> datetime:
        clock[0] += timedelta(milliseconds=1)
        return clock[0]

    lines: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": session_id,
            "timestamp": _stamp(now),
            "cwd": src.project,
            "continuityResume": {"session": src.key, "harness": src.harness, "path": src.path},
        }
    ]
    parent: str | None = None
    first: str | None = None
    for turn in resumed.turns:
        for message in _messages(turn, provider, model):
            moment = tick()
            message["timestamp"] = int(moment.timestamp() * 1000)
            entry_id = next_id()
            lines.append(
                {
                    "type": "message",
                    "id": entry_id,
                    "parentId": parent,
                    "timestamp": _stamp(moment),
                    "message": message,
                }
            )
            first = first or entry_id
            parent = entry_id
    compaction_id = next_id()
    lines.append(
        {
            "type": "compaction",
            "id": compaction_id,
            "parentId": parent,
            "timestamp": _stamp(tick()),
            "summary": resumed.preamble,
            "firstKeptEntryId": first or compaction_id,
            "tokensBefore": 0,
        }
    )
    return lines


def _messages(turn: Turn, provider: str, model: str) -> list[dict[str, Any]]:
    if turn.kind == "user":
        return [
            {
                "role": "user",
                "content": [{"type": "text", "text": t} for t in turn.texts()]
                or [{"type": "text", "text": ""}],
            }
        ]
    if turn.kind == "results":
        return [
            {
                "role": "toolResult",
                "toolCallId": r.call_id,
                "toolName": r.name,
                "content": [{"type": "text", "text": r.text}],
                "isError": r.is_error,
            }
            for r in turn.parts
        ]
    content = turn.content(
        lambda text: {"type": "text", "text": text},
        lambda c: {"type": "toolCall", "id": c.id, "name": c.name, "arguments": c.arguments},
    )
    return [
        {
            "role": "assistant",
            "content": content,
            "api": "openai-completions",
            "provider": provider,
            "model": model,
            "usage": {
                "input": 0,
                "output": 0,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "toolUse" if turn.calls() else "stop",
        }
    ]


def command(session_id: str, path: Path, project: str) -> list[str]:
    """The command that opens the session (run in ``project``)."""
    return ["pi", "--session", str(path)]


def headless(session_id: str, path: Path, project: str) -> list[str]:
    """The command that runs one turn on the session without its interface (run in
    ``project``; the prompt is its last argument), issue 45 item 3."""
    return ["pi", "-p", "--session", str(path)]


def named(path: Path, session_id: str) -> bool:
    """Whether ``path`` is where the harness finds session ``session_id``
    (pi opens the file it is given, whatever its name)."""
    return True


def candidates(home: Path, folder: Path) -> list[Path]:
    """The files an identical earlier copy may be (issue 45 item 3: reused when intact)."""
    return sorted(folder.glob("*.jsonl"))


def new_id() -> str:
    """A new session id (UUID v7, as pi's)."""
    return uuid7()
