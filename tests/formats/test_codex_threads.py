"""Codex as it is now (issue 18, item 3): the 0.169+ records kept raw and known, a remote
compaction whose summary is encrypted (never an empty summary), and a history paginated
across files imported as one session."""

from __future__ import annotations

import json
from pathlib import Path

from continuity.continuation.view import build_continuation
from continuity.formats.codex import ENCRYPTED_COMPACTION_TEXT
from continuity.formats.importer import import_file, import_paths
from tests.paths import SHARED_DATA

THREAD = "0199f0f0-1111-7222-8333-444455556666"


def env(kind: str, payload: dict, second: int, ordinal: int | None = None) -> dict:
    line = {"timestamp": f"2026-12-02T06:00:{second:02d}.000Z", "type": kind, "payload": payload}
    if ordinal is not None:
        line["ordinal"] = ordinal
    return line


def message(role: str, text: str) -> dict:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def write(path: Path, lines: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def turn(n: int, request: str, answer: str, second: int, ordinal: int | None = None) -> list:
    o = (lambda k: None) if ordinal is None else (lambda k: ordinal + k)
    return [
        env("event_msg", {"type": "task_started", "turn_id": f"t{n}"}, second, o(0)),
        env("response_item", message("user", request), second, o(1)),
        env(
            "response_item",
            dict(message("assistant", answer), phase="final_answer"),
            second + 1,
            o(2),
        ),
        env("event_msg", {"type": "task_complete", "turn_id": f"t{n}"}, second + 1, o(3)),
    ]


def meta(ordinal: int | None = None) -> dict:
    return env(
        "session_meta",
        {
            "id": THREAD,
            "cwd": "/home/ana/ledger",
            "cli_version": "0.171.0",
            "history_mode": "paginated",
        },
        0,
        ordinal,
    )


def test_real_harness_codex_records_are_known(sqlite_store) -> None:
    """``world_state``, ``token_usage_record`` and ``thread_settings_applied`` (0.169+) are
    known non-conversation rows: no Codex file of real-harness reports an unknown line (it
    was 4 to 7 per file)."""
    report = import_paths(sqlite_store, [SHARED_DATA / "real-harness"])
    codex = [f for f in report.files if f.harness == "codex"]
    assert len(codex) == 13
    assert [(f.session_key, f.opaque) for f in codex if f.opaque] == []
    assert (
        sum(
            f.types["world_state"]
            + f.types["token_usage_record"]
            + f.types["event_msg/thread_settings_applied"]
            for f in codex
        )
        == 14 + 31 + 16
    )


def test_remote_compaction_with_an_encrypted_summary_is_no_empty_summary(
    sqlite_store, tmp_path
) -> None:
    """A remote compaction writes ``compacted`` with an empty ``message`` and the summary as
    an encrypted ``compaction`` item: it is an event saying so, no checkpoint, and the turn
    before it stays in the continuation in full."""
    lines = [
        meta(),
        *turn(1, "rename the ledger column", "renamed in export.py", 1),
        env(
            "compacted",
            {
                "message": "",
                "replacement_history": [
                    message("user", "rename the ledger column"),
                    {"type": "compaction", "encrypted_content": "gAAAAABnZXhhbXBsZQ=="},
                ],
            },
            5,
        ),
        env("event_msg", {"type": "context_compacted"}, 5),
        *turn(2, "now update the tests", "tests updated", 6),
    ]
    path = write(tmp_path / f"rollout-2026-12-02T06-00-00-{THREAD}.jsonl", lines)
    report = import_file(sqlite_store, path)
    assert report.opaque == 0 and report.warnings == []
    rows = sqlite_store.entries(THREAD)
    compacted = [r for r in rows if r.type_name.startswith("compacted")]
    assert [(r.kind.value, r.type_name, r.visible, r.text()) for r in compacted] == [
        ("event", "compacted/encrypted", False, ENCRYPTED_COMPACTION_TEXT)
    ]
    assert sqlite_store.latest_compaction(THREAD) is None
    view = build_continuation(sqlite_store, THREAD).to_dict()
    assert view["summary"] is None and view["gaps"] == []
    assert view["request"]["text"] == "now update the tests"
    texts = [b.get("text") for m in view["messages"] for b in m["content"]]
    assert "rename the ledger column" in texts and "renamed in export.py" in texts


def test_history_paginated_across_files_is_one_session(sqlite_store, tmp_path) -> None:
    """Page 1 (ordinals 0-4) and page 2 (its first line ordinal 5, the same thread id) are
    one session: page 2's rows follow page 1's, the continuation's request is page 2's. A
    copy of page 1 at another path (no later ordinal) stays a session of its own."""
    folder = tmp_path / "sessions" / "2026" / "12" / "02"
    page1 = write(
        folder / f"rollout-2026-12-02T06-00-00-{THREAD}.jsonl",
        [meta(0), *turn(1, "rename the ledger column", "renamed", 1, ordinal=1)],
    )
    page2 = write(
        folder / f"rollout-2026-12-02T06-10-00-{THREAD}.jsonl",
        [meta(5), *turn(2, "now update the tests", "tests updated", 20, ordinal=6)],
    )
    report = import_paths(sqlite_store, [tmp_path / "sessions"])
    assert [f.session_key for f in report.files] == [THREAD, THREAD]
    rows = sqlite_store.entries(THREAD)
    assert len(rows) == 10
    assert [(r.source.path, r.text()) for r in rows if r.is_request] == [
        (str(page1), "rename the ledger column"),
        (str(page2), "now update the tests"),
    ]
    assert [r.seq for r in rows] == list(range(10))
    assert (
        build_continuation(sqlite_store, THREAD).to_dict()["request"]["text"]
        == "now update the tests"
    )
    again = import_paths(sqlite_store, [tmp_path / "sessions"])
    assert again.totals()["imported"] == 0
    copy = write(
        tmp_path / "copy" / page1.name,
        json.loads("[" + ",".join(page1.read_text().splitlines()) + "]"),
    )
    assert import_file(sqlite_store, copy).session_key == f"{THREAD}/{page1.stem}"


FORK = "0199f0f0-9999-7222-8333-444455556666"


def test_a_forked_rollout_names_the_session_it_was_forked_from(sqlite_store, tmp_path) -> None:
    """``codex fork`` writes a new rollout whose first ``session_meta`` carries
    ``forked_from_id`` (issue 18 item 3), then the parent's own ``session_meta`` copied after
    it. The fork is a session of its own whose ``forked_from`` is the parent's key; the copied
    meta does not make the fork its own parent; the parent names no parent."""
    folder = tmp_path / "sessions" / "2026" / "12" / "02"
    write(
        folder / f"rollout-2026-12-02T06-00-00-{THREAD}.jsonl",
        [meta(0), *turn(1, "rename the ledger column", "renamed", 1, ordinal=1)],
    )
    fork_meta = env(
        "session_meta",
        {"id": FORK, "forked_from_id": THREAD, "cwd": "/home/ana/ledger", "cli_version": "0.171.0"},
        30,
    )
    write(
        folder / f"rollout-2026-12-02T06-30-00-{FORK}.jsonl",
        [fork_meta, meta(), *turn(2, "try it another way", "done another way", 31)],
    )
    import_paths(sqlite_store, [tmp_path / "sessions"])
    fork, parent = sqlite_store.get_session(FORK), sqlite_store.get_session(THREAD)
    assert fork is not None and fork.forked_from == THREAD
    assert parent is not None and parent.forked_from is None
    assert [r.text() for r in sqlite_store.entries(FORK) if r.is_request] == ["try it another way"]
