"""Issue 45 item 1: one timestamp out of range never stops a workspace.

A Claude Code row stamped ``9999-12-31T23:59:59Z`` made every later ``import`` and ``watch``
end in an ``OverflowError`` from the checkpoint timer, and no other session of the workspace
got checkpoints or transcripts again. Now such a field is a warning naming file and line, the
row keeps no time (its raw line is stored as it was), and every other session gets what it
would have got without that file.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st
from typer.testing import CliRunner

from continuity.checkpoints import CheckpointConfig, CheckpointQueue, CheckpointRecorder
from continuity.cli.app import app
from continuity.core.when import EARLIEST_TIME, LATEST_TIME
from continuity.formats.claude_code import ClaudeCodeReader
from continuity.formats.codex import CodexReader
from continuity.formats.jsonl import Line
from continuity.formats.opencode import OpenCodeReader
from continuity.formats.pi import PiReader
from continuity.store import open_store
from tests.paths import SHARED_DATA

BAD_KEY = "bad00000-0000-0000-0000-000000000000"
FAR = "9999-12-31T23:59:59Z"
runner = CliRunner()


def _bad_copy(src: Path, dst_dir: Path) -> tuple[Path, int]:
    """``src`` (tool_heavy.jsonl) as another session whose first prompt after line 3 is
    stamped ``FAR``; returns the file and that line's number."""
    out, bad_line = [], 0
    for n, raw in enumerate(src.read_text().splitlines(), 1):
        d = json.loads(raw)
        if not bad_line and d.get("type") == "user" and n > 4:
            d["timestamp"], bad_line = FAR, n
        text = json.dumps(d)
        if d.get("sessionId"):
            text = text.replace(d["sessionId"], BAD_KEY)
        out.append(text)
    path = dst_dir / f"{BAD_KEY}.jsonl"
    path.write_text("\n".join(out) + "\n")
    return path, bad_line


def _import(home: Path, folder: Path) -> dict:
    result = runner.invoke(
        app, ["import", str(folder), "--home", str(home), "--json", "--no-embed"]
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _derived(home: Path) -> dict[str, tuple[list, bool]]:
    """Per session: its checkpoints as ``(trigger, created_at)`` and whether it has a
    transcript."""
    with open_store(_url(home)) as store:
        out = {}
        for s in store.list_sessions(limit=0):
            cps = [(c.trigger.value, c.created_at) for c in store.checkpoints(s.key)]
            out[s.key] = (cps, s.key in store.get_transcripts([s.key], s.agent_id))
        return out


def _url(home: Path) -> str:
    from continuity.core.config import database_url

    return database_url(home)


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path, int]:
    """``good``: two real Claude Code sessions; ``mixed``: the same two beside the bad copy."""
    good, mixed = tmp_path / "good", tmp_path / "mixed"
    good.mkdir(), mixed.mkdir()
    for name in ("short.jsonl", "tool_heavy.jsonl"):
        shutil.copy(SHARED_DATA / "claude-code" / name, good / name)
        shutil.copy(SHARED_DATA / "claude-code" / name, mixed / name)
    _, bad_line = _bad_copy(SHARED_DATA / "claude-code" / "tool_heavy.jsonl", mixed)
    return good, mixed, bad_line


def test_a_row_out_of_range_is_a_warning_and_every_other_session_gets_its_checkpoints(
    tmp_path, folders
):
    """The reproduction: the import exits 0, warns ``timestamp: '9999-…' is out of range``
    on the bad file's line, and the other sessions get exactly the checkpoints and
    transcripts they get when imported without it; the bad session gets its own, and its row
    keeps no time while its raw line is kept."""
    good, mixed, bad_line = folders
    _import(tmp_path / "alone", good)
    report = _import(tmp_path / "ws", mixed)
    bad = next(f for f in report["files"] if f["session"] == BAD_KEY)
    assert [
        (
            w["line"],
            "out of range" in w["message"]
            and FAR in w["message"]
            and w["message"].startswith("timestamp:"),
        )
        for w in bad["warnings"]
    ] == [(bad_line, True)]
    assert report["checkpoints_failed"] == [] and report["transcripts_failed"] == []
    alone, mixed_derived = _derived(tmp_path / "alone"), _derived(tmp_path / "ws")
    assert {k: v for k, v in mixed_derived.items() if k != BAD_KEY} == alone
    cps, has_transcript = mixed_derived[BAD_KEY]
    assert cps and has_transcript
    with open_store(_url(tmp_path / "ws")) as store:
        rows = store.entries(BAD_KEY, limit=10_000)
        row = next(e for e in rows if e.source and e.source.line == bad_line)
        assert row.timestamp is None
        raw = [r.data for r in store.raw_lines(row.source.path) if r.line_no == bad_line]
    assert len(raw) == 1 and FAR.encode() in raw[0]  # the value itself is kept, losslessly


def test_a_time_stored_out_of_range_reads_as_none_and_import_goes_on(tmp_path, folders):
    """A workspace an earlier version left with a ``9999-12-31T23:59:59Z`` row (and the row
    due for its checkpoints): the store reads the time as None, so the next import, which
    derives the due rows again, replays every session without a traceback."""
    _good, mixed, _ = folders
    home = tmp_path / "ws"
    _import(home, mixed)
    from sqlalchemy import text

    with open_store(_url(home)) as store:
        with store.engine.begin() as conn:
            conn.execute(
                text("UPDATE entries SET ts = :far WHERE session_key = :k"),
                {"far": datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC), "k": BAD_KEY},
            )
            conn.execute(
                text("UPDATE sessions SET started_at = :y1 WHERE session_key = :k"),
                {"y1": datetime(1, 1, 1, tzinfo=UTC), "k": BAD_KEY},
            )
            conn.execute(text("UPDATE sources SET pending_from = 0"))
        assert {e.timestamp for e in store.entries(BAD_KEY, limit=10_000)} == {None}
        assert store.get_session(BAD_KEY).started_at is None
        from continuity.checkpoints import replay_session

        replay_session(store, BAD_KEY, config=CheckpointConfig())  # no OverflowError
    report = _import(home, mixed)
    assert report["checkpoints_failed"] == [] and report["transcripts_failed"] == []


def test_the_archiver_pass_imports_every_session_beside_the_bad_one(tmp_path, folders):
    """``watch`` and ``serve``'s archiver run the same pass: it ends (no crash loop) and
    every session gets checkpoints and a transcript."""
    from continuity.archive.archiver import Archiver

    _, mixed, _ = folders
    home = tmp_path / "h"
    result = Archiver({"claude_code": mixed}, home=home).run_pass()
    assert result.files == 3
    derived = _derived(home)
    assert len(derived) == 3 and all(cps and has for cps, has in derived.values())


def test_one_failing_session_never_stops_the_others_replay(tmp_path, folders, monkeypatch):
    """The per-session loop of the checkpoint phase isolates any failure: a session whose
    replay raises is reported in ``checkpoints_failed`` naming it, and the other sessions'
    checkpoints are the ones they get alone."""
    import continuity.checkpoints.recovery as recovery

    good, _, _ = folders
    _import(tmp_path / "alone", good)
    real = recovery._plan

    def plan(store, key, *args, **kw):
        if key == "55604662-cf2a-4331-851a-ec234028f8ca":  # short.jsonl
            raise ArithmeticError("boom")
        return real(store, key, *args, **kw)

    monkeypatch.setattr(recovery, "_plan", plan)
    report = _import(tmp_path / "ws", good)
    assert report["checkpoints_failed"] == [
        {"session": "55604662-cf2a-4331-851a-ec234028f8ca", "reason": "ArithmeticError: boom"}
    ]
    alone, got = _derived(tmp_path / "alone"), _derived(tmp_path / "ws")
    key = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"
    assert got[key] == alone[key]


def test_the_live_timer_skips_a_session_it_cannot_time_and_fires_the_others():
    """The daemon's timer (``tick``) over two sessions, one last checkpointed at the end of
    time: the other's periodic checkpoint is still made."""
    rows: list = []
    now = datetime(2026, 12, 1, tzinfo=UTC)
    rec = CheckpointRecorder(
        CheckpointQueue(rows.extend, clock=lambda: now), CheckpointConfig(), clock=lambda: now
    )
    far = datetime.max.replace(tzinfo=UTC)
    for key, at in (("far", far), ("near", now - timedelta(hours=1))):
        rec.start_session(key, harness="claude-code", project="/p", at=at)
        rec.states[key].record_prompt("hello")
    fired = rec.tick(now)
    assert [c.session_key for c in fired] == ["near"]
    rec.queue.flush()
    assert [c.session_key for c in rows] == ["near"]


# ---------------------------------------------------------------------------- properties


def _line(data: dict, number: int = 7) -> Line:
    raw = json.dumps(data).encode()
    return Line(number, 0, raw, data, None)


def _claude(ts):
    r = ClaudeCodeReader("/x/s.jsonl", [{"sessionId": "s"}])
    return r, r.read(
        _line(
            {
                "type": "user",
                "sessionId": "s",
                "uuid": "u1",
                "timestamp": ts,
                "message": {"role": "user", "content": "hi"},
            }
        )
    )


def _codex(ts):
    r = CodexReader("/x/s.jsonl", [{"type": "session_meta", "payload": {"id": "s"}}])
    return r, r.read(
        _line(
            {
                "timestamp": ts,
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "hi"}],
                },
            }
        )
    )


def _pi(ts):
    r = PiReader("/x/s.jsonl", [{"type": "session", "id": "s", "version": 3}])
    return r, r.read(
        _line(
            {
                "type": "message",
                "id": "a1",
                "parentId": None,
                "timestamp": ts,
                "message": {"role": "user", "content": "hi"},
            }
        )
    )


def _opencode(ts):
    r = OpenCodeReader("/x/s.jsonl", [{"type": "opencode.session", "session": {"id": "s"}}])
    return r, r.read(
        _line(
            {
                "type": "opencode.message",
                "message": {"id": "m1", "data": {"role": "user", "time": {"created": ts}}},
            }
        )
    )


_aware = st.datetimes(
    min_value=datetime(1, 1, 1),
    max_value=datetime(9999, 12, 31, 23, 59, 59),
    timezones=st.sampled_from(
        [None, UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12))]
    ),
)
_TIMES = st.one_of(
    _aware.map(lambda d: d.isoformat()),
    _aware.map(lambda d: d.isoformat().replace("+00:00", "Z")),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        [
            FAR,
            "0001-01-01T00:00:00Z",
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
            253402300799,
            253402300799999,
            -62135596800,
            10**19,
            1e300,
            "yesterday",
        ]
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_TIMES, which=st.sampled_from([_claude, _codex, _pi, _opencode]))
def test_every_reader_keeps_a_time_in_range_or_warns_naming_line_and_field(value, which):
    """Through every harness reader: the row's time is None or an aware UTC time in
    ``EARLIEST_TIME`` .. ``LATEST_TIME``; a value given that yields none is a warning on the
    row's line naming the field. Never a traceback."""
    if which is _opencode and not isinstance(value, (int, float)):
        value = 10**19  # OpenCode stores epoch numbers only
    reader, entry = which(value)
    assert entry is not None
    ts = entry.timestamp
    if ts is not None:
        assert ts.tzinfo is not None and ts.utcoffset() == timedelta(0)
        assert EARLIEST_TIME <= ts < LATEST_TIME
    else:
        lines = [(n, m) for n, m in reader.warnings if "time" in m]
        assert lines and all(n == 7 for n, _ in lines), reader.warnings


@settings(max_examples=200, deadline=None)
@given(
    times=st.lists(
        st.datetimes(
            min_value=datetime(1, 1, 1),
            max_value=datetime(9999, 12, 31, 23, 59, 59, 999999),
            timezones=st.just(UTC),
        ),
        min_size=1,
        max_size=6,
    ),
    interval=st.integers(60_000, 3_600_000),
)
@example(times=[datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)] * 3, interval=900_000)
@example(
    times=[datetime(2026, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)] * 2,
    interval=60_000,
)
def test_the_timer_never_overflows_whatever_the_clock_says(times, interval):
    """The checkpoint timer and queue over any instants a datetime holds, year 1 to the end
    of 9999, in any order (the replay clock never goes back): no ``OverflowError``; every
    prompt is counted in some checkpoint once the session ends."""
    rows: list = []
    clock = [times[0]]
    rec = CheckpointRecorder(
        CheckpointQueue(rows.extend, clock=lambda: clock[0]),
        CheckpointConfig(time_interval_ms=interval, prompt_interval=2),
        clock=lambda: clock[0],
    )
    rec.start_session("s", harness="pi", project="/p", at=times[0])
    for t in times:
        clock[0] = max(clock[0], t)
        rec.tick(clock[0])
        rec.record_prompt("s", "go", at=clock[0])
        rec.queue.poll()
    rec.end_session("s", at=clock[0])
    rec.queue.flush()
    assert [c.trigger.value for c in rows][-1] == "session_end"
    assert rows[-1].prompt_count == len(times)


def test_a_session_with_no_usable_time_is_dated_when_captured_never_1970(tmp_path):
    """Issue 45 item 2: a session every row of which has an unusable timestamp got
    checkpoints dated 1970-01-01 (brief: "20793 days ago", left out of the 14-day window;
    prune: old). It is dated by its source file's modification time (when it was captured)."""
    import os

    folder = tmp_path / "src"
    folder.mkdir()
    rows = []
    for n, stamp in enumerate([FAR, "0001-01-01T00:00:00Z", 1e20, "NaN"]):
        rows.append(
            json.dumps(
                {
                    "parentUuid": f"u{n - 1}" if n else None,
                    "isSidechain": False,
                    "type": "user",
                    "message": {"role": "user", "content": f"prompt number {n}"},
                    "uuid": f"u{n}",
                    "cwd": str(tmp_path / "proj"),
                    "sessionId": BAD_KEY,
                    "version": "2.1.0",
                    "userType": "external",
                    "timestamp": stamp,
                }
            )
        )
    path = folder / f"{BAD_KEY}.jsonl"
    path.write_text("\n".join(rows) + "\n")
    mtime = datetime.now(UTC) - timedelta(days=2)
    os.utime(path, (mtime.timestamp(), mtime.timestamp()))
    home = tmp_path / "h"
    _import(home, folder)
    with open_store(home / "continuity.db") as store:
        cps = store.checkpoints(BAD_KEY)
    assert cps and all(abs(c.created_at - mtime) < timedelta(seconds=1) for c in cps), [
        c.created_at for c in cps
    ]
    brief = runner.invoke(app, ["brief", "--project", str(tmp_path / "proj"), "--home", str(home)])
    assert brief.exit_code == 0, brief.output
    assert f"Session {BAD_KEY}" in brief.stdout and "2 days ago" in brief.stdout
    assert "1970" not in brief.stdout
