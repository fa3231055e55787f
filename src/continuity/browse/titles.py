"""Session titles (issue 44 items 2 and 3): the one rule every list of sessions shows a title by
(``continuity sessions`` and its ``--json``, ``Workspace.sessions``, the browser's list and
session page, ``export``).

A session's title is the harness's own (Claude Code's ``summary``/``custom-title`` lines, pi's
session name, OpenCode's title: ``Session.title``), else its first request (the first row that
opens a run, else the first user message with text) as one line cut on a word at
``TITLE_CHARS`` characters with ``…``. Either is redacted by the session-wide rule
(``redaction.session.in_session``: a secret found in any row of the session is hidden in the
title too, issue 45 review item 1), not the text rule alone, unless ``raw``.

Cost: a session whose title was computed before and has not changed since is read from the
store's kept line (``store.titles``, revision 0025: no row read; issue 43 goal 3). Else the
first request is one bounded read (``REQUEST_ROWS`` conversation rows) per untitled session,
and the session-wide redaction reads the session's rows once (only its new rows when the
line is unchanged), running the detectors only on the rows that share an 8-character run
with the title (``redaction.session.secrets_in_text``: about a fifth of a full scan).
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress

from continuity.core.digest import sha256_hex
from continuity.core.errors import ContinuityError
from continuity.core.model import Entry, Role, Session

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any

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
    return session_titles(store, [session], raw=raw).get(session.key)


def _sha(text: str) -> str:
    return sha256_hex(text.encode("utf-8", "surrogatepass"))


def session_titles(store: Any, sessions: Iterable[Session], *, raw: bool = False) -> dict[str, str]:
    """``{key: title}`` of every session of ``sessions`` that has one (``session_title``).

    Redacted titles come from the store's kept lines where it keeps them (``store.titles``:
    ``kept_titles`` / ``keep_titles``; any other store computes each title): a kept line is
    used as it is while the session has the rows and own title it was computed from, so a
    listing of unchanged sessions reads no row; a session that grew has its first request
    read again (one bounded read) and, when that is unchanged, only its new rows scanned for
    secrets the line holds. New answers are kept when the store can be written (a read-only
    workspace computes them each time)."""
    sessions = list(sessions)
    keeps = hasattr(store, "kept_titles") and not raw
    kept: dict[str, Any] = {}
    if keeps:
        try:
            kept = store.kept_titles([s.key for s in sessions])
        except ContinuityError:  # an older schema read as it is: compute every title
            keeps = False
    found: dict[str, str] = {}
    fresh: list[Any] = []
    for s in sessions:
        own = s.title.strip() if s.title else ""
        have = kept.get(s.key)
        count = int(s.entry_count or 0)
        if have is not None and have.entry_count == count and have.own_sha256 == _sha(own):
            if have.line:
                found[s.key] = cut_on_word(have.line)
            continue
        text = own or first_request(store, s.key)
        if raw:
            if text:
                found[s.key] = cut_on_word(text)
            continue
        # only now: a listing of kept titles (or --raw) loads no redaction (issue 43 goal 3)
        from continuity.redaction.funnel import redact
        from continuity.redaction.session import secrets_in_text
        from continuity.store.base import KeptTitle

        # redacted before the cut: a secret cut in two by the word cut is still found (the
        # first REDACT_CHARS only: a pasted log as the first request stays cheap)
        line = " ".join(text[:REDACT_CHARS].split()) if text else ""
        if have is not None and have.own_sha256 == _sha(own) and have.line_sha256 == _sha(line):
            # the same line, more rows: the kept line with the new rows' secrets hidden too
            shown = have.line
            known = secrets_in_text(store, s.key, shown, after_seq=have.entry_count - 1)
        else:
            shown = line
            known = secrets_in_text(store, s.key, line) if line else {}
        if line:
            shown = redact(shown, known=known or None)
            found[s.key] = cut_on_word(shown)
        fresh.append(KeptTitle(s.key, _sha(own), _sha(line), count, shown if line else ""))
    if keeps and fresh:
        with suppress(ContinuityError):  # a read-only workspace: computed again next time
            store.keep_titles(fresh)
    return found


__all__ = ["TITLE_CHARS", "cut_on_word", "first_request", "session_title", "session_titles"]
