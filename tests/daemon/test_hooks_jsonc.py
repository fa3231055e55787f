"""Fresh-user review of issue 42: ``hooks install gemini-cli`` (and ``qwen-code``) refused a
``settings.json`` holding ``//`` or ``/* */`` comments or trailing commas, which Gemini CLI
and Qwen Code read (they strip the comments) and keep when they write the file themselves.
Install now edits such a file only where it changes, keeping every comment; it refuses,
naming the file and line, only when a comment sits inside a value it must rewrite whole;
uninstall gives the bytes back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from continuity.core.errors import InputError
from continuity.daemon.hooks import _jsonc, install

COMMENTED = b"""{
  // my model: the fast one
  "model": {"name": "gemini-2.5-flash"}, /* chosen 2026-12 */
  "ui": {
    "theme": "dark", // easier on the eyes
  },
  /* servers of my own */
  "mcpServers": {
    "mine": {"command": "my-server",},
  },
}
"""


def _comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "//" in line or "/*" in line]


@pytest.mark.parametrize("harness", ["gemini-cli", "qwen-code"])
def test_commented_settings_install_keeps_every_comment_and_uninstall_restores_the_bytes(
    tmp_path: Path, harness: str
) -> None:
    settings = tmp_path / "settings.json"
    settings.write_bytes(COMMENTED)
    done = install.install(harness, settings, tmp_path / "ws")
    assert done.action == "installed"
    text = settings.read_text()
    assert _comments(text) == _comments(COMMENTED.decode())  # all six, in order
    data = _jsonc.loads(text)
    assert data["model"] == {"name": "gemini-2.5-flash"} and data["ui"] == {"theme": "dark"}
    assert set(data["mcpServers"]) == {"mine", "continuity"}
    assert data["mcpServers"]["continuity"]["env"] == {"CONTINUITY_HOME": str(tmp_path / "ws")}
    assert "SessionStart" in data["hooks"]
    assert text.startswith(COMMENTED.decode()[: COMMENTED.index(b'"mcpServers"')])
    assert install.install(harness, settings, tmp_path / "ws").action == "unchanged"
    assert install.uninstall(harness, settings).action == "restored"
    assert settings.read_bytes() == COMMENTED
    assert not settings.with_name("settings.json.continuity-backup").exists()


def test_a_file_changed_since_install_loses_only_our_entries_and_keeps_its_comments(
    tmp_path: Path,
) -> None:
    settings = tmp_path / "settings.json"
    settings.write_bytes(COMMENTED)
    install.install("gemini-cli", settings, tmp_path / "ws")
    changed = settings.read_text().replace('"theme": "dark"', '"theme": "light"')
    settings.write_text(changed)
    done = install.uninstall("gemini-cli", settings)
    assert (done.action, done.file_kept) == ("removed", True)
    assert settings.read_text() == COMMENTED.decode().replace('"theme": "dark"', '"theme": "light"')


def test_an_older_server_entry_of_ours_is_updated_in_place_keeping_a_note_inside(
    tmp_path: Path,
) -> None:
    """Our server entry from another workspace, with the user's note inside it: only the
    values that differ are rewritten, the note stays."""
    settings = tmp_path / "settings.json"
    settings.write_bytes(
        b'{\n  "mcpServers": {\n    "continuity": {\n      // moved here from my old laptop\n'
        b'      "command": "/usr/bin/python3",\n'
        b'      "args": ["-m", "continuity.daemon.mcp_server"],\n'
        b'      "env": {"CONTINUITY_HOME": "/old/ws"}\n    }\n  }\n}\n'
    )
    install.install("gemini-cli", settings, tmp_path / "ws")
    text = settings.read_text()
    assert "      // moved here from my old laptop\n" in text
    server = _jsonc.loads(text)["mcpServers"]["continuity"]
    assert server["env"] == {"CONTINUITY_HOME": str(tmp_path / "ws")} and server["trust"] is True


def test_a_comment_inside_what_must_be_removed_whole_is_refused_by_file_and_line(
    tmp_path: Path,
) -> None:
    """The user noted something inside our SessionStart entry and changed another setting
    since install (so the backup cannot simply come back): removing ``hooks`` (it holds only
    ours) would drop the note, so uninstall refuses, naming the file and the note's line, and
    changes nothing."""
    settings = tmp_path / "settings.json"
    settings.write_bytes(COMMENTED)
    install.install("gemini-cli", settings, tmp_path / "ws")
    text = settings.read_text().replace('"theme": "dark"', '"theme": "light"')
    marker = '"name": "continuity-session-start",'
    text = text.replace(marker, marker + " // added by continuity", 1)
    settings.write_text(text)
    line = text[: text.index("// added by continuity")].count("\n") + 1
    with pytest.raises(
        InputError,
        match=rf"^{settings}:{line}: this comment sits inside hooks, which",
    ):
        install.uninstall("gemini-cli", settings)
    assert settings.read_text() == text
    assert settings.with_name("settings.json.continuity-backup").read_bytes() == COMMENTED


def test_a_file_that_is_not_json_even_with_comments_is_named_with_its_line(
    tmp_path: Path,
) -> None:
    settings = tmp_path / "settings.json"
    settings.write_bytes(b'{\n  // fine\n  "a": 1\n  "b": 2\n}\n')
    with pytest.raises(InputError, match=rf"^{settings}:4: not valid JSON, even allowing"):
        install.install("gemini-cli", settings, tmp_path / "ws")
    assert settings.read_bytes() == b'{\n  // fine\n  "a": 1\n  "b": 2\n}\n'


def test_claude_code_settings_stay_strict_json(tmp_path: Path) -> None:
    """Claude Code does not read comments in its settings.json: still refused there."""
    settings = tmp_path / "settings.json"
    settings.write_bytes(b'{\n  // no\n  "a": 1\n}\n')
    with pytest.raises(InputError, match="not valid JSON"):
        install.install("claude-code", settings, tmp_path / "ws")


def test_doctor_finds_the_hooks_in_a_commented_settings_file(tmp_path: Path) -> None:
    from continuity.cli.commands.doctor import installed_hooks

    settings = tmp_path / "settings.json"
    settings.write_bytes(COMMENTED)
    install.install("gemini-cli", settings, tmp_path / "ws")
    found = installed_hooks("gemini-cli", settings)
    assert found.error is None
    assert found.events == {
        "SessionStart",
        "BeforeAgent",
        "PreCompress",
        "AfterAgent",
        "SessionEnd",
    }


def test_jsonc_edit_keeps_comments_around_a_removed_list_item_and_a_new_key() -> None:
    text = '{\n  "hooks": {\n    "Stop": [\n      // mine\n      {"a": 1},\n      {"b": 2}\n    ]\n  }\n}'
    data = _jsonc.loads(text)
    data["hooks"]["Stop"].pop()
    data["x"] = [True]
    out = _jsonc.edit(text, data)
    assert out == (
        '{\n  "hooks": {\n    "Stop": [\n      // mine\n      {"a": 1}\n    ]\n  },\n'
        '  "x": [\n    true\n  ]\n}'
    )
    assert json.loads(out.replace("      // mine\n", "")) == data


def test_jsonc_loads_names_an_unclosed_comment() -> None:
    with pytest.raises(_jsonc.JsoncError) as caught:
        _jsonc.loads('{\n  "a": 1 /* open\n}')
    assert (caught.value.line, caught.value.column) == (2, 10)
