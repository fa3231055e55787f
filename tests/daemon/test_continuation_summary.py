"""The daemon's side of pi's own continuation checkpoint (issue 14): ``POST
/api/continuation/summary`` summarizes the working view pi's extension sends, and records one
refusal receipt (run id, closed reason) when it cannot; ``POST /api/continuation/refused``
records one the extension refused alone; a Stop that says the harness checkpoints writes no
checkpoint of the daemon's. On each store backend, through FastAPI's TestClient."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from continuity.checkpoints.capture import CheckpointConfig
from continuity.continuation.summarize import ProviderError, ProviderReply
from continuity.daemon.hooks.live import LiveCapture
from continuity.daemon.server import create_app

LOCAL = "http://127.0.0.1"
KEY = "0199a1b2-pi-session"


def _message(
    entry_id: str, parent: str | None, role: str, content: Any, **extra: Any
) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-12-02T10:00:00.000Z",
        "message": {"role": role, "content": content, **extra},
    }


def _session_file(folder: Path, n_results: int = 3, size: int = 2000) -> tuple[Path, list]:
    """A pi session file: a request, ``n_results`` bash calls with ``size``-byte outputs, an
    answer. Returns the path and its entries (header first)."""
    entries: list[dict[str, Any]] = [
        {
            "type": "session",
            "version": 3,
            "id": KEY,
            "timestamp": "2026-12-02T10:00:00.000Z",
            "cwd": "/home/ana/ledger",
        }
    ]
    entries.append(_message("u1", None, "user", [{"type": "text", "text": "Read the export logs"}]))
    parent = "u1"
    for i in range(n_results):
        entries.append(
            _message(
                f"a{i}",
                parent,
                "assistant",
                [
                    {
                        "type": "toolCall",
                        "id": f"c{i}",
                        "name": "bash",
                        "arguments": {"command": f"cat log{i}"},
                    }
                ],
                stopReason="toolUse",
            )
        )
        entries.append(
            _message(
                f"t{i}",
                f"a{i}",
                "toolResult",
                [{"type": "text", "text": f"line {i} " + "x" * size}],
                toolCallId=f"c{i}",
                toolName="bash",
                isError=False,
            )
        )
        parent = f"t{i}"
    entries.append(
        _message(
            "a-end",
            parent,
            "assistant",
            [{"type": "text", "text": "The export job failed at 02:00."}],
            stopReason="stop",
        )
    )
    path = folder / f"{KEY}.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path, entries


class Failing:
    """A summarizer that raises ``ProviderError`` (an HTTP 500, say)."""

    name, max_input_bytes, max_summary_bytes, min_seconds = "openai", 400_000, 24_000, 0.0

    def generate(self, request: Any, *, cancel: threading.Event, deadline: float) -> Any:
        raise ProviderError("HTTP 500")


class Slow:
    """A summarizer that waits for the cancel signal (a provider still answering)."""

    name, max_input_bytes, max_summary_bytes, min_seconds = "openai", 400_000, 24_000, 0.0

    def __init__(self) -> None:
        self.started = threading.Event()

    def generate(self, request: Any, *, cancel: threading.Event, deadline: float) -> Any:
        self.started.set()
        cancel.wait(10)
        return ProviderReply("## Goal\n- late\n## Progress\n## Next steps\n")


def _client(store: Any, home: Path, summarizer: Any = None) -> TestClient:
    live = LiveCapture(
        store,
        home=home,
        config=CheckpointConfig(),
        budget_bytes=240_000,
        stop_seconds=10,
        idle_limit=timedelta(hours=4),
        tick_seconds=0.05,
        summarizer=(lambda: summarizer) if summarizer is not None else None,
    )
    client = TestClient(create_app(live), base_url=LOCAL)
    client.live = live  # type: ignore[attr-defined]
    return client


@pytest.fixture
def client(store: Any, isolated_home: Path) -> Iterator[TestClient]:
    with _client(store, isolated_home) as c:
        yield c


def _summary_body(path: Path, entries: list, **extra: Any) -> dict[str, Any]:
    return {
        "harness": "pi",
        "session_key": KEY,
        "transcript_path": str(path),
        "project": "/home/ana/ledger",
        "request_entry_id": "u1",
        "entries": entries[1:],
        **extra,
    }


def test_summary_of_the_working_view_names_the_run_and_its_range(
    client: TestClient, tmp_path: Path
) -> None:
    """The extractive summarizer summarizes the entries sent: the request verbatim, no tool
    output copied whole; the run id is the store's (the request row's seq, from the imported
    file); the range runs from the first entry sent to the last; nothing is written (pi
    persists the checkpoint, the next import brings it) and no receipt either."""
    path, entries = _session_file(tmp_path)
    r = client.post("/api/continuation/summary", json=_summary_body(path, entries))
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["status"] == "ok" and out["summarizer"] == "extractive"
    assert out["run_id"] == f"{KEY}:1"  # the header is seq 0, the request seq 1
    assert out["covers"] == {"from_entry_id": "u1", "through_entry_id": "a-end"}
    assert "Read the export logs" in out["summary"]
    assert "x" * 500 not in out["summary"]
    assert out["summary_bytes"] == len(out["summary"].encode("utf-8"))
    store = client.live.store  # type: ignore[attr-defined]
    assert store.latest_compaction(KEY) is None
    assert store.receipts(KEY) == []


def test_a_previous_summary_and_recovery_context_are_evidence(
    client: TestClient, tmp_path: Path
) -> None:
    """A view opening with an earlier compaction and holding our recovery context: the new
    summary carries the earlier summary's goal (merged as evidence) and the request after it."""
    path, entries = _session_file(tmp_path, n_results=1)
    earlier = {
        "type": "compaction",
        "id": "cmp0",
        "parentId": None,
        "summary": "## Goal\n- Migrate the ledger to PostgreSQL\n## Progress\n### Done\n- none\n"
        "## Next steps\n- run the migration\n",
        "firstKeptEntryId": None,
        "tokensBefore": 9000,
    }
    recovery = {
        "type": "custom_message",
        "id": "rc",
        "parentId": "cmp0",
        "customType": "continuity-recovery",
        "display": False,
        "content": "Recovery context from continuity: the export job runs at 02:00",
    }
    body = _summary_body(path, entries)
    body["entries"] = [earlier, recovery, *entries[1:]]
    out = client.post("/api/continuation/summary", json=body).json()
    assert out["status"] == "ok"
    assert "Migrate the ledger to PostgreSQL" in out["summary"]
    assert "Read the export logs" in out["summary"]
    assert out["covers"]["from_entry_id"] == "cmp0"


def test_a_failing_provider_refuses_once_per_run(
    store: Any, isolated_home: Path, tmp_path: Path
) -> None:
    """A provider failure answers ``refused`` / ``provider_failure`` with the run id and
    writes one receipt without text; the harness's own report of the same run
    (``/api/continuation/refused``) adds none and answers the first receipt."""
    path, entries = _session_file(tmp_path)
    with _client(store, isolated_home, Failing()) as c:
        out = c.post("/api/continuation/summary", json=_summary_body(path, entries)).json()
        assert out == {
            "status": "refused",
            "session": KEY,
            "run_id": f"{KEY}:1",
            "reason": "provider_failure",
            "detail": "HTTP 500",
            "receipt_id": out["receipt_id"],
        }
        assert isinstance(out["receipt_id"], int)
        again = c.post(
            "/api/continuation/refused",
            json={
                "harness": "pi",
                "session_key": KEY,
                "transcript_path": str(path),
                "request_entry_id": "u1",
                "reason": "cancelled",
            },
        ).json()
        assert again["receipt_id"] == out["receipt_id"]
        assert (again["reason"], again["detail"]) == ("provider_failure", "HTTP 500")
        rows = c.live.store.receipts(KEY)  # type: ignore[attr-defined]
        assert [(r.run_id, r.reason.value, r.detail) for r in rows] == [
            (f"{KEY}:1", "provider_failure", "HTTP 500")
        ]  # issue 45 item 7


def test_refused_by_the_harness_is_recorded_with_the_run_id(
    client: TestClient, tmp_path: Path
) -> None:
    """The extension stopped waiting (the daemon did not answer in time): its report becomes
    the run's receipt, reason as sent; a reason outside the closed set is 422."""
    path, _entries = _session_file(tmp_path)
    body = {
        "harness": "pi",
        "session_key": KEY,
        "transcript_path": str(path),
        "request_entry_id": "u1",
        "reason": "cancelled",
        "detail": "no answer from the daemon within 600 s",
    }
    out = client.post("/api/continuation/refused", json=body).json()
    assert (out["status"], out["run_id"], out["reason"], out["detail"]) == (
        "refused",
        f"{KEY}:1",
        "cancelled",
        "no answer from the daemon within 600 s",
    )
    assert (
        client.post("/api/continuation/refused", json={**body, "detail": "x" * 201}).status_code
        == 422
    )
    assert (
        client.post("/api/continuation/refused", json={**body, "reason": "oops"}).status_code == 422
    )


def test_an_empty_view_is_refused_as_empty(client: TestClient, tmp_path: Path) -> None:
    """Nothing to summarize (no message row): ``empty``, never a summary of nothing."""
    path, entries = _session_file(tmp_path)
    body = _summary_body(path, entries)
    body["entries"] = [
        {"type": "model_change", "id": "m", "parentId": None, "provider": "fake", "modelId": "fake"}
    ]
    out = client.post("/api/continuation/summary", json=body).json()
    assert (out["status"], out["reason"]) == ("refused", "empty")


def test_a_summary_cancelled_by_the_deadline(
    store: Any, isolated_home: Path, tmp_path: Path
) -> None:
    """The harness gives 1.5 s (``deadline_seconds``, less the second kept to answer): the
    provider still working then is cancelled, and the refusal says ``cancelled``."""
    path, entries = _session_file(tmp_path)
    slow = Slow()
    with _client(store, isolated_home, slow) as c:
        started = time.monotonic()
        out = c.post(
            "/api/continuation/summary", json=_summary_body(path, entries, deadline_seconds=1.5)
        ).json()
        assert time.monotonic() - started < 5
        assert slow.started.is_set()
        assert (out["status"], out["reason"]) == ("refused", "cancelled")


def test_stop_from_pi_answers_the_budget_and_leaves_the_checkpoint_to_pi(
    store: Any, isolated_home: Path, tmp_path: Path
) -> None:
    """A pi Stop with ``checkpoint_in_harness`` answers the follow-up budget the extension
    measures against, and the daemon's policy writes nothing of its own, even over budget."""
    path, _entries = _session_file(tmp_path, n_results=4, size=100_000)
    live = LiveCapture(
        store,
        home=isolated_home,
        config=CheckpointConfig(),
        budget_bytes=5_000,
        stop_seconds=10,
        idle_limit=timedelta(hours=4),
        tick_seconds=0.05,
    )
    with TestClient(create_app(live), base_url=LOCAL) as c:
        raw = json.dumps(
            {
                "session_id": KEY,
                "transcript_path": str(path),
                "cwd": "/home/ana/ledger",
                "last_assistant_message": "The export job failed at 02:00.",
                "checkpoint_in_harness": True,
            }
        )
        r = c.post(
            "/api/harness/pi/stop", content=raw, headers={"content-type": "application/json"}
        )
        assert r.status_code == 200 and r.json()["follow_up_budget_bytes"] == 5_000
        deadline = time.monotonic() + 10
        info = live.sessions[KEY]
        while info.last_outcome is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert info.last_outcome == {
            "session": KEY,
            "status": "not_needed",
            "reason": "checkpoint_in_harness",
        }
        assert live.store.latest_compaction(KEY) is None


@pytest.mark.parametrize(
    ("config", "budget"),
    [
        ("", 240_000),
        ("[continuity]\nfollow_up_budget_bytes = 50000\n", 50_000),
        ("[continuity]\nfollow_up_budget_bytes = 50000\n[daemon]\nbudget_bytes = 7000\n", 7_000),
    ],
)
def test_the_daemon_budget_is_the_follow_up_budget(
    isolated_home: Path, monkeypatch: Any, config: str, budget: int
) -> None:
    """``[continuity] follow_up_budget_bytes`` is the daemon's budget (what pi's extension is
    told); the older ``[daemon] budget_bytes`` wins only when a workspace sets it."""
    from continuity.daemon.server import build_live, load_settings

    monkeypatch.delenv("CONTINUITY_DATABASE_URL", raising=False)
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text(config)
    live = build_live(isolated_home, load_settings(isolated_home))
    try:
        assert live.budget_bytes == budget
    finally:
        live.store.close()


def test_a_refusal_spooled_while_the_daemon_was_down_is_recorded_once(
    store: Any, isolated_home: Path, tmp_path: Path
) -> None:
    """pi's extension found no daemon: its ``continuation-refused`` report waits in the spool
    (the hook command journals it); the daemon's start records it as the run's receipt, and a
    second start (the same line replayed, or a second report) adds none."""
    from continuity.daemon.hooks import spool

    path, _entries = _session_file(tmp_path)
    body = {
        "harness": "pi",
        "session_key": KEY,
        "transcript_path": str(path),
        "request_entry_id": "u1",
        "reason": "provider_failure",
    }
    isolated_home.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        spool.append(
            str(isolated_home),
            spool.body_line(spool.new_event_id(), spool.iso_now(), "continuation-refused", body),
        )
    for _ in range(2):
        live = LiveCapture(
            store,
            home=isolated_home,
            config=CheckpointConfig(),
            budget_bytes=240_000,
            stop_seconds=10,
            idle_limit=timedelta(hours=4),
            tick_seconds=0.05,
        )
        report = live.start()
        live.close()
    assert report.rejected == 0
    rows = store.receipts(KEY)
    assert [(r.run_id, r.reason.value) for r in rows] == [(f"{KEY}:1", "provider_failure")]
    assert spool.pending(str(isolated_home)) == 0


def test_the_reasons_a_harness_may_report_are_the_receipt_reasons() -> None:
    """The refusal body takes exactly seed 002's closed set, as the store keeps it."""
    import typing

    from continuity.core.model import ReceiptReason
    from continuity.daemon.hooks.models import ContinuationRefusedBody

    allowed = typing.get_args(ContinuationRefusedBody.model_fields["reason"].annotation)
    assert sorted(allowed) == sorted(r.value for r in ReceiptReason)
