"""The Qwen Code writer of ``continuity resume`` (issue 42 item 3), learnt from Qwen Code 0.24.4's
``Storage``, ``SessionService`` and ``transcript-records`` (read in its npm bundle, not copied)
and proven with qwen 0.24.4 (``tests/e2e/test_qwen_live.py``).

Where: ``<home>/projects/<project>/chats/<session id>.jsonl``, where ``home`` is
``$QWEN_RUNTIME_DIR``, else ``$QWEN_HOME``, else ``~/.qwen`` (Qwen Code's runtime folder;
``--target-home`` sets ``QWEN_RUNTIME_DIR`` for the printed commands, so its settings and
login stay where they are) and ``project`` the project folder's real path with every
character that is not ASCII alphanumeric made ``-`` (its ``sanitizeCwd``; the real path, as
Node's ``process.cwd()`` gives it). Opened by ``qwen --resume <id>`` in the project folder: it
reads the file only when the first record's ``cwd`` is that folder (its project hash).

What: Qwen Code's own records, one ``uuid``/``parentUuid`` chain (``sessionId``, ``cwd``,
``version``, ``timestamp`` each): the preface as a ``user`` record (no ``provenance``; our
importer reads it back as the copy's compaction, ``formats.qwen_code``) carrying
``continuityResume``, each user turn a ``user`` record (``provenance`` ``real_user``), each
assistant turn an ``assistant`` record (``message`` ``{role: model, parts}``: text and
``functionCall`` parts in order), and each result its own ``tool_result`` record right after
(``functionResponse`` part, ``toolCallResult`` ``{callId, status}``), as Qwen Code records one
per call. Qwen Code rebuilds the model's history from those ``message`` contents in chain order.
The file names, the session id and the reuse rule are Claude Code's (``<uuid>.jsonl``).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from continuity.resume import files
from continuity.resume.claude_code import (
    candidates as candidates,
    file_name as file_name,
    named as named,
    new_id as new_id,
)
from continuity.resume.convert import Resumed, Turn
from continuity.resume.gemini_cli import call_part, response_part, stamp

TARGET = "qwen-code"
#: The Qwen Code release whose records these follow.
VERSION = "0.24.4"
#: The variable ``--target-home`` sets for the printed commands: Qwen Code's runtime folder
#: (sessions), which wins over ``QWEN_HOME`` (settings too).
HOME_VARIABLE = "QWEN_RUNTIME_DIR"
_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]")


def harness_home(env: Mapping[str, str], override: Path | None = None) -> Path:
    """The folder holding ``projects``: ``override``, else ``$QWEN_RUNTIME_DIR``, else
    ``$QWEN_HOME``, else ``~/.qwen`` (Qwen Code 0.24.4's ``Storage.getRuntimeBaseDir``; a
    runtime folder set in its settings is not read)."""
    if override is None and not env.get(HOME_VARIABLE) and env.get("QWEN_HOME"):
        return files.harness_home(env, None, "QWEN_HOME")
    return files.harness_home(env, override, HOME_VARIABLE, ".qwen")


def _real(project: str) -> str:
    return os.path.realpath(project)


def project_folder(home: Path, project: str) -> Path:
    """``<home>/projects/<project's real path, non-alphanumerics as ->/chats``."""
    return home / "projects" / _NON_ALNUM.sub("-", _real(project)) / "chats"


def render(resumed: Resumed, session_id: str, now: datetime) -> list[dict[str, Any]]:
    """The session file's records (module docstring); timestamps start at ``now`` (UTC), one
    millisecond apart."""
    src = resumed.source
    common = {"sessionId": session_id, "cwd": _real(src.project), "version": VERSION}
    lines: list[dict[str, Any]] = []
    clock = [now]

    def add(kind: str, message: dict[str, Any], **extra: Any) -> None:
        clock[0] += timedelta(milliseconds=1)
        lines.append(
            {
                "uuid": str(uuid.uuid4()),
                "parentUuid": lines[-1]["uuid"] if lines else None,
                **common,
                "timestamp": stamp(clock[0]),
                "type": kind,
                **extra,
                "message": message,
            }
        )

    add(
        "user",
        {"role": "user", "parts": [{"text": resumed.preamble}]},
        continuityResume={"session": src.key, "harness": src.harness, "path": src.path},
    )
    for turn in resumed.turns:
        if turn.kind == "user":
            texts = [{"text": t} for t in turn.texts() if t] or [{"text": ""}]
            add("user", {"role": "user", "parts": texts}, provenance="real_user")
        elif turn.kind == "assistant":
            add("assistant", {"role": "model", "parts": _parts(turn)}, model="continuity-resume")
        else:
            for result in turn.parts:
                add(
                    "tool_result",
                    {"role": "user", "parts": [response_part(result.call_id, result.name, result)]},
                    toolCallResult={
                        "callId": result.call_id,
                        "status": "error" if result.is_error else "success",
                    },
                )
    return lines


def _parts(turn: Turn) -> list[dict[str, Any]]:
    return turn.content(lambda text: {"text": text}, call_part)


def command(session_id: str, path: Path, project: str) -> list[str]:
    """The command that opens the session (run in ``project``)."""
    return ["qwen", "--resume", session_id]


def headless(session_id: str, path: Path, project: str) -> list[str]:
    """One turn on the session without its interface (run in ``project``; the prompt last)."""
    return ["qwen", "--resume", session_id, "-p"]
