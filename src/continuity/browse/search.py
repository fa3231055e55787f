"""``continuity search``: ranked full-text hits over every entry of every session (issue 19).

``search(store, query, ...)`` ranks rows by ``retrieval.hybrid.hybrid_entries`` (issue 40:
the store's full-text index (``store.search``) of the query's plain words, fused with vector
similarity when the semantic extra is installed; "quoted phrases" must appear as written;
operators and punctuation are never syntax), then reads their sessions and builds, per hit, a snippet of at most
``SNIPPET_CHARS`` characters around the first matching word with the spans of every matching
word in it, and the commands that reopen the session.

**Redaction.** A snippet is cut from a region of ``REDACT_REGION`` characters each side of the
hit that has passed ``redaction.redact`` first, so a secret near the hit is already a marker
when the snippet is cut (a secret longer than the region's margin could be cut at the region's
edge; the margin is 4x the snippet's).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from continuity.browse.titles import session_titles
from continuity.continuation.view import redacted_block
from continuity.core.when import parse_when  # one rule (re-exported)
from continuity.redaction.funnel import redact, shown_query
from continuity.redaction.session import in_session
from continuity.store.search import EntryFilter, entry_body
from continuity.transcripts.memories import query_terms

#: Characters of a snippet (about two terminal lines).
SNIPPET_CHARS = 160
#: Characters each side of the hit redacted before the snippet is cut (see the docstring).
REDACT_REGION = 640
#: whitespace runs a snippet shows as one space: not the control characters Python counts as
#: whitespace (CR, VT, FF, \x1c-\x1f, NEL), which the CLI shows as escapes (issue 45)
_WS = re.compile(r"[^\S\r\x0b\x0c\x1c-\x1f\x85]+")


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One hit: where it is (``session``, ``seq``), its rank ``score`` (higher is better,
    within one search), the session's harness, project, title (redacted unless raw) and
    agent, the row's role, kind and time, the snippet (plain text, redacted unless raw) with
    ``spans`` ((start, end), ...) of the matching words in it (character offsets), and the
    commands that reopen it (naming no workspace). ``continuity.SearchHit`` (issue 46):
    ``to_dict()`` is a line of ``search --json``."""

    session: str
    seq: int
    score: float
    harness: str
    project: str | None
    title: str | None
    agent: str
    subagent: bool
    sidechain: bool
    role: str
    kind: str
    time: str | None
    snippet: str
    spans: tuple[tuple[int, int], ...] = ()
    show_command: str = ""
    resume_command: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``search --json`` (one per line)."""
        out = asdict(self)
        out["spans"] = [list(s) for s in self.spans]
        return out


def _term_pattern(terms: Sequence[str]) -> re.Pattern[str]:
    """Where a term shows in the text: the word as typed, or its first letters (the index
    stems, so ``migrations`` also finds ``migration``); at a word start, CJK anywhere."""
    alts = []
    for term in sorted(terms, key=len, reverse=True):
        stem = term if len(term) <= 4 else term[: max(4, len(term) - 3)]
        alts.append(re.escape(stem) + (r"\w*" if stem.isascii() else ""))
    return re.compile(
        r"(?<!\w)(?:" + "|".join(alts) + r")"
        if all(t.isascii() for t in terms)
        else "(?:" + "|".join(alts) + ")",
        re.IGNORECASE,
    )


def snippet(
    text: str, terms: Sequence[str], *, raw: bool = False, width: int = SNIPPET_CHARS
) -> tuple[str, list[tuple[int, int]]]:
    """``(snippet, spans)``: at most ``width`` characters of ``text`` around the first match
    of ``terms`` (whitespace runs shown as one space; ``…`` where it was cut), redacted unless
    ``raw``, and the (start, end) character spans of every match in the snippet."""
    pattern = _term_pattern(terms) if terms else None
    m = pattern.search(text) if pattern else None
    at = m.start() if m else 0
    lo, hi = max(0, at - REDACT_REGION), min(len(text), at + REDACT_REGION)
    region = text[lo:hi]
    region = _WS.sub(" ", region if raw else redact(region)).strip()
    m2 = pattern.search(region) if pattern else None
    at2 = m2.start() if m2 else 0
    start = max(0, at2 - width // 3)
    end = min(len(region), start + width)
    start = max(0, min(start, end - width))
    cut = region[start:end]
    prefix = "…" if start > 0 or lo > 0 else ""
    suffix = "…" if end < len(region) or hi < len(text) else ""
    shown = prefix + cut + suffix
    spans = (
        [(x.start() + len(prefix), x.end() + len(prefix)) for x in pattern.finditer(cut)]
        if pattern
        else []
    )
    return shown, spans


def show_command(session: str, seq: int) -> str:
    """``continuity show KEY --seq N``, the key shell-quoted."""
    return f"continuity show {shlex.quote(session)} --seq {seq}"


def resume_command(session: str, harness: str) -> str:
    """``continuity resume KEY --in HARNESS`` (issue 13's command), the key shell-quoted; ""
    for a session of a harness ``resume`` cannot write (OpenCode: the hint named a command
    that failed, fresh-user review)."""
    from continuity.resume.convert import TARGETS

    if harness not in TARGETS:
        return ""
    return f"continuity resume {shlex.quote(session)} --in {shlex.quote(harness)}"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def search(
    store: Any,
    query: str,
    *,
    limit: int = 20,
    filters: EntryFilter | None = None,
    raw: bool = False,
    mode: str = "hybrid",
    project: str | None = None,
    settings: Any = None,
    now: datetime | None = None,
) -> list[SearchHit]:
    """The best ``limit`` rows of every session for ``query`` meeting ``filters``, as
    ``SearchHit``s, best first, ranked by ``retrieval.hybrid.hybrid_entries`` (issue 40):
    ``mode`` "hybrid" (words and meaning fused), "words" (full-text BM25 only), "vectors"
    (meaning only); text in double quotes must appear as written; ``project``: the asker's
    folder, whose rows get the same-project boost; ``settings``: ``RetrievalSettings``
    (default: the defaults; without the semantic extra every mode ranks by words). A query
    with neither a searchable word nor a meaning finds nothing. The snippet is cut around the
    first matching word; a hit found by meaning alone shows the row's text from its start.
    ``score`` is the fused score. Raises ``InputError`` for an unknown mode."""
    from continuity.retrieval.hybrid import hybrid_entries

    terms = query_terms(query.replace('"', " "))
    with store.batch():  # one connection and snapshot for the reads
        hits = hybrid_entries(
            store,
            query,
            limit=limit,
            filters=filters,
            project=project,
            settings=settings,
            mode=mode,  # type: ignore[arg-type]
            now=now,
        )
        sessions = store.sessions_by_key([h.session_key for h in hits])
    # issue 44: own, else first request; every hit's session in one read of the kept titles
    titles = session_titles(store, sessions.values(), raw=raw)
    out = []
    for h in hits:
        entry, session = h.entry, sessions.get(h.session_key)
        if entry is None or session is None:  # pragma: no cover - index and rows share a tx
            continue
        title = titles.get(session.key)
        if raw:
            text, spans = snippet(entry_body(entry), terms, raw=raw)
        else:  # issue 45 review items 1, 2: as show redacts the row, within its session
            with in_session(store, h.session_key, session=session):
                shown = replace(entry, blocks=tuple(redacted_block(b) for b in entry.blocks))
                text, spans = snippet(entry_body(shown), terms, raw=raw)
        out.append(
            SearchHit(
                session=h.session_key,
                seq=h.seq,
                score=h.score,
                harness=session.harness,
                project=session.project,
                agent=session.agent_id,
                title=title,
                subagent=session.agent_id != "default",
                sidechain=entry.sidechain,
                role=entry.role.value,
                kind=entry.kind.value,
                time=_iso(entry.timestamp),
                snippet=text,
                spans=tuple(spans),
                show_command=show_command(h.session_key, h.seq),
                resume_command=resume_command(h.session_key, session.harness),
            )
        )
    return out


def no_match_message(query: str) -> str:
    """What ``continuity search`` says on standard error when no row matches ``query`` (exit
    1), the same from the in-process command and the daemon's client: ``no row matches
    'QUERY'`` (``shown_query``: a long one cut, a secret not shown), and why when the query
    holds only stop words the index leaves out."""
    from continuity.transcripts.memories import query_words

    why = ""
    if query_words(query) and not query_terms(query):  # e.g. "AND", "or not"
        why = (
            ": it holds only common English words (stop words such as and, or, not), "
            "which the index leaves out; add a word that is not one"
        )
    return f"no row matches {shown_query(query)}{why}"


__all__ = [
    "no_match_message",
    "SearchHit",
    "search",
    "snippet",
    "parse_when",
    "show_command",
    "resume_command",
    "SNIPPET_CHARS",
]
