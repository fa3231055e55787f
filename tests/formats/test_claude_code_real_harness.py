"""Claude Code 2.1.332 as it ships (issue 12): the files a real `claude -p` wrote
(``../shared/data/real-harness/claude-code``). Its new line types are kept raw, counted as known
non-conversation lines, and never reach a continuation, a transcript or a digest; a
``tool_reference`` tool result (ToolSearch loading MCP tools) keeps its tool names."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from continuity.checkpoints import replay_import
from continuity.checkpoints.capture import CheckpointConfig
from continuity.continuation.view import build_continuation
from continuity.formats.importer import import_paths
from continuity.store import open_store
from continuity.transcripts import session_transcripts as tx
from tests.paths import SHARED_DATA

FOLDER = (
    SHARED_DATA / "real-harness" / "claude-code" / "projects" / "-home-dev-projects-claude-demo"
)
TOOL_SEARCH = FOLDER / "492053d3-5611-4f50-a2db-69e25949296a.jsonl"
SESSION = "492053d3-5611-4f50-a2db-69e25949296a"
#: line types 2.1.332 writes that hold no conversation
NEW_TYPES = (
    "api-request",
    "api-request-blob",
    "api-request-shape",
    "atis-latch",
    "tools-used",
    "cost-state",
    "last-prompt",
    "queue-operation",
    "mode",
)
#: texts only those lines (and the attachments) hold
LEAKS = (
    "shapeHash",
    "requestDigest",
    "totalCostUSD",
    "atis",
    "dataviz",
    "skill_listing",
    "prompt_snapshot",
    "You are an agent working with the user",
)


def raw_types(path: Path) -> Counter:
    counts: Counter = Counter()
    for line in path.read_text().splitlines():
        data = json.loads(line)
        counts[data["type"]] += 1
    return counts


def test_new_line_types_are_known_non_conversation_lines(sqlite_store) -> None:
    """Every line of the six real sessions imports; none is "unknown" (opaque 0, it was 20 in
    492053d3 alone before), the events and attachments are counted as non-conversation:
    228 of 278 lines."""
    report = import_paths(sqlite_store, [FOLDER])
    totals = report.totals()
    assert (
        totals["lines_read"],
        totals["imported"],
        totals["opaque"],
        totals["non_conversation"],
    ) == (278, 278, 0, 228)
    by_session = {
        f.session_key[:8]: (f.lines_read, f.opaque, f.non_conversation) for f in report.files
    }
    assert by_session == {
        "3185d1ef": (34, 0, 29),
        "43f9cd0f": (50, 0, 40),
        "492053d3": (71, 0, 59),
        "4e6017d9": (48, 0, 38),
        "5a9146d8": (33, 0, 28),
        "dc037458": (42, 0, 34),
    }
    assert all(f.warnings == [] for f in report.files)
    raw = raw_types(TOOL_SEARCH)
    rows = sqlite_store.entries(SESSION, limit=1000)
    assert len(rows) == 71
    by_type = Counter(r.type_name.split("/")[0] for r in rows)
    for name in NEW_TYPES:
        assert by_type[name] == raw[name], name
        assert all(
            r.kind.value == "event" and not r.visible
            for r in rows
            if r.type_name.split("/")[0] == name
        )
    attachments = [r for r in rows if r.type_name.startswith("attachment/")]
    assert len(attachments) == raw["attachment"] == 24
    assert {r.kind.value for r in attachments} == {"context"}
    assert not any(r.visible for r in attachments)
    # kept raw: every line is stored byte for byte
    assert len(list(sqlite_store.raw_lines(str(TOOL_SEARCH.resolve())))) == 71


def test_new_line_types_stay_out_of_views_transcripts_and_digests(sqlite_store, tmp_path) -> None:
    """The continuation, the transcript and the replayed checkpoints' digests hold none of the
    request records', cost records' or attachments' text."""
    report = import_paths(sqlite_store, [TOOL_SEARCH])
    view = build_continuation(sqlite_store, SESSION)
    shown = json.dumps(view.to_dict())
    tx.sync_session(sqlite_store, SESSION, home=tmp_path)
    transcript = sqlite_store.get_transcripts([SESSION], "default")[SESSION].content
    replay_import(sqlite_store, report, config=CheckpointConfig())
    digests = "\n".join(c.digest for c in sqlite_store.checkpoints(SESSION))
    assert digests and "Remember that the export job runs at 02:00 UTC" in digests
    for text in LEAKS:
        assert text not in shown, text
        assert text not in transcript, text
        assert text not in digests, text


def test_tool_reference_results_keep_the_loaded_tool_names(sqlite_store, tmp_path) -> None:
    """Line 27's ToolSearch result is two ``tool_reference`` items: its text names both
    tools (it was "" before), in the stored row, the continuation and the transcript."""
    import_paths(sqlite_store, [TOOL_SEARCH])
    expected = "loaded tool: mcp__continuity__remember\nloaded tool: mcp__continuity__continuation"
    rows = [
        r
        for r in sqlite_store.entries(SESSION, limit=1000)
        if r.source is not None and r.source.line == 27
    ]
    assert [b.text for r in rows for b in r.tool_results()] == [expected]
    tx.sync_session(sqlite_store, SESSION, home=tmp_path)
    transcript = sqlite_store.get_transcripts([SESSION], "default")[SESSION].content
    assert "Tool result: loaded tool: mcp__continuity__remember\n" in transcript
    # the continuation of the session as it stood before its /compact (line 58)
    before = tmp_path / "before" / TOOL_SEARCH.name
    before.parent.mkdir()
    before.write_text("".join(TOOL_SEARCH.read_text().splitlines(keepends=True)[:51]))
    with open_store(f"sqlite:///{tmp_path / 'before.db'}") as store:
        import_paths(store, [before])
        view = build_continuation(store, SESSION).to_dict()
    results = [
        b
        for m in view["messages"]
        for b in m["content"]
        if b["type"] == "tool_result" and b["call_id"] == "toolu_2cc943b3555c457db01c"
    ]
    assert [b["text"] for b in results] == [expected]


def test_real_harness_import_reports_no_unknown_claude_code_line_types(sqlite_store) -> None:
    """Issue 18: importing the whole ``real-harness`` folder (Claude Code, Codex, pi), every
    Claude Code file reports opaque 0 and no "unknown" warning: every line type 2.1.332
    writes is known."""
    report = import_paths(sqlite_store, [SHARED_DATA / "real-harness"])
    claude = [f for f in report.files if f.harness == "claude-code"]
    assert len(claude) == 6
    assert sum(f.lines_read for f in claude) == 278
    assert [(f.session_key[:8], f.opaque) for f in claude if f.opaque] == []
    assert [(f.session_key[:8], m) for f in claude for _, m in f.warnings if "unknown" in m] == []


def test_preserved_segment_stays_in_view_after_the_compaction(sqlite_store) -> None:
    """2.1.332 ``/compact`` (line 58): the boundary's ``preservedSegment`` starts at the last
    answer (line 48, uuid d15cd186…), written before the boundary. The summary (line 59) is
    the checkpoint and covers rows 0–46 only, so that answer stays in the continuation; the
    boundary's parent is its ``logicalParentUuid``."""
    import_paths(sqlite_store, [TOOL_SEARCH])
    rows = {r.source.line: r for r in sqlite_store.entries(SESSION, limit=1000)}
    boundary, summary = rows[58], rows[59]
    assert boundary.type_name == "system/compact_boundary"
    assert boundary.parent_native_id == "ee466d59-76e6-44d6-9df9-8c444527f7cf"
    assert summary.compaction.first_kept_entry_id == "d15cd186-b333-40ac-939c-13e4b6453363"
    assert summary.compaction.trigger == "manual"
    assert rows[48].seq == 47 and summary.compaction.covers_through_seq == 46
    view = build_continuation(sqlite_store, SESSION).to_dict()
    assert view["summary"]["entry_id"] == summary.entry_id
    assert view["summary"]["covers_through_seq"] == 46
    assert [(m["seq"], m["content"][0]["text"]) for m in view["messages"]] == [
        (
            47,
            "Fake model answer: I listed the project directory; it contains the files shown above.",
        )
    ]
