"""Replay of imported sessions into checkpoints (issue 3, "Replay on import"): exact results
on real sessions of ../shared/data, idempotence, grown files, and secrets kept out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from continuity.checkpoints.capture import CheckpointConfig
from continuity.checkpoints.recovery import (
    manual_checkpoint,
    recover,
    replay_import,
    replay_session,
)
from continuity.core.model import CheckpointTrigger, EntryKind
from continuity.formats.importer import import_paths
from tests.builders import CP, A, U, load
from tests.paths import SAMPLE_DIRS

PI_LARGE = "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
CODEX_COMPACT = "compact-codex-001"
CFG = CheckpointConfig()
T0 = datetime(2026, 2, 1, 10, 0, tzinfo=UTC)


def _shape(rows):  # type: ignore[no-untyped-def]
    return [(c.trigger.value, c.prompt_count) for c in rows]


def test_replay_pi_large_session_exact(store, shared_data):
    """pi/large-session.jsonl (88 requests over 2 h 40 m): 11 periodic rows from the
    15-minute timer and every 10 prompts, then session_end with all 88."""
    import_paths(store, [shared_data / "pi" / "large-session.jsonl"])
    added = replay_session(store, PI_LARGE, config=CFG)
    assert _shape(added) == [
        ("periodic", 4),
        ("periodic", 2),
        ("periodic", 8),
        ("periodic", 5),
        ("periodic", 8),
        ("periodic", 10),
        ("periodic", 10),
        ("periodic", 6),
        ("periodic", 10),
        ("periodic", 10),
        ("periodic", 10),
        ("session_end", 88),
    ]
    start = datetime(2025, 11, 20, 23, 33, 50, 805000, tzinfo=UTC)
    assert added[0].created_at == start + timedelta(minutes=15)
    assert added[-1].created_at == datetime(2025, 11, 21, 2, 14, 2, 980000, tzinfo=UTC)
    assert added[-1].digest.splitlines()[:3] == [
        "## Session End Checkpoint",
        "Project: /Users/dev/workspaces/pi-mono",
        "Duration: 2h 40m | Total Prompts: 88",
    ]
    assert store.checkpoints(PI_LARGE) == added


def test_replay_codex_compaction_exact(store, shared_data):
    """codex/with-compaction.jsonl: three timer checkpoints, pre_compaction at the harness's
    compaction row, then session_end with the 4 requests."""
    import_paths(store, [shared_data / "codex" / "with-compaction.jsonl"])
    added = replay_session(store, CODEX_COMPACT, config=CFG)
    assert _shape(added) == [
        ("periodic", 1),
        ("periodic", 1),
        ("periodic", 1),
        ("pre_compaction", 0),
        ("session_end", 4),
    ]
    compaction = next(
        e for e in store.entries(CODEX_COMPACT, limit=100) if e.kind is EntryKind.COMPACTION
    )
    assert added[3].created_at == compaction.timestamp
    assert added[3].digest.startswith(
        "## Pre-Compaction Checkpoint\nProject: /home/testuser/codex-compact-project\n"
    )


def test_replay_is_idempotent(store, shared_data):
    """Replaying a session already replayed adds nothing."""
    import_paths(store, [shared_data / "codex" / "with-compaction.jsonl"])
    first = replay_session(store, CODEX_COMPACT, config=CFG)
    assert replay_session(store, CODEX_COMPACT, config=CFG) == []
    assert store.checkpoints(CODEX_COMPACT) == first


def test_replay_import_every_shared_session(sqlite_store, shared_data):
    """Importing ../shared/data and replaying gives every session with requests its
    checkpoints, the newest a session_end counting all its requests; a re-run adds none."""
    report = import_paths(sqlite_store, SAMPLE_DIRS)
    assert replay_import(sqlite_store, report, config=CFG) == 27
    for key in report.sessions:
        requests = sum(1 for e in sqlite_store.entries(key, limit=5000) if e.is_request)
        newest = sqlite_store.latest_checkpoint(key)
        assert requests > 0 and newest is not None
        assert (newest.trigger, newest.prompt_count) == (CheckpointTrigger.SESSION_END, requests)
    assert replay_import(sqlite_store, report, config=CFG) == 0


def test_replay_grown_file_adds_only_newer_checkpoints(store, shared_data, tmp_path):
    """A file that grew replays only what is newer than the rows already there."""
    lines = (shared_data / "pi" / "large-session.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "large-session.jsonl"
    path.write_bytes(b"".join(lines[:400]))
    import_paths(store, [path])
    half = replay_session(store, PI_LARGE, config=CFG)
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[400:]))
    import_paths(store, [path])
    more = replay_session(store, PI_LARGE, config=CFG)
    assert half and more and half[-1].trigger is CheckpointTrigger.SESSION_END
    assert all(c.created_at > half[-1].created_at for c in more)
    assert _shape(more)[-1] == ("session_end", 88)
    keys = [(c.trigger, c.created_at) for c in store.checkpoints(PI_LARGE)]
    # The first import's session_end was not the end: the second one replaced it (issue 22).
    assert half[-1].checkpoint_id not in {c.checkpoint_id for c in store.checkpoints(PI_LARGE)}
    assert len(keys) == len(set(keys)) == len(half) - 1 + len(more)


def _timed(rows, minutes):  # type: ignore[no-untyped-def]
    for row, m in zip(rows, minutes, strict=True):
        row.timestamp = T0 + timedelta(minutes=m)
    return rows


def test_replay_time_rule_and_compaction_from_timestamps(store):
    """The timer fires at last checkpoint + 15 min when prompts are pending; a compaction
    row gives pre_compaction; the end gives session_end."""
    rows = _timed(
        [U("one"), A(text="ok"), U("two"), U("three"), CP("summary"), U("four")],
        [0, 1, 10, 20, 40, 41],
    )
    load(store, rows, key="timed")
    added = replay_session(store, "timed", config=CFG)
    assert [(c.trigger.value, c.prompt_count, c.created_at - T0) for c in added] == [
        ("periodic", 2, timedelta(minutes=15)),
        ("periodic", 1, timedelta(minutes=30)),
        ("pre_compaction", 0, timedelta(minutes=40)),
        ("session_end", 4, timedelta(minutes=41)),
    ]


def test_replay_merges_periodic_rows_inside_the_window(store):
    """Two periodic triggers 1 s apart land as one merged row (prompt counts summed)."""
    minutes = [0, 0, 0.01]
    rows = [U("a"), U("b"), U("c")]
    for row, m in zip(rows, minutes, strict=True):
        row.timestamp = T0 + timedelta(minutes=m)
    load(store, rows, key="burst")
    added = replay_session(store, "burst", config=CheckpointConfig(promptInterval=1))
    assert _shape(added) == [("periodic", 3), ("session_end", 3)]


def test_replay_keeps_secrets_out_b29_b31(store):
    """B29/B31: secrets typed into prompts never reach a checkpoint or the recovery text."""
    rows = _timed(
        [
            U(
                "deploy with DATABASE_URL=postgres://admin:hunter2@10.0.0.5/prod and "
                "AZURE_STORAGE_KEY=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg=="
            ),
            U("ok, I'll use <private>TOKEN-123</private>"),
        ],
        [0, 1],
    )
    load(store, rows, key="leaky")
    added = replay_session(store, "leaky", config=CFG)
    text = "\n".join(c.digest for c in added) + recover(store, session_key="leaky", config=CFG).text
    for secret in ("hunter2", "Zm9vYmFyYmF6", "TOKEN-123"):
        assert secret not in text
    assert "[REDACTED:url-credential]" in text and "[REDACTED:private]" in text


def test_replay_disabled_or_unknown(store):
    """Disabled continuity replays nothing; an unknown session is a KeyError."""
    load(store, _timed([U("x")], [0]), key="off")
    assert replay_session(store, "off", config=CheckpointConfig(enabled=False)) == []
    with pytest.raises(KeyError):
        replay_session(store, "nobody", config=CFG)


def test_manual_checkpoint_rebuilds_state_from_transcript(store, shared_data):
    """An explicit checkpoint of a stored session lists its recent prompts and the reason,
    stamped now."""
    import_paths(store, [shared_data / "codex" / "with-compaction.jsonl"])
    now = datetime(2026, 5, 1, tzinfo=UTC)
    row = manual_checkpoint(store, CODEX_COMPACT, "before the auth rewrite", config=CFG, now=now)
    assert row is not None and row.created_at == now and row.trigger is CheckpointTrigger.EXPLICIT
    assert row.digest == (
        "## Explicit Checkpoint\n"
        "Project: /home/testuser/codex-compact-project\n"
        "Duration: 1h 27m | Prompts: 1 | Total Prompts: 4\n"
        "\n"
        "### Reason\n"
        "before the auth rewrite\n"
        "\n"
        "### Recent Prompts\n"
        "- Help me build the API endpoints\n"
        "- Add the user CRUD endpoints\n"
        "- Now add product endpoints\n"
        "- Now add the authentication middleware"
    )
    assert store.latest_checkpoint(CODEX_COMPACT) == row


# ---------------------------------------------------------------------------- issue 22 item 2

PI_LAST_ROW = datetime(2025, 11, 21, 2, 14, 2, 980000, tzinfo=UTC)


def _growing(shared_data: Path, tmp_path: Path, parts: int):  # type: ignore[no-untyped-def]
    """The pi large session written in ``parts`` growing prefixes: yields after each write."""
    lines = (shared_data / "pi" / "large-session.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "large-session.jsonl"
    path.write_bytes(b"")
    cuts = [len(lines) * i // parts for i in range(1, parts + 1)]
    done = 0
    for cut in cuts:
        with open(path, "ab") as fh:
            fh.write(b"".join(lines[done:cut]))
        done = cut
        yield path


def _ends(store, key):  # type: ignore[no-untyped-def]
    return [
        (c.prompt_count, c.created_at)
        for c in store.checkpoints(key)
        if c.trigger is CheckpointTrigger.SESSION_END
    ]


def test_replay_growing_file_imported_5_times_ends_the_session_once(store, shared_data, tmp_path):
    """Issue 22: importing a file 5 times while it grows used to add a session_end each time
    (5). A session ends once: each import's end stands at the last row known so far and moves
    when the file grows, so the checkpoints equal those of one import of the whole file (11
    periodic, then one session_end with all 88 prompts at the last row)."""
    for path in _growing(shared_data, tmp_path, 5):
        replay_import(store, import_paths(store, [path]), config=CFG)
    assert _ends(store, PI_LARGE) == [(88, PI_LAST_ROW)]
    assert _shape(store.checkpoints(PI_LARGE)) == [
        ("periodic", 4),
        ("periodic", 2),
        ("periodic", 8),
        ("periodic", 5),
        ("periodic", 8),
        ("periodic", 10),
        ("periodic", 10),
        ("periodic", 6),
        ("periodic", 10),
        ("periodic", 10),
        ("periodic", 10),
        ("session_end", 88),
    ]


def test_replay_live_capture_mixed_with_imports_keeps_later_checkpoints(
    store, shared_data, tmp_path
):
    """Issue 22: live capture saw the first third of the session (its periodic rows at the
    prompts' times) and stopped; then the growing file was imported 3 times. Every checkpoint
    of the file after live capture's newest one is kept (the periodic rows of the later part,
    the same as one import of the whole file gives), and the session has one session_end,
    with all 88 prompts at the last row (before the fix: 3, one at each import's last row)."""
    from continuity.checkpoints.capture import CheckpointRecorder
    from continuity.store import open_store

    (tmp_path / "ref").mkdir()
    final = list(_growing(shared_data, tmp_path / "ref", 1))[-1]
    with open_store(tmp_path / "ref" / "ref.db") as ref:  # what one import of it all gives
        import_paths(ref, [final])
        reference = replay_session(ref, PI_LARGE, config=CFG)
        requests = [e for e in ref.entries(PI_LARGE, limit=5000) if e.is_request]
    recorder = CheckpointRecorder.for_store(store, CFG, clock=lambda: requests[0].timestamp)
    recorder.start_session(
        PI_LARGE, harness="pi", project="/Users/dev/workspaces/pi-mono", at=requests[0].timestamp
    )
    for row in requests[: len(requests) // 3]:
        recorder.record_prompt(PI_LARGE, row.text(), at=row.timestamp)
    recorder.queue.flush()
    live = store.checkpoints(PI_LARGE)
    assert len(live) == 1 and live[0].trigger is CheckpointTrigger.PERIODIC
    newest_live = live[-1].created_at
    for path in _growing(shared_data, tmp_path, 3):
        replay_import(store, import_paths(store, [path]), config=CFG)
    rows = store.checkpoints(PI_LARGE)
    later = [(c.trigger, c.prompt_count, c.created_at) for c in rows if c.created_at > newest_live]
    assert later == [
        (c.trigger, c.prompt_count, c.created_at) for c in reference if c.created_at > newest_live
    ]
    assert [t for t, _, _ in later].count(CheckpointTrigger.PERIODIC) == 7
    assert _ends(store, PI_LARGE) == [(88, PI_LAST_ROW)]


def _write_commits(store) -> list[int]:
    """Commits that wrote (sqlite3 opens a transaction at the first write)."""
    from sqlalchemy import event

    commits: list[int] = []
    event.listen(
        store.engine,
        "commit",
        lambda conn: (
            commits.append(1) if conn.connection.driver_connection.in_transaction else None
        ),
    )
    return commits


def test_replay_import_stores_a_group_of_sessions_in_one_commit(sqlite_store):
    """Issue 17: the replays of up to ``REPLAY_GROUP_SESSIONS`` sessions run first, then their
    checkpoints are written in one transaction: one commit for the samples' sessions (there
    were one per two sessions), with the 27 checkpoints of the replay one by one."""
    from continuity.checkpoints import recovery

    report = import_paths(sqlite_store, SAMPLE_DIRS)
    sessions = {f.session_key for f in report.files if f.changed}
    assert 10 < len(sessions) <= recovery.REPLAY_GROUP_SESSIONS
    commits = _write_commits(sqlite_store)
    assert replay_import(sqlite_store, report, config=CFG) == 27
    assert len(commits) == 1


def test_replay_import_group_failure_stores_each_session_on_its_own(sqlite_store, monkeypatch):
    """A group whose transaction fails (a conflict on the third session's write) is rolled
    back and each session stored in a transaction of its own: all 27 checkpoints land, the
    failing write retried once alone."""
    from continuity.checkpoints import recovery
    from continuity.core.errors import StoreConflict

    report = import_paths(sqlite_store, SAMPLE_DIRS)
    real = recovery._store_plan
    calls = {"n": 0}

    def flaky(store, plan, config):
        calls["n"] += 1
        if calls["n"] == 3:
            real(store, plan, config)
            raise StoreConflict("simulated conflict")
        return real(store, plan, config)

    monkeypatch.setattr(recovery, "_store_plan", flaky)
    assert replay_import(sqlite_store, report, config=CFG) == 27
    monkeypatch.setattr(recovery, "_store_plan", real)
    assert replay_import(sqlite_store, report, config=CFG) == 0
