"""Fuzzing the readers and the importer with mutated real lines (issue 16: "Inputs that crash
the importer"). Real lines of each harness's sample sessions (``../shared/data``) get one field
value replaced by a list, an object, a number, null, a bool or a string holding a lone surrogate
(``"\\ud800"`` as a JSON escape), or are truncated; the file is imported. No exception escapes,
and every line ends as a row, a duplicate, a skipped line or a reported bad line."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from continuity.formats.importer import import_file
from continuity.store import open_store
from tests.paths import SHARED_DATA

#: a few real files per harness, first lines only (the head decides the reader)
SOURCES = {
    "claude-code": SHARED_DATA / "claude-code" / "short.jsonl",
    "claude-code-tools": SHARED_DATA / "claude-code" / "tool_heavy.jsonl",
    "codex": SHARED_DATA / "codex" / "with-compaction.jsonl",
    "codex-events": SHARED_DATA / "codex" / "event-shapes.jsonl",
    "pi": SHARED_DATA / "pi" / "v3-short-session.jsonl",
    # issue 42: a real Gemini CLI 0.61.0 chat file (tests/fixtures/gemini_cli)
    "gemini-cli": Path(__file__).resolve().parents[1]
    / "fixtures"
    / "gemini_cli"
    / "tmp"
    / "project"
    / "chats"
    / "session-2026-12-06T17-58-a8d780f4.jsonl",
    # issue 42: a real Qwen Code 0.24.4 chat file (tests/fixtures/qwen_code)
    "qwen-code": Path(__file__).resolve().parents[1]
    / "fixtures"
    / "qwen_code"
    / "projects"
    / "-home-dev-project"
    / "chats"
    / "2ecab5a2-3075-491a-9bc7-6ff7d2093815.jsonl",
    # issue 42: real GitHub Copilot CLI 1.0.102 events (tests/fixtures/copilot_cli)
    "copilot-cli": Path(__file__).resolve().parents[1]
    / "fixtures"
    / "copilot_cli"
    / "session-state"
    / "58525cc8-39e8-4bf9-9685-da918eed942a"
    / "events.jsonl",
    # issue 42: a real Factory Droid 0.215.0 session (tests/fixtures/factory_droid)
    "factory-droid": Path(__file__).resolve().parents[1]
    / "fixtures"
    / "factory_droid"
    / "sessions"
    / "-home-dev-project"
    / "c04adb60-2d0d-4ed4-896e-f9aa272cc6f0.jsonl",
}
#: readers whose one line can be several rows (``FormatReader.records``: a Gemini CLI message
#: holding its tool results, a ``$set`` of messages): every line is at least one
SPLITS = {"gemini-cli"}
LINES = {name: path.read_bytes().splitlines()[:16] for name, path in SOURCES.items()}

#: values that a field of the wrong type might hold
_WRONG = st.one_of(
    st.lists(st.sampled_from(["a", 1, None]), max_size=3),
    st.dictionaries(
        st.sampled_from(["type", "text", "id", "x"]),
        st.sampled_from(["a", 1, None, [], {}]),
        max_size=3,
    ),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.none(),
    st.booleans(),
    st.sampled_from(["\ud800", "a\udfffb", "\udc80\udc81", "", " ", "\x00", "x" * 300]),
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value inside a parsed JSON line (keys and list indexes)."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value[:5]):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _set(value: Any, path: tuple, new: Any) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new


def _dump(value: Any) -> bytes:
    """JSON with lone surrogates written as ``\\uXXXX`` escapes, as a harness writes them."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii")


@st.composite
def mutated_file(draw: st.DrawFn) -> tuple[str, list[bytes]]:
    """A sample's first lines with 1 to 3 of them mutated."""
    name = draw(st.sampled_from(sorted(LINES)))
    lines = list(LINES[name])
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.one_of(st.just(0), st.integers(0, len(lines) - 1)))  # the head decides
        how = draw(st.sampled_from(["field", "field", "field", "truncate", "whole"]))
        if how == "truncate":
            lines[i] = lines[i][: draw(st.integers(0, max(len(lines[i]) - 1, 0)))]
            continue
        try:
            data = json.loads(lines[i])
        except ValueError:  # truncated by an earlier mutation
            continue
        if how == "whole":
            lines[i] = _dump(draw(_WRONG))
            continue
        paths = _paths(data)
        if not paths:
            continue
        _set(data, draw(st.sampled_from(paths)), draw(_WRONG))
        lines[i] = _dump(data)
    return name, lines


def test_fuzz_mutated_lines_never_crash_the_importer(tmp_path: Path):
    """Issue 16: a field holding a list, an object, a number, null or a lone surrogate, or a
    truncated line, never crashes the import: every non-blank line is a row, a duplicate, a
    skipped line or a reported bad line (``path:line``), and the raw lines are all kept."""
    counter = itertools.count()
    with open_store(tmp_path / "fuzz.db") as store:

        @settings(
            max_examples=150,
            deadline=2000,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(case=mutated_file())
        def run(case: tuple[str, list[bytes]]) -> None:
            name, lines = case
            path = tmp_path / f"{name}-{next(counter)}.jsonl"
            path.write_bytes(b"".join(line + b"\n" for line in lines))
            report = import_file(store, path)
            if report.status == "skipped":  # a mutated head may no longer look like a session
                assert report.reason == "not a session file (format not recognised)"
                return
            assert report.status == "imported", (report.status, report.reason)
            non_blank = sum(1 for line in lines if line.strip())
            assert report.lines_read == non_blank
            accounted = report.imported + report.duplicate + report.skipped + len(report.errors)
            if name in SPLITS:
                assert accounted >= non_blank, report.to_dict()
            else:
                assert accounted == non_blank, report.to_dict()
            assert len(list(store.raw_lines(report.path))) == len(lines)

        run()


def _import_lines(tmp_path: Path, lines: list[bytes]):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def test_sniff_type_holding_a_list_is_no_crash(tmp_path: Path):
    """Issue 16: a head line whose ``type`` is a list raised ``TypeError: unhashable type:
    'list'`` while detecting the format; now the file imports and that line is a row or a
    reported bad line."""
    lines = list(LINES["claude-code"][:6])
    data = json.loads(lines[0])
    data["type"] = ["user"]
    lines[0] = _dump(data)
    with open_store(tmp_path / "t.db") as store:
        report = import_file(store, _import_lines(tmp_path, lines))
        assert (report.status, report.harness) == ("imported", "claude-code")
        assert report.imported + report.skipped + len(report.errors) == 6


def test_lone_surrogate_in_a_native_id_is_stored_as_replacement(tmp_path: Path):
    """Issue 16: a ``uuid`` holding a lone surrogate (``"\\ud800"`` in the JSON) raised
    ``UnicodeEncodeError: surrogates not allowed`` in the store; the row is kept with U+FFFD
    in its id, and the raw line is kept as read."""
    lines = list(LINES["claude-code"][:6])
    data = json.loads(lines[2])
    data["uuid"] = "id-\ud800"
    lines[2] = _dump(data)
    with open_store(tmp_path / "t.db") as store:
        report = import_file(store, _import_lines(tmp_path, lines))
        assert (report.status, report.imported, report.errors) == ("imported", 6, [])
        assert list(store.native_seqs(report.session_key, ["id-\ufffd"])) == ["id-\ufffd"]
        raw = [r.data for r in store.raw_lines(report.path)]
        assert raw[2] == lines[2] and b"\\ud800" in raw[2]


def test_lone_surrogate_in_reader_state_is_no_crash(tmp_path: Path):
    """Issue 16: a pi header ``version`` holding a lone surrogate reached orjson through the
    reader's saved state (``TypeError: str is not valid UTF-8``); now the file imports."""
    lines = list(LINES["pi"])
    data = json.loads(lines[0])
    data["version"] = "\ud800"
    lines[0] = _dump(data)
    with open_store(tmp_path / "t.db") as store:
        report = import_file(store, _import_lines(tmp_path, lines))
        assert (report.status, report.imported, report.errors) == ("imported", len(lines), [])


@pytest.mark.parametrize(
    "field,value",
    [
        ("uuid", ["a", "b"]),
        ("uuid", {"id": 1}),
        ("parentUuid", {"x": 1}),
        ("sessionId", ["s"]),
        ("uuid", "id-\ud800"),
        ("cwd", "/tmp/\udfff"),
    ],
)
def test_claude_code_wrong_typed_fields_import(tmp_path: Path, field, value):
    """Issue 16: ``TypeError: unhashable type`` and ``UnicodeEncodeError: surrogates not
    allowed`` were raised out of the import; now the line is a row or a reported bad line."""
    lines = LINES["claude-code"][:6]
    data = json.loads(lines[2])
    data[field] = value
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in [*lines[:2], _dump(data), *lines[3:]]))
    with open_store(tmp_path / "t.db") as store:
        report = import_file(store, path)
        assert report.status == "imported", report.reason
        assert report.imported + report.duplicate + report.skipped + len(report.errors) == 6
        assert len(list(store.raw_lines(report.path))) == 6


@pytest.mark.parametrize(
    "source,index,path,value,message",
    [
        ("claude-code", 3, ("uuid",), ["a", "b"], "uuid: expected a string, got array (dropped)"),
        (
            "claude-code",
            3,
            ("parentUuid",),
            {"x": 1},
            "parentUuid: expected a string, got object (dropped)",
        ),
        (
            "claude-code",
            3,
            ("sessionId",),
            ["s"],
            "sessionId: expected a string, got array (dropped)",
        ),
        ("claude-code", 3, ("cwd",), 7, "cwd: expected a string, got number (dropped)"),
        ("pi", 2, ("id",), ["x"], "id: expected a string, got array (dropped)"),
        ("pi", 0, ("id",), ["x"], "id: expected a string, got array (dropped)"),
        ("codex", 0, ("payload", "id"), {"a": 1}, "id: expected a string, got object (dropped)"),
        ("claude-code", 3, ("uuid",), True, "uuid: expected a string, got boolean (dropped)"),
        ("pi", 2, ("parentId",), {"k": 1}, "parentId: expected a string, got object (dropped)"),
        ("codex", 1, ("payload", "cwd"), ["/x"], "cwd: expected a string, got array (dropped)"),
    ],
)
def test_wrong_typed_id_fields_are_named_in_a_warning(
    tmp_path: Path, source, index, path, value, message
):
    """README: "a field of the wrong type (a list where an id belongs) never stops an import:
    the field is dropped with a warning naming it". The readers' own type checks dropped
    ``uuid``/``id``/``cwd`` before the importer's check saw them, so no warning was given."""
    lines = list(LINES[source])
    data = json.loads(lines[index])
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    lines[index] = _dump(data)
    with open_store(tmp_path / "t.db") as store:
        report = import_file(store, _import_lines(tmp_path, lines))
        assert report.status == "imported", report.reason
        assert (index + 1, message) in report.warnings, report.warnings
        assert len(list(store.raw_lines(report.path))) == len(lines)


def test_a_wrong_typed_pi_id_is_one_warning():
    """Fresh-user review: a pi entry ``id`` holding a list gave "entry without id" too; it is
    one problem, named once."""
    import tempfile

    lines = list(LINES["pi"])
    data = json.loads(lines[2])
    data["id"] = ["x"]
    lines[2] = _dump(data)
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "t.db") as store:
        report = import_file(store, _import_lines(Path(tmp), lines))
        assert [m for n, m in report.warnings if n == 3] == [
            "id: expected a string, got array (dropped)"
        ]
