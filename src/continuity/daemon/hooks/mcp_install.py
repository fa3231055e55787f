"""continuity's tools registered where each harness takes them (issue 39: the text we inject
names only tools the harness has), for ``install.install`` and ``install.uninstall``.

install also registers them, uninstall removes exactly that: Claude Code, for its user settings
only, our MCP server in ``~/.claude.json`` ``mcpServers.continuity`` (where ``claude mcp add
--scope user`` writes; Claude Code 2.1.332 reads no MCP server from ``settings.json``) and the
allow rule ``CLAUDE_ALLOW_RULE`` in the settings' ``permissions.allow`` (kept at uninstall when
the backup shows the user had it); Codex a ``MCP_BEGIN``…``MCP_END`` block with
``[mcp_servers.continuity]`` in ``config.toml`` (backed up and restored like the trust
block); Gemini CLI and Qwen Code ``mcpServers.continuity`` in the ``settings.json`` that holds
their hooks (``SETTINGS_MCP``); pi the extension's own tools (``pi.registerTool``), which run
``tool_argv``. The server runs ``mcp_argv`` with ``CONTINUITY_HOME`` in its environment.
``McpRegistration`` says what was registered and the names each harness's model sees
(``MCP_TOOL_NAMES``, read from the real harnesses' requests), which ``record_install`` keeps
under ``"mcp"`` for ``installed_mcp_tools``.

A registration a file of the user's stops (one that is not valid JSON, an ``mcpServers`` that is
not an object, a server named ``continuity`` that is not ours) raises ``InstallIncomplete``
(``refused``) before anything is written, so install writes nothing and exits 1 (fresh-user
review of issue 42: it installed the hooks, warned and exited 0). One that does not apply (hooks
installed with ``--settings`` elsewhere than Claude Code's user settings) is an
``McpRegistration`` without tools whose ``note`` says how to register them.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity.core.errors import InputError, InstallIncomplete
from continuity.daemon.hooks._files import (
    BACKUP_SUFFIX,
    PendingWrite,
    _put_back,
    _read,
    _render,
    _through_link,
    default_path,
)


@dataclass(frozen=True)
class McpRegistration:
    """Where ``hooks install`` registered continuity's MCP tools for a harness (issue 39):
    ``where`` (the file: Claude Code's ``~/.claude.json``, Codex's ``config.toml``, pi's
    extension), ``tools`` ``{logical tool: the name the harness's model sees}`` ({} when
    nothing was registered) and ``note`` (why not, or what else was done)."""

    where: Path | None
    tools: dict[str, str]
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "where": str(self.where) if self.where else None,
            "tools": dict(self.tools),
            "note": self.note,
        }


#: The name continuity's MCP server is registered under (Claude Code ``mcpServers``, Codex
#: ``[mcp_servers.NAME]``).
MCP_SERVER_NAME = "continuity"
#: Claude Code's permission rule allowing every tool of our MCP server (Claude Code denies an
#: MCP tool in ``-p`` runs until allowed; issue 39).
CLAUDE_ALLOW_RULE = "mcp__continuity"
#: Codex's config.toml block holding our MCP server (like the trust block).
MCP_BEGIN = (
    "# >>> continuity: continuity's MCP server (written by `continuity hooks install "
    "codex`; `continuity hooks uninstall codex` removes it)"
)
MCP_END = "# <<< continuity mcp"
#: How each harness's model sees the tools (read from the fake model's request log of the
#: real harnesses, tests/e2e/test_mcp_tools.py): Claude Code ``mcp__<server>__<tool>``, Codex
#: ``mcp__<server>__<tool>``, pi the extension's own tools ``continuity_<tool>``.
MCP_TOOL_NAMES = {
    "claude-code": "mcp__continuity__{tool}",
    "codex": "mcp__continuity__{tool}",
    "pi": "continuity_{tool}",
    # Gemini CLI 0.61.0 names a server's tools mcp_<server>_<tool> (its mcp-tool.ts)
    "gemini-cli": "mcp_continuity_{tool}",
    # Qwen Code 0.24.4 mcp__<server>__<tool>, deferred: listed, loaded with tool_search
    "qwen-code": "mcp__continuity__{tool}",
    # Copilot CLI 1.0.102 offers a server's tools as <server>-<tool> (its Chat Completions
    # requests, tests/e2e/test_copilot_live.py)
    "copilot-cli": "continuity-{tool}",
}
#: issue 39: continuity's MCP tools by their logical name (what the brief and the injected
#: texts may name), as ``hooks install`` registers them.
MCP_TOOLS = ("search", "show", "recall", "continuation", "remember", "checkpoint")
#: A command that is ours: it runs continuity's MCP server or its tool runner.
_MCP_OURS = ("continuity.daemon.mcp_server",)


def refused(harness: str, problem: str, fix: str) -> InstallIncomplete:
    """The ``InstallIncomplete`` raised when ``problem`` (naming the file) stops a part of
    ``hooks install harness``; ``fix`` says what to do about it."""
    return InstallIncomplete(
        f"{harness}: nothing was installed: {problem}; {fix}, then run the install again"
    )


def read_problem(exc: InputError) -> str:
    """``_read``'s message for a file it refused, without its closing advice."""
    text = str(exc)
    for tail in ("; fix it first, nothing was changed", "; nothing was changed"):
        text = text.removesuffix(tail)
    return text


def foreign_server(harness: str, config: Path, entry: Any) -> InstallIncomplete:
    """The refusal for a server named ``continuity`` in ``config`` that is not ours."""
    command = entry.get("command") if isinstance(entry, dict) else None
    shown = f" (command {command!r})" if isinstance(command, str) else ""
    return refused(
        harness,
        f"{config} already has an MCP server named {MCP_SERVER_NAME!r} that is not "
        f"continuity's{shown}",
        "rename or remove that server there",
    )


def servers_not_an_object(harness: str, config: Path) -> InstallIncomplete:
    """The refusal for an ``mcpServers`` in ``config`` that is not a JSON object."""
    return refused(harness, f"{config}: mcpServers is not an object", "make it one ({} when empty)")


def mcp_argv() -> list[str]:
    """The MCP server command as argv: this Python with ``-P`` (the folder the harness starts
    it in is never put on ``sys.path``, so a project's own ``mcp`` or ``continuity`` package
    cannot shadow ours) running ``continuity.daemon.mcp_server.run``, with continuity's folder
    appended to ``sys.path`` (as ``hook_argv``)."""
    import continuity

    root = Path(continuity.__file__).resolve().parents[1]
    code = (
        f"import sys; sys.path.append({json.dumps(str(root))}); "
        "from continuity.daemon.mcp_server import run; run()"
    )
    return [sys.executable, "-P", "-c", code]


def tool_argv() -> list[str]:
    """pi's tool runner as argv (``continuity.daemon.mcp_server.tool_main``: the tool's name
    as the next argument, its arguments as JSON on stdin, its result as JSON on stdout)."""
    import continuity

    root = Path(continuity.__file__).resolve().parents[1]
    code = (
        f"import sys; sys.path.append({json.dumps(str(root))}); "
        "from continuity.daemon.mcp_server import tool_main; tool_main()"
    )
    return [sys.executable, "-P", "-c", code]


def mcp_tool_names(harness: str) -> dict[str, str]:
    """``{logical tool: the name the harness's model sees}`` for every tool of ``MCP_TOOLS``."""
    return {t: MCP_TOOL_NAMES[harness].format(tool=t) for t in MCP_TOOLS}


def _is_our_server(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    words = [str(entry.get("command", ""))] + [
        str(a) for a in entry.get("args") or [] if isinstance(entry.get("args"), list)
    ]
    return any(m in w for w in words for m in _MCP_OURS)


def claude_mcp_config() -> Path:
    """Claude Code's user configuration, where ``claude mcp add --scope user`` writes
    ``mcpServers`` (Claude Code 2.1.332: ``~/.claude.json``; its ``settings.json`` holds no MCP
    servers, ``claude mcp list`` ignores them there)."""
    return Path.home() / ".claude.json"


def _claude_registers_mcp(settings: Path) -> bool:
    """Whether install registers the MCP server along with the hooks in ``settings``: only
    for Claude Code's own user settings (``default_path``), whose MCP configuration is
    ``claude_mcp_config``; a ``--settings`` file elsewhere has no MCP file we could know."""
    return os.path.abspath(settings) == os.path.abspath(default_path("claude-code"))


def _rule_was_users(settings: Path) -> bool:
    """Whether ``CLAUDE_ALLOW_RULE`` was in the settings before our first install: it is in the
    backup that install made of them (no backup: install created the file, or nothing was
    ever installed, so a rule there is ours)."""
    backup = settings.with_name(settings.name + BACKUP_SUFFIX)
    try:
        saved = json.loads(backup.read_bytes())
    except (OSError, ValueError):
        return False
    perms = saved.get("permissions") if isinstance(saved, dict) else None
    allow = perms.get("allow") if isinstance(perms, dict) else None
    return isinstance(allow, list) and CLAUDE_ALLOW_RULE in allow


def _add_allow_rule(settings: Path, data: dict[str, Any]) -> None:
    """Add ``CLAUDE_ALLOW_RULE`` to ``data``'s ``permissions.allow`` (once). Raises
    ``InputError`` when ``permissions`` or ``allow`` is not what Claude Code reads."""
    perms = data.setdefault("permissions", {})
    if not isinstance(perms, dict):
        raise InputError(f"{settings}: 'permissions' must be an object")
    allow = perms.setdefault("allow", [])
    if not isinstance(allow, list):
        raise InputError(f"{settings}: permissions.allow must be a list")
    if CLAUDE_ALLOW_RULE not in allow:
        allow.append(CLAUDE_ALLOW_RULE)


def _server_entry(home: Path) -> dict[str, Any]:
    argv = mcp_argv()
    return {
        "type": "stdio",
        "command": argv[0],
        "args": argv[1:],
        "env": {"CONTINUITY_HOME": str(home)},
    }


def _register_claude_mcp(config: Path, home: Path) -> tuple[McpRegistration, PendingWrite | None]:
    """Our server in ``config``'s ``mcpServers`` (``claude_mcp_config``), replacing an older one
    of ours: the registration and the write it needs (None when the file holds it already),
    only our key changed, in the file's own layout; the write backs the bytes before up in
    ``<file>.continuity-backup`` (once) so uninstall can give them back, or know that install
    created the file. Raises ``InstallIncomplete`` (nothing written) for a file that is not a
    JSON object, an ``mcpServers`` that is not one, or an entry named ``continuity`` that is
    not ours."""
    target = _through_link(config)
    try:
        data, raw = _read(target)
    except InputError as exc:
        raise refused("claude-code", read_problem(exc), "fix that file") from None
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise servers_not_an_object("claude-code", config)
    old = servers.get(MCP_SERVER_NAME)
    if old is not None and not _is_our_server(old):
        raise foreign_server("claude-code", config, old)
    entry = _server_entry(home)
    pending = None
    if old != entry or raw is None:
        data["mcpServers"] = {**servers, MCP_SERVER_NAME: entry}
        pending = PendingWrite(target, raw, _render(target, data, raw))
    registration = McpRegistration(
        config,
        mcp_tool_names("claude-code"),
        f"allowed by the rule {CLAUDE_ALLOW_RULE!r} in permissions.allow",
    )
    return registration, pending


def _unregister_claude_mcp(config: Path) -> None:
    """Remove our server from ``config``'s ``mcpServers`` (and ``mcpServers`` when nothing
    else is left in it): the backup's bytes back when the rest equals them, else the file in
    its own layout without our key (the backup, stale since Claude Code rewrote the file, is
    removed); the file is deleted only when install created it (``_files._put_back``)."""
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
    _put_back(target, data, raw, drop_stale_backup=True)


def codex_mcp_block(home: Path) -> str:
    """Our ``[mcp_servers.continuity]`` table for Codex's ``config.toml`` (command, args, env
    with ``CONTINUITY_HOME``), between ``MCP_BEGIN`` and ``MCP_END``. Its tools are approved
    (``default_tools_approval_mode = "approve"``, Codex 0.171: ``auto``, ``prompt``,
    ``writes``, ``approve``): ``codex exec`` runs with approval policy ``never`` and refused
    every call otherwise ("MCP tool call requires approval, but approval policy is never"),
    the same grant as Claude Code's allow rule ``mcp__continuity``."""
    argv = mcp_argv()
    args = ", ".join(json.dumps(a, ensure_ascii=False) for a in argv[1:])
    return (
        f"{MCP_BEGIN}\n[mcp_servers.{MCP_SERVER_NAME}]\n"
        f"command = {json.dumps(argv[0], ensure_ascii=False)}\n"
        f"args = [{args}]\n"
        'default_tools_approval_mode = "approve"\n'
        f"env = {{ CONTINUITY_HOME = {json.dumps(str(home), ensure_ascii=False)} }}\n"
        f"{MCP_END}\n"
    )


#: The harnesses whose MCP servers sit in the same ``settings.json`` as their hooks, under
#: ``mcpServers`` (Gemini CLI, and Qwen Code, its fork): install writes both in one go.
SETTINGS_MCP = ("gemini-cli", "qwen-code")


def register_settings_mcp(
    harness: str, settings: Path, data: dict[str, Any], home: Path
) -> McpRegistration:
    """Put our server into the ``settings.json`` object ``data`` of ``harness`` (one of
    ``SETTINGS_MCP``; changed in place, written by the caller with the hooks):
    ``mcpServers.continuity`` ``{command, args, env, trust}`` (``trust``: Gemini CLI and Qwen
    Code run its tools without asking, as Claude Code's allow rule). Raises
    ``InstallIncomplete`` for an entry of that name that is not ours, or an ``mcpServers``
    that is not an object."""
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise servers_not_an_object(harness, settings)
    old = servers.get(MCP_SERVER_NAME)
    if old is not None and not _is_our_server(old):
        raise foreign_server(harness, settings, old)
    entry = {k: v for k, v in _server_entry(home).items() if k != "type"}
    data["mcpServers"] = {**servers, MCP_SERVER_NAME: {**entry, "trust": True}}
    return McpRegistration(settings, mcp_tool_names(harness), "in mcpServers, trusted")


def drop_our_server(data: dict[str, Any]) -> None:
    """Remove our ``mcpServers.continuity`` from a settings object (Gemini CLI's, Qwen Code's),
    and the ``mcpServers`` object when nothing else is left in it."""
    servers = data.get("mcpServers")
    if isinstance(servers, dict) and _is_our_server(servers.get(MCP_SERVER_NAME)):
        del servers[MCP_SERVER_NAME]
        if not servers:
            del data["mcpServers"]
