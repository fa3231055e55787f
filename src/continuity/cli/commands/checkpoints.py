"""CLI commands of session checkpoints (issue 3): ``continuity checkpoint SESSION --reason``,
``continuity checkpoints SESSION``, ``continuity prune``, ``continuity recover`` and ``continuity
brief`` (issue 39: the project brief a new session starts with). Each is
parse, resolve, one library call (``continuity.checkpoints.capture``), render; JSON goes to plain stdout
and confirmations to stderr. Settings come from the workspace's ``[continuity]`` section."""

from __future__ import annotations

import enum
from pathlib import Path

import typer

from continuity.cli.commands.common import (
    HomeOption,
    JsonOption,
    SessionArgument,
    complete_sessions,
    count_option,
    emit_json,
    err,
    open_cli_store,
    open_workspace,
    out,
)
from continuity.cli.render import shown  # issue 45 item 6: one escaping for every output
from continuity.core.errors import InputError


class ManualTrigger(str, enum.Enum):
    """The triggers a caller may write by hand (seed 000: explicit, agent)."""

    explicit = "explicit"
    agent = "agent"


def checkpoint_cmd(
    session: str = SessionArgument,
    reason: str = typer.Option(
        ...,
        "--reason",
        help="Why this checkpoint is taken; it goes into the digest (secrets redacted).",
    ),
    trigger: ManualTrigger = typer.Option(
        ManualTrigger.explicit, "--trigger", help="explicit (a person) or agent (an agent tool)."
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Write a checkpoint of SESSION now, with its recent prompts and your reason."""
    with open_workspace(home) as ws:
        cp = ws.checkpoint(session, reason=reason, trigger=trigger.value)
    if as_json:
        emit_json(cp.to_dict())
        return
    out.print(shown(cp.digest), markup=False, highlight=False)
    err.print(f"checkpoint {cp.id} written for {cp.session} ({cp.trigger})", markup=False)


def checkpoints_cmd(
    session: str = SessionArgument,
    limit: int = count_option(None, "of the newest"),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """List the checkpoints of SESSION, oldest first, with their digests. A row that cannot
    be read (a corrupt column) is reported as damaged and skipped; the rest are listed."""
    with open_workspace(home, read_only=True) as ws:  # issue 45 item 8: only reads
        found = ws.checkpoints(session, limit=limit or 0)
    for bad in found.damaged:
        err.print(
            f"checkpoint #{bad.id} of {found.session} is damaged ({bad.column}: "
            f"{bad.detail}); skipped",
            markup=False,
        )
    if as_json:
        emit_json(found.to_dict())
        return
    if not found.checkpoints:
        err.print(f"no checkpoints for {found.session}", markup=False)
    for row in found.checkpoints:
        out.print(
            f"#{row.id} {row.created_at} {row.trigger} prompts={row.prompt_count}",
            markup=False,
            style="bold",
        )
        out.print(shown(row.digest) + "\n", markup=False, highlight=False)


def prune_cmd(
    retention_days: int | None = typer.Option(
        None,
        "--retention-days",
        help="Delete checkpoints older than this many days "
        "(1-90; default: [continuity] retentionDays, 7).",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Say how many checkpoints would be deleted, and delete nothing."
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Delete checkpoints older than the retention window (a live session keeps its newest).
    Imported sessions keep their historical times, so an old import loses its checkpoints:
    try --dry-run first."""
    from continuity.checkpoints import load_config, prune

    config = load_config(home)
    days = config.retention_days if retention_days is None else retention_days
    with open_cli_store(home, read_only=dry_run) as store:  # --dry-run only reads (issue 45)
        try:
            deleted = prune(store, config, retention_days=days, dry_run=dry_run)
        except ValueError as exc:
            raise InputError(f"--retention-days: {exc}") from None
    if as_json:
        emit_json(
            {
                "would_delete" if dry_run else "deleted": deleted,
                "retention_days": days,
                "dry_run": dry_run,
            }
        )
        return
    if dry_run:
        out.print(
            f"would prune {deleted} checkpoint(s) older than {days} day(s); nothing "
            "deleted (run without --dry-run to delete them)",
            markup=False,
        )
        return
    out.print(f"pruned {deleted} checkpoint(s) older than {days} day(s)", markup=False)


def recover_cmd(
    session: str | None = typer.Argument(
        None, help="Session key or a unique prefix of it.", autocompletion=complete_sessions
    ),
    project: str | None = typer.Option(
        None,
        "--project",
        help="Project folder: the newest "
        "checkpoint of any of its sessions within "
        "[continuity] recoveryWindowDays (or "
        "recoveryWindowHours when set).",
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Print the recovery digest a new session starts with: the newest checkpoint of SESSION,
    else of its project (or --project) within the recovery window, within
    recoveryBudgetChars."""
    from continuity.api.workspace import checkpoint_session_key
    from continuity.checkpoints import load_config
    from continuity.checkpoints.recovery import recover

    if not session and not project:
        raise InputError("give a SESSION or --project PATH")
    config = load_config(home)
    with open_cli_store(home, read_only=True) as store:  # issue 45 item 8: only reads
        key = checkpoint_session_key(store, session) if session else None
        record = store.get_session(key) if key else None
        where = project or (record.project if record else None)
        found = recover(store, session_key=key, project=where, config=config)
    if as_json:
        emit_json({"session": key, "project": where, **found.to_dict()})
        return
    if found.checkpoint is None:
        err.print(f"nothing to recover for {key or where}", markup=False)
        return
    out.print(shown(found.text), markup=False, highlight=False)


def brief_cmd(
    project: Path | None = typer.Option(
        None, "--project", help="Project folder (default: the current folder)."
    ),
    budget: int | None = typer.Option(
        None,
        "--budget",
        min=200,
        max=10_000,
        metavar="CHARS",
        help="Characters, 200–10000 (default: [continuity] recoveryBudgetChars, 2000).",
    ),
    window: str | None = typer.Option(
        None,
        "--window",
        metavar="DAYS|any",
        help="How far back to look, in days, or 'any' "
        "(default: [continuity] recoveryWindowDays, 14).",
    ),
    harness: str | None = typer.Option(
        None,
        "--harness",
        help="Name the continuity MCP "
        "tools installed for this harness (claude-code, "
        "codex or pi), as its session would see them.",
    ),
    team: bool = typer.Option(
        False,
        "--team",
        help="The team's sessions of this repository instead (wherever cloned; from the "
        "team store, with author@machine; this machine's own left out).",
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Print the project brief a new session of the project would start with (issue 39): the
    newest earlier sessions of the folder within [continuity] recoveryWindowDays, each with
    its key, harness, age, requests, outcome, files changed, unresolved errors, remembered
    decisions and open items, within --budget characters."""
    from continuity.core.config import resolve_home
    from continuity.daemon.hooks.live import harness_reach
    from continuity.daemon.hooks.spool import HARNESSES

    if harness is not None and harness not in HARNESSES:
        raise InputError(f"--harness: must be one of {', '.join(HARNESSES)} (got {harness!r})")
    reach = harness_reach(str(resolve_home(home)), harness)
    with open_workspace(home, read_only=not team) as ws:
        found = ws.brief(project, budget_chars=budget, window=window, reach=reach, team=team)
    if as_json:
        emit_json(found.to_dict())
        return
    out.print(shown(found.text), markup=False, highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``checkpoint``, ``checkpoints``, ``prune``, ``recover`` and ``brief`` to ``app``."""
    app.command("checkpoint")(checkpoint_cmd)
    app.command("checkpoints")(checkpoints_cmd)
    app.command("prune")(prune_cmd)
    app.command("recover")(recover_cmd)
    app.command("brief")(brief_cmd)
