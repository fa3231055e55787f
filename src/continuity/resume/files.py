"""Writing a resumed session file: whole or not at all, never over an existing file (issue 13).

``write_new(path, lines)`` writes the JSONL ``lines`` (dicts) to a temp file beside ``path``,
fsyncs it, and links it to ``path`` (``os.link`` fails when ``path`` exists, so an existing
session file is never replaced, not even by a race), then removes the temp name and fsyncs the
folder. Raises ``FileExistsError`` or ``OSError``; nothing half-written is ever visible.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any, Iterable, Mapping


from continuity.core.private import write_whole
from continuity.core.text import json_bytes

#: Session files are private to their user, as the harnesses write them.
FILE_MODE = 0o600


def jsonl(lines: Iterable[dict[str, Any]]) -> bytes:
    """``lines`` as JSONL bytes (compact JSON, UTF-8, one object per line; ``json_bytes``: a
    harness's integer beyond 64 bits is written as it was, issue 45 item 11)."""
    return b"".join(json_bytes(line) + b"\n" for line in lines)


def write_new(path: Path, lines: Iterable[dict[str, Any]]) -> None:
    """Write ``lines`` as a new file at ``path`` (module docstring). Its folder must exist."""
    write_whole(path, jsonl(lines), FILE_MODE, replace=False)  # FileExistsError: never over
    try:
        dfd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def harness_home(env: Mapping[str, str], override: Path | None, variable: str,
                 *default: str) -> Path:
    """A harness's home folder: ``override`` (``--target-home``), else the folder named by the
    harness's own variable ``variable`` in ``env``, else ``$HOME`` joined with ``default``;
    always absolute (a relative one is taken from the current folder, as the shell would)."""
    if override is not None:
        return Path(os.path.abspath(Path(override).expanduser()))
    if env.get(variable):
        return Path(os.path.abspath(Path(env[variable]).expanduser()))
    return Path(env.get("HOME") or os.path.expanduser("~")).joinpath(*default)


def uuid7() -> str:
    """A new RFC 9562 version-7 UUID (time-ordered, as Codex and pi name their sessions)."""
    import time

    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 68 & 0xFFF) << 64 \
        | 0b10 << 62 | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


__all__ = ["write_new", "jsonl", "uuid7", "harness_home", "FILE_MODE"]
