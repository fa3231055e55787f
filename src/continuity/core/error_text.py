"""An error or limit message returned as text where a summary belongs (bug vector B49).

anthropics/claude-code#4996: ``/compact`` at the usage limit made the limit string the
summary ("Claude AI usage limit reached|<epoch>"). Two places must refuse such a text, and both
use this module so they agree on what one looks like:

- ``summarize.validate``: a model's answer (``looks_like_error``; a valid answer also needs the
  structured sections, which ``summarize`` checks itself);
- ``continuation.effective_compaction``: a compaction row already stored, e.g. imported from a
  harness's file (``failed_summary``), so that it never drops the rows before it.

Imports nothing of ours (it sits below every layer). Lengths are characters.
"""

from __future__ import annotations

import re
from functools import cache

#: The patterns below are compiled on first use (``_pattern``): most processes that import this
#: module (``continue`` among them) never call it, and compiling both cost ~1.5 ms of their
#: start (issue 43 goal 3).
_ERROR_SIGNATURES = (
    r"usage limit reached|\blimit (?:reached|exceeded)\b|\|\d{9,}\s*$"
    r"|^\s*(?:api\s+)?error\b|rate[ _-]?limit|too many requests"
    r"|\b429\b|quota (?:exceeded|exhausted)|insufficient_quota|overloaded"
    r"|context[_ ]length[_ ]exceeded|prompt is too long|conversation too long"
    r"|request too large|internal server error|service unavailable|summary unavailable"
    r"|^\s*i(?:'m| am) sorry|^\s*i can(?:no|')t"
)
#: Claude Code puts its own sentence before a compaction summary (formats.md §1.6):
#: "This session is being continued from a previous conversation that ran out of context. The
#: conversation is summarized below:" — the summary (or the error text) follows it.
_PREAMBLE = (
    r"\A\s*This session is being continued from a previous conversation[^\n]*?"
    r"(?:summarized below:|\n)"
)
#: A stored summary longer than this many characters (after the preamble) is a summary, whatever
#: its first line says: an error or limit message is short, and a real summary whose first line
#: mentions a rate limit must not be thrown away.
ERROR_TEXT_MAX_CHARS = 2_000


@cache
def _pattern(source: str, flags: int) -> re.Pattern[str]:
    return re.compile(source, flags)


def looks_like_error(text: str) -> bool:
    """B49: True when ``text`` is an error or limit message returned as text, judged by its
    first non-blank line (a structured summary starts with a heading; anything else it says is
    content). Signatures: usage/rate limits (``…|<epoch>``, 429, quota), ``Error:``/``API
    Error``, context length and "prompt is too long", provider outages, "summary unavailable"
    (B51) and apologies. Blank text is not an error (callers check emptiness themselves)."""
    stripped = text.strip()
    return bool(stripped) and bool(
        _pattern(_ERROR_SIGNATURES, re.I | re.M).search(stripped.splitlines()[0])
    )


def failed_summary(text: str) -> bool:
    """True when a stored compaction summary never finished: empty or whitespace (B47), or,
    once a Claude Code continuation preamble is set aside, an error or limit message
    (``looks_like_error``) of at most ``ERROR_TEXT_MAX_CHARS`` characters (B49)."""
    body = _pattern(_PREAMBLE, re.I).sub("", text, count=1).strip()
    if not body:
        return True
    return len(body) <= ERROR_TEXT_MAX_CHARS and looks_like_error(body)
