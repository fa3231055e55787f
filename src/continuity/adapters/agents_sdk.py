"""The OpenAI Agents SDK ``Session`` backed by continuity (issue 46 item 2; extra ``agents``).

``ContinuitySession(session_id)`` implements the SDK's ``Session`` protocol
(``agents.memory.session.Session``: ``session_id``, ``session_settings``, async ``get_items``,
``add_items``, ``pop_item``, ``clear_session``), so ``Runner.run(agent, input,
session=ContinuitySession("chat-1"))`` keeps its history in continuity's workspace.

**The record is lossless.** Each call is appended, as one JSON line, to the session's own file
``<workspace>/agents-sdk/<session file>.jsonl`` (``formats/agents_sdk.py`` gives the line shapes):
every item ``add_items`` gets, exactly as given; ``pop_item`` and ``clear_session`` as lines of
their own that point the conversation past what they remove, so nothing is ever deleted. The
file is written under an exclusive ``flock``, ``fsync``'d, owner-only (``core.private``: folder
``0700``, file ``0600``). After each write the file is imported (``formats.import_paths``,
incremental: only its new lines), so ``continuity sessions``, ``show``, ``search`` and
``continue`` see the session as the SDK sees it, under harness ``openai-agents``.

The session keeps only where each live item's line starts and its size in memory; items are
read back from the file when ``get_items`` or ``pop_item`` returns them.

Why a file of our own rather than rows written straight into the store: the file is the
source every other harness gives continuity, so the one importer (raw lines kept, runs, the
search index, redaction at the edges) serves this session too, a store can be rebuilt from it,
and a write that reached the disk is never lost to a store error.

**get_items returns the bounded continuation** (seed 002, ``shared/spec/continuation.md``)
instead of the whole history. Sizes are UTF-8 bytes of the items as compact JSON
(``core.text.json_len``), against ``budget_bytes`` (default ``FOLLOW_UP_BUDGET_BYTES``,
240,000):

- when the conversation fits, exactly the items added (less those popped or cleared), in
  order, as equal dicts (fresh copies each call);
- when it does not: continuity's compaction and continuation measure rows in their view
  bytes, so the budget is first scaled to that unit (by how much larger the live items are
  than their rows: a reasoning item's ``encrypted_content`` is in the item, not the row);
  when the working view outgrows that, the compaction runs
  (``continuation.compaction.compact_now`` with the workspace's configured summarizer,
  ``[summarizer]`` in ``config.toml``; extractive and offline by default; at most once per
  run, and not while a call of the last run has no output: seed 002, B12); then
  ``continuation.view.build_continuation`` picks the newest summary, the previous request
  and the paired tail, and they come back as items: first a user message carrying the
  summary (quoted, labelled as earlier work, not as instructions), the named gap and the
  session's notes; then the items of the tail before the request, the request itself,
  the items after it, each the original dict. Every ``function_call`` comes with its
  output: a call whose output is outside the tail is left out, a call that never got one
  gets a ``function_call_output`` saying its effects are unknown (seed 002, step 7; the
  Responses API rejects an unanswered call or an output without its call). When the
  items, larger than their view rows, still exceed the budget, the oldest whole units
  (a call with its outputs) of the tail go first and the gap notice names them; the
  longest strings are clipped (head and tail kept, ``[… N bytes omitted …]``) only when
  one unit alone is over the budget.

Items come back as they were recorded, not redacted: they are the agent's own history, as an
``SQLiteSession`` would return them; the summary and everything continuity derives are redacted
(``redaction.funnel``).

Over 600 lines: the whole of one framework's adapter: the Session protocol, the record file and
the items-from-continuation mapping, whose pairing and budget rules must agree.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from continuity.continuation.compaction import compact_now, measure_view
from continuity.continuation.summarize import Summarizer
from continuity.continuation.view import Gap, build_continuation, gap_notice
from continuity.core.config import (
    FOLLOW_UP_BUDGET_BYTES,
    FOLLOW_UP_BUDGET_RANGE,
    database_url,
    resolve_home,
)
from continuity.core.errors import ContinuityError, FencedWrite
from continuity.core.keys import session_key
from continuity.core.model import EntryKind
from continuity.core.private import private_dir, private_open
from continuity.core.text import clip_middle, json_len, utf8_len
from continuity.formats.agents_sdk import HEADER_TYPE, VERSION, call_kind
from continuity.formats.importer import import_paths
from continuity.store import open_store_raw
from continuity.store.sql import SqlStore

log = logging.getLogger(__name__)

#: The folder of the workspace holding one session file per SDK session.
FOLDER = "agents-sdk"
#: Who holds a session's lease while its compaction runs (``store.fencing``).
LEASE_OWNER = "agents-sdk"
#: A ``session_id`` used as the file name as it is (longer or other ones are hashed).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
#: Strings at most this long (UTF-8 bytes) are never clipped.
_CLIP_FLOOR = 128


class ContinuationRefused(ContinuityError):
    """``get_items`` could not build the bounded continuation: ``reason`` is the closed reason
    of ``continuation.view.RefusalReason`` (``protected_context_over_budget``,
    ``incomplete_request``, ``source_read_failure``), ``detail`` says which part."""

    def __init__(self, session_id: str, reason: str, detail: str) -> None:
        super().__init__(f"session {session_id!r}: continuation refused ({reason}): {detail}")
        self.reason, self.detail = reason, detail


@dataclass
class _Live:
    """Where the conversation stands in the file, without the items themselves (memory stays
    small however long the session grows; items are read back by offset when needed):
    ``items`` ``(id, parent id, offset of its line, size)`` in order, ``size`` their UTF-8
    bytes as compact JSON (``json_len``) summed, the id of the last line (``leaf``), how many
    record lines there are (``count``, the next id's number) and how many bytes of the file
    were read (``offset``)."""

    items: list[tuple[str, str | None, int, int]] = field(default_factory=list)
    leaf: str | None = None
    count: int = 0
    offset: int = 0
    size: int = 0

    def apply(self, record: dict[str, Any], at: int = -1) -> None:
        """Take one record line (``item``, ``pop`` or ``clear``) in file order; ``at`` is the
        offset of its line."""
        rid = record.get("id")
        if not isinstance(rid, str):
            return
        kind = record.get("type")
        if kind == "item" and isinstance(record.get("item"), dict):
            size = json_len(record["item"])
            self.items.append((rid, record.get("parent_id"), at, size))
            self.size += size
        elif kind == "pop":
            self.size -= sum(t[3] for t in self.items if t[0] == record.get("pops"))
            self.items = [t for t in self.items if t[0] != record.get("pops")]
        elif kind == "clear":
            self.items, self.size = [], 0
        else:
            return
        self.leaf = rid
        self.count += 1

    def json_bytes(self) -> int:
        """``json_len`` of the list of the live items, from their sizes."""
        return 2 + self.size + max(0, len(self.items) - 1)


def session_file_name(session_id: str) -> str:
    """The file name of ``session_id``'s record: the id itself plus ``.jsonl`` when it is 1-100
    letters, digits, ``.``, ``_`` or ``-`` (first a letter or digit), else its safe characters
    (up to 60) and 16 hex digits of its SHA-256 (two ids never share a file)."""
    if _PLAIN_NAME.fullmatch(session_id):
        return f"{session_id}.jsonl"
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", session_id).strip(".-")[:60] or "session"
    digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{safe}-{digest}.jsonl"


class ContinuitySession:
    """An OpenAI Agents SDK session (``agents.memory.session.Session``) recorded in continuity.

    ``session_id``: the SDK's session id (a non-empty string; the stored session key follows
    ``core.keys.session_key``). ``home``: the workspace folder (default as the CLI resolves it:
    ``$CONTINUITY_HOME``, else the platform's data folder). ``database_url``: the store (default
    ``$CONTINUITY_DATABASE_URL``, else ``<home>/continuity.db``). ``budget_bytes``: the follow-up
    budget in UTF-8 bytes of compact JSON, within ``FOLLOW_UP_BUDGET_RANGE`` (default
    ``FOLLOW_UP_BUDGET_BYTES``, seed 002's 240,000). ``summarizer``: a
    ``continuation.summarize.Summarizer`` for the compaction (default: the workspace's
    ``[summarizer]``, built on first need). ``cwd``: the project folder recorded with the
    session (default: the current folder). ``session_settings``: the SDK's ``SessionSettings``
    or a dict of its fields (its ``limit`` is the default of ``get_items``).

    Raises ``ValueError`` naming ``session_id`` or ``budget_bytes`` when they are not usable,
    ``ConfigError`` for a bad workspace, ``StoreError`` when the store cannot be opened.
    The store is opened on first use and closed by ``close()``. Calls on one instance are
    serialised; several instances (or processes) may share a session: each write takes the
    file's lock and reads what others appended first.
    """

    def __init__(
        self,
        session_id: str,
        *,
        home: str | os.PathLike[str] | None = None,
        database_url: str | None = None,
        budget_bytes: int = FOLLOW_UP_BUDGET_BYTES,
        summarizer: Summarizer | None = None,
        cwd: str | None = None,
        session_settings: Any = None,
    ) -> None:
        if not isinstance(session_id, str) or not session_id.strip():
            raise ValueError(f"session_id: expected a non-empty string, got {session_id!r}")
        low, high = FOLLOW_UP_BUDGET_RANGE
        if (
            isinstance(budget_bytes, bool)
            or not isinstance(budget_bytes, int)
            or not low <= budget_bytes <= high
        ):
            raise ValueError(
                f"budget_bytes: expected a whole number of bytes from {low:,} to "
                f"{high:,}, got {budget_bytes!r}"
            )
        if isinstance(session_settings, dict):  # as SQLiteSession takes it: the SDK's type
            from agents.memory.session_settings import coerce_session_settings

            session_settings = coerce_session_settings(session_settings)
        self.session_id = session_id
        self.session_settings = session_settings
        self.budget_bytes = budget_bytes
        self.home = resolve_home(home)
        self.path = self.home / FOLDER / session_file_name(session_id)
        self.key = session_key(session_id)
        self._url = database_url
        self._summarizer = summarizer
        self._cwd = cwd if cwd is not None else os.getcwd()
        self._store: SqlStore | None = None
        self._lock = threading.RLock()
        self._live = _Live()

    # ------------------------------------------------------------------ the protocol

    async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The history the next model call gets (module docstring): every live item when the
        conversation fits ``budget_bytes``, else the bounded continuation. ``limit``: the
        newest ``limit`` of those items (default ``session_settings.limit``; None or a
        negative number: all of them; 0: none), in order, as the protocol defines. Raises
        ``ContinuationRefused`` when the continuation is refused (the summary and the
        request alone exceed the budget), ``StoreError`` when the store fails."""
        if limit is None and self.session_settings is not None:
            limit = getattr(self.session_settings, "limit", None)
        items = await asyncio.to_thread(self.items_now)
        if limit is None or limit < 0:
            return items
        return items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[dict[str, Any]]) -> None:
        """Record ``items`` (the SDK's input items: JSON objects) in order, each as its own line,
        then import them. Raises ``TypeError`` naming ``items[i]`` when one is not a dict or
        cannot be written as JSON (nothing of the call is recorded then), ``OSError`` when the
        file cannot be written."""
        if not items:
            return
        await asyncio.to_thread(self.add_now, list(items))

    async def pop_item(self) -> dict[str, Any] | None:
        """Remove the newest item from the conversation and return it (None when it has
        none). The item stays in the record: a ``pop`` line points the conversation past it."""
        return await asyncio.to_thread(self.pop_now)

    async def clear_session(self) -> None:
        """Empty the conversation (and drop its summaries from the continuation). The items
        stay in the record: a ``clear`` line starts the conversation anew."""
        await asyncio.to_thread(self.clear_now)

    # ------------------------------------------------------------------ synchronous forms

    def items_now(self) -> list[dict[str, Any]]:
        """``get_items()`` without a limit, synchronously."""
        with self._lock:
            self._read_new()
            if self._live.json_bytes() <= self.budget_bytes:
                return self._items_at([t[2] for t in self._live.items])
            return self._bounded()

    def add_now(self, items: list[dict[str, Any]]) -> None:
        """``add_items(items)``, synchronously."""
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise TypeError(
                    f"items[{i}]: expected a dict (an input item), got {type(item).__name__}"
                )
            try:
                orjson.dumps(item)
            except TypeError as exc:
                raise TypeError(f"items[{i}]: cannot be written as JSON: {exc}") from exc
        self._write([{"type": "item", "item": item} for item in items])

    def pop_now(self) -> dict[str, Any] | None:
        """``pop_item()``, synchronously."""
        with self._lock:
            popped = self._write([{"type": "pop"}])
        return popped

    def clear_now(self) -> None:
        """``clear_session()``, synchronously."""
        with self._lock:
            self._write([{"type": "clear"}])
            self._hide_summaries()

    def close(self) -> None:
        """Close the store (a later call opens it again)."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    # ------------------------------------------------------------------ the record

    def _read_new(self) -> None:
        """Apply the record lines appended since the last read (by this or another writer),
        line by line; an unfinished last line waits for the next read."""
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed by the with below; a missing file is no error
        except FileNotFoundError:
            return
        with fh:
            fh.seek(self._live.offset)
            for raw in fh:
                if not raw.endswith(b"\n"):
                    break
                at = self._live.offset
                self._live.offset += len(raw)
                try:
                    record = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    log.warning("%s: the line at byte %d is not JSON; skipped", self.path, at)
                    continue
                if isinstance(record, dict):
                    self._live.apply(record, at)

    def _items_at(self, offsets: list[int]) -> list[dict[str, Any]]:
        """The items of the record lines at these byte offsets, read back from the file (fresh
        dicts, equal to what ``add_items`` was given)."""
        if not offsets:
            return []
        out = []
        with open(self.path, "rb") as fh:
            for at in offsets:
                fh.seek(at)
                out.append(orjson.loads(fh.readline())["item"])
        return out

    def _write(self, records: list[dict[str, Any]]) -> dict[str, Any] | None:
        """Append ``records`` (``{"type": "item", "item": ...}``, ``{"type": "pop"}``,
        ``{"type": "clear"}``) under the file's lock, with ids, parents and times, fsync'd;
        then import the file. A pop of an empty conversation writes nothing. Returns the
        popped item (a copy) for a pop, else None."""
        import fcntl

        with self._lock:
            private_dir(self.path.parent)
            fd = private_open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            popped = None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._read_new()
                now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
                lines = []
                if os.fstat(fd).st_size == 0:
                    lines.append(
                        {
                            "type": HEADER_TYPE,
                            "version": VERSION,
                            "id": self.session_id,
                            "timestamp": now,
                            "cwd": self._cwd,
                        }
                    )
                live = _Live(list(self._live.items), self._live.leaf, self._live.count)
                live.size = self._live.size
                for record in records:
                    line = {"type": record["type"], "id": f"i{live.count}"}
                    if record["type"] == "item":
                        line["parent_id"] = live.leaf
                    elif record["type"] == "pop":
                        if not live.items:
                            continue
                        last_id, parent, at, _ = live.items[-1]
                        popped = self._items_at([at])[0]
                        # the popped item's parent: the path from the new leaf skips it
                        line["parent_id"], line["pops"] = parent, last_id
                    else:
                        line["parent_id"] = None
                    line["timestamp"] = now
                    if record["type"] == "item":
                        line["item"] = record["item"]
                    live.apply(line)
                    lines.append(line)
                if lines:
                    # a line a crashed writer left unfinished is ended first, so it stays one
                    # bad line (reported by the import, kept raw) and ours stay whole
                    cut = b"\n" if os.fstat(fd).st_size > self._live.offset else b""
                    os.write(fd, cut + b"".join(orjson.dumps(line) + b"\n" for line in lines))
                    os.fsync(fd)
            finally:
                os.close(fd)  # closing releases the lock
            self._read_new()
            if lines:
                self._import()
            return popped

    # ------------------------------------------------------------------ the store

    def store(self) -> SqlStore:
        """The workspace's store, opened (and migrated) on first use."""
        if self._store is None:
            self._store = open_store_raw(self._url or database_url(self.home))
        return self._store

    def _import(self) -> None:
        """Import the file's new lines. A failure is logged, not raised: the record is safe
        in the file and the next import (or ``continuity import``) takes it."""
        report = import_paths(self.store(), [self.path], home=self.home)
        for f in report.files:
            if f.session_key:
                self.key = f.session_key
            if f.status == "failed":
                log.warning("%s: import failed: %s", self.path, f.reason)

    def _hide_summaries(self) -> None:
        """Take the session's compaction rows off the conversation path (after a clear, the
        summary of the cleared items must not travel). The rows stay in the store."""
        store = self.store()
        if store.get_session(self.key) is None:
            return
        hidden, before = [], None
        while True:
            page = store.rows_meta(self.key, before_seq=before, limit=256)
            hidden += [m.seq for m in page if m.kind is EntryKind.COMPACTION]
            if len(page) < 256:
                break
            before = page[-1].seq
        if hidden:
            store.set_on_path(self.key, hidden, False)

    def _view_budget(self, store: SqlStore) -> int:
        """``budget_bytes`` in the unit of the rows' view bytes, which the compaction and the
        continuation measure: scaled down by how much larger the live items are than their
        rows (a reasoning item's ``encrypted_content``, an SDK message's ids and annotations
        travel in the item, not in its row), so the view outgrows its budget when the items
        outgrow theirs. Never below ``FOLLOW_UP_BUDGET_RANGE[0]``; ``_fit`` keeps the exact
        bound."""
        rows = store.view_bytes_after(self.key, -1)
        items = self._live.json_bytes()
        if rows <= 0 or items <= rows:
            return self.budget_bytes
        return max(FOLLOW_UP_BUDGET_RANGE[0], self.budget_bytes * rows // items)

    def _summarizer_now(self) -> Summarizer:
        if self._summarizer is None:
            from continuity.continuation.summarize import make_summarizer
            from continuity.continuation.summarize.settings import load_settings

            self._summarizer = make_summarizer(load_settings(self.home))
        return self._summarizer

    # ------------------------------------------------------------------ the continuation

    def _bounded(self) -> list[dict[str, Any]]:
        """The bounded continuation as items (module docstring)."""
        store, budget = self.store(), self.budget_bytes
        if store.get_session(self.key) is None:
            self._import()
        view_budget = self._view_budget(store)
        if measure_view(store, self.key).total > view_budget:
            try:
                compact_now(
                    store,
                    self.key,
                    summarizer=self._summarizer_now(),
                    budget_bytes=view_budget,
                    owner=LEASE_OWNER,
                )
            except FencedWrite as exc:  # another owner compacts it now: use what is there
                log.info("%s: no compaction now: %s", self.key, exc)
        view = build_continuation(store, self.key, budget_bytes=view_budget)
        if view.refusal is not None:
            raise ContinuationRefused(
                self.session_id, view.refusal["reason"], view.refusal["detail"]
            )
        seqs = {m["seq"] for m in view.messages}
        if view.request is not None:
            seqs.add(view.request["seq"])
        native = {
            e.seq: e.native_id
            for e in store.entries_by_seq(self.key, seqs)
            if e.native_id is not None
        }
        offsets = {rid: at for rid, _, at, _ in self._live.items}
        wanted = sorted({seq for seq in seqs if native.get(seq) in offsets})
        found = dict(
            zip(wanted, self._items_at([offsets[native[seq]] for seq in wanted]), strict=True)
        )

        def original(seq: int) -> dict[str, Any] | None:
            return found.get(seq)

        before, after = view.before_request()
        tail: list[tuple[int, dict[str, Any]]] = _items_of(before, original)
        request = original(view.request["seq"]) if view.request is not None else None
        split = len(tail)
        tail += _items_of(after, original)
        tail, split = _without_stray_reasoning(tail, split)
        summary = view.summary["text"] if view.summary is not None else None
        return _fit(tail, split, request, summary, list(view.gaps), view.notes, budget)


def _items_of(messages: list[dict[str, Any]], original: Any) -> list[tuple[int, dict[str, Any]]]:
    """``(seq, item)`` for view ``messages``: each row's original item; a synthetic answer
    (a call that never got its output) as a ``<type>_output`` item saying its effects are
    unknown, for ``function_call`` and ``custom_tool_call``; a call of another type without
    an output is left out with it (its output has a shape of its own)."""
    out: list[tuple[int, dict[str, Any]]] = []
    calls: dict[str, int] = {}  # call_id -> index in out
    for m in messages:
        synthetic = [b for b in m["content"] if b.get("synthetic")]
        if not synthetic:
            item = original(m["seq"])
            if item is not None:
                if call_kind(item) == "call":
                    calls[item["call_id"]] = len(out)
                out.append((m["seq"], item))
            continue
        for block in synthetic:
            at = calls.get(block["call_id"])
            if at is None:
                continue
            kind = out[at][1].get("type")
            if kind in ("function_call", "custom_tool_call"):
                out.append(
                    (
                        m["seq"],
                        {
                            "type": f"{kind}_output",
                            "call_id": block["call_id"],
                            "output": block["text"],
                        },
                    )
                )
            else:
                out[at] = (out[at][0], {})  # dropped below
    return [(seq, item) for seq, item in out if item]


def _without_stray_reasoning(
    tail: list[tuple[int, dict[str, Any]]], split: int
) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """``tail`` less each ``reasoning`` item no longer followed by the output it led to (the
    Responses API refuses "reasoning ... provided without its required following item"): one
    followed by nothing, by the request (``split``: where the request goes), by a tool output
    or by a user, system or developer message. Returns the tail and the request's new index."""
    out: list[tuple[int, dict[str, Any]]] = []
    new_split = split
    for i, (seq, item) in enumerate(tail):
        if item.get("type") == "reasoning":
            nxt = tail[i + 1][1] if i + 1 < len(tail) and i + 1 != split else None
            if (
                nxt is None
                or call_kind(nxt) == "output"
                or nxt.get("role") in ("user", "system", "developer")
            ):
                if i < split:
                    new_split -= 1
                continue
        out.append((seq, item))
    return out, new_split


def _units(tail: list[tuple[int, dict[str, Any]]]) -> list[int]:
    """Indexes of ``tail`` where a unit starts: no call before it is still waiting for its
    output (a call and its outputs are kept or dropped together)."""
    starts, open_calls = [], set()
    for i, (_, item) in enumerate(tail):
        if not open_calls:
            starts.append(i)
        kind = call_kind(item)
        if kind == "call":
            open_calls.add(item["call_id"])
        elif kind == "output":
            open_calls.discard(item["call_id"])
    return starts


def _fit(
    tail: list[tuple[int, dict[str, Any]]],
    split: int,
    request: dict[str, Any] | None,
    summary: str | None,
    gaps: list[Gap],
    notes: list[str],
    budget: int,
) -> list[dict[str, Any]]:
    """The items in reading order (summary item, tail before the request, request, tail after
    it) within ``budget`` bytes: the oldest units of the tail dropped first (named as a gap),
    then the longest strings clipped when one unit alone does not fit."""
    sizes = [json_len(item) + 1 for _, item in tail]
    fixed = 2 + (json_len(request) + 1 if request is not None else 0)
    starts = _units(tail)
    first = 0  # index of the first tail item kept
    dropped: Gap | None = None

    def lead() -> dict[str, Any] | None:
        parts = [summary] if summary else []
        shown = gaps + ([dropped] if dropped is not None else [])
        if shown:
            parts.append(gap_notice(sorted(shown, key=lambda g: g.from_seq)))
        if notes:
            parts.append("Notes kept with this session:\n" + "\n".join(f"- {n}" for n in notes))
        return {"role": "user", "content": "\n\n".join(parts)} if parts else None

    def total() -> int:
        head = lead()
        return fixed + sum(sizes[first:]) + (json_len(head) + 1 if head is not None else 0)

    later = [s for s in starts if s > 0]
    while total() > budget and later:
        first = later.pop(0)
        seqs = [seq for seq, _ in tail[:first]]
        dropped = Gap(min(seqs), max(seqs))
    head = lead()
    kept = tail[first:]
    at = max(0, split - first)
    items = (
        ([head] if head is not None else [])
        + [item for _, item in kept[:at]]
        + ([request] if request is not None else [])
        + [item for _, item in kept[at:]]
    )
    over = json_len(items) - budget
    while over > 0 and _clip_longest(items, over):
        over = json_len(items) - budget
    return items


def _clip_longest(items: list[Any], over: int) -> bool:
    """Cut the longest string value among ``items`` (not a key, not an id) by about ``over``
    bytes, head and tail kept with a marker (``core.text.clip_middle``). False when no string
    is longer than ``_CLIP_FLOOR`` bytes."""
    best: tuple[Any, Any, int] | None = None
    stack: list[tuple[Any, Any]] = [(items, i) for i in range(len(items))]
    while stack:
        holder, key = stack.pop()
        value = holder[key]
        if isinstance(value, str):
            if key not in ("id", "call_id", "type", "role", "name", "status"):
                size = utf8_len(value)
                if best is None or size > best[2]:
                    best = (holder, key, size)
        elif isinstance(value, dict):
            stack.extend((value, k) for k in value)
        elif isinstance(value, list):
            stack.extend((value, i) for i in range(len(value)))
    if best is None or best[2] <= _CLIP_FLOOR:
        return False
    holder, key, size = best
    holder[key] = clip_middle(holder[key], max(_CLIP_FLOOR // 2, size - over - 64))
    return True


__all__ = ["FOLDER", "ContinuationRefused", "ContinuitySession", "session_file_name"]
