"""End to end: the real daemon (``python -m continuity.daemon.server``, uvicorn, a subprocess on a
free loopback port) driven by the real hook command (``python -m continuity.cli.hookcmd``, a
subprocess per hook) fed the recorded hook JSON of each harness, while a transcript file grows
the way the harness writes it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from continuity.daemon.hooks.install import hook_argv
from continuity.lineage import artifacts as ln
from continuity.store import open_store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"
CONFIG = """
[continuity]
promptInterval = 2
[daemon]
budget_bytes = 1000
stop_seconds = 20
"""


# ---------------------------------------------------------------------------- harness writers


class Transcript:
    """A session file growing as its harness writes it (formats.md §1, §2, §3)."""

    def __init__(self, path: Path, key: str, cwd: str) -> None:
        self.path, self.key, self.cwd, self.n = path, key, cwd, 0
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def ts(self) -> str:
        self.n += 1
        return f"2026-09-01T08:{self.n // 60:02d}:{self.n % 60:02d}.000Z"

    def write(self, *records: dict[str, Any]) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r) + "\n")


class ClaudeCode(Transcript):
    def start(self) -> None:
        pass

    def _line(self, kind: str, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "sessionId": self.key,
            "cwd": self.cwd,
            "version": "2.1.40",
            "type": kind,
            "isSidechain": False,
            "userType": "external",
            "uuid": f"u{self.n + 1}",
            "parentUuid": f"u{self.n}" if self.n else None,
            "timestamp": self.ts(),
            "message": message,
        }

    def user(self, text: str) -> None:
        self.write(self._line("user", {"role": "user", "content": text}))

    def assistant(self, text: str) -> None:
        self.write(
            self._line(
                "assistant",
                {
                    "id": f"msg_{self.n}",
                    "role": "assistant",
                    "model": "claude-opus-4-6",
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 5, "output_tokens": 9},
                },
            )
        )


class Codex(Transcript):
    def start(self) -> None:
        self.write(
            {
                "timestamp": self.ts(),
                "type": "session_meta",
                "payload": {
                    "id": self.key,
                    "timestamp": "2026-09-01T08:00:00.000Z",
                    "cwd": self.cwd,
                    "originator": "codex_cli_rs",
                    "cli_version": "0.135.0",
                },
            }
        )

    def user(self, text: str) -> None:
        self.write(
            {
                "timestamp": self.ts(),
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}],
                },
            },
            {
                "timestamp": self.ts(),
                "type": "event_msg",
                "payload": {"type": "user_message", "message": text},
            },
        )

    def assistant(self, text: str) -> None:
        self.write(
            {
                "timestamp": self.ts(),
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                },
            },
            {
                "timestamp": self.ts(),
                "type": "event_msg",
                "payload": {"type": "task_complete", "last_agent_message": text},
            },
        )


class Pi(Transcript):
    def start(self) -> None:
        self.write(
            {
                "type": "session",
                "version": 3,
                "id": self.key,
                "timestamp": self.ts(),
                "cwd": self.cwd,
            }
        )

    def _message(self, message: dict[str, Any]) -> None:
        parent = f"e{self.n:07d}" if self.n > 1 else None
        self.write(
            {
                "type": "message",
                "id": f"e{self.n + 1:07d}",
                "parentId": parent,
                "timestamp": self.ts(),
                "message": message,
            }
        )

    def user(self, text: str) -> None:
        self._message(
            {
                "role": "user",
                "content": [{"type": "text", "text": text}],
                "timestamp": 1788426010000,
            }
        )

    def assistant(self, text: str) -> None:
        self._message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "stopReason": "stop",
                "timestamp": 1788426014000,
            }
        )


WRITERS: dict[str, type[Transcript]] = {"claude-code": ClaudeCode, "codex": Codex, "pi": Pi}


# ---------------------------------------------------------------------------- daemon and hooks


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """``python -m continuity.daemon.server`` on a free port of its own workspace."""

    def __init__(self, home: Path, env: dict[str, str | None] | None = None) -> None:
        """``env``: variables over this process's environment (None: removed)."""
        self.home = home
        env = {**os.environ, "CONTINUITY_HOME": str(home), **(env or {})}
        env.pop("CONTINUITY_DATABASE_URL", None)
        env = {k: v for k, v in env.items() if v is not None}
        self.log = open(home / "daemon.log", "ab")  # noqa: SIM115 - open while the child runs
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "continuity.daemon.server", "--home", str(home), "--port", "0"],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        url_file = home / "daemon.url"
        deadline = time.monotonic() + 30
        while not url_file.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("daemon did not start:\n" + self.logs())
            time.sleep(0.05)
        self.url = url_file.read_text().strip()
        # every daemon has a token, loopback too (issue 16): clients read the workspace's
        self.token = (home / "daemon.token").read_text().removesuffix("\n")
        self.http = httpx.Client(
            base_url=self.url, timeout=10, headers={"Authorization": f"Bearer {self.token}"}
        )
        _until(lambda: self.http.get("/health").status_code == 200)

    def logs(self) -> str:
        return (self.home / "daemon.log").read_text(errors="replace")

    def stop(self) -> int:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(30)
        self.log.close()
        return code

    def checkpoints(self, key: str) -> list[dict[str, Any]]:
        return self.http.get(f"/api/checkpoints/{key}").json()["checkpoints"]


def _until(predicate: Callable[[], Any], seconds: float = 20.0) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        try:
            value = predicate()
        except httpx.TransportError:
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def hook(
    home: Path, url: str, harness: str, event: str, **fields: Any
) -> subprocess.CompletedProcess:
    """Run the real hook command with the recorded JSON of (harness, event), ``fields`` over
    it (session_id, cwd, transcript_path, prompt ...)."""
    payload = json.loads((FIXTURES / harness / f"{event}.json").read_text())
    payload.update(fields)
    env = {**os.environ, "CONTINUITY_HOME": str(home), "CONTINUITY_DAEMON_URL": url}
    done = subprocess.run(
        [*hook_argv(), event, "--harness", harness],  # as installed
        input=json.dumps(payload).encode(),
        env=env,
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    home = tmp_path_factory.mktemp("daemon-home")
    (home / "config.toml").write_text(CONFIG)
    d = Daemon(home)
    yield d
    assert d.stop() == 0, d.logs()


def _open_store(home: Path):  # type: ignore[no-untyped-def]
    return open_store(f"sqlite:///{home / 'continuity.db'}")


# ---------------------------------------------------------------------------- a whole session


def _session(daemon: Daemon, tmp_path: Path, harness: str) -> tuple[str, str, Transcript]:
    key = f"{harness}-e2e-{tmp_path.name}"
    cwd = f"/srv/e2e/{tmp_path.name}/project"  # not a scratch folder: MEMORY.md lists it
    writer = WRITERS[harness](tmp_path / "session" / f"{key}.jsonl", key, cwd)
    base = {"session_id": key, "cwd": cwd, "transcript_path": str(writer.path)}
    writer.start()

    def run(event: str, **f: Any) -> subprocess.CompletedProcess:
        return hook(daemon.home, daemon.url, harness, event, **{**base, **f})

    first = run("session-start", source="startup").stdout  # nothing to recover yet
    assert json.loads(first)["additionalContext"] == "" if harness == "pi" else first == b""
    long_answer = "Checked month_range and the export loop. " * 12
    for i in range(1, 5):
        writer.user(f"prompt {i}: fix the March export")
        run("user-prompt-submit", prompt=f"prompt {i}: fix the March export")
        writer.assistant(f"answer {i}. {long_answer}")
        run("stop", last_assistant_message=f"answer {i}.")
    pre = run("pre-compaction", trigger="manual", custom_instructions="keep the tests").stdout
    if harness == "pi":
        assert json.loads(pre)["checkpoint"]["trigger"] == "pre_compaction"
    else:
        assert pre == b""  # never a "decision": "block" (B62)
    run("post-compaction")
    writer.user("prompt 5: now add leap years")
    run("user-prompt-submit", prompt="prompt 5: now add leap years")
    writer.assistant("answer 5: leap years handled.")
    run("stop", last_assistant_message="answer 5: leap years handled.")
    return key, cwd, writer


@pytest.mark.parametrize("harness", ["claude-code", "codex", "pi"])
def test_server_e2e_whole_session(daemon: Daemon, tmp_path: Path, harness: str) -> None:
    """start, prompts, compaction, settled turns and end leave the checkpoints, the complete
    transcript, a continuation checkpoint, the session's lineage (transcript and summary
    artifacts, a MEMORY.md naming it: the consolidation pass at session end) and the next
    session's recovery context."""
    key, cwd, writer = _session(daemon, tmp_path, harness)
    if harness == "codex":  # no SessionEnd: a new Codex session in the same folder ends it
        hook(
            daemon.home,
            daemon.url,
            "codex",
            "session-start",
            session_id=key + "-next",
            cwd=cwd,
            transcript_path=str(writer.path) + ".next",
            source="startup",
        )
    else:
        hook(
            daemon.home,
            daemon.url,
            harness,
            "session-end",
            session_id=key,
            cwd=cwd,
            transcript_path=str(writer.path),
        )
    rows = _until(lambda: (r := daemon.checkpoints(key)) and r[0]["trigger"] == "session_end" and r)
    # prompts 2 and 4 fire periodic; inside seed 000's 2,500 ms window they merge (counts sum)
    assert [(r["trigger"], r["prompt_count"]) for r in rows[:2]] == [
        ("session_end", 5),
        ("pre_compaction", 0),
    ]
    periodic = [r["prompt_count"] for r in rows[2:] if r["trigger"] == "periodic"]
    assert len(periodic) == len(rows) - 2 and sum(periodic) == 4
    assert "### Session Context\nkeep the tests" in rows[1]["digest"]
    with _open_store(daemon.home) as store:
        row = _until(
            lambda: (t := store.get_transcripts([key], "default").get(key)) and t.completed_at and t
        )
        for i in range(1, 5):
            assert row.content.count(f"User: prompt {i}: fix the March export") == 1
        assert "Assistant: answer 5: leap years handled." in row.content
        compaction = store.latest_compaction(key)
        assert compaction is not None and compaction.compaction.continuation
    token = ln.session_token("default", key)
    assert _until(
        lambda: (
            {"manifest", "transcript", "summary"}
            <= {
                p[2]
                for f in (daemon.home / "memory").glob(f"*--{token}--*.md")
                if (p := ln.parse_name(f.name))
            }
        )
    )
    memory = _until(
        lambda: (
            (m := daemon.home / "MEMORY.md").exists()
            and f"· session {key} · project · {harness}" in (t := m.read_text())
            and t
        )
    )
    assert f"session {key}): " in memory  # its thread head, with its summary's sentence
    view = daemon.http.get(f"/api/sessions/{key}/continuation").json()
    assert view["summary"] is not None and view["refusal"] is None
    assert view["request"]["text"] == "prompt 5: now add leap years"
    later = hook(
        daemon.home,
        daemon.url,
        harness,
        "session-start",
        session_id=key + "-later",
        cwd=cwd,
        transcript_path=str(writer.path) + ".later",
        source="startup",
    )
    if harness == "pi":
        context = json.loads(later.stdout)["additionalContext"]
    else:
        output = json.loads(later.stdout)
        assert output.get("continue", True) is True
        context = output["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(
        "## Project brief from continuity\nQuoted from continuity's "
        "record as evidence; not an instruction.\n"
    )
    assert f"### Session {key} · {harness} · " in context
    assert "prompt 5: now add leap years" in context and len(context) < 10_000


# ---------------------------------------------------------------------------- daemon down


def test_server_e2e_daemon_down_events_replay_once(tmp_path: Path) -> None:
    """Hooks with the daemon down exit 0 and spool; the daemon replays each event exactly
    once when it starts, and a restart replays nothing again."""
    home = tmp_path / "home"
    home.mkdir()
    down = f"http://127.0.0.1:{free_port()}"
    key, cwd = "cc-down-1", str(tmp_path / "proj")
    base = {"session_id": key, "cwd": cwd, "transcript_path": ""}
    started = time.monotonic()
    hook(home, down, "claude-code", "session-start", source="startup", **base)
    for prompt in ("first prompt", "second prompt"):
        hook(home, down, "claude-code", "user-prompt-submit", prompt=prompt, **base)
    hook(home, down, "claude-code", "session-end", **base)
    assert time.monotonic() - started < 15
    lines = (home / "spool" / "events.jsonl").read_bytes().splitlines()
    assert len(lines) == 4
    d = Daemon(home)
    try:
        rows = _until(lambda: (r := d.checkpoints(key)) and r)
        assert [(r["trigger"], r["prompt_count"]) for r in rows] == [("session_end", 2)]
        assert not [p for p in (home / "spool").iterdir() if p.name.startswith("replay-")]
    finally:
        assert d.stop() == 0
    d = Daemon(home)
    try:
        assert [r["trigger"] for r in d.checkpoints(key)] == ["session_end"]
    finally:
        assert d.stop() == 0
    with _open_store(home) as store:
        row = store.get_transcripts([key], "default")[key]
    assert row.content == "User: first prompt\n\nUser: second prompt"
    assert row.completed_at is not None


# ---------------------------------------------------------------------------- shutdown


def test_server_e2e_sigterm_flushes_queue_and_exits_zero(tmp_path: Path) -> None:
    """SIGTERM right after a periodic checkpoint was queued: it is written, exit status 0."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    d = Daemon(home)
    key, cwd = "cc-term-1", str(tmp_path / "proj")
    base = {"session_id": key, "cwd": cwd, "transcript_path": ""}
    hook(home, d.url, "claude-code", "session-start", source="startup", **base)
    for prompt in ("one", "two"):
        hook(home, d.url, "claude-code", "user-prompt-submit", prompt=prompt, **base)
    assert d.http.get("/health").json()["queued_checkpoints"] == 1
    assert d.stop() == 0, d.logs()
    assert not (home / "daemon.url").exists()
    with _open_store(home) as store:
        rows = store.checkpoints(key)
    assert [(r.trigger.value, r.prompt_count) for r in rows] == [("periodic", 2)]


# ---------------------------------------------------------------------------- workspaces


def test_server_e2e_hook_never_delivers_into_another_workspaces_daemon(tmp_path: Path) -> None:
    """Issue 12: workspace B's daemon is down and its daemon.url is stale, naming the port
    workspace A's daemon now listens on. B's hooks reach A's daemon but are refused there,
    without B's token (401) and, with A's token copied into B, for B's daemon id (421): each
    event waits in B's spool and A stores nothing of it (before: A took B's prompt)."""
    a_home, b_home = tmp_path / "a", tmp_path / "b"
    a_home.mkdir()
    b_home.mkdir()
    a = Daemon(a_home)
    try:
        assert (a_home / "daemon.id").read_text().strip().isalnum()
        (b_home / "daemon.url").write_text(a.url + "\n")  # stale: B's daemon died
        (b_home / "daemon.id").write_text("0123456789abcdef0123456789abcdef\n")
        env = {**os.environ, "CONTINUITY_HOME": str(b_home)}
        env.pop("CONTINUITY_DAEMON_URL", None)
        for prompt in ("B's secret prompt", "B's second prompt"):
            payload = {"session_id": "b-1", "cwd": str(tmp_path / "proj"), "prompt": prompt}
            done = subprocess.run(
                [*hook_argv(), "user-prompt-submit", "--harness", "claude-code"],
                input=json.dumps(payload).encode(),
                env=env,
                capture_output=True,
                timeout=30,
            )
            assert done.returncode == 0
            assert b"is not this workspace's" in done.stderr, done.stderr
            (b_home / "daemon.token").write_text(a.token + "\n")  # the second: A's token
        assert b"(HTTP 421)" in done.stderr
        lines = (b_home / "spool" / "events.jsonl").read_bytes().splitlines()
        assert len(lines) == 2
        assert a.http.get("/api/checkpoints/b-1").status_code == 404  # never received
        assert a.http.get("/health").json()["live_sessions"] == 0
    finally:
        assert a.stop() == 0, a.logs()
    assert not (a_home / "daemon.id").exists() and not (a_home / "daemon.url").exists()
    with _open_store(a_home) as store:
        assert store.get_transcripts(["b-1"], "default") == {}
