"""``LiveCapture`` fed the hook JSON the real CLIs sent (issue 12;
``../shared/data/real-harness/hook-inputs``): what each event creates, across daemon restarts."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Iterator

import pytest

from continuity.checkpoints.capture import CheckpointConfig
from continuity.daemon.hooks.live import LiveCapture

from tests.paths import SHARED_DATA

HOOKS = SHARED_DATA / "real-harness" / "hook-inputs"
#: Claude Code sent this SessionEnd while `claude mcp list` ran: no SessionStart before it, and
#: its transcript_path was never written.
LONE_END = HOOKS / "claude-code" / "20261202T055339.284665569-SessionEnd.json"


def _live(store, home: Path) -> LiveCapture:
    live = LiveCapture(store, home=home, config=CheckpointConfig(), budget_bytes=1000,
                       stop_seconds=10, idle_limit=timedelta(hours=4), tick_seconds=0.05)
    live.start()
    return live


@pytest.fixture
def live(store, isolated_home: Path) -> Iterator[LiveCapture]:
    capture = _live(store, isolated_home)
    yield capture
    capture.close()


def _files(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())


def test_lone_claude_code_session_end_creates_nothing(live: LiveCapture,
                                                      isolated_home: Path) -> None:
    """The real lone SessionEnd (session c662a0be, its transcript file absent) leaves no
    session, checkpoint, transcript row, transcript file, memory or lineage artifact."""
    raw = LONE_END.read_bytes()
    key = json.loads(raw)["session_id"]
    before = _files(isolated_home)
    assert live.handle_native("claude-code", "session-end", raw, event_id=None, at=None) == b""
    live.drain_spool()
    assert live.worker.wait_idle(10) and live.consolidator.wait_idle(10)
    assert live.store.list_sessions() == []
    assert live.store.checkpoints(key) == []
    assert live.store.get_transcripts([key], "default") == {}
    assert live.store.open_transcripts() == []
    assert key not in live.sessions
    created = [f for f in _files(isolated_home) if f not in before]
    assert [f for f in created if not f.startswith(("spool/", "continuity.db"))] == []
