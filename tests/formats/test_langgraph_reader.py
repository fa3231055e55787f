"""The reader of the LangGraph session record (``formats/langgraph``, issue 46 item 2): found by
content, one row per line, what a view needs taken from LangChain's message dict."""

from __future__ import annotations

import orjson

from continuity.core.model import EntryKind, Role, RunStatus, TextBlock, ToolCallBlock
from continuity.formats import detect
from continuity.formats.jsonl import Line
from continuity.formats.langgraph import LangGraphReader, content_text


def _line(number: int, message: dict, **extra: object) -> Line:
    data = {
        "langgraph": 1,
        "thread_id": "t/1",
        "checkpoint_id": "c",
        "index": number - 1,
        "recorded_at": "2026-12-06T10:00:00+00:00",
        "message": message,
        **extra,
    }
    return Line(number, 0, orjson.dumps(data), data, None)


def test_detect_picks_the_reader_only_for_a_record() -> None:
    record = _line(1, {"type": "human", "data": {"content": "hi", "id": "m1"}}).data
    assert detect([record]) is LangGraphReader
    assert detect([{"type": "session", "id": "x", "cwd": "/p"}]) is not LangGraphReader
    assert not LangGraphReader.sniff([{"langgraph": "1", "thread_id": "t", "message": {}}])


def test_rows_of_a_record() -> None:
    first = _line(
        1,
        {
            "type": "human",
            "data": {
                "content": [
                    {"type": "text", "text": "look at this"},
                    {"type": "image_url", "image_url": "x"},
                ],
                "id": "m1",
            },
        },
        cwd="/work/p",
    )
    reader = LangGraphReader("/r.jsonl", [first.data])
    assert reader.session_key == "t/1"
    user = reader.read(first)
    assert (user.kind, user.role, user.is_request, user.native_id, user.cwd) == (
        EntryKind.MESSAGE,
        Role.USER,
        True,
        "m1",
        "/work/p",
    )
    assert user.blocks == (TextBlock("look at this"),)
    assert user.timestamp is not None and user.timestamp.isoformat() == "2026-12-06T10:00:00+00:00"
    call = reader.read(
        _line(
            2,
            {
                "type": "ai",
                "data": {
                    "content": "",
                    "id": "m2",
                    "tool_calls": [{"id": "c1", "name": "ls", "args": {"path": "."}}],
                },
            },
        )
    )
    assert call.blocks == (ToolCallBlock("c1", "ls", {"path": "."}),) and call.run_end is None
    done = reader.read(_line(3, {"type": "ai", "data": {"content": "done", "id": "m3"}}))
    assert done.run_end is RunStatus.FINISHED and done.text() == "done"
    odd = reader.read(_line(4, {"type": "remove", "data": {"id": "m2"}}))
    assert (odd.kind, odd.visible) == (EntryKind.OPAQUE, False)
    assert reader.facts().cwd == "/work/p" and reader.facts().title == "look at this"


def test_a_line_without_a_message_is_kept_opaque_and_warned() -> None:
    line = _line(1, {"type": "human"})
    reader = LangGraphReader("/r.jsonl", [line.data])
    entry = reader.read(line)
    assert (entry.kind, entry.visible) == (EntryKind.OPAQUE, False)
    assert reader.warnings == [(1, "message: expected an object with type and data (kept opaque)")]


def test_content_text() -> None:
    assert content_text("plain") == "plain"
    assert content_text(["a", {"type": "text", "text": "b"}, {"type": "image"}]) == "a\n\nb"
    assert content_text(None) == ""
