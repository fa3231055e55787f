"""Issue 20 at the daemon: one error shape for every 4xx of the REST API (an unparseable
body included), one log format (uvicorn's lines too), the package version on /health."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from continuity.daemon.server import create_app
from tests.daemon.test_server import JSON, LOCAL, _live


@pytest.fixture
def client(store, isolated_home: Path):
    with TestClient(create_app(_live(store, isolated_home)), base_url=LOCAL) as c:
        yield c


CASES = [
    ("get", "/no/such/path", None, 404, "not_found", []),
    ("get", "/api/hooks/stop", None, 405, "method_not_allowed", []),
    (
        "post",
        "/api/hooks/stop",
        b"{not json",
        422,
        "invalid_request",
        [
            {
                "field": "body",
                "message": "not JSON (Expecting property name enclosed in double "
                "quotes, at character 1)",
            }
        ],
    ),
    (
        "post",
        "/api/harness/claude-code/stop",
        b"{not json",
        400,
        "invalid_request",
        [
            {
                "field": "body",
                "message": "stdin: not JSON (Expecting property name enclosed in "
                "double quotes: line 1 column 2 (char 1))",
            }
        ],
    ),
    (
        "post",
        "/api/harness/nope/stop",
        b"{}",
        422,
        "invalid_request",
        [
            {
                "field": "path.harness",
                "message": "must be one of 'claude-code', 'codex', 'pi', 'opencode', 'gemini-cli', "
                "'qwen-code' or 'copilot-cli'",
            }
        ],
    ),
    (
        "post",
        "/api/memory/remember",
        b'{"content": ""}',
        422,
        "invalid_request",
        [{"field": "body.content", "message": "must not be empty"}],
    ),
    ("get", "/api/sessions/zzz/continuation", None, 404, "unknown_session", []),
    (
        "get",
        "/api/sessions/current",
        None,
        422,
        "invalid_request",
        [{"field": "query.project", "message": "is required"}],
    ),
]


@pytest.mark.parametrize(
    "method,path,body,status,code,fields", CASES, ids=[f"{c[0]} {c[1]} {c[3]}" for c in CASES]
)
def test_every_4xx_has_one_shape(client, method, path, body, status, code, fields):
    call = getattr(client, method)
    r = call(path, content=body, headers=JSON) if body is not None else call(path)
    assert r.status_code == status
    data = r.json()
    assert set(data) == {"error", "detail", "fields"}
    assert (data["error"], data["fields"]) == (code, fields)
    assert isinstance(data["detail"], str) and data["detail"]


def test_guard_refusals_have_the_shape_too(client):
    r = client.post("/api/hooks/stop", content=b"{}", headers={"content-type": "text/plain"})
    assert (r.status_code, r.json()) == (
        415,
        {
            "error": "unsupported_media_type",
            "detail": "Content-Type: must be application/json",
            "fields": [],
        },
    )


def test_health_reports_the_package_version(client):
    from importlib.metadata import version

    body = client.get("/health").json()
    assert (body["status"], body["version"]) == ("ok", version("continuity"))
    assert client.get("/openapi.json").json()["info"]["version"] == version("continuity")


def test_one_log_format_for_the_daemon(tmp_path):
    """Every line ``continuity serve`` logs, uvicorn's "Started server process" included, is
    ``<date> <time>,<ms> LEVEL message``."""
    exe = str(Path(sys.executable).with_name("continuity"))
    proc = subprocess.Popen(
        [exe, "serve", "--port", "0", "--home", str(tmp_path)], stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (tmp_path / "daemon.url").exists():
            time.sleep(0.1)
        assert (tmp_path / "daemon.url").exists()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    lines = err.splitlines()
    assert any("Started server process" in line for line in lines), err
    assert any("continuity daemon listening on http://127.0.0.1:" in line for line in lines)
    shape = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR) \S")
    assert [line for line in lines if not shape.match(line)] == []
