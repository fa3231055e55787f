"""``continuity show`` and ``continuity transcript`` redact secrets by default, as ``export``
does, and print the stored text only with ``--raw`` (a warning on stderr). The injected brief
and ``continuity search`` tell agents to run ``continuity show KEY --seq N``: an agent
following them never reads a raw secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.core.config import database_url
from continuity.core.model import Entry, EntryKind, Role, TextBlock
from continuity.store import open_store
from tests.builders import CP, A, T, U, call, load

runner = CliRunner()

#: the review's value: found by the keyed detector, then repeated bare in the same output
AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
TOKEN = "ghp_Zx8fK2mQ9vLr4TnB7wYc1HdS6gPa3JeU0kNo"
#: under a secret key of an argument object only: ``redact`` of the text would keep it
ARG_VALUE = "deadbeef12345678cafe"
PASSWORD = "S3cretPass9x"
SUMMARY_KEY = "sk-ant-api03-ZYXWVUTSRQPONMLKJIHGFEDCBA0123456789abcdefgh"
HIDDEN = "xoxb-123456789012-Zx8fK2mQ9vLr4TnB7wYc1HdS"
SECRETS = (AWS, TOKEN, ARG_VALUE, PASSWORD, SUMMARY_KEY, HIDDEN)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    hidden = Entry(
        EntryKind.EVENT,
        Role.SYSTEM,
        (TextBlock(f"progress: SLACK={HIDDEN}"),),
        visible=False,
        type_name="progress",
    )
    with open_store(database_url(path)) as store:
        load(
            store,
            [
                U(f"deploy with GITHUB_TOKEN={TOKEN} please"),
                A(
                    call("c1", "Bash", command="env", env={"API_TOKEN": ARG_VALUE}),
                    text="reading the environment",
                ),
                T(
                    "c1",
                    text=f"AWS_SECRET_ACCESS_KEY={AWS}\nHOME=/root\nbare: {AWS}\n"
                    f"DB_PASSWORD={PASSWORD}",
                ),
                CP(f"Summary: the key {SUMMARY_KEY} was rotated"),
                hidden,
                A(text="done"),
            ],
            key="sess-secret",
        )
    return path


def invoke(*args: object):
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


@pytest.mark.parametrize(
    "extra",
    [[], ["--all"], ["--seq", "2"], ["--json"], ["--all", "--json"], ["--seq", "2", "--json"]],
    ids=lambda a: " ".join(a) or "plain",
)
def test_show_redacts_by_default(home, extra):
    """Text, tool-call arguments (by their keys), tool results (the repeated value too),
    compaction summaries and rows outside the conversation: no secret in any form of show."""
    r = invoke("show", "sess-secret", *extra, "--home", home)
    assert r.exit_code == 0, r.output
    for secret in SECRETS:
        assert secret not in r.stdout
    assert "[REDACTED:" in r.stdout and "--raw" not in r.stderr
    if "--json" in extra:
        shown = json.loads(r.stdout)
        assert shown["redacted"] is True
        rows = {e["seq"]: e for e in shown["entries"]}
        if 1 in rows:
            args = rows[1]["content"][1]["arguments"]
            assert args == {"command": "env", "env": {"API_TOKEN": "[REDACTED:token]"}}
        assert rows[2]["content"][0]["text"] == (
            "AWS_SECRET_ACCESS_KEY=[REDACTED:base64-credential]\nHOME=/root\n"
            "bare: [REDACTED:base64-credential]\nDB_PASSWORD=[REDACTED:password] c1"
        )
        assert (
            rows[3]["compaction"]["summary"]
            == "Summary: the key [REDACTED:anthropic-key] was rotated"
        )
    else:
        assert "bare: [REDACTED:base64-credential]" in r.stdout
        assert "rotated" in r.stdout


def test_show_all_includes_the_hidden_row_redacted(home):
    r = invoke("show", "sess-secret", "--all", "--home", home)
    assert "progress: SLACK=[REDACTED:slack-token]" in r.stdout


@pytest.mark.parametrize(
    "extra", [[], ["--all"], ["--seq", "2"], ["--json"]], ids=lambda a: " ".join(a) or "plain"
)
def test_show_raw_prints_the_stored_text_and_warns(home, extra):
    r = invoke("show", "sess-secret", "--raw", *extra, "--home", home)
    assert r.exit_code == 0, r.output
    assert AWS in r.stdout and PASSWORD in r.stdout and SUMMARY_KEY in r.stdout
    assert "warning: --raw: secrets in this session are NOT redacted" in r.stderr
    if "--json" in extra:
        shown = json.loads(r.stdout)
        assert shown["redacted"] is False
        assert shown["entries"][1]["content"][1]["arguments"]["env"] == {"API_TOKEN": ARG_VALUE}


def test_show_seq_the_search_hint_never_shows_a_secret(home):
    """What an agent runs after ``continuity search``: the hit's reopen command."""
    hit = json.loads(invoke("search", "bare", "--json", "--home", home).stdout.splitlines()[0])
    assert AWS not in json.dumps(hit)
    argv = hit["show_command"].split()[1:]
    r = invoke(*argv, "--home", home)
    assert r.exit_code == 0 and AWS not in r.stdout and "bare: [REDACTED:" in r.stdout


@pytest.fixture
def transcript_home(tmp_path: Path) -> Path:
    from continuity.transcripts.session_transcripts import put_transcript

    path = tmp_path / "tr"
    with open_store(database_url(path)) as store:
        put_transcript(
            store,
            "tr-secret",
            (
                f"User: deploy with GITHUB_TOKEN={TOKEN}\n\n"
                f"Tool call: Bash env\n\nTool result: AWS_SECRET_ACCESS_KEY={AWS}\nbare: {AWS}\n\n"
                "Assistant: done"
            ),
        )
    return path


@pytest.mark.parametrize(
    "extra",
    [[], ["--sanitized"], ["--json"], ["--sanitized", "--json"]],
    ids=lambda a: " ".join(a) or "plain",
)
def test_transcript_redacts_by_default(transcript_home, extra):
    r = invoke("transcript", "tr-secret", *extra, "--home", transcript_home)
    assert r.exit_code == 0, r.output
    assert TOKEN not in r.stdout and AWS not in r.stdout and "--raw" not in r.stderr
    assert "GITHUB_TOKEN=[REDACTED:github-token]" in r.stdout
    if "--sanitized" not in extra:
        assert "bare: [REDACTED:base64-credential]" in r.stdout
    if "--json" in extra:
        assert json.loads(r.stdout)["redacted"] is True


@pytest.mark.parametrize(
    "extra", [[], ["--sanitized"], ["--json"]], ids=lambda a: " ".join(a) or "plain"
)
def test_transcript_raw_prints_the_stored_text_and_warns(transcript_home, extra):
    r = invoke("transcript", "tr-secret", "--raw", *extra, "--home", transcript_home)
    assert r.exit_code == 0, r.output
    assert TOKEN in r.stdout
    assert "warning: --raw: secrets in this transcript are NOT redacted" in r.stderr
    if "--json" in extra:
        assert json.loads(r.stdout)["redacted"] is False
