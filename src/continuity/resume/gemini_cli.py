"""The Gemini CLI writer of ``continuity resume`` (issue 42 item 3), learnt from Gemini CLI's
``chatRecordingService``, ``projectRegistry`` and ``sessionUtils`` (read, not copied) and proven
with gemini 0.61.0 (``tests/e2e/test_gemini_live.py``).

Where: ``<home>/.gemini/tmp/<slug>/chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of id>.jsonl``, where
``home`` is ``$GEMINI_CLI_HOME`` or the home folder and ``slug`` the project's short name:
the one ``<home>/.gemini/projects.json`` maps the project folder to, else the folder under
``tmp/`` whose ``.project_root`` names it, else the project folder's base name made
``[a-z0-9-]`` (``-1``, ``-2``… when another project owns it), whose ``.project_root`` is then
written (Gemini CLI adopts a folder so marked and records it in ``projects.json`` itself).
Opened by ``gemini --resume <id>`` in the project folder.

What: the metadata line (``sessionId``, ``projectHash``: SHA-256 hex of the project path,
``startTime``, ``lastUpdated``, ``kind: main``, and ``continuityResume``), then one record a
message: the preamble and each user turn as a ``user`` message (``content``: text parts), each
assistant turn as a ``gemini`` message (``content``: its text; ``toolCalls``: ``{id, name,
args, result: [functionResponse], status}``) and its results inside those calls. No separate
``user`` echo of the results (Gemini CLI 0.61.0 writes one, and its resume then sends two
``functionResponse`` parts for one call, which the Gemini API refuses): Gemini CLI rebuilds the
model turn from ``toolCalls`` and answers every call from its ``result``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from continuity.resume import files
from continuity.resume.convert import Call, Result, Resumed, Turn

TARGET = "gemini-cli"
#: The variable naming this harness's home folder (the folder holding ``.gemini``).
HOME_VARIABLE = "GEMINI_CLI_HOME"
PROJECT_ROOT_FILE = ".project_root"
_NOT_SLUG = re.compile(r"[^a-z0-9]")


def harness_home(env: Mapping[str, str], override: Path | None = None) -> Path:
    """The folder holding ``.gemini``: ``override``, else ``$GEMINI_CLI_HOME``, else home."""
    return files.harness_home(env, override, HOME_VARIABLE)


def _slugify(name: str) -> str:
    slug = re.sub(r"-+", "-", _NOT_SLUG.sub("-", name.lower())).strip("-")
    return slug or "project"


def _owner(folder: Path) -> str | None:
    try:
        return (folder / PROJECT_ROOT_FILE).read_text("utf-8").strip()
    except OSError:
        return None


def project_folder(home: Path, project: str) -> Path:
    """``<home>/.gemini/tmp/<slug>/chats`` (module docstring); marks a newly claimed slug's
    folder with ``.project_root``. Raises ``ValueError`` when that marker cannot be written."""
    gemini = home / ".gemini"
    path = os.path.abspath(project)
    try:
        known = json.loads((gemini / "projects.json").read_text("utf-8")).get("projects")
    except (OSError, ValueError, AttributeError):
        known = None
    slug = known.get(path) if isinstance(known, dict) else None
    if isinstance(slug, str) and _owner(gemini / "tmp" / slug) in (None, path):
        return gemini / "tmp" / slug / "chats"
    tmp = gemini / "tmp"
    if tmp.is_dir():
        for folder in sorted(tmp.iterdir()):
            if _owner(folder) == path:
                return folder / "chats"
    base = _slugify(os.path.basename(path) or "project")
    taken = set(known.values()) if isinstance(known, dict) else set()
    counter = 0
    while True:
        slug = base if counter == 0 else f"{base}-{counter}"
        owner = _owner(tmp / slug)
        if owner == path or (owner is None and slug not in taken):
            break
        counter += 1
    try:
        (tmp / slug).mkdir(parents=True, exist_ok=True)
        if owner is None:
            (tmp / slug / PROJECT_ROOT_FILE).write_text(path, "utf-8")
    except OSError as exc:
        raise ValueError(f"cannot mark {tmp / slug} for {path}: {exc.strerror or exc}") from None
    return tmp / slug / "chats"


def stamp(moment: datetime) -> str:
    """``moment`` (UTC) as ``YYYY-MM-DDTHH:MM:SS.mmmZ``, as Gemini CLI and Qwen Code stamp."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def file_name(session_id: str, now: datetime) -> str:
    """``session-<YYYY-MM-DDTHH-MM>-<first 8 characters of the id>.jsonl``."""
    return f"session-{now.strftime('%Y-%m-%dT%H-%M')}-{session_id[:8]}.jsonl"


def render(resumed: Resumed, session_id: str, now: datetime) -> list[dict[str, Any]]:
    """The session file's lines (module docstring); timestamps from ``now`` (UTC)."""
    src = resumed.source
    clock = [now]

    def tick() -> str:
        clock[0] += timedelta(milliseconds=1)
        return stamp(clock[0])

    lines: list[dict[str, Any]] = [
        {
            "sessionId": session_id,
            "projectHash": hashlib.sha256(os.path.abspath(src.project).encode()).hexdigest(),
            "startTime": stamp(now),
            "lastUpdated": stamp(now),
            "kind": "main",
            "continuityResume": {"session": src.key, "harness": src.harness, "path": src.path},
        }
    ]
    if resumed.preamble:
        lines.append(_user([resumed.preamble], tick()))
    turns = resumed.turns
    for i, turn in enumerate(turns):
        if turn.kind == "user":
            lines.append(_user(turn.texts(), tick()))
        elif turn.kind == "assistant":
            after = turns[i + 1] if i + 1 < len(turns) else None
            results = after.parts if after is not None and after.kind == "results" else []
            lines.append(_gemini(turn, results, tick()))
    lines[0]["lastUpdated"] = stamp(clock[0])
    return lines


def _user(texts: list[str], at: str) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "timestamp": at,
        "type": "user",
        "content": [{"text": t} for t in texts if t] or [{"text": ""}],
    }


def call_part(call: Call) -> dict[str, Any]:
    """A Gemini API ``functionCall`` part of ``call`` (Gemini CLI's and Qwen Code's)."""
    return {"functionCall": {"id": call.id, "name": call.name, "args": call.arguments}}


def response_part(call_id: str, name: str, result: Result | None) -> dict[str, Any]:
    """The Gemini API ``functionResponse`` part answering call ``call_id`` of tool ``name``:
    ``response`` ``{"output": text}``, ``{"error": text}`` for an error result (as Gemini CLI
    and Qwen Code record their own), ``{"output": ""}`` when ``result`` is None."""
    text = result.text if result is not None else ""
    failed = result is not None and result.is_error
    return {
        "functionResponse": {
            "id": call_id,
            "name": name,
            "response": {"error": text} if failed else {"output": text},
        }
    }


def _gemini(turn: Turn, results: list[Any], at: str) -> dict[str, Any]:
    by_call = {r.call_id: r for r in results}
    calls = []
    for call in turn.calls():
        result = by_call.get(call.id)
        calls.append(
            {
                "id": call.id,
                "name": call.name,
                "args": call.arguments,
                "result": [response_part(call.id, call.name, result)],
                "status": "error" if result is not None and result.is_error else "success",
                "timestamp": at,
            }
        )
    record: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "timestamp": at,
        "type": "gemini",
        "content": "\n\n".join(t for t in turn.texts() if t),
        "thoughts": [],
        "model": "continuity-resume",
    }
    if calls:
        record["toolCalls"] = calls
    return record


def command(session_id: str, path: Path, project: str) -> list[str]:
    """The command that opens the session (run in ``project``)."""
    return ["gemini", "--resume", session_id]


def headless(session_id: str, path: Path, project: str) -> list[str]:
    """One turn on the session without its interface (run in ``project``; the prompt last)."""
    return ["gemini", "--resume", session_id, "-p"]


def named(path: Path, session_id: str) -> bool:
    """Whether Gemini CLI finds session ``session_id`` at ``path`` (by the id's first 8
    characters at the end of the file name)."""
    return path.name.startswith("session-") and path.name.endswith(f"-{session_id[:8]}.jsonl")


def candidates(home: Path, folder: Path) -> list[Path]:
    """The files an identical earlier copy may be (issue 45 item 3: reused when intact)."""
    return sorted(folder.glob("session-*.jsonl"))


def new_id() -> str:
    """A new session id (a random UUID, as Gemini CLI's)."""
    return str(uuid.uuid4())
