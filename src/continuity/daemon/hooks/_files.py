"""The files ``hooks install`` reads and writes, shared by ``install``, ``mcp_install`` and
``codex_config`` (it imports none of them): where each harness keeps its hooks or extensions
(``default_path``); a settings file read as a JSON object (``_read``: a folder, or a file that
is not a JSON object, is ``InputError`` and never overwritten; Gemini CLI's and Qwen Code's,
``JSONC_HARNESSES``, may hold comments and trailing commas, ``_jsonc``, kept when the file is
rewritten, ``_render``); a symlink written through
(``_through_link``: its target is read, backed up and rewritten, so the link survives; a device,
pipe or socket is refused); the one backup ``<file>.continuity-backup`` (``_backup``,
``BACKUP_SUFFIX``: made before the first write, never overwritten, with the file's mode); whole
writes (``_write``, ``_atomic_bytes``: temp file, fsync, rename, keeping the file's mode; in
the layout the file had, ``_dumps_like``), or worked out first and done later (``PendingWrite``:
install does them only once every part can be done); the uninstall's way back (``_put_back``: the backup's
bytes when the rest equals them, an empty file counting as ``{}``; the file deleted only when
install created it); and our hook entries, recognised by their command (``_is_ours``, ``_OURS``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from continuity.core.errors import InputError
from continuity.daemon.hooks import _jsonc

BACKUP_SUFFIX = ".continuity-backup"
#: Both forms of hook_argv() match, and the module path hooks installed before issue 11 ran.
_OURS = ("continuity.cli.hookcmd", "continuity-hook", "continuity.hookcmd")
#: The harnesses whose settings.json may hold ``//`` and ``/* */`` comments and trailing
#: commas: Gemini CLI strips comments before parsing it, and so does Qwen Code, its fork; both
#: keep them when they write it (fresh-user review of issue 42: such files were refused).
JSONC_HARNESSES = ("gemini-cli", "qwen-code")


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


def _read(path: Path, *, jsonc: bool = False) -> tuple[dict[str, Any], bytes | None]:
    """The JSON object in ``path`` and its bytes (``({}, None)`` when absent; ``{}`` for a
    blank file); with ``jsonc``, comments and trailing commas allowed (``JSONC_HARNESSES``).
    Raises ``InputError`` naming the file (and, for JSON with comments, the line and column)
    for a folder, an unreadable file, or one that is not a JSON object."""
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
        if not jsonc:
            raise InputError(
                f"{path}: not valid JSON ({exc}); fix it first, nothing was changed"
            ) from None
        data = _loads_jsonc(path, raw)
    if not isinstance(data, dict):
        raise InputError(f"{path}: a JSON object is expected; nothing was changed")
    return data, raw


def _loads_jsonc(path: Path, raw: bytes) -> Any:
    try:
        return _jsonc.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason}); nothing was changed") from None
    except _jsonc.JsoncError as exc:
        raise InputError(
            f"{path}:{exc.line}: not valid JSON, even allowing comments and trailing commas "
            f"(column {exc.column}: {str(exc).split(': ', 1)[1]}); fix it first, nothing was "
            "changed"
        ) from None


def _commented(raw: bytes | None) -> bool:
    """True when ``raw`` parses only as JSON with comments (a comment or a trailing comma)."""
    if raw is None or not raw.strip():
        return False
    try:
        json.loads(raw)
    except ValueError:
        return True
    return False


@dataclass(frozen=True)
class PendingWrite:
    """A write ``hooks install`` has worked out but not done yet: ``data`` (the new bytes) for
    ``target``, whose bytes before were ``raw`` (None: absent). Install works out every file's
    write first and does them only when every part can be done (fresh-user review of issue 42:
    a partial install left some files changed)."""

    target: Path
    raw: bytes | None
    data: bytes

    def apply(self) -> Path | None:
        """Back ``target`` up (once, ``_backup``), then write ``data`` whole. Returns the
        backup made, if any."""
        backup = _backup(self.target, self.raw)
        _atomic_bytes(self.target, self.data)
        return backup


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


def _write(path: Path, data: dict[str, Any], like: bytes | None = None) -> None:
    """Write ``data`` to ``path`` whole, as ``_render`` lays it out."""
    _atomic_bytes(path, _render(path, data, like))


def _render(path: Path, data: dict[str, Any], like: bytes | None = None) -> bytes:
    """``data`` as the bytes to write to ``path``: laid out as ``like`` (the file's bytes
    before; see ``_dumps_like``), else indented by 2 with a final newline; when ``like`` is
    JSON with comments (``_commented``), ``like`` edited where ``data`` differs, so every
    comment is kept (``_jsonc.edit``). Raises ``InputError`` naming ``path`` and the line of a
    comment that would be lost (it sits inside a value that must be rewritten whole)."""
    if not _commented(like):
        return _dumps_like(data, like)
    assert like is not None
    bom = b"\xef\xbb\xbf" if like.startswith(b"\xef\xbb\xbf") else b""
    try:
        text = _jsonc.edit(like[len(bom) :].decode("utf-8"), data)
    except _jsonc.CommentInTheWay as exc:
        raise InputError(
            f"{path}:{exc.line}: this comment sits inside {exc.where or 'the settings'}, which "
            "continuity must remove or rewrite whole, losing the comment; move the comment out "
            "of it (or delete it) and run the command again; nothing was changed"
        ) from None
    except ValueError as exc:
        raise InputError(
            f"{path}: cannot change it and keep its comments ({exc}); nothing was changed"
        ) from None
    return bom + text.encode("utf-8")


def _dumps_like(data: dict[str, Any], like: bytes | None) -> bytes:
    """``data`` as JSON in the layout of ``like``: on one line when ``like`` held its object on
    one line (Claude Code's ``~/.claude.json`` may be; a fresh-user review of issue 42 saw one
    come back indented), with ``like``'s separators (``", "``/``": "`` or none) and its final
    newline or none; else indented by 2, ending in a newline."""
    text = like.decode("utf-8", "replace").strip() if like else ""
    if not text or "\n" in text:
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()
    tight = '":' in text and '": ' not in text
    out = json.dumps(data, ensure_ascii=False, separators=(",", ":") if tight else (", ", ": "))
    return (out + ("\n" if like and like.endswith(b"\n") else "")).encode()


def _loads_saved(saved: bytes) -> Any:
    """A backup's content as JSON (comments and trailing commas allowed): an empty or blank
    file is ``{}`` (as ``_read`` reads it), unparseable bytes ``None``."""
    if not saved.strip():
        return {}
    try:
        return json.loads(saved)
    except ValueError:
        pass
    try:  # Gemini CLI's and Qwen Code's settings may hold comments (JSONC_HARNESSES)
        return _jsonc.loads(saved.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return None


def _put_back(
    target: Path, data: dict[str, Any], raw: bytes, *, drop_stale_backup: bool = False
) -> tuple[str, Path | None]:
    """Uninstall's write of ``target`` once our entries are out of ``data`` (``raw``: its bytes
    now). Returns ``(action, backup_left)``, action one of:

    - ``"restored"``: ``data`` equals the backup's content (an empty backup counts as ``{}``),
      so the backup's bytes are put back, byte for byte, and the backup removed;
    - ``"deleted"``: no backup (install created the file) and nothing is left in ``data``;
    - ``"written"``: ``data`` written in the file's own layout (``_dumps_like``); the backup,
      if any, is left (``backup_left``) unless ``drop_stale_backup`` (a file its harness
      rewrites itself, whose backup can only be stale by then).

    Fresh-user review of issue 42: a 0-byte ``~/.claude.json`` was deleted, 0-byte settings
    came back as ``{}`` beside a leftover backup. A file install did not create is never
    deleted."""
    backup = target.with_name(target.name + BACKUP_SUFFIX)
    if backup.is_file():
        saved = backup.read_bytes()
        if _loads_saved(saved) == data:
            _atomic_bytes(target, saved)
            backup.unlink()
            return "restored", None
        if drop_stale_backup:
            _write(target, data, raw)
            backup.unlink()
            return "written", None
        _write(target, data, raw)
        return "written", backup
    if not data:
        target.unlink()
        return "deleted", None
    _write(target, data, raw)
    return "written", None


def _atomic_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` whole (temp file, fsync, rename) with ``mode``, else the
    existing file's permission bits, else ``0644``."""
    from continuity.core.private import write_whole

    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    write_whole(path, data, mode)
