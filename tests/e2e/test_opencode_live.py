"""End to end with the real OpenCode CLI (issue 42 items 3, 4): ``continuity hooks install
opencode`` writes our plugin, a daemon of a throwaway workspace runs, and ``opencode run`` (the
version pinned in ``test_opencode.OPENCODE``) works offline against ``fakemodel.FakeModel``.

Steps: install (the plugin file is ours, in ``$XDG_CONFIG_HOME/opencode/plugin``); session A
(prompt ``PA``: one ``bash`` call, then text) is listed by ``sessions --json`` before any import,
as an ``opencode`` session under OpenCode's own id; session B (a new session in the same
folder): its first model request's system prompt holds the project brief naming A's key and
``PA``; ``doctor`` says the hooks are installed and point at this workspace; uninstall removes
the plugin and the folders install created.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from tests.e2e.conftest import free_port, until
from tests.e2e.fakemodel import FakeModel
from tests.e2e.test_harnesses import BRIEF_HEAD, FRAMING
from tests.e2e.test_opencode import OpenCodeWorld, ensure_opencode


class LiveWorld(OpenCodeWorld):
    """``OpenCodeWorld`` with a continuity daemon on a free port of its own."""

    def __init__(self, root: Path, cli: Path, model: FakeModel) -> None:
        super().__init__(root, cli, model)
        self.ws.chmod(0o700)
        self.port = free_port()
        (self.ws / "config.toml").write_text(
            f"[daemon]\nport = {self.port}\nstop_seconds = 20\nconsolidate_on_end = false\n"
            # no archive watcher: what the daemon holds came through the plugin alone
            "[archive]\nenabled = false\n"
        )
        self.daemon: subprocess.Popen[bytes] | None = None

    def cont(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "continuity.cli.app", *args],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.project,
            env={**self.env(), "CONTINUITY_HOME": str(self.ws)},
        )
        if check and done.returncode != 0:
            raise AssertionError(f"continuity {args} exited {done.returncode}:\n{done.stderr}")
        return done

    def start_daemon(self) -> None:
        log = open(self.root / "daemon.log", "wb")  # noqa: SIM115 - the child's
        self.daemon = subprocess.Popen(
            [sys.executable, "-m", "continuity.cli.app", "serve", "--home", str(self.ws)],
            env={**self.env(), "CONTINUITY_HOME": str(self.ws)},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = self.ws / "daemon.url"
        until(lambda: url.exists() or self.daemon.poll() is not None, "daemon.url")
        assert self.daemon.poll() is None, (self.root / "daemon.log").read_text()

    def close(self) -> None:
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.terminate()
            self.daemon.wait(timeout=30)


def _system_texts(body: dict[str, Any]) -> list[str]:
    """The system prompt texts of an OpenAI Chat request body."""
    out = []
    for m in body.get("messages", []):
        if m.get("role") == "system":
            content = m["content"]
            if isinstance(content, str):
                out.append(content)
            else:
                out.extend(b.get("text", "") for b in content)
    return out


def test_opencode_plugin_captures_live_and_briefs_the_next_session(
    tmp_path: Path, fake_model: FakeModel
) -> None:
    w = LiveWorld(tmp_path, ensure_opencode(), fake_model)
    try:
        _scenario(w)
    finally:
        w.close()


def _scenario(w: LiveWorld) -> None:
    plugin_dir = w.home / ".config" / "opencode" / "plugin"
    installed = json.loads(
        w.cont("hooks", "install", "opencode", "--home", str(w.ws), "--json").stdout
    )
    assert installed["action"] == "installed"
    assert installed["path"] == str(plugin_dir / "continuity.js")
    assert "marker: continuity-opencode-plugin v1" in (plugin_dir / "continuity.js").read_text()
    w.start_daemon()

    pa = f"PA {uuid.uuid4().hex[:8]}: list the project files"
    w.run(pa)
    listed = json.loads(w.cont("sessions", "--all", "--json").stdout)
    live = [s for s in listed if s["harness"] == "opencode"]
    assert len(live) == 1, listed
    key_a = live[0]["session"]
    assert key_a.startswith("ses_")
    shown = json.dumps(json.loads(w.cont("show", key_a, "--all", "--json").stdout))
    assert pa in shown  # the prompt captured by user-prompt-submit, before any import

    first_b = len(w.model.requests)
    pb = f"PB {uuid.uuid4().hex[:8]}: a new session"
    w.run(pb)
    bodies = [
        r["body"]
        for r in w.model.model_requests(first_b)
        if pb in json.dumps(r["body"], ensure_ascii=False) and r["body"].get("tools")
    ]  # the agent's requests (OpenCode's title request has no tools)
    assert bodies, "session B never reached the fake model"
    texts = _system_texts(bodies[0])
    # OpenCode joins the system parts into one system message: ours follows its own prompt
    brief = next((t[t.index(BRIEF_HEAD) :] for t in texts if BRIEF_HEAD in t), None)
    assert brief is not None, json.dumps(bodies[0])[:3000]
    assert brief.startswith(BRIEF_HEAD + FRAMING + "\n")
    assert f"### Session {key_a} · opencode · " in brief
    assert re.search(rf'Last request \(row \d+\): "{re.escape(pa)}"', brief), brief
    assert "- ok: `echo continuity-e2e-tool-ran`" in brief  # A's tool call, from the mirror

    # importing OpenCode's own folder adds no session and no row live capture missed
    before = {s["session"]: s for s in json.loads(w.cont("sessions", "--all", "--json").stdout)}
    assert len(before) == 2 and key_a in before
    report = json.loads(w.cont("import", str(w.data), "--json").stdout)
    assert sorted(report["sessions"]) == sorted(before)
    assert sum(f["imported"] for f in report["files"]) == 0, report["files"]
    after = {s["session"]: s for s in json.loads(w.cont("sessions", "--all", "--json").stdout)}
    assert after.keys() == before.keys()

    doctor = json.loads(w.cont("doctor", "--home", str(w.ws), "--json", check=False).stdout)
    hooks = [
        c for c in doctor["checks"] if c["check"] == "hooks" and c.get("harness") == "opencode"
    ]
    assert [(c["status"], c["detail"]) for c in hooks] == [
        ("ok", f"installed in {plugin_dir / 'continuity.js'}, pointing at this workspace")
    ], doctor

    removed = json.loads(w.cont("hooks", "uninstall", "opencode", "--json").stdout)
    assert removed["action"] == "removed"
    assert not (plugin_dir / "continuity.js").exists()
    assert not plugin_dir.exists()  # install created it; uninstall takes it away
