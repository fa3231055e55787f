"""The end-to-end suite's machinery (issue 12): the pinned harness CLIs from npm, the fake model
server, and a throwaway world (``HOME``, workspace, project folder, daemon) per harness.

The CLIs are installed once into ``$CONTINUITY_E2E_CACHE/npm`` (default
``~/.cache/continuity-e2e/npm``, outside the clone) and reused while their versions match
``PINNED``. A missing ``npm`` or a failed install FAILS the suite (never a skip): CI has npm.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fakemodel import FakeModel

#: The harness versions the suite runs (harnesses.md: observed 2026-12-02).
PINNED = {
    "@anthropic-ai/claude-code": "2.1.332",
    "@openai/codex": "0.171.0",
    "@mariozechner/pi-coding-agent": "0.73.1",
}
PACKAGES = {
    "claude-code": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "pi": "@mariozechner/pi-coding-agent",
}
BINS = {"claude-code": "claude", "codex": "codex", "pi": "pi"}
HARNESSES = ("claude-code", "codex", "pi")
#: The model Codex's worlds name (served by the fake model all the same): one Codex knows, as a
#: user's is. Codex 0.171 offers MCP tools only through ``tool_search``, and ``tool_search`` only
#: for a model it knows; with an unknown name (``gpt-fake``) it offers no MCP tool at all.
CODEX_MODEL = "gpt-5.5"
NPM_TIMEOUT = 900
#: A bound on every wait for the daemon or a harness (the suite's whole run is under 5 min).
WAIT_SECONDS = 30.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/e2e carries the ``e2e`` marker (deselect with -m "not e2e")."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


def cache_dir() -> Path:
    """Where the CLIs are installed: ``$CONTINUITY_E2E_CACHE/npm`` or
    ``~/.cache/continuity-e2e/npm``."""
    root = os.environ.get("CONTINUITY_E2E_CACHE") or os.path.expanduser("~/.cache/continuity-e2e")
    return Path(root) / "npm"


def _installed(prefix: Path, package: str) -> str | None:
    try:
        meta = json.loads((prefix / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    return meta.get("version")


def ensure_clis() -> dict[str, Path]:
    """The three CLIs' executables, installing the pinned versions when the cache lacks them.
    Calls ``pytest.fail`` (never skip) when npm is missing or the install fails."""
    prefix = cache_dir()
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix.parent / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs at once install once
        missing = [f"{p}@{v}" for p, v in PINNED.items() if _installed(prefix, p) != v]
        if missing:
            npm = shutil.which("npm")
            if npm is None:
                pytest.fail(
                    "e2e: npm not found on PATH; the end-to-end suite installs "
                    f"{', '.join(missing)} with it (install Node.js 20+ with npm)",
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
                    *missing,
                ],
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT,
            )
            if done.returncode != 0:
                pytest.fail(
                    f"e2e: `npm install {' '.join(missing)}` failed "
                    f"({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}",
                    pytrace=False,
                )
        wrong = {p: _installed(prefix, p) for p, v in PINNED.items() if _installed(prefix, p) != v}
        if wrong:
            pytest.fail(
                f"e2e: after npm install the versions are still wrong: {wrong}", pytrace=False
            )
    bins = {h: prefix / "node_modules" / ".bin" / BINS[h] for h in HARNESSES}
    absent = [str(b) for b in bins.values() if not os.access(b, os.X_OK)]
    if absent:
        pytest.fail(f"e2e: installed, but not executable: {absent}", pytrace=False)
    return bins


@pytest.fixture(scope="session")
def clis() -> dict[str, Path]:
    """``{harness: executable}`` of the pinned CLIs (``ensure_clis``)."""
    return ensure_clis()


@pytest.fixture(scope="session")
def fake_model() -> Iterator[FakeModel]:
    """One fake model server for the whole suite (requests are looked up by their prompt)."""
    server = FakeModel().start()
    yield server
    server.stop()


def free_port() -> int:
    """A free loopback port, never the daemon's default 7438."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port != 7438:
            return port


def until(
    check: Callable[[], Any], what: str, seconds: float = WAIT_SECONDS, every: float = 0.1
) -> Any:
    """Poll ``check`` every ``every`` seconds until it returns something truthy (returned),
    else fail naming ``what``."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds:.0f} s waiting for {what}")
        time.sleep(every)


def run_recorded(world: World, rec: Any, scenario: Callable[[Any], None]) -> None:
    """Run ``scenario(rec)`` in ``world``: a failing step is kept in ``rec.failed`` (its error
    and the end of the daemon's log), so every test of the run reports it; the world is
    closed after, and every model request of it written beside it (``model-requests.json``:
    the proof of what reached the model, for a failing run)."""
    try:
        scenario(rec)
    except Exception as exc:  # noqa: BLE001 - reported by every test of the run
        rec.failed = f"{exc.__class__.__name__}: {exc}\n--- daemon log ---\n" + (
            world.daemon_log()[-6000:] if world.daemon_starts else "(never started)"
        )
    finally:
        world.close()
        (world.root / "model-requests.json").write_text(
            json.dumps(world.requests_with(""), indent=1, ensure_ascii=False)
        )


class World:
    """A throwaway user: ``HOME`` (the harness's settings live there), a continuity workspace
    (``CONTINUITY_HOME``, its daemon on a free port in ``[daemon] port``), a project folder the
    harness runs in, and the harness's CLI pointed at the fake model."""

    def __init__(self, root: Path, harness: str, cli: Path, model: FakeModel) -> None:
        self.root, self.harness, self.cli, self.model = root, harness, cli, model
        self.home = root / "user"
        self.ws = root / "workspace"
        self.project = root / "project"
        for folder in (self.home, self.ws, self.project):
            folder.mkdir(parents=True)
        self.ws.chmod(0o700)  # as continuity makes a workspace (issue 16); doctor checks it
        (self.project / "README.md").write_text("# demo\n")
        self.port = free_port()
        (self.ws / "config.toml").write_text(
            f"[daemon]\nport = {self.port}\nstop_seconds = 20\nconsolidate_on_end = false\n"
        )
        self.first_request = len(model.requests)  # this world's requests start here
        self.daemon: subprocess.Popen[bytes] | None = None
        self.daemon_starts = 0
        self.setup_harness()

    # ------------------------------------------------------------------ environment

    def env(self) -> dict[str, str]:
        """What a harness (and so its hooks) runs with: no CONTINUITY_* but what the hooks
        carry themselves, the throwaway HOME, offline settings."""
        path = f"{self.cli.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
        env = {
            "PATH": path,
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "TMPDIR": str(self.root / "tmp"),
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "ANTHROPIC_BASE_URL": self.model.url,
            "ANTHROPIC_API_KEY": "sk-ant-e2e-fake",
            "FAKE_API_KEY": "e2e-fake",
            "PI_OFFLINE": "1",
            "NO_COLOR": "1",
        }
        (self.root / "tmp").mkdir(exist_ok=True)
        return env

    def continuity_env(self) -> dict[str, str]:
        return {**self.env(), "CONTINUITY_HOME": str(self.ws)}

    def setup_harness(self) -> None:
        """The harness's own settings as a user would have them before installing our hooks
        (each with content of its own, so "uninstall restores byte for byte" means something)."""
        if self.harness == "claude-code":
            claude = self.home / ".claude"
            claude.mkdir()
            (claude / "settings.json").write_text(
                '{\n  "theme": "dark",\n  "permissions": {"allow": ["Bash(ls:*)"]}\n}\n'
            )
        elif self.harness == "codex":
            codex = self.home / ".codex"
            codex.mkdir()
            (codex / "config.toml").write_text(
                f'# my Codex settings\nmodel = "{CODEX_MODEL}"\nmodel_provider = "fake"\n\n'
                '[model_providers.fake]\nname = "fake"\n'
                f'base_url = "{self.model.url}/v1"\nwire_api = "responses"\n'
                'env_key = "FAKE_API_KEY"\n'
            )
        else:
            agent = self.home / ".pi" / "agent"
            agent.mkdir(parents=True)
            (agent / "models.json").write_text(
                json.dumps(
                    {
                        "providers": {
                            "fake": {
                                "baseUrl": f"{self.model.url}/v1",
                                "api": "openai-completions",
                                "apiKey": "FAKE_API_KEY",
                                "models": [
                                    {
                                        "id": "fake-model",
                                        "name": "Fake",
                                        "reasoning": False,
                                        "input": ["text"],
                                        "contextWindow": 128000,
                                        "maxTokens": 4096,
                                        "cost": {
                                            "input": 0,
                                            "output": 0,
                                            "cacheRead": 0,
                                            "cacheWrite": 0,
                                        },
                                    }
                                ],
                            }
                        }
                    },
                    indent=2,
                )
                + "\n"
            )
            (agent / "settings.json").write_text(
                '{"defaultProvider": "fake", "defaultModel": "fake-model"}\n'
            )

    def settings_snapshot(self) -> dict[str, bytes | None]:
        """Every file under the harness's settings folder that our install may touch, as
        bytes (``None`` for a folder), keyed by path relative to HOME; session stores left
        out (the harness writes those, not us)."""
        base = {
            "claude-code": self.home / ".claude",
            "codex": self.home / ".codex",
            "pi": self.home / ".pi" / "agent",
        }[self.harness]
        keep = {
            "claude-code": ("settings.json", "settings.json.continuity-backup"),
            "codex": (
                "config.toml",
                "hooks.json",
                "config.toml.continuity-backup",
                "hooks.json.continuity-backup",
            ),
            "pi": ("settings.json", "models.json", "extensions"),
        }[self.harness]
        snap: dict[str, bytes | None] = {}
        for name in keep:
            path = base / name
            if path.is_dir():
                snap[name + "/"] = None
                for child in sorted(path.rglob("*")):
                    snap[str(child.relative_to(base))] = (
                        None if child.is_dir() else child.read_bytes()
                    )
            elif path.exists():
                snap[name] = path.read_bytes()
        return snap

    def session_files(self) -> Path:
        return {
            "claude-code": self.home / ".claude" / "projects",
            "codex": self.home / ".codex" / "sessions",
            "pi": self.home / ".pi" / "agent" / "sessions",
        }[self.harness]

    # ------------------------------------------------------------------ commands

    def continuity(
        self, *args: str, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run the real ``continuity`` CLI (``python -m continuity.cli.app``) in this world."""
        done = subprocess.run(
            [sys.executable, "-m", "continuity.cli.app", *args],
            env=self.continuity_env(),
            cwd=self.project,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"continuity {' '.join(args)} exited {done.returncode}:\n"
                f"{done.stdout}\n{done.stderr}"
            )
        return done

    def continuity_json(self, *args: str) -> Any:
        return json.loads(self.continuity(*args, "--json").stdout)

    def run_harness(self, prompt: str, *, resume: bool = False) -> subprocess.CompletedProcess[str]:
        """One non-interactive run of the harness with ``prompt`` (harnesses.md)."""
        if self.harness == "claude-code":
            argv = [str(self.cli), "-p", prompt, "--allowedTools", "Bash"]
            if resume:
                argv.insert(1, "--continue")
        elif self.harness == "codex":
            argv = [str(self.cli), "exec", "--skip-git-repo-check", prompt]
            if resume:
                argv[2:2] = ["resume", "--last"]
        else:
            argv = [str(self.cli), "-p", prompt]
            if resume:
                argv.insert(1, "--continue")
        done = subprocess.run(
            argv,
            env=self.env(),
            cwd=self.project,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise AssertionError(
                f"{self.harness} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
            )
        return done

    # ------------------------------------------------------------------ daemon

    def start_daemon(self) -> None:
        """``continuity serve`` of the workspace (port from ``[daemon] port``); waits until it
        answers and its start-up spool replay is done (``daemon.url`` is written after it)."""
        assert self.daemon is None
        url_file = self.ws / "daemon.url"
        log = open(self.root / f"daemon-{self.daemon_starts}.log", "wb")  # noqa: SIM115 - the child's
        self.daemon_starts += 1
        self.daemon = subprocess.Popen(
            [sys.executable, "-m", "continuity.cli.app", "serve", "--home", str(self.ws)],
            env=self.continuity_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        until(lambda: url_file.exists() or self.daemon.poll() is not None, "daemon.url")
        if self.daemon.poll() is not None:
            raise AssertionError("daemon did not start:\n" + self.daemon_log())
        assert url_file.read_text().strip() == f"http://127.0.0.1:{self.port}"

    def stop_daemon(self) -> None:
        """SIGTERM, then wait for the clean exit (queued work flushed)."""
        assert self.daemon is not None
        self.daemon.send_signal(signal.SIGTERM)
        try:
            code = self.daemon.wait(timeout=WAIT_SECONDS)
        except subprocess.TimeoutExpired as exc:
            self.daemon.kill()
            self.daemon.wait()
            raise AssertionError("daemon did not stop on SIGTERM:\n" + self.daemon_log()) from exc
        self.daemon = None
        assert code == 0, self.daemon_log()
        assert not (self.ws / "daemon.url").exists()

    def daemon_log(self) -> str:
        return "\n".join(
            (self.root / f"daemon-{i}.log").read_text(errors="replace")
            for i in range(self.daemon_starts)
        )

    def close(self) -> None:
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.kill()
            self.daemon.wait()
        self.daemon = None

    # ------------------------------------------------------------------ looking

    def spool_lines(self) -> list[dict[str, Any]]:
        """The spooled events not yet replayed (``<ws>/spool/events.jsonl``)."""
        path = self.ws / "spool" / "events.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def requests_with(self, text: str) -> list[dict[str, Any]]:
        """This world's model requests whose body holds ``text`` anywhere (as JSON), in
        order (the worlds of the harnesses run one after another)."""
        return [
            r
            for r in self.model.model_requests(self.first_request)
            if text in json.dumps(r["body"], ensure_ascii=False)
        ]
