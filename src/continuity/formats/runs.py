"""Runs derived from a session's rows in seq order (spec/continuation.md: a run is one request
and what answers it).

Each visible request that is not a sidechain opens a run; the run ends ``finished``, ``failed``
or ``interrupted`` by the last hint a reader gave (``Entry.run_end``; a later assistant answer
outranks an earlier error notice), else by whether tool calls were left without results. The
importer feeds rows as it stores them and keeps ``RunTracker.state()`` with the source, so a
grown file resumes the open run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from continuity.core.model import Entry, Role, Run, RunStatus, ToolCallBlock, ToolResultBlock
from continuity.store import iter_entries
from continuity.store.protocol import Store


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def run_id_for(session_key: str, request_seq: int) -> str:
    """The id of the run that request row ``request_seq`` of ``session_key`` opens:
    ``<session_key>:<request_seq>`` (stable across re-imports)."""
    return f"{session_key}:{request_seq}"


class RunTracker:
    """Derives runs from rows in seq order (see the module docstring)."""

    def __init__(self, key: str, agent_id: str, state: dict[str, Any] | None) -> None:
        self.key, self.agent_id = key, agent_id
        s = state or {}
        self.request_seq: int | None = s.get("request_seq")
        self.hint: str | None = s.get("hint")
        self.pending: list[str] = s.get("pending", [])
        self.end_seq: int = s.get("end_seq", -1)
        self.started: datetime | None = _dt(s.get("started"))
        self.ended: datetime | None = _dt(s.get("ended"))
        self.closed: list[Run] = []

    def state(self) -> dict[str, Any]:
        """The open run as JSON values (kept with the source to resume the file)."""
        return {
            "request_seq": self.request_seq,
            "hint": self.hint,
            "pending": self.pending[-200:],
            "end_seq": self.end_seq,
            "started": _iso(self.started),
            "ended": _iso(self.ended),
        }

    def feed(self, e: Entry) -> None:
        """Take the next row (seq order): a request closes the open run and opens one."""
        if e.sidechain:
            return
        if e.is_request and e.visible:
            self._close()
            self.request_seq, self.hint, self.pending = e.seq, None, []
            self.end_seq, self.started, self.ended = e.seq, e.timestamp, e.timestamp
            return
        if self.request_seq is None:
            return
        if e.visible and e.role is Role.ASSISTANT:
            # A later answer outranks an earlier error or retry notice of the same run.
            self.hint = e.run_end.value if e.run_end is not None else None
        elif e.run_end is not None:
            self.hint = e.run_end.value
        if e.timestamp is not None:
            self.ended = e.timestamp
        if not e.visible:
            return
        self.end_seq = e.seq
        done = set()
        for block in e.blocks:
            if isinstance(block, ToolCallBlock):
                self.pending.append(block.id)
            elif isinstance(block, ToolResultBlock):
                done.add(block.call_id)
        if done:
            self.pending = [c for c in self.pending if c not in done]

    def current(self) -> Run | None:
        """The open run as it stands now (status by the rules, as if the log ended here)."""
        if self.request_seq is None:
            return None
        if self.hint is not None:
            status = RunStatus(self.hint)
        else:
            status = RunStatus.INTERRUPTED if self.pending else RunStatus.FINISHED
        if self.pending and status is RunStatus.FINISHED:
            status = RunStatus.INTERRUPTED
        return Run(
            run_id_for(self.key, self.request_seq),
            self.key,
            self.agent_id,
            self.request_seq,
            status,
            self.end_seq,
            self.started,
            self.ended,
        )

    def _close(self) -> None:
        run = self.current()
        if run is not None:
            self.closed.append(run)

    def take(self) -> list[Run]:
        """Runs closed since the last call, plus the open one as it stands."""
        out, self.closed = self.closed, []
        cur = self.current()
        if cur is not None:
            out.append(cur)
        return out


def derive_runs(store: Store, key: str, agent_id: str) -> RunTracker:
    """A run tracker fed every row of the session from the store, in seq order (pages)."""
    tracker = RunTracker(key, agent_id, None)
    for e in iter_entries(store, key, page_rows=1000):
        tracker.feed(e)
    return tracker
