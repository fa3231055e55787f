"""The OpenCode writer of ``continuity resume`` (issue 42 item 3).

Where: OpenCode 1.x keeps its sessions in its SQLite database (``opencode.db`` in its data
folder, ``$XDG_DATA_HOME/opencode`` or ``~/.local/share/opencode``), not in files it opens by
path. Its own way in is ``opencode import FILE``: the JSON document ``opencode export`` prints
(``{"info": <session>, "messages": [{"info": <message>, "parts": [<part>...]}]}``; observed with
1.18.33, which refuses a session without ``slug``). The copy is written to
``<data folder>/continuity-resume/<session id>.json`` and the command imports it, then opens
it: ``opencode import FILE && opencode --session ID`` (headless: ``opencode run --session ID
PROMPT``), so OpenCode's database is only ever written by OpenCode.

What: the session (a new id in OpenCode's form: ``ses_`` + 12 hex of the time, descending, + 14
base62; messages ``msg_`` and parts ``prt_`` ascending), ``projectID`` ``global`` (OpenCode's id
for a folder outside git; a session is opened by id all the same), a first user message holding
the preamble, then the turns: ``user`` messages with ``text`` parts; ``assistant`` messages
with ``step-start``, ``text`` and ``tool`` parts and a ``step-finish``. OpenCode keeps a call and
its result in one ``tool`` part (``state.status`` ``completed`` with ``output``, or ``error``
with ``error``), so each call carries the result ``convert`` paired with it. Assistant messages
name the model of OpenCode's config (``model``: ``provider/model`` in ``opencode.json`` of
``$XDG_CONFIG_HOME/opencode``), else placeholders.
"""

from __future__ import annotations

import json
import os
import secrets
import string
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from continuity.resume.convert import Resumed, Turn

TARGET = "opencode"

#: ``--target-home`` names the XDG data folder; OpenCode's is ``opencode`` inside it.
HOME_VARIABLE = "XDG_DATA_HOME"
FOLDER = "continuity-resume"
_BASE62 = string.digits + string.ascii_letters


def harness_home(env: Mapping[str, str], override: Path | None = None) -> Path:
    """OpenCode's data folder: ``<override>/opencode``, else ``$XDG_DATA_HOME/opencode``, else
    ``~/.local/share/opencode``; absolute."""
    if override is not None:
        return Path(os.path.abspath(Path(override).expanduser())) / "opencode"
    if env.get(HOME_VARIABLE):
        return Path(os.path.abspath(Path(env[HOME_VARIABLE]).expanduser())) / "opencode"
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".local" / "share" / "opencode"


def project_folder(home: Path, project: str) -> Path:
    """Where the copies go: ``<data folder>/continuity-resume`` (OpenCode reads it only
    through ``opencode import``)."""
    return home / FOLDER


def file_name(session_id: str, now: datetime) -> str:
    """``<session id>.json``."""
    return f"{session_id}.json"


class _Ids:
    """OpenCode's ids: ``prefix_`` + 12 hex (milliseconds × 4096 + a counter, 48 bits; the
    bits inverted for a descending id, as sessions are) + 14 base62."""

    def __init__(self, now: datetime) -> None:
        self.ms = int(now.timestamp() * 1000)
        self.count = 0

    def make(self, prefix: str, descending: bool = False) -> str:
        self.count += 1
        value = (self.ms * 0x1000 + self.count) & 0xFFFFFFFFFFFF
        if descending:
            value = ~value & 0xFFFFFFFFFFFF
        tail = "".join(secrets.choice(_BASE62) for _ in range(14))
        return f"{prefix}_{value:012x}{tail}"

    def tick(self) -> int:
        self.ms += 1
        return self.ms


def new_id() -> str:
    """A new session id in OpenCode's form."""
    return _Ids(datetime.now().astimezone()).make("ses", descending=True)


def _model(env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """``(provider, model)`` of OpenCode's global config (``model``), else placeholders."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".config"
    )
    for name in ("opencode.json", "config.json"):
        try:
            data = json.loads(Path(base, "opencode", name).read_text("utf-8"))
        except (OSError, ValueError):
            continue
        model = data.get("model") if isinstance(data, dict) else None
        if isinstance(model, str) and "/" in model:
            provider, _, name_ = model.partition("/")
            return provider, name_
    return "continuity", "resumed"


def render(resumed: Resumed, session_id: str, now: datetime) -> list[dict[str, Any]]:
    """The export document (module docstring) as the one line of the file."""
    src = resumed.source
    provider, model = _model()
    ids = _Ids(now)
    created = ids.ms
    messages: list[dict[str, Any]] = []
    last_user: list[str] = [""]

    def part(message_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"id": ids.make("prt"), "sessionID": session_id, "messageID": message_id, **body}

    def user(texts: list[str]) -> None:
        mid = ids.make("msg")
        last_user[0] = mid
        info = {
            "id": mid,
            "sessionID": session_id,
            "role": "user",
            "time": {"created": ids.tick()},
            "agent": "build",
            "model": {"providerID": provider, "modelID": model},
        }
        parts = [part(mid, {"type": "text", "text": t}) for t in texts] or [
            part(mid, {"type": "text", "text": ""})
        ]
        messages.append({"info": info, "parts": parts})

    user([resumed.preamble])
    turns = resumed.turns
    for i, turn in enumerate(turns):
        if turn.kind == "user":
            user(turn.texts())
        elif turn.kind == "assistant":
            after = turns[i + 1] if i + 1 < len(turns) else None
            results = (
                {r.call_id: r for r in after.parts} if after and after.kind == "results" else {}
            )
            messages.append(
                _assistant(
                    turn, results, session_id, last_user[0], src.project, ids, part, provider, model
                )
            )
    return [
        {
            "info": {
                "id": session_id,
                "slug": "continuity-resume",
                "projectID": "global",
                "directory": src.project,
                "title": f"Resumed from {src.harness} {src.key}"[:100],
                "version": "continuity",
                "time": {"created": created, "updated": ids.tick()},
            },
            "messages": messages,
            "continuityResume": {"session": src.key, "harness": src.harness, "path": src.path},
        }
    ]


def _assistant(
    turn: Turn,
    results: dict[str, Any],
    session_id: str,
    parent: str,
    project: str,
    ids: _Ids,
    part: Any,
    provider: str,
    model: str,
) -> dict[str, Any]:
    mid = ids.make("msg")
    start = ids.tick()
    parts = [part(mid, {"type": "step-start"})]
    for text in turn.texts():
        parts.append(part(mid, {"type": "text", "text": text}))
    for call in turn.calls():
        found = results.get(call.id)
        at = {"start": ids.tick(), "end": ids.tick()}
        text = found.text if found is not None else ""
        if found is not None and found.is_error:
            state = {"status": "error", "input": call.arguments, "error": text, "time": at}
        else:
            state = {
                "status": "completed",
                "input": call.arguments,
                "output": text,
                "title": call.name,
                "metadata": {},
                "time": at,
            }
        parts.append(
            part(mid, {"type": "tool", "tool": call.name, "callID": call.id, "state": state})
        )
    finish = "tool-calls" if turn.calls() else "stop"
    tokens = {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    parts.append(part(mid, {"type": "step-finish", "reason": finish, "cost": 0, "tokens": tokens}))
    info = {
        "id": mid,
        "sessionID": session_id,
        "role": "assistant",
        "parentID": parent,
        "mode": "build",
        "agent": "build",
        "path": {"cwd": project, "root": project},
        "cost": 0,
        "tokens": tokens,
        "modelID": model,
        "providerID": provider,
        "time": {"created": start, "completed": ids.tick()},
        "finish": finish,
    }
    return {"info": info, "parts": parts}


_OPEN = 'opencode import "$1" >/dev/null && exec opencode --session "$2"'
_RUN = 'opencode import "$1" >/dev/null && exec opencode run --session "$2" "$3"'


def command(session_id: str, path: Path, project: str) -> list[str]:
    """The command that imports the copy and opens it (run in ``project``)."""
    return ["sh", "-c", _OPEN, "sh", str(path), session_id]


def headless(session_id: str, path: Path, project: str) -> list[str]:
    """The command that imports the copy and runs one turn on it (the prompt is its last
    argument)."""
    return ["sh", "-c", _RUN, "sh", str(path), session_id]


def named(path: Path, session_id: str) -> bool:
    """Whether ``path`` is the copy of session ``session_id`` (its file name)."""
    return path.name == f"{session_id}.json"


def candidates(home: Path, folder: Path) -> list[Path]:
    """Earlier copies: none are reused (the first line holds no session id ``_session_id``
    reads), so a resume always writes a new one."""
    return []
