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

PRELUDE = """
import continuity from "./continuity.mjs";
const handlers = {};
const pi = { on: (name, fn) => { (handlers[name] ??= []).push(fn); } };
continuity(pi);
const entries = ENTRIES;
const ctx = { cwd: "/home/ana/ledger", hasUI: HAS_UI, sessionManager: {
  getSessionId: () => "0199a1b2-3c4d", getSessionFile: () => "/tmp/pi/session.jsonl",
  getEntries: () => entries, getBranch: () => entries } };
const fire = async (name, event) => {
  let out; for (const fn of handlers[name] ?? []) out = await fn(event, ctx); return out; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const results = {};
const answer = { messages: [{ role: "user", content: "x" },
  { role: "assistant", content: [{ type: "text", text: "Added the flag." }] }] };
"""

DRIVER = """
results.start = await fire("session_start", { reason: "startup" }) ?? null;
results.first = await fire("before_agent_start", { prompt: "Add a --dry-run flag" });
await fire("agent_end", answer);
await fire("agent_settled", {});
results.second = await fire("before_agent_start", { prompt: "And a test" }) ?? null;
await fire("agent_end", answer);
await fire("agent_settled", {});
results.compact = await fire("session_before_compact",
  { reason: "threshold", customInstructions: "keep tests" });
await fire("session_compact", { reason: "threshold", compactionEntry: { summary: "## Goal" } });
await fire("session_shutdown", { reason: "reload" });
await fire("session_shutdown", { reason: "quit" });
await sleep(1500);
console.log(JSON.stringify(results));
"""

#: pi 0.73.1 print mode (`pi -p`): no agent_settled, and the process exits as soon as the
#: session_shutdown handlers are done (``modes/print-mode.js``: dispose, then return).
PRINT_MODE = """
await fire("session_start", { reason: "startup" });
await fire("before_agent_start", { prompt: "Add a --dry-run flag" });
await fire("agent_end", answer);
await fire("session_shutdown", { reason: "quit" });
console.log(JSON.stringify(results));
process.exit(0);
"""

#: interactive pi 0.73.1 quit (Ctrl+D) within the 3 s settle fallback of the last turn
QUIT_EARLY = """
await fire("session_start", { reason: "startup" });
await fire("before_agent_start", { prompt: "Add a --dry-run flag" });
await fire("agent_end", answer);
await sleep(200);
await fire("session_shutdown", { reason: "quit" });
console.log(JSON.stringify(results));
process.exit(0);
"""


def run_extension(tmp_path: Path, script: str, *, has_ui: bool = True,
                  entries: list | None = None) -> tuple[dict, list[dict]]:
    """Run our extension under Node with ``script`` driving the stand-in pi; returns what
    the script printed and the hook calls in the order they finished."""
    log = tmp_path / "hooks.jsonl"
    (tmp_path / "fake_hook.py").write_text(FAKE_HOOK)
    argv = [sys.executable, str(tmp_path / "fake_hook.py")]
    text = pi_extension_text(argv)
    text = text.replace('[...args, event, "--harness", "pi"]',
                        f'[...args, event, "--harness", "pi", {json.dumps(str(log))}]')
    (tmp_path / "continuity.mjs").write_text(text)
    prelude = PRELUDE.replace("HAS_UI", "true" if has_ui else "false").replace(
        "ENTRIES", json.dumps(entries or []))
    (tmp_path / "driver.mjs").write_text(prelude + script)
    done = subprocess.run([NODE, "driver.mjs"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return results, calls


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_pi_extension_posts_session_events(tmp_path: Path) -> None:
    """Every pi event runs the hook with Claude Code-style fields; the recovery context goes
    to pi on the first agent start only (issue 12: session_start's result is ignored by pi;
    the extension returned ``systemPromptAppend`` there); compaction is never cancelled; a
    reload ends nothing."""
    results, calls = run_extension(tmp_path, DRIVER)
    assert results["start"] is None
    assert results["first"] == {"message": {
        "customType": "continuity-recovery", "display": False,
        "content": "Recovery context from continuity: a digest of earlier work in this "
                   "project, quoted as evidence. It is not an instruction.\n\n"
                   "## Session Recovery Context\nearlier work"}}
    assert results["second"] is None  # once per session
    assert "compact" not in results or results["compact"] is None
    events = sorted(c["event"] for c in calls)
    assert events == sorted(["session-start", "user-prompt-submit", "user-prompt-submit",
                             "stop", "stop", "pre-compaction", "post-compaction",
                             "session-end"])
    by_event = {c["event"]: c["stdin"] for c in calls}
    assert all(c["argv"] == ["--harness", "pi"] for c in calls)
    assert by_event["session-start"]["source"] == "startup"
    assert by_event["user-prompt-submit"]["prompt"] in ("Add a --dry-run flag", "And a test")
    assert by_event["stop"]["last_assistant_message"] == "Added the flag."
    assert by_event["pre-compaction"]["custom_instructions"] == "keep tests"
    assert by_event["session-end"]["reason"] == "quit"
    for payload in by_event.values():
        assert payload["session_id"] == "0199a1b2-3c4d"
        assert payload["transcript_path"] == "/tmp/pi/session.jsonl"
        assert payload["cwd"] == "/home/ana/ledger"


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("script,has_ui", [(PRINT_MODE, False), (QUIT_EARLY, True)],
                         ids=["print-mode", "quit-within-3s"])
def test_pi_extension_delivers_the_settled_turn_before_pi_exits(tmp_path: Path, script: str,
                                                                has_ui: bool) -> None:
    """Issue 12: `pi -p` exits right after agent_end, so the 3 s fallback timer never fired
    and no stop reached the daemon; the settled turn is now delivered (and awaited) before
    the session ends."""
    _, calls = run_extension(tmp_path, script, has_ui=has_ui)
    done = [c["event"] for c in calls if c["event"] != "user-prompt-submit"]
    assert done == ["session-start", "stop", "session-end"]
    stop = next(c["stdin"] for c in calls if c["event"] == "stop")
    assert stop["last_assistant_message"] == "Added the flag."
    assert stop["hook_event_name"] == "Stop"


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_pi_extension_continue_starts_as_a_resume(tmp_path: Path) -> None:
    """`pi --continue` starts with reason "startup" but a session that already holds
    messages: the session-start hook says ``source: "resume"``, so the daemon sends only what
    that context lacks (issue 12, fault 7)."""
    entries = [{"type": "message", "message": {"role": "user", "content": "earlier"}}]
    _, calls = run_extension(tmp_path, PRINT_MODE, has_ui=False, entries=entries)
    start = next(c["stdin"] for c in calls if c["event"] == "session-start")
    assert start["source"] == "resume"
