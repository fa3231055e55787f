"""A tool call whose arguments hold an integer beyond 64 bits (issue 45 item 11, found by
``bench/fuzz.py``): orjson refuses to encode such integers; a line orjson cannot parse (here a
lone surrogate escape, B43) is parsed by the standard library, which keeps them as ints; and
the places that encoded a harness value with bare ``orjson.dumps`` failed on it. The import
lost the whole file (``TypeError: Integer exceeds 64-bit range`` out of ``import_file``, from
the search index); the summary digest, ``show``'s row view and a resumed session's JSONL
failed on such a row as the reader gives it (live capture's path). Each now encodes it
through ``core.text.json_bytes``. (Read back from the store, orjson reads the stored digits as
a float: the number survives as ``1.8446744073709552e+19``; not a crash, noted.)"""

from __future__ import annotations

import json
from pathlib import Path

from continuity.browse.view import row_view
from continuity.continuation.summarize.bounds import digest
from continuity.core.config import database_url
from continuity.core.model import Entry, EntryKind, Role, ToolCallBlock
from continuity.formats.importer import import_file
from continuity.resume.files import jsonl
from continuity.store import open_store

WIDE = 2**64 + 1  # 18446744073709551617: over orjson's 64-bit range
SESSION = "0b8a4f2e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"


def _session_file(folder: Path, project: Path) -> Path:
    def line(n: int, kind: str, content: object, parent: str | None) -> str:
        return json.dumps(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": str(project),
                "sessionId": SESSION,
                "version": "2.1.38",
                "type": kind,
                "message": {"role": kind, "content": content},
                "uuid": f"00000000-0000-4000-8000-{n:012d}",
                "timestamp": f"2026-12-01T10:00:0{n}.000Z",
            }
        )

    uid = "00000000-0000-4000-8000-{:012d}".format
    lines = [
        line(1, "user", "count the rows", None),
        line(
            2,
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "toolu_wide",
                    "name": "Bash",
                    "input": {"command": "wc -l rows.csv \ud800", "limit": WIDE},
                }
            ],
            uid(1),
        ),
        line(
            3,
            "user",
            [{"type": "tool_result", "tool_use_id": "toolu_wide", "content": "42 rows.csv"}],
            uid(2),
        ),
        line(4, "assistant", [{"type": "text", "text": "42 rows."}], uid(3)),
    ]
    path = folder / f"{SESSION}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert str(WIDE) in path.read_text() and "\\ud800" in path.read_text()
    return path


def test_wide_integer_in_tool_arguments_is_imported_and_searchable(tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    source = _session_file(tmp_path, project)
    with open_store(database_url(tmp_path / "ws")) as store:
        report = import_file(store, source)
        assert (report.status, report.imported, report.errors) == ("imported", 4, [])
        rows = store.entries(report.session_key)
        call = next(b for e in rows for b in e.blocks if isinstance(b, ToolCallBlock))
        assert call.arguments["command"] == "wc -l rows.csv \ufffd"
        assert call.arguments["limit"] == float(WIDE)
        hits = store.search_entries(["rows"], limit=10)
        assert any(h.session_key == report.session_key and h.seq == 1 for h in hits), hits


def _wide_row() -> Entry:
    return Entry(
        EntryKind.MESSAGE,
        Role.ASSISTANT,
        blocks=(ToolCallBlock("toolu_wide", "Bash", {"command": "wc -l rows.csv", "limit": WIDE}),),
    )


def test_wide_integer_in_a_row_is_digested():
    digested = digest(_wide_row())
    assert str(WIDE) in digested.calls[0].args, digested


def test_wide_integer_in_a_row_is_shown():
    view = row_view(_wide_row(), raw=False)
    assert [b.kind for b in view.blocks] == ["tool_call"]
    assert f'"limit": {WIDE}' in view.blocks[0].text, view.blocks[0].text


def test_wide_integer_is_written_to_a_resumed_sessions_jsonl():
    assert jsonl([{"arguments": {"limit": WIDE}}]) == b'{"arguments":{"limit":%d}}\n' % WIDE
