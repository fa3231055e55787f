"""CLI commands of live capture (issue 7): ``continuity serve``, ``continuity hook EVENT
--harness H``, ``continuity hooks install|uninstall HARNESS`` and ``continuity mcp``.

``continuity hook`` is the hook command; harnesses run it on every hook, so
``continuity.cli.app.main`` dispatches ``hook`` to ``continuity.cli.hookcmd`` before Typer is imported,
and the installers write the ``continuity-hook`` script (the same code). The Typer command here
only serves ``--help`` and the rare call that did come through Typer.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import typer

from continuity.cli.commands.common import (
    HarnessName,
    HomeOption,
    JsonOption,
    check_workspace,
    emit_json,
    out,
    parse_home,
)

hooks_app = typer.Typer(
    help="Install or remove continuity's hooks in a harness.", no_args_is_help=True
)

SettingsOption = typer.Option(
    None,
    "--settings",
    help="The settings file (claude-code: ~/.claude/settings.json; codex: "
    "~/.codex/hooks.json) or, for pi, the extensions folder (~/.pi/agent/extensions).",
    show_default=False,
)


def serve_cmd(
    host: str | None = typer.Option(
        None,
        "--host",
        help="Address to listen on (default: "
        "[daemon] host, 127.0.0.1; others need [daemon] token).",
    ),
    port: int | None = typer.Option(
        None, "--port", help="Port (default: [daemon] port, 7438; 0 picks a free one)."
    ),
    home: Path | None = HomeOption,
) -> None:
    """Run the local daemon the hooks talk to, until SIGTERM or Ctrl-C (queues are flushed
    on the way out)."""
    from continuity.daemon.server import configure_logging, serve

    configure_logging()
    serve(home, host=host, port=port)


def hook_cmd(
    event: str = typer.Argument(
        ...,
        help="session-start, user-prompt-submit, pre-compaction, "
        "post-compaction, stop or session-end.",
    ),
    harness: str | None = typer.Option(
        None,
        "--harness",
        show_default=False,
        help="Whose hook JSON is on stdin: claude-code, codex, pi, gemini-cli, qwen-code or "
        "copilot-cli.",
    ),
    timeout: str | None = typer.Option(
        None,
        "--timeout",
        show_default=False,
        help="Seconds for the whole exchange with the daemon.",
    ),
) -> None:
    """Forward a hook's JSON (stdin) to the daemon and print what the harness expects; when
    the daemon is down, record it for replay. Always exits 0: a bad value is reported on
    stderr by the hook itself (``cli.hookcmd``), never as a usage error a harness would act
    on (fresh-user review: ``--home DIR hook stop --harness nope`` exited 2)."""
    from continuity.cli.hookcmd import run

    argv = [event]
    if harness is not None:
        argv += ["--harness", harness]
    if timeout is not None:
        argv += ["--timeout", timeout]
    raise typer.Exit(run(argv))


@hooks_app.command("install")
def hooks_install(
    harness: HarnessName = typer.Argument(
        ..., help="claude-code, codex, pi, opencode, gemini-cli, qwen-code or copilot-cli."
    ),
    settings: Path | None = SettingsOption,
    home: Path | None = typer.Option(
        None,
        "--home",
        help="Workspace the hooks send events to, baked into the installed "
        "command (default: $CONTINUITY_HOME or the user data folder, resolved now); use the "
        "daemon's --home.",
        show_default=False,
        parser=parse_home,
        callback=check_workspace,
    ),
    no_trust: bool = typer.Option(
        False,
        "--no-trust",
        help="codex: do not write the trust "
        "state Codex needs to run the hooks (you trust them in "
        "Codex's /hooks yourself).",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Add continuity's hooks to HARNESS (a backup of the file is made first; running it
    again changes nothing), and continuity's tools (search, show, recall, continuation,
    remember, checkpoint): claude-code its MCP server in ~/.claude.json with the allow rule
    mcp__continuity in settings.json, codex [mcp_servers.continuity] in config.toml, pi the
    extension's own tools (gemini-cli, qwen-code: hooks and mcpServers.continuity in
    ~/.gemini/settings.json, ~/.qwen/settings.json; copilot-cli: ~/.copilot/hooks/continuity.json
    and mcpServers.continuity in ~/.copilot/mcp-config.json).
    Prints the workspace the hooks point at and, for codex, whether Codex trusts them now
    (Codex skips an untrusted hook silently in `codex exec`). All or nothing: when a file of
    yours stops a part (not valid JSON or TOML, a server named continuity that is not
    continuity's, a config.toml that cannot take Codex's trust), no file is written and the
    exit status is 1, the message naming the file and what to fix."""
    from continuity.daemon.hooks.install import install, record_install

    result = install(harness.value, settings, home, trust=not no_trust)
    if result.home is not None:  # so `continuity doctor` checks this file (a --settings one)
        # and the texts we inject name only the tools registered (issue 39); on OSError the
        # hooks are installed all the same, and doctor then checks the default place only
        with contextlib.suppress(OSError):
            record_install(
                result.home,
                harness.value,
                result.path if harness.value not in ("pi", "opencode") else result.path.parent,
                mcp=result.mcp.tools if result.mcp is not None else {},
            )
    _report(result, as_json)


@hooks_app.command("uninstall")
def hooks_uninstall(
    harness: HarnessName = typer.Argument(
        ..., help="claude-code, codex, pi, opencode, gemini-cli, qwen-code or copilot-cli."
    ),
    settings: Path | None = SettingsOption,
    as_json: bool = JsonOption,
) -> None:
    """Remove continuity's hooks and tools from HARNESS (restoring the backup when nothing
    else changed)."""
    from continuity.core.config import resolve_home
    from continuity.daemon.hooks.install import forget_mcp_tools, uninstall

    result = uninstall(harness.value, settings)
    with contextlib.suppress(OSError):  # the texts we inject stop naming the tools (issue 39)
        forget_mcp_tools(resolve_home(None), harness.value)
    _report(result, as_json)


def _report(result, as_json: bool) -> None:
    if as_json:
        emit_json(result.to_dict())
        return
    backup = f" (backup: {result.backup})" if result.backup else ""
    if result.action == "removed" and result.file_kept:
        out.print(
            f"{result.harness}: removed continuity's hooks from {result.path} (the file "
            "and its other settings are kept)",
            markup=False,
        )
        if result.backup_left:
            out.print(
                f"{result.harness}: the backup made at install is left at "
                f"{result.backup_left} ({result.path} changed since); delete it when "
                "you no longer need it",
                markup=False,
            )
    else:
        out.print(f"{result.harness}: {result.action} {result.path}{backup}", markup=False)
    if result.home is not None:
        out.print(f"hooks point at workspace {result.home}", markup=False)
    if result.mcp is not None:
        if result.mcp.tools:
            out.print(
                f"{result.harness}: continuity's tools registered in {result.mcp.where} "
                f"({', '.join(result.mcp.tools.values())}"
                + (f"; {result.mcp.note}" if result.mcp.note else "")
                + ")",
                markup=False,
            )
        else:
            from continuity.cli.commands.common import err as _err

            _err.print(f"{result.harness}: continuity's tools {result.mcp.note}", markup=False)
    trust = result.trust
    if trust is None:
        return
    if trust.status == "trusted":
        out.print(
            f"codex: trusts all {trust.hooks} continuity hooks ({trust.config})", markup=False
        )
        return
    from continuity.cli.commands.common import err

    if trust.note:
        err.print(f"codex: {trust.note}", markup=False)
    err.print(
        f"codex: NOT TRUSTED: Codex skips {trust.hooks - trust.trusted} of the "
        f"{trust.hooks} continuity hooks until you trust them. One step left: "
        f"{trust.next_step}",
        markup=False,
    )


def mcp_cmd(home: Path | None = HomeOption) -> None:
    """Run the MCP server on stdio: tools search, show, recall, remember, checkpoint and
    continuation."""
    from continuity.daemon.mcp_server import run

    run(home)


def register(app: typer.Typer) -> None:
    """Add ``serve``, ``hook``, ``hooks install|uninstall`` and ``mcp`` to ``app``."""
    app.command("serve")(serve_cmd)
    app.command("hook")(hook_cmd)
    app.add_typer(hooks_app, name="hooks")
    app.command("mcp")(mcp_cmd)
