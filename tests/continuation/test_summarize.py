"""Summarizer input bounds, chunking, validation, redaction, the extractive provider and the
``[summarizer]`` settings (issue 4; B15 B17 B20 B31 B48 B49)."""

from __future__ import annotations

import re
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from continuity.continuation.summarize import (
    ProviderError,
    ProviderReply,
    SummaryRequest,
    WorkingView,
    looks_like_error,
    make_summarizer,
    summarize,
    validate,
)
from continuity.continuation.summarize.bounds import RESULT_CAP, digest, render_row
from continuity.continuation.summarize.extractive import ExtractiveSummarizer
from continuity.continuation.summarize.settings import Provider, SummarizerSettings, load_settings
from continuity.core.errors import ConfigError
from continuity.core.model import (
    Entry,
    EntryKind,
    MediaBlock,
    ReceiptReason,
    Role,
    TextBlock,
    ToolResultBlock,
)
from tests.builders import A, T, U, call

GOOD = "## Goal\n- g\n## Progress\n### Done\n- d\n## Next steps\n- n"


def _seq(rows: list[Entry]) -> list[Entry]:
    for i, e in enumerate(rows):
        e.seq = i
    return rows


class Recorder:
    """A model-like summarizer with an input limit: records each request and answers a
    short structured summary naming the rows it saw."""

    name = "recorder"
    max_summary_bytes = 2_000
    min_seconds = 0.0

    def __init__(self, max_input_bytes: int = 20_000) -> None:
        self.max_input_bytes = max_input_bytes
        self.requests: list[SummaryRequest] = []

    def generate(
        self, request: SummaryRequest, *, cancel: threading.Event, deadline: float
    ) -> ProviderReply:
        self.requests.append(request)
        return ProviderReply(
            f"## Goal\n- rows {request.first_seq}-{request.last_seq}\n"
            "## Progress\n### Done\n- x\n## Next steps\n- y"
        )


def _run(view: WorkingView, summarizer, **kw):  # type: ignore[no-untyped-def]
    return summarize(
        view,
        summarizer,
        cancel=kw.pop("cancel", threading.Event()),
        deadline=time.monotonic() + 30,
        **kw,
    )


def test_summarize_bounds_media_payloads_and_long_outputs():
    """B17/B20: media become stubs, base64 runs in text become stubs, and a long tool output
    keeps its head, its last line and an omitted-bytes marker."""
    b64 = "iVBORw0KGgo" + "A" * 1_000_000
    output = "compiling\n" + "warning: x\n" * 20_000 + "error[E0308]: mismatched types"
    row = Entry(
        EntryKind.MESSAGE,
        Role.TOOL,
        (
            ToolResultBlock("c1", True, output),
            ToolResultBlock("c2", False, "img", (MediaBlock("image/png", 48213),)),
        ),
    )
    user = Entry(
        EntryKind.MESSAGE,
        Role.USER,
        (TextBlock(f"see data:image/png;base64,{b64}"), MediaBlock("image/jpeg", 1_200_000)),
    )
    text = render_row(digest(row)) + render_row(digest(user))
    assert "error[E0308]: mismatched types" in text and "compiling" in text
    assert re.search(r"\[… \d+ bytes omitted …\]", text)
    assert "[image/png 48213 B omitted]" in text and "[image/jpeg 1200000 B omitted]" in text
    assert "[base64 " in text and not re.search(r"[A-Za-z0-9+/]{400,}", text)
    assert len(digest(row).results[0].text.encode()) <= RESULT_CAP


def test_summarize_chunks_oldest_first_within_the_input_limit():
    """B15: a view larger than the provider's limit is summarized in chunks, oldest first,
    each request within the limit, each chunk's summary the next one's previous summary."""
    rows = _seq(
        [
            U(f"request {i} " + "w" * 2_500) if i % 2 == 0 else A(text="a " * 1_200)
            for i in range(60)
        ]
    )
    rec = Recorder(max_input_bytes=20_000)
    result = _run(WorkingView("## Goal\n- old", ["a note"], rows), rec)
    assert result.reason is None and result.chunks == len(rec.requests) >= 8
    assert all(r.request_bytes <= 20_000 for r in rec.requests)
    assert result.request_bytes == [r.request_bytes for r in rec.requests]
    firsts = [r.first_seq for r in rec.requests]
    assert firsts == sorted(firsts) and firsts[0] == 0 and rec.requests[-1].last_seq == 59
    assert rec.requests[0].previous == "## Goal\n- old"
    assert rec.requests[1].previous.startswith(f"## Goal\n- rows 0-{rec.requests[0].last_seq}")
    assert result.summary.startswith(f"## Goal\n- rows {rec.requests[-1].first_seq}-59")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=60_000), min_size=1, max_size=12),
    limit=st.integers(min_value=12_000, max_value=40_000),
)
def test_summarize_no_request_exceeds_the_limit(sizes, limit):
    """Property (B15): whatever the row sizes, every request fits the limit and every row
    is covered exactly once, in order."""
    rows = _seq(
        [U("é" * n) if i % 2 else T("c", text='"\n' * (n // 2)) for i, n in enumerate(sizes)]
    )
    rec = Recorder(max_input_bytes=limit)
    result = _run(WorkingView(None, [], rows), rec)
    assert result.reason is None
    assert all(r.request_bytes <= limit for r in rec.requests)
    covered = [row.seq for r in rec.requests for row in r.rows]
    assert covered == list(range(len(sizes)))


def test_summarize_refuses_when_no_row_fits_beside_the_protected_input():
    """An input limit with no room beside the previous summary refuses (over_bound)."""
    rec = Recorder(max_input_bytes=3_000)
    result = _run(WorkingView("## Goal\n- " + "p" * 2_000, [], _seq([U("hi")])), rec)
    assert (result.reason, result.summary, rec.requests) == (ReceiptReason.OVER_BOUND, None, [])


def test_summarize_redacts_every_input_and_the_output():
    """B31: private blocks and keys are redacted in the rows, the previous summary, the notes
    and the prompt; a secret in the reply is redacted before validation."""
    rows = _seq(
        [
            U("deploy with key sk-ant-api03-ABCDEFGHIJKLMNOP"),
            A(text="ok, I'll use <private>TOKEN-123</private>"),
        ]
    )
    rec = Recorder()
    rec.generate = lambda request, **kw: (
        rec.requests.append(request),
        ProviderReply(GOOD + "\n- AKIAIOSFODNN7EXAMPLE_old"),
    )[1]
    result = _run(
        WorkingView("## Goal\n- ghp_" + "z" * 30, ["TOKEN <private>n</private>"], rows), rec
    )
    sent = repr(rec.requests[0])
    for secret in ("ABCDEFGHIJKLMNOP", "TOKEN-123", "zzzzzzzz", "<private>n"):
        assert secret not in sent
    assert "AKIA" not in result.summary and "_old" not in result.summary
    assert result.summary.endswith("[REDACTED:aws-access-key]")


@pytest.mark.parametrize(
    "reply, reason",
    [
        (ProviderReply(GOOD, "length"), ReceiptReason.TRUNCATED),
        (ProviderReply("", "end"), ReceiptReason.EMPTY),
        (ProviderReply(" \n\t ", "end"), ReceiptReason.EMPTY),
        (ProviderReply("<think>hmm</think>", "end"), ReceiptReason.EMPTY),
        (ProviderReply("Claude AI usage limit reached|1699999999"), ReceiptReason.PROVIDER_FAILURE),
        (ProviderReply("Error: rate limit exceeded"), ReceiptReason.PROVIDER_FAILURE),
        (ProviderReply("API Error: 529 overloaded\n" + GOOD), ReceiptReason.PROVIDER_FAILURE),
        (ProviderReply("429 Too Many Requests"), ReceiptReason.PROVIDER_FAILURE),
        (
            ProviderReply("Summary unavailable; older messages were truncated."),
            ReceiptReason.PROVIDER_FAILURE,
        ),
        (ProviderReply(GOOD, "refusal"), ReceiptReason.PROVIDER_FAILURE),
        (ProviderReply(GOOD + "\n- " + "v" * 500), ReceiptReason.OVER_BOUND),
    ],
)
def test_summarize_validate_fails_closed(reply, reason):
    """B49 (and B51's "summary unavailable" text): each unusable reply maps to its closed
    reason and yields no summary."""
    assert validate(reply, 400) == (None, reason)


def test_summarize_validate_accepts_a_structured_summary():
    """A structured reply is kept (trimmed, a leading think block removed); it may mention
    rate limits as content."""
    text = GOOD + "\n## Critical context\n- the API returns 429 on rate limit"
    assert validate(ProviderReply(f"<think>plan</think>\n{text}\n\n"), 4_000) == (text, None)
    assert not looks_like_error(text)


def test_summarize_cancelled_before_the_request():
    """A set cancel signal refuses before any request."""
    rec = Recorder()
    cancel = threading.Event()
    cancel.set()
    result = _run(WorkingView(None, [], _seq([U("x")])), rec, cancel=cancel)
    assert (result.reason, rec.requests) == (ReceiptReason.CANCELLED, [])


def test_summarize_empty_view_is_refused():
    """B48: no rows never yields a summary that could replace an earlier one."""
    result = _run(WorkingView("## Goal\n- keep me", [], []), ExtractiveSummarizer())
    assert (result.summary, result.reason) == (None, ReceiptReason.EMPTY)


# ---------------------------------------------------------------------------- extractive


def _work() -> list[Entry]:
    todo = call(
        "t1",
        "TodoWrite",
        todos=[
            {"content": "Read the parser", "status": "completed"},
            {"content": "Fix the off-by-one", "status": "in_progress"},
            {"content": "Add a regression test", "status": "pending"},
        ],
    )
    return _seq(
        [
            U("Fix the parser. Don't touch the public API, and always run pytest."),
            A(todo),
            T("t1"),
            A(call("c1", "Read", file_path="src/parser.py")),
            T("c1", text="def parse(): ..."),
            A(call("c2", "Bash", command="pytest -q")),
            T("c2", text="E   IndexError\n1 failed", error=True),
            A(call("c3", "Edit", file_path="src/parser.py")),
            T("c3"),
            A(text="I decided to switch to a bounded loop because the index overran."),
            U("also check https://example.test/docs please"),
            A(text="Checked. Shall I add the test now?"),
        ]
    )


def test_extractive_summary_sections_from_the_log():
    """The extractive summary names the latest request verbatim, constraints, todos,
    failures not yet resolved, decisions, URLs, files and the last answer."""
    result = _run(WorkingView(None, ["staging only"], _work()), ExtractiveSummarizer())
    s = result.summary
    assert result.reason is None
    for heading in (
        "## Goal",
        "## Constraints and preferences",
        "## Progress",
        "### Done",
        "### In progress",
        "### Blocked",
        "## Key decisions",
        "## Next steps",
        "## Critical context",
        "## Files read and modified",
    ):
        assert f"\n{heading}\n" in f"\n{s}\n"
    assert "- Latest request (#10): also check https://example.test/docs please" in s
    assert "- Don't touch the public API, and always run pytest." in s
    assert "- [todo] Read the parser" in s and "- [todo] Add a regression test" in s
    assert "### In progress\n- [todo] Fix the off-by-one" in s
    assert "- Bash `pytest -q` failed (#6): 1 failed" in s
    assert "switch to a bounded loop because the index overran" in s
    assert "- URLs: https://example.test/docs" in s
    assert "- Last answer (#11): Checked. Shall I add the test now?" in s
    assert "- The agent's last question awaits an answer" in s
    assert "- Note (quoted): staging only" in s
    # issue 39 supersedes "a line per tool kind": one line per file, its strongest change
    assert "- modified: `src/parser.py`" in s and "- read: `src/parser.py`" not in s
    assert (
        "## Commands and results\n- `pytest -q` (#5) failed [tests]: E IndexError ⏎ "
        "1 failed c2\n" in s
    )
    assert (
        "## Errors and failing tests\n- unresolved: Bash `pytest -q` (#6): E IndexError … "
        "1 failed c2\n" in s
    )


def test_extractive_failure_resolved_by_a_later_command_with_the_same_step_is_not_blocked():
    """A failed ``cd /r && git commit -m x`` that a later ``cd /r && git add . && git commit
    -m x`` ran again with success is done, not blocked; a failure nothing retried stays."""
    rows = _seq(
        [
            U("release it"),
            A(call("c1", "bash", command='cd /r && git commit -m "Release v0.8.0"')),
            T("c1", text="error: lint failed", error=True),
            A(call("c2", "bash", command='cd /r && git add . && git commit -m "Release v0.8.0"')),
            T("c2", text="[main 45ffe0a] Release v0.8.0"),
            A(call("c3", "bash", command="cd /r && npm run publish")),
            T("c3", text="error TS2305: no exported member", error=True),
            A(text="The publish fails on TS2305."),
        ]
    )
    s = _run(WorkingView(None, [], rows), ExtractiveSummarizer()).summary
    blocked = s.split("### Blocked\n", 1)[1].split("\n#", 1)[0]
    assert blocked.splitlines() == [
        "- bash `cd /r && npm run publish` failed (#6): error TS2305: no exported member c3"
    ]


def test_extractive_is_deterministic_and_fits_any_bound():
    """Same input, same bytes; every bound from 600 bytes up is respected."""
    view = WorkingView(None, [], _work())
    a = _run(view, ExtractiveSummarizer()).summary
    assert a == _run(WorkingView(None, [], _work()), ExtractiveSummarizer()).summary
    for bound in (600, 900, 1_500, 4_000):
        got = _run(WorkingView(None, [], _work()), ExtractiveSummarizer(bound))
        assert got.reason is None and len(got.summary.encode()) <= bound
        assert "- Latest request (#10)" in got.summary


def test_extractive_merges_its_previous_summary():
    """B48: a previous extractive summary's items survive into the next one (ranked below
    the new ones); a foreign previous summary is quoted."""
    first = _run(WorkingView(None, [], _work()), ExtractiveSummarizer()).summary
    more = _seq([U("now release it"), A(text="Released v1.2.")])
    for e in more:
        e.seq += 20
    second = _run(WorkingView(first, [], more), ExtractiveSummarizer()).summary
    assert "- Latest request (#20): now release it" in second
    assert "- Don't touch the public API, and always run pytest." in second
    assert "- modified: `src/parser.py`" in second
    foreign = _run(
        WorkingView("The user wanted X. Done: Y.", [], more), ExtractiveSummarizer()
    ).summary
    assert "- Earlier summary (quoted): The user wanted X. Done: Y." in foreign


# ---------------------------------------------------------------------------- settings


def test_summarizer_settings_from_config_and_env(isolated_home, monkeypatch):
    """[summarizer] in config.toml, overridden by CONTINUITY_SUMMARIZER__*, then --summarizer."""
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text(
        '[summarizer]\nprovider = "openai"\nmodel = "m1"\neffort = "high"\n'
        'base_url = "http://127.0.0.1:11434/v1"\ntimeout = 30\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("CONTINUITY_SUMMARIZER__MODEL", "m2")
    s = load_settings()
    assert (s.provider, s.model, s.effort, s.timeout) == (Provider.OPENAI, "m2", "high", 30.0)
    assert load_settings(provider="extractive").provider is Provider.EXTRACTIVE
    assert make_summarizer(s).name == "openai"


@pytest.mark.parametrize(
    "toml, field",
    [
        ("timeout = -1", "timeout"),
        ("max_summary_bytes = 10", "max_summary_bytes"),
        ('provider = "gpt"', "provider"),
        ("max_input_bytes = 20000\nmax_summary_bytes = 9000", "max_input_bytes"),
        ('api_key_env = "sk-123 oops"', "api_key_env"),
    ],
)
def test_summarizer_settings_bad_values_name_the_field(isolated_home, toml, field):
    """A bad value is a ConfigError naming the field and the rule."""
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text(f"[summarizer]\n{toml}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=field):
        load_settings()


def test_summarizer_model_provider_needs_a_model():
    """openai/anthropic without a model is a ConfigError naming [summarizer] model."""
    with pytest.raises(ConfigError, match=r"\[summarizer\] model"):
        make_summarizer(SummarizerSettings(provider="anthropic"))
    assert make_summarizer(SummarizerSettings()).name == "extractive"


# ---------------------------------------------------------------------------- issue 15 item 3


def _section(summary: str, heading: str) -> list[str]:
    """The item lines under ``heading`` (up to the next heading)."""
    return summary.split(f"{heading}\n", 1)[1].split("\n#", 1)[0].splitlines()


_SHIP = [
    A(call("c1", "bash", command="git commit -am 'Fix the export date filter'")),
    T("c1", text="[i15 3f2c1ab] Fix the export date filter"),
    A(call("c2", "bash", command="git push origin i15")),
    T("c2", text="To github.com:acme/export.git\n   1a2b3c4..3f2c1ab  i15 -> i15"),
    A(call("c3", "bash", command="gh pr edit 42 --body-file pr.md")),
    T("c3", text="https://github.com/acme/export/pull/42"),
    A(text="Done: committed 3f2c1ab, pushed i15 and updated PR #42."),
]


def test_extractive_finished_request_is_done_not_in_progress():
    """Issue 15 item 3: the last run committed, pushed and updated the PR, every call
    succeeded and the answer says "Done"; the summary listed the request under In progress
    and Next steps. It is Done, with its answer; In progress and Next steps hold nothing."""
    rows = _seq(
        [
            U("fix the date filter"),
            A(text="Fixed in export.py."),
            U("commit, push and update the PR"),
            *_SHIP,
        ]
    )
    s = _run(WorkingView(None, [], rows), ExtractiveSummarizer()).summary
    assert _section(s, "### In progress") == ["- none recorded"]
    assert _section(s, "## Next steps") == ["- none recorded"]
    done = _section(s, "### Done")
    assert done[1] == (
        "- #2 commit, push and update the PR → Done: committed 3f2c1ab, pushed "
        "i15 and updated PR #42."
    )
    assert done[2] == "- #0 fix the date filter → Fixed in export.py."


def test_extractive_task_items_done_by_successful_calls():
    """Issue 15 item 3: the three task items stayed "pending" in the list the agent wrote
    before doing them; each one's call succeeded, so each is Done (with the call), none is
    In progress or a Next step. An item no call did stays open."""
    todo = call(
        "t1",
        "TodoWrite",
        todos=[
            {"content": "Commit the fix", "status": "in_progress"},
            {"content": "Push the branch", "status": "pending"},
            {"content": "Update the PR description", "status": "pending"},
            {"content": "Tell the data team", "status": "pending"},
        ],
    )
    rows = _seq([U("ship it"), A(todo), T("t1"), *_SHIP])
    s = _run(WorkingView(None, [], rows), ExtractiveSummarizer()).summary
    assert _section(s, "### Done")[1:4] == [
        "- [done] Commit the fix by `git commit -am 'Fix the export date filter'` (#4)",
        "- [done] Push the branch by `git push origin i15` (#6)",
        "- [done] Update the PR description by `gh pr edit 42 --body-file pr.md` (#8)",
    ]
    assert _section(s, "### In progress") == ["- none recorded"]
    assert _section(s, "## Next steps") == ["- [todo] Tell the data team"]


def test_extractive_carried_task_items_done_by_later_calls():
    """Issue 15 item 3 with B27: open items carried from the previous summary that these
    rows' successful calls did move to Done; a failed push leaves its item open."""
    todo = call(
        "t1",
        "update_plan",
        plan=[
            {"step": "Commit the fix", "status": "pending"},
            {"step": "Push the branch", "status": "pending"},
        ],
    )
    first = _run(
        WorkingView(None, [], _seq([U("ship it"), A(todo), T("t1"), A(text="Planned.")])),
        ExtractiveSummarizer(),
    )
    assert "- [todo] Commit the fix" in first.summary
    more = _seq(
        [
            U("go on"),
            *_SHIP[:2],
            A(call("c2", "bash", command="git push origin i15")),
            T("c2", text="rejected: fetch first", error=True),
            A(text="The push was rejected."),
        ]
    )
    for e in more:
        e.seq += 10
    s = _run(WorkingView(first.summary, [], more), ExtractiveSummarizer()).summary
    assert (
        "- [done] Commit the fix by `git commit -am 'Fix the export date filter'` (#12)"
        in _section(s, "### Done")
    )
    assert "- [todo] Push the branch" in _section(s, "## Next steps")
    assert "- [todo] Commit the fix" not in s


# ---------------------------------------------------------------------------- issue 39 item 3


def _log(name: str, lines: int = 530) -> str:
    """A ~48 KB service log: ``lines`` timestamped lines of ``name``, a warning among them."""
    out = [
        f"2026-12-01T09:{i // 60 % 60:02d}:{i % 60:02d}Z {name} INFO request id={i:05d} "
        f"path=/api/v1/items status=200 ms={i % 97}"
        for i in range(lines)
    ]
    out[lines // 2] = f"2026-12-01T09:06:40Z {name} WARN pool exhausted, retrying in 250 ms"
    return "\n".join(out)


def _tool(call_id: str, text: str, *, error: bool = False) -> Entry:
    return Entry(EntryKind.MESSAGE, Role.TOOL, (ToolResultBlock(call_id, error, text),))


def _six_logs() -> list[Entry]:
    """The issue's case: a pi session of six bash calls each returning a ~48 KB log (the last
    one a failing test run, pi's "Command exited with code 1"), then pi's ``edit`` and
    ``write``, then the answer."""
    commands = [
        "journalctl -u api --since today",
        "kubectl logs deploy/api --tail=530",
        "cat /var/log/nginx/access.log",
        "tail -n 530 worker.log",
        "docker logs queue 2>&1",
        "pytest -q tests/test_retry.py",
    ]
    rows: list[Entry] = [U("Find out why the API times out under load and fix it.")]
    for i, cmd in enumerate(commands):
        rows.append(A(call(f"b{i}", "bash", command=cmd)))
        text = _log(cmd.split()[0])
        if cmd.startswith("pytest"):
            text += (
                "\nFAILED tests/test_retry.py::test_backoff_caps_at_5s - assert 8.0 <= 5.0"
                "\n1 failed, 11 passed in 0.42s\n\n\nCommand exited with code 1"
            )
        rows.append(_tool(f"b{i}", text, error=cmd.startswith("pytest")))
    rows += [
        A(call("e1", "edit", path="src/api/retry.py", oldText="cap = 8", newText="cap = 5")),
        _tool("e1", "Successfully replaced text in src/api/retry.py."),
        A(call("w1", "write", path="src/api/backoff.py", content="def backoff(n): ...")),
        _tool("w1", "Successfully wrote 19 bytes to src/api/backoff.py"),
        A(
            text="The root cause is the retry cap of 8 s; I capped it at 5 s. The retry test "
            "still needs a rerun."
        ),
    ]
    return _seq(rows)


def test_six_large_logs_summarize_with_their_substance():
    """Issue 39: six ~48 KB log outputs became "6 tool calls (bash 6); 0 failed" and "Files
    read and modified: none recorded". Now the summary names each command with its exit
    status and sampled lines of its output (never the whole), the failing test, the error
    lines, and the files pi's ``edit`` and ``write`` changed; within the default bound."""
    rows = _six_logs()
    outputs = [len(r.blocks[0].text.encode()) for r in rows if r.role is Role.TOOL][:6]
    assert all(43_000 < n < 50_000 for n in outputs), outputs
    result = _run(WorkingView(None, [], rows), ExtractiveSummarizer())
    s = result.summary
    assert result.reason is None and len(s.encode()) <= 24_000
    commands = _section(s, "## Commands and results")
    assert [c.split("`")[1] for c in commands] == [
        "pytest -q tests/test_retry.py",
        "docker logs queue 2>&1",
        "tail -n 530 worker.log",
        "cat /var/log/nginx/access.log",
        "kubectl logs deploy/api --tail=530",
        "journalctl -u api --since today",
    ]
    assert commands[0].startswith(
        "- `pytest -q tests/test_retry.py` (#11) failed (exit 1) "
        "[tests]: 2026-12-01T09:00:00Z pytest INFO request id=00000 "
    )
    assert commands[0].endswith(
        "⏎ FAILED tests/test_retry.py::test_backoff_caps_at_5s - "
        "assert 8.0 <= 5.0 ⏎ 1 failed, 11 passed in 0.42s"
    )
    assert commands[5].startswith(
        "- `journalctl -u api --since today` (#1) ok: "
        "2026-12-01T09:00:00Z journalctl INFO request id=00000 "
    )
    omitted = int(re.search(r"\[… (\d+) bytes omitted …\]", commands[5]).group(1))
    assert 42_000 < omitted < outputs[0]
    assert commands[5].endswith(
        "journalctl INFO request id=00529 path=/api/v1/items status=200 ms=44"
    )
    assert "id=00265" not in s  # a sample, never the whole output
    errors = _section(s, "## Errors and failing tests")
    assert errors[0] == "- failing test: tests/test_retry.py::test_backoff_caps_at_5s"
    assert errors[1] == (
        "- unresolved: bash `pytest -q tests/test_retry.py` (#12): FAILED "
        "tests/test_retry.py::test_backoff_caps_at_5s - assert 8.0 <= 5.0 … "
        "1 failed, 11 passed in 0.42s"
    )
    assert _section(s, "## Files read and modified") == [
        "- created: `src/api/backoff.py`",
        "- modified: `src/api/retry.py`",
    ]
    assert "- 8 tool calls (bash 6, edit 1, write 1); 1 failed" in _section(s, "### Done")
    assert "- The root cause is the retry cap of 8 s; I capped it at 5 s." in _section(
        s, "## Key decisions"
    )
    assert "none recorded" not in "\n".join(_section(s, "## Files read and modified"))


_CMDS = st.sampled_from(
    ["pytest -q", "npm test", "ls -la", "git push origin main", "cat app.log", "grep -n x y"]
)
_OUT = st.text(max_size=300) | st.builds(
    lambda n: "\n".join(f"log line {i} " * 3 for i in range(n)), st.integers(0, 400)
)


@st.composite
def _session(draw):
    rows: list[Entry] = []
    for i in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(["user", "answer", "bash", "edit"]))
        if kind == "user":
            rows.append(U(draw(st.text(min_size=1, max_size=400))))
        elif kind == "answer":
            rows.append(A(text=draw(st.text(min_size=1, max_size=400))))
        elif kind == "bash":
            rows += [
                A(call(f"c{i}", "bash", command=draw(_CMDS))),
                _tool(f"c{i}", draw(_OUT), error=draw(st.booleans())),
            ]
        else:
            rows += [
                A(call(f"c{i}", "edit", path=f"src/f{i % 4}.py", oldText="a", newText="b")),
                _tool(f"c{i}", "Successfully replaced text."),
            ]
    return _seq(rows)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=_session(), bound=st.integers(600, 8_000), again=st.booleans())
def test_property_extractive_summary_within_its_bound(rows, bound, again):
    """Issue 39: with commands, samples and errors the summary still fits
    ``max_summary_bytes``, and again when it merges its own previous summary."""
    first = _run(WorkingView(None, [], rows), ExtractiveSummarizer(bound))
    assert first.reason is None and len(first.summary.encode()) <= bound
    assert all(line.startswith(("#", "- ")) for line in first.summary.splitlines())
    if again:
        second = _run(WorkingView(first.summary, [], rows), ExtractiveSummarizer(bound))
        assert second.reason is None and len(second.summary.encode()) <= bound


def test_every_item_of_the_extractive_summary_is_one_line():
    """A long request, answer or command cut in the middle keeps its marker on its line: each
    line of the summary is a heading or a ``- `` item (a line of its own broke the merge)."""
    long = "word " * 400
    rows = _seq(
        [
            U(long),
            A(call("c1", "bash", command="echo " + "x" * 900)),
            _tool("c1", "ok"),
            A(text=long),
            U("next " + long),
            A(text="Done."),
        ]
    )
    s = _run(WorkingView(None, [], rows), ExtractiveSummarizer()).summary
    assert "bytes omitted …]" in s
    assert all(line.startswith(("#", "- ")) for line in s.splitlines()), s


def test_extractive_request_finished_in_later_rows_is_done_not_in_progress():
    """Issue 45 item 4c: the previous summary (an earlier chunk or checkpoint) ended while
    request #2 was still running; these rows hold the rest of its work, every call succeeded
    and the answer says it is done. The summary listed #2 as In progress and as the next
    step (carried from the previous one); it is Done, with its answer."""
    first = _run(
        WorkingView(
            None,
            [],
            _seq(
                [
                    U("fix the date filter"),
                    A(text="Fixed in export.py."),
                    U("commit, push and update the PR"),
                    A(call("c0", "bash", command="git status")),
                    T("c0", text="clean"),
                ]
            ),
        ),
        ExtractiveSummarizer(),
    ).summary
    assert "- Latest request (#2): commit, push and update the PR" in _section(
        first, "### In progress"
    )
    more = list(_SHIP)
    for i, e in enumerate(more):
        e.seq = 5 + i
    s = _run(WorkingView(first, [], more), ExtractiveSummarizer()).summary
    assert _section(s, "### In progress") == ["- none recorded"]
    assert _section(s, "## Next steps") == ["- none recorded"]
    assert (
        "- #2 commit, push and update the PR → Done: committed 3f2c1ab, pushed i15 and "
        "updated PR #42."
    ) in _section(s, "### Done")


def test_extractive_request_still_running_in_later_rows_stays_in_progress():
    """Issue 45 item 4c, the other side: when these rows end on a question or leave a call
    unanswered, the carried request stays In progress and the next step."""
    first = _run(
        WorkingView(
            None,
            [],
            _seq(
                [
                    U("commit, push and update the PR"),
                    A(call("c0", "bash", command="git status")),
                    T("c0", text="clean"),
                ]
            ),
        ),
        ExtractiveSummarizer(),
    ).summary
    for tail in (
        [A(text="Shall I push to main?")],
        [A(text="Pushing."), A(call("c9", "bash", command="git push"))],
        [
            A(call("c9", "bash", command="git push")),
            T("c9", text="rejected", error=True),
            A(text="Done."),
        ],
    ):
        for i, e in enumerate(tail):
            e.seq = 3 + i
        s = _run(WorkingView(first, [], tail), ExtractiveSummarizer()).summary
        assert "- Latest request (#0): commit, push and update the PR" in _section(
            s, "### In progress"
        )


# ----------------------------------------------------------------------- issue 45 item 7


class _Answers:
    """A provider that fails with ``error`` or answers ``text``."""

    name = "answers"
    max_input_bytes = 50_000
    max_summary_bytes = 2_000
    min_seconds = 0.0

    def __init__(self, *, text: str = "", stop: str = "end", error: Exception | None = None):
        self.text, self.stop, self.error = text, stop, error

    def generate(
        self, request: SummaryRequest, *, cancel: threading.Event, deadline: float
    ) -> ProviderReply:
        if self.error is not None:
            raise self.error
        return ProviderReply(self.text, self.stop)


SECRET = "ghp_" + "Z" * 36
#: A reply with one of the required sections, quoting a secret and words of its own.
ONE_SECTION = f"## Goal\n- deploy with token {SECRET} to prod-eu-7\nthe rest was lost"


@pytest.mark.parametrize(
    ("provider", "reason", "detail"),
    [
        (_Answers(error=ProviderError("HTTP 500")), "provider_failure", "HTTP 500"),
        (
            _Answers(text=ONE_SECTION),
            "provider_failure",
            "the reply has 1 of the 9 required sections (3 needed)",
        ),
        (_Answers(text="  "), "empty", "the reply is empty"),
        (_Answers(text=GOOD, stop="length"), "truncated", "the reply stopped at the output limit"),
        (
            _Answers(text="Error: rate limit exceeded, retry later"),
            "provider_failure",
            "the reply is an error or limit message",
        ),
        (
            _Answers(error=RuntimeError(f"boom {SECRET}")),
            "provider_failure",
            "the provider failed: RuntimeError",
        ),
    ],
    ids=["http-500", "sections", "empty", "truncated", "error-text", "provider-bug"],
)
def test_a_refusal_names_what_failed_never_the_reply(provider, reason: str, detail: str):
    """Issue 45 item 7: an HTTP 500 and a reply without the required sections are both
    ``provider_failure``, told apart by the detail (the status, the failed check); the detail
    holds none of the reply's words, so never a secret it quoted."""
    result = _run(WorkingView(rows=_seq([U("deploy it"), A(text="done")])), provider)
    assert (result.summary, result.reason, result.detail) == (None, ReceiptReason(reason), detail)
    for word in ("ghp_", "prod-eu-7", "deploy", "lost", "rate limit", "boom"):
        assert word not in result.detail
