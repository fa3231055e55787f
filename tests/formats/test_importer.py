"""Importer (spec/formats.md §5): the real samples, idempotence, growing files, pending tails,
bad lines (B35, B36), encodings (B43, B45), lossless raw lines (B61), ordering (B53, B54),
duplicates, the pi leaf path, derived runs, discovery, and the continuation contract over
every sample session."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest

from continuity.continuation.view import build_continuation
from continuity.core.errors import InputError
from continuity.formats.importer import discover, import_file, import_paths
from continuity.store import open_store
from tests.paths import SAMPLE_DIRS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importer"

#: Every sample file: (lines, rows imported, session key), checked against the files themselves
#: (`wc -l`, and the `sessionId` / `session_meta.payload.id` / pi header `id` in each file).
SAMPLES = {
    "claude-code/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": (
        29,
        29,
        "1af7fc5e-8455-4414-9ccd-011d40f70b2a",
    ),
    "claude-code/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": (
        53,
        53,
        "5c0375b4-57a5-4f26-b12d-d022ee4e51b7",
    ),
    "claude-code/short.jsonl": (15, 15, "55604662-cf2a-4331-851a-ec234028f8ca"),
    "claude-code/subagent.jsonl": (96, 96, "491e126e-1e71-469c-ade2-fcc8af567c74"),
    "claude-code/tool_heavy.jsonl": (39, 39, "d6e0bada-1959-4eec-a9d2-0bfade768d8f"),
    "codex/event-shapes.jsonl": (21, 21, "event-shapes-session"),
    "codex/interaction-detail.jsonl": (14, 14, "interaction-detail-session"),
    "codex/real-exec-0.135.jsonl": (11, 11, "019e9625-802f-7e91-840a-cfe88d14117a"),
    "codex/sample-session.jsonl": (10, 9, "sample-session-1"),
    "codex/with-compaction.jsonl": (20, 20, "compact-codex-001"),
    "pi/large-session.jsonl": (1019, 1019, "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"),
    "pi/v3-short-session.jsonl": (6, 6, "019e963d-6bd6-7ade-8a49-256ac3391bdd"),
}
HARNESS = {"claude-code": "claude-code", "codex": "codex", "pi": "pi"}


# --------------------------------------------------------------------------- helpers


def jl(*objs: dict) -> bytes:
    """JSONL bytes of ``objs`` (compact, UTF-8, one LF-terminated line each)."""
    return b"".join(
        json.dumps(o, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" for o in objs
    )


def cc(
    uuid: str,
    parent: str | None,
    kind: str,
    content,
    *,
    ts: int = 0,
    sid: str = "cc-importer-test",
    stop: str | None = None,
    **extra,
) -> dict:
    """A Claude Code ``user`` or ``assistant`` line."""
    if kind == "user":
        message = {"role": "user", "content": content}
    else:
        message = {
            "id": f"msg_{uuid}",
            "role": "assistant",
            "model": "claude-opus-4-6",
            "content": content,
            "stop_reason": stop,
        }
    line = {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/ana/ledger",
        "sessionId": sid,
        "version": "2.1.40",
        "type": kind,
        "uuid": uuid,
        "timestamp": f"2026-09-01T08:{ts // 60:02d}:{ts % 60:02d}.000Z",
        "message": message,
    }
    line.update(extra)
    return line


def cc_pairs(n: int, *, start: int = 0, sid: str = "cc-importer-test") -> list[dict]:
    """``n`` lines alternating a typed request and its end_turn answer, one chain."""
    out, parent = [], None
    for i in range(start, start + n):
        if i % 2 == 0:
            line = cc(f"u{i}", parent, "user", f"request {i}", ts=i, sid=sid)
        else:
            line = cc(
                f"a{i}",
                parent,
                "assistant",
                [{"type": "text", "text": f"answer {i}"}],
                ts=i,
                sid=sid,
                stop="end_turn",
            )
        out.append(line)
        parent = line["uuid"]
    return out


def pi_msg(i: str, parent: str | None, role: str, text: str, ts: int) -> dict:
    msg: dict = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        msg["stopReason"] = "stop"
    return {
        "type": "message",
        "id": i,
        "parentId": parent,
        "timestamp": f"2026-09-03T09:00:{ts:02d}.000Z",
        "message": msg,
    }


PI_HEADER = {
    "type": "session",
    "version": 3,
    "id": "pi-tree-0001",
    "timestamp": "2026-09-03T09:00:00.000Z",
    "cwd": "/home/ana/tree",
}
#: m3 has two answers: m4 (branch A) and m5 (branch B, the leaf: last in the file).
PI_TREE = [
    PI_HEADER,
    pi_msg("m1", None, "user", "Pick a name", 1),
    pi_msg("m2", "m1", "assistant", "ledgerkit?", 2),
    pi_msg("m3", "m2", "user", "Shorter", 3),
    pi_msg("m4", "m3", "assistant", "lk", 4),
    pi_msg("m5", "m3", "assistant", "ldg", 5),
]


def cjson_len(value) -> int:
    """UTF-8 length of compact JSON, non-ASCII not escaped (the README's unit)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def check_contract(d: dict) -> None:
    """The `continue --json` contract invariants (README)."""
    assert set(d) == {
        "session",
        "budget_bytes",
        "used_bytes",
        "summary",
        "request",
        "gap",
        "gaps",
        "messages",
        "notes",
        "copied",
        "clipped",
        "refusal",
    }
    expected = cjson_len(d["messages"])
    if d["summary"] is not None:
        expected += cjson_len(d["summary"]["text"])
    if d["request"] is not None:
        expected += cjson_len(d["request"]["text"])
    assert d["used_bytes"] == expected
    assert d["used_bytes"] <= d["budget_bytes"]
    reserved = d["used_bytes"] + (cjson_len(d["gap"]["text"]) if d["gap"] else 0)
    assert reserved <= d["budget_bytes"]
    if d["refusal"] is not None:
        assert d["refusal"]["reason"] in (
            "protected_context_over_budget",
            "incomplete_request",
            "source_read_failure",
        )
        assert d["summary"] is None and d["request"] is None and d["messages"] == []
    calls, answered = [], []
    for m in d["messages"]:
        assert m["role"] in ("user", "assistant", "tool")
        assert m["copied"] is d["copied"]
        for b in m["content"]:
            if b["type"] == "tool_call":
                calls.append(b["id"])
            elif b["type"] == "tool_result":
                assert b["call_id"] in calls, f"result {b['call_id']} before its call"
                answered.append(b["call_id"])
    assert sorted(answered) == sorted(calls)
    assert len(set(answered)) == len(answered)
    # log order, except that a run of result-only rows follows its calls' order (issue 45
    # item 4d): sorted back by seq, each such run gives the log order again
    seqs, run = [], []
    for m in d["messages"] + [{"role": "end", "content": [], "seq": None}]:
        if (
            m["role"] == "tool"
            and m["content"]
            and all(b["type"] == "tool_result" for b in m["content"])
        ):
            run.append(m["seq"])
            continue
        seqs += sorted(run) + ([m["seq"]] if m["seq"] is not None else [])
        run = []
    assert seqs == sorted(seqs)
    json.dumps(d, ensure_ascii=False).encode("utf-8")  # no lone surrogates anywhere


def rebuilt(store, path: Path) -> bytes:
    return b"\n".join(r.data for r in store.raw_lines(str(path))) + b"\n"


# --------------------------------------------------------------------------- the samples


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """A SQLite store holding every sample file, imported once for the read-only tests."""
    db = tmp_path_factory.mktemp("samples") / "continuity.db"
    with open_store(f"sqlite:///{db}") as s:
        yield s, import_paths(s, SAMPLE_DIRS)


def test_import_samples_exact_counts_and_keys(samples, shared_data):
    """Every sample file imports with its exact row count and session key; one bad line."""
    sqlite_store, report = samples
    got = {str(Path(f.path).relative_to(shared_data)): f for f in report.files}
    assert sorted(got) == sorted(SAMPLES)
    for name, (lines, rows, key) in SAMPLES.items():
        f = got[name]
        assert f.status == "imported", name
        assert f.harness == HARNESS[name.split("/")[0]]
        assert (f.lines_read, f.imported, f.session_key) == (lines, rows, key), name
        assert f.duplicate == 0 and f.blank == 0 and f.pending_tail_bytes == 0
        assert f.offset == (shared_data / name).stat().st_size
        assert sqlite_store.get_session(key).entry_count == rows
        if name != "codex/sample-session.jsonl":
            assert f.errors == [], name
    bad = got["codex/sample-session.jsonl"]
    assert [n for n, _ in bad.errors] == [10]
    assert bad.errors[0][1].startswith("not JSON")
    issues = sqlite_store.issues(bad.path)
    assert [(i.line_no, i.byte_length) for i in issues] == [(10, len(b"this is not json"))]
    assert report.totals() == {
        "files": 12,
        "sessions": 12,
        "lines_read": 1333,
        "imported": 1332,
        "duplicate": 0,
        "opaque": 3,
        "non_conversation": 221,
        "errors": 1,
        "skipped_files": 0,
        "absent_paths": 0,
    }


def test_import_reimport_adds_nothing(store, shared_data):
    """A second import of the samples reports every file unchanged and adds no rows."""
    first = import_paths(store, SAMPLE_DIRS)
    counts = {k: store.get_session(k).entry_count for k in first.sessions}
    raw = {f.path: len(list(store.raw_lines(f.path))) for f in first.files}
    second = import_paths(store, SAMPLE_DIRS)
    assert [f.status for f in second.files] == ["unchanged"] * 12
    assert [f.session_key for f in second.files] == [f.session_key for f in first.files]
    assert second.totals()["imported"] == 0 and second.totals()["lines_read"] == 0
    assert {k: store.get_session(k).entry_count for k in first.sessions} == counts
    assert {f.path: len(list(store.raw_lines(f.path))) for f in first.files} == raw
    assert len(store.issues()) == 1


def test_import_grown_file_adds_only_new_lines(store, shared_data, tmp_path):
    """A file that grew resumes at the old size; only the appended lines become rows."""
    src = shared_data / "claude-code/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
    path = tmp_path / "grow.jsonl"
    shutil.copy(src, path)
    old_size = path.stat().st_size
    first = import_file(store, path)
    key = first.session_key
    assert (first.imported, key) == (29, "1af7fc5e-8455-4414-9ccd-011d40f70b2a")
    last = json.loads(src.read_bytes().splitlines()[-1])
    added = [
        cc("g1", last["uuid"], "user", "Also add a changelog entry", sid=key),
        cc("g2", "g1", "assistant", [{"type": "text", "text": "Added."}], sid=key, stop="end_turn"),
        cc("g3", "g2", "user", "Thanks", sid=key),
    ]
    with open(path, "ab") as fh:
        fh.write(jl(*added))
    second = import_file(store, path)
    assert second.status == "imported"
    assert second.resumed_from == old_size
    assert (second.lines_read, second.imported, second.duplicate) == (3, 3, 0)
    assert second.offset == path.stat().st_size
    rows = store.entries(key, after_seq=28)
    assert [(e.seq, e.native_id, e.source.line) for e in rows] == [
        (29, "g1", 30),
        (30, "g2", 31),
        (31, "g3", 32),
    ]
    assert store.get_session(key).entry_count == 32
    assert rebuilt(store, path) == path.read_bytes()
    assert import_file(store, path).status == "unchanged"


def test_import_grown_after_accepted_unterminated_line_keeps_line_numbers(
    sqlite_store, shared_data, tmp_path
):
    """After an accepted unterminated last line, appended lines keep their physical numbers."""
    path = tmp_path / "f.jsonl"
    path.write_bytes((shared_data / "codex/interaction-detail.jsonl").read_bytes().rstrip(b"\n"))
    assert import_file(sqlite_store, path).imported == 14
    with open(path, "ab") as fh:
        fh.write(b"\nnot json\n")
    report = import_file(sqlite_store, path)
    assert report.blank == 0
    assert [n for n, _ in report.errors] == [15]


# --------------------------------------------------------------------------- bad lines


def test_import_pending_tail_is_retried_not_reported(sqlite_store, shared_data, tmp_path):
    """B36 kind: a half-written last line is no error; once completed it imports."""
    path = tmp_path / "pi.jsonl"
    shutil.copy(shared_data / "pi/v3-short-session.jsonl", path)
    size = path.stat().st_size
    full = jl(pi_msg("x1", "65697c71", "user", "half done", 9)).rstrip(b"\n")
    head, rest = full[:40], full[40:]
    with open(path, "ab") as fh:
        fh.write(head)
    first = import_file(sqlite_store, path)
    assert (first.imported, first.errors, first.offset) == (6, [], size)
    assert first.pending_tail_bytes == 40
    assert sqlite_store.issues(str(path)) == []
    with open(path, "ab") as fh:
        fh.write(rest + b"\n")
    second = import_file(sqlite_store, path)
    assert second.resumed_from == size
    assert (second.lines_read, second.imported, second.errors) == (1, 1, [])
    assert second.pending_tail_bytes == 0 and second.offset == path.stat().st_size
    row = sqlite_store.entries(first.session_key, after_seq=5)
    assert [(e.seq, e.native_id, e.text(), e.source.line) for e in row] == [
        (6, "x1", "half done", 7)
    ]
    assert rebuilt(sqlite_store, path) == path.read_bytes()


def test_import_nul_line_is_one_error(sqlite_store, tmp_path):
    """B35: 100 valid lines, 500 NULs, 99 valid: 199 rows and one error at line 101."""
    lines = cc_pairs(200)
    data = jl(*lines[:100]) + b"\x00" * 500 + b"\n" + jl(*lines[101:])
    path = tmp_path / "nul.jsonl"
    path.write_bytes(data)
    report = import_file(sqlite_store, path)
    assert report.errors == [(101, "NUL bytes in line (interrupted write)")]
    assert (report.lines_read, report.imported) == (200, 199)
    assert sqlite_store.get_session("cc-importer-test").entry_count == 199
    rows = sqlite_store.entries("cc-importer-test", after_seq=98, limit=3)
    assert [(e.seq, e.native_id, e.source.line) for e in rows] == [
        (99, "a99", 100),
        (100, "a101", 102),
        (101, "u102", 103),
    ]
    (issue,) = sqlite_store.issues(str(path))
    assert (issue.line_no, issue.byte_offset, issue.byte_length) == (
        101,
        len(jl(*lines[:100])),
        500,
    )
    assert rebuilt(sqlite_store, path) == data


def test_import_record_written_after_a_torn_fragment_or_nuls_is_kept(sqlite_store, tmp_path):
    """B35/B36 kinds: a crash left a torn fragment (or a run of NULs) with no LF, and the next
    append landed right after it on the same line. The whole record at the line's end
    imports, the cut-off bytes are a warning naming the line, and the raw line stays whole."""
    lines = cc_pairs(6)
    data = (
        jl(*lines[:2])
        + b'{"type":"user","message":{"content":"hal'
        + jl(lines[2])
        + jl(lines[3])
        + b"\x00" * 300
        + jl(lines[4])
        + jl(lines[5])
    )
    path = tmp_path / "torn.jsonl"
    path.write_bytes(data)
    report = import_file(sqlite_store, path)
    assert report.errors == []
    assert (report.lines_read, report.imported) == (6, 6)
    assert [(n, m.split("; ")[1]) for n, m in report.warnings if "cut off" in m] == [
        (3, "40 bytes before a complete record cut off (kept raw), the record imported"),
        (5, "300 bytes before a complete record cut off (kept raw), the record imported"),
    ]
    rows = sqlite_store.entries("cc-importer-test")
    assert [(e.native_id, e.text(), e.source.line) for e in rows][2:5] == [
        ("u2", "request 2", 3),
        ("a3", "answer 3", 4),
        ("u4", "request 4", 5),
    ]
    d = build_continuation(sqlite_store, "cc-importer-test").to_dict()
    assert d["request"]["text"] == "request 4"  # the newest, not a stale earlier one
    assert rebuilt(sqlite_store, path) == data


def test_import_invalid_utf8_line_is_error_rest_imports(sqlite_store, tmp_path):
    """A line with invalid UTF-8 bytes is an error (raw kept); the lines around it import."""
    lines = cc_pairs(4)
    bad = jl(lines[2]).replace(b"request 2", b"request \xff\xfe 2")
    data = jl(*lines[:2]) + bad + jl(lines[3])
    path = tmp_path / "utf8.jsonl"
    path.write_bytes(data)
    report = import_file(sqlite_store, path)
    assert [n for n, _ in report.errors] == [3]
    assert report.errors[0][1].startswith("invalid UTF-8 at byte")
    assert report.imported == 3
    assert [e.native_id for e in sqlite_store.entries("cc-importer-test")] == ["u0", "a1", "a3"]
    assert rebuilt(sqlite_store, path) == data


def test_import_bom_crlf_and_blank_lines(sqlite_store, shared_data, tmp_path):
    """A leading BOM and CRLF endings are fine; blank lines are counted, not rows or errors."""
    src = (shared_data / "codex/interaction-detail.jsonl").read_bytes()
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(b"\xef\xbb\xbf" + src.replace(b"\n", b"\r\n"))
    report = import_file(sqlite_store, crlf)
    assert (report.status, report.session_key) == ("imported", "interaction-detail-session")
    assert (report.lines_read, report.imported, report.errors, report.blank) == (14, 14, [], 0)
    texts = [
        b.text
        for e in sqlite_store.entries("interaction-detail-session")
        for b in e.blocks
        if hasattr(b, "text")
    ]
    assert texts and not any("\r" in t for t in texts)
    assert rebuilt(sqlite_store, crlf) == crlf.read_bytes()

    lines = src.splitlines(keepends=True)
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"".join(lines[:3]) + b"\n  \n" + b"".join(lines[3:]) + b"not json\n")
    report = import_file(sqlite_store, blank)
    assert report.blank == 2
    assert (report.lines_read, report.imported) == (15, 14)
    assert [n for n, _ in report.errors] == [17]  # physical numbering counts the blank lines


# --------------------------------------------------------------------------- encodings


def test_import_lone_surrogate_and_emoji_in_tool_result(sqlite_store, tmp_path):
    """B43/B45: an escaped lone surrogate becomes U+FFFD, an emoji survives, all UTF-8."""
    sid = "cc-surrogate"
    raw = jl(
        cc("u1", None, "user", "run it", sid=sid),
        cc(
            "a1",
            "u1",
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "Bash",
                    "input": {"command": "cat notes.txt"},
                }
            ],
            sid=sid,
        ),
    )
    raw += (
        b'{"parentUuid":"a1","isSidechain":false,"type":"user","uuid":"t1",'
        b'"sessionId":"cc-surrogate","timestamp":"2026-09-01T08:00:02.000Z",'
        b'"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1",'
        b'"content":"cut \\ud83c here, party \\ud83c\\udf89 and \xf0\x9f\x92\xa9"}]}}\n'
    )
    raw += jl(
        cc("a2", "t1", "assistant", [{"type": "text", "text": "done"}], sid=sid, stop="end_turn")
    )
    path = tmp_path / "sur.jsonl"
    path.write_bytes(raw)
    report = import_file(sqlite_store, path)
    assert (report.imported, report.errors) == (4, [])
    expected = "cut \ufffd here, party \U0001f389 and \U0001f4a9"
    (row,) = sqlite_store.entries(sid, after_seq=1, limit=1)
    assert row.tool_results()[0].text == expected
    assert row.tool_results()[0].text.encode("utf-8")
    d = build_continuation(sqlite_store, sid).to_dict()
    results = [b for m in d["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert [r["text"] for r in results] == [expected]
    json.dumps(d, ensure_ascii=False).encode("utf-8")
    check_contract(d)


def test_import_lone_surrogate_in_claude_tool_arguments(sqlite_store, tmp_path):
    """B45: a lone surrogate in Claude Code tool_use input imports as U+FFFD."""
    sid = "cc-surrogate-args"
    raw = jl(cc("u1", None, "user", "run it", sid=sid))
    raw += (
        b'{"parentUuid":"u1","isSidechain":false,"type":"assistant","uuid":"a1",'
        b'"sessionId":"cc-surrogate-args","timestamp":"2026-09-01T08:00:01.000Z",'
        b'"message":{"id":"m1","role":"assistant","content":[{"type":"tool_use",'
        b'"id":"toolu_1","name":"Bash","input":{"command":"echo \\ud83c"}}]}}\n'
    )
    path = tmp_path / "sur-args.jsonl"
    path.write_bytes(raw)
    report = import_file(sqlite_store, path)
    assert report.imported == 2
    (row,) = sqlite_store.entries(sid, after_seq=0)
    assert row.tool_calls()[0].arguments == {"command": "echo \ufffd"}
    d = build_continuation(sqlite_store, sid).to_dict()
    check_contract(d)
    calls = [b for m in d["messages"] for b in m["content"] if b["type"] == "tool_call"]
    assert [c["arguments"] for c in calls] == [{"command": "echo \ufffd"}]


# --------------------------------------------------------------------------- lossless


@pytest.mark.parametrize(
    "name",
    [
        "codex/sample-session.jsonl",
        "claude-code/subagent.jsonl",
        "pi/large-session.jsonl",
        "codex/with-compaction.jsonl",
        "claude-code/short.jsonl",
    ],
)
def test_import_raw_lines_reproduce_file(samples, shared_data, name):
    """B61: the kept raw lines, joined with LF, are the original file byte for byte."""
    sqlite_store, _ = samples
    path = shared_data / name
    raw = list(sqlite_store.raw_lines(str(path)))
    assert [r.line_no for r in raw] == list(range(1, SAMPLES[name][0] + 1))
    assert rebuilt(sqlite_store, path) == path.read_bytes()


# --------------------------------------------------------------------------- ordering


def test_import_dangling_parent_and_late_sidechain_keep_main_line(sqlite_store):
    """B53/B54: rows after a dangling-parent summary are kept; a later side line is no leaf."""
    path = FIXTURES / "cc-dangling-parent-late-sidechain.jsonl"
    report = import_file(sqlite_store, path)
    key = "b53b54-0000-4000-8000-000000000001"
    assert (report.session_key, report.imported, report.errors) == (key, 10, [])
    d = build_continuation(sqlite_store, key).to_dict()
    check_contract(d)
    assert d["summary"]["entry_id"] == f"{key}:3" and d["summary"]["covers_through_seq"] == 2
    assert "month_range excluded the end month" in d["summary"]["text"]
    assert d["request"] == {"seq": 4, "actor": "user", "text": "Now make the range end-inclusive."}
    assert [(m["seq"], m["role"]) for m in d["messages"]] == [
        (5, "assistant"),
        (6, "tool"),
        (7, "assistant"),
    ]
    assert d["messages"][-1]["content"] == [
        {"type": "text", "text": "Done: month_range now includes the end month."}
    ]
    assert not any("side-chain" in json.dumps(m) for m in d["messages"])
    assert (d["gaps"], d["copied"], d["refusal"]) == ([], False, None)


def test_import_dangling_parent_is_reported(sqlite_store):
    """B53: the import report names the dangling parent."""
    report = import_file(sqlite_store, FIXTURES / "cc-dangling-parent-late-sidechain.jsonl")
    assert any(n == 4 and "X-never-written" in m for n, m in report.warnings)


def test_import_repeated_uuid_is_duplicate(sqlite_store, tmp_path):
    """A Claude Code line repeated with the same uuid (resume replay) is imported once."""
    lines = cc_pairs(4)
    path = tmp_path / "replay.jsonl"
    path.write_bytes(jl(*lines[:2], lines[1], *lines[2:]))
    report = import_file(sqlite_store, path)
    assert (report.lines_read, report.imported, report.duplicate) == (5, 4, 1)
    rows = sqlite_store.entries("cc-importer-test")
    assert [(e.native_id, e.source.line) for e in rows] == [
        ("u0", 1),
        ("a1", 2),
        ("u2", 4),
        ("a3", 5),
    ]
    assert len(list(sqlite_store.raw_lines(str(path)))) == 5


class _AskedStore:
    """A store whose ``native_seqs`` calls are recorded (the ids asked, sorted)."""

    def __init__(self, store, asked: list[list[str]]) -> None:  # type: ignore[no-untyped-def]
        self._store, self._asked = store, asked

    def native_seqs(self, key, ids):  # type: ignore[no-untyped-def]
        self._asked.append(sorted(ids))
        return self._store.native_seqs(key, ids)

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._store, name)


def test_a_fresh_import_asks_the_store_only_for_ids_it_passed(sqlite_store, tmp_path, monkeypatch):
    """Issue 43 goal 1: while a session had no rows when its import began, the repeat filter
    asks the store only for ids it has passed already (``RepeatFilter.fresh``), and a line
    repeated two batches later is still a duplicate; an import that adds to a session with
    rows asks for every new id."""
    from continuity.formats import importer, repeats

    asked: list[list[str]] = []

    def spying(store, key, fresh=False):  # type: ignore[no-untyped-def]
        return repeats.RepeatFilter(_AskedStore(store, asked), key, fresh=fresh)

    monkeypatch.setattr(importer, "RepeatFilter", spying)
    monkeypatch.setattr(importer, "BATCH_LINES", 2)
    lines = cc_pairs(6)
    path = tmp_path / "fresh.jsonl"
    path.write_bytes(jl(*lines[:4], lines[1], *lines[4:]))  # line 5 repeats line 2 (a1)
    report = import_file(sqlite_store, path)
    assert (report.lines_read, report.imported, report.duplicate) == (7, 6, 1)
    assert asked == [["a1"]]
    rows = sqlite_store.entries("cc-importer-test")
    assert [(e.native_id, e.source.line) for e in rows] == [
        ("u0", 1),
        ("a1", 2),
        ("u2", 3),
        ("a3", 4),
        ("u4", 6),
        ("a5", 7),
    ]
    asked.clear()
    with open(path, "ab") as fh:
        fh.write(jl(*cc_pairs(2, start=6)))
    report = import_file(sqlite_store, path)
    assert (report.imported, report.duplicate) == (2, 0)
    assert asked == [["a7", "u6"]]


# --------------------------------------------------------------------------- pi tree


def test_import_pi_leaf_path_visibility_flips_on_growth(store, tmp_path):
    """pi v3 branch: rows off the leaf path are invisible; growth moving the leaf flips them."""
    path = tmp_path / "tree.jsonl"
    path.write_bytes(jl(*PI_TREE))
    import_file(store, path)
    key = "pi-tree-0001"
    assert [r.seq for r in store.rows_meta(key, newest_first=False)] == [1, 2, 3, 5]
    d = build_continuation(store, key).to_dict()
    check_contract(d)
    assert d["request"] == {"seq": 3, "actor": "user", "text": "Shorter"}
    assert [(m["seq"], m["content"][0]["text"]) for m in d["messages"]] == [
        (1, "Pick a name"),
        (2, "ledgerkit?"),
        (5, "ldg"),
    ]

    with open(path, "ab") as fh:
        fh.write(
            jl(
                pi_msg("m6", "m4", "user", "Go with lk", 6),
                pi_msg("m7", "m6", "assistant", "ok, lk", 7),
            )
        )
    report = import_file(store, path)
    assert (report.imported, report.resumed_from) == (2, len(jl(*PI_TREE)))
    assert [r.seq for r in store.rows_meta(key, newest_first=False)] == [1, 2, 3, 4, 6, 7]
    d = build_continuation(store, key).to_dict()
    check_contract(d)
    assert d["request"] == {"seq": 6, "actor": "user", "text": "Go with lk"}
    assert [(m["seq"], m["content"][0]["text"]) for m in d["messages"]] == [
        (1, "Pick a name"),
        (2, "ledgerkit?"),
        (3, "Shorter"),
        (4, "lk"),
        (7, "ok, lk"),
    ]
    assert "ldg" not in json.dumps(d)


def test_import_pi_leaf_path_request_is_on_path(sqlite_store, tmp_path):
    """The continuation's request is on the leaf path after the leaf leaves its branch."""
    path = tmp_path / "tree.jsonl"
    path.write_bytes(jl(*PI_TREE, pi_msg("m6", "m2", "assistant", "ledgerkit it is", 6)))
    import_file(sqlite_store, path)
    key = "pi-tree-0001"
    assert [r.seq for r in sqlite_store.rows_meta(key, newest_first=False)] == [1, 2, 6]
    d = build_continuation(sqlite_store, key).to_dict()
    assert d["request"] == {"seq": 1, "actor": "user", "text": "Pick a name"}
    assert [m["seq"] for m in d["messages"]] == [2, 6]


# --------------------------------------------------------------------------- runs


def test_import_pi_large_session_runs(samples):
    """One run per typed request (88 user messages); statuses from stopReason and open calls."""
    sqlite_store, _ = samples
    runs = sqlite_store.runs("d703a1a9-1b7b-4fb1-b512-c9738b1fe617")
    assert len(runs) == 88
    # Checked against the file: last stopReason per request stop 64+2 toolUse-without-pending
    # (finished), aborted 21 (interrupted), error 1 (failed).
    assert Counter(r.status.value for r in runs) == {"finished": 66, "interrupted": 21, "failed": 1}
    requests = [r.request_seq for r in runs]
    assert requests == sorted(requests) and len(set(requests)) == 88
    for a, b in pairwise(runs):
        assert a.end_seq < b.request_seq


# --------------------------------------------------------------------------- discovery


def test_import_directory_discovery_and_skips(sqlite_store, shared_data, tmp_path):
    """Folders yield *.jsonl recursively minus history.jsonl; non-sessions are skipped."""
    root = tmp_path / "sessions"
    (root / "a" / "b").mkdir(parents=True)
    shutil.copy(shared_data / "codex/interaction-detail.jsonl", root / "a" / "b" / "s.jsonl")
    shutil.copy(shared_data / "codex/real-exec-0.135.jsonl", root / "history.jsonl")
    shutil.copy(shared_data / "codex/sample-session.jsonl", root / "a" / "s.json")
    (root / "notes.jsonl").write_bytes(jl({"hello": "world"}, {"n": 2}))
    report = import_paths(sqlite_store, [root])
    assert [(Path(f.path).relative_to(root).as_posix(), f.status) for f in report.files] == [
        ("a/b/s.jsonl", "imported"),
        ("notes.jsonl", "skipped"),
    ]
    assert report.files[1].reason == "not a session file (format not recognised)"
    assert report.sessions == ["interaction-detail-session"]
    assert report.totals()["skipped_files"] == 1
    assert sqlite_store.get_session("019e9625-802f-7e91-840a-cfe88d14117a") is None

    config = tmp_path / "config.json"
    config.write_text('{"theme": "dark"}\n')
    (f,) = import_paths(sqlite_store, [config]).files
    assert (f.status, f.reason) == ("skipped", "not a session file (format not recognised)")

    with pytest.raises(InputError, match=r"nowhere\.jsonl: no such file or directory"):
        discover([tmp_path / "nowhere.jsonl"])
    # issue 20: in an import, a missing path is reported failed (exit 2), the others import
    report = import_paths(sqlite_store, [tmp_path / "nowhere.jsonl", config])
    assert [(f.path, f.status, f.reason) for f in report.files] == [
        (str(tmp_path / "nowhere.jsonl"), "failed", "no such file or directory"),
        (str(config), "skipped", "not a session file (format not recognised)"),
    ]
    assert report.exit_code == 2


# --------------------------------------------------------------------------- contract


@pytest.mark.parametrize("budget", [240_000, 20_000, 5_000])
def test_import_continuation_contract_every_sample(samples, budget):
    """Every sample session's continuation keeps the `continue --json` contract."""
    sqlite_store, report = samples
    assert len(report.sessions) == 12
    refused = 0
    for key in report.sessions:
        d = build_continuation(sqlite_store, key, budget_bytes=budget).to_dict()
        assert (d["session"], d["budget_bytes"]) == (key, budget)
        check_contract(d)
        refused += d["refusal"] is not None
        if d["refusal"] is None and budget == 240_000:
            assert d["messages"] or d["request"], key
    if budget == 240_000:
        assert refused == 0


def test_import_lossless_with_blank_and_crlf_lines(sqlite_store, tmp_path):
    """B61: blank lines and CRLF endings are kept raw too, so the file rebuilds byte for byte."""
    lines = cc_pairs(2)
    data = json.dumps(lines[0]).encode() + b"\r\n\n   \n" + json.dumps(lines[1]).encode() + b"\n\n"
    path = tmp_path / "blank.jsonl"
    path.write_bytes(data)
    report = import_file(sqlite_store, path)
    assert (report.lines_read, report.imported, report.blank) == (2, 2, 3)
    assert rebuilt(sqlite_store, path) == data


def test_import_resume_after_accepted_unterminated_line_keeps_numbers(sqlite_store, tmp_path):
    """A valid last line without LF, completed later: the LF closes it, numbering continues."""
    lines = cc_pairs(3)
    path = tmp_path / "grow.jsonl"
    path.write_bytes(json.dumps(lines[0]).encode())
    assert import_file(sqlite_store, path).imported == 1
    with open(path, "ab") as fh:
        fh.write(
            b"\n" + json.dumps(lines[1]).encode() + b"\n" + json.dumps(lines[2]).encode() + b"\n"
        )
    report = import_file(sqlite_store, path)
    assert (report.imported, report.blank) == (2, 0)
    rows = sqlite_store.entries("cc-importer-test")
    assert [e.source.line for e in rows] == [1, 2, 3]
    assert rebuilt(sqlite_store, path) == path.read_bytes()


def test_import_unsafe_session_keys_are_made_one_short_line(sqlite_store, tmp_path):
    """Session ids with newlines or over 200 characters become safe keys; nothing fails."""

    def codex(sid: str) -> bytes:
        return jl(
            {
                "timestamp": "2026-01-01T00:00:00Z",
                "type": "session_meta",
                "payload": {"id": sid, "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"},
            },
            {
                "timestamp": "2026-01-01T00:00:01Z",
                "type": "event_msg",
                "payload": {"type": "user_message", "message": "hi"},
            },
        )

    (tmp_path / "nl.jsonl").write_bytes(codex("a\n## Global Head (Tier 1)\n- [fact] x"))
    (tmp_path / "long.jsonl").write_bytes(codex("a" * 300))
    report = import_paths(sqlite_store, [tmp_path])
    keys = sorted(f.session_key for f in report.files)
    assert keys[0] == "a ## Global Head (Tier 1) - [fact] x"
    assert len(keys[1]) == 200 and keys[1].startswith("a" * 183 + "~")
    assert all(f.status == "imported" for f in report.files)


# --------------------------------------------------------------------------- Claude Code keys


def test_import_claude_code_project_folder_keys_subagent_files_apart(store, tmp_path):
    """A 2.x project folder: ``S.jsonl`` and ``S/subagents/agent-x.jsonl`` (same sessionId).
    The session file is ``S`` and the subagent file ``S/agent-x`` in either import order, so
    ``continue S`` is the main conversation, never the subagent's."""
    sid = "5b7c2e90-aaaa"
    folder = tmp_path / "projects" / "-home-ana-ledger"
    (folder / sid / "subagents").mkdir(parents=True)
    (folder / f"{sid}.jsonl").write_bytes(jl(*cc_pairs(2, sid=sid)))
    side = folder / sid / "subagents" / "agent-a1b2c3.jsonl"
    shutil.copy(
        Path(__file__).resolve().parents[1] / "fixtures/claude_code/subagents/agent-a1b2c3.jsonl",
        side,
    )
    report = import_paths(store, [tmp_path / "projects"])  # the side file sorts first
    assert sorted(f.session_key for f in report.files) == [sid, f"{sid}/agent-a1b2c3"]
    d = build_continuation(store, sid).to_dict()
    assert d["request"]["text"] == "request 0"
    other = tmp_path / "again"
    (other / "subagents").mkdir(parents=True)
    shutil.copy(side, other / "subagents" / side.name)
    shutil.copy(folder / f"{sid}.jsonl", other / f"{sid}.jsonl")
    with open_store(f"sqlite:///{tmp_path / 'b.db'}") as fresh:
        first = import_file(fresh, other / f"{sid}.jsonl")
        second = import_file(fresh, other / "subagents" / side.name)
        assert (first.session_key, second.session_key) == (sid, f"{sid}/agent-a1b2c3")


def test_import_claude_code_resumed_file_keyed_by_its_own_name(store, tmp_path):
    """A resumed session's file starts with lines replayed from the earlier session (their
    sessionId is the old one); the file ``<new id>.jsonl`` is keyed by the new id
    (formats.md §1.9), and a fixture not named by id takes the id of most head lines."""
    old, new = "11111111-aaaa", "22222222-bbbb"
    lines = cc_pairs(2, sid=old) + cc_pairs(2, start=2, sid=new)
    path = tmp_path / f"{new}.jsonl"
    path.write_bytes(jl(*lines))
    assert import_file(store, path).session_key == new
    odd = tmp_path / "fixture.jsonl"
    odd.write_bytes(jl(*(cc_pairs(1, sid=old) + cc_pairs(3, start=10, sid="33333333-cccc"))))
    assert import_file(store, odd).session_key == "33333333-cccc"


def test_import_detects_the_format_past_a_first_line_of_megabytes(store, tmp_path):
    """A first line larger than the detection window (a pasted screenshot, 1 MB) no longer
    hides the file's format: the session imports under its sessionId with both rows."""
    big = cc("u0", None, "user", "see " + "x" * 1_000_000, sid="big1-aaaa")
    answer = cc(
        "a1",
        "u0",
        "assistant",
        [{"type": "text", "text": "ok"}],
        ts=1,
        sid="big1-aaaa",
        stop="end_turn",
    )
    path = tmp_path / "fixture-big.jsonl"
    path.write_bytes(jl(big, answer))
    report = import_file(store, path)
    assert (report.status, report.session_key, report.imported) == ("imported", "big1-aaaa", 2)
