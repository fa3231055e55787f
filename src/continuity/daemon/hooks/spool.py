"""The spool: a durable, append-only inbox of hook events under ``<home>/spool/``.

**Writing** (``append``; standard library only, used by the hook command). One event is one JSONL
line, written with a single ``write`` on an ``O_APPEND`` file while holding ``flock`` on
``spool/.lock``, then ``fsync``ed (and the folder fsync'd when the file was created), so an
acknowledged line survives a crash. Two shapes, both with ``v`` (1), ``id`` (the event id),
``at`` (ISO-8601 UTC, milliseconds) and ``event`` (``session-start`` …):

- ``{"harness": "claude-code", "payload_b64": "…"}``: a harness's hook stdin, kept byte for byte
  (base64), written by the hook command when the daemon could not take it;
- ``{"body": {…}}``: one of our endpoint bodies, journaled by the daemon itself before it
  acknowledges deferred work (a session end).

**Replaying** (``drain``; the daemon). Under the lock, ``events.jsonl`` is renamed to
``replay-<ns>-<pid>.jsonl`` (new events start a fresh file), then each replay file is read in
order; each event's id is appended to ``<file>.done`` (fsync'd) after its handler returned, so a
restart resumes after the last finished event. A crash between a handler's work and its done
mark hands that one event to the handler again: the daemon's handler applies it once all the
same (issue 21: its id commits in ``applied_events`` with the rows it writes, and a replayed
id found there is skipped; ``live.LiveCapture.handle``). ``core.faults.crash_point`` marks the
steps (``spool-rotated``, ``replay-before-apply``, ``replay-after-apply``,
``replay-after-mark``) where a crash test kills the process. A line that is not a valid
record, or that the handler rejects as bad input (``RejectedEvent``), goes to ``rejected.jsonl``
with its reason: reported, never retried, never lost. The hook command records there too what
it refused or the daemon rejected (``reject_event``; ``"source": "hook"``). So does an event whose handler raises a
non-transient error (``transient``: anything but an ``OSError`` or a database-unavailable
error), so one bad event never blocks the others. A transient error stops the drain; that event
is retried on the next drain, before anything after it.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time

from continuity.core.faults import crash_point
from continuity.core.private import private_dir, private_open

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing ``typing`` would cost the hook command ~10 ms
    from collections.abc import Callable
    from typing import Any

SPOOL_DIR = "spool"
EVENTS_FILE = "events.jsonl"
LOCK_FILE = ".lock"
REJECTED_FILE = "rejected.jsonl"
REPLAY_PREFIX = "replay-"
#: The events a spool line may name (the ``/api/hooks/*`` endpoints, and
#: ``continuation-refused``: a refusal pi's extension reported while no daemon answered, as a
#: body line for ``/api/continuation/refused``, issue 14).
EVENTS = (
    "session-start",
    "user-prompt-submit",
    "pre-compaction",
    "post-compaction",
    "stop",
    "session-end",
    "continuation-refused",
)
HARNESSES = ("claude-code", "codex", "pi", "opencode", "gemini-cli", "qwen-code", "copilot-cli")
#: Events never spooled (a question: nobody would read a late answer) whose refused input is
#: still recorded in the rejected log by ``native_line`` (issue 45: pre-tool-use's bad JSON
#: was dropped without a line); ``SpooledEvent.parse`` refuses them, so none is replayed.
RECORD_ONLY_EVENTS = ("pre-tool-use",)


def fast_home() -> str:
    """The workspace folder as ``continuity.core.config.resolve_home`` finds it without ``--home``
    (``$CONTINUITY_HOME``, else the platform's user data folder), importing nothing heavy:
    Linux ``$XDG_DATA_HOME/continuity`` or ``~/.local/share/continuity``, macOS
    ``~/Library/Application Support/continuity``; elsewhere ``platformdirs`` decides."""
    home = os.environ.get("CONTINUITY_HOME")
    if home:
        return os.path.expanduser(home)
    if sys.platform.startswith("linux"):
        base = os.environ.get("XDG_DATA_HOME", "").strip() or os.path.expanduser("~/.local/share")
        return os.path.join(base, "continuity")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Application Support/continuity")
    from platformdirs import user_data_dir  # pragma: no cover - other platforms

    return user_data_dir("continuity", appauthor=False)  # pragma: no cover


def iso_now() -> str:
    """Now as ISO-8601 UTC with milliseconds (``2026-09-01T08:00:02.503Z``)."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


def new_event_id() -> str:
    """A random event id: 32 hex characters."""
    return os.urandom(16).hex()


def native_line(event_id: str, at: str, harness: str, event: str, payload: bytes) -> bytes:
    """The spool line of a harness's raw hook stdin. Raises ``ValueError`` for a harness or
    event outside ``HARNESSES``/``EVENTS`` (or ``RECORD_ONLY_EVENTS``, for the rejected log)
    (so no value here ever needs JSON escaping)."""
    import binascii

    if harness not in HARNESSES or (event not in EVENTS and event not in RECORD_ONLY_EVENTS):
        raise ValueError(f"unknown harness {harness!r} or event {event!r}")
    if not all(c in "0123456789abcdef" for c in event_id) or len(event_id) > 64:
        raise ValueError(f"event id must be hex (got {event_id!r})")
    b64 = binascii.b2a_base64(payload, newline=False).decode("ascii")
    return (
        f'{{"v":1,"id":"{event_id}","at":"{at}","event":"{event}","harness":"{harness}",'
        f'"payload_b64":"{b64}"}}\n'
    ).encode("ascii")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Locked:
    """``flock`` on ``spool/.lock`` (released by the kernel if the holder dies); with a
    ``deadline`` (``time.monotonic()``), ``TimeoutError`` when the lock is still held then."""

    def __init__(self, folder: str, deadline: float | None = None) -> None:
        self.folder = folder
        self.deadline = deadline
        self.fd = -1

    def __enter__(self) -> _Locked:
        private_dir(self.folder)
        self.fd = os.open(os.path.join(self.folder, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o600)
        if self.deadline is None:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            return self
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() >= self.deadline:
                    os.close(self.fd)
                    raise TimeoutError("the spool is locked by another process") from None
                time.sleep(0.005)

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


#: flags of an append-only spool file (created 0600 by ``private_open``, issue 16)
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT


def spool_dir(home: str | os.PathLike[str]) -> str:
    """``<home>/spool``."""
    return os.path.join(os.fspath(home), SPOOL_DIR)


def append(
    home: str | os.PathLike[str], line: bytes, *, lock_deadline: float | None = None
) -> None:
    """Append one record line (ending in ``\\n``) durably: one write, then fsync, under the
    spool lock (waited for until ``lock_deadline``, ``time.monotonic()``, when given: the hook
    command's deadline). Raises ``OSError`` when the disk refuses it, ``TimeoutError`` when
    the lock stays held past ``lock_deadline``."""
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        raise ValueError("a spool record is exactly one line ending in \\n")
    folder = spool_dir(home)
    with _Locked(folder, lock_deadline):
        path = os.path.join(folder, EVENTS_FILE)
        created = not os.path.exists(path)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            _write_all(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            _fsync_dir(folder)


# ---------------------------------------------------------------------------- the daemon's side


class RejectedEvent(Exception):
    """Raised by a drain handler for an event that can never succeed (bad input): the event
    goes to ``rejected.jsonl`` with this reason instead of being retried."""


class SpooledEvent:
    """One spool record: ``id``, ``at`` (ISO string), ``event``, and either ``harness`` +
    ``payload`` (raw hook stdin bytes) or ``body`` (one of our endpoint bodies)."""

    __slots__ = ("id", "at", "event", "harness", "payload", "body")

    def __init__(
        self,
        id: str,
        at: str,
        event: str,
        harness: str | None = None,
        payload: bytes | None = None,
        body: dict | None = None,
    ) -> None:
        self.id, self.at, self.event = id, at, event
        self.harness, self.payload, self.body = harness, payload, body

    @classmethod
    def parse(cls, line: bytes) -> SpooledEvent:
        """Parse a line. Raises ``ValueError`` naming what is wrong."""
        import binascii
        import json

        try:
            data = json.loads(line)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("v") != 1:
            raise ValueError("not a version-1 spool record")
        event_id, at, event = data.get("id"), data.get("at"), data.get("event")
        if not isinstance(event_id, str) or not event_id or not isinstance(at, str):
            raise ValueError("id and at must be non-empty strings")
        if event not in EVENTS:
            raise ValueError(f"event: unknown {event!r}")
        if isinstance(data.get("body"), dict):
            return cls(event_id, at, event, body=data["body"])
        harness = data.get("harness")
        if harness not in HARNESSES or not isinstance(data.get("payload_b64"), str):
            raise ValueError("needs a body, or a known harness and payload_b64")
        try:
            payload = binascii.a2b_base64(data["payload_b64"])
        except (binascii.Error, ValueError) as exc:
            raise ValueError(f"payload_b64: {exc}") from None
        return cls(event_id, at, event, harness=harness, payload=payload)


def body_line(event_id: str, at: str, event: str, body: dict) -> bytes:
    """The spool line journaling one of our endpoint bodies (the daemon's own deferred work)."""
    import json

    if event not in EVENTS:
        raise ValueError(f"unknown event {event!r}")
    record = {"v": 1, "id": event_id, "at": at, "event": event, "body": body}
    return json.dumps(record, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


class DrainReport:
    """What one ``drain`` did: events ``handled``, ``duplicates`` skipped (already done),
    ``rejected`` lines (with reasons in ``rejected.jsonl``), and ``error`` when it stopped at
    an event that failed (that event and the rest wait for the next drain)."""

    def __init__(self) -> None:
        self.handled = 0
        self.duplicates = 0
        self.rejected = 0
        self.error: str | None = None

    def to_dict(self) -> dict:
        return {
            "handled": self.handled,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "error": self.error,
        }


def pending(home: str | os.PathLike[str]) -> bool:
    """True when the spool holds events not yet replayed."""
    folder = spool_dir(home)
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return False
    if any(n.startswith(REPLAY_PREFIX) and n.endswith(".jsonl") for n in names):
        return True
    try:
        return os.path.getsize(os.path.join(folder, EVENTS_FILE)) > 0
    except FileNotFoundError:
        return False


def _rotate(folder: str) -> None:
    with _Locked(folder):
        path = os.path.join(folder, EVENTS_FILE)
        if os.path.exists(path) and os.path.getsize(path) > 0:
            name = f"{REPLAY_PREFIX}{time.time_ns():020d}-{os.getpid()}.jsonl"
            os.replace(path, os.path.join(folder, name))
            _fsync_dir(folder)
            crash_point("spool-rotated")


def _reject(
    folder: str, line: bytes | None, number: int | None, source: str, reason: str, **extra: object
) -> None:
    import json

    record = {
        "source": source,
        "line": number,
        "reason": reason,
        "record": None if line is None else line.decode("utf-8", "replace").rstrip("\n"),
        "at": iso_now(),
        **extra,
    }
    private_dir(folder)
    fd = private_open(os.path.join(folder, REJECTED_FILE), _APPEND)
    try:
        _write_all(fd, json.dumps(record, ensure_ascii=True).encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def reject_event(
    home: str | os.PathLike[str],
    line: bytes | None,
    reason: str,
    *,
    payload_bytes: int | None = None,
) -> None:
    """Record in ``rejected.jsonl`` an event the hook command refused or the daemon rejected
    (issue 16, issue 22: reported, never dropped without a word): ``{"source": "hook",
    "line": null, "reason", "record"}`` with ``record`` the event's whole spool line
    (``native_line``, the payload byte for byte), or null with ``payload_bytes`` for a
    payload too large to keep (never a truncated copy). Raises ``OSError``."""
    _reject(
        spool_dir(home),
        line,
        None,
        "hook",
        reason,
        **({} if payload_bytes is None else {"payload_bytes": payload_bytes}),
    )


#: Exception class names (anywhere in the class's MRO) of a database that is unavailable for
#: now: SQLAlchemy's and DB-API's ``OperationalError``, ``InterfaceError``,
#: ``DisconnectionError`` (named, not imported: this module stays standard-library only).
TRANSIENT_NAMES = frozenset(
    {"OperationalError", "InterfaceError", "DisconnectionError", "TimeoutError"}
)
#: Messages of a wrapped database-unavailable error (SQLite's "database is locked", a driver's
#: "could not connect" / "connection refused" / "server closed the connection").
TRANSIENT_MESSAGES = (
    "database is locked",
    "database is busy",
    "could not connect",
    "connection refused",
    "connection reset",
    "closed the connection",
    "database unavailable",
    "database is unavailable",
)


def transient(exc: BaseException) -> bool:
    """True when a replay error may go away by itself (a connection refused or reset, a
    database unavailable or locked, a disk error): the event is retried at the next drain,
    before anything after it. Anything else (a bug or an input the code cannot take, e.g.
    ``RecursionError``) would fail forever and block every later event, so it is set aside."""
    if isinstance(exc, (OSError, TimeoutError)):
        return True
    if any(cls.__name__ in TRANSIENT_NAMES for cls in type(exc).__mro__):
        return True
    message = str(exc).lower()
    return any(words in message for words in TRANSIENT_MESSAGES)


def drain(
    home: str | os.PathLike[str], handle: Callable[[SpooledEvent], None], *, log: Any = None
) -> DrainReport:
    """Replay every spooled event through ``handle(event: SpooledEvent)`` (module docstring).
    ``log`` (a ``logging.Logger``) gets one warning per rejected line and per failure."""
    folder = spool_dir(home)
    report = DrainReport()
    if not os.path.isdir(folder):
        return report
    _rotate(folder)
    files = sorted(
        n for n in os.listdir(folder) if n.startswith(REPLAY_PREFIX) and n.endswith(".jsonl")
    )
    for name in files:
        if not _drain_file(folder, name, handle, report, log):
            break
    return report


def _drain_file(
    folder: str, name: str, handle: Callable[[SpooledEvent], None], report: DrainReport, log: Any
) -> bool:
    path = os.path.join(folder, name)
    done_path = path + ".done"
    done: set[str] = set()
    if os.path.exists(done_path):
        with open(done_path, "rb") as fh:
            done = {line.strip().decode("ascii", "replace") for line in fh if line.strip()}
    with open(path, "rb") as src, os.fdopen(private_open(done_path, _APPEND), "ab") as marks:
        for number, line in enumerate(src, 1):
            try:
                event = SpooledEvent.parse(line)
            except ValueError as exc:
                _mark_rejected(
                    folder, line, number, name, str(exc), marks, f"line-{number}", done, report, log
                )
                continue
            if event.id in done:
                report.duplicates += 1
                continue
            crash_point("replay-before-apply")
            try:
                handle(event)
            except RejectedEvent as exc:
                _mark_rejected(
                    folder, line, number, name, str(exc), marks, event.id, done, report, log
                )
                continue
            except Exception as exc:  # noqa: BLE001 - sorted by transient()
                if not transient(exc):  # can never succeed: one bad event blocks nothing
                    _mark_rejected(
                        folder,
                        line,
                        number,
                        name,
                        f"{exc.__class__.__name__}: {exc}",
                        marks,
                        event.id,
                        done,
                        report,
                        log,
                    )
                    continue
                report.error = f"{name}:{number}: {exc.__class__.__name__}: {exc}"
                if log is not None:
                    log.warning("spool replay stopped at %s (will retry)", report.error)
                return False
            crash_point("replay-after-apply")
            _mark(marks, event.id, done)
            crash_point("replay-after-mark")
            report.handled += 1
    os.unlink(path)
    os.unlink(done_path)
    return True


def _mark(marks: Any, mark: str, done: set[str]) -> None:
    marks.write(mark.encode("ascii", "replace") + b"\n")
    marks.flush()
    os.fsync(marks.fileno())
    done.add(mark)


def _mark_rejected(
    folder: str,
    line: bytes,
    number: int,
    name: str,
    reason: str,
    marks: Any,
    mark: str,
    done: set[str],
    report: DrainReport,
    log: Any,
) -> None:
    if mark in done:
        report.duplicates += 1
        return
    _reject(folder, line, number, name, reason)
    _mark(marks, mark, done)
    report.rejected += 1
    if log is not None:
        log.warning("spool %s:%d rejected: %s", name, number, reason)


RECENT_IDS_FILE = "recent-ids.txt"


class RecentEvents:
    """The ids of the last ``size`` events applied, kept in memory and in
    ``<home>/spool/recent-ids.txt`` (one id a line, appended and flushed, not fsync'd: it must
    survive a daemon restart, and costs one small write per event), so an event delivered
    twice (the hook timed out and spooled what the daemon also did) is applied once, even
    across a restart. ``claim`` is an atomic check-and-reserve. Thread-safe."""

    def __init__(self, home: str | os.PathLike[str], size: int = 10_000) -> None:
        import threading
        from collections import OrderedDict

        self._lock = threading.Lock()
        self._size = size
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._claimed: set[str] = set()
        self._path = os.path.join(spool_dir(home), RECENT_IDS_FILE)
        lines = self._load()
        if len(lines) > 2 * size:  # compact once in a while, at start
            self._rewrite()

    def _load(self) -> list[str]:
        try:
            with open(self._path, "rb") as fh:
                lines = [line.strip().decode("ascii", "replace") for line in fh]
        except FileNotFoundError:
            return []
        for event_id in lines[-self._size :]:
            if event_id:
                self._ids[event_id] = None
        return lines

    def _rewrite(self) -> None:
        tmp = self._path + ".tmp"
        with os.fdopen(private_open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as fh:
            fh.write("".join(f"{i}\n" for i in self._ids).encode("ascii", "replace"))
        os.replace(tmp, self._path)

    def __contains__(self, event_id: object) -> bool:
        with self._lock:
            return event_id in self._ids or event_id in self._claimed

    def claim(self, event_id: str) -> bool:
        """Reserve ``event_id``: False when it was applied or is being applied already."""
        with self._lock:
            if event_id in self._ids or event_id in self._claimed:
                return False
            self._claimed.add(event_id)
            return True

    def release(self, event_id: str) -> None:
        """Give up a claim (its event failed; a retry may claim it again)."""
        with self._lock:
            self._claimed.discard(event_id)

    def add(self, event_id: str) -> None:
        """Remember ``event_id`` as applied (and persist it); ends its claim. The file is
        written after the lock is let go (issue 45 item 10: under load every hook thread
        queued on this lock while one held it through four system calls, each waiting for
        the GIL); one ``O_APPEND`` write of a whole line, so appends never interleave."""
        with self._lock:
            self._claimed.discard(event_id)
            if event_id in self._ids:
                return
            self._ids[event_id] = None
            while len(self._ids) > self._size:
                self._ids.popitem(last=False)
        try:
            private_dir(os.path.dirname(self._path))
            fd = private_open(self._path, _APPEND)
            try:
                os.write(fd, event_id.encode("ascii", "replace") + b"\n")
            finally:
                os.close(fd)
        except OSError:  # memory still answers duplicates until a restart
            pass
