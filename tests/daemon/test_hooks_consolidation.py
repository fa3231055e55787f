"""The consolidation pass the daemon runs at session end (``hooks.consolidation``): after the
transcript is completed, on every completion path, never mid-session, never in the way of a
hook's answer or of the daemon's other background work; idempotent, and a failure loses
nothing of the session end (each store backend)."""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from continuity.core.errors import ContinuityError
from continuity.daemon.hooks.live import LiveCapture
from continuity.daemon.hooks.models import BODIES
from continuity.daemon.hooks.worker import Worker
from continuity.lineage import artifacts as ln
from tests.daemon.livecapture import start_live

PROJECT = "/srv/ledger"  # not a scratch folder: /tmp projects are left out of MEMORY.md
CC_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code" / "compaction.jsonl"
KEY = "5b7c2e90-aaaa"


def _live(store, home: Path, **kw: object) -> LiveCapture:
    return start_live(store, home, budget_bytes=240_000, **kw)


@pytest.fixture
def live(store, isolated_home: Path) -> Iterator[LiveCapture]:
    capture = _live(store, isolated_home)
    yield capture
    capture.close()


def ev(live: LiveCapture, event: str, key: str, **fields: object) -> dict:
    body = BODIES[event].model_validate(
        {"harness": "claude-code", "session_key": key, "project": PROJECT, **fields}
    )
    return live.handle(event, body)


def _turns(live: LiveCapture, key: str) -> None:
    ev(live, "session-start", key)
    ev(live, "user-prompt-submit", key, prompt="We always store amounts in cents.")
    ev(live, "stop", key, last_assistant_message="Amounts are now stored in cents.")
    # The daemon's session end runs on its worker after the jobs these hooks queued (FIFO);
    # a test that calls end_session directly waits for them the same way.
    assert live.worker.wait_idle(20)


def _idle(live: LiveCapture) -> None:
    assert live.worker.wait_idle(20) and live.consolidator.wait_idle(30)
    assert live.worker.wait_idle(20)


def _until(predicate, seconds: float = 30.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not (value := predicate()):
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)
    return value


def _kinds(home: Path, key: str) -> set[str]:
    """The artifact kinds on disk for ``key`` (agent ``default``)."""
    token = ln.session_token("default", key)
    folder = ln.memory_dir(home)
    names = [ln.parse_name(f.name) for f in folder.glob("*.md")] if folder.is_dir() else []
    return {p[2] for p in names if p and p[1] == token}


def test_session_end_consolidates_and_renders_memory_md(
    live: LiveCapture, isolated_home: Path, tmp_path: Path
) -> None:
    """Mid-session (a prompt, settled turns, a pre-compaction checkpoint) nothing is
    consolidated; the session end (journaled, replayed by the worker) leaves the transcript,
    summary and compaction artifacts and a MEMORY.md naming the session."""
    path = tmp_path / f"{KEY}.jsonl"
    shutil.copy(CC_FIXTURE, path)
    where = {"transcript_path": str(path), "project": "/home/ana/ledger"}
    ev(live, "session-start", KEY, **where)
    ev(live, "user-prompt-submit", KEY, prompt="and April?", **where)
    ev(live, "stop", KEY, **where)
    ev(live, "pre-compaction", KEY, **where)
    ev(live, "stop", KEY, **where)
    _idle(live)
    assert _kinds(isolated_home, KEY) == set()
    assert not (isolated_home / "MEMORY.md").exists() and list(live.consolidator.recent) == []
    answer = ev(live, "session-end", KEY, **where)
    assert answer["queued"] is True  # the hook's answer: journaled, nothing done yet
    _until(lambda: live.consolidator.recent)
    _idle(live)
    assert list(live.consolidator.recent) == [(KEY, "consolidated")]
    assert _kinds(isolated_home, KEY) == {"manifest", "transcript", "summary", "compaction"}
    text = (isolated_home / "MEMORY.md").read_text()
    head = next(line for line in text.splitlines() if line.startswith("- **/home/ana/ledger**"))
    assert f"session {KEY}): " in head and "--summary.md|summary]]" in head
    assert f"· session {KEY} · ledger · claude-code · 2 compactions" in text  # temporal index
    assert live.store.get_transcripts([KEY], "default")[KEY].completed_at is not None


def test_replayed_end_changes_nothing(live: LiveCapture, isolated_home: Path) -> None:
    """A second end of the same session passes again and writes nothing: same files, same
    MEMORY.md bytes, status ``unchanged``."""
    _turns(live, "s-twice")
    live.end_session(
        BODIES["session-end"].model_validate(
            {"harness": "claude-code", "session_key": "s-twice", "project": PROJECT}
        )
    )
    _idle(live)
    files = sorted(p.name for p in ln.memory_dir(isolated_home).iterdir())
    memory = (isolated_home / "MEMORY.md").read_bytes()
    live.end_session(
        BODIES["session-end"].model_validate(
            {"harness": "claude-code", "session_key": "s-twice", "project": PROJECT}
        )
    )
    _idle(live)
    assert list(live.consolidator.recent) == [("s-twice", "consolidated"), ("s-twice", "unchanged")]
    assert sorted(p.name for p in ln.memory_dir(isolated_home).iterdir()) == files
    assert (isolated_home / "MEMORY.md").read_bytes() == memory


def test_clear_and_idle_ends_are_consolidated(live: LiveCapture, isolated_home: Path) -> None:
    """A session ended by a ``clear`` start and one ended by the idle limit are consolidated
    like a session end."""
    _turns(live, "s-cleared")
    ev(live, "session-start", "s-after-clear", source="clear")
    _turns(live, "s-quiet")
    live.sessions["s-quiet"].last_seen -= timedelta(hours=5)
    assert live.sweep_idle() == ["s-quiet"]
    _idle(live)
    assert sorted(live.consolidator.recent) == [
        ("s-cleared", "consolidated"),
        ("s-quiet", "consolidated"),
    ]
    text = (isolated_home / "MEMORY.md").read_text()
    assert "· session s-cleared · ledger · claude-code" in text
    assert "· session s-quiet · ledger · claude-code · continues s-cleared" in text
    assert _kinds(isolated_home, "s-after-clear") == set()  # still open


@pytest.mark.parametrize("error", [ContinuityError("disk says no"), RuntimeError("bug")])
def test_failed_pass_keeps_the_session_end(
    live: LiveCapture,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    error: Exception,
) -> None:
    """A pass that fails is logged; the session end (checkpoint, completed row) stands and
    the daemon goes on."""

    def broken(*_a: object, **_k: object) -> None:
        raise error

    monkeypatch.setattr("continuity.lineage.consolidation.consolidate", broken)
    _turns(live, "s-fail")
    with caplog.at_level(logging.WARNING, logger="continuity.daemon"):
        live.end_session(
            BODIES["session-end"].model_validate(
                {"harness": "claude-code", "session_key": "s-fail", "project": PROJECT}
            )
        )
        _idle(live)
    assert list(live.consolidator.recent) == [("s-fail", "failed")]
    assert str(error) in caplog.text and "s-fail" in caplog.text
    assert [c.trigger.value for c in live.store.checkpoints("s-fail")] == ["session_end"]
    assert live.store.get_transcripts(["s-fail"], "default")["s-fail"].completed_at
    assert not (isolated_home / "MEMORY.md").exists()
    _turns(live, "s-next")  # the daemon still answers
    assert live.worker.wait_idle(10)


def test_pass_never_holds_up_hooks_or_other_work(
    live: LiveCapture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a pass runs (held here), hooks are answered and the daemon's own background
    work (rows, settled turns, the next end) completes."""
    from continuity.lineage import consolidation as real

    release, started = threading.Event(), threading.Event()
    original = real.consolidate

    def slow(*a: object, **k: object):  # type: ignore[no-untyped-def]
        started.set()
        assert release.wait(30)
        return original(*a, **k)

    monkeypatch.setattr("continuity.lineage.consolidation.consolidate", slow)
    _turns(live, "s-slow")
    live.end_session(
        BODIES["session-end"].model_validate(
            {"harness": "claude-code", "session_key": "s-slow", "project": PROJECT}
        )
    )
    assert started.wait(10)
    _turns(live, "s-other")
    assert ev(live, "user-prompt-submit", "s-other", prompt="and totals")["prompt_count"] == 2
    assert live.worker.wait_idle(10)  # not behind the held pass
    assert live.consolidator.pending() == 1
    release.set()
    _idle(live)
    assert list(live.consolidator.recent) == [("s-slow", "consolidated")]


def test_consolidation_off_writes_no_lineage(store, isolated_home: Path) -> None:
    """``consolidate=False`` (``[daemon] consolidate_on_end = false``): ends write no
    lineage and no MEMORY.md."""
    live = _live(store, isolated_home, consolidate=False)
    try:
        _turns(live, "s-off")
        live.end_session(
            BODIES["session-end"].model_validate(
                {"harness": "claude-code", "session_key": "s-off", "project": PROJECT}
            )
        )
        _idle(live)
    finally:
        live.close()
    assert _kinds(isolated_home, "s-off") == set() and list(live.consolidator.recent) == []
    assert not (isolated_home / "MEMORY.md").exists()


def test_daemon_settings_switch(isolated_home: Path) -> None:
    """``[daemon] consolidate_on_end`` defaults to on and reads false from config.toml."""
    from continuity.daemon.server import load_settings

    assert load_settings(isolated_home).consolidate_on_end is True
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text("[daemon]\nconsolidate_on_end = false\n")
    assert load_settings(isolated_home).consolidate_on_end is False


def test_worker_stop_with_timeout_drops_tasks_not_started() -> None:
    """``Worker.stop(timeout)`` returns the names of the tasks it dropped; the running one
    finishes, the dropped ones never run."""
    ran: list[str] = []
    gate = threading.Event()
    worker = Worker(lambda: None, tick_seconds=0.05)
    worker.start()
    worker.submit("first", lambda: (gate.wait(10), ran.append("first")))
    worker.submit("second", lambda: ran.append("second"))
    worker.submit("third", lambda: ran.append("third"))
    assert worker.stop(timeout=0.2) == ["second", "third"]
    gate.set()
    assert worker.wait_idle(10)
    assert ran == ["first"]
