"""``continuity hooks install|uninstall claude-code|codex|pi``: wire a harness to the daemon.

**Claude Code** (``~/.claude/settings.json``) and **Codex** (``~/.codex/hooks.json``: Codex reads
hooks from ``hooks.json`` or inline ``[hooks]`` tables of ``config.toml`` beside each config layer;
we use the JSON file so no TOML is rewritten, and ``hooks.json`` has the same shape as Claude
Code's ``hooks`` object): for each event in ``CLAUDE_EVENTS``/``CODEX_EVENTS`` one matcher group
``{"hooks": [{"type": "command", "command": "<hook command> EVENT --harness H", "timeout": S}]}``
is appended under ``hooks.<Event>``. Codex has no SessionEnd (formats.md §4.2). Our entries are
recognised by their command (``continuity.cli.hookcmd`` or ``continuity-hook``), so:

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
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import shutil
import sys
import tempfile
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
CODEX_EVENTS = {k: v for k, v in CLAUDE_EVENTS.items() if k != "SessionEnd"}
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
    (None for uninstall)."""

    harness: str
    path: Path
    action: str
    backup: Path | None = None
    home: Path | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"harness": self.harness, "path": str(self.path), "action": self.action,
                "backup": str(self.backup) if self.backup else None,
                "home": str(self.home) if self.home else None}


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
            home: str | os.PathLike[str] | None = None) -> InstallResult:
    """Install our hooks for ``harness`` (module docstring). ``path``: the settings file
    (Claude Code, Codex) or the extensions folder (pi); ``home``: the workspace baked into the
    commands (default: the current one). Raises ``InputError``."""
    given = Path(path).expanduser() if path else default_path(harness)
    where = hook_home(home)
    if harness == "pi":
        return _install_pi(given, where)
    events = _events(harness)
    target = _through_link(given)
    before, raw = _read(target)
    after = _without_ours(before)
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
    if after == before and raw is not None:
        return InstallResult(harness, given, "unchanged", home=where)
    backup = _backup(target, raw)
    _write(target, after)
    return InstallResult(harness, given, "installed", backup, home=where)


def uninstall(harness: str, path: str | os.PathLike[str] | None = None) -> InstallResult:
    """Remove our hooks for ``harness`` (module docstring). Raises ``InputError``."""
    given = Path(path).expanduser() if path else default_path(harness)
    if harness == "pi":
        return _uninstall_pi(given)
    _events(harness)
    target = _through_link(given)
    before, raw = _read(target)
    after = _without_ours(before)
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
    return InstallResult(harness, given, "removed")


def _through_link(path: Path) -> Path:
    """The file to read and rewrite: ``path``, or the file a symlink at ``path`` points at
    (followed to the end, even when it does not exist yet), so the link is kept."""
    return path.resolve() if path.is_symlink() else path


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


def _without_ours(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``data`` without our hook entries, and without the groups, event lists and
    ``hooks`` object that held nothing else."""
    out = copy.deepcopy(data)
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
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    if raw is None or backup.exists():
        return None
    _atomic_bytes(backup, raw)
    return backup


def _write(path: Path, data: dict[str, Any]) -> None:
    _atomic_bytes(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())


def _atomic_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ---------------------------------------------------------------------------- pi


def pi_extension_text(argv: list[str] | None = None) -> str:
    """Our pi extension with the hook command (``argv``, default ``hook_argv()``) filled in."""
    template = resources.files("continuity.daemon.hooks").joinpath(
        "pi_extension", PI_FILE).read_text("utf-8")
    return template.replace("__CONTINUITY_HOOK_COMMAND__", json.dumps(argv or hook_argv()))


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
    text = pi_extension_text([env, f"CONTINUITY_HOME={home}", *hook_argv()])
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
            return InstallResult("pi", target, "unchanged", home=home)
    _atomic_bytes(target, text.encode("utf-8"))
    return InstallResult("pi", target, "installed", home=home)


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
