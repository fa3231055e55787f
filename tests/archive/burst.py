"""Small Claude Code session files in bulk (issue 18: a burst of 10,000 files), each a whole
turn of 4 lines: a prompt, a tool call, its result, the answer. Session ``i`` has the id
``uuid.UUID(int=i + 1)``, its 4 rows distinct ids, and lies under one of 50 project folders."""

from __future__ import annotations

import json
import uuid
from pathlib import Path


def session_lines(i: int) -> list[str]:
    """The 4 JSONL lines of session ``i``."""
    key = str(uuid.UUID(int=i + 1))
    cwd = f"/srv/burst/p{i % 50}"
    ids = [str(uuid.UUID(int=(i + 1) * 16 + k)) for k in range(4)]
    ts = "2026-11-01T10:00:0{}.000Z"
    base = {
        "sessionId": key,
        "cwd": cwd,
        "version": "2.1.332",
        "isSidechain": False,
        "userType": "external",
    }
    call = f"toolu_{i:08d}"
    msgs = [
        ("user", {"role": "user", "content": f"burst prompt {i}: list the files"}),
        (
            "assistant",
            {
                "id": f"msg_{i}a",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [
                    {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "ls"}}
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 5, "output_tokens": 9},
            },
        ),
        (
            "user",
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call, "content": "README.md"}],
            },
        ),
        (
            "assistant",
            {
                "id": f"msg_{i}b",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [{"type": "text", "text": f"one file, run {i}"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 5, "output_tokens": 9},
            },
        ),
    ]
    out = []
    for k, (kind, message) in enumerate(msgs):
        out.append(
            json.dumps(
                {
                    **base,
                    "type": kind,
                    "uuid": ids[k],
                    "parentUuid": ids[k - 1] if k else None,
                    "timestamp": ts.format(k),
                    "message": message,
                }
            )
        )
    return out


def write_sessions(projects: Path, count: int, start: int = 0) -> list[Path]:
    """Write sessions ``start .. start + count - 1`` under ``projects``; returns their paths."""
    paths = []
    for i in range(start, start + count):
        folder = projects / f"-srv-burst-p{i % 50}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{uuid.UUID(int=i + 1)}.jsonl"
        path.write_text("\n".join(session_lines(i)) + "\n")
        paths.append(path)
    return paths
