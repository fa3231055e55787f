"""A teammate's session read from the team store (issue 41 item 4: "``sessions``, ``search``,
``show``, ``continue``, the MCP tools and the session brief take ``--team`` ... ``resume``
takes ``--project DIR`` ... so a teammate's session ... continues in any harness here").

The team store holds each shared session's rows as ``show --json`` gives them, redacted
(``team.sync``). ``entry_from_row`` reads one back as a row; ``copy_session`` writes a team
session's rows (those after what the copy holds) and checkpoints into a store, under a
project folder of this machine. Two uses:

- **a scratch copy** (``scratch_copy``): a SQLite store of its own in a private temporary
  folder (deleted after) holding the one session,
  which ``show --team``, ``continue --team`` and ``brief --team`` read with the same code as
  a local session (nothing is written to the workspace);
- **a local copy** (``pull_copy``): ``resume KEY`` of a session only the team store holds
  copies it into the workspace under the folder where the repository lives here (``--project
  DIR``), recorded in ``team_copies`` so that ``sync`` never pushes it back as this member's
  own; a later resume adds the rows pushed since.

A session is named by its key or a unique prefix of it, among those row-level security lets
this member read (``find_team_session``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from continuity.core.errors import AmbiguousSession, ConfigError, InputError, SessionNotFound
from continuity.store.names import AMBIGUOUS_SHOWN
from continuity.team.remote import TeamStore
from continuity.team.settings import TeamSettings

#: Checkpoints kept of one copied session (seed 000's default per-session cap).
MAX_CHECKPOINTS = 50


@dataclass(frozen=True, slots=True)
class TeamSession:
    """One session of the team store: who pushed it (``owner`` role, ``author``,
    ``machine``), its ``key``, project identity (``project``) and share (``shared_as``),
    ``harness``, redacted ``title``, times and row count."""

    owner: str
    machine: str
    key: str
    author: str
    project: str
    shared_as: str
    harness: str
    title: str | None
    started_at: datetime | None
    ended_at: datetime | None
    entry_count: int

    @property
    def who(self) -> str:
        """``author@machine``."""
        return f"{self.author}@{self.machine}"

    def provenance(self) -> dict[str, Any]:
        """``{author, machine, owner, project}``: the ``team`` object of ``show --team
        --json`` and ``continue --team --json``."""
        return {
            "author": self.author,
            "machine": self.machine,
            "owner": self.owner,
            "project": self.project,
        }


def _team_session(row: dict[str, Any]) -> TeamSession:
    return TeamSession(
        owner=row["owner"],
        machine=row["machine"],
        key=row["session_key"],
        author=row["author"],
        project=row["project"],
        shared_as=row.get("shared_as") or row["project"],
        harness=row["harness"],
        title=row["title"],
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        entry_count=row["entry_count"],
    )


@contextmanager
def open_team(settings: TeamSettings) -> Iterator[TeamStore]:
    """A ``TeamStore`` of the joined team store, its schema checked, closed after. Raises
    ``ConfigError`` when none is joined, ``StoreError`` when it cannot be reached."""
    if not settings.url:
        raise ConfigError("no team store joined: run `continuity team join URL` first")
    team = TeamStore(settings.url)
    try:
        team.meta()
        yield team
    finally:
        team.close()


def find_team_session(team: TeamStore, ref: str) -> TeamSession:
    """The team session ``ref`` names: its exact key, else the one key starting with it.
    Raises ``SessionNotFound`` (none this member may read) or ``AmbiguousSession``."""
    if not ref:
        raise InputError("session: empty: give a session key or a prefix of one")
    rows = team.find_sessions(ref, limit=AMBIGUOUS_SHOWN + 1)
    exact = [r for r in rows if r["session_key"] == ref]
    chosen = exact or rows
    if not chosen:
        raise SessionNotFound(ref)
    if len(chosen) > 1:
        raise AmbiguousSession(
            ref,
            [f"{r['session_key']} ({r['author']}@{r['machine']})" for r in chosen],
            more=len(chosen) > AMBIGUOUS_SHOWN,
        )
    return _team_session(chosen[0])


def entry_from_row(row_json: str) -> Any:
    """The ``Entry`` of a row as the team store holds it (``core.codec.entry_view``'s shape:
    blocks in their view shape, media as stubs), ``seq`` and ``entry_id`` as pushed. Raises
    ``ValueError`` for a row that is not that shape."""
    import orjson

    from continuity.core.codec import block_from_dict
    from continuity.core.model import CompactionInfo, Entry, EntryKind, Role

    data = orjson.loads(row_json)
    compaction = data.get("compaction")
    when = data.get("timestamp")
    entry = Entry(
        EntryKind(data["kind"]),
        Role(data["role"]),
        tuple(block_from_dict(b) for b in data.get("content") or ()),
        timestamp=datetime.fromisoformat(when.replace("Z", "+00:00")) if when else None,
        native_id=data.get("native_id"),
        type_name=data.get("type") or "",
        visible=bool(data.get("visible", True)),
        is_request=bool(data.get("is_request", False)),
        compaction=CompactionInfo(
            compaction.get("summary") or "",
            compaction.get("covers_through_seq"),
            compaction.get("first_kept_entry_id"),
            bool(compaction.get("continuation", False)),
        )
        if compaction
        else None,
    )
    entry.seq = int(data["seq"])
    entry.entry_id = data.get("entry_id") or ""
    return entry


def copy_session(store: Any, team: TeamStore, ts: TeamSession, *, key: str, project: str) -> int:
    """Copy team session ``ts`` into ``store`` as session ``key`` of folder ``project``: the
    session (its project set to ``project``), the rows after those the copy holds (while
    their seqs follow on: a row missing in the team store, a push under way, ends the copy
    there) with the runs derived from them (``formats.runs``: the requests a continuation
    starts from), and the checkpoints newer than the copy's newest (digests as pushed,
    redacted). Returns the rows added."""
    from continuity.checkpoints.capture import normalize_project
    from continuity.core.model import Checkpoint, CheckpointTrigger, Session

    have = store.get_session(key)
    start = have.entry_count if have else 0
    store.upsert_session(
        Session(
            key=key,
            harness=ts.harness,
            project=project,
            started_at=ts.started_at,
            ended_at=ts.ended_at,
        )
    )
    rows = []
    for seq, row_json in team.session_rows(ts.owner, ts.machine, ts.key, after_seq=start - 1):
        if seq != start + len(rows):
            break
        rows.append(entry_from_row(row_json))
    store.append(key, rows)
    if rows:  # its runs (a request and what answered it), derived from the rows as an import
        from continuity.formats.runs import derive_runs

        store.replace_runs(key, derive_runs(store, key, "default").take())
    newest = store.latest_checkpoint(key)
    for c in team.session_checkpoints(ts.owner, ts.machine, ts.key):
        if newest is not None and newest.created_at and c["created_at"] <= newest.created_at:
            continue
        store.insert_checkpoint(
            Checkpoint(
                key,
                ts.harness,
                project,
                normalize_project(project),
                CheckpointTrigger(c["trigger"]),
                c["digest"],
                c["prompt_count"],
                created_at=c["created_at"],
            ),
            max_per_session=MAX_CHECKPOINTS,
        )
    return len(rows)


@contextmanager
def _scratch() -> Iterator[Any]:
    """A workspace store of its own in a private temporary folder, deleted after (SQLite
    needs a file: several connections share it)."""
    import tempfile

    from continuity.store import open_store

    with (
        tempfile.TemporaryDirectory(prefix="continuity-team-") as folder,
        open_store(f"sqlite:///{os.path.join(folder, 'scratch.db')}") as store,
    ):
        yield store


@contextmanager
def scratch_copy(settings: TeamSettings, ref: str) -> Iterator[tuple[Any, TeamSession]]:
    """``(store, team session)``: a scratch store holding a copy of the team session
    ``ref`` names (under its project identity as its folder), for the reads that take
    ``--team``. Raises as ``open_team`` and ``find_team_session``."""
    with open_team(settings) as team:
        ts = find_team_session(team, ref)
        with _scratch() as store:
            copy_session(store, team, ts, key=ts.key, project=ts.project)
            yield store, ts


#: Team sessions a ``brief --team`` reads (the brief's own ``MAX_SESSIONS``).
BRIEF_SESSIONS = 5


@contextmanager
def team_brief_store(
    store: Any, settings: TeamSettings, folder: str
) -> Iterator[tuple[Any, dict[str, str]]]:
    """``(scratch store, {key: author@machine})`` for ``brief --team`` of ``folder``: the
    newest ``BRIEF_SESSIONS`` sessions of the pulled team index (``store``'s, as the last
    sync left it) of ``folder``'s project (its identity: the same repository anywhere, or a
    folder inside it), this machine's own left out (they are local), each copied from the
    team store under ``folder``. Raises as ``open_team``."""
    from continuity.team.identity import project_identity

    ident = project_identity(folder, machine=settings.machine_name())
    me = settings.machine_name()
    with open_team(settings) as team:
        role = team.whoami()
        rows = [
            r
            for r in store.team_index(None, project=ident.project)
            if not (r["machine"] == me and r["owner"] == role)
        ][:BRIEF_SESSIONS]
        with _scratch() as scratch:
            who: dict[str, str] = {}
            for r in rows:
                found = team.find_sessions(r["session_key"], limit=20)
                match = [
                    x
                    for x in found
                    if (x["owner"], x["machine"], x["session_key"])
                    == (r["owner"], r["machine"], r["session_key"])
                ]
                if not match or match[0]["session_key"] in who:
                    continue
                ts = _team_session(match[0])
                copy_session(scratch, team, ts, key=ts.key, project=folder)
                who[ts.key] = ts.who
            yield scratch, who


def pull_copy(
    store: Any, settings: TeamSettings, ref: str, project: str | os.PathLike[str]
) -> tuple[str, TeamSession, int]:
    """Copy the team session ``ref`` names into the workspace ``store`` under folder
    ``project`` (``resume`` of a teammate's session; module docstring): ``(key here, team
    session, rows added)``. The copy keeps the session's key. Raises ``InputError`` when a
    session of this workspace that is not a copy holds that key, and as ``open_team`` and
    ``find_team_session``."""
    folder = os.path.abspath(os.fspath(project))
    with open_team(settings) as team:
        ts = find_team_session(team, ref)
        mine = store.get_session(ts.key)
        if mine is not None and store.team_copy(ts.key) is None:
            raise InputError(
                f"session {ts.key} of the team store ({ts.who}) has the key of a session of "
                "this workspace: resume that one by its key"
            )
        added = copy_session(store, team, ts, key=ts.key, project=folder)
        store.put_team_copy(
            ts.key,
            {
                "team_store": team.meta().store_id,
                "owner": ts.owner,
                "machine": ts.machine,
                "original_key": ts.key,
                "author": ts.author,
            },
        )
    return ts.key, ts, added


__all__ = [
    "TeamSession",
    "copy_session",
    "entry_from_row",
    "find_team_session",
    "open_team",
    "pull_copy",
    "scratch_copy",
    "team_brief_store",
]
