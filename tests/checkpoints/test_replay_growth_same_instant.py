"""A file that grows by lines stamped no later than its last line (fresh-user review, issue 17):
the checkpoints after each import equal those of a fresh import of the file as it is then.

Two shapes seen in real files: Claude Code writes its ``compact_boundary`` line a few
milliseconds after the summary line that follows it (the summary is stamped earlier), so an
import that ended at the boundary stored a ``session_end`` at the boundary's time and the
growth's ``pre_compaction`` at that same instant was taken as stored already; and a prompt
stamped with the previous line's time left the ``session_end`` of that instant as it was
(3 prompts, where a fresh import counts 4)."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path

from continuity.archive.ingest import ingest
from continuity.checkpoints.capture import load_config
from continuity.formats.importer import discover
from continuity.store import open_store
from tests.paths import SHARED_DATA

CLAUDE = (
    SHARED_DATA
    / "real-harness"
    / "claude-code"
    / "projects"
    / "-home-dev-projects-claude-demo"
    / "492053d3-5611-4f50-a2db-69e25949296a.jsonl"
)
PI = Path(__file__).resolve().parents[2] / "examples" / "sessions" / "pi"


def _checkpoints(home: Path, folder: Path) -> list[tuple[str, str, int, str]]:
    with open_store(home / "continuity.db") as store:
        ingest(store, discover([folder]), config=load_config(home), home=home)
        (session,) = store.list_sessions(limit=0)
        return [
            (c.trigger.value, c.created_at.isoformat(), c.prompt_count, c.digest)
            for c in store.checkpoints(session.key)
        ]


def _grown_and_fresh(tmp_path: Path, first: bytes, whole: bytes, name: str):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / name).write_bytes(first)
    _checkpoints(tmp_path / "grown", folder)
    (folder / name).write_bytes(whole)
    grown = _checkpoints(tmp_path / "grown", folder)
    again = _checkpoints(tmp_path / "grown", folder)  # an unchanged re-import adds nothing
    fresh = _checkpoints(tmp_path / "fresh", folder)
    return grown, again, fresh


def test_claude_code_file_cut_at_its_compact_boundary(tmp_path) -> None:
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    assert b'"compact_boundary"' in lines[57] and b"being continued" in lines[58]
    grown, again, fresh = _grown_and_fresh(
        tmp_path, b"".join(lines[:58]), b"".join(lines), CLAUDE.name
    )
    assert [(t, at) for t, at, _n, _d in fresh] == [
        ("pre_compaction", "2026-12-02T05:55:08.500000+00:00"),
        ("session_end", "2026-12-02T05:55:08.829000+00:00"),
    ]
    assert grown == fresh
    assert again == fresh


def test_a_prompt_stamped_with_the_last_lines_time(tmp_path) -> None:
    (source,) = PI.glob("*.jsonl")
    text = source.read_bytes()
    last = json.loads(text.splitlines()[-1])
    prompt = {
        "type": "message",
        "id": "feedbeef",
        "parentId": last["id"],
        "timestamp": last["timestamp"],
        "message": {
            "role": "user",
            "content": [{"type": "text", "text": "and the docs"}],
            "timestamp": 1780379425901,
        },
    }
    whole = text + json.dumps(prompt).encode() + b"\n"
    grown, again, fresh = _grown_and_fresh(tmp_path, text, whole, source.name)
    (end,) = [c for c in fresh if c[0] == "session_end"]
    assert end[2] == 4 and "and the docs" in end[3]
    assert grown == fresh
    assert again == fresh


def test_a_claude_code_file_first_imported_before_its_cwd(tmp_path) -> None:
    """Its first lines (queue operations, file-history snapshots) carry no cwd: a replay that
    resumed from the point of that first import kept the project unknown in every later
    checkpoint (``recover --project`` then found none)."""
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    assert b'"cwd"' not in lines[0]
    grown, again, fresh = _grown_and_fresh(tmp_path, lines[0], b"".join(lines), CLAUDE.name)
    assert all("Project: /home/dev/projects/claude-demo" in d for _t, _a, _n, d in fresh)
    assert grown == fresh
    assert again == fresh


def test_which_session_end_stands() -> None:
    """``end_stands``, the one rule of the replay and the store: a later end stands, an end
    at the same instant stands only when it is the same checkpoint."""
    from datetime import datetime, timedelta

    from continuity.core.model import Checkpoint, CheckpointTrigger, end_stands

    at = datetime(2026, 12, 2, 5, 50, 25, 901000, tzinfo=UTC)

    def end(when, prompts=3, digest="## Session End Checkpoint\nTotal Prompts: 3"):
        return Checkpoint(
            "s", "pi", None, None, CheckpointTrigger.SESSION_END, digest, prompts, created_at=when
        )

    assert end_stands(end(at), end(at))
    assert end_stands(end(at + timedelta(milliseconds=1)), end(at, 4, "four"))
    assert not end_stands(end(at), end(at, 4, "## Session End Checkpoint\nTotal Prompts: 4"))
    assert not end_stands(end(at), end(at + timedelta(milliseconds=1)))
    assert not end_stands(end(None), end(at))
