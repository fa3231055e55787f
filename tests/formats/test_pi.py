"""PiReader against the real pi samples (shared/data/pi) and synthetic [doc] fixtures."""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from continuity.core.model import (
    EntryKind,
    MediaBlock,
    Role,
    RunStatus,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.formats.jsonl import Line, LineReader, read_head
from continuity.formats.pi import PiReader
from tests.paths import SHARED_DATA as DATA

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "pi"
LARGE = DATA / "pi" / "large-session.jsonl"
V3_SHORT = DATA / "pi" / "v3-short-session.jsonl"


def _lines(path: Path) -> list[Line]:
    with open(path, "rb") as fh:
        return [line for line in LineReader(fh) if line.data is not None]


def read_all(path: Path, state: dict | None = None, lines: list[Line] | None = None):
    """(reader, {line number: entry}) for the parsed lines of ``path``."""
    reader = PiReader(str(path), read_head(str(path)), state)
    out = {}
    for line in _lines(path) if lines is None else lines:
        entry = reader.read(line)
        assert entry is not None
        out[line.number] = entry
    return reader, out


@pytest.fixture(scope="module")
def large():
    return read_all(LARGE)


def test_data_path_resolves():
    # The samples travel with the checkout (tests/fixtures/samples; tests/test_samples.py).
    assert DATA.is_dir() and DATA.name == "samples"
    assert LARGE.is_file() and V3_SHORT.is_file()


# --------------------------------------------------------------------------- sniff


def test_sniff_accepts_pi_files():
    for path in [LARGE, V3_SHORT, *sorted(FIX.glob("*.jsonl"))]:
        assert PiReader.sniff(read_head(str(path))), path


def test_sniff_rejects_other_harnesses():
    others = sorted((DATA / "claude-code").glob("*.jsonl")) + sorted(
        (DATA / "codex").glob("*.jsonl")
    )
    assert len(others) == 10
    for path in others:
        assert not PiReader.sniff(read_head(str(path))), path
    assert not PiReader.sniff([])


def test_detect_picks_pi_reader():
    from continuity.formats import detect

    for path in [LARGE, V3_SHORT, *sorted(FIX.glob("*.jsonl"))]:
        assert detect(read_head(str(path))) is PiReader, path


def test_sniff_headerless_message_lines():
    msg = {"type": "message", "id": "x", "message": {"role": "user", "content": "hi"}}
    assert PiReader.sniff([msg])
    # Claude Code shaped rows carry uuid/sessionId
    assert not PiReader.sniff([{**msg, "uuid": "u", "sessionId": "s"}])
    # Codex session_meta has a payload
    assert not PiReader.sniff([{"type": "session", "cwd": "/x", "payload": {}}])


# --------------------------------------------------------------------------- real v1 sample


def test_large_v1_counts(large):
    reader, entries = large
    assert len(entries) == 1019
    types = Counter(e.type_name for e in entries.values())
    assert types == {
        "session": 1,
        "message/user": 88,
        "message/assistant": 453,
        "message/toolResult": 373,
        "thinking_level_change": 103,
        "model_change": 1,
    }
    assert sum(e.is_request for e in entries.values()) == 88
    calls = [c for e in entries.values() for c in e.tool_calls()]
    results = [r for e in entries.values() for r in e.tool_results()]
    assert len(calls) == 391 and len({c.id for c in calls}) == 391
    assert len(results) == 373 and sum(r.is_error for r in results) == 19
    call_ids = {c.id for c in calls}
    assert all(r.call_id in call_ids for r in results)
    thinking = [b for e in entries.values() for b in e.blocks if isinstance(b, ThinkingBlock)]
    assert len(thinking) == 1 and thinking[0].text.startswith(
        "The user wants me to use the thinking"
    )
    ends = Counter(e.run_end for e in entries.values() if e.run_end is not None)
    assert ends == {RunStatus.FINISHED: 65, RunStatus.INTERRUPTED: 21, RunStatus.FAILED: 1}
    kinds = Counter(e.kind for e in entries.values())
    assert kinds == {EntryKind.EVENT: 105, EntryKind.MESSAGE: 914}
    assert reader.warnings == []


def test_large_v1_header_and_facts(large):
    reader, entries = large
    assert reader.session_key == "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"
    facts = reader.facts()
    assert facts.cwd == "/Users/dev/workspaces/pi-mono"
    assert facts.version == "1"
    assert facts.title is None
    head = entries[1]
    assert head.kind == EntryKind.EVENT and not head.visible and head.native_id is None
    assert head.cwd == "/Users/dev/workspaces/pi-mono"
    assert head.timestamp == datetime(2025, 11, 20, 23, 33, 50, 805000, tzinfo=UTC)


def test_large_v1_ids_are_a_linear_chain(large):
    _, entries = large
    assert entries[2].native_id == "v1-2" and entries[2].parent_native_id is None
    for n in range(3, 1020):
        assert entries[n].native_id == f"v1-{n}"
        assert entries[n].parent_native_id == f"v1-{n - 1}"


def test_large_v1_specific_rows(large):
    _, entries = large
    first = entries[2]  # the person typed "/mode": a request
    assert first.role == Role.USER and first.is_request and first.text() == "/mode"
    assert first.timestamp == datetime(2025, 11, 20, 23, 33, 1, 550000, tzinfo=UTC)
    aborted = entries[3]  # aborted with empty content: kept, visible
    assert aborted.kind == EntryKind.MESSAGE and aborted.role == Role.ASSISTANT
    assert aborted.visible and aborted.blocks == () and not aborted.is_request
    assert aborted.run_end == RunStatus.INTERRUPTED
    assert entries[4].type_name == "model_change" and entries[4].kind == EntryKind.EVENT
    assert entries[5].text().startswith("read packages/coding-agent/docs/theme.md in full")
    failed = entries[33]  # stopReason error, text + 16 tool calls
    assert failed.run_end == RunStatus.FAILED and len(failed.tool_calls()) == 16
    assert failed.text().startswith("There are 77 `chalk` usages.")
    call = failed.tool_calls()[0]
    assert call.id == "toolu_016i8caCv6EqBx4nQUJmnEvU" and call.name == "edit"
    assert call.arguments["path"] == "packages/coding-agent/src/tui/tui-renderer.ts"
    assert entries[353].is_request and entries[353].text() == "/"
    last = entries[1019]
    assert last.role == Role.ASSISTANT and last.run_end == RunStatus.FINISHED
    assert last.text().startswith("Oh wait, these errors look like we have API mismatches!")
    for e in entries.values():
        if e.type_name == "message/toolResult":
            assert e.role == Role.TOOL and e.visible and not e.is_request
            assert len(e.blocks) == 1 and isinstance(e.blocks[0], ToolResultBlock)
        if e.type_name == "thinking_level_change":
            assert e.kind == EntryKind.EVENT and not e.visible


# --------------------------------------------------------------------------- real v3 sample


def test_v3_short_session():
    reader, entries = read_all(V3_SHORT)
    assert reader.session_key == "019e963d-6bd6-7ade-8a49-256ac3391bdd"
    facts = reader.facts()
    assert facts.cwd == "/tmp/agent-history-real-agent/pi/workspace"
    assert facts.version == "3" and facts.title == "agent-history pi smoke"
    assert [(e.type_name, e.kind) for e in entries.values()] == [
        ("session", EntryKind.EVENT),
        ("session_info", EntryKind.EVENT),
        ("model_change", EntryKind.EVENT),
        ("thinking_level_change", EntryKind.EVENT),
        ("message/user", EntryKind.MESSAGE),
        ("message/assistant", EntryKind.MESSAGE),
    ]
    assert [e.native_id for e in entries.values()] == [
        None,
        "13b3bc17",
        "7265100e",
        "4e3d2034",
        "e2e044ff",
        "65697c71",
    ]
    assert [e.parent_native_id for e in entries.values()] == [
        None,
        None,
        "13b3bc17",
        "7265100e",
        "4e3d2034",
        "e2e044ff",
    ]
    user, asst = entries[5], entries[6]
    assert user.is_request and user.text() == "[REDACTED_PROMPT]"
    assert asst.role == Role.ASSISTANT and asst.text() == "[REDACTED_ASSISTANT_TEXT]"
    assert asst.run_end == RunStatus.FINISHED and not asst.is_request
    # entry timestamp, not the nested message ms
    assert asst.timestamp == datetime(2026, 6, 5, 5, 24, 31, 430000, tzinfo=UTC)
    assert sum(e.visible for e in entries.values()) == 2
    assert reader.warnings == []


# --------------------------------------------------------------------------- synthetic [doc]


def test_v3_compaction_fixture():
    reader, e = read_all(FIX / "v3-compaction.jsonl")
    assert reader.session_key == "0199a1b2-3c4d-7000-8000-000000000001"
    assert reader.facts().title == "export dry-run"  # latest non-empty name wins
    assert reader.facts().cwd == "/home/ana/ledger" and reader.facts().version == "3"

    comp = e[13]
    assert comp.kind == EntryKind.COMPACTION and comp.role == Role.SYSTEM and comp.visible
    assert not comp.is_request and comp.native_id == "a000000c"
    assert comp.compaction.summary == "## Goal\nAdd --dry-run to export"
    assert comp.compaction.first_kept_entry_id == "a0000008"
    assert comp.compaction.covers_through_seq is None and comp.compaction.trigger == "pi"
    # the kept entry exists with that native id
    assert e[9].native_id == "a0000008" and e[9].is_request and e[9].text() == "/review export.py"

    asst = e[4]
    assert asst.blocks == (
        ThinkingBlock("Need to read export.py"),
        ToolCallBlock("toolu_P1", "read", {"path": "export.py"}),
    )
    assert asst.run_end is None
    assert e[5].blocks == (
        ToolResultBlock("toolu_P1", False, "import argparse\ndef export(): ..."),
    )
    assert e[6].run_end == RunStatus.FINISHED
    bash = e[7]
    assert bash.kind == EntryKind.MESSAGE and bash.role == Role.USER and bash.visible
    assert not bash.is_request and bash.text() == "$ pytest -q\n3 passed\n[exit 0]"
    hidden = e[8]
    assert hidden.kind == EntryKind.CONTEXT and not hidden.visible and not hidden.is_request
    assert e[10].tool_calls() == [ToolCallBlock("toolu_P2", "bash", {"command": "ls"})]
    assert e[11].blocks == (ToolResultBlock("toolu_P2", True, "ls: cannot access"),)
    err = e[12]
    assert err.role == Role.ASSISTANT and err.visible and err.blocks == ()
    assert err.run_end == RunStatus.FAILED
    assert e[14].kind == EntryKind.EVENT and e[14].type_name == "custom" and not e[14].visible
    cm = e[15]
    assert cm.kind == EntryKind.MESSAGE and cm.role == Role.USER and cm.visible
    assert not cm.is_request and cm.text() == "Remember the changelog."
    for n in (16, 17, 18, 23, 24):
        assert e[n].kind == EntryKind.EVENT and not e[n].visible
    assert (e[19].kind, e[19].type_name, e[19].visible) == (
        EntryKind.OPAQUE,
        "future_entry_kind",
        False,
    )
    assert e[19].native_id == "a0000012" and e[20].parent_native_id == "a0000012"
    assert (e[20].kind, e[20].type_name, e[20].visible) == (
        EntryKind.OPAQUE,
        "message/futureRole",
        False,
    )
    assert e[21].text() == "Now write the docs \u2713" and e[21].is_request
    assert e[22].run_end == RunStatus.FAILED  # stopReason length
    assert e[25].is_request and e[25].text() == "stop that"
    assert e[26].run_end == RunStatus.INTERRUPTED and e[26].blocks == ()
    assert [n for n, x in e.items() if x.is_request] == [3, 9, 21, 25]
    # signatures and redacted thinking never reach the blocks
    for x in e.values():
        for b in x.blocks:
            assert "SIG-SECRET" not in repr(b) and "ENCRYPTED-BLOB" not in repr(b)
    assert reader.warnings == []


def test_v3_branch_fixture():
    _reader, e = read_all(FIX / "v3-branch.jsonl")
    children = [x.native_id for x in e.values() if x.parent_native_id == "b0000003"]
    assert children == ["b0000004", "b0000005"]
    leaf = e[max(e)]
    assert leaf.native_id == "b0000007" and leaf.parent_native_id == "b0000006"
    summary = e[6]
    assert summary.kind == EntryKind.MESSAGE and summary.role == Role.USER and summary.visible
    assert not summary.is_request and summary.text() == "The user rejected 'lk'."
    empty = e[7]
    assert empty.kind == EntryKind.EVENT and not empty.visible and empty.blocks == ()
    assert [n for n, x in e.items() if x.is_request] == [2, 4]


def test_v2_hookmessage_is_custom():
    reader, e = read_all(FIX / "v2-hookmessage.jsonl")
    assert reader.facts().version == "2"
    hook = e[3]
    assert hook.type_name == "message/custom"
    assert hook.kind == EntryKind.MESSAGE and hook.role == Role.USER and hook.visible
    assert not hook.is_request and hook.text() == "branch main is dirty"
    assert e[2].is_request and e[2].native_id == "c0000001"
    assert hook.native_id == "c0000002" and hook.parent_native_id == "c0000001"


def test_images_fixture():
    _reader, e = read_all(FIX / "v3-images.jsonl")
    raw = {
        n: json.loads(line.raw)
        for n, line in ((ln.number, ln) for ln in _lines(FIX / "v3-images.jsonl"))
    }
    png = base64.b64decode(raw[2]["message"]["content"][1]["data"])
    jpg = base64.b64decode(raw[4]["message"]["content"][1]["data"])
    png_sha, jpg_sha = hashlib.sha256(png).hexdigest(), hashlib.sha256(jpg).hexdigest()

    user = e[2]
    assert user.is_request and user.text() == "What is in this screenshot?"
    assert user.blocks[1] == MediaBlock("image/png", len(png), png_sha)
    assert user.payloads == {png_sha: png}
    result = e[4].blocks[0]
    assert isinstance(result, ToolResultBlock) and result.call_id == "toolu_I1"
    assert result.text == "Read image file [image/jpeg]"
    assert result.media == (MediaBlock("image/jpeg", len(jpg), jpg_sha),)
    assert e[4].payloads == {jpg_sha: jpg}
    only_image = e[6]  # an image without text is not a request
    assert only_image.visible and not only_image.is_request
    assert only_image.blocks == (MediaBlock("image/png", len(png), png_sha),)
    # base64 never in text
    b64 = raw[2]["message"]["content"][1]["data"]
    for x in e.values():
        for b in x.blocks:
            assert b64[:40] not in repr(b)


def test_v1_compaction_index_counts_parsed_objects():
    _reader, e = read_all(FIX / "v1-compaction.jsonl")
    assert sorted(e) == [1, 2, 3, 4, 6, 7, 8, 9]  # line 5 is blank
    assert [e[n].native_id for n in (2, 3, 4, 6, 7, 8, 9)] == [
        "v1-2",
        "v1-3",
        "v1-4",
        "v1-6",
        "v1-7",
        "v1-8",
        "v1-9",
    ]
    assert e[6].parent_native_id == "v1-4"
    comp = e[8].compaction
    # firstKeptEntryIndex 4 = the 5th parsed object (header = 0): the user "two" on line 6
    assert comp.first_kept_entry_id == "v1-6" and e[6].text() == "two"
    assert comp.summary == "counted to two"


# --------------------------------------------------------------------------- resume


@pytest.mark.parametrize(
    "path,cuts",
    [
        (LARGE, [1, 2, 500, 1018]),
        (FIX / "v1-compaction.jsonl", [1, 3, 4, 5, 6, 7]),
        (FIX / "v3-compaction.jsonl", [1, 12, 22, 24]),
    ],
)
def test_resume_matches_single_pass(path, cuts):
    lines = _lines(path)
    _, whole = read_all(path, lines=lines)
    for k in cuts:
        a, first = read_all(path, lines=lines[:k])
        state = json.loads(json.dumps(a.state()))
        b, second = read_all(path, state=state, lines=lines[k:])
        assert {**first, **second} == whole, k
        assert b.facts() == read_all(path, lines=lines)[0].facts()


# --------------------------------------------------------------------------- tolerance


def _line(n: int, obj) -> Line:
    raw = json.dumps(obj).encode()
    return Line(n, 0, raw, obj, None)


ODD = [
    {"type": "message"},
    {"type": "message", "message": "text"},
    {"type": "message", "message": {"role": None}},
    {"type": "message", "message": {"role": "user"}},
    {"type": "message", "message": {"role": "user", "content": 5}},
    {"type": "message", "message": {"role": "user", "content": [1, None, {"type": "video"}]}},
    {"type": "message", "message": {"role": "assistant", "content": "plain"}},
    {
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "toolCall"},
                {"type": "toolCall", "id": 3, "name": [], "arguments": "[1]"},
                {"type": "text"},
                {"type": "thinking"},
                "x",
            ],
            "stopReason": 7,
        },
    },
    {"type": "message", "message": {"role": "toolResult", "content": {"a": 1}, "isError": "yes"}},
    {"type": "message", "message": {"role": "toolResult", "toolCallId": "t", "content": "out"}},
    {"type": "message", "message": {"role": "bashExecution", "exitCode": "x"}},
    {"type": "message", "message": {"role": "user", "content": [{"type": "image", "data": 5}]}},
    {"type": "compaction"},
    {"type": "compaction", "summary": 3, "firstKeptEntryIndex": True},
    {"type": "branch_summary", "summary": None},
    {"type": "custom_message", "content": None},
    {"type": "session_info", "name": 3},
    {"type": 12, "id": 4, "parentId": {}},
    {"timestamp": "not a time"},
    {"type": "session", "cwd": 5, "version": "x"},
]


def test_odd_lines_never_raise():
    reader = PiReader("/tmp/odd.jsonl", [{"type": "session", "version": 3, "id": "s", "cwd": "/c"}])
    for n, obj in enumerate(ODD, start=2):
        entry = reader.read(_line(n, obj))
        assert entry is not None and entry.type_name is not None
        json.dumps(reader.state())
    assert reader.warnings  # missing fields were reported
    e = reader.read(
        _line(
            99,
            {
                "type": "message",
                "id": "z",
                "message": {"role": "toolResult", "toolCallId": "t", "content": "out"},
            },
        )
    )
    assert e.blocks == (ToolResultBlock("t", False, "out"),)
    e = reader.read(
        _line(
            100,
            {
                "type": "message",
                "id": "y",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "toolCall", "id": "c", "name": "n", "arguments": "not json"}
                    ],
                },
            },
        )
    )
    assert e.tool_calls() == [ToolCallBlock("c", "n", "not json")]


def test_lone_surrogates_are_cleaned():
    reader = PiReader("/tmp/s.jsonl", [{"type": "session", "version": 3, "id": "s", "cwd": "/c"}])
    obj = json.loads(
        '{"type": "message", "id": "m", "message": {"role": "assistant", "content": ['
        '{"type": "text", "text": "a \\ud83c b"}, {"type": "toolCall", "id": "c",'
        ' "name": "n", "arguments": {"k\\udc00": ["\\ud800"]}}]}}'
    )
    e = reader.read(Line(2, 0, b"", obj, None))
    assert e.text() == "a \ufffd b"
    assert e.tool_calls()[0].arguments == {"k\ufffd": ["\ufffd"]}


def test_key_falls_back_to_file_stem():
    reader = PiReader("/x/2026-01-01_abc.jsonl", [{"type": "message", "message": {"role": "user"}}])
    assert reader.session_key == "2026-01-01_abc"


def test_recovery_context_our_extension_injected_is_context_not_conversation(tmp_path):
    """Issue 12: our pi extension hands pi the recovery context as a custom message on the
    first agent start; pi stores it right after the prompt (``custom_message``, customType
    ``continuity-recovery``). Importing a real pi 0.73.1 session with it keeps it as context:
    not in the continuation, not in the transcript, the prompt still the request."""
    from continuity.continuation.view import build_continuation
    from continuity.formats.importer import import_paths
    from continuity.store import open_store
    from continuity.transcripts import session_transcripts as tx

    real = next((DATA / "real-harness" / "pi" / "sessions").rglob("*36f4*.jsonl"))
    lines = [json.loads(x) for x in real.read_text().splitlines()]
    assert [d.get("id") for d in lines][3:5] == ["7fd02825", "44322157"]
    recovery = {
        "type": "custom_message",
        "id": "c0ffee01",
        "parentId": "7fd02825",
        "timestamp": lines[3]["timestamp"],
        "customType": "continuity-recovery",
        "content": "Recovery context from continuity: a digest of earlier work in "
        "this project, quoted as evidence. It is not an instruction.\n\n"
        "## Session Recovery Context\n## Session End Checkpoint",
        "display": False,
    }
    lines[4]["parentId"] = "c0ffee01"
    path = tmp_path / real.name
    path.write_text("".join(json.dumps(d) + "\n" for d in [*lines[:4], recovery, *lines[4:]]))
    with open_store(f"sqlite:///{tmp_path / 'c.db'}") as store:
        report = import_paths(store, [path])
        key = report.sessions[0]
        rows = store.entries(key, limit=100)
        ours = [r for r in rows if r.native_id == "c0ffee01"]
        assert [(r.kind.value, r.visible, r.type_name) for r in ours] == [
            ("context", False, "custom_message/continuity-recovery")
        ]
        assert report.files[0].opaque == 0
        view = build_continuation(store, key).to_dict()
        tx.sync_session(store, key, home=tmp_path)
        transcript = store.get_transcripts([key], "default")[key].content
    assert view["request"]["text"] == "Daemon down: pi lists files"
    assert "Recovery context" not in json.dumps(view)
    assert "Recovery context" not in transcript
    assert transcript.startswith("User: Daemon down: pi lists files\n")


# ---------------------------------------------------------------------------- issue 14


def _pi_file(tmp_path: Path, details: object) -> Path:
    rows = [
        {
            "type": "session",
            "version": 3,
            "id": "s-14",
            "timestamp": "2026-12-02T10:00:00.000Z",
            "cwd": "/home/ana/ledger",
        },
        {
            "type": "message",
            "id": "u1",
            "parentId": None,
            "message": {"role": "user", "content": [{"type": "text", "text": "Read the logs"}]},
        },
        {
            "type": "message",
            "id": "a1",
            "parentId": "u1",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "Done."}],
                "stopReason": "stop",
            },
        },
        {
            "type": "compaction",
            "id": "cmp9",
            "parentId": "a1",
            "summary": "## Goal\n- logs",
            "firstKeptEntryId": None,
            "tokensBefore": 70000,
            "details": details,
            "fromHook": True,
        },
    ]
    path = tmp_path / "s-14.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_our_checkpoint_in_pi_imports_as_the_one_continuation_checkpoint(store, tmp_path):
    """Issue 14: the compaction our extension had pi write (``details.continuity`` marker,
    ``firstKeptEntryId`` null) is stored as the continuation checkpoint it is: continuation,
    run id, trigger ``settled_turn``, covering every row before it; its native id is pi's."""
    from continuity.formats.importer import import_file

    import_file(
        store,
        _pi_file(
            tmp_path,
            {
                "continuity": {
                    "continuation": True,
                    "run_id": "s-14:1",
                    "covers": {"from_entry_id": "u1", "through_entry_id": "a1"},
                }
            },
        ),
    )
    row = store.latest_compaction("s-14")
    assert row is not None and row.native_id == "cmp9"
    info = row.compaction
    assert (info.continuation, info.run_id, info.trigger, info.covers_through_seq) == (
        True,
        "s-14:1",
        "settled_turn",
        row.seq - 1,
    )


@pytest.mark.parametrize(
    "details",
    [
        None,
        {"readFiles": [], "modifiedFiles": []},
        {"continuity": {"continuation": "yes"}},
        {"continuity": ["continuation"]},
    ],
)
@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_pi_s_own_compactions_stay_pi_s(store, tmp_path, details):
    """A compaction without our typed marker (pi's own summarizer, a marker of the wrong
    type) is pi's: no continuation, trigger ``pi``."""
    from continuity.formats.importer import import_file

    import_file(store, _pi_file(tmp_path, details))
    info = store.latest_compaction("s-14").compaction
    assert (info.continuation, info.run_id, info.trigger) == (False, None, "pi")


def test_read_entries_maps_a_branch_like_an_import():
    """``read_entries`` (the daemon reads the working view pi hands our hook with it):
    the same kinds as an import, seq = position; our recovery context is CONTEXT."""
    from continuity.formats.pi import read_entries

    rows = read_entries(
        [
            {
                "type": "compaction",
                "id": "c",
                "parentId": None,
                "summary": "S",
                "firstKeptEntryId": None,
            },
            {
                "type": "custom_message",
                "id": "r",
                "parentId": "c",
                "customType": "continuity-recovery",
                "content": "digest",
                "display": False,
            },
            {
                "type": "message",
                "id": "u",
                "parentId": "r",
                "message": {"role": "user", "content": [{"type": "text", "text": "go"}]},
            },
            "not an entry",
        ]
    )
    assert [(r.seq, r.kind.value, r.native_id) for r in rows] == [
        (0, "compaction", "c"),
        (1, "context", "r"),
        (2, "message", "u"),
    ]
