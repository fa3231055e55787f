"""Tests of session checkpoints (issue 3): digests, merge rules, the flush queue, the five
triggers, recovery and configuration. Time comes from a fake clock; nothing sleeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings, strategies as st

from continuity.checkpoints.capture import (
    CheckpointConfig,
    CheckpointRecorder,
    Snapshot,
    format_duration,
    format_manual_digest,
    format_periodic_digest,
    format_pre_compaction_digest,
    format_session_end_digest,
    load_config,
    safe_cut,
)
from continuity.checkpoints.queue import (
    FLUSH_WINDOW_MS,
    CheckpointFlushError,
    CheckpointQueue,
    merge_checkpoints,
)
from continuity.checkpoints.recovery import render_recovery
from continuity.core.errors import ConfigError
from continuity.core.model import Checkpoint, CheckpointTrigger

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
P, PC, SE = (
    CheckpointTrigger.PERIODIC,
    CheckpointTrigger.PRE_COMPACTION,
    CheckpointTrigger.SESSION_END,
)


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, ms: int) -> datetime:
        self.now += timedelta(milliseconds=ms)
        return self.now


class Sink:
    """Collects written batches; fails the next ``fail`` calls."""

    def __init__(self, fail: int = 0) -> None:
        self.batches: list[list[Checkpoint]] = []
        self.fail = fail

    def __call__(self, items):  # type: ignore[no-untyped-def]
        if self.fail:
            self.fail -= 1
            raise OSError("disk full")
        self.batches.append(list(items))

    @property
    def rows(self) -> list[Checkpoint]:
        return [cp for batch in self.batches for cp in batch]


def snap(**kw) -> Snapshot:  # type: ignore[no-untyped-def]
    base = {
        "session_key": "s1",
        "harness": "claude-code",
        "project": "/home/ana/ledger",
        "project_normalized": "/home/ana/ledger",
        "at": T0,
        "duration_ms": 42 * 60_000,
        "interval_prompts": 10,
        "total_prompts": 25,
        "snippets": ("Why does the nightly export skip March?", "also cover leap years"),
        "queries": ("export march", "month range"),
        "remembers": (),
    }
    base.update(kw)
    return Snapshot(**base)


def cp(
    key: str = "s1",
    trigger: CheckpointTrigger = P,
    prompts: int = 1,
    digest: str = "d",
    queries: tuple[str, ...] = (),
    remembers: tuple[str, ...] = (),
    at: datetime = T0,
) -> Checkpoint:
    return Checkpoint(
        key, "pi", "/p", "/p", trigger, digest, prompts, queries, remembers, created_at=at
    )


def recorder(clock: FakeClock, sink: Sink, **config) -> CheckpointRecorder:  # type: ignore[no-untyped-def]
    return CheckpointRecorder(
        CheckpointQueue(sink, clock=clock), CheckpointConfig(**config), clock=clock
    )


# ---------------------------------------------------------------------------- digests


@pytest.mark.parametrize(
    "ms,text",
    [
        (0, "0m"),
        (59_999, "0m"),
        (60_000, "1m"),
        (3_599_999, "59m"),
        (3_600_000, "1h"),
        (3_660_000, "1h 1m"),
        (7_260_000, "2h 1m"),
    ],
)
def test_format_duration_whole_minutes(ms, text):
    """Durations are whole minutes, hours from 60 minutes on (seed 000 shapes)."""
    assert format_duration(ms) == text


def test_format_periodic_digest_exact():
    """The periodic digest has the header, recent prompts and memory activity blocks."""
    assert format_periodic_digest(snap(remembers=("ledger exports use UTC",))) == (
        "## Session Checkpoint\n"
        "Project: /home/ana/ledger\n"
        "Prompts: 10 | Duration: 42m\n"
        "\n"
        "### Recent Prompts\n"
        "- Why does the nightly export skip March?\n"
        "- also cover leap years\n"
        "\n"
        "### Memory Activity Since Last Checkpoint\n"
        "Queries: export march, month range\n"
        "Remembered: ledger exports use UTC"
    )


def test_format_periodic_digest_omits_empty_blocks():
    """Empty blocks are left out, and a missing project reads "unknown"."""
    assert format_periodic_digest(snap(project=None, snippets=(), queries=())) == (
        "## Session Checkpoint\nProject: unknown\nPrompts: 10 | Duration: 42m"
    )


def test_format_pre_compaction_digest_with_context_exact():
    """The pre-compaction digest puts the session context first among its blocks."""
    assert format_pre_compaction_digest(snap(queries=()), "Refactoring the export job.") == (
        "## Pre-Compaction Checkpoint\n"
        "Project: /home/ana/ledger\n"
        "Duration: 42m | Prompts: 10\n"
        "\n"
        "### Session Context\n"
        "Refactoring the export job.\n"
        "\n"
        "### Recent Prompts\n"
        "- Why does the nightly export skip March?\n"
        "- also cover leap years"
    )


def test_format_session_end_digest_exact():
    """The session-end digest shows the total prompt count and memory activity."""
    assert format_session_end_digest(snap(duration_ms=3_660_000, snippets=())) == (
        "## Session End Checkpoint\n"
        "Project: /home/ana/ledger\n"
        "Duration: 1h 1m | Total Prompts: 25\n"
        "\n"
        "### Memory Activity\n"
        "Queries: export march, month range"
    )


def test_format_manual_digest_exact_for_agent_and_explicit():
    """Explicit and agent digests carry the caller's reason, redacted."""
    s = snap(snippets=("fix it",), queries=())
    assert format_manual_digest(s, CheckpointTrigger.AGENT, "before the migration") == (
        "## Agent Checkpoint\n"
        "Project: /home/ana/ledger\n"
        "Duration: 42m | Prompts: 10 | Total Prompts: 25\n"
        "\n"
        "### Reason\n"
        "before the migration\n"
        "\n"
        "### Recent Prompts\n"
        "- fix it"
    )
    explicit = format_manual_digest(s, CheckpointTrigger.EXPLICIT, "token=ab12cd34ef")
    assert explicit.startswith("## Explicit Checkpoint\n")
    assert "token=[REDACTED:token]" in explicit and "ab12cd34ef" not in explicit


def test_digest_redacts_context_b29():
    """B29: secrets pasted into a session context never reach the digest."""
    digest = format_pre_compaction_digest(
        snap(), "DATABASE_URL=postgres://admin:hunter2@10.0.0.5/prod"
    )
    assert "hunter2" not in digest and "[REDACTED:url-credential]" in digest


# ---------------------------------------------------------------------------- merge rules


def test_merge_checkpoints_origin_figure():
    """Queued writes of 5 and 3 prompts merge to 8, the newer digest with the merged
    activity (issue 39), the query union."""
    merged = merge_checkpoints(
        cp(prompts=5, digest="first", queries=("query-a",)),
        cp(prompts=3, digest="second", queries=("query-b",), at=T0 + timedelta(seconds=1)),
    )
    assert (merged.prompt_count, merged.digest, merged.memory_queries) == (
        8,
        "second\n\n### Memory Activity Since Last Checkpoint\nQueries: query-a, query-b",
        ("query-a", "query-b"),
    )
    assert merged.created_at == T0 + timedelta(seconds=1)


def test_merge_checkpoints_union_dedupes_and_caps_newest():
    """Queries and remembers are an order-preserving union capped at the newest 20 and 10."""
    old = cp(queries=tuple(f"q{i}" for i in range(15)), remembers=tuple(f"r{i}" for i in range(8)))
    new = cp(queries=("q3", *(f"q{i}" for i in range(15, 22))), remembers=("r1", "r8", "r9", "r10"))
    merged = merge_checkpoints(old, new)
    assert merged.memory_queries == tuple(f"q{i}" for i in range(2, 22))
    assert merged.recent_remembers == tuple(f"r{i}" for i in range(1, 11))


# ---------------------------------------------------------------------------- the queue


def test_queue_fixed_window_is_not_reset_by_later_writes():
    """The first write arms a 2,500 ms deadline; a later write neither moves nor starves it."""
    clock, sink = FakeClock(), Sink()
    queue = CheckpointQueue(sink, clock=clock)
    queue.enqueue(cp(prompts=5))
    clock.advance(2_000)
    queue.enqueue(cp(prompts=3, at=clock.now))
    clock.advance(499)
    assert queue.poll().written == 0 and sink.rows == []
    clock.advance(1)
    assert queue.poll().written == 1
    assert [c.prompt_count for c in sink.rows] == [8]
    assert queue.deadline is None and FLUSH_WINDOW_MS == 2_500


def test_queue_merges_only_within_one_session():
    """Writes of two sessions inside the window stay two rows."""
    clock, sink = FakeClock(), Sink()
    queue = CheckpointQueue(sink, clock=clock)
    for key in ("a", "b", "a"):
        queue.enqueue(cp(key))
    queue.flush()
    assert sorted((c.session_key, c.prompt_count) for c in sink.rows) == [("a", 2), ("b", 1)]


def test_queue_failed_flush_is_retried_with_backoff():
    """A failed write keeps its row queued and re-arms the deadline; the retry writes it."""
    clock, sink = FakeClock(), Sink(fail=2)
    queue = CheckpointQueue(sink, clock=clock)
    queue.enqueue(cp())
    clock.advance(2_500)
    result = queue.poll()
    assert (result.written, result.pending, result.error) == (0, 1, "OSError: disk full")
    assert queue.deadline == clock.now + timedelta(milliseconds=2_500)
    clock.advance(2_500)
    assert queue.poll().pending == 1
    assert queue.deadline == clock.now + timedelta(milliseconds=5_000)
    clock.advance(5_000)
    assert queue.poll().written == 1 and len(sink.rows) == 1 and queue.pending_count() == 0


def test_queue_flush_is_one_batch_and_isolates_a_failing_session():
    """A flush writes every session in one sink call; if that fails, each session is tried
    alone, so only the failing one stays queued."""
    clock = FakeClock()
    batches: list[list[str]] = []

    def sink(items):  # type: ignore[no-untyped-def]
        keys = [c.session_key for c in items]
        if "bad" in keys:
            raise OSError("constraint")
        batches.append(keys)

    queue = CheckpointQueue(sink, clock=clock)
    for key in ("a", "b"):
        queue.enqueue(cp(key))
    assert queue.flush().written == 2 and batches == [["a", "b"]]
    for key in ("a", "bad", "b"):
        queue.enqueue(cp(key))
    result = queue.flush()
    assert (result.written, result.pending, result.error) == (2, 1, "OSError: constraint")
    assert batches[1:] == [["a"], ["b"]] and queue.pending_count() == 1


def test_queue_write_now_lands_after_queued_rows_in_one_batch():
    """A direct write carries the session's queued rows before it, in the same sink call."""
    clock, sink = FakeClock(), Sink()
    queue = CheckpointQueue(sink, clock=clock)
    queue.enqueue(cp("a"))
    queue.enqueue(cp("b"))
    queue.write_now(cp("a", SE, prompts=7, at=T0 + timedelta(seconds=1)))
    assert [[(c.session_key, c.trigger) for c in b] for b in sink.batches] == [
        [("a", P), ("a", SE)]
    ]
    assert queue.pending_count() == 1 and queue.deadline is not None


def test_queue_write_now_failure_keeps_both_in_order():
    """When the direct write fails, the queued row and it stay queued, in order."""
    clock, sink = FakeClock(), Sink(fail=1)
    queue = CheckpointQueue(sink, clock=clock)
    queue.enqueue(cp(prompts=2))
    assert queue.write_now(cp(trigger=SE, prompts=9)).pending == 2
    queue.enqueue(cp(prompts=1))
    queue.flush()
    assert [(c.trigger, c.prompt_count) for c in sink.rows] == [(P, 2), (SE, 9), (P, 1)]


def test_queue_close_raises_when_rows_cannot_be_written():
    """Shutdown never drops rows silently: it raises naming how many were not written."""
    queue = CheckpointQueue(Sink(fail=5), clock=FakeClock())
    queue.enqueue(cp())
    with pytest.raises(CheckpointFlushError, match="1 checkpoint"):
        queue.close()


# ---------------------------------------------------------------------------- triggers


def test_recorder_periodic_fires_on_prompt_interval():
    """The promptInterval-th prompt since the last checkpoint queues a periodic row."""
    clock, sink = FakeClock(), Sink()
    rec = recorder(clock, sink, promptInterval=3)
    rec.start_session("s1", harness="pi", project="/p")
    assert rec.record_prompt("s1", "one") is None and rec.record_prompt("s1", "two") is None
    fired = rec.record_prompt("s1", "three")
    assert fired is not None and (fired.trigger, fired.prompt_count) == (P, 3)
    assert rec.queue.pending_count() == 1 and rec.states["s1"].interval_prompts == 0


def test_recorder_time_rule_fires_on_tick_without_new_prompt():
    """An active session checkpoints when timeIntervalMs elapses, even with no new prompt."""
    clock, sink = FakeClock(), Sink()
    rec = recorder(clock, sink, timeIntervalMs=60_000)
    rec.start_session("s1", harness="pi", project="/p")
    rec.start_session("idle", harness="pi", project="/p")
    rec.record_prompt("s1", "hello")
    clock.advance(59_999)
    assert rec.tick() == []
    clock.advance(1)
    fired = rec.tick()
    assert [(c.session_key, c.prompt_count) for c in fired] == [("s1", 1)]
    clock.advance(60_000)
    assert rec.tick() == []


def test_recorder_time_rule_fires_on_the_prompt_after_the_interval():
    """A prompt arriving after timeIntervalMs checkpoints at once (the seed's rule)."""
    clock, sink = FakeClock(), Sink()
    rec = recorder(clock, sink, timeIntervalMs=60_000)
    rec.start_session("s1", harness="pi", project="/p")
    clock.advance(61_000)
    fired = rec.record_prompt("s1", "back again")
    assert fired is not None and "Duration: 1m" in fired.digest


def test_recorder_pre_compaction_writes_directly_even_with_zero_prompts():
    """pre_compaction writes at once, with the hook's context, even before any prompt."""
    clock, sink = FakeClock(), Sink()
    rec = recorder(clock, sink)
    rec.start_session("s1", harness="pi", project="/p")
    row = rec.pre_compaction("s1", context="compacting now")
    assert row is not None and sink.rows == [row]
    assert (row.trigger, row.prompt_count) == (PC, 0)
    assert "### Session Context\ncompacting now" in row.digest


def test_recorder_session_end_flushes_queued_rows_first():
    """session_end lands after the queued periodic row and counts every prompt."""
    clock, sink = FakeClock(), Sink()
    rec = recorder(clock, sink, promptInterval=2)
    rec.start_session("s1", harness="pi", project="/p")
    for text in ("a", "b", "c"):
        clock.advance(100)
        rec.record_prompt("s1", text)
    end = rec.end_session("s1")
    assert [(c.trigger, c.prompt_count) for c in sink.rows] == [(P, 2), (SE, 3)]
    assert end is not None and end.created_at == clock.now and "s1" not in rec.states


def test_recorder_session_end_skipped_without_prompts():
    """A session that saw no prompt writes no session_end row."""
    clock, sink = FakeClock(), Sink()
    rec = recorder(clock, sink)
    rec.start_session("s1", harness="pi", project="/p")
    assert rec.end_session("s1") is None and sink.rows == []


def test_recorder_explicit_and_agent_triggers():
    """explicit and agent checkpoints carry the caller's reason and consume the state."""
    clock, sink = FakeClock(), Sink()
    rec = recorder(clock, sink)
    rec.start_session("s1", harness="pi", project="/p")
    rec.record_prompt("s1", "ship it")
    rec.record_query("s1", "release checklist")
    explicit = rec.checkpoint("s1", "before release")
    agent = rec.checkpoint("s1", "agent note", trigger=CheckpointTrigger.AGENT)
    assert [(c.trigger, c.prompt_count) for c in sink.rows] == [
        (CheckpointTrigger.EXPLICIT, 1),
        (CheckpointTrigger.AGENT, 0),
    ]
    assert explicit is not None and explicit.memory_queries == ("release checklist",)
    assert agent is not None and agent.digest.startswith("## Agent Checkpoint")
    with pytest.raises(ValueError, match="explicit or agent"):
        rec.checkpoint("s1", "x", trigger=P)


def test_recorder_disabled_writes_nothing():
    """With enabled = false no trigger writes a row."""
    clock, sink = FakeClock(), Sink()
    rec = recorder(clock, sink, enabled=False, promptInterval=1)
    rec.start_session("s1", harness="pi", project="/p")
    assert rec.record_prompt("s1", "x") is None and rec.pre_compaction("s1") is None
    assert rec.checkpoint("s1", "r") is None and rec.end_session("s1") is None
    assert sink.rows == []


def test_recorder_unknown_session_raises_key_error():
    """Recording into a session that was not started is an error naming it."""
    rec = recorder(FakeClock(), Sink())
    with pytest.raises(KeyError, match="ghost"):
        rec.record_prompt("ghost", "x")


def test_recorder_repeated_start_keeps_state():
    """A second start of a live session keeps its counters (no reset on a repeat start)."""
    rec = recorder(FakeClock(), Sink())
    rec.start_session("s1", harness="pi", project="/p")
    rec.record_prompt("s1", "x")
    assert rec.start_session("s1", harness="pi", project="/p").total_prompts == 1


def test_session_state_keeps_last_ten_redacted_snippets():
    """Snippets are a rolling window of 10, whitespace-collapsed, cut to 200, redacted."""
    rec = recorder(FakeClock(), Sink(), promptInterval=1000)
    state = rec.start_session("s1", harness="pi", project="/p")
    for i in range(12):
        rec.record_prompt("s1", f"prompt\n\n{i}")
    rec.record_prompt("s1", "x" * 300)
    rec.record_prompt("s1", "use AKIAIOSFODNN7EXAMPLE please")
    rec.record_prompt("s1", "   ")
    assert len(state.snippets) == 10 and state.total_prompts == 15
    # issue 39: a snippet cut to 200 characters ends with a marker, inside the 200
    assert list(state.snippets)[-3:] == [
        "prompt 11",
        "x" * 199 + "…",
        "use [REDACTED:aws-access-key] please",
    ]


def test_session_state_redacts_queries_and_remembers():
    """Memory queries and remembers are redacted (the origin skipped queries)."""
    rec = recorder(FakeClock(), Sink())
    state = rec.start_session("s1", harness="pi", project="/p")
    rec.record_query("s1", "why does token=ab12cd34ef fail")
    rec.record_remember("s1", "deploy key is ghp_Zx8fK2mQ9vLr4TnB7wYc1HdS6gPa3JeU0kNo")
    assert state.queries == ("why does token=[REDACTED:token] fail",)
    assert state.remembers == ("deploy key is [REDACTED:github-token]",)


def test_recorder_background_thread_flushes_within_window():
    """The background thread flushes a queued row once its (short) window passes."""
    import threading

    landed = threading.Event()
    sink = Sink()

    def write(items):  # type: ignore[no-untyped-def]
        sink(items)
        landed.set()

    rec = CheckpointRecorder(
        CheckpointQueue(write, window_ms=20), CheckpointConfig(promptInterval=1)
    )
    rec.start(tick_seconds=0.05)
    try:
        rec.start_session("s1", harness="pi", project="/p")
        rec.record_prompt("s1", "go")
        assert landed.wait(2.0)
    finally:
        rec.shutdown()
    assert [c.trigger for c in sink.rows] == [P]


def test_recorder_shutdown_flushes_queued_rows():
    """Shutdown writes what is still queued."""
    sink = Sink()
    rec = recorder(FakeClock(), sink, promptInterval=1)
    rec.start_session("s1", harness="pi", project="/p")
    rec.record_prompt("s1", "go")
    rec.shutdown()
    assert len(sink.rows) == 1


# ---------------------------------------------------------------------------- recovery text


def test_render_recovery_fits_unchanged():
    """A digest within the budget is returned as is."""
    assert render_recovery("## Session Checkpoint\nProject: /p", 200) == (
        "## Session Checkpoint\nProject: /p",
        False,
    )


def test_render_recovery_truncates_with_marker_inside_budget():
    """An over-budget digest keeps its head, ends on a whole line and then the marker, all
    within the budget."""
    digest = (
        "## Session Checkpoint\nProject: /p\nPrompts: 3 | Duration: 1m\n\n### Recent "
        "Prompts\n" + "\n".join(f"- prompt number {i}" for i in range(20))
    )
    text, truncated = render_recovery(digest, 200)
    assert truncated and len(text) <= 200 and len(digest) == 449
    assert text == (
        "## Session Checkpoint\nProject: /p\nPrompts: 3 | Duration: 1m\n\n"
        "### Recent Prompts\n- prompt number 0\n- prompt number 1\n"
        "- prompt number 2\n- prompt number 3\n"
        "[… truncated: 298 characters omitted]"
    )


def test_render_recovery_cuts_inside_a_long_head_at_a_character():
    """A head longer than the budget is cut between whole characters (an accent stays with its
    letter), marker included in the budget."""
    digest = "## Session Checkpoint\nProject: /x" + "e\u0301" * 400
    text, truncated = render_recovery(digest, 200)
    kept = "## Session Checkpoint\nProject: /x" + "e\u0301" * 64
    assert truncated and text == kept + "\n[… truncated: 672 characters omitted]"
    assert len(text) == 199


def test_render_recovery_zero_budget_is_empty():
    """A budget of 0 gives nothing."""
    assert render_recovery("abc", 0) == ("", True)


@settings(max_examples=100, deadline=None)
@given(body=st.text(min_size=0, max_size=600), budget=st.integers(min_value=200, max_value=400))
def test_render_recovery_property_never_exceeds_budget(body, budget):
    """The recovery text never exceeds its budget, encodes as UTF-8, and keeps the head."""
    digest = "## Session Checkpoint\nProject: /p\n\n### Recent Prompts\n" + body
    text, _ = render_recovery(digest, budget)
    assert len(text) <= budget
    text.encode("utf-8")
    assert text.startswith("## Session Checkpoint\nProject: /p")


@pytest.mark.parametrize(
    "text,limit,expected",
    [
        ("abc", 5, "abc"),
        ("cafe\u0301s", 4, "caf"),
        ("ok 👍🏽 fine", 4, "ok "),
        ("a👩\u200d💻b", 3, "a"),
        ("x\ufe0f", 1, ""),
    ],
)
def test_safe_cut_never_splits_a_character(text, limit, expected):
    """Cuts back off before combining marks, modifiers, selectors and ZWJ sequences."""
    assert safe_cut(text, limit) == expected


# ---------------------------------------------------------------------------- configuration


def test_config_defaults_match_seed_table():
    """Defaults: enabled, 10 prompts, 15 min, 50 per session, 7 days, 2,000 characters; the
    recovery window (ours, issue 39) 14 days, no hours set."""
    c = load_config()
    assert (
        c.enabled,
        c.prompt_interval,
        c.time_interval_ms,
        c.max_checkpoints_per_session,
        c.retention_days,
        c.recovery_budget_chars,
        c.recovery_window_days,
        c.recovery_window_hours,
    ) == (True, 10, 900_000, 50, 7, 2000, 14, None)
    assert c.recovery_window() == timedelta(days=14)


def test_follow_up_budget_default_and_override(isolated_home, monkeypatch):
    """Issue 14: ``[continuity] follow_up_budget_bytes`` is seed 002's 240,000 by default,
    read from config.toml and overridden by its environment variable."""
    assert load_config().follow_up_budget_bytes == 240_000
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text("[continuity]\nfollow_up_budget_bytes = 90000\n")
    assert load_config().follow_up_budget_bytes == 90_000
    monkeypatch.setenv("CONTINUITY_CONTINUITY__FOLLOW_UP_BUDGET_BYTES", "120000")
    assert load_config().follow_up_budget_bytes == 120_000


def test_config_reads_toml_aliases_and_env(isolated_home, monkeypatch):
    """camelCase keys from config.toml, overridden by CONTINUITY_CONTINUITY__* variables."""
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text(
        "[continuity]\npromptInterval = 5\nretention_days = 30\nenabled = false\n"
    )
    monkeypatch.setenv("CONTINUITY_CONTINUITY__PROMPT_INTERVAL", "7")
    c = load_config()
    assert (c.prompt_interval, c.retention_days, c.enabled) == (7, 30, False)


@pytest.mark.parametrize(
    "line,message",
    [
        ("promptInterval = 0", "promptInterval: must be an integer in 1–1000 (got 0)"),
        ("promptInterval = 1001", "must be an integer in 1–1000 (got 1001)"),
        (
            "timeIntervalMs = 59999",
            "timeIntervalMs: must be an integer in 60000–3600000 ms (60 s–1 h) (got 59999)",
        ),
        ("maxCheckpointsPerSession = 501", "maxCheckpointsPerSession: must be an integer in 1–500"),
        ("retentionDays = 2.5", "retentionDays: must be an integer in 1–90 (got 2.5)"),
        ("recoveryBudgetChars = 199", "recoveryBudgetChars: must be an integer in 200–10000"),
        ("promptInterval = true", "must be an integer in 1–1000 (got True)"),
        ('promptInterval = "ten"', "must be an integer in 1–1000 (got 'ten')"),
        ("promptIntervall = 3", "promptIntervall: is not a known field"),
        (
            "follow_up_budget_bytes = 999",
            "follow_up_budget_bytes: must be an integer in 1000–100000000 bytes (got 999)",
        ),
        ("followUpBudgetBytes = 100000001", "must be an integer in 1000–100000000 bytes"),
    ],
)
def test_config_rejects_bad_values_naming_field_and_range(isolated_home, line, message):
    """An out-of-range or non-integer value is a ConfigError naming the field and its range."""
    _rejected(isolated_home, line, message)


@pytest.mark.parametrize(
    "lines,message",
    [
        (
            "prompt_interval = 5\npromptInterval = 6",
            "prompt_interval and promptInterval are the same setting, given twice: keep one",
        ),
        (
            "followUpBudgetBytes = 5000\nfollow_up_budget_bytes = 6000",
            "follow_up_budget_bytes "
            "and followUpBudgetBytes are the same setting, given twice: keep one",
        ),
    ],
)
def test_config_refuses_a_setting_given_by_name_and_alias(isolated_home, lines, message):
    """Fresh-user review: both spellings of one setting reported the name as "not a known
    field" (pydantic took the alias and called the name extra)."""
    _rejected(isolated_home, lines, message)


def _rejected(isolated_home, line, message):
    """An out-of-range or non-integer value is a ConfigError naming the field and its range."""
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text(f"[continuity]\n{line}\n")
    with pytest.raises(ConfigError) as info:
        load_config()
    assert message in str(info.value) and "[continuity]" in str(info.value)


def test_checkpoints_reexports_moved_names():
    """Names moved to checkpoint_queue and recovery stay importable from checkpoints as the
    same objects; an unknown name is still an AttributeError."""
    import continuity.checkpoints as cps
    import continuity.checkpoints.queue as queue_mod
    import continuity.checkpoints.recovery as recovery_mod

    for name in (
        "CheckpointQueue",
        "CheckpointFlushError",
        "FlushResult",
        "Sink",
        "Clock",
        "store_sink",
        "merge_checkpoints",
        "utc_now",
        "FLUSH_WINDOW_MS",
        "MAX_BACKOFF_MS",
        "MAX_QUERIES",
        "MAX_REMEMBERS",
    ):
        assert getattr(cps, name) is getattr(queue_mod, name), name
    for name in (
        "Recovery",
        "checkpoint_dict",
        "render_recovery",
        "recover",
        "replay_session",
        "replay_import",
        "manual_checkpoint",
        "TRUNCATION_MARKER",
        "RECOVERY_LINE_SLACK",
    ):
        assert getattr(cps, name) is getattr(recovery_mod, name), name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        cps.nope  # noqa: B018


def test_checkpoints_split_modules_import_first_without_cycle():
    """continuity.checkpoints.recovery and continuity.redaction.keyed import cleanly in a fresh
    interpreter (recovery first loads capture, which never imports recovery), and the package
    gives recovery's names."""
    import subprocess
    import sys

    code = (
        "import continuity.checkpoints.recovery as r, continuity.redaction.keyed, "
        "continuity.checkpoints as c; assert c.recover is r.recover; print('ok')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout.strip()) == (0, "ok"), proc.stderr
