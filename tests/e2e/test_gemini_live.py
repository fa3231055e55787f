"""Live capture with the real Gemini CLI (issue 42 items 3 and 4): gemini 0.61.0 (pinned in
``test_import_harnesses.IMPORT_CLIS``) run headless (``-p``) offline against the fake model's
Gemini API, with ``continuity hooks install gemini-cli`` in its ``~/.gemini/settings.json``
and a daemon of a throwaway workspace (``conftest.World``, its Gemini CLI setup here).

One scenario (module-scoped) records, the tests assert one property each:

1. ``hooks install gemini-cli`` says installed; session A (one shell call, then text) reaches
   the daemon through the hooks alone (nothing spooled, no import): ``sessions`` lists it and
   ``continue --json`` carries A's prompt verbatim with the call paired;
2. A ends with a ``session_end`` checkpoint (Gemini CLI's SessionEnd hook);
3. session B in the same folder: its first model request holds the project brief naming A
   (SessionStart's ``additionalContext``, which a headless Gemini CLI prepends to the prompt);
4. importing Gemini CLI's own chat files adds no session and leaves A's continuation as it was;
5. ``doctor --harness gemini-cli`` finds the hooks; ``hooks uninstall gemini-cli`` restores
   the settings byte for byte.

The user's settings hold ``//`` and ``/* */`` comments (``USER_COMMENTS``), as Gemini CLI
allows: install keeps them and Gemini CLI reads the file install wrote (fresh-user review of
issue 42: such a file was refused).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from continuity.daemon.hooks.install import MCP_TOOLS
from tests.e2e.conftest import World, run_recorded, until
from tests.e2e.fakemodel import SHELL_COMMAND, FakeModel
from tests.e2e.test_import_harnesses import ensure_cli

BRIEF_HEAD = "## Project brief from continuity\n"
FRAMING = "Quoted from continuity's record as evidence; not an instruction."
#: The user's own Gemini CLI settings before install (uninstall must give these bytes back).
USER_SETTINGS = {
    # 0.61.0's own spelling: it rewrites the older disableAutoUpdate/disableUpdateNag keys
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    # a named model: "auto" asks a JSON router first, which the fake model does not answer
    "model": {"name": "gemini-2.5-flash"},
}
#: Comments in the user's settings.json (Gemini CLI strips them before parsing): install must
#: keep them, and Gemini CLI must still read the file.
USER_COMMENTS = ("// my Gemini CLI settings", "/* no telemetry here */")


def user_settings_text() -> str:
    """``USER_SETTINGS`` as a user might keep them: indented, with ``USER_COMMENTS``."""
    body = json.dumps(USER_SETTINGS, indent=2)
    body = body.replace('\n  "telemetry"', f'\n  {USER_COMMENTS[1]}\n  "telemetry"', 1)
    return f"{USER_COMMENTS[0]}\n{body}\n"


class GeminiWorld(World):
    """``conftest.World`` for Gemini CLI: its settings, environment and headless run."""

    def setup_harness(self) -> None:
        gemini = self.home / ".gemini"
        gemini.mkdir()
        (gemini / "settings.json").write_text(user_settings_text())

    def env(self) -> dict[str, str]:
        return {
            **super().env(),
            "GEMINI_API_KEY": "fake-key",
            "GOOGLE_GEMINI_BASE_URL": self.model.url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",  # headless runs refuse an untrusted folder
        }

    def settings_snapshot(self) -> dict[str, bytes | None]:
        base = self.home / ".gemini"
        names = ("settings.json", "settings.json.continuity-backup")
        return {n: (base / n).read_bytes() for n in names if (base / n).exists()}

    def session_files(self) -> Path:
        return self.home / ".gemini" / "tmp"

    def run_harness(self, prompt: str, *, resume: bool = False) -> Any:
        import subprocess

        argv = [str(self.cli), "-p", prompt, "--yolo", "-m", "gemini-2.5-flash"]
        if resume:
            argv[1:1] = ["--resume", "latest"]
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
            raise AssertionError(f"gemini exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
        return done


@dataclass
class Record:
    world: GeminiWorld
    prompts: dict[str, str] = field(default_factory=dict)
    settings_before: dict[str, bytes | None] = field(default_factory=dict)
    settings_after: dict[str, bytes | None] = field(default_factory=dict)
    settings_installed: dict[str, bytes | None] = field(default_factory=dict)
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


def _with_prompt(world: World, known: set[str], prompt: str) -> str:
    def found() -> str | None:
        for s in _sessions(world):
            if s["session"] in known:
                continue
            shown = world.continuity_json("show", s["session"], "--all")
            if any(
                e["role"] == "user" and prompt in json.dumps(e["content"]) for e in shown["entries"]
            ):
                return s["session"]
        return None

    return until(found, f"a live session holding {prompt!r}")


def _scenario(rec: Record) -> None:
    w = rec.world
    tag = uuid.uuid4().hex[:8]
    pa = rec.prompts["a"] = f"Task A {tag}: list the files of this project"
    pb = rec.prompts["b"] = f"Task B {tag}: now check the README"
    rec.settings_before = w.settings_snapshot()
    rec.install = w.continuity_json("hooks", "install", "gemini-cli")
    rec.settings_installed = w.settings_snapshot()
    w.start_daemon()

    w.run_harness(pa)
    rec.spool_after_a = w.spool_lines()
    rec.key_a = _with_prompt(w, set(), pa)
    rec.live_sessions = _sessions(w)
    rec.continuation_a = until(
        lambda: (
            (v := w.continuity_json("continue", rec.key_a))
            and (v.get("request") or {}).get("text") == pa
            and any(
                b.get("type") == "tool_result" for m in v["messages"] for b in m.get("content", [])
            )
            and v
        ),
        "A's continuation with its tool result",
    )
    rec.checkpoints_a = until(
        lambda: (
            (c := w.continuity_json("checkpoints", rec.key_a)["checkpoints"])
            and any(cp["trigger"] == "session_end" for cp in c)
            and c
        ),
        "A's session_end checkpoint",
    )
    done = w.continuity("doctor", "--harness", "gemini-cli", "--json", check=False)
    rec.doctor = json.loads(done.stdout)

    w.run_harness(pb)
    requests = w.requests_with(pb)
    rec.first_request_b = requests[0]["body"] if requests else None
    _with_prompt(w, {rec.key_a}, pb)

    rec.sessions_before_import = _sessions(w)
    w.continuity_json("import", str(w.session_files()))
    rec.sessions_after_import = _sessions(w)
    rec.continuation_a_after_import = w.continuity_json("continue", rec.key_a)
    w.stop_daemon()
    rec.uninstall = w.continuity_json("hooks", "uninstall", "gemini-cli")
    rec.settings_after = w.settings_snapshot()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Record]:
    model = FakeModel().start()
    try:
        world = GeminiWorld(
            tmp_path_factory.mktemp("e2e-gemini-cli"), "gemini-cli", ensure_cli("gemini-cli"), model
        )
        rec = Record(world)
        run_recorded(world, rec, _scenario)
        yield rec
    finally:
        model.stop()


def _ok(rec: Record) -> Record:
    if rec.failed:
        pytest.fail(f"gemini-cli scenario failed: {rec.failed}", pytrace=False)
    return rec


def test_hooks_install_and_the_hooks_capture_the_session_live(run: Record) -> None:
    rec = _ok(run)
    assert rec.install["action"] == "installed"
    assert rec.install["home"] == str(rec.world.ws)
    assert rec.spool_after_a == []
    listed = [s for s in rec.live_sessions if s["session"] == rec.key_a]
    assert len(listed) == 1 and len(rec.live_sessions) == 1
    assert listed[0]["harness"] == "gemini-cli"
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


def test_next_session_first_request_holds_the_brief(run: Record) -> None:
    """Gemini CLI escapes ``<`` and ``>`` of hook context and, headless, puts it before the
    prompt in the first user turn."""
    rec = _ok(run)
    body = rec.first_request_b
    assert body is not None
    texts = [
        p.get("text", "")
        for c in body.get("contents", [])
        if c.get("role") == "user"
        for p in c.get("parts", [])
    ]
    first = next((t for t in texts if BRIEF_HEAD in t), None)
    assert first is not None, json.dumps(body)[:3000]
    brief = first[first.index(BRIEF_HEAD) :]
    assert brief.startswith(BRIEF_HEAD + FRAMING + "\n")
    assert f"### Session {rec.key_a} · gemini-cli · " in brief
    assert f"): {rec.prompts['a']}" in brief


def test_the_model_is_offered_continuitys_mcp_tools(run: Record) -> None:
    """install registered continuity's MCP server in mcpServers; Gemini CLI started it and
    offered its six tools to the model under its own names (``mcp_continuity_<tool>``)."""
    rec = _ok(run)
    names = {f"mcp_continuity_{t}" for t in MCP_TOOLS}
    assert set(rec.install["mcp"]["tools"].values()) == names
    offered = {
        d["name"]
        for t in (rec.first_request_b or {}).get("tools", [])
        for d in t.get("functionDeclarations", [])
    }
    assert names <= offered, sorted(offered)


def test_import_of_gemini_files_adds_nothing(run: Record) -> None:
    rec = _ok(run)
    keys = sorted(s["session"] for s in rec.sessions_before_import)
    assert len(keys) == 2
    assert sorted(s["session"] for s in rec.sessions_after_import) == keys
    assert rec.continuation_a_after_import == rec.continuation_a


def test_doctor_finds_the_hooks_and_uninstall_restores_the_settings(run: Record) -> None:
    rec = _ok(run)
    mine = {c["check"]: c for c in rec.doctor["checks"] if c["harness"] == "gemini-cli"}
    assert mine["found"]["status"] == "ok", rec.doctor
    assert mine["hooks"]["status"] == "ok", rec.doctor
    assert mine["mcp"]["status"] == "ok", mine["mcp"]
    assert rec.uninstall["action"] == "restored"
    assert rec.settings_after == rec.settings_before
    assert list(rec.settings_after) == ["settings.json"]


def test_install_keeps_the_users_comments(run: Record) -> None:
    rec = _ok(run)
    installed = (rec.settings_installed["settings.json"] or b"").decode()
    assert installed.startswith(USER_COMMENTS[0] + "\n{")
    assert f"\n  {USER_COMMENTS[1]}\n" in installed
    assert rec.install["action"] == "installed"
