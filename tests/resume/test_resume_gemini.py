"""Where ``resume --in gemini-cli`` writes (issue 42 item 3): the project's short name as Gemini
CLI keeps it (``projects.json``, else a ``tmp/<slug>/.project_root`` naming the project, else a
new slug from the folder's base name, ``-1`` when another project owns it) and the file name
Gemini CLI finds a session id by."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from continuity.resume import gemini_cli


def test_a_registered_project_uses_its_slug(tmp_path: Path) -> None:
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "projects.json").write_text(
        json.dumps({"projects": {"/work/My App": "my-app-2"}})
    )
    got = gemini_cli.project_folder(tmp_path, "/work/My App")
    assert got == tmp_path / ".gemini" / "tmp" / "my-app-2" / "chats"


def test_a_marked_folder_is_found_and_a_new_project_claims_a_free_slug(tmp_path: Path) -> None:
    other = tmp_path / ".gemini" / "tmp" / "my-app"
    other.mkdir(parents=True)
    (other / ".project_root").write_text("/elsewhere/my-app")
    got = gemini_cli.project_folder(tmp_path, "/work/My App")
    assert got == tmp_path / ".gemini" / "tmp" / "my-app-1" / "chats"
    assert (got.parent / ".project_root").read_text() == "/work/My App"
    # the next resume of the same project finds the folder it marked
    assert gemini_cli.project_folder(tmp_path, "/work/My App") == got


def test_the_file_name_ends_with_the_ids_first_eight_characters() -> None:
    sid = "a8d780f4-c1c0-4958-a706-69efc40b6b23"
    name = gemini_cli.file_name(sid, datetime(2026, 12, 6, 17, 58, 4, tzinfo=UTC))
    assert name == "session-2026-12-06T17-58-a8d780f4.jsonl"
    assert gemini_cli.named(Path(name), sid) and not gemini_cli.named(Path(name), "b" + sid[1:])
