"""``LiveCapture``, the daemon's service, without HTTP: implied session ends, restarts,
duplicates, live transcript turns and the settled-turn policy (each store backend)."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from continuity.checkpoints.capture import CheckpointConfig
from continuity.daemon.hooks.live import LiveCapture
from continuity.daemon.hooks.models import BODIES
from continuity.transcripts.session_transcripts import TranscriptLog, content_hash, transcript_path
from tests.builders import stored_transcript
from tests.daemon.livecapture import start_live

CC_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code" / "compaction.jsonl"


def _live(store, home: Path, **config: int) -> LiveCapture:
    return start_live(store, home, checkpoint=CheckpointConfig(**config))


def ev(
    live: LiveCapture,
    event: str,
    key: str,
    *,
    harness: str = "claude-code",
    project: str = "/tmp/ledger",
    **fields: object,
) -> dict:
    body = BODIES[event].model_validate(
        {"harness": harness, "session_key": key, "project": project, **fields}
    )
    if event == "session-end":
        return live.end_session(body)  # type: ignore[arg-type]
    return live.handle(event, body)


def _triggers(live: LiveCapture, key: str) -> list[tuple[str, int]]:
    return [(c.trigger.value, c.prompt_count) for c in live.store.checkpoints(key)]


def test_live_clear_start_ends_the_previous_session(live: LiveCapture) -> None:
    """A `clear` start writes the previous session's session_end and completes its
    transcript (Claude Code sends no SessionEnd then)."""
    ev(live, "session-start", "before")
    ev(live, "user-prompt-submit", "before", prompt="first")
    ev(live, "session-start", "after", source="clear")
    assert _triggers(live, "before") == [("session_end", 1)]
    assert live.worker.wait_idle(10)
    row = live.store.get_transcripts(["before"], "default")["before"]
    assert row.completed_at is not None and "before" not in live.sessions


def test_live_codex_start_supersedes_codex_sessions_of_the_project(live: LiveCapture) -> None:
    """Codex has no SessionEnd: a new Codex session in the folder ends the older one, not a
    Claude Code session there."""
    ev(live, "session-start", "cx1", harness="codex")
    ev(live, "user-prompt-submit", "cx1", harness="codex", prompt="p")
    ev(live, "session-start", "cc1")
    ev(live, "user-prompt-submit", "cc1", prompt="p")
    ev(live, "session-start", "cx2", harness="codex")
    assert _triggers(live, "cx1") == [("session_end", 1)]
    assert _triggers(live, "cc1") == []


def test_live_idle_sessions_are_ended(live: LiveCapture) -> None:
    """A session silent for the idle limit is ended with its checkpoint."""
    ev(live, "session-start", "quiet")
    ev(live, "user-prompt-submit", "quiet", prompt="p")
    live.sessions["quiet"].last_seen -= timedelta(hours=5)
    assert live.sweep_idle() == ["quiet"]
    assert _triggers(live, "quiet") == [("session_end", 1)]


def test_live_duplicate_event_id_applies_once(live: LiveCapture) -> None:
    """The same event id twice (a hook retried after a timeout) counts once."""
    ev(live, "session-start", "d1")
    first = ev(live, "user-prompt-submit", "d1", prompt="p", event_id="e" * 32)
    again = ev(live, "user-prompt-submit", "d1", prompt="p", event_id="e" * 32)
    assert first["prompt_count"] == 1 and again == {"session_key": "d1", "duplicate": True}


def test_live_turns_without_a_transcript_file(live: LiveCapture) -> None:
    """Without a transcript file the row holds the live turns: prompts and the Stop
    payload's last assistant message (the JSONL record first, the row in the background); a
    prompt typed twice is two turns."""
    ev(live, "session-start", "t1")
    ev(live, "user-prompt-submit", "t1", prompt="fix March")
    ev(live, "stop", "t1", last_assistant_message="Fixed: end month included.")
    ev(live, "user-prompt-submit", "t1", prompt="continue")
    ev(live, "user-prompt-submit", "t1", prompt="continue")
    records = [
        r.content
        for r in TranscriptLog(transcript_path(live.home, "claude-code")).read(session_key="t1")
    ]
    assert records == [
        "User: fix March",
        "Assistant: Fixed: end month included.",
        "User: continue",
        "User: continue",
    ]
    assert live.worker.wait_idle(10)
    row = live.store.get_transcripts(["t1"], "default")["t1"]
    assert row.content == "\n\n".join(records)


def test_live_turns_append_only_their_own_text(live: LiveCapture) -> None:
    """Issue 17 (revision 0018): each row write of live turns adds only those turns' text (one
    part each), so a turn costs its own bytes, not the session's; the row reads as the whole
    text with the hash of the whole, also for a daemon that finds the row open at restart."""
    ev(live, "session-start", "t2")
    for prompt in ("one", "two", "three"):
        ev(live, "user-prompt-submit", "t2", prompt=prompt)
        assert live.worker.wait_idle(10)
    assert stored_transcript(live.store, "t2") == ["User: one", "\n\nUser: two", "\n\nUser: three"]
    row = live.store.get_transcripts(["t2"], "default")["t2"]
    whole = "User: one\n\nUser: two\n\nUser: three"
    assert row.content == whole and row.content_hash == content_hash(whole)
    restarted = start_live(live.store, live.home)
    try:
        ev(restarted, "user-prompt-submit", "t2", prompt="four")
        assert restarted.worker.wait_idle(10)
    finally:
        restarted.close()
    assert stored_transcript(live.store, "t2")[-1] == "\n\nUser: four"
    row = live.store.get_transcripts(["t2"], "default")["t2"]
    assert row.content == whole + "\n\nUser: four"
    assert row.content_hash == content_hash(whole + "\n\nUser: four")


def test_live_restart_rebuilds_state_from_the_transcript(
    store, isolated_home: Path, tmp_path: Path
) -> None:
    """After a restart the session's counts come back from its imported rows, and an end
    already written is not written again."""
    path = tmp_path / "5b7c2e90-aaaa.jsonl"
    shutil.copy(CC_FIXTURE, path)
    first = _live(store, isolated_home)
    ev(first, "session-start", "5b7c2e90-aaaa", transcript_path=str(path))
    assert first.worker.wait_idle(10)
    first.close()
    second = _live(store, isolated_home)
    try:
        answer = ev(
            second,
            "user-prompt-submit",
            "5b7c2e90-aaaa",
            transcript_path=str(path),
            prompt="one more",
        )
        assert answer["prompt_count"] == 3  # two requests in the file, then this one
        ev(second, "session-end", "5b7c2e90-aaaa", transcript_path=str(path))
        # the file is months old: the time rule fires at the first prompt after the restart
        assert _triggers(second, "5b7c2e90-aaaa") == [("periodic", 3), ("session_end", 3)]
    finally:
        second.close()
    third = _live(store, isolated_home)
    try:
        ev(third, "session-end", "5b7c2e90-aaaa", transcript_path=str(path))
        assert _triggers(third, "5b7c2e90-aaaa") == [("periodic", 3), ("session_end", 3)]
    finally:
        third.close()


def test_live_settled_turn_compacts_as_fenced_owner(live: LiveCapture, tmp_path: Path) -> None:
    """A settled turn over the budget gets a continuation checkpoint; another owner's lease
    makes the policy stand back and write nothing."""
    path = tmp_path / "5b7c2e90-aaaa.jsonl"
    shutil.copy(CC_FIXTURE, path)
    info_key = "5b7c2e90-aaaa"
    ev(live, "session-start", info_key, transcript_path=str(path))
    assert live.worker.wait_idle(10)
    with open(path, "a") as fh:  # the session goes on after its last compaction
        for n, (kind, text) in enumerate(
            [("user", "now add leap years"), ("assistant", "Leap years handled. " * 100)]
        ):
            fh.write(
                json.dumps(
                    {
                        "sessionId": info_key,
                        "cwd": "/home/ana/ledger",
                        "type": kind,
                        "uuid": f"n{n}",
                        "parentUuid": "c21" if n == 0 else "n0",
                        "timestamp": f"2026-09-01T11:0{n + 1}:00.000Z",
                        "isSidechain": False,
                        "message": {"role": kind, "content": text},
                    }
                )
                + "\n"
            )
    lease = live.store.acquire_lease(info_key, "someone-else", 60)
    ev(live, "stop", info_key)
    assert live.worker.wait_idle(10)
    assert live.sessions[info_key].last_outcome["reason"] == "lease_held"
    live.store.release_lease(lease)
    ev(live, "stop", info_key)
    assert live.worker.wait_idle(10)
    outcome = live.sessions[info_key].last_outcome
    assert outcome["status"] == "compacted", (outcome["reason"], outcome["view_bytes"])
    assert live.store.latest_compaction(info_key).compaction.continuation


def test_live_group_commit_shares_fsyncs_between_threads(tmp_path: Path) -> None:
    """Concurrent live records all land, each exactly once, in fewer appends (fsyncs) than
    records; an append error reaches every caller of its batch."""
    import threading
    import time as _time

    from continuity.daemon.hooks.journal import GroupAppender

    class SlowLog:
        def __init__(self) -> None:
            self.calls: list[list[int]] = []

        def append(self, records: list[int]) -> int:
            _time.sleep(0.01)  # an fsync
            self.calls.append(list(records))
            return len(records)

    log = SlowLog()
    appender = GroupAppender(log)
    threads = [threading.Thread(target=appender.append, args=(n,)) for n in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    written = [r for call in log.calls for r in call]
    assert sorted(written) == list(range(40)) and len(log.calls) < 20

    class BrokenLog:
        def append(self, records: list[int]) -> int:
            raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space left"):
        GroupAppender(BrokenLog()).append(1)


def test_live_turn_after_a_crash_repairs_the_torn_tail(
    store, isolated_home: Path, tmp_path: Path
) -> None:
    """A crash cut the canonical JSONL's last record in half (an imported session's): the
    next live turn is written after the repair, on a line of its own (the fragment kept in
    ``.torn``), and the imported session's records are rewritten from the database."""
    live = LiveCapture(
        store,
        home=isolated_home,
        config=CheckpointConfig(),
        budget_bytes=240_000,
        stop_seconds=10,
        idle_limit=timedelta(hours=4),
        tick_seconds=0.05,
    )
    live.start()
    try:
        key, path = "5b7c2e90-aaaa", tmp_path / "5b7c2e90-aaaa.jsonl"
        shutil.copy(CC_FIXTURE, path)
        ev(live, "session-start", key, transcript_path=str(path))
        ev(live, "stop", key, transcript_path=str(path))  # import, then its records written
        assert live.worker.wait_idle(10)
        log_path = transcript_path(isolated_home, "claude-code")
        before = [r.id for r in TranscriptLog(log_path).read(session_key=key)]
        assert len(before) == 9  # visible rows of the fixture
        data = log_path.read_bytes()
        start = data.rstrip(b"\n").rfind(b"\n") + 1
        fragment = data[start : start + (len(data) - start) // 2]
        log_path.write_bytes(data[:start] + fragment)  # the crash
        ev(live, "user-prompt-submit", "after-crash", prompt="where were we")
        assert live.worker.wait_idle(10)
        bad: list = []
        records = list(TranscriptLog(log_path).read(bad=bad))
        assert bad == [] and log_path.read_bytes().endswith(b"\n")
        assert [r.content for r in records if r.session_key == "after-crash"] == [
            "User: where were we"
        ]
        assert [r.id for r in records if r.session_key == key] == before
        assert (log_path.parent / "transcript.jsonl.torn").read_bytes() == fragment + b"\n"
    finally:
        live.close()


# ---------------------------------------------------------------------------- B27, live


def _cc_line(key: str, n: int, kind: str, content: object, parent: str | None) -> str:
    """One Claude Code transcript line (``kind`` user or assistant) of session ``key``."""
    message: dict = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=f"msg_{n}", model="claude-opus-4-6", stop_reason="tool_use")
    return (
        json.dumps(
            {
                "sessionId": key,
                "cwd": "/tmp/ledger",
                "version": "2.1.40",
                "type": kind,
                "uuid": f"u{n}",
                "parentUuid": parent,
                "isSidechain": False,
                "timestamp": f"2026-09-01T08:{n:02d}:00.000Z",
                "message": message,
            }
        )
        + "\n"
    )


def _todo_turn(key: str, n: int, prompt: str, todos: list[dict]) -> str:
    """A prompt, the agent's TodoWrite call writing ``todos`` and its result (lines n..n+2)."""
    call = {"type": "tool_use", "id": f"toolu_{n}", "name": "TodoWrite", "input": {"todos": todos}}
    result = {
        "type": "tool_result",
        "tool_use_id": f"toolu_{n}",
        "content": "Todos have been modified successfully.",
    }
    return (
        _cc_line(key, n, "user", prompt, f"u{n - 1}" if n else None)
        + _cc_line(key, n + 1, "assistant", [call], f"u{n}")
        + _cc_line(key, n + 2, "user", [result], f"u{n + 1}")
    )


TODOS_OLD = [
    {
        "content": "Find why March is skipped",
        "status": "in_progress",
        "activeForm": "Finding why March is skipped",
    }
]
TODOS_NEW = [
    {
        "content": "Find why March is skipped",
        "status": "completed",
        "activeForm": "Finding why March is skipped",
    },
    {
        "content": "Make month_range end-inclusive",
        "status": "in_progress",
        "activeForm": "Making month_range end-inclusive",
    },
    {
        "content": "Add a regression test for March",
        "status": "pending",
        "activeForm": "Adding a regression test for March",
    },
]
OPEN_NEW = [
    "- [in_progress] Make month_range end-inclusive",
    "- [pending] Add a regression test for March",
]


def _open_tasks(digest: str) -> list[str]:
    """The lines of a digest's ``### Open Tasks`` block ([] without one)."""
    if "### Open Tasks\n" not in digest:
        return []
    return digest.split("### Open Tasks\n")[1].split("\n\n")[0].splitlines()


def test_b27_live_pre_compaction_digest_lists_the_open_todos(
    live: LiveCapture, tmp_path: Path
) -> None:
    """B27 on the live path: the agent's newest TodoWrite list reaches the live session's
    checkpoints. The background import after a prompt feeds the older list; the
    pre-compaction hook imports the file's new lines itself (the TodoWrite the worker has not
    imported yet), so its digest lists the newest list's open items by title, in progress
    first, and none of the older list's; the session end's digest lists them too."""
    key = "7d1e0c44-bbbb"
    path = tmp_path / f"{key}.jsonl"
    path.write_text(_todo_turn(key, 0, "Why does the export skip March?", TODOS_OLD))
    ev(live, "session-start", key, transcript_path=str(path))
    ev(
        live,
        "user-prompt-submit",
        key,
        transcript_path=str(path),
        prompt="Why does the export skip March?",
    )
    assert live.worker.wait_idle(10)
    assert [t.title for t in live.recorder.states[key].tasks] == ["Find why March is skipped"]
    with open(path, "a") as fh:  # the next turn's TodoWrite, not imported by anyone yet
        fh.write(_todo_turn(key, 3, "fix it", TODOS_NEW))
    answer = ev(live, "pre-compaction", key, transcript_path=str(path))
    digest = answer["checkpoint"]["digest"]
    assert digest.startswith("## Pre-Compaction Checkpoint\n")
    assert _open_tasks(digest) == OPEN_NEW
    assert live.store.get_session(key).entry_count == 6  # both turns imported, once each
    ev(live, "user-prompt-submit", key, transcript_path=str(path), prompt="go on")
    ended = ev(live, "session-end", key, transcript_path=str(path))
    assert _open_tasks(ended["checkpoint"]["digest"]) == OPEN_NEW


def test_b27_live_task_feed_reads_only_the_rows_an_import_added(
    live: LiveCapture, tmp_path: Path, monkeypatch
) -> None:
    """The feed reads the store from the first row the import added (never the whole
    session again): after 40 rows are stored, a grown file's import reads from seq 40 on."""
    key = "9a3f5e10-cccc"
    path = tmp_path / f"{key}.jsonl"
    path.write_text(
        "".join(
            _cc_line(
                key,
                n,
                "user" if n % 2 == 0 else "assistant",
                f"turn {n}",
                f"u{n - 1}" if n else None,
            )
            for n in range(40)
        )
    )
    ev(live, "session-start", key, transcript_path=str(path))
    assert live.worker.wait_idle(10)
    assert live.store.get_session(key).entry_count == 40
    reads: list[int] = []
    entries = live.store.entries

    def spy(session_key: str, **kw):  # type: ignore[no-untyped-def]
        reads.append(kw["after_seq"])
        return entries(session_key, **kw)

    monkeypatch.setattr(live.store, "entries", spy)
    with open(path, "a") as fh:
        fh.write(_todo_turn(key, 40, "plan it", TODOS_NEW))
    ev(live, "pre-compaction", key, transcript_path=str(path))
    assert reads == [39]
    assert [t.title for t in live.recorder.states[key].tasks][1:] == [
        "Make month_range end-inclusive",
        "Add a regression test for March",
    ]


def test_b27_live_restart_keeps_the_task_list(store, isolated_home: Path, tmp_path: Path) -> None:
    """After a daemon restart the session's state is rebuilt with its newest task list (read
    from its last rows): the first pre-compaction digest lists the open todos."""
    key = "4c8b2a77-dddd"
    path = tmp_path / f"{key}.jsonl"
    path.write_text(_todo_turn(key, 0, "first", TODOS_OLD) + _todo_turn(key, 3, "more", TODOS_NEW))
    first = _live(store, isolated_home)
    ev(first, "session-start", key, transcript_path=str(path))
    assert first.worker.wait_idle(10)
    first.close()
    second = _live(store, isolated_home)
    try:
        answer = ev(second, "pre-compaction", key, transcript_path=str(path))
        assert _open_tasks(answer["checkpoint"]["digest"]) == OPEN_NEW
    finally:
        second.close()


def test_gemini_auto_pre_compress_is_a_check_not_a_compaction(live: LiveCapture) -> None:
    """Issue 42 review: Gemini CLI fires PreCompress (trigger ``auto``) before every request
    with history, compaction or not, and each wrote a ``pre_compaction`` checkpoint (two in
    a one-prompt run). Its auto trigger writes none; its ``manual`` one (``/compress``) and
    every other harness's ``auto`` do."""
    key = "gemini-precompress"
    ev(live, "session-start", key, harness="gemini-cli")
    ev(live, "user-prompt-submit", key, harness="gemini-cli", prompt="fix the parser")
    for _ in range(2):
        answer = ev(live, "pre-compaction", key, harness="gemini-cli", trigger="auto")
        assert answer["checkpoint"] is None and answer["session_key"] == key
    assert "pre_compaction" not in [t for t, _ in _triggers(live, key)]
    answer = ev(live, "pre-compaction", key, harness="gemini-cli", trigger="manual")
    assert answer["checkpoint"] is not None
    assert [t for t, _ in _triggers(live, key)].count("pre_compaction") == 1
    other = "claude-precompact"
    ev(live, "session-start", other)
    ev(live, "user-prompt-submit", other, prompt="fix the parser")
    assert ev(live, "pre-compaction", other, trigger="auto")["checkpoint"] is not None
