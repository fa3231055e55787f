"""The spool: durable lines from the hook command, replayed exactly once by the daemon."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from continuity.daemon.hooks import spool


def _native(n: int) -> bytes:
    payload = json.dumps({"session_id": "s", "prompt": f"p{n}"}).encode()
    return spool.native_line(
        f"{n:032x}", "2026-09-01T08:00:00.000Z", "claude-code", "user-prompt-submit", payload
    )


def test_spool_append_writes_one_line_per_event(tmp_path: Path) -> None:
    """Each append is one complete line; both record shapes parse back."""
    spool.append(tmp_path, _native(1))
    body = spool.body_line(
        "ab" * 16,
        "2026-09-01T08:00:01.000Z",
        "session-end",
        {"harness": "pi", "session_key": "s", "reason": "quit"},
    )
    spool.append(tmp_path, body)
    lines = (tmp_path / "spool" / "events.jsonl").read_bytes().splitlines(keepends=True)
    assert len(lines) == 2 and all(line.endswith(b"\n") for line in lines)
    first, second = (spool.SpooledEvent.parse(line) for line in lines)
    assert json.loads(first.payload) == {"session_id": "s", "prompt": "p1"}
    assert second.body == {"harness": "pi", "session_key": "s", "reason": "quit"}
    with pytest.raises(ValueError):
        spool.append(tmp_path, b"two\nlines\n")
    with pytest.raises(ValueError, match="unknown harness"):
        spool.native_line("00", "t", "cursor", "stop", b"{}")


def test_spool_drain_handles_each_event_once_in_order(tmp_path: Path) -> None:
    """A drain hands every event over in order, removes the files, and a second drain finds
    nothing."""
    for n in range(3):
        spool.append(tmp_path, _native(n))
    seen: list[str] = []
    report = spool.drain(tmp_path, lambda e: seen.append(e.id))
    assert seen == [f"{n:032x}" for n in range(3)] and report.handled == 3
    assert not spool.pending(tmp_path)
    assert spool.drain(tmp_path, lambda e: seen.append(e.id)).handled == 0
    assert len(seen) == 3


def test_spool_drain_resumes_after_a_failure_without_repeats(tmp_path: Path) -> None:
    """A handler error stops the drain at that event; the next drain retries it first and
    never repeats the events already done."""
    for n in range(4):
        spool.append(tmp_path, _native(n))
    seen: list[str] = []

    def flaky(event: spool.SpooledEvent) -> None:
        if event.id.endswith("2") and "fail" not in seen:
            seen.append("fail")
            raise RuntimeError("database is locked")
        seen.append(event.id[-1])

    first = spool.drain(tmp_path, flaky)
    assert first.handled == 2 and "RuntimeError: database is locked" in first.error
    spool.append(tmp_path, _native(9))  # arrives meanwhile: a new file, after the retry
    second = spool.drain(tmp_path, flaky)
    assert seen == ["0", "1", "fail", "2", "3", "9"] and second.error is None


def test_spool_drain_resumes_after_a_crash_from_the_done_marks(tmp_path: Path) -> None:
    """Events marked done before a crash are not handled again (exactly once)."""
    for n in range(3):
        spool.append(tmp_path, _native(n))
    spool._rotate(str(tmp_path / "spool"))  # a drain that crashed after this
    replay = next((tmp_path / "spool").glob("replay-*.jsonl"))
    Path(str(replay) + ".done").write_text(f"{0:032x}\n{1:032x}\n")
    seen: list[str] = []
    report = spool.drain(tmp_path, lambda e: seen.append(e.id))
    assert seen == [f"{2:032x}"] and report.duplicates == 2


def test_spool_drain_sets_bad_lines_and_rejected_events_aside(tmp_path: Path) -> None:
    """A line that is not a record, or an event the handler rejects, goes to rejected.jsonl
    with its reason, once; the events after it still run."""
    folder = tmp_path / "spool"
    spool.append(tmp_path, _native(0))
    spool.append(tmp_path, b'{"v": 1, "id": "x"}\n')
    spool.append(tmp_path, _native(1))

    def handle(event: spool.SpooledEvent) -> None:
        if event.id.endswith("1"):
            raise spool.RejectedEvent("body.prompt: too long")

    report = spool.drain(tmp_path, handle)
    assert (report.handled, report.rejected) == (1, 2)
    rejected = [json.loads(line) for line in (folder / "rejected.jsonl").read_text().splitlines()]
    assert [r["reason"] for r in rejected] == [
        "id and at must be non-empty strings",
        "body.prompt: too long",
    ]
    assert not spool.pending(tmp_path)
