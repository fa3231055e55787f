"""ClaudeCodeReader against the real samples (shared/data/claude-code) and synthetic fixtures
for the [doc] features no sample shows (tests/fixtures/claude_code)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from continuity.core.model import (
    EntryKind,
    MediaBlock,
    Role,
    RunStatus,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.formats.claude_code import ClaudeCodeReader
from continuity.formats.jsonl import Line, LineReader, read_head
from tests.paths import SHARED_DATA as DATA

SAMPLES = DATA / "claude-code"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code"

S_1AF = SAMPLES / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
S_5C0 = SAMPLES / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
S_SHORT = SAMPLES / "short.jsonl"
S_SUB = SAMPLES / "subagent.jsonl"
S_TOOL = SAMPLES / "tool_heavy.jsonl"
F_COMPACT = FIXTURES / "compaction.jsonl"
F_FEAT = FIXTURES / "features.jsonl"
F_AGENT = FIXTURES / "subagents" / "agent-a1b2c3.jsonl"
F_SLASH = FIXTURES / "slash_commands.jsonl"

ALL_SAMPLES = [S_1AF, S_5C0, S_SHORT, S_SUB, S_TOOL]
ALL_FILES = [*ALL_SAMPLES, F_COMPACT, F_FEAT, F_AGENT, F_SLASH]


def lines_of(path: Path) -> list[Line]:
    with open(path, "rb") as fh:
        return [line for line in LineReader(fh) if line.data is not None]


def read_all(path: Path, state: dict | None = None):
    reader = ClaudeCodeReader(str(path), read_head(str(path)), state)
    entries = {line.number: reader.read(line) for line in lines_of(path)}
    return reader, entries


def requests(entries):
    return {n: e.text() for n, e in entries.items() if e.is_request}


def hints(entries):
    return {n: e.run_end for n, e in entries.items() if e.run_end is not None}


def test_data_path_resolves():
    # The samples travel with the checkout (tests/fixtures/samples; tests/test_samples.py).
    assert DATA.is_dir() and DATA.name == "samples"
    assert all(p.exists() for p in ALL_FILES)


# ---------------------------------------------------------------- sniff and session key


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_sniff_accepts_claude_files(path):
    assert ClaudeCodeReader.sniff(read_head(str(path)))


@pytest.mark.parametrize(
    "path",
    sorted((DATA / "codex").glob("*.jsonl")) + sorted((DATA / "pi").glob("*.jsonl")),
    ids=lambda p: p.name,
)
def test_sniff_rejects_other_harnesses(path):
    assert not ClaudeCodeReader.sniff(read_head(str(path)))


def test_sniff_edge_heads():
    assert not ClaudeCodeReader.sniff([])
    assert not ClaudeCodeReader.sniff([{"type": "user", "message": {"content": "hi"}}])
    # A snapshot-only head (a fresh 2.x file) is Claude Code.
    assert ClaudeCodeReader.sniff([{"type": "file-history-snapshot", "messageId": "m"}])
    # A pi header wins over Claude-looking lines; so does a Codex envelope.
    assert not ClaudeCodeReader.sniff(
        [
            {"type": "session", "version": 3, "id": "x"},
            {"type": "user", "uuid": "u", "sessionId": "s"},
        ]
    )
    assert not ClaudeCodeReader.sniff(
        [
            {"type": "event_msg", "payload": {"type": "x"}},
            {"type": "user", "uuid": "u", "sessionId": "s"},
        ]
    )


@pytest.mark.parametrize(
    "path,key",
    [
        (S_1AF, "1af7fc5e-8455-4414-9ccd-011d40f70b2a"),
        (S_5C0, "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"),
        (S_SHORT, "55604662-cf2a-4331-851a-ec234028f8ca"),  # key from the lines, not the name
        (S_SUB, "491e126e-1e71-469c-ade2-fcc8af567c74"),
        (S_TOOL, "d6e0bada-1959-4eec-a9d2-0bfade768d8f"),
        (F_COMPACT, "5b7c2e90-aaaa"),
        (F_SLASH, "7d1e0c44-bbbb"),
    ],
)
def test_session_key(path, key):
    assert ClaudeCodeReader(str(path), read_head(str(path))).session_key == key


def test_session_key_falls_back_to_file_stem():
    assert ClaudeCodeReader("/x/abc.jsonl", [{"type": "summary"}]).session_key == "abc"


# ---------------------------------------------------------------- real samples


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_every_line_gives_one_entry_with_type_and_pairs(path):
    _, entries = read_all(path)
    assert len(entries) == len(lines_of(path))
    calls: set[str] = set()
    results: list[str] = []
    for e in entries.values():
        assert e.type_name
        if e.kind is not EntryKind.OPAQUE:
            assert (
                e.timestamp is not None
                or e.type_name in ("summary", "ai-title", "custom-title", "last-prompt")
                or e.native_id is None
            )
        calls.update(c.id for c in e.tool_calls())
        results.extend(r.call_id for r in e.tool_results())
        if e.is_request:
            assert e.visible and e.role is Role.USER and not e.sidechain
        if e.sidechain:
            assert not e.visible and not e.is_request and e.run_end is None
        if e.type_name == "system/api_error":
            assert e.run_end is None
    if path in ALL_SAMPLES:  # formats.md §1.5: all calls in the samples are paired
        assert set(results) == calls
        assert len(results) == len(calls)


def test_1af7fc5e():
    reader, entries = read_all(S_1AF)
    assert len(entries) == 29
    facts = reader.facts()
    assert (facts.cwd, facts.version, facts.agent_id) == ("/path/to/Demo", "1.0.98", "default")
    # Line 1 is the /init wrapper (a prompt command: the request, as typed); line 2 the isMeta
    # prompt it expanded to stays context.
    assert entries[1].kind is EntryKind.MESSAGE and entries[1].visible
    assert entries[1].role is Role.USER and entries[1].blocks == (TextBlock("/init"),)
    assert entries[2].kind is EntryKind.CONTEXT and entries[2].role is Role.USER
    assert not entries[2].visible and not entries[2].is_request
    assert entries[2].text().startswith("Please analyze this codebase")
    assert requests(entries) == {1: "/init"}
    assert sum(len(e.tool_calls()) for e in entries.values()) == 12
    assert sum(len(e.tool_results()) for e in entries.values()) == 12
    assert entries[1].native_id == "e2ab9812-8be7-4e9e-8194-d9b7b9d6da14"
    assert entries[1].parent_native_id is None
    assert entries[2].parent_native_id == "e2ab9812-8be7-4e9e-8194-d9b7b9d6da14"
    assert entries[1].timestamp.isoformat() == "2025-09-03T00:47:19.293000+00:00"
    assert entries[1].cwd == "/path/to/Demo"
    # One block per assistant line, never merged.
    assert [b.name for b in entries[6].blocks] == ["Bash"]
    assert [b.name for b in entries[10].blocks] == ["Glob"]
    res = entries[26].tool_results()[0]
    assert res.is_error and res.text.startswith("Claude requested permissions to write")
    assert entries[5].role is Role.TOOL
    assert hints(entries) == {29: RunStatus.FINISHED}
    assert entries[29].text().startswith("I've created a basic CLAUDE.md file")
    assert not reader.warnings


def test_5c0375b4_in_file_subagents():
    reader, entries = read_all(S_5C0)
    side = [n for n, e in entries.items() if e.sidechain]
    assert len(side) == 22
    assert side == list(range(16, 23)) + list(range(26, 41))
    # The Task prompt roots are sidechain user messages, never requests.
    for n in (16, 26):
        e = entries[n]
        assert e.kind is EntryKind.MESSAGE and e.role is Role.USER
        assert not e.visible and not e.is_request and e.parent_native_id is None
    assert entries[16].text().startswith("Examine the package.json file(s) in /path/to/Demo")
    # The /orchestrator custom command with args is the one request; its expansion is context.
    assert requests(entries) == {
        1: "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください"
    }
    assert entries[1].blocks == (
        TextBlock("/orchestrator @CLAUDE.md を最新の状態にアップデートしてください"),
    )
    assert entries[2].kind is EntryKind.CONTEXT and not entries[2].visible
    # The sidechain's end_turn (line 22) is not a hint for the main run.
    assert entries[22].run_end is None and hints(entries) == {}
    # Parallel Task calls, results after the subagent lines.
    assert entries[12].tool_calls()[0] == ToolCallBlock(
        "toolu_018t5jce2ZNoGr2ADsHGQife", "Task", entries[12].tool_calls()[0].arguments
    )
    assert entries[13].tool_calls()[0].name == "Task"
    assert "prompt" in entries[13].tool_calls()[0].arguments
    assert entries[15].tool_results()[0].is_error
    assert entries[23].tool_results()[0].call_id == "toolu_014YF9TXhDRR7BnpasNJ7gjC"
    assert entries[41].tool_results()[0].call_id == "toolu_01LKfUwrsnof18CpWZQcJH44"
    assert sum(len(e.tool_calls()) for e in entries.values()) == 21
    assert reader.facts().version == "1.0.108"


def test_short_rejections_and_local_command():
    reader, entries = read_all(S_SHORT)
    assert entries[1].kind is EntryKind.EVENT and entries[1].type_name == "file-history-snapshot"
    assert entries[1].native_id is None
    assert entries[1].timestamp.isoformat() == "2026-02-10T21:11:56.906000+00:00"
    assert entries[2].type_name == "progress/hook_progress" and not entries[2].visible
    assert entries[2].native_id == "3579fa66-0f5d-400c-97b8-e2fbecfeb4ba"
    assert requests(entries) == {4: "mix phx.server doesnt seem to start"}
    assert isinstance(entries[6].blocks[0], ThinkingBlock)
    assert entries[6].blocks[0].text.startswith("The user is having trouble starting")
    for n in (11, 12):
        (res,) = entries[n].tool_results()
        assert res.is_error and res.text.startswith("The user doesn't want to proceed")
        assert entries[n].role is Role.TOOL
        assert "User rejected tool use" not in res.text  # toolUseResult stays raw
    assert entries[13].kind is EntryKind.MESSAGE and entries[13].visible
    assert entries[13].text() == "[Request interrupted by user for tool use]"
    assert not entries[13].is_request
    for n in (14, 15):
        assert entries[n].kind is EntryKind.CONTEXT and entries[n].role is Role.SYSTEM
        assert entries[n].type_name == "system/local_command" and not entries[n].visible
    assert entries[15].text().startswith("<local-command-stdout>Kept model as")
    assert hints(entries) == {13: RunStatus.INTERRUPTED}
    assert reader.facts().cwd == "/home/dev/projects/spotter"
    assert reader.facts().version == "2.1.38"


def test_subagent_progress_sample():
    reader, entries = read_all(S_SUB)
    agent = [n for n, e in entries.items() if e.type_name == "progress/agent_progress"]
    assert len(agent) == 19 and agent == list(range(37, 56))
    assert all(entries[n].kind is EntryKind.EVENT and not entries[n].visible for n in agent)
    # A plugin command with multi-line args is a request as typed; its expansion is context.
    assert requests(entries) == {
        4: "/example:create-beads websearch to learn how to fastest setup credo, dialyzer,"
        " mix_audit (basically all supported by"
        " https://github.com/bradleygolden/claude-marketplace-elixir)\n\n"
        "Maybe there are igniter scripts?",
        71: "create the beads",
    }
    assert entries[4].kind is EntryKind.MESSAGE and entries[4].visible
    assert entries[5].kind is EntryKind.CONTEXT and not entries[5].visible
    assert hints(entries) == {69: RunStatus.INTERRUPTED}
    assert entries[96].type_name == "system/stop_hook_summary"
    assert entries[96].kind is EntryKind.EVENT
    # A result given as two text blocks is joined with "\n".
    (res,) = entries[56].tool_results()
    assert res.call_id == "toolu_01Cz2Pnv7qNcnK1ZiocxWhQX"
    assert res.text.startswith("Excellent! Now I have all the information")
    assert "\nagentId: afb92ff (for resuming" in res.text
    assert sum(len(e.tool_calls()) for e in entries.values()) == 16
    assert reader.facts().agent_id == "default"


def test_tool_heavy_queue_and_slash_wrappers():
    _reader, entries = read_all(S_TOOL)
    assert requests(entries) == {
        4: "start phoenix in background",
        26: entries[26].text(),
    }
    assert entries[26].text().startswith("scrolling back in xterm.js still does not work")
    assert entries[9].type_name == "queue-operation/enqueue"
    assert entries[10].type_name == "queue-operation/remove"
    assert all(entries[n].kind is EntryKind.EVENT for n in (9, 10))
    # /mcp is a local command: its user wrapper (21) and its stdout stay context.
    for n in range(20, 25):
        assert entries[n].kind is EntryKind.CONTEXT and not entries[n].visible
    assert entries[21].text().startswith("<command-name>/mcp</command-name>")
    assert entries[22].text() == (
        "<local-command-stdout>Reconnected to tidewave.</local-command-stdout>"
    )
    assert hints(entries) == {18: RunStatus.INTERRUPTED, 39: RunStatus.INTERRUPTED}
    assert [c.name for n in (29, 30) for c in entries[n].tool_calls()] == ["WebSearch", "Glob"]


# ---------------------------------------------------------------- synthetic [doc] features


def test_compaction_fixture():
    _reader, entries = read_all(F_COMPACT)
    assert entries[6].kind is EntryKind.EVENT
    assert entries[6].type_name == "system/compact_boundary"
    # a new root in the file (``parentUuid: null``): its parent is its logicalParentUuid
    assert entries[6].parent_native_id == "c5"
    first = entries[7]
    assert first.kind is EntryKind.COMPACTION and first.role is Role.SYSTEM and first.visible
    assert not first.is_request and first.native_id == "c10"
    assert first.compaction.summary == (
        "Summary: 1. Primary request: find why March is skipped"
        " ... 7. Pending: test end-inclusive ranges."
    )
    assert first.compaction.first_kept_entry_id is None
    assert first.compaction.covers_through_seq is None
    assert first.compaction.trigger == "auto"
    second = entries[11]
    assert entries[10].parent_native_id == "c12"
    assert second.kind is EntryKind.COMPACTION and second.compaction.trigger == "manual"
    assert second.compaction.summary.startswith("This session is being continued")
    assert requests(entries) == {
        1: "Why does the nightly export skip March?",
        8: "Now make the range end-inclusive.",
    }
    assert hints(entries) == {9: RunStatus.FINISHED}
    (res,) = entries[5].tool_results()
    assert res.text == "41 def month_range(start, end):\n42     return range(start, end)"
    assert entries[4].timestamp < entries[3].timestamp  # file order is kept, not time order


def test_features_fixture():
    reader, entries = read_all(F_FEAT)
    facts = reader.facts()
    # custom-title outranks generated titles, even a later ai-title.
    assert facts.title == "Header fixes"
    assert entries[1].kind is EntryKind.EVENT and entries[1].type_name == "summary"
    # Image + typed text: a request; base64 becomes a MediaBlock with its payload.
    e = entries[2]
    assert e.is_request and e.text() == "What is wrong in this screenshot?"
    media = [b for b in e.blocks if isinstance(b, MediaBlock)]
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
    sha = hashlib.sha256(png).hexdigest()
    assert media == [MediaBlock("image/png", len(png), sha)]
    assert e.payloads == {sha: png}
    assert all("iVBOR" not in b.text for b in e.blocks if isinstance(b, TextBlock))
    # redacted_thinking is skipped; thinking keeps text, never the signature.
    assert entries[3].kind is EntryKind.MESSAGE and entries[3].blocks == ()
    assert entries[4].blocks == (ThinkingBlock("Look closer."),)
    # tool_use input given as a JSON string parses to an object.
    assert entries[5].blocks == (ToolCallBlock("toolu_F1", "Screenshot", {"region": "full"}),)
    # Results first, then text; an image inside a result goes to its media.
    r = entries[6]
    assert r.role is Role.TOOL and not r.is_request
    assert isinstance(r.blocks[0], ToolResultBlock) and isinstance(r.blocks[1], TextBlock)
    assert r.blocks[0].text == "captured" and r.blocks[0].media[0].sha256 == sha
    assert r.blocks[1].text == "also check the header" and r.payloads == {sha: png}
    # An api_error system line is an event with no hint (often a retry notice); an
    # isApiErrorMessage assistant line: failed.
    assert entries[7].kind is EntryKind.EVENT and entries[7].type_name == "system/api_error"
    assert entries[7].run_end is None
    assert entries[8].run_end is RunStatus.FAILED and entries[8].visible
    # Background notification: context.
    assert entries[10].kind is EntryKind.CONTEXT and not entries[10].is_request
    # IDE context and system reminder ride along a typed prompt: only the typed text is kept.
    assert entries[11].is_request and entries[11].text() == "fix the header please"
    assert entries[12].kind is EntryKind.CONTEXT
    assert entries[12].type_name == "attachment/queued_command"
    for n in (13, 14, 15):
        assert entries[n].kind is EntryKind.EVENT and not entries[n].visible
    # Unknown line type and an assistant line with only unknown blocks: opaque.
    assert entries[16].kind is EntryKind.OPAQUE and entries[16].type_name == "future-kind"
    assert entries[16].native_id == "f11"
    assert entries[17].kind is EntryKind.OPAQUE and not entries[17].visible
    # Missing fields read as empty, with warnings naming the line.
    assert entries[18].blocks == (ToolCallBlock("", "Bash", {}), TextBlock(""))
    assert entries[18].timestamp is not None and entries[18].timestamp.year == 2026  # epoch ms
    assert entries[19].tool_results() == [ToolResultBlock("", False, "")]
    assert entries[20].blocks == () and not entries[20].is_request
    assert entries[21].type_name == "system/turn_duration"
    assert entries[22].kind is EntryKind.CONTEXT  # isMeta
    assert entries[23].kind is EntryKind.CONTEXT  # bash-mode echo
    assert entries[24].blocks == () and not entries[24].is_request
    assert entries[25].kind is EntryKind.OPAQUE and entries[25].type_name == "<missing type>"
    warned = {n for n, _ in reader.warnings}
    assert {17, 18, 19, 20, 24} <= warned
    assert hints(entries) == {8: RunStatus.FAILED}


def test_subagent_side_file():
    # A side file is the child session itself: its sidechain lines are its visible main line.
    reader, entries = read_all(F_AGENT)
    # Keyed under its parent's id, never the parent's own key (import order must not matter).
    assert reader.session_key == f"5b7c2e90-aaaa/{F_AGENT.stem}"
    assert reader.facts().agent_id == "a1b2c3"
    assert reader.facts().cwd == "/home/ana/ledger"
    assert len(entries) == 4
    assert all(
        e.visible and not e.sidechain and e.kind is EntryKind.MESSAGE for e in entries.values()
    )
    assert requests(entries) == {1: "Find every caller of month_range."}
    assert entries[1].role is Role.USER and entries[1].parent_native_id is None
    assert entries[2].blocks == (ToolCallBlock("toolu_S1", "Grep", {"pattern": "month_range("}),)
    assert entries[3].role is Role.TOOL
    assert entries[3].tool_results() == [ToolResultBlock("toolu_S1", False, "export.py:88")]
    assert entries[4].text() == "One caller: export.py:88."
    assert hints(entries) == {4: RunStatus.FINISHED}
    assert not reader.warnings


def test_side_file_decided_by_first_conversational_line_and_kept_in_state():
    # The head held no user/assistant line (a fresh file): the first one read decides.
    lines = lines_of(F_AGENT)
    a = ClaudeCodeReader("/x/agent-zz9.jsonl", [{"type": "file-history-snapshot"}])
    first = a.read(lines[0])
    assert first.is_request and not first.sidechain and a.facts().agent_id == "a1b2c3"
    state = json.loads(json.dumps(a.state()))
    b = ClaudeCodeReader("/x/agent-zz9.jsonl", [{"type": "file-history-snapshot"}], state)
    assert b.facts().agent_id == "a1b2c3"
    last = [b.read(line) for line in lines[1:]][-1]
    assert last.visible and not last.sidechain and last.run_end is RunStatus.FINISHED
    # In a normal session file a later sidechain line stays an invisible sidechain row.
    c = ClaudeCodeReader("/x/s.jsonl", [])
    c.read(
        Line(
            1,
            0,
            b"{}",
            {"type": "user", "isSidechain": False, "message": {"content": "hello"}},
            None,
        )
    )
    e = c.read(lines[0])
    assert e.sidechain and not e.visible and not e.is_request
    e = c.read(lines[3])
    assert e.sidechain and e.run_end is None and c.facts().agent_id == "default"


def test_slash_command_fixture():
    reader, entries = read_all(F_SLASH)
    # Local commands (/model, /compact even with args) and their stdout: context, no request.
    for n in (1, 2, 6):
        assert entries[n].kind is EntryKind.CONTEXT and not entries[n].visible
        assert not entries[n].is_request and entries[n].role is Role.USER
    assert entries[1].text().startswith("<command-name>/model</command-name>")
    assert entries[2].text() == "<local-command-stdout>Set model to opus</local-command-stdout>"
    # Prompt commands are requests as typed; the isMeta expansion stays context.
    assert entries[3].blocks == (TextBlock("/review"),) and entries[3].visible
    assert entries[4].kind is EntryKind.CONTEXT and not entries[4].is_request
    assert entries[7].blocks == (TextBlock("/team:deploy staging\nnow"),)
    # Wrapper tags mixed with other injected text are not a command as typed.
    assert entries[8].kind is EntryKind.CONTEXT and not entries[8].is_request
    assert requests(entries) == {3: "/review", 7: "/team:deploy staging\nnow"}
    assert hints(entries) == {5: RunStatus.FINISHED}
    assert not reader.warnings


def test_lone_surrogates_are_cleaned():
    reader = ClaudeCodeReader("/x/s.jsonl", [])
    data = {
        "type": "user",
        "uuid": "u1",
        "sessionId": "s",
        "cwd": "/w",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {
            "role": "user",
            "content": [
                {"type": "text", "text": "bad \ud83c end"},
                {"type": "tool_result", "tool_use_id": "t\ud800", "content": "x\udfff"},
            ],
        },
    }
    e = reader.read(Line(1, 0, b"{}", data, None))
    (res,) = e.tool_results()
    assert res.call_id == "t\ufffd" and res.text == "x\ufffd"
    assert e.text() == "bad \ufffd end"
    e = reader.read(Line(2, 3, b"{}", {"type": "user", "message": {"content": "hi \udc00"}}, None))
    assert e.is_request and e.text() == "hi \ufffd"


@pytest.mark.parametrize(
    "data",
    [
        {"type": "user", "message": {"content": [None, 3, "x", {"type": 5}]}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "input": [1]}]}},
        {"type": "assistant", "message": None, "isSidechain": "yes", "uuid": 7},
        {"type": "system", "subtype": None, "content": {"a": 1}},
        {"type": "system", "subtype": "compact_boundary", "compactMetadata": "auto"},
        {"type": "progress", "data": "x"},
        {"type": "attachment", "attachment": [1]},
        {"type": "ai-title", "aiTitle": 5},
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "image", "source": "nope"},
                    {"type": "tool_result", "content": 9},
                ]
            },
        },
        {"type": "user", "isCompactSummary": True, "message": {"content": 5}},
        {"type": ["user"]},
    ],
)
def test_odd_input_never_raises(data):
    reader = ClaudeCodeReader("/x/odd.jsonl", [])
    entry = reader.read(Line(1, 0, b"{}", data, None))
    assert entry is not None and entry.type_name
    assert not any("unreadable" in msg for _, msg in reader.warnings)
    json.dumps(reader.state())


# ---------------------------------------------------------------- resume


@pytest.mark.parametrize("path", ALL_FILES, ids=lambda p: p.name)
def test_state_resume_matches_single_pass(path):
    lines = lines_of(path)
    head = read_head(str(path))
    whole = ClaudeCodeReader(str(path), head)
    expected = [whole.read(line) for line in lines]
    splits = range(1, len(lines)) if len(lines) <= 40 else range(1, len(lines), 7)
    for k in splits:
        a = ClaudeCodeReader(str(path), head)
        got = [a.read(line) for line in lines[:k]]
        state = json.loads(json.dumps(a.state()))
        b = ClaudeCodeReader(str(path), head, state)
        got += [b.read(line) for line in lines[k:]]
        assert got == expected, k
        assert b.facts() == whole.facts(), k


def test_microcompact_boundary_is_an_event_and_no_checkpoint(sqlite_store, tmp_path):
    """A ``microcompact_boundary`` (Claude Code cleared old tool results from the model's
    context; no summary) is an event naming how many, not a compaction: the next compaction
    summary still gets the trigger of its own boundary, and every tool result stays in view."""
    from continuity.continuation.view import build_continuation
    from continuity.formats.importer import import_file

    base = {
        "sessionId": "mc-1",
        "cwd": "/w",
        "version": "2.1.332",
        "isSidechain": False,
        "userType": "external",
        "timestamp": "2026-12-02T05:00:00.000Z",
    }
    lines = [
        dict(
            base,
            type="user",
            uuid="m1",
            parentUuid=None,
            message={"role": "user", "content": "list the files"},
        ),
        dict(
            base,
            type="assistant",
            uuid="m2",
            parentUuid="m1",
            message={
                "id": "msg_1",
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Bash",
                        "input": {"command": "ls"},
                    }
                ],
                "stop_reason": "tool_use",
            },
        ),
        dict(
            base,
            type="user",
            uuid="m3",
            parentUuid="m2",
            message={
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py\nb.py"}
                ],
            },
        ),
        dict(
            base,
            type="system",
            subtype="microcompact_boundary",
            uuid="m4",
            parentUuid=None,
            logicalParentUuid="m3",
            content="Context microcompacted",
            level="info",
            microcompactMetadata={
                "trigger": "auto",
                "preTokens": 90000,
                "tokensSaved": 4100,
                "compactedToolIds": ["toolu_1"],
            },
        ),
        dict(
            base,
            type="assistant",
            uuid="m5",
            parentUuid="m4",
            message={
                "id": "msg_2",
                "role": "assistant",
                "content": [{"type": "text", "text": "a.py, b.py"}],
                "stop_reason": "end_turn",
            },
        ),
    ]
    path = tmp_path / "mc.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    report = import_file(sqlite_store, path)
    assert report.opaque == 0 and report.warnings == []
    rows = sqlite_store.entries("mc-1")
    mc = rows[3]
    assert (mc.kind, mc.type_name, mc.visible, mc.parent_native_id, mc.text()) == (
        EntryKind.EVENT,
        "system/microcompact_boundary",
        False,
        "m3",
        "microcompact: 1 tool results cleared from the model's context, 4100 tokens saved",
    )
    assert sqlite_store.latest_compaction("mc-1") is None
    view = build_continuation(sqlite_store, "mc-1").to_dict()
    assert view["summary"] is None
    assert [b["type"] for m in view["messages"] for b in m["content"]] == [
        "tool_call",
        "tool_result",
        "text",
    ]
