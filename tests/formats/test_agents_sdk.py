"""AgentsSdkReader: the session files of the OpenAI Agents SDK adapter (harness
``openai-agents``), read without the SDK: detection, the mapping of each Responses API item
shape, and the conversation path after pops and clears (issue 46 item 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from continuity.core.model import (
    EntryKind,
    MediaBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.formats import detect
from continuity.formats.agents_sdk import AgentsSdkReader
from continuity.formats.importer import import_paths
from continuity.formats.jsonl import Line, read_head
from continuity.store import SqlStore

HEADER = {
    "type": "openai-agents.session",
    "version": 1,
    "id": "chat-9",
    "timestamp": "2026-12-01T10:00:00Z",
    "cwd": "/home/dev/app",
}


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    """The file: the header, then ``records`` as item lines chained by ids unless they carry
    their own ``type``/``id``."""
    lines, parent = [HEADER], None
    for n, record in enumerate(records):
        if record.get("type") in ("pop", "clear"):
            line = dict(record)
        else:
            line = {
                "type": "item",
                "id": f"i{n}",
                "parent_id": parent,
                "timestamp": f"2026-12-01T10:00:{n:02d}Z",
                "item": record,
            }
        parent = line["id"]
        lines.append(line)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def read(path: Path) -> list[Any]:
    reader = AgentsSdkReader(str(path), read_head(str(path)))
    out = []
    for number, raw in enumerate(path.read_bytes().splitlines(), 1):
        out.append(reader.read(Line(number, 0, raw, json.loads(raw), None)))
    return out


def test_detected_by_its_header_and_keyed_by_the_session_id(tmp_path: Path) -> None:
    path = write(tmp_path / "x.jsonl", [{"role": "user", "content": "hi"}])
    head = read_head(str(path))
    assert detect(head) is AgentsSdkReader
    assert AgentsSdkReader(str(path), head).session_key == "chat-9"
    # a pi header (type "session" with a cwd) is still pi's
    assert (
        detect([{"type": "session", "id": "p", "cwd": "/x", "version": 3}]) is not AgentsSdkReader
    )


def test_each_item_shape_becomes_its_row(tmp_path: Path) -> None:
    items = [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "look at this"},
                {
                    "type": "input_image",
                    "image_url": "data:image/png;base64,iVBORw0KGgo=",
                    "detail": "auto",
                },
            ],
        },
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "I should read it."}],
        },
        {"type": "function_call", "call_id": "c1", "name": "read", "arguments": '{"path": "a.py"}'},
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": [{"type": "input_text", "text": "print(1)"}],
        },
        {"type": "custom_tool_call", "call_id": "c2", "name": "patch", "input": "*** Begin"},
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "applied"},
        {
            "type": "web_search_call",
            "id": "ws_1",
            "status": "completed",
            "action": {"type": "search", "query": "x"},
        },
        {
            "type": "message",
            "role": "assistant",
            "id": "m1",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "Done.", "annotations": []},
                {"type": "refusal", "refusal": "not that"},
            ],
        },
        {"type": "compaction", "encrypted_content": "abc"},
        {"type": "something_new", "x": 1},
    ]
    rows = read(write(tmp_path / "s.jsonl", items))
    (
        header,
        system,
        user,
        reasoning,
        call,
        output,
        custom,
        custom_out,
        search,
        answer,
        compaction,
        unknown,
    ) = rows
    assert header.kind is EntryKind.EVENT and header.cwd == "/home/dev/app"
    assert system.kind is EntryKind.CONTEXT and not system.visible
    assert user.kind is EntryKind.MESSAGE and user.role is Role.USER and user.is_request
    assert user.blocks[0] == TextBlock("look at this")
    assert isinstance(user.blocks[1], MediaBlock) and user.blocks[1].media_type == "image"
    assert reasoning.blocks == (ThinkingBlock("I should read it."),)
    assert call.role is Role.ASSISTANT and call.blocks == (
        ToolCallBlock("c1", "read", {"path": "a.py"}),
    )
    assert output.role is Role.TOOL and output.blocks == (ToolResultBlock("c1", False, "print(1)"),)
    assert custom.blocks == (ToolCallBlock("c2", "patch", "*** Begin"),)
    assert custom_out.blocks == (ToolResultBlock("c2", False, "applied"),)
    assert search.role is Role.ASSISTANT and search.blocks == (TextBlock("[web_search_call]"),)
    assert answer.blocks == (TextBlock("Done."), TextBlock("not that"))
    assert compaction.kind is EntryKind.EVENT and not compaction.visible
    assert unknown.kind is EntryKind.OPAQUE
    assert [r.native_id for r in rows[1:]] == [f"i{n}" for n in range(len(items))]
    assert rows[2].parent_native_id == "i0"


def test_popped_and_cleared_items_fall_off_the_conversation(
    tmp_path: Path, sqlite_store: SqlStore
) -> None:
    path = write(
        tmp_path / "s.jsonl",
        [
            {"role": "user", "content": "one"},  # i0
            {"role": "user", "content": "two"},  # i1
            {"type": "pop", "id": "i2", "parent_id": "i0", "pops": "i1"},
            {"role": "user", "content": "three"},  # i3
        ],
    )
    report = import_paths(sqlite_store, [path])
    assert report.sessions == ["chat-9"]
    rows = sqlite_store.entries_by_seq("chat-9", range(10))
    assert [(r.text(), r.visible) for r in rows if r.kind is EntryKind.MESSAGE] == [
        ("one", True),
        ("two", False),
        ("three", True),
    ]
    with open(path, "a") as fh:
        fh.write(json.dumps({"type": "clear", "id": "i4", "parent_id": None}) + "\n")
        fh.write(
            json.dumps(
                {
                    "type": "item",
                    "id": "i5",
                    "parent_id": "i4",
                    "item": {"role": "user", "content": "four"},
                }
            )
            + "\n"
        )
    import_paths(sqlite_store, [path])
    rows = sqlite_store.entries_by_seq("chat-9", range(10))
    assert [(r.text(), r.visible) for r in rows if r.kind is EntryKind.MESSAGE] == [
        ("one", False),
        ("two", False),
        ("three", False),
        ("four", True),
    ]
    session = sqlite_store.get_session("chat-9")
    assert session.harness == "openai-agents" and session.project == "/home/dev/app"
    assert session.title == "one"


FIELDS = (
    "content",
    "call_id",
    "name",
    "arguments",
    "input",
    "output",
    "summary",
    "role",
    "type",
    "status",
)


def test_fuzz_hostile_items_never_raise_and_every_line_is_accounted_for(tmp_path: Path) -> None:
    """Items whose fields hold hostile values (``tests.hostile``: deep, huge, wrong-typed,
    lone surrogates) and hostile line envelopes import without an exception escaping, each
    line a row, a skip or a reported error."""
    import itertools

    from hypothesis import given, strategies as st

    from continuity.store import open_store
    from tests.hostile import _dump, file_settings, hostile_value

    kinds = st.sampled_from(
        [
            "message",
            "function_call",
            "function_call_output",
            "custom_tool_call",
            "reasoning",
            "web_search_call",
            "computer_call_output",
            None,
        ]
    )
    item = st.fixed_dictionaries(
        {"type": kinds},
        optional={
            f: st.one_of(hostile_value(), st.sampled_from(["user", "assistant", "c1"]))
            for f in FIELDS
            if f != "type"
        },
    )
    line = st.one_of(
        st.builds(
            lambda i, n: {"type": "item", "id": f"i{n}", "parent_id": None, "item": i},
            item,
            st.integers(0, 5),
        ),
        st.fixed_dictionaries(
            {"type": st.sampled_from(["item", "pop", "clear", "other"])},
            optional={
                "id": hostile_value(),
                "parent_id": hostile_value(),
                "item": hostile_value(),
                "timestamp": hostile_value(),
            },
        ),
    )
    counter = itertools.count()
    with open_store(tmp_path / "fuzz.db") as store:

        @file_settings(max_examples=40, deadline=20_000)
        @given(lines=st.lists(line, min_size=1, max_size=6))
        def check(lines: list[dict[str, Any]]) -> None:
            n = next(counter)
            head = dict(HEADER, id=f"fuzz-{n}")
            path = tmp_path / f"fuzz-{n}.jsonl"
            path.write_bytes(b"".join(_dump(v) + b"\n" for v in [head, *lines]))
            (report,) = import_paths(store, [path]).files
            assert report.status == "imported", (report.status, report.reason)
            assert (
                report.imported + report.duplicate + report.skipped + len(report.errors)
                == len(lines) + 1
            ), report.to_dict()

        check()
