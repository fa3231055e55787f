"""The consolidation pass (seed 000's "Dreaming"): one completed transcript in, the session's
lineage out.

``consolidate(store, session_key)`` runs only over a **completed** ``session_transcripts`` row
(session end, recovery after ``clear`` or the idle sweep completed it); a session still open, and
so any checkpoint taken mid-session, never starts it. For that row it:

1. writes the manifest (first), then the immutable ``transcript`` artifact (the sanitized,
   redacted projection of the row, ``continuity.projection.project``), the ``summary``
   artifact (the whole session through the configured summarizer, extractive by default) and,
   when the log holds compaction rows, the ``compaction`` artifact (every compaction summary of
   the session, oldest first, redacted); summary and compaction carry a memory sentence
   (``continuity.sentence.memory_sentence``);
2. extracts **durable memories** stated by the user (constraints, decisions, facts; see
   ``durable_statements``) into the memory store through ``continuity.recall.remember``, never
   transient operational state (B63: temp paths, counters, hedged in-progress conclusions,
   questions) and nothing at all from a scratch session (``lineage.is_noise``);
3. in one transaction, updates the temporal DAG (a ``session`` node, one ``compaction`` node per
   compaction row, the ``thread`` node; edges ``continues`` to the previous session of the
   thread, ``compacted_into`` to each compaction, ``mentions`` to its own thread and to every
   known thread whose project path the user named) and the thread head (never moved back in
   time).

A **thread** is one line of work: the project (``project:<path>``), else the session itself
(``session:<key>``). Running the pass again over the same transcript changes nothing: the
artifacts exist with the same bodies (a model-written summary is not asked for again), memories
are de-duplicated, DAG rows are upserted. A transcript that changed since the last capture (a
resumed session completed again) is a new capture: new artifacts named by its completion time,
the earlier ones listed as ``superseded`` in the manifest.

A **damaged** artifact (edited, corrupt: ``lineage.ArtifactCorrupt``, exit code 7) stops the
pass for its session only, with the repair in the message: delete the file and consolidate
again. A deleted artifact of the current capture is written again under its name.
"""

from __future__ import annotations

import hashlib
import base64
import re
import shlex
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from continuity import lineage as ln
from continuity import sentence as sn
from continuity.model import Entry, EntryKind, Role, Run
from continuity.projection import project as sanitized
from continuity.recall import remember
from continuity.store import iter_entries
from continuity.redact import redact
from continuity.store.lineage import DagEdge, DagNode, ThreadHead
from continuity.summarize import Summarizer, WorkingView, summarize
from continuity.summarize.bounds import digest
from continuity.transcript_log import transcript_path

if TYPE_CHECKING:
    from continuity.store import SqlStore

PAGE_ROWS = 500
#: At most this many durable memories per session (B63: the origin stored 33 in minutes).
MAX_MEMORIES_PER_SESSION = 12
#: At most this many open items per thread head, each at most this many characters.
MAX_OPEN_ITEMS = 3
OPEN_ITEM_CHARS = 180
#: A thread head's sample holds a whole memory sentence (48 words).
SAMPLE_CHARS = 400
#: Thread keys fit the 500-character column of revision 0008.
THREAD_KEY_CHARS = 480
#: At most this many items of one summary section become open items.
PER_SECTION = 2
#: Importance of extracted memories by type (constraints rank first in MEMORY.md).
IMPORTANCE = {"constraint": 0.8, "decision": 0.7, "fact": 0.6}
TAG = "consolidated"
#: The most time one session's summary may take (a model summarizer may need several chunks).
SUMMARY_SECONDS = 600.0
EMPTY_TRANSCRIPT = "_No conversation text was recorded._"


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _short_id(text: str) -> str:
    return base64.b32encode(hashlib.sha256(text.encode("utf-8")).digest()).decode().lower()[:16]


def thread_of(agent_id: str, project: str | None, session_key: str) -> tuple[str, str, str]:
    """``(thread_key, label, node_id)`` of a session's thread: its project, else itself. A key
    over ``THREAD_KEY_CHARS`` keeps its head and ends in ``#`` and a hash of the whole."""
    key = f"project:{project}" if project else f"session:{session_key}"
    if len(key) > THREAD_KEY_CHARS:
        key = f"{key[:THREAD_KEY_CHARS - 17]}#{_short_id(key)}"
    return key, project or session_key, f"thread:{_short_id(f'{agent_id}:{key}')}"


#: The DAG id of a session: ``session:<token>`` (``lineage.session_node_id``).
session_node_id = ln.session_node_id


# ---------------------------------------------------------------------------- durable statements

_FILLER = re.compile(r"^(?:ok(?:ay)?|alright|yeah|yes|no|so|well|hm+|dude|my dude|omfg|wait|"
                     r"also|and|but|please)\b[,!.:]?\s*", re.I)
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_TEMP_PATH = re.compile(r"(?:^|[\s'\"(=:,])(?:/private)?/(?:tmp|var/tmp|var/folders|dev/shm)/"
                        r"|/T/TemporaryItems/|\$TMPDIR|%TEMP%|\\AppData\\Local\\Temp\\"
                        r"|\b[A-Za-z]:\\(?:Windows\\)?Temp\\", re.I)
_COUNTER = re.compile(
    r"\b(?:queue|backlog|buffer|pool|inflight|in-flight)\s+(?:depth|length|size|count)\b"
    r"|\b\d+\s+(?:pending|queued|in[- ]flight|remaining|left|retries|retrying|running|waiting"
    r"|outstanding|jobs?|items?|messages?|events?|errors?|warnings?|failures?)\b"
    r"|\b(?:depth|count|attempt|retry|retries|pid|port)\s*[:=#]?\s*\d+"
    r"|\b\d+\s*/\s*\d+\b|https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0)\b|\b[0-9a-f]{12,}\b", re.I)
_HEDGE = re.compile(
    r"\b(?:seems?|seemed|looks like|appears? to|maybe|might|perhaps|probably|possibly|i think"
    r"|i guess|i suppose|i believe|not sure|so far|for now|right now|currently|at the moment"
    r"|at this point|still|investigating|debugging|trying|wip|hm+|is (?:broken|failing|down"
    r"|stuck|hanging|flaky)|(?:does ?n[o']t|doesnt) work|not working)\b", re.I)
_NOT_PROSE = re.compile(r"[{};➜✗]|=>|->|::|^\s*(?:\$|>|\+|at\s+\S+\s*\(|\d+\s*[-+|])"
                        r"|^\s*\w*(?:Error|Exception|Traceback)\b|\[Request interrupted", re.I)
_CONSTRAINT = re.compile(r"\b(?:always|never|must|mustn'?t|from now on|going forward|by default"
                         r"|make sure|under no circumstances)\b", re.I)
_SHOULD = re.compile(r"\bshould(?:n'?t| not)?\b", re.I)
_VAGUE = re.compile(r"\b(?:should|must) be (?:that|this|it|so)\b", re.I)
_DECISION = re.compile(r"\b(?:let'?s use|let us use|we(?:'ll| will)? use|instead of|switch(?:ed)?"
                       r" to|go(?:ing)? with|we decided|decided to|the decision is|stick with"
                       r"|the plan is to)\b", re.I)
_FACT = re.compile(r"^(?!(?:this|that|it|these|those|there|here|what|which|who|why|how|i|you|"
                   r"he|she|they|we|my|your)\b)[\w@./#+-]+(?:\s+[\w@./#+-]+){0,5}\s+(?:is|are"
                   r"|lives in|lives at|runs on|runs at|is stored in|points to|means)\s+\S", re.I)


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
    about something concrete (a file, identifier, number or ``#`` value)."""
    if _VAGUE.search(sentence):
        return None
    if _CONSTRAINT.search(sentence) or (_SHOULD.search(sentence)
                                        and sn.has_anchor(sentence, None)):
        return "constraint"
    if _DECISION.search(sentence):
        return "decision"
    if _FACT.search(sentence) and (sn.has_anchor(sentence, None) or re.search(r"\d|#\w", sentence)):
        return "fact"
    return None


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
            s = raw.strip().strip("-*• \t")
            while _FILLER.match(s) and _FILLER.sub("", s, count=1) != s:
                s = _FILLER.sub("", s, count=1).strip()
            s = re.sub(r"\s*(?:\.\.\.|…)$", "", s).strip(" ,")
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


# ---------------------------------------------------------------------------- reading a session


def _rows(store: "SqlStore", key: str) -> Iterator[Entry]:
    return iter_entries(store, key, visible_only=True, page_rows=PAGE_ROWS)


@dataclass
class _Facts:
    """What the pass reads from a session's log in one walk."""

    messages: list[Entry] = field(default_factory=list)
    compactions: list[Entry] = field(default_factory=list)
    requests: list[Entry] = field(default_factory=list)
    user_texts: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)


def _read(store: "SqlStore", key: str) -> _Facts:
    f = _Facts()
    for e in _rows(store, key):
        if e.kind is EntryKind.COMPACTION and e.compaction is not None:
            f.compactions.append(e)
        if e.kind is not EntryKind.MESSAGE:
            continue
        f.messages.append(e)
        if e.role is Role.USER and e.text().strip():
            f.user_texts.append(e.text())
            if e.is_request:
                f.requests.append(e)
        if e.role is Role.ASSISTANT and e.tool_calls():
            for c in digest(e).calls:
                if c.kind == "write":
                    f.modified.extend(p for p in c.paths if p not in f.modified)
    return f


def main_request(requests: list[Entry]) -> str:
    """The session's main request: the first that is not a slash command and has at least 4
    words, else the first one ("" without requests)."""
    for e in requests:
        text = e.text().strip()
        if len(text.split()) >= 4 and not text.startswith("/"):
            return text
    return requests[0].text().strip() if requests else ""


# ---------------------------------------------------------------------------- the pass


@dataclass
class Consolidation:
    """What the pass did for one session. ``status``: ``consolidated`` (something new was
    written), ``unchanged`` (the lineage was already complete), ``not_completed`` (the
    transcript is still open: nothing written), ``no_transcript`` or ``damaged`` (an artifact
    failed its check: ``error`` says which and how to repair it). ``artifacts`` maps kind
    to workspace-relative path; ``created`` lists the artifact files this run wrote."""

    session_key: str
    agent_id: str
    status: str
    token: str | None = None
    artifacts: dict[str, str] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)
    manifest_revision: int | None = None
    summary_status: str | None = None
    memories_added: int = 0
    transient_skipped: int = 0
    thread_key: str | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``consolidate --json`` object of this session."""
        return {"session": self.session_key, "agent_id": self.agent_id, "status": self.status,
                "token": self.token, "artifacts": dict(self.artifacts),
                "created": list(self.created), "manifest_revision": self.manifest_revision,
                "summary_status": self.summary_status, "memories_added": self.memories_added,
                "transient_skipped": self.transient_skipped, "thread": self.thread_key,
                "error": self.error}


@dataclass
class _Ctx:
    store: "SqlStore"
    home: Any
    agent: str
    key: str
    harness: str
    project: str | None
    started: datetime | None
    ended: datetime | None
    capture: datetime
    now: datetime
    raw_hash: str
    out: Consolidation


def repair_hint(key: str, path: Path | None, *, missing: bool = False) -> str:
    """How to repair a damaged artifact of session ``key``: delete it (``path``, else "the
    damaged file") and consolidate the session again; for a ``missing`` one, only the
    latter."""
    command = f"`continuity consolidate {shlex.quote(sn.one_line(key))}`"
    if missing:
        return f"to repair: run {command} again (it writes the missing file)"
    target = str(path) if path is not None else "the damaged file"
    return f"to repair: delete {target} and run {command} again"


def consolidate(store: "SqlStore", session_key: str, *, home: Any = None,
                agent_id: str | None = None, summarizer: Summarizer | None = None,
                sentence_writer: sn.SentenceWriter | None = None,
                now: datetime | None = None) -> Consolidation:
    """Run the pass over one session's completed transcript (module docstring).
    ``summarizer`` defaults to the configured one (``[summarizer]``), ``sentence_writer`` to
    the configured model when that is not the extractive provider. Raises ``ArtifactConflict``
    for a write-once clash, ``ArtifactCorrupt`` (exit code 7) for a damaged artifact, its
    message saying what is wrong and how to repair it (``repair_hint``), and ``ConfigError``
    for bad settings."""
    try:
        return _consolidate(store, session_key, home=home, agent_id=agent_id,
                            summarizer=summarizer, sentence_writer=sentence_writer, now=now)
    except ln.ArtifactCorrupt as exc:
        raise ln.ArtifactCorrupt(f"{exc}; {repair_hint(session_key, exc.path)}",
                                 exc.path) from exc


def _consolidate(store: "SqlStore", session_key: str, *, home: Any,
                 agent_id: str | None, summarizer: Summarizer | None,
                 sentence_writer: sn.SentenceWriter | None,
                 now: datetime | None) -> Consolidation:
    session = store.get_session(session_key)
    agent = agent_id or (session.agent_id if session else "default")
    out = Consolidation(session_key, agent, "no_transcript")
    row = store.get_transcripts([session_key], agent).get(session_key)
    if row is None:
        return out
    if row.completed_at is None:
        out.status = "not_completed"
        return out
    if summarizer is None:
        summarizer, sentence_writer = configured(home)
    now = now or _now()
    out.token = ln.session_token(agent, session_key)
    ctx = _Ctx(store, home, agent, session_key, row.harness, row.project,
               session.started_at if session else row.created_at,
               session.ended_at if session else row.updated_at, ln.utc(row.completed_at),
               now, row.content_hash, out)
    facts = _read(store, session_key) if session else _Facts()
    last = store.last_run(session_key, agent_id=agent) if session else None
    status = last.status.value if last else None
    previous = _manifest(home, out.token)
    same = previous is not None and previous.get("transcript_sha256") == row.content_hash \
        and bool(previous.get("transcript_path"))
    if same:  # this capture's artifacts (a deleted one is written again): keep their names
        ctx.capture = _stamp_of(previous["transcript_path"]) or ctx.capture  # type: ignore
    changes = {"harness": ctx.harness, "project": ctx.project,
               "started_at": ln.iso(ctx.started), "ended_at": ln.iso(ctx.ended),
               "transcript_sha256": row.content_hash,
               "canonical_transcript_path": _canonical(home, ctx.harness)}
    if previous is None:
        _manifest_update(ctx, {**changes, "transcript_status": "pending",
                               "summary_status": "pending"})
    transcript = _write_transcript(ctx, row.content, row.content_hash)
    summary, sentence, body = _summary(ctx, facts, status, summarizer, sentence_writer,
                                       previous if same else None)
    compaction = _compaction(ctx, facts, sentence_writer, previous if same else None)
    if previous is not None and not same:
        changes["superseded"] = [previous[k] for k in ("transcript_path", "summary_path",
                                                       "compaction_path") if previous.get(k)]
    changes.update(transcript_path=transcript, transcript_status="completed",
                   summary_path=summary, summary_status=out.summary_status,
                   compaction_path=compaction)
    manifest = _manifest_update(ctx, changes)
    out.artifacts["manifest"] = manifest.rel
    if not ln.is_noise(ctx.project, session_key, ctx.harness):
        _remember(ctx, facts.user_texts)
    _update_dag(ctx, facts, sentence, (summary, compaction), body, last)
    out.status = "consolidated" if out.created or out.memories_added else "unchanged"
    return out


def configured(home: Any) -> tuple[Summarizer, sn.SentenceWriter | None]:
    """The configured summarizer and, unless it is the extractive one, a sentence writer on
    the same model (10 s per sentence, seed 000)."""
    from continuity.summarize import make_summarizer
    from continuity.summarize.settings import load_settings

    summarizer = make_summarizer(load_settings(home))
    return summarizer, (None if summarizer.name == "extractive" else model_writer(summarizer))


def model_writer(summarizer: Summarizer, seconds: float = 10.0) -> sn.SentenceWriter:
    """A ``SentenceWriter`` asking ``summarizer``'s model for one sentence within ``seconds``
    (the provider's smallest output cap, 256 tokens; a length stop counts as no reply)."""
    from continuity.summarize import SummaryRequest

    def write(kind: str, anchor: str, project: str | None, body: str) -> str | None:
        system = sn.SENTENCE_SYSTEM.format(kind=kind, anchor=anchor)
        prompt = f"Project: {project or 'none'}\n\n<{kind}>\n{body}\n</{kind}>"
        request = SummaryRequest(system, prompt, (), None, (), 0, 0, 480)
        reply = summarizer.generate(request, cancel=threading.Event(),
                                    deadline=time.monotonic() + seconds)
        return reply.text if reply.stop == "end" else None

    return write


def _manifest(home: Any, token: str) -> dict[str, Any] | None:
    path = ln.find_manifest(home, token)
    return dict(ln.read_artifact(path).fields) if path else None


def _exists(home: Any, rel: str | None) -> bool:
    return bool(rel) and (ln.resolve_home(home) / rel).is_file()  # type: ignore[operator]


def _stamp_of(rel: str) -> datetime | None:
    parsed = ln.parse_name(Path(rel).name)
    if parsed is None:
        return None
    day, clock = parsed[0].split("T")
    return ln.parse_iso(f"{day}T{clock[:8].replace('-', ':')}{clock[8:]}")


def _canonical(home: Any, harness: str) -> str:
    path = transcript_path(home, harness)
    return str(path.relative_to(ln.resolve_home(home)))


def _manifest_update(ctx: _Ctx, changes: dict[str, Any]) -> ln.Artifact:
    manifest, _ = ln.update_manifest(ctx.home, ctx.agent, ctx.key, changes,
                                     captured_at=ctx.capture, now=ctx.now)
    ctx.out.manifest_revision = int(manifest.fields["revision"])
    return manifest


def _base_fields(ctx: _Ctx) -> list[tuple[str, Any]]:
    token = ln.session_token(ctx.agent, ctx.key)
    manifest = ln.find_manifest(ctx.home, token)
    return [("agent_id", ctx.agent), ("session_key", ctx.key), ("harness", ctx.harness),
            ("project", ctx.project), ("captured_at", ln.iso(ctx.capture)),
            ("started_at", ln.iso(ctx.started)), ("ended_at", ln.iso(ctx.ended)),
            ("manifest_path", ln.rel_path(manifest.name) if manifest else None),
            ("content_sha256", None), ("hash_scope", None)]


def _write(ctx: _Ctx, kind: str, fields: list[tuple[str, Any]], body: str) -> str:
    result = ln.write_artifact(ctx.home, kind, fields, body, captured_at=ctx.capture)
    ctx.out.artifacts[kind] = result.rel
    if result.created:
        ctx.out.created.append(result.rel)
    return result.rel


def _links(ctx: _Ctx, *pairs: tuple[str | None, str]) -> list[str]:
    return [ln.wikilink(path, label) for path, label in pairs if path]


def _write_transcript(ctx: _Ctx, content: str, raw_hash: str) -> str:
    fields = _base_fields(ctx)
    manifest = dict(fields)["manifest_path"]
    fields += [("sanitizer_version", ln.SANITIZER_VERSION), ("transcript_sha256", raw_hash),
               ("canonical_transcript_path", _canonical(ctx.home, ctx.harness)),
               ("links", _links(ctx, (manifest, "manifest")))]
    return _write(ctx, "transcript", fields, sanitized(content) or EMPTY_TRANSCRIPT)


def _sentence_fields(sentence: str, quality: str) -> list[tuple[str, Any]]:
    return [("memory_sentence", sentence), ("memory_sentence_version", sn.SENTENCE_VERSION),
            ("memory_sentence_quality", quality)]


def _summary(ctx: _Ctx, facts: _Facts, status: str | None, summarizer: Summarizer,
             writer: sn.SentenceWriter | None, previous: dict[str, Any] | None
             ) -> tuple[str | None, str | None, str | None]:
    """The summary artifact's path, memory sentence and body (Nones when there is none)."""
    if previous and previous.get("summary_path") and _exists(ctx.home, previous["summary_path"]):
        old = ln.read_artifact(ln.resolve_home(ctx.home) / previous["summary_path"])
        ctx.out.summary_status = "completed"
        ctx.out.artifacts["summary"] = old.rel
        return old.rel, old.fields.get("memory_sentence"), old.body
    if previous and previous.get("summary_status") == "empty":
        ctx.out.summary_status = previous["summary_status"]
        return None, None, None
    result = summarize(WorkingView(None, [n.text for n in ctx.store.notes(ctx.key)],
                                   facts.messages), summarizer, cancel=threading.Event(),
                       deadline=time.monotonic() + SUMMARY_SECONDS)
    if result.summary is None:
        reason = result.reason.value if result.reason else "empty"
        ctx.out.summary_status = "empty" if reason == "empty" else f"refused:{reason}"
        return None, None, None
    anchor = sn.choose_anchor(ctx.project, result.summary, ctx.harness)
    date = (ctx.ended or ctx.capture).date().isoformat()
    sfacts = sn.SentenceFacts("summary", anchor, ctx.harness, date, main_request(facts.requests),
                              tuple(facts.modified), status,
                              latest=facts.requests[-1].text() if facts.requests else "")
    sentence, quality = sn.memory_sentence("summary", result.summary, sfacts, ctx.project,
                                           writer)
    fields = _base_fields(ctx)
    manifest = dict(fields)["manifest_path"]
    transcript = ctx.out.artifacts.get("transcript")
    fields += _sentence_fields(sentence, quality) + [
        ("summarizer", summarizer.name),
        ("links", _links(ctx, (transcript, "transcript"), (manifest, "manifest")))]
    ctx.out.summary_status = "completed"
    return _write(ctx, "summary", fields, result.summary), sentence, result.summary


def _compaction(ctx: _Ctx, facts: _Facts, writer: sn.SentenceWriter | None,
                previous: dict[str, Any] | None) -> str | None:
    if not facts.compactions:
        return None
    if previous and _exists(ctx.home, previous.get("compaction_path")):
        ctx.out.artifacts["compaction"] = previous["compaction_path"]
        return previous["compaction_path"]
    parts = []
    for i, e in enumerate(facts.compactions, 1):
        info = e.compaction
        assert info is not None
        when = ln.iso(e.timestamp) or "time unknown"
        label = "continuation checkpoint" if info.continuation else "harness compaction"
        parts.append(f"## Compaction {i} of {len(facts.compactions)}\n\n{when} · row #{e.seq} "
                     f"· covers rows #0-#{info.covers_through_seq} · {label}\n\n"
                     f"{redact(info.summary).strip() or '(empty summary)'}")
    body = "\n\n".join(parts)
    newest = facts.compactions[-1]
    anchor = sn.choose_anchor(ctx.project, body, ctx.harness)
    date = (newest.timestamp or ctx.ended or ctx.capture).date().isoformat()
    sfacts = sn.SentenceFacts("compaction", anchor, ctx.harness, date,
                              newest.compaction.summary if newest.compaction else "",
                              compactions=len(facts.compactions),
                              covers=newest.compaction.covers_through_seq if newest.compaction
                              else None)
    sentence, quality = sn.memory_sentence("compaction", body, sfacts, ctx.project, writer)
    fields = _base_fields(ctx)
    manifest = dict(fields)["manifest_path"]
    transcript = ctx.out.artifacts.get("transcript")
    fields += _sentence_fields(sentence, quality) + [
        ("compactions", len(facts.compactions)),
        ("links", _links(ctx, (transcript, "transcript"), (manifest, "manifest")))]
    return _write(ctx, "compaction", fields, body)


def _remember(ctx: _Ctx, user_texts: list[str]) -> None:
    statements, ctx.out.transient_skipped = durable_statements(user_texts)
    for kind, text in statements:
        done = remember(ctx.store, text, type=kind, tags=[TAG], importance=IMPORTANCE[kind],
                        source_id=ctx.key, agent_id=ctx.agent, now=ctx.ended or ctx.capture)
        ctx.out.memories_added += 0 if done.deduped else 1


# ---------------------------------------------------------------------------- threads and the DAG

_HEADING = re.compile(r"^\s{0,3}#{2,4}\s*(.+?)\s*:?\s*$")
_READ_ONLY = re.compile(r"`(?:cd\s+\S+\s*&&\s*)?(?:grep|rg|ls|cat|find|head|tail|test|which|wc"
                        r"|stat|file|diff)\b")
_BOILERPLATE = ("none recorded", "latest request (#", "continue from the latest request",
                "resolve or re-check the blocked items")
_OPEN_SECTIONS = {"in progress": "in progress", "blocked": "blocked", "next steps": "next"}


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1].rsplit(" ", 1)[0]
    return (cut if len(cut) > limit // 2 else text[:limit - 1]) + "…"


def open_items(summary: str | None, last: Run | None, request_text: str) -> list[str]:
    """What the session left open, at most ``MAX_OPEN_ITEMS`` short texts: its last request
    when that run did not finish (interrupted, failed or still running), then the items of the
    summary's "In progress", "Next steps" and "Blocked" sections (the extractive summarizer's
    stock lines left out; in the extractive format only its ``[todo]`` items and the agent's
    open question count as next steps; ``_still_blocked`` filters blocked items)."""
    items: list[str] = []
    if last is not None and last.status.value != "finished" and request_text:
        items.append(f"last request {last.status.value}: {sn.gist(request_text, 30)}")
    found: dict[str, list[str]] = {"in progress": [], "next": [], "blocked": []}
    current = None
    extractive = "## Files read and modified" in (summary or "")
    for line in (summary or "").splitlines():
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
        if current == "next" and extractive and not (low.startswith("[todo]")
                                                      or "question awaits" in low):
            continue
        if current == "blocked" and not _still_blocked(text, last):
            continue
        found[current].append(text.replace("[todo] ", ""))
    labels = {"in progress": "in progress", "next": "next", "blocked": "blocked"}
    for section in ("in progress", "next", "blocked"):
        items += [f"{labels[section]}: {t}" for t in found[section][:PER_SECTION]]
    return [_clip(redact(i), OPEN_ITEM_CHARS) for i in items[:MAX_OPEN_ITEMS]]


def _still_blocked(item: str, last: Run | None) -> bool:
    """A blocked item worth handing on: not a harness protocol error (the call never ran),
    not a read-only command that found nothing, not from a run before the last one."""
    if "tool_use_error" in item or _READ_ONLY.search(item):
        return False
    m = re.search(r"\(#(\d+)\)", item)
    return not (m and last is not None and int(m.group(1)) < last.request_seq)


def _update_dag(ctx: _Ctx, facts: _Facts, sentence: str | None,
                refs: tuple[str | None, str | None], summary: str | None,
                last: Run | None) -> None:
    """The session's nodes, edges and thread head, in one transaction (module docstring)."""
    store, agent = ctx.store, ctx.agent
    tk, label, thread_id = thread_of(agent, ctx.project, ctx.key)
    ctx.out.thread_key = tk
    sid = session_node_id(agent, ctx.key)
    latest = ctx.ended or ctx.capture
    earliest = ctx.started or latest
    anchor = sn.choose_anchor(ctx.project, summary or "", ctx.harness)
    text = sentence or sn.generic_sentence("transcript", anchor, ctx.harness,
                                           latest.date().isoformat())
    request = next((e.text() for e in facts.requests if last and e.seq == last.request_seq), "")
    items = open_items(summary, last, request)
    summary_ref, compaction_ref = refs
    session = DagNode(sid, agent, "session", ctx.key, text, ctx.now, ctx.project, ctx.key, tk,
                      ctx.harness, summary_ref or ctx.out.artifacts.get("transcript"),
                      earliest, latest,
                      {"token": ctx.out.token, "transcript_sha256": ctx.raw_hash,
                       "requests": len(facts.requests), "compactions": len(facts.compactions),
                       "last_status": last.status.value if last else None,
                       "summary_status": ctx.out.summary_status})
    nodes, compacted = [session], []
    for e in facts.compactions:
        info = e.compaction
        assert info is not None
        at = e.timestamp or latest
        cid = f"compaction:{ctx.out.token}:{e.seq}"
        nodes.append(DagNode(cid, agent, "compaction", f"{ctx.key}#{e.seq}",
                             sn.gist(info.summary, 30) or "(empty summary)", ctx.now,
                             ctx.project, ctx.key, tk, ctx.harness, compaction_ref, at, at,
                             {"seq": e.seq, "covers_through_seq": info.covers_through_seq,
                              "continuation": info.continuation, "trigger": info.trigger}))
        compacted.append(DagEdge(sid, cid, "compacted_into", agent, at))
    with store.batch():
        store.put_dag_nodes(nodes)
        store.replace_edges(agent, "compacted_into", [sid], compacted)
        mentions = [DagEdge(sid, thread_id, "mentions", agent, earliest)]
        for head in store.thread_heads(agent):
            if head.project and head.project != ctx.project and \
                    any(head.project in t for t in facts.user_texts):
                mentions.append(DagEdge(sid, thread_of(agent, head.project, "")[2], "mentions",
                                        agent, earliest))
        store.replace_edges(agent, "mentions", [sid], mentions)
        if summary_ref or compaction_ref:
            store.upsert_thread_head(ThreadHead(
                agent, tk, label, ctx.project, ctx.key, ctx.harness,
                "summary" if summary_ref else "compaction", summary_ref or compaction_ref, sid,
                _clip(text, SAMPLE_CHARS), latest, ctx.now, tuple(items)))
        _thread_node(ctx, tk, label, thread_id)


def _thread_node(ctx: _Ctx, tk: str, label: str, thread_id: str) -> None:
    """Recompute the thread's ``continues`` chain (its sessions by start time) and its node."""
    store, agent = ctx.store, ctx.agent
    sessions = store.dag_nodes(agent, kinds=["session"], thread_key=tk)
    sessions.sort(key=lambda n: (n.earliest_at or n.latest_at or ctx.now, n.node_id))
    chain = [DagEdge(b.node_id, a.node_id, "continues", agent, b.earliest_at or b.latest_at
                     or ctx.now) for a, b in zip(sessions, sessions[1:])]
    store.replace_edges(agent, "continues", [n.node_id for n in sessions], chain)
    head = store.thread_head(agent, tk)
    times = [n.earliest_at or n.latest_at for n in sessions if n.earliest_at or n.latest_at]
    ends = [n.latest_at for n in sessions if n.latest_at]
    store.put_dag_nodes([DagNode(
        thread_id, agent, "thread", label, head.sample if head else label, ctx.now,
        ctx.project, None, tk, head.harness if head else ctx.harness,
        head.source_ref if head else None, min(times) if times else None,
        max(ends) if ends else None,
        {"sessions": len(sessions), "head_session": head.session_key if head else None})])


# ---------------------------------------------------------------------------- running the pass


def pending(store: "SqlStore", home: Any = None) -> list[tuple[str, str]]:
    """``(session_key, agent_id)`` of completed transcripts the pass has not consolidated in
    their current state: no session node with the row's hash, or no manifest on disk. Oldest
    completion first."""
    folder = ln.memory_dir(home)
    names = [ln.parse_name(f.name) for f in folder.glob("*--manifest.md")] \
        if folder.is_dir() else []
    manifests = {p[1] for p in names if p}
    hashes: dict[str, dict[str | None, Any]] = {}
    out = []
    for key, agent, digest_ in store.completed_transcripts():
        if agent not in hashes:
            hashes[agent] = {n.session_key: n.meta.get("transcript_sha256")
                             for n in store.dag_nodes(agent, kinds=["session"])}
        if hashes[agent].get(key) != digest_ or ln.session_token(agent, key) not in manifests:
            out.append((key, agent))
    return out


@dataclass
class PassReport:
    """A run of the pass: one ``Consolidation`` per session tried, and the MEMORY.md it
    rendered afterwards (``memory_md`` path and whether its bytes changed), if any."""

    results: list[Consolidation] = field(default_factory=list)
    memory_md: Path | None = None
    memory_md_changed: bool = False
    skipped_artifacts: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The ``consolidate --json`` object."""
        return {"sessions": [r.to_dict() for r in self.results],
                "memory_md": str(self.memory_md) if self.memory_md else None,
                "memory_md_changed": self.memory_md_changed,
                "skipped_artifacts": [{"path": p, "reason": r}
                                      for p, r in self.skipped_artifacts]}


def run_pass(store: "SqlStore", *, home: Any = None, sessions: Iterable[str] | None = None,
             render: bool = True, summarizer: Summarizer | None = None,
             sentence_writer: sn.SentenceWriter | None = None,
             now: datetime | None = None) -> PassReport:
    """Consolidate ``sessions`` (keys), or every ``pending`` one when None, then, when
    ``render`` and anything was consolidated (or ``<home>/MEMORY.md`` is missing), rebuild
    ``<home>/MEMORY.md`` (``continuity.memory_md``). A session with a damaged artifact does
    not stop the others: its result has status ``damaged`` and the error."""
    from continuity import memory_md

    if summarizer is None:
        summarizer, sentence_writer = configured(home)
    now = now or _now()
    report = PassReport()
    todo = [(k, None) for k in sessions] if sessions is not None else pending(store, home)
    for key, agent in todo:
        try:
            report.results.append(consolidate(store, key, home=home, agent_id=agent,
                                              summarizer=summarizer,
                                              sentence_writer=sentence_writer, now=now))
        except ln.ArtifactCorrupt as exc:
            report.results.append(Consolidation(key, agent or "default", "damaged",
                                                error=str(exc)))
    path = memory_md.default_path(home)
    changed = any(r.status == "consolidated" for r in report.results)
    if render and (changed or not path.exists()):
        result = memory_md.render_memory_md(store, home=home, now=now)
        report.memory_md, report.memory_md_changed = path, memory_md.write(result.text, path)
        report.skipped_artifacts = result.skipped
    return report


def session_lineage(store: "SqlStore", session_key: str, *, home: Any = None,
                    agent_id: str | None = None) -> dict[str, Any]:
    """Everything the lineage holds for one session (``continuity lineage --json``): the
    manifest's fields, each artifact with its check (``ok``, ``missing`` for a file the
    manifest names that is gone, or the error), the DAG nodes of the session with their edges,
    its thread head, and ``problems``: the artifacts whose check is not ``ok``, each with how
    to repair it (``repair``)."""
    session = store.get_session(session_key)
    agent = agent_id or (session.agent_id if session else "default")
    token = ln.session_token(agent, session_key)
    folder = ln.memory_dir(home)
    artifacts = []
    for path in sorted(folder.glob(f"*--{token}--*.md")) if folder.is_dir() else []:
        try:
            art = ln.read_artifact(path)
            artifacts.append({"kind": art.kind, "path": art.rel, "check": "ok",
                              "memory_sentence": art.fields.get("memory_sentence"),
                              "quality": art.fields.get("memory_sentence_quality")})
        except ln.ArtifactError as exc:
            artifacts.append({"kind": (ln.parse_name(path.name) or ("", "", "?"))[2],
                              "path": ln.rel_path(path.name), "check": str(exc)})
    manifest = next((a for a in artifacts if a["kind"] == "manifest" and a["check"] == "ok"),
                    None)
    nodes = store.dag_nodes(agent, session_key=session_key)
    artifacts += _missing(home, manifest, artifacts, consolidated=any(
        n.kind == "session" for n in nodes))
    root = ln.resolve_home(home)
    problems = [{**a, "repair": repair_hint(session_key, root / a["path"] if a["path"] else None,
                                            missing=a["check"] == "missing")}
                for a in artifacts if a["check"] != "ok"]
    edges = store.dag_edges(agent, node_ids=[n.node_id for n in nodes]) if nodes else []
    tk = thread_of(agent, session.project if session else None, session_key)[0]
    head = store.thread_head(agent, nodes[0].thread_key or tk) if nodes else None
    return {
        "session": session_key, "agent_id": agent, "token": token,
        "manifest": dict(ln.read_artifact(ln.resolve_home(home) / manifest["path"]).fields)
        if manifest else None,
        "artifacts": artifacts,
        "problems": problems,
        "nodes": [{"id": n.node_id, "kind": n.kind, "label": n.label, "content": n.content,
                   "earliest_at": ln.iso(n.earliest_at), "latest_at": ln.iso(n.latest_at),
                   "meta": n.meta} for n in nodes],
        "edges": [{"from": e.src_id, "to": e.dst_id, "kind": e.kind, "at": ln.iso(e.at)}
                  for e in edges],
        "thread": None if head is None else {
            "key": head.thread_key, "label": head.label, "session": head.session_key,
            "latest_at": ln.iso(head.latest_at), "sample": head.sample,
            "open_items": list(head.open_items), "source": head.source_ref},
    }


def _missing(home: Any, manifest: dict[str, Any] | None, found: list[dict[str, Any]], *,
             consolidated: bool) -> list[dict[str, Any]]:
    """Artifact entries (check ``missing``) for the current capture's files the session's
    manifest names that are gone, or for the manifest itself when the session was consolidated
    and it is gone. Superseded captures are history: a deleted one is not reported."""
    if manifest is None:
        if consolidated and not any(a["kind"] == "manifest" for a in found):
            return [{"kind": "manifest", "path": None, "check": "missing"}]
        return []
    fields = ln.read_artifact(ln.resolve_home(home) / manifest["path"]).fields
    named = [fields.get(k) for k in ("transcript_path", "summary_path", "compaction_path")]
    have = {a["path"] for a in found}
    out = []
    for rel in dict.fromkeys(r for r in named if isinstance(r, str) and r):
        if rel not in have and not (ln.resolve_home(home) / rel).is_file():
            parsed = ln.parse_name(Path(rel).name)
            out.append({"kind": parsed[2] if parsed else "?", "path": rel, "check": "missing"})
    return out
