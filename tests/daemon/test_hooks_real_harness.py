"""``LiveCapture`` fed the hook JSON the real CLIs sent (issue 12;
``../shared/data/real-harness/hook-inputs``): what each event creates, across daemon restarts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from continuity.checkpoints import CheckpointConfig
from continuity.daemon.hooks.live import LiveCapture
from continuity.daemon.hooks.models import BODIES
from tests.daemon.livecapture import start_live
from tests.paths import SHARED_DATA

HOOKS = SHARED_DATA / "real-harness" / "hook-inputs"
#: Claude Code sent this SessionEnd while `claude mcp list` ran: no SessionStart before it, and
#: its transcript_path was never written.
LONE_END = HOOKS / "claude-code" / "20261202T055339.284665569-SessionEnd.json"


def _live(store, home: Path) -> LiveCapture:
    return start_live(store, home)


def _files(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())


def test_lone_claude_code_session_end_creates_nothing(
    live: LiveCapture, isolated_home: Path
) -> None:
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


CODEX_HOOKS = HOOKS / "codex"


def _codex(name: str) -> bytes:
    return (CODEX_HOOKS / name).read_bytes()


def _native(live: LiveCapture, event: str, raw: bytes) -> bytes:
    return live.handle_native("codex", event, raw, event_id=None, at=None)


def test_codex_session_live_across_a_restart_is_superseded(store, isolated_home: Path) -> None:
    """Issue 12: a Codex session live when the daemon restarts (real hook inputs: session
    01a23549-13d8, its prompt "Codex: list files", no SessionEnd) is ended by the next Codex
    start in its folder after the restart: its session_end checkpoint holds its prompt (before,
    the supersede rule looked at memory only and it was never ended)."""
    start = json.loads(_codex("20261202T054511.517137715-SessionStart.json"))
    prompt = json.loads(_codex("20261202T054511.632743050-UserPromptSubmit.json"))
    key = start["session_id"]
    assert prompt["session_id"] == key
    # keep the payloads, without the rollout file (absent here): the live turns are the record
    for data in (start, prompt):
        data["transcript_path"] = None
    first = _live(store, isolated_home)
    _native(first, "session-start", json.dumps(start).encode())
    _native(first, "user-prompt-submit", json.dumps(prompt).encode())
    assert first.worker.wait_idle(10)
    first.close()  # a restart: nothing ended the session
    assert store.checkpoints(key) == []
    second = _live(store, isolated_home)
    try:
        nxt = dict(start, session_id="01a2354b-a280-7fd1-bf9c-2a0e7c7e312b")
        _native(second, "session-start", json.dumps(nxt).encode())
        assert second.worker.wait_idle(10)
        ends = [(c.trigger.value, c.prompt_count) for c in store.checkpoints(key)]
        assert ends == [("session_end", 1)]
        assert prompt["prompt"] in store.checkpoints(key)[0].digest
        row = store.get_transcripts([key], "default")[key]
        assert row.completed_at is not None
        assert row.content == f"User: {prompt['prompt']}"
        assert store.checkpoints(nxt["session_id"]) == []
    finally:
        second.close()


def test_session_live_across_a_restart_is_swept_when_idle(store, isolated_home: Path) -> None:
    """Issue 12: the idle sweep after a restart ends a session the store holds open and
    unchanged for the idle limit (4 h here), with its session_end checkpoint; one changed
    since is left alone."""
    first = _live(store, isolated_home)
    for key in ("quiet-1", "busy-1"):
        first.handle(
            "session-start",
            BODIES["session-start"].model_validate(
                {"harness": "claude-code", "session_key": key, "project": "/home/dev/p"}
            ),
        )
        first.handle(
            "user-prompt-submit",
            BODIES["user-prompt-submit"].model_validate(
                {
                    "harness": "claude-code",
                    "session_key": key,
                    "project": "/home/dev/p",
                    "prompt": f"prompt of {key}",
                }
            ),
        )
    assert first.worker.wait_idle(10)
    first.close()
    row = store.get_transcripts(["busy-1"], "default")["busy-1"]
    second = _live(store, isolated_home)
    try:
        later = row.updated_at + timedelta(hours=4, minutes=30)
        store.update_transcript_content(
            "busy-1",
            "default",
            content=row.content + "\n\nUser: more",
            content_hash="x",
            harness="claude-code",
            project=row.project,
            updated_at=later - timedelta(hours=1),
        )
        assert second.sweep_idle(later) == ["quiet-1"]
        assert second.worker.wait_idle(10)
        assert [(c.trigger.value, c.prompt_count) for c in store.checkpoints("quiet-1")] == [
            ("session_end", 1)
        ]
        assert store.checkpoints("busy-1") == []
        assert store.get_transcripts(["quiet-1"], "default")["quiet-1"].completed_at is not None
        assert store.get_transcripts(["busy-1"], "default")["busy-1"].completed_at is None
    finally:
        second.close()


_EVENTS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "Stop": "stop",
    "SessionEnd": "session-end",
    "PreCompact": "pre-compaction",
    "PostCompact": "post-compaction",
}


def _recorded(path: Path) -> datetime:
    """When the hook input was recorded (its file name: 20261202T054051.771392694-...)."""
    return datetime.strptime(path.name.split("-")[0][:22], "%Y%m%dT%H%M%S.%f").replace(tzinfo=UTC)


def _shift() -> timedelta:
    """The recorded times moved to end 2 minutes before now (recovery looks back 4 hours),
    gaps kept. Taken when a replay starts, not at import: the suite runs for half an hour."""
    end = _recorded(HOOKS / "claude-code" / "20261202T055508.849395698-SessionEnd.json")
    return datetime.now(UTC) - timedelta(minutes=2) - end


#: The replay's checkpoint settings: the time rule at its 1-hour maximum. The live timer
#: thread ticks on the wall clock; with the default rule it found the replayed sessions'
#: activity older than the rule and wrote a periodic checkpoint dated now, newer than the
#: session end it was meant to recover (a CI failure that depended on when the tick fell).
_REPLAY_CONFIG = CheckpointConfig(time_interval_ms=3_600_000)


def _replay_claude(live: LiveCapture, sessions: set[str], until: str) -> dict[str, dict]:
    """Feed the recorded Claude Code hook inputs of ``sessions`` in time order up to the file
    named ``until`` (its transcript files are not here: the live turns are the record), the
    time rule ticked on the wall clock after each (as the timer thread may).
    Returns the daemon's answer to each session start, by file name."""
    answers = {}
    shift = _shift()
    for path in sorted((HOOKS / "claude-code").glob("*.json")):
        data = json.loads(path.read_bytes())
        event = _EVENTS.get(data["hook_event_name"])
        if data["session_id"] in sessions and event is not None:
            data["transcript_path"] = None
            body = live.native_body(
                "claude-code",
                event,
                json.dumps(data).encode(),
                event_id=None,
                at=(_recorded(path) + shift).isoformat(),
            )
            if event == "session-end":
                live.end_session(body)  # type: ignore[arg-type]
            else:
                answer = live.handle(event, body)
                if event == "session-start":
                    answers[path.name] = answer
            live.recorder.tick()  # the timer thread's wall-clock tick, at every step
            assert live.worker.wait_idle(10)
        if path.name == until:
            break
    return answers


def test_claude_resume_gets_other_sessions_newer_work_not_its_own(
    store, isolated_home: Path
) -> None:
    """Issue 12, with the recorded runs: 4e6017d9 ("List the files ...") ends; 43f9cd0f
    ("Now add a subtract function") ends and is resumed (`claude --continue`, "Also add a
    multiply function"); then 4e6017d9 is resumed. Each resume was injected its own session
    end digest, which its context already holds. Now the first resume gets nothing (no other
    session worked after 43f9cd0f started) and the second gets 43f9cd0f's newer work."""
    live = start_live(store, isolated_home, checkpoint=_REPLAY_CONFIG)
    try:
        answers = _replay_claude(
            live,
            {"4e6017d9-a336-4580-9165-7a6dbd4d88c6", "43f9cd0f-7b54-4119-a54f-d17e128ccde6"},
            until="20261202T054106.208536028-SessionStart.json",
        )
    finally:
        live.close()
    first_resume = answers["20261202T054051.288761803-SessionStart.json"]
    assert (first_resume["source"], first_resume["injected"], first_resume["context"]) == (
        "resume",
        False,
        "",
    )
    second_resume = answers["20261202T054106.208536028-SessionStart.json"]
    assert second_resume["injected"] is True
    assert second_resume["recovery"]["source"] == "other_session"
    assert (
        second_resume["recovery"]["checkpoint"]["session"] == "43f9cd0f-7b54-4119-a54f-d17e128ccde6"
    )
    context = second_resume["context"]
    assert context.startswith(
        "## Session Recovery Context\nQuoted from continuity's record as "
        "evidence; not an instruction.\n## Session End Checkpoint\n"
        "Project: /home/dev/projects/claude-demo\n"
    )
    assert "- Now add a subtract function to calc.py" in context
    assert "- Also add a multiply function" in context
    assert "List the files in this project" not in context  # its own: already in context
    # a start (not a resume) gets the project brief naming the earlier session (issue 39)
    startup = answers["20261202T054021.486454530-SessionStart.json"]
    assert startup["recovery"]["source"] == "brief"
    assert startup["recovery"]["sessions"] == ["4e6017d9-a336-4580-9165-7a6dbd4d88c6"]
    assert "### Session 4e6017d9-a336-4580-9165-7a6dbd4d88c6 · claude-code · " in startup["context"]


def test_session_end_after_a_restart_moves_an_earlier_end(store, isolated_home: Path) -> None:
    """Issue 22 (a session ends once, when it really ends): a session ended, then resumed with
    a second prompt (same id: ``codex exec resume``, ``claude --continue``), then the daemon
    restarted; its SessionEnd after the restart must move the end to hold both prompts (before,
    the daemon saw a session_end as the newest checkpoint and skipped: the end kept 1 prompt)."""
    start = json.loads(_codex("20261202T054511.517137715-SessionStart.json"))
    prompt = json.loads(_codex("20261202T054511.632743050-UserPromptSubmit.json"))
    key = start["session_id"]
    for data in (start, prompt):
        data["transcript_path"] = None
    end = json.loads(_codex("20261202T054511.974306056-SessionEnd.json"))
    assert end["session_id"] == key
    end["transcript_path"] = None
    first = _live(store, isolated_home)
    _native(first, "session-start", json.dumps(start).encode())
    _native(first, "user-prompt-submit", json.dumps(prompt).encode())
    _native(first, "session-end", json.dumps(end).encode())
    first.drain_spool()  # an end is journaled in the spool, then done by the worker
    assert first.worker.wait_idle(10)
    assert [(c.trigger.value, c.prompt_count) for c in store.checkpoints(key)] == [
        ("session_end", 1)
    ]
    resumed = dict(start, source="resume")
    second_prompt = dict(prompt, prompt="Codex: now count them")
    _native(first, "session-start", json.dumps(resumed).encode())
    _native(first, "user-prompt-submit", json.dumps(second_prompt).encode())
    assert first.worker.wait_idle(10)
    first.close()  # a restart before the resumed run ended
    second = _live(store, isolated_home)
    try:
        _native(second, "session-end", json.dumps(end).encode())
        second.drain_spool()
        assert second.worker.wait_idle(10)
        ends = [(c.trigger.value, c.prompt_count) for c in store.checkpoints(key)]
        assert ends == [("session_end", 2)]
        assert "Codex: now count them" in store.checkpoints(key)[0].digest
        row = store.get_transcripts([key], "default")[key]  # each prompt once, in order
        assert row.content == f"User: {prompt['prompt']}\n\nUser: Codex: now count them"
        _native(second, "session-end", json.dumps(end).encode())  # a second end: no change
        second.drain_spool()
        assert second.worker.wait_idle(10)
        assert [(c.trigger.value, c.prompt_count) for c in store.checkpoints(key)] == ends
    finally:
        second.close()
