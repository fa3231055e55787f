"""Store tests of session checkpoints (both backends): insert with the per-session cap,
newest by session and by project, listing, pruning by age, and recovery over the store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert

from continuity.checkpoints.capture import (
    CheckpointConfig,
    CheckpointRecorder,
    normalize_project,
    prune,
)
from continuity.checkpoints.recovery import recover
from continuity.core.model import Checkpoint, CheckpointTrigger
from continuity.store import schema

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
P = CheckpointTrigger.PERIODIC


def cp(
    key: str = "s1",
    *,
    prompts: int = 0,
    at: datetime = T0,
    project: str = "/srv/app",
    trigger: CheckpointTrigger = P,
    digest: str = "d",
) -> Checkpoint:
    return Checkpoint(
        key, "pi", project, project, trigger, digest, prompts, ("q1", "q2"), ("r1",), created_at=at
    )


def test_store_insert_roundtrips_every_field(store):
    """An inserted checkpoint reads back whole, with its id and UTC time."""
    row = store.insert_checkpoint(cp(prompts=3), max_per_session=50)
    got = store.latest_checkpoint("s1")
    assert got == row and got.checkpoint_id is not None
    assert (got.memory_queries, got.recent_remembers, got.created_at) == (("q1", "q2"), ("r1",), T0)


def test_store_cap_deletes_oldest_in_insert(store):
    """Cap 3, five writes: three rows remain, the newest first has prompt_count 4."""
    for i in range(5):
        store.insert_checkpoint(cp(prompts=i, at=T0 + timedelta(minutes=i)), max_per_session=3)
    store.insert_checkpoint(cp("other", prompts=9), max_per_session=3)
    assert [c.prompt_count for c in store.checkpoints("s1")] == [2, 3, 4]
    assert store.latest_checkpoint("s1").prompt_count == 4
    assert [c.prompt_count for c in store.checkpoints("other")] == [9]


def test_store_session_ends_once(store):
    """Issue 22: a later session_end replaces the session's earlier one (an import's end, then
    the daemon's real end 5 min on); an earlier or equal one writes nothing and returns the
    stored end; other sessions and other kinds are untouched."""
    E = CheckpointTrigger.SESSION_END
    store.insert_checkpoint(cp(prompts=2, at=T0), max_per_session=50)
    first = store.insert_checkpoint(
        cp(prompts=5, at=T0 + timedelta(minutes=1), trigger=E), max_per_session=50
    )
    store.insert_checkpoint(cp("other", prompts=1, trigger=E), max_per_session=50)
    real = store.insert_checkpoint(
        cp(prompts=9, at=T0 + timedelta(minutes=6), trigger=E), max_per_session=50
    )
    assert real.checkpoint_id != first.checkpoint_id
    again = store.insert_checkpoint(
        cp(prompts=5, at=T0 + timedelta(minutes=1), trigger=E), max_per_session=50
    )
    assert again == real
    assert (
        store.insert_checkpoint(
            cp(prompts=9, at=T0 + timedelta(minutes=6), trigger=E), max_per_session=50
        )
        == real
    )
    assert [(c.trigger, c.prompt_count) for c in store.checkpoints("s1")] == [(P, 2), (E, 9)]
    assert [(c.trigger, c.prompt_count) for c in store.checkpoints("other")] == [(E, 1)]


def test_store_cap_rejects_below_one(store):
    """A cap under 1 is refused before anything is written."""
    with pytest.raises(ValueError, match="at least 1"):
        store.insert_checkpoint(cp(), max_per_session=0)
    assert store.checkpoints("s1") == []


def test_store_newest_ties_break_by_insertion(store):
    """Two checkpoints with the same time: the later insert is the newest."""
    store.insert_checkpoint(cp(prompts=1), max_per_session=50)
    store.insert_checkpoint(
        cp(prompts=2, trigger=CheckpointTrigger.SESSION_END), max_per_session=50
    )
    assert store.latest_checkpoint("s1").trigger is CheckpointTrigger.SESSION_END


def test_store_checkpoints_limit_keeps_newest_oldest_first(store):
    """B58: listing with a limit returns the newest rows, oldest first; unknown sessions are
    empty."""
    for i in range(4):
        store.insert_checkpoint(cp(prompts=i, at=T0 + timedelta(minutes=i)), max_per_session=50)
    assert [c.prompt_count for c in store.checkpoints("s1", limit=2)] == [2, 3]
    assert store.checkpoints("nobody") == [] and store.latest_checkpoint("nobody") is None


def test_store_latest_project_checkpoint_window_is_strict(store):
    """Newest of a project strictly after ``since``; other projects never match."""
    store.insert_checkpoint(cp("a", prompts=1, at=T0), max_per_session=50)
    store.insert_checkpoint(cp("b", prompts=2, at=T0 + timedelta(hours=1)), max_per_session=50)
    store.insert_checkpoint(
        cp("c", prompts=3, at=T0 + timedelta(hours=2), project="/other"), max_per_session=50
    )
    assert (
        store.latest_project_checkpoint("/srv/app", since=T0 - timedelta(hours=1)).session_key
        == "b"
    )
    assert store.latest_project_checkpoint("/srv/app", since=T0 + timedelta(hours=1)) is None
    assert store.latest_project_checkpoint("/nowhere", since=T0 - timedelta(days=1)) is None


def test_prune_deletes_older_than_retention_and_counts(store):
    """Rows older than retentionDays go (a 30-day-old row with retention 7); newer stay."""
    now = T0 + timedelta(days=30)
    store.insert_checkpoint(cp("old", at=T0), max_per_session=50)
    store.insert_checkpoint(cp("mid", at=now - timedelta(days=7, seconds=1)), max_per_session=50)
    store.insert_checkpoint(cp("new", at=now - timedelta(days=6)), max_per_session=50)
    assert prune(store, CheckpointConfig(), now=now) == 2
    assert [store.latest_checkpoint(k) is not None for k in ("old", "mid", "new")] == [
        False,
        False,
        True,
    ]
    assert prune(store, CheckpointConfig(), now=now) == 0


def test_prune_keeps_newest_of_a_live_session(store):
    """A session whose transcript is not completed keeps its newest checkpoint."""
    now = T0 + timedelta(days=30)
    for key, completed in (("live", None), ("done", now)):
        with store._conn() as conn:
            conn.execute(
                insert(schema.session_transcripts).values(
                    session_key=key,
                    agent_id="default",
                    harness="pi",
                    project="/p",
                    content_hash="0" * 64,
                    created_at=T0,
                    updated_at=T0,
                    completed_at=completed,
                )
            )
        for i in range(3):
            store.insert_checkpoint(
                cp(key, prompts=i, at=T0 + timedelta(minutes=i)), max_per_session=50
            )
    assert prune(store, CheckpointConfig(), retention_days=7, now=now) == 5
    assert [c.prompt_count for c in store.checkpoints("live")] == [2]
    assert store.checkpoints("done") == []


def test_prune_rejects_retention_out_of_range(store):
    """Retention outside 1–90 days is an error naming the range."""
    with pytest.raises(ValueError, match="1–90"):
        prune(store, CheckpointConfig(), retention_days=0)


def test_recover_prefers_same_session_without_age_limit(store):
    """The newest checkpoint of the same session wins, however old."""
    store.insert_checkpoint(cp("s1", digest="## mine", at=T0), max_per_session=50)
    store.insert_checkpoint(
        cp("s2", digest="## newer sibling", at=T0 + timedelta(days=1)), max_per_session=50
    )
    found = recover(
        store,
        session_key="s1",
        project="/srv/app",
        config=CheckpointConfig(),
        now=T0 + timedelta(days=100),
    )
    assert (found.source, found.text, found.truncated) == ("session", "## mine", False)


def test_recover_falls_back_to_project_within_window(store):
    """Without a checkpoint of its own, a new session gets its project's newest within the
    window (issue 39: 14 days by default, ``recoveryWindowHours`` still honoured when set,
    ``"any"`` without limit); beyond it, nothing."""
    store.insert_checkpoint(cp("s2", digest="## sibling", at=T0), max_per_session=50)
    cfg = CheckpointConfig()
    found = recover(
        store,
        session_key="new",
        project="/srv/app",
        config=cfg,
        now=T0 + timedelta(days=13, hours=23),
    )
    assert (found.source, found.text) == ("project", "## sibling")
    late = T0 + timedelta(days=14)
    assert (
        recover(store, session_key="new", project="/srv/app", config=cfg, now=late).checkpoint
        is None
    )
    hours = CheckpointConfig(recoveryWindowHours=4)
    assert (
        recover(
            store, project="/srv/app", config=hours, now=T0 + timedelta(hours=3, minutes=59)
        ).source
        == "project"
    )
    assert (
        recover(store, project="/srv/app", config=hours, now=T0 + timedelta(hours=4)).checkpoint
        is None
    )
    anytime = CheckpointConfig(recoveryWindowDays="any")
    assert (
        recover(store, project="/srv/app", config=anytime, now=T0 + timedelta(days=3000)).source
        == "project"
    )
    assert (
        recover(
            store,
            session_key="new",
            project="/srv/app",
            config=CheckpointConfig(enabled=False),
            now=T0,
        ).checkpoint
        is None
    )


def test_recover_budget_and_redaction_on_the_way_out(store):
    """Recovery re-redacts the stored digest and fits recoveryBudgetChars with a marker."""
    digest = "## Session Checkpoint\nProject: /p\n\n### Recent Prompts\n" + "\n".join(
        f"- step {i} with token=ab12cd34ef{i}" for i in range(40)
    )
    store.insert_checkpoint(cp("s1", digest=digest), max_per_session=50)
    found = recover(store, session_key="s1", config=CheckpointConfig(recoveryBudgetChars=200))
    assert found.truncated and len(found.text) <= 200 and "ab12cd34ef" not in found.text
    assert found.text.endswith("characters omitted]")
    assert found.to_dict()["checkpoint"]["session"] == "s1"


def test_normalize_project_resolves_symlinks(tmp_path):
    """project_normalized is the real path of an absolute project, else the raw value."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert normalize_project(str(tmp_path / "link")) == str(real)
    assert normalize_project("relative/dir") == "relative/dir"
    assert normalize_project(None) is None


def test_recorder_over_store_orders_session_end_last(store):
    """Through a real store, the queued periodic row lands before session_end, in one go."""
    clock_now = [T0]
    rec = CheckpointRecorder.for_store(
        store, CheckpointConfig(promptInterval=2), clock=lambda: clock_now[0]
    )
    rec.start_session("s1", harness="pi", project="/srv/app")
    for i in range(3):
        clock_now[0] = T0 + timedelta(seconds=i)
        rec.record_prompt("s1", f"p{i}")
    assert store.checkpoints("s1") == []
    clock_now[0] = T0 + timedelta(seconds=3)
    rec.end_session("s1")
    rows = store.checkpoints("s1")
    assert [(c.trigger.value, c.prompt_count) for c in rows] == [
        ("periodic", 2),
        ("session_end", 3),
    ]
    assert rows[0].checkpoint_id < rows[1].checkpoint_id
    assert store.latest_checkpoint("s1").trigger is CheckpointTrigger.SESSION_END
