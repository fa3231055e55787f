"""The lossless record of a LangGraph thread's messages as a continuity session (issue 46
item 2): ``ThreadRecorder.record`` appends each message of the state's ``messages`` channel
that the thread's record does not hold yet (or holds with other content) to the thread's
record file, ``<home>/sources/langgraph/<sha256(thread_id)[:32]>.jsonl`` (owner-only, each
append fsynced), in the line format of ``continuity.formats.langgraph``, then imports the file
through ``archive.ingest`` (the ``continuity import`` path: rows, checkpoint replay,
transcripts), so ``continuity sessions``, ``search`` and ``continue`` see the conversation.

Appends to one thread's file are serialised between threads (a lock) and processes (``flock``
on the file); what a file holds is read once per process and then only what was appended
since. A crash between the append and the import loses nothing: the next record of the
thread, in any process, imports what the file holds beyond what was imported.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from continuity.core.errors import ContinuityError
from continuity.core.private import private_dir, private_open
from continuity.formats.langgraph import MARKER

if TYPE_CHECKING:
    from continuity.store import SqlStore

log = logging.getLogger(__name__)

#: the version written in every line's ``langgraph`` field
FORMAT_VERSION = 1


def message_dict(message: Any) -> dict[str, Any] | None:
    """LangChain's dict of ``message`` (``{"type": ..., "data": {...}}``,
    ``langchain_core.messages.message_to_dict``); a value that is not a message (a string, a
    ``(role, text)`` pair, an OpenAI-style dict) is converted as LangGraph's ``add_messages``
    converts it; None for a value that is no message at all."""
    from langchain_core.messages import BaseMessage, convert_to_messages, message_to_dict

    if not isinstance(message, BaseMessage):
        try:
            message = convert_to_messages([message])[0]
        except (ValueError, TypeError, NotImplementedError, KeyError):
            return None
    return message_to_dict(message)


def _digest(message: dict[str, Any]) -> str:
    return hashlib.sha256(
        orjson.dumps(message, option=orjson.OPT_SORT_KEYS, default=str)
    ).hexdigest()


def _key(message: dict[str, Any], index: Any) -> str:
    """A message's identity in its thread: its id, else its place in the state's list."""
    data = message.get("data")
    native = data.get("id") if isinstance(data, dict) else None
    return native if isinstance(native, str) and native else f"#{index}"


class ThreadRecorder:
    """Records the messages of LangGraph threads into the workspace ``home`` and imports them
    into ``store`` (module docstring). Thread-safe."""

    def __init__(self, store: SqlStore, home: Path) -> None:
        self.store = store
        self.home = home
        self.folder = home / "sources" / "langgraph"
        self._lock = threading.Lock()
        #: per record file: (bytes read, {message key: digest}) of what the file holds
        self._held: dict[Path, tuple[int, dict[str, str]]] = {}
        #: per record file: its size when this process last imported it
        self._imported: dict[Path, int] = {}
        self._config: Any = None

    def path(self, thread_id: str) -> Path:
        """The record file of ``thread_id`` (its name hashes the id: any id is a safe name)."""
        name = hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.folder / f"{name}.jsonl"

    def record(self, thread_id: str, checkpoint_id: str, messages: Sequence[Any]) -> int:
        """Append the messages of ``messages`` (the ``messages`` channel's value at checkpoint
        ``checkpoint_id``) that the record lacks or holds with other content, then import the
        record; the number of lines appended. A failed import is logged (the lines stay in
        the file and the next record imports them); an unwritable workspace raises
        ``OSError``."""
        path = self.path(thread_id)
        with self._lock:
            private_dir(self.folder)
            fd = private_open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                held = self._read_new(path, fd)
                lines = self._new_lines(thread_id, checkpoint_id, messages, held)
                if lines:
                    os.write(fd, b"".join(lines))
                    os.fsync(fd)
                size = os.fstat(fd).st_size
                self._held[path] = (size, held)
                if self._imported.get(path) != size:
                    self._import(path)
                    self._imported[path] = size
            finally:
                os.close(fd)  # releases the flock
        return len(lines)

    def _read_new(self, path: Path, fd: int) -> dict[str, str]:
        """What the file holds ({message key: digest of its last line}), read from where this
        process last read it."""
        start, held = self._held.get(path, (0, {}))
        size = os.fstat(fd).st_size
        if size < start:  # cut shorter by hand: read it again whole
            start, held = 0, {}
        if size == start:
            return held
        data = os.pread(fd, size - start, start)
        for raw in data.split(b"\n"):
            try:
                line = orjson.loads(raw) if raw.strip() else None
            except orjson.JSONDecodeError:
                continue  # a torn line: the importer reports it; its message is written again
            if isinstance(line, dict) and isinstance(line.get("message"), dict):
                held[_key(line["message"], line.get("index"))] = _digest(line["message"])
        return held

    def _new_lines(
        self, thread_id: str, checkpoint_id: str, messages: Sequence[Any], held: dict[str, str]
    ) -> list[bytes]:
        now = datetime.now(UTC).isoformat()
        cwd = os.getcwd()
        out = []
        for index, value in enumerate(messages):
            message = message_dict(value)
            if message is None:
                continue
            key, digest = _key(message, index), _digest(message)
            if held.get(key) == digest:
                continue
            held[key] = digest
            out.append(
                orjson.dumps(
                    {
                        MARKER: FORMAT_VERSION,
                        "thread_id": thread_id,
                        "checkpoint_id": checkpoint_id,
                        "index": index,
                        "recorded_at": now,
                        "cwd": cwd,
                        "message": message,
                    },
                    default=str,
                )
                + b"\n"
            )
        return out

    def _import(self, path: Path) -> None:
        from continuity.archive.ingest import ingest
        from continuity.checkpoints import load_config

        try:
            if self._config is None:
                self._config = load_config(self.home)
            result = ingest(self.store, [path], config=self._config, home=self.home)
        except ContinuityError as exc:
            log.warning("langgraph record %s not imported: %s", path, exc)
            return
        for report in result.report.files:
            if report.status == "failed":
                log.warning("langgraph record %s not imported: %s", path, report.reason)
