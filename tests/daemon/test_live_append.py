"""Issue 45 item 10: a live session's settled turns append to the canonical JSONL (one
rewrite at the session's first capture, none after), and the daemon tells its archiver which
files it captures itself (``core.live_files``)."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from continuity.archive.archiver import Archiver
from continuity.core.live_files import captured_live, live_files_path, publish
from continuity.daemon.hooks.models import BODIES
from continuity.transcripts.session_transcripts import TranscriptLog, transcript_path
from tests.daemon.livecapture import start_live


class Session:
    """A Claude Code session file written as Claude Code writes it, turn by turn."""

    def __init__(self, folder: Path) -> None:
        self.id = str(uuid.uuid4())
        self.path = folder / f"{self.id}.jsonl"
        self.parent: str | None = None

    def line(self, obj: dict) -> None:
        uid = str(uuid.uuid4())
        obj.update(
            {
                "parentUuid": self.parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": "/tmp/ledger",
                "sessionId": self.id,
                "version": "2.1.332",
                "uuid": uid,
                "timestamp": "2026-12-06T10:00:00.000Z",
            }
        )
        self.parent = uid
        with open(self.path, "a") as fh:
            fh.write(json.dumps(obj) + "\n")

    def turn(self, n: int) -> tuple[str, str]:
        """A prompt, a Bash call and its result, the answer; returns (prompt, answer)."""
        prompt, answer = f"turn {n}: make the export skip weekends", f"Done with turn {n}."
        self.line({"type": "user", "message": {"role": "user", "content": prompt}})
        self.line(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{n}a",
                    "type": "message",
                    "role": "assistant",
                    "model": "m",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"toolu_{n}",
                            "name": "Bash",
                            "input": {"command": f"pytest -k day{n}"},
                        }
                    ],
                    "stop_reason": "tool_use",
                },
            }
        )
        self.line(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"toolu_{n}",
                            "content": f"{n} passed",
                        }
                    ],
                },
            }
        )
        self.line(
            {
                "type": "assistant",
                "message": {
                    "id": f"msg_{n}",
                    "type": "message",
                    "role": "assistant",
                    "model": "m",
                    "content": [{"type": "text", "text": answer}],
                    "stop_reason": "end_turn",
                },
            }
        )
        return prompt, answer


def ev(live, event: str, s: Session, **fields: object) -> dict:
    body = BODIES[event].model_validate(
        {
            "harness": "claude-code",
            "session_key": s.id,
            "project": "/tmp/ledger",
            "transcript_path": str(s.path),
            **fields,
        }
    )
    return live.handle(event, body)


def test_settled_turns_append_after_the_first_capture(
    store, isolated_home: Path, tmp_path: Path
) -> None:
    """Three turns with a tool call each: the first capture writes the session's records (its
    live ones replaced), the next two append: the file keeps its inode and every byte it had
    (their live records stay, superseded), and it reads as the session's rows, as the row
    does."""
    s = Session(tmp_path)
    live = start_live(store, isolated_home)
    try:
        ev(live, "session-start", s)
        path = transcript_path(isolated_home, "claude-code")
        inodes, previous = [], b""
        for n in range(1, 4):
            prompt, answer = s.turn(n)
            ev(live, "user-prompt-submit", s, prompt=prompt)
            ev(live, "stop", s, last_assistant_message=answer)
            assert live.worker.wait_idle(10)
            data = path.read_bytes()
            if n > 1:
                assert data.startswith(previous)  # appended: nothing before was rewritten
            previous = data
            inodes.append(os.stat(path).st_ino)
        assert inodes[0] == inodes[1] == inodes[2]
        records = list(TranscriptLog(path).read(session_key=s.id))
        assert [r.role for r in records] == ["user", "assistant", "tool", "assistant"] * 3
        assert [r.content for r in records][::4] == [
            f"User: turn {n}: make the export skip weekends" for n in (1, 2, 3)
        ]
        assert {r.source_format for r in records} == {"claude-code-jsonl"}
        assert [r.seq for r in records] == list(range(12))
        raw = [json.loads(x) for x in path.read_bytes().splitlines()]
        assert sum(1 for x in raw if x["source_format"] == "live") == 4  # turns 2-3: kept
        row = store.get_transcripts([s.id], "default")[s.id]
        assert row.content == "\n\n".join(r.content for r in records)
        assert TranscriptLog(path).digests()[("default", s.id)] == row.content_hash
    finally:
        live.close()


def test_the_daemon_publishes_its_live_files_and_the_archiver_leaves_them(
    store, isolated_home: Path, tmp_path: Path
) -> None:
    """While a session is live its file is in ``live-files.json`` and the archiver does not
    import it; after its end (and after the daemon closed) the archiver takes it again."""
    folder = tmp_path / "projects" / "-tmp-ledger"
    folder.mkdir(parents=True)
    s = Session(folder)
    s.turn(1)
    live = start_live(store, isolated_home)
    archiver = Archiver({"claude_code": tmp_path / "projects"}, home=isolated_home)
    try:
        ev(live, "session-start", s)
        assert captured_live(isolated_home) == {s.path.resolve()}
        assert archiver.changed_files() == []
        body = BODIES["session-end"].model_validate(
            {
                "harness": "claude-code",
                "session_key": s.id,
                "project": "/tmp/ledger",
                "transcript_path": str(s.path),
                "reason": "other",
            }
        )
        live.end_session(body)  # type: ignore[arg-type]
        assert captured_live(isolated_home) == frozenset()
        assert archiver.changed_files() == [s.path]
    finally:
        live.close()
    assert not live_files_path(isolated_home).exists()


def test_a_list_whose_daemon_is_gone_names_nothing(isolated_home: Path, tmp_path: Path) -> None:
    """A daemon killed with its list on disk: the pid is checked, the list ignored; a damaged
    list names nothing either."""
    publish(isolated_home, [str(tmp_path / "a.jsonl")])
    assert captured_live(isolated_home) == {(tmp_path / "a.jsonl").resolve()}
    data = json.loads(live_files_path(isolated_home).read_text())
    data["pid"] = 2**22 + 12345  # above pid_max's default: no such process
    live_files_path(isolated_home).write_text(json.dumps(data))
    assert captured_live(isolated_home) == frozenset()
    live_files_path(isolated_home).write_text("{not json")
    assert captured_live(isolated_home) == frozenset()
