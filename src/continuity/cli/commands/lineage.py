"""CLI commands of the lineage (issue 6): ``continuity consolidate [SESSION|--all]``,
``continuity lineage SESSION`` and ``continuity memory render [--project P] [--output PATH]``.
Each is parse, one library call (``continuity.lineage.consolidation`` / ``continuity.lineage.memory_md``), render;
JSON goes to plain stdout, confirmations and warnings to stderr. ``lineage`` and ``consolidate``
exit 7 (``lineage.LineageDamaged``) after their output when an artifact is missing or fails its
check, the error line naming the file and the repair."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from continuity.cli.commands.common import (
    HomeOption,
    JsonOption,
    SessionArgument,
    bad_option,
    complete_sessions,
    emit_json,
    err,
    homed_commands,
    open_cli_store,
    resolve_session,
)
from continuity.core.errors import InputError
from continuity.core.text import counted

memory_app = typer.Typer(
    help="The MEMORY.md file your agents load: durable memories, "
    "decisions and threads, within a size budget.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _as_of(value: str | None):
    from continuity.lineage.artifacts import parse_iso

    if value is None:
        return None
    try:
        return parse_iso(value)
    except ValueError:
        raise InputError(
            f"--as-of: not an ISO 8601 time (got {value!r}; e.g. 2026-06-06T00:00:00Z)"
        ) from None


def _warn_skipped(skipped: list[tuple[str, str]]) -> None:
    for path, reason in skipped:
        err.print(f"warning: left out of the ledger: {path}: {reason}", markup=False)


@memory_app.command("render")
def memory_render(
    project: str | None = typer.Option(
        None,
        "--project",
        help="Only this project (its full path, as `continuity sessions` shows it).",
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        help="Where to write it ('-': "
        "stdout). Default: <home>/MEMORY.md, or "
        "<home>/projects/<project>/MEMORY.md with --project.",
    ),
    as_of: str | None = typer.Option(
        None,
        "--as-of",
        help="Render as of this UTC time "
        "(ISO 8601) instead of now: it sets the 30-day ledger "
        "window.",
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Rebuild MEMORY.md from the lineage: six sections, within the [memory_md] budget.

    --project takes a folder as the shell gives it (`.` or a relative path is made absolute);
    a folder no session was captured in is an error naming it, and nothing is written.
    Projects under a temp folder are scratch work: an all-projects render leaves them out
    and says so in the file's header; --project renders one of them."""
    from continuity.lineage.memory_md import default_path, render_memory_md, write

    when = _as_of(as_of)
    if project is not None and not project.strip():  # before the store (issue 45)
        raise bad_option("--project", "is empty: give a project folder")
    with open_cli_store(home) as store:
        if project is not None:
            project = _known_project(store, project)
        result = render_memory_md(store, home=home, project=project, now=when)
    _warn_skipped(result.skipped)
    if result.left_out and not as_json:
        err.print(
            f"note: {len(result.left_out)} project(s) under a temp folder left out as "
            "scratch work (named in the file's header); --project DIR renders one",
            markup=False,
        )
    if output is not None and str(output) == "-":
        sys.stdout.write(result.text)
        return
    path = output or default_path(home, project)
    changed = write(result.text, path, create_folders=output is None)
    if as_json:
        emit_json({"path": str(path), "changed": changed, **result.to_dict()})
        return
    err.print(
        f"{'wrote' if changed else 'unchanged'} {path} ({result.bytes:,} bytes, "
        f"{result.lines} lines)",
        markup=False,
    )


def _known_project(store: Any, given: str) -> str:
    """The project ``--project`` names, as stored (issue 45 item 8: ``--project .`` rendered
    "Scope: project ." with nothing in it): ``given`` made absolute (``~`` expanded), else
    with its symlinks resolved, whichever is exactly the project of some captured session
    (issue 45 item 4: a parent folder of a session's folder, or ``/``, is not a project: it
    wrote ``projects/unknown/MEMORY.md`` or ``projects/tmp-x/MEMORY.md``). Raises
    ``InputError`` naming the project when none is: an unknown project writes nothing."""
    import os

    if not given.strip():
        raise bad_option("--project", "is empty: give a project folder")
    absolute = os.path.abspath(os.path.expanduser(given))
    for candidate in dict.fromkeys([absolute, os.path.realpath(absolute)]):
        # the store's filter also matches folders under it: keep only an exact project
        if any(s.project == candidate for s in store.list_sessions(project=candidate)):
            return candidate
    raise InputError(
        f"--project {absolute}: no session of this workspace was captured in "
        "that folder (`continuity sessions` shows each session's project); "
        "nothing written"
    )


def lineage_cmd(
    session: str = SessionArgument,
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Show the lineage of SESSION: manifest, artifacts (hash-checked), thread and DAG edges.

    Exits 7 when an artifact is missing or fails its check (after showing the lineage)."""
    from continuity.lineage.report import session_lineage

    with open_cli_store(home, read_only=True) as store:  # only reads: creates no workspace
        found = store.get_transcripts([session], "default")
        key = session if session in found else resolve_session(store, session)
        view = session_lineage(store, key, home=home)
    if as_json:
        emit_json(view)
    else:  # its repair commands keep the --home in use (issue 45 item 2), controls escaped (item 6)
        from continuity.cli.render import shown

        sys.stdout.write(shown(homed_commands(_lineage_text(view), home)))
    if view["problems"]:
        raise _damaged(key, view["problems"])


def _damaged(key: str, problems: list[dict[str, Any]]) -> Exception:
    """The exit-7 error naming each missing or failing artifact and the repair."""
    from continuity.lineage.artifacts import LineageDamaged
    from continuity.lineage.report import repair_hint
    from continuity.lineage.sentence import one_line

    listed = ", ".join(
        f"{p['kind']}{' ' + p['path'] if p['path'] else ''} "
        f"{'missing' if p['check'] == 'missing' else 'failed its check'}"
        for p in problems
    )
    repair = (
        problems[0]["repair"]
        if len(problems) == 1
        else repair_hint(key, None).replace("the damaged file", "each damaged file listed above")
    )
    return LineageDamaged(f"the lineage of session {one_line(key)} is damaged: {listed}; {repair}")


def _lineage_text(view: dict[str, Any]) -> str:
    from continuity.lineage.sentence import one_line

    key = one_line(view["session"])
    lines = [f"session {key} (agent {one_line(view['agent_id'])}, token {view['token']})"]
    manifest = view["manifest"]
    if manifest is None:
        lines.append(f"  no manifest: run `continuity consolidate {key}`")
    else:
        lines.append(
            f"  manifest revision {manifest['revision']}, updated "
            f"{manifest['updated_at']}, summary {manifest['summary_status']}"
        )
    for a in view["artifacts"]:
        lines.append(f"  {a['kind']:<10} {a['path'] or '(no file)'}  [{one_line(a['check'])}]")
        if a.get("memory_sentence"):
            lines.append(f"             {a['memory_sentence']} ({a['quality']})")
    thread = view["thread"]
    if thread:
        lines.append(
            f"  thread {thread['label']} (head: session {thread['session']}, {thread['latest_at']})"
        )
        lines += [f"    open: {item}" for item in thread["open_items"]]
    for e in view["edges"]:
        lines.append(f"  {e['from']} --{e['kind']}--> {e['to']} ({e['at']})")
    return "\n".join(lines) + "\n"


def consolidate_cmd(
    session: str | None = typer.Argument(
        None, help="Session key or a unique prefix.", autocompletion=complete_sessions
    ),
    all_: bool = typer.Option(
        False, "--all", help="Every completed session whose lineage is not current."
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Run the consolidation pass over completed transcripts, then rebuild MEMORY.md.

    It writes each session's transcript, summary and compaction artifacts and manifest in
    <home>/memory/, stores the durable facts, decisions and constraints the user stated, and
    updates thread heads and the temporal DAG. Sessions still open are left alone.
    """
    from continuity.lineage.consolidation import run_pass

    if (session is None) == (not all_):
        raise InputError("give a SESSION or --all (not both)")
    with open_cli_store(home) as store:
        keys = None if all_ else [_completed_key(store, session or "")]
        report = run_pass(store, home=home, sessions=keys)
    _warn_skipped(report.skipped_artifacts)
    damaged = [r for r in report.results if r.status == "damaged"]
    if as_json:
        emit_json(report.to_dict())
    else:
        _consolidate_text(report, many=len(damaged) > 1)
    if damaged:
        from continuity.lineage.artifacts import LineageDamaged

        raise LineageDamaged(
            damaged[0].error
            if len(damaged) == 1
            else f"{len(damaged)} sessions have a damaged lineage (listed above); "
            "delete each damaged file named there and run `continuity "
            "consolidate` again"
        )


def _consolidate_text(report: Any, *, many: bool) -> None:
    for r in report.results:
        extra = (
            f", {counted(len(r.created), 'file')} written, "
            f"{counted(r.memories_added, 'memory', 'memories')}"
            if r.status in ("consolidated", "unchanged")
            else ""
        )
        sys.stdout.write(f"{r.session_key}: {r.status}{extra}\n")
        if r.status == "damaged" and many:
            err.print(f"{r.session_key}: {r.error}", markup=False)
        if r.status == "not_completed":
            err.print(
                f"{r.session_key}: its transcript is still open; the pass runs after "
                "session end or the idle limit ([transcripts] idle_limit_minutes)",
                markup=False,
            )
    if report.memory_md is not None:
        err.print(
            f"{'wrote' if report.memory_md_changed else 'unchanged'} {report.memory_md}",
            markup=False,
        )
    elif not report.results:
        err.print("nothing to consolidate", markup=False)


def _completed_key(store: Any, name: str) -> str:
    if store.get_transcripts([name], "default"):
        return name
    return resolve_session(store, name)


def register(app: typer.Typer) -> None:
    """Add ``consolidate``, ``lineage`` and the ``memory`` group (``render``) to the app."""
    app.command("consolidate")(consolidate_cmd)
    app.command("lineage")(lineage_cmd)
    app.add_typer(memory_app, name="memory")
