"""``continuity hooks install|uninstall HARNESS`` (claude-code, codex, pi, opencode, gemini-cli,
qwen-code, copilot-cli): wire a harness to the daemon.

**Claude Code** (``~/.claude/settings.json``) and **Codex** (``~/.codex/hooks.json``: Codex reads
hooks from ``hooks.json`` or inline ``[hooks]`` tables of ``config.toml`` beside each config layer;
we use the JSON file so no TOML is rewritten, and ``hooks.json`` has the same shape as Claude
Code's ``hooks`` object; Gemini CLI's ``settings.json`` too, ``GEMINI_EVENTS``, and Qwen Code's,
``QWEN_EVENTS``, each with our MCP server in its ``mcpServers``): for each event in
``CLAUDE_EVENTS``/``CODEX_EVENTS`` one matcher group
``{"hooks": [{"type": "command", "command": "<hook command> EVENT --harness H", "timeout": S}]}``
is appended under ``hooks.<Event>`` (PreToolUse's with Claude Code's ``matcher``,
``TOOL_MATCHERS``: recall before an edit or a shell command, issue 40). Codex gets SessionEnd too:
it sends one at the end of every
``codex exec`` (issue 12, fault 3; harnesses.md). Our entries are recognised by their command
(``continuity.cli.hookcmd`` or ``continuity-hook``), so:

- **install** first removes entries of ours (an older command path), then adds the current
  ones; when that changes nothing, nothing is written. Before the first write the file is
  copied to ``<file>.continuity-backup`` (kept; a later install never overwrites it). Writes
  are atomic (temp file, then rename) and keep the file's mode. Other keys, other hooks and
  their order are kept.
- **install is all or nothing**: every file's new bytes are worked out first
  (``PendingWrite``); when a file of the user's stops a part asked for (continuity's tools:
  a file that is not JSON, a server named ``continuity`` that is not ours; Codex's trust: a
  ``config.toml`` that is not TOML or holds ``hooks.state`` inline) ``InstallIncomplete``
  (exit 1) names the file and what to fix, and no file is written (fresh-user review of issue
  42: such an install warned, wrote the rest and exited 0).
- **uninstall** removes exactly our entries and the containers that held only them; when the
  result equals the backup, the backup's bytes are restored (formatting included) and the
  backup removed; a file install created is deleted when nothing else is left in it.

A file that is not a JSON object, or a path that is a folder, is never overwritten
(``InputError``). Gemini CLI's and Qwen Code's ``settings.json`` may hold ``//`` and ``/* */``
comments and trailing commas, as those CLIs read it (``JSONC_HARNESSES``): install and
uninstall edit such a file only where it changes, so every comment stays (``_jsonc``), and
refuse, naming the file and the comment's line, when a comment sits inside a value that must
be rewritten whole; the backup's bytes still come back at uninstall. A settings path that is
a symlink is written through: the link's target is backed up, rewritten and restored, so the
link itself survives install and uninstall.

**Workspace.** Harnesses run hooks without ``$CONTINUITY_HOME``, so the installed command
carries the workspace the daemon uses (``home``, default ``continuity.core.config.resolve_home()``,
made absolute): ``CONTINUITY_HOME=<home> <hook command>`` for the shell commands of Claude Code
and Codex, ``env CONTINUITY_HOME=<home> <hook command>`` as pi's argv (``hookcmd`` reads
``$CONTINUITY_HOME`` to find ``daemon.url``, the token and the spool).

**Codex trust** (issue 12, fault 2): Codex runs a hook of ``hooks.json`` only once the
``config.toml`` beside it trusts that hook; install writes the trust (``trust=False`` leaves it to
the user), uninstall removes it, ``codex_trust`` reports it: ``codex_config``.

**continuity's tools** (issue 39): install also registers continuity's MCP tools where each
harness takes them, uninstall removes exactly that (``mcp_install``); ``record_install`` keeps
the names each harness's model sees under ``"mcp"`` for ``installed_mcp_tools``.

**Copilot CLI** (``copilot_config``): our own hooks file ``continuity.json`` in its user hooks
folder (``$COPILOT_HOME/hooks`` or ``~/.copilot/hooks``; every ``*.json`` there is loaded), the
same matcher groups under its camelCase events (``COPILOT_EVENTS``; timeouts in seconds), and
our MCP server in ``mcp-config.json`` beside that folder (backed up, restored at uninstall).
Uninstall deletes the file install created, and the ``hooks`` folder when it is left empty.

**OpenCode**: OpenCode 1.x loads every ``.js``/``.ts`` file of ``<config>/opencode/plugin/``
(``$XDG_CONFIG_HOME`` or ``~/.config``) as a plugin. install writes ``continuity.js`` there (our
``opencode_plugin/continuity.js``, the hook command filled in, ``OPENCODE_MARKER``); uninstall
deletes it and the empty folders install created, as for pi. No MCP server is registered.

**pi**: pi loads TypeScript extensions from ``<agentDir>/extensions/`` (``agentDir`` =
``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``). install writes ``continuity.ts`` there (our
``pi_extension/continuity.ts`` with the hook command filled in); uninstall deletes it. A
``continuity.ts`` there that is not ours is left alone (``InputError``). The folders install had
to create (``extensions``, and ``~/.pi/agent`` on a machine where pi never ran) are named in the
file (``PI_CREATED``), and uninstall removes those that are empty then (issue 12).

The hook command is ``<python> -I -S -c "...from continuity.cli.hookcmd import main; main()"``
(``hook_argv``): the fast path (no CLI imports, no ``site``), with absolute paths, so the hook
works whatever PATH or environment the harness gives it. The ``continuity-hook`` console script
runs the same code, with ``site``.

**Where the code lives.** Here: the entry points (``install``, ``uninstall``, ``hook_argv``,
``hook_command``, ``hook_home``, ``InstallResult``), the hooks merged into the settings
(``_without_ours``, ``read_settings``, ``is_our_hook``), pi's extension and the install record
(``INSTALLED_FILE``, ``record_install``, ``installed_paths``, ``installed_mcp_tools``,
``forget_mcp_tools``, ``MCP_LOADERS``). ``codex_config``: Codex's ``config.toml`` (the trust,
and the MCP block written with it). ``mcp_install``: the MCP registration (the server's
command, Claude Code's ``~/.claude.json`` and allow rule, Codex's block, the tool names each
model sees, ``MCP_TOOLS``). ``copilot_config``: Copilot CLI's MCP file beside its hooks folder.
``_files``: the paths, reading, backups and whole writes they all share. Imports go one way
(``install`` → ``codex_config``/``copilot_config`` → ``mcp_install`` → ``_files``); every
public name of those modules is importable from here as before.

Over 600 lines: the harnesses' install and uninstall share the merge of settings and the
file-we-own logic (pi's extension, OpenCode's plugin) that lives here; splitting the two file
installs out would split ``_missing_folders``/``_created_folders`` from their one caller each.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from continuity.core.config import resolve_home
from continuity.core.errors import InputError
from continuity.core.text import object_at

# ``X as X``: moved out with the split, still importable from here (callers and tests use them).
from continuity.daemon.hooks._files import (
    BACKUP_SUFFIX as BACKUP_SUFFIX,
    JSONC_HARNESSES as JSONC_HARNESSES,
    PendingWrite,
    _atomic_bytes,
    _commented,
    _is_ours,
    _put_back,
    _read,
    _render,
    _through_link,
    default_path as default_path,
)
from continuity.daemon.hooks.codex_config import (
    CODEX_EVENT_LABELS as CODEX_EVENT_LABELS,
    CODEX_TRUST_STEP as CODEX_TRUST_STEP,
    TRUST_BEGIN as TRUST_BEGIN,
    TRUST_END as TRUST_END,
    CodexTrust as CodexTrust,
    _plan_codex_config,
    _remove_codex_trust,
    codex_hook_hash as codex_hook_hash,
    codex_hooks_key_path as codex_hooks_key_path,
    codex_our_hooks as codex_our_hooks,
    codex_trust as codex_trust,
)
from continuity.daemon.hooks.copilot_config import (
    drop_empty_hooks_folder,
    register_copilot_mcp,
    unregister_copilot_mcp,
)
from continuity.daemon.hooks.mcp_install import (
    CLAUDE_ALLOW_RULE as CLAUDE_ALLOW_RULE,
    MCP_BEGIN as MCP_BEGIN,
    MCP_END as MCP_END,
    MCP_SERVER_NAME as MCP_SERVER_NAME,
    MCP_TOOL_NAMES as MCP_TOOL_NAMES,
    MCP_TOOLS as MCP_TOOLS,
    SETTINGS_MCP as SETTINGS_MCP,
    McpRegistration as McpRegistration,
    _add_allow_rule,
    _claude_registers_mcp,
    _is_our_server as _is_our_server,
    _register_claude_mcp,
    _rule_was_users,
    _unregister_claude_mcp,
    claude_mcp_config as claude_mcp_config,
    codex_mcp_block as codex_mcp_block,
    drop_our_server,
    mcp_argv as mcp_argv,
    mcp_tool_names as mcp_tool_names,
    register_settings_mcp,
    tool_argv as tool_argv,
)

#: Claude Code event → (our event, timeout in seconds). SessionEnd: 1.5 s default budget.
CLAUDE_EVENTS = {
    "SessionStart": ("session-start", 10),
    "UserPromptSubmit": ("user-prompt-submit", 5),
    "PreCompact": ("pre-compaction", 10),
    "PostCompact": ("post-compaction", 5),
    "Stop": ("stop", 5),
    "SessionEnd": ("session-end", 2),
    "PreToolUse": ("pre-tool-use", 3),
}
#: Codex: the same events, SessionEnd included (issue 12, fault 3).
CODEX_EVENTS = dict(CLAUDE_EVENTS)
#: The ``matcher`` of our PreToolUse group per harness (issue 40: recall before an edit or a
#: shell command; a regex of tool names): Claude Code runs the hook only for these tools.
#: Codex gets none (every tool: its names for edits differ between releases; the daemon
#: answers nothing for the others).
TOOL_MATCHERS = {
    "claude-code": "Edit|Write|MultiEdit|NotebookEdit|Bash",
    # Qwen Code 0.24.4's own tool names (a ``|`` list it matches name by name)
    "qwen-code": "edit|write_file|notebook_edit|run_shell_command",
}
#: Gemini CLI (docs/hooks/reference.md): BeforeAgent = a prompt, AfterAgent = our stop; ms.
GEMINI_EVENTS = {
    "SessionStart": ("session-start", 10),
    "BeforeAgent": ("user-prompt-submit", 5),
    "PreCompress": ("pre-compaction", 10),
    "AfterAgent": ("stop", 5),
    "SessionEnd": ("session-end", 2),
}
#: Qwen Code 0.24.4 (its hooks/types.ts): Claude Code's events, input and output, seconds. It
#: sends SessionEnd from its interactive interface, ``/clear`` and ACP only, none at the end of
#: a headless ``qwen -p`` (the daemon's idle sweep ends those sessions).
QWEN_EVENTS = dict(CLAUDE_EVENTS)
#: Copilot CLI 1.0.102 (its camelCase hook events; agentStop = our stop; seconds). No
#: preToolUse: its additionalContext reaches the model after the tool's result, and every
#: tool call would wait on a hook process.
COPILOT_EVENTS = {
    "sessionStart": ("session-start", 10),
    "userPromptSubmitted": ("user-prompt-submit", 5),
    "preCompact": ("pre-compaction", 10),
    "agentStop": ("stop", 5),
    "sessionEnd": ("session-end", 3),
}
#: The hook's own deadline where the harness gives more time than ``hookcmd.TIMEOUTS``
#: (whose 1 s for session-end fits Claude Code, which kills a SessionEnd hook after 1.5 s):
#: Copilot CLI waits the 3 s we ask, and in a ``-p`` run sends sessionEnd right after
#: agentStop, while the daemon takes in the turn's events file, so 1 s spooled the end of a
#: session the daemon was up for on a busy machine.
HOOK_DEADLINES = {"copilot-cli": {"session-end": 2.5}}
HARNESS_EVENTS = {
    "claude-code": CLAUDE_EVENTS,
    "codex": CODEX_EVENTS,
    "gemini-cli": GEMINI_EVENTS,
    "qwen-code": QWEN_EVENTS,
    "copilot-cli": COPILOT_EVENTS,
}
#: Harnesses whose hook entries carry a ``name`` (their ``/hooks`` list shows it) → the
#: factor from our timeouts (seconds) to theirs (Gemini CLI: milliseconds).
NAMED_ENTRIES = {"gemini-cli": 1000, "qwen-code": 1}
PI_FILE = "continuity.ts"
PI_MARKER = "marker: continuity-pi-extension v1"
#: The comment line of our pi extension naming the folders its install created (JSON list,
#: innermost first); uninstall removes each one that is empty by then.
PI_CREATED = "// continuity-created-folders: "
#: OpenCode's plugin (``opencode_plugin/continuity.js``), installed into its plugin folder.
OPENCODE_FILE = "continuity.js"
OPENCODE_MARKER = "marker: continuity-opencode-plugin v1"


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
    trust: CodexTrust | None = None
    #: Install only: continuity's MCP tools as registered (issue 39; ``McpRegistration``).
    mcp: McpRegistration | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "harness": self.harness,
            "path": str(self.path),
            "action": self.action,
            "backup": str(self.backup) if self.backup else None,
            "home": str(self.home) if self.home else None,
            "file_kept": self.file_kept,
            "backup_left": str(self.backup_left) if self.backup_left else None,
        }
        if self.trust is not None:
            out["trust"] = self.trust.to_dict()
        if self.mcp is not None:
            out["mcp"] = self.mcp.to_dict()
        return out


def hook_argv() -> list[str]:
    """The hook command as argv: this Python with ``-I -S`` (no ``site``: the hook imports
    only the standard library and ``continuity``, whose folder is appended to ``sys.path``)
    running ``continuity.cli.hookcmd.main``; ~4 ms less than a console script's start."""
    import continuity

    root = Path(continuity.__file__).resolve().parents[1]
    code = (
        f"import sys; sys.path.append({json.dumps(str(root))}); "
        "from continuity.cli.hookcmd import main; main()"
    )
    return [sys.executable, "-I", "-S", "-c", code]


def hook_command(
    harness: str, event: str, home: Path | None = None, seconds: float | None = None
) -> str:
    """The shell command a harness runs for ``event``; with ``home``, prefixed by a
    shell-quoted ``CONTINUITY_HOME=<home>`` assignment (module docstring, Workspace); with
    ``seconds``, the hook's own deadline (``--timeout``) instead of ``hookcmd.TIMEOUTS``."""
    argv = [*hook_argv(), event, "--harness", harness]
    if seconds is not None:
        argv += ["--timeout", f"{seconds:g}"]
    words = [shlex.quote(a) for a in argv]
    if home is not None:
        words.insert(0, "CONTINUITY_HOME=" + shlex.quote(str(home)))
    return " ".join(words)


def hook_home(home: str | os.PathLike[str] | None = None) -> Path:
    """The absolute workspace the hooks will point at: ``home`` or the resolved current one
    (``continuity.core.config.resolve_home``). Raises ``ConfigError`` for an empty ``home``."""
    return Path(os.path.abspath(resolve_home(home)))


def install(
    harness: str,
    path: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    *,
    trust: bool = True,
) -> InstallResult:
    """Install our hooks for ``harness`` (module docstring). ``path``: the settings file
    (Claude Code, Codex) or the extensions folder (pi); ``home``: the workspace baked into the
    commands (default: the current one); ``trust`` (Codex): write the trust state Codex needs
    to run them (module docstring, Codex trust). All or nothing: raises ``InputError`` for a
    settings file it cannot use, ``InstallIncomplete`` when a file of the user's stops a part
    (continuity's tools, Codex's trust), in both cases before any file is written."""
    given = Path(path).expanduser() if path else default_path(harness)
    where = hook_home(home)
    if harness == "pi":
        return _install_pi(given, where)
    if harness == "opencode":
        return _install_opencode(given, where)
    events = _events(harness)
    target = _through_link(given)
    before, raw = _read(target, jsonc=harness in JSONC_HARNESSES)
    claude_mcp = harness == "claude-code" and _claude_registers_mcp(given)
    after = _without_ours(before, keep_rule=_rule_was_users(target))
    hooks = after.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InputError(f"{target}: 'hooks' must be an object")
    for native, (event, timeout) in events.items():
        groups = hooks.setdefault(native, [])
        if not isinstance(groups, list):
            raise InputError(f"{target}: hooks.{native} must be a list")
        entry: dict[str, Any] = {
            "type": "command",
            "command": hook_command(
                harness, event, where, HOOK_DEADLINES.get(harness, {}).get(event)
            ),
            "timeout": timeout,
        }
        if harness in NAMED_ENTRIES:
            scale = NAMED_ENTRIES[harness]
            entry = {"name": f"continuity-{event}", **entry, "timeout": timeout * scale}
        group: dict[str, Any] = {"hooks": [entry]}
        if native == "PreToolUse" and harness in TOOL_MATCHERS:
            group = {"matcher": TOOL_MATCHERS[harness], **group}
        groups.append(group)
    # Every part is worked out before any file is written: a part a file of the user's stops
    # raises InstallIncomplete (exit 1) and leaves every file as it was.
    mcp: McpRegistration | None = None
    pending: list[PendingWrite] = []
    if harness in SETTINGS_MCP:  # Gemini CLI, Qwen Code: in the settings.json with the hooks
        mcp = register_settings_mcp(harness, given, after, where)
    elif harness == "copilot-cli":  # its mcp-config.json beside the hooks folder
        mcp, write = register_copilot_mcp(given, where)
        pending += [write] if write else []
    elif claude_mcp:
        _add_allow_rule(target, after)
        mcp, write = _register_claude_mcp(claude_mcp_config(), where)
        pending += [write] if write else []
    elif harness == "codex":
        mcp, write = _plan_codex_config(given, after, trust=trust, home=where)
        pending += [write] if write else []
    unchanged = after == before and raw is not None
    if not unchanged:  # comments kept (Gemini CLI, Qwen Code), else laid out anew
        payload = _render(target, after, raw if _commented(raw) else None)
        pending.insert(0, PendingWrite(target, raw, payload))
    backups = [w.apply() for w in pending]
    action, backup = ("unchanged", None) if unchanged else ("installed", backups[0])
    if harness != "codex":
        if mcp is None:
            mcp = McpRegistration(
                None,
                {},
                "not registered: --settings is not Claude Code's "
                f"user settings ({default_path(harness)}); register it "
                f"with `{claude_mcp_add_command(where)}`",
            )
        return InstallResult(harness, given, action, backup, home=where, mcp=mcp)
    return InstallResult(
        harness,
        given,
        action,
        backup,
        home=where,
        trust=codex_trust(given, home=where),
        mcp=mcp,
    )


def claude_mcp_add_command(home: Path) -> str:
    """The ``claude mcp add`` command line that registers our MCP server for the workspace
    ``home`` as ``install`` would (user scope, ``CONTINUITY_HOME`` in its environment),
    shell-quoted: printed when ``--settings`` is not Claude Code's user settings. Issue 45
    item 3: it lacked ``-e CONTINUITY_HOME=<home>``, so run as printed the server read the
    default workspace."""
    return shlex.join(
        [
            "claude",
            "mcp",
            "add",
            "--scope",
            "user",
            "-e",
            f"CONTINUITY_HOME={home}",
            "continuity",
            "--",
            *mcp_argv(),
        ]
    )


def uninstall(harness: str, path: str | os.PathLike[str] | None = None) -> InstallResult:
    """Remove our hooks for ``harness`` (module docstring). Raises ``InputError``."""
    given = Path(path).expanduser() if path else default_path(harness)
    if harness == "pi":
        return _uninstall_pi(given)
    if harness == "opencode":
        return _uninstall_owned("opencode", given / OPENCODE_FILE, OPENCODE_MARKER)
    _events(harness)
    target = _through_link(given)
    if harness == "codex":
        _remove_codex_trust(given)
    if harness == "claude-code" and _claude_registers_mcp(given):
        _unregister_claude_mcp(claude_mcp_config())
    if harness == "copilot-cli":
        unregister_copilot_mcp(given)
    before, raw = _read(target, jsonc=harness in JSONC_HARNESSES)
    after = _without_ours(before, keep_rule=_rule_was_users(target))
    if raw is None or after == before:
        return InstallResult(harness, given, "absent")
    done, backup_left = _put_back(target, after, raw)
    if done == "restored":
        return InstallResult(harness, given, "restored")
    if done == "deleted":  # install created this file; nothing else is in it
        if harness == "copilot-cli":
            drop_empty_hooks_folder(target)
        return InstallResult(harness, given, "removed")
    return InstallResult(harness, given, "removed", file_kept=True, backup_left=backup_left)


def _events(harness: str) -> dict[str, tuple[str, int]]:
    if harness not in HARNESS_EVENTS:
        raise InputError(
            "harness: must be claude-code, codex, pi, opencode, gemini-cli, qwen-code or "
            f"copilot-cli (got {harness!r})"
        )
    return HARNESS_EVENTS[harness]


def _without_ours(data: dict[str, Any], *, keep_rule: bool = False) -> dict[str, Any]:
    """A copy of ``data`` without our hook entries, and without the groups, event lists and
    ``hooks`` object that held nothing else; and (Claude Code) without our MCP allow rule
    ``CLAUDE_ALLOW_RULE`` in ``permissions.allow`` (and the list and object that held only
    it), unless ``keep_rule`` (the user had it before install: ``_rule_was_users``)."""
    out = copy.deepcopy(data)
    drop_our_server(out)  # Gemini CLI's and Qwen Code's, in their settings.json with the hooks
    perms = out.get("permissions")
    if (
        not keep_rule
        and isinstance(perms, dict)
        and isinstance(perms.get("allow"), list)
        and CLAUDE_ALLOW_RULE in perms["allow"]
    ):
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


# ---------------------------------------------------------------------------- reading back


def read_settings(path: str | os.PathLike[str], *, jsonc: bool = False) -> dict[str, Any]:
    """The parsed settings file at ``path`` (a symlink followed), ``{}`` when absent; for
    ``continuity doctor``; ``jsonc``: comments and trailing commas allowed (Gemini CLI's and
    Qwen Code's, ``JSONC_HARNESSES``). Raises ``InputError`` for a folder or a file that is not
    a JSON object."""
    return _read(_through_link(Path(path)), jsonc=jsonc)[0]


def is_our_hook(hook: Any) -> bool:
    """True for a hook entry (``{"type": "command", "command": ...}``) that install wrote."""
    return _is_ours(hook)


# ---------------------------------------------------------------------------- pi


def pi_extension_text(argv: list[str] | None = None, tools: list[str] | None = None) -> str:
    """Our pi extension with the hook command (``argv``, default ``hook_argv()``) and the
    tool runner of its continuity tools (``tools``, default ``tool_argv()``; issue 39)
    filled in."""
    template = (
        resources.files("continuity.daemon.hooks")
        .joinpath("pi_extension", PI_FILE)
        .read_text("utf-8")
    )
    return template.replace("__CONTINUITY_HOOK_COMMAND__", json.dumps(argv or hook_argv())).replace(
        "__CONTINUITY_TOOL_COMMAND__", json.dumps(tools or tool_argv())
    )


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
                names = json.loads(line[len(PI_CREATED) :])
            except ValueError:
                return []
            return [Path(n) for n in names if isinstance(n, str)] if isinstance(names, list) else []
    return []


def _install_pi(folder: Path, home: Path) -> InstallResult:
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--settings: {folder} is a file; pi needs its extensions folder")
    target = folder / PI_FILE
    env = shutil.which("env") or "/usr/bin/env"
    text = pi_extension_text(
        [env, f"CONTINUITY_HOME={home}", *hook_argv()],
        [env, f"CONTINUITY_HOME={home}", *tool_argv()],
    )
    mcp = McpRegistration(target, mcp_tool_names("pi"), "the extension's own tools")
    created = _missing_folders(folder)
    old = target.read_text("utf-8", errors="replace") if target.exists() else None
    if old is not None:
        if PI_MARKER not in old:
            raise InputError(
                f"{target} exists and is not continuity's extension; move it away first"
            )
        created = _created_folders(old)  # a reinstall keeps what the first one created
    if created:
        text += PI_CREATED + json.dumps([str(p) for p in created]) + "\n"
    if old is not None and old == text:
        return InstallResult("pi", target, "unchanged", home=home, mcp=mcp)
    _atomic_bytes(target, text.encode("utf-8"))
    return InstallResult("pi", target, "installed", home=home, mcp=mcp)


def _uninstall_pi(folder: Path) -> InstallResult:
    return _uninstall_owned("pi", folder / PI_FILE, PI_MARKER)


def opencode_plugin_text(argv: list[str] | None = None) -> str:
    """Our OpenCode plugin with the hook command (``argv``, default ``hook_argv()``) filled
    in."""
    template = (
        resources.files("continuity.daemon.hooks")
        .joinpath("opencode_plugin", OPENCODE_FILE)
        .read_text("utf-8")
    )
    return template.replace("__CONTINUITY_HOOK_COMMAND__", json.dumps(argv or hook_argv()))


def _install_opencode(folder: Path, home: Path) -> InstallResult:
    """Write ``continuity.js`` into OpenCode's plugin folder (module docstring, OpenCode)."""
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--settings: {folder} is a file; opencode needs its plugin folder")
    target = folder / OPENCODE_FILE
    env = shutil.which("env") or "/usr/bin/env"
    text = opencode_plugin_text([env, f"CONTINUITY_HOME={home}", *hook_argv()])
    mcp = McpRegistration(None, {}, "not registered: OpenCode gets the hooks only")
    created = _missing_folders(folder)
    old = target.read_text("utf-8", errors="replace") if target.exists() else None
    if old is not None:
        if OPENCODE_MARKER not in old:
            raise InputError(f"{target} exists and is not continuity's plugin; move it away first")
        created = _created_folders(old)
    if created:
        text += PI_CREATED + json.dumps([str(p) for p in created]) + "\n"
    if old is not None and old == text:
        return InstallResult("opencode", target, "unchanged", home=home, mcp=mcp)
    _atomic_bytes(target, text.encode("utf-8"))
    return InstallResult("opencode", target, "installed", home=home, mcp=mcp)


def _uninstall_owned(harness: str, target: Path, marker: str) -> InstallResult:
    """Delete the file of ours at ``target`` (pi's extension, OpenCode's plugin) and the
    empty folders its install created. Raises ``InputError`` when the file is not ours."""
    if not target.exists():
        return InstallResult(harness, target, "absent")
    text = target.read_text("utf-8", errors="replace")
    if marker not in text:
        raise InputError(f"{target} is not continuity's {harness} file; left in place")
    target.unlink()
    for created in _created_folders(text):  # innermost first; only while empty
        try:
            created.rmdir()
        except OSError:  # not empty (the harness or the user put something there), or gone
            break
    return InstallResult(harness, target, "removed")


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
    write_private(
        Path(home) / INSTALLED_FILE, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode()
    )


def record_install(
    home: str | os.PathLike[str],
    harness: str,
    path: str | os.PathLike[str],
    mcp: dict[str, str] | None = None,
) -> None:
    """Note in ``<home>/INSTALLED_FILE`` that ``harness``'s hooks were installed at ``path``
    (absolute) and, when ``mcp`` is given, the MCP tools registered for it (``{logical:
    name}``, under ``"mcp"``, which ``installed_mcp_tools`` reads; {} drops the harness's
    entry: none registered). Every
    other key is kept (the ``"mcp"`` of the other harnesses too). Owner-only file, written
    whole. Raises ``OSError``."""
    data = _record(home)
    data[harness] = str(Path(path).expanduser().absolute())
    if mcp is not None:
        known = object_at(data, "mcp")
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
    return (
        {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}
        if isinstance(data, dict)
        else {}
    )


#: issue 39: the tool each harness loads its deferred MCP tools with (observed with the real
#: CLIs: Claude Code 2.1.332 lists MCP tools by name and loads them with ``ToolSearch``; Codex
#: 0.171.0 offers every MCP tool only through ``tool_search``; Qwen Code 0.24.4 lists them in a
#: reminder, reached through its ``tool_search`` and ``tool_call``); pi's tools are its own.
MCP_LOADERS = {"claude-code": "ToolSearch", "codex": "tool_search", "qwen-code": "tool_search"}


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
