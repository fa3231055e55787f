"""The brief's plain types (issue 39): ``Reach`` (what the reader can use to get more) and
``SessionBrief`` (what the brief knows of one earlier session). ``build`` fills them,
``render`` writes them; neither type reads the store."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from continuity.continuation.facts import CommandRun, ErrorNote, FileTouch


@dataclass(frozen=True)
class Reach:
    """How the reader of a brief can get more (issue 39, interface 3): ``mcp`` maps a logical
    tool (``search``, ``show``, ``recall``, ``continuation``, ``remember``, ``checkpoint``) to
    the name the harness's model sees it by, only for the tools that harness has
    (``continuity.daemon.hooks.install.installed_mcp_tools``); ``cli`` is the shell command
    prefix that runs continuity's CLI for this workspace (an absolute path and ``--home``),
    None when the brief must not name the CLI; ``loader`` the harness's own tool that loads
    the MCP tools it defers (Claude Code ``ToolSearch``, Codex ``tool_search``), None where
    they are offered directly; ``memory_md`` the absolute path of the workspace's MEMORY.md
    (seed 000's projection: durable facts, decisions and thread heads of every project) when
    it exists, None otherwise. The brief names nothing else."""

    mcp: Mapping[str, str] = field(default_factory=dict)
    cli: str | None = None
    loader: str | None = None
    memory_md: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"mcp": {...}, "cli": str | None, "loader": str | None, "memory_md": str |
        None}``."""
        return {
            "mcp": dict(self.mcp),
            "cli": self.cli,
            "loader": self.loader,
            "memory_md": self.memory_md,
        }


@dataclass(frozen=True)
class SessionBrief:
    """One earlier session of the project, as the brief tells it (all text redacted and
        bounded; tuples oldest first unless said otherwise).

        ``last_active``: the newest of its last row's time, its end and its newest checkpoint
        (aware UTC; None when unknown). ``requests``: ``(seq, text)`` of its requests among the
        rows read (seq -1: taken from a checkpoint digest, the session has no rows stored).
        ``requests_total``: how many requests it has in all, when counted (``None``: not
        counted). ``outcome``: the last answer's gist, ``(seq, text)``; ``ended``:
        ``interrupted`` or ``failed`` when the run of the last request ended so
        (``store.last_run``), else None. ``commands``: the last
        distinct commands run, with their status. ``tests``: the newest test command's run,
        ``failing_tests`` what its newest run named as failing. ``files_changed``: created,
        modified or deleted files, in order of last touch. ``errors``: errors no later success
        resolved. ``decisions``: remembered decisions and memories whose source is the session,
        the checkpoints' ``recent_remembers`` and the decisions the agent stated, deduplicated.
        ``open_items``: unfinished task items, calls that never returned, a request that ended in
        an unresolved error. ``earlier``: the newest compaction's summary (what came before the
        rows read), ``(covers_through_seq, gist)``. ``rows_read``/``last_seq``: how much of the
        session the brief read. ``who``: ``author@machine`` of a teammate's session (issue 41,
    ``brief --team``)."""

    key: str
    harness: str
    project: str | None = None
    last_active: datetime | None = None
    requests: tuple[tuple[int, str], ...] = ()
    requests_total: int | None = None
    outcome: tuple[int, str] | None = None
    ended: str | None = None
    commands: tuple[CommandRun, ...] = ()
    tests: CommandRun | None = None
    failing_tests: tuple[str, ...] = ()
    files_changed: tuple[FileTouch, ...] = ()
    errors: tuple[ErrorNote, ...] = ()
    decisions: tuple[str, ...] = ()
    open_items: tuple[str, ...] = ()
    earlier: tuple[int | None, str] | None = None
    rows_read: int = 0
    last_seq: int = -1
    #: issue 41: ``author@machine`` of a teammate's session (``brief --team``); None for a
    #: session of this workspace
    who: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``continuity brief --json``'s ``sessions`` items."""
        return {
            "key": self.key,
            "harness": self.harness,
            "project": self.project,
            "last_active": _iso(self.last_active),
            "requests": [{"seq": s, "text": t} for s, t in self.requests],
            "requests_total": self.requests_total,
            "outcome": {"seq": self.outcome[0], "text": self.outcome[1]} if self.outcome else None,
            "ended": self.ended,
            "commands": [_command(c) for c in self.commands],
            "tests": _command(self.tests) if self.tests else None,
            "failing_tests": list(self.failing_tests),
            "files_changed": [
                {"path": f.path, "change": f.change, "seq": f.seq} for f in self.files_changed
            ],
            "errors": [
                {
                    "seq": e.seq,
                    "source": e.source,
                    "first_line": e.first_line,
                    "last_line": e.last_line,
                }
                for e in self.errors
            ],
            "decisions": list(self.decisions),
            "open_items": list(self.open_items),
            "earlier": {"covers_through_seq": self.earlier[0], "text": self.earlier[1]}
            if self.earlier
            else None,
            "rows_read": self.rows_read,
            "last_seq": self.last_seq,
            **({"who": self.who} if self.who else {}),
        }


def _command(c: CommandRun) -> dict[str, Any]:
    return {
        "command": c.command,
        "seq": c.seq,
        "ok": c.ok,
        "exit_code": c.exit_code,
        "is_test": c.is_test,
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


__all__ = ["Reach", "SessionBrief"]
