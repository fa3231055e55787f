"""Issue 18, item 4: two faults of one family, held to the lossless rule.

1. Two records glued on one line (``{...}{...}``, a lost newline) both import, for every
   harness's reader, with a warning naming the line; the rows that point at the first one keep
   their parent.
2. A line whose ``uuid`` repeats an earlier one with different content is kept: the usable
   (else the newer) copy is in the view, both stay raw, a warning names both lines; identical
   copies stay one row.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.continuation.view import build_continuation
from continuity.formats.importer import import_file
from continuity.formats.jsonl import salvage
from continuity.store import open_store
from tests.formats.test_importer import cc, cc_pairs, jl, rebuilt
from tests.paths import SHARED_DATA

KEY = "cc-importer-test"


def glue(data: bytes, line: int) -> bytes:
    """``data`` with the LF ending line ``line`` (1-based) removed: it and the next are glued."""
    lines = data.split(b"\n")
    lines[line - 1 : line + 1] = [lines[line - 1] + lines[line]]
    return b"\n".join(lines)


def view(store, key: str) -> list[tuple]:
    """What a row says and where it stands, without its line number."""
    return [
        (
            e.native_id,
            e.parent_native_id,
            e.kind.value,
            e.role.value,
            e.text(),
            e.visible,
            e.is_request,
            e.type_name,
        )
        for e in store.entries(key, limit=5000)
    ]


# --------------------------------------------------------------------------- glued records


def test_salvage_splits_glued_records_and_cuts_only_fragments() -> None:
    """The head run from byte 0 and the tail run to the line's end; an object nested in a torn
    fragment is not a record; the cut bytes are counted in UTF-8 bytes."""
    assert salvage(b'{"a":1}{"b":2} {"c":3}').records == ({"a": 1}, {"b": 2}, {"c": 3})
    assert salvage(b'{"a":1}{"b":2}').cut_bytes == 0
    # a torn record between, cut just after an inner object: that object is no record
    torn = salvage(b'{"type":"a"}{"t":"\xc3\xa9","m":{"x":1}{"type":"b"}{"type":"c"}')
    assert (torn.records, torn.cut_bytes) == (({"type": "a"}, {"type": "b"}, {"type": "c"}), 21)
    assert salvage(b'\x00\x00{"n":1}').records == ({"n": 1},)  # untyped: the line's end
    tail = salvage(b'{"a":1}{"type":"us')  # a record, then the start of a torn one
    assert (tail.records, tail.cut_bytes, tail.trailing) == (({"a": 1},), 11, True)
    whole = salvage(b'{"t":"x","m":{"x":1}}}')  # a whole record first: kept, the rest cut
    assert (whole.records, whole.cut_bytes, whole.trailing) == (
        ({"t": "x", "m": {"x": 1}},),
        1,
        True,
    )
    assert salvage(b"not json at all") is None


def test_two_claude_code_records_glued_on_one_line_both_import(sqlite_store, tmp_path) -> None:
    """Request 2 and its answer glued on line 3: both rows import (6 rows from 5 lines), the
    warning names line 3, request 4 (whose parent is answer 3, the second glued record) has no
    dangling parent, and the raw line is kept whole."""
    lines = cc_pairs(6)
    data = glue(jl(*lines), 3)
    path = tmp_path / "glued.jsonl"
    path.write_bytes(data)
    report = import_file(sqlite_store, path)
    assert report.errors == []
    assert (report.lines_read, report.imported) == (5, 6)
    ((number, warning),) = report.warnings
    assert number == 3 and warning.startswith("not JSON: ")
    assert warning.endswith("; 2 records glued on one line (a lost newline), each imported")
    rows = sqlite_store.entries(KEY)
    assert [(e.native_id, e.parent_native_id, e.text(), e.source.line) for e in rows] == [
        ("u0", None, "request 0", 1),
        ("a1", "u0", "answer 1", 2),
        ("u2", "a1", "request 2", 3),
        ("a3", "u2", "answer 3", 3),
        ("u4", "a3", "request 4", 4),
        ("a5", "u4", "answer 5", 5),
    ]
    assert rebuilt(sqlite_store, path) == data
    assert len(sqlite_store.runs(KEY)) == 3


@pytest.mark.parametrize(
    "sample,line",
    [
        ("claude-code/subagent.jsonl", 40),
        ("codex/with-compaction.jsonl", 8),
        ("codex/real-exec-0.135.jsonl", 4),
        ("pi/v3-short-session.jsonl", 3),
        ("pi/large-session.jsonl", 20),
        # issue 42: the real Gemini CLI file, its call-and-results record glued to the echo
        ("../gemini_cli/tmp/project/chats/session-2026-12-06T17-58-a8d780f4.jsonl", 7),
        (
            "../qwen_code/projects/-home-dev-project/chats/"
            "2ecab5a2-3075-491a-9bc7-6ff7d2093815.jsonl",
            4,
        ),
        ("../copilot_cli/session-state/58525cc8-39e8-4bf9-9685-da918eed942a/events.jsonl", 6),
    ],
)
def test_glued_lines_read_as_the_unglued_file_in_every_reader(tmp_path, sample, line) -> None:
    """Each harness: a real sample with two of its lines glued imports the same rows as the
    sample itself (ids, parents, kinds, text, visibility, requests), one line fewer read, and
    the same continuation. pi v1 ids come from line numbers, so there the glued pair's ids are
    ``v1-N`` and ``v1-N.2`` and every later id is one line lower; the rows say the same."""
    src = SHARED_DATA / sample
    glued = tmp_path / "glued" / src.name
    glued.parent.mkdir()
    glued.write_bytes(glue(src.read_bytes(), line))
    with (
        open_store(f"sqlite:///{tmp_path / 'a.db'}") as a,
        open_store(f"sqlite:///{tmp_path / 'b.db'}") as b,
    ):
        want = import_file(a, src)
        got = import_file(b, glued)
        assert got.errors == [] and got.lines_read == want.lines_read - 1
        assert got.imported == want.imported
        assert [n for n, m in got.warnings if "glued" in m] == [line]
        rows_a, rows_b = view(a, want.session_key), view(b, got.session_key)
        if sample == "pi/large-session.jsonl":
            ids = {f"v1-{n}": f"v1-{n - 1}" if n > line + 1 else f"v1-{n}" for n in range(1, 2000)}
            ids[f"v1-{line + 1}"] = f"v1-{line}.2"

            def renumber(r: tuple) -> tuple:
                return (ids.get(r[0], r[0]), ids.get(r[1], r[1]), *r[2:])

            rows_a = [renumber(r) for r in rows_a]
        assert rows_b == rows_a
        cont_a = build_continuation(a, want.session_key).to_dict()
        cont_b = build_continuation(b, got.session_key).to_dict()
        assert cont_b["request"] == cont_a["request"]
        assert [m.get("text") for m in cont_b["messages"]] == [
            m.get("text") for m in cont_a["messages"]
        ]


# --------------------------------------------------------------------------- repeated uuids


def _continue_json(path: Path, home: Path, key: str) -> dict:
    runner = CliRunner()
    imported = runner.invoke(app, ["import", str(path), "--home", str(home)])
    assert imported.exit_code == 0, imported.output
    result = runner.invoke(app, ["continue", key, "--json", "--home", str(home)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_repeated_uuid_with_content_wins_over_an_empty_first_copy(sqlite_store, tmp_path):
    """u2 is first written without content (line 3), then complete (line 4): both rows and
    both raw lines are kept, the warning names lines 3 and 4, the view holds the complete one
    and its request reaches ``continue --json``."""
    lines = cc_pairs(2)
    empty = cc("u2", "a1", "user", None, ts=2)
    del empty["message"]["content"]
    full = cc("u2", "a1", "user", "please fix the March export", ts=2)
    data = jl(*lines, empty, full)
    path = tmp_path / "repeat.jsonl"
    path.write_bytes(data)
    report = import_file(sqlite_store, path)
    assert (report.lines_read, report.imported, report.duplicate) == (4, 4, 0)
    assert (
        4,
        "u2 repeats line 3 with different content: both kept; this one is used in the view",
    ) in report.warnings
    rows = sqlite_store.entries(KEY)
    assert [(e.native_id, e.source.line, e.visible, e.is_request, e.text()) for e in rows] == [
        ("u0", 1, True, True, "request 0"),
        ("a1", 2, True, False, "answer 1"),
        ("u2", 3, False, False, ""),
        ("u2", 4, True, True, "please fix the March export"),
    ]
    assert rebuilt(sqlite_store, path) == data
    d = build_continuation(sqlite_store, KEY).to_dict()
    assert d["request"]["text"] == "please fix the March export"
    cli = _continue_json(path, tmp_path / "home", KEY)
    assert cli["request"]["text"] == "please fix the March export"


def test_repeated_uuid_newer_differing_copy_wins_an_empty_newer_copy_does_not(
    sqlite_store, tmp_path
):
    """Both copies usable: the newer is in view (line 4), the older kept out of it. A newer
    copy without content never hides a complete one: it is kept, out of view, and the warning
    says which line stays in view."""
    lines = cc_pairs(2)
    first = cc("u2", "a1", "user", "export March", ts=2)
    second = cc("u2", "a1", "user", "export March and April", ts=2)
    empty = cc("u2", "a1", "user", None, ts=3)
    del empty["message"]["content"]
    path = tmp_path / "repeat.jsonl"
    path.write_bytes(jl(*lines, first, second, empty, first))
    report = import_file(sqlite_store, path)
    assert (report.lines_read, report.imported, report.duplicate) == (6, 5, 1)
    assert [m for n, m in report.warnings if n == 5 and "repeats" in m] == [
        "u2 repeats line 3 with different content: both kept; line 4 stays in the view "
        "(this copy has no usable content)"
    ]
    rows = sqlite_store.entries(KEY)[2:]
    assert [(e.source.line, e.visible, e.text()) for e in rows] == [
        (3, False, "export March"),
        (4, True, "export March and April"),
        (5, False, ""),
    ]
    assert (
        build_continuation(sqlite_store, KEY).to_dict()["request"]["text"]
        == "export March and April"
    )


def test_repeated_uuid_across_imports_hides_the_stored_empty_copy(sqlite_store, tmp_path):
    """The empty copy is imported first; the file grows with the complete copy: the second
    import keeps it and puts the stored empty row out of view (one transaction). A third
    import of the same file adds nothing."""
    lines = cc_pairs(2)
    empty = cc("u2", "a1", "user", [], ts=2)
    full = cc("u2", "a1", "user", "rerun the nightly export", ts=2)
    path = tmp_path / "grow.jsonl"
    path.write_bytes(jl(*lines, empty))
    import_file(sqlite_store, path)
    with open(path, "ab") as fh:
        fh.write(
            jl(
                full,
                cc(
                    "a3",
                    "u2",
                    "assistant",
                    [{"type": "text", "text": "done"}],
                    ts=4,
                    stop="end_turn",
                ),
            )
        )
    second = import_file(sqlite_store, path)
    assert (second.lines_read, second.imported, second.duplicate) == (2, 2, 0)
    rows = sqlite_store.entries(KEY)
    assert [(e.native_id, e.visible, e.text()) for e in rows] == [
        ("u0", True, "request 0"),
        ("a1", True, "answer 1"),
        ("u2", False, ""),
        ("u2", True, "rerun the nightly export"),
        ("a3", True, "done"),
    ]
    assert (
        build_continuation(sqlite_store, KEY).to_dict()["request"]["text"]
        == "rerun the nightly export"
    )
    third = import_file(sqlite_store, path)
    assert (third.imported, third.duplicate) == (0, 0)
    assert sqlite_store.get_session(KEY).entry_count == 5


def test_replayed_uuid_with_same_content_and_another_session_id_is_one_row(sqlite_store, tmp_path):
    """Resume replays a line under its uuid with another ``sessionId`` and timestamp: the
    content is the same, so it stays one row (formats.md §1.6: keep the first)."""
    lines = cc_pairs(4)
    replay = dict(lines[1], sessionId="other-session", timestamp="2026-09-02T00:00:00.000Z")
    path = tmp_path / "replay.jsonl"
    path.write_bytes(jl(*lines[:2], replay, *lines[2:]))
    report = import_file(sqlite_store, path)
    assert (report.imported, report.duplicate) == (4, 1)
    assert not [m for _, m in report.warnings if "repeats" in m]


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(2, 8), copies=st.lists(st.integers(0, 7), max_size=5), empty_first=st.booleans()
)
def test_identical_copies_never_change_the_view(tmp_path_factory, n, copies, empty_first):
    """Property: identical copies of any lines, anywhere later in the file, add no row and
    leave the view as it was; an empty first copy of a request followed by the whole line
    still gives the whole line's request to the continuation."""
    lines = cc_pairs(n)
    data = list(lines)
    for i in copies:
        data.append(lines[i % n])
    if empty_first:
        empty = dict(lines[0], message={"role": "user"})
        data.insert(0, empty)
    tmp = tmp_path_factory.mktemp("repeats")
    with open_store(f"sqlite:///{tmp / 'a.db'}") as a, open_store(f"sqlite:///{tmp / 'b.db'}") as b:
        (tmp / "plain.jsonl").write_bytes(jl(*lines))
        (tmp / "copies.jsonl").write_bytes(jl(*data))
        import_file(a, tmp / "plain.jsonl")
        report = import_file(b, tmp / "copies.jsonl")
        assert report.duplicate == len(copies)
        shown = [(e.native_id, e.text()) for e in b.entries(KEY) if e.visible]
        assert shown == [(e.native_id, e.text()) for e in a.entries(KEY) if e.visible]
        # the same request text (its seq is one later behind an empty first copy)
        assert (
            build_continuation(b, KEY).to_dict()["request"]["text"]
            == build_continuation(a, KEY).to_dict()["request"]["text"]
        )
