"""The files ``hooks install`` reads and writes, shared by ``install``, ``mcp_install`` and
``codex_config`` (it imports none of them): where each harness keeps its hooks or extensions
(``default_path``); a settings file read as a JSON object (``_read``: a folder, or a file that
is not a JSON object, is ``InputError`` and never overwritten); a symlink written through
(``_through_link``: its target is read, backed up and rewritten, so the link survives; a device,
pipe or socket is refused); the one backup ``<file>.continuity-backup`` (``_backup``,
``BACKUP_SUFFIX``: made before the first write, never overwritten, with the file's mode); whole
writes (``_write``, ``_atomic_bytes``: temp file, fsync, rename, keeping the file's mode); and
our hook entries, recognised by their command (``_is_ours``, ``_OURS``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from continuity.core.errors import InputError

BACKUP_SUFFIX = ".continuity-backup"
#: Both forms of hook_argv() match, and the module path hooks installed before issue 11 ran.
_OURS = ("continuity.cli.hookcmd", "continuity-hook", "continuity.hookcmd")


def default_path(harness: str) -> Path:
    """Where the harness reads hooks (Claude Code, Codex, Gemini CLI, Qwen Code; Copilot CLI: our
    own file in ``$COPILOT_HOME/hooks`` or ``~/.copilot/hooks``), extensions (pi) or plugins
    (OpenCode: ``$XDG_CONFIG_HOME/opencode/plugin``, as OpenCode 1.x finds its global config
    folder)."""
    if harness == "claude-code":
        return Path.home() / ".claude" / "settings.json"
    if harness == "codex":
        return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "hooks.json"
    if harness == "pi":
        agent = os.environ.get("PI_CODING_AGENT_DIR") or Path.home() / ".pi" / "agent"
        return Path(agent) / "extensions"
    if harness == "opencode":
        config = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
        return Path(config) / "opencode" / "plugin"
    if harness == "gemini-cli":  # Gemini CLI's Storage: $GEMINI_CLI_HOME, else the home folder
        return Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini" / "settings.json"
    if harness == "qwen-code":  # Qwen Code 0.24.4's Storage: $QWEN_HOME, else ~/.qwen
        qwen = os.environ.get("QWEN_HOME")
        return (Path(qwen).expanduser() if qwen else Path.home() / ".qwen") / "settings.json"
    if harness == "copilot-cli":  # its user hooks folder: every *.json there is loaded
        copilot = os.environ.get("COPILOT_HOME") or Path.home() / ".copilot"
        return Path(copilot) / "hooks" / "continuity.json"
    raise InputError(
        "harness: must be claude-code, codex, pi, opencode, gemini-cli, qwen-code or copilot-cli "
        f"(got {harness!r})"
    )


def _through_link(path: Path) -> Path:
    """The file to read and rewrite: ``path``, or the file a symlink at ``path`` points at
    (followed to the end, even when it does not exist yet), so the link is kept. Raises
    ``InputError`` when that is a device, a pipe or a socket: settings are written
    only to a regular file (issue 16: ``--settings /dev/null`` as root replaced the device),
    as ``memory render --output`` does."""
    target = path.resolve() if path.is_symlink() else path
    if target.exists() and not target.is_dir() and not target.is_file():
        raise InputError(
            f"{path}: is not a regular file (a device, socket or pipe); "
            "settings are only written to a regular file"
        )
    return target


def _read(path: Path) -> tuple[dict[str, Any], bytes | None]:
    if path.is_dir():
        raise InputError(
            f"--settings: {path} is a folder; give the settings file (e.g. "
            f"{path / 'settings.json'})"
        )
    if not path.exists():
        return {}, None
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"--settings: cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise InputError(
            f"{path}: not valid JSON ({exc}); fix it first, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: a JSON object is expected; nothing was changed")
    return data, raw


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and any(m in str(hook.get("command", "")) for m in _OURS)


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
