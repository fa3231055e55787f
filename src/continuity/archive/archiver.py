"""The archiver: one pass imports the session files that changed since the last pass.

A pass lists the watched folders (``harness_folders``), compares each ``*.jsonl`` file's
``(size, mtime_ns)`` with what the previous pass saw (unchanged files cost one ``stat``), and
imports at most ``max_files`` changed files through ``import_files`` (itself incremental: an
appended file imports only its new bytes), then ``replay_import`` and ``sync_import_report``,
exactly as ``continuity import`` does. Files beyond the cap stay pending for the next pass.
Each ``import_files`` group is its own short transaction, so live capture keeps answering.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from pydantic import BaseModel, Field

from continuity.core.config import load_section


class ArchiveSettings(BaseModel):
    """``[archive]`` of config.toml: ``enabled`` (``continuity watch`` archives; false: it
    refuses, exit 2; default true),
    ``rescan_seconds`` (the safety-net full rescan, seconds, >= 1), and folder overrides
    ``claude_code``, ``codex``, ``pi``, ``opencode`` (an empty string: that harness is not
    watched)."""

    enabled: bool = True
    rescan_seconds: float = Field(60.0, ge=1)
    claude_code: Optional[str] = None
    codex: Optional[str] = None
    pi: Optional[str] = None
    opencode: Optional[str] = None


def load_settings(home: str | os.PathLike[str] | None = None) -> ArchiveSettings:
    """The ``[archive]`` settings (``ConfigError`` for a bad value)."""
    return load_section("archive", ArchiveSettings, home)


def _default_folders() -> dict[str, Path]:
    env = os.environ.get
    home = Path.home()
    xdg = env("XDG_DATA_HOME") or str(home / ".local" / "share")
    return {
        "claude_code": Path(env("CLAUDE_CONFIG_DIR") or home / ".claude") / "projects",
        "codex": Path(env("CODEX_HOME") or home / ".codex") / "sessions",
        "pi": Path(env("PI_CODING_AGENT_DIR") or home / ".pi" / "agent") / "sessions",
        "opencode": Path(xdg) / "opencode",
    }


def harness_folders(settings: ArchiveSettings) -> dict[str, Path]:
    """Harness name -> the existing session folder to watch: the ``[archive]`` override, else
    the harness's default under its home variable (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``,
    ``PI_CODING_AGENT_DIR``, ``XDG_DATA_HOME``). Folders that do not exist are left out."""
    found = {}
    for name, default in _default_folders().items():
        override = getattr(settings, name)
        if override == "":
            continue
        path = Path(override).expanduser() if override else default
        if path.is_dir():
            found[name] = path
    return found


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


@dataclass
class Archiver:
    """Imports changed session files of ``folders`` into the workspace ``home``.

    ``max_files`` caps the files imported per pass (bounded work; the rest wait). Not
    thread-safe: one thread runs its passes."""

    folders: dict[str, Path]
    home: Optional[Path] = None
    max_files: int = 200
    _seen: dict[Path, tuple[int, int]] = field(default_factory=dict)
    #: the first pass also checks every recorded source (a file deleted while nothing ran)
    _first: bool = True

    def changed_files(self) -> list[Path]:
        """The files whose size or mtime differ from the last imported state, oldest first."""
        from continuity.formats.importer import discover

        files = discover([str(p) for p in self.folders.values()], unreadable=[],
                         home=self.home)
        present = set(files)
        self._vanished = [p for p in self._seen if p not in present]
        todo = []
        for path in files:
            try:
                st = path.stat()
            except OSError:
                continue
            if self._seen.get(path) != (st.st_size, st.st_mtime_ns):
                todo.append((st.st_mtime_ns, path))
        return [p for _, p in sorted(todo)]

    def run_pass(self) -> PassResult:
        """One pass (see the module docstring); raises what the store raises on open."""
        from continuity.checkpoints import load_config, replay_import
        from continuity.formats.importer import ImportReport, import_files, mark_vanished
        from continuity.store import open_store
        from continuity.core.config import database_url
        from continuity.transcripts.session_transcripts import sync_import_report

        todo = self.changed_files()
        result = PassResult(pending=max(0, len(todo) - self.max_files))
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
                report.files.extend(import_files(store, todo))
                replay_import(store, report, config=load_config(self.home))
                sync_import_report(store, report, self.home)
            if check_gone:
                result.gone, _back = mark_vanished(store, [str(p) for p in
                                                           self.folders.values()])
                for p in vanished:
                    self._seen.pop(p, None)
        for p, f in zip(todo, report.files):
            if f.status == "failed":
                result.failed += 1
                continue
            if p in stats:
                self._seen[p] = stats[p]
            if f.imported:
                result.files += 1
                result.rows += f.imported
        return result
