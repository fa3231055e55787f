"""The openai and anthropic providers against a real local HTTP server on 127.0.0.1 (issue 4):
each reply gives the right checkpoint row or the right refusal receipt, never both, and a
cancellation really aborts the HTTP request."""

from __future__ import annotations

import itertools
import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from continuity.continuation.compaction import after_turn
from continuity.continuation.summarize import make_summarizer
from continuity.continuation.summarize.extractive import LAYOUT
from continuity.continuation.summarize.settings import SummarizerSettings
from continuity.core.model import EntryKind, ReceiptReason
from continuity.store import SqlStore, open_store
from tests.builders import A, T, U, call, load

GOOD = (
    "## Goal\n- fix the parser\n## Progress\n### Done\n- read parser.py\n"
    "## Next steps\n- run the tests\n## Files read and modified\n- read: `parser.py`"
)


class Fake:
    """A provider stand-in: ``mode`` picks the answer; ``bodies`` records each request body,
    ``disconnected`` is set when a client goes away before the reply was sent."""

    def __init__(self) -> None:
        self.mode = "success"
        self.reply = GOOD
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.disconnected = threading.Event()
        self.started = threading.Event()
        self.release = threading.Event()


def _answer(fake: Fake, api: str) -> tuple[int, dict[str, Any]]:
    text = {"empty": "", "error_text": "Claude AI usage limit reached|1699999999"}.get(
        fake.mode, fake.reply
    )
    if api == "openai":
        finish = "length" if fake.mode == "length" else "stop"
        return 200, {
            "id": "c1",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish,
                }
            ],
        }
    stop = "max_tokens" if fake.mode == "length" else "end_turn"
    return 200, {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _handler(fake: Fake, api: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # http.server's name
            length = int(self.headers.get("Content-Length", 0))
            fake.bodies.append(json.loads(self.rfile.read(length)))
            fake.headers.append(dict(self.headers))
            fake.started.set()
            if fake.mode == "hang":
                self._wait_for_disconnect()
                return
            if fake.mode == "slow":
                fake.release.wait(10)
            if fake.mode == "500":
                status, body = 500, {"error": {"message": "boom", "type": "server_error"}}
            else:
                status, body = _answer(fake, api)
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                fake.disconnected.set()

        def _wait_for_disconnect(self) -> None:
            sock = self.connection
            end = time.monotonic() + 10
            while time.monotonic() < end:
                ready, _, _ = select.select([sock], [], [], 0.02)
                if ready:
                    try:
                        gone = sock.recv(1, socket.MSG_PEEK) == b""
                    except OSError:
                        gone = True
                    if gone:
                        fake.disconnected.set()
                        return

    return Handler


@pytest.fixture(params=["openai", "anthropic"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str, Fake]]:
    """``(api, base_url, fake)``: a local server speaking the chat completions or the
    Messages API shape on a free port."""
    fake = Fake()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake, request.param))
    httpd.daemon_threads = True
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    host, port = httpd.server_address[:2]
    base = f"http://{host}:{port}" + ("/v1" if request.param == "openai" else "")
    try:
        yield request.param, base, fake
    finally:
        fake.release.set()
        httpd.shutdown()
        httpd.server_close()


def _summarizer(api: str, base: str, **extra: Any):  # type: ignore[no-untyped-def]
    settings = SummarizerSettings(
        provider=api, model="test-model", base_url=base, **({"timeout": 5.0} | extra)
    )
    summarizer = make_summarizer(settings)
    summarizer.min_seconds = 0.1  # the tests' deadlines are short
    return summarizer


@pytest.fixture(scope="module")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlStore]:
    """One migrated SQLite store for the module (each test uses its own session)."""
    path = tmp_path_factory.mktemp("http") / "continuity.db"
    with open_store(f"sqlite:///{path}") as store:
        yield store


_KEYS = itertools.count()


def _session(store) -> str:  # type: ignore[no-untyped-def]
    """A new settled session whose view is over a 3,000-byte budget, with a secret in a tool
    output."""
    key = f"http-{next(_KEYS)}"
    load(
        store,
        [
            U("fix the parser"),
            A(call("c1", path="parser.py")),
            T("c1", text="x" * 4_000 + " token sk-ant-api03-SECRETSECRETSECRET"),
            A(text="Fixed the parser."),
        ],
        key=key,
    )
    return key


def _run(store, key, summarizer, **kw: Any):  # type: ignore[no-untyped-def]
    lease = store.acquire_lease(key, "harness", 60)
    return after_turn(
        store,
        key,
        lease=lease,
        summarizer=summarizer,
        budget_bytes=3_000,
        deadline=time.monotonic() + kw.pop("seconds", 30),
        **kw,
    )


def _written(store, key) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """(compaction rows, receipts) in the store."""
    rows = [e for e in store.entries(key) if e.kind is EntryKind.COMPACTION]
    return len(rows), len(store.receipts(key))


def test_provider_success_writes_the_checkpoint(server, sqlite_store):
    """A good reply becomes one self-retaining checkpoint and no receipt."""
    api, base, fake = server
    key = _session(sqlite_store)
    outcome = _run(sqlite_store, key, _summarizer(api, base, effort="low"))
    assert outcome.status == "compacted" and outcome.receipt is None
    assert outcome.entry.compaction.summary == GOOD
    # row 3, the newest complete exchange, stays out of the summary (issue 15)
    assert (outcome.entry.compaction.covers_through_seq, outcome.kept_from_seq) == (2, 3)
    assert _written(sqlite_store, key) == (1, 0)
    body = fake.bodies[0]
    assert body["model"] == "test-model"
    sent = json.dumps(body)
    assert "SECRETSECRET" not in sent and "[REDACTED:anthropic-key]" in sent  # B31, way in
    if api == "openai":
        assert body["reasoning_effort"] == "low" and "max_completion_tokens" in body
    else:
        assert body["output_config"] == {"effort": "low"}
    # issue 39: the model is asked for the extractive summary's sections, by its headings
    system = body["messages"][0]["content"] if api == "openai" else body["system"]
    if isinstance(system, list):
        system = "".join(part["text"] for part in system)
    headings = [h for _, h in LAYOUT]
    assert [system.index(h) for h in headings] == sorted(system.index(h) for h in headings)
    assert "exit status" in system and "never a whole output" in system


@pytest.mark.parametrize(
    "mode, reason",
    [
        ("length", ReceiptReason.TRUNCATED),
        ("empty", ReceiptReason.EMPTY),
        ("error_text", ReceiptReason.PROVIDER_FAILURE),
        ("500", ReceiptReason.PROVIDER_FAILURE),
    ],
)
def test_provider_bad_reply_gives_receipt_and_no_row(server, sqlite_store, mode, reason):
    """B16/B49: truncated, empty, an error string as the answer, or HTTP 500: a receipt, no
    row."""
    api, base, fake = server
    fake.mode = mode
    key = _session(sqlite_store)
    outcome = _run(sqlite_store, key, _summarizer(api, base))
    assert outcome.status == "refused" and outcome.entry is None
    assert outcome.receipt.reason is reason
    assert _written(sqlite_store, key) == (0, 1)
    assert sqlite_store.receipts(key)[0].run_id == f"{key}:0"


def test_provider_over_bound_reply_gives_receipt(server, sqlite_store):
    """A structured reply longer than the summary bound (half the budget) is refused."""
    api, base, fake = server
    fake.reply = GOOD + "\n## Critical context\n- " + "y" * 2_000
    key = _session(sqlite_store)
    outcome = _run(sqlite_store, key, _summarizer(api, base))
    assert outcome.receipt.reason is ReceiptReason.OVER_BOUND
    assert _written(sqlite_store, key) == (0, 1)


def test_provider_timeout_gives_provider_failure(server, sqlite_store):
    """A server slower than the configured timeout is a provider failure, no row."""
    api, base, fake = server
    fake.mode = "slow"
    key = _session(sqlite_store)
    outcome = _run(sqlite_store, key, _summarizer(api, base, timeout=0.3))
    fake.release.set()
    assert outcome.receipt.reason is ReceiptReason.PROVIDER_FAILURE
    assert _written(sqlite_store, key) == (0, 1)


def test_provider_cancellation_aborts_the_http_request(server, sqlite_store):
    """A stop mid-request closes the connection before any reply (the server sees the
    client go away), and gives a cancelled receipt and no row."""
    api, base, fake = server
    fake.mode = "hang"
    key = _session(sqlite_store)
    stop = threading.Event()
    threading.Thread(target=lambda: (fake.started.wait(10), stop.set()), daemon=True).start()
    outcome = _run(sqlite_store, key, _summarizer(api, base, timeout=30), stop=stop)
    assert fake.disconnected.wait(5), "the HTTP request was not aborted"
    assert outcome.receipt.reason is ReceiptReason.CANCELLED
    assert _written(sqlite_store, key) == (0, 1)


def test_provider_deadline_cancels_the_request(server, sqlite_store):
    """The run's deadline, reached mid-request, cancels the summary (not a provider error)."""
    api, base, fake = server
    fake.mode = "hang"
    key = _session(sqlite_store)
    outcome = _run(sqlite_store, key, _summarizer(api, base, timeout=30), seconds=0.5)
    assert fake.disconnected.wait(5)
    assert outcome.receipt.reason is ReceiptReason.CANCELLED
    assert _written(sqlite_store, key) == (0, 1)


def test_provider_without_key_or_base_url_refuses(sqlite_store, monkeypatch):
    """B51: no credentials and no local server is a provider failure, never a guess."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    key = _session(sqlite_store)
    for api in ("openai", "anthropic"):
        summarizer = make_summarizer(SummarizerSettings(provider=api, model="m"))
        lease = sqlite_store.acquire_lease(key, "h", 60)
        outcome = after_turn(
            sqlite_store,
            key,
            lease=lease,
            summarizer=summarizer,
            budget_bytes=3_000,
            deadline=time.monotonic() + 30,
            force=True,
        )
        assert outcome.receipt.reason is ReceiptReason.PROVIDER_FAILURE
    assert _written(sqlite_store, key) == (0, 2)


def test_provider_sends_key_from_the_named_variable(server, sqlite_store, monkeypatch):
    """The key comes from the variable ``api_key_env`` names."""
    api, base, fake = server
    monkeypatch.setenv("MY_KEY", "k-123")
    key = _session(sqlite_store)
    _run(sqlite_store, key, _summarizer(api, base, api_key_env="MY_KEY"))
    headers = {k.lower(): v for k, v in fake.headers[0].items()}
    assert headers.get("authorization") == "Bearer k-123" or headers.get("x-api-key") == "k-123"
