"""Writing a resumed session file: whole or not at all, never over an existing file (issue 13).

``write_new(path, lines)`` writes the JSONL ``lines`` (dicts) to a temp file beside ``path``,
fsyncs it, and links it to ``path`` (``os.link`` fails when ``path`` exists, so an existing
session file is never replaced, not even by a race), then removes the temp name and fsyncs the
folder. Raises ``FileExistsError`` or ``OSError``; nothing half-written is ever visible.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

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


#: How far into a session file its first line is looked for (our first lines are small).
HEAD_BYTES = 65_536
#: How far into a candidate the fingerprint is looked for before anything else is read: our
#: first lines put the marker after a few short fields and the project folder (at most 4,096
#: bytes, twice in Claude Code's), so a harness's own session (a Codex rollout's first line
#: holds its whole instructions) costs one small read.
PEEK_BYTES = 16_384


def seal(lines: list[dict[str, Any]], extra: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``lines`` with ``extra`` added to the ``continuityResume`` marker of every line that
    carries it (top level or in ``payload``), and, on the first line only, ``body_sha256``:
    the SHA-256 (hex) of the bytes written after the first line (issue 45 item 3: a copy
    written earlier is reused only while those bytes are unchanged, ``intact``)."""
    out: list[dict[str, Any]] = []
    for line in lines:
        line = dict(line)
        holder = line if "continuityResume" in line else line.get("payload")
        if isinstance(holder, dict) and isinstance(holder.get("continuityResume"), dict):
            if holder is not line:
                holder = line["payload"] = dict(holder)
            holder["continuityResume"] = {**holder["continuityResume"], **extra}
        out.append(line)
    if out:
        first = out[0]
        holder = first if "continuityResume" in first else first.get("payload")
        if isinstance(holder, dict) and isinstance(holder.get("continuityResume"), dict):
            import hashlib

            holder["continuityResume"] = {
                **holder["continuityResume"],
                "body_sha256": hashlib.sha256(jsonl(out[1:])).hexdigest(),
            }
    return out


def intact(path: Path, fingerprint: str) -> bool:
    """Whether ``path`` is a copy ``resume`` wrote with ``fingerprint`` whose bytes after the
    first line are still those it wrote (``seal``): a regular file (not a link), the marker's
    ``fingerprint`` equal, ``body_sha256`` equal to the SHA-256 of the rest. A file the
    harness has since grown (the copy was continued), cut or edited is not."""
    import hashlib

    try:
        if path.is_symlink() or not path.is_file():
            return False
        with open(path, "rb") as fh:
            head = fh.read(PEEK_BYTES)
            if fingerprint.encode() not in head:
                return False
            head += fh.read(HEAD_BYTES - len(head))
            if b"\n" not in head:
                return False
            first, _, rest = head.partition(b"\n")
            digest = hashlib.sha256(rest)
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        line = orjson.loads(first)
    except (OSError, ValueError):
        return False
    if not isinstance(line, dict):
        return False
    marker = line.get("continuityResume")
    if marker is None and isinstance(line.get("payload"), dict):
        marker = line["payload"].get("continuityResume")
    return (
        isinstance(marker, dict)
        and marker.get("fingerprint") == fingerprint
        and marker.get("body_sha256") == digest.hexdigest()
    )


def find_intact(
    candidates: Iterable[Path], fingerprint: str, accept: Callable[[Path], bool] = lambda path: True
) -> Path | None:
    """The newest of ``candidates`` that is an ``intact`` copy with ``fingerprint`` and that
    ``accept`` takes, else None (issue 45 item 3: an identical resume reuses it)."""
    found = []
    for path in candidates:
        if intact(path, fingerprint) and accept(path):
            try:
                found.append((path.stat().st_mtime_ns, str(path), path))
            except OSError:
                continue
    return max(found)[2] if found else None


def harness_home(
    env: Mapping[str, str], override: Path | None, variable: str, *default: str
) -> Path:
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
    value = (
        (ms & ((1 << 48) - 1)) << 80
        | 0x7 << 76
        | (rand >> 68 & 0xFFF) << 64
        | 0b10 << 62
        | (rand & ((1 << 62) - 1))
    )
    return str(uuid.UUID(int=value))


__all__ = [
    "write_new",
    "jsonl",
    "uuid7",
    "harness_home",
    "seal",
    "intact",
    "find_intact",
    "FILE_MODE",
]
