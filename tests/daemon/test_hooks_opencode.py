"""OpenCode's plugin (issue 42 item 3): ``hooks install opencode`` writes ``continuity.js`` into
OpenCode's plugin folder with the hook command, uninstall removes it and the folders install
made; the hook answer is JSON for the plugin; a live session's transcript is the JSONL mirror
of OpenCode's data folder (the e2e test ``tests/e2e/test_opencode_live.py`` runs it all with
the real CLI)."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest

from continuity.core.errors import InputError
from continuity.daemon.hooks import adapters, install
from continuity.daemon.hooks.capture import TranscriptCapture

FIXTURE_DB = Path(__file__).parents[1] / "fixtures" / "opencode" / "sqlite" / "opencode.db"


def test_install_opencode_writes_the_plugin_with_the_command(tmp_path: Path) -> None:
    folder = tmp_path / "config" / "opencode" / "plugin"
    result = install.install("opencode", folder, tmp_path / "ws")
    text = (folder / "continuity.js").read_text()
    assert result.action == "installed" and result.path == folder / "continuity.js"
    assert install.OPENCODE_MARKER in text and "__CONTINUITY_HOOK_COMMAND__" not in text
    argv = [
        shutil.which("env") or "/usr/bin/env",
        f"CONTINUITY_HOME={tmp_path / 'ws'}",
        *install.hook_argv(),
    ]
    assert f"const HOOK_COMMAND = {json.dumps(argv)};" in text
    assert '"--harness", "opencode"' in text
    assert install.install("opencode", folder, tmp_path / "ws").action == "unchanged"
    assert install.uninstall("opencode", folder).action == "removed"
    assert not (tmp_path / "config").exists()  # every folder install created is gone
    assert install.uninstall("opencode", folder).action == "absent"


def test_opencode_plugin_of_someone_else_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "continuity.js").write_text("// someone else's\n")
    with pytest.raises(InputError, match="not continuity's plugin"):
        install.install("opencode", tmp_path, tmp_path / "ws")
    with pytest.raises(InputError, match="not continuity's opencode file"):
        install.uninstall("opencode", tmp_path)
    assert (tmp_path / "continuity.js").read_text() == "// someone else's\n"
    kept = tmp_path / "mine"
    kept.mkdir()
    install.install("opencode", kept, tmp_path / "ws")
    install.uninstall("opencode", kept)
    assert kept.is_dir() and list(kept.iterdir()) == []  # it was there before install


def test_opencode_default_path_follows_xdg_config_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert install.default_path("opencode") == tmp_path / "cfg" / "opencode" / "plugin"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert install.default_path("opencode") == tmp_path / "home" / ".config" / "opencode" / "plugin"


def test_opencode_answer_is_json_with_the_context() -> None:
    out = adapters.render("opencode", "session-start", {"context": "## brief", "ok": True})
    assert json.loads(out) == {"ok": True, "additionalContext": "## brief"}
    body = adapters.to_body(
        "opencode", "user-prompt-submit", {"session_id": "ses_x", "cwd": "/p", "prompt": "hi"}
    )
    assert (body["harness"], body["session_key"], body["prompt"]) == ("opencode", "ses_x", "hi")


def test_live_opencode_session_reads_the_mirror_of_its_data_folder(tmp_path: Path) -> None:
    """The plugin sends OpenCode's data folder as transcript_path: the session's transcript
    is its mirror in the workspace, written from opencode.db before an import."""
    data = tmp_path / "opencode"
    data.mkdir()
    shutil.copy(FIXTURE_DB, data / "opencode.db")
    capture = TranscriptCapture(
        None,
        str(tmp_path / "ws"),
        owner="t",
        budget_bytes=1,
        stop_seconds=1,
        db_lock=threading.Lock(),
        session_lock=lambda _key: threading.Lock(),
        closing=threading.Event(),
    )
    sid = "ses_dc89fe0f0ffem5dFCryXxhDChw"
    mirror = Path(capture.opencode_mirror(str(data), sid))
    assert mirror.name == f"{sid}.jsonl" and mirror.is_relative_to(tmp_path / "ws" / "sources")
    assert not mirror.exists()
    capture._refresh_mirror(str(mirror))
    lines = [json.loads(line) for line in mirror.read_text().splitlines()]
    assert "echo continuity-e2e-tool-ran" in json.dumps(lines)
    capture._refresh_mirror(str(tmp_path / "other.jsonl"))  # not a mirror: nothing happens
    assert not (tmp_path / "other.jsonl").exists()
