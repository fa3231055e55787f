"""The OpenCode writer of ``resume`` (issue 42 item 3): the export document ``opencode import``
takes, every call in one ``tool`` part with its result (an unanswered call gets the synthetic
"effects unknown" error), the preamble first, OpenCode's id forms, the model of OpenCode's
config, and the printed commands. The real CLI accepting it: tests/e2e/test_resume_matrix.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

from continuity.resume import resume_session
from tests.resume.test_resume import _rows, _session


def test_opencode_copy_is_an_export_document_with_every_call_paired(
    sqlite_store, tmp_path: Path, monkeypatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = tmp_path / "cfg" / "opencode"
    config.mkdir(parents=True)
    (config / "opencode.json").write_text(json.dumps({"model": "fake/fake-model"}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    key = _session(sqlite_store, project, _rows())
    written = resume_session(sqlite_store, key, "opencode", target_home=tmp_path / "data")
    assert written.path == tmp_path / "data" / "opencode" / "continuity-resume" / (
        written.session_id + ".json"
    )
    assert written.env == {"XDG_DATA_HOME": str(tmp_path / "data")}
    assert re.fullmatch(r"ses_[0-9a-f]{12}[0-9A-Za-z]{14}", written.session_id)
    assert written.headless[-3:] == ["sh", str(written.path), written.session_id]
    doc = json.loads(written.path.read_text())
    info = doc["info"]
    assert (info["id"], info["directory"], info["projectID"]) == (
        written.session_id,
        str(project),
        "global",
    )
    assert info["slug"]  # opencode 1.18.33 refuses a session without one
    messages = doc["messages"]
    first = messages[0]
    assert first["info"]["role"] == "user"
    assert f"session {key}" in first["parts"][0]["text"]  # the preamble opens the session
    tools = [p for m in messages for p in m["parts"] if p["type"] == "tool"]
    # the first turn is in the checkpoint's summary; the kept calls follow it
    assert [t["tool"] for t in tools] == ["bash", "apply_patch"]
    assert tools[0]["state"]["input"] == {"command": "pytest -q"}
    assert tools[0]["state"]["status"] == "completed"
    assert tools[0]["state"]["output"].startswith("3 passed")
    assert tools[1]["state"]["status"] == "error"  # never answered: effects unknown
    assert "no recorded result" in tools[1]["state"]["error"]
    assert len({t["callID"] for t in tools}) == 2
    ids = [m["info"]["id"] for m in messages]
    assert ids == sorted(ids) and all(re.fullmatch(r"msg_[0-9a-f]{12}\w{14}", i) for i in ids)
    for m in messages:
        for p in m["parts"]:
            assert (p["sessionID"], p["messageID"]) == (written.session_id, m["info"]["id"])
        if m["info"]["role"] == "assistant":
            assert (m["info"]["providerID"], m["info"]["modelID"]) == ("fake", "fake-model")
            calls = [p for p in m["parts"] if p["type"] == "tool"]
            assert m["info"]["finish"] == ("tool-calls" if calls else "stop")
    again = resume_session(sqlite_store, key, "opencode", target_home=tmp_path / "data")
    assert again.session_id != written.session_id  # never reused: OpenCode imported it
