"""`continuity compact` and `continuity receipts` (issue 4), and the checkpoint on every
real session of ../shared/data driving the next continuation."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.continuation.compaction import measure_view
from continuity.continuation.view import build_continuation
from continuity.core.errors import ConfigError, FencedWrite
from continuity.core.model import EntryKind
from continuity.formats.importer import import_paths
from continuity.store import open_store
from tests.paths import SAMPLE_DIRS, SHARED_DATA

BUDGET = 3_000
FILES = sorted(f for d in SAMPLE_DIRS if d.is_dir() for f in d.rglob("*.jsonl"))
runner = CliRunner()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """A workspace with every shared session imported: ``(home, {file name: session key})``."""
    home = tmp_path_factory.mktemp("shared") / "home"
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        report = import_paths(store, SAMPLE_DIRS)
    keys = {Path(f.path).name: f.session_key for f in report.files if f.session_key}
    yield home, keys


def _cli(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=True)


def _check_view(view: dict[str, Any], store: Any, key: str, checkpoint: dict[str, Any]) -> None:
    """Within budget, the new checkpoint, the previous request verbatim, pairs valid, and
    every visible row after the coverage either shown, the request, or in a named gap."""
    assert view["refusal"] is None and view["used_bytes"] <= BUDGET
    assert view["summary"]["entry_id"] == checkpoint["entry_id"]
    covers = view["summary"]["covers_through_seq"]
    assert covers == checkpoint["covers_through_seq"]
    run = store.last_run(key, ended_only=True)
    if run is not None:
        row = store.entries_by_seq(key, [run.request_seq])[0]
        assert view["request"] == {"seq": row.seq, "actor": row.role.value, "text": row.text()}
    calls: dict[str, int] = {}
    answered: dict[str, int] = {}
    for i, m in enumerate(view["messages"]):
        for b in m["content"]:
            if b["type"] == "tool_call":
                calls[b["id"]] = i
            elif b["type"] == "tool_result":
                assert calls.get(b["call_id"], i) < i, "result before or without its call"
                answered[b["call_id"]] = answered.get(b["call_id"], 0) + 1
    assert set(calls) == set(answered) and set(answered.values()) <= {1}
    shown = {m["seq"] for m in view["messages"]} | (
        {view["request"]["seq"]} if view["request"] else set()
    )
    gaps = [(g["from_seq"], g["to_seq"]) for g in view["gaps"]]
    for e in store.entries(key, after_seq=covers, limit=100_000, visible_only=True):
        if e.kind is EntryKind.MESSAGE and e.seq not in shown:
            assert any(lo <= e.seq <= hi for lo, hi in gaps), f"seq {e.seq} silently dropped"


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_compact_cli_every_shared_session_then_continue(imported, path):
    """On each real session: `compact --summarizer extractive` succeeds (forced where the
    view is already within the budget) and the next continuation starts from it."""
    home, keys = imported
    key = keys[path.name]
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        over = measure_view(store, key).total > BUDGET
    args = [
        "compact",
        key,
        "--summarizer",
        "extractive",
        "--budget",
        str(BUDGET),
        "--home",
        str(home),
        "--json",
    ]
    if not over:
        skipped = json.loads(_cli(*args).stdout)
        assert (skipped["status"], skipped["reason"]) == ("not_needed", "under_budget")
        args.append("--force")
    result = _cli(*args)
    assert result.exit_code == 0, result.output
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "compacted" and outcome["receipt"] is None
    checkpoint = outcome["checkpoint"]
    assert checkpoint["first_kept_entry_id"] == checkpoint["entry_id"]
    assert checkpoint["continuation"] is True
    assert len(checkpoint["summary"].encode()) <= BUDGET // 2
    assert outcome["view_bytes_after"] < BUDGET
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        view = build_continuation(store, key, budget_bytes=BUDGET).to_dict()
        _check_view(view, store, key, checkpoint)
    cont = _cli("continue", key, "--budget", str(BUDGET), "--home", str(home), "--json")
    assert json.loads(cont.stdout) == view


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, str]:
    """A workspace with one short imported session."""
    home = tmp_path / "ws"
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        report = import_paths(store, [SHARED_DATA / "codex" / "with-compaction.jsonl"])
    return home, report.files[0].session_key


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_compact_cli_refusal_prints_reason_and_receipts_lists_it(small):
    """A provider that cannot be reached: exit 5, the receipt's reason, no checkpoint; then
    `receipts` lists it (text and --json)."""
    home, key = small
    home.joinpath("config.toml").write_text(
        f'[summarizer]\nprovider = "openai"\nmodel = "m"\n'
        f'base_url = "http://127.0.0.1:{_closed_port()}/v1"\ntimeout = 5\n',
        encoding="utf-8",
    )
    result = _cli("compact", key, "--budget", "500", "--home", str(home))
    assert result.exit_code == 5
    assert "refused" in result.stdout and "provider_failure" in result.stdout
    # issue 45 item 7: what failed, beside the closed reason
    assert "provider_failure: request failed: ConnectError (run " in result.stdout
    as_json = _cli("compact", key, "--budget", "500", "--home", str(home), "--json", "--force")
    assert as_json.exit_code == 5  # the same status with --json
    assert json.loads(as_json.stdout)["reason"] == "provider_failure"
    listed = json.loads(_cli("receipts", key, "--home", str(home), "--json").stdout)
    assert [(r["session"], r["reason"], r["detail"]) for r in listed] == [
        (key, "provider_failure", "request failed: ConnectError")
    ] * 2
    text = _cli("receipts", key[:8], "--home", str(home)).stdout
    assert "provider_failure" in text and "run " in text
    assert text.count("(request failed: ConnectError)") == 2
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        assert store.latest_compaction(key).compaction.continuation is False


def test_compact_cli_not_needed_and_text_output(small):
    """Within the budget nothing is written; the text output says why. Over it, the text
    output shows the checkpoint and its summary."""
    home, key = small
    quiet = _cli("compact", key, "--home", str(home))
    assert quiet.exit_code == 0 and "not needed" in quiet.stdout and "under_budget" in quiet.stdout
    done = _cli("compact", key, "--budget", "800", "--home", str(home))
    assert done.exit_code == 0 and "compacted" in done.stdout and "## Goal" in done.stdout
    again = _cli("compact", key, "--budget", "800", "--home", str(home))
    assert "already_compacted_this_turn" in again.stdout
    assert "no refusal receipts" in _cli("receipts", key, "--home", str(home)).stdout


def test_compact_cli_errors(small):
    """A bad [summarizer] value is a ConfigError naming the field; an unknown provider is a
    usage error; a session owned by another live owner is refused."""
    home, key = small
    home.joinpath("config.toml").write_text("[summarizer]\ntimeout = -1\n", encoding="utf-8")
    bad = _cli("compact", key, "--home", str(home))
    assert isinstance(bad.exception, ConfigError) and "timeout" in str(bad.exception)
    home.joinpath("config.toml").write_text("", encoding="utf-8")
    assert _cli("compact", key, "--summarizer", "gpt", "--home", str(home)).exit_code == 2
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        store.acquire_lease(key, "harness", 60)
    held = _cli("compact", key, "--home", str(home), "--budget", "800")
    assert isinstance(held.exception, FencedWrite) and "owned by 'harness'" in str(held.exception)
