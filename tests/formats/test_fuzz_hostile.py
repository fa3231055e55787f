"""Hostile session files (issue 21, item 2): deep nesting, huge numbers, long keys, many tool
calls with repeated or empty ids, long runs of one character, many small lines and Unicode edge
cases (``tests.hostile``), imported as ``continuity import`` does (import, then the transcript
sync). No input raises, and none takes long: hypothesis's ``deadline`` per input, and a wall
bound per file that is linear in its size and lines (measured generously: the machine is
shared), so a super-linear path or a wait shows up as a failure. A file over the bound is
imported once more, as a session of its own, and the faster of the two counts: a stall of
the machine (CI once took 2.2 s over a 4-line file, 0.1 s on the retry) is not the input's,
while a slow path is slow both times."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

from hypothesis import given

from continuity.formats.importer import import_file, import_paths
from continuity.store import open_store
from continuity.transcripts.session_transcripts import sync_import_report
from tests.hostile import file_settings, own_session, session_file

#: What one file may take: 2 s, plus 2 µs per byte and 0.5 ms per line (the importer reads
#: about 2,000 rows a second on this shared machine; these bounds are 3 to 10 times that).
BASE_SECONDS, PER_BYTE, PER_LINE = 2.0, 2e-6, 5e-4


def wall_bound(size: int, lines: int) -> float:
    """The seconds a file of ``size`` bytes and ``lines`` lines may take to import."""
    return BASE_SECONDS + size * PER_BYTE + lines * PER_LINE


def _timed_import(store, tmp_path: Path, harness: str, data: bytes, n: int) -> tuple[Any, float]:
    """``(report, seconds)``: ``data`` written as file ``n`` and imported as ``continuity
    import`` does (the import, then the transcript sync into a home of its own)."""
    path = tmp_path / f"{harness}-{n}.jsonl"
    path.write_bytes(data)
    started = time.perf_counter()
    report = import_paths(store, [path])
    sync_import_report(store, report, tmp_path / f"home-{n}")
    return report, time.perf_counter() - started


def test_fuzz_hostile_session_files_import_in_bounded_time(tmp_path: Path):
    """Every hostile file imports (or is skipped as not a session file) without an exception
    escaping, each line accounted for, within ``wall_bound``; the transcript sync after it
    too. Each file is a session of its own, in a workspace of its own."""
    counter = itertools.count()
    with open_store(tmp_path / "fuzz.db") as store:

        @file_settings(max_examples=40, deadline=20_000)
        @given(case=session_file())
        def run(case: tuple[str, list[bytes]]) -> None:
            harness, lines = case
            n = next(counter)
            data = own_session(lines, n)  # a session id of its own
            report, elapsed = _timed_import(store, tmp_path, harness, data, n)
            bound = wall_bound(len(data), len(lines))
            if elapsed >= bound:  # once more, a session of its own: the faster one counts
                n2 = next(counter)
                retry = _timed_import(store, tmp_path, harness, own_session(lines, n2), n2)[1]
                elapsed = min(elapsed, retry)
            assert elapsed < bound, (elapsed, len(data), len(lines))
            (file,) = report.files
            if file.status == "skipped":
                assert file.reason == "not a session file (format not recognised)"
                return
            assert file.status == "imported", (file.status, file.reason)
            non_blank = sum(1 for line in lines if line.strip())
            assert file.imported + file.duplicate + file.skipped + len(file.errors) == non_blank, (
                file.to_dict()
            )

        run()


def test_a_nul_call_id_and_a_replaced_surrogate_id_are_one_stored_call(tmp_path: Path):
    """Issue 21's fuzzing: call ids ``"\\u0000"`` and ``"\\ud800"`` are both stored as U+FFFD;
    counted as two, the tool-call index inserted two rows with one key, the import failed
    with a UNIQUE conflict after waiting 120 s for another import that did not exist. Now the
    file imports at once and the stored id points at the first call."""
    import json

    head = {
        "type": "session",
        "version": 3,
        "id": "pi-ids",
        "cwd": "/work/p",
        "timestamp": "2026-06-05T05:24:28.246Z",
    }
    calls = [
        {"type": "toolCall", "id": i, "name": "Bash", "arguments": {}}
        for i in ("\x00", "\ud800", "ok")
    ]
    lines = [
        head,
        {
            "type": "message",
            "id": "00000001",
            "parentId": None,
            "timestamp": "2026-06-05T05:24:29.000Z",
            "message": {"role": "assistant", "content": calls},
        },
        {
            "type": "message",
            "id": "00000002",
            "parentId": "00000001",
            "timestamp": "2026-06-05T05:24:30.000Z",
            "message": {
                "role": "toolResult",
                "toolCallId": "\ud800",
                "toolName": "Bash",
                "content": [{"type": "text", "text": "done"}],
            },
        },
    ]
    path = tmp_path / "ids.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with open_store(tmp_path / "t.db") as store:
        started = time.perf_counter()
        report = import_file(store, path)
        assert time.perf_counter() - started < 5
        assert (report.status, report.imported, report.errors) == ("imported", 3, [])
        index = store.tool_calls(report.session_key, ["\ufffd", "ok"])
        assert (index["\ufffd"].call_seq, index["\ufffd"].result_seq) == (1, 2)
        assert (index["ok"].call_seq, index["ok"].result_seq) == (1, None)


def _claude_line(**fields):
    import json

    base = {"sessionId": "s-deep", "cwd": "/work/p", "timestamp": "2026-06-05T05:24:28.246Z"}
    return json.dumps({**base, **fields}).encode()


def test_a_deeply_nested_tool_input_is_reported_and_the_rest_imports(tmp_path: Path):
    """Fresh-user review: a tool input nested 256 levels deep (and 600: the field checks'
    recursion) failed the whole batch with a traceback, and the good file beside it was not
    stored either. Now the line is reported with its number (raw line kept) and every other
    line and file imports."""
    from tests.hostile import nested

    def tool_line(uuid: str, depth: int) -> bytes:
        return _claude_line(
            type="assistant",
            uuid=uuid,
            parentUuid="u1",
            message={
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": f"t-{uuid}",
                        "name": "Bash",
                        "input": nested(depth, kind="dict"),
                    }
                ],
            },
        )

    lines = [
        _claude_line(
            type="user", uuid="u1", parentUuid=None, message={"role": "user", "content": "run it"}
        ),
        tool_line("a2", 256),
        tool_line("a3", 600),
        tool_line("a4", 150),
        _claude_line(
            type="user", uuid="u5", parentUuid="a4", message={"role": "user", "content": "thanks"}
        ),
    ]
    deep = tmp_path / "deep.jsonl"
    deep.write_bytes(b"\n".join(lines) + b"\n")
    good = tmp_path / "good.jsonl"
    good.write_bytes(deep.read_bytes().replace(b"s-deep", b"s-good").split(b"\n")[0] + b"\n")
    with open_store(tmp_path / "c.db") as store:
        report = import_paths(store, [tmp_path])
        by_name = {Path(f.path).name: f for f in report.files}
        assert by_name["good.jsonl"].imported == 1
        d = by_name["deep.jsonl"]
        assert d.status == "imported" and d.imported == 3
        assert [n for n, _ in d.errors] == [2, 3]
        assert "nested more than 200 levels" in d.errors[0][1]
        assert [r.line_no for r in store.raw_lines(str(deep))] == [1, 2, 3, 4, 5]
        sync_import_report(store, report, tmp_path / "home")
