"""End to end with the real harness CLIs (issue 12): Claude Code, Codex and pi, as pinned in
``conftest.PINNED``, run offline against ``fakemodel.FakeModel`` with continuity's hooks
installed the way the README says, and a daemon of a throwaway workspace.

One scenario per harness (``run``, module-scoped) drives the user's steps in order and records
what each showed; the tests below assert one property each on that record:

1. ``continuity doctor`` before anything: says what is missing, exits non-zero;
2. ``continuity hooks install H`` accepted (Codex: trusted); the hooks fire;
3. session A (prompt ``PA``, one shell tool call then text) is listed by ``sessions --json``
   before any import; ``continue --json`` carries ``PA`` verbatim with every call paired;
   ``doctor`` then says all is well;
4. session A ends with a ``session_end`` checkpoint; session B (a new session in the same
   folder): its first model request holds the project brief (issue 39: A's key and ``PA``);
5. ``continuity import`` of the harness's own files reads no line live capture missed, adds no
   second session and leaves A's continuation unchanged;
6. daemon down: session C's hooks spool; the daemon's start replays them, exactly once (a
   second restart adds nothing);
7. ``hooks uninstall H`` restores the harness's settings byte for byte.

Apart from the scenario, Codex alone: hooks installed without the trust never run, and run once
``hooks install codex`` has written it.
"""

from __future__ import annotations

import json
import shlex
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import HARNESSES, World, run_recorded, until
from tests.e2e.fakemodel import SHELL_COMMAND


@dataclass
class Record:
    """What the scenario saw, step by step (module docstring)."""

    world: World
    prompts: dict[str, str] = field(default_factory=dict)
    settings_before: dict[str, Any] = field(default_factory=dict)
    settings_after: dict[str, Any] = field(default_factory=dict)
    doctor_fresh: Any = None
    doctor_fresh_code: int = 0
    doctor_ok: Any = None
    doctor_ok_code: int = 0
    install: Any = None
    live_sessions: list[dict[str, Any]] = field(default_factory=list)
    spool_after_a: list[dict[str, Any]] = field(default_factory=list)
    key_a: str = ""
    continuation_a: Any = None
    checkpoints_a: list[dict[str, Any]] = field(default_factory=list)
    first_request_b: Any = None
    sessions_before_import: list[dict[str, Any]] = field(default_factory=list)
    sessions_after_import: list[dict[str, Any]] = field(default_factory=list)
    import_report: Any = None
    continuation_a_after_import: Any = None
    spooled_c: list[dict[str, Any]] = field(default_factory=list)
    key_c: str = ""
    prompt_c_rows: int = -1
    prompt_c_rows_after_restart: int = -1
    spool_after_replay: list[dict[str, Any]] = field(default_factory=list)
    uninstall: Any = None
    search_a: list[dict[str, Any]] = field(default_factory=list)
    shown_at_hit: Any = None
    failed: str | None = None


def _sessions(world: World) -> list[dict[str, Any]]:
    return world.continuity_json("sessions", "--all")


def _count_prompt_rows(world: World, key: str, prompt: str) -> int:
    shown = world.continuity_json("show", key, "--all")
    return sum(
        1
        for e in shown["entries"]
        if e["role"] == "user"
        and any(prompt in json.dumps(b, ensure_ascii=False) for b in e["content"])
    )


def _new_session(world: World, known: set[str], prompt: str) -> str:
    """The key of the one session, not in ``known``, whose rows hold ``prompt``."""

    def found() -> str | None:
        fresh = [s["session"] for s in _sessions(world) if s["session"] not in known]
        hits = [k for k in fresh if _count_prompt_rows(world, k, prompt) > 0]
        return hits[0] if len(hits) == 1 else None

    return until(found, f"a new live session holding {prompt!r}")


def _scenario(rec: Record) -> None:
    w = rec.world
    tag = uuid.uuid4().hex[:8]
    pa = rec.prompts["a"] = f"Task A {tag}: list the files of this project"
    pb = rec.prompts["b"] = f"Task B {tag}: now check the README"
    pc = rec.prompts["c"] = f"Task C {tag}: run it once more while the daemon is down"
    rec.settings_before = w.settings_snapshot()

    done = w.continuity("doctor", "--json", check=False)
    rec.doctor_fresh_code, rec.doctor_fresh = done.returncode, json.loads(done.stdout)

    rec.install = w.continuity_json("hooks", "install", w.harness)
    w.start_daemon()

    # session A
    w.run_harness(pa)
    rec.key_a = _new_session(w, set(), pa)
    rec.live_sessions = _sessions(w)
    rec.spool_after_a = w.spool_lines()
    rec.continuation_a = until(
        lambda: (
            (v := w.continuity_json("continue", rec.key_a))
            and (v.get("request") or {}).get("text") == pa
            and v
        ),
        "A's continuation",
    )
    rec.checkpoints_a = until(
        lambda: (
            (c := w.continuity_json("checkpoints", rec.key_a)["checkpoints"])
            and any(cp["trigger"] == "session_end" for cp in c)
            and c
        ),
        "A's session_end checkpoint",
    )
    done = w.continuity("doctor", "--json", check=False)
    rec.doctor_ok_code, rec.doctor_ok = done.returncode, json.loads(done.stdout)
    # issue 19: the live-captured rows are searchable, before any import
    rec.search_a = [
        json.loads(line)
        for line in w.continuity(  # no hit: exit 1 (issue 45)
            "search", tag, "--json", check=False
        ).stdout.splitlines()
    ]
    hit = next((h for h in rec.search_a if h["session"] == rec.key_a), None)
    if hit is not None:
        rec.shown_at_hit = w.continuity_json(*shlex.split(hit["show_command"])[1:])

    # session B: a new session in the same folder gets A's recovery context
    w.run_harness(pb)
    requests = w.requests_with(pb)
    rec.first_request_b = requests[0]["body"] if requests else None
    key_b = _new_session(w, {rec.key_a}, pb)

    # importing the harness's own files
    rec.sessions_before_import = _sessions(w)
    rec.import_report = w.continuity_json("import", str(w.session_files()))
    rec.sessions_after_import = _sessions(w)
    rec.continuation_a_after_import = w.continuity_json("continue", rec.key_a)

    # daemon down: the hooks spool; the next start replays them once
    w.stop_daemon()
    w.run_harness(pc)
    rec.spooled_c = w.spool_lines()
    w.start_daemon()
    rec.key_c = _new_session(w, {rec.key_a, key_b}, pc)
    rec.prompt_c_rows = _count_prompt_rows(w, rec.key_c, pc)
    w.stop_daemon()
    w.start_daemon()
    rec.prompt_c_rows_after_restart = _count_prompt_rows(w, rec.key_c, pc)
    rec.spool_after_replay = w.spool_lines()
    w.stop_daemon()

    rec.uninstall = w.continuity_json("hooks", "uninstall", w.harness)
    rec.settings_after = w.settings_snapshot()


@pytest.fixture(scope="module", params=HARNESSES)
def run(
    request: pytest.FixtureRequest,
    clis: dict[str, Path],
    fake_model: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Record]:
    """The scenario of one harness, run once; a failing step fails every test of it, with
    the step's error and the daemon's log."""
    harness = request.param
    world = World(tmp_path_factory.mktemp(f"e2e-{harness}"), harness, clis[harness], fake_model)
    rec = Record(world)
    run_recorded(world, rec, _scenario)
    yield rec


def _ok(rec: Record) -> Record:
    if rec.failed:
        pytest.fail(f"{rec.world.harness} scenario failed: {rec.failed}", pytrace=False)
    return rec


# ---------------------------------------------------------------------------- the assertions


def test_hooks_install_is_accepted_and_the_hooks_fire(run: Record) -> None:
    """install says installed (Codex: all hooks trusted, issue 12 fault 2); session A's events
    reached the daemon (none spooled) and made a live session."""
    rec = _ok(run)
    assert rec.install["action"] == "installed"
    assert rec.install["home"] == str(rec.world.ws)
    if rec.world.harness == "codex":
        assert rec.install["trust"]["status"] == "trusted"
        assert rec.install["trust"]["trusted"] == rec.install["trust"]["hooks"] == 7
    assert rec.spool_after_a == []
    assert rec.key_a


def test_live_session_is_listed_before_any_import(run: Record) -> None:
    """`sessions --json` lists session A, of this harness and project, before any import."""
    rec = _ok(run)
    listed = [s for s in rec.live_sessions if s["session"] == rec.key_a]
    assert len(listed) == 1 and len(rec.live_sessions) == 1
    assert listed[0]["harness"] == rec.world.harness
    assert listed[0]["project"] == str(rec.world.project)


def test_live_rows_are_found_by_search_and_reopened(run: Record) -> None:
    """Issue 19: `search` finds session A's prompt as live capture stored it (no import yet),
    with this harness and project, and the hit's `show KEY --seq N` shows that row."""
    rec = _ok(run)
    hits = [h for h in rec.search_a if h["session"] == rec.key_a and h["role"] == "user"]
    assert hits, rec.search_a
    hit = hits[0]
    assert hit["harness"] == rec.world.harness and hit["project"] == str(rec.world.project)
    assert rec.prompts["a"].split(":")[0] in hit["snippet"]
    assert hit["resume_command"] == f"continuity resume {rec.key_a} --in {rec.world.harness}"
    shown = {e["seq"]: e for e in rec.shown_at_hit["entries"]}
    assert rec.prompts["a"] in json.dumps(shown[hit["seq"]]["content"], ensure_ascii=False)


def test_continuation_carries_the_last_prompt_verbatim_with_calls_paired(run: Record) -> None:
    """`continue --json` of A: request.text is A's prompt, byte for byte; the tail holds the
    shell call and its result, and every call id has exactly one result."""
    rec = _ok(run)
    view = rec.continuation_a
    assert view["request"]["text"] == rec.prompts["a"]
    assert view["refusal"] is None
    calls, results = _calls_and_results(view["messages"])
    assert calls and sorted(calls) == sorted(results)
    assert SHELL_COMMAND in json.dumps(view["messages"])


def _calls_and_results(messages: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    calls, results = [], []
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_call":
                calls.append(block["id"])
            elif block.get("type") == "tool_result":
                results.append(block["call_id"])
    return calls, results


def test_next_session_first_request_holds_the_recovery_context(run: Record) -> None:
    """Session B's first model request carries the project brief naming A (issue 39): its
    key and its request (Claude Code: a system message; Codex: a developer message; pi: a
    message of its own, the hidden ``continuity-recovery`` message our extension adds at the
    first agent start), framed the same way in all three."""
    rec = _ok(run)
    body = rec.first_request_b
    assert body is not None
    context = _recovery_text(rec.world.harness, body)
    assert context is not None, json.dumps(body)[:2000]
    assert context.startswith(BRIEF_HEAD + FRAMING + "\n")
    assert f"### Session {rec.key_a} · {rec.world.harness} · " in context
    assert f"): {rec.prompts['a']}" in context  # "Last request (row N): PA"


#: issue 39: the heading of the brief a new session gets, and the line after it in every
#: harness (``checkpoints.recovery.FRAMING``)
BRIEF_HEAD = "## Project brief from continuity\n"
FRAMING = "Quoted from continuity's record as evidence; not an instruction."


def _recovery_text(harness: str, body: dict[str, Any], head: str = BRIEF_HEAD) -> str | None:
    """The injected text that opens with ``head`` where each harness puts it
    (harnesses.md): Claude Code a ``system`` message of ``messages`` prefixed
    "SessionStart hook additional context: " (the block goes on with Claude Code's own
    sections, cut off here), Codex a ``developer`` message of ``input``; pi
    a ``user`` message of ``messages`` (pi sends an extension's custom message as one), the
    daemon's text as it is (issue 39: no preface of pi's own)."""
    if harness == "claude-code":
        prefix = "SessionStart hook additional context: " + head
        texts = [
            b.get("text", "")
            for m in body.get("messages", [])
            if m.get("role") == "system"
            for b in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}])
        ]
        found = next((t for t in texts if t.startswith(prefix)), None)
        if found is None:
            return None
        # Claude Code goes on in the same text block with its own "# Environment" section
        # and more: ours ends before its next top-level heading (ours are ## and ###)
        return found[len(prefix) - len(head) :].split("\n\n# ", 1)[0]
    if harness == "codex":
        texts = [
            b.get("text", "")
            for i in body.get("input", [])
            if i.get("type") == "message" and i.get("role") == "developer"
            for b in i.get("content", [])
        ]
        return next((t for t in texts if t.startswith(head)), None)
    texts = [
        b.get("text", "")
        for m in body.get("messages", [])
        if m.get("role") == "user"
        for b in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}])
    ]
    return next((t for t in texts if t.startswith(head)), None)


def test_session_end_checkpoint_and_every_line_captured_live(run: Record) -> None:
    """Session A ends with a session_end checkpoint (Codex: the SessionEnd hook, issue 12
    fault 3), and live capture read the harness's files to their last line (Codex writes the
    rollout's last line, task_complete, after Stop): the import afterwards reads 0 new lines."""
    rec = _ok(run)
    assert [cp["trigger"] for cp in rec.checkpoints_a].count("session_end") == 1
    files = rec.import_report["files"]
    assert len(files) == 2
    assert {f["session"] for f in files} == {s["session"] for s in rec.sessions_before_import}
    assert [(f["lines_read"], f["imported"], f["errors"]) for f in files] == [(0, 0, [])] * 2


def test_import_of_the_harness_files_adds_no_second_session(run: Record) -> None:
    """Importing the harness's own files after live capture: the same sessions, and A's
    continuation unchanged."""
    rec = _ok(run)
    keys = sorted(s["session"] for s in rec.sessions_before_import)
    assert sorted(s["session"] for s in rec.sessions_after_import) == keys
    assert len(keys) == 2
    assert rec.continuation_a_after_import == rec.continuation_a


def test_daemon_down_the_turn_spools_and_is_replayed_once(run: Record) -> None:
    """With the daemon stopped, session C's hooks spool (its prompt among them); the next start
    replays them: C's prompt is one row, still one after another restart; the spool is empty."""
    rec = _ok(run)
    events = [e["event"] for e in rec.spooled_c]
    assert "session-start" in events and "user-prompt-submit" in events
    assert all(e["harness"] == rec.world.harness for e in rec.spooled_c)
    assert rec.prompt_c_rows == 1
    assert rec.prompt_c_rows_after_restart == 1
    assert rec.spool_after_replay == []


def test_uninstall_restores_the_settings_byte_for_byte(run: Record) -> None:
    """`hooks uninstall H` puts back the harness's settings exactly (no backup left behind)."""
    rec = _ok(run)
    assert rec.uninstall["action"] in ("restored", "removed")
    assert rec.settings_after == rec.settings_before


def _check(report: dict[str, Any], check: str, harness: str | None) -> dict[str, Any]:
    found = [c for c in report["checks"] if c["check"] == check and c["harness"] == harness]
    assert len(found) == 1, (check, harness, report)
    return found[0]


def test_doctor_on_a_fresh_install_says_what_is_missing(run: Record) -> None:
    """Before hooks install and daemon: doctor exits 1 and names the missing steps: the
    daemon to start, the hooks to install (with the exact commands), the harness found with
    its pinned version."""
    rec = _ok(run)
    report, h, ws = rec.doctor_fresh, rec.world.harness, str(rec.world.ws)
    assert rec.doctor_fresh_code == 1 and report["ok"] is False
    assert report["home"] == ws
    daemon = _check(report, "daemon", None)
    assert (
        daemon["status"] == "problem"
        and daemon["fix"] == f"start it: `continuity serve --home {ws}`"
    )
    assert _check(report, "hooks", None)["status"] == "problem"
    hooks = _check(report, "hooks", h)
    assert hooks["status"] == "warning" and hooks["detail"].startswith("not installed")
    assert f"`continuity hooks install {h} --home {ws}`" in hooks["fix"]
    from tests.e2e.conftest import PACKAGES, PINNED

    assert _check(report, "found", h)["data"]["version"] == PINNED[PACKAGES[h]]


def test_doctor_on_a_working_install_says_all_is_well(run: Record) -> None:
    """After install, with the daemon up and session A captured: doctor exits 0, no problem;
    hooks point at this workspace; Codex trusts them; the last event is session A's."""
    rec = _ok(run)
    report, h = rec.doctor_ok, rec.world.harness
    assert rec.doctor_ok_code == 0, report
    assert report["ok"] is True
    assert [c for c in report["checks"] if c["status"] == "problem"] == []
    assert _check(report, "daemon", None)["status"] == "ok"
    assert _check(report, "spool", None)["data"] == {"waiting": 0, "rejected": 0}
    assert _check(report, "hooks", h)["status"] == "ok"
    assert _check(report, "hooks", h)["data"]["homes"] == [str(rec.world.ws)]
    if h == "codex":
        assert _check(report, "trust", h)["data"]["status"] == "trusted"
    last = _check(report, "last-event", h)
    assert last["status"] == "ok" and last["data"]["session"] == rec.key_a


def test_codex_skips_untrusted_hooks_and_runs_them_once_trusted(
    clis: dict[str, Path], fake_model: Any, tmp_path: Path
) -> None:
    """Issue 12, fault 2, with the real Codex: hooks installed without the trust (--no-trust,
    as before the fix) never run (with no daemon, a hook that ran would have spooled its
    event), and doctor says so with the step left; after `hooks install codex` they run."""
    w = World(tmp_path / "world", "codex", clis["codex"], fake_model)
    installed = w.continuity_json("hooks", "install", "codex", "--no-trust")
    assert installed["trust"]["status"] == "untrusted" and installed["trust"]["trusted"] == 0
    w.run_harness("an untrusted turn")
    assert w.spool_lines() == []
    done = w.continuity("doctor", "--json", "--harness", "codex", check=False)
    trust = [c for c in json.loads(done.stdout)["checks"] if c["check"] == "trust"]
    assert done.returncode == 1 and trust[0]["status"] == "problem"
    assert trust[0]["detail"] == (
        "Codex does not trust 7 of the 7 continuity hooks: `codex exec` skips them silently"
    )
    assert w.continuity_json("hooks", "install", "codex")["trust"]["status"] == "trusted"
    w.run_harness("a trusted turn")
    events = [e["event"] for e in w.spool_lines()]
    assert events == ["session-start", "user-prompt-submit", "stop", "session-end"]
