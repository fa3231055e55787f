"""The Claude Code writer of ``continuity resume`` (issue 13; formats.md §1).

Where: ``$CLAUDE_CONFIG_DIR`` (else ``~/.claude``) ``/projects/<encoded project>/<uuid>.jsonl``;
the project folder is encoded as Claude Code does (each character that is not ASCII
alphanumeric becomes ``-``); Claude Code finds it there for ``claude --resume <uuid>`` run in
that project folder.

What: one ``uuid``/``parentUuid`` chain, as Claude Code writes after a compaction: a
``system``/``compact_boundary`` line (``parentUuid`` null), the preamble as the compact summary
(a ``user`` line with ``isCompactSummary``: Claude Code sends it as the first user message, and
our importer reads it as the session's compaction), then the turns: ``user`` lines (text),
``assistant`` lines (``text`` and ``tool_use`` blocks of one message), ``user`` lines holding
the ``tool_result`` blocks right after. Every line carries ``continuityResume``: the source
session (our importer links the new session to it).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from continuity.resume import files
from continuity.resume.convert import Resumed, Turn

TARGET = "claude-code"
#: The Claude Code release whose files these lines follow (harnesses.md).
VERSION = "2.1.332"
#: Claude Code cuts a project folder name over this many characters (formats.md §1.1).
MAX_FOLDER = 200
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")


#: The variable naming this harness's home folder (``--target-home`` sets it for the
#: command that opens the new session).
HOME_VARIABLE = "CLAUDE_CONFIG_DIR"


def harness_home(env: Mapping[str, str], override: Path | None = None) -> Path:
    """Claude Code's config folder: ``override``, else ``$CLAUDE_CONFIG_DIR``, else
    ``~/.claude``."""
    return files.harness_home(env, override, HOME_VARIABLE, ".claude")


def project_folder(home: Path, project: str) -> Path:
    """``<home>/projects/<encoded project>``. A name over 200 characters is the existing
    folder starting with its first 200 (Claude Code hashes the rest); ``ValueError`` when
    there is none."""
    name = _NON_ALNUM.sub("-", project)
    if len(name) <= MAX_FOLDER:
        return home / "projects" / name
    base = home / "projects"
    head = name[:MAX_FOLDER]
    found = sorted(p for p in base.glob(head + "*") if p.is_dir()) if base.is_dir() else []
    if not found:
        raise ValueError(
            f"the project folder name of {project} is over {MAX_FOLDER} "
            "characters and Claude Code has no folder for it yet: run claude "
            "there once"
        )
    return found[0]


def render(resumed: Resumed, session_id: str, now: datetime) -> list[dict[str, Any]]:
    """The lines of the new session file (module docstring); timestamps start at ``now``
    (UTC), one millisecond apart."""
    src = resumed.source
    marker = {"session": src.key, "harness": src.harness, "path": src.path}
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": src.project,
        "sessionId": session_id,
        "version": VERSION,
        "continuityResume": marker,
    }
    lines: list[dict[str, Any]] = []
    clock = [now]

    def stamp() -> str:
        clock[0] += timedelta(milliseconds=1)
        return clock[0].strftime("%Y-%m-%dT%H:%M:%S.") + f"{clock[0].microsecond // 1000:03d}Z"

    def add(line: dict[str, Any]) -> str:
        line_id = str(uuid.uuid4())
        parent = lines[-1]["uuid"] if lines else None
        lines.append(
            {"parentUuid": parent, **line, "uuid": line_id, "timestamp": stamp(), **common}
        )
        return line_id

    add(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "level": "info",
            "compactMetadata": {"trigger": "manual", "preTokens": 0},
        }
    )
    add(
        {
            "type": "user",
            "message": {"role": "user", "content": resumed.preamble},
            "isVisibleInTranscriptOnly": True,
            "isCompactSummary": True,
        }
    )
    for turn in resumed.turns:
        add(_line(turn))
    return lines


def _line(turn: Turn) -> dict[str, Any]:
    if turn.kind == "user":
        return {"type": "user", "message": {"role": "user", "content": "\n\n".join(turn.texts())}}
    if turn.kind == "results":
        return {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "tool_use_id": r.call_id,
                        "type": "tool_result",
                        "content": r.text,
                        "is_error": r.is_error,
                    }
                    for r in turn.parts
                ],
            },
        }
    content = turn.content(
        lambda text: {"type": "text", "text": text},
        lambda c: {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments},
    )
    return {
        "type": "assistant",
        "message": {
            "id": "msg_" + uuid.uuid4().hex[:24],
            "type": "message",
            "role": "assistant",
            "model": "<synthetic>",
            "content": content,
            "stop_reason": "tool_use" if turn.calls() else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        },
    }


def file_name(session_id: str, now: datetime) -> str:
    """``<uuid>.jsonl``."""
    return f"{session_id}.jsonl"


def command(session_id: str, path: Path, project: str) -> list[str]:
    """The command that opens the session (run in ``project``)."""
    return ["claude", "--resume", session_id]


def headless(session_id: str, path: Path, project: str) -> list[str]:
    """The command that runs one turn on the session without its interface (run in
    ``project``; the prompt is its last argument), issue 45 item 3."""
    return ["claude", "-p", "--resume", session_id]


def named(path: Path, session_id: str) -> bool:
    """Whether ``path`` is where the harness finds session ``session_id``
    (Claude Code finds a session by ``<id>.jsonl``)."""
    return path.name == f"{session_id}.jsonl"


def candidates(home: Path, folder: Path) -> list[Path]:
    """The files an identical earlier copy may be (issue 45 item 3: reused when intact)."""
    return sorted(folder.glob("*.jsonl"))


def new_id() -> str:
    """A new session id (a random UUID, as Claude Code's)."""
    return str(uuid.uuid4())
