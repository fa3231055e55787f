"""Issue 39, item 2: checkpoints keep the session's memory activity, through ``session_end``
(the whole session's remembers, not only those since the last checkpoint) and through the
flush window's merge (seed 000: "union with caps: 20 queries, 10 remembers"; the digest now
says what the merged row holds)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings, strategies as st

from continuity.checkpoints.capture import CheckpointConfig, CheckpointRecorder
from continuity.checkpoints.queue import CheckpointQueue, merge_checkpoints
from continuity.checkpoints.recovery import _point_json, _restore, _snapshot
from continuity.core.model import Checkpoint, CheckpointTrigger

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
P, SE, AGENT = CheckpointTrigger.PERIODIC, CheckpointTrigger.SESSION_END, CheckpointTrigger.AGENT


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def _recorder(rows: list[Checkpoint], **config: int) -> tuple[CheckpointRecorder, Clock]:
    clock = Clock()
    rec = CheckpointRecorder(
        CheckpointQueue(rows.extend, clock=clock), CheckpointConfig(**config), clock=clock
    )
    return rec, clock


def test_session_end_keeps_a_remember_an_agent_checkpoint_took():
    """The reported case: an ``agent`` checkpoint holds the one decision, the ``session_end``
    0.3 s later held ``recent_remembers: []``; now it holds the whole session's."""
    rows: list[Checkpoint] = []
    rec, clock = _recorder(rows)
    rec.start_session("s1", harness="pi", project="/p", at=T0)
    rec.record_prompt("s1", "move the export to UTC", at=T0)
    rec.record_query("s1", "export timezone")
    rec.record_remember("s1", "decision: exports are stamped in UTC")
    clock.now = T0 + timedelta(seconds=10)
    agent = rec.checkpoint("s1", "the agent saved its decision", trigger=AGENT)
    clock.now += timedelta(milliseconds=300)
    end = rec.end_session("s1")
    assert agent is not None and end is not None
    assert agent.recent_remembers == ("decision: exports are stamped in UTC",)
    assert end.trigger is SE
    assert end.recent_remembers == ("decision: exports are stamped in UTC",)
    assert end.memory_queries == ("export timezone",)
    assert end.digest.endswith(
        "### Memory Activity\nQueries: export timezone\n"
        "Remembered: decision: exports are stamped in UTC"
    )


def test_interval_checkpoints_still_hold_only_the_interval_activity():
    """Seed 000: a periodic or agent checkpoint holds the activity since the last one."""
    rows: list[Checkpoint] = []
    rec, _clock = _recorder(rows)
    rec.start_session("s1", harness="pi", project="/p", at=T0)
    rec.record_prompt("s1", "one", at=T0)
    rec.record_remember("s1", "first")
    first = rec.checkpoint("s1", "r1", trigger=AGENT)
    rec.record_remember("s1", "second")
    second = rec.checkpoint("s1", "r2", trigger=AGENT)
    end = rec.end_session("s1")
    assert first is not None and second is not None and end is not None
    assert (first.recent_remembers, second.recent_remembers, end.recent_remembers) == (
        ("first",),
        ("second",),
        ("first", "second"),
    )


def test_session_end_caps_the_session_remembers_at_the_newest_ten():
    """The session-wide list keeps seed 000's cap: the newest 10 remembers, 20 queries."""
    rows: list[Checkpoint] = []
    rec, _ = _recorder(rows)
    rec.start_session("s1", harness="pi", project="/p", at=T0)
    rec.record_prompt("s1", "p", at=T0)
    for i in range(13):
        rec.record_remember("s1", f"r{i}")
    for i in range(25):
        rec.record_query("s1", f"q{i}")
    end = rec.end_session("s1")
    assert end is not None
    assert end.recent_remembers == tuple(f"r{i}" for i in range(3, 13))
    assert end.memory_queries == tuple(f"q{i}" for i in range(5, 25))


def test_replay_resume_point_keeps_the_session_activity():
    """A saved replay point carries the session-wide lists; an old point (without them)
    falls back to the interval lists."""
    rows: list[Checkpoint] = []
    config = CheckpointConfig()
    rec, _ = _recorder(rows)
    state = rec.start_session("s1", harness="pi", project="/p", at=T0)
    state.record_remember("kept")
    state.consume(T0)
    point = _point_json(_snapshot(state, T0, 4, config))
    restored = _restore(point, "s1", config)
    assert restored is not None and restored[0].session_remembers == ("kept",)
    assert restored[0].remembers == ()
    old = {k: v for k, v in point.items() if not k.startswith("session_")}
    old["remembers"] = ["older"]
    again = _restore(old, "s1", config)
    assert again is not None and again[0].session_remembers == ("older",)


# ---------------------------------------------------------------------------- the merge


def _periodic(
    rec: CheckpointRecorder, clock: Clock, prompt: str, remember: str, query: str
) -> None:
    rec.record_remember("s1", remember)
    rec.record_query("s1", query)
    rec.record_prompt("s1", prompt, at=clock.now)


def test_merged_periodic_digest_lists_the_merged_activity_and_count():
    """Two periodic rows in one flush window merge: the digest's count is the sum and its
    activity block lists both rows' remembers (it showed only the newer row's)."""
    rows: list[Checkpoint] = []
    rec, clock = _recorder(rows, promptInterval=1)
    rec.start_session("s1", harness="pi", project="/p", at=T0)
    _periodic(rec, clock, "first prompt", "use UTC", "timezone")
    clock.now += timedelta(seconds=1)
    _periodic(rec, clock, "second prompt", "keep CSV", "format")
    rec.queue.flush()
    assert len(rows) == 1
    merged = rows[0]
    assert merged.prompt_count == 2
    assert merged.recent_remembers == ("use UTC", "keep CSV")
    assert merged.memory_queries == ("timezone", "format")
    assert merged.digest.split("\n")[2].startswith("Prompts: 2 | Duration:")
    assert merged.digest.endswith(
        "### Recent Prompts\n- first prompt\n- second prompt\n\n"
        "### Memory Activity Since Last Checkpoint\n"
        "Queries: timezone, format\nRemembered: use UTC; keep CSV"
    )


def test_merge_adds_the_activity_block_when_the_newer_row_had_none():
    """An older row's remembers are not lost when the newer digest has no activity block."""
    old = Checkpoint(
        "s1",
        "pi",
        "/p",
        "/p",
        P,
        "## Session Checkpoint\nProject: /p\n"
        "Prompts: 1 | Duration: 0m\n\n### Memory Activity Since Last Checkpoint\n"
        "Remembered: use UTC",
        1,
        (),
        ("use UTC",),
        created_at=T0,
    )
    new = Checkpoint(
        "s1",
        "pi",
        "/p",
        "/p",
        P,
        "## Session Checkpoint\nProject: /p\nPrompts: 1 | Duration: 0m\n\n### Recent Prompts\n- b",
        1,
        (),
        (),
        created_at=T0,
    )
    merged = merge_checkpoints(old, new)
    assert merged.digest == (
        "## Session Checkpoint\nProject: /p\nPrompts: 2 | Duration: 0m\n\n"
        "### Recent Prompts\n- b\n\n"
        "### Memory Activity Since Last Checkpoint\nRemembered: use UTC"
    )


words = st.text(alphabet="abcdefgh", min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(words, max_size=12), st.lists(words, max_size=25)),
        min_size=2,
        max_size=5,
    )
)
def test_merged_digest_agrees_with_the_merged_lists(parts):
    """Property: however many rows merge, the digest's ``Remembered:``/``Queries:`` lines
    list exactly the row's (capped) lists, and its count is the summed prompt count."""
    from continuity.checkpoints.capture import Snapshot, format_periodic_digest

    merged = None
    for i, (rem, qs) in enumerate(parts):
        rem_t, q_t = tuple(dict.fromkeys(rem))[-10:], tuple(dict.fromkeys(qs))[-20:]
        snap = Snapshot("s1", "pi", "/p", "/p", T0, 0, i + 1, i + 1, (), q_t, rem_t)
        row = Checkpoint(
            "s1",
            "pi",
            "/p",
            "/p",
            P,
            format_periodic_digest(snap),
            i + 1,
            q_t,
            rem_t,
            created_at=T0,
        )
        merged = row if merged is None else merge_checkpoints(merged, row)
    assert merged is not None
    lines = merged.digest.split("\n")
    assert lines[2].startswith(f"Prompts: {merged.prompt_count} |")
    shown_r = [ln for ln in lines if ln.startswith("Remembered: ")]
    shown_q = [ln for ln in lines if ln.startswith("Queries: ")]
    assert len(merged.recent_remembers) <= 10 and len(merged.memory_queries) <= 20
    assert shown_r == (
        [f"Remembered: {'; '.join(merged.recent_remembers)}"] if merged.recent_remembers else []
    )
    assert shown_q == (
        [f"Queries: {', '.join(merged.memory_queries)}"] if merged.memory_queries else []
    )
    assert merged.digest.count("### Memory Activity") == (
        1 if merged.recent_remembers or merged.memory_queries else 0
    )


# ---------------------------------------------------------------------------- the window


import pytest  # noqa: E402

from continuity.checkpoints.capture import load_config  # noqa: E402
from continuity.core.errors import ConfigError  # noqa: E402


@pytest.mark.parametrize(
    "lines,window",
    [
        ("", timedelta(days=14)),
        ("recoveryWindowDays = 3", timedelta(days=3)),
        ('recoveryWindowDays = "any"', None),
        ('recovery_window_days = "ANY"', None),
        ("recoveryWindowHours = 4", timedelta(hours=4)),
        ("recoveryWindowHours = 6\nrecoveryWindowDays = 30", timedelta(hours=6)),
    ],
)
def test_recovery_window_in_days_with_hours_still_honoured(isolated_home, lines, window):
    """Issue 39: the window is ``recoveryWindowDays`` (default 14, ``"any"`` = no limit); an
    explicitly set ``recoveryWindowHours`` (an existing config) still wins."""
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text(f"[continuity]\n{lines}\n")
    assert load_config().recovery_window() == window


@pytest.mark.parametrize(
    "line,message",
    [
        (
            "recoveryWindowDays = 0",
            'recoveryWindowDays: must be an integer in 1–3650 or "any" (got 0)',
        ),
        (
            'recoveryWindowDays = "forever"',
            "recoveryWindowDays: must be an integer in 1–3650 or \"any\" (got 'forever')",
        ),
        ("recoveryWindowDays = 3651", 'must be an integer in 1–3650 or "any"'),
        ("recoveryWindowHours = 0", "recoveryWindowHours: must be an integer in 1–720 (got 0)"),
    ],
)
def test_recovery_window_errors_name_the_field_and_range(isolated_home, line, message):
    """A bad window is a ConfigError naming the field and its range, like the others."""
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text(f"[continuity]\n{line}\n")
    with pytest.raises(ConfigError) as info:
        load_config()
    assert message in str(info.value) and "[continuity]" in str(info.value)
