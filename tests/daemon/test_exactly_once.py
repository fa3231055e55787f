"""Exactly once under kills (issue 21, item 1): a spooled event's id is applied once whatever
the moment the daemon dies: before or after its handler, between a live turn's JSONL record
and its row, inside and after the row's transaction, after the spool's rotation. Each case kills
a real process (``os._exit`` at the step, ``continuity.core.faults``), restarts it, and counts
every prompt in the session's row and every event id among the canonical JSONL records."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from continuity.core.faults import CRASH_EXIT, ENV
from continuity.daemon.hooks import spool
from continuity.store import open_store
from continuity.transcripts.transcript_log import TranscriptLog, transcript_path

ROOT = Path(__file__).resolve().parents[2]
SESSION = "5e55104e-0000-4000-8000-00000000e721"
#: every step a replay passes, with how many times a replay of ``_events()`` reaches it at most
POINTS = {
    "spool-rotated": 1,
    "replay-before-apply": 5,
    "replay-after-apply": 5,
    "replay-after-mark": 5,
    "turn-recorded": 3,
    "row-before-commit": 3,
    "row-after-commit": 3,
}


def _line(n: int, event: str, payload: dict) -> tuple[str, bytes]:
    event_id = f"{n:032x}"
    raw = json.dumps({"session_id": SESSION, "cwd": "/work/proj", **payload}).encode()
    return event_id, spool.native_line(
        event_id, f"2026-12-02T10:00:{n:02d}.000Z", "claude-code", event, raw
    )


def _events() -> list[tuple[str, bytes]]:
    """A session start, two prompts, a Stop carrying the answer (three live turns) and a
    pre-compaction (a checkpoint)."""
    return [
        _line(1, "session-start", {"hook_event_name": "SessionStart", "source": "startup"}),
        _line(
            2,
            "user-prompt-submit",
            {"hook_event_name": "UserPromptSubmit", "prompt": "first prompt p-one"},
        ),
        _line(
            3,
            "user-prompt-submit",
            {"hook_event_name": "UserPromptSubmit", "prompt": "second prompt p-two"},
        ),
        _line(
            4,
            "stop",
            {
                "hook_event_name": "Stop",
                "stop_hook_active": False,
                "last_assistant_message": "the answer a-three",
            },
        ),
        _line(6, "pre-compaction", {"hook_event_name": "PreCompact", "trigger": "auto"}),
    ]


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated, empty SQLite database that each run copies (migrating costs more than the
    run)."""
    path = tmp_path_factory.mktemp("template") / "continuity.db"
    with open_store(f"sqlite:///{path}"):
        pass
    return path


@pytest.fixture(scope="module")
def daemon_runs():
    """``run(home, url, crash)``: one daemon run in a real process of its own (forked by one
    ``replay_process serve`` that imported the daemon once); returns its exit status."""
    env = {k: v for k, v in os.environ.items() if k != ENV}
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.daemon.replay_process", "serve"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    def run(home: Path, url: str, crash: str | None) -> int:
        assert server.stdin and server.stdout
        server.stdin.write(f"{home} {url} {crash or '-'}\n")
        server.stdin.flush()
        code = int(server.stdout.readline())
        assert code in (0, CRASH_EXIT), f"daemon run failed with {code}"
        return code

    yield run
    server.stdin.close()  # type: ignore[union-attr]
    server.wait(30)


def _counts(home: Path, url: str) -> tuple[str, list[str]]:
    with open_store(url) as store:
        row = store.get_transcripts([SESSION], "default").get(SESSION)
    ids = [r.event_id for r in TranscriptLog(transcript_path(home, "claude-code")).live_events()]
    return (row.content if row else ""), ids


def _assert_once(home: Path, url: str, extra: bool) -> None:
    content, ids = _counts(home, url)
    for text in ("p-one", "p-two", "a-three", *(["p-late"] if extra else [])):
        assert content.count(text) == 1, (text, content)
    assert content.index("p-one") < content.index("p-two") < content.index("a-three")
    wanted = [f"{n:032x}" for n in (2, 3, 4)] + ([f"{5:032x}"] if extra else [])
    assert sorted(ids) == wanted  # each live turn's record once
    assert not spool.pending(home)
    assert not (home / "spool" / spool.REJECTED_FILE).exists()
    with open_store(url) as store:  # every event id applied, none lost
        assert store.applied_events(f"{n:032x}" for n in range(1, 7)) == {
            f"{n:032x}" for n in (1, 2, 3, 4, 6, *([5] if extra else []))
        }
        triggers = [cp.trigger.value for cp in store.checkpoint_page(SESSION, limit=50)[0]]
    assert triggers.count("pre_compaction") == 1, triggers


@pytest.mark.parametrize("point", sorted(POINTS))
def test_a_kill_at_any_replay_step_applies_every_event_exactly_once(
    tmp_path: Path, point: str, daemon_runs, template_db
) -> None:
    """For each step and each time a replay reaches it: spool the events, kill the daemon
    there, spool one more event while it is down (a new ``events.jsonl`` beside the rotated
    file), restart it: every prompt once in the row, every turn's record once in the JSONL."""
    crashes = 0
    for nth in range(1, POINTS[point] + 2):
        home = tmp_path / f"{point}-{nth}"
        url = f"sqlite:///{home / 'continuity.db'}"
        home.mkdir()
        shutil.copyfile(template_db, home / "continuity.db")
        for _, line in _events():
            spool.append(home, line)
        if daemon_runs(home, url, f"{point}:{nth}") == 0:
            assert nth > 1, f"step {point} was never reached"
            break  # the replay passes this step fewer than nth times
        crashes += 1
        spool.append(
            home,
            _line(
                5,
                "user-prompt-submit",
                {"hook_event_name": "UserPromptSubmit", "prompt": "late prompt p-late"},
            )[1],
        )
        assert daemon_runs(home, url, None) == 0
        _assert_once(home, url, extra=True)
    assert crashes >= 1


def test_an_event_spooled_and_delivered_live_meanwhile_is_applied_once(
    store,
    isolated_home,
) -> None:
    """A replay runs while live hooks arrive: new events and the same ids as spooled ones (a
    hook timed out, spooled its event, and the daemon had taken it too). Each applies once."""
    from tests.daemon.livecapture import start_live

    events = _events()
    for _, line in events:
        spool.append(isolated_home, line)
    live = start_live(store, isolated_home)
    try:
        live.drain_spool()
        # now spool more and deliver the same events live while the replay runs
        more = [
            _line(
                n,
                "user-prompt-submit",
                {"hook_event_name": "UserPromptSubmit", "prompt": f"prompt number q-{n}"},
            )
            for n in range(10, 30)
        ]
        for _, line in more[::2]:
            spool.append(isolated_home, line)
        drain = threading.Thread(target=live.drain_spool)
        drain.start()
        for event_id, line in more:
            item = spool.SpooledEvent.parse(line)
            live.handle_native(
                "claude-code",
                "user-prompt-submit",
                item.payload or b"",
                event_id=event_id,
                at=item.at,
            )
        drain.join(30)
        live.drain_spool()
        assert live.worker.wait_idle(30)
    finally:
        live.close()
    content = store.get_transcripts([SESSION], "default")[SESSION].content
    for n in range(10, 30):
        assert content.count(f"q-{n}\n") + content.endswith(f"q-{n}") == 1, n
    ids = [
        r.event_id
        for r in TranscriptLog(transcript_path(isolated_home, "claude-code")).live_events()
    ]
    assert sorted(ids) == sorted({*ids}) and len(ids) == 3 + 20
