"""Live capture with the real Qwen Code (issue 42 items 3 and 4): qwen 0.24.4 (pinned in
``test_import_harnesses.IMPORT_CLIS``) run offline against the fake model's Chat Completions
(``OPENAI_BASE_URL``, any ``OPENAI_API_KEY``, ``OPENAI_MODEL``), with ``continuity hooks install
qwen-code`` in its ``~/.qwen/settings.json`` and a daemon of a throwaway workspace
(``conftest.World``, its Qwen Code setup here).

One scenario (module-scoped) records, the tests assert one property each:

1. ``hooks install qwen-code`` says installed; session A, run in Qwen Code's interactive
   interface on a terminal (``-i PROMPT``, then ``/quit``: a headless ``qwen -p`` sends no
   SessionEnd), one shell call then text, reaches the daemon through the hooks alone (nothing
   spooled, no import): ``sessions`` lists it and ``continue --json`` carries A's prompt
   verbatim with the call paired;
2. A ends with a ``session_end`` checkpoint (SessionEnd when the interface exits);
3. session B (headless) in the same folder: its first model request holds the project brief
   naming A (SessionStart's ``additionalContext``, which Qwen Code puts in the system prompt);
4. the model is offered continuity's MCP tools (Qwen Code lists them by name and reaches them
   through its ``tool_search`` and ``tool_call``);
5. importing Qwen Code's own chat files adds no session and leaves A's continuation as it was;
6. ``doctor --harness qwen-code`` finds the hooks and the MCP server; ``hooks uninstall
   qwen-code`` restores the settings byte for byte.

``MATRIX_SOURCE`` (a two-turn session qwen recorded, whose second turn lists the project) is
the Qwen Code source of the resume matrix (``test_resume_matrix.py``), which resumes every
proven harness's session into Qwen Code, and Qwen Code's into each of them.
"""

from __future__ import annotations

import fcntl
import json
import os
import struct
import subprocess
import termios
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from continuity.daemon.hooks.install import MCP_TOOLS
from tests.e2e.conftest import WAIT_SECONDS, World, run_recorded, until
from tests.e2e.fakemodel import REPLY_TEXT, SHELL_COMMAND, FakeModel
from tests.e2e.test_import_harnesses import ensure_cli

BRIEF_HEAD = "## Project brief from continuity\n"
FRAMING = "Quoted from continuity's record as evidence; not an instruction."
#: The user's own Qwen Code settings before install (uninstall must give these bytes back).
USER_SETTINGS = {
    "$version": 4,  # 0.24.4 adds it to a settings file without it (a user's file holds it)
    "general": {"enableAutoUpdate": False},
    "security": {"auth": {"selectedType": "openai"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}
#: A two-turn session qwen 0.24.4 wrote offline (``tests/e2e/record_qwen_source.py``): turn 2
#: lists the project (``README.md``, ``calc.py``) with a shell call. (file relative to the
#: repository, the project folder recorded in it, the last request's text) - the resume
#: matrix's Qwen Code source, as ``test_resume.SOURCES``.
MATRIX_SOURCE = (
    "tests/fixtures/qwen_code/matrix/projects/-home-dev-projects-qwen-demo/chats/"
    "f868e6b1-fbe1-4b76-bc0d-5482e579be33.jsonl",
    "/home/dev/projects/qwen-demo",
    "List the project's files once more [shell:ls]",
)
ROOT = Path(__file__).resolve().parents[2]


class QwenWorld(World):
    """``conftest.World`` for Qwen Code: its settings, environment and runs (headless, and
    interactive on a terminal)."""

    def setup_harness(self) -> None:
        qwen = self.home / ".qwen"
        qwen.mkdir()
        (qwen / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")

    def env(self) -> dict[str, str]:
        return {
            **super().env(),
            "OPENAI_API_KEY": "fake-key",
            "OPENAI_BASE_URL": self.model.url + "/v1",
            "OPENAI_MODEL": "qwen-fake",
            "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
        }

    def settings_snapshot(self) -> dict[str, bytes | None]:
        base = self.home / ".qwen"
        names = ("settings.json", "settings.json.continuity-backup")
        return {n: (base / n).read_bytes() for n in names if (base / n).exists()}

    def session_files(self) -> Path:
        return self.home / ".qwen" / "projects"

    def run_harness(self, prompt: str, *, resume: bool = False) -> Any:
        argv = [str(self.cli), "-p", prompt, "--yolo"]
        if resume:
            argv.insert(1, "--continue")
        done = subprocess.run(
            argv,
            env=self.env(),
            cwd=self.project,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise AssertionError(f"qwen exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done

    def run_interactive(self, prompt: str, done: Callable[[], Any]) -> Any:
        """Qwen Code's interface on a terminal (a pty of 40 x 120) with ``prompt`` submitted
        (``-i``); once ``done()`` returns something truthy (polled), ``/quit`` is typed and
        the process must exit 0. Returns what ``done`` returned."""
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        proc = subprocess.Popen(
            [str(self.cli), "-i", prompt, "--yolo"],
            env={**self.env(), "TERM": "xterm-256color"},
            cwd=self.project,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        os.close(slave)
        screen = bytearray()

        def drain() -> None:  # the interface blocks when nobody reads its output
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                screen.extend(chunk)

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        try:
            found = until(
                lambda: proc.poll() is not None or done(), "the interactive turn", 90, 0.5
            )
            if proc.poll() is not None:
                raise AssertionError(f"qwen -i exited {proc.returncode} before the turn ended")
            time.sleep(0.5)  # the prompt box is back after the turn
            os.write(master, b"/quit")
            time.sleep(0.3)
            os.write(master, b"\r")
            code = proc.wait(timeout=WAIT_SECONDS)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            reader.join(timeout=5)
            os.close(master)
            (self.root / "qwen-interactive.log").write_bytes(bytes(screen))
        if code != 0:
            raise AssertionError(f"qwen -i exited {code}; screen in qwen-interactive.log")
        return found


@dataclass
class Record:
    world: QwenWorld
    prompts: dict[str, str] = field(default_factory=dict)
    settings_before: dict[str, bytes | None] = field(default_factory=dict)
    settings_after: dict[str, bytes | None] = field(default_factory=dict)
    install: Any = None
    spool_after_a: list[dict[str, Any]] = field(default_factory=list)
    live_sessions: list[dict[str, Any]] = field(default_factory=list)
    key_a: str = ""
    continuation_a: Any = None
    checkpoints_a: list[dict[str, Any]] = field(default_factory=list)
    first_request_b: Any = None
    sessions_before_import: list[dict[str, Any]] = field(default_factory=list)
    sessions_after_import: list[dict[str, Any]] = field(default_factory=list)
    continuation_a_after_import: Any = None
    doctor: Any = None
    uninstall: Any = None
    failed: str | None = None


def _sessions(world: World) -> list[dict[str, Any]]:
    return world.continuity_json("sessions", "--all")


def _holding(world: World, known: set[str], prompt: str) -> str | None:
    """The key of a session not in ``known`` with a user row holding ``prompt``, else None."""
    for s in _sessions(world):
        if s["session"] in known:
            continue
        shown = world.continuity_json("show", s["session"], "--all")
        if any(
            e["role"] == "user" and prompt in json.dumps(e["content"]) for e in shown["entries"]
        ):
            return s["session"]
    return None


def _paired_view(world: World, prompt: str) -> tuple[str, Any] | None:
    """``(key, continue --json)`` of the session holding ``prompt`` once its continuation has
    that request, the tool result Qwen Code recorded (not the synthetic one a call still
    running gets) and the answer after it, else None."""
    key = _holding(world, set(), prompt)
    if key is None:
        return None
    view = world.continuity_json("continue", key)
    blocks = [b for m in view["messages"] for b in m.get("content", [])]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if (
        (view.get("request") or {}).get("text") == prompt
        and results
        and not any(b.get("synthetic") for b in results)
        and blocks[-1].get("text") == REPLY_TEXT
    ):
        return key, view
    return None


def _scenario(rec: Record) -> None:
    w = rec.world
    tag = uuid.uuid4().hex[:8]
    pa = rec.prompts["a"] = f"Task A {tag}: list the files of this project"
    pb = rec.prompts["b"] = f"Task B {tag}: now check the README"
    rec.settings_before = w.settings_snapshot()
    rec.install = w.continuity_json("hooks", "install", "qwen-code")
    w.start_daemon()

    rec.key_a, rec.continuation_a = w.run_interactive(pa, lambda: _paired_view(w, pa))
    rec.spool_after_a = w.spool_lines()
    rec.live_sessions = _sessions(w)
    rec.checkpoints_a = until(
        lambda: (
            (c := w.continuity_json("checkpoints", rec.key_a)["checkpoints"])
            and any(cp["trigger"] == "session_end" for cp in c)
            and c
        ),
        "A's session_end checkpoint",
    )
    done = w.continuity("doctor", "--harness", "qwen-code", "--json", check=False)
    rec.doctor = json.loads(done.stdout)

    w.run_harness(pb)
    requests = w.requests_with(pb)
    rec.first_request_b = requests[0]["body"] if requests else None
    until(lambda: _holding(w, {rec.key_a}, pb), f"a live session holding {pb!r}")

    rec.sessions_before_import = _sessions(w)
    w.continuity_json("import", str(w.session_files()))
    rec.sessions_after_import = _sessions(w)
    rec.continuation_a_after_import = w.continuity_json("continue", rec.key_a)
    w.stop_daemon()
    rec.uninstall = w.continuity_json("hooks", "uninstall", "qwen-code")
    rec.settings_after = w.settings_snapshot()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Record]:
    model = FakeModel().start()
    try:
        world = QwenWorld(
            tmp_path_factory.mktemp("e2e-qwen-code"), "qwen-code", ensure_cli("qwen-code"), model
        )
        rec = Record(world)
        run_recorded(world, rec, _scenario)
        yield rec
    finally:
        model.stop()


def _ok(rec: Record) -> Record:
    if rec.failed:
        pytest.fail(f"qwen-code scenario failed: {rec.failed}", pytrace=False)
    return rec


def test_hooks_install_and_the_hooks_capture_the_session_live(run: Record) -> None:
    rec = _ok(run)
    assert rec.install["action"] == "installed"
    assert rec.install["home"] == str(rec.world.ws)
    assert rec.spool_after_a == []
    listed = [s for s in rec.live_sessions if s["session"] == rec.key_a]
    assert len(listed) == 1 and len(rec.live_sessions) == 1
    assert listed[0]["harness"] == "qwen-code"
    assert listed[0]["project"] == str(rec.world.project)


def test_continuation_carries_the_prompt_with_the_call_paired(run: Record) -> None:
    rec = _ok(run)
    view = rec.continuation_a
    assert view["request"]["text"] == rec.prompts["a"]
    blocks = [b for m in view["messages"] for b in m["content"]]
    calls = [b["id"] for b in blocks if b["type"] == "tool_call"]
    results = [b["call_id"] for b in blocks if b["type"] == "tool_result"]
    assert len(calls) == 1 and results == calls
    assert SHELL_COMMAND in json.dumps(view["messages"])


def test_session_end_checkpoint(run: Record) -> None:
    rec = _ok(run)
    assert [cp["trigger"] for cp in rec.checkpoints_a].count("session_end") == 1


def _system_text(body: dict[str, Any]) -> str:
    return "".join(
        m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
        for m in body.get("messages", [])
        if m.get("role") == "system"
    )


def test_next_session_first_request_holds_the_brief(run: Record) -> None:
    """Qwen Code puts SessionStart's context in the system prompt, ``<`` and ``>`` escaped,
    inside its ``<qwen:session-start-context>`` tag."""
    rec = _ok(run)
    body = rec.first_request_b
    assert body is not None
    system = _system_text(body)
    start = system.find(BRIEF_HEAD)
    assert start != -1, system[-3000:]
    brief = system[start:]
    assert brief.startswith(BRIEF_HEAD + FRAMING + "\n")
    assert f"### Session {rec.key_a} · qwen-code · " in brief
    assert f"): {rec.prompts['a']}" in brief
    assert system.rfind("<qwen:session-start-context", 0, start) != -1


def test_the_model_is_offered_continuitys_mcp_tools(run: Record) -> None:
    """install registered continuity's MCP server in mcpServers; Qwen Code started it and
    named its six tools to the model (``mcp__continuity__<tool>``) as deferred tools, offered
    through its ``tool_search`` and ``tool_call``."""
    rec = _ok(run)
    names = {f"mcp__continuity__{t}" for t in MCP_TOOLS}
    assert set(rec.install["mcp"]["tools"].values()) == names
    body = rec.first_request_b or {}
    offered = {t["function"]["name"] for t in body.get("tools", [])}
    assert {"tool_search", "tool_call"} <= offered, sorted(offered)
    sent = json.dumps(body.get("messages", []))
    assert all(f'\\"{n}\\"' in sent for n in names), [n for n in names if n not in sent]


def test_import_of_qwen_files_adds_nothing(run: Record) -> None:
    rec = _ok(run)
    keys = sorted(s["session"] for s in rec.sessions_before_import)
    assert len(keys) == 2
    assert sorted(s["session"] for s in rec.sessions_after_import) == keys
    assert rec.continuation_a_after_import == rec.continuation_a


def test_doctor_finds_the_hooks_and_uninstall_restores_the_settings(run: Record) -> None:
    rec = _ok(run)
    mine = {c["check"]: c for c in rec.doctor["checks"] if c["harness"] == "qwen-code"}
    assert mine["found"]["status"] == "ok", rec.doctor
    assert mine["hooks"]["status"] == "ok", rec.doctor
    assert mine["mcp"]["status"] == "ok", mine["mcp"]
    assert rec.uninstall["action"] == "restored"
    assert rec.settings_after == rec.settings_before
    assert list(rec.settings_after) == ["settings.json"]


# ---------------------------------------------------------------------------- resume into it


def _matrix_file(world: World) -> Path:
    """``MATRIX_SOURCE``'s file with its project folder moved to the world's."""
    rel, old_project, _ = MATRIX_SOURCE
    text = (ROOT / rel).read_text(encoding="utf-8").replace(old_project, str(world.project))
    path = world.root / "source" / Path(rel).name
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    (world.project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    return path


def test_matrix_source_imports_and_continues(tmp_path: Path) -> None:
    """``MATRIX_SOURCE`` imports as one Qwen Code session whose continuation holds the last
    request verbatim and, after it, the listing of the project, every call paired."""
    world = QwenWorld(tmp_path, "qwen-code", Path("qwen"), FakeModel())
    src = _matrix_file(world)
    world.continuity("import", str(src))
    (listed,) = world.continuity_json("sessions")
    assert (listed["harness"], listed["project"]) == ("qwen-code", str(world.project))
    view = world.continuity_json("continue", listed["session"])
    assert view["request"]["text"] == MATRIX_SOURCE[2]
    blocks = [b for m in view["messages"] for b in m["content"]]
    calls = [b["id"] for b in blocks if b["type"] == "tool_call"]
    results = [b for b in blocks if b["type"] == "tool_result"]
    assert len(calls) == 2 and [b["call_id"] for b in results] == calls
    assert "README.md" in results[-1]["text"] and "calc.py" in results[-1]["text"]
