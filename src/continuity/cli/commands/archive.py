"""``continuity watch``: continuous archiving of the harnesses' session folders (issue 18)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from continuity.cli.commands.common import HomeOption, err, out

#: file-system events are gathered this long before a pass (milliseconds)
DEBOUNCE_MS = 1_000


def register(app: typer.Typer) -> None:
    """Add ``watch`` to ``app``."""

    @app.command("watch")
    def watch_cmd(
        once: bool = typer.Option(False, "--once", help="Do one pass and exit (cron, tests)."),
        max_files: int = typer.Option(200, "--max-files", min=1, help="At most this many "
                                      "files imported per pass; the rest wait for the next."),
        home: Optional[Path] = HomeOption,
    ) -> None:
        """Archive sessions as the harnesses write them: follow Claude Code's, Codex's, pi's
        and OpenCode's session folders (the [archive] section of config.toml overrides each;
        CLAUDE_CONFIG_DIR, CODEX_HOME, PI_CODING_AGENT_DIR and XDG_DATA_HOME are honoured) and
        import new lines as they are written, through file-system events plus a periodic
        rescan. A session whose file the harness deletes stays whole (source: gone). Prints
        one line per pass that imported something. Ctrl-C stops it (exit 0)."""
        from continuity.archive.archiver import Archiver, harness_folders, load_settings

        settings = load_settings(home)
        if not settings.enabled:
            err.print("archiving is off: [archive] enabled = false in config.toml; set it to "
                      "true to watch", markup=False)
            raise typer.Exit(2)
        folders = harness_folders(settings)
        if not folders:
            err.print("no harness session folder exists here; nothing to watch", markup=False)
            if once:
                return
        archiver = Archiver(folders, home=home, max_files=max_files)

        def one_pass() -> int:
            r = archiver.run_pass()
            if r.gone:
                out.print(f"{r.gone} source file(s) gone; their sessions are kept whole "
                          "(`continuity sessions` shows source: gone)", markup=False)
            if r.files or r.failed:
                out.print(f"archived {r.files} files, {r.rows} new rows"
                          + (f", {r.failed} failed" if r.failed else "")
                          + (f", {r.pending} pending" if r.pending else ""), markup=False)
            return r.pending

        pending = one_pass()
        if once:
            return
        import watchfiles

        for name, path in folders.items():
            err.print(f"watching {name}: {path}", markup=False)
        last = time.monotonic()
        try:
            while True:
                timeout = 0 if pending else settings.rescan_seconds
                # watchfiles (Rust notify): returns a batch of changes, debounced; rust_timeout
                # ends the wait so the periodic rescan runs even without events
                for _changes in watchfiles.watch(*folders.values(), debounce=DEBOUNCE_MS,
                                                 rust_timeout=int(max(timeout, 0.1) * 1000),
                                                 yield_on_timeout=True, raise_interrupt=True):
                    break
                pending = one_pass()
                last = time.monotonic()
        except KeyboardInterrupt:
            del last
            raise typer.Exit(0)
