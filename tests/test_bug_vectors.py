"""Bug vectors of shared/spec/bug-vectors.md that no feature's own test file holds, each with the
vector's minimal input through the real API and its right value: B16 B17 B29 B38 B42 B43 B47
B49 B51 B57 B58 B61. (The others are named in the docstrings of their tests:
``grep -ri b07 tests``.)"""

from __future__ import annotations

import json
import logging
import multiprocessing as mp
import os
import re
import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.continuation.compaction import after_turn
from continuity.continuation.summarize import (
    ProviderError,
    ProviderReply,
    SummaryRequest,
    make_summarizer,
)
from continuity.continuation.summarize.extractive import ExtractiveSummarizer
from continuity.continuation.summarize.settings import SummarizerSettings
from continuity.continuation.view import build_continuation, effective_compaction
from continuity.core.model import (
    Checkpoint,
    CheckpointTrigger,
    Entry,
    EntryKind,
    MediaBlock,
    Note,
    ReceiptReason,
    RefusalReceipt,
    Role,
    Session,
    TextBlock,
)
from continuity.core.text import clean, clip_middle, cut_utf8
from continuity.store import iter_entries, open_store
from continuity.store.fencing import LeaseHeld
from continuity.transcripts.transcript_log import TranscriptLog, TranscriptRecord
from tests.builders import CP, A, T, U, call, load

CTX = mp.get_context("fork")
GOOD = "## Goal\n- fix the parser\n## Progress\n### Done\n- read it\n## Next steps\n- test it"
T0 = datetime(2026, 3, 1, tzinfo=UTC)


class Stub:
    """A summarizer answering GOOD, or running ``hook`` (which may raise) first."""

    name, max_summary_bytes, min_seconds = "stub", 24_000, 0.0

    def __init__(
        self,
        hook: Callable[[SummaryRequest], None] | None = None,
        max_input_bytes: int | None = None,
    ) -> None:
        self.hook, self.max_input_bytes = hook, max_input_bytes
        self.requests: list[SummaryRequest] = []

    def generate(
        self, request: SummaryRequest, *, cancel: threading.Event, deadline: float
    ) -> ProviderReply:
        self.requests.append(request)
        if self.hook is not None:
            self.hook(request)
        return ProviderReply(GOOD)


def _turn(store, key: str, summarizer: Any, lease=None, **kw: Any):  # type: ignore[no-untyped-def]
    lease = lease or store.acquire_lease(key, "harness", 60)
    return after_turn(
        store,
        key,
        lease=lease,
        summarizer=summarizer,
        budget_bytes=kw.pop("budget_bytes", 3_000),
        deadline=time.monotonic() + 30,
        **kw,
    )


def _long(store, key: str = "s1") -> str:  # type: ignore[no-untyped-def]
    return load(
        store,
        [
            U("fix the parser"),
            A(call("c1", path="parser.py")),
            T("c1", text="x" * 4_000),
            A(text="Fixed the parser."),
        ],
        key=key,
    )


def _compactions(store, key: str) -> list[Entry]:  # type: ignore[no-untyped-def]
    return [e for e in iter_entries(store, key) if e.kind is EntryKind.COMPACTION]


# ---------------------------------------------------------------------------- summarizer failure


def test_b16_summarizer_error_reports_no_compaction_and_writes_no_row(store):
    """B16: the provider answers context_length_exceeded: the outcome is a refusal (never
    "compacted"), no checkpoint row lands and the next continuation is what it was."""
    key = _long(store)
    before = build_continuation(store, key).to_dict()

    def overflow(request: SummaryRequest) -> None:
        raise ProviderError("400 context_length_exceeded: 212000 tokens > 200000")

    out = _turn(store, key, Stub(overflow))
    assert (out.status, out.receipt.reason, out.entry) == (
        "refused",
        ReceiptReason.PROVIDER_FAILURE,
        None,
    )
    assert out.to_dict()["checkpoint"] is None and _compactions(store, key) == []
    assert build_continuation(store, key).to_dict() == before


def test_b51_summarizer_without_credentials_warns_and_keeps_the_view(
    sqlite_store, monkeypatch, caplog
):
    """B51: no API key and no local server: a warning is logged, the compaction is refused,
    and nothing of the view is truncated."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    key = _long(sqlite_store)
    before = build_continuation(sqlite_store, key).to_dict()
    summarizer = make_summarizer(SummarizerSettings(provider="openai", model="m"))
    with caplog.at_level(logging.WARNING, logger="continuity.summarize"):
        out = _turn(sqlite_store, key, summarizer)
    assert out.receipt.reason is ReceiptReason.PROVIDER_FAILURE
    assert any(
        r.levelno == logging.WARNING and "provider_failure" in r.getMessage()
        for r in caplog.records
    )
    assert _compactions(sqlite_store, key) == []
    assert build_continuation(sqlite_store, key).to_dict() == before


def test_b47_failed_summary_marker_never_drops_the_rows_before_it(store):
    """B47: M1..M50 | CP(tail_start=M40) whose summary failed (empty) | M51: the continuation
    still covers M1..M39 verbatim, and the next compaction summarizes them (its first row is
    M1, not M40)."""
    rows = [U(f"M{i}", request=i == 1) if i % 2 else A(text=f"M{i}") for i in range(1, 51)]
    key = load(store, [*rows, CP("", covers=38), U("M51", request=False)])
    view = build_continuation(store, key, budget_bytes=240_000).to_dict()
    texts = [b["text"] for m in view["messages"] for b in m["content"]]
    shown = [*texts, view["request"]["text"]]
    assert view["summary"] is None and view["gaps"] == []
    assert {f"M{i}" for i in range(1, 52)} <= set(shown)
    stub = Stub()
    out = _turn(store, key, stub, budget_bytes=400)
    assert out.status == "compacted"
    assert stub.requests[0].rows[0].seq == 0 and stub.requests[-1].rows[-1].seq == 51


def test_b47_failed_summary_falls_back_to_the_previous_checkpoint(store):
    """B47: with an earlier good checkpoint S1 (through M39), a later compaction with an empty
    summary takes no effect: S1 and the rows after it make the view."""
    rows = [U(f"M{i}", request=i == 1) if i % 2 else A(text=f"M{i}") for i in range(1, 40)]
    rows += [CP("## Goal\n- S1 work", covers=38)]
    rows += [A(text=f"M{i}") for i in range(40, 51)] + [CP("", covers=50)]
    key = load(store, [*rows, A(text="M51")])
    view = build_continuation(store, key, budget_bytes=240_000).to_dict()
    assert view["summary"]["covers_through_seq"] == 38 and "S1 work" in view["summary"]["text"]
    texts = [b["text"] for m in view["messages"] for b in m["content"]]
    assert texts == [f"M{i}" for i in range(40, 52)] and view["gaps"] == []


#: B49's minimal input: an error or limit string where the summary belongs (claude-code#4996),
#: as the summary text alone and behind Claude Code's continuation preamble.
B49_SUMMARIES = [
    "Claude AI usage limit reached|1712345678",
    "API Error: 400 prompt is too long: 210000 tokens > 200000 maximum",
    "Error: rate_limit_error",
    "5-hour limit reached ∙ resets 3pm",
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:\nClaude AI usage limit reached|1712345678",
]


@pytest.mark.parametrize("summary", B49_SUMMARIES)
def test_b49_error_text_summary_never_drops_the_rows_before_it(store, summary):
    """B49 on an imported compaction: M1..M50 | CP(summary = an error/limit string) | M51: the
    compaction takes no effect, so the view still covers M1..M51 verbatim and carries no
    error text as its summary."""
    rows = [U(f"M{i}", request=i == 1) if i % 2 else A(text=f"M{i}") for i in range(1, 51)]
    key = load(store, [*rows, CP(summary, covers=38), U("M51", request=False)])
    assert effective_compaction(store, key) is None
    view = build_continuation(store, key, budget_bytes=240_000).to_dict()
    shown = [b["text"] for m in view["messages"] for b in m["content"]] + [view["request"]["text"]]
    assert view["summary"] is None and view["gaps"] == []
    assert {f"M{i}" for i in range(1, 52)} <= set(shown)


def test_b49_error_text_summary_falls_back_to_the_previous_checkpoint(store):
    """B49: a good checkpoint S1 (through M39), then an imported compaction whose summary is
    the usage-limit string: S1 and the rows after it make the view; the next compaction
    summarizes from M40 on (S1's coverage), never from after the failed one."""
    rows = [U(f"M{i}", request=i == 1) if i % 2 else A(text=f"M{i}") for i in range(1, 40)]
    rows += [CP("## Goal\n- S1 work", covers=38)]
    rows += [A(text=f"M{i}") for i in range(40, 51)]
    rows += [CP("Claude AI usage limit reached|1712345678", covers=50)]
    key = load(store, [*rows, A(text="M51")])
    assert effective_compaction(store, key).seq == 39
    view = build_continuation(store, key, budget_bytes=240_000).to_dict()
    assert view["summary"]["covers_through_seq"] == 38 and "S1 work" in view["summary"]["text"]
    texts = [b["text"] for m in view["messages"] for b in m["content"]]
    assert texts == [f"M{i}" for i in range(40, 52)] and view["gaps"] == []


@pytest.mark.parametrize(
    "summary",
    [
        "This session is being continued from a previous conversation that ran out of context. "
        "Summary: ranges fixed.",
        "## Goal\n- handle 429 responses from the API",
        # a long summary whose first line names a rate limit is a summary, not an error
        "Rate limit handling was the goal.\n" + "- done: retry with backoff\n" * 120,
    ],
)
def test_b49_real_summaries_still_take_effect(store, summary):
    """The B49 check never discards a real summary: Claude Code's own preamble, a heading, a
    long summary mentioning a rate limit in its first line."""
    key = load(store, [U("M1"), A(text="M2"), CP(summary), U("M3", request=False)])
    assert effective_compaction(store, key).seq == 2
    assert build_continuation(store, key).to_dict()["summary"]["covers_through_seq"] == 1


def test_b29_continuation_view_carries_markers_never_secrets(store):
    """B29 (spec/continuation.md: no byte of a recorded secret reaches a continuation view):
    a secret in an imported summary, the request, a note, a tool call's arguments and a tool
    result is replaced by its marker; the rows themselves stay lossless."""
    env = (
        "AZURE_STORAGE_KEY=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy==\n"
        "DATABASE_URL=postgres://admin:hunter2@10.0.0.5/prod"
    )
    token = "ghp_" + "k" * 40
    key = load(
        store,
        [
            U("old"),
            CP("## Goal\n- deploy with sk-ant-api03-" + "B" * 40),
            U(f"deploy with {token}"),
            A(call("b1", "bash", command=f"GH_TOKEN={token} ./deploy.sh")),
            T("b1", text=env),
            A(text="Deployed."),
        ],
    )
    store.add_note(Note(key, f"the token is {token}"))
    view = json.dumps(build_continuation(store, key).to_dict())
    for secret in ("hunter2", "Zm9vYmFy", "k" * 40, "B" * 40):
        assert secret not in view
    for kind in ("url-credential", "base64-credential", "github-token", "anthropic-key"):
        assert f"[REDACTED:{kind}]" in view
    assert "hunter2" in store.entries_by_seq(key, [4])[0].tool_results()[0].text


# ---------------------------------------------------------------------------- budget and encoding


def test_b17_three_megabyte_images_compact_within_the_input_limit(sqlite_store):
    """B17: three user messages, each a 1,000,000-character base64 image inline plus an image
    block: the compaction succeeds, every request stays within the provider's limit and holds
    no base64 run, only stubs."""
    b64 = "iVBORw0KGgoAAAANSUhEUg" + "Ab3+" * 250_000
    rows = []
    for i in range(3):
        rows += [
            Entry(
                EntryKind.MESSAGE,
                Role.USER,
                (
                    TextBlock(f"screenshot {i} data:image/png;base64,{b64}"),
                    MediaBlock("image/png", 750_000),
                ),
                is_request=True,
            ),
            A(text=f"I see screenshot {i}."),
        ]
    key = load(sqlite_store, rows)
    stub = Stub(max_input_bytes=100_000)
    # forced: the payloads count as stubs in the view (issue 15), so it is under the budget
    out = _turn(sqlite_store, key, stub, budget_bytes=240_000, force=True)
    assert out.status == "compacted"
    for r in stub.requests:
        assert r.request_bytes <= 100_000
        assert not re.search(r"[A-Za-z0-9+/]{400,}", r.prompt)
        assert "[image/png 750000 B omitted]" in r.prompt and "[base64 " in r.prompt


def test_b43_cuts_never_split_an_emoji_and_lone_surrogates_become_fffd():
    """B43: 8,191 ``a`` + 🎉 cut at 8,192 bytes keeps the a's only; a clipped text and a lone
    surrogate from a tool both encode as UTF-8 without surrogatepass."""
    text = "a" * 8_191 + "🎉"
    assert cut_utf8(text, 8_192) == "a" * 8_191
    for cap in range(8_180, 8_200):
        clip_middle(text + "b" * 9_000, cap).encode("utf-8")
    assert clean('tool said "\ud83c"') == 'tool said "\ufffd"'


# ---------------------------------------------------------------------------- concurrency


def _writer(url: str, key: str, owner: str, barrier, out) -> None:
    with open_store(url) as store:
        barrier.wait(30)
        try:
            lease = store.acquire_lease(key, owner, 60)
        except LeaseHeld:
            out.put(("refused", owner))
            return
        for i in range(50):
            store.append_fenced(key, [U(f"{owner} {i}", request=False)], lease.token)
        out.put(("wrote", owner))


def test_b38_two_writers_started_together_one_is_refused(store):
    """B38: two writers start on one session at once, each appending 50 records: the session's
    exclusive lease refuses the second, so every record is the first writer's, in order."""
    store.upsert_session(Session(key="race", harness="test"))
    barrier, out = CTX.Barrier(2), CTX.Queue()
    procs = [
        CTX.Process(target=_writer, args=(store.url, "race", w, barrier, out)) for w in ("A", "B")
    ]
    for p in procs:
        p.start()
    results = sorted([out.get(timeout=60), out.get(timeout=60)])
    for p in procs:
        p.join(60)
    assert [r[0] for r in results] == ["refused", "wrote"]
    winner = results[1][1]
    texts = [e.text() for e in iter_entries(store, "race")]
    assert texts == [f"{winner} {i}" for i in range(50)]


def test_b42_records_written_during_compaction_all_land_in_order(store):
    """B42: while the summary runs the owner writes U"task" | A{use:z1} | R{z1}: all three
    are stored, in order, after the coverage, and the next view pairs them."""
    key = _long(store)
    lease = store.acquire_lease(key, "harness", 60)

    def work(request: SummaryRequest) -> None:
        for row in (
            U("task", request=False),
            A(call("z1", "bash", command="make")),
            T("z1", text="built"),
        ):
            store.append_fenced(key, [row], lease.token)

    out = _turn(store, key, Stub(work), lease=lease)
    # row 3 (the newest complete exchange when the summary started) is kept out of it
    assert out.status == "compacted" and out.entry.compaction.covers_through_seq == 2
    rows = list(iter_entries(store, key, after_seq=3))
    assert [(e.seq, e.kind, e.role) for e in rows] == [
        (4, EntryKind.MESSAGE, Role.USER),
        (5, EntryKind.MESSAGE, Role.ASSISTANT),
        (6, EntryKind.MESSAGE, Role.TOOL),
        (7, EntryKind.COMPACTION, Role.SYSTEM),
    ]
    view = build_continuation(store, key, budget_bytes=3_000).to_dict()
    blocks = [b for m in view["messages"] for b in m["content"]]
    assert [b.get("text") or b.get("id") for b in blocks] == [
        "Fixed the parser.",
        "task",
        "z1",
        "built z1",
    ]


# ---------------------------------------------------------------------------- durability


def _append_then_hang(url: str, log_path: str, acks) -> None:
    with open_store(url) as store:
        store.upsert_session(Session(key="k9", harness="test"))
        log = TranscriptLog(log_path)  # fsync on: the default
        for i in range(30):
            row = U(f"record {i}", request=False)
            row.seq = i
            store.append("k9", [row])
            log.append(
                [
                    TranscriptRecord(
                        "default",
                        "pi",
                        "k9",
                        "/p",
                        i,
                        "user",
                        f"record {i}",
                        "live",
                        None,
                        "2026-03-01T00:00:00.000Z",
                    )
                ]
            )
            acks.put(i)
        store.insert_checkpoint(
            Checkpoint(
                "k9",
                "test",
                "/p",
                "/p",
                CheckpointTrigger.EXPLICIT,
                "## Explicit Checkpoint",
                30,
                created_at=T0,
            ),
            max_per_session=50,
        )
        acks.put("checkpoint")
        time.sleep(120)


def test_b57_kill_9_after_30_records_and_a_checkpoint_loses_nothing(store, tmp_path):
    """B57: a writer killed with SIGKILL after 30 acknowledged records and one checkpoint:
    the store and the canonical transcript both give back every acknowledged record."""
    acks = CTX.Queue()
    log_path = tmp_path / "transcript.jsonl"
    proc = CTX.Process(target=_append_then_hang, args=(store.url, str(log_path), acks))
    proc.start()
    got = [acks.get(timeout=60) for _ in range(31)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(60)
    assert got[-1] == "checkpoint" and proc.exitcode == -signal.SIGKILL
    with open_store(store.url) as reopened:
        assert [e.text() for e in iter_entries(reopened, "k9")] == [
            f"record {i}" for i in range(30)
        ]
        assert [c.prompt_count for c in reopened.checkpoints("k9")] == [30]
    assert [r.seq for r in TranscriptLog(log_path).read(session_key="k9")] == list(range(30))


def test_b57_sqlite_syncs_every_commit(sqlite_store):
    """B57 (power loss, not only kill -9): the SQLite store runs WAL with synchronous=FULL
    (2), so an acknowledged commit is on disk before the call returns."""
    from sqlalchemy import text as sql

    with sqlite_store.engine.connect() as conn:
        assert conn.execute(sql("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(sql("PRAGMA synchronous")).scalar() == 2


def test_b61_compaction_keeps_every_record_readable(sqlite_store):
    """B61: 600 records, a compaction, then a full read: all 600 are still there (the
    checkpoint is one more row; it rewrites nothing)."""
    rows = [U("go")] + [A(text=f"step {i} " + "s" * 20) for i in range(599)]
    key = load(sqlite_store, rows)
    out = _turn(sqlite_store, key, ExtractiveSummarizer())
    assert out.status == "compacted"
    read = list(iter_entries(sqlite_store, key))
    assert len(read) == 601 and [e.seq for e in read] == list(range(601))
    assert [e.text() for e in read[1:600]] == [f"step {i} " + "s" * 20 for i in range(599)]


# ---------------------------------------------------------------------------- latest N


def test_b58_store_latest_n_is_the_newest_in_chronological_order(store):
    """B58: items 1..10, limit 3 -> [8, 9, 10], for notes, checkpoints and receipts."""
    store.upsert_session(Session(key="k", harness="test"))
    lease = store.acquire_lease("k", "h", 60)
    for i in range(1, 11):
        store.add_note(Note("k", f"{i}"))
        store.insert_checkpoint(
            Checkpoint(
                "k",
                "test",
                "/p",
                "/p",
                CheckpointTrigger.PERIODIC,
                f"d{i}",
                i,
                created_at=T0 + timedelta(minutes=i),
            ),
            max_per_session=50,
        )
        store.add_receipt(RefusalReceipt("k", f"{i}", ReceiptReason.EMPTY), lease.token)
    assert [n.text for n in store.notes("k", limit=3)] == ["8", "9", "10"]
    assert [c.prompt_count for c in store.checkpoints("k", limit=3)] == [8, 9, 10]
    assert [r.run_id for r in store.receipts("k", limit=3)] == ["8", "9", "10"]


def test_b58_cli_latest_n_is_the_newest_in_chronological_order(tmp_path: Path):
    """B58 through the CLI: ``checkpoints -n 3`` and ``receipts -n 3`` list 8, 9, 10."""
    with open_store(f"sqlite:///{tmp_path / 'continuity.db'}") as store:
        test_b58_store_latest_n_is_the_newest_in_chronological_order(store)
    runner = CliRunner()
    listed = runner.invoke(app, ["checkpoints", "k", "-n", "3", "--json", "--home", str(tmp_path)])
    assert listed.exit_code == 0, listed.output
    assert [c["prompt_count"] for c in json.loads(listed.stdout)["checkpoints"]] == [8, 9, 10]
    receipts = runner.invoke(app, ["receipts", "k", "-n", "3", "--json", "--home", str(tmp_path)])
    assert receipts.exit_code == 0, receipts.output
    assert [r["run_id"] for r in json.loads(receipts.stdout)] == ["8", "9", "10"]


def test_b20_marker_counts_original_bytes_through_repeated_cuts():
    """A text cut twice (the summarizer's input bound, then a one-line cap) names the bytes
    of the original that are gone, not only those of the second cut."""
    text = "start " + "x" * 2_000_000 + " error: the end"
    once = clip_middle(text, 8_000)
    twice = clip_middle(once, 300)
    assert len(twice.encode("utf-8")) <= 300 and twice.endswith("error: the end")
    kept = twice.split("\n")
    assert len(kept) == 3 and kept[1].startswith("[… ")
    shown = len(kept[0].encode()) + len(kept[2].encode())
    assert kept[1] == f"[… {len(text.encode()) - shown} bytes omitted …]"
