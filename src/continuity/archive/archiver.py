"""The archiver: one pass imports the session files that changed since the last pass.

A pass lists the watched folders (``harness_folders``), compares each session file's
(``formats.discovery.is_session_file``: ``*.jsonl``, Gemini CLI's legacy ``.json`` chats)
``(size, mtime_ns)`` with what the previous pass saw (unchanged files cost one ``stat``), and
imports at most ``max_files`` changed files through ``archive.ingest`` (``import_files``,
itself incremental: an appended file imports only its new bytes, then ``replay_import`` and
``sync_import_report``), exactly as ``continuity import`` does. Files beyond the cap stay
pending for the next pass.
Each ``import_files`` group is its own short transaction, so live capture keeps answering.

``follow`` runs passes while watching: a pass per batch of file-system events looks only at
the files the events name (bounded work per event: an agent appending to one transcript costs
one file's import, not a walk of the whole history), and a full rescan runs at least every
``rescan_seconds`` (the safety net for events a file system does not deliver).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from continuity.core.config import load_section

if TYPE_CHECKING:
    from continuity.core.stopping import Stop
    from continuity.formats.importer import FileReport


class ArchiveSettings(BaseModel):
    """``[archive]`` of config.toml: ``enabled`` (``continuity watch`` archives; false: it
    refuses, exit 2; default true),
    ``rescan_seconds`` (the safety-net full rescan, seconds, 1–86,400), and folder overrides
    ``claude_code``, ``codex``, ``pi``, ``opencode``, ``gemini_cli``, ``qwen_code``,
    ``copilot_cli``, ``factory_droid`` (an empty string: that harness is not watched; the keys are the
    registry's ``archive_key``s, issue 42)."""

    model_config = ConfigDict(extra="forbid")  # review: `enable = false` was ignored

    enabled: bool = True
    rescan_seconds: float = Field(default=60.0, ge=1, le=86_400)
    claude_code: str | None = None
    codex: str | None = None
    pi: str | None = None
    opencode: str | None = None
    gemini_cli: str | None = None
    qwen_code: str | None = None
    copilot_cli: str | None = None
    factory_droid: str | None = None


def load_settings(home: str | os.PathLike[str] | None = None) -> ArchiveSettings:
    """The ``[archive]`` settings (``ConfigError`` for a bad value)."""
    return load_section("archive", ArchiveSettings, home)


def _home_variables() -> dict[str, str]:
    """``[archive]`` key -> the (strongest) environment variable that moves that harness's
    home (its folder is under it), from the registry."""
    from continuity.formats.registry import archive_locations

    return {key: loc.variable for key, loc in archive_locations().items() if loc.variable}


#: The environment variable that moves each harness's home (its folder is under it); a
#: harness with several (Qwen Code's QWEN_RUNTIME_DIR, then QWEN_HOME) is named by its first.
HOME_VARIABLES = _home_variables()


def _candidates(settings: ArchiveSettings) -> dict[str, tuple[Path, str]]:
    """Harness name -> (the folder to watch, what named it); harnesses switched off by an
    empty override are left out. A harness's folder follows the first of its registry
    location's variables that is set (``Location.variable_set``)."""
    from continuity.formats.registry import archive_locations

    found = {}
    for name, location in archive_locations().items():
        override = getattr(settings, name)
        if override == "":
            continue
        variable = location.variable_set()
        if override:
            found[name] = (Path(override).expanduser(), f"[archive] {name} in config.toml")
        elif variable:
            found[name] = (location.resolve(), f"${variable}")
        else:
            found[name] = (location.resolve(), "the default")
    return found


def harness_folders(settings: ArchiveSettings) -> dict[str, Path]:
    """Harness name -> the existing session folder to watch: the ``[archive]`` override, else
    the harness's default under its home variable (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``,
    ``PI_CODING_AGENT_DIR``, ``XDG_DATA_HOME``, ``QWEN_RUNTIME_DIR`` then ``QWEN_HOME``, ...).
    Folders that do not exist are left out (see ``folder_problems`` for the ones a user named
    that cannot be watched)."""
    return {name: path for name, (path, _) in _candidates(settings).items() if path.is_dir()}


def folder_problems(settings: ArchiveSettings) -> list[str]:
    """One message per folder a user named that cannot be watched: an ``[archive]`` override
    that is a file or does not exist (yet), or a harness home variable (``CLAUDE_CONFIG_DIR``
    ...) whose own path is a file or does not exist. A default that does not exist is not a
    problem (that harness is not installed), nor is a home without its sessions folder yet."""
    problems = []
    for name, (path, source) in _candidates(settings).items():
        if source == "the default":
            continue
        if source.startswith("$"):
            path = Path(os.environ[source[1:]])
            source = f"{source} = {path}"
        else:
            source = f"{source}: {path}"
        if path.is_dir():
            continue
        what = "is not a folder" if path.exists() else "does not exist (yet)"
        problems.append(f"{name}: {source} {what}; not watched")
    return problems


@dataclass
class PassResult:
    """What one pass did: ``files`` imported that added or changed rows, ``rows`` added,
    ``pending`` changed files left for the next pass (the cap), ``failed`` files."""

    files: int = 0
    rows: int = 0
    pending: int = 0
    failed: int = 0
    #: source files found missing this pass (their sessions stay whole: ``source: gone``)
    gone: int = 0
    #: (path, reason) of files found this pass that are not session files (each said once)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: the reports of files read this pass whose reader found bad lines or warnings (an
    #: out-of-range timestamp, ...): ``watch`` prints them as ``import`` does (issue 45 item 1)
    problems: list[FileReport] = field(default_factory=list)


@dataclass
class Archiver:
    """Imports changed session files of ``folders`` into the workspace ``home``.

    ``max_files`` caps the files imported per pass (bounded work; the rest wait). Not
    thread-safe: one thread runs its passes."""

    folders: dict[str, Path]
    home: Path | None = None
    max_files: int = 200
    _seen: dict[Path, tuple[int, int]] = field(default_factory=dict)
    #: the first pass also checks every recorded source (a file deleted while nothing ran)
    _first: bool = True
    #: changed files a pass left for later (the ``max_files`` cap), oldest first
    _pending: list[Path] = field(default_factory=list)

    def changed_files(self, paths: Iterable[Path] | None = None) -> list[Path]:
        """The files whose size or mtime differ from the last imported state, oldest first.

        ``paths`` None: every session file of the folders (a full rescan: one ``stat`` per
        file). Otherwise only the given paths (the file-system events of a pass): those that
        are session files under a watched folder, plus the files earlier passes left pending;
        an OpenCode folder an event touched is listed whole (its store is one database).
        Sets ``self._vanished``: the recorded files found missing among those looked at."""
        from continuity.core.live_files import captured_live
        from continuity.formats.importer import discover, is_session_file

        if paths is None:
            files = discover([str(p) for p in self.folders.values()], unreadable=[], home=self.home)
            looked: set[Path] | None = None
        else:
            roots = {name: p.resolve() for name, p in self.folders.items()}
            wanted: list[Path] = list(self._pending)
            looked = set()
            whole: set[Path] = set()
            for raw in paths:
                path = Path(raw).resolve()
                looked.add(path)
                for name, root in roots.items():
                    if path == root or root in path.parents:
                        if name == "opencode":
                            whole.add(root)
                        elif is_session_file(path):
                            wanted.append(path)
                        break
            files = discover([str(r) for r in whole], unreadable=[], home=self.home)
            files += [p for p in wanted if p.is_file()]
        present = set(files)
        if looked is None:
            self._vanished = [p for p in self._seen if p not in present]
        else:  # a file an event named, or one under a folder an event named, that is gone
            gone_here = {p for p in looked if not p.exists()}
            self._vanished = [
                p
                for p in self._seen
                if p not in present
                and gone_here
                and (p in gone_here or not gone_here.isdisjoint(p.parents))
            ]
        # issue 45 item 10: the daemon captures its live sessions' files itself
        live = captured_live(self.home)
        live_names = {p.name for p in live}
        todo = []
        for path in dict.fromkeys(files):
            if path.name in live_names and path.resolve() in live:
                continue
            try:
                st = path.stat()
            except OSError:
                continue
            if self._seen.get(path) != (st.st_size, st.st_mtime_ns):
                todo.append((st.st_mtime_ns, path))
        return [p for _, p in sorted(todo)]

    def run_pass(
        self, changed: Iterable[Path] | None = None, *, stop: Stop | None = None
    ) -> PassResult:
        """One pass (see the module docstring): a full rescan, or with ``changed`` (paths
        from file-system events) only those files and the ones still pending. Once ``stop``
        is set the pass imports no further file (``ingest``'s ``stop``: the group being
        stored is committed, its phases run); the files it did not reach stay pending.
        Raises what the store raises on open."""
        from continuity.archive.ingest import ingest
        from continuity.checkpoints import load_config
        from continuity.core.config import database_url
        from continuity.formats.importer import ImportReport, mark_vanished
        from continuity.store import open_store

        todo = self.changed_files(changed)
        result = PassResult(pending=max(0, len(todo) - self.max_files))
        self._pending = todo[self.max_files :]
        todo = todo[: self.max_files]
        vanished = getattr(self, "_vanished", [])
        check_gone, self._first = bool(vanished) or self._first, False
        if not todo and not check_gone:
            return result
        stats = {}
        for p in todo:
            try:
                st = p.stat()
                stats[p] = (st.st_size, st.st_mtime_ns)
            except OSError:
                pass
        report = ImportReport()
        with open_store(database_url(self.home)) as store:
            if todo:
                ingest(
                    store,
                    todo,
                    config=load_config(self.home),
                    home=self.home,
                    report=report,
                    stop=None if stop is None else stop.is_set,
                )
            if check_gone:
                result.gone, _back = mark_vanished(store, [str(p) for p in self.folders.values()])
                for p in vanished:
                    self._seen.pop(p, None)
        left = todo[len(report.files) :]  # not reached: stopped (``stop``)
        if left:
            self._pending[:0] = left
            result.pending += len(left)
        for p, f in zip(todo, report.files, strict=False):
            if f.status == "failed":
                result.failed += 1
                continue
            if f.errors or f.warnings:
                result.problems.append(f)
            if f.status == "skipped" and not f.waiting:  # a waiting one is archived later
                result.skipped.append((str(p), f.reason or "not a session file"))
            if p in stats:
                self._seen[p] = stats[p]
            if f.imported:
                result.files += 1
                result.rows += f.imported
        return result


#: file-system events are gathered this long before a pass (milliseconds)
DEBOUNCE_MS = 1_000
#: how often (seconds) ``follow`` looks for a harness session folder made since it started
#: (Claude Code makes ``projects/`` at its first session: that session is archived in
#: seconds, not at the next rescan); at most ``rescan_seconds``
FOLDER_SECONDS = 5.0


def follow(
    archiver: Archiver,
    settings: ArchiveSettings,
    stop: Stop,
    on_pass: Callable[[PassResult], None],
    say: Callable[[str], None],
) -> None:
    """Run ``archiver`` until ``stop`` is set: a pass at once, then one per batch of
    file-system events (``watchfiles``, debounced ``DEBOUNCE_MS``) and at least every
    ``settings.rescan_seconds`` (the safety net); a harness folder created later (Claude Code
    installed after continuity, or before its first session) is watched within
    ``FOLDER_SECONDS``. A pass that left files pending (the
    ``max_files`` cap) is followed by another at once. ``on_pass`` gets every pass's result;
    ``say`` gets the lines a user should read (what is watched, folders that cannot be).
    Every pass is given ``stop``: a stop ends the pass under way after the group of files
    being stored (a ``Stop``, not a ``threading.Event``, which a signal handler cannot set
    safely: ``core.stopping``). Raises what ``run_pass`` raises (a store that cannot be
    opened)."""
    import watchfiles

    folders: dict[str, Path] | None = None  # None: nothing said yet
    told: set[str] = set()

    def look() -> dict[str, Path]:
        for problem in folder_problems(settings):
            if problem not in told:
                told.add(problem)
                say(problem)
        return harness_folders(settings)

    def drain(result: PassResult) -> None:
        """Report ``result``, then pass over what it left pending until nothing is."""
        on_pass(result)
        while result.pending and not stop.is_set():
            result = archiver.run_pass((), stop=stop)
            on_pass(result)

    check = min(settings.rescan_seconds, FOLDER_SECONDS)
    while not stop.is_set():
        now = look()
        if now != folders:
            if folders and set(folders.items()) - set(now.items()):
                on_pass(archiver.run_pass(stop=stop))  # the old set once more: a removed folder's
                # files are marked gone (their sessions stay whole)
            folders = archiver.folders = now
            if folders:
                for name, path in folders.items():
                    say(f"watching {name}: {path}")
            else:
                say(f"no harness session folder exists yet; looking again every {check:g} s")
        if not folders:
            stop.wait(check)
            continue
        assert folders is not None
        last_full = time.monotonic()
        drain(archiver.run_pass(stop=stop))
        try:
            # one watcher while the folders stay the same: events that arrive during a pass
            # wait in it; rust_timeout ends a quiet wait every `check` seconds, to look for
            # a harness folder made since (a few stats) and to run the rescan when it is due
            for changes in watchfiles.watch(
                *folders.values(),
                debounce=DEBOUNCE_MS,
                rust_timeout=int(check * 1000),
                yield_on_timeout=True,
                stop_event=stop,
                raise_interrupt=True,
            ):
                # events: only the files they name (bounded work per event); every
                # rescan_seconds, events or not: the full rescan, the safety net
                if time.monotonic() - last_full >= settings.rescan_seconds:
                    last_full = time.monotonic()
                    drain(archiver.run_pass(stop=stop))
                elif changes:
                    drain(archiver.run_pass({Path(p) for _, p in changes}, stop=stop))
                if look() != folders:
                    break  # a folder came or went: watch the new set
        except KeyboardInterrupt:  # Ctrl-C: watchfiles raises it (raise_interrupt=True)
            stop.set()
            return
        except (OSError, RuntimeError) as exc:  # a watched folder removed under the watcher
            say(f"watching stopped ({exc}); looking again in {settings.rescan_seconds:g} s")
            stop.wait(settings.rescan_seconds)
