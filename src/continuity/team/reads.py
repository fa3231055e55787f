"""``--team`` reads (issue 41 item 4, first slice): ``sessions --team`` from the team's
session index as the last ``continuity sync`` pulled it (offline, no rows), ``search --team``
from the team store itself (its rows, as row-level security lets this member read them).
Both show each session's author and machine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from continuity.team.identity import project_identity
from continuity.team.settings import TeamSettings


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def team_sessions(
    store: Any,
    settings: TeamSettings,
    *,
    limit: int = 50,
    project: str | os.PathLike[str] | None = None,
    since: datetime | None = None,
) -> list[dict[str, Any]]:
    """The team's sessions from the pulled index, newest activity first, at most ``limit``
    (0: all), only of the project of folder ``project`` (its identity: the same repository
    cloned anywhere) or inside it, active since ``since``. Each ``{session, author, machine,
    owner, project, harness, title, started_at, ended_at, entries, pushed_at}`` (times ISO
    8601 UTC). An empty list before the first ``continuity sync``."""
    ident = None
    if project is not None:
        ident = project_identity(project, machine=settings.machine_name()).project
    rows = store.team_index(None, limit=limit, project=ident, since=since)
    return [
        {
            "session": r["session_key"],
            "author": r["author"],
            "machine": r["machine"],
            "owner": r["owner"],
            "project": r["project"],
            "harness": r["harness"],
            "title": r["title"],
            "started_at": _iso(r["started_at"]),
            "ended_at": _iso(r["ended_at"]),
            "entries": r["entry_count"],
            "pushed_at": _iso(r["pushed_at"]),
        }
        for r in rows
    ]


@dataclass(frozen=True, slots=True)
class TeamHit:
    """One ``search --team`` hit: the row's session, seq, role, time and project, its
    session's author, machine, harness and title, the rank and a snippet (redacted when
    pushed, and again here)."""

    session: str
    seq: int
    role: str
    ts: str | None
    project: str
    author: str
    machine: str
    harness: str
    title: str | None
    rank: float
    snippet: str

    def to_dict(self) -> dict[str, Any]:
        """The ``search --team --json`` shape of the hit."""
        return {
            "session": self.session,
            "seq": self.seq,
            "role": self.role,
            "timestamp": self.ts,
            "project": self.project,
            "author": self.author,
            "machine": self.machine,
            "harness": self.harness,
            "title": self.title,
            "rank": self.rank,
            "snippet": self.snippet,
        }


def team_search(settings: TeamSettings, query: str, *, limit: int = 20) -> list[TeamHit]:
    """The best ``limit`` rows of the team store for ``query`` (words, "phrases", -word;
    PostgreSQL full text, ``simple`` configuration) that this member may read, best first.
    Raises ``ConfigError`` when no team store is joined, ``StoreError`` when it cannot be
    read."""
    from continuity.core.errors import ConfigError
    from continuity.redaction.funnel import redact
    from continuity.team.remote import TeamStore

    if not settings.url:
        raise ConfigError("no team store joined: run `continuity team join URL` first")
    team = TeamStore(settings.url)
    try:
        team.meta()
        found = team.search(query, limit=limit)
    finally:
        team.close()
    return [
        TeamHit(
            session=r["session_key"],
            seq=r["seq"],
            role=r["role"],
            ts=_iso(r["ts"]),
            project=r["project"],
            author=r["author"],
            machine=r["machine"],
            harness=r["harness"],
            title=r["title"],
            rank=round(float(r["rank"]), 6),
            snippet=" ".join(redact(r["snippet"] or "").split()),
        )
        for r in found
    ]


__all__ = ["TeamHit", "team_search", "team_sessions"]
