"""Threads, thread heads and the temporal DAG (seed 000's Tier 2 state), as the consolidation
pass records one session in them.

A **thread** is one line of work: the project (``project:<path>``), else the session itself
(``session:<key>``); ``thread_of`` gives its key, label and node id. ``update_dag`` records a
consolidated session (``SessionRecord``) in one transaction:

- nodes: a ``session`` node, one ``compaction`` node per compaction row, the ``thread`` node;
- edges: ``continues`` from each session of the thread to the one before it (by start time),
  ``compacted_into`` to each compaction, ``mentions`` to its own thread and to every known
  thread whose project path the user named;
- the thread head (its newest summary or compaction, never moved back in time by the store),
  with what the session left open (``open_items``).

Rows are upserted and each edge kind of the session replaced, so recording a session again
changes nothing. Persistence is ``continuity.store.lineage``.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from continuity.continuation.facts import ErrorNote, SessionFacts
from continuity.core.model import Entry, Run
from continuity.lineage import artifacts as ln, sentence as sn
from continuity.redaction.funnel import redact
from continuity.store.lineage import DagEdge, DagNode, ThreadHead

if TYPE_CHECKING:
    from continuity.store import SqlStore

#: At most this many open items per thread head, each at most this many characters.
MAX_OPEN_ITEMS = 3
OPEN_ITEM_CHARS = 180
#: A thread head's sample holds the session's digest (``session_digest``), else its whole
#: memory sentence (48 words).
SAMPLE_CHARS = 600
#: The digest's parts, in characters (issue 39).
DIGEST_CHARS = 600
#: Thread keys fit the 500-character column of revision 0008.
THREAD_KEY_CHARS = 480
#: At most this many items of one summary section become open items.
PER_SECTION = 2

#: The DAG id of a session: ``session:<token>`` (``lineage.session_node_id``).
session_node_id = ln.session_node_id


def _short_id(text: str) -> str:
    return base64.b32encode(hashlib.sha256(text.encode("utf-8")).digest()).decode().lower()[:16]


def thread_of(agent_id: str, project: str | None, session_key: str) -> tuple[str, str, str]:
    """``(thread_key, label, node_id)`` of a session's thread: its project, else itself. A key
    over ``THREAD_KEY_CHARS`` keeps its head and ends in ``#`` and a hash of the whole."""
    key = f"project:{project}" if project else f"session:{session_key}"
    if len(key) > THREAD_KEY_CHARS:
        key = f"{key[: THREAD_KEY_CHARS - 17]}#{_short_id(key)}"
    return key, project or session_key, f"thread:{_short_id(f'{agent_id}:{key}')}"


# ---------------------------------------------------------------------------- open items

_HEADING = re.compile(r"^\s{0,3}#{2,4}\s*(.+?)\s*:?\s*$")
_READ_ONLY = re.compile(
    r"`(?:cd\s+\S+\s*&&\s*)?(?:grep|rg|ls|cat|find|head|tail|test|which|wc"
    r"|stat|file|diff)\b"
)
_BOILERPLATE = (
    "none recorded",
    "latest request (#",
    "continue from the latest request",
    "resolve or re-check the blocked items",
)
_OPEN_SECTIONS = {"in progress": "in progress", "blocked": "blocked", "next steps": "next"}


def _clip(text: str, limit: int) -> str:
    """``text`` on one line (white space folded), at most ``limit`` characters: cut at a word
    boundary past half the limit, else mid-word, and ended with ``…`` when cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return (cut if len(cut) > limit // 2 else text[: limit - 1]) + "…"


def open_items(summary: str | None, last: Run | None, request_text: str) -> list[str]:
    """What the session left open, at most ``MAX_OPEN_ITEMS`` short texts: its last request
    when that run did not finish (interrupted, failed or still running), then the items of the
    summary's "In progress", "Next steps" and "Blocked" sections (the extractive summarizer's
    stock lines left out; in the extractive format only its ``[todo]`` items and the agent's
    open question count as next steps; ``_still_blocked`` filters blocked items)."""
    items: list[str] = []
    if last is not None and last.status.value != "finished" and request_text:
        items.append(f"last request {last.status.value}: {sn.gist(request_text, 30)}")
    found = _section_items(summary or "", last)
    for section in ("in progress", "next", "blocked"):
        items += [f"{section}: {t}" for t in found[section][:PER_SECTION]]
    return [_clip(redact(i), OPEN_ITEM_CHARS) for i in items[:MAX_OPEN_ITEMS]]


def _section_items(summary: str, last: Run | None) -> dict[str, list[str]]:
    """The bullet items of the summary's open sections, by section (``open_items``)."""
    found: dict[str, list[str]] = {"in progress": [], "next": [], "blocked": []}
    current = None
    extractive = "## Files read and modified" in summary
    for line in summary.splitlines():
        m = _HEADING.match(line)
        if m:
            current = _OPEN_SECTIONS.get(m.group(1).strip().lower())
            continue
        if current is None or not line.startswith("- "):
            continue
        text = line[2:].strip()
        low = text.lower()
        if any(low.startswith(b) for b in _BOILERPLATE):
            continue
        if (
            current == "next"
            and extractive
            and not (low.startswith("[todo]") or "question awaits" in low)
        ):
            continue
        if current == "blocked" and not _still_blocked(text, last):
            continue
        found[current].append(text.replace("[todo] ", ""))
    return found


def _still_blocked(item: str, last: Run | None) -> bool:
    """A blocked item worth handing on: not a harness protocol error (the call never ran),
    not a read-only command that found nothing, not from a run before the last one."""
    if "tool_use_error" in item or _READ_ONLY.search(item):
        return False
    m = re.search(r"\(#(\d+)\)", item)
    return not (m and last is not None and int(m.group(1)) < last.request_seq)


def facts_open_items(facts: SessionFacts, last: Run | None, request_text: str) -> list[str]:
    """What the session left open at its end, from the extraction (issue 39), at most
    ``MAX_OPEN_ITEMS`` short texts: its last request when that run did not finish, the
    errors after the last request that nothing resolved (first the newest), the open items
    of its newest task list, and the calls that never returned."""
    items: list[str] = []
    if last is not None and last.status.value != "finished" and request_text:
        items.append(f"last request {last.status.value}: {sn.gist(request_text, 30)}")
    since = facts.requests[-1][0] if facts.requests else -1
    for e in reversed(worth_naming(facts.unresolved_errors)):
        if e.seq > since:
            items.append(f"unresolved: {e.tool} `{e.target}` failed (#{e.seq}): {e.last_line}")
    items += [f"next: {t.label()}" for t in facts.tasks if t.open][:PER_SECTION]
    items += [
        f"unknown effects: {tool} `{target}` (#{seq}) has no recorded result"
        for seq, tool, target in facts.unanswered
        if seq > since
    ][:PER_SECTION]
    return [_clip(redact(i), OPEN_ITEM_CHARS) for i in items[:MAX_OPEN_ITEMS]]


def worth_naming(errors: Sequence[ErrorNote]) -> list[ErrorNote]:
    """The errors worth handing on (``_still_blocked``'s rule): not a harness protocol error
    (``tool_use_error``: the call never ran), not a read-only command that found nothing."""
    return [
        e
        for e in errors
        if "tool_use_error" not in f"{e.first_line} {e.last_line}"
        and not _READ_ONLY.search(f"`{e.target}")
    ]


def session_digest(
    facts: SessionFacts,
    status: str | None = None,
    main: str = "",
    *,
    labels: Sequence[str] | None = None,
) -> str:
    """The session in one line a person reads (issue 39: MEMORY.md's thread heads and ledger
    from the same extraction as the summary): what was asked (``main``, the session's main
    request, when it is not the last; the last request), the outcome (the last answer's
    gist, whether the newest test run passed), the files changed with the kind of change,
    the newest decision stated, and the newest unresolved error worth naming. ``labels``
    keeps only those parts (``asked``, ``last request``, ``outcome``, ``changed``,
    ``decided``, ``unresolved``). At most ``DIGEST_CHARS`` characters; "" when nothing is
    left."""
    parts = [
        (k, v)
        for k, v in _digest_parts(facts, status, main)
        if labels is None or k.split(" (")[0] in labels
    ]
    if not parts:
        return ""
    return _clip(redact("; ".join(f"{k}: {v}" for k, v in parts)), DIGEST_CHARS)


def _digest_parts(facts: SessionFacts, status: str | None, main: str) -> list[tuple[str, str]]:
    parts: list[tuple[str, str]] = []
    first = sn.gist(main, 20) if main else ""
    if first and facts.requests and first != sn.gist(facts.requests[-1][1], 20):
        parts.append(("asked", first))
    if facts.requests:
        ended = f" ({status})" if status in ("interrupted", "failed", "running") else ""
        label = "last request" if parts else "asked"
        parts.append((f"{label}{ended}", sn.gist(facts.requests[-1][1], 24)))
    outcome = _clip(sn.gist(facts.last_answer[1], 24), 200) if facts.last_answer else ""
    tests = [c for c in facts.commands if c.is_test and c.ok is not None]
    if tests:
        t = tests[-1]
        state = (
            "passed"
            if t.ok
            else (f"failed (exit {t.exit_code})" if t.exit_code is not None else "failed")
        )
        run = f"tests {state}: `{_clip(t.command, 60)}`"
        outcome = f"{outcome}; {run}" if outcome else run
    if outcome:
        parts.append(("outcome", outcome))
    changed = facts.changed_files
    if changed:
        names = [f"{f.path.rsplit('/', 1)[-1]} ({f.change})" for f in reversed(changed)][:4]
        more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""
        parts.append(("changed", f"{', '.join(names)}{more}"))
    if facts.decisions:
        parts.append(("decided", _clip(facts.decisions[-1], 160)))
    unresolved = worth_naming(facts.unresolved_errors)
    if unresolved:
        e = unresolved[-1]
        parts.append(("unresolved", f"`{_clip(e.target, 60)}` failed: {_clip(e.last_line, 120)}"))
    return parts


# ---------------------------------------------------------------------------- recording a session


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One consolidated session as the DAG records it. ``earliest``/``latest``: its start and
    end (else its capture time), aware UTC; ``content``: its memory sentence; ``*_ref``: the
    workspace-relative paths of its artifacts (None: not written); ``open_items``: what it
    left open (``open_items``); ``meta``: the session node's figures; ``digest``: the
    session in one line (``session_digest``, issue 39), the thread head's sample when set."""

    agent_id: str
    session_key: str
    harness: str
    project: str | None
    earliest: datetime
    latest: datetime
    content: str
    transcript_ref: str | None = None
    summary_ref: str | None = None
    compaction_ref: str | None = None
    open_items: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    digest: str = ""


def update_dag(
    store: SqlStore,
    rec: SessionRecord,
    compactions: Sequence[Entry],
    user_texts: Sequence[str],
    *,
    now: datetime,
) -> str:
    """Record ``rec`` (module docstring) in one transaction: its nodes (one per entry of
    ``compactions``, rows with ``compaction`` set), edges, thread head (only when it has a
    summary or compaction artifact) and thread node, each stamped ``now``. ``user_texts``
    are searched for other threads' project paths. Returns the session's thread key."""
    agent = rec.agent_id
    tk, label, thread_id = thread_of(agent, rec.project, rec.session_key)
    sid = session_node_id(agent, rec.session_key)
    token = ln.session_token(agent, rec.session_key)
    session = DagNode(
        sid,
        agent,
        "session",
        rec.session_key,
        rec.content,
        now,
        rec.project,
        rec.session_key,
        tk,
        rec.harness,
        rec.summary_ref or rec.transcript_ref,
        rec.earliest,
        rec.latest,
        rec.meta,
    )
    nodes, compacted = [session], []
    for e in compactions:
        info = e.compaction
        assert info is not None
        at = e.timestamp or rec.latest
        cid = f"compaction:{token}:{e.seq}"
        nodes.append(
            DagNode(
                cid,
                agent,
                "compaction",
                f"{rec.session_key}#{e.seq}",
                sn.gist(info.summary, 30) or "(empty summary)",
                now,
                rec.project,
                rec.session_key,
                tk,
                rec.harness,
                rec.compaction_ref,
                at,
                at,
                {
                    "seq": e.seq,
                    "covers_through_seq": info.covers_through_seq,
                    "continuation": info.continuation,
                    "trigger": info.trigger,
                },
            )
        )
        compacted.append(DagEdge(sid, cid, "compacted_into", agent, at))
    with store.batch():
        store.put_dag_nodes(nodes)
        store.replace_edges(agent, "compacted_into", [sid], compacted)
        store.replace_edges(
            agent, "mentions", [sid], _mentions(store, rec, sid, thread_id, user_texts)
        )
        head_ref = rec.summary_ref or rec.compaction_ref
        if head_ref:
            store.upsert_thread_head(
                ThreadHead(
                    agent,
                    tk,
                    label,
                    rec.project,
                    rec.session_key,
                    rec.harness,
                    "summary" if rec.summary_ref else "compaction",
                    head_ref,
                    sid,
                    _clip(rec.digest or rec.content, SAMPLE_CHARS),
                    rec.latest,
                    now,
                    rec.open_items,
                )
            )
        _thread_node(store, rec, tk, label, thread_id, now)
    return tk


def _mentions(
    store: SqlStore, rec: SessionRecord, sid: str, thread_id: str, user_texts: Sequence[str]
) -> list[DagEdge]:
    """The session's ``mentions`` edges: its own thread, and every other known thread whose
    project path one of ``user_texts`` contains."""
    agent = rec.agent_id
    mentions = [DagEdge(sid, thread_id, "mentions", agent, rec.earliest)]
    for head in store.thread_heads(agent):
        if (
            head.project
            and head.project != rec.project
            and any(head.project in t for t in user_texts)
        ):
            mentions.append(
                DagEdge(sid, thread_of(agent, head.project, "")[2], "mentions", agent, rec.earliest)
            )
    return mentions


def _thread_node(
    store: SqlStore, rec: SessionRecord, tk: str, label: str, thread_id: str, now: datetime
) -> None:
    """Recompute the thread's ``continues`` chain (its sessions by start time) and its node."""
    agent = rec.agent_id
    sessions = store.dag_nodes(agent, kinds=["session"], thread_key=tk)
    sessions.sort(key=lambda n: (n.earliest_at or n.latest_at or now, n.node_id))
    chain = [
        DagEdge(b.node_id, a.node_id, "continues", agent, b.earliest_at or b.latest_at or now)
        for a, b in pairwise(sessions)
    ]
    store.replace_edges(agent, "continues", [n.node_id for n in sessions], chain)
    head = store.thread_head(agent, tk)
    times = [t for n in sessions if (t := n.earliest_at or n.latest_at)]
    ends = [n.latest_at for n in sessions if n.latest_at]
    store.put_dag_nodes(
        [
            DagNode(
                thread_id,
                agent,
                "thread",
                label,
                head.sample if head else label,
                now,
                rec.project,
                None,
                tk,
                head.harness if head else rec.harness,
                head.source_ref if head else None,
                min(times) if times else None,
                max(ends) if ends else None,
                {"sessions": len(sessions), "head_session": head.session_key if head else None},
            )
        ]
    )
