"""Seed 002 inside pi, with the real pi 0.73.1 (issue 14): after a long settled turn our
extension writes the continuation checkpoint into pi's own session, as an ordinary compaction
entry pi's next run reads; a failing or stopped summary writes none and leaves a refusal.

Each test runs pi in print mode (``pi -p``) against ``fakemodel.FakeModel``; a prompt holding
``[big:8]`` makes the fake model call bash 8 times, each printing about 38 KB, so the working
view ends over the 240,000-byte budget.
"""

from __future__ import annotations

import json
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import World, until
from tests.e2e.fakemodel import (
    BIG_COMMAND,
    BIG_LINE,
    REPLY_TEXT,
    SECTIONS_SECRET,
    FakeSummaryProvider,
)


@pytest.fixture
def world(clis: dict[str, Path], fake_model: Any, tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path / "world", "pi", clis["pi"], fake_model)
    yield w
    w.close()


def _setup(w: World, provider: FakeSummaryProvider | None = None) -> None:
    if provider is not None:
        with open(w.ws / "config.toml", "a") as fh:
            fh.write(
                f'[summarizer]\nprovider = "openai"\nmodel = "fake-summary"\n'
                f'base_url = "{provider.url}"\ntimeout = 30\n'
            )
    w.continuity_json("hooks", "install", "pi")
    w.start_daemon()


def _session_file(w: World) -> Path:
    files = list(w.session_files().rglob("*.jsonl"))
    assert len(files) == 1, files
    return files[0]


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _compactions(path: Path) -> list[dict[str, Any]]:
    return [e for e in _entries(path) if e.get("type") == "compaction"]


def _key(path: Path) -> str:
    return _entries(path)[0]["id"]


def _long_turn(w: World, tag: str) -> subprocess.CompletedProcess[str]:
    return w.run_harness(f"Task {tag}: read the eight big logs [big:8]")


def test_a_long_turn_ends_with_one_checkpoint_pi_reads_next(world: World) -> None:
    """The long turn's answer is printed as authored; pi's session file then holds exactly one
    compaction entry, ours (marker, run id, self-retaining); our store holds the same entry as
    its one continuation checkpoint (one id); the next `pi -p --continue` request to the model
    carries that summary and none of the compacted tool output; a small next turn adds no
    compaction; no refusal is recorded."""
    w, tag = world, uuid.uuid4().hex[:8]
    _setup(w)
    done = _long_turn(w, tag)
    assert done.stdout.strip() == REPLY_TEXT
    path = _session_file(w)
    key = _key(path)
    tool_bytes = sum(
        len(json.dumps(e["message"]["content"]))
        for e in _entries(path)
        if e.get("type") == "message" and e["message"].get("role") == "toolResult"
    )
    assert tool_bytes > 240_000
    comps = _compactions(path)
    assert len(comps) == 1
    ours = comps[0]
    marker = ours["details"]["continuity"]
    assert marker["continuation"] is True and marker["summarizer"] == "extractive"
    assert marker["run_id"].startswith(f"{key}:")
    assert ours["firstKeptEntryId"] is None and ours["fromHook"] is True
    assert f"Task {tag}" in ours["summary"]
    # issue 39: the command and a sample of its output, never the output whole (8 calls of
    # 600 lines each): at most the first and last lines of the one distinct command
    assert BIG_COMMAND in ours["summary"] and 0 < ours["summary"].count(BIG_LINE) <= 8
    assert _entries(path)[-1]["id"] == ours["id"]  # written last: nothing after it yet

    # our store: the same checkpoint, once, with pi's id
    shown = until(
        lambda: (
            (s := w.continuity_json("show", key, "--all"))
            and any(e.get("compaction") for e in s["entries"])
            and s
        ),
        "the checkpoint imported",
    )
    rows = [e for e in shown["entries"] if e.get("compaction")]
    assert [(r["native_id"], r["compaction"]["continuation"]) for r in rows] == [(ours["id"], True)]
    view = w.continuity_json("continue", key)
    assert view["summary"]["entry_id"] == rows[0]["entry_id"]  # the row holding pi's id
    assert view["summary"]["covers_through_seq"] == rows[0]["seq"] - 1
    assert view["messages"] == []  # self-retaining: nothing before it travels again
    assert w.continuity_json("receipts", key) == []

    # the next run reads the checkpoint, not the rows it covers
    follow = f"Next {tag}: one small follow-up"
    again = w.run_harness(follow, resume=True)
    assert again.stdout.strip() == REPLY_TEXT
    first = w.requests_with(follow)[0]["body"]
    sent = json.dumps(first["messages"], ensure_ascii=False)
    assert json.dumps(ours["summary"], ensure_ascii=False)[1:-1][:2000] in sent
    # the covered outputs do not travel again: only the summary's sample of them
    assert sent.count(BIG_LINE) == ours["summary"].count(BIG_LINE)
    assert len(_compactions(path)) == 1  # a small turn adds none
    assert w.continuity_json("receipts", key) == []


@pytest.mark.parametrize(
    ("mode", "reason", "detail"),
    [
        ("500", "provider_failure", "HTTP 500"),
        ("sections", "provider_failure", "the reply has 1 of the 9 required sections (3 needed)"),
        ("empty", "empty", "the reply is empty"),
    ],
)
def test_a_failed_summary_leaves_no_entry_and_one_receipt(
    world: World, mode: str, reason: str, detail: str
) -> None:
    """The configured summarizer (openai, at a provider answering 500, a reply without the
    required sections, or an empty reply) fails: pi's session holds no compaction entry, the
    answer is printed as authored, `pi -p` says on stderr, in one line, that the checkpoint
    was refused and why (issue 45 item 7), and `continuity receipts` shows one refusal with
    the closed reason, its detail (the status, the failed check) and the turn's run id;
    neither the line nor the receipt holds a word of the provider's answer."""
    provider = FakeSummaryProvider(mode).start()
    try:
        w, tag = world, uuid.uuid4().hex[:8]
        _setup(w, provider)
        done = _long_turn(w, tag)
        assert done.stdout.strip() == REPLY_TEXT
        said = [line for line in done.stderr.splitlines() if line.startswith("continuity:")]
        assert said == [
            f"continuity: the continuation checkpoint was refused ({reason}: "
            f"{detail}); the answer stands, no checkpoint was written"
        ], done.stderr
        path = _session_file(w)
        assert _compactions(path) == []
        assert len(provider.requests) == 1
        key = _key(path)
        receipts = until(lambda: w.continuity_json("receipts", key), "the refusal receipt")
        assert [(r["reason"], r["detail"]) for r in receipts] == [(reason, detail)]
        shown = json.dumps(receipts) + done.stderr + w.continuity("receipts", key).stdout
        for word in (SECTIONS_SECRET, "ghp_", "ship it", "unfinished", "fake provider failure"):
            assert word not in shown
        request = next(
            e
            for e in _entries(path)
            if e.get("type") == "message" and e["message"]["role"] == "user"
        )
        shown = w.continuity_json("show", key, "--all")
        seq = next(e["seq"] for e in shown["entries"] if e["native_id"] == request["id"])
        assert receipts[0]["run_id"] == f"{key}:{seq}"
        assert "summary" not in json.dumps(receipts[0]).replace('"session"', "")
    finally:
        provider.stop()


def test_pi_stopped_mid_summary_leaves_no_entry(world: World) -> None:
    """pi gets SIGTERM while the summary is still being made (the provider holds its answer):
    pi exits, its session holds no compaction entry, and the refusal is recorded as
    cancelled (the daemon saw its client go)."""
    provider = FakeSummaryProvider("slow").start()
    try:
        w, tag = world, uuid.uuid4().hex[:8]
        _setup(w, provider)
        proc = subprocess.Popen(
            [str(w.cli), "-p", f"Task {tag}: read the big logs [big:8]"],
            env=w.env(),
            cwd=w.project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        try:
            until(lambda: provider.requests or proc.poll() is not None, "the summary request")
            assert proc.poll() is None, proc.communicate()
            proc.send_signal(signal.SIGTERM)
            out, _err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert REPLY_TEXT in out  # printed before the checkpoint began
        path = _session_file(w)
        assert _compactions(path) == []
        key = _key(path)
        receipts = until(lambda: w.continuity_json("receipts", key), "the refusal receipt")
        assert [r["reason"] for r in receipts] == ["cancelled"]
    finally:
        provider.stop()
