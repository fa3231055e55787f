"""Fresh-user review of issue 42, defect 2: one unfamiliar or corrupt line lost a whole file.
Detection decides on the file's location and the majority of its first lines, not the first
line alone (``formats.detect``): a Cursor transcript with an unknown first or third line, a
Factory Droid file whose first line is unknown or corrupt (it was read as pi's, its tool calls
lost), a Gemini CLI chat file with a corrupt first line (skipped), a Cursor file with Claude
Code lines mixed in (read as Claude Code's). The unknown line is counted and kept raw."""

from __future__ import annotations

from pathlib import Path

import pytest

from continuity.formats import detect, read_head
from continuity.formats.importer import import_paths

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CURSOR_ID = "7d1c5e0a-4b2f-4c3d-9e8f-0a1b2c3d4e5f"
CURSOR = (
    FIXTURES
    / "cursor_agent/projects/home-dev-project/agent-transcripts"
    / CURSOR_ID
    / f"{CURSOR_ID}.jsonl"
)
DROID_ID = "c04adb60-2d0d-4ed4-896e-f9aa272cc6f0"
DROID = FIXTURES / "factory_droid/sessions/-home-dev-project" / f"{DROID_ID}.jsonl"
GEMINI = FIXTURES / "gemini_cli/tmp/project/chats/session-2026-12-06T17-58-a8d780f4.jsonl"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sessions"
CLAUDE = EXAMPLES / "claude-code" / "3185d1ef-21e2-4727-91d3-fda9d4ee95a1.jsonl"
NEW_TYPE = b'{"type": "model_switched", "model": "gpt-5"}\n'
JUNK = b'{"junk":"x"}\n'


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _place(root: Path, source: Path, lines: list[bytes]) -> Path:
    """``lines`` at ``source``'s path below ``fixtures`` re-rooted at ``root``."""
    target = root / source.relative_to(FIXTURES)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"".join(lines))
    return target


@pytest.mark.parametrize(
    "edit",
    [
        lambda lines: [NEW_TYPE, *lines],
        lambda lines: [JUNK, *lines],
        lambda lines: [*lines[:2], NEW_TYPE, *lines[2:]],
        lambda lines: [*lines[:2], JUNK, *lines[2:]],
    ],
    ids=["new-type-first", "junk-first", "new-type-third", "junk-third"],
)
def test_cursor_with_an_unfamiliar_line_is_imported_with_it_kept_raw(
    sqlite_store, tmp_path: Path, edit
) -> None:
    path = _place(tmp_path / "in", CURSOR, edit(_lines(CURSOR)))
    found = detect(read_head(str(path)))  # by content alone too
    assert found is not None and found.harness == "cursor-agent"
    report = import_paths(sqlite_store, [path], home=tmp_path / "ws")
    (f,) = report.files
    assert (f.harness, f.session_key, f.lines_read, f.errors) == (
        "cursor-agent",
        CURSOR_ID,
        len(_lines(CURSOR)) + 1,
        [],
    )
    assert f.imported == f.lines_read and f.opaque >= 1


def test_cursor_with_claude_code_lines_mixed_in_stays_cursor(sqlite_store, tmp_path: Path) -> None:
    lines = _lines(CURSOR)
    claude = _lines(CLAUDE)[:5]
    path = _place(tmp_path / "in", CURSOR, [*lines[:3], *claude, *lines[3:]])
    report = import_paths(sqlite_store, [path], home=tmp_path / "ws")
    (f,) = report.files
    assert (f.harness, f.session_key, f.lines_read) == ("cursor-agent", CURSOR_ID, len(lines) + 5)


@pytest.mark.parametrize(
    "first", [NEW_TYPE, b'{"type":"session_start","id": \n'], ids=["unknown", "corrupt"]
)
def test_droid_with_an_odd_first_line_is_droid_with_its_call_paired(
    sqlite_store, tmp_path: Path, first: bytes
) -> None:
    lines = _lines(DROID)
    path = _place(tmp_path / "in", DROID, [first, *lines[1:]])
    report = import_paths(sqlite_store, [path], home=tmp_path / "ws")
    (f,) = report.files
    assert f.harness == "factory-droid"
    entries = sqlite_store.entries(f.session_key)
    calls = [b for e in entries for b in e.blocks if type(b).__name__ == "ToolCallBlock"]
    results = [b for e in entries for b in e.blocks if type(b).__name__ == "ToolResultBlock"]
    assert [c.id for c in calls] == [r.call_id for r in results] == ["call_0a81228f547e4ee1af92"]


def test_gemini_with_a_corrupt_first_line_is_imported(sqlite_store, tmp_path: Path) -> None:
    lines = _lines(GEMINI)
    path = _place(tmp_path / "in", GEMINI, [b'{"sessionId": "a8d7\n', *lines[1:]])
    report = import_paths(sqlite_store, [path], home=tmp_path / "ws")
    (f,) = report.files
    assert f.harness == "gemini-cli" and f.imported > 0 and len(f.errors) == 1


def test_a_pi_file_stays_pi_and_a_droid_path_needs_droid_lines(tmp_path: Path) -> None:
    """The location alone never wins: pi's own session (a header line) at a Droid-like path
    stays pi's; and a file no reader claims is still not a session file."""
    pi = next((EXAMPLES / "pi").glob("*.jsonl"))
    path = _place(tmp_path / "in", DROID, _lines(pi))
    found = detect(read_head(str(path)), str(path))
    assert found is not None and found.harness == "pi"
    other = _place(tmp_path / "in", CURSOR, [JUNK, JUNK])
    assert detect(read_head(str(other)), str(other)) is None
