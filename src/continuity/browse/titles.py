"""Session titles (issue 44 items 2 and 3): the one rule every list of sessions shows a title by
(``continuity sessions`` and its ``--json``, ``Workspace.sessions``, the browser's list and
session page, ``export``).

A session's title is the harness's own (Claude Code's ``summary``/``custom-title`` lines, pi's
session name, OpenCode's title: ``Session.title``), else its first request (the first row that
opens a run, else the first user message with text) as one line cut on a word at
``TITLE_CHARS`` characters with ``…``. Either is redacted by the session-wide rule
(``redaction.session.in_session``: a secret found in any row of the session is hidden in the
title too, issue 45 review item 1), not the text rule alone, unless ``raw``.

Cost: the first request is one bounded read (``REQUEST_ROWS`` conversation rows) per untitled
session; the session-wide redaction reads each listed session's rows once, running the
detectors only on the rows that share an 8-character run with the title
(``redaction.session.secrets_in_text``: about a fifth of a full scan's time).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from continuity.core.model import Entry, Role, Session

#: A title longer than this many characters is cut on a word, ``…`` appended.
TITLE_CHARS = 80
#: Characters of a first request redacted before the cut (far past any title's end).
REDACT_CHARS = 4_000
#: Conversation rows read to find a session's first request.
REQUEST_ROWS = 20


def cut_on_word(text: str, limit: int = TITLE_CHARS) -> str:
    """``text`` as one line (runs of whitespace, newlines too, as one space), cut to at most
    ``limit`` characters on a word boundary with ``…`` appended when cut (a first word longer
    than ``limit`` is cut inside it)."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    head = line[: limit - 1]
    space = head.rfind(" ")
    if space >= limit // 2:
        head = head[:space]
    return head.rstrip(" ,;:.-") + "…"


def _request_text(rows: Iterable[Entry]) -> str | None:
    rows = list(rows)
    for pick in (lambda e: e.is_request, lambda e: e.role is Role.USER):
        for e in rows:
            if pick(e):
                text = e.text().strip()
                if text:
                    return text
    return None


def first_request(store: Any, key: str) -> str | None:
    """The text of session ``key``'s first request (the first conversation row that opens a
    run among the first ``REQUEST_ROWS``, else the first user row with text), None when none
    is found."""
    return _request_text(store.entries(key, limit=REQUEST_ROWS, visible_only=True))


def session_title(store: Any, session: Session, *, raw: bool = False) -> str | None:
    """The title of ``session`` (module docstring): its own, else its first request cut on a
    word; redacted by the session-wide rule unless ``raw``. None when it has neither."""
    own = session.title.strip() if session.title else ""
    text = own or first_request(store, session.key)
    if not text:
        return None
    title = cut_on_word(text)
    if raw:
        return title
    from continuity.redaction.funnel import redact
    from continuity.redaction.session import secrets_in_text

    # redacted before the cut: a secret cut in two by the word cut is still found (the first
    # REDACT_CHARS only: a pasted log as the first request stays cheap)
    line = " ".join(text[:REDACT_CHARS].split())
    known = secrets_in_text(store, session.key, line)  # the session-wide rule, for this text
    return cut_on_word(redact(line, known=known or None))


def session_titles(store: Any, sessions: Iterable[Session], *, raw: bool = False) -> dict[str, str]:
    """``{key: title}`` of every session of ``sessions`` that has one (``session_title``)."""
    found: dict[str, str] = {}
    for s in sessions:
        title = session_title(store, s, raw=raw)
        if title:
            found[s.key] = title
    return found


__all__ = ["TITLE_CHARS", "cut_on_word", "first_request", "session_title", "session_titles"]
