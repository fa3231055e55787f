"""pi compactions that embed their retained tail (issue 18, item 3): newer pi harness builds
write ``retainedTail`` (copies of the kept messages) and may leave ``firstKeptEntryId`` out.
The copies name the first kept entry, so the rows they copy stay in view after the summary."""

from __future__ import annotations

import json
from pathlib import Path

from continuity.continuation.view import build_continuation
from continuity.formats.importer import import_file

KEY = "pi-tail-0001"


def message(eid: str, parent: str | None, role: str, text: str, ms: int) -> dict:
    msg: dict = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": ms}
    if role == "assistant":
        msg.update(stopReason="stop", provider="fake", model="fake-model")
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": f"2026-12-02T06:00:{ms // 1000:02d}.000Z",
        "message": msg,
    }


def session(tail: list[dict]) -> list[dict]:
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": KEY,
            "cwd": "/home/ana/ledger",
            "timestamp": "2026-12-02T06:00:00.000Z",
        },
        message("u1", None, "user", "rename the ledger column", 1000),
        message("a1", "u1", "assistant", "renamed it in export.py", 2000),
        message("u2", "a1", "user", "now the importer too", 3000),
        message("a2", "u2", "assistant", "the importer reads the new name", 4000),
    ]
    lines.append(
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "a2",
            "timestamp": "2026-12-02T06:00:05.000Z",
            "summary": "## Goal\n- rename",
            "tokensBefore": 9000,
            "retainedTail": tail,
        }
    )
    lines += [
        message("u3", "c1", "user", "and the tests", 6000),
        message("a3", "u3", "assistant", "tests updated", 7000),
    ]
    return lines


def write(tmp_path: Path, lines: list[dict]) -> Path:
    path = tmp_path / f"2026-12-02T06-00-00-000Z_{KEY}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_retained_tail_keeps_the_rows_it_copies_in_view(sqlite_store, tmp_path) -> None:
    """The tail copies u2 and a2: the summary covers u1 and a1 only (seqs 1-2) and the
    continuation holds u2/a2 after it, then the newest turn."""
    lines = session([])
    lines[5]["retainedTail"] = [lines[3]["message"], lines[4]["message"]]
    report = import_file(sqlite_store, write(tmp_path, lines))
    assert report.warnings == []
    compaction = sqlite_store.latest_compaction(KEY)
    assert compaction.compaction.first_kept_entry_id == "u2"
    assert compaction.compaction.covers_through_seq == 2
    view = build_continuation(sqlite_store, KEY).to_dict()
    assert view["summary"]["covers_through_seq"] == 2
    assert view["request"]["text"] == "and the tests"
    texts = [b["text"] for m in view["messages"] for b in m["content"]]
    assert texts == ["now the importer too", "the importer reads the new name", "tests updated"]


def test_a_tail_matching_no_entry_is_a_warning_and_covers_all(sqlite_store, tmp_path) -> None:
    """Copies of messages this file does not hold (a forked file): a warning naming the line;
    the summary covers every row before it, as without a tail."""
    tail = [{"role": "user", "content": [{"type": "text", "text": "elsewhere"}], "timestamp": 999}]
    report = import_file(sqlite_store, write(tmp_path, session(tail)))
    assert report.warnings == [
        (
            6,
            "compaction: the 1 retained messages match no earlier "
            "entry (kept raw; the summary covers every row before it)",
        )
    ]
    assert sqlite_store.latest_compaction(KEY).compaction.covers_through_seq == 4
