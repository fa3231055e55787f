"""``continuity doctor``: does live capture work here, per harness, and what to do when not
(issue 12).

It checks, for the workspace (``--home``, else ``$CONTINUITY_HOME``, else the platform's folder):

- **config**: ``config.toml`` and the env overrides parse, name known sections, and every
  section's values are valid (``check_config``; a problem names the file or variable and key);
- **private**: the workspace owner-only (issue 16; ``check_private``; a warning); or
  **workspace** when its folder does not exist (``check_workspace``; a warning);
- **integrity** (issue 45): ``PRAGMA quick_check`` of a SQLite database (``check_integrity``);
- **daemon**: ``<home>/daemon.url`` names a daemon that answers ``GET /health`` (two-second
  deadline; the bearer token and the workspace id of ``daemon.id`` sent; a daemon of another
  workspace, answering 421, is a problem);
- **embeddings** (issue 40): how many rows and memories wait for their vector (``ok`` when
  none, or when search is words-only: the semantic extra missing or switched off);
- **spool**: the backlog of hook events waiting for the daemon (``<home>/spool/``: lines of
  ``events.jsonl`` and of replay files not yet marked done) and the lines set aside in
  ``rejected.jsonl``;
- per harness (Claude Code, Codex, pi): **found**: the CLI on ``PATH`` and its ``--version``;
  **hooks**: ours installed for every event (``continuity.daemon.hooks.install``), every one
  carrying this workspace (``CONTINUITY_HOME=<home>``) and a Python that exists; **mcp**
  (issue 39): continuity's tools registered where the harness takes them (Claude Code's MCP
  server and allow rule, Codex's ``[mcp_servers.continuity]``, pi's extension tools), for
  this workspace (a ``warning`` when not); **trust**
  (Codex): whether Codex runs them now (``install.codex_trust``); **last event**: the newest
  session of that harness in the store and the time of its newest row.

Each check is ``ok``, ``problem`` (capture does not work: a fix is named), ``warning`` (works,
but look) or ``info``. A harness found without hooks of ours is a ``warning`` (not every user
runs all three; with no harness hooked at all it is a ``problem``), one not found and not
hooked only ``info``; without hooks but with a session whose rows are younger than
``RECENT_CAPTURE_DAYS``, in a workspace hooks have delivered to, it is a ``problem`` (capture
stopped; issue 45; a workspace only imported into keeps the warning). Every command a fix
names carries ``--home`` (and ``--settings``) in use (``command_for``; issue 45 item 2).
Nothing is written (opening an existing store brings its
schema up to date, as every command does). Exit status: 0 when no check
is a ``problem``, else 1 (``--json`` prints the same checks either way).

Over 600 lines: one check per harness and per part of the install (hooks, Codex trust, pi
extension, MCP, daemon, spool, database, file modes), each with its printed fix; the checks
share the report type and the fix wording, and read as one list.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from continuity.cli.commands.common import HomeOptionNoConfigCheck, JsonOption, emit_json, out


def _live_harnesses() -> tuple[tuple[str, ...], dict[str, str]]:
    from continuity.formats.registry import harness, names

    live = names("live")
    return live, {name: harness(name).bin for name in live}


#: The harnesses doctor checks (the registry's live-capture ones, ``formats.registry``) and
#: the executable of each one's CLI.
HARNESSES, BINARIES = _live_harnesses()
VERSION_TIMEOUT = 15.0
HEALTH_TIMEOUT = 2.0
EXIT_BROKEN = 1


@dataclass
class Check:
    """One finding: ``check`` (``daemon``, ``spool``, ``found``, ``hooks``, ``trust``,
    ``last-event``), ``harness`` (None for the workspace's), ``status`` (``ok``, ``problem``,
    ``warning``, ``info``), ``detail`` (what was seen), ``fix`` (what to do; None when
    nothing), ``data`` (the figures, for ``--json``)."""

    check: str
    harness: str | None
    status: str
    detail: str
    fix: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "harness": self.harness,
            "status": self.status,
            "detail": self.detail,
            "fix": self.fix,
            "data": self.data,
        }


def _mapping(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON/TOML object, else ``{}`` (a settings file's shape is not ours)."""
    return value if isinstance(value, dict) else {}


def command_for(home: Path, *words: str) -> str:
    """The command line ``continuity WORDS --home HOME``, shell-quoted: every command a fix
    names carries the workspace in use (issue 45 item 2: a bare one, run as printed, acts on
    the default workspace)."""
    return shlex.join(["continuity", *words, "--home", str(home)])


def _serve_hint(home: Path) -> str:
    return f"start it: `{command_for(home, 'serve')}`"


def _section_loaders() -> dict[str, Callable[[Path], object]]:
    """The loader of each ``KNOWN_SECTIONS`` section, the one its feature uses (so doctor
    refuses exactly what the feature would: ``[daemon] stop_seconds = 2`` as ``serve`` does)."""
    from continuity.archive.archiver import load_settings as archive
    from continuity.checkpoints import load_config
    from continuity.continuation.summarize.settings import load_settings as summarizer
    from continuity.daemon.server import load_settings as daemon
    from continuity.lineage.memory_md import settings as memory_md
    from continuity.retrieval.settings import retrieval_settings as retrieval
    from continuity.team.settings import team_settings as team
    from continuity.transcripts.session_transcripts import settings as transcripts

    return {
        "archive": archive,
        "continuity": load_config,
        "daemon": daemon,
        "memory_md": memory_md,
        "retrieval": retrieval,
        "summarizer": summarizer,
        "team": team,
        "transcripts": transcripts,
    }


def check_config(home: Path) -> Check:
    """``<home>/config.toml`` and the ``CONTINUITY_<SECTION>__<FIELD>`` overrides: the syntax,
    the section names and the values of EVERY known section (fresh-user review: a bad
    ``[daemon]`` value was found only by ``serve``). A ``ConfigError`` is a ``problem`` whose
    detail names the file (or variable) and the key."""
    import os

    from continuity.core.config import KNOWN_SECTIONS, config_path, read_config
    from continuity.core.errors import ConfigError

    path = config_path(home)
    try:
        read_config(home)
        loaders = _section_loaders()
        for section in KNOWN_SECTIONS:
            loaders[section](home)
    except ConfigError as exc:
        message = str(exc)
        # review: the fix named config.toml also when only an environment variable was wrong
        what = (
            "change or unset the environment variable named"
            if message.startswith("$")
            else f"edit {path}"
            if "$" not in message
            else f"edit {path} or the environment variable named"
        )
        fix = f"{what} as the message says, then run `{command_for(home, 'doctor')}` again"
        return Check("config", None, "problem", message, fix, {"path": str(path)})
    overrides = sorted(v for v in os.environ if v.startswith("CONTINUITY_") and "__" in v[11:])
    shown = str(path) if path.is_file() else f"{path} absent: defaults"
    if overrides:  # review: "absent: defaults" while an override was in effect
        shown += "; overridden by " + ", ".join(f"${v}" for v in overrides)
    return Check("config", None, "ok", f"{shown}; every section valid", data={"path": str(path)})


def check_daemon(home: Path) -> Check:
    """The daemon of ``home`` up (``/health`` answers) or not."""
    import httpx

    from continuity.daemon.address import WORKSPACE_HEADER, daemon_id, daemon_token

    url_file = home / "daemon.url"
    if not url_file.is_file():
        return Check(
            "daemon",
            None,
            "problem",
            f"no daemon serves this workspace ({url_file} "
            "is absent): hooks spool their events until one starts",
            _serve_hint(home),
        )
    url = url_file.read_text("utf-8", errors="replace").strip()
    token = daemon_token(str(home))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    workspace = daemon_id(str(home))
    if workspace:
        headers[WORKSPACE_HEADER] = workspace
    try:
        answer = httpx.get(url.rstrip("/") + "/health", headers=headers, timeout=HEALTH_TIMEOUT)
        health = answer.json() if answer.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        answer, health = None, None
    if answer is not None and answer.status_code == 421:
        return Check(
            "daemon",
            None,
            "problem",
            f"{url_file} names {url}, which serves another "
            "workspace (hooks spool instead of posting there)",
            _serve_hint(home),
            {"url": url},
        )
    if not isinstance(health, dict) or health.get("status") != "ok":
        return Check(
            "daemon",
            None,
            "problem",
            f"{url_file} names {url}, which does not answer "
            "(a daemon that died without cleaning up?)",
            _serve_hint(home),
            {"url": url},
        )
    return Check(
        "daemon",
        None,
        "ok",
        f"up at {url} (pid {health.get('pid', '?')})",
        data={"url": url, "health": health},
    )


def spool_backlog(home: Path) -> tuple[int, int]:
    """``(waiting, rejected)`` spool lines of ``home``: events not yet replayed, and lines set
    aside in ``rejected.jsonl`` (``continuity.daemon.hooks.spool``)."""
    from continuity.daemon.hooks import spool

    folder = Path(spool.spool_dir(home))
    if not folder.is_dir():
        return 0, 0

    def lines(path: Path) -> list[bytes]:
        try:
            return [ln for ln in path.read_bytes().splitlines() if ln.strip()]
        except OSError:
            return []

    waiting = len(lines(folder / spool.EVENTS_FILE))
    for replay in folder.glob(spool.REPLAY_PREFIX + "*.jsonl"):
        done = {ln.strip() for ln in lines(replay.with_name(replay.name + ".done"))}
        for line in lines(replay):
            try:
                event_id = json.loads(line).get("id", "")
            except (ValueError, AttributeError):
                event_id = ""
            if event_id.encode() not in done:
                waiting += 1
    return waiting, len(lines(folder / spool.REJECTED_FILE))


def check_spool(home: Path, daemon_up: bool) -> Check:
    """The spool backlog (``spool_backlog``)."""
    waiting, rejected = spool_backlog(home)
    data = {"waiting": waiting, "rejected": rejected}
    if waiting:
        fix = (
            "restart the daemon so it replays them: stop it, then " if daemon_up else ""
        ) + _serve_hint(home)
        return Check(
            "spool",
            None,
            "problem",
            f"{waiting} hook events wait in the spool ({home / 'spool'}), not yet in the store",
            fix,
            data,
        )
    if rejected:
        return Check(
            "spool",
            None,
            "warning",
            f"no backlog; {rejected} events were set aside "
            f"as bad input ({home / 'spool' / 'rejected.jsonl'}, with reasons)",
            data=data,
        )
    return Check("spool", None, "ok", "no backlog", data=data)


def harness_version(
    binary: str, *, which: Callable[[str], str | None] = shutil.which
) -> tuple[str | None, str | None]:
    """``(path, version)`` of a harness CLI on ``PATH``; ``(None, None)`` when absent, the
    version None when ``--version`` fails."""
    path = which(binary)
    if path is None:
        return None, None
    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return path, None
    text = (done.stdout or done.stderr).strip().splitlines()
    match = re.search(r"\d+\.\d+\.\d+\S*", text[0]) if text else None
    return path, match.group(0) if match else (text[0][:80] if text else None)


@dataclass
class InstalledHooks:
    """Our hooks of one harness as found on disk: ``path`` (settings file or extension),
    ``events`` (native events holding one of ours), ``homes`` (the workspaces they carry),
    ``pythons`` (the interpreters they run)."""

    path: Path
    events: set[str] = field(default_factory=set)
    homes: set[str] = field(default_factory=set)
    pythons: set[str] = field(default_factory=set)
    error: str | None = None


def _command_parts(words: list[str]) -> tuple[str | None, str | None]:
    home = python = None
    for word in words:
        if word.startswith("CONTINUITY_HOME="):
            home = word.split("=", 1)[1]
        elif (
            python is None
            and not word.startswith("-")
            and "=" not in word
            and not word.endswith("/env")
        ):
            python = word
    return home, python


def installed_hooks(harness: str, path: Path | None = None) -> InstalledHooks:
    """What of ours is installed for ``harness`` (``InstalledHooks``) in ``path`` (the
    settings file, or pi's extensions folder; default: the harness's own place)."""
    from continuity.core.errors import InputError
    from continuity.daemon.hooks import install

    path = path or install.default_path(harness)
    if harness in ("pi", "opencode"):
        name, marker = (
            (install.PI_FILE, install.PI_MARKER)
            if harness == "pi"
            else (install.OPENCODE_FILE, install.OPENCODE_MARKER)
        )
        found = InstalledHooks(path / name)
        try:
            text = found.path.read_text("utf-8")
        except OSError:
            return found
        if marker not in text:
            found.error = f"a {name} there is not continuity's"
            return found
        match = re.search(r"const HOOK_COMMAND = (\[.*?\]);", text)
        argv = json.loads(match.group(1)) if match else []
        home, python = _command_parts(argv)
        found.events = {"extension"}
        found.homes = {home} if home else set()
        found.pythons = {python} if python else set()
        return found
    found = InstalledHooks(path)
    try:
        data = install.read_settings(path, jsonc=harness in install.JSONC_HARNESSES)
    except InputError as exc:
        found.error = str(exc)
        return found
    hooks = _mapping(data.get("hooks"))
    for native, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else []:
                if not install.is_our_hook(hook):
                    continue
                found.events.add(native)
                try:
                    home, python = _command_parts(shlex.split(str(hook.get("command", ""))))
                except ValueError:
                    home = python = None
                if home:
                    found.homes.add(home)
                if python:
                    found.pythons.add(python)
    return found


def install_command(harness: str, home: Path, hooks_path: Path) -> str:
    """``continuity hooks install HARNESS --home HOME``, with ``--settings`` when the hooks
    are not at the harness's own place (pi: the extensions folder), shell-quoted; the
    command that redoes the install in use (issue 45 item 2)."""
    from continuity.daemon.hooks import install

    words = ["hooks", "install", harness]
    target = hooks_path.parent if harness in ("pi", "opencode") else hooks_path
    if os.path.abspath(target) != os.path.abspath(install.default_path(harness)):
        words += ["--settings", str(target)]
    return command_for(home, *words)


def check_harness(
    harness: str, home: Path, *, which: Callable[[str], str | None] = shutil.which
) -> list[Check]:
    """``found``, ``hooks``, ``trust`` (Codex) and ``last-event`` of one harness."""
    from continuity.daemon.hooks import install

    checks: list[Check] = []
    path, version = harness_version(BINARIES[harness], which=which)
    # issue 45 item 3: the file `hooks install --settings FILE` recorded for this workspace
    # (hooks-installed.json) is the one checked while it exists, even when the harness's
    # default file exists too (that one may be another workspace's, or nobody's)
    recorded = install.installed_paths(home).get(harness)
    hooks = (
        installed_hooks(harness, Path(recorded))
        if recorded and os.path.exists(recorded)
        else installed_hooks(harness)
    )
    if recorded and not hooks.events and not hooks.error:
        default = installed_hooks(harness)
        if default.events or default.error:
            hooks = default
    install_hint = f"`{install_command(harness, home, hooks.path)}`"
    if path is None:
        checks.append(
            Check(
                "found",
                harness,
                "warning" if hooks.events else "info",
                f"`{BINARIES[harness]}` is not on PATH",
                data={"path": None},
            )
        )
    else:
        checks.append(
            Check(
                "found",
                harness,
                "ok",
                f"{path} (version {version or 'unknown'})",
                data={"path": path, "version": version},
            )
        )
    if hooks.error:
        checks.append(
            Check(
                "hooks",
                harness,
                "problem",
                f"{hooks.path}: {hooks.error}",
                "fix the file, then run " + install_hint,
            )
        )
        return checks
    if not hooks.events:
        # A harness found without our hooks: a warning (the user may not use it); when no
        # harness has hooks at all, diagnose() adds the problem.
        status = "warning" if path is not None else "info"
        checks.append(
            Check(
                "hooks",
                harness,
                status,
                f"not installed ({hooks.path})",
                f"if you use {BINARIES[harness]}, run {install_hint}" if path is not None else None,
                {"path": str(hooks.path)},
            )
        )
        return checks
    expected = (
        {"extension"} if harness in ("pi", "opencode") else set(install.HARNESS_EVENTS[harness])
    )
    missing = sorted(expected - hooks.events)
    ours = str(home)
    elsewhere = sorted(h for h in hooks.homes if os.path.abspath(h) != ours)
    gone = sorted(p for p in hooks.pythons if not os.access(p, os.X_OK))
    data = {
        "path": str(hooks.path),
        "events": sorted(hooks.events),
        "missing": missing,
        "homes": sorted(hooks.homes),
        "pythons": sorted(hooks.pythons),
    }
    if elsewhere or not hooks.homes:
        where = ", ".join(elsewhere) or "no workspace"
        checks.append(
            Check(
                "hooks",
                harness,
                "problem",
                f"installed in {hooks.path}, but they "
                f"send events to {where}, not to this workspace ({ours})",
                f"run {install_hint} (or run doctor with --home {where})",
                data,
            )
        )
    elif gone:
        checks.append(
            Check(
                "hooks",
                harness,
                "problem",
                f"installed, but they run {', '.join(gone)}, which no longer exists",
                f"run {install_hint}",
                data,
            )
        )
    elif missing:
        checks.append(
            Check(
                "hooks",
                harness,
                "problem",
                f"installed in {hooks.path}, but without {', '.join(missing)}",
                f"run {install_hint}",
                data,
            )
        )
    else:
        checks.append(
            Check(
                "hooks",
                harness,
                "ok",
                f"installed in {hooks.path}, pointing at this workspace",
                data=data,
            )
        )
    checks.append(check_mcp(harness, home, hooks.path))
    if harness == "codex":
        trust = install.codex_trust(hooks.path, home=home)
        if trust.status == "trusted":
            checks.append(
                Check(
                    "trust",
                    harness,
                    "ok",
                    f"Codex trusts all {trust.hooks} continuity hooks ({trust.config})",
                    data=trust.to_dict(),
                )
            )
        else:
            checks.append(
                Check(
                    "trust",
                    harness,
                    "problem",
                    f"Codex does not trust "
                    f"{trust.hooks - trust.trusted} of the {trust.hooks} continuity "
                    "hooks: `codex exec` skips them silently",
                    trust.next_step,
                    trust.to_dict(),
                )
            )
    return checks


def _mcp_found(harness: str, hooks_path: Path) -> tuple[Path, Any, str | None]:
    """``(where, command words or None, why not)``: continuity's MCP server (or pi's tool
    runner) as registered for ``harness`` whose hooks are at ``hooks_path``."""
    import tomllib

    from continuity.core.errors import InputError
    from continuity.daemon.hooks import install

    if harness == "pi":
        try:
            text = hooks_path.read_text("utf-8")
        except OSError:
            return hooks_path, None, "the extension cannot be read"
        match = re.search(r"const TOOL_COMMAND = (\[.*?\]);", text)
        if not match:
            return hooks_path, None, "the extension has no continuity tools (an older install)"
        return hooks_path, json.loads(match.group(1)), None
    if harness in (*install.SETTINGS_MCP, "copilot-cli"):
        # Gemini CLI, Qwen Code: in settings.json, with the hooks; Copilot CLI: its
        # mcp-config.json beside the hooks folder (``copilot_config``)
        from continuity.daemon.hooks.copilot_config import copilot_mcp_config

        found = copilot_mcp_config(hooks_path) if harness == "copilot-cli" else hooks_path
        if found is None:
            return hooks_path, None, f"the hooks in {hooks_path} are not in a Copilot hooks folder"
        config = found
        try:
            data = install.read_settings(config, jsonc=harness in install.JSONC_HARNESSES)
        except InputError as exc:
            return config, None, str(exc)
        entry = _mapping(data.get("mcpServers")).get(install.MCP_SERVER_NAME)
    elif harness == "codex":
        config = hooks_path.parent / "config.toml"
        try:
            data = tomllib.loads(config.read_text("utf-8")) if config.is_file() else {}
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
            return config, None, "config.toml cannot be read as TOML"
        servers = _mapping(data.get("mcp_servers"))
        entry = servers.get(install.MCP_SERVER_NAME)
    else:
        config = install.claude_mcp_config()
        if os.path.abspath(hooks_path) != os.path.abspath(install.default_path(harness)):
            return (
                config,
                None,
                (
                    f"the hooks are in {hooks_path}, not Claude Code's user "
                    "settings, so no MCP server was registered"
                ),
            )
        try:
            data = install.read_settings(config)
        except InputError as exc:
            return config, None, str(exc)
        servers = _mapping(data.get("mcpServers"))
        entry = servers.get(install.MCP_SERVER_NAME)
        try:
            settings = install.read_settings(hooks_path)
        except InputError:
            settings = {}
        perms = _mapping(settings.get("permissions"))
        if entry is not None and install.CLAUDE_ALLOW_RULE not in (perms.get("allow") or []):
            return (
                config,
                None,
                (
                    f"registered, but {hooks_path} lacks the allow rule "
                    f"{install.CLAUDE_ALLOW_RULE!r}: Claude Code denies the tools"
                ),
            )
    if not isinstance(entry, dict):
        return config, None, f"no MCP server {install.MCP_SERVER_NAME!r} in {config}"
    if not install._is_our_server(entry):  # the installer's own test
        return (
            config,
            None,
            (f"the MCP server {install.MCP_SERVER_NAME!r} in {config} is not continuity's"),
        )
    env = _mapping(entry.get("env"))
    words = [str(entry.get("command", ""))] + [str(a) for a in entry.get("args") or []]
    if env.get("CONTINUITY_HOME"):
        words.insert(0, f"CONTINUITY_HOME={env['CONTINUITY_HOME']}")
    return config, words, None


def check_mcp(harness: str, home: Path, hooks_path: Path) -> Check:
    """``mcp``: continuity's tools registered for ``harness`` (issue 39: Claude Code its MCP
    server in ``~/.claude.json`` and the allow rule, Codex ``[mcp_servers.continuity]``, pi
    the extension's tools), pointing at this workspace with a Python that exists. A
    ``warning`` when not (capture works; the agent cannot reach the rows)."""
    from continuity.daemon.hooks import install

    if harness == "opencode":  # the plugin forwards hooks only (the registry's mcp: false)
        return Check(
            "mcp",
            harness,
            "info",
            "continuity's tools are not installed for OpenCode (hooks only)",
            data={"where": str(hooks_path), "tools": {}},
        )
    where, words, why = _mcp_found(harness, hooks_path)
    hint = f"run `{install_command(harness, home, hooks_path)}`"
    data: dict[str, Any] = {"where": str(where), "tools": {}}
    if words is None:
        return Check(
            "mcp",
            harness,
            "warning",
            f"continuity's tools are not available to the agent: {why}",
            hint,
            data,
        )
    tool_home, python = _command_parts(words)
    if not tool_home or os.path.abspath(tool_home) != str(home):
        return Check(
            "mcp",
            harness,
            "warning",
            f"continuity's tools in {where} read "
            f"{tool_home or 'no workspace'}, not this workspace ({home})",
            hint,
            data,
        )
    if python and not os.access(python, os.X_OK):
        return Check(
            "mcp",
            harness,
            "warning",
            f"continuity's tools in {where} run {python}, which no longer exists",
            hint,
            data,
        )
    data["tools"] = install.mcp_tool_names(harness)
    return Check(
        "mcp",
        harness,
        "ok",
        f"continuity's tools registered in {where} ({', '.join(data['tools'].values())})",
        data=data,
    )


def check_cleanup(home: Path) -> Check | None:
    """Claude Code's ``cleanupPeriodDays`` (issue 18): Claude Code deletes transcripts older
    than that many days at start (30 when unset). When ``settings.json`` of
    ``$CLAUDE_CONFIG_DIR`` or ``~/.claude`` sets it, a warning saying how many archived
    Claude Code sessions exist only in this workspace now (their source file is gone); None
    when it is not set or the file cannot be read as JSON."""
    import json
    import os

    from continuity.core.config import database_url
    from continuity.store import open_store

    base = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser()
    settings = base / "settings.json"
    try:
        days = json.loads(settings.read_text(encoding="utf-8")).get("cleanupPeriodDays")
    except (OSError, ValueError, AttributeError):
        return None
    if days is None:
        return None
    gone = 0
    url = database_url(home)
    if not url.startswith("sqlite") or (home / "continuity.db").exists():
        with open_store(url) as store:
            gone = sum(
                1
                for s in store.list_sessions(harness="claude-code")
                if s.source_gone_at is not None
            )
    return Check(
        "cleanup",
        "claude-code",
        "warning",
        f"{settings} sets cleanupPeriodDays = {days}: Claude Code deletes transcripts "
        f"older than that; {gone} archived Claude Code session(s) are kept only here "
        "(their file is gone)",
        f"keep `{command_for(home, 'watch')}` running (or import ~/.claude/projects "
        "regularly) so sessions are archived before Claude Code deletes them",
        {"path": str(settings), "cleanupPeriodDays": days, "sessions_gone": gone},
    )


def last_events(home: Path, harnesses: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """``{harness: {"session", "at", "rows"}}``: the newest session of each harness in the
    store and the time of its newest row (bounded: the 500 newest sessions, one row each)."""
    from continuity.core.config import database_url
    from continuity.store import open_store

    found: dict[str, dict[str, Any]] = {}
    db = home / "continuity.db"
    url = database_url(home)
    if url.startswith("sqlite") and not db.exists():
        return found
    with open_store(url) as store:
        for session in store.list_sessions(limit=500):
            if session.harness not in harnesses or session.harness in found:
                continue
            rows = store.entries(session.key, after_seq=max(-1, session.entry_count - 3), limit=3)
            stamps = [e.timestamp for e in rows if e.timestamp is not None]
            at = max(stamps) if stamps else (session.ended_at or session.started_at)
            found[session.harness] = {
                "session": session.key,
                "rows": session.entry_count,
                "at": at.isoformat() if at else None,
            }
            if len(found) == len(harnesses):
                break
    return found


def ever_hooked(home: Path) -> bool:
    """Whether the workspace ever applied a hook event (``Store.any_applied_event``); False
    for one with no database yet. Else its sessions were imported, never captured."""
    from continuity.core.config import database_url
    from continuity.store import open_store

    url = database_url(home)
    if url.startswith("sqlite") and not (home / "continuity.db").exists():
        return False
    with open_store(url) as store:
        return store.any_applied_event()


def _ago(iso: str | None) -> str:
    if not iso:
        return "at an unknown time"
    try:
        at = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    seconds = int((datetime.now(UTC) - at).total_seconds())
    span = (
        f"{seconds} s"
        if seconds < 120
        else f"{seconds // 60} min"
        if seconds < 7200
        else f"{seconds // 3600} h"
        if seconds < 172800
        else f"{seconds // 86400} days"
    )
    return f"{iso} ({span} ago)"


def check_workspace(home: Path) -> Check:
    """A workspace folder that does not exist (a fresh-user review: ``doctor --home`` with a
    typo said "the workspace is owner-only" of a folder that was not there): a ``warning``
    naming it, with what creates it; ``check_private`` otherwise."""
    if home.is_dir():
        return check_private(home)
    return Check(
        "workspace",
        None,
        "warning",
        f"{home} does not exist: nothing was imported or captured here yet",
        "check --home or CONTINUITY_HOME for a typo; `continuity import PATH`, "
        "`continuity serve` or a hook creates it",
    )


def check_private(home: Path) -> Check:
    """Issue 16: the workspace holds every raw line, prompt and secret an agent saw, so it must
    be owner-only (folders ``0700``, files ``0600``; ``continuity.core.private.exposed`` lists
    what is not). Always a ``warning`` with the ``chmod`` that fixes it (issue 45 item 2:
    capture works whatever the modes): a workspace folder others may enter is said so, a
    wider file inside an owner-only workspace folder (say a ``config.toml`` made with an
    editor) as out of others' reach. The first three paths are named, all of them in
    ``data["exposed"]``."""
    from continuity.core.private import exposed, private_fix

    found = exposed(home)
    if not found:
        return Check("private", None, "ok", "the workspace is owner-only")
    named = ", ".join(f"{e.path} ({e.mode:o})" for e in found[:3])
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    open_root = any(e.path == home for e in found)
    detail = (
        f"others can read the workspace: {named}{more}"
        if open_root
        else f"wider than owner-only, though inside an owner-only folder: {named}{more}"
    )
    # issue 45 item 2: capture works whatever the modes, so this is a warning (with the fix),
    # never "capture is not working"
    return Check(
        "private",
        None,
        "warning",
        detail,
        private_fix(home),
        {"exposed": [str(e.path) for e in found]},
    )


def check_embeddings(home: Path, daemon_up: bool) -> Check:
    """Issue 40: how many rows and memories wait for their vector of the configured model
    (``[retrieval]``). ``ok`` when none wait, or when search is words-only (the semantic
    extra missing, or ``semantic = "off"``: said so); ``warning`` when a model to fetch is not
    on this machine (fix: ``continuity models fetch``); rows waiting are ``info`` while the
    daemon runs (it embeds them in the background), else a ``warning`` naming how."""
    from continuity.core.config import database_url
    from continuity.core.errors import ConfigError
    from continuity.retrieval.embedder import (
        MISSING_EXTRA,
        MODELS,
        load_embedder,
        model_files,
        semantic_available,
    )
    from continuity.retrieval.embedding import waiting_count
    from continuity.retrieval.settings import retrieval_settings
    from continuity.store import open_store

    settings = retrieval_settings(home)
    if settings.semantic == "off":
        return Check(
            "embeddings",
            None,
            "ok",
            'off ([retrieval] semantic = "off"): search ranks by words only',
        )
    if not semantic_available():
        return Check("embeddings", None, "ok", MISSING_EXTRA)
    spec = MODELS.get(settings.model)
    if spec is None:
        return Check(
            "embeddings",
            None,
            "problem",
            f"[retrieval] model {settings.model!r} is unknown",
            "set one of: " + ", ".join(sorted(MODELS)),
        )
    try:
        model_files(spec)
    except ConfigError as exc:
        return Check(
            "embeddings", None, "warning", str(exc), f"continuity models fetch {settings.model}"
        )
    try:  # a model on disk that does not load, or a dim it lacks (fresh-user review)
        load_embedder(settings)
    except ConfigError as exc:
        return Check(
            "embeddings",
            None,
            "problem",
            f"{exc}; search ranks by words only",
            f"fix [retrieval] in {home / 'config.toml'}, or "
            f"continuity models fetch {settings.model}",
        )
    model_id = f"{settings.model}/{settings.dim}"
    url = database_url(home)
    if url.startswith("sqlite") and not (home / "continuity.db").exists():
        return Check("embeddings", None, "ok", f"{model_id}: nothing stored yet")
    with open_store(url) as store:  # rows without text are never embedded: not counted
        waiting, exact = waiting_count(store, model_id)
    data = {"model": model_id, "waiting": waiting, "exact": exact}
    if not waiting:
        return Check("embeddings", None, "ok", f"{model_id}: every row embedded", data=data)
    msg = (
        f"{model_id}: {'' if exact else 'at least '}{waiting} rows and memories wait to "
        "be embedded (found by words until then)"
    )
    if daemon_up:
        return Check("embeddings", None, "info", msg + "; the daemon embeds them", data=data)
    return Check(
        "embeddings",
        None,
        "warning",
        msg,
        f"start the daemon "
        f"(`{command_for(home, 'serve')}`), which embeds them in the background"
        + (
            f", or run `{command_for(home, 'import', *folders)}` (it embeds what waits)"
            if (folders := _session_folders(home))
            else ""
        ),
        data,
    )


def _session_folders(home: Path) -> list[str]:
    """The harnesses' session folders that exist here (``[archive]`` settings of ``home``),
    as the paths an ``import`` fix names: a fix runnable as printed (issue 45 item 3: the
    embeddings fix printed ``continuity import --home W`` without its paths argument). Empty
    when none exists or the settings cannot be read."""
    from continuity.archive.archiver import harness_folders, load_settings
    from continuity.core.errors import ContinuityError

    try:
        return [str(p) for p in harness_folders(load_settings(home)).values()]
    except (ContinuityError, OSError):
        return []


#: A harness whose newest stored row is younger than this, and whose hooks are gone, has
#: stopped being captured (issue 45 item 2).
RECENT_CAPTURE_DAYS = 7


def check_integrity(home: Path) -> Check | None:
    """``integrity``: ``PRAGMA quick_check`` on the workspace's SQLite database (issue 45 item
    2: a database whose pages are corrupt passed every other check). ``ok``, or a
    ``problem`` quoting the first findings (or the error SQLite raised); None for
    PostgreSQL or when no database exists yet. Read-only: the file is opened ``mode=ro``."""
    import sqlite3

    from continuity.core.config import database_url

    url = database_url(home)
    if not url.startswith("sqlite"):
        return None
    from sqlalchemy.engine import make_url

    name = make_url(url).database
    if not name or name == ":memory:" or not Path(name).is_file():
        return None
    path = Path(name)
    lost: dict[int, int] = {}
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check(20)").fetchall()]
            if rows == ["ok"]:
                lost = _lost_text_dicts(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        rows = [f"{exc.__class__.__name__}: {exc}"]
    if rows == ["ok"] and lost:
        named = ", ".join(f"{d} ({n:,} rows)" for d, n in sorted(lost.items()))
        return Check(
            "integrity",
            None,
            "problem",
            f"{path}: rows are framed with a text dictionary the database no longer holds "
            f"(text_dicts lost: dictionary {named}); those rows cannot be read",
            "restore the database from a backup, or move it aside and import the session "
            f"files again with `{command_for(home, 'import', 'FOLDER')}`",
            {"path": str(path), "lost_text_dicts": {str(d): n for d, n in lost.items()}},
        )
    if rows == ["ok"]:
        return Check(
            "integrity", None, "ok", f"{path}: PRAGMA quick_check ok", data={"path": str(path)}
        )
    shown = "; ".join(rows[:3]) + (f" and {len(rows) - 3} more" if len(rows) > 3 else "")
    return Check(
        "integrity",
        None,
        "problem",
        f"{path} is damaged (PRAGMA quick_check: {shown})",
        "stop the daemon, keep a copy of the file, then rebuild it: "
        f"`sqlite3 {shlex.quote(str(path))} .recover | sqlite3 NEW.db` and move NEW.db "
        "in its place, or move it aside and import the session files again with "
        f"`{command_for(home, 'import', 'FOLDER')}`",
        {"path": str(path), "findings": rows},
    )


def _lost_text_dicts(conn: Any) -> dict[int, int]:
    """``{dict_id: rows}`` of the text dictionaries (revision 0032) that rows' content frames
    name and ``text_dicts`` does not hold (a fresh-user review: a lost row there passed
    ``quick_check`` and made every search fail). Reads each frame's header only (a zstd
    frame header is at most 18 bytes); a database before revision 0032 has none."""
    import sqlite3

    try:
        held = {int(r[0]) for r in conn.execute("SELECT dict_id FROM text_dicts")}
        heads = conn.execute(
            "SELECT substr(content_z, 1, 18) FROM entries WHERE content_z IS NOT NULL"
        )
    except sqlite3.OperationalError:  # no such table or column: an older revision
        return {}
    from continuity.store.rawcodec import frame_dict_id

    lost: dict[int, int] = {}
    for (head,) in heads:
        dict_id = frame_dict_id(bytes(head))
        if dict_id and dict_id not in held:
            lost[dict_id] = lost.get(dict_id, 0) + 1
    return lost


def _capture_stopped(
    per: list[Check], harness: str, seen: dict[str, Any] | None, home: Path, captured: bool
) -> None:
    """Turn the ``hooks`` warning of a harness without our hooks into a ``problem`` when the
    workspace holds a session of it with rows from the last ``RECENT_CAPTURE_DAYS`` days:
    it was being captured and is no more (issue 45 item 2). Not in a workspace that never
    applied a hook event (``captured`` false): its sessions were imported, nothing stopped
    (a fresh-user review: right after the README's quick start, which imports the sample
    sessions, doctor said Claude Code's capture had stopped)."""
    if not captured or not seen or not seen.get("at"):
        return
    try:
        at = datetime.fromisoformat(seen["at"])
    except ValueError:
        return
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    if (datetime.now(UTC) - at).total_seconds() > RECENT_CAPTURE_DAYS * 86400:
        return
    for c in per:
        if c.check == "hooks" and not c.data.get("events") and c.status != "problem":
            c.status = "problem"
            c.detail += (
                f"; but session {seen['session']} of this workspace has rows from "
                f"{_ago(seen['at'])}: capture of {harness} stopped"
            )
            c.fix = f"run `{install_command(harness, home, Path(c.data['path']))}`"
            c.data["last"] = seen


def diagnose(
    home: Path,
    harnesses: tuple[str, ...] = HARNESSES,
    *,
    which: Callable[[str], str | None] = shutil.which,
) -> list[Check]:
    """Every check of the module docstring, in order: config, daemon, spool, then per
    harness. With a config problem, a daemon that is down gets the config fixed first as its
    fix (``continuity serve`` would fail on it)."""
    config = check_config(home)
    daemon = check_daemon(home)
    if config.status == "problem" and daemon.status == "problem":
        daemon.fix = (
            "fix the config problem above first (`continuity serve` refuses it), " + daemon.fix
            if daemon.fix
            else ""
        )
    checks = [config, daemon]
    checks.append(check_spool(home, daemon.status == "ok"))
    checks.append(check_workspace(home))
    try:
        cleanup = check_cleanup(home)
    except Exception:  # noqa: BLE001 - a broken store is reported below as "store"
        cleanup = None
    if cleanup is not None:
        checks.append(cleanup)
    try:
        checks.append(check_embeddings(home, daemon.status == "ok"))
    except Exception as exc:  # noqa: BLE001 - a broken store is reported below as "store"
        checks.append(Check("embeddings", None, "warning", f"not checked: {exc}"))
    integrity = check_integrity(home)
    if integrity is not None:
        checks.append(integrity)
    try:
        last = last_events(home, harnesses)
        captured = ever_hooked(home)
    except Exception as exc:  # noqa: BLE001 - a broken store is one more finding
        last, captured = {}, False
        checks.append(
            Check(
                "store",
                None,
                "problem",
                f"the store cannot be read: {exc}",
                f"run `{command_for(home, 'where')}` and `{command_for(home, 'db', 'upgrade')}`",
            )
        )
    for harness in harnesses:
        per = check_harness(harness, home, which=which)
        hooked = any(c.check == "hooks" and c.data.get("events") for c in per)
        if not hooked:
            _capture_stopped(per, harness, last.get(harness), home, captured)
        if hooked:
            seen = last.get(harness)
            if seen:
                per.append(
                    Check(
                        "last-event",
                        harness,
                        "ok",
                        f"session {seen['session']}, newest row {_ago(seen['at'])}",
                        data=seen,
                    )
                )
            else:
                per.append(
                    Check(
                        "last-event",
                        harness,
                        "info",
                        f"no event received yet (run {BINARIES[harness]} once)",
                    )
                )
        checks.extend(per)
    if not any(c.check == "hooks" and c.data.get("events") for c in checks):
        found = [
            c.harness
            for c in checks
            if c.check == "found" and c.status == "ok" and c.harness is not None
        ]
        checks.append(
            Check(
                "hooks",
                None,
                "problem",
                "no harness has continuity's hooks: "
                "nothing is captured live" + ("" if found else " (and no harness CLI is on PATH)"),
                f"run `{command_for(home, 'hooks', 'install', found[0])}`"
                if found
                else "install a harness (`continuity harnesses` lists them), then run "
                f"`{command_for(home, 'hooks', 'install', 'HARNESS')}`",
            )
        )
    return checks


_MARK = {"ok": "ok     ", "problem": "PROBLEM", "warning": "warning", "info": "-      "}


def doctor_cmd(
    home: Path | None = HomeOptionNoConfigCheck,
    harness: list[str] | None = typer.Option(
        None,
        "--harness",
        help="Check only this harness (a name `continuity harnesses` lists with live "
        "capture: claude-code, codex, pi, opencode, gemini-cli, qwen-code, copilot-cli); "
        "repeatable.",
        show_default=False,
    ),
    as_json: bool = JsonOption,
) -> None:
    """Tell whether live capture works: per harness, the CLI found (version), our hooks
    installed and pointing at this workspace, Codex's trust, the last event received; the
    daemon of this workspace and the spool backlog; and what to do for each problem. Exits 1
    when something is broken."""
    from continuity.core.config import resolve_home
    from continuity.core.errors import InputError

    chosen = tuple(harness or HARNESSES)
    unknown = [h for h in chosen if h not in HARNESSES]
    if unknown:
        raise InputError(f"--harness: must be one of {', '.join(HARNESSES)} (got {unknown[0]!r})")
    where = Path(os.path.abspath(resolve_home(home)))
    checks = diagnose(where, chosen)
    broken = [c for c in checks if c.status == "problem"]
    if as_json:
        emit_json({"home": str(where), "ok": not broken, "checks": [c.to_dict() for c in checks]})
    else:
        out.print(f"workspace {where}", markup=False)
        for c in checks:
            label = f"{c.harness + ' ' if c.harness else ''}{c.check}"
            out.print(f"{_MARK[c.status]} {label}: {c.detail}", markup=False)
            if c.fix:
                out.print(f"        → {c.fix}", markup=False)
        warned = sum(c.status == "warning" for c in checks)
        out.print(
            (
                "all is well: live capture works"
                + (f" ({warned} warning(s) above)" if warned else "")
            )
            if not broken
            else f"{len(broken)} problem(s): capture is not working as it should",
            markup=False,
        )
    if broken:
        raise typer.Exit(EXIT_BROKEN)


def register(app: typer.Typer) -> None:
    """Add ``doctor`` to ``app``."""
    app.command("doctor")(doctor_cmd)
