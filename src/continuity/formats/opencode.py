"""OpenCode sessions (issue 18, item 2): its storage read into per-session JSONL *mirrors* that
the ordinary importer then imports with ``OpenCodeReader``.

OpenCode keeps no transcript file. Its data folder (``$XDG_DATA_HOME/opencode``, by default
``~/.local/share/opencode``) holds one of two layouts, told apart by content, never by names
alone:

- **SQLite** (1.2 and later; 1.18.33 observed; Kilo CLI 7.7.7, an OpenCode fork, writes the
  same tables to ``kilo.db`` in ``~/.local/share/kilo``: ``KiloReader``): ``opencode.db`` with
  tables ``session``
  (``id``, ``parent_id``, ``directory``, ``title``, ``version``, ``time_updated``), ``message``
  and ``part`` (``id``, ``session_id`` / ``message_id``, ``time_created``, ``time_updated``,
  ``data``: the record's JSON). Detected by those tables and columns.
- **JSON files** (before 1.2): ``storage/session/<project>/<session id>.json``,
  ``storage/message/<session id>/<message id>.json``, ``storage/part/<message id>/<part
  id>.json``, each the record's JSON with its own ids (``sessionID``, ``messageID``); a file's
  modification time (ns) stands for its update time. Detected by session records holding
  ``id`` and ``version``.

``sync_mirrors(data_dir, mirror_root)`` appends to ``<mirror_root>/<session id>.jsonl`` every
record that is new or changed since the last sync. The cursor (``<session id>.cursor.json``:
an update time and the ids mirrored at or after it, ``_Cursor``) is the incremental cursor on
id and update time: only records updated since are read, a part OpenCode rewrote in place is
appended again, an unchanged one never. Lines are
appended and fsynced before the cursor is replaced (temp file + rename), so a crash at worst
appends a record twice, which the importer keeps as one row (an identical copy is a
duplicate, ``formats/repeats``); a changed copy is a new row of the same native id and the
newer one is in view.

Mirror lines (``{"type": "opencode.…"}``; each holds the record as OpenCode stored it):

- ``opencode.session``: ``session`` (the row or file);
- ``opencode.part``: ``part`` and ``message`` (the part's message, for its role and flags) and
  ``as`` (``"call"`` / ``"result"`` for a tool part, which is written as both);
- ``opencode.message``: ``message``, written after its parts (it carries how the turn ended).

Reading (``OpenCodeReader``): a user message's first typed text part (not ``synthetic``) is
the request; assistant ``text`` parts are messages, ``reasoning`` thinking; a tool part is a
call row and, once its state is ``completed`` or ``error``, a result row (same ``callID``);
the text of an assistant message marked ``summary`` (OpenCode's compaction) is a compaction;
``step-start``/``step-finish``/``snapshot``/``patch``/``agent``/``retry``/``compaction``
parts and the message records are events; an assistant message's ``finish`` / ``error`` is
its run-end hint. A session with a ``parent_id`` (a subagent's) is keyed
``<parent id>/<session id>``. Native ids: the part id (``<id>#result`` for a result), the
message id, ``<session id>#session``.

Over 600 lines: OpenCode's storage (message and part files, then its SQLite database) is read
into mirrors and the mirrors are read back by the reader; both halves follow the one storage
layout described at the top, and change together when OpenCode changes it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any, ClassVar

import orjson

from continuity.core.model import (
    CompactionInfo,
    Entry,
    EntryKind,
    Role,
    RunStatus,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.core.text import clean, object_at
from continuity.formats.base import FormatReader, str_field, text_of
from continuity.formats.jsonl import Line

HARNESS = "opencode"
DB_NAME = "opencode.db"
#: The SQLite database of each harness that stores sessions in OpenCode's layout: OpenCode's
#: own and Kilo's (the Kilo CLI is an OpenCode fork: ``kilo.db``, same tables; issue 42).
DB_NAMES = {DB_NAME: HARNESS, "kilo.db": "kilo"}
MIRROR_SUFFIX = ".jsonl"
CURSOR_SUFFIX = ".cursor.json"
#: Part types that hold no conversation (kept raw, counted as known).
EVENT_PARTS = frozenset(
    {"step-start", "step-finish", "snapshot", "patch", "agent", "retry", "compaction", "subtask"}
)
_FINISHED = ("stop", "end_turn", "length")


# ---------------------------------------------------------------------------- layouts


def layout(data_dir: str | os.PathLike[str]) -> str | None:
    """``"sqlite"`` or ``"json"`` when ``data_dir`` is an OpenCode data folder (or its
    ``storage`` folder) holding sessions in that layout, else None. Never raises."""
    root = Path(data_dir)
    if database(root) is not None:
        return "sqlite"
    storage = root / "storage" if (root / "storage").is_dir() else root
    sessions = storage / "session"
    if (storage / "message").is_dir() and sessions.is_dir():
        for path in sorted(sessions.glob("*/*.json"))[:5]:
            record = _read_json(path)
            if isinstance(record, dict) and "id" in record and "version" in record:
                return "json"
    return None


def database(data_dir: str | os.PathLike[str]) -> tuple[Path, str] | None:
    """``(the database, the harness that wrote it)`` of a data folder holding OpenCode's SQLite
    layout (``DB_NAMES``: ``opencode.db`` -> ``opencode``, ``kilo.db`` -> ``kilo``), else
    None. Never raises."""
    for name, harness in DB_NAMES.items():
        db = Path(data_dir) / name
        if db.is_file() and _is_opencode_db(db):
            return db, harness
    return None


def _is_opencode_db(db: Path) -> bool:
    try:
        with _connect(db) as conn:
            cols = {
                t: {r[1] for r in conn.execute(f"PRAGMA table_info({t})")}
                for t in ("session", "message", "part")
            }
    except sqlite3.Error:
        return False
    return (
        {"id", "directory", "version", "time_updated"} <= cols["session"]
        and {"id", "session_id", "time_updated", "data"} <= cols["message"]
        and {"id", "message_id", "time_updated", "data"} <= cols["part"]
    )


def _connect(db: Path) -> sqlite3.Connection:
    """Read-only: OpenCode's database is never written (WAL readers need no lock)."""
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5.0)


def _read_json(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def _loads(text: Any) -> Any:
    if isinstance(text, (str, bytes)):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
    return None


class _Source:
    """One layout's records (``margin``: 2 s in its update-time unit). ``sessions()``: each session
    record; ``changed(session,
    since)``: ``(messages, parts)`` whose update time is at or after ``since`` (every record
    when ``since`` is None); ``heads(ids)``: the message records of these ids. A record is a
    dict ``id``, ``time_created``, ``time_updated`` (ms; a JSON file's mtime in ns), ``data``
    (its JSON); a part also ``message_id``."""

    margin = 2_000

    def sessions(self) -> list[dict]:  # pragma: no cover - interface
        raise NotImplementedError

    def changed(self, session: dict, since: int | None) -> tuple[list[dict], list[dict]]:
        raise NotImplementedError  # pragma: no cover - interface

    def heads(self, ids: list[str]) -> list[dict]:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        pass


class _SqliteSource(_Source):
    """``opencode.db``, read in one read transaction (a consistent snapshot while OpenCode
    writes)."""

    def __init__(self, db: Path) -> None:
        self.conn = _connect(db)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("BEGIN")
        cols = {r[1] for r in self.conn.execute("PRAGMA table_info(part)")}
        self._part_where = (
            "session_id = ?"
            if "session_id" in cols
            else "message_id IN (SELECT id FROM message WHERE session_id = ?)"
        )

    def sessions(self) -> list[dict]:
        rows = self.conn.execute("SELECT * FROM session ORDER BY time_created, id").fetchall()
        return [{k: r[k] for k in r.keys()} for r in rows]  # noqa: SIM118 - a Row iterates values

    def _records(self, sql: str, args: tuple) -> list[dict]:
        out = []
        for row in self.conn.execute(sql, args):
            rec = dict(row)
            rec["data"] = _loads(rec["data"])
            out.append(rec)
        return out

    def changed(self, session: dict, since: int | None) -> tuple[list[dict], list[dict]]:
        floor = -1 if since is None else since
        messages = self._records(
            "SELECT id, time_created, time_updated, data FROM message WHERE session_id = ? "
            "AND time_updated >= ?",
            (session["id"], floor),
        )
        parts = self._records(
            "SELECT id, message_id, time_created, time_updated, data FROM part WHERE "
            f"{self._part_where} AND time_updated >= ?",
            (session["id"], floor),
        )
        return messages, parts

    def heads(self, ids: list[str]) -> list[dict]:
        out = []
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            out += self._records(
                "SELECT id, time_created, time_updated, data FROM message "
                f"WHERE id IN ({','.join('?' * len(chunk))})",
                tuple(chunk),
            )
        return out

    def close(self) -> None:
        self.conn.rollback()
        self.conn.close()


class _JsonSource(_Source):
    """``storage/`` JSON files; a file is read only when its mtime is at or after ``since``."""

    margin = 2_000_000_000  # ns

    def __init__(self, data_dir: Path) -> None:
        self.storage = data_dir / "storage" if (data_dir / "storage").is_dir() else data_dir

    @staticmethod
    def _record(path: Path, mtime: int | None = None) -> dict | None:
        data = _read_json(path)
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            return None
        t = object_at(data, "time")
        return {
            "id": data["id"],
            "time_created": t.get("created"),
            "time_updated": mtime if mtime is not None else path.stat().st_mtime_ns,
            "data": data,
        }

    def sessions(self) -> list[dict]:
        out = []
        for spath in sorted((self.storage / "session").glob("*/*.json")):
            rec = self._record(spath)
            if rec is None:
                continue
            data = rec["data"]
            out.append(
                {
                    "id": rec["id"],
                    "parent_id": data.get("parentID"),
                    "directory": data.get("directory"),
                    "title": data.get("title"),
                    "version": data.get("version"),
                    "time_created": rec["time_created"],
                    "time_updated": rec["time_updated"],
                    "data": data,
                }
            )
        return out

    def _fresh(self, folder: Path, since: int | None) -> list[tuple[Path, int]]:
        out = []
        for path in sorted(folder.glob("*.json")):
            try:
                mtime = path.stat().st_mtime_ns
            except OSError:
                continue
            if since is None or mtime >= since:
                out.append((path, mtime))
        return out

    def changed(self, session: dict, since: int | None) -> tuple[list[dict], list[dict]]:
        folder = self.storage / "message" / str(session["id"])
        messages = [
            r for r in (self._record(p, m) for p, m in self._fresh(folder, since)) if r is not None
        ]
        parts = []
        for mpath in sorted(folder.glob("*.json")):
            mid = mpath.stem
            for path, mtime in self._fresh(self.storage / "part" / mid, since):
                rec = self._record(path, mtime)
                if rec is not None:
                    rec["message_id"] = rec["data"].get("messageID") or mid
                    parts.append(rec)
        return messages, parts

    def heads(self, ids: list[str]) -> list[dict]:
        out = []
        for mid in ids:
            for path in self.storage.glob(f"message/*/{mid}.json"):
                rec = self._record(path)
                if rec is not None:
                    out.append(rec)
        return out


# ---------------------------------------------------------------------------- mirrors


def mirror_root(data_dir: str | os.PathLike[str], home: Path) -> Path:
    """Where the mirrors of the OpenCode data folder ``data_dir`` live in the workspace
    ``home``: ``<home>/sources/opencode/<first 16 hex of SHA-256 of its resolved path>``."""
    import hashlib

    digest = hashlib.sha256(os.fsencode(Path(data_dir).resolve())).hexdigest()[:16]
    return home / "sources" / "opencode" / digest


def mirror_path(mirror_root: str | os.PathLike[str], session_id: str) -> Path:
    """The mirror file of OpenCode session ``session_id`` under ``mirror_root`` (the id with
    any character but letters, digits, ``-_.`` replaced by ``_``, then ``MIRROR_SUFFIX``)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)
    return Path(mirror_root) / f"{safe}{MIRROR_SUFFIX}"


def sync_mirrors(
    data_dir: str | os.PathLike[str], mirror_root: str | os.PathLike[str]
) -> list[Path]:
    """Append what changed in the OpenCode data folder ``data_dir`` to the session mirrors
    under ``mirror_root`` (created ``0700``); returns every session's mirror path (changed or
    not), sorted. Only records updated at or after a session's cursor are read. Raises
    ``ValueError`` when ``data_dir`` holds no OpenCode layout and ``sqlite3.Error`` /
    ``OSError`` when it cannot be read."""
    kind = layout(data_dir)
    if kind is None:
        raise ValueError(
            f"{data_dir}: not an OpenCode data folder (no opencode.db and no "
            "storage/session records)"
        )
    root = Path(mirror_root)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    found = database(data_dir) if kind == "sqlite" else None
    harness = found[1] if found is not None else HARNESS
    source: _Source = _SqliteSource(found[0]) if found is not None else _JsonSource(Path(data_dir))
    out = []
    try:
        for session in source.sessions():
            out.append(_sync_one(mirror_path(root, str(session["id"])), session, source, harness))
    finally:
        source.close()
    return sorted(out)


class _Cursor:
    """A session mirror's cursor on update time and id: ``since`` and ``at``, the records
    mirrored with an update time at or after ``since`` (``"<kind>:<id>"`` → that time). A
    record is new or changed when its update time is at or after ``since`` and not the time
    ``at`` holds for it. ``since`` trails the newest time mirrored by ``margin`` (2 s in the
    layout's unit), so a write committed just after a newer one is still seen."""

    def __init__(self, path: Path, margin: int) -> None:
        self.path, self.margin = path, margin
        raw = _read_json(path) if path.exists() else None
        raw = raw if isinstance(raw, dict) else {}
        since, at = raw.get("since"), raw.get("at")
        self.since: int | None = since if isinstance(since, int) else None
        self.at: dict[str, int] = (
            {k: v for k, v in at.items() if isinstance(v, int)} if isinstance(at, dict) else {}
        )
        self.newest = max(self.at.values(), default=self.since)

    def fresh(self, kind: str, rec: dict) -> bool:
        t = rec.get("time_updated")
        t = t if isinstance(t, int) and not isinstance(t, bool) else 0
        key = f"{kind}:{rec['id']}"
        if (self.since is not None and t < self.since) or self.at.get(key) == t:
            return False
        self.at[key] = t
        self.newest = t if self.newest is None else max(self.newest, t)
        return True

    def save(self) -> None:
        since = None if self.newest is None else self.newest - self.margin
        keep = {k: v for k, v in self.at.items() if since is None or v >= since}
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, orjson.dumps({"since": since, "at": keep}))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)


def _sync_one(path: Path, session: dict, source: _Source, harness: str = HARNESS) -> Path:
    cursor = _Cursor(
        path.with_name(path.name[: -len(MIRROR_SUFFIX)] + CURSOR_SUFFIX), source.margin
    )
    lines: list[bytes] = []
    if cursor.fresh("session", session):
        record: dict[str, Any] = {"type": "opencode.session", "session": session}
        if harness != HARNESS:  # a fork's sessions (Kilo): its reader claims them
            record["harness"] = harness
        lines.append(orjson.dumps(record))
    messages, parts = source.changed(session, cursor.since)
    changed = {m["id"]: m for m in messages if cursor.fresh("message", m)}
    fresh_parts = [p for p in parts if cursor.fresh("part", p)]
    heads = dict(changed)
    missing = sorted({p["message_id"] for p in fresh_parts} - set(heads))
    heads.update({m["id"]: m for m in source.heads(missing)} if missing else {})
    by_message: dict[str, list[dict]] = {}
    for part in sorted(fresh_parts, key=lambda p: p["id"]):
        by_message.setdefault(part["message_id"], []).append(part)
    order = sorted(
        set(changed) | set(by_message),
        key=lambda mid: ((heads.get(mid) or {}).get("time_created") or 0, mid),
    )
    for mid in order:
        message = heads.get(mid) or {"id": mid, "data": {}}
        head = {k: message.get(k) for k in ("id", "time_created", "time_updated", "data")}
        for part in by_message.get(mid, []):
            pdata = object_at(part, "data")
            for view in ["call", "result"] if pdata.get("type") == "tool" else [None]:
                line: dict[str, Any] = {"type": "opencode.part", "part": part, "message": head}
                if view:
                    line["as"] = view
                lines.append(orjson.dumps(line))
        if mid in changed:
            lines.append(orjson.dumps({"type": "opencode.message", "message": message}))
    if lines:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, b"\n".join(lines) + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        cursor.save()
    elif not path.exists():
        path.touch(mode=0o600)
    return path


# ---------------------------------------------------------------------------- reader


class OpenCodeReader(FormatReader):
    """Reader of the OpenCode session mirrors (see the module docstring)."""

    harness: ClassVar[str] = HARNESS

    def __init__(self, path: str, head: list[dict], state: dict | None = None) -> None:
        super().__init__(path, head, state)
        #: The user message whose request is already taken (one request per message).
        self._request_message: str | None = None
        for obj in head:
            if isinstance(obj, dict) and obj.get("type") == "opencode.session":
                self._session(obj.get("session"))
                break
        self.restore(state)

    @classmethod
    def sniff(cls, head: list[dict]) -> bool:
        return (
            any(
                isinstance(o, dict)
                and (str_field(o, "type") or "").startswith("opencode.")
                and isinstance(o.get("session", o.get("part", o.get("message"))), dict)
                for o in head[:5]
            )
            and _fork(head) == cls.harness
        )

    def key_from_head(self, head: list[dict]) -> str | None:
        for obj in head:
            session = obj.get("session") if isinstance(obj, dict) else None
            if isinstance(session, dict) and isinstance(session.get("id"), str):
                parent = session.get("parent_id")
                if isinstance(parent, str) and parent:
                    return f"{parent}/{session['id']}"
                return session["id"]
        return None

    def state(self) -> dict[str, Any]:
        out = super().state()
        out["request_message"] = self._request_message
        out["agent_id"] = self._facts.agent_id
        return out

    def restore(self, state: dict[str, Any] | None) -> None:
        super().restore(state)
        if state:
            req = state.get("request_message")
            self._request_message = req if isinstance(req, str) else None
            agent = state.get("agent_id")
            if isinstance(agent, str) and agent:
                self._facts.agent_id = agent

    def _session(self, session: Any) -> None:
        if not isinstance(session, dict):
            return
        cwd = text_of(session.get("directory")) or None
        if cwd:
            self._facts.cwd = cwd
        title = text_of(session.get("title")).strip()
        if title:
            self._facts.title = title
        version = text_of(session.get("version"))
        if version:
            self._facts.version = version
        parent = session.get("parent_id")
        if isinstance(parent, str) and parent:
            self._facts.agent_id = text_of(session.get("id")) or "subagent"

    def read(self, line: Line) -> Entry | None:
        data = line.data or {}
        kind = str_field(data, "type") or ""
        entry = Entry(
            kind=EntryKind.OPAQUE,
            role=Role.SYSTEM,
            visible=False,
            type_name=clean(kind) or "<missing type>",
        )
        try:
            if kind == "opencode.session":
                session = data.get("session")
                self._session(session)
                entry.kind = EntryKind.EVENT
                entry.type_name = "session"
                if isinstance(session, dict):
                    entry.native_id = f"{text_of(session.get('id'))}#session"
                    entry.cwd = text_of(session.get("directory")) or None
            elif kind == "opencode.message":
                self._message(line, data.get("message"), entry)
            elif kind == "opencode.part":
                self._part(line, data, entry)
        except Exception as exc:  # noqa: BLE001 - never raise on odd input (formats.md §5.1)
            self.warn(line, f"unreadable {kind or 'record'}: {type(exc).__name__}: {exc}")
            entry.kind, entry.role, entry.blocks, entry.visible = (
                EntryKind.OPAQUE,
                Role.SYSTEM,
                (),
                False,
            )
            entry.is_request, entry.compaction, entry.run_end = False, None, None
        return entry

    def _message(self, line: Line, message: Any, entry: Entry) -> None:
        if not isinstance(message, dict):
            self.warn(line, "opencode.message without a message record")
            return
        data = object_at(message, "data")
        role = str_field(data, "role") or ""
        entry.kind, entry.type_name = EntryKind.EVENT, f"message/{clean(role) or '?'}"
        entry.native_id = text_of(message.get("id")) or None
        entry.timestamp = self._time(line, data, "message", "completed", "created")
        if role != "assistant":
            return
        error = data.get("error")
        finish = str_field(data, "finish") or ""
        if isinstance(error, dict):
            name = str_field(error, "name") or ""
            entry.run_end = RunStatus.INTERRUPTED if "Abort" in name else RunStatus.FAILED
            text = text_of(
                (error.get("data") or {}).get("message")
                if isinstance(error.get("data"), dict)
                else name
            )
            if text:
                entry.blocks = (TextBlock(text),)
        elif finish in _FINISHED:
            entry.run_end = RunStatus.FINISHED
        elif finish in ("error",):
            entry.run_end = RunStatus.FAILED

    def _time(self, line: Line, data: dict, where: str, *keys: str) -> Any:
        """The first epoch number among ``data["time"][key]`` for ``keys`` (``time_field``:
        one out of range, issue 45 item 1, is warned about naming ``<where>.time.<key>``, and
        gives no time)."""
        t = data.get("time")
        if not isinstance(t, dict):
            return None
        for key in keys:
            value = t.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return self.time_field(line, value, f"{where}.time.{key}")
        return None

    def _part(self, line: Line, line_data: dict, entry: Entry) -> None:
        part = line_data.get("part")
        message = line_data.get("message")
        if not isinstance(part, dict) or not isinstance(message, dict):
            self.warn(line, "opencode.part without its part or message record")
            return
        pdata = object_at(part, "data")
        mdata = object_at(message, "data")
        ptype = str_field(pdata, "type") or ""
        role = str_field(mdata, "role") or ""
        pid = text_of(part.get("id"))
        entry.native_id = pid or None
        entry.type_name = f"part/{clean(ptype) or '?'}"
        entry.timestamp = self._time(line, pdata, "part", "start", "end") or self._time(
            line, mdata, "message", "created"
        )
        cwd = mdata.get("path", {}).get("cwd") if isinstance(mdata.get("path"), dict) else None
        entry.cwd = text_of(cwd) or None
        if ptype in EVENT_PARTS:
            entry.kind = EntryKind.EVENT
            return
        if ptype == "text":
            text = text_of(pdata.get("text"))
            entry.kind, entry.visible = EntryKind.MESSAGE, True
            entry.blocks = (TextBlock(text),) if text else ()
            if role == "user":
                entry.role = Role.USER
                if pdata.get("synthetic") is True or pdata.get("ignored") is True:
                    entry.kind, entry.visible = EntryKind.CONTEXT, False
                elif text.strip() and self._request_message != message.get("id"):
                    entry.is_request = True
                    self._request_message = text_of(message.get("id"))
            elif mdata.get("summary") is True:
                entry.kind, entry.role = EntryKind.COMPACTION, Role.SYSTEM
                entry.compaction = CompactionInfo(summary=text, trigger="opencode")
            else:
                entry.role = Role.ASSISTANT
            return
        if ptype == "reasoning":
            text = text_of(pdata.get("text"))
            entry.kind, entry.role, entry.visible = EntryKind.MESSAGE, Role.ASSISTANT, True
            entry.blocks = (ThinkingBlock(text),) if text else ()
            if not text:
                entry.kind, entry.visible = EntryKind.EVENT, False
            return
        if ptype == "tool":
            self._tool(line, line_data.get("as"), pid, pdata, entry)
            return
        if ptype == "file":
            name = text_of(pdata.get("filename")) or text_of(pdata.get("url"))[:200]
            entry.kind, entry.visible = EntryKind.MESSAGE, True
            entry.role = Role.USER if role == "user" else Role.ASSISTANT
            entry.blocks = (TextBlock(f"[file {name} ({text_of(pdata.get('mime'))})]"),)
            return
        self.warn(line, f"unknown part type {ptype!r} kept raw")

    def _tool(self, line: Line, view: Any, pid: str, pdata: dict, entry: Entry) -> None:
        call_id = text_of(pdata.get("callID")) or pid
        state = object_at(pdata, "state")
        status = str_field(state, "status") or ""
        entry.kind, entry.visible = EntryKind.MESSAGE, True
        if view == "result":
            entry.native_id = f"{pid}#result"
            entry.type_name = "part/tool/result"
            if status not in ("completed", "error"):
                entry.kind, entry.visible = EntryKind.EVENT, False  # no result yet
                return
            text = text_of(state.get("output") if status == "completed" else state.get("error"))
            entry.role = Role.TOOL
            entry.blocks = (
                ToolResultBlock(call_id=call_id, is_error=status == "error", text=text),
            )
            return
        entry.role = Role.ASSISTANT
        entry.type_name = "part/tool/call"
        args = state.get("input")
        entry.blocks = (
            ToolCallBlock(
                id=call_id,
                name=text_of(pdata.get("tool")),
                arguments=args if isinstance(args, dict) else {},
            ),
        )
        if not isinstance(args, dict):
            self.warn(line, f"tool part {call_id} without an input object")


def _fork(head: list[dict]) -> str:
    """The harness a mirror's session line names (``harness``, written for a fork: Kilo),
    else OpenCode."""
    for obj in head[:5]:
        if isinstance(obj, dict) and obj.get("type") == "opencode.session":
            name = obj.get("harness")
            return name if isinstance(name, str) and name else HARNESS
    return HARNESS


class KiloReader(OpenCodeReader):
    """Kilo CLI sessions (issue 42): Kilo is an OpenCode fork whose ``kilo.db`` has OpenCode's
    tables, mirrored like OpenCode's (``sync_mirrors``; the session line names ``kilo``) and
    read by the same rules, as harness ``kilo``."""

    harness: ClassVar[str] = "kilo"
