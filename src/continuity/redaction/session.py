"""Secrets repeated across a session's rows (issue 45 review item 1).

The funnel redacts a value found to be a secret wherever the same *text* (``funnel._repeats``)
or the same structured value (``structured.redact_value``) repeats it. A session repeats
values across rows too: ``{"env": [{"name": "DB_PASSWORD", "value": V}]}`` in a Bash call,
then ``V`` in the assistant's next message, or in the session's title. ``session_secrets``
collects every secret of ``funnel.REPEAT_MIN_CHARS`` (8) or more characters found in any row
or the title of a session; ``in_session`` makes every ``redact`` / ``redact_value`` inside it
redact those values too (``funnel.SESSION_KNOWN``). Outputs that show a session's rows (show,
export, continue, brief, search snippets, the browser, the API and MCP tools) wrap their
redaction in it.

Cost: collecting reads and scans every row once; the result is cached per process by
``(store URL, session key)`` (``CACHE_SESSIONS`` sessions), so a search with many hits in
one 40,000-row session scans it once, not once per hit, and a session that grew (a live one
the daemon serves) is scanned only from the last row read. A store that keeps them
(``kept_secrets`` / ``keep_secrets``: the ``session_secrets`` table, revision 0028, issue 43
goal 3) keeps the result across processes too, with the SHA-256 of the redaction rules and the
own title (``rules_digest``: other rules, after an upgrade, scan again), the row count and
the last row scanned: a search whose 20 hits fell in 20 sessions of 1 MB scanned all 20 in
every process (7 s in the daemon on the 100 MB tree of ``bench/peers.py``); now each session
is scanned once, ever, and a session that grew from its first new row. Computed lazily, so
the rule also covers rows imported before it existed; a read-only workspace computes it
each time.
"""

from __future__ import annotations

from _thread import allocate_lock
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from functools import cache

from continuity.core.digest import sha256
from continuity.redaction.funnel import REPEAT_MIN_CHARS, SESSION_KNOWN, redact
from continuity.redaction.structured import _walk

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any

__all__ = ["in_session", "session_secrets", "secrets_in_text", "CACHE_SESSIONS"]

#: Sessions whose secrets are kept in memory at once (least recently used dropped first).
CACHE_SESSIONS = 32
_PAGE = 200  # rows per read: within the brief's bounded reads (ROWS_READ)
#: (store URL, key) -> ((row count, title), last seq read, secrets)
_cache: OrderedDict[tuple[str, str], tuple[tuple[int, str], int, dict[str, str]]] = OrderedDict()
#: ``threading.Lock`` is this function (``_thread``, documented): ``threading`` itself costs the
#: read commands' start 0.5 ms and they start no thread (issue 43 goal 3)
_lock = allocate_lock()


def _collect(value: Any, found: dict[str, str]) -> None:
    if isinstance(value, str):
        redact(value, collect=found)
    else:
        _walk(value, None, 0, found)


def session_secrets(store: Any, key: str, *, session: Any = None) -> dict[str, str]:
    """Every secret value (value -> kind, ``REPEAT_MIN_CHARS`` or more characters) found in
    the title or any row (texts by ``funnel.redact``, tool-call arguments and other blocks by
    the key rule of ``structured``) of session ``key`` of ``store`` (anything with
    ``get_session(key)`` and ``entries(key, after_seq=, limit=)``). ``{}`` for an unknown
    session. Cached per ``(store URL, key)`` with the row count and title it was read at: a
    session that grew is read from its last row read on (live capture appends), one renamed
    or otherwise changed is read again from the start. ``session``: the session ``key`` as
    the caller read it in the same snapshot (search's hits: one read for all of them),
    instead of reading it again here."""
    from continuity.core.codec import block_view

    if session is None or session.key != key:
        session = store.get_session(key)
    if session is None:
        return {}
    where = (str(getattr(store, "url", id(store))), key)
    state = (int(getattr(session, "entry_count", 0) or 0), session.title or "")
    with _lock:
        cached = _cache.get(where)
        if cached is not None:
            _cache.move_to_end(where)
    if cached is not None and cached[0] == state:
        return cached[2]
    keeps = hasattr(store, "kept_secrets")
    if cached is None and keeps:
        cached = _kept(store, key, state)
        if cached is not None and cached[0] == state:
            _remember(where, cached)
            return cached[2]
    # a session that only grew (live capture appends rows) is scanned from its last row read;
    # anything else (renamed, rows rewritten) from the start
    grown = cached is not None and cached[0][1] == state[1] and cached[0][0] < state[0]
    found: dict[str, str] = dict(cached[2]) if grown and cached is not None else {}
    after = cached[1] if grown and cached is not None else -1
    token = SESSION_KNOWN.set({})  # collect by the rows' own detections only
    try:
        if session.title and not grown:
            redact(session.title, collect=found)
        while True:
            page = store.entries(key, after_seq=after, limit=_PAGE)
            for e in page:
                for b in e.blocks:
                    _collect(block_view(b), found)
                summary = getattr(getattr(e, "compaction", None), "summary", None)
                if isinstance(summary, str):
                    redact(summary, collect=found)
            if page:
                after = page[-1].seq
            if len(page) < _PAGE:
                break
    finally:
        SESSION_KNOWN.reset(token)
    found = {v: k for v, k in found.items() if len(v) >= REPEAT_MIN_CHARS and "[REDACTED:" not in v}
    _remember(where, (state, after, found))
    if keeps:
        from continuity.core.errors import ContinuityError
        from continuity.store.base import KeptSecrets

        kept = KeptSecrets(key, _sha(state[1]), state[0], after, found)
        with suppress(ContinuityError):  # a read-only workspace: computed again next time
            store.keep_secrets(kept)
    return found


def _sha(title: str) -> str:
    """What a kept answer was found under: the redaction rules (``rules_digest``) and the
    session's own ``title``, as one SHA-256 (hex)."""
    return sha256(
        rules_digest().encode() + b"\0" + title.encode("utf-8", "surrogatepass")
    ).hexdigest()


@cache
def rules_digest() -> str:
    """SHA-256 (hex) of the redaction package's modules: a kept answer found by other rules
    (an upgrade that adds a detector) is not trusted, the session is scanned again. Each
    ``*.py`` file of the package's folder (symbolic links resolved), by name: its name, NUL,
    its bytes (``os``, not ``pathlib``: the read commands' start, issue 43 goal 3)."""
    import os

    folder = os.path.dirname(os.path.realpath(__file__))
    digest = sha256()
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".py")):
        with open(os.path.join(folder, name), "rb") as fh:
            digest.update(name.encode() + b"\0" + fh.read())
    return digest.hexdigest()


def _kept(
    store: Any, key: str, state: tuple[int, str]
) -> tuple[tuple[int, str], int, dict[str, str]] | None:
    """The store's kept secrets of ``key`` as a cache entry, when they were found under the
    session's present own title and from no more rows than it has now; else None."""
    from continuity.core.errors import ContinuityError

    try:
        kept = store.kept_secrets(key)
    except ContinuityError:  # an older schema read as it is: compute them
        return None
    if kept is None or kept.own_sha256 != _sha(state[1]) or kept.entry_count > state[0]:
        return None
    return ((kept.entry_count, state[1]), kept.last_seq, kept.secrets)


def _remember(where: tuple[str, str], entry: tuple[tuple[int, str], int, dict[str, str]]) -> None:
    with _lock:
        _cache[where] = entry
        _cache.move_to_end(where)
        while len(_cache) > CACHE_SESSIONS:
            _cache.popitem(last=False)


def _mentions(value: Any, windows: set[str]) -> bool:
    """Whether any string in ``value`` (a block's view: str, list, dict) holds a window."""
    if isinstance(value, str):
        return any(w in value for w in windows)
    if isinstance(value, dict):
        return any(_mentions(v, windows) for v in value.values())
    if isinstance(value, list):
        return any(_mentions(v, windows) for v in value)
    return False


def secrets_in_text(store: Any, key: str, text: str, *, after_seq: int = -1) -> dict[str, str]:
    """The secrets of ``session_secrets(store, key)`` that occur in ``text`` (value -> kind),
    found without running the detectors on every row (issue 44: a title in a list of 50
    sessions): a secret of ``REPEAT_MIN_CHARS`` (8) or more characters in ``text`` holds one
    of ``text``'s 8-character windows, and so does every row it was found in, so only the
    rows (and summaries) holding a window go through the detectors; reading the rest costs
    about a fifth of a full scan. A session already in ``session_secrets``'s cache (or the
    store's kept secrets) answers from it. ``after_seq``: only the rows after it are read (a
    session that grew since a kept answer, ``browse.titles``); the session's own title is then
    not read again."""
    where = (str(getattr(store, "url", id(store))), key)
    with _lock:
        cached = _cache.get(where)
    session = store.get_session(key)
    if session is None:
        return {}
    state = (int(getattr(session, "entry_count", 0) or 0), session.title or "")
    if cached is None and hasattr(store, "kept_secrets"):
        cached = _kept(store, key, state)
    if cached is not None and cached[0] == state:
        return {v: k for v, k in cached[2].items() if v in text}
    windows = {text[i : i + REPEAT_MIN_CHARS] for i in range(len(text) - REPEAT_MIN_CHARS + 1)}
    if not windows:
        return {}
    from continuity.core.codec import block_view

    found: dict[str, str] = {}
    token = SESSION_KNOWN.set({})  # collect by the rows' own detections only
    try:
        if session.title and after_seq < 0 and _mentions(session.title, windows):
            redact(session.title, collect=found)
        after = after_seq
        while True:
            page = store.entries(key, after_seq=after, limit=_PAGE)
            for e in page:
                for b in e.blocks:
                    view = block_view(b)
                    if _mentions(view, windows):
                        _collect(view, found)
                summary = getattr(getattr(e, "compaction", None), "summary", None)
                if isinstance(summary, str) and _mentions(summary, windows):
                    redact(summary, collect=found)
            if page:
                after = page[-1].seq
            if len(page) < _PAGE:
                break
    finally:
        SESSION_KNOWN.reset(token)
    return {
        v: k
        for v, k in found.items()
        if len(v) >= REPEAT_MIN_CHARS and "[REDACTED:" not in v and v in text
    }


@contextmanager
def in_session(store: Any, key: str, *, session: Any = None) -> Iterator[dict[str, str]]:
    """Within the block, ``redact`` and ``redact_value`` also redact every secret of
    ``session_secrets(store, key, session=session)`` wherever it occurs (issue 45 review item
    1). Nests: an inner session's secrets are added to the outer's."""
    known = session_secrets(store, key, session=session)
    outer = SESSION_KNOWN.get()
    token = SESSION_KNOWN.set({**outer, **known} if outer else known)
    try:
        yield known
    finally:
        SESSION_KNOWN.reset(token)
