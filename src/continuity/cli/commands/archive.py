"""``continuity watch``: continuous archiving of the harnesses' session folders (issue 18)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from continuity.cli.commands.common import HomeOption, err, out

if TYPE_CHECKING:
    from continuity.archive.archiver import PassResult
    from continuity.core.stopping import Stop

#: at most this many "not archived" lines per pass (the rest are counted)
SKIPPED_SHOWN = 5


def register(app: typer.Typer) -> None:
    """Add ``watch`` to ``app``."""

    @app.command("watch")
    def watch_cmd(
        once: bool = typer.Option(
            False,
            "--once",
            help="Archive what is there now and exit "
            "(cron, tests): passes of --max-files files each until "
            "none is left.",
        ),
        max_files: int = typer.Option(
            200,
            "--max-files",
            min=1,
            help="At most this many files imported per pass; the rest wait for the next.",
        ),
        home: Path | None = HomeOption,
    ) -> None:
        """Archive sessions as the harnesses write them: follow Claude Code's, Codex's, pi's
        and OpenCode's session folders and import new lines as they are written, through
        file-system events plus a periodic rescan (it also finds a harness installed later).
        A session whose file the harness deletes stays whole (source: gone). Prints one line
        per pass that imported something. Ctrl-C or SIGTERM stops it (exit 0).

        `continuity serve` runs this itself (a child process) unless [archive] enabled =
        false. config.toml [archive]: enabled (default true), rescan_seconds (default 60),
        claude_code, codex, pi, opencode, gemini_cli, qwen_code, copilot_cli, factory_droid
        (a folder to watch instead of the default; "" = not watched). Defaults: $CLAUDE_CONFIG_DIR/projects
        (~/.claude/projects), $CODEX_HOME/sessions (~/.codex/sessions),
        $PI_CODING_AGENT_DIR/sessions (~/.pi/agent/sessions), $XDG_DATA_HOME/opencode
        (~/.local/share/opencode), $GEMINI_CLI_HOME/.gemini/tmp (~/.gemini/tmp),
        $QWEN_RUNTIME_DIR/projects or $QWEN_HOME/projects (~/.qwen/projects),
        $COPILOT_HOME/session-state
        (~/.copilot/session-state), ~/.factory/sessions: `continuity harnesses` lists
        them."""
        from continuity.core.stopping import signal_stop

        # bound before the slow part of the start-up: a SIGTERM from now on is a stop
        with signal_stop() as stop:
            _watch(once, max_files, home, stop)
        raise typer.Exit(0)


def _watch(once: bool, max_files: int, home: Path | None, stop: Stop) -> None:
    """``watch``'s body (``register``): passes until nothing is pending with ``once``, else
    ``follow`` until ``stop`` is set (SIGTERM, Ctrl-C: the pass under way ends after the
    group of files being stored, and what it stored stays). Exits 2 (``typer.Exit``) when
    archiving is off."""
    from continuity.archive.archiver import (
        Archiver,
        folder_problems,
        follow,
        harness_folders,
        load_settings,
    )
    from continuity.cli.render import file_problems

    settings = load_settings(home)
    if not settings.enabled:
        import os

        where = (
            "$CONTINUITY_ARCHIVE__ENABLED"
            if os.environ.get("CONTINUITY_ARCHIVE__ENABLED")
            else "[archive] enabled = false in config.toml"
        )
        err.print(f"archiving is off: {where}; set it to true to watch", markup=False)
        raise typer.Exit(2)
    archiver = Archiver({}, home=home, max_files=max_files)

    def said(line: str) -> None:
        err.print(line, markup=False)

    def report(r: PassResult) -> None:
        if r.gone:
            out.print(
                f"{r.gone} source file(s) gone; their sessions are kept whole "
                "(`continuity sessions` shows source: gone)",
                markup=False,
            )
        for path, reason in r.skipped[:SKIPPED_SHOWN]:
            said(f"not archived: {path}: {reason}")
        if len(r.skipped) > SKIPPED_SHOWN:
            said(
                f"not archived: {len(r.skipped) - SKIPPED_SHOWN} more file(s) that are "
                "not session files"
            )
        if r.files or r.failed:
            out.print(
                f"archived {r.files} file{'' if r.files == 1 else 's'}, {r.rows} new "
                f"row{'' if r.rows == 1 else 's'}"
                + (f", {r.failed} failed" if r.failed else "")
                + (f", {r.pending} pending" if r.pending else ""),
                markup=False,
            )
        # issue 45 item 1: the reader's file:line warnings, as `import` prints them
        for f in r.problems:
            file_problems(err, f, more_hint="not shown")

    if once:
        for problem in folder_problems(settings):
            said(problem)
        archiver.folders = harness_folders(settings)
        if not archiver.folders:
            said("no harness session folder exists here; nothing to archive")
            return
        # every pass bounded, but --once goes on until nothing is pending: a process that
        # remembers nothing would otherwise redo the oldest files every run, never the rest
        result = archiver.run_pass(stop=stop)
        report(result)
        while result.pending and not stop.is_set():
            result = archiver.run_pass((), stop=stop)
            report(result)
        return
    with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C: at once
        follow(archiver, settings, stop, report, said)
