"""What the agent reaches through continuity's MCP tools (issue 39, "The agent can reach every
row"): every row of every session, found (``search_answer``, over what
``continuity.Workspace.search`` found) and reopened (``show_rows``), and the session a new run
continues from (``previous_session``).

All three answer plain JSON-ready dicts, bounded so a tool result never floods a model's
context:

- ``search_answer``: the ranking and filters of ``continuity search`` (``Workspace.search``),
  at most ``MAX_SEARCH_HITS`` hits (``search_limit``), each with its session key, seq,
  harness, project, time, role, a redacted snippet of at most ``SNIPPET_CHARS`` characters and
  the command reopening it.
- ``show_rows``: the rows of ``continuity show KEY --seq N`` (from ``N - SHOW_BEFORE``, at most
  ``MAX_SHOW_ROWS``), each row's text redacted (``browse.view.row_view``) and cut at
  ``ROW_CHARS`` characters with a marker, the whole answer at most ``SHOW_CHARS`` characters of
  row text (rows past that are left out and counted).
- ``previous_session``: the newest stored main session of a project folder that is not one of
  the given keys (the caller's own session), so a new run is never handed itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from continuity.browse.search import SNIPPET_CHARS, SearchHit, show_command
from continuity.core.errors import InputError

#: The most hits a search tool returns (``search_limit``; a model asks again with other words,
#: not for more).
MAX_SEARCH_HITS = 50
#: ``show_rows``: rows shown before the asked one, the most rows, characters of one row's text,
#: and characters of all rows' text together (issue 39: "rows around a seq, bounded").
SHOW_BEFORE = 5
MAX_SHOW_ROWS = 30
ROW_CHARS = 2_000
SHOW_CHARS = 24_000


def search_limit(limit: int) -> int:
    """``limit`` as an int when it is 1..``MAX_SEARCH_HITS`` (the hits a search tool asks
    for); else ``InputError`` naming ``limit``."""
    if not 1 <= int(limit) <= MAX_SEARCH_HITS:
        raise InputError(f"limit: must be 1 to {MAX_SEARCH_HITS} (got {limit})")
    return int(limit)


def search_answer(query: str, hits: Sequence[SearchHit]) -> dict[str, Any]:
    """``{"query", "count", "hits": [...]}``: the search tool's answer for ``hits`` (what
    ``continuity.Workspace.search`` found for ``query``: the ranking and filters of
    ``continuity search``, snippets redacted), best first as given. Each hit: ``session``,
    ``seq``, ``harness``, ``project``, ``title``, ``time``, ``role``, ``kind``, ``snippet``
    (at most ``SNIPPET_CHARS`` characters plus the cut marks) and ``show`` (the ``continuity
    show KEY --seq N`` command); project, title and snippet with control, C1 and bidi
    characters as escapes."""
    from continuity.browse.view import clean_text

    # an agent's harness shows the answer in a terminal: controls, C1 and bidi as escapes
    # (\x1b, \u202e), as a shown row's text (issue 45 item 6); the snippet is redacted already
    return {
        "query": query,
        "count": len(hits),
        "hits": [
            {
                "session": h.session,
                "seq": h.seq,
                "harness": h.harness,
                "project": clean_text(h.project, raw=True) if h.project else h.project,
                "title": clean_text(h.title) if h.title else h.title,
                "time": h.time,
                "role": h.role,
                "kind": h.kind,
                "snippet": clean_text(h.snippet, raw=True),
                "show": show_command(h.session, h.seq),
            }
            for h in hits
        ],
    }


def _row_text(row: Any) -> str:
    """One ``RowView``'s blocks as text: text as is, a tool call ``[call NAME] ARGS``, a
    result ``[result] TEXT`` (``[error]`` when it failed), a compaction its summary."""
    parts = []
    if row.compaction:
        parts.append(f"[compaction summary] {row.summary}")
    for b in row.blocks:
        if b.kind == "tool_call":
            parts.append(f"[call {b.name}] {b.text}")
        elif b.kind == "tool_result":
            parts.append(f"[{'error' if b.is_error else 'result'}] {b.text}")
        elif b.kind == "thinking":
            parts.append(f"[thinking] {b.text}")
        else:
            parts.append(b.text)
    return "\n".join(p for p in parts if p)


def cut(text: str, limit: int) -> str:
    """``text`` when it has at most ``limit`` characters, else its first characters and the
    marker ``… [N more characters]``, the whole at most ``limit`` characters (``limit`` >=
    40)."""
    if len(text) <= limit:
        return text
    keep = limit - len(f"… [{len(text)} more characters]")  # N below len(text): fits
    return text[:keep] + f"… [{len(text) - keep} more characters]"


def show_rows(
    store: Any, session: str, seq: int, *, before: int | None = None, rows: int = MAX_SHOW_ROWS
) -> dict[str, Any]:
    """``{"session", "harness", "project", "seq", "rows": [...], "more": bool, "left_out"}``:
    the session's rows from ``seq - before`` on (every kind, as ``continuity show KEY --seq
    N``), at most ``rows`` (1..``MAX_SHOW_ROWS``); ``before`` left out is ``SHOW_BEFORE`` or
    ``rows - 1``, whichever is smaller (a default never refuses the caller's ``rows``). Each row:
    ``seq``, ``role``, ``kind``,
    ``time``, ``text`` (redacted, control characters as escapes, at most ``ROW_CHARS``
    characters with a ``… [N more characters]`` marker). Rows past ``SHOW_CHARS`` characters of
    text in all are left out (``left_out`` counts them); ``more``: the session has rows after
    the last one read. ``session`` is a key or a unique prefix. Raises ``SessionNotFound``,
    ``AmbiguousSession``, ``InputError`` (no row ``seq``; a bad count)."""
    from continuity.browse.view import clean_text, row_view
    from continuity.redaction.funnel import SESSION_KNOWN
    from continuity.redaction.session import session_secrets
    from continuity.store.names import resolve_session

    if not 1 <= int(rows) <= MAX_SHOW_ROWS:
        raise InputError(f"rows: must be 1 to {MAX_SHOW_ROWS} (got {rows})")
    if before is None:
        before = min(SHOW_BEFORE, int(rows) - 1)
    if not 0 <= int(before) < int(rows):
        raise InputError(f"before: must be 0 to {int(rows) - 1} (got {before})")
    if int(seq) < 0:
        raise InputError(f"seq: must be 0 or more (got {seq})")
    key = resolve_session(store, session)
    found = store.entries(key, after_seq=max(-1, int(seq) - int(before) - 1), limit=int(rows) + 1)
    if not any(e.seq == seq for e in found):
        raise InputError(f"seq {seq}: session {key} has no row {seq}")
    more = len(found) > int(rows)
    found = found[: int(rows)]
    out, used, left_out = [], 0, 0
    known = session_secrets(store, key)  # issue 45 review item 1: repeats across rows
    for e in found:
        token = SESSION_KNOWN.set(known)
        try:
            view = row_view(e, raw=False)
        finally:
            SESSION_KNOWN.reset(token)
        text = cut(_row_text(view), ROW_CHARS)
        if used + len(text) > SHOW_CHARS:
            left_out += 1
            continue
        used += len(text)
        out.append(
            {"seq": e.seq, "role": view.role, "kind": view.kind, "time": view.time, "text": text}
        )
    meta = store.get_session(key)
    return {
        "session": key,
        "harness": meta.harness if meta else None,
        "project": clean_text(meta.project, raw=True) if meta and meta.project else None,
        "seq": int(seq),
        "rows": out,
        "more": more,
        "left_out": left_out,
    }


def previous_session(store: Any, project: str, *, exclude: Sequence[str] = ()) -> str | None:
    """The key of the newest stored main session (not a subagent's ``S/agent-x``) of folder
    ``project`` (``store.names.project_variants``) whose key is not in ``exclude``, else None
    (issue 39: MCP ``continuation`` without a key names the previous session of this project,
    never the caller's own). One bounded query (at most 20 sessions)."""
    from continuity.store.names import project_variants

    skip = {k for k in exclude if k}
    for session in store.project_sessions(project_variants(project), limit=20):
        if "/" not in session.key and session.key not in skip:
            return session.key
    return None


__all__ = [
    "search_limit",
    "search_answer",
    "show_rows",
    "previous_session",
    "cut",
    "MAX_SEARCH_HITS",
    "MAX_SHOW_ROWS",
    "ROW_CHARS",
    "SHOW_CHARS",
    "SNIPPET_CHARS",
]
