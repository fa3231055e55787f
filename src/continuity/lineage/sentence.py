"""The memory sentence of the lineage (seed 000, "Canonical Markdown Lineage and MEMORY.md
Projection"; issue 6) and the one-line display text it is made of.

**Memory sentence**: the only model-written text of the lineage, one sentence in summary and
compaction frontmatter. ``sentence_problem`` is the quality gate; ``fallback_sentence`` builds a
sentence from the session's facts when no model is configured or the gate fails, and
``generic_sentence`` is the render-time stand-in for a stored sentence that fails the gate.
``memory_sentence`` asks a model writer and falls back. ``one_line`` flattens any display value
(a sentence, a key, a project) to one line; ``continuity.lineage.artifacts`` uses it for frontmatter and
re-exports every name of this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity.redaction.funnel import redact

SENTENCE_VERSION = 1
#: The quality gate's bounds on a memory sentence (issue 6: "roughly 12-48 words").
SENTENCE_MIN_WORDS = 12
SENTENCE_MAX_WORDS = 48


# ---------------------------------------------------------------------------- one line

_BREAKERS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(value: Any, limit: int | None = None) -> str:
    """``value`` as text on one line: control characters (C0, DEL, C1) and the Unicode line and
    paragraph separators become spaces, runs of whitespace one space, edges trimmed; cut to at
    most ``limit`` characters (ending in ``…``) when given. Every value rendered into MEMORY.md
    goes through it (a key or a project holding ``"\\n## Heading"`` must not start a line)."""
    text = " ".join(_BREAKERS.sub(" ", str(value)).split())
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


# ---------------------------------------------------------------------------- memory sentence

#: Low-signal sentences the gate refuses whatever their length (compared case-folded).
STOCK_SENTENCES = frozenset(
    {
        "worked on task.",
        "session completed.",
        "no significant changes.",
        "the session made progress on the task.",
        "work continued on the project.",
        "this session contains a conversation.",
        "summary of the session.",
    }
)
_REF = re.compile(r"(?:^|[\s(])#\d+\b|\b[A-Z][A-Z0-9]*-\d+\b")
_PATH_TOKEN = re.compile(
    r"(?<![\w/])(?:(?:[\w@.-]+/)+[\w@-]+|[\w@-]{2,})"
    r"\.[A-Za-z][A-Za-z0-9]{0,7}\b"
)
_IDENT = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b|\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b\w+\(\)")
_MARKDOWN = re.compile(r"^\s*(?:[-*+>#]|\d+[.)])\s|`|\*\*|\[\[")
_INNER_END = re.compile(r"[.!?]\s+\S")


def has_anchor(sentence: str, anchor: str | None) -> bool:
    """Whether ``sentence`` names a concrete anchor: ``anchor`` itself (case-insensitive, as a
    whole word), a path or file name with an extension, an identifier (``snake_case``,
    ``camelCase``, ``name()``), or a ``#123`` / ``PR-123`` / ``ABC-123`` reference."""
    if anchor and re.search(r"(?<!\w)" + re.escape(anchor) + r"(?!\w)", sentence, re.I):
        return True
    return bool(_REF.search(sentence) or _PATH_TOKEN.search(sentence) or _IDENT.search(sentence))


def sentence_problem(sentence: str | None, anchor: str | None) -> str | None:
    """The quality gate: None when ``sentence`` is one whole sentence of ``SENTENCE_MIN_WORDS``
    to ``SENTENCE_MAX_WORDS`` words, ending in ``.``, ``!`` or ``?``, without markdown or a
    line break, not a stock low-signal sentence, naming an anchor (``has_anchor``); else the
    first problem found, in those words."""
    if not sentence or not sentence.strip():
        return "empty"
    text = sentence.strip()
    if "\n" in text or "\r" in text:
        return "more than one line"
    if text.casefold() in STOCK_SENTENCES:
        return "a stock low-signal sentence"
    words = len(text.split())
    if not SENTENCE_MIN_WORDS <= words <= SENTENCE_MAX_WORDS:
        return f"{words} words (needs {SENTENCE_MIN_WORDS}-{SENTENCE_MAX_WORDS})"
    if text[-1] not in ".!?":
        return "does not end in punctuation"
    if _MARKDOWN.search(text):
        return "contains markdown"
    if _INNER_END.search(text[:-1]):
        return "more than one sentence"
    if not has_anchor(text, anchor):
        return "names no concrete anchor (project, file, identifier or reference)"
    return None


def first_sentence(reply: str) -> str | None:
    """A model reply's sentence: whitespace collapsed, the shortest prefix ending in ``.``,
    ``!`` or ``?`` followed by a space or the end (None: there is none)."""
    text = " ".join(reply.split())
    m = re.match(r"^(.*?[.!?])(?=\s|$)", text)
    return m.group(1).strip() if m else None


def choose_anchor(project: str | None, body: str, harness: str | None) -> str:
    """The sentence's anchor (one line): the project's base name, else the first
    ``#123``-style reference of ``body``, else its first path or file name, else the harness,
    else ``session``."""
    base = one_line(project.rstrip("/").rsplit("/", 1)[-1]) if project else ""
    if base:
        return base
    for pattern in (_REF, _PATH_TOKEN):
        m = pattern.search(body)
        if m:
            return m.group(0).strip(" (")
    return harness or "session"


_GIST_MARKS = re.compile(r"[`\"\u201c\u201d\u00ab\u00bb*]+")
_GIST_BREAKS = re.compile(r"[#>\[\]|]+")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_BOLD_LINE = re.compile(r"^\*\*[^*]+\*\*:?$")


def gist(text: str, max_words: int) -> str:
    """The first sentence of the first content line of ``text`` (headings, bold-only lines and
    code fences skipped) as plain words: markdown, quotes and list markers removed, redacted,
    at most ``max_words`` words (a cut one ends in ``…``); "" when there is none."""
    for raw in text.splitlines():
        line = _LIST_MARK.sub("", raw).strip()
        if not line or line.startswith(("#", "```")) or _BOLD_LINE.match(line):
            continue
        plain = " ".join(_GIST_BREAKS.sub(" ", _GIST_MARKS.sub("", redact(line))).split())
        m = re.match(r"^(.*?)[.!?;](?=\s|$)", plain)
        words = (m.group(1) if m else plain).strip(" ,-:").split()
        if not words:
            continue
        if len(words) <= max_words:
            return " ".join(words)
        cut = " ".join(words[:max_words])
        if cut.count("(") > cut.count(")"):  # never leave a parenthesis open
            cut = cut[: cut.rindex("(")].rstrip(" ,;:")
        return cut + "…"
    return ""


@dataclass(frozen=True, slots=True)
class SentenceFacts:
    """What a fallback sentence is built from. ``date`` is ``YYYY-MM-DD``; ``request`` the
    session's main request (or, for a compaction, the newest summary's text) and ``latest``
    its last request; ``files`` paths it changed; ``status`` how its last request ended
    (``finished``, ``interrupted``, ``failed``, ``running`` or None); ``compactions`` and
    ``covers`` describe compactions."""

    kind: str
    anchor: str
    harness: str
    date: str
    request: str = ""
    files: tuple[str, ...] = ()
    status: str | None = None
    compactions: int = 0
    covers: int | None = None
    latest: str = ""


def _join(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _parts(facts: SentenceFacts, main_n: int, last_n: int) -> str:
    lead = f"In {facts.anchor} on {facts.date}, a {facts.harness} session"
    if facts.kind == "compaction":
        times = "once" if facts.compactions == 1 else f"{facts.compactions} times"
        rows = f" covers rows through #{facts.covers} and" if facts.covers is not None else ""
        words = gist(facts.request, main_n)
        text = f"{lead} was compacted {times}; the latest summary{rows} starts with: {words}"
        return text.rstrip(" :;,")
    main = gist(facts.request, main_n)
    text = f"{lead} worked on: {main}" if main else f"{lead} ran without a typed request"
    files = [Path(f).name for f in facts.files[:3] if Path(f).name]
    if files:
        text += f", changing {_join(files)}"
    status = facts.status if facts.status in ("interrupted", "failed", "running") else None
    latest = gist(facts.latest, last_n) if facts.latest else ""
    if latest and latest.rstrip("…") != main.rstrip("…"):
        text += f"; last request{f' ({status})' if status else ''}: {latest}"
    elif status:
        text += f"; its last request was {status}"
    return text


def fallback_sentence(facts: SentenceFacts) -> str:
    """The deterministic sentence built from ``facts`` (seed 000's fallback, issue 6): anchor,
    date, harness, the main request, changed files and the last request (or, for a compaction,
    how often and where the newest summary starts), shortened to fit the word bounds. It
    always passes ``sentence_problem`` with ``facts.anchor``; when the words do not, the
    generic sentence is returned instead."""
    main_n, last_n = 16, 12
    text = _parts(facts, main_n, last_n)
    while len(text.split()) >= SENTENCE_MAX_WORDS and (main_n > 4 or last_n > 4):
        if last_n > 4:
            last_n -= 1
        else:
            main_n -= 1
        text = _parts(facts, main_n, last_n)
    sentence = one_line(text).rstrip("…").rstrip(" :;,") + "."
    if len(sentence.split()) < SENTENCE_MIN_WORDS:
        sentence = sentence[:-1] + ", and the linked transcript keeps its full record."
    if sentence_problem(sentence, facts.anchor) is None:
        return sentence
    return generic_sentence(facts.kind, facts.anchor, facts.harness, facts.date)


def generic_sentence(kind: str, anchor: str, harness: str | None, date: str) -> str:
    """The plain stand-in sentence (render time, or when nothing else passes the gate)."""
    label = {"compaction": "Compaction", "transcript": "Transcript"}.get(kind, "Summary")
    return one_line(
        f"{label} of the {anchor} {harness or 'agent'} session on {date} is stored "
        "as durable context; the linked artifacts in memory hold the full record."
    )


#: The request of a model-written memory sentence (seed 000: one sentence, 12-48 words).
SENTENCE_SYSTEM = (
    "Write exactly one sentence of 12 to 48 words telling a coding agent what this {kind} of "
    "a past session records. Name a concrete anchor: the project {anchor}, a file path or an "
    "identifier. No lists, no markdown, no quotes. Reply with the sentence only."
)
#: A model writer: (kind, anchor, project, body) -> its raw reply, or None on failure.
SentenceWriter = Callable[[str, str, str | None, str], str | None]


def memory_sentence(
    kind: str, body: str, facts: SentenceFacts, project: str | None, writer: SentenceWriter | None
) -> tuple[str, str]:
    """``(sentence, quality)``: the model's sentence when ``writer`` gives one that passes the
    gate (``ok``), else ``fallback_sentence(facts)`` (``fallback``). The model sees the project
    and the first 4,000 characters of ``body``; its sentence is redacted."""
    if writer is not None:
        try:
            reply = writer(kind, facts.anchor, project, body[:4000])
        except Exception:  # noqa: BLE001 - any failure of the model means the fallback
            reply = None
        sentence = first_sentence(redact(reply)) if reply else None
        if sentence is not None and sentence_problem(sentence, facts.anchor) is None:
            return sentence, "ok"
    return fallback_sentence(facts), "fallback"
