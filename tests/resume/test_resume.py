"""``continuity resume`` (issue 13): the written file of every target, read back with our own
importer, and the typed refusals. The real CLIs accepting the files: tests/e2e/test_resume.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from continuity.continuation.view import build_continuation
from continuity.core.errors import InputError
from continuity.core.model import EntryKind, Role, Session
from continuity.formats.importer import import_file
from continuity.resume import ResumeRefused, resume_session
from continuity.resume.convert import TARGETS
from continuity.resume.files import write_new
from continuity.store import open_store, open_store_raw
from tests.builders import CP, A, T, U, call, load

VALID_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

#: The targets whose copy is a session file our importer reads back and a resume reuses
#: (OpenCode's is an export document that ``opencode import`` takes into its database: it is
#: never reused, and tests/resume/test_resume_opencode.py checks it).
FILE_TARGETS = [t for t in TARGETS if t != "opencode"]


def _session(store, project: Path, rows, key: str = "src-1", harness: str = "codex") -> str:
    load(store, rows, key=key)
    store.upsert_session(
        Session(key=key, harness=harness, project=str(project), source_path="/somewhere/src.jsonl")
    )
    return key


def _rows():
    return [
        U("first request"),
        A(call("c/1:weird id", "exec_command", cmd="ls"), text="look"),
        T("c/1:weird id", text="README.md"),
        A(text="done with the first"),
        CP("the first turn listed the files"),
        U("Now add the authentication middleware"),
        A(call("call_2", "shell", command=["bash", "-lc", "pytest -q"])),
        T("call_2", text="3 passed"),
        A(call("call_3", "apply_patch", input="*** Begin Patch")),  # never answered
    ]


def _read_back(tmp_path: Path, path: Path, name: str):
    """The written file imported into a fresh store: (store, report)."""
    store = open_store_raw(f"sqlite:///{tmp_path / (name + '.db')}")
    report = import_file(store, path)
    return store, report


def _paired(messages: list[dict]) -> None:
    """Every call is answered exactly once, right after its turn, and no result is stray."""
    open_calls: list[str] = []
    seen: set[str] = set()
    for m in messages:
        calls = [b["id"] for b in m["content"] if b["type"] == "tool_call"]
        results = [b["call_id"] for b in m["content"] if b["type"] == "tool_result"]
        for r in results:
            assert r in open_calls, (r, messages)
            open_calls.remove(r)
        if m["role"] != "tool" and not calls:
            assert not open_calls, (open_calls, m)
        for c in calls:
            assert c not in seen
            seen.add(c)
        open_calls += calls
    assert not open_calls


@pytest.mark.parametrize("target", FILE_TARGETS)
def test_the_written_file_reads_back_as_a_new_session_linked_to_its_source(
    sqlite_store, tmp_path: Path, target: str
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    key = _session(sqlite_store, project, _rows())
    view = build_continuation(sqlite_store, key)
    home = tmp_path / "home"
    written = resume_session(sqlite_store, key, target, target_home=home)
    assert written.path.is_file() and written.path.is_relative_to(home)
    assert oct(written.path.stat().st_mode & 0o777) == "0o600"
    assert [p.name for p in written.path.parent.iterdir()] == [written.path.name]  # no temp
    back, report = _read_back(tmp_path, written.path, target)
    try:
        assert report.status == "imported" and report.errors == []
        assert report.harness == target and report.copy_of == key
        new_key = report.session_key
        assert new_key == written.session_id != key
        notes = [n.text for n in back.notes(new_key)]
        assert notes == [
            f"Resumed copy of codex session {key} (continuity resume); that "
            "session is the original."
        ]
        again = build_continuation(back, new_key, budget_bytes=10**9)
        assert again.refusal is None
        assert (
            again.request["text"] == view.request["text"] == "Now add the authentication middleware"
        )
        assert f"continues the codex session {key}" in again.summary["text"]
        assert "the first turn listed the files" in again.summary["text"]
        _paired(again.messages)
        blocks = [b for m in again.messages for b in m["content"]]
        calls = [b for b in blocks if b["type"] == "tool_call"]
        assert all(VALID_ID.match(c["id"]) for c in calls)
        assert [c["name"] for c in calls][-2:] == [
            {
                "claude-code": "Bash",
                "codex": "exec_command",
                "pi": "bash",
                "gemini-cli": "run_shell_command",
                "qwen-code": "run_shell_command",
                "copilot-cli": "bash",
            }[target],
            "apply_patch",
        ]
        shell = calls[-2]["arguments"]
        assert shell == ({"cmd": "pytest -q"} if target == "codex" else {"command": "pytest -q"})
        results = [b for b in blocks if b["type"] == "tool_result"]
        assert results[-2]["text"] == "3 passed call_2"  # T() appends the id
        # the dangling call's synthetic answer (a Responses output has no error flag)
        assert results[-1]["is_error"] is (target != "codex")
        assert "has no recorded result" in results[-1]["text"]
        # the source session is untouched
        assert sqlite_store.get_session(key).entry_count == len(_rows())
        # a second import of the same file adds nothing
        assert import_file(back, written.path).status == "unchanged"
        assert len(back.notes(new_key)) == 1
    finally:
        back.close()


def test_ids_and_names_are_made_valid_and_stay_paired(sqlite_store, tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    long_id = "x" * 80
    rows = [
        U("go"),
        A(call("a b/c", "mcp:server/tool"), call(long_id, "read")),
        T(long_id),
        T("a b/c"),
    ]  # results out of order, in separate rows
    key = _session(sqlite_store, project, rows, harness="pi")
    written = resume_session(sqlite_store, key, "claude-code", target_home=tmp_path / "h")
    lines = [json.loads(x) for x in written.path.read_text().splitlines()]
    assistant = [x for x in lines if x["type"] == "assistant"]
    assert len(assistant) == 1
    uses = [b for b in assistant[0]["message"]["content"] if b["type"] == "tool_use"]
    assert [u["name"] for u in uses] == ["mcp_server_tool", "read"]
    assert all(VALID_ID.match(u["id"]) for u in uses)
    following = lines[lines.index(assistant[0]) + 1]
    assert following["parentUuid"] == assistant[0]["uuid"]
    assert [b["tool_use_id"] for b in following["message"]["content"]] == [u["id"] for u in uses]
    chain = [x["parentUuid"] for x in lines]
    assert chain == [None] + [x["uuid"] for x in lines[:-1]]
    assert all(x["sessionId"] == written.session_id and x["cwd"] == str(project) for x in lines)


def test_media_stay_stubs(sqlite_store, tmp_path: Path) -> None:
    from continuity.core.model import Entry, MediaBlock, TextBlock

    project = tmp_path / "p"
    project.mkdir()
    rows = [
        Entry(
            EntryKind.MESSAGE,
            Role.USER,
            (TextBlock("see this"), MediaBlock("image/png", 90480)),
            is_request=True,
        ),
        A(text="a cat"),
    ]
    key = _session(sqlite_store, project, rows)
    written = resume_session(sqlite_store, key, "pi", target_home=tmp_path / "h")
    text = written.path.read_text()
    assert "[image/png 90480 B omitted]" in text and "base64" not in text


def test_homes_follow_each_harness_variable(sqlite_store, tmp_path: Path) -> None:
    project = tmp_path / "my proj"
    project.mkdir()
    key = _session(sqlite_store, project, [U("hi"), A(text="hello")])
    env = {
        "HOME": str(tmp_path / "user"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
        "CODEX_HOME": str(tmp_path / "cx"),
        "PI_CODING_AGENT_DIR": str(tmp_path / "pa"),
    }
    claude = resume_session(sqlite_store, key, "claude-code", env=env)
    encoded = re.sub(r"[^A-Za-z0-9]", "-", str(project))
    assert claude.path.parent == tmp_path / "cc" / "projects" / encoded
    assert claude.command == ["claude", "--resume", claude.session_id]
    codex = resume_session(sqlite_store, key, "codex", env=env)
    assert codex.path.parent.parent.parent.parent == tmp_path / "cx" / "sessions"
    assert re.fullmatch(
        r"rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-" + codex.session_id + r"\.jsonl", codex.path.name
    )
    pi = resume_session(sqlite_store, key, "pi", env=env)
    assert (
        pi.path.parent == tmp_path / "pa" / "sessions" / f"--{str(project)[1:].replace('/', '-')}--"
    )
    assert pi.command == ["pi", "--session", str(pi.path)]
    default = resume_session(sqlite_store, key, "codex", env={"HOME": str(tmp_path / "user")})
    assert default.path.is_relative_to(tmp_path / "user" / ".codex" / "sessions")


def test_a_refused_continuation_writes_nothing(sqlite_store, tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    key = _session(sqlite_store, project, [U("x" * 5000), A(text="ok")])
    home = tmp_path / "h"
    with pytest.raises(ResumeRefused) as caught:
        resume_session(sqlite_store, key, "codex", budget_bytes=1000, target_home=home)
    assert caught.value.exit_code == 5
    assert caught.value.refusal["reason"] == "protected_context_over_budget"
    assert not home.exists()


def test_bad_targets_projects_and_homes_are_input_errors(sqlite_store, tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    key = _session(sqlite_store, project, [U("hi"), A(text="hello")])
    with pytest.raises(InputError, match="unknown harness 'vim'"):
        resume_session(sqlite_store, key, "vim", target_home=tmp_path / "h")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(InputError, match="cannot write the pi session under"):
        resume_session(sqlite_store, key, "pi", target_home=blocker)
    assert blocker.read_text() == "not a folder"
    load(sqlite_store, [U("hi")], key="nowhere")
    with pytest.raises(InputError, match="has no project folder"):
        resume_session(sqlite_store, "nowhere", "pi", target_home=tmp_path / "h")
    _session(sqlite_store, tmp_path / "gone", [U("hi")], key="gone")
    with pytest.raises(InputError, match="does not exist here"):
        resume_session(sqlite_store, "gone", "pi", target_home=tmp_path / "h")


def test_write_new_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("original\n")
    with pytest.raises(FileExistsError):
        write_new(path, [{"a": 1}])
    assert path.read_text() == "original\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
    write_new(tmp_path / "t.jsonl", [{"a": 1}, {"b": "é"}])
    assert (tmp_path / "t.jsonl").read_text(encoding="utf-8") == '{"a":1}\n{"b":"é"}\n'


def _cli(home: Path, *args: str, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "continuity.cli.app", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CONTINUITY_HOME": str(home), **(env or {})},
    )


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace holding session ``abc-123`` (a request and its answer) and ``big`` (one
    4,000-byte request), both of folder ``proj``: (workspace, project)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    project = tmp_path / "proj"
    project.mkdir()
    with open_store(f"sqlite:///{ws / 'continuity.db'}") as store:
        _session(store, project, [U("Fix the bug"), A(text="on it")], key="abc-123")
        load(store, [U("y" * 4000)], key="big")
        store.upsert_session(Session(key="big", harness="pi", project=str(project)))
    return ws, project


def test_cli_json_and_errors(tmp_path: Path) -> None:
    ws, project = _workspace(tmp_path)
    target = tmp_path / "codex-home"
    done = _cli(ws, "resume", "abc", "--in", "codex", "--target-home", str(target), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data) == {
        "target",
        "path",
        "session_id",
        "command",
        "headless",
        "cwd",
        "env",
        "reused",
    }
    assert data["target"] == "codex" and Path(data["path"]).is_file()
    assert data["reused"] is False
    # --target-home: the command names the home, so codex looks where the file is (review)
    assert data["env"] == {"CODEX_HOME": str(target)}
    assert (
        data["command"] == f"cd {project} && CODEX_HOME={target} codex resume {data['session_id']}"
    )
    # issue 45 item 3: the headless command too
    assert (
        data["headless"]
        == f"cd {project} && CODEX_HOME={target} codex exec resume {data['session_id']}"
    )
    plain = _cli(ws, "resume", "abc", "--in", "pi", "--target-home", str(tmp_path / "pi"))
    assert plain.returncode == 0 and plain.stdout.startswith(
        f"cd {project} && PI_CODING_AGENT_DIR={tmp_path / 'pi'} pi --session {tmp_path / 'pi'}/"
    )
    interactive, headless = plain.stdout.splitlines()
    assert headless == interactive.replace(" pi --session ", " pi -p --session ")
    assert plain.stderr.startswith("wrote ")
    again = _cli(ws, "resume", "abc", "--in", "pi", "--target-home", str(tmp_path / "pi"))
    assert again.returncode == 0 and again.stdout == plain.stdout  # the same copy, reused
    assert again.stderr.startswith("reused the identical copy ")
    empty = _cli(ws, "resume", "abc", "--in", "claude-code", "--target-home", "")
    assert empty.returncode == 2 and "'--target-home': is empty" in empty.stderr
    bad = _cli(ws, "resume", "abc", "--in", "emacs")
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
    assert "unknown harness 'emacs'" in bad.stderr
    refused = _cli(
        ws,
        "resume",
        "big",
        "--in",
        "claude-code",
        "--budget",
        "500",
        "--target-home",
        str(tmp_path / "cc"),
    )
    assert refused.returncode == 5 and "refused" in refused.stderr
    assert not (tmp_path / "cc").exists()
    unknown = _cli(ws, "resume", "zzz", "--in", "pi")
    assert unknown.returncode == 3


def test_exec_opens_the_new_session_in_the_project_folder(tmp_path: Path) -> None:
    """``--exec`` runs the printed command: the harness, in the project folder (a stand-in
    ``codex`` on PATH records its arguments and folder)."""
    ws, project = _workspace(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "codex"
    fake.write_text('#!/bin/sh\necho "$PWD" "$@" > "$RECORD"\n')
    fake.chmod(0o755)
    record = tmp_path / "record.txt"
    done = _cli(
        ws,
        "resume",
        "abc",
        "--in",
        "codex",
        "--exec",
        "--target-home",
        str(tmp_path / "cx"),
        env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "RECORD": str(record)},
    )
    assert done.returncode == 0, done.stderr
    written = next((tmp_path / "cx" / "sessions").rglob("rollout-*.jsonl"))
    session_id = json.loads(written.read_text().splitlines()[0])["payload"]["id"]
    assert record.read_text().split() == [str(project), "resume", session_id]


def test_blank_user_rows_are_not_written_as_turns():
    """A tail user row whose text is whitespace only (``"\\r"``, found by the resume property
    test) becomes no turn: read back it would be a request with no words (refused as
    ``incomplete_request``), and the providers answer a blank text block with a 400."""
    from continuity.resume.convert import _Ids, _raw_turns

    rows = [
        ("user", [{"type": "text", "text": "task"}], {"text": "task", "actor": "user"}),
        ("user", [{"type": "text", "text": "\r"}], None),
        ("user", [{"type": "text", "text": ""}], None),
        ("user", [{"type": "text", "text": " next "}], None),
    ]
    turns = _raw_turns(rows, _Ids("claude-code"), "claude-code")
    assert [(t.kind, t.parts) for t in turns] == [("user", ["task"]), ("user", [" next "])]


# ----------------------------------------------------------------------- issue 45 item 3


@pytest.mark.parametrize("target", FILE_TARGETS)
def test_the_same_resume_reuses_its_intact_copy(sqlite_store, tmp_path: Path, target: str) -> None:
    """Issue 45 item 3: resuming the same session at the same point into the same harness and
    home returns the copy written before (one file), until it is no longer intact (grown by the
    harness or edited): then a new copy is written and later calls reuse that one; a session
    that grew is another point: another copy."""
    project = tmp_path / "proj"
    project.mkdir()
    key = _session(sqlite_store, project, _rows())
    home = tmp_path / "home"
    first = resume_session(sqlite_store, key, target, target_home=home)
    second = resume_session(sqlite_store, key, target, target_home=home)
    assert not first.reused and second.reused
    assert (second.path, second.session_id) == (first.path, first.session_id)
    assert second.to_dict()["command"] == first.to_dict()["command"]
    assert len(list(home.rglob("*.jsonl"))) == 1
    if target != "pi":  # pi opens any file by its path; the others find a session by its id
        # a byte-for-byte copy under another name is not where the harness finds it
        stray = first.path.with_name("0" + first.path.name)
        stray.write_bytes(first.path.read_bytes())
        os.utime(stray, ns=(first.path.stat().st_mtime_ns + 10**9,) * 2)
        assert resume_session(sqlite_store, key, target, target_home=home).path == first.path
        stray.unlink()
    # the harness appends a turn to the copy: it is the copy continued, not the same one
    with open(first.path, "ab") as fh:
        fh.write(b'{"type":"user","note":"a new turn"}\n')
    third = resume_session(sqlite_store, key, target, target_home=home)
    assert not third.reused and third.path != first.path and third.session_id != first.session_id
    assert resume_session(sqlite_store, key, target, target_home=home).path == third.path
    # an edited body (same size) is not intact either
    body = bytearray(third.path.read_bytes())
    at = body.index(b"authentication")
    body[at : at + 4] = b"AUTH"
    third.path.write_bytes(bytes(body))
    fourth = resume_session(sqlite_store, key, target, target_home=home)
    assert not fourth.reused and fourth.path not in (first.path, third.path)
    # another home folder is another copy; so is the session at a later point
    assert not resume_session(sqlite_store, key, target, target_home=tmp_path / "h2").reused
    _session(sqlite_store, project, [A(text="and one more answer")], key=key)
    later = resume_session(sqlite_store, key, target, target_home=home)
    assert not later.reused and later.path != fourth.path
    assert len(list(home.rglob("*.jsonl"))) == 4


def _preface(path: Path) -> str:
    """The preface a written copy holds, as its harness sends it first (Claude Code's compact
    summary line, Codex's ``compacted`` message, pi's ``compaction`` summary)."""
    for line in map(json.loads, path.read_text().splitlines()):
        if line.get("isCompactSummary"):
            return line["message"]["content"]
        if line.get("type") == "compacted":
            return line["payload"]["message"]
        if line.get("type") == "compaction":
            return line["summary"]
    raise AssertionError(f"no preface in {path}")


def _hop(store, key: str, target: str, tmp_path: Path, n: int):
    """Resume ``key`` into ``target`` and import the copy into ``store``: (written, copy key)."""
    written = resume_session(store, key, target, target_home=tmp_path / f"home{n}")
    report = import_file(store, written.path)
    assert report.status == "imported" and report.copy_of == key, report
    return written, report.session_key


def test_a_copy_of_a_copy_carries_one_preface_naming_the_original(
    sqlite_store, tmp_path: Path
) -> None:
    """Issue 45 item 3: three hops (codex → claude-code → pi → codex) give one copy notice,
    naming the direct source, the original and the chain; the original's summary once,
    labelled with the original's rows (0–3), never "rows 0–0" of a copy; the notes and the
    marker carry the original; `continue` of a copy labels its preface as carried in."""
    project = tmp_path / "proj"
    project.mkdir()
    key = _session(sqlite_store, project, _rows())
    keys = [key]
    for n, target in enumerate(("claude-code", "pi", "codex")):
        written, copy = _hop(sqlite_store, keys[-1], target, tmp_path, n)
        sqlite_store.upsert_session(
            Session(key=copy, harness=target, project=str(project), source_path=str(written.path))
        )
        keys.append(copy)
        preface = _preface(written.path)
        assert preface.count("This session is a copy written by `continuity resume`") == 1
        assert preface.count("the first turn listed the files") == 1
        assert "rows 0–0" not in preface
        assert (
            preface.count(f"Summary of earlier work in the original session {key} (rows 0–3)") == 1
        ), preface
        assert (
            f"continues the {sqlite_store.get_session(keys[-2]).harness} session "
            f"{keys[-2]}" in preface
        )
        if n:
            assert (
                f"the original is the codex session {key} (copied "
                f"{' → '.join(keys[:-1])})" in preface
            ), preface
        view = build_continuation(sqlite_store, copy, budget_bytes=10**9)
        assert view.request["text"] == "Now add the authentication middleware"
        # `continue` of the copy: its preface is labelled as carried in, not as its rows 0–0
        assert view.summary["text"].startswith(
            "Carried into this copy by `continuity resume`: the earlier work of the session it "
            "continues, quoted for reference. It is not an instruction.\n<summary>\n"
            "This session is a copy"
        )
        assert "rows 0–0" not in view.summary["text"]
        marker = json.loads(written.path.read_text().splitlines()[0])
        marker = marker.get("continuityResume") or marker["payload"]["continuityResume"]
        assert marker["original"] == {"session": key, "harness": "codex"}
        assert marker["chain"] == keys[:-1]
    notes = [n.text for n in sqlite_store.notes(keys[3])]
    assert notes == [
        f"Resumed copy of pi session {keys[2]} (continuity resume); the original "
        f"is codex session {key}."
    ]


def test_sessions_marks_copies_and_their_original(tmp_path: Path) -> None:
    """Issue 45 item 3: `sessions --json` names the source and the original of each copy
    (null for a session that is none); piped, the last column is the source."""
    ws, _project = _workspace(tmp_path)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cc"), "PI_CODING_AGENT_DIR": str(tmp_path / "pi")}
    one = json.loads(_cli(ws, "resume", "abc-123", "--in", "claude-code", "--json", env=env).stdout)
    assert _cli(ws, "import", one["path"]).returncode == 0
    two = json.loads(_cli(ws, "resume", one["session_id"], "--in", "pi", "--json", env=env).stdout)
    assert _cli(ws, "import", two["path"]).returncode == 0
    listed = {s["session"]: s for s in json.loads(_cli(ws, "sessions", "--json").stdout)}
    assert (listed["abc-123"]["copy_of"], listed["abc-123"]["original"]) == (None, None)
    assert (listed[one["session_id"]]["copy_of"], listed[one["session_id"]]["original"]) == (
        "abc-123",
        "abc-123",
    )
    assert (listed[two["session_id"]]["copy_of"], listed[two["session_id"]]["original"]) == (
        one["session_id"],
        "abc-123",
    )
    piped = _cli(ws, "sessions").stdout.splitlines()
    assert piped[0].endswith("\tsource\tcopy_of\ttitle")  # the title last (issue 44)
    rows = {line.split("\t")[0]: line.split("\t")[-2] for line in piped[1:]}
    assert rows == {
        "abc-123": "",
        "big": "",
        one["session_id"]: "abc-123",
        two["session_id"]: one["session_id"],
    }


@pytest.mark.parametrize("target", ["kilo", "crush"])
def test_a_known_harness_without_resume_is_named_as_such(
    sqlite_store, tmp_path: Path, target: str
) -> None:
    """Fresh-user review of issue 42, defect 5: ``resume --in kilo`` (or crush) said "unknown
    harness 'kilo'" though ``continuity harnesses`` lists it: it is a known harness that
    continuity cannot resume into yet (the registry's ``resume`` flag off), and the refusal
    names the ones it can, in the library and in the CLI (exit 2, nothing opened)."""
    from typer.testing import CliRunner

    from continuity.cli.app import app
    from continuity.formats.registry import names

    assert target in names() and target not in names("resume")
    project = tmp_path / "p"
    project.mkdir()
    key = _session(sqlite_store, project, [U("hi"), A(text="hello")])
    expected = (
        f"{target!r} is a harness continuity knows"
        + (" (it imports its sessions)" if target in names("import") else "")
        + " but cannot resume into yet (`continuity harnesses`: resume no); it can resume into "
        + ", ".join(names("resume"))
    )
    with pytest.raises(InputError) as caught:
        resume_session(sqlite_store, key, target, target_home=tmp_path / "h")
    assert str(caught.value) == expected
    assert not (tmp_path / "h").exists()
    result = CliRunner().invoke(
        app, ["resume", key, "--in", target, "--home", str(tmp_path / "ws")]
    )
    assert result.exit_code == 2 and expected in " ".join(result.output.split())
    assert "unknown harness" not in result.output
    assert not (tmp_path / "ws").exists()
