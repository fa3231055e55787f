"""Gemini CLI's legacy one-document chats (issue 42 leftover: ``chats/session-*.json``, written
whole by Gemini CLI 0.2.0 to 0.38.2), on files written from 0.38.2's source
(``tests/fixtures/gemini_cli_legacy/README.md``): a legacy chat gives the rows its JSONL
migration gives, kept byte for byte; a re-import adds nothing, a rewrite that grew adds only
its new messages; the legacy chat and the JSONL Gemini CLI migrates it to are one session; a
truncated or invalid chat is skipped with a reason naming where it breaks, nothing else lost."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from continuity.browse.view import source_copy
from continuity.formats import detect, document, parallel
from continuity.formats.discovery import discover, is_session_file
from continuity.formats.gemini_cli import GeminiCliReader
from continuity.formats.importer import import_file, import_paths
from continuity.store import open_store
from continuity.usage.report import collect

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "gemini_cli_legacy"
CHATS = FIXTURES / "tmp" / "legacy-project" / "chats"
SID = "5c0b1e2a-9f4d-4c1e-8a57-3e6b2d7f90a1"
LEGACY = CHATS / "session-2026-03-20T10-15-5c0b1e2a.json"
SUB = "b3c4d5e6-f7a8-4b9c-8d0e-1f2a3b4c5d6e"
SUBAGENT = CHATS / SID / f"{SUB}.json"
PAIR_SID = "7d41a9c3-2e8b-4f6d-a1c0-9b8e7f6d5c4b"
PAIR_JSON = CHATS / "session-2026-03-21T09-02-7d41a9c3.json"
PAIR_JSONL = CHATS / "session-2026-03-21T09-02-7d41a9c3.jsonl"
CALL = "run_shell_command_1773999345120_0"


def rows(store, key: str) -> list[tuple]:
    """Every row as (kind, role, visible, request, native id, text, calls, results)."""
    return [
        (
            e.kind.value,
            e.role.value,
            e.visible,
            e.is_request,
            e.native_id,
            e.text(),
            [(c.id, c.name, c.arguments) for c in e.tool_calls()],
            [(r.call_id, r.is_error, r.text) for r in e.tool_results()],
        )
        for e in store.entries(key)
    ]


def as_jsonl(path: Path) -> bytes:
    """The JSONL a legacy chat stands for: its members but ``messages`` as the first line, then
    one line per message (what Gemini CLI's migration writes, less its ``$set``)."""
    doc = json.loads(path.read_text())
    messages = doc.pop("messages")
    return b"".join(json.dumps(r).encode() + b"\n" for r in [doc, *messages])


def write_doc(path: Path, doc: dict) -> None:
    """Write ``doc`` as Gemini CLI 0.38.2 does: ``JSON.stringify(doc, null, 2)``."""
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False))


@pytest.fixture
def chats(tmp_path: Path) -> Path:
    """A copy of the fixture's ``chats`` folder (tests change it)."""
    folder = tmp_path / "tmp" / "legacy-project" / "chats"
    shutil.copytree(CHATS, folder)
    (folder.parent / ".project_root").write_text("/home/dev/legacy-project")
    return folder


def test_a_legacy_chat_gives_the_rows_of_its_jsonl(sqlite_store, tmp_path: Path) -> None:
    report = import_file(sqlite_store, LEGACY)
    assert (report.status, report.harness, report.session_key) == ("imported", "gemini-cli", SID)
    assert (report.errors, report.warnings, report.opaque) == ([], [], 0)
    # five parts (the header, then one per message) hold six rows: the call's result too
    assert (report.lines_read, report.imported) == (5, 6)
    assert rows(sqlite_store, SID) == [
        ("event", "system", False, False, f"{SID}#session", "", [], []),
        (
            "message",
            "user",
            True,
            True,
            "0f3c2a9e-6d0b-4a8e-9b1f-2c7d5e4a1b90",
            "Count the lines of README.md",
            [],
            [],
        ),
        (
            "message",
            "assistant",
            True,
            False,
            "7a1e4c2d-3b5f-4e6a-8c9d-0f1a2b3c4d5e",
            "",
            [
                (
                    CALL,
                    "run_shell_command",
                    {"command": "wc -l README.md", "description": "Count the lines of README.md"},
                )
            ],
            [],
        ),
        (
            "message",
            "tool",
            True,
            False,
            f"7a1e4c2d-3b5f-4e6a-8c9d-0f1a2b3c4d5e#result/{CALL}",
            "",
            [],
            [
                (
                    CALL,
                    False,
                    "Command: wc -l README.md\nDirectory: (root)\nOutput: 12 README.md\n"
                    "Error: (none)\nExit Code: 0\nSignal: (none)\nBackground PIDs: (none)\n"
                    "Process Group PGID: 48211",
                )
            ],
        ),
        (
            "message",
            "assistant",
            True,
            False,
            "c2d3e4f5-a6b7-4c8d-9e0f-1a2b3c4d5e6f",
            "README.md has 12 lines.",
            [],
            [],
        ),
        (
            "event",
            "system",
            False,
            False,
            "e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b",
            "Request cancelled.",
            [],
            [],
        ),
    ]
    thinking = [b for e in sqlite_store.entries(SID) for b in e.blocks if b.type == "thinking"]
    assert [b.text for b in thinking] == ["Counting lines: I will run wc -l on README.md."]
    session = sqlite_store.get_session(SID)
    assert (session.harness, session.project, session.title) == (
        "gemini-cli",
        "/home/dev/legacy-project",
        "Count README.md lines",
    )
    assert [(r.status.value, r.request_seq, r.end_seq) for r in sqlite_store.runs(SID)] == [
        ("finished", 1, 4)
    ]
    # the same objects written as JSONL (a record a line) make the same rows
    jsonl = tmp_path / "chats" / "session-2026-03-20T10-15-5c0b1e2a.jsonl"
    jsonl.parent.mkdir()
    jsonl.write_bytes(as_jsonl(LEGACY))
    with open_store(f"sqlite:///{tmp_path / 'jsonl.db'}") as other:
        assert import_file(other, jsonl).imported == 6
        assert rows(other, SID) == rows(sqlite_store, SID)


def test_a_legacy_chat_is_kept_byte_for_byte(sqlite_store) -> None:
    report = import_file(sqlite_store, LEGACY)
    data = LEGACY.read_bytes()
    assert not data.endswith(b"\n")  # JSON.stringify writes no newline at the end
    assert report.offset == len(data)
    kept = list(sqlite_store.raw_lines(report.path))
    # the parts start on the header's line and each message's `{` line
    assert [line.line_no for line in kept] == [1, 7, 17, 66, 82]
    assert kept[1].data.startswith(b'    {\n      "id": "0f3c2a9e') and kept[1].data.endswith(b"},")
    assert kept[-1].data.endswith(b'"summary": "Count README.md lines"\n}')
    copy = source_copy(sqlite_store, SID)
    assert (copy.data, copy.check) == (data, "identical")
    rows_ = list(sqlite_store.entries(SID))
    assert [e.source.line for e in rows_] == [1, 7, 17, 17, 66, 82]


def test_importing_twice_and_a_rewrite_with_nothing_new_add_nothing(
    sqlite_store, chats: Path
) -> None:
    first = import_paths(sqlite_store, [chats], home=chats.parent / "ws")
    counts = {k: len(list(sqlite_store.entries(k))) for k in first.sessions}
    again = import_paths(sqlite_store, [chats], home=chats.parent / "ws")
    assert [f.status for f in again.files] == ["unchanged"] * 4
    # Gemini CLI rewrites the file whole: here only `lastUpdated` changed
    path = chats / LEGACY.name
    doc = json.loads(path.read_text())
    doc["lastUpdated"] = "2026-03-20T10:17:00.000Z"
    write_doc(path, doc)
    third = import_file(sqlite_store, path)
    assert (third.status, third.imported, third.duplicate, third.errors) == (
        "imported",
        0,
        6,
        [],
    )
    assert {k: len(list(sqlite_store.entries(k))) for k in first.sessions} == counts
    assert source_copy(sqlite_store, SID).check == "identical"  # the positions follow


def test_a_rewritten_chat_that_grew_adds_only_its_new_messages(sqlite_store, chats: Path) -> None:
    """Gemini CLI 0.38.2 writes the ``gemini`` message before its tool calls, then adds them
    to it in place: each rewrite adds what it did not hold, the run goes on across imports."""
    path = chats / LEGACY.name
    full = json.loads(LEGACY.read_text())
    early = json.loads(LEGACY.read_text())
    early["messages"] = early["messages"][:2]
    del early["messages"][1]["toolCalls"]
    del early["summary"]
    write_doc(path, early)
    first = import_file(sqlite_store, path)
    assert (first.imported, first.errors) == (3, [])
    assert [(r.status.value, r.end_seq) for r in sqlite_store.runs(SID)] == [("finished", 2)]
    write_doc(path, full)
    second = import_file(sqlite_store, path)
    assert (second.errors, second.imported, second.duplicate) == ([], 4, 2)
    got = rows(sqlite_store, SID)
    assert [r[4] for r in got] == [
        f"{SID}#session",
        "0f3c2a9e-6d0b-4a8e-9b1f-2c7d5e4a1b90",
        "7a1e4c2d-3b5f-4e6a-8c9d-0f1a2b3c4d5e",  # without its call: out of view
        "7a1e4c2d-3b5f-4e6a-8c9d-0f1a2b3c4d5e",  # with it
        f"7a1e4c2d-3b5f-4e6a-8c9d-0f1a2b3c4d5e#result/{CALL}",
        "c2d3e4f5-a6b7-4c8d-9e0f-1a2b3c4d5e6f",
        "e1f2a3b4-c5d6-4e7f-8a9b-0c1d2e3f4a5b",
    ]
    assert [r[2] for r in got] == [False, True, False, True, True, True, False]
    assert sqlite_store.get_session(SID).title == "Count README.md lines"
    assert [(r.status.value, r.request_seq, r.end_seq) for r in sqlite_store.runs(SID)] == [
        ("finished", 1, 5)
    ]
    assert source_copy(sqlite_store, SID).check == "identical"
    assert import_file(sqlite_store, path).status == "unchanged"


def test_the_legacy_chat_and_its_migration_are_one_session(sqlite_store, tmp_path: Path) -> None:
    """Gemini CLI 0.39+ resumes a legacy chat by writing ``<name>.jsonl`` (the metadata, every
    message, a ``$set`` of the session id) and appending there: one session, each message
    once, in either import order."""
    report = import_paths(sqlite_store, [PAIR_JSON, PAIR_JSONL], home=tmp_path / "ws")
    legacy, migrated = report.files
    assert legacy.session_key == migrated.session_key == PAIR_SID
    assert (legacy.imported, legacy.duplicate) == (3, 0)
    # its metadata and two messages are duplicates; the $set and the later turn are new
    assert (migrated.imported, migrated.duplicate, migrated.errors) == (5, 3, [])
    expected = [
        ("event", f"{PAIR_SID}#session", ""),
        ("message", "21f0e9d8-c7b6-4a5f-9e4d-3c2b1a0f9e8d", "What does main.py print?"),
        ("message", "38a7b6c5-d4e3-4f2a-8b1c-0d9e8f7a6b5c", "It prints `hello`."),
        ("event", None, ""),
        ("message", "4b5c6d7e-8f9a-4b0c-9d1e-2f3a4b5c6d7e", "And what does test.py print?"),
        ("event", None, ""),
        ("message", "5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f", "It prints `ok`."),
        ("event", None, ""),
    ]
    assert [(r[0], r[4], r[5]) for r in rows(sqlite_store, PAIR_SID)] == expected
    assert [s.key for s in sqlite_store.list_sessions()].count(PAIR_SID) == 1
    assert len(sqlite_store.list_sessions()) == 1
    assert [(r.status.value, r.request_seq) for r in sqlite_store.runs(PAIR_SID)] == [
        ("finished", 1),
        ("finished", 4),
    ]
    # the other order: the JSONL first (an import before this reader knew legacy chats)
    with open_store(f"sqlite:///{tmp_path / 'other.db'}") as other:
        first = import_file(other, PAIR_JSONL)
        second = import_file(other, PAIR_JSON)
        assert first.session_key == second.session_key == PAIR_SID
        assert (second.imported, second.duplicate) == (0, 3)
        assert [(r[0], r[5]) for r in rows(other, PAIR_SID)] == [(k, t) for k, _, t in expected]
        assert len(other.list_sessions()) == 1


def test_a_migration_found_after_its_legacy_chat_was_deleted_joins_it(
    sqlite_store, chats: Path
) -> None:
    """The join follows the stored session's file, not the file still being there."""
    import_file(sqlite_store, chats / PAIR_JSON.name)
    (chats / PAIR_JSON.name).unlink()
    migrated = import_file(sqlite_store, chats / PAIR_JSONL.name)
    assert (migrated.session_key, migrated.imported) == (PAIR_SID, 5)
    assert [s.key for s in sqlite_store.list_sessions()] == [PAIR_SID]


def test_a_subagent_chat_is_keyed_under_its_parent(sqlite_store) -> None:
    report = import_file(sqlite_store, SUBAGENT)
    assert report.session_key == f"{SID}/{SUB}"
    session = sqlite_store.get_session(f"{SID}/{SUB}")
    assert (session.agent_id, session.project) == (SUB, "/home/dev/legacy-project")
    texts = [r[5] for r in rows(sqlite_store, f"{SID}/{SUB}") if r[2]]
    assert texts == ["Find the license of this project", "The project is MIT licensed."]


@pytest.mark.parametrize(
    "cut,where",
    [
        # Gemini CLI stopped mid-write; a hand edit broke a value
        (lambda d: d[: len(d) // 2], "unexpected end of data: line 48 column 6"),
        (lambda d: d.replace(b'"type": "gemini"', b'"type": gemini', 1), "line 20 column 15"),
    ],
)
def test_a_truncated_or_invalid_chat_is_skipped_naming_where_it_breaks(
    sqlite_store, chats: Path, cut, where
) -> None:
    path = chats / LEGACY.name
    import_paths(sqlite_store, [chats], home=chats.parent / "ws")
    before = rows(sqlite_store, SID)
    good = path.read_bytes()
    path.write_bytes(cut(good))
    report = import_paths(sqlite_store, [chats], home=chats.parent / "ws")
    bad = next(f for f in report.files if f.path.endswith(LEGACY.name))
    assert bad.status == "skipped"
    assert bad.reason.startswith("not a complete JSON document (truncated or invalid): ")
    assert where in bad.reason and "nothing read from it" in bad.reason
    assert [f.status for f in report.files if f is not bad] == ["unchanged"] * 3
    assert rows(sqlite_store, SID) == before  # the rows it gave before stay
    path.write_bytes(good)  # the file as the store holds it: nothing to read
    assert import_file(sqlite_store, path).status == "unchanged"
    assert source_copy(sqlite_store, SID).check == "identical"


def test_a_broken_chat_never_imported_is_skipped_and_the_rest_imports(
    sqlite_store, chats: Path
) -> None:
    path = chats / LEGACY.name
    path.write_bytes(path.read_bytes()[:-40])
    report = import_paths(sqlite_store, [chats], home=chats.parent / "ws")
    statuses = {Path(f.path).name: f.status for f in report.files}
    assert statuses == {
        LEGACY.name: "skipped",
        SUBAGENT.name: "imported",
        PAIR_JSON.name: "imported",
        PAIR_JSONL.name: "imported",
    }
    bad = next(f for f in report.files if f.status == "skipped")
    assert "unexpected end of data: line 89 column 17" in bad.reason
    assert sqlite_store.get_session(SID) is None
    assert report.exit_code == 0


def test_discovery_takes_gemini_chats_named_json_and_nothing_else(tmp_path: Path) -> None:
    tree = tmp_path / "tmp" / "p"
    shutil.copytree(CHATS, tree / "chats")
    (tree / "settings.json").write_text("{}")
    (tree / "chats" / "notes.json").write_text("{}")
    (tree / "logs.json").write_text("[]")
    found = [p.relative_to(tree).as_posix() for p in discover([tmp_path])]
    assert found == [
        f"chats/{SID}/{SUB}.json",
        f"chats/{LEGACY.name}",
        f"chats/{PAIR_JSON.name}",
        f"chats/{PAIR_JSONL.name}",
    ]
    assert is_session_file(Path("/h/.gemini/tmp/p/chats/session-x.json"))
    assert not is_session_file(Path("/h/.gemini/tmp/p/chats/x.json"))
    assert not is_session_file(Path("/h/.gemini/settings.json"))


def test_watch_takes_a_legacy_chat_an_event_names(tmp_path: Path) -> None:
    from continuity.archive.archiver import Archiver

    root = tmp_path / "gemini"
    shutil.copytree(CHATS, root / "p" / "chats")
    archiver = Archiver({"gemini_cli": root}, home=tmp_path / "ws")
    legacy = root / "p" / "chats" / LEGACY.name
    assert archiver.changed_files([legacy, root / "p" / "settings.json"]) == [legacy.resolve()]


def test_usage_counts_legacy_tokens_once_across_the_pair(sqlite_store, tmp_path: Path) -> None:
    import_paths(sqlite_store, [CHATS], home=tmp_path / "ws")
    found = sorted(
        (u.session_key, u.at.isoformat(), u.model, u.input_tokens, u.output_tokens)
        for u in collect(sqlite_store)
    )
    assert found == [
        (SID, "2026-03-20T10:15:44.902000+00:00", "gemini-2.5-pro", 5210, 115),
        (SID, "2026-03-20T10:15:47.031000+00:00", "gemini-2.5-pro", 5391, 9),
        (f"{SID}/{SUB}", "2026-03-20T10:15:53.409000+00:00", "gemini-2.5-flash", 1804, 8),
        (PAIR_SID, "2026-03-21T09:02:14.002000+00:00", "gemini-2.5-pro", 4120, 7),
        (PAIR_SID, "2026-04-22T16:40:06.550000+00:00", "gemini-2.5-pro", 4301, 6),
    ]


def test_a_parallel_import_stores_what_a_serial_one_stores(tmp_path: Path, monkeypatch) -> None:
    """Issue 43's workers parse a legacy chat as the importer does."""
    took: list[Path] = []
    real_take = parallel.ParsePool.take

    def take(self, path):
        parsed = real_take(self, path)
        if parsed is not None:
            took.append(path)
        return parsed

    monkeypatch.setattr(parallel.ParsePool, "take", take)
    got = {}
    for workers in (1, 2):
        monkeypatch.setenv(parallel.WORKERS_ENV, str(workers))
        with open_store(f"sqlite:///{tmp_path / f'{workers}.db'}") as s:
            report = import_paths(s, [CHATS], home=tmp_path / f"ws{workers}")
            got[workers] = (
                [(f.status, f.imported, f.duplicate, f.lines_read) for f in report.files],
                {k: rows(s, k) for k in report.sessions},
                {f.path: [(r.line_no, r.data) for r in s.raw_lines(f.path)] for f in report.files},
            )
    assert len(took) == 4
    assert got[1] == got[2]


# ---------------------------------------------------------------------------- the parts


def test_parts_join_back_to_the_file_and_records_sharing_a_line_share_a_part() -> None:
    """A part starts on each line a record starts on; records on one line share it; a BOM and
    CRLF line ends stay in the raw bytes; a member that is no object is kept raw, named."""
    data = (
        b'\xef\xbb\xbf{\r\n  "sessionId": "s", "projectHash": "h",\r\n  "messages": [\r\n'
        b'    {"id": "a", "type": "user"}, 7, {"id": "b", "type": "info"},\r\n'
        b'    "not an object",\r\n'
        b'    {"id": "c",\r\n     "type": "gemini"}\r\n'
        b'  ],\r\n  "kind": "main"\r\n}\r\n'
    )
    parts = document.split(data, "messages")
    assert b"\n".join(p.raw for p in parts) + b"\n" == data
    assert [p.number for p in parts] == [1, 4, 5, 6]
    assert [p.offset for p in parts] == [
        0,
        data.index(b"\n", data.index(b"messages")) + 1,
        data.index(b'    "not'),
        data.index(b'    {"id": "c"'),
    ]
    assert [[r.get("id") for r in p.records] for p in parts] == [[None], ["a", "b"], [], ["c"]]
    assert parts[0].data == {"sessionId": "s", "projectHash": "h", "kind": "main"}
    assert parts[1].salvaged == "1 member of 'messages' that is not an object (kept raw, not read)"
    assert (parts[2].data, parts[2].error) == (None, "not a JSON object: string")
    with pytest.raises(ValueError, match="line 3 column 1"):
        document.split(b'{\n  "messages": [\n', "messages")
    assert [p.data for p in document.split(b'{\n  "a": 1\n}', None)] == [{"a": 1}]


def test_a_one_line_legacy_chat_is_read_as_its_messages(sqlite_store, tmp_path: Path) -> None:
    """A legacy chat written on one line is a JSONL line: its metadata record holds the
    messages (Gemini CLI's own loader reads such a line so too)."""
    path = tmp_path / "chats" / "session-one-line.json"
    path.parent.mkdir()
    path.write_bytes(json.dumps(json.loads(LEGACY.read_text())).encode())
    assert not document.is_document(path)
    report = import_file(sqlite_store, path)
    assert (report.lines_read, report.imported, report.errors) == (1, 6, [])
    with open_store(f"sqlite:///{tmp_path / 'doc.db'}") as other:
        import_file(other, LEGACY)
        assert rows(sqlite_store, SID) == rows(other, SID)


def test_detection_reads_a_legacy_chat_as_gemini_cli() -> None:
    assert document.is_document(LEGACY) and not document.is_document(PAIR_JSONL)
    head = document.file_head(str(LEGACY))
    assert [sorted(h) for h in head] == [
        ["kind", "lastUpdated", "messages", "projectHash", "sessionId", "startTime", "summary"]
    ]
    assert detect(head, str(LEGACY)) is GeminiCliReader


def test_a_jsonl_whose_first_line_was_torn_to_a_brace_stays_jsonl(
    sqlite_store, tmp_path: Path
) -> None:
    """Found by tests/formats/test_fuzz.py: a JSONL file whose first line is ``{`` alone is not
    a document (its second line is a record, not a member name): its bad line is reported
    and the rest imports, as before legacy chats were read."""
    path = tmp_path / "chats" / "session-torn.jsonl"
    path.parent.mkdir()
    path.write_bytes(b"{\n" + as_jsonl(LEGACY))
    assert not document.is_document(path)
    report = import_file(sqlite_store, path)
    assert (report.status, report.imported, [n for n, _ in report.errors]) == ("imported", 6, [1])
