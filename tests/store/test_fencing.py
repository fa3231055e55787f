"""Fenced writes (seed 002, issue 4): leases with increasing tokens, stale writes refused in the
same transaction, on every backend; two processes never interleave rows."""

from __future__ import annotations

import itertools
import multiprocessing as mp
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest

from continuity.core.errors import FencedWrite
from continuity.core.model import (
    CompactionInfo,
    Entry,
    EntryKind,
    ReceiptReason,
    RefusalReceipt,
    Role,
    Session,
)
from continuity.store import SqlStore, open_store
from continuity.store.fencing import LeaseHeld
from tests.builders import A, T, U, call, load
from tests.conftest import BACKENDS, _pg_database

CTX = mp.get_context("fork")  # fast: the children open their own store


@pytest.fixture(scope="module", params=BACKENDS)
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SqlStore]:
    """One migrated store per backend for this module; every test uses its own sessions."""
    if request.param == "sqlite":
        with open_store(f"sqlite:///{tmp_path_factory.mktemp('fencing') / 'c.db'}") as s:
            yield s
    else:
        for url in _pg_database():
            with open_store(url) as s:
                yield s


_N = itertools.count()


def _key(name: str) -> str:
    """A session key unique in the module's store."""
    return f"{name}-{next(_N)}"


def _pair(writer: str, i: int) -> list[Entry]:
    """A call and its result: a unit two writers must never split."""
    return [
        A(call(f"{writer}-{i}", "bash", command=f"echo {writer} {i}")),
        T(f"{writer}-{i}", text=writer),
    ]


def _writers(store, key: str) -> list[str]:
    rows = store.entries(key, limit=10_000)
    return [
        r.tool_calls()[0].id.split("-")[0]
        if r.tool_calls()
        else r.tool_results()[0].call_id.split("-")[0]
        for r in rows
    ]


def test_fencing_tokens_increase_per_session(store):
    """Each acquisition gets the session's next token, from 1; sessions count separately."""
    k1, k2 = _key("tok"), _key("tok")
    a1 = store.acquire_lease(k1, "harness", 30)
    a2 = store.acquire_lease(k1, "harness", 30)
    b1 = store.acquire_lease(k2, "other", 30)
    assert (a1.token, a2.token, b1.token) == (1, 2, 1)
    assert store.lease(k1).token == 2 and store.lease(k1).owner == "harness"
    assert store.lease("missing") is None


def test_fencing_acquire_refuses_a_live_lease_of_another_owner(store):
    """B38: a live lease of another owner is refused (naming it) unless taken over
    explicitly."""
    key = _key("held")
    store.acquire_lease(key, "harness", 60)
    with pytest.raises(LeaseHeld, match="owned by 'harness'"):
        store.acquire_lease(key, "cli", 60)
    taken = store.acquire_lease(key, "cli", 60, take_over=True)
    assert (taken.owner, taken.token) == ("cli", 2)


def test_fencing_acquire_after_expiry_or_release(store):
    """An expired or released lease can be acquired by another owner, with a newer token."""
    key = _key("expiry")
    first = store.acquire_lease(key, "a", timedelta(milliseconds=1))
    time.sleep(0.01)
    second = store.acquire_lease(key, "b", 60)
    assert store.release_lease(second) is True
    third = store.acquire_lease(key, "c", 60)
    assert (first.token, second.token, third.token) == (1, 2, 3)
    assert store.release_lease(second) is False  # already superseded


def test_fencing_acquire_rejects_bad_arguments(store):
    """An empty owner or a non-positive ttl is a ValueError naming the field."""
    with pytest.raises(ValueError, match="owner"):
        store.acquire_lease(_key("bad"), "", 10)
    with pytest.raises(ValueError, match="ttl"):
        store.acquire_lease(_key("bad"), "a", 0)


def test_fencing_append_assigns_seq_and_makes_checkpoint_self_retaining(store):
    """Fenced rows continue the log; a continuation compaction points at its own id."""
    key = load(store, [U("fix the parser")], key=_key("cp"))
    lease = store.acquire_lease(key, "harness", 60)
    cp = Entry(
        EntryKind.COMPACTION,
        Role.SYSTEM,
        compaction=CompactionInfo("## Goal\n- x", 0, None, True, f"{key}:0"),
    )
    written = store.append_fenced(key, [A(text="done"), cp], lease.token)
    assert [e.seq for e in written] == [1, 2]
    row = store.latest_compaction(key)
    assert (row.seq, row.entry_id) == (2, f"{key}:2")
    assert row.compaction.first_kept_entry_id == f"{key}:2"
    assert (row.compaction.continuation, row.compaction.run_id) == (True, f"{key}:0")


def test_fencing_append_with_stale_token_writes_nothing(store):
    """A token older than the newest is refused and no row lands."""
    key = load(store, [U("go")], key=_key("stale"))
    old = store.acquire_lease(key, "a", 60)
    new = store.acquire_lease(key, "b", 60, take_over=True)
    with pytest.raises(FencedWrite, match="token 1 is stale"):
        store.append_fenced(key, [A(text="late")], old.token)
    store.append_fenced(key, [A(text="fresh")], new.token)
    assert [e.text() for e in store.entries(key)] == ["go", "fresh"]
    assert store.get_session(key).entry_count == 2


def test_fencing_append_without_any_lease_is_refused(store):
    """A session that never had an owner refuses fenced writes."""
    key = load(store, [U("go")], key=_key("nolease"))
    with pytest.raises(FencedWrite, match="no owner"):
        store.append_fenced(key, [A(text="x")], 1)
    assert store.get_session(key).entry_count == 1


def test_fencing_receipts_are_fenced_and_hold_no_text(store):
    """A receipt needs the newest token; it keeps run id and closed reason only."""
    key = load(store, [U("go")], key=_key("receipt"))
    old = store.acquire_lease(key, "a", 60)
    new = store.acquire_lease(key, "a", 60)
    with pytest.raises(FencedWrite):
        store.add_receipt(RefusalReceipt(key, "r:0", ReceiptReason.EMPTY), old.token)
    got = store.add_receipt(RefusalReceipt(key, "r:0", ReceiptReason.TRUNCATED), new.token)
    store.add_receipt(RefusalReceipt(key, "r:5", ReceiptReason.CANCELLED), new.token)
    listed = store.receipts(key)
    assert [(r.run_id, r.reason) for r in listed] == [
        ("r:0", ReceiptReason.TRUNCATED),
        ("r:5", ReceiptReason.CANCELLED),
    ]
    assert listed[0].receipt_id == got.receipt_id and got.created_at is not None
    assert [r.run_id for r in store.receipts(key, run_id="r:5")] == ["r:5"]
    assert store.receipts("other") == []


def test_receipts_keep_a_short_one_line_detail(store):
    """Issue 45 item 7: a receipt keeps its detail (which check failed) beside the closed
    reason, on one line and at most 200 characters; None stays None."""
    key = load(store, [U("go")], key=_key("detail"))
    lease = store.acquire_lease(key, "a", 60)
    store.add_receipt(
        RefusalReceipt(key, "r:0", ReceiptReason.PROVIDER_FAILURE, detail="HTTP 500"), lease.token
    )
    store.add_receipt(
        RefusalReceipt(
            key,
            "r:1",
            ReceiptReason.PROVIDER_FAILURE,
            detail="line one\n\x1b[31mline two " + "x" * 400,
        ),
        lease.token,
    )
    store.add_receipt(RefusalReceipt(key, "r:2", ReceiptReason.EMPTY), lease.token)
    details = [r.detail for r in store.receipts(key)]
    assert details[0] == "HTTP 500" and details[2] is None
    assert details[1].startswith("line one [31mline two x") and len(details[1]) == 200


def test_fencing_view_bytes_after_sums_visible_message_rows(store):
    """The aggregate equals the stored sizes of visible message rows after the seq."""
    key = load(store, [U("a"), A(call("c1", path="x")), T("c1"), U("b")], key=_key("vb"))
    other = load(store, [U("zzz" * 100)], key=_key("vb"))
    store.set_on_path(key, [2], False)
    metas = store.rows_meta(key, limit=100)
    want = sum(m.view_bytes for m in metas if m.seq > 0)
    assert store.view_bytes_after(key, 0) == want > 0
    assert store.view_bytes_after(key, 3) == 0
    assert store.view_bytes_after(other, -1) > 300


# ---------------------------------------------------------------------------- two processes


def _hold_and_write(url: str, key: str, ready, out) -> None:
    """Writer A: write pairs until a newer owner fences it out; report how many landed."""
    with open_store(url) as store:
        lease = store.acquire_lease(key, "A", 60)
        ready.set()
        written = 0
        for i in range(2_000):
            try:
                store.append_fenced(key, _pair("A", i), lease.token)
            except FencedWrite:
                out.put(("fenced", written))
                return
            written += 1
            time.sleep(0.002)
        out.put(("never fenced", written))


def test_fencing_two_processes_never_interleave(store):
    """B38: a takeover by a second process cuts the first off: its rows all precede the new
    owner's, whole units only, and its next write is refused."""
    key = _key("race")
    store.upsert_session(Session(key=key, harness="test"))
    ready, out = CTX.Event(), CTX.Queue()
    proc = CTX.Process(target=_hold_and_write, args=(store.url, key, ready, out))
    proc.start()
    try:
        assert ready.wait(60)
        while store.get_session(key).entry_count < 6:
            time.sleep(0.01)
        lease = store.acquire_lease(key, "B", 60, take_over=True)
        for i in range(10):
            store.append_fenced(key, _pair("B", i), lease.token)
        status, a_written = out.get(timeout=60)
    finally:
        proc.join(60)
    assert status == "fenced" and a_written >= 3
    writers = _writers(store, key)
    assert writers == ["A"] * (2 * a_written) + ["B"] * 20


def _resume_after_pause(url: str, key: str, paused, resume, out) -> None:
    """Writer A: write, pause past its lease, then try again after resuming."""
    with open_store(url) as store:
        lease = store.acquire_lease(key, "A", timedelta(milliseconds=300))
        for i in range(3):
            store.append_fenced(key, _pair("A", i), lease.token)
        paused.set()
        resume.wait(60)
        try:
            store.append_fenced(key, _pair("A", 99), lease.token)
            out.put("written")
        except FencedWrite:
            out.put("fenced")


def test_fencing_owner_resuming_after_losing_its_lease_is_refused(store):
    """An owner that pauses past its lease and resumes after a new owner took over cannot
    write; the new owner's rows are intact and follow the old owner's."""
    key = _key("pause")
    store.upsert_session(Session(key=key, harness="test"))
    paused, resume, out = CTX.Event(), CTX.Event(), CTX.Queue()
    proc = CTX.Process(target=_resume_after_pause, args=(store.url, key, paused, resume, out))
    proc.start()
    try:
        assert paused.wait(60)
        while True:  # wait for the lease to expire; no take-over needed
            try:
                lease = store.acquire_lease(key, "B", 60)
                break
            except LeaseHeld:
                time.sleep(0.02)
        for i in range(4):
            store.append_fenced(key, _pair("B", i), lease.token)
        resume.set()
        result = out.get(timeout=60)
    finally:
        proc.join(60)
    assert result == "fenced"
    assert _writers(store, key) == ["A"] * 6 + ["B"] * 8
    assert store.lease(key).owner == "B"


def _grab(url: str, key: str, n: int, out) -> None:
    with open_store(url) as store:
        out.put([store.acquire_lease(key, "p", 60, take_over=True).token for _ in range(n)])


def test_fencing_concurrent_acquisitions_get_distinct_tokens(store):
    """Two processes acquiring at once never get the same token."""
    out = CTX.Queue()
    key = _key("grab")
    procs = [CTX.Process(target=_grab, args=(store.url, key, 15, out)) for _ in range(2)]
    for p in procs:
        p.start()
    tokens = out.get(timeout=60) + out.get(timeout=60)
    for p in procs:
        p.join(60)
    assert sorted(tokens) == list(range(1, 31))
