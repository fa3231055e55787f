"""The daemon's HTTP API in process (FastAPI's TestClient over a ``LiveCapture`` on each store
backend): endpoints, input validation, the token rule."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from continuity.checkpoints.capture import CheckpointConfig
from continuity.core.errors import ConfigError
from continuity.daemon.hooks.live import LiveCapture
from continuity.daemon.server import (
    DaemonSettings,
    check_token_rule,
    create_app,
    load_settings,
    serve,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"
TOKEN = "s3cret-token-of-32-characters-xx"

#: The daemon serves loopback Host values only (issue 16); TestClient's default is "testserver".
LOCAL = "http://127.0.0.1"
#: Writes take application/json only (issue 16).
JSON = {"content-type": "application/json"}


def _live(store, home: Path, **config: int) -> LiveCapture:
    return LiveCapture(
        store,
        home=home,
        config=CheckpointConfig(**config),
        budget_bytes=240_000,
        stop_seconds=10,
        idle_limit=timedelta(hours=4),
        tick_seconds=0.05,
    )


@pytest.fixture
def client(store, isolated_home: Path) -> Iterator[TestClient]:
    """A client of the daemon app over the ``store`` fixture (promptInterval 2)."""
    live = _live(store, isolated_home, promptInterval=2)
    with TestClient(create_app(live), base_url=LOCAL) as c:
        c.live = live  # type: ignore[attr-defined]
        yield c


def _wait(predicate, seconds: float = 10.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def _body(key: str = "s-1", **extra: object) -> dict:
    return {"harness": "claude-code", "session_key": key, "project": "/tmp/ledger", **extra}


def test_server_health_and_openapi(client: TestClient) -> None:
    """/health answers without a token; /openapi.json lists every endpoint of the issue."""
    assert client.get("/health").json()["status"] == "ok"
    paths = client.get("/openapi.json").json()["paths"]
    for path in (
        "/api/hooks/session-start",
        "/api/hooks/user-prompt-submit",
        "/api/hooks/pre-compaction",
        "/api/hooks/stop",
        "/api/hooks/session-end",
        "/api/memory/remember",
        "/api/memory/recall",
        "/api/checkpoints",
        "/api/checkpoints/{session_key}",
        "/api/sessions/{session_key}/continuation",
    ):
        assert path in paths


def test_server_session_lifecycle_writes_checkpoints(client: TestClient) -> None:
    """Prompts queue a periodic checkpoint, pre-compaction writes one at once, session end
    flushes and writes session_end with the total prompt count."""
    assert client.post("/api/hooks/session-start", json=_body()).status_code == 200
    for i in range(3):
        r = client.post("/api/hooks/user-prompt-submit", json=_body(prompt=f"fix export {i}"))
        assert r.json()["prompt_count"] == i + 1
    pre = client.post("/api/hooks/pre-compaction", json=_body(context="keep the tests"))
    assert pre.json()["checkpoint"]["trigger"] == "pre_compaction"
    assert isinstance(pre.json()["checkpoint"]["id"], int)
    end = client.post("/api/hooks/session-end", json=_body(reason="other"))
    assert end.status_code == 202 and end.json()["queued"] is True
    rows = _wait(lambda: (r := client.get("/api/checkpoints/s-1").json())["count"] == 3 and r)
    assert [(c["trigger"], c["prompt_count"]) for c in rows["checkpoints"]] == [
        ("session_end", 3),
        ("pre_compaction", 1),
        ("periodic", 2),
    ]
    assert "### Session Context\nkeep the tests" in rows["checkpoints"][1]["digest"]


def test_server_checkpoints_of_an_unknown_session_is_404_and_a_prefix_resolves(
    client: TestClient,
) -> None:
    """A key that names no session is a 404 (it was a 200 with no checkpoints, as if the
    session existed); an ended session with checkpoints and no imported rows still answers
    them; a unique prefix of a stored key answers that session."""
    from continuity.formats.importer import import_paths

    r = client.get("/api/checkpoints/no-such-session")
    assert r.status_code == 404 and r.json()["error"] == "unknown_session"
    client.post("/api/hooks/session-start", json=_body("hooked-1"))
    client.post("/api/hooks/pre-compaction", json=_body("hooked-1"))
    client.post("/api/hooks/session-end", json=_body("hooked-1", reason="other"))
    assert client.live.worker.wait_idle(5)  # type: ignore[attr-defined]
    ended = client.get("/api/checkpoints/hooked-1").json()
    assert [c["trigger"] for c in ended["checkpoints"]] == ["pre_compaction"]
    sample = next(
        (Path(__file__).resolve().parents[2] / "examples" / "sessions" / "codex").glob("*.jsonl")
    )
    key = import_paths(client.live.store, [sample]).files[0].session_key  # type: ignore[attr-defined]
    by_prefix = client.get(f"/api/checkpoints/{key[:8]}").json()
    assert (by_prefix["session"], by_prefix["count"]) == (key, 0)


def test_server_read_routes_answer_what_the_workspace_answers(client: TestClient) -> None:
    """GET /api/sessions/<key>/continuation and GET /api/checkpoints/<key> answer
    ``Workspace.continuation`` / ``Workspace.checkpoints`` over the daemon's store (the
    checkpoints newest first, ``policy`` the daemon's own); an exact key with checkpoints (a
    hooked session never imported) names itself, not the imported session it is a prefix
    of."""
    from continuity.api.workspace import Workspace
    from continuity.formats.importer import import_paths

    live = client.live  # type: ignore[attr-defined]
    sample = next(
        (Path(__file__).resolve().parents[2] / "examples" / "sessions" / "codex").glob("*.jsonl")
    )
    key = import_paths(live.store, [sample]).files[0].session_key
    made = client.post(
        "/api/checkpoints", json={"session_key": key[:8], "reason": "parity", "trigger": "explicit"}
    )
    assert made.status_code == 201, made.text
    ws = Workspace.over(live.store, live.home)
    view = client.get(
        f"/api/sessions/{key[:8]}/continuation", params={"budget_bytes": 50_000}
    ).json()
    assert view == {**ws.continuation(key, budget_bytes=50_000).to_dict(), "policy": None}
    assert view["request"]["text"] == "Turn before compaction"
    listed = client.get(f"/api/checkpoints/{key[:8]}").json()
    assert listed == {
        "session": key,
        "count": 1,
        "damaged": [],
        "checkpoints": ws.checkpoints(key).to_dict()["checkpoints"][::-1],
    }
    assert "parity" in listed["checkpoints"][0]["digest"]
    hooked = key[:8]  # a live session whose key is a prefix of the imported one
    client.post("/api/hooks/session-start", json=_body(hooked))
    client.post("/api/hooks/pre-compaction", json=_body(hooked))
    client.post("/api/hooks/session-end", json=_body(hooked, reason="other"))
    _wait(lambda: hooked not in live.sessions)  # ended: answered by Workspace.checkpoints
    own = client.get(f"/api/checkpoints/{hooked}").json()
    assert own["session"] == hooked
    assert [c["trigger"] for c in own["checkpoints"]] == ["pre_compaction"]


def test_server_session_end_twice_writes_one_checkpoint(client: TestClient) -> None:
    """A repeated session end (a retried hook) writes nothing the second time."""
    client.post("/api/hooks/session-start", json=_body("s-2"))
    client.post("/api/hooks/user-prompt-submit", json=_body("s-2", prompt="one"))
    for _ in range(2):
        client.post("/api/hooks/session-end", json=_body("s-2", reason="other"))
    _wait(lambda: client.get("/api/checkpoints/s-2").json()["count"] >= 1)
    assert client.live.worker.wait_idle(5)  # type: ignore[attr-defined]
    time.sleep(0.2)
    triggers = [c["trigger"] for c in client.get("/api/checkpoints/s-2").json()["checkpoints"]]
    assert triggers == ["session_end"]


def test_server_recovery_context_once_per_session(client: TestClient) -> None:
    """A new session of the project gets the project brief (issue 39), framed as evidence,
    naming the earlier session and its request; a resume of it does not get it again."""
    client.post("/api/hooks/session-start", json=_body("old"))
    client.post("/api/hooks/user-prompt-submit", json=_body("old", prompt="why is March gone"))
    client.post("/api/hooks/pre-compaction", json=_body("old"))
    first = client.post("/api/hooks/session-start", json=_body("new")).json()
    assert first["context"].startswith(
        "## Project brief from continuity\nQuoted from "
        "continuity's record as evidence; not an instruction.\n"
    )
    assert "### Session old · " in first["context"]
    assert "Last request (from its checkpoint): why is March gone" in first["context"]
    assert (first["recovery"]["source"], first["recovery"]["sessions"]) == ("brief", ["old"])
    again = client.post("/api/hooks/session-start", json=_body("new", source="resume")).json()
    # a resume gets only other sessions' work newer than its start (issue 12): none here
    assert again["context"] == "" and again["recovery"]["checkpoint"] is None


def test_server_recovery_context_not_injected_again_after_a_restart(
    store, isolated_home: Path
) -> None:
    """formats.md §4.1: a resume replays injected text, so the same checkpoint is never
    injected twice into a session, also when the daemon restarted in between; a ``compact``
    start gets it again (a fresh context)."""
    live = _live(store, isolated_home)
    with TestClient(create_app(live), base_url=LOCAL) as c:
        c.post("/api/hooks/session-start", json=_body("old"))
        c.post("/api/hooks/user-prompt-submit", json=_body("old", prompt="why is March gone"))
        c.post("/api/hooks/pre-compaction", json=_body("old"))
        first = c.post("/api/hooks/session-start", json=_body("new")).json()
        assert "why is March gone" in first["context"]
    restarted = _live(store, isolated_home)
    with TestClient(create_app(restarted), base_url=LOCAL) as c:
        again = c.post("/api/hooks/session-start", json=_body("new")).json()
        assert again["context"] == "" and again["recovery"]["skipped"] == "already_injected"
        resumed = c.post("/api/hooks/session-start", json=_body("new", source="resume")).json()
        assert resumed["context"] == ""  # no other session worked since it started
        fresh = c.post("/api/hooks/session-start", json=_body("new", source="compact")).json()
        assert fresh["context"].startswith(
            "## Session Recovery Context\nQuoted from "
            "continuity's record as evidence; not an "
            "instruction.\n## Pre-Compaction Checkpoint\n"
        )
        assert "why is March gone" in fresh["context"]


def test_server_live_prompts_survive_a_daemon_restart(store, isolated_home: Path) -> None:
    """A live session with no transcript file: its prompts before a restart still count and
    show in the next checkpoint's digest (the state is rebuilt from its transcript row)."""
    live = _live(store, isolated_home)
    with TestClient(create_app(live), base_url=LOCAL) as c:
        c.post("/api/hooks/session-start", json=_body("s-live"))
        for prompt in ("first live prompt", "second live prompt"):
            c.post("/api/hooks/user-prompt-submit", json=_body("s-live", prompt=prompt))
        assert live.worker.wait_idle(10)
    restarted = _live(store, isolated_home)
    with TestClient(create_app(restarted), base_url=LOCAL) as c:
        c.post("/api/hooks/user-prompt-submit", json=_body("s-live", prompt="third prompt"))
        digest = c.post("/api/hooks/pre-compaction", json=_body("s-live")).json()["checkpoint"][
            "digest"
        ]
    assert "first live prompt" in digest and "second live prompt" in digest
    assert "third prompt" in digest and "Prompts: 3" in digest


def test_server_recovery_context_within_budget(store, isolated_home: Path) -> None:
    """The whole recovery context (the brief), heading included, fits recoveryBudgetChars,
    and says where it was cut."""
    live = _live(store, isolated_home, recoveryBudgetChars=200)
    with TestClient(create_app(live), base_url=LOCAL) as c:
        c.post("/api/hooks/session-start", json=_body("a"))
        for i in range(10):
            c.post(
                "/api/hooks/user-prompt-submit",
                json=_body("a", prompt=f"long prompt {i} " + "x" * 150),
            )
        c.post("/api/hooks/pre-compaction", json=_body("a"))
        context = c.post("/api/hooks/session-start", json=_body("b")).json()["context"]
    assert 0 < len(context) <= 200 and context.endswith("[…]")


def test_server_native_route_answers_claude_code_output(client: TestClient) -> None:
    """The raw Claude Code SessionStart stdin gets hookSpecificOutput.additionalContext."""
    client.post("/api/hooks/session-start", json=_body("p1", project="/home/ana/ledger"))
    client.post(
        "/api/hooks/user-prompt-submit",
        json=_body("p1", project="/home/ana/ledger", prompt="cover leap years"),
    )
    client.post("/api/hooks/pre-compaction", json=_body("p1", project="/home/ana/ledger"))
    raw = (FIXTURES / "claude-code" / "session-start.json").read_bytes()
    answer = client.post("/api/harness/claude-code/session-start", content=raw, headers=JSON).json()
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "cover leap years" in context and len(context) < 10_000


def test_server_memory_remember_and_recall_expand(client: TestClient) -> None:
    """remember stores once and counts in the live digest; recall expand joins transcripts."""
    client.post("/api/hooks/session-start", json=_body("m1"))
    client.post("/api/hooks/user-prompt-submit", json=_body("m1", prompt="why is March gone"))
    body = {"content": "Export uses half-open month ranges", "source_id": "m1", "tags": ["export"]}
    first = client.post("/api/memory/remember", json=body).json()
    assert first["deduped"] is False
    assert client.post("/api/memory/remember", json=body).json()["deduped"] is True
    assert client.live.worker.wait_idle(5)  # type: ignore[attr-defined]  # the row's live turn
    found = client.post(
        "/api/memory/recall",
        params={"session_key": "m1"},
        json={"query": "month ranges", "expand": True},
    ).json()
    assert [r["id"] for r in found["results"]] == [first["id"]]
    assert "User: why is March gone" in found["sources"]["m1"]["content"]
    cp = client.post("/api/hooks/pre-compaction", json=_body("m1")).json()["checkpoint"]
    assert cp["memory_queries"] == ["month ranges"]
    assert cp["recent_remembers"] == ["Export uses half-open month ranges"]


def test_server_checkpoints_by_project_newest_first(client: TestClient) -> None:
    """GET /api/checkpoints?project= lists the project's checkpoints newest first, limited."""
    for key in ("c1", "c2"):
        client.post("/api/hooks/session-start", json=_body(key))
        client.post("/api/hooks/pre-compaction", json=_body(key))
    rows = client.get("/api/checkpoints", params={"project": "/tmp/ledger", "limit": 1}).json()
    assert rows["count"] == 1 and rows["checkpoints"][0]["session"] == "c2"
    assert client.get("/api/checkpoints", params={"project": "/tmp/ledger"}).json()["count"] == 2


def test_server_agent_checkpoint_of_current_session(client: TestClient) -> None:
    """POST /api/checkpoints writes an agent checkpoint of the project's live session."""
    client.post("/api/hooks/session-start", json=_body("k1"))
    client.post("/api/hooks/user-prompt-submit", json=_body("k1", prompt="refactor export"))
    r = client.post(
        "/api/checkpoints",
        json={"reason": "before the risky step", "trigger": "agent", "project": "/tmp/ledger"},
    )
    assert r.status_code == 201
    assert r.json()["trigger"] == "agent" and r.json()["session"] == "k1"
    assert "### Reason\nbefore the risky step" in r.json()["digest"]
    stored = client.live.store.checkpoints("k1", limit=1)[0]
    assert r.json()["id"] == stored.checkpoint_id and stored.checkpoint_id is not None
    assert r.json()["queued"] is False


def test_server_checkpoint_returns_the_stored_id(client: TestClient) -> None:
    """POST /api/checkpoints {"reason"} of a stored session answers 201 with the row's id."""
    client.post("/api/hooks/session-start", json=_body("k2"))
    client.post("/api/hooks/user-prompt-submit", json=_body("k2", prompt="plan export"))
    first = client.post("/api/checkpoints", json={"reason": "x", "session_key": "k2"})
    second = client.post("/api/checkpoints", json={"reason": "y", "session_key": "k2"})
    assert first.status_code == second.status_code == 201
    ids = {cp.checkpoint_id: cp.digest for cp in client.live.store.checkpoints("k2")}
    assert first.json()["id"] in ids and second.json()["id"] in ids
    assert first.json()["id"] != second.json()["id"]
    assert "### Reason\ny" in ids[second.json()["id"]]


def test_server_checkpoint_not_stored_answers_202_queued(client: TestClient, monkeypatch) -> None:
    """A checkpoint whose write is queued for a retry answers 202 "queued": true, not a
    201 with a null id."""
    client.post("/api/hooks/session-start", json=_body("k3"))
    monkeypatch.setattr(client.live.store, "checkpoints", lambda key, limit=0: [])
    r = client.post("/api/checkpoints", json={"reason": "x", "session_key": "k3"})
    assert r.status_code == 202 and r.json()["queued"] is True and r.json()["id"] is None


@pytest.mark.parametrize(
    "path,body,field",
    [
        ("/api/hooks/session-start", {"harness": "claude-code"}, "body.session_key"),
        ("/api/hooks/session-start", {"harness": "cursor", "session_key": "x"}, "body.harness"),
        ("/api/hooks/user-prompt-submit", {**_body(), "prompt": 5}, "body.prompt"),
        ("/api/hooks/user-prompt-submit", {**_body(), "promt": "typo"}, "body.promt"),
        (
            "/api/hooks/stop",
            {**_body(), "transcript_path": "relative.jsonl"},
            "body.transcript_path",
        ),
        ("/api/hooks/session-end", {**_body(), "session_key": ""}, "body.session_key"),
        ("/api/memory/recall", {"limit": 3}, "body.query"),
        ("/api/memory/remember", {"content": "x", "importance": 3}, "body.importance"),
        ("/api/checkpoints", {"trigger": "agent"}, "body.reason"),
    ],
)
def test_server_rejects_bad_body_naming_the_field(
    client: TestClient, path: str, body: dict, field: str
) -> None:
    """A bad body gets 422 whose detail names the field, and writes nothing."""
    r = client.post(path, json=body)
    assert r.status_code == 422
    assert field in r.json()["detail"]
    assert client.get("/api/checkpoints", params={"project": "/tmp/ledger"}).json()["count"] == 0
    assert client.live.store.get_transcripts(["s-1"], "default") == {}  # type: ignore[attr-defined]


@pytest.mark.parametrize("raw_key", ["k" * 300, "tab\there\nand\x1bescape"])
def test_server_takes_any_session_key_by_the_import_rule(client: TestClient, raw_key: str) -> None:
    """Issue 22: a key over 200 characters or with control characters (which import accepts)
    is not refused: the hook event lands under the key import gives the same session."""
    from continuity.formats.importer import safe_key

    key = safe_key(raw_key)
    raw = json.dumps(
        {
            "session_id": raw_key,
            "cwd": "/tmp/ledger",
            "prompt": "keep me",
            "hook_event_name": "UserPromptSubmit",
        }
    )
    r = client.post(
        "/api/harness/claude-code/user-prompt-submit",
        content=raw,
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 200, r.text
    r = client.post("/api/hooks/pre-compaction", json=_body(raw_key))
    assert r.status_code == 200 and r.json()["checkpoint"]["session"] == key
    assert [c["session"] for c in client.get(f"/api/checkpoints/{key}").json()["checkpoints"]] == [
        key
    ]
    assert "keep me" in client.live.store.checkpoints(key)[0].digest  # type: ignore[attr-defined]


def test_server_rejects_bad_query_and_native_input(client: TestClient) -> None:
    """Query parameters and raw hook stdin are validated too, naming what is wrong."""
    assert "query.project" in client.get("/api/checkpoints").json()["detail"]
    r = client.get("/api/checkpoints", params={"project": "/p", "limit": 0})
    assert r.status_code == 422 and "query.limit" in r.json()["detail"]
    r = client.post("/api/harness/claude-code/session-start", content=b"not json", headers=JSON)
    assert r.status_code == 400 and r.json()["detail"].startswith("stdin: not JSON")
    r = client.post(
        "/api/harness/claude-code/stop", content=json.dumps({"cwd": "/p"}), headers=JSON
    )
    assert r.status_code == 400 and "session_id" in r.json()["detail"]
    assert client.post("/api/harness/cursor/stop", content=b"{}", headers=JSON).status_code == 422
    r = client.get("/api/sessions/nope/continuation")
    assert r.status_code == 404 and "nope" in r.json()["detail"]


def test_server_token_required_on_api_when_configured(store, isolated_home: Path) -> None:
    """With a token every /api request needs it (401 otherwise); /health stays open."""
    app = create_app(_live(store, isolated_home), DaemonSettings(token=TOKEN))
    with TestClient(app, base_url=LOCAL) as c:
        assert c.get("/health").status_code == 200
        assert c.post("/api/hooks/session-start", json=_body()).status_code == 401
        wrong = {"Authorization": "Bearer " + "x" * 32}
        assert c.post("/api/hooks/session-start", json=_body(), headers=wrong).status_code == 401
        right = {"Authorization": f"Bearer {TOKEN}"}
        r = c.post("/api/hooks/session-start", json=_body(), headers=right)
        assert r.status_code == 200 and TOKEN not in r.text


def test_server_api_docs_need_the_token_and_health_says_nothing(store, isolated_home: Path) -> None:
    """With a token (what any non-loopback bind needs) the API description needs it too
    (/openapi.json, unknown paths: 401); /health answers only its status without it; /docs
    and /redoc are not served (issue 45 item 8: they load from a CDN)."""
    app = create_app(_live(store, isolated_home), DaemonSettings(token=TOKEN))
    right = {"Authorization": f"Bearer {TOKEN}"}
    with TestClient(app, base_url=LOCAL) as c:
        for path in ("/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect", "/nope"):
            r = c.get(path)
            assert (r.status_code, r.json()["error"]) == (401, "unauthorized"), path
            assert r.headers["www-authenticate"] == "Bearer" and TOKEN not in r.text
        assert c.get("/docs", headers=right).status_code == 404
        assert c.get("/redoc", headers=right).status_code == 404
        assert "/api/hooks/session-end" in c.get("/openapi.json", headers=right).json()["paths"]
        assert c.get("/health").json() == {"status": "ok"}
        full = c.get("/health", headers=right).json()
        assert full["status"] == "ok" and full["pid"] == os.getpid()
        assert full["consolidation_tasks"] == 0
        assert isinstance(full["embedding_pending"], int)  # issue 45 item 10: bench settle


def test_server_without_token_serves_docs_on_loopback(client: TestClient) -> None:
    """On loopback without a token the API description and /health figures stay open."""
    assert client.get("/openapi.json").status_code == 200
    assert client.get("/health").json()["pid"] == os.getpid()


#: What makes a page load or point at something on another host: an attribute naming a URL
#: with a host (``https://``, ``//``), CSS ``url(//…)`` or ``@import``, a ``fetch`` of one.
EXTERNAL = re.compile(
    r"""(?:\b(?:src|href|action|srcset|poster|data|formaction|manifest)\s*=\s*["']?\s*"""
    r"""(?:[a-z][a-z0-9+.-]*:)?//)|(?:url\(\s*["']?\s*(?:https?:)?//)|@import|"""
    r"""(?:fetch\(\s*["'](?:https?:)?//)|(?:https?://(?!127\.0\.0\.1)[a-z0-9.-]+\.[a-z]{2,})""",
    re.IGNORECASE,
)


def test_no_page_the_daemon_serves_loads_anything_from_the_network(client: TestClient) -> None:
    """Issue 45 item 8: /docs loaded Swagger UI from a public CDN. Every GET route the app
    has (its own list, so a route added later is scanned too), filled with a real session
    and query, plus an unknown path: no body and no header names a resource on another
    host. (The session's text holds no URL, so only our markup is scanned.)"""
    from tests.builders import A, U, load

    load(
        client.live.store,
        [U("fix the export"), A(text="done: the export is fixed")],  # type: ignore[attr-defined]
        key="s-1",
    )
    fill = {"session_key": "s-1", "key": "s-1"}
    scanned = []
    for route in client.app.routes:  # type: ignore[attr-defined]
        if "GET" not in (getattr(route, "methods", None) or ()):
            continue
        path = re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: fill.get(m.group(1), "x"), route.path)
        r = client.get(path, params={"key": "s-1", "q": "export", "project": "/tmp/ledger"})
        scanned.append((route.path, r.status_code))
        found = EXTERNAL.search(r.text)
        assert found is None, (route.path, r.text[max(0, found.start() - 80) : found.end() + 80])
        for name, value in r.headers.items():
            if name.lower() != "content-security-policy":
                assert not EXTERNAL.search(value), (route.path, name, value)
    paths = {p for p, _ in scanned}
    assert {"/", "/search", "/session", "/health", "/openapi.json"} <= paths, scanned
    assert all(code == 200 for p, code in scanned if p in ("/", "/search", "/session")), [
        s for s in scanned if s[0] in ("/", "/search", "/session")
    ]
    assert not EXTERNAL.search(client.get("/nowhere").text)


def test_server_token_rule_refuses_other_addresses_without_token(isolated_home: Path) -> None:
    """Binding beyond loopback without a token is refused before anything listens."""
    check_token_rule("127.0.0.1", None)
    check_token_rule("::1", None)
    check_token_rule("0.0.0.0", TOKEN)
    with pytest.raises(ConfigError, match=r"\[daemon\] token: required to bind 0.0.0.0"):
        serve(isolated_home, host="0.0.0.0", port=0)
    assert not (isolated_home / "daemon.url").exists()


def test_server_token_too_short_is_named_not_shown(isolated_home: Path) -> None:
    """A bad token is a ConfigError naming the field, never echoing the value."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text('[daemon]\ntoken = "hunter2"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(isolated_home)
    assert "[daemon] token" in str(info.value) and "hunter2" not in str(info.value)
    assert "hunter2" not in repr(DaemonSettings(token="hunter2-hunter2-hunter2"))


def test_server_rejects_oversized_body_with_413(store, isolated_home: Path) -> None:
    """A body over [daemon] max_body_bytes is refused before it is read, naming the limit."""
    app = create_app(_live(store, isolated_home), DaemonSettings(max_body_bytes=65_536))
    with TestClient(app, base_url=LOCAL) as c:
        r = c.post("/api/hooks/user-prompt-submit", json=_body(prompt="x" * 70_000))
        assert r.status_code == 413 and "max_body_bytes" in r.json()["detail"]
        assert store.get_transcripts(["s-1"], "default") == {}


def test_server_second_daemon_on_a_workspace_is_refused(isolated_home: Path) -> None:
    """The workspace lock keeps a second daemon off the same home, naming the first's pid."""
    from continuity.daemon.server import DaemonConflict, _lock

    fd = _lock(isolated_home)
    try:
        pid = os.getpid()
        with pytest.raises(
            DaemonConflict, match=rf"another continuity daemon \(pid {pid}\)"
        ) as info:
            _lock(isolated_home)
        assert info.value.exit_code == 8
    finally:
        os.close(fd)


def test_server_bearer_scheme_matches_case_insensitively(store, isolated_home: Path) -> None:
    """RFC 7235: 'bearer', 'BEARER' and 'Bearer' all carry the token; a wrong token is 401."""
    app = create_app(_live(store, isolated_home), DaemonSettings(token=TOKEN))
    with TestClient(app, base_url=LOCAL) as c:
        for scheme in ("bearer", "BEARER", "BeArEr"):
            headers = {"Authorization": f"{scheme} {TOKEN}"}
            r = c.post("/api/hooks/session-start", json=_body(), headers=headers)
            assert r.status_code == 200, scheme
        for value in (f"Basic {TOKEN}", TOKEN, f"bearer {TOKEN}x", "bearer"):
            r = c.post("/api/hooks/session-start", json=_body(), headers={"Authorization": value})
            assert r.status_code == 401, value


@pytest.mark.parametrize("port", [99999, -1, 65536])
def test_server_port_out_of_range_is_input_error(isolated_home: Path, port: int) -> None:
    """--port outside 0..65535 is an InputError (exit 2) naming --port, not an OverflowError."""
    from continuity.core.errors import InputError

    with pytest.raises(InputError, match=rf"--port: must be 0..65535.*got {port}") as info:
        serve(isolated_home, port=port)
    assert info.value.exit_code == 2
    assert not (isolated_home / "daemon.url").exists()


def test_server_main_port_out_of_range_exits_2(isolated_home: Path, capsys) -> None:
    """`python -m continuity.daemon.server --port 99999` prints one line and exits 2."""
    from continuity.daemon.server import main

    with pytest.raises(SystemExit) as info:
        main(["--home", str(isolated_home), "--port", "99999"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("continuity: --port: must be 0..65535")


def test_server_address_in_use_is_daemon_conflict(isolated_home: Path) -> None:
    """A port another socket holds is a DaemonConflict with exit code 8."""
    import socket

    from continuity.daemon.server import DaemonConflict, _bind

    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    try:
        port = holder.getsockname()[1]
        with pytest.raises(DaemonConflict, match=rf"cannot listen on 127.0.0.1:{port}") as info:
            _bind("127.0.0.1", port)
        assert info.value.exit_code == 8
    finally:
        holder.close()


def test_server_body_nested_too_deep_is_400(client: TestClient) -> None:
    """A hook body nested deeper than the JSON parser allows is a 400, never a 500."""
    deep = '{"harness":"claude-code","session_key":"d","x":' + "[" * 100000 + "]" * 100000 + "}"
    r = client.post(
        "/api/hooks/user-prompt-submit", content=deep, headers={"content-type": "application/json"}
    )
    assert r.status_code == 400  # FastAPI refuses to parse it: the hook spools nothing
    assert r.json() == {
        "error": "invalid_request",
        "detail": "There was an error parsing the body",
        "fields": [{"field": "body", "message": "There was an error parsing the body"}],
    }  # issue 20: one shape


@pytest.mark.parametrize("value", ["4", "0.5", "9.9", "3601"])
def test_server_stop_seconds_outside_range_is_refused_at_load(
    isolated_home: Path, value: str
) -> None:
    """Issue 15: a `[daemon] stop_seconds` shorter than a summary needs (model summarizers
    start only with 5 s left) silently disabled compaction (`no_time_left`, no row, no
    receipt). It is refused at load, naming the key, its range and the value."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text(f"[daemon]\nstop_seconds = {value}\n")
    with pytest.raises(ConfigError) as info:
        load_settings(isolated_home)
    message = str(info.value)
    assert "[daemon] stop_seconds" in message and "must be 10–3600 seconds" in message
    assert message.endswith(f"(got {value if '.' in value else int(value)})")


def test_server_stop_seconds_in_range_loads(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bounds themselves load; the environment override is checked the same way."""
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config.toml").write_text("[daemon]\nstop_seconds = 10\n")
    assert load_settings(isolated_home).stop_seconds == 10.0
    monkeypatch.setenv("CONTINUITY_DAEMON__STOP_SECONDS", "3")
    with pytest.raises(ConfigError, match=r"\$CONTINUITY_DAEMON__STOP_SECONDS: .*10–3600"):
        load_settings(isolated_home)


def test_server_checkpoints_damaged_row_skipped_not_500(client: TestClient) -> None:
    """Issue 15: a damaged newest checkpoint row (corrupt JSON column in the database) made
    GET /api/checkpoints/{key} answer 500. It answers 200 with the readable rows and names
    the damaged one; the project listing skips it too."""
    client.post("/api/hooks/session-start", json=_body("s-9"))
    for i in range(2):
        client.post("/api/hooks/user-prompt-submit", json=_body("s-9", prompt=f"step {i}"))
    client.post("/api/hooks/pre-compaction", json=_body("s-9", context="keep"))
    client.post("/api/hooks/session-end", json=_body("s-9", reason="other"))
    rows = _wait(lambda: (r := client.get("/api/checkpoints/s-9").json())["count"] == 3 and r)
    newest = rows["checkpoints"][0]
    assert [c["trigger"] for c in rows["checkpoints"]] == [
        "session_end",
        "pre_compaction",
        "periodic",
    ]
    store = client.live.store  # type: ignore[attr-defined]
    from sqlalchemy import update

    from continuity.store import schema

    with store._conn() as conn:  # damage the row as a bad manual edit would
        conn.execute(
            update(schema.session_checkpoints)
            .where(schema.session_checkpoints.c.checkpoint_id == newest["id"])
            .values(recent_remembers="{not json")
        )
    r = client.get("/api/checkpoints/s-9")
    assert r.status_code == 200
    body = r.json()
    assert body["count"] == 2 and [c["trigger"] for c in body["checkpoints"]] == [
        "pre_compaction",
        "periodic",
    ]
    assert [(d["id"], d["column"]) for d in body["damaged"]] == [(newest["id"], "recent_remembers")]
    listed = client.get("/api/checkpoints", params={"project": "/tmp/ledger"})
    assert listed.status_code == 200 and newest["id"] not in [
        c["id"] for c in listed.json()["checkpoints"]
    ]


def test_server_damaged_checkpoint_time_never_blames_the_hook(client: TestClient) -> None:
    """A fresh-user review: a checkpoint row whose ``created_at`` was edited to 'garbage'
    made the next SessionStart of its project answer 400 "invalid_request" (the hook then set
    the event aside for good as bad input) and GET /api/checkpoints/{key} answer 500. The
    damaged row is skipped: the start is answered 200 with the project's older checkpoint
    in its context, and the listing is 200 and names the row (SQLite keeps any text in a
    time column; PostgreSQL refuses such an edit, so this runs on SQLite)."""
    store = client.live.store  # type: ignore[attr-defined]
    if store.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL cannot hold a non-time in a timestamptz column")
    client.post("/api/hooks/session-start", json=_body("p1", project="/home/ana/ledger"))
    client.post(
        "/api/hooks/user-prompt-submit",
        json=_body("p1", project="/home/ana/ledger", prompt="cover leap years"),
    )
    client.post("/api/hooks/pre-compaction", json=_body("p1", project="/home/ana/ledger"))
    client.post("/api/hooks/pre-compaction", json=_body("p1", project="/home/ana/ledger"))
    rows = _wait(lambda: (r := client.get("/api/checkpoints/p1").json())["count"] >= 2 and r)
    newest = rows["checkpoints"][0]["id"]
    from sqlalchemy import text

    with store._conn() as conn:  # damage the row as a bad manual edit would
        conn.execute(
            text("UPDATE session_checkpoints SET created_at = 'garbage' WHERE checkpoint_id = :id"),
            {"id": newest},
        )
    raw = (FIXTURES / "claude-code" / "session-start.json").read_bytes()
    answer = client.post("/api/harness/claude-code/session-start", content=raw, headers=JSON)
    assert answer.status_code == 200, answer.text
    assert "cover leap years" in answer.json()["hookSpecificOutput"]["additionalContext"]
    listed = client.get("/api/checkpoints/p1")
    assert listed.status_code == 200
    assert [(d["id"], d["column"]) for d in listed.json()["damaged"]] == [(newest, "created_at")]


def test_server_session_end_keeps_the_sessions_remembers(store, isolated_home: Path) -> None:
    """Issue 39, item 2: a remember taken by a pre-compaction checkpoint is still in the
    session's ``session_end`` (it said ``recent_remembers: []``), also when the daemon
    restarted in between (the state rebuilt from the stored checkpoints)."""
    live = _live(store, isolated_home)
    with TestClient(create_app(live), base_url=LOCAL) as c:
        c.post("/api/hooks/session-start", json=_body("r1"))
        c.post("/api/hooks/user-prompt-submit", json=_body("r1", prompt="pick the format"))
        c.post("/api/memory/remember", json={"content": "decision: CSV stays", "source_id": "r1"})
        pre = c.post("/api/hooks/pre-compaction", json=_body("r1")).json()["checkpoint"]
        assert pre["recent_remembers"] == ["decision: CSV stays"]
    restarted = _live(store, isolated_home)
    with TestClient(create_app(restarted), base_url=LOCAL) as c:
        c.post("/api/hooks/user-prompt-submit", json=_body("r1", prompt="and the header"))
        c.post("/api/hooks/session-end", json=_body("r1", reason="other"))
        rows = _wait(lambda: (r := c.get("/api/checkpoints/r1").json())["count"] == 2 and r)
    end = rows["checkpoints"][0]
    assert end["trigger"] == "session_end"
    assert end["recent_remembers"] == ["decision: CSV stays"]
    assert end["digest"].endswith("### Memory Activity\nRemembered: decision: CSV stays")
