"""How a person or a tool names a stored session: an exact key or a unique key prefix
(``resolve_session``), or the folder it ran in (``project_session``). One rule for the CLI,
the daemon's REST API and the MCP tools (issue 12: the README names sessions by prefix).

May import: ``core``, ``store``.
"""

from __future__ import annotations

from continuity.core.errors import AmbiguousSession, SessionNotFound

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any

#: Keys are at most 200 characters (``sessions.session_key``).
MAX_KEY_CHARS = 200


#: sessions an ambiguous prefix reads before it says "more than" this many match
AMBIGUOUS_SHOWN = 20


def resolve_session(store: Any, name: str) -> str:
    """The session key named by ``name``: an exact key or a unique prefix of one; a prefix
    of a session and of its subagent sessions only (``S``, ``S/agent-x``) names the session.
    Raises ``SessionNotFound`` (also for "" and names over 200 characters) or
    ``AmbiguousSession`` (its ``candidates``: at most ``AMBIGUOUS_SHOWN`` + 1 keys, ``more``
    when that many were found: the lookup reads no further)."""
    if not name or len(name) > MAX_KEY_CHARS:
        raise SessionNotFound(name[:80] + ("…" if len(name) > 80 else ""))
    if store.get_session(name) is not None:
        return name
    found = store.find_sessions(name, limit=AMBIGUOUS_SHOWN + 1)
    if not found:
        raise SessionNotFound(name)
    if len(found) > 1:
        # A session and its own subagent files (``S``, ``S/agent-…``): the prefix names S.
        parents = [
            s.key
            for s in found
            if all(o.key == s.key or o.key.startswith(s.key + "/") for o in found)
        ]
        if len(parents) == 1 and len(found) <= AMBIGUOUS_SHOWN:
            return parents[0]
        raise AmbiguousSession(name, [s.key for s in found], more=len(found) > AMBIGUOUS_SHOWN)
    return found[0].key


def project_variants(project: str) -> list[str]:
    """The spellings of folder ``project`` a stored session may carry: as given, without and
    with one trailing ``/`` (the root ``/`` stays itself)."""
    bare = project.rstrip("/") or "/"
    return list(dict.fromkeys([project, bare, bare if bare == "/" else bare + "/"]))


def project_session(store: Any, project: str) -> str | None:
    """The key of the most recently active stored main session (not a subagent's
    ``S/agent-x``) whose project is folder ``project`` (``project_variants``), else None. One
    bounded query (``SqlStore.project_sessions``, at most 20 rows)."""
    for session in store.project_sessions(project_variants(project), limit=20):
        if "/" not in session.key:
            return session.key
    return None
