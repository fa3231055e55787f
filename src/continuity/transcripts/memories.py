"""The memory store (seed 000, remember/recall): ``remember`` keeps a redacted memory once,
``recall`` finds memories by full-text relevance and, on request, the transcripts behind them.

- **remember**: ``type`` is one of ``MEMORY_TYPES`` (case and surrounding space ignored; any
  other value is an error listing them). The content is cleaned (lone surrogates, NUL) and
  redacted (``continuity.redaction.funnel``, the one funnel) and trimmed; so are each tag and
  ``source_id`` (a redacted value longer than its column is clipped with "…"); that stored
  text is hashed (SHA-256 hex of its UTF-8 bytes) and a memory with the same hash for the same
  agent is not stored again (``deduped: true``, the first one's fields win). The memory commits
  first. Then, when a ``transcript`` and a ``source_id`` (the session key) are both given, the
  transcript is written to ``session_transcripts`` by the row rules of
  ``continuity.transcripts.session_transcripts`` in a **separate** transaction, also for a deduplicated memory
  (origin defect: it was silently skipped then); a failure there is reported in
  ``transcript_error`` and never loses the memory.
- **recall**: words of the query (letters and digits; English stop words left out, as PostgreSQL
  does; at most 32) are matched with OR, a run of Chinese, Japanese or Korean characters as the
  phrase of its characters (``store.fts.search_text``), and ranked by the backend's full-text
  relevance (SQLite FTS5 BM25, PostgreSQL ``ts_rank``; both stem English). On SQLite a word
  found in more than ``store.fts.RANK_WINDOW`` (1,000) memories ranks only its newest matches
  when at least ``limit`` of the candidates meet the filters (else every match is ranked). With
  ``expand``, the distinct ``source_id``s of the results are looked up in
  ``session_transcripts`` in one batched query and returned in ``sources``, keyed by session
  key: the sanitized, redacted projection by default (raw text only with ``raw_sources``), each
  clipped head-and-tail to ``source_max_bytes`` and all within ``sources_total_bytes`` (UTF-8
  bytes), with a ``truncated`` flag (origin defect: ``expand`` was accepted and ignored).

The request and response shapes are pydantic models, ready for ``/api/memory/remember`` and
``/api/memory/recall``; field names are snake_case and camelCase spellings are accepted on input.
An error about a bad value shows at most ``ECHO_MAX_CHARS`` characters of it, and never a value
that ``redact`` would change.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from continuity.core.errors import InputError, StoreError, validation_message
from continuity.core.model import Memory
from continuity.core.text import clean, clip_middle, utf8_len
from continuity.redaction.funnel import redact
from continuity.store.memory import MemoryFilter
from continuity.transcripts.projection import project
from continuity.transcripts.session_transcripts import put_transcript, storable
from continuity.transcripts.transcript_log import content_hash

if TYPE_CHECKING:
    from continuity.store import SqlStore

log = logging.getLogger(__name__)

MAX_QUERY_TERMS = 32
#: the most characters of a bad value an error message shows
ECHO_MAX_CHARS = 40
TAG_MAX_CHARS, SOURCE_ID_MAX_CHARS = 100, 200
SOURCE_MAX_BYTES = 16_000
SOURCES_TOTAL_BYTES = 64_000
_WORD = re.compile(r"[^\W_]+")
#: Snowball's English stop words (PostgreSQL ``english``): too common to rank by.
STOP_WORDS = frozenset(
    """
a about above after again against all am an and any are as at be because been before being
below between both but by can did do does doing don down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own s same she should so some such t than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who
whom why will with you your yours yourself yourselves""".split()
)


#: The kinds of memory ``remember`` accepts: ``fact`` (the default), ``decision`` and
#: ``constraint`` (what ``durable_memory.classify`` stores), ``preference``, ``note`` and ``rule``
#: (with ``constraint`` the note types of ``memory_md.NOTE_TYPES``), and ``procedure`` (how
#: something is done).
MemoryType = Literal["fact", "decision", "constraint", "preference", "procedure", "note", "rule"]
MEMORY_TYPES: tuple[str, ...] = get_args(MemoryType)


def fold_type(value: Any) -> Any:
    """A memory type as ``remember`` and ``recall`` compare it: a string trimmed and
    lower-cased (``" Decision "`` is ``decision``); a blank string or any other value as
    given, for the model's own check (whose error then echoes what the user typed)."""
    if isinstance(value, str):
        return value.strip().lower() or value
    return value


def clean_tags(tags: list[str]) -> list[str]:
    """Tags as ``remember`` stores them and ``recall`` filters by them: each trimmed, repeats
    dropped (first kept). Raises ``ValueError`` (a validation error naming ``tags``) for a
    blank tag or one over ``TAG_MAX_CHARS`` (100) characters once trimmed."""
    out = [t.strip() for t in tags]
    if any(not t for t in out):
        raise ValueError("a tag cannot be blank")
    if any(len(t) > TAG_MAX_CHARS for t in out):
        raise ValueError(f"each tag must be at most {TAG_MAX_CHARS} characters")
    return list(dict.fromkeys(out))


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid", str_strip_whitespace=False)

    def to_dict(self) -> dict[str, Any]:
        """The model as JSON data (``model_dump(mode="json")``): what ``remember --json`` and
        ``recall --json`` print, as ``continuity.Workspace`` results' ``to_dict`` (issue 46)."""
        return self.model_dump(mode="json")


class RememberRequest(_Model):
    """``POST /api/memory/remember``: only ``content`` is required. ``tags`` may be one string.
    ``importance`` is 0..1; ``source_id`` is the session key the memory came from; ``harness``
    names the transcript's harness (default ``manual``)."""

    content: str = Field(min_length=1)
    type: MemoryType = "fact"
    tags: list[str] = Field(default_factory=list, max_length=50)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    source_id: str | None = Field(
        default=None,
        max_length=SOURCE_ID_MAX_CHARS,
        validation_alias=AliasChoices("source_id", "sourceId"),
    )
    transcript: str | None = None
    agent_id: str = Field(
        default="default",
        min_length=1,
        max_length=200,
        validation_alias=AliasChoices("agent_id", "agentId"),
    )
    harness: str = Field(
        default="manual",
        min_length=1,
        max_length=40,
        validation_alias=AliasChoices("harness", "sourceType", "source_type"),
    )
    project: str | None = None

    @field_validator("tags", mode="before")
    @classmethod
    def _one_tag(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("type", mode="before")
    @classmethod
    def _type_folded(cls, value: Any) -> Any:
        return fold_type(value)

    @field_validator("tags")
    @classmethod
    def _clean_tags(cls, value: list[str]) -> list[str]:
        return clean_tags(value)


class MemoryOut(_Model):
    """A memory as the API returns it."""

    id: str
    content: str
    content_hash: str
    type: str
    tags: list[str]
    importance: float
    source_id: str | None
    agent_id: str
    created_at: datetime | None

    @classmethod
    def of(cls, m: Memory) -> MemoryOut:
        return cls(
            id=m.memory_id,
            content=m.content,
            content_hash=m.content_hash,
            type=m.type,
            tags=list(m.tags),
            importance=m.importance,
            source_id=m.source_id,
            agent_id=m.agent_id,
            created_at=m.created_at,
        )


class RememberResponse(MemoryOut):
    """What ``remember`` did: the stored memory, ``deduped`` when it already existed, and
    ``transcript_stored`` (None: no transcript and source id given; False: see
    ``transcript_error``)."""

    deduped: bool
    transcript_stored: bool | None = None
    transcript_error: str | None = None


class RecallRequest(_Model):
    """``POST /api/memory/recall``: ``query`` is required; filters are all optional (``tags``:
    every tag must be present; ``since`` inclusive, ``until`` exclusive)."""

    query: str = Field(min_length=1, max_length=2000)
    limit: int = Field(default=10, ge=1, le=100)
    type: MemoryType | None = None
    tags: list[str] = Field(default_factory=list, max_length=20)
    source_id: str | None = Field(
        default=None, validation_alias=AliasChoices("source_id", "sourceId")
    )
    importance_min: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        validation_alias=AliasChoices("importance_min", "importanceMin"),
    )
    since: datetime | None = None
    until: datetime | None = None
    agent_id: str = Field(
        default="default",
        min_length=1,
        max_length=200,
        validation_alias=AliasChoices("agent_id", "agentId"),
    )
    expand: bool = False
    raw_sources: bool = Field(
        default=False, validation_alias=AliasChoices("raw_sources", "rawSources")
    )
    source_max_bytes: int = Field(default=SOURCE_MAX_BYTES, ge=256, le=1_000_000)
    sources_total_bytes: int = Field(default=SOURCES_TOTAL_BYTES, ge=256, le=10_000_000)

    @field_validator("tags", mode="before")
    @classmethod
    def _one_tag(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("type", mode="before")
    @classmethod
    def _type_folded(cls, value: Any) -> Any:
        # as remember folds it: a type remember would refuse is refused here too
        # (fresh-user review: `recall --type bogus` ran and matched nothing)
        return fold_type(value)

    @field_validator("tags")
    @classmethod
    def _clean_tags(cls, value: list[str]) -> list[str]:
        # as remember cleans them (fresh-user review: `recall --tag ''` ran and matched nothing)
        return clean_tags(value)


class RecallResult(MemoryOut):
    """One recalled memory with its relevance ``score`` (higher is better; compare only within
    one response)."""

    score: float


class SourceTranscript(_Model):
    """The transcript behind recalled memories: ``content`` (projection or raw), its full size
    ``bytes`` (UTF-8) before clipping, ``truncated`` when clipped, and whether the session is
    ``completed``."""

    content: str
    bytes: int
    truncated: bool
    sanitized: bool
    completed: bool


class RecallResponse(_Model):
    """``results`` best first; ``sources`` (only with ``expand``) maps each result's
    ``source_id`` that has a transcript to it."""

    query: str
    results: list[RecallResult]
    sources: dict[str, SourceTranscript] | None = None
    sources_truncated: bool = False


def _strings(value: Any) -> Iterable[str]:
    """Every string in ``value`` and the lists, tuples, sets and dicts inside it."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _strings(item)


def error_echo(value: Any) -> str:
    """How an error shows a bad value: its ``repr`` clipped to ``ECHO_MAX_CHARS`` characters
    with "…", or ``<not shown: holds a secret>`` when ``redact`` would change the value, any
    string inside it or its ``repr`` (an error must not carry the secret it refused)."""
    shown = repr(value)
    if any(redact(t) != t for t in (shown, *_strings(value))):
        return "<not shown: holds a secret>"
    return shown if len(shown) <= ECHO_MAX_CHARS else shown[: ECHO_MAX_CHARS - 1] + "\u2026"


def _validated(model: type[_Model], values: dict[str, Any]) -> Any:
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or 'request'}: {validation_message(e)} "
            f"(got {error_echo(e.get('input'))})"
            for e in exc.errors()
        ]
        raise InputError("; ".join(problems)) from None


def _stored(value: str, max_chars: int) -> str:
    """``value`` as stored: cleaned, redacted and trimmed, clipped to ``max_chars`` characters
    with "…" when a marker made it longer than its column."""
    text = redact(storable(value)).strip()
    return text if len(text) <= max_chars else text[: max_chars - 1] + "\u2026"


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# ---------------------------------------------------------------------------- remember


def memory_id(agent_id: str, digest: str) -> str:
    """The stable id of an agent's memory with content hash ``digest``: 32 hex characters."""
    return hashlib.sha256(f"{agent_id}\0{digest}".encode()).hexdigest()[:32]


def remember(
    store: SqlStore,
    content: str,
    *,
    type: str = "fact",
    tags: Iterable[str] = (),
    importance: float = 0.5,
    source_id: str | None = None,
    transcript: str | None = None,
    agent_id: str = "default",
    harness: str = "manual",
    project: str | None = None,
    now: datetime | None = None,
) -> RememberResponse:
    """Remember ``content`` (see the module docstring). Raises ``InputError`` naming the bad
    field (empty content, importance outside 0..1, an over-long type or tag)."""
    request = _validated(
        RememberRequest,
        {
            "content": content,
            "type": type,
            "tags": list(tags),
            "importance": importance,
            "source_id": source_id,
            "transcript": transcript,
            "agent_id": agent_id,
            "harness": harness,
            "project": project,
        },
    )
    return remember_request(store, request, now=now)


#: The typed marker ``redact`` puts in place of a secret (``redaction.funnel.marker``).
_REDACTED_MARK_RE = re.compile(r"\[REDACTED:[a-z0-9_.-]+\]")


def remember_request(
    store: SqlStore, request: RememberRequest, *, now: datetime | None = None
) -> RememberResponse:
    """``remember`` for a validated request. Must not run inside ``store.batch()`` (the
    transcript's transaction must be separate): raises ``RuntimeError`` then."""
    if store.in_batch():
        raise RuntimeError(
            "remember() must not run inside store.batch(): its transcript "
            "write needs a transaction of its own"
        )
    text = redact(storable(request.content)).strip()
    if not text:
        raise InputError("content: must not be blank")
    if not query_terms(_REDACTED_MARK_RE.sub(" ", text)):  # issue 20: recall could never find it
        if _REDACTED_MARK_RE.search(text):  # a fresh-user review: a memory of markers only
            raise InputError(
                "content: nothing but secrets, which are redacted: the memory would hold only "
                f"{error_echo(text)}; say what to remember about them instead"
            )
        raise InputError(
            f"content: no word recall could find it by in {error_echo(text)} "
            "(only symbols, emoji or common words such as 'the'): add one"
        )
    digest = content_hash(text)
    kind = request.type  # one of MEMORY_TYPES: nothing to redact or clip
    tags = tuple(dict.fromkeys(_stored(t, TAG_MAX_CHARS) for t in request.tags))
    memory = Memory(
        memory_id(request.agent_id, digest),
        text,
        digest,
        kind,
        tags,
        request.importance,
        _stored(request.source_id or "", SOURCE_ID_MAX_CHARS) or None,
        request.agent_id,
        _utc(now) or datetime.now(UTC),
    )
    with store.batch():
        inserted = store.insert_memory(memory)
        stored = memory if inserted else store.memory_by_hash(request.agent_id, digest)
    if stored is None:  # pragma: no cover - the insert conflicted with exactly this row
        raise StoreError(f"memory {memory.memory_id} neither inserted nor found")
    response = RememberResponse(**MemoryOut.of(stored).model_dump(), deduped=not inserted)
    if request.transcript is not None and memory.source_id:
        try:
            put_transcript(
                store,
                memory.source_id,
                request.transcript,
                agent_id=request.agent_id,
                harness=request.harness,
                project=request.project,
                now=now,
            )
            response.transcript_stored = True
        except Exception as exc:  # noqa: BLE001 - the memory is committed; report, never lose it
            log.warning("memory %s stored, its transcript was not: %s", stored.memory_id, exc)
            response.transcript_stored = False
            response.transcript_error = f"{exc.__class__.__name__}: {exc}"
    return response


# ---------------------------------------------------------------------------- recall


def query_words(query: str) -> list[str]:
    """The words of ``query``: runs of letters and digits, lower-cased, first occurrence kept."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))


def query_terms(query: str) -> list[str]:
    """The searchable words of ``query``: ``query_words`` without English stop words (the
    Snowball list PostgreSQL's ``english`` configuration drops, so both backends search the
    same words), at most ``MAX_QUERY_TERMS``."""
    return [w for w in query_words(query) if w not in STOP_WORDS][:MAX_QUERY_TERMS]


#: A ranker of recall (issue 40): ``(store, query, agent_id, limit, filters) -> [(memory,
#: score)]`` best first. ``retrieval.recall.hybrid_ranker`` is the hybrid one (this layer cannot
#: import ``retrieval``: its callers pass it).
Ranker = Callable[["SqlStore", str, str, int, MemoryFilter], list[tuple[Memory, float]]]


def recall(
    store: SqlStore,
    query: str,
    *,
    limit: int = 10,
    filters: dict[str, Any] | None = None,
    expand: bool = False,
    agent_id: str = "default",
    raw_sources: bool = False,
    ranker: Ranker | None = None,
) -> RecallResponse:
    """Memories matching ``query``, best first (see the module docstring). ``filters`` takes
    the ``RecallRequest`` filter fields (``type``, ``tags``, ``source_id``, ``importance_min``,
    ``since``, ``until``); ``ranker``: how memories are ranked (default: the store's
    full-text search of the query's words). Raises ``InputError`` naming a bad field, or for a
    query without a word."""
    request = _validated(
        RecallRequest,
        {
            "query": clean(query),
            "limit": limit,
            "expand": expand,
            "agent_id": agent_id,
            "raw_sources": raw_sources,
            **(filters or {}),
        },
    )
    return recall_request(store, request, ranker=ranker)


def _words_ranker(
    store: SqlStore, query: str, agent_id: str, limit: int, filters: MemoryFilter
) -> list[tuple[Memory, float]]:
    terms = query_terms(query)  # none left (stop words only): no results
    return store.search_memories(terms, agent_id=agent_id, limit=limit, filters=filters)


def recall_request(
    store: SqlStore, request: RecallRequest, *, ranker: Ranker | None = None
) -> RecallResponse:
    """``recall`` for a validated request."""
    if not query_words(request.query):
        raise InputError(f"query: no word to search for in {error_echo(request.query)}")
    found = (ranker or _words_ranker)(
        store,
        request.query,
        request.agent_id,
        request.limit,
        MemoryFilter(
            type=request.type,
            tags=tuple(request.tags),
            source_id=request.source_id,
            importance_min=request.importance_min,
            since=_utc(request.since),
            until=_utc(request.until),
        ),
    )
    results = [RecallResult(**MemoryOut.of(m).model_dump(), score=score) for m, score in found]
    response = RecallResponse(query=request.query, results=results)
    if request.expand:
        response.sources, response.sources_truncated = _sources(store, request, results)
    return response


def _sources(
    store: SqlStore, request: RecallRequest, results: list[RecallResult]
) -> tuple[dict[str, SourceTranscript], bool]:
    """One batched lookup of the results' transcripts, bounded per transcript and in total."""
    keys = list(dict.fromkeys(r.source_id for r in results if r.source_id))
    rows = store.get_transcripts(keys, request.agent_id) if keys else {}
    out: dict[str, SourceTranscript] = {}
    left, dropped = request.sources_total_bytes, False
    for key in keys:  # result order: the best memory's transcript gets the budget first
        row = rows.get(key)
        if row is None:
            continue
        text = row.content if request.raw_sources else project(row.content)
        room = min(request.source_max_bytes, left)
        if room < 256:
            dropped = True
            continue
        size = utf8_len(text)
        clipped = clip_middle(text, room)
        left -= utf8_len(clipped)
        out[key] = SourceTranscript(
            content=clipped,
            bytes=size,
            truncated=size > room,
            sanitized=not request.raw_sources,
            completed=row.completed_at is not None,
        )
    return out, dropped
