"""GitHub Copilot CLI's files beside our hooks (issue 42 item 3): the hooks file of ours and
continuity's MCP server in its user MCP configuration; for ``install.install``,
``install.uninstall`` and ``continuity doctor``.

Observed with copilot 1.0.102 run offline (``tests/e2e/test_copilot_live.py``; its changelog and
``copilot help config`` say the same): Copilot CLI loads every ``*.json`` of
``<copilot home>/hooks/`` (``$COPILOT_HOME`` or ``~/.copilot``) as user hooks, in ``-p`` runs too
and without a folder trust, each ``{"hooks": {"<event>": [...]}}`` with camelCase event names
(``sessionStart``, ``userPromptSubmitted``, ``preCompact``, ``agentStop``, ``sessionEnd``…) and
Claude Code's nested groups ``{"hooks": [{"type": "command", "command", "timeout"}]}``
(``timeout`` in seconds). So install writes **its own file** there, ``continuity.json``
(``COPILOT_HOOKS_FILE``, ``default_path``): the user's settings are never rewritten, and
uninstall deletes the file (and the ``hooks`` folder when install left it empty).

Its MCP servers are read from ``<copilot home>/mcp-config.json`` (``copilot mcp add`` writes
there): ``{"mcpServers": {"<name>": {"type": "local", "command", "args", "env", "tools"}}}``;
the model is offered a server's tools as ``<server>-<tool>`` (``continuity-search``…).
``register_copilot_mcp`` puts ``mcpServers.continuity`` there (``tools: ["*"]``), backing the
file up once (``<file>.continuity-backup``) like every settings file we change;
``unregister_copilot_mcp`` takes exactly that out and gives the backup's bytes back when nothing
else changed (the file is deleted when install created it and nothing else is left). A
``continuity`` server that is not ours, or a file that is not a JSON object, is left alone, and
install refuses (``InstallIncomplete``, nothing written: fresh-user review of issue 42). The
MCP file is the one beside the hooks folder (``copilot_mcp_config``): only when the hooks file
is in a folder named ``hooks`` (a ``--settings`` elsewhere registers no server).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from continuity.core.errors import InputError
from continuity.daemon.hooks._files import (
    PendingWrite,
    _put_back,
    _read,
    _render,
    _through_link,
)
from continuity.daemon.hooks.mcp_install import (
    MCP_SERVER_NAME,
    McpRegistration,
    _is_our_server,
    foreign_server,
    mcp_argv,
    mcp_tool_names,
    read_problem,
    refused,
    servers_not_an_object,
)

#: The file of ours in Copilot CLI's user hooks folder.
COPILOT_HOOKS_FILE = "continuity.json"
#: Copilot CLI's user MCP configuration, in its home folder (``copilot mcp --help``).
COPILOT_MCP_FILE = "mcp-config.json"


def copilot_mcp_config(hooks_file: Path) -> Path | None:
    """``<copilot home>/mcp-config.json`` for the hooks file ``hooks_file`` (in
    ``<copilot home>/hooks/``), else None (a ``--settings`` file outside a ``hooks`` folder)."""
    folder = Path(hooks_file).parent
    return folder.parent / COPILOT_MCP_FILE if folder.name == "hooks" else None


def copilot_server_entry(home: Path) -> dict[str, Any]:
    """Our ``mcpServers.continuity`` as ``copilot mcp add`` would write it: a ``local``
    (stdio) server running ``mcp_argv`` with ``CONTINUITY_HOME=<home>``, all its tools."""
    argv = mcp_argv()
    return {
        "type": "local",
        "command": argv[0],
        "args": argv[1:],
        "env": {"CONTINUITY_HOME": str(home)},
        "tools": ["*"],
    }


def register_copilot_mcp(
    hooks_file: Path, home: Path
) -> tuple[McpRegistration, PendingWrite | None]:
    """Our server in the MCP file beside ``hooks_file`` (module docstring): the registration
    (the tools as Copilot CLI's model sees them, or why none were registered: a hooks file
    outside Copilot CLI's hooks folder) and the write it needs (None when the file holds it
    already). Raises ``InstallIncomplete`` (nothing written) for an MCP file that is not a
    JSON object, an ``mcpServers`` that is not one, or a ``continuity`` server not ours."""
    config = copilot_mcp_config(hooks_file)
    if config is None:
        return McpRegistration(
            None,
            {},
            f"not registered: {hooks_file} is not in Copilot CLI's hooks folder; register "
            "it with `copilot mcp add continuity -- <command>` (see `continuity doctor`)",
        ), None
    target = _through_link(config)
    try:
        data, raw = _read(target)
    except InputError as exc:
        raise refused("copilot-cli", read_problem(exc), "fix that file") from None
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise servers_not_an_object("copilot-cli", config)
    old = servers.get(MCP_SERVER_NAME)
    if old is not None and not _is_our_server(old):
        raise foreign_server("copilot-cli", config, old)
    entry = copilot_server_entry(home)
    pending = None
    if old != entry or raw is None:
        data["mcpServers"] = {**servers, MCP_SERVER_NAME: entry}
        pending = PendingWrite(target, raw, _render(target, data))
    return McpRegistration(config, mcp_tool_names("copilot-cli"), "in mcpServers"), pending


def unregister_copilot_mcp(hooks_file: Path) -> None:
    """Remove our server from the MCP file beside ``hooks_file`` (module docstring): the
    backup's bytes back when the rest equals it, else the file without our entry (deleted
    when install created it and nothing is left). A file we cannot read is left alone."""
    config = copilot_mcp_config(hooks_file)
    if config is None:
        return
    target = _through_link(config)
    try:
        data, raw = _read(target)
    except InputError:
        return
    servers = data.get("mcpServers")
    if (
        raw is None
        or not isinstance(servers, dict)
        or not _is_our_server(servers.get(MCP_SERVER_NAME))
    ):
        return
    del servers[MCP_SERVER_NAME]
    if not servers:
        del data["mcpServers"]
    _put_back(target, data, raw)


def drop_empty_hooks_folder(hooks_file: Path) -> None:
    """Remove Copilot CLI's ``hooks`` folder holding ``hooks_file`` once uninstall left it
    empty (install made it; Copilot CLI itself never does). Nothing else is removed."""
    folder = Path(hooks_file).parent
    if folder.name != "hooks":
        return
    with contextlib.suppress(OSError):  # not empty (the user's own hooks), or gone
        folder.rmdir()
