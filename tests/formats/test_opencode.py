"""OpenCode (issue 18, item 2): its SQLite and JSON-file layouts detected by content, mirrored
and imported; parts rewritten in place re-import as the newer copy, never as duplicates.

``tests/fixtures/opencode/sqlite/opencode.db`` is what OpenCode 1.18.33 wrote for one
``opencode run`` against the e2e fake model (one bash call, then an answer; its account and
event tables emptied). ``json/storage`` holds the same records in the JSON-file layout of
OpenCode before 1.2 ([doc]: field names as that layout documents them)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from continuity.continuation.view import build_continuation
from continuity.formats import opencode
from continuity.formats.importer import import_paths

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "opencode"
SID = "ses_dc89fe0f0ffem5dFCryXxhDChw"
REQUEST = '"list the files please"'  # as OpenCode stored the prompt `opencode run` got
ANSWER = "Fake model answer: the command ran."
CALL = "call_1175a8283eb34d75aa6c"
TEXT_PART = "prt_237605903001kS1CuD3b6RLh53"
TOOL_PART = "prt_237603be4001EnrNlizBFHrdsc"


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A copy of the SQLite fixture (tests change it as OpenCode would)."""
    folder = tmp_path / "opencode"
    shutil.copytree(FIXTURES / "sqlite", folder)
    return folder


def conversation(store, key: str) -> list[tuple]:
    """The visible rows: (role, kind, text), a tool call or result as ``→ name`` / ``← text``."""
    out = []
    for e in store.entries(key):
        if not e.visible:
            continue
        text = e.text() or "".join(
            [f"→ {c.name}" for c in e.tool_calls()] + [f"← {r.text}" for r in e.tool_results()]
        )
        out.append((e.role.value, e.kind.value, text))
    return out


def test_layouts_are_detected_by_content(tmp_path: Path, data_dir: Path) -> None:
    """The SQLite layout by its tables and columns, the JSON one by its session records; a
    folder with an unrelated ``opencode.db`` or empty ``storage`` folders is neither."""
    assert opencode.layout(data_dir) == "sqlite"
    assert opencode.layout(FIXTURES / "json") == "json"
    assert opencode.layout(FIXTURES / "json" / "storage") == "json"
    other = tmp_path / "other"
    (other / "storage" / "session" / "global").mkdir(parents=True)
    (other / "storage" / "message").mkdir()
    (other / "storage" / "session" / "global" / "x.json").write_text('{"name": "x"}')
    sqlite3.connect(other / "opencode.db").execute("CREATE TABLE session (id TEXT)").close()
    assert opencode.layout(other) is None
    assert opencode.layout(tmp_path / "missing") is None


def test_sqlite_session_imports_with_its_call_paired(
    sqlite_store, data_dir: Path, tmp_path: Path
) -> None:
    """The real run: request, the bash call and its result, the answer; the rest (steps,
    message records, the session record) are known events. The continuation has the request
    and the call paired with its result."""
    report = import_paths(sqlite_store, [data_dir], home=tmp_path / "ws")
    (f,) = report.files
    assert (f.harness, f.session_key, f.version, f.opaque, f.warnings) == (
        "opencode",
        SID,
        "1.18.33",
        0,
        [],
    )
    assert (f.lines_read, f.imported, f.non_conversation) == (12, 12, 8)
    assert conversation(sqlite_store, SID) == [
        ("user", "message", REQUEST),
        ("assistant", "message", "→ bash"),
        ("tool", "message", "← continuity-e2e-tool-ran\n"),
        ("assistant", "message", ANSWER),
    ]
    session = sqlite_store.get_session(SID)
    assert (session.harness, session.project) == ("opencode", "/tmp/oc-try/root/project")
    view = build_continuation(sqlite_store, SID).to_dict()
    assert view["request"]["text"] == REQUEST and view["refusal"] is None
    blocks = [b for m in view["messages"] for b in m["content"]]
    assert [(b["type"], b.get("id") or b.get("call_id")) for b in blocks[:2]] == [
        ("tool_call", CALL),
        ("tool_result", CALL),
    ]
    assert blocks[0]["arguments"] == {"command": "echo continuity-e2e-tool-ran"}
    assert blocks[2] == {"type": "text", "text": ANSWER}
    runs = sqlite_store.runs(SID)
    assert [r.status.value for r in runs] == ["finished"]


def test_json_layout_reads_as_the_sqlite_one(sqlite_store, tmp_path: Path) -> None:
    """The same records in the JSON-file layout give the same conversation and version."""
    report = import_paths(sqlite_store, [FIXTURES / "json"], home=tmp_path / "ws")
    (f,) = report.files
    assert (f.session_key, f.version, f.opaque, f.imported) == (SID, "1.1.65", 0, 12)
    assert conversation(sqlite_store, SID)[0] == ("user", "message", REQUEST)
    assert conversation(sqlite_store, SID)[-1] == ("assistant", "message", ANSWER)
    assert build_continuation(sqlite_store, SID).to_dict()["request"]["text"] == REQUEST


def test_parts_rewritten_in_place_reimport_as_the_newer_copy(
    sqlite_store, data_dir: Path, tmp_path: Path
) -> None:
    """Unchanged storage adds nothing. OpenCode rewriting the answer part (new text, newer
    ``time_updated``) adds one row holding it, the old copy leaves the view; rewriting the
    tool part with the same call and output (only its metadata) adds no row: two identical
    copies counted as duplicates."""
    ws = tmp_path / "ws"
    import_paths(sqlite_store, [data_dir], home=ws)
    again = import_paths(sqlite_store, [data_dir], home=ws)
    assert [(f.status, f.imported) for f in again.files] == [("unchanged", 0)]
    db = sqlite3.connect(data_dir / "opencode.db")
    edited = {"type": "text", "text": "Fake model answer: edited in place."}
    db.execute(
        "UPDATE part SET data = ?, time_updated = time_updated + 5 WHERE id = ?",
        (json.dumps(edited), TEXT_PART),
    )
    (raw,) = db.execute("SELECT data FROM part WHERE id = ?", (TOOL_PART,)).fetchone()
    tool = json.loads(raw)
    tool["state"]["time"]["compacted"] = 1796225399000
    db.execute(
        "UPDATE part SET data = ?, time_updated = time_updated + 5 WHERE id = ?",
        (json.dumps(tool), TOOL_PART),
    )
    db.commit()
    db.close()
    third = import_paths(sqlite_store, [data_dir], home=ws)
    (f,) = third.files
    assert (f.lines_read, f.imported, f.duplicate) == (3, 1, 2)
    assert any(
        m.startswith(f"{TEXT_PART} repeats line 10 with different content") for _, m in f.warnings
    )
    assert conversation(sqlite_store, SID)[-1] == (
        "assistant",
        "message",
        "Fake model answer: edited in place.",
    )
    assert [e.text() for e in sqlite_store.entries(SID)].count(ANSWER) == 1  # kept, hidden
    assert sqlite_store.get_session(SID).entry_count == 13
    fourth = import_paths(sqlite_store, [data_dir], home=ws)
    assert [(f.status, f.imported) for f in fourth.files] == [("unchanged", 0)]


def test_a_subagent_session_is_keyed_under_its_parent(
    sqlite_store, data_dir: Path, tmp_path: Path
) -> None:
    """A session with a ``parent_id`` (a task's subagent) is ``<parent>/<id>``, named a
    subagent of the parent."""
    db = sqlite3.connect(data_dir / "opencode.db")
    db.execute(
        "INSERT INTO session (id, project_id, parent_id, slug, directory, title, "
        "version, time_created, time_updated) SELECT 'ses_child1', project_id, id, "
        "'child', directory, 'subtask', version, time_created + 1, time_updated + 1 "
        "FROM session WHERE id = ?",
        (SID,),
    )
    db.commit()
    db.close()
    report = import_paths(sqlite_store, [data_dir], home=tmp_path / "ws")
    assert sorted(f.session_key for f in report.files) == [SID, f"{SID}/ses_child1"]
    child = sqlite_store.get_session(f"{SID}/ses_child1")
    assert (child.agent_id, child.parent_key) == ("ses_child1", SID)


def test_json_layout_rewritten_part_reimports_once(sqlite_store, tmp_path: Path) -> None:
    """The JSON-file layout's cursor is the files' modification time: a part file rewritten
    (newer mtime) is read again and replaces its older copy in view; nothing else is read
    again, and an unchanged folder adds nothing."""
    data = tmp_path / "opencode"
    shutil.copytree(FIXTURES / "json", data)
    ws = tmp_path / "ws"
    import_paths(sqlite_store, [data], home=ws)
    (part,) = data.glob(f"storage/part/*/{TEXT_PART}.json")
    record = json.loads(part.read_text())
    record["text"] = "Fake model answer: rewritten file."
    part.write_text(json.dumps(record))
    future = part.stat().st_mtime_ns + 10_000_000_000
    os.utime(part, ns=(future, future))
    (f,) = import_paths(sqlite_store, [data], home=ws).files
    assert (f.lines_read, f.imported, f.duplicate) == (1, 1, 0)
    assert conversation(sqlite_store, SID)[-1] == (
        "assistant",
        "message",
        "Fake model answer: rewritten file.",
    )
    (g,) = import_paths(sqlite_store, [data], home=ws).files
    assert (g.status, g.imported) == ("unchanged", 0)


def test_kilo_database_imports_as_harness_kilo(sqlite_store, tmp_path: Path) -> None:
    """Kilo CLI 7.7.7 (an OpenCode fork, issue 42) writes OpenCode's tables to ``kilo.db``: the
    recorded run (tests/fixtures/kilo) imports as harness ``kilo``, calls paired, and an
    OpenCode mirror beside it stays ``opencode``."""
    kilo = Path(__file__).resolve().parents[1] / "fixtures" / "kilo"
    assert opencode.database(kilo) == (kilo / "kilo.db", "kilo")
    report = import_paths(sqlite_store, [kilo], home=tmp_path / "ws")
    (f,) = report.files
    key = "ses_db35bfda5ffeA5Onlbv6Fuj7Pf"
    assert (f.harness, f.session_key, f.version, f.opaque, f.errors) == (
        "kilo",
        key,
        "7.7.7",
        0,
        [],
    )
    rows = conversation(sqlite_store, key)
    assert rows[0] == ("user", "message", '"List the files here"')
    assert [r for r in rows if r[0] == "tool"] == [
        ("tool", "message", "← continuity-e2e-tool-ran\n")
    ] * 2
    session = sqlite_store.get_session(key)
    assert (session.harness, session.project) == ("kilo", "/home/dev/project")
    again = import_paths(sqlite_store, [kilo], home=tmp_path / "ws")
    assert sum(x.imported for x in again.files) == 0


def test_an_opencode_or_kilo_folder_is_found_below_the_folder_named(
    sqlite_store, tmp_path: Path
) -> None:
    """Fresh-user review of issue 42: `import DIR` found an OpenCode or Kilo database only when
    DIR held it directly; `import ~/.local/share` (or `~`) found nothing. Now the folders up
    to EXPAND_DEPTH levels below DIR are looked at: both sessions import, each as its harness;
    one deeper than that is not looked for."""
    from continuity.formats.discovery import EXPAND_DEPTH

    share = tmp_path / "home" / ".local" / "share"
    shutil.copytree(FIXTURES / "sqlite", share / "opencode")
    shutil.copytree(FIXTURES.parent / "kilo", share / "kilo")
    deep = tmp_path / "home" / "a" / "b" / "c" / "d" / "opencode"
    shutil.copytree(FIXTURES / "json", deep)
    assert len(deep.relative_to(tmp_path / "home").parts) == EXPAND_DEPTH + 1
    report = import_paths(sqlite_store, [tmp_path / "home"], home=tmp_path / "ws")
    got = sorted((f.harness, f.session_key) for f in report.files)
    assert got == [("kilo", "ses_db35bfda5ffeA5Onlbv6Fuj7Pf"), ("opencode", SID)]
    assert all(f.imported > 0 and not f.errors for f in report.files)
    shutil.rmtree(deep)
    again = import_paths(sqlite_store, [share], home=tmp_path / "ws")
    assert sorted((f.harness, f.status) for f in again.files) == [
        ("kilo", "unchanged"),
        ("opencode", "unchanged"),
    ]
