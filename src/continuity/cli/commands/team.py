"""`continuity team join|share|unshare|status` and `continuity sync` (issue 41): a team's
sessions on one PostgreSQL team store, local-first and private by default
(``continuity.team``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from continuity.cli.commands.common import (
    HomeOption,
    JsonOption,
    bad_option,
    emit_json,
    err,
    global_home,
    out,
)

team_app = typer.Typer(
    help="Share sessions with a team through one PostgreSQL team store "
    "(each project private until shared).",
    no_args_is_help=True,
)

FolderArgument = typer.Argument(
    None,
    show_default=False,
    help="A folder of the project (default: the current folder).",
)


def register(app: typer.Typer) -> None:
    """Add ``sync``, ``forget`` and the ``team`` group to the app."""
    app.command("sync")(sync_cmd)
    app.command("forget")(forget_cmd)
    app.add_typer(team_app, name="team")


def sync_cmd(
    ctx: typer.Context,
    no_pull: bool = typer.Option(
        False, "--no-pull", help="Push only; leave the team's index as last pulled."
    ),
    batch_rows: int = typer.Option(
        500, "--batch-rows", min=1, max=100_000, help="Rows per team-store transaction."
    ),
    watch: float | None = typer.Option(
        None,
        "--watch",
        metavar="SECONDS",
        min=1,
        max=86_400,
        show_default=False,
        help="Keep syncing, every SECONDS, until interrupted; a team store that cannot be "
        "reached is tried again with a backoff up to SECONDS (capture goes on locally "
        "meanwhile).",
    ),
    follow_stdin: bool = typer.Option(
        False,
        "--follow-stdin",
        hidden=True,
        help="The daemon's background sync: every [team] sync_interval_seconds, and after a "
        "debounce when a byte arrives on stdin; ends at end of input.",
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Push what is new of the shared projects to the team store (redacted: rows,
    summaries, checkpoints; never raw lines or transcripts) and pull the team's session
    index. Safe to stop at any point and run again: nothing is lost or pushed twice. The
    daemon (`continuity serve`) does this on its own while a team store is joined."""
    from continuity.cli.commands.common import open_workspace

    where = global_home(ctx, home)
    with open_workspace(where) as ws:
        if follow_stdin:
            _follow_stdin(ws, where, batch_rows=batch_rows)
            return
        if watch is None:
            _print_sync(ws.sync(batch_rows=batch_rows, pull=not no_pull), as_json)
            return
        _watch(ws, watch, batch_rows=batch_rows, pull=not no_pull, as_json=as_json)


def _print_sync(report: Any, as_json: bool) -> None:
    if as_json:
        emit_json(report.to_dict())
        return
    pulled = "" if report.index is None else f"; {report.index} team sessions in the index"
    err.print(
        f"pushed {report.rows} rows and {report.checkpoints} checkpoints of "
        f"{report.sessions} shared sessions to {report.store} ({report.private} private "
        f"sessions left here){pulled}",
        markup=False,
    )


def _say(line: str) -> None:
    err.print(line, markup=False)


def _watch(ws: Any, seconds: float, *, batch_rows: int, pull: bool, as_json: bool) -> None:
    """``sync --watch``: a sync every ``seconds`` until interrupted (Ctrl-C: exit 0;
    ``team.follow``). A round that pushed something is reported (JSON: one line per round);
    a ``StoreError`` is one line on stderr per outage, and the rounds back off until the
    store answers."""
    import sys
    import time

    import orjson

    from continuity.core.text import json_terminal_safe_bytes
    from continuity.team.follow import follow

    def reported(report: Any) -> None:
        if report.rows or report.checkpoints or report.sessions:
            if as_json:
                line = json_terminal_safe_bytes(orjson.dumps(report.to_dict()))
                sys.stdout.buffer.write(line + b"\n")
                sys.stdout.buffer.flush()
            elif report.rows or report.checkpoints:
                _print_sync(report, False)

    def sleep(left: float) -> Any:
        time.sleep(left)
        return "timeout"

    try:
        follow(
            lambda _full: ws.sync(batch_rows=batch_rows, pull=pull),
            timing=lambda: (seconds, seconds),
            wait=sleep,
            say=_say,
            reported=reported,
        )
    except KeyboardInterrupt:
        return


def _follow_stdin(ws: Any, home: Path | None, *, batch_rows: int) -> None:
    """``sync --follow-stdin``: the daemon's background sync (``daemon.teamsync``), its
    timing from ``[team]`` read before each wait; a byte on stdin is a poke (new rows were
    captured), end of input (the daemon closed the pipe or died) ends it. Ends at once (exit
    0) when no team store is joined or ``[team] auto_sync`` is off."""
    import contextlib
    import os
    import select
    import sys

    from continuity.core.errors import ConfigError
    from continuity.team.follow import follow
    from continuity.team.settings import team_settings

    fd = sys.stdin.fileno()
    current = team_settings(home)
    if not current.url or not current.auto_sync:
        return

    def timing() -> tuple[float, float]:
        nonlocal current
        with contextlib.suppress(ConfigError):  # a bad edit: the sync itself says why
            current = team_settings(home)
        return current.sync_interval_seconds, current.sync_debounce_seconds

    def wait(left: float) -> Any:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return "timeout"
        if not os.read(fd, 4096):
            return "stop"
        return "poke"

    def reported(report: Any) -> None:
        if report.rows or report.checkpoints:
            _print_sync(report, False)

    def run(full: bool) -> Any:
        if not current.url or not current.auto_sync:
            raise _Unjoined
        # a poked sync pushes what was just captured; the floor's also pulls the team's index
        return ws.sync(batch_rows=batch_rows, pull=full)

    try:
        follow(run, timing=timing, wait=wait, say=_say, reported=reported)
    except _Unjoined:
        _say("sync: no team store joined any more ([team] url or auto_sync): stopped")


class _Unjoined(Exception):
    """The daemon's background sync found the workspace no longer joined."""


def forget_cmd(
    ctx: typer.Context,
    session: str | None = typer.Argument(
        None, show_default=False, help="Session key or a unique prefix of it."
    ),
    pattern: str | None = typer.Option(
        None,
        "--pattern",
        metavar="TEXT",
        show_default=False,
        help="Forget every session with a row whose text, as show prints it (redacted), "
        "holds TEXT (any case).",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Only list the sessions that would be forgotten."
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Forget a session (or every session whose text holds --pattern TEXT): its rows,
    checkpoints, transcript rows, memories and search entries are deleted from this workspace,
    and a tombstone keeps it from ever being imported again; the next `continuity sync`
    deletes your copy of it in the team store. The harness's own session file is not touched."""
    from continuity.cli.commands.common import open_workspace

    if session is None and pattern is None:
        raise bad_option("SESSION", "give a session key or --pattern TEXT")
    if session is not None and pattern is not None:
        raise bad_option("--pattern", "give a session key or --pattern TEXT, not both")
    with open_workspace(global_home(ctx, home)) as ws:
        done = ws.forget(session, pattern=pattern, dry_run=dry_run)
    if as_json:
        emit_json(done.to_dict())
        return
    for key in done.sessions:
        out.print(key, markup=False, highlight=False)
    if not done.sessions:
        err.print(
            f"{session} was forgotten before" if session else f"no session holds {pattern!r}",
            markup=False,
        )
        return
    verb = "would forget" if dry_run else "forgot"
    rows = done.deleted.get("entries", 0)
    tail = "" if dry_run else f" ({rows} rows); `continuity sync` deletes them from the team store"
    err.print(f"{verb} {len(done.sessions)} session(s){tail}", markup=False)


@team_app.command("join")
def team_join(
    ctx: typer.Context,
    url: str = typer.Argument(
        ...,
        help="The team store: postgresql+psycopg://USER@HOST/DB (no password: $PGPASSWORD or "
        "~/.pgpass; off this machine with ?sslmode=require or verify-full).",
    ),
    name: str | None = typer.Option(
        None,
        "--team",
        metavar="NAME",
        show_default=False,
        help="The team's name in the store (default: default).",
    ),
    offline: bool = typer.Option(
        False,
        "--offline",
        help="Do not ask the team store now (a laptop without the network): the first sync does.",
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Record the team store in the workspace's config.toml [team], after checking that it
    answers and that your role is a member of the team (exit 4: unreachable; exit 2: not a
    member). Shares nothing: every project stays private until `continuity team share`."""
    from continuity.team.local import join
    from continuity.team.settings import safe_url

    settings, dropped = join(global_home(ctx, home), url, name=name, offline=offline)
    if as_json:
        emit_json({"url": safe_url(url), "team": settings.name, "unshared": dropped})
        return
    if dropped:
        err.print(
            f"{len(dropped)} project(s) were shared with the previous store; share them again "
            "here with `continuity team share`: " + ", ".join(dropped),
            markup=False,
        )
    shared = (
        f"{len(settings.shared)} project(s) shared (continuity team status)"
        if settings.shared
        else "nothing is shared until `continuity team share` in a project's folder"
    )
    err.print(f"joined team {settings.name} at {safe_url(url)}; {shared}", markup=False)


def _share(ctx: typer.Context, folder: Path | None, home: Path | None, shared: bool, as_json: bool):
    from continuity.team.local import set_shared

    ident, changed = set_shared(global_home(ctx, home), folder or Path.cwd(), shared=shared)
    if as_json:
        emit_json(
            {
                "project": ident.project,
                "folder": ident.folder,
                "shared": shared,
                "changed": changed,
            }
        )
        return
    verb = "shared with the team" if shared else "private"
    note = "" if changed else " (already)"
    err.print(f"{ident.project} ({ident.folder}): {verb}{note}", markup=False)
    if shared and not ident.shareable:
        err.print(
            "note: this folder has no git remote origin: the team sees it as a folder of this "
            "machine only, never one project with a clone elsewhere",
            markup=False,
        )


@team_app.command("share")
def team_share(
    ctx: typer.Context,
    folder: Path | None = FolderArgument,
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Share the project at FOLDER (its repository, or the folder inside it) with the team: its
    sessions, redacted, go to the team store at the next `continuity sync`."""
    _share(ctx, folder, home, True, as_json)


@team_app.command("unshare")
def team_unshare(
    ctx: typer.Context,
    folder: Path | None = FolderArgument,
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Stop sharing the project at FOLDER: nothing more of it is pushed, and at the next
    `continuity sync` the team no longer reads what was."""
    _share(ctx, folder, home, False, as_json)


@team_app.command("status")
def team_status(
    ctx: typer.Context,
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """The team store, the team, this machine's author and machine names, the shared
    projects, whether the current folder's project is one of them, and who shares it in the
    team store (any machine of any member)."""
    from continuity.team.local import status

    found = status(global_home(ctx, home), Path.cwd(), ask_store=True)
    if as_json:
        emit_json(found.to_dict())
        return
    lines = [
        f"team store: {found.url or 'none (continuity team join URL)'}",
        f"team: {found.name}",
        f"author: {found.author}   machine: {found.machine}",
        f"here: {found.here.project} ({'shared' if found.here_shared else 'private'} "
        "on this machine)",
        "shared projects:" + ("" if found.shared else " none"),
        *(f"  {p}" for p in found.shared),
    ]
    if found.store_shares is not None:
        by = ", ".join(f"{o} (team {t})" for o, t in found.store_shares)
        lines.insert(4, f"in the team store: {'shared by ' + by if by else 'not shared'}")
    elif found.store_error:
        lines.insert(4, f"in the team store: unknown ({found.store_error})")
    if found.url:
        state = found.sync or {}
        lines.append(
            "daemon sync: "
            + ("on (continuity serve syncs on its own)" if found.auto_sync else "off")
        )
        lines.append(f"last sync: {state.get('last_sync_at') or 'never'}")
        if state.get("failing_since"):
            lines.append(
                f"failing since {state['failing_since']}: {state.get('last_error')} "
                f"(last tried {state.get('last_error_at')})"
            )
        elif state.get("last_error"):
            lines.append(f"last error: {state['last_error']} ({state.get('last_error_at')})")
    for line in lines:
        out.print(line, markup=False, highlight=False)


@contextmanager
def _owner_errors(url: str) -> Iterator[None]:
    """A database error of ``team init``/``add-member`` as one line (``StoreError``, exit 4:
    the store cannot be reached or refused a statement), never a driver's traceback."""
    from sqlalchemy.exc import SQLAlchemyError

    from continuity.core.errors import StoreError
    from continuity.team.settings import safe_url

    try:
        yield
    except SQLAlchemyError as exc:
        detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise StoreError(f"team store {safe_url(url)}: {detail}") from None


@team_app.command("init")
def team_init(
    url: str = typer.Argument(
        ..., help="The team store, as its owner (a role that may create roles)."
    ),
    member_role: str = typer.Option(
        "continuity_member", "--member-role", help="The role every member is granted."
    ),
    as_json: bool = JsonOption,
) -> None:
    """As the team store's owner: create (or upgrade) the team store's tables, its member
    role and the row-level security that lets a member read the team's shared projects and
    their own sessions, nothing else."""
    from sqlalchemy import create_engine

    from continuity.team.schema import init_team_store
    from continuity.team.settings import check_team_url, safe_url

    check_team_url(url, where="team init URL")
    engine = create_engine(url)
    try:
        with _owner_errors(url):
            meta = init_team_store(engine, member_role=member_role)
    finally:
        engine.dispose()
    if as_json:
        emit_json({"store_id": meta.store_id, "version": meta.version, "role": meta.member_role})
        return
    err.print(
        f"team store ready at {safe_url(url)} (schema {meta.version}, member role "
        f"{meta.member_role}); add members with `continuity team add-member URL ROLE`",
        markup=False,
    )


@team_app.command("add-member")
def team_add_member(
    url: str = typer.Argument(..., help="The team store, as its owner."),
    role: str = typer.Argument(..., help="The member's PostgreSQL role (LOGIN)."),
    name: str = typer.Option("default", "--team", metavar="NAME", help="The team."),
) -> None:
    """As the team store's owner: make an existing PostgreSQL login role a member of a team
    (it reads the projects the team's members share, and pushes its own)."""
    from sqlalchemy import create_engine

    from continuity.team.schema import add_member
    from continuity.team.settings import check_team_url

    check_team_url(url, where="team add-member URL")
    engine = create_engine(url)
    try:
        with _owner_errors(url):
            add_member(engine, role, name)
    finally:
        engine.dispose()
    err.print(f"{role} is a member of team {name}", markup=False)


def team_sessions_out(
    home: Path | None, limit: int, project: Path | None, since: Any, as_json: bool
) -> None:
    """``sessions --team``: the pulled index, as JSON or one line per session (key, author
    @ machine, project, time, title)."""
    from continuity.cli.commands.common import open_workspace
    from continuity.team.settings import team_settings

    settings = team_settings(home)
    with open_workspace(home, read_only=True) as ws:
        rows = ws.team_sessions(limit, project=project, since=since)
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        when = r["ended_at"] or r["started_at"] or r["pushed_at"]
        out.print(
            f"{r['session']}  {r['author']}@{r['machine']}  {r['project']}  {when}  "
            f"{r['title'] or ''}".rstrip(),
            markup=False,
            highlight=False,
        )
    if not rows:
        err.print(
            "no team sessions: `continuity sync` pulls the team's index"
            if settings.url
            else "no team store joined: `continuity team join URL`",
            markup=False,
        )


def team_search_out(home: Path | None, query: str, limit: int, as_json: bool) -> int:
    """``search --team``: hits as JSON lines or a head line (session #seq, role, author @
    machine, project, time) and the snippet; exit 1 when nothing matched. Returns how many
    hits it printed."""
    import sys

    import orjson

    from continuity.cli.commands.common import EXIT_NO_MATCH, open_workspace
    from continuity.core.text import json_terminal_safe_bytes

    with open_workspace(home, read_only=True) as ws:
        hits = ws.team_search(query, limit)
    if as_json:
        for h in hits:
            sys.stdout.buffer.write(json_terminal_safe_bytes(orjson.dumps(h.to_dict())) + b"\n")
        sys.stdout.buffer.flush()
    else:
        for h in hits:
            out.print(
                f"{h.session} #{h.seq} {h.role} · {h.author}@{h.machine} · {h.project} · "
                f"{h.ts or 'no time'}",
                markup=False,
                highlight=False,
            )
            out.print("  " + h.snippet, markup=False, highlight=False)
        if not hits:
            err.print(f"no team row matches {query!r}", markup=False)
    if not hits:
        raise typer.Exit(EXIT_NO_MATCH)
    return len(hits)
