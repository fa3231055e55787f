"""Harness adapters (recorded hook JSON → our bodies → the harness's expected stdout) and the
fast hook command (arguments, addresses, imports, never failing the agent)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from continuity.cli import hookcmd
from continuity.daemon.hooks import adapters, spool
from continuity.daemon.hooks.models import BODIES
from continuity.daemon.hooks.spool import SpooledEvent, fast_home

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"
CASES = sorted((p.parent.name, p.stem) for p in FIXTURES.glob("*/*.json"))


@pytest.mark.parametrize("harness,event", CASES)
def test_adapters_recorded_input_becomes_a_valid_body(harness: str, event: str) -> None:
    """Every recorded hook input maps to a body our endpoint accepts, keyed by session_id."""
    payload = json.loads((FIXTURES / harness / f"{event}.json").read_text())
    body = BODIES[event].model_validate(adapters.to_body(harness, event, payload))
    assert body.session_key == payload["session_id"]
    assert body.project == payload["cwd"]
    assert body.harness == harness


def test_adapters_map_event_fields() -> None:
    """Prompt, compaction instructions, last message and end reason land in our fields; an
    elided transcript_path ("…", B60) is dropped rather than trusted."""
    load = lambda e: json.loads((FIXTURES / "claude-code" / f"{e}.json").read_text())  # noqa: E731
    assert (
        adapters.to_body("claude-code", "user-prompt-submit", load("user-prompt-submit"))["prompt"]
        == "also cover leap years"
    )
    pre = adapters.to_body("claude-code", "pre-compaction", load("pre-compaction"))
    assert pre["trigger"] == "auto" and "context" not in pre and "transcript_path" not in pre
    stop = adapters.to_body("claude-code", "stop", load("stop"))
    assert stop["last_assistant_message"] == "Added the leap-year case; 31 tests pass."
    assert (
        adapters.to_body("claude-code", "session-end", load("session-end"))["reason"]
        == "prompt_input_exit"
    )
    start = adapters.to_body("claude-code", "session-start", load("session-start"))
    assert start["source"] == "resume" and start["transcript_path"].endswith("5b7c2e90-aaaa.jsonl")


def test_adapters_reject_input_without_session() -> None:
    """No session id, or stdin that is not a JSON object, is an AdapterError naming it."""
    with pytest.raises(adapters.AdapterError, match="session_id"):
        adapters.to_body("codex", "stop", {"cwd": "/p"})
    with pytest.raises(adapters.AdapterError, match="stdin: a JSON object"):
        adapters.parse_payload(b"[1, 2]")
    assert adapters.to_body("pi", "stop", {"sessionKey": "k"})["session_key"] == "k"


@pytest.mark.parametrize(
    "payload,message",
    [
        ({"session_id": ["x"]}, "session_id: expected a string, got array"),
        ({"sessionId": {"a": 1}}, "sessionId: expected a string, got object"),
        ({"session_id": None}, "session_id: missing from the hook input"),
    ],
)
def test_adapters_name_a_wrong_typed_session_id(payload, message) -> None:
    """Fresh-user review: ``{"session_id": ["x"]}`` was reported as missing; it is there, of
    the wrong type, and the error says so."""
    with pytest.raises(adapters.AdapterError) as info:
        adapters.to_body("claude-code", "stop", payload)
    assert str(info.value) == message
    with pytest.raises(adapters.AdapterError) as info:
        adapters.parse_payload(b"[1, 2]")
    assert str(info.value) == "stdin: a JSON object is expected (got array)"


def test_adapters_render_each_harness_output() -> None:
    """Claude Code gets hookSpecificOutput, Codex the same inside continue/suppressOutput, pi
    plain JSON; no context and every other event print nothing for Claude Code and Codex."""
    answer = {"session_key": "k", "context": "## Session Recovery Context\nhello"}
    cc = json.loads(adapters.render("claude-code", "session-start", answer))
    assert cc == {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": answer["context"],
        }
    }
    codex = json.loads(adapters.render("codex", "session-start", answer))
    assert codex["continue"] is True and codex["suppressOutput"] is True
    assert codex["hookSpecificOutput"]["additionalContext"] == answer["context"]
    assert (
        json.loads(adapters.render("pi", "session-start", answer))["additionalContext"]
        == answer["context"]
    )
    assert adapters.render("claude-code", "session-start", {"context": ""}) == b""
    for event in ("pre-compaction", "stop", "session-end", "user-prompt-submit"):
        assert adapters.render("claude-code", event, {"checkpoint": {"id": 1}}) == b""


def test_adapters_clip_context_under_claude_code_limit() -> None:
    """additionalContext stays under 10,000 characters, cut at a line end, marked."""
    text = "\n".join(f"line {i} " + "é" * 80 for i in range(400))
    clipped = adapters.clip_context(text)
    assert len(clipped) < 10_000 and clipped.endswith(adapters.CLIPPED_MARKER)
    assert text.startswith(clipped[: -len(adapters.CLIPPED_MARKER)])
    body = json.loads(adapters.render("claude-code", "session-start", {"context": text}))
    assert len(body["hookSpecificOutput"]["additionalContext"]) < 10_000
    assert adapters.clip_context("short") == "short"


# ---------------------------------------------------------------------------- hook command


def test_hookcmd_home_option_picks_the_workspace(tmp_path: Path, monkeypatch) -> None:
    """``--home DIR`` (as on every command) is the workspace: with no daemon there the event
    is spooled in DIR/spool, not in $CONTINUITY_HOME's."""
    other = tmp_path / "other"
    monkeypatch.setenv("CONTINUITY_HOME", str(tmp_path / "env-home"))
    (other / "config.toml").parent.mkdir(parents=True)
    (other / "config.toml").write_text("[daemon]\nport = 1\n", encoding="utf-8")
    assert hookcmd.take_home(["stop", "--home", str(other), "--harness", "pi"]) == (
        ["stop", "--harness", "pi"],
        str(other),
    )
    assert hookcmd.take_home(["stop", f"--home={other}"]) == (["stop"], str(other))
    monkeypatch.setattr(hookcmd, "_read_stdin", lambda deadline: (b'{"session_id":"s"}', None))
    assert (
        hookcmd.run(["stop", "--harness", "claude-code", "--home", str(other), "--timeout", "0.5"])
        == 0
    )
    assert (other / "spool").is_dir() and any((other / "spool").iterdir())
    assert not (tmp_path / "env-home").exists()


def test_hookcmd_sync_request_is_never_spooled(tmp_path: Path, monkeypatch, capsys) -> None:
    """Issue 14: ``continuation-summary`` (pi's extension waits for the answer) with no daemon
    of the workspace prints ``{"delivered": false, ...}`` and spools nothing: a summary made
    later would reach no one. A ``continuation-refused`` report no daemon took is journaled
    as a body line, so the receipt reaches the store when the daemon starts."""
    import json

    monkeypatch.delenv("CONTINUITY_DAEMON_URL", raising=False)
    monkeypatch.setattr(hookcmd, "_read_stdin", lambda deadline: (b'{"session_key":"s"}', None))
    assert (
        hookcmd.run(
            ["continuation-summary", "--harness", "pi", "--home", str(tmp_path), "--timeout", "1"]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out) == {"delivered": False, "why": "no_daemon"}
    assert not (tmp_path / "spool").exists()
    monkeypatch.setenv("CONTINUITY_DAEMON_URL", "http://127.0.0.1:1")  # nothing listens
    assert (
        hookcmd.run(
            ["continuation-refused", "--harness", "pi", "--home", str(tmp_path), "--timeout", "1"]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out) == {"delivered": False, "why": "unreachable"}
    lines = (tmp_path / "spool" / "events.jsonl").read_text().splitlines()
    assert len(lines) == 1
    spooled = SpooledEvent.parse(lines[0].encode())
    assert (spooled.event, spooled.body) == ("continuation-refused", {"session_key": "s"})


def test_hookcmd_parse_args_accepts_both_spellings() -> None:
    """`hook EVENT --harness H`, native event names and --harness=H all parse."""
    assert hookcmd.parse_args(["hook", "SessionStart", "--harness", "claude-code"]) == (
        "session-start",
        "claude-code",
        None,
    )
    assert hookcmd.parse_args(["stop", "--harness=codex", "--timeout", "2"]) == (
        "stop",
        "codex",
        2.0,
    )
    with pytest.raises(ValueError, match="--harness must be one of"):
        hookcmd.parse_args(["stop", "--harness", "cursor"])
    with pytest.raises(ValueError, match="EVENT must be one of"):
        hookcmd.parse_args(["reboot", "--harness", "pi"])


def test_hookcmd_daemon_address_and_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The URL comes from the env, else daemon.url, else there is none (issue 12: never the
    default port); the token from the env, else [daemon] token of config.toml, else the
    daemon's daemon.token."""
    from continuity.daemon.address import daemon_token

    monkeypatch.delenv("CONTINUITY_DAEMON_URL", raising=False)
    monkeypatch.delenv("CONTINUITY_DAEMON__TOKEN", raising=False)
    (tmp_path / "config.toml").write_text("[daemon]\nport = 9001\n")
    assert hookcmd.daemon_address(str(tmp_path)) is None
    (tmp_path / "daemon.url").write_text("http://[::1]:9000\n")
    assert hookcmd.daemon_address(str(tmp_path)) == ("::1", 9000)
    monkeypatch.setenv("CONTINUITY_DAEMON_URL", "http://localhost:8123/")
    assert hookcmd.daemon_address(str(tmp_path)) == ("localhost", 8123)
    assert daemon_token(str(tmp_path)) is None
    (tmp_path / "daemon.token").write_text("from-the-token-file-0123456789\n")
    assert daemon_token(str(tmp_path)) == "from-the-token-file-0123456789"
    (tmp_path / "config.toml").write_text('[daemon]\ntoken = "abcdefghijklmnop1234"\n')
    assert daemon_token(str(tmp_path)) == "abcdefghijklmnop1234"
    monkeypatch.setenv("CONTINUITY_DAEMON__TOKEN", "from-the-environment-1234")
    assert daemon_token(str(tmp_path)) == "from-the-environment-1234"


def test_hookcmd_fast_home_matches_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook command finds the same workspace as the library, without importing it."""
    from continuity.core.config import resolve_home

    assert fast_home() == str(resolve_home())
    monkeypatch.delenv("CONTINUITY_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", "/tmp/xdg-data")
    assert fast_home() == str(resolve_home())


def test_hookcmd_imports_no_heavy_module(tmp_path: Path) -> None:
    """A hook, started as installed (``-I -S``), imports none of typer, rich, sqlalchemy,
    pydantic, urllib, http, json, typing, re or enum."""
    from continuity.daemon.hooks.install import hook_argv

    argv = hook_argv()
    code = argv[-1].replace("main()", "") + (
        "from continuity.cli.hookcmd import run; run(['stop', '--harness', 'codex']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', "
        "'sqlalchemy', 'pydantic', 'urllib', 'http', 'email', 'json', 'typing', 're', "
        "'enum')))"
    )
    env = {
        **os.environ,
        "CONTINUITY_HOME": str(tmp_path),
        "CONTINUITY_DAEMON_URL": f"http://127.0.0.1:{_free_port()}",
    }
    done = subprocess.run([*argv[:-1], code], input=b"{}", env=env, capture_output=True, timeout=30)
    assert done.stdout.strip() == b"[]", done.stderr


def test_hookcmd_daemon_down_spools_and_exits_zero(tmp_path: Path) -> None:
    """With nothing listening the hook exits 0 and the event is one durable spool line
    holding the stdin byte for byte."""
    payload = json.dumps({"session_id": "s", "prompt": "héllo\nworld"}).encode()
    env = {
        **os.environ,
        "CONTINUITY_HOME": str(tmp_path),
        "CONTINUITY_DAEMON_URL": f"http://127.0.0.1:{_free_port()}",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "continuity.cli.hookcmd",
            "user-prompt-submit",
            "--harness",
            "claude-code",
        ],
        input=payload,
        env=env,
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0 and done.stdout == b""
    assert b"spooled for replay" in done.stderr
    lines = (tmp_path / "spool" / "events.jsonl").read_bytes().splitlines()
    event = SpooledEvent.parse(lines[0])
    assert len(lines) == 1 and event.payload == payload
    assert (event.harness, event.event) == ("claude-code", "user-prompt-submit")


class _Handler(BaseHTTPRequestHandler):
    status, answer, delay = 200, b"", 0.0
    seen: ClassVar[list[tuple[str, dict, bytes]]] = []

    def do_POST(self) -> None:  # http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.seen.append((self.path, dict(self.headers), body))
        time.sleep(self.delay)
        self.send_response(self.status)
        self.send_header("Content-Length", str(len(self.answer)))
        self.end_headers()
        self.wfile.write(self.answer)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def fake_daemon() -> Iterator[tuple[str, type[_Handler]]]:
    """An HTTP server standing in for the daemon (status, answer and delay settable)."""
    handler = type("H", (_Handler,), {"seen": []})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()


def _run_hook(
    home: Path, url: str, event: str = "session-start", extra: list[str] = ()
) -> subprocess.CompletedProcess:  # type: ignore[assignment]
    env = {
        **os.environ,
        "CONTINUITY_HOME": str(home),
        "CONTINUITY_DAEMON_URL": url,
        "CONTINUITY_DAEMON__TOKEN": "token-token-token-123",
    }
    return subprocess.run(
        [sys.executable, "-m", "continuity.cli.hookcmd", event, "--harness", "claude-code", *extra],
        input=b'{"session_id":"s"}',
        env=env,
        capture_output=True,
        timeout=30,
    )


def test_hookcmd_forwards_stdin_and_prints_answer(tmp_path: Path, fake_daemon: tuple) -> None:
    """The stdin goes to /api/harness/<h>/<event> with an event id and the bearer token; the
    daemon's answer is printed as is."""
    url, handler = fake_daemon
    handler.answer = b'{"hookSpecificOutput":{"additionalContext":"x"}}'
    done = _run_hook(tmp_path, url)
    assert done.returncode == 0 and done.stdout == handler.answer
    path, headers, body = handler.seen[0]
    assert path == "/api/harness/claude-code/session-start" and body == b'{"session_id":"s"}'
    assert headers["Authorization"] == "Bearer token-token-token-123"
    assert len(headers["X-Continuity-Event-Id"]) == 32
    assert not (tmp_path / "spool").exists()


def test_hookcmd_slow_or_failing_daemon_never_blocks(tmp_path: Path, fake_daemon: tuple) -> None:
    """A daemon slower than the timeout, or answering 500, gets the event spooled; a 422
    (bad input) is reported on stderr and not spooled; the exit status is always 0."""
    url, handler = fake_daemon
    handler.delay = 3.0  # far past the 0.3 s timeout: the hook is back long before it
    started = time.monotonic()
    done = _run_hook(tmp_path, url, extra=["--timeout", "0.3"])
    assert done.returncode == 0 and time.monotonic() - started < 2.5
    handler.delay, handler.status = 0.0, 500
    assert _run_hook(tmp_path, url).returncode == 0
    handler.status, handler.answer = 422, b'{"detail":"body.prompt: bad"}'
    rejected = _run_hook(tmp_path, url)
    assert rejected.returncode == 0 and b"body.prompt: bad" in rejected.stderr
    lines = (tmp_path / "spool" / "events.jsonl").read_bytes().splitlines()
    assert len(lines) == 2


def test_hookcmd_bad_arguments_exit_zero(tmp_path: Path) -> None:
    """Even a misconfigured hook exits 0 (B62), saying what is wrong on stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "continuity.cli.hookcmd", "stop"],
        input=b"{}",
        capture_output=True,
        timeout=30,
        env={**os.environ, "CONTINUITY_HOME": str(tmp_path)},
    )
    assert done.returncode == 0 and b"--harness must be one of" in done.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_hookcmd_console_dispatches_hook_without_the_cli(tmp_path: Path) -> None:
    """The `continuity` entry `console` runs `continuity hook ...` without importing Typer,
    and hands every other command to the CLI."""
    code = (
        "import sys; from continuity.cli.hookcmd import console; sys.argv = {argv!r}\n"
        "try:\n    console()\nexcept SystemExit as e:\n"
        "    print('typer' in sys.modules, e.code)"
    )
    env = {
        **os.environ,
        "CONTINUITY_HOME": str(tmp_path),
        "CONTINUITY_DAEMON_URL": f"http://127.0.0.1:{_free_port()}",
    }
    hook = subprocess.run(
        [
            sys.executable,
            "-c",
            code.format(argv=["continuity", "hook", "stop", "--harness", "codex"]),
        ],
        input=b"{}",
        env=env,
        capture_output=True,
        timeout=30,
    )
    assert hook.stdout.split() == [b"False", b"0"]
    cli = subprocess.run(
        [sys.executable, "-c", code.format(argv=["continuity", "where"])],
        env=env,
        capture_output=True,
        timeout=30,
    )
    assert cli.stdout.split()[-2:] == [b"True", b"0"] and b"home:" in cli.stdout


@pytest.mark.parametrize(
    "args", [["--harness", "nope"], [], ["--harness", "pi", "--timeout", "abc"]]
)
def test_hook_through_the_cli_exits_0_on_bad_values(tmp_path: Path, args: list[str]) -> None:
    """Fresh-user review: ``continuity --home DIR hook stop --harness nope`` (the CLI path, not
    the fast one) exited 2 with a usage error, though a hook always exits 0. It now reports
    the bad value on stderr and exits 0, as the fast path does."""
    env = {**os.environ, "CONTINUITY_DAEMON_URL": f"http://127.0.0.1:{_free_port()}"}
    exe = str(Path(sys.executable).with_name("continuity"))
    done = subprocess.run(
        [exe, "--home", str(tmp_path), "hook", "stop", *args],
        input=b"{}",
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(b"continuity hook: ") and b"usage: continuity hook" in done.stderr


# ---------------------------------------------------------------------------- one deadline, refusals


def _rejected(home: Path) -> list[dict]:
    path = home / "spool" / "rejected.jsonl"
    return [json.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def _hook_env(home: Path, url: str | None = None) -> dict[str, str]:
    env = {**os.environ, "CONTINUITY_HOME": str(home)}
    env.pop("CONTINUITY_DAEMON_URL", None)
    if url:
        env["CONTINUITY_DAEMON_URL"] = url
    return env


def _popen_hook(home: Path, url: str | None, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "continuity.cli.hookcmd",
            "user-prompt-submit",
            "--harness",
            "claude-code",
            *extra,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_hook_env(home, url),
    )


def test_hookcmd_stdin_that_never_closes_ends_within_the_deadline(tmp_path: Path) -> None:
    """Issue 16: a harness that writes half a payload and never closes stdin: the hook exits
    0 by its one deadline (before, it waited forever), nothing is spooled, and the event is
    recorded in the rejected log with the bytes it read, byte for byte."""
    partial = b'{"session_id": "s", "prompt": "half a prom'
    proc = _popen_hook(tmp_path, f"http://127.0.0.1:{_free_port()}", "--timeout", "1")
    try:
        proc.stdin.write(partial)
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0  # stdin still open
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
    stderr = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert b"stdin did not close in time (the hook's deadline: 1 s)" in stderr
    [record] = _rejected(tmp_path)
    assert record["source"] == "hook" and f"({len(partial)} bytes read)" in record["reason"]
    assert SpooledEvent.parse(record["record"].encode()).payload == partial
    assert not (tmp_path / "spool" / "events.jsonl").exists()


def test_hookcmd_whole_json_on_a_stdin_left_open_is_delivered(
    tmp_path: Path, fake_daemon: tuple
) -> None:
    """A harness that writes one whole JSON object and keeps stdin open: delivered at the
    deadline's stdin share, exit 0."""
    url, handler = fake_daemon
    proc = _popen_hook(tmp_path, url, "--timeout", "2")
    try:
        proc.stdin.write(b'{"session_id": "s", "prompt": "kept open"}\n')
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    assert [body for _path, _headers, body in handler.seen] == [
        b'{"session_id": "s", "prompt": "kept open"}\n'
    ]


def test_hookcmd_spool_lock_held_forever_still_exits_zero(tmp_path: Path) -> None:
    """The spool is part of the one deadline: with the spool lock held by another process
    and the daemon down, the hook gives up at its deadline and exits 0 (before: it blocked on
    the lock for as long as it was held)."""
    import fcntl

    folder = tmp_path / "spool"
    folder.mkdir()
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "continuity.cli.hookcmd",
                "stop",
                "--harness",
                "codex",
                "--timeout",
                "1",
            ],
            input=b"{}",
            env=_hook_env(tmp_path, f"http://127.0.0.1:{_free_port()}"),
            capture_output=True,
            timeout=30,
        )
    finally:
        os.close(fd)
    assert done.returncode == 0
    assert b"the spool failed too" in done.stderr and b"locked" in done.stderr
    assert not (folder / "events.jsonl").exists()


def test_hookcmd_payload_over_32_mib_is_refused_whole(tmp_path: Path) -> None:
    """Issue 16: 32 MiB + 1 byte of stdin is refused at the hook: no spool line (before: a
    line cut to 32 MiB + 1 byte, rejected at replay without a word), one rejected-log record
    naming the limit and the size, no cut copy of the payload."""
    size = hookcmd.MAX_PAYLOAD + 1
    head = b'{"session_id": "s", "prompt": "'
    payload = head + b"x" * (size - len(head) - 2) + b'"}'
    assert len(payload) == size == 33_554_433
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "continuity.cli.hookcmd",
            "user-prompt-submit",
            "--harness",
            "claude-code",
            "--timeout",
            "20",
        ],
        input=payload,
        env=_hook_env(tmp_path, f"http://127.0.0.1:{_free_port()}"),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0 and b"payload over 33554432 bytes" in done.stderr
    assert not (tmp_path / "spool" / "events.jsonl").exists()
    [record] = _rejected(tmp_path)
    assert record["record"] is None and record["payload_bytes"] == 33_554_433
    assert "payload over 33554432 bytes (32 MiB): refused whole" in record["reason"]


def test_hookcmd_rejected_event_is_recorded_not_dropped(tmp_path: Path, fake_daemon: tuple) -> None:
    """Issue 22: an event the daemon rejects as bad input (422) is not spooled but recorded
    in the spool's rejected log with the daemon's reason and the whole payload."""
    url, handler = fake_daemon
    handler.status, handler.answer = 422, b'{"detail":"body.prompt: bad"}'
    done = _run_hook(tmp_path, url)
    assert done.returncode == 0 and b"body.prompt: bad" in done.stderr
    [record] = _rejected(tmp_path)
    assert record["reason"] == ('the daemon rejected it (HTTP 422): {"detail":"body.prompt: bad"}')
    assert SpooledEvent.parse(record["record"].encode()).payload == b'{"session_id":"s"}'
    assert not (tmp_path / "spool" / "events.jsonl").exists()


@pytest.mark.parametrize("event", [*spool.EVENTS, *hookcmd.QUERY_EVENTS])
def test_every_hook_records_bad_json_in_the_rejected_log(
    tmp_path: Path, fake_daemon: tuple, event: str
) -> None:
    """Issue 45 (issue 40 leftover): bad JSON to the pre-tool-use hook was dropped without a
    line in rejected.jsonl. Every hook, the question pre-tool-use too, records what the
    daemon refused (400) in the rejected log with the reason and the payload byte for byte;
    none prints anything or spools it."""
    url, handler = fake_daemon
    handler.status = 400
    handler.answer = b'{"error":"invalid_request","detail":"body: JSONDecodeError"}'
    env = {
        **os.environ,
        "CONTINUITY_HOME": str(tmp_path),
        "CONTINUITY_DAEMON_URL": url,
        "CONTINUITY_DAEMON__TOKEN": "token-token-token-123",
    }
    done = subprocess.run(
        [sys.executable, "-m", "continuity.cli.hookcmd", event, "--harness", "claude-code"],
        input=b'{"session_id": "s", nope',
        env=env,
        capture_output=True,
        timeout=30,
    )
    sync = event in hookcmd.SYNC_ROUTES  # it answers its caller {"delivered": false, ...}
    assert done.returncode == 0
    assert done.stdout == (b'{"delivered":false,"why":"http","status":400}' if sync else b"")
    [record] = _rejected(tmp_path)
    assert record["reason"].startswith("the daemon rejected it (HTTP 400): ")
    assert "JSONDecodeError" in record["reason"]
    if sync:  # not a JSON object, so not a body line: its size is kept
        assert record["record"] is None and record["payload_bytes"] == 24
    else:
        import base64

        kept = json.loads(record["record"])
        assert (kept["event"], kept["harness"]) == (event, "claude-code")
        assert base64.b64decode(kept["payload_b64"]) == b'{"session_id": "s", nope'
    assert not (tmp_path / "spool" / "events.jsonl").exists()


def test_hookcmd_bad_timeouts_fall_back_to_the_event_deadline(monkeypatch) -> None:
    """--timeout and CONTINUITY_HOOK_TIMEOUT that are not positive finite numbers are
    ignored (the event's own deadline), and none exceeds 600 s."""
    monkeypatch.setenv("CONTINUITY_HOOK_TIMEOUT", "nan")
    assert hookcmd.hook_seconds("session-end", None) == 1.0
    assert hookcmd.hook_seconds("stop", float("inf")) == 3.0
    assert hookcmd.hook_seconds("stop", -1.0) == 3.0
    assert hookcmd.hook_seconds("stop", 1e9) == 600.0
    monkeypatch.setenv("CONTINUITY_HOOK_TIMEOUT", "2.5")
    assert hookcmd.hook_seconds("stop", None) == 2.5
    assert hookcmd.spool_reserve(1.0) == 0.25 and hookcmd.spool_reserve(0.4) == 0.1


# ---------------------------------------------------------------------------- own workspace only


def test_hookcmd_no_daemon_url_spools_without_trying_any_port(tmp_path: Path) -> None:
    """Issue 12: with no daemon.url (no daemon of this workspace runs) the event is spooled at
    once, whatever [daemon] port says: no default address is tried."""
    (tmp_path / "config.toml").write_text("[daemon]\nport = 9\n")
    done = subprocess.run(
        [sys.executable, "-m", "continuity.cli.hookcmd", "stop", "--harness", "codex"],
        input=b'{"session_id":"s"}',
        env=_hook_env(tmp_path),
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0
    assert b"no daemon of this workspace runs (no daemon.url)" in done.stderr
    assert len((tmp_path / "spool" / "events.jsonl").read_bytes().splitlines()) == 1


def test_hookcmd_suite_never_reaches_the_default_port() -> None:
    """The suite's guard (tests/conftest.py): connecting to 7438 fails the test at once."""
    with pytest.raises(AssertionError, match="never use the default port 7438"):
        socket.create_connection(("127.0.0.1", 7438), timeout=1)
