"""Durable memories of a session (seed 000's Tier 1 "durable memory rows"): which statements
the user made are kept by the consolidation pass, and storing them.

A durable statement is a user sentence that states a **constraint** (``always``, ``never``,
``must``, ...), a **decision** (``let's use``, ``instead of``, ``switch to``, ...) or a
**fact** (``<name> is/runs on/lives in ...`` about something concrete); see ``classify``.
Transient operational state is never kept (B63: the origin stored 33 memories in minutes, most
of them temp paths, queue depths and hedged in-progress conclusions): ``transient_reason``
says why a sentence is transient. ``durable_statements`` picks at most
``MAX_MEMORIES_PER_SESSION`` from a session's user texts and ``remember_durable`` stores them
through ``continuity.transcripts.memories.remember`` (redacted, de-duplicated by content).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from continuity.lineage import sentence as sn
from continuity.transcripts.memories import remember

if TYPE_CHECKING:
    from continuity.store import SqlStore

#: At most this many durable memories per session (B63: the origin stored 33 in minutes).
MAX_MEMORIES_PER_SESSION = 12
#: Importance of extracted memories by type (constraints rank first in MEMORY.md).
IMPORTANCE = {"constraint": 0.8, "decision": 0.7, "fact": 0.6}
#: The tag every memory the consolidation pass stores carries.
TAG = "consolidated"

_FILLER = re.compile(
    r"^(?:ok(?:ay)?|alright|yeah|yes|no|so|well|hm+|dude|my dude|omfg|wait|"
    r"also|and|but|please)\b[,!.:]?\s*",
    re.I,
)
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_TEMP_PATH = re.compile(
    r"(?:^|[\s'\"(=:,])(?:/private)?/(?:tmp|var/tmp|var/folders|dev/shm)/"
    r"|/T/TemporaryItems/|\$TMPDIR|%TEMP%|\\AppData\\Local\\Temp\\"
    r"|\b[A-Za-z]:\\(?:Windows\\)?Temp\\",
    re.I,
)
_COUNTER = re.compile(
    r"\b(?:queue|backlog|buffer|pool|inflight|in-flight)\s+(?:depth|length|size|count)\b"
    r"|\b\d+\s+(?:pending|queued|in[- ]flight|remaining|left|retries|retrying|running|waiting"
    r"|outstanding|jobs?|items?|messages?|events?|errors?|warnings?|failures?)\b"
    r"|\b(?:depth|count|attempt|retry|retries|pid|port)\s*[:=#]?\s*\d+"
    r"|\b\d+\s*/\s*\d+\b|https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0)\b|\b[0-9a-f]{12,}\b",
    re.I,
)
_HEDGE = re.compile(
    r"\b(?:seems?|seemed|looks like|appears? to|maybe|might|perhaps|probably|possibly|i think"
    r"|i guess|i suppose|i believe|not sure|so far|for now|right now|currently|at the moment"
    r"|at this point|still|investigating|debugging|trying|wip|hm+|is (?:broken|failing|down"
    r"|stuck|hanging|flaky)|(?:does ?n[o']t|doesnt) work|not working)\b",
    re.I,
)
_NOT_PROSE = re.compile(
    r"[{};➜✗]|=>|->|::|^\s*(?:\$|>|\+|at\s+\S+\s*\(|\d+\s*[-+|])"
    r"|^\s*\w*(?:Error|Exception|Traceback)\b|\[Request interrupted",
    re.I,
)
_CONSTRAINT = re.compile(
    r"\b(?:always|never|must|mustn'?t|from now on|going forward|by default"
    r"|make sure|under no circumstances)\b",
    re.I,
)
_SHOULD = re.compile(r"\bshould(?:n'?t| not)?\b", re.I)
_VAGUE = re.compile(r"\b(?:should|must) be (?:that|this|it|so)\b", re.I)
_DECISION = re.compile(
    r"\b(?:let'?s use|let us use|we(?:'ll| will)? use|instead of|switch(?:ed)?"
    r" to|go(?:ing)? with|we decided|decided to|the decision is|stick with"
    r"|the plan is to)\b",
    re.I,
)
#: Issue 39: "facts" MEMORY.md showed that are no durable fact: a value being tuned (a colour
#: or a short hash: "green diff is #b5bd68", "8abeb7 is what bullet is in old pi") and a
#: definition by a question word ("X is what Y is").
_VALUE = re.compile(r"(?:^|[\s(])#?[0-9a-f]{6}\b|#[0-9a-f]{3}\b", re.I)
_WH_PREDICATE = re.compile(
    r"\b(?:is|are)\s+(?:actually\s+)?(?:what|where|which|who|how|why"
    r"|when)\b",
    re.I,
)
_FACT = re.compile(
    r"^(?!(?:this|that|it|these|those|there|here|what|which|who|why|how|i|you|"
    r"he|she|they|we|my|your)\b)[\w@./#+-]+(?:\s+[\w@./#+-]+){0,5}\s+(?:is|are"
    r"|lives in|lives at|runs on|runs at|is stored in|points to|means)\s+\S",
    re.I,
)


def transient_reason(sentence: str) -> str | None:
    """Why ``sentence`` is transient operational state, never a durable fact (B63): a temp
    path, a counter or queue figure (or a local URL, a long hex id), a hedged or in-progress
    conclusion, a question; None when it is none of these."""
    if _TEMP_PATH.search(sentence):
        return "temp path"
    if _COUNTER.search(sentence):
        return "counter"
    if "?" in sentence:
        return "question"
    if _HEDGE.search(sentence):
        return "in-progress conclusion"
    return None


def classify(sentence: str) -> str | None:
    """``constraint``, ``decision`` or ``fact`` for a durable statement, else None. A
    constraint has a strong marker (always, never, must, make sure, from now on, by default)
    or says what a named file or identifier should do; a decision names a choice (use,
    instead of, switch to, go with, decided); a fact states ``<name> is/are/runs on ...``
    about something concrete (a file, identifier, number or ``#`` value), but not a colour or
    short hash being tuned nor a "X is what Y is" definition (issue 39: MEMORY.md showed
    "[fact] 8abeb7 is what bullet is in old pi")."""
    if _VAGUE.search(sentence):
        return None
    if _CONSTRAINT.search(sentence) or (_SHOULD.search(sentence) and sn.has_anchor(sentence, None)):
        return "constraint"
    if _DECISION.search(sentence):
        return "decision"
    if _VALUE.search(sentence) or _WH_PREDICATE.search(sentence):
        return None  # issue 39: a tuned value or a question-word definition is no fact
    if _FACT.search(sentence) and (sn.has_anchor(sentence, None) or re.search(r"\d|#\w", sentence)):
        return "fact"
    return None


def _candidate(raw: str) -> str:
    """One split piece of a user text as a candidate sentence: bullets, filler openers
    (``ok,``, ``hm,``) and a trailing ellipsis cut."""
    s = raw.strip().strip("-*• \t")
    while _FILLER.match(s) and _FILLER.sub("", s, count=1) != s:
        s = _FILLER.sub("", s, count=1).strip()
    return re.sub(r"\s*(?:\.\.\.|…)$", "", s).strip(" ,")


def durable_statements(texts: Iterable[str]) -> tuple[list[tuple[str, str]], int]:
    """The durable statements of user texts: ``([(type, sentence)], transient_count)``.
    Each text is split into sentences and lines; filler openers (``ok,``, ``hm,``) are cut;
    a sentence counts when it is prose of 4..40 words, not transient (``transient_reason``)
    and classified (``classify``). At most ``MAX_MEMORIES_PER_SESSION``: constraints first,
    then decisions, then facts, each in order of appearance; repeats (case-folded) once."""
    found: dict[str, tuple[int, int, str, str]] = {}
    transient = 0
    order = {"constraint": 0, "decision": 1, "fact": 2}
    n = 0
    for text in texts:
        for raw in _SPLIT.split(text):
            s = _candidate(raw)
            if not 4 <= len(s.split()) <= 40 or s.startswith("/") or _NOT_PROSE.search(s):
                continue
            kind = classify(s)
            if kind is None:
                continue
            if transient_reason(s):
                transient += 1
                continue
            n += 1
            found.setdefault(s.casefold(), (order[kind], n, kind, s))
    ranked = sorted(found.values())[:MAX_MEMORIES_PER_SESSION]
    return [(kind, s) for _, _, kind, s in ranked], transient


#: Issue 39: at most this many decisions the agent stated are kept per session, at this
#: importance (below the user's own decisions).
MAX_AGENT_DECISIONS = 3
AGENT_DECISION_IMPORTANCE = 0.65
_MARKS = re.compile(r"\*\*|`")


def agent_decisions(decisions: Iterable[str]) -> list[str]:
    """The decisions the agent stated (``continuation.facts.SessionFacts.decisions``, the
    extraction the summary uses) that are durable: a choice in the words ``classify`` takes
    for a decision (use, instead of, switch to, go with, decided), prose of 6..40 words,
    no tuned value (``_VALUE``), not transient (``transient_reason``); markdown marks
    removed; the newest ``MAX_AGENT_DECISIONS``, oldest first."""
    out: list[str] = []
    for raw in decisions:
        s = _candidate(_MARKS.sub("", raw))
        if (
            not 6 <= len(s.split()) <= 40
            or _NOT_PROSE.search(s)
            or not _DECISION.search(s)
            or _VALUE.search(s)
            or transient_reason(s)
            or s in out
        ):
            continue
        out.append(s)
    return out[-MAX_AGENT_DECISIONS:]


def remember_durable(
    store: SqlStore,
    user_texts: Iterable[str],
    *,
    session_key: str,
    agent_id: str,
    at: datetime,
    decisions: Iterable[str] = (),
) -> tuple[int, int]:
    """Store the ``durable_statements`` of a session's ``user_texts`` as memories (type the
    statement's, tag ``TAG``, importance ``IMPORTANCE``, source the session, dated ``at``).
    Returns ``(added, transient_skipped)``: memories new to the store (a repeat is
    de-duplicated by ``remember``) and transient sentences left out. ``decisions``: the
    decisions the agent stated (issue 39), kept through ``agent_decisions``. Must not run
    inside ``store.batch()`` (``remember``'s ``RuntimeError``)."""
    statements, transient = durable_statements(user_texts)
    added = 0
    for kind, text in statements:
        done = remember(
            store,
            text,
            type=kind,
            tags=[TAG],
            importance=IMPORTANCE[kind],
            source_id=session_key,
            agent_id=agent_id,
            now=at,
        )
        added += 0 if done.deduped else 1
    for text in agent_decisions(decisions):
        done = remember(
            store,
            text,
            type="decision",
            tags=[TAG, "agent"],
            importance=AGENT_DECISION_IMPORTANCE,
            source_id=session_key,
            agent_id=agent_id,
            now=at,
        )
        added += 0 if done.deduped else 1
    return added, transient
