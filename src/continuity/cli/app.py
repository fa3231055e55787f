"""The `continuity` command: a thin shell over the library (parse, resolve, one call, render).

JSON goes to stdout unformatted by Rich; progress and confirmations go to stderr, and progress is
off under ``--json`` or without a terminal. Every ``ContinuityError`` becomes one line on stderr
and its exit code (``CONTINUITY_RAISE_ERRORS=1`` shows the traceback instead).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, List, Optional

import typer
from continuity.core.config import database_url, resolve_home
from continuity.core.errors import ContinuityError, InputError

app = typer.Typer(
    name="continuity",
    help="Memory for coding agents that survives compaction, crashes and new sessions.\n\n"
         "Import the session files your agents wrote, then get the bounded continuation the "
         "next run should be handed.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
db_app = typer.Typer(help="Database schema commands.", no_args_is_help=True)
app.add_typer(db_app, name="db")

from continuity.cli.commands.common import (  # noqa: E402
    BudgetOption,
    HomeOption,
    JsonOption,
    emit_json as _emit_json,
    err,
    open_cli_store as _store,
    out,
    resolve_session,
)


# ---------------------------------------------------------------------------- commands


@app.command("import")
def import_cmd(
    paths: List[Path] = typer.Argument(..., help="Session files or folders (searched for "
                                       "*.jsonl): ~/.claude/projects, ~/.codex/sessions, "
                                       "~/.pi/agent/sessions.", show_default=False),
    home: Optional[Path] = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Import Claude Code, Codex and pi session files (detected from content).

    Re-importing adds nothing; a file that grew adds only its new lines. Bad lines are reported
    with file and line number, and the rest imports. Each imported session is replayed through
    the checkpoint rules, so its checkpoints exist as live capture would have written them.
    A file another import is writing at the same time is waited for (up to 120 s) and then
    imported from where that one got. When a file failed (e.g. that wait ran out)
    the others still import and the exit code is not 0: 4 a store problem, 2 a file that
    cannot be read.
    """
    from continuity.formats.importer import discover, import_file, ImportReport, total_bytes

    report = ImportReport()
    files = discover(paths, unreadable=report.files)  # unreadable folders: failed, exit 2
    if not files and not report.files:
        raise InputError("no *.jsonl session files under " + ", ".join(map(str, paths)))
    from continuity.checkpoints import load_config, replay_import
    from continuity.transcripts.session_transcripts import sync_import_report

    config = load_config(home)
    with _store(home) as store, _progress(total_bytes(files), enabled=not as_json) as advance:
        for path in files:
            report.files.append(import_file(store, path, progress=advance))
        replayed = replay_import(store, report, config=config)
        sync = sync_import_report(store, report, home)
        transcripts = sync.captured
    if as_json:
        _emit_json({**report.to_dict(), "checkpoints_replayed": replayed,
                    "transcripts_written": transcripts,
                    "transcripts_failed": [{"session": k, "reason": r} for k, r in sync.failed]})
    else:
        from continuity.cli.render import import_summary

        import_summary(out, err, report)
        for key, reason in sync.failed:
            err.print(f"warning: transcript of session {key} not captured: {reason}",
                      markup=False)
        err.print(f"{replayed} checkpoints replayed, {transcripts} transcripts written")
    if report.exit_code:
        failed = sum(1 for f in report.files if f.status == "failed")
        err.print(f"error: {failed} file(s) failed to import; import them again", markup=False)
        raise typer.Exit(report.exit_code)


@app.command("sessions")
def sessions_cmd(
    limit: int = typer.Option(50, "-n", "--count", min=1, help="How many to list (at least "
                              "1; every -n has this rule)."),
    all_sessions: bool = typer.Option(False, "--all", help="List every session (ignores -n)."),
    home: Optional[Path] = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """List imported sessions, newest first."""
    with _store(home, read_only=True) as store:
        sessions = store.list_sessions(limit=0 if all_sessions else limit)
    from continuity.cli.render import session_dict, sessions_table

    if as_json:
        _emit_json([session_dict(s) for s in sessions])
    else:
        sessions_table(out, sessions)


@app.command("show")
def show_cmd(
    session: str = typer.Argument(..., help="Session key or a unique prefix of it."),
    all_rows: bool = typer.Option(False, "--all", help="Also show rows outside the "
                                  "conversation (events, context, sidechains, unknown lines)."),
    seq: Optional[int] = typer.Option(None, "--seq", min=0, help="Show the rows around row N "
                                      "(from N-5, 30 rows; every kind of row), e.g. a "
                                      "`continuity search` hit."),
    home: Optional[Path] = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Show a session's log, readable (one block per row, with its seq)."""
    from continuity.cli.render import entry_dict, show_entries
    from continuity.store import iter_entries

    with _store(home, read_only=True) as store:
        key = resolve_session(store, session)
        if seq is not None:  # issue 19: the reopen command of a search hit
            rows = store.entries(key, after_seq=max(-1, seq - 6), limit=30)
            if not rows or rows[0].seq > seq:
                raise InputError(f"--seq {seq}: session {key} has no row {seq}")
        else:
            rows = iter_entries(store, key, visible_only=not all_rows)
        if as_json:
            _emit_json({"session": key, "entries": [entry_dict(e) for e in rows]})
        else:
            show_entries(out, store.get_session(key), rows)


@app.command("continue")
def continue_cmd(
    session: str = typer.Argument(..., help="Session key or a unique prefix of it."),
    budget: int = BudgetOption,
    home: Optional[Path] = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Print the continuation the next run of SESSION should be handed: the newest checkpoint,
    the previous request verbatim, and a recent tail within the budget with every tool call
    paired."""
    from continuity.continuation.view import build_continuation

    with _store(home, read_only=True) as store:
        view = build_continuation(store, resolve_session(store, session), budget_bytes=budget)
    if as_json:
        _emit_json(view.to_dict())
    else:
        from continuity.cli.render import continuation_text

        continuation_text(out, view)
    if view.refusal:
        raise typer.Exit(5)


@db_app.command("upgrade")
def db_upgrade(home: Optional[Path] = HomeOption) -> None:
    """Bring the database schema to the newest revision."""
    from continuity.store import open_store_raw

    store = open_store_raw(database_url(home))
    store.close()
    err.print("schema is up to date")


@app.command("where")
def where_cmd(home: Optional[Path] = HomeOption) -> None:
    """Print the workspace folder and the database URL in use; warn on stderr about each
    folder or file in the workspace that other users can read (issue 16)."""
    out.print(f"home: {resolve_home(home)}")
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    url = database_url(home)
    try:
        shown = make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        raise InputError(f"not a database URL: {url!r}") from None
    out.print(f"database: {shown}")
    from continuity.core.private import exposed

    found = exposed(resolve_home(home))
    for item in found[:20]:  # issue 16: a workspace others can read
        err.print(f"warning: {item.describe()}", markup=False, highlight=False)
    if len(found) > 20:
        err.print(f"warning: and {len(found) - 20} more folders or files other users can read",
                  markup=False, highlight=False)


# ---------------------------------------------------------------------------- progress


class _progress:
    """A Rich progress bar over bytes on stderr, or a no-op when disabled or not a TTY."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled and err.is_terminal
        self._bar: Any = None

    def __enter__(self):  # type: ignore[no-untyped-def]
        if not self.enabled:
            return lambda n: None
        from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

        self._bar = Progress("importing", BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                             console=err, transient=True)
        self._bar.start()
        task = self._bar.add_task("import", total=self.total)
        return lambda n: self._bar.advance(task, n)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


from continuity.cli.commands import register_all  # noqa: E402

register_all(app)


def _tolerant_streams() -> None:
    """B45: a terminal whose encoding is not UTF-8 (cp1252, say) gets ``?`` for a character it
    cannot show, never a ``UnicodeEncodeError`` traceback; JSON goes out as UTF-8 bytes
    whatever the locale (``commands.common.emit_json``)."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if encoding != "utf8" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")


def main() -> None:
    """Console-script entry point: the one place errors become exit codes."""
    _tolerant_streams()
    try:
        app()
    except KeyboardInterrupt:
        err.print("continuity: interrupted; what was committed stays (an import resumes where "
                  "it stopped)")
        raise SystemExit(130) from None
    except ContinuityError as exc:
        if os.environ.get("CONTINUITY_RAISE_ERRORS"):
            raise
        err.print(f"continuity: {exc}", markup=False, highlight=False)
        raise SystemExit(exc.exit_code) from None


if __name__ == "__main__":  # pragma: no cover
    main()
