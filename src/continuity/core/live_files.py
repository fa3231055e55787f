"""The session files a running daemon captures live (issue 45 item 10).

The daemon imports a live session's transcript file at every prompt and settled turn and
captures its transcript itself, appending the new rows' records (``transcripts.FileState``).
Its ``watch`` child, archiving the same folders, used to import those files too and capture
them again, rewriting the harness's whole canonical JSONL each time and changing the row the
daemon had just written, so the daemon's next capture had to rewrite the file as well. The
daemon therefore publishes the files of its live sessions in ``<workspace>/live-files.json``
(``{"pid": <daemon pid>, "files": [absolute paths]}``, written whole, mode 0600) whenever the
set changes, and the archiver leaves them to it (``captured_live``). A list whose daemon is
gone, or that cannot be read, names nothing: archiving then takes every file again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import orjson

from continuity.core.config import resolve_home
from continuity.core.private import private_dir, write_whole

FILE_NAME = "live-files.json"


def live_files_path(home: str | os.PathLike[str] | None) -> Path:
    """``<workspace>/live-files.json``."""
    return resolve_home(home) / FILE_NAME


def publish(home: str | os.PathLike[str] | None, files: Iterable[str]) -> None:
    """Write the list of the live sessions' files of this process (the daemon), whole.
    Raises ``OSError`` when it cannot be written."""
    data = {"pid": os.getpid(), "files": sorted({os.path.abspath(f) for f in files})}
    path = live_files_path(home)
    private_dir(path.parent)
    write_whole(path, orjson.dumps(data), 0o600)


def captured_live(home: str | os.PathLike[str] | None) -> frozenset[Path]:
    """The files a running daemon of workspace ``home`` captures live; empty when there is no
    list, it cannot be read or parsed, or the process that wrote it is gone. Paths resolved
    (symbolic links followed)."""
    try:
        data = orjson.loads(live_files_path(home).read_bytes())
        pid, files = int(data["pid"]), data["files"]
        os.kill(pid, 0)  # raises when no such process
    except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        return frozenset()
    return frozenset(Path(f).resolve() for f in files if isinstance(f, str))
