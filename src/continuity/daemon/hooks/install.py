"""``continuity hooks install|uninstall claude-code|codex|pi``: wire a harness to the daemon.

**Claude Code** (``~/.claude/settings.json``) and **Codex** (``~/.codex/hooks.json``: Codex reads
hooks from ``hooks.json`` or inline ``[hooks]`` tables of ``config.toml`` beside each config layer;
we use the JSON file so no TOML is rewritten, and ``hooks.json`` has the same shape as Claude
Code's ``hooks`` object): for each event in ``CLAUDE_EVENTS``/``CODEX_EVENTS`` one matcher group
``{"hooks": [{"type": "command", "command": "<hook command> EVENT --harness H", "timeout": S}]}``
is appended under ``hooks.<Event>``. Codex gets SessionEnd too: it sends one at the end of every
``codex exec`` (issue 12, fault 3; harnesses.md). Our entries are recognised by their command
(``continuity.cli.hookcmd`` or ``continuity-hook``), so:

- **install** first removes entries of ours (an older command path), then adds the current
  ones; when that changes nothing, nothing is written. Before the first write the file is
  copied to ``<file>.continuity-backup`` (kept; a later install never overwrites it). Writes
  are atomic (temp file, then rename) and keep the file's mode. Other keys, other hooks and
  their order are kept.
- **uninstall** removes exactly our entries and the containers that held only them; when the
  result equals the backup, the backup's bytes are restored (formatting included) and the
  backup removed; a file install created is deleted when nothing else is left in it.

A file that is not a JSON object, or a path that is a folder, is never overwritten
(``InputError``). A settings path that is a symlink is written through: the link's target is
backed up, rewritten and restored, so the link itself survives install and uninstall.

**Workspace.** Harnesses run hooks without ``$CONTINUITY_HOME``, so the installed command
carries the workspace the daemon uses (``home``, default ``continuity.core.config.resolve_home()``,
made absolute): ``CONTINUITY_HOME=<home> <hook command>`` for the shell commands of Claude Code
and Codex, ``env CONTINUITY_HOME=<home> <hook command>`` as pi's argv (``hookcmd`` reads
``$CONTINUITY_HOME`` to find ``daemon.url``, the token and the spool).

**Codex trust** (issue 12, fault 2). Codex runs a hook of ``hooks.json`` only once it is
trusted: ``config.toml`` beside ``hooks.json`` holds, per hook, ``[hooks.state."<hooks.json
path>:<event>:<group>:<handler>"]`` with ``trusted_hash``; an untrusted hook is skipped silently
by ``codex exec`` (only the TUI asks). ``<event>`` is the snake_case name (``session_start``),
``<group>``/``<handler>`` the 0-based positions in ``hooks.<Event>`` and in the group's
``hooks``. The hash (``codex_hook_hash``, from codex-rs ``hooks/src/engine/discovery.rs``
``command_hook_hash`` and ``config`` ``version_for_toml``) is ``sha256:`` + the hex SHA-256 of
the compact JSON, keys sorted, of ``{"event_name": <event>, "hooks": [{"type": "command",
"command": C, "timeout": T, "async": false}]}`` (``matcher`` too when the group has one).
``install`` writes these tables for our hooks in one block between ``TRUST_BEGIN`` and
``TRUST_END`` at the end of ``config.toml`` (a table of ours elsewhere, from an earlier trust in
the TUI, is removed first; the file is backed up once, like ``hooks.json``), and checks that
the result parses and holds exactly those hashes; when it would not (a ``config.toml`` that is
not TOML, an inline ``hooks.state``), nothing is written and the result says the one step left
(``CODEX_TRUST_STEP``). ``trust=False`` leaves trust to the user. ``uninstall`` removes the
block, restoring the backup's bytes when nothing else changed. ``codex_trust`` reports the
state now (for ``hooks install`` and ``continuity doctor``).

**pi**: pi loads TypeScript extensions from ``<agentDir>/extensions/`` (``agentDir`` =
``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``). install writes ``continuity.ts`` there (our
``pi_extension/continuity.ts`` with the hook command filled in); uninstall deletes it. A
``continuity.ts`` there that is not ours is left alone (``InputError``). The folders install had
to create (``extensions``, and ``~/.pi/agent`` on a machine where pi never ran) are named in the
file (``PI_CREATED``), and uninstall removes those that are empty then (issue 12).

**continuity's tools** (issue 39: the text we inject names only tools the harness has).
install also registers them, uninstall removes exactly that: Claude Code, for its user settings
only, our MCP server in ``~/.claude.json`` ``mcpServers.continuity`` (where ``claude mcp add
--scope user`` writes; Claude Code 2.1.332 reads no MCP server from ``settings.json``) and the
allow rule ``CLAUDE_ALLOW_RULE`` in the settings' ``permissions.allow`` (kept at uninstall when
the backup shows the user had it); Codex a ``MCP_BEGIN``…``MCP_END`` block with
``[mcp_servers.continuity]`` in ``config.toml`` (backed up and restored like the trust
block); pi the extension's own tools (``pi.registerTool``), which run ``tool_argv``. The
server runs ``mcp_argv`` with ``CONTINUITY_HOME`` in its environment. ``McpRegistration``
says what was registered and the names each harness's model sees (``MCP_TOOL_NAMES``, read
from the real harnesses' requests), which ``record_install`` keeps under ``"mcp"`` for
``installed_mcp_tools``.

The hook command is ``<python> -I -S -c "...from continuity.cli.hookcmd import main; main()"``
(``hook_argv``): the fast path (no CLI imports, no ``site``), with absolute paths, so the hook
works whatever PATH or environment the harness gives it. The ``continuity-hook`` console script
runs the same code, with ``site``.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from continuity.core.config import resolve_home
from continuity.core.errors import InputError

#: Claude Code event → (our event, timeout in seconds). SessionEnd: 1.5 s default budget.
CLAUDE_EVENTS = {"SessionStart": ("session-start", 10), "UserPromptSubmit":
                 ("user-prompt-submit", 5), "PreCompact": ("pre-compaction", 10),
                 "PostCompact": ("post-compaction", 5), "Stop": ("stop", 5),
                 "SessionEnd": ("session-end", 2)}
#: Codex: the same events, SessionEnd included (issue 12, fault 3).
CODEX_EVENTS = dict(CLAUDE_EVENTS)
#: Codex's snake_case event names (codex-rs ``hook_event_key_label``), used in trust keys.
CODEX_EVENT_LABELS = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit",
                      "PreCompact": "pre_compact", "PostCompact": "post_compact",
                      "Stop": "stop", "SessionEnd": "session_end",
                      "PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use",
                      "PermissionRequest": "permission_request",
                      "SubagentStart": "subagent_start", "SubagentStop": "subagent_stop"}
TRUST_BEGIN = ("# >>> continuity: Codex trusts continuity's hooks (written by `continuity hooks "
               "install codex`; `continuity hooks uninstall codex` removes it)")
TRUST_END = "# <<< continuity"
#: What a user has to do when install could not write the trust state.
CODEX_TRUST_STEP = ("run `codex` once (the interactive TUI), open /hooks (\"Hooks need "
                    "review\") and trust the continuity hooks; `codex exec` skips untrusted "
                    "hooks silently")
HARNESS_EVENTS = {"claude-code": CLAUDE_EVENTS, "codex": CODEX_EVENTS}
BACKUP_SUFFIX = ".continuity-backup"
PI_FILE = "continuity.ts"
PI_MARKER = "marker: continuity-pi-extension v1"
#: The comment line of our pi extension naming the folders its install created (JSON list,
#: innermost first); uninstall removes each one that is empty by then.
PI_CREATED = "// continuity-created-folders: "
#: Both forms of hook_argv() match, and the module path hooks installed before issue 11 ran.
_OURS = ("continuity.cli.hookcmd", "continuity-hook", "continuity.hookcmd")


@dataclass(frozen=True)
class InstallResult:
    """What an install or uninstall did: ``action`` is ``installed``, ``unchanged``,
    ``removed``, ``restored`` (the backup's bytes put back) or ``absent``; ``backup`` is the
    backup file made by this call, if any; ``home`` the workspace the installed hooks point at
    (None for uninstall). For ``removed``: ``file_kept`` is True when only our hooks were taken
    out of the file (it holds other settings) and ``backup_left`` the install's backup left in
    place because the file changed since install (fresh-user review: "removed S" read as if
    the file had been deleted)."""

    harness: str
    path: Path
    action: str
    backup: Path | None = None
    home: Path | None = None
    file_kept: bool = False
    backup_left: Path | None = None
    #: Codex only: ``codex_trust`` after the call (``CodexTrust.to_dict``).
    trust: "CodexTrust | None" = None
    #: Install only: continuity's MCP tools as registered (issue 39; ``McpRegistration``).
    mcp: "McpRegistration | None" = None

    def to_dict(self) -> dict[str, Any]:
        out = {"harness": self.harness, "path": str(self.path), "action": self.action,
               "backup": str(self.backup) if self.backup else None,
               "home": str(self.home) if self.home else None, "file_kept": self.file_kept,
               "backup_left": str(self.backup_left) if self.backup_left else None}
        if self.trust is not None:
            out["trust"] = self.trust.to_dict()
        if self.mcp is not None:
            out["mcp"] = self.mcp.to_dict()
        return out


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
        return {"where": str(self.where) if self.where else None, "tools": dict(self.tools),
                "note": self.note}


# ---------------------------------------------------------------------------- MCP (issue 39)

#: The name continuity's MCP server is registered under (Claude Code ``mcpServers``, Codex
#: ``[mcp_servers.NAME]``).
MCP_SERVER_NAME = "continuity"
#: Claude Code's permission rule allowing every tool of our MCP server (Claude Code denies an
#: MCP tool in ``-p`` runs until allowed; issue 39).
CLAUDE_ALLOW_RULE = "mcp__continuity"
#: Codex's config.toml block holding our MCP server (like the trust block).
MCP_BEGIN = ("# >>> continuity: continuity's MCP server (written by `continuity hooks install "
             "codex`; `continuity hooks uninstall codex` removes it)")
MCP_END = "# <<< continuity mcp"
#: How each harness's model sees the tools (read from the fake model's request log of the
#: real harnesses, tests/e2e/test_mcp_tools.py): Claude Code ``mcp__<server>__<tool>``, Codex
#: ``mcp__<server>__<tool>``, pi the extension's own tools ``continuity_<tool>``.
MCP_TOOL_NAMES = {"claude-code": "mcp__continuity__{tool}", "codex": "mcp__continuity__{tool}",
                  "pi": "continuity_{tool}"}
#: A command that is ours: it runs continuity's MCP server or its tool runner.
_MCP_OURS = ("continuity.daemon.mcp_server",)


def mcp_argv() -> list[str]:
    """The MCP server command as argv: this Python with ``-P`` (the folder the harness starts
    it in is never put on ``sys.path``, so a project's own ``mcp`` or ``continuity`` package
    cannot shadow ours) running ``continuity.daemon.mcp_server.run``, with continuity's folder
    appended to ``sys.path`` (as ``hook_argv``)."""
    import continuity

    root = Path(continuity.__file__).resolve().parents[1]
    code = (f"import sys; sys.path.append({json.dumps(str(root))}); "
            "from continuity.daemon.mcp_server import run; run()")
    return [sys.executable, "-P", "-c", code]


def tool_argv() -> list[str]:
    """pi's tool runner as argv (``continuity.daemon.mcp_server.tool_main``: the tool's name
    as the next argument, its arguments as JSON on stdin, its result as JSON on stdout)."""
    import continuity

    root = Path(continuity.__file__).resolve().parents[1]
    code = (f"import sys; sys.path.append({json.dumps(str(root))}); "
            "from continuity.daemon.mcp_server import tool_main; tool_main()")
    return [sys.executable, "-P", "-c", code]


def mcp_tool_names(harness: str) -> dict[str, str]:
    """``{logical tool: the name the harness's model sees}`` for every tool of ``MCP_TOOLS``."""
    return {t: MCP_TOOL_NAMES[harness].format(tool=t) for t in MCP_TOOLS}


def _is_our_server(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    words = [str(entry.get("command", ""))] + [str(a) for a in entry.get("args") or []
                                               if isinstance(entry.get("args"), list)]
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
    return {"type": "stdio", "command": argv[0], "args": argv[1:],
            "env": {"CONTINUITY_HOME": str(home)}}


def _register_claude_mcp(config: Path, home: Path) -> McpRegistration:
    """Put our server into ``config``'s ``mcpServers`` (``claude_mcp_config``), replacing an
    older one of ours; an entry named ``continuity`` that is not ours, or a file that is not a
    JSON object, is left alone (nothing registered, ``note`` says why). The file is Claude
    Code's own state, which it rewrites itself: no backup is made, only our key changes."""
    target = _through_link(config)
    try:
        data, raw = _read(target)
    except InputError as exc:
        return McpRegistration(config, {}, f"not registered: {exc}")
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        return McpRegistration(config, {}, f"not registered: {config}: mcpServers is not "
                               "an object")
    old = servers.get(MCP_SERVER_NAME)
    if old is not None and not _is_our_server(old):
        return McpRegistration(config, {}, f"not registered: {config} already has an MCP "
                               f"server named {MCP_SERVER_NAME!r} that is not continuity's")
    entry = _server_entry(home)
    if old != entry or raw is None:
        data["mcpServers"] = {**servers, MCP_SERVER_NAME: entry}
        _write(target, data)
    return McpRegistration(config, mcp_tool_names("claude-code"),
                           f"allowed by the rule {CLAUDE_ALLOW_RULE!r} in permissions.allow")


def _unregister_claude_mcp(config: Path) -> None:
    """Remove our server from ``config``'s ``mcpServers`` (and ``mcpServers`` when nothing
    else is left in it; the file when nothing at all is left)."""
    target = _through_link(config)
    try:
        data, raw = _read(target)
    except InputError:
        return
    servers = data.get("mcpServers")
    if raw is None or not isinstance(servers, dict) \
            or not _is_our_server(servers.get(MCP_SERVER_NAME)):
        return
    del servers[MCP_SERVER_NAME]
    if not servers:
        del data["mcpServers"]
    if not data:
        target.unlink()
        return
    _write(target, data)


def codex_mcp_block(home: Path) -> str:
    """Our ``[mcp_servers.continuity]`` table for Codex's ``config.toml`` (command, args, env
    with ``CONTINUITY_HOME``), between ``MCP_BEGIN`` and ``MCP_END``. Its tools are approved
    (``default_tools_approval_mode = "approve"``, Codex 0.171: ``auto``, ``prompt``,
    ``writes``, ``approve``): ``codex exec`` runs with approval policy ``never`` and refused
    every call otherwise ("MCP tool call requires approval, but approval policy is never"),
    the same grant as Claude Code's allow rule ``mcp__continuity``."""
    argv = mcp_argv()
    args = ", ".join(json.dumps(a, ensure_ascii=False) for a in argv[1:])
    return (f"{MCP_BEGIN}\n[mcp_servers.{MCP_SERVER_NAME}]\n"
            f"command = {json.dumps(argv[0], ensure_ascii=False)}\n"
            f"args = [{args}]\n"
            'default_tools_approval_mode = "approve"\n'
            f"env = {{ CONTINUITY_HOME = {json.dumps(str(home), ensure_ascii=False)} }}\n"
            f"{MCP_END}\n")


def hook_argv() -> list[str]:
    """The hook command as argv: this Python with ``-I -S`` (no ``site``: the hook imports
    only the standard library and ``continuity``, whose folder is appended to ``sys.path``)
    running ``continuity.cli.hookcmd.main``; ~4 ms less than a console script's start."""
    import continuity

    root = Path(continuity.__file__).resolve().parents[1]
    code = (f"import sys; sys.path.append({json.dumps(str(root))}); "
            "from continuity.cli.hookcmd import main; main()")
    return [sys.executable, "-I", "-S", "-c", code]


def hook_command(harness: str, event: str, home: Path | None = None) -> str:
    """The shell command a harness runs for ``event``; with ``home``, prefixed by a
    shell-quoted ``CONTINUITY_HOME=<home>`` assignment (module docstring, Workspace)."""
    words = [shlex.quote(a) for a in [*hook_argv(), event, "--harness", harness]]
    if home is not None:
        words.insert(0, "CONTINUITY_HOME=" + shlex.quote(str(home)))
    return " ".join(words)


def hook_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The absolute workspace the hooks will point at: ``home`` or the resolved current one
    (``continuity.core.config.resolve_home``). Raises ``ConfigError`` for an empty ``home``."""
    return Path(os.path.abspath(resolve_home(home)))


def default_path(harness: str) -> Path:
    """Where the harness reads hooks (Claude Code, Codex) or extensions (pi)."""
    if harness == "claude-code":
        return Path.home() / ".claude" / "settings.json"
    if harness == "codex":
        return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "hooks.json"
    if harness == "pi":
        agent = os.environ.get("PI_CODING_AGENT_DIR") or Path.home() / ".pi" / "agent"
        return Path(agent) / "extensions"
    raise InputError(f"harness: must be claude-code, codex or pi (got {harness!r})")


def install(harness: str, path: str | os.PathLike[str] | None = None,
            home: str | os.PathLike[str] | None = None, *, trust: bool = True) -> InstallResult:
    """Install our hooks for ``harness`` (module docstring). ``path``: the settings file
    (Claude Code, Codex) or the extensions folder (pi); ``home``: the workspace baked into the
    commands (default: the current one); ``trust`` (Codex): write the trust state Codex needs
    to run them (module docstring, Codex trust). Raises ``InputError``."""
    given = Path(path).expanduser() if path else default_path(harness)
    where = hook_home(home)
    if harness == "pi":
        return _install_pi(given, where)
    events = _events(harness)
    target = _through_link(given)
    before, raw = _read(target)
    claude_mcp = harness == "claude-code" and _claude_registers_mcp(given)
    after = _without_ours(before, keep_rule=_rule_was_users(target))
    hooks = after.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InputError(f"{target}: 'hooks' must be an object")
    for native, (event, timeout) in events.items():
        groups = hooks.setdefault(native, [])
        if not isinstance(groups, list):
            raise InputError(f"{target}: hooks.{native} must be a list")
        groups.append({"hooks": [{"type": "command",
                                  "command": hook_command(harness, event, where),
                                  "timeout": timeout}]})
    mcp = None
    if claude_mcp:
        mcp = _register_claude_mcp(claude_mcp_config(), where)
        if mcp.tools:
            _add_allow_rule(target, after)
    if after == before and raw is not None:
        action, backup = "unchanged", None
    else:
        backup = _backup(target, raw)
        _write(target, after)
        action = "installed"
    if harness != "codex":
        if mcp is None:
            mcp = McpRegistration(None, {}, "not registered: --settings is not Claude Code's "
                                  f"user settings ({default_path(harness)}); register it "
                                  "with `claude mcp add continuity -- "
                                  f"{shlex.join(mcp_argv())}`")
        return InstallResult(harness, given, action, backup, home=where, mcp=mcp)
    note, mcp = _write_codex_config(given, after, trust=trust, home=where)
    return InstallResult(harness, given, action, backup, home=where,
                         trust=codex_trust(given, note=note), mcp=mcp)


def uninstall(harness: str, path: str | os.PathLike[str] | None = None) -> InstallResult:
    """Remove our hooks for ``harness`` (module docstring). Raises ``InputError``."""
    given = Path(path).expanduser() if path else default_path(harness)
    if harness == "pi":
        return _uninstall_pi(given)
    _events(harness)
    target = _through_link(given)
    if harness == "codex":
        _remove_codex_trust(given)
    if harness == "claude-code" and _claude_registers_mcp(given):
        _unregister_claude_mcp(claude_mcp_config())
    before, raw = _read(target)
    after = _without_ours(before, keep_rule=_rule_was_users(target))
    if raw is None or after == before:
        return InstallResult(harness, given, "absent")
    backup = target.with_name(target.name + BACKUP_SUFFIX)
    if backup.is_file():
        saved = backup.read_bytes()
        try:
            same = json.loads(saved) == after
        except ValueError:
            same = False
        if same:
            _atomic_bytes(target, saved)
            backup.unlink()
            return InstallResult(harness, given, "restored")
    if not after and not backup.is_file():
        target.unlink()  # install created this file; nothing else is in it
        return InstallResult(harness, given, "removed")
    _write(target, after)
    return InstallResult(harness, given, "removed", file_kept=True,
                         backup_left=backup if backup.is_file() else None)


def _through_link(path: Path) -> Path:
    """The file to read and rewrite: ``path``, or the file a symlink at ``path`` points at
    (followed to the end, even when it does not exist yet), so the link is kept. Raises
    ``InputError`` when that is a device, a pipe or a socket: settings are written
    only to a regular file (issue 16: ``--settings /dev/null`` as root replaced the device),
    as ``memory render --output`` does."""
    target = path.resolve() if path.is_symlink() else path
    if target.exists() and not target.is_dir() and not target.is_file():
        raise InputError(f"{path}: is not a regular file (a device, socket or pipe); "
                         "settings are only written to a regular file")
    return target


def _events(harness: str) -> dict[str, tuple[str, int]]:
    if harness not in HARNESS_EVENTS:
        raise InputError(f"harness: must be claude-code, codex or pi (got {harness!r})")
    return HARNESS_EVENTS[harness]


def _read(path: Path) -> tuple[dict[str, Any], bytes | None]:
    if path.is_dir():
        raise InputError(f"--settings: {path} is a folder; give the settings file (e.g. "
                         f"{path / 'settings.json'})")
    if not path.exists():
        return {}, None
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"--settings: cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise InputError(f"{path}: not valid JSON ({exc}); fix it first, nothing was "
                         "changed") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: a JSON object is expected; nothing was changed")
    return data, raw


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and any(m in str(hook.get("command", "")) for m in _OURS)


def _without_ours(data: dict[str, Any], *, keep_rule: bool = False) -> dict[str, Any]:
    """A copy of ``data`` without our hook entries, and without the groups, event lists and
    ``hooks`` object that held nothing else; and (Claude Code) without our MCP allow rule
    ``CLAUDE_ALLOW_RULE`` in ``permissions.allow`` (and the list and object that held only
    it), unless ``keep_rule`` (the user had it before install: ``_rule_was_users``)."""
    out = copy.deepcopy(data)
    perms = out.get("permissions")
    if not keep_rule and isinstance(perms, dict) and isinstance(perms.get("allow"), list) \
            and CLAUDE_ALLOW_RULE in perms["allow"]:
        perms["allow"] = [r for r in perms["allow"] if r != CLAUDE_ALLOW_RULE]
        if not perms["allow"]:
            del perms["allow"]
        if not perms:
            del out["permissions"]
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for native in list(hooks):
        groups = hooks[native]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(_is_ours(h) for h in inner):
                rest = [h for h in inner if not _is_ours(h)]
                if not rest:
                    continue
                group = {**group, "hooks": rest}
            kept.append(group)
        if kept:
            hooks[native] = kept
        else:
            del hooks[native]
    if not hooks:
        del out["hooks"]
    return out


def _backup(path: Path, raw: bytes | None) -> Path | None:
    """Copy the settings' bytes to ``<file>.continuity-backup`` with the original's permission
    bits (issue 16: a ``0600`` settings file, which may hold the user's secrets, was backed up
    ``0644``)."""
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    if raw is None or backup.exists():
        return None
    _atomic_bytes(backup, raw, mode=path.stat().st_mode & 0o777)
    return backup


def _write(path: Path, data: dict[str, Any]) -> None:
    _atomic_bytes(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())


def _atomic_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` whole (temp file, fsync, rename) with ``mode``, else the
    existing file's permission bits, else ``0644``."""
    from continuity.core.private import write_whole

    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    write_whole(path, data, mode)


# ---------------------------------------------------------------------------- reading back


def read_settings(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The parsed settings file at ``path`` (a symlink followed), ``{}`` when absent; for
    ``continuity doctor``. Raises ``InputError`` for a folder or a file that is not a JSON
    object."""
    return _read(_through_link(Path(path)))[0]


def is_our_hook(hook: Any) -> bool:
    """True for a hook entry (``{"type": "command", "command": ...}``) that install wrote."""
    return _is_ours(hook)


# ---------------------------------------------------------------------------- Codex trust


def codex_hook_hash(event: str, hook: dict[str, Any], matcher: str | None = None) -> str:
    """The ``trusted_hash`` Codex expects for one command ``hook`` (``{"command", "timeout",
    "async"?, "statusMessage"?}``) of ``event`` (native name, ``SessionStart``) in a group with
    ``matcher`` (module docstring, Codex trust; codex-rs ``command_hook_hash``). A timeout
    missing is Codex's default of 600 s. Raises ``KeyError`` for an event Codex does not know."""
    handler: dict[str, Any] = {"type": "command", "command": str(hook.get("command", "")),
                               "timeout": max(1, int(hook.get("timeout") or 600)),
                               "async": bool(hook.get("async", False))}
    if hook.get("statusMessage") is not None:
        handler["statusMessage"] = str(hook["statusMessage"])
    identity: dict[str, Any] = {"event_name": CODEX_EVENT_LABELS[event], "hooks": [handler]}
    if matcher is not None:
        identity["matcher"] = matcher
    data = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    import hashlib

    return "sha256:" + hashlib.sha256(data.encode("utf-8")).hexdigest()


def codex_hooks_key_path(hooks_path: Path) -> str:
    """The ``hooks.json`` path as Codex spells it in trust keys: its config folder joined with
    ``hooks.json``, where the folder is ``$CODEX_HOME`` canonicalized (codex-rs
    ``find_codex_home`` resolves symlinks of ``CODEX_HOME``) when ``hooks_path`` lies there, else
    absolute as given (``~/.codex`` is not resolved)."""
    folder = os.path.abspath(hooks_path.parent)
    codex_home = os.environ.get("CODEX_HOME")
    if codex_home and os.path.realpath(codex_home) == os.path.realpath(folder):
        folder = os.path.realpath(codex_home)
    return os.path.join(folder, hooks_path.name)


def _codex_config_path(hooks_path: Path) -> Path:
    return hooks_path.parent / "config.toml"


def codex_our_hooks(hooks_path: Path, data: dict[str, Any] | None = None
                    ) -> list[tuple[str, str, str]]:
    """``[(key, native_event, trusted_hash)]`` of our hooks in ``hooks.json`` (``data``: its
    parsed content, read from ``hooks_path`` when None), in file order."""
    if data is None:
        data, _raw = _read(hooks_path)
    prefix = codex_hooks_key_path(hooks_path)
    found = []
    hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
    for native, groups in hooks.items():
        if native not in CODEX_EVENT_LABELS or not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            inner = group.get("hooks") if isinstance(group, dict) else None
            for h, hook in enumerate(inner if isinstance(inner, list) else []):
                if _is_ours(hook):
                    matcher = group.get("matcher")
                    key = f"{prefix}:{CODEX_EVENT_LABELS[native]}:{g}:{h}"
                    found.append((key, native, codex_hook_hash(
                        native, hook, matcher if isinstance(matcher, str) else None)))
    return found


@dataclass(frozen=True)
class CodexTrust:
    """Whether Codex runs our hooks right now. ``status``: ``trusted`` (every hook of ours has
    its current hash in ``config.toml``), ``untrusted`` (none or only some do: Codex skips the
    others silently), ``no-hooks`` (none of ours in ``hooks.json``) or ``unreadable``
    (``config.toml`` is not TOML). ``untrusted_keys``: the hooks Codex skips; ``note``: why
    install could not write the trust; ``next_step``: what the user has to do (None when
    trusted)."""

    status: str
    hooks: int
    trusted: int
    config: Path
    untrusted_keys: tuple[str, ...] = ()
    note: str | None = None

    @property
    def next_step(self) -> str | None:
        if self.status == "trusted":
            return None
        if self.status == "no-hooks":
            return "run `continuity hooks install codex`"
        if self.status == "unreadable":
            return f"fix {self.config} (not valid TOML), then run `continuity hooks install codex`"
        return ("run `continuity hooks install codex` again (it writes the trust), or "
                + CODEX_TRUST_STEP)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "hooks": self.hooks, "trusted": self.trusted,
                "config": str(self.config), "untrusted_keys": list(self.untrusted_keys),
                "note": self.note, "next_step": self.next_step}


def codex_trust(hooks_path: str | os.PathLike[str] | None = None, *,
                note: str | None = None) -> CodexTrust:
    """Whether Codex trusts our hooks of ``hooks_path`` (default ``default_path("codex")``) now,
    comparing the ``trusted_hash`` of each in ``config.toml`` with its current hash (module
    docstring, Codex trust). Raises ``InputError`` when ``hooks.json`` is not a JSON object."""
    import tomllib

    given = Path(hooks_path).expanduser() if hooks_path else default_path("codex")
    target = _through_link(given)
    config = _codex_config_path(given)
    ours = codex_our_hooks(given, _read(target)[0])
    if not ours:
        return CodexTrust("no-hooks", 0, 0, config, note=note)
    try:
        state = tomllib.loads(config.read_text("utf-8")) if config.is_file() else {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return CodexTrust("unreadable", len(ours), 0, config, tuple(k for k, _e, _h in ours),
                          note=note)
    hooks_state = state.get("hooks", {}).get("state", {}) if isinstance(
        state.get("hooks"), dict) else {}
    untrusted = tuple(k for k, _e, h in ours
                      if not isinstance(hooks_state.get(k), dict)
                      or hooks_state[k].get("trusted_hash") != h
                      or hooks_state[k].get("enabled") is False)
    trusted = len(ours) - len(untrusted)
    return CodexTrust("trusted" if not untrusted else "untrusted", len(ours), trusted, config,
                      untrusted, note=note)


#: A ``[hooks.state."KEY"]`` (or ``'KEY'``) table header line, the key's TOML string captured.
_STATE_HEADER = re.compile(
    r'^\s*\[\s*hooks\s*\.\s*state\s*\.\s*("(?:[^"\\]|\\.)*"|\'[^\']*\')\s*\]\s*(#.*)?$')


def _state_header_key(line: str) -> str | None:
    """The key of a ``[hooks.state."KEY"]`` header line, else None."""
    import tomllib

    match = _STATE_HEADER.match(line)
    if not match:
        return None
    try:
        return tomllib.loads(f"k = {match.group(1)}")["k"]
    except tomllib.TOMLDecodeError:
        return None


def _strip_trust(text: str, keys: set[str] | None) -> str:
    """``text`` without our ``TRUST_BEGIN``…``TRUST_END`` block and, for ``keys``, without the
    ``[hooks.state."KEY"]`` tables of those keys elsewhere (up to the next table header)."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    skipping_block = skipping_table = False
    for line in lines:
        bare = line.rstrip("\r\n")
        if skipping_block:
            if bare == TRUST_END:
                skipping_block = False
            continue
        if bare == TRUST_BEGIN:
            skipping_block, skipping_table = True, False
            continue
        if bare.lstrip().startswith("["):
            key = _state_header_key(bare)
            skipping_table = key is not None and keys is not None and key in keys
            if skipping_table:
                continue
        if skipping_table:
            continue
        out.append(line)
    return "".join(out)


def _strip_block(text: str, begin: str, end: str) -> str:
    """``text`` without the lines from ``begin`` to ``end`` (both included)."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if skipping:
            skipping = bare != end
            continue
        if bare == begin:
            skipping = True
            continue
        out.append(line)
    return "".join(out)


def _codex_state_ok(text: str, ours: list[tuple[str, str, str]]) -> bool:
    """Whether ``text`` parses as TOML and trusts each of ``ours`` with its hash."""
    import tomllib

    try:
        state = tomllib.loads(text)["hooks"]["state"] if ours else {}
        return all(state[k].get("trusted_hash") == h for k, _e, h in ours)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, AttributeError):
        return False


def _codex_mcp_ok(text: str, home: Path) -> bool:
    """Whether ``text`` parses as TOML and holds our server as ``codex_mcp_block`` wrote it."""
    import tomllib

    try:
        server = tomllib.loads(text)["mcp_servers"][MCP_SERVER_NAME]
        argv = mcp_argv()
        return server["command"] == argv[0] and server["args"] == argv[1:] \
            and server["env"] == {"CONTINUITY_HOME": str(home)}
    except (tomllib.TOMLDecodeError, KeyError, TypeError):
        return False


def _write_codex_config(hooks_path: Path, data: dict[str, Any], *, trust: bool,
                        home: Path) -> tuple[str | None, McpRegistration]:
    """Write, into the ``config.toml`` beside ``hooks_path``, our MCP server
    (``codex_mcp_block``, issue 39) and, with ``trust``, the trust tables of our hooks in
    ``hooks_path`` (parsed ``data``; module docstring, Codex trust), both at the end, MCP
    first. A part the file cannot take (a ``config.toml`` that is not TOML, an inline
    ``hooks.state``, a ``[mcp_servers.continuity]`` of the user's) is left out and the other
    still written. Returns ``(trust note, MCP registration)``: the note None when the trust
    was written (or not asked for)."""
    config = _codex_config_path(hooks_path)
    config_file = _through_link(config)
    try:
        raw = config_file.read_bytes() if config_file.exists() else None
        text = raw.decode("utf-8") if raw is not None else ""
    except (OSError, UnicodeDecodeError) as exc:
        why = f"{config}: cannot read it ({exc})"
        return (f"{why}; Codex trust not written" if trust else None,
                McpRegistration(config, {}, f"not registered: {why}"))
    ours = codex_our_hooks(hooks_path, data)
    kept = _strip_block(text, MCP_BEGIN, MCP_END)
    if trust:
        kept = _strip_trust(kept, {k for k, _e, _h in ours})
    if kept and not kept.endswith("\n"):
        kept += "\n"
    block = "".join(f"[hooks.state.{json.dumps(k, ensure_ascii=False)}]\n"
                    f"trusted_hash = {json.dumps(h)}\n" for k, _e, h in ours)
    trust_block = f"{TRUST_BEGIN}\n{block}{TRUST_END}\n" if trust and ours else ""
    mcp_block = codex_mcp_block(home)
    mcp_fits = _codex_mcp_ok(kept + mcp_block, home)
    if trust and not _codex_state_ok(kept + trust_block, ours):
        return (f"{config}: the trust state of continuity's hooks cannot be added to it; "
                "nothing was changed there", McpRegistration(
                    config, {}, f"not registered: {config} was left as it was (see the trust)"))
    new = kept + (mcp_block if mcp_fits else "") + trust_block
    if mcp_fits and not (_codex_mcp_ok(new, home) and (not trust or _codex_state_ok(new, ours))):
        new = kept + trust_block  # pragma: no cover - each fits alone: so do both
        mcp_fits = False
    note = None
    mcp = McpRegistration(config, mcp_tool_names("codex")) if mcp_fits else McpRegistration(
        config, {}, f"not registered: {config} cannot take [mcp_servers.{MCP_SERVER_NAME}] "
        "(a server of that name that is not continuity's, or mcp_servers not a table)")
    if new != text:
        _backup(config_file, raw)
        _atomic_bytes(config_file, new.encode("utf-8"))
    return note, mcp


def _remove_codex_trust(hooks_path: Path) -> None:
    """Remove our trust block and our MCP block (issue 39) from the ``config.toml`` beside
    ``hooks_path``: its backup's bytes
    come back when the rest equals them; a file that held only the block is deleted."""
    config_file = _through_link(_codex_config_path(hooks_path))
    if not config_file.is_file():
        return
    text = config_file.read_text("utf-8", errors="surrogateescape")
    if TRUST_BEGIN not in text and MCP_BEGIN not in text:
        return
    kept = _strip_block(_strip_trust(text, None), MCP_BEGIN, MCP_END)
    backup = config_file.with_name(config_file.name + BACKUP_SUFFIX)
    if backup.is_file():
        saved = backup.read_bytes()
        if saved.decode("utf-8", "surrogateescape").rstrip("\n") == kept.rstrip("\n"):
            _atomic_bytes(config_file, saved)
            backup.unlink()
            return
    if not kept.strip() and not backup.is_file():
        config_file.unlink()
        return
    _atomic_bytes(config_file, kept.encode("utf-8", "surrogateescape"))


# ---------------------------------------------------------------------------- pi


def pi_extension_text(argv: list[str] | None = None, tools: list[str] | None = None) -> str:
    """Our pi extension with the hook command (``argv``, default ``hook_argv()``) and the
    tool runner of its continuity tools (``tools``, default ``tool_argv()``; issue 39)
    filled in."""
    template = resources.files("continuity.daemon.hooks").joinpath(
        "pi_extension", PI_FILE).read_text("utf-8")
    return template.replace("__CONTINUITY_HOOK_COMMAND__", json.dumps(argv or hook_argv())) \
        .replace("__CONTINUITY_TOOL_COMMAND__", json.dumps(tools or tool_argv()))


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist, innermost first."""
    missing: list[Path] = []
    here = folder.absolute()
    while not here.exists() and here != here.parent:
        missing.append(here)
        here = here.parent
    return missing


def _created_folders(text: str) -> list[Path]:
    """The folders an installed extension's ``PI_CREATED`` line names (none: [])."""
    for line in text.splitlines():
        if line.startswith(PI_CREATED):
            try:
                names = json.loads(line[len(PI_CREATED):])
            except ValueError:
                return []
            return [Path(n) for n in names if isinstance(n, str)] \
                if isinstance(names, list) else []
    return []


def _install_pi(folder: Path, home: Path) -> InstallResult:
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--settings: {folder} is a file; pi needs its extensions folder")
    target = folder / PI_FILE
    env = shutil.which("env") or "/usr/bin/env"
    text = pi_extension_text([env, f"CONTINUITY_HOME={home}", *hook_argv()],
                             [env, f"CONTINUITY_HOME={home}", *tool_argv()])
    mcp = McpRegistration(target, mcp_tool_names("pi"), "the extension's own tools")
    created = _missing_folders(folder)
    old = target.read_text("utf-8", errors="replace") if target.exists() else None
    if old is not None:
        if PI_MARKER not in old:
            raise InputError(f"{target} exists and is not continuity's extension; move it "
                             "away first")
        created = _created_folders(old)  # a reinstall keeps what the first one created
    if created:
        text += PI_CREATED + json.dumps([str(p) for p in created]) + "\n"
    if old is not None:
        if old == text:
            return InstallResult("pi", target, "unchanged", home=home, mcp=mcp)
    _atomic_bytes(target, text.encode("utf-8"))
    return InstallResult("pi", target, "installed", home=home, mcp=mcp)


def _uninstall_pi(folder: Path) -> InstallResult:
    target = folder / PI_FILE
    if not target.exists():
        return InstallResult("pi", target, "absent")
    text = target.read_text("utf-8", errors="replace")
    if PI_MARKER not in text:
        raise InputError(f"{target} is not continuity's extension; left in place")
    target.unlink()
    for created in _created_folders(text):  # innermost first; only while empty
        try:
            created.rmdir()
        except OSError:  # not empty (pi or the user put something there), or gone
            break
    return InstallResult("pi", target, "removed")


#: In the workspace: where ``hooks install`` last wrote each harness's hooks (``{harness:
#: path}``), so ``continuity doctor`` checks a ``--settings`` file too, not only the default.
INSTALLED_FILE = "hooks-installed.json"


def _record(home: str | os.PathLike[str]) -> dict[str, Any]:
    """``<home>/INSTALLED_FILE`` as read ({} when absent or not a JSON object)."""
    try:
        data = json.loads((Path(home) / INSTALLED_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_record(home: str | os.PathLike[str], data: dict[str, Any]) -> None:
    from continuity.core.private import private_dir, write_private

    private_dir(Path(home))
    write_private(Path(home) / INSTALLED_FILE,
                  (json.dumps(data, indent=1, sort_keys=True) + "\n").encode())


def record_install(home: str | os.PathLike[str], harness: str,
                   path: str | os.PathLike[str],
                   mcp: dict[str, str] | None = None) -> None:
    """Note in ``<home>/INSTALLED_FILE`` that ``harness``'s hooks were installed at ``path``
    (absolute) and, when ``mcp`` is given, the MCP tools registered for it (``{logical:
    name}``, under ``"mcp"``, which ``installed_mcp_tools`` reads; {} drops the harness's
    entry: none registered). Every
    other key is kept (the ``"mcp"`` of the other harnesses too). Owner-only file, written
    whole. Raises ``OSError``."""
    data = _record(home)
    data[harness] = str(Path(path).expanduser().absolute())
    if mcp is not None:
        known = data.get("mcp") if isinstance(data.get("mcp"), dict) else {}
        known = {k: v for k, v in known.items() if k != harness}
        if mcp:
            known[harness] = dict(mcp)
        if known:
            data["mcp"] = known
        else:
            data.pop("mcp", None)
    _write_record(home, data)


def forget_mcp_tools(home: str | os.PathLike[str], harness: str) -> None:
    """Drop ``harness``'s MCP tools from ``<home>/INSTALLED_FILE`` (``hooks uninstall``: the
    injected text then names none of them). Nothing happens when none are recorded. Raises
    ``OSError``."""
    data = _record(home)
    known = data.get("mcp")
    if not isinstance(known, dict) or harness not in known:
        return
    del known[harness]
    if not known:
        del data["mcp"]
    _write_record(home, data)


def installed_paths(home: str | os.PathLike[str]) -> dict[str, str]:
    """``{harness: path}`` from ``<home>/INSTALLED_FILE`` ({} when absent or unreadable)."""
    try:
        data = json.loads((Path(home) / INSTALLED_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(data, dict) else {}


#: issue 39: continuity's MCP tools by their logical name (what the brief and the injected
#: texts may name), as ``hooks install`` registers them.
MCP_TOOLS = ("search", "show", "recall", "continuation", "remember", "checkpoint")
#: issue 39: the tool each harness loads its deferred MCP tools with (observed with the real
#: CLIs: Claude Code 2.1.332 lists MCP tools by name and loads them with ``ToolSearch``; Codex
#: 0.171.0 offers every MCP tool only through ``tool_search``); pi's tools are its own.
MCP_LOADERS = {"claude-code": "ToolSearch", "codex": "tool_search"}


def installed_mcp_tools(home: str | os.PathLike[str], harness: str) -> dict[str, str]:
    """``{logical tool: the name the harness's model sees it by}`` for the continuity tools
    that ``hooks install HARNESS`` registered for the workspace at ``home`` (recorded in
    ``<home>/INSTALLED_FILE`` under ``"mcp"``); {} when none were registered, so the text we
    inject names no tool the harness lacks (issue 39). Never raises."""
    try:
        data = json.loads((Path(home) / INSTALLED_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    mcp = data.get("mcp") if isinstance(data, dict) else None
    names = mcp.get(harness) if isinstance(mcp, dict) else None
    if not isinstance(names, dict):
        return {}
    return {k: v for k, v in names.items() if k in MCP_TOOLS and isinstance(v, str) and v}
