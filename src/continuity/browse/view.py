"""The session view model shared by the browser and ``continuity export`` (issue 19): a session
as plain data a template can show without deciding anything.

``session_view(store, key, ...)`` reads one page of the session's rows (``PAGE_ROWS``, or a
``since_seq``/``until_seq`` range for an export), pairs each tool call with its result (read by
the tool-call index, so a result outside the page is still shown beside its call), places the
checkpoints after the last row taken before them, and adds the continuation the next run would
get (``continuation.view.build_continuation``: its budget use, request and gaps).

**Text rules.** Every text passes ``redaction.redact`` (tool-call arguments
``redact_value``) unless ``raw``; control, C1 and bidi characters (an ANSI sequence's ESC too)
shown as their visible escapes (``\\x1b``, ``\\u202e``), so a transcript never moves a
terminal or a page; data URLs are media stubs (``codec.block_view``). Escaping HTML is the
template's job (autoescape on, ``browse.render``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import orjson

from continuity.browse.diffs import FileDiff, edit_diffs
from continuity.browse.titles import session_title
from continuity.continuation.view import build_continuation
from continuity.core.codec import block_view
from continuity.core.errors import ContinuityError, SessionNotFound
from continuity.core.model import Entry, Session
from continuity.core.text import CONTROL_ESCAPES, json_bytes
from continuity.formats.jsonl import BOM
from continuity.redaction.funnel import SESSION_KNOWN, redact
from continuity.redaction.session import in_session, session_secrets
from continuity.redaction.structured import redact_value

#: Rows of one browser page.
PAGE_ROWS = 200
#: A text longer than this (characters) or of more lines is folded (``<details>``).
FOLD_CHARS = 1_500
FOLD_LINES = 20


def clean_text(value: str, *, raw: bool = False) -> str:
    """``value`` fit to show: redacted unless ``raw``, every control character (not tab or
    newline), DEL, C1 control and bidi control (U+202A-U+202E, U+2066-U+2069) as its visible
    escape (``\\x1b``, ``\\r``, ``\\x9b``, ``\\u202e``: ``core.text.CONTROL_ESCAPES``, the
    README's one rule for every text output, issue 45: an ANSI sequence is shown, not removed,
    and no control picture or U+FFFD stands for a character)."""
    return (value if raw else redact(value)).translate(CONTROL_ESCAPES)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


@dataclass
class BlockView:
    """One block to show. ``kind``: text, thinking, tool_call, tool_result, media. A tool call
    carries its paired ``result`` (None: no result recorded) and ``result_seq``; ``folded``:
    the text is long (see ``FOLD_CHARS``)."""

    kind: str
    text: str = ""
    name: str = ""
    call_id: str = ""
    is_error: bool = False
    result: BlockView | None = None
    result_seq: int | None = None
    folded: bool = False
    lines: int = 0
    #: issue 44: an edit's changes as unified diffs (``browse.diffs``), None for other calls
    diffs: list[FileDiff] | None = None

    @staticmethod
    def of_text(kind: str, text: str, **kw: Any) -> BlockView:
        lines = text.count("\n") + 1 if text else 0
        return BlockView(
            kind, text, folded=len(text) > FOLD_CHARS or lines > FOLD_LINES, lines=lines, **kw
        )


@dataclass
class RowView:
    """One row: where (``seq``, ``time``), who (``role``, ``kind``), flags, its blocks, and a
    compaction's ``summary``/``covers`` (``compaction`` True). ``answered_above``: a tool row
    whose every result is shown beside its call in an earlier row."""

    seq: int
    role: str
    kind: str
    type_name: str
    time: str | None
    is_request: bool
    sidechain: bool
    visible: bool
    blocks: list[BlockView] = field(default_factory=list)
    compaction: bool = False
    summary: str = ""
    covers: int | None = None
    answered_above: list[int] = field(default_factory=list)
    checkpoints: list[CheckpointView] = field(default_factory=list)


@dataclass
class CheckpointView:
    """A checkpoint where it was taken: after row ``after_seq`` (-1: before every row)."""

    trigger: str
    time: str | None
    prompt_count: int
    digest: str
    after_seq: int


@dataclass
class ContinuationInfo:
    """What the next run would get: bytes used of the budget (``percent`` 0..100), the request,
    the summary, the gaps [(from_seq, to_seq)] and their notice, or the refusal."""

    used_bytes: int
    budget_bytes: int
    percent: float
    request_seq: int | None
    request: str
    summary: str
    gaps: list[tuple[int, int]]
    notice: str
    messages: int
    refusal: dict[str, str] | None


@dataclass
class SessionView:
    """A session page: the session, its rows ``first_seq..last_seq`` (of ``total``), the links
    of the pages before/after (``prev_from``/``next_from``, None at an end), checkpoints placed
    in the rows (and ``checkpoints_before``: taken before the first row shown), and the
    continuation. ``raw``: nothing was redacted."""

    session: Session
    subagent: bool
    rows: list[RowView]
    total: int
    first_seq: int | None
    last_seq: int | None
    prev_from: int | None
    next_from: int | None
    checkpoints_before: list[CheckpointView]
    continuation: ContinuationInfo | None
    raw: bool
    focus_seq: int | None = None
    #: issue 44: only the conversation's rows (``Entry.visible``); False: every row
    conversation: bool = False
    #: the rows asked for, ``(from_seq, until_seq)`` (None: from the start / to the end)
    asked: tuple[int | None, int | None] = (None, None)


def _block(b: Any, raw: bool) -> BlockView:
    v = block_view(b)
    kind = v["type"]
    if kind in ("text", "thinking"):
        return BlockView.of_text(kind, clean_text(v["text"], raw=raw))
    if kind == "tool_result":
        return BlockView.of_text(
            kind, clean_text(v["text"], raw=raw), call_id=v["call_id"], is_error=bool(v["is_error"])
        )
    if kind == "tool_call":
        args = v.get("arguments")
        args = args if raw else redact_value(args)
        shown = args if isinstance(args, str) else _json_text(args, indent=True)
        name = str(v.get("name", ""))
        block = BlockView.of_text(
            kind,
            clean_text(shown, raw=True),
            name=clean_text(name, raw=True),
            call_id=str(v.get("id", "")),
        )
        diffs = edit_diffs(name, args)  # on the redacted arguments
        if diffs:
            for d in diffs:
                d.path = clean_text(d.path, raw=True)
                d.lines = [(k, clean_text(t, raw=True)) for k, t in d.lines]
            block.diffs = diffs
        return block
    if kind == "media":
        return BlockView("media", f"[{v['media_type']} {v['bytes']} B omitted]")
    return BlockView.of_text("text", clean_text(_json_text(v), raw=raw))


def _json_text(value: Any, indent: bool = False) -> str:
    """``value`` as JSON text (indented with ``indent``); a value orjson refuses (an integer
    beyond 64 bits, a lone surrogate: both occur in harness JSON, issue 45 item 11) through
    ``core.text.json_bytes``, its numbers kept as written."""
    try:
        return orjson.dumps(
            value, option=orjson.OPT_INDENT_2 if indent else None, default=str
        ).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        import json

        text = json_bytes(value).decode("utf-8")
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False) if indent else text


def row_view(e: Entry, raw: bool) -> RowView:
    """One stored row as a ``RowView`` (results not yet paired)."""
    row = RowView(
        seq=e.seq,
        role=e.role.value,
        kind=e.kind.value,
        type_name=e.type_name,
        time=_iso(e.timestamp),
        is_request=e.is_request,
        sidechain=e.sidechain,
        visible=e.visible,
        blocks=[_block(b, raw) for b in e.blocks],
    )
    if e.compaction is not None:
        row.compaction = True
        row.summary = clean_text(e.compaction.summary or "", raw=raw)
        row.covers = e.compaction.covers_through_seq
    return row


def _pair(store: Any, key: str, rows: list[RowView], raw: bool) -> None:
    """Give each tool call its result (from this page or read by seq), and mark the tool rows
    whose every result sits beside its call on this page."""
    calls = {b.call_id: (r, b) for r in rows for b in r.blocks if b.kind == "tool_call"}
    if not calls:
        return
    index = store.tool_calls(key, list(calls))
    local = {b.call_id: (r, b) for r in rows for b in r.blocks if b.kind == "tool_result"}
    missing = sorted(
        {i.result_seq for cid, i in index.items() if i.result_seq is not None and cid not in local}
    )
    for e in store.entries_by_seq(key, missing) if missing else []:
        for b in e.blocks:
            if getattr(b, "type", "") == "tool_result" and b.call_id in calls:
                local.setdefault(b.call_id, (row_view(e, raw), _block(b, raw)))
    for cid, (_row, call) in calls.items():
        found = local.get(cid)
        if found is not None:
            call.result, call.result_seq = found[1], found[0].seq
    shown_with_call = {cid for cid, (r, _) in calls.items() if cid in local}
    for r in rows:
        results = [b for b in r.blocks if b.kind == "tool_result"]
        if (
            results
            and all(b.call_id in shown_with_call for b in results)
            and len(results) == len(r.blocks)
        ):
            r.answered_above = sorted({calls[b.call_id][0].seq for b in results})


def _continuation(store: Any, key: str, raw: bool) -> ContinuationInfo | None:
    try:
        view = build_continuation(store, key)
    except ContinuityError:
        return None
    # the continuation's request is ``{"seq", "actor", "text", "media"?}`` (its ``text``
    # already redacted): issue 44, the panel read a ``content`` list it does not carry and
    # showed an empty box on every session
    req = view.request or {}
    req_text = str(req.get("text") or "")
    if req.get("media"):
        stubs = [
            f"[{m.get('media_type', 'media')} {m.get('bytes', '?')} B omitted]"
            for m in req["media"]
        ]
        req_text = "\n".join([req_text, *stubs]) if req_text else "\n".join(stubs)
    budget = max(1, view.budget_bytes)
    return ContinuationInfo(
        used_bytes=view.used_bytes,
        budget_bytes=view.budget_bytes,
        percent=min(100.0, round(100 * view.used_bytes / budget, 1)),
        request_seq=req.get("seq") if req else None,
        request=clean_text(req_text, raw=True),
        summary=clean_text((view.summary or {}).get("text", ""), raw=True),
        gaps=[(g.from_seq, g.to_seq) for g in view.gaps],
        notice=view.notice or "",
        messages=len(view.messages),
        refusal=view.refusal,
    )


def _place_checkpoints(
    store: Any, key: str, rows: list[RowView], *, first_page: bool, last_page: bool, raw: bool
) -> list[CheckpointView]:
    """Put each checkpoint after the last row of the page with a time at or before its own;
    return those before the first row (first page only). Checkpoints outside the page's time
    span are left to the page they belong to."""
    times = [(r.time or "", r.seq) for r in rows]
    stamps = [t for t, _ in times]
    before: list[CheckpointView] = []
    for cp in store.checkpoints(key):
        at = _iso(cp.created_at) or ""
        i = bisect_right(stamps, at) if all(stamps) else len(rows)
        view = CheckpointView(
            trigger=cp.trigger.value,
            time=at or None,
            prompt_count=cp.prompt_count,
            digest=clean_text(cp.digest, raw=raw),
            after_seq=-1,
        )
        if i == 0:
            if first_page:
                before.append(view)
            continue
        if i == len(rows) and not last_page:
            continue
        view.after_seq = rows[i - 1].seq
        rows[i - 1].checkpoints.append(view)
    return before


def session_view(store: Any, key: str, *, raw: bool = False, **kw: Any) -> SessionView:
    """``_session_view`` (the arguments below), redacted within the session's scope unless
    ``raw``: a secret found in any row or the title is hidden wherever it repeats (issue 45
    review item 1, ``redaction.session``)."""
    if raw:
        return _session_view(store, key, raw=True, **kw)
    with in_session(store, key):
        return _session_view(store, key, raw=False, **kw)


def _session_view(
    store: Any,
    key: str,
    *,
    from_seq: int | None = None,
    until_seq: int | None = None,
    limit: int | None = PAGE_ROWS,
    raw: bool = False,
    continuation: bool = True,
    focus_seq: int | None = None,
    conversation: bool = False,
) -> SessionView:
    """The view of session ``key`` (an exact key): rows with ``from_seq <= seq <= until_seq``
    (both optional), at most ``limit`` (None: all; an export), every row, or with
    ``conversation`` only the conversation's (``Entry.visible``: messages, tool calls and
    results, compactions; not queue operations, attachments, hook events, snapshots: issue
    44). ``focus_seq`` without ``from_seq`` starts the page a few rows before it (every row
    when that row is outside the conversation). Raises ``SessionNotFound``."""
    session = store.get_session(key)
    if session is None:
        raise SessionNotFound(f"no session {key!r}")
    # issue 44: the title every list shows (own or first request), redacted session-wide
    session = replace(session, title=session_title(store, session, raw=raw))
    if focus_seq is not None and conversation:
        found = store.entries_by_seq(key, [focus_seq])
        conversation = not found or found[0].visible
    if focus_seq is not None and from_seq is None:
        from_seq = max(0, focus_seq - 5)
    start = max(0, from_seq or 0)
    want = limit if limit is not None else (1 << 62)
    if until_seq is not None and not conversation:
        want = min(want, max(0, until_seq - start + 1))
    entries: list[Entry] = []
    after = start - 1
    more = False
    while len(entries) < want:
        n = min(500, want - len(entries))
        page = store.entries(key, after_seq=after, limit=n + 1, visible_only=conversation)
        kept = [e for e in page if until_seq is None or e.seq <= until_seq]
        entries.extend(kept[:n])
        if len(kept) <= n:
            break
        more = len(entries) >= want  # a row beyond the page exists
        after = kept[n - 1].seq
    rows = [row_view(e, raw) for e in entries]
    _pair(store, key, rows, raw)
    total = session.entry_count
    last = rows[-1].seq if rows else None
    page_rows = limit or max(1, len(rows))
    before = _place_checkpoints(
        store,
        key,
        rows,
        first_page=start == 0,
        last_page=not more,
        raw=raw,
    )
    return SessionView(
        session=session,
        subagent=session.agent_id != "default",
        rows=rows,
        total=total,
        first_seq=rows[0].seq if rows else None,
        last_seq=last,
        prev_from=max(0, start - page_rows) if start > 0 else None,
        next_from=last + 1 if last is not None and more else None,
        checkpoints_before=before,
        continuation=_continuation(store, key, raw) if continuation else None,
        raw=raw,
        focus_seq=focus_seq,
        conversation=conversation,
        asked=(from_seq, until_seq),
    )


def entry_record(session_key: str, e: Entry, *, raw: bool = False) -> dict[str, Any]:
    """One line of ``export --format jsonl``: the row as stored, in the view shape of its
    blocks (``codec.block_view``), with its session, flags, compaction and source position;
    strings redacted unless ``raw``."""
    from continuity.core.codec import entry_view

    out: dict[str, Any] = {
        "session": session_key,
        **entry_view(e),
        "parent_native_id": e.parent_native_id,
        "sidechain": e.sidechain,
    }
    return out if raw else redact_value(out)


def session_records(
    store: Any,
    key: str,
    *,
    since_seq: int | None = None,
    until_seq: int | None = None,
    raw: bool = False,
    conversation: bool = False,
) -> Iterable[dict[str, Any]]:
    """``entry_record`` of every row of ``key`` in the seq range (only the conversation's,
    ``Entry.visible``, with ``conversation``), read 500 rows at a time."""
    after = (since_seq if since_seq is not None else 0) - 1
    known = {} if raw else session_secrets(store, key)  # issue 45 review item 1
    while True:
        page = store.entries(key, after_seq=after, limit=500, visible_only=conversation)
        for e in page:
            if until_seq is not None and e.seq > until_seq:
                return
            token = SESSION_KNOWN.set(known)  # not held across the yield (a generator)
            try:
                record = entry_record(key, e, raw=raw)
            finally:
                SESSION_KNOWN.reset(token)
            yield record
        if len(page) < 500:
            return
        after = page[-1].seq


def list_view(
    store: Any,
    *,
    harness: str | None = None,
    projects: Sequence[str] = (),
    page: int = 1,
    per_page: int = 50,
    raw: bool = False,
) -> tuple[list[Session], bool]:
    """One page (1-based) of sessions, newest first, with whether another page follows; each
    session's ``title`` is the one ``browse.titles.session_title`` gives (its own or its first
    request, redacted session-wide unless ``raw``; issue 44)."""
    found, more = store.filter_sessions(
        harness=harness, projects=projects, offset=(max(1, page) - 1) * per_page, limit=per_page
    )
    return [replace(s, title=session_title(store, s, raw=raw)) for s in found], more


def by_project(sessions: Sequence[Session]) -> list[tuple[str | None, list[Session]]]:
    """``sessions`` (newest first) grouped by project folder: ``[(project, sessions), ...]``,
    the group of the newest session first, each group's sessions in their given order."""
    groups: dict[str | None, list[Session]] = {}
    for s in sessions:
        groups.setdefault(s.project or None, []).append(s)
    return list(groups.items())


__all__ = [
    "SessionView",
    "RowView",
    "BlockView",
    "CheckpointView",
    "ContinuationInfo",
    "session_view",
    "row_view",
    "entry_record",
    "session_records",
    "list_view",
    "by_project",
    "clean_text",
    "PAGE_ROWS",
]


@dataclass(frozen=True)
class SourceCopy:
    """A source file rebuilt from its kept raw lines: ``data`` the bytes the import consumed
    (``path``'s first ``len(data)`` bytes when the file is unchanged), ``lines`` how many
    lines they hold, ``check`` what comparing with the file on disk found: ``"identical"``,
    ``"grown"`` (the file starts with ``data`` and has more after it), ``"differs at byte
    offset N"`` (0-based, as ``byte_offset``; ``cmp`` counts from 1; ``" (the file is
    shorter)"`` added when it ends first), ``"not a regular file"`` or ``"gone"``."""

    path: str
    data: bytes
    lines: int
    check: str


def source_copy(store: Any, key: str) -> SourceCopy:
    """The file session ``key`` was imported from, byte for byte, from the raw lines the store
    kept (formats.md §5.4: every line is kept as read, blank and bad lines too), compared
    with the file on disk when it is still there. A line's terminator (``\\n``; a ``\\r``
    before it is part of the line) is restored, the last line's only when the file had one,
    and a stripped byte order mark is put back. Reads the raw lines in pages; the result is
    held in memory (bytes of the consumed part of the file).

    Raises ``SessionNotFound`` for an unknown key and ``ContinuityError`` for a session that
    has no imported file (one recorded live through hooks only) or whose file was replaced
    by another session's file at the same path (the positions kept are that file's; the
    earlier session's rows and their raw lines are still kept)."""
    session = store.get_session(key)
    if session is None:
        raise SessionNotFound(key)
    path = session.source_path
    state = store.get_source(path) if path else None
    if not path or state is None:
        raise ContinuityError(
            f"session {key} has no imported file (it was recorded live "
            "through hooks): its rows are in --format jsonl"
        )
    if state.session_key != key:
        raise ContinuityError(
            f"session {key}'s file {path!r} now holds session "
            f"{state.session_key} (it was replaced after the import), so "
            "its lines can no longer be rebuilt as a file: its rows are in "
            f"--format jsonl, the file now there is `export "
            f"{state.session_key} --format source --raw`"
        )
    parts: list[bytes] = []
    count = 0
    for line in store.raw_lines(path):
        if count == 0 and line.byte_offset == len(BOM):
            parts.append(BOM)
        parts.append(line.data)
        parts.append(b"\n")
        count += 1
    data = b"".join(parts)
    if len(data) == state.offset + 1 and data.endswith(b"\n"):
        data = data[:-1]  # an accepted last line without a newline
    return SourceCopy(path, data, count, _compare(path, data))


def _compare(path: str, data: bytes) -> str:
    """How the file at ``path`` compares with ``data`` (see ``SourceCopy.check``); reads the
    file in 1 MiB chunks, never more than ``len(data)`` + 1 bytes; never opens anything but a
    regular file (a FIFO put at the path would block the read forever)."""
    import os
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return "not a regular file"
        handle = open(path, "rb")  # noqa: SIM115 - closed by the `with handle` below
    except OSError:
        return "gone"
    with handle:
        done = 0
        while done < len(data):
            chunk = handle.read(min(1 << 20, len(data) - done))
            if not chunk:
                return f"differs at byte offset {done} (the file is shorter)"
            if chunk != data[done : done + len(chunk)]:
                at = next(
                    i for i, (a, b) in enumerate(zip(chunk, data[done:], strict=False)) if a != b
                )
                return f"differs at byte offset {done + at}"
            done += len(chunk)
        return "grown" if handle.read(1) else "identical"
