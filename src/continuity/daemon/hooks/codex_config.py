"""Codex's ``config.toml`` beside ``hooks.json``: the trust of our hooks, and the block of our MCP
server (``mcp_install.codex_mcp_block``) written into it; for ``install.install``,
``install.uninstall`` and ``continuity doctor``.

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
not TOML, an inline ``hooks.state``), install writes nothing at all and fails
(``InstallIncomplete``, exit 1), naming the file and the way out (fix it, or ``--no-trust`` and
``CODEX_TRUST_STEP``; fresh-user review of issue 42: it installed untrusted hooks and exited 0).
``trust=False`` leaves trust to the user. ``uninstall`` removes the
block, restoring the backup's bytes when nothing else changed. ``codex_trust`` reports the
state now (for ``hooks install`` and ``continuity doctor``).

Install writes the MCP block (issue 39; ``mcp_install``) in the same pass
(``_plan_codex_config``, worked out before any file is written), before the trust block; a
part the file cannot take fails the install, nothing written. Uninstall removes both
(``_remove_codex_trust``).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity.core.text import object_at
from continuity.daemon.hooks._files import (
    BACKUP_SUFFIX,
    PendingWrite,
    _atomic_bytes,
    _is_ours,
    _read,
    _through_link,
    default_path,
)
from continuity.daemon.hooks.mcp_install import (
    MCP_BEGIN,
    MCP_END,
    MCP_SERVER_NAME,
    McpRegistration,
    codex_mcp_block,
    mcp_argv,
    mcp_tool_names,
    refused,
)

#: Codex's snake_case event names (codex-rs ``hook_event_key_label``), used in trust keys.
CODEX_EVENT_LABELS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "PreCompact": "pre_compact",
    "PostCompact": "post_compact",
    "Stop": "stop",
    "SessionEnd": "session_end",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "PermissionRequest": "permission_request",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
}
TRUST_BEGIN = (
    "# >>> continuity: Codex trusts continuity's hooks (written by `continuity hooks "
    "install codex`; `continuity hooks uninstall codex` removes it)"
)
TRUST_END = "# <<< continuity"
#: What a user has to do when install could not write the trust state.
CODEX_TRUST_STEP = (
    'run `codex` once (the interactive TUI), open /hooks ("Hooks need '
    'review") and trust the continuity hooks; `codex exec` skips untrusted '
    "hooks silently"
)


def codex_hook_hash(event: str, hook: dict[str, Any], matcher: str | None = None) -> str:
    """The ``trusted_hash`` Codex expects for one command ``hook`` (``{"command", "timeout",
    "async"?, "statusMessage"?}``) of ``event`` (native name, ``SessionStart``) in a group with
    ``matcher`` (module docstring, Codex trust; codex-rs ``command_hook_hash``). A timeout
    missing is Codex's default of 600 s. Raises ``KeyError`` for an event Codex does not know."""
    handler: dict[str, Any] = {
        "type": "command",
        "command": str(hook.get("command", "")),
        "timeout": max(1, int(hook.get("timeout") or 600)),
        "async": bool(hook.get("async", False)),
    }
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


def codex_our_hooks(
    hooks_path: Path, data: dict[str, Any] | None = None
) -> list[tuple[str, str, str]]:
    """``[(key, native_event, trusted_hash)]`` of our hooks in ``hooks.json`` (``data``: its
    parsed content, read from ``hooks_path`` when None), in file order."""
    if data is None:
        data, _raw = _read(hooks_path)
    prefix = codex_hooks_key_path(hooks_path)
    found = []
    hooks = object_at(data, "hooks")
    for native, groups in hooks.items():
        if native not in CODEX_EVENT_LABELS or not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            inner = group.get("hooks") if isinstance(group, dict) else None
            for h, hook in enumerate(inner if isinstance(inner, list) else []):
                if _is_ours(hook):
                    matcher = group.get("matcher")
                    key = f"{prefix}:{CODEX_EVENT_LABELS[native]}:{g}:{h}"
                    found.append(
                        (
                            key,
                            native,
                            codex_hook_hash(
                                native, hook, matcher if isinstance(matcher, str) else None
                            ),
                        )
                    )
    return found


@dataclass(frozen=True)
class CodexTrust:
    """Whether Codex runs our hooks right now. ``status``: ``trusted`` (every hook of ours has
    its current hash in ``config.toml``), ``untrusted`` (none or only some do: Codex skips the
    others silently), ``no-hooks`` (none of ours in ``hooks.json``) or ``unreadable``
    (``config.toml`` is not TOML). ``untrusted_keys``: the hooks Codex skips; ``note``: why
    install could not write the trust; ``next_step``: what the user has to do (None when
    trusted); ``install_command``: the ``continuity hooks install codex`` that redoes this
    install, with the ``--home`` and ``--settings`` in use (issue 45 item 2: run as printed,
    a bare one moved the hooks to the default workspace)."""

    status: str
    hooks: int
    trusted: int
    config: Path
    untrusted_keys: tuple[str, ...] = ()
    note: str | None = None
    install_command: str = "continuity hooks install codex"

    @property
    def next_step(self) -> str | None:
        if self.status == "trusted":
            return None
        run = self.install_command
        if self.status == "no-hooks":
            return f"run `{run}`"
        if self.status == "unreadable":
            return f"fix {self.config} (not valid TOML), then run `{run}`"
        return f"run `{run}` again (it writes the trust), or " + CODEX_TRUST_STEP

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "hooks": self.hooks,
            "trusted": self.trusted,
            "config": str(self.config),
            "untrusted_keys": list(self.untrusted_keys),
            "note": self.note,
            "next_step": self.next_step,
        }


def codex_install_command(
    hooks_path: str | os.PathLike[str] | None, home: str | os.PathLike[str] | None
) -> str:
    """The ``continuity hooks install codex`` command that installs into ``hooks_path`` for
    workspace ``home``: ``--home`` when given, ``--settings`` when ``hooks_path`` is not
    Codex's default ``hooks.json``, each shell-quoted (issue 45 item 2)."""
    import shlex

    words = ["continuity", "hooks", "install", "codex"]
    if hooks_path and os.path.abspath(Path(hooks_path).expanduser()) != os.path.abspath(
        default_path("codex")
    ):
        words += ["--settings", str(hooks_path)]
    if home:
        words += ["--home", str(home)]
    return shlex.join(words)


def codex_trust(
    hooks_path: str | os.PathLike[str] | None = None,
    *,
    note: str | None = None,
    home: str | os.PathLike[str] | None = None,
) -> CodexTrust:
    """Whether Codex trusts our hooks of ``hooks_path`` (default ``default_path("codex")``) now,
    comparing the ``trusted_hash`` of each in ``config.toml`` with its current hash (module
    docstring, Codex trust). ``home``: the workspace the hooks serve, carried into
    ``next_step``'s command (``codex_install_command``). Raises ``InputError`` when
    ``hooks.json`` is not a JSON object."""
    import tomllib

    given = Path(hooks_path).expanduser() if hooks_path else default_path("codex")
    command = codex_install_command(given, home)
    target = _through_link(given)
    config = _codex_config_path(given)
    ours = codex_our_hooks(given, _read(target)[0])
    if not ours:
        return CodexTrust("no-hooks", 0, 0, config, note=note, install_command=command)
    try:
        state = tomllib.loads(config.read_text("utf-8")) if config.is_file() else {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return CodexTrust(
            "unreadable",
            len(ours),
            0,
            config,
            tuple(k for k, _e, _h in ours),
            note=note,
            install_command=command,
        )
    hooks_state = (
        state.get("hooks", {}).get("state", {}) if isinstance(state.get("hooks"), dict) else {}
    )
    untrusted = tuple(
        k
        for k, _e, h in ours
        if not isinstance(hooks_state.get(k), dict)
        or hooks_state[k].get("trusted_hash") != h
        or hooks_state[k].get("enabled") is False
    )
    trusted = len(ours) - len(untrusted)
    return CodexTrust(
        "trusted" if not untrusted else "untrusted",
        len(ours),
        trusted,
        config,
        untrusted,
        note=note,
        install_command=command,
    )


#: A ``[hooks.state."KEY"]`` (or ``'KEY'``) table header line, the key's TOML string captured.
_STATE_HEADER = re.compile(
    r'^\s*\[\s*hooks\s*\.\s*state\s*\.\s*("(?:[^"\\]|\\.)*"|\'[^\']*\')\s*\]\s*(#.*)?$'
)


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
        return (
            server["command"] == argv[0]
            and server["args"] == argv[1:]
            and server["env"] == {"CONTINUITY_HOME": str(home)}
        )
    except (tomllib.TOMLDecodeError, KeyError, TypeError):
        return False


def _toml_problem(text: str) -> str | None:
    """Why ``text`` is not TOML (the parser's message, with its line), else None."""
    import tomllib

    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return f"not valid TOML ({exc})"
    return None


def _plan_codex_config(
    hooks_path: Path, data: dict[str, Any], *, trust: bool, home: Path
) -> tuple[McpRegistration, PendingWrite | None]:
    """What to write into the ``config.toml`` beside ``hooks_path``: our MCP server
    (``codex_mcp_block``, issue 39) and, with ``trust``, the trust tables of our hooks in
    ``hooks_path`` (parsed ``data``; module docstring, Codex trust), both at the end, MCP
    first. Returns the MCP registration and the write (None when the file holds both already).
    Raises ``InstallIncomplete``, naming the file and what to fix, when it cannot take a part
    (a ``config.toml`` that cannot be read or is not TOML, an inline ``hooks.state``, a
    ``[mcp_servers.continuity]`` of the user's): then install writes nothing."""
    config = _codex_config_path(hooks_path)
    config_file = _through_link(config)
    no_trust = "or install with --no-trust and trust the hooks in Codex's /hooks"
    try:
        raw = config_file.read_bytes() if config_file.exists() else None
        text = raw.decode("utf-8") if raw is not None else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise refused("codex", f"{config}: cannot read it ({exc})", "fix that file") from None
    ours = codex_our_hooks(hooks_path, data)
    kept = _strip_block(text, MCP_BEGIN, MCP_END)
    if trust:
        kept = _strip_trust(kept, {k for k, _e, _h in ours})
    if kept and not kept.endswith("\n"):
        kept += "\n"
    problem = _toml_problem(kept)
    if problem is not None:
        raise refused(
            "codex",
            f"{config}: {problem}",
            "fix that file" + (f" ({no_trust} once it parses)" if trust else ""),
        )
    block = "".join(
        f"[hooks.state.{json.dumps(k, ensure_ascii=False)}]\ntrusted_hash = {json.dumps(h)}\n"
        for k, _e, h in ours
    )
    trust_block = f"{TRUST_BEGIN}\n{block}{TRUST_END}\n" if trust and ours else ""
    if trust and not _codex_state_ok(kept + trust_block, ours):
        raise refused(
            "codex",
            f"{config}: the trust state of continuity's hooks cannot be added to it (its "
            "hooks or hooks.state is not a table of tables, e.g. written inline)",
            f"write it as [hooks.state] tables, {no_trust}",
        )
    mcp_block = codex_mcp_block(home)
    new = kept + mcp_block + trust_block
    if not (_codex_mcp_ok(new, home) and (not trust or _codex_state_ok(new, ours))):
        raise refused(
            "codex",
            f"{config} cannot take [mcp_servers.{MCP_SERVER_NAME}] (a server of that name that "
            "is not continuity's, or mcp_servers not a table)",
            "rename or remove that server there",
        )
    pending = PendingWrite(config_file, raw, new.encode("utf-8")) if new != text else None
    return McpRegistration(config, mcp_tool_names("codex")), pending


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
