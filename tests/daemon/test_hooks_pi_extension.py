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
with open(next(a for a in reversed(sys.argv) if a.endswith(".jsonl")), "a") as log:
    log.write(json.dumps({"event": event, "argv": sys.argv[2:4], "stdin": data}) + "\\n")
if event == "session-start":
    print(json.dumps({"additionalContext": "## Session Recovery Context\\nearlier work"}))
if event == "continuation-summary":
    print(open("summary-answer.json").read())
if event == "continuation-refused":
    print(json.dumps({"status": "refused", "run_id": "k:1", "reason": data["reason"]}))
if event == "user-prompt-submit" and "export" in data["prompt"]:
    print(json.dumps({"additionalContext": "## Recalled\\nthe export stays CSV"}))
if event == "pre-tool-use" and data["tool_name"] == "bash":
    print(json.dumps({"additionalContext": "## Recalled\\n`pytest -q` worked"}))
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


def run_extension(
    tmp_path: Path, script: str, *, has_ui: bool = True, entries: list | None = None
) -> tuple[dict, list[dict]]:
    """Run our extension under Node with ``script`` driving the stand-in pi; returns what
    the script printed and the hook calls in the order they finished."""
    log = tmp_path / "hooks.jsonl"
    (tmp_path / "fake_hook.py").write_text(FAKE_HOOK)
    argv = [sys.executable, str(tmp_path / "fake_hook.py")]
    text = pi_extension_text(argv)
    text = text.replace(
        '[...args, event, "--harness", "pi"]',
        f'[...args, event, "--harness", "pi", {json.dumps(str(log))}]',
    )
    (tmp_path / "continuity.mjs").write_text(text)
    prelude = PRELUDE.replace("HAS_UI", "true" if has_ui else "false").replace(
        "ENTRIES", json.dumps(entries or [])
    )
    (tmp_path / "driver.mjs").write_text(prelude + script)
    done = subprocess.run(
        [NODE, "driver.mjs"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    results["stderr"] = done.stderr  # what pi's terminal shows beside its answer
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
    # issue 39: the daemon's text as it is, its framing not doubled by a preface of pi's
    assert results["first"] == {
        "message": {
            "customType": "continuity-recovery",
            "display": False,
            "content": "## Session Recovery Context\nearlier work",
        }
    }
    assert results["second"] is None  # once per session
    assert "compact" not in results or results["compact"] is None
    events = sorted(c["event"] for c in calls)
    assert events == sorted(
        [
            "session-start",
            "user-prompt-submit",
            "user-prompt-submit",
            "stop",
            "stop",
            "pre-compaction",
            "post-compaction",
            "session-end",
        ]
    )
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
@pytest.mark.parametrize(
    "script,has_ui", [(PRINT_MODE, False), (QUIT_EARLY, True)], ids=["print-mode", "quit-within-3s"]
)
def test_pi_extension_delivers_the_settled_turn_before_pi_exits(
    tmp_path: Path, script: str, has_ui: bool
) -> None:
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


# ---------------------------------------------------------------------------- issue 14

#: A stand-in of pi's ``ctx.compact`` (agent-session.js ``compact``): session_before_compact
#: with the instructions, the branch and pi's abort signal; a returned compaction is
#: "written" and session_compact follows; anything else is pi's "Compaction cancelled".
COMPACT = """
const compacts = [], written = [], notes = [];
ctx.isIdle = () => true;
ctx.hasPendingMessages = () => false;
ctx.ui = { notify: (text, level) => notes.push([text, level]) };
ctx.compact = (opts) => { compacts.push(opts.customInstructions); void (async () => {
  const ac = new AbortController();
  const r = await fire("session_before_compact", { customInstructions: opts.customInstructions,
    branchEntries: entries, preparation: { tokensBefore: 4321 }, signal: ac.signal });
  results.before = r ?? null;
  if (r && r.compaction) {
    written.push(r.compaction);
    await fire("session_compact", { compactionEntry: { ...r.compaction, id: "cmp1" },
      fromExtension: true });
    opts.onComplete(r.compaction);
  } else opts.onError(new Error("Compaction cancelled"));
})(); };
const done = { messages: [{ role: "user", content: "x" }, { role: "assistant",
  content: [{ type: "text", text: "Read them all." }], stopReason: "STOP_REASON" }] };
await fire("session_start", { reason: "startup" });
await fire("before_agent_start", { prompt: "Read the logs" });
await fire("agent_end", done);
await fire("session_shutdown", { reason: "quit" });
results.compacts = compacts; results.written = written; results.notes = notes;
console.log(JSON.stringify(results));
process.exit(0);
"""
IMAGE = "iVBORw0KGgo" * 2000


def _view(result_bytes: int) -> list[dict]:
    """A pi branch: an old turn, a compaction that kept nothing, the request, a bash result
    of ``result_bytes`` with an image, the answer."""

    def msg(i: str, parent: str | None, role: str, content: object, **kw: object) -> dict:
        return {
            "type": "message",
            "id": i,
            "parentId": parent,
            "message": {"role": role, "content": content, **kw},
        }

    return [
        msg("u0", None, "user", [{"type": "text", "text": "old turn " + "o" * 50_000}]),
        {
            "type": "compaction",
            "id": "c0",
            "parentId": "u0",
            "summary": "## Goal\n- old",
            "firstKeptEntryId": None,
            "tokensBefore": 10,
        },
        msg("u1", "c0", "user", [{"type": "text", "text": "Read the logs"}]),
        msg(
            "a1",
            "u1",
            "assistant",
            [{"type": "toolCall", "id": "k1", "name": "bash", "arguments": {"command": "cat log"}}],
            stopReason="toolUse",
        ),
        msg(
            "t1",
            "a1",
            "toolResult",
            [
                {"type": "text", "text": "x" * result_bytes},
                {"type": "image", "mimeType": "image/png", "data": IMAGE},
            ],
            toolCallId="k1",
            toolName="bash",
            isError=False,
        ),
        msg(
            "a2", "t1", "assistant", [{"type": "text", "text": "Read them all."}], stopReason="stop"
        ),
    ]


def _checkpoint_run(
    tmp_path: Path,
    *,
    result_bytes: int = 250_000,
    stop: str = "stop",
    answer: dict | None = None,
    has_ui: bool = False,
) -> tuple[dict, list[dict]]:
    (tmp_path / "summary-answer.json").write_text(
        json.dumps(
            answer
            or {
                "status": "ok",
                "summary": "## Goal\n- Read the logs",
                "run_id": "k:7",
                "covers": {"from_entry_id": "c0", "through_entry_id": "a2"},
                "summarizer": "extractive",
            }
        )
    )
    script = COMPACT.replace("STOP_REASON", stop)
    if has_ui:  # interactive: the checkpoint follows pi's agent_settled, not the shutdown
        script = script.replace(
            'await fire("session_shutdown"',
            'await fire("agent_settled", {});\nawait fire("session_shutdown"',
        )
    return run_extension(tmp_path, script, has_ui=has_ui, entries=_view(result_bytes))


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_long_turn_asks_pi_for_one_compaction_made_by_the_daemon(tmp_path: Path) -> None:
    """Print mode, a successful turn whose view (from the newest compaction on) is over
    240,000 bytes: one ctx.compact with our marker; our session_before_compact sends the view
    (the old turn before the compaction left out, the image stubbed) to the daemon and returns
    its summary as a self-retaining compaction with our marker; it is delivered before
    session-end."""
    results, calls = _checkpoint_run(tmp_path)
    assert len(results["compacts"]) == 1
    assert results["compacts"][0].startswith("continuity:continuation-checkpoint ")
    assert results["written"] == [
        {
            "summary": "## Goal\n- Read the logs",
            "firstKeptEntryId": None,
            "tokensBefore": 4321,
            "details": {
                "continuity": {
                    "continuation": True,
                    "run_id": "k:7",
                    "covers": {"from_entry_id": "c0", "through_entry_id": "a2"},
                    "summarizer": "extractive",
                }
            },
        }
    ]
    events = [c["event"] for c in calls if c["event"] != "user-prompt-submit"]
    assert events == [
        "session-start",
        "stop",
        "continuation-summary",
        "post-compaction",
        "session-end",
    ]
    sent = next(c for c in calls if c["event"] == "continuation-summary")
    body = sent["stdin"]
    assert body["deadline_seconds"] == 600
    assert [e["id"] for e in body["entries"]] == ["c0", "u1", "a1", "t1", "a2"]
    assert body["request_entry_id"] == "u1" and body["session_key"] == "0199a1b2-3c4d"
    assert IMAGE not in json.dumps(body)
    assert body["entries"][3]["message"]["content"][1] == {
        "type": "text",
        "text": f"[image/png {len(IMAGE) * 3 // 4} B omitted]",
    }
    stop = next(c["stdin"] for c in calls if c["event"] == "stop")
    assert stop["checkpoint_in_harness"] is True
    assert results["notes"] == [] and results["stderr"] == ""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize(
    "result_bytes,stop",
    [(150_000, "stop"), (250_000, "aborted"), (250_000, "error")],
    ids=["under-budget", "aborted-turn", "error-turn"],
)
def test_no_compaction_under_budget_or_after_an_unsuccessful_turn(
    tmp_path: Path, result_bytes: int, stop: str
) -> None:
    """At or under the budget (the image's base64 does not count: 150 KB of text and 16 KB
    of image), or after an aborted or failed turn (a retry may be pending): no compaction."""
    results, calls = _checkpoint_run(tmp_path, result_bytes=result_bytes, stop=stop)
    assert results["compacts"] == []
    assert "continuation-summary" not in [c["event"] for c in calls]


REFUSED = {
    "status": "refused",
    "run_id": "k:7",
    "reason": "provider_failure",
    "detail": "HTTP 500",
    "receipt_id": 3,
}


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_refused_summary_cancels_and_notifies(tmp_path: Path) -> None:
    """The daemon refused (it recorded the receipt): pi gets an explicit {cancel: true},
    never a throw; with a UI the notification carries the structured receipt with its
    detail; nothing is reported twice."""
    results, calls = _checkpoint_run(tmp_path, answer=REFUSED, has_ui=True)
    assert results["before"] == {"cancel": True} and results["written"] == []
    assert results["notes"] == [
        [
            'continuation_checkpoint_refused {"type":'
            '"continuation_checkpoint_refused","run_id":"k:7",'
            '"reason":"provider_failure","detail":"HTTP 500"}',
            "error",
        ]
    ]
    assert "continuation-refused" not in [c["event"] for c in calls]
    assert results["stderr"] == ""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_refused_summary_in_print_mode_is_one_line_on_stderr(tmp_path: Path) -> None:
    """Issue 45 item 7: in print mode (no UI: pi's notify does nothing there) the refusal is
    one line on stderr with the reason and the detail, never silent."""
    results, _calls = _checkpoint_run(tmp_path, answer=REFUSED)
    assert results["before"] == {"cancel": True} and results["notes"] == []
    assert results["stderr"].splitlines() == [
        "continuity: the continuation checkpoint was refused (provider_failure: HTTP 500); "
        "the answer stands, no checkpoint was written"
    ]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize(
    "why,reason", [("no_daemon", "provider_failure"), ("timeout", "cancelled")]
)
def test_no_answer_from_the_daemon_is_reported_and_cancels(
    tmp_path: Path, why: str, reason: str
) -> None:
    """The daemon was not there, or did not answer in time: {cancel: true}, and the refusal
    goes to the daemon (``continuation-refused``, reason of the closed set) and to pi."""
    results, calls = _checkpoint_run(tmp_path, answer={"delivered": False, "why": why})
    assert results["before"] == {"cancel": True}
    told = [c["stdin"] for c in calls if c["event"] == "continuation-refused"]
    detail = {
        "no_daemon": "no daemon answered",
        "timeout": "no answer from the daemon within 600 s",
    }[why]
    assert [(t["reason"], t["detail"], t["request_entry_id"]) for t in told] == [
        (reason, detail, "u1")
    ]
    assert results["stderr"].splitlines() == [
        f"continuity: the continuation checkpoint was refused ({reason}: {detail}); the "
        "answer stands, no checkpoint was written"
    ]


RECALL = """
await fire("session_start", { reason: "startup" });
results.first = await fire("before_agent_start", { prompt: "Which format for the export?" });
results.second = await fire("before_agent_start", { prompt: "And the export's name?" });
results.third = await fire("before_agent_start", { prompt: "Write a haiku" }) ?? null;
await fire("tool_call", { toolName: "bash", toolCallId: "t1", input: { command: "pytest" } });
await fire("tool_call", { toolName: "read", toolCallId: "t2", input: { path: "a.py" } });
results.bash = await fire("tool_result", { toolName: "bash", toolCallId: "t1",
  content: [{ type: "text", text: "3 passed" }] });
results.read = await fire("tool_result", { toolName: "read", toolCallId: "t2",
  content: [{ type: "text", text: "x = 1" }] }) ?? null;
console.log(JSON.stringify(results));
process.exit(0);
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_pi_extension_injects_recall_at_the_point_of_action(tmp_path: Path) -> None:
    """Issue 40: the prompt's recall follows the recovery context in the first message, then
    comes as a message of its own; nothing when the daemon gives none; a bash call's recall
    is appended to its result, a read asks nothing."""
    results, calls = run_extension(tmp_path, RECALL)
    assert results["first"]["message"]["content"] == (
        "## Session Recovery Context\nearlier work\n\n## Recalled\nthe export stays CSV"
    )
    assert results["second"] == {
        "message": {
            "customType": "continuity-recall",
            "content": "## Recalled\nthe export stays CSV",
            "display": False,
        }
    }
    assert results["third"] is None
    assert results["bash"]["content"][-1] == {
        "type": "text",
        "text": "\n\n## Recalled\n`pytest -q` worked",
    }
    assert results["read"] is None
    asked = [c["stdin"] for c in calls if c["event"] == "pre-tool-use"]
    assert [(a["tool_name"], a["tool_input"], a["tool_use_id"]) for a in asked] == [
        ("bash", {"command": "pytest"}, "t1")
    ]
