"""End to end with the real OpenCode CLI (issue 18, item 2): ``opencode run`` offline against
``fakemodel.FakeModel`` (an OpenAI-compatible provider on loopback), then ``continuity
import`` of OpenCode's own data folder and ``continue`` of the session it wrote.

OpenCode (``opencode-ai``, pinned in ``OPENCODE``) is installed once into its own prefix beside
the other harnesses' (``<e2e cache>/opencode``), so the shared prefix's pins stay as they are.
A missing npm or a failed install fails the test (never a skip), as for the other CLIs.

Steps: run A (prompt ``PA``: the fake model calls ``bash``, then answers); import; continue
carries ``PA`` verbatim and the call paired with its real output; run B continues the same
session (``opencode run --continue``, prompt ``PB``); the second import adds only B's records
(none of A's again) and continue now carries ``PB``; a third import adds nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import NPM_TIMEOUT, cache_dir
from tests.e2e.fakemodel import SHELL_COMMAND, FakeModel

OPENCODE = ("opencode-ai", "1.18.33")


def ensure_opencode() -> Path:
    """The pinned ``opencode`` executable, installed into ``<e2e cache>/opencode`` when
    missing (``pytest.fail`` when npm is missing or the install fails)."""
    prefix = cache_dir().parent / "opencode"
    prefix.mkdir(parents=True, exist_ok=True)
    package, version = OPENCODE
    with open(prefix / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            meta = json.loads((prefix / "node_modules" / package / "package.json").read_text())
        except (OSError, ValueError):
            meta = {}
        if meta.get("version") != version:
            npm = shutil.which("npm")
            if npm is None:
                pytest.fail(
                    f"e2e: npm not found on PATH; the OpenCode test installs "
                    f"{package}@{version} with it",
                    pytrace=False,
                )
            done = subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(prefix),
                    "--save-exact",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    f"{package}@{version}",
                ],
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT,
            )
            if done.returncode != 0:
                pytest.fail(
                    f"e2e: npm install {package}@{version} failed:\n{done.stderr}", pytrace=False
                )
    return prefix / "node_modules" / ".bin" / "opencode"


class OpenCodeWorld:
    """A throwaway user for OpenCode: HOME and its XDG folders, a project folder, OpenCode's
    config naming the fake model as an OpenAI-compatible provider, a continuity workspace."""

    def __init__(self, root: Path, cli: Path, model: FakeModel) -> None:
        self.root, self.cli, self.model = root, cli, model
        self.home, self.project, self.ws = root / "user", root / "project", root / "workspace"
        for folder in (self.home, self.project, self.ws, root / "tmp"):
            folder.mkdir(parents=True)
        (self.project / "README.md").write_text("# demo\n")
        config = self.home / ".config" / "opencode"
        config.mkdir(parents=True)
        (config / "opencode.json").write_text(
            json.dumps(
                {
                    "$schema": "https://opencode.ai/config.json",
                    "autoupdate": False,
                    "share": "disabled",
                    "model": "fake/fake-model",
                    "provider": {
                        "fake": {
                            "npm": "@ai-sdk/openai-compatible",
                            "name": "Fake",
                            "options": {"baseURL": f"{model.url}/v1", "apiKey": "e2e-fake"},
                            "models": {"fake-model": {"name": "Fake"}},
                        }
                    },
                },
                indent=2,
            )
        )
        self.data = self.home / ".local" / "share" / "opencode"
        self.first_request = len(model.requests)

    def env(self) -> dict[str, str]:
        home = str(self.home)
        return {
            "PATH": f"{self.cli.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin')}",
            "HOME": home,
            "TMPDIR": str(self.root / "tmp"),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "XDG_DATA_HOME": f"{home}/.local/share",
            "XDG_CONFIG_HOME": f"{home}/.config",
            "XDG_CACHE_HOME": f"{home}/.cache",
            "XDG_STATE_HOME": f"{home}/.local/state",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "npm_config_offline": "true",
        }

    def run(self, prompt: str, *, resume: bool = False) -> None:
        argv = [str(self.cli), "run", "--model", "fake/fake-model", prompt]
        if resume:
            argv.insert(2, "--continue")
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
            raise AssertionError(
                f"opencode exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
            )

    def continuity_json(self, *args: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "continuity.cli.app", *args, "--home", str(self.ws), "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.project,
            # the world's user (HOME, XDG folders): where resume writes a copy and finds
            # OpenCode's config
            env={**os.environ, **self.env(), "CONTINUITY_HOME": str(self.ws)},
        )
        if done.returncode != 0:
            raise AssertionError(
                f"continuity {' '.join(args)} exited {done.returncode}:\n"
                f"{done.stdout}\n{done.stderr}"
            )
        return json.loads(done.stdout)

    def requests_with(self, text: str) -> list[dict[str, Any]]:
        return [
            r
            for r in self.model.model_requests(self.first_request)
            if text in json.dumps(r["body"], ensure_ascii=False)
        ]


def test_opencode_sessions_import_and_continue_with_calls_paired(
    tmp_path: Path, fake_model: FakeModel
) -> None:
    world = OpenCodeWorld(tmp_path, ensure_opencode(), fake_model)
    pa = f"PA {uuid.uuid4().hex[:8]}: list the project files"
    world.run(pa)
    assert world.requests_with(pa), "the prompt never reached the fake model"

    first = world.continuity_json("import", str(world.data))
    assert [(f["harness"], f["status"], f["opaque"]) for f in first["files"]] == [
        ("opencode", "imported", 0)
    ]
    (key,) = first["sessions"]
    assert key.startswith("ses_")
    listed = world.continuity_json("sessions")
    assert [(s["session"], s["harness"], s["project"]) for s in listed] == [
        (key, "opencode", str(world.project))
    ]

    cont = world.continuity_json("continue", key)
    assert cont["refusal"] is None
    assert pa in cont["request"]["text"]
    blocks = [b for m in cont["messages"] for b in m["content"]]
    calls = [b for b in blocks if b["type"] == "tool_call"]
    results = {b["call_id"]: b for b in blocks if b["type"] == "tool_result"}
    assert [c["name"] for c in calls] == ["bash"]
    assert calls[0]["arguments"]["command"] == SHELL_COMMAND
    assert results[calls[0]["id"]]["text"].strip() == "continuity-e2e-tool-ran"
    assert any(b["type"] == "text" and "Fake model answer" in b["text"] for b in blocks)

    pb = f"PB {uuid.uuid4().hex[:8]}: and now the tests"
    world.run(pb, resume=True)
    second = world.continuity_json("import", str(world.data))
    (f,) = second["files"]
    assert (f["session"], f["status"]) == (key, "imported")
    # B's records only: the request, its call and result, the answer, steps, message records
    assert f["imported"] > 0 and f["resumed_from"] > 0
    rows = world.continuity_json("show", key, "--all")["entries"]
    requests = [r for r in rows if r["is_request"]]
    assert [pa in r["content"][0]["text"] for r in requests] == [True, False]
    assert pb in requests[1]["content"][0]["text"]
    call_ids = [b["id"] for r in rows for b in r["content"] if b["type"] == "tool_call"]
    assert len(call_ids) == len(set(call_ids)) == 2  # A's call not imported twice
    cont_b = world.continuity_json("continue", key)
    assert pb in cont_b["request"]["text"]
    third = world.continuity_json("import", str(world.data))
    assert [(g["status"], g["imported"]) for g in third["files"]] == [("unchanged", 0)]
