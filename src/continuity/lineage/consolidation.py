"""The consolidation pass (seed 000's "Dreaming"): one completed transcript in, the session's
lineage out.

``consolidate(store, session_key)`` runs only over a **completed** ``session_transcripts`` row
(session end, recovery after ``clear`` or the idle sweep completed it); a session still open, and
so any checkpoint taken mid-session, never starts it. For that row it:

1. writes the manifest (first), then the immutable ``transcript`` artifact (the sanitized,
   redacted projection of the row, ``continuity.transcripts.projection.project``), the ``summary``
   artifact (the whole session through the configured summarizer, extractive by default) and,
   when the log holds compaction rows, the ``compaction`` artifact (every compaction summary of
   the session, oldest first, redacted); summary and compaction carry a memory sentence
   (``continuity.lineage.sentence.memory_sentence``);
2. extracts **durable memories** stated by the user (constraints, decisions, facts;
   ``continuity.lineage.durable_memory``) into the memory store, never transient operational state
   (B63: temp paths, counters, hedged in-progress conclusions, questions) and nothing at all
   from a scratch session (``lineage.is_noise``);
3. in one transaction, records the session in the temporal DAG and its thread head
   (``continuity.lineage.temporal_dag``: session, compaction and thread nodes; ``continues``,
   ``compacted_into`` and ``mentions`` edges; a head never moved back in time).

This module holds the artifact writing and the pass driver (``consolidate``, ``pending``,
``run_pass``). A **thread** is one line of work: the project, else the session itself
(``temporal_dag.thread_of``). Running the pass again over the same transcript changes nothing:
the artifacts exist with the same bodies (a model-written summary is not asked for again),
memories are de-duplicated, DAG rows are upserted. A transcript that changed since the last
capture (a resumed session completed again) is a new capture: new artifacts named by its
completion time, the earlier ones listed as ``superseded`` in the manifest.

A **damaged** artifact (edited, corrupt: ``lineage.ArtifactCorrupt``, exit code 7) stops the
pass for its session only, with the repair in the message (``lineage_report.repair_hint``):
delete the file and consolidate again. A deleted artifact of the current capture is written
again under its name.

Over 600 lines: seed 000's consolidation pass is one transaction-like sequence (facts, thread
heads, lineage files, MEMORY.md) over one completed transcript; its steps share the pass's
state.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from continuity.continuation.facts import SessionFacts, extract_facts
from continuity.continuation.summarize import Summarizer, WorkingView, summarize
from continuity.continuation.summarize.bounds import digest
from continuity.core.config import resolve_home
from continuity.core.model import Entry, EntryKind, Role, Run
from continuity.lineage import artifacts as ln, sentence as sn
from continuity.lineage.durable_memory import remember_durable
from continuity.lineage.frontmatter import ArtifactCorrupt
from continuity.lineage.report import repair_hint
from continuity.lineage.temporal_dag import (
    SessionRecord,
    facts_open_items,
    open_items,
    session_digest,
    update_dag,
)
from continuity.redaction.funnel import redact
from continuity.store import iter_entries
from continuity.transcripts.projection import project as sanitized
from continuity.transcripts.transcript_log import transcript_path

if TYPE_CHECKING:
    from continuity.store import SqlStore

PAGE_ROWS = 500
#: The most time one session's summary may take (a model summarizer may need several chunks).
SUMMARY_SECONDS = 600.0
EMPTY_TRANSCRIPT = "_No conversation text was recorded._"


def _now() -> datetime:
    return datetime.now(UTC)


# ---------------------------------------------------------------------------- reading a session


def _rows(store: SqlStore, key: str) -> Iterator[Entry]:
    return iter_entries(store, key, visible_only=True, page_rows=PAGE_ROWS)


@dataclass
class _Facts:
    """What the pass reads from a session's log in one walk."""

    messages: list[Entry] = field(default_factory=list)
    compactions: list[Entry] = field(default_factory=list)
    requests: list[Entry] = field(default_factory=list)
    user_texts: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    #: issue 39: what the session did (``continuation.facts``), the same extraction as the
    #: extractive summary's; MEMORY.md's thread heads, ledger and open threads read it
    session: SessionFacts = field(default_factory=SessionFacts)


def _read(store: SqlStore, key: str) -> _Facts:
    f = _Facts()
    digests = []
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
        digests.append(digest(e))
    f.session = extract_facts(digests)
    f.modified = [t.path for t in reversed(f.session.changed_files)]  # newest change first
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
    temp_files_removed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The ``consolidate --json`` object of this session."""
        return {
            "session": self.session_key,
            "agent_id": self.agent_id,
            "status": self.status,
            "token": self.token,
            "artifacts": dict(self.artifacts),
            "created": list(self.created),
            "manifest_revision": self.manifest_revision,
            "summary_status": self.summary_status,
            "memories_added": self.memories_added,
            "transient_skipped": self.transient_skipped,
            "thread": self.thread_key,
            "error": self.error,
            "temp_files_removed": list(self.temp_files_removed),
        }


@dataclass
class _Ctx:
    store: SqlStore
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


def consolidate(
    store: SqlStore,
    session_key: str,
    *,
    home: Any = None,
    agent_id: str | None = None,
    summarizer: Summarizer | None = None,
    sentence_writer: sn.SentenceWriter | None = None,
    now: datetime | None = None,
) -> Consolidation:
    """Run the pass over one session's completed transcript (module docstring).
    ``summarizer`` defaults to the configured one (``[summarizer]``), ``sentence_writer`` to
    the configured model when that is not the extractive provider. Raises ``ArtifactConflict``
    for a write-once clash, ``ArtifactCorrupt`` (exit code 7) for a damaged artifact, its
    message saying what is wrong and how to repair it (``repair_hint``), and ``ConfigError``
    for bad settings. First the temp files killed writers left in ``<home>/memory/`` are
    deleted (``artifacts.sweep_temp_files``, issue 22; their names in ``temp_files_removed``)."""
    swept = ln.sweep_temp_files(home)
    try:
        out = _consolidate(
            store,
            session_key,
            home=home,
            agent_id=agent_id,
            summarizer=summarizer,
            sentence_writer=sentence_writer,
            now=now,
        )
        out.temp_files_removed = swept
        return out
    except ArtifactCorrupt as exc:
        raise ArtifactCorrupt(f"{exc}; {repair_hint(session_key, exc.path)}", exc.path) from exc


def _consolidate(
    store: SqlStore,
    session_key: str,
    *,
    home: Any,
    agent_id: str | None,
    summarizer: Summarizer | None,
    sentence_writer: sn.SentenceWriter | None,
    now: datetime | None,
) -> Consolidation:
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
    ctx = _Ctx(
        store,
        home,
        agent,
        session_key,
        row.harness,
        row.project,
        session.started_at if session else row.created_at,
        session.ended_at if session else row.updated_at,
        ln.utc(row.completed_at),
        now,
        row.content_hash,
        out,
    )
    facts = _read(store, session_key) if session else _Facts()
    last = store.last_run(session_key, agent_id=agent) if session else None
    _capture(ctx, row.content, facts, last, summarizer, sentence_writer)
    out.status = "consolidated" if out.created or out.memories_added else "unchanged"
    return out


def _capture(
    ctx: _Ctx,
    content: str,
    facts: _Facts,
    last: Run | None,
    summarizer: Summarizer,
    sentence_writer: sn.SentenceWriter | None,
) -> None:
    """Write the session's lineage for transcript ``content`` (hash ``ctx.raw_hash``): the
    manifest first when there is none, the artifacts (this capture's names kept when the
    transcript is unchanged, the earlier capture ``superseded`` when it changed), the manifest
    again, then the durable memories and the DAG (module docstring)."""
    home, out = ctx.home, ctx.out
    status = last.status.value if last else None
    previous = _manifest(home, ln.session_token(ctx.agent, ctx.key))
    same = (
        previous is not None
        and previous.get("transcript_sha256") == ctx.raw_hash
        and bool(previous.get("transcript_path"))
    )
    if same and previous is not None:  # this capture's artifacts (a deleted one is written
        # again): keep their names
        ctx.capture = _stamp_of(previous["transcript_path"]) or ctx.capture
    changes = {
        "harness": ctx.harness,
        "project": ctx.project,
        "started_at": ln.iso(ctx.started),
        "ended_at": ln.iso(ctx.ended),
        "transcript_sha256": ctx.raw_hash,
        "canonical_transcript_path": _canonical(home, ctx.harness),
    }
    if previous is None:
        _manifest_update(
            ctx, {**changes, "transcript_status": "pending", "summary_status": "pending"}
        )
    transcript = _write_transcript(ctx, content, ctx.raw_hash)
    summary, sentence, body = _summary(
        ctx, facts, status, summarizer, sentence_writer, previous if same else None
    )
    compaction = _compaction(ctx, facts, sentence_writer, previous if same else None)
    if previous is not None and not same:
        changes["superseded"] = [
            previous[k]
            for k in ("transcript_path", "summary_path", "compaction_path")
            if previous.get(k)
        ]
    changes.update(
        transcript_path=transcript,
        transcript_status="completed",
        summary_path=summary,
        summary_status=out.summary_status,
        compaction_path=compaction,
    )
    manifest = _manifest_update(ctx, changes)
    out.artifacts["manifest"] = manifest.rel
    if not ln.is_noise(ctx.project, ctx.key, ctx.harness):
        _remember(ctx, facts.user_texts, facts.session.decisions)
    _record_in_dag(ctx, facts, sentence, (summary, compaction), body, last)


def configured(home: Any) -> tuple[Summarizer, sn.SentenceWriter | None]:
    """The configured summarizer and, unless it is the extractive one, a sentence writer on
    the same model (10 s per sentence, seed 000)."""
    from continuity.continuation.summarize import make_summarizer
    from continuity.continuation.summarize.settings import load_settings

    summarizer = make_summarizer(load_settings(home))
    return summarizer, (None if summarizer.name == "extractive" else model_writer(summarizer))


def model_writer(summarizer: Summarizer, seconds: float = 10.0) -> sn.SentenceWriter:
    """A ``SentenceWriter`` asking ``summarizer``'s model for one sentence within ``seconds``
    (the provider's smallest output cap, 256 tokens; a length stop counts as no reply)."""
    from continuity.continuation.summarize import SummaryRequest

    def write(kind: str, anchor: str, project: str | None, body: str) -> str | None:
        system = sn.SENTENCE_SYSTEM.format(kind=kind, anchor=anchor)
        prompt = f"Project: {project or 'none'}\n\n<{kind}>\n{body}\n</{kind}>"
        request = SummaryRequest(system, prompt, (), None, (), 0, 0, 480)
        reply = summarizer.generate(
            request, cancel=threading.Event(), deadline=time.monotonic() + seconds
        )
        return reply.text if reply.stop == "end" else None

    return write


def _manifest(home: Any, token: str) -> dict[str, Any] | None:
    path = ln.find_manifest(home, token)
    return dict(ln.read_artifact(path).fields) if path else None


def _exists(home: Any, rel: str | None) -> bool:
    return bool(rel) and (resolve_home(home) / rel).is_file()


def _stamp_of(rel: str) -> datetime | None:
    parsed = ln.parse_name(Path(rel).name)
    if parsed is None:
        return None
    day, clock = parsed[0].split("T")
    return ln.parse_iso(f"{day}T{clock[:8].replace('-', ':')}{clock[8:]}")


def _canonical(home: Any, harness: str) -> str:
    path = transcript_path(home, harness)
    return str(path.relative_to(resolve_home(home)))


def _manifest_update(ctx: _Ctx, changes: dict[str, Any]) -> ln.Artifact:
    """Apply ``changes`` to the session's manifest. A manifest this call had to create (the
    session's first pass, or one deleted since: issue 20) is listed in ``created``, so the
    report says the file was written."""
    existed = ln.find_manifest(ctx.home, ln.session_token(ctx.agent, ctx.key)) is not None
    manifest, wrote = ln.update_manifest(
        ctx.home, ctx.agent, ctx.key, changes, captured_at=ctx.capture, now=ctx.now
    )
    ctx.out.manifest_revision = int(manifest.fields["revision"])
    if wrote and not existed and manifest.path is not None:
        rel = ln.rel_path(Path(manifest.path).name)
        if rel not in ctx.out.created:
            ctx.out.created.append(rel)
    return manifest


def _base_fields(ctx: _Ctx) -> list[tuple[str, Any]]:
    token = ln.session_token(ctx.agent, ctx.key)
    manifest = ln.find_manifest(ctx.home, token)
    return [
        ("agent_id", ctx.agent),
        ("session_key", ctx.key),
        ("harness", ctx.harness),
        ("project", ctx.project),
        ("captured_at", ln.iso(ctx.capture)),
        ("started_at", ln.iso(ctx.started)),
        ("ended_at", ln.iso(ctx.ended)),
        ("manifest_path", ln.rel_path(manifest.name) if manifest else None),
        ("content_sha256", None),
        ("hash_scope", None),
    ]


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
    fields += [
        ("sanitizer_version", ln.SANITIZER_VERSION),
        ("transcript_sha256", raw_hash),
        ("canonical_transcript_path", _canonical(ctx.home, ctx.harness)),
        ("links", _links(ctx, (manifest, "manifest"))),
    ]
    return _write(ctx, "transcript", fields, sanitized(content) or EMPTY_TRANSCRIPT)


def _sentence_fields(sentence: str, quality: str) -> list[tuple[str, Any]]:
    return [
        ("memory_sentence", sentence),
        ("memory_sentence_version", sn.SENTENCE_VERSION),
        ("memory_sentence_quality", quality),
    ]


def _summary(
    ctx: _Ctx,
    facts: _Facts,
    status: str | None,
    summarizer: Summarizer,
    writer: sn.SentenceWriter | None,
    previous: dict[str, Any] | None,
) -> tuple[str | None, str | None, str | None]:
    """The summary artifact's path, memory sentence and body (Nones when there is none)."""
    if previous and previous.get("summary_path") and _exists(ctx.home, previous["summary_path"]):
        old = ln.read_artifact(resolve_home(ctx.home) / previous["summary_path"])
        ctx.out.summary_status = "completed"
        ctx.out.artifacts["summary"] = old.rel
        return old.rel, old.fields.get("memory_sentence"), old.body
    if previous and previous.get("summary_status") == "empty":
        ctx.out.summary_status = previous["summary_status"]
        return None, None, None
    result = summarize(
        WorkingView(None, [n.text for n in ctx.store.notes(ctx.key)], facts.messages),
        summarizer,
        cancel=threading.Event(),
        deadline=time.monotonic() + SUMMARY_SECONDS,
    )
    if result.summary is None:
        reason = result.reason.value if result.reason else "empty"
        ctx.out.summary_status = "empty" if reason == "empty" else f"refused:{reason}"
        return None, None, None
    anchor = sn.choose_anchor(ctx.project, result.summary, ctx.harness)
    date = (ctx.ended or ctx.capture).date().isoformat()
    sfacts = sn.SentenceFacts(
        "summary",
        anchor,
        ctx.harness,
        date,
        main_request(facts.requests),
        tuple(facts.modified),
        status,
        latest=facts.requests[-1].text() if facts.requests else "",
    )
    sentence, quality = sn.memory_sentence("summary", result.summary, sfacts, ctx.project, writer)
    fields = _base_fields(ctx)
    manifest = dict(fields)["manifest_path"]
    transcript = ctx.out.artifacts.get("transcript")
    fields += [
        *_sentence_fields(sentence, quality),
        ("summarizer", summarizer.name),
        ("links", _links(ctx, (transcript, "transcript"), (manifest, "manifest"))),
    ]
    ctx.out.summary_status = "completed"
    return _write(ctx, "summary", fields, result.summary), sentence, result.summary


def _compaction(
    ctx: _Ctx, facts: _Facts, writer: sn.SentenceWriter | None, previous: dict[str, Any] | None
) -> str | None:
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
        parts.append(
            f"## Compaction {i} of {len(facts.compactions)}\n\n{when} · row #{e.seq} "
            f"· covers rows #0-#{info.covers_through_seq} · {label}\n\n"
            f"{redact(info.summary).strip() or '(empty summary)'}"
        )
    body = "\n\n".join(parts)
    newest = facts.compactions[-1]
    anchor = sn.choose_anchor(ctx.project, body, ctx.harness)
    date = (newest.timestamp or ctx.ended or ctx.capture).date().isoformat()
    sfacts = sn.SentenceFacts(
        "compaction",
        anchor,
        ctx.harness,
        date,
        newest.compaction.summary if newest.compaction else "",
        compactions=len(facts.compactions),
        covers=newest.compaction.covers_through_seq if newest.compaction else None,
    )
    sentence, quality = sn.memory_sentence("compaction", body, sfacts, ctx.project, writer)
    fields = _base_fields(ctx)
    manifest = dict(fields)["manifest_path"]
    transcript = ctx.out.artifacts.get("transcript")
    fields += [
        *_sentence_fields(sentence, quality),
        ("compactions", len(facts.compactions)),
        ("links", _links(ctx, (transcript, "transcript"), (manifest, "manifest"))),
    ]
    return _write(ctx, "compaction", fields, body)


def _remember(ctx: _Ctx, user_texts: list[str], decisions: tuple[str, ...] = ()) -> None:
    """Store the durable memories the user stated and the durable decisions the agent stated
    (``durable_memory.remember_durable``; issue 39: from the extraction)."""
    added, ctx.out.transient_skipped = remember_durable(
        ctx.store,
        user_texts,
        session_key=ctx.key,
        agent_id=ctx.agent,
        at=ctx.ended or ctx.capture,
        decisions=decisions,
    )
    ctx.out.memories_added += added


def _record_in_dag(
    ctx: _Ctx,
    facts: _Facts,
    sentence: str | None,
    refs: tuple[str | None, str | None],
    summary: str | None,
    last: Run | None,
) -> None:
    """Record the session in the temporal DAG and its thread head (``temporal_dag``): its
    memory sentence (else a generic one), what it left open and its figures."""
    latest = ctx.ended or ctx.capture
    anchor = sn.choose_anchor(ctx.project, summary or "", ctx.harness)
    text = sentence or sn.generic_sentence(
        "transcript", anchor, ctx.harness, latest.date().isoformat()
    )
    request = next((e.text() for e in facts.requests if last and e.seq == last.request_seq), "")
    summary_ref, compaction_ref = refs
    status = last.status.value if last else None
    digest_line = session_digest(facts.session, status, main_request(facts.requests))
    left = _left_open(facts, summary, last, request)
    rec = SessionRecord(
        ctx.agent,
        ctx.key,
        ctx.harness,
        ctx.project,
        earliest=ctx.started or latest,
        latest=latest,
        content=text,
        transcript_ref=ctx.out.artifacts.get("transcript"),
        summary_ref=summary_ref,
        compaction_ref=compaction_ref,
        open_items=tuple(left),
        digest=digest_line,
        meta={
            "token": ctx.out.token,
            "transcript_sha256": ctx.raw_hash,
            "digest": digest_line,
            "outcome": session_digest(
                facts.session, status, labels=("outcome", "decided", "unresolved")
            ),
            "requests": len(facts.requests),
            "compactions": len(facts.compactions),
            "last_status": last.status.value if last else None,
            "summary_status": ctx.out.summary_status,
        },
    )
    ctx.out.thread_key = update_dag(
        ctx.store, rec, facts.compactions, facts.user_texts, now=ctx.now
    )


def _left_open(facts: _Facts, summary: str | None, last: Run | None, request: str) -> list[str]:
    """What the session left open (issue 39: from the extraction, ``facts_open_items``),
    then what only its summary says (a model's summary may name next steps the rows do not:
    ``open_items``), each once, at most ``MAX_OPEN_ITEMS``."""
    from continuity.lineage.temporal_dag import MAX_OPEN_ITEMS

    items = facts_open_items(facts.session, last, request) if facts.messages else []
    seen = {i.split(": ", 1)[-1].casefold() for i in items}
    for item in open_items(summary, last, request):
        text = item.split(": ", 1)[-1]
        if (
            text.casefold() in seen
            or re.match(r"#\d+ ", text)
            or item.startswith(("blocked:", "last request"))
        ):
            continue  # the rows said it already (errors, requests, calls), in their words
        seen.add(text.casefold())
        items.append(item)
    return items[:MAX_OPEN_ITEMS]


# ---------------------------------------------------------------------------- running the pass


def pending(store: SqlStore, home: Any = None) -> list[tuple[str, str]]:
    """``(session_key, agent_id)`` of completed transcripts the pass has not consolidated in
    their current state: no session node with the row's hash, or no manifest on disk. Oldest
    completion first."""
    folder = ln.memory_dir(home)
    names = (
        [ln.parse_name(f.name) for f in folder.glob("*--manifest.md")] if folder.is_dir() else []
    )
    manifests = {p[1] for p in names if p}
    hashes: dict[str, dict[str | None, Any]] = {}
    out = []
    for key, agent, digest_ in store.completed_transcripts():
        if agent not in hashes:
            hashes[agent] = {
                n.session_key: n.meta.get("transcript_sha256")
                for n in store.dag_nodes(agent, kinds=["session"])
            }
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
        return {
            "sessions": [r.to_dict() for r in self.results],
            "memory_md": str(self.memory_md) if self.memory_md else None,
            "memory_md_changed": self.memory_md_changed,
            "skipped_artifacts": [{"path": p, "reason": r} for p, r in self.skipped_artifacts],
        }


def run_pass(
    store: SqlStore,
    *,
    home: Any = None,
    sessions: Iterable[str] | None = None,
    render: bool = True,
    summarizer: Summarizer | None = None,
    sentence_writer: sn.SentenceWriter | None = None,
    now: datetime | None = None,
) -> PassReport:
    """Consolidate ``sessions`` (keys), or every ``pending`` one when None, then, when
    ``render`` and anything was consolidated (or ``<home>/MEMORY.md`` is missing), rebuild
    ``<home>/MEMORY.md`` (``continuity.lineage.memory_md``). A session with a damaged artifact does
    not stop the others: its result has status ``damaged`` and the error."""
    from continuity.lineage import memory_md

    if summarizer is None:
        summarizer, sentence_writer = configured(home)
    now = now or _now()
    report = PassReport()
    todo = [(k, None) for k in sessions] if sessions is not None else pending(store, home)
    for key, agent in todo:
        try:
            report.results.append(
                consolidate(
                    store,
                    key,
                    home=home,
                    agent_id=agent,
                    summarizer=summarizer,
                    sentence_writer=sentence_writer,
                    now=now,
                )
            )
        except ArtifactCorrupt as exc:
            report.results.append(Consolidation(key, agent or "default", "damaged", error=str(exc)))
    path = memory_md.default_path(home)
    changed = any(r.status == "consolidated" for r in report.results)
    if render and (changed or not path.exists()):
        result = memory_md.render_memory_md(store, home=home, now=now)
        report.memory_md, report.memory_md_changed = path, memory_md.write(result.text, path)
        report.skipped_artifacts = result.skipped
    return report
