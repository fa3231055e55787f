"""`continuity resume SESSION --in HARNESS`: the continuation written as a new session of that
harness, opened with the harness's own resume (issue 13; ``continuity.resume``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import typer

from continuity.cli.commands.common import (
    BudgetOption,
    HomeOption,
    JsonOption,
    bad_option,
    complete_sessions,
    complete_targets,
    emit_json,
    err,
    open_workspace,
    out,
)
from continuity.core.errors import InputError


def register(app: typer.Typer) -> None:
    """Add ``resume`` to ``app``."""
    app.command("resume")(resume_cmd)


def resume_cmd(
    session: str = typer.Argument(
        ...,
        help="Session key or a unique prefix of it, of any harness.",
        autocompletion=complete_sessions,
    ),
    target: str = typer.Option(
        ...,
        "--in",
        metavar="claude-code|codex|pi|opencode|gemini-cli|qwen-code|copilot-cli",
        help="The harness to continue the session in.",
        autocompletion=complete_targets,
        show_default=False,
    ),
    budget: int = BudgetOption,
    execute: bool = typer.Option(
        False,
        "--exec",
        help="Open the new session in the harness right away (in the session's project folder).",
    ),
    target_home: str | None = typer.Option(
        None,
        "--target-home",
        metavar="DIR",
        show_default=False,
        help="The harness's home folder (default: $CLAUDE_CONFIG_DIR or ~/.claude, $CODEX_HOME "
        "or ~/.codex, $PI_CODING_AGENT_DIR or ~/.pi/agent, $GEMINI_CLI_HOME or ~, "
        "$QWEN_RUNTIME_DIR or $QWEN_HOME or ~/.qwen, $COPILOT_HOME or ~/.copilot).",
    ),
    project: str | None = typer.Option(
        None,
        "--project",
        metavar="DIR",
        show_default=False,
        help="The folder to continue the session in: where its repository is on this machine "
        "(default: the recorded folder; for a session only the team store holds, the current "
        "folder when it is a clone of the same repository).",
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Continue SESSION in another (or the same) harness: write its continuation (the one
    `continue` prints: the newest checkpoint, the previous request verbatim, the recent work
    with every tool call answered) as a new session of that harness, in the place the harness
    looks for sessions of the project folder, and print the commands that open it: the
    interactive one, then the headless one (add the prompt as its last argument).

    A teammate's session (one only the team store holds) is copied into this workspace first,
    under --project DIR (the folder where the repository is here).

    The same session at the same point resumed into the same harness again reuses the copy
    written before while it is unchanged. The original session is never changed, and an
    existing session file is never replaced. A refused continuation writes nothing (exit 5)."""
    from continuity.resume import TARGETS, not_a_target

    if target not in TARGETS:  # before the store is opened: a usage error (issue 45)
        raise bad_option("--in", not_a_target(target))
    if target_home is not None and not target_home.strip():
        raise bad_option("--target-home", "is empty: give the harness's home folder")

    if project is not None and not project.strip():
        raise bad_option("--project", "is empty: give the folder to continue the session in")
    # not read-only: a teammate's session is copied into the workspace first (issue 41)
    with open_workspace(home) as ws:
        written = ws.resume(
            session,
            into=target,
            budget_bytes=budget,
            target_home=target_home or None,
            project=project,
        )
    if as_json and not execute:
        emit_json(written.to_dict())
        return
    done = "reused the identical copy" if written.reused else "wrote"
    if not execute:
        shown = written.to_dict()
        out.print(shown["command"], markup=False, highlight=False, soft_wrap=True)
        out.print(shown["headless"], markup=False, highlight=False, soft_wrap=True)
        err.print(
            f"{done} {written.path}; line 1 opens it, line 2 runs one turn headless "
            "(add the prompt as its last argument)",
            markup=False,
            highlight=False,
        )
        return
    binary = shutil.which(written.command[0])
    if binary is None:
        raise InputError(
            f"{written.command[0]} is not on PATH; the session is written: "
            f"{written.to_dict()['command']}"
        )
    err.print(f"{done} {written.path}; opening it", markup=False, highlight=False)
    os.chdir(written.cwd)
    os.environ.update(written.env)  # --target-home: the harness looks where the file is
    os.execv(binary, [binary, *written.command[1:]])
