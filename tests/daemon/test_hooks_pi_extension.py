"""The pi extension (TypeScript written as plain JavaScript) run by Node against a stand-in
of pi's extension API: which hook it runs for each pi event, with what JSON, and what it gives
back to pi. Skipped where Node is not installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from continuity.daemon.hooks.install import pi_extension_text

NODE = shutil.which("node")

FAKE_HOOK = """
import json, sys
event = sys.argv[1]
data = json.loads(sys.stdin.read())
with open(sys.argv[-1], "a") as log:
    log.write(json.dumps({"event": event, "argv": sys.argv[2:4], "stdin": data}) + "\\n")
if event == "session-start":
    print(json.dumps({"additionalContext": "## Session Recovery Context\\nearlier work"}))
"""

DRIVER = """
import continuity from "./continuity.mjs";
const handlers = {};
const pi = { on: (name, fn) => { (handlers[name] ??= []).push(fn); } };
continuity(pi);
const ctx = { cwd: "/home/ana/ledger", sessionManager: {
  getSessionId: () => "0199a1b2-3c4d", getSessionFile: () => "/tmp/pi/session.jsonl" } };
const fire = async (name, event) => {
  let out; for (const fn of handlers[name] ?? []) out = await fn(event, ctx); return out; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const results = {};
results.start = await fire("session_start", { reason: "startup" });
await fire("before_agent_start", { prompt: "Add a --dry-run flag" });
await fire("agent_end", { messages: [{ role: "user", content: "x" },
  { role: "assistant", content: [{ type: "text", text: "Added the flag." }] }] });
await fire("agent_settled", {});
results.compact = await fire("session_before_compact",
  { reason: "threshold", customInstructions: "keep tests" });
await fire("session_compact", { reason: "threshold", compactionEntry: { summary: "## Goal" } });
await fire("session_shutdown", { reason: "reload" });
await fire("session_shutdown", { reason: "quit" });
await sleep(1500);
console.log(JSON.stringify(results));
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_pi_extension_posts_session_events(tmp_path: Path) -> None:
    """Every pi event runs the hook with Claude Code-style fields; the recovery context is
    appended to the system prompt; compaction is never cancelled; a reload ends nothing."""
    log = tmp_path / "hooks.jsonl"
    (tmp_path / "fake_hook.py").write_text(FAKE_HOOK)
    argv = [sys.executable, str(tmp_path / "fake_hook.py")]
    text = pi_extension_text(argv)
    text = text.replace('[...args, event, "--harness", "pi"]',
                        f'[...args, event, "--harness", "pi", {json.dumps(str(log))}]')
    (tmp_path / "continuity.mjs").write_text(text)
    (tmp_path / "driver.mjs").write_text(DRIVER)
    done = subprocess.run([NODE, "driver.mjs"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert results["start"]["systemPromptAppend"].endswith(
        "## Session Recovery Context\nearlier work")
    assert "compact" not in results or results["compact"] is None
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    events = sorted(c["event"] for c in calls)
    assert events == sorted(["session-start", "user-prompt-submit", "stop", "pre-compaction",
                             "post-compaction", "session-end"])
    by_event = {c["event"]: c["stdin"] for c in calls}
    assert all(c["argv"] == ["--harness", "pi"] for c in calls)
    assert by_event["user-prompt-submit"]["prompt"] == "Add a --dry-run flag"
    assert by_event["stop"]["last_assistant_message"] == "Added the flag."
    assert by_event["pre-compaction"]["custom_instructions"] == "keep tests"
    assert by_event["session-end"]["reason"] == "quit"
    for payload in by_event.values():
        assert payload["session_id"] == "0199a1b2-3c4d"
        assert payload["transcript_path"] == "/tmp/pi/session.jsonl"
        assert payload["cwd"] == "/home/ana/ledger"
