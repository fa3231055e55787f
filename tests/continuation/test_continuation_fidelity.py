"""Continuation fidelity (issue 15): recent complete exchanges survive our own compaction,
media never vanish or hide as text, secrets in structured tool arguments never travel, calls
with empty ids are never dropped without a trace. Each test asserts the right value."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.core.model import Entry, EntryKind, Role, TextBlock, ToolCallBlock, \
    ToolResultBlock
from continuity.store import open_store
from tests.builders import A, T, U, call, load

runner = CliRunner()


def _home_with(tmp_path: Path, rows: list[Entry], key: str = "s1") -> Path:
    home = tmp_path / "ws"
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        load(store, rows, key=key)
    return home


def _continue(home: Path, key: str = "s1", budget: int = 12_000) -> dict:
    result = runner.invoke(app, ["continue", key, "--budget", str(budget), "--home", str(home),
                                 "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# ---------------------------------------------------------------- item 2: structured secrets

def test_continue_json_redacts_secret_keyed_tool_arguments(tmp_path):
    """Issue 15 item 2: a Codex call ``{"token": "deadbeef12345678"}`` and Claude Code calls
    with ``{"password": …}`` / ``{"secret": …}`` came out raw in `continue --json`; the values
    are redacted, every other argument is kept byte for byte."""
    rows = [U("deploy it"),
            A(call("c1", "shell", token="deadbeef12345678", command="make deploy")),
            T("c1"),
            A(call("c2", "Bash", password="hunter2", description="log in")),
            T("c2"),
            A(call("c3", "mcp__vault__put", secret="p4ss-w0rd-9", path="kv/app")),
            T("c3"),
            A(text="Deployed.")]
    view = _continue(_home_with(tmp_path, rows))
    calls = [b for m in view["messages"] for b in m["content"] if b["type"] == "tool_call"]
    assert [c["arguments"] for c in calls] == [
        {"token": "[REDACTED:token]", "command": "make deploy"},
        {"password": "[REDACTED:password]", "description": "log in"},
        {"secret": "[REDACTED:secret]", "path": "kv/app"}]
    text = orjson.dumps(view).decode()
    for secret in ("deadbeef12345678", "hunter2", "p4ss-w0rd-9"):
        assert secret not in text
