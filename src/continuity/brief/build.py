"""Building the project brief (issue 39, item 1): which earlier sessions of a project a new
session is told of, and what of each, read with bounded reads.

``build_brief(store, project=…, config=…, reach=…)``:

1. **Which sessions.** The sessions of ``project`` (its normalized path, and the path as
   given; never a folder inside it) whose last activity is within the recovery window
   (``CheckpointConfig.recovery_window``: ``recoveryWindowDays``, default 14 days, ``"any"``;
   ``recoveryWindowHours`` when set), whatever their age within it: those stored
   (``store.project_sessions``) and those known only from checkpoints
   (``store.project_checkpoint_sessions``); never a key in ``exclude`` (the new session
   itself). Newest first; at most ``MAX_SESSIONS``. A session's last activity is the newest
   of its last row's time, its end and its newest checkpoint (a session with none of them,
   whose rows carry no time, is kept, last: nothing says it is old).
2. **What of each.** The facts of its newest ``ROWS_READ`` visible rows (plus its newest
   request row when that is older, found through ``rows_meta`` in at most
   ``REQUEST_SEARCH_ROWS`` rows of metadata): ``continuation.facts.extract_facts`` over
   ``summarize.bounds.digest``; the newest compaction's summary for what came before them;
   its checkpoints' ``recent_remembers`` and the memories whose source it is
   (``store.memories_from``); a session with no stored rows is told from its newest
   checkpoint's digest (its recent prompts). A brief never reads a whole long session.
3. **The text.** ``render.render_brief``: ranked, within ``recoveryBudgetChars``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from continuity.brief.model import Reach, SessionBrief
from continuity.brief.render import clip, render_brief
from continuity.checkpoints.capture import SNIPPET_CHARS, CheckpointConfig, normalize_project
from continuity.continuation.facts import SessionFacts, extract_facts
from continuity.continuation.summarize.bounds import digest
from continuity.core.model import Checkpoint, Session
from continuity.redaction.funnel import SESSION_KNOWN, redact
from continuity.redaction.session import session_secrets

if TYPE_CHECKING:  # pragma: no cover
    from continuity.store import SqlStore

#: at most this many earlier sessions are read for one brief
MAX_SESSIONS = 5
#: the newest visible rows read of each session
ROWS_READ = 200
#: how many rows' metadata (no content) are searched back for the newest request
REQUEST_SEARCH_ROWS = 2_000
#: how many remembered memories of one session are read
MEMORIES_READ = 20
#: a compaction summary is cut to this many characters before the brief cuts it again
SUMMARY_CHARS = 1_500


@dataclass(frozen=True)
class Brief:
    """The brief for a new session of ``project`` (issue 39): ``text`` (at most
    ``budget_chars`` characters, framed: ``render.HEADING`` then ``render.FRAMING``),
    ``sessions`` (newest first: what it was built from, each whole, before the budget's
    cut), ``truncated`` and ``omitted_lines`` (what the cut left out), the ``window`` it
    looked back (None: any age), the ``reach`` it names and ``now``."""

    text: str
    project: str
    sessions: tuple[SessionBrief, ...]
    budget_chars: int
    truncated: bool
    omitted_lines: int
    reach: Reach
    window: timedelta | None
    now: datetime

    def to_dict(self) -> dict[str, Any]:
        """The ``continuity brief --json`` shape: ``project``, ``text``, ``budget_chars``,
        ``truncated``, ``omitted_lines``, ``window_hours`` (None: any age), ``reach``,
        ``sessions`` (``SessionBrief.to_dict``), ``now``."""
        return {
            "project": self.project,
            "text": self.text,
            "budget_chars": self.budget_chars,
            "truncated": self.truncated,
            "omitted_lines": self.omitted_lines,
            "window_hours": self.window / timedelta(hours=1) if self.window else None,
            "reach": self.reach.to_dict(),
            "sessions": [s.to_dict() for s in self.sessions],
            "now": self.now.isoformat().replace("+00:00", "Z"),
        }


def build_brief(
    store: SqlStore,
    *,
    project: str,
    config: CheckpointConfig,
    reach: Reach,
    exclude: Sequence[str] = (),
    now: datetime | None = None,
    who: Mapping[str, str] | None = None,
) -> Brief:
    """The brief a new session of ``project`` (a folder) gets (module docstring), within
    ``config.recovery_budget_chars`` characters (seed 000: recoveryBudgetChars, 200–10,000).
    ``exclude``: session keys never told of (the new session's own). ``now``: the clock
    (aware UTC; default the wall clock). ``who``: session key -> ``author@machine`` of the
    teammates' sessions (issue 41, ``brief --team``), shown in their headings. With
    continuity disabled (``enabled = false``), or no session found, the brief says so in one
    line after the framing. Raises what the store
    raises (``StoreError``)."""
    now = now or datetime.now(UTC)
    window = config.recovery_window()
    found = _sessions(store, project, window, now, set(exclude)) if config.enabled else []
    if who:
        found = [replace(s, who=who.get(s.key)) for s in found]
    # issue 45 review item 1: a secret found in any row of a briefed session is hidden
    # wherever the brief repeats it (the brief is redacted as one text, so their union)
    known: dict[str, str] = {}
    for s in found:
        known.update(session_secrets(store, s.key))
    token = SESSION_KNOWN.set(known)
    try:
        text, truncated, omitted = render_brief(
            found,
            project=project,
            budget_chars=config.recovery_budget_chars,
            reach=reach,
            now=now,
            window=window,
        )
    finally:
        SESSION_KNOWN.reset(token)
    return Brief(
        text,
        project,
        tuple(found),
        config.recovery_budget_chars,
        truncated,
        omitted,
        reach,
        window,
        now,
    )


# ---------------------------------------------------------------------------- which sessions


def _sessions(
    store: SqlStore, project: str, window: timedelta | None, now: datetime, exclude: set[str]
) -> list[SessionBrief]:
    since = now - window if window is not None else None
    normalized = normalize_project(project) or project
    candidates: dict[str, Session | None] = {}
    # newest activity first by the store's clock (an import's time for an imported file):
    # more than are shown, so that the rows' own times can reorder them
    for s in store.project_sessions(
        list(dict.fromkeys([normalized, project])), limit=MAX_SESSIONS * 4
    ):
        candidates.setdefault(s.key, s)
    marks = dict(store.project_checkpoint_sessions(normalized, since=since, limit=MAX_SESSIONS * 2))
    for key in marks:
        candidates.setdefault(key, None)
    missing = [k for k, v in candidates.items() if v is None]
    if missing:
        candidates.update(store.get_sessions(missing))
    out = []
    for key, session in candidates.items():
        if key in exclude or (session is not None and session.agent_id != "default"):
            continue
        out.append(_read_session(store, key, session, marks.get(key)))
    # a session whose rows carry no time is kept (it comes last): nothing says it is old
    out = [s for s in out if since is None or s.last_active is None or s.last_active > since]
    far = datetime.min.replace(tzinfo=UTC)
    out.sort(key=lambda s: (s.last_active or far, s.key), reverse=True)
    return out[:MAX_SESSIONS]


# ---------------------------------------------------------------------------- what of each


def _read_session(
    store: SqlStore, key: str, session: Session | None, checkpoint_at: datetime | None
) -> SessionBrief:
    checkpoints = store.checkpoints(key)
    latest: Checkpoint | None = checkpoints[-1] if checkpoints else None
    rows, last_time = _rows(store, key, session)
    facts = extract_facts(digest(e) for e in rows) if rows else SessionFacts()
    times = [
        t
        for t in (
            last_time,
            session.ended_at if session else None,
            latest.created_at if latest else None,
            checkpoint_at,
        )
        if t
    ]
    requests = facts.requests
    if not requests and latest is not None:
        requests = tuple((-1, p) for p in _digest_prompts(latest.digest))
    tests = next((c for c in reversed(facts.commands) if c.is_test), None)
    run = store.last_run(key) if rows else None
    ended = (
        run.status.value
        if run is not None
        and run.status.value in ("interrupted", "failed")
        and requests
        and run.request_seq >= requests[-1][0]
        else None
    )
    return SessionBrief(
        key=key,
        harness=session.harness if session else (latest.harness if latest else "?"),
        project=session.project if session else (latest.project if latest else None),
        last_active=max(times) if times else None,
        requests=requests,
        outcome=facts.last_answer,
        ended=ended,
        commands=facts.commands[-5:],
        tests=tests,
        failing_tests=facts.failing_tests,
        files_changed=facts.changed_files,
        errors=facts.unresolved_errors,
        decisions=_decisions(store, key, checkpoints, facts, facts.last_answer),
        open_items=facts.open_items,
        earlier=_earlier(store, key, rows),
        rows_read=facts.rows or len(rows),
        last_seq=rows[-1].seq if rows else -1,
    )


def _rows(store: SqlStore, key: str, session: Session | None) -> tuple[list[Any], datetime | None]:
    """The newest ``ROWS_READ`` visible main-agent rows of ``key``, oldest first, with the
    newest request row prepended when it is older than them; and the last row's time."""
    if session is None or not session.entry_count:
        return [], None
    start = max(-1, session.entry_count - 1 - ROWS_READ * 2)
    rows = [
        e
        for e in store.entries(key, after_seq=start, limit=ROWS_READ * 2, visible_only=True)
        if not e.sidechain
    ][-ROWS_READ:]
    if not rows:
        return [], None
    last_time = max((e.timestamp for e in rows if e.timestamp), default=None)
    if not any(e.is_request for e in rows):
        metas = store.rows_meta(
            key, before_seq=rows[0].seq, limit=REQUEST_SEARCH_ROWS, newest_first=True
        )
        seq = next((m.seq for m in metas if m.is_request), None)
        if seq is not None:
            rows = store.entries_by_seq(key, [seq]) + rows
    return rows, last_time


def _earlier(store: SqlStore, key: str, rows: list[Any]) -> tuple[int | None, str] | None:
    """The newest compaction's summary, when the session has one and the rows read do not
    reach back to its first row: what came before them (a session read whole needs none)."""
    if rows and not store.rows_meta(key, before_seq=rows[0].seq, limit=1):
        return None  # the rows read reach back to its first visible row
    entry = store.latest_compaction(key)
    if entry is None or entry.compaction is None or not entry.compaction.summary.strip():
        return None
    return entry.compaction.covers_through_seq, clip(
        redact(entry.compaction.summary), SUMMARY_CHARS
    )


def _decisions(
    store: SqlStore,
    key: str,
    checkpoints: Sequence[Checkpoint],
    facts: SessionFacts,
    outcome: tuple[int, str] | None = None,
) -> tuple[str, ...]:
    """Memories whose source is the session (``[type] text``, newest first), then the
    remembers its checkpoints hold, then the decisions the agent stated; deduplicated by
    their text. A stated decision the ``outcome`` (the last answer's gist) already holds is
    left out: the brief would say it twice."""
    seen: dict[str, str] = {}
    for m in store.memories_from(key, limit=MEMORIES_READ):
        text = " ".join(redact(m.content).split())
        seen.setdefault(_norm(text), f"[{m.type}] {text}")
    for cp in reversed(checkpoints):
        for r in cp.recent_remembers:
            text = " ".join(redact(r).split())
            seen.setdefault(_norm(text), f"[remembered] {text}")
    told = _norm(outcome[1]) if outcome else ""
    for d in facts.decisions:
        text = " ".join(redact(d).split())
        if _norm(text) and _norm(text) in told:
            continue
        seen.setdefault(_norm(text), f"[stated] {text}")
    return tuple(seen.values())


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text).strip().lower()


_PROMPT_BLOCK = re.compile(r"^### Recent Prompts\n((?:- .*\n?)+)", re.M)


def _digest_prompts(digest_text: str) -> list[str]:
    """The ``### Recent Prompts`` items of a checkpoint digest (seed 000), oldest first; an
    item of the snippet's full length (``SNIPPET_CHARS``, the seed's cut, which digests
    written before issue 39 made without a marker) ends with ``…`` (issue 39: never cut
    mid-word without a marker)."""
    found = _PROMPT_BLOCK.search(digest_text)
    if not found:
        return []
    items = [line[2:] for line in found.group(1).splitlines() if line.startswith("- ")]
    return [
        p.rstrip() + "…" if len(p) >= SNIPPET_CHARS and not p.endswith("…") else p for p in items
    ]


__all__ = ["Brief", "MAX_SESSIONS", "ROWS_READ", "build_brief"]
