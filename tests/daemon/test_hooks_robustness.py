"""Robustness of the daemon's hook path: too-deep JSON, a replay error that never goes away,
duplicate deliveries (concurrent and across a restart), a transcript file lagging its Stop
answer, and oversized or badly encoded text (each store backend where a store is used)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from continuity.checkpoints.capture import CheckpointConfig
from continuity.core.text import utf8_len
from continuity.daemon.hooks import adapters, spool
from continuity.daemon.hooks.live import LiveCapture
from continuity.daemon.hooks.models import BODIES, MAX_PROMPT_CHARS, StopBody, UserPromptBody
from continuity.daemon.server import create_app
from tests.daemon.livecapture import start_live

#: The daemon serves loopback Host values only (issue 16); TestClient's default is "testserver".
LOCAL = "http://127.0.0.1"

DEEP = b'{"session_id":"deep","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"


def _live(store, home: Path) -> LiveCapture:
    return start_live(store, home)


def ev(live: LiveCapture, event: str, key: str, **fields: object) -> dict:
    body = BODIES[event].model_validate(
        {"harness": "claude-code", "session_key": key, "project": "/tmp/ledger", **fields}
    )
    return live.handle(event, body)


def _native(n: int, payload: bytes = b'{"session_id":"s","prompt":"hi"}') -> bytes:
    return spool.native_line(
        f"{n:032x}", "2026-09-01T08:00:00.000Z", "claude-code", "user-prompt-submit", payload
    )


# ---------------------------------------------------------------------------- 1. deep JSON


def test_adapters_parse_payload_refuses_too_deep_json() -> None:
    """JSON nested 100,000 deep is an AdapterError naming the depth, not a RecursionError."""
    with pytest.raises(adapters.AdapterError, match="nested too deep"):
        adapters.parse_payload(DEEP)


def test_adapters_parse_payload_refuses_bad_utf8() -> None:
    """Bytes that are not UTF-8 are an AdapterError naming stdin."""
    with pytest.raises(adapters.AdapterError, match="stdin: not JSON"):
        adapters.parse_payload(b'{"session_id":"\xff"}')


def test_routes_harness_hook_answers_400_for_too_deep_json(store, isolated_home: Path) -> None:
    """The raw hook route answers 400 (never 500, which the hook would spool) for deep JSON."""
    live = LiveCapture(
        store,
        home=isolated_home,
        config=CheckpointConfig(),
        budget_bytes=1000,
        stop_seconds=10,
        idle_limit=timedelta(hours=4),
    )
    with TestClient(create_app(live), base_url=LOCAL) as client:
        answer = client.post(
            "/api/harness/claude-code/user-prompt-submit",
            content=DEEP,
            headers={"content-type": "application/json"},
        )
    assert answer.status_code == 400
    assert "nested too deep" in answer.json()["detail"]


def test_spool_drain_sets_aside_a_non_transient_error(tmp_path: Path) -> None:
    """An event whose handler raises a non-transient error goes to rejected.jsonl; the events
    after it are handled in the same drain."""
    for n in range(3):
        spool.append(tmp_path, _native(n))
    seen: list[str] = []

    def handler(event: spool.SpooledEvent) -> None:
        if event.id.endswith("1"):
            raise RecursionError("maximum recursion depth exceeded")
        seen.append(event.id[-1])

    report = spool.drain(tmp_path, handler)
    assert (report.handled, report.rejected, report.error) == (2, 1, None)
    assert seen == ["0", "2"] and not spool.pending(tmp_path)
    rejected = [
        json.loads(line)
        for line in (tmp_path / "spool" / "rejected.jsonl").read_text().splitlines()
    ]
    assert [r["reason"] for r in rejected] == ["RecursionError: maximum recursion depth exceeded"]


def test_spool_transient_sorts_errors() -> None:
    """Connection and database-unavailable errors are retried; anything else is not."""

    class OperationalError(Exception):
        pass

    assert spool.transient(ConnectionRefusedError("refused")) is True
    assert spool.transient(OperationalError("server closed")) is True
    assert spool.transient(RuntimeError("database is locked")) is True
    assert spool.transient(RecursionError("too deep")) is False
    assert spool.transient(KeyError("x")) is False


def test_live_replay_rejects_a_spooled_deep_payload(live: LiveCapture) -> None:
    """A too-deep spooled hook input is set aside; the prompt spooled after it is recorded."""
    spool.append(live.home, _native(1, DEEP))
    spool.append(live.home, _native(2, b'{"session_id":"after","prompt":"still here"}'))
    report = live.drain_spool()
    assert (report.handled, report.rejected, report.error) == (1, 1, None)
    assert live.recorder.states["after"].total_prompts == 1


def test_live_replay_refuses_a_spooled_payload_over_max_body_bytes(
    store, isolated_home: Path
) -> None:
    """A security review: a 20 MiB hook input was answered 413 by the daemon, the hook saw the
    connection reset and spooled it, and the replay then accepted what the daemon had refused.
    A spooled payload over ``[daemon] max_body_bytes`` is set aside with the reason; the
    prompt spooled after it is recorded."""
    live = LiveCapture(
        store,
        home=isolated_home,
        config=CheckpointConfig(),
        budget_bytes=1000,
        stop_seconds=10,
        idle_limit=timedelta(hours=4),
        max_body_bytes=65_536,
    )
    try:
        big = b'{"session_id":"big","prompt":"' + b"x" * 70_000 + b'"}'
        spool.append(live.home, _native(1, big))
        spool.append(live.home, _native(2, b'{"session_id":"after","prompt":"still here"}'))
        report = live.drain_spool()
        assert (report.handled, report.rejected, report.error) == (1, 1, None)
        assert "big" not in live.recorder.states
        assert live.recorder.states["after"].total_prompts == 1
        rejected = [
            json.loads(line)
            for line in (isolated_home / "spool" / "rejected.jsonl").read_text().splitlines()
        ]
        assert [r["reason"] for r in rejected] == [
            f"payload of {len(big)} bytes is over [daemon] max_body_bytes (65536): refused as "
            "the daemon refuses such a body (413)"
        ]
    finally:
        live.close()


# ---------------------------------------------------------------------------- 2. duplicates


def test_live_same_event_id_concurrently_is_recorded_once(live: LiveCapture) -> None:
    """Eight threads delivering one event id count the prompt once."""
    ev(live, "session-start", "dup")
    barrier = threading.Barrier(8)
    answers: list[dict] = []

    def deliver() -> None:
        barrier.wait()
        answers.append(ev(live, "user-prompt-submit", "dup", prompt="p", event_id="a" * 32))

    threads = [threading.Thread(target=deliver) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(1 for a in answers if a.get("duplicate")) == 7
    assert live.recorder.states["dup"].total_prompts == 1


def test_live_same_event_id_across_a_restart_is_recorded_once(store, isolated_home: Path) -> None:
    """An event id applied before a restart is answered as a duplicate after it."""
    first = _live(store, isolated_home)
    ev(first, "session-start", "dup2")
    assert (
        ev(first, "user-prompt-submit", "dup2", prompt="p", event_id="b" * 32)["prompt_count"] == 1
    )
    first.close()
    second = _live(store, isolated_home)
    try:
        again = ev(second, "user-prompt-submit", "dup2", prompt="p", event_id="b" * 32)
        assert again == {"session_key": "dup2", "duplicate": True}
    finally:
        second.close()


def test_spool_recent_events_claim_is_exclusive(tmp_path: Path) -> None:
    """A claimed id cannot be claimed again; a released one can; an added one persists."""
    recent = spool.RecentEvents(tmp_path)
    assert recent.claim("x") is True and recent.claim("x") is False
    recent.release("x")
    assert recent.claim("x") is True
    recent.add("x")
    assert "x" in spool.RecentEvents(tmp_path) and "y" not in spool.RecentEvents(tmp_path)


def test_spool_recent_events_file_write_holds_no_other_thread(tmp_path: Path, monkeypatch) -> None:
    """Issue 45 item 10 (bench/load.py): ``add`` writes its line to the file without holding
    the lock every hook's ``claim`` and ``add`` take, so a slow write (under load each system
    call waits for the GIL) does not queue the other hook threads behind it."""
    import threading

    recent = spool.RecentEvents(tmp_path)
    writing, release = threading.Event(), threading.Event()
    real_open = spool.private_open

    def slow_open(path, flags):
        if str(path).endswith(spool.RECENT_IDS_FILE):
            writing.set()
            release.wait(10)
        return real_open(path, flags)

    monkeypatch.setattr(spool, "private_open", slow_open)
    adder = threading.Thread(target=recent.add, args=("a",))
    adder.start()
    try:
        assert writing.wait(10)  # the first thread is writing its line now
        claimed: list[bool] = []
        other = threading.Thread(target=lambda: claimed.append(recent.claim("b")))
        other.start()
        other.join(1.0)
        assert claimed == [True]  # answered while the write is still under way
        assert "a" in recent  # and the id is known before its line is on disk
    finally:
        release.set()
        adder.join(10)
    assert "a" in spool.RecentEvents(tmp_path)


# ---------------------------------------------------------------------------- 3. lagging file


def _line(kind: str, uuid: str, parent: str | None, content: object) -> str:
    return (
        json.dumps(
            {
                "sessionId": "5b7c2e90-lag",
                "cwd": "/tmp/ledger",
                "type": kind,
                "uuid": uuid,
                "parentUuid": parent,
                "timestamp": "2026-09-01T08:00:02.000Z",
                "message": {"role": kind, "content": content},
            }
        )
        + "\n"
    )


def _lagging(live: LiveCapture, tmp_path: Path, *lines: str) -> tuple[str, str]:
    """A started session ``5b7c2e90-lag`` whose transcript file holds ``lines``: (path, key)."""
    path = tmp_path / "5b7c2e90-lag.jsonl"
    path.write_text("".join(lines))
    key = "5b7c2e90-lag"
    ev(live, "session-start", key, transcript_path=str(path))
    return str(path), key


def test_live_stop_answer_kept_when_the_transcript_file_lags(
    live: LiveCapture, tmp_path: Path
) -> None:
    """A Stop answer missing from a lagging transcript file is still the turn's answer in the
    row; once the file holds it, it appears once."""
    path, key = _lagging(
        live, tmp_path, _line("user", "u1", None, "Why does the export skip March?")
    )
    ev(
        live,
        "user-prompt-submit",
        key,
        prompt="Why does the export skip March?",
        transcript_path=path,
    )
    ev(
        live,
        "stop",
        key,
        transcript_path=path,
        last_assistant_message="Fixed: the end month is now included.",
    )
    assert live.worker.wait_idle(10)
    row = live.store.get_transcripts([key], "default")[key]
    assert row.content.endswith("Assistant: Fixed: the end month is now included.")
    with open(path, "a") as fh:  # the file catches up
        fh.write(
            _line(
                "assistant",
                "a1",
                "u1",
                [{"type": "text", "text": "Fixed: the end month is now included."}],
            )
        )
    ev(
        live,
        "stop",
        key,
        transcript_path=path,
        last_assistant_message="Fixed: the end month is now included.",
    )
    assert live.worker.wait_idle(10)
    row = live.store.get_transcripts([key], "default")[key]
    assert row.content.count("Fixed: the end month is now included.") == 1


def test_a_lagging_file_is_imported_again_on_the_workers_ticks(
    store, isolated_home: Path, tmp_path: Path
) -> None:
    """Qwen Code writes its records a few hundred ms after its Stop hook: the turn's file is
    imported again on the worker's ticks (``capture.catch_up``) and the row becomes the file's
    once it holds the answer, without another hook event; a file that never catches up is
    forgotten after ``LAG_TICKS`` ticks. (The worker ticks once an hour here: the test ticks.)"""
    from continuity.daemon.hooks.capture import LAG_TICKS

    live = LiveCapture(
        store,
        home=isolated_home,
        config=CheckpointConfig(),
        budget_bytes=1000,
        stop_seconds=10,
        idle_limit=timedelta(hours=4),
        tick_seconds=3600,
    )
    live.start()
    try:
        _ticks_catch_up(live, tmp_path, LAG_TICKS)
    finally:
        live.close()


def _ticks_catch_up(live: LiveCapture, tmp_path: Path, ticks: int) -> None:
    path, key = _lagging(live, tmp_path, _line("user", "u1", None, "Why is March skipped?"))
    ev(live, "user-prompt-submit", key, prompt="Why is March skipped?", transcript_path=path)
    ev(live, "stop", key, transcript_path=path, last_assistant_message="Fixed: March is in.")
    assert live.worker.wait_idle(10)
    assert key in live.capture.lagging
    live._tick()  # still lagging: kept for the next tick
    assert live.capture.lagging[key][1] == ticks - 1
    with open(path, "a") as fh:
        fh.write(_line("assistant", "a1", "u1", [{"type": "text", "text": "Fixed: March is in."}]))
    live._tick()
    assert live.capture.lagging == {}
    assert live.store.get_session(key).entry_count == 2  # the file's answer, imported
    row = live.store.get_transcripts([key], "default")[key]
    assert row.content == "User: Why is March skipped?\n\nAssistant: Fixed: March is in."

    ev(live, "user-prompt-submit", key, prompt="And April?", transcript_path=path)
    ev(live, "stop", key, transcript_path=path, last_assistant_message="April too.")
    assert live.worker.wait_idle(10)
    for _ in range(ticks):
        assert key in live.capture.lagging
        live._tick()
    assert live.capture.lagging == {}


def test_live_session_end_keeps_live_turns_the_lagging_file_lacks(
    live: LiveCapture, tmp_path: Path
) -> None:
    """A session that ends while its transcript file still lacks the last prompt and the Stop
    answer keeps both in the completed row: the end never replaces delivered turns with a
    file that does not hold them (formats.md §4.1: the file may lag the payload)."""
    path, key = _lagging(
        live,
        tmp_path,
        _line("user", "u1", None, "Why does the export skip March?"),
        _line("assistant", "a1", "u1", [{"type": "text", "text": "Fixed."}]),
    )
    ev(
        live,
        "user-prompt-submit",
        key,
        prompt="Why does the export skip March?",
        transcript_path=path,
    )
    ev(live, "stop", key, transcript_path=path, last_assistant_message="Fixed.")
    assert live.worker.wait_idle(10)  # the file held the turn: the row is the file's
    ev(live, "user-prompt-submit", key, prompt="fix the xterm scrollback", transcript_path=path)
    ev(
        live,
        "stop",
        key,
        transcript_path=path,
        last_assistant_message="Scrollback fixed in assets/js/terminal.js.",
    )
    assert live.worker.wait_idle(10)
    live.end_session(
        BODIES["session-end"].model_validate(
            {
                "harness": "claude-code",
                "session_key": key,
                "project": "/tmp/ledger",
                "transcript_path": path,
            }
        )
    )
    row = live.store.get_transcripts([key], "default")[key]
    assert row.completed_at is not None
    assert row.content == (
        "User: Why does the export skip March?\n\nAssistant: Fixed.\n\n"
        "User: fix the xterm scrollback\n\n"
        "Assistant: Scrollback fixed in assets/js/terminal.js."
    )


def test_live_prompt_kept_when_the_file_lacks_it_at_a_stop_without_answer(
    live: LiveCapture, tmp_path: Path
) -> None:
    """A Stop with no answer while the file lacks the turn's prompt keeps the prompt in the
    row (the newest live turn is what the file must hold before it replaces live turns)."""
    path, key = _lagging(
        live, tmp_path, _line("user", "u1", None, "Why does the export skip March?")
    )
    ev(live, "user-prompt-submit", key, prompt="also cover leap years", transcript_path=path)
    ev(live, "stop", key, transcript_path=path)
    assert live.worker.wait_idle(10)
    row = live.store.get_transcripts([key], "default")[key]
    assert row.content.endswith("User: also cover leap years")


# ---------------------------------------------------------------------------- 4. text


def test_models_prompt_with_lone_surrogate_is_cleaned() -> None:
    """A lone surrogate becomes U+FFFD instead of a 422."""
    body = UserPromptBody.model_validate({"harness": "pi", "session_key": "k", "prompt": "a\ud83d"})
    assert body.prompt == "a\ufffd"


def test_models_oversized_prompt_and_answer_are_clipped() -> None:
    """An oversized prompt or Stop answer keeps its head and tail around the omitted marker."""
    prompt = UserPromptBody.model_validate(
        {"harness": "pi", "session_key": "k", "prompt": "h" + "x" * 1_500_000 + "TAIL"}
    ).prompt
    assert prompt.startswith("hx") and prompt.endswith("xTAIL") and "bytes omitted" in prompt
    assert utf8_len(prompt) <= MAX_PROMPT_CHARS
    answer = StopBody.model_validate(
        {"harness": "pi", "session_key": "k", "last_assistant_message": "é" * 2_100_000 + "END"}
    )
    text = answer.last_assistant_message or ""
    assert text.endswith("éEND") and utf8_len(text) <= 4_000_000


def test_routes_oversized_surrogate_prompt_is_recorded(live: LiveCapture) -> None:
    """Over HTTP an oversized prompt with a lone surrogate is recorded (200, counted)."""
    with TestClient(create_app(live), base_url=LOCAL) as client:
        ev(live, "session-start", "big")
        raw = json.dumps(
            {"harness": "claude-code", "session_key": "big", "prompt": "a\ud83d" * 600_000}
        )  # ASCII: the surrogate escaped
        answer = client.post(
            "/api/hooks/user-prompt-submit",
            content=raw,
            headers={"content-type": "application/json"},
        )
    assert answer.status_code == 200 and answer.json()["prompt_count"] == 1


def test_hook_body_refuses_ancient_and_future_times():
    """A hook 'at' before 2000 or over a day ahead is refused (it would date a checkpoint in
    year 1 and let prune delete it at once)."""
    from datetime import datetime, timedelta

    from pydantic import ValidationError

    from continuity.daemon.hooks.models import SessionStartBody

    with pytest.raises(ValidationError, match="2000-01-01"):
        SessionStartBody(harness="claude-code", session_key="s", at="0001-01-01T00:00:00")
    with pytest.raises(ValidationError, match="one day from now"):
        SessionStartBody(
            harness="claude-code", session_key="s", at=datetime.now(UTC) + timedelta(days=3)
        )
    ok = SessionStartBody(harness="claude-code", session_key="s", at="2026-01-01T00:00:00")
    assert ok.at == datetime(2026, 1, 1, tzinfo=UTC)
