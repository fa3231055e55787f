"""What ``continuity team join|share|unshare|status`` change and show on this machine (issue 41
item 1): the ``[team]`` section, nothing in any database.

A project is shared by its identity (``team.identity``), so sharing ``~/src/app`` shares every
clone of the same repository on this machine, and the sessions of folders inside it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity.team.identity import ProjectIdentity, project_identity
from continuity.team.settings import (
    TeamSettings,
    check_team_url,
    safe_url,
    team_settings,
    team_values,
    write_team,
)


def _same_url(a: str, b: str) -> bool:
    from sqlalchemy.engine import make_url

    return make_url(a).render_as_string(hide_password=False) == make_url(b).render_as_string(
        hide_password=False
    )


def check_membership(url: str, team: str) -> None:
    """Connect to the team store at ``url`` and check that it is one (its schema at this
    continuity's version) and that the connecting role is a member of ``team``. Raises
    ``StoreError`` (exit 4) when the store cannot be reached or holds no team store,
    ``ConfigError`` (exit 2) when the role is not a member (of the store, or of ``team``:
    naming the teams it is in)."""
    from continuity.core.errors import ConfigError, StoreError
    from continuity.team.remote import TeamStore

    store = TeamStore(url, connect_timeout=10)
    try:
        try:
            store.meta()
        except StoreError as exc:
            if "refuses this role" in str(exc):
                raise ConfigError(str(exc)) from None
            raise
        teams = store.my_teams()
        if team not in teams:
            role = store.whoami()
            yours = ", ".join(teams) if teams else "none"
            raise ConfigError(
                f"role {role} is not a member of team {team} in this team store; your "
                f"teams: {yours} (join with --team NAME, or the store's owner runs "
                f"`continuity team add-member URL {role} --team {team}`)"
            )
    finally:
        store.close()


def join(
    home: str | os.PathLike[str] | None,
    url: str,
    *,
    name: str | None = None,
    offline: bool = False,
) -> tuple[TeamSettings, list[str]]:
    """Record ``url`` (checked by ``check_team_url``: no password, TLS off loopback) and the
    team ``name`` (default: the one recorded, else ``default``) in ``[team]``. Shares nothing:
    every project stays private until ``share``. Joining another store (a different URL or
    team name than the one recorded) starts private: ``shared`` is emptied, so the next sync
    pushes nothing the user shared with the previous store. Returns the new settings and the
    projects that were shared with the previous store (empty when the store is the same).
    Unless ``offline``, the store is asked first (``check_membership``) and nothing is
    written when it refuses. Raises ``ConfigError``, and ``StoreError`` for a store that
    cannot be reached."""
    check_team_url(url, where="team join URL")
    settings = team_settings(home)
    data = settings.model_dump()
    data["url"] = url
    if name is not None:
        data["name"] = name
    if not offline:
        check_membership(url, data["name"])
    other = bool(settings.url) and (
        not _same_url(settings.url or "", url) or data["name"] != settings.name
    )
    dropped = list(settings.shared) if other else []
    if dropped:
        data["shared"] = []
    new = TeamSettings.model_validate(data)
    write_team(home, team_values(new))
    return new, dropped


def set_shared(
    home: str | os.PathLike[str] | None, folder: str | os.PathLike[str], *, shared: bool
) -> tuple[ProjectIdentity, bool]:
    """Share (``shared``) or stop sharing the project at ``folder`` with the team:
    its identity added to or removed from ``[team] shared``. Returns the identity and whether
    the list changed. Unsharing a folder inside a shared repository is refused
    (``ConfigError``) naming the share that covers it: the rule is per share, not per folder.
    Sharing a path that is not a folder (missing, or a file) is refused (``InputError``, exit
    2, naming it); unsharing one is not (a clone since removed may still be listed)."""
    from continuity.core.errors import ConfigError, InputError

    where = Path(folder)
    if shared and not where.is_dir():
        what = "is a file, not a folder" if where.exists() else "does not exist"
        raise InputError(f"team share {folder}: {what}; give the folder of a project")
    settings = team_settings(home)
    ident = project_identity(where, machine=settings.machine_name())
    present = ident.project in settings.shared
    if shared == present:
        if not shared:
            covering = [s for s in settings.shared if ident.within(s)]
            if covering:
                raise ConfigError(
                    f"{ident.folder} is inside the shared project {covering[0]}: "
                    "run `continuity team unshare` in that project's folder"
                )
        return ident, False
    data = settings.model_dump()
    data["shared"] = (
        [*settings.shared, ident.project]
        if shared
        else [s for s in settings.shared if s != ident.project]
    )
    write_team(home, team_values(TeamSettings.model_validate(data)))
    return ident, True


@dataclass(frozen=True, slots=True)
class TeamStatus:
    """``continuity team status``: the team store (password masked; None when not joined),
    the team's name, this machine's author and machine names, the shared projects, the
    project of the current folder with whether it is shared, whether the daemon syncs on its
    own (``auto_sync``), and how the last syncs went (``sync``: ``team.state``)."""

    url: str | None
    name: str
    author: str
    machine: str
    shared: tuple[str, ...]
    here: ProjectIdentity
    here_shared: bool
    auto_sync: bool = True
    sync: dict[str, Any] | None = None
    #: ``(owner role, team)`` of each share of ``here``'s project the team store holds, as
    #: this member may read them (None: not asked, or the store did not answer: ``store_error``)
    store_shares: tuple[tuple[str, str], ...] | None = None
    store_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape."""
        return {
            "url": self.url,
            "team": self.name,
            "author": self.author,
            "machine": self.machine,
            "shared": list(self.shared),
            "here": {
                "folder": self.here.folder,
                "project": self.here.project,
                "remote": self.here.remote,
                "path": self.here.path,
                "shared": self.here_shared,
            },
            "auto_sync": self.auto_sync,
            "store_shares": None
            if self.store_shares is None
            else [{"owner": o, "team": t} for o, t in self.store_shares],
            "store_error": self.store_error,
            "sync": {
                k: (self.sync or {}).get(k)
                for k in ("last_sync_at", "last_error", "last_error_at", "failing_since")
            },
        }


def status(
    home: str | os.PathLike[str] | None, folder: str | os.PathLike[str], *, ask_store: bool = False
) -> TeamStatus:
    """The ``TeamStatus`` of the workspace, ``folder`` being "here". With ``ask_store`` and
    a team store joined, also who shares here's project there (``store_shares``, waiting
    at most 5 s for the store; a store that does not answer or refuses is ``store_error``):
    the local list says what this machine shares, the store what the team reads, which
    another machine of the same member may have changed."""
    from continuity.core.errors import ConfigError, StoreError
    from continuity.team.state import read_state

    settings = team_settings(home)
    here = project_identity(Path(folder), machine=settings.machine_name())
    store_shares: tuple[tuple[str, str], ...] | None = None
    store_error = None
    if ask_store and settings.url:
        from continuity.team.remote import TeamStore

        try:
            team = TeamStore(settings.url, connect_timeout=5)
            try:
                team.meta()
                store_shares = tuple(team.shares_of(here.project))
            finally:
                team.close()
        except (StoreError, ConfigError) as exc:
            store_error = str(exc)
    return TeamStatus(
        url=safe_url(settings.url) if settings.url else None,
        name=settings.name,
        author=settings.author_name(),
        machine=settings.machine_name(),
        shared=tuple(settings.shared),
        here=here,
        here_shared=any(here.within(s) for s in settings.shared),
        auto_sync=settings.auto_sync,
        sync=read_state(home),
        store_shares=store_shares,
        store_error=store_error,
    )


__all__ = ["TeamStatus", "join", "set_shared", "status"]
