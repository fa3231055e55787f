"""The project brief (issue 39, item 1): what a new session of a project is told of the
earlier sessions of that project, within ``recoveryBudgetChars``."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from continuity.brief import FRAMING, HEADING, Reach, build_brief, how_long_ago
from continuity.brief.model import SessionBrief
from continuity.brief.render import _INVISIBLE, CUT_MARKER, clip, render_brief
from continuity.checkpoints.capture import CheckpointConfig
from continuity.continuation.facts import CommandRun, ErrorNote, FileTouch
from continuity.core.model import Entry, EntryKind, Role
from tests.brief.helpers import (
    NOW,
    PROJECT,
    bash,
    checkpoint,
    edit,
    memory,
    result,
    say,
    session,
    user,
)

NO_REACH = Reach({}, None)


def _export_session(store, key: str = "sess-a", ago: timedelta = timedelta(hours=20)) -> str:
    return session(
        store,
        key,
        [
            user("make the nightly export use UTC"),
            bash("c1", "pytest -q"),
            result("c1", "F tests/test_export.py::test_march\n1 failed in 0.2s", error=True),
            edit("c2", "/srv/app/export.py"),
            result("c2", "ok"),
            bash("c3", "pytest -q"),
            result("c3", "3 passed in 0.1s"),
            say("The export now stamps UTC. All tests pass."),
        ],
        ago=ago,
    )


def test_brief_tells_the_previous_sessions_newest_first(store):
    """Two earlier sessions: each with its key, harness, age, request and outcome; the
    newest (20 hours ago) first, the 5-day-old one after it; framed as evidence."""
    _export_session(store)
    session(
        store,
        "sess-b",
        [user("add a --since flag"), say("Added the flag.")],
        ago=timedelta(days=5),
        harness="codex",
    )
    brief = build_brief(store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW)
    lines = brief.text.split("\n")
    assert lines[:3] == [
        HEADING,
        FRAMING,
        "Project: /srv/app · 2 earlier sessions (within 14 days), newest first.",
    ]
    assert [s.key for s in brief.sessions] == ["sess-a", "sess-b"]
    a, b = (lines.index(ln) for ln in lines if ln.startswith("### Session "))
    assert lines[a] == "### Session sess-a · claude-code · 20 hours ago (2026-12-05 13:00 UTC)"
    assert lines[b] == "### Session sess-b · codex · 5 days ago (2026-12-01 09:00 UTC)"
    assert "Last request (row 0): make the nightly export use UTC" in lines[a:b]
    assert "Outcome (row 7): The export now stamps UTC. All tests pass." in lines[a:b]
    assert "Files changed (1):" in lines[a:b] and "- export.py (modified)" in lines[a:b]
    assert any(ln.startswith("Tests: passed: `pytest -q`") for ln in lines[a:b])
    assert "Outcome (row 1): Added the flag." in lines[b:]
    assert not brief.truncated and len(brief.text) <= 2000


def test_brief_shows_remembered_decisions_of_the_session(store):
    """Memories whose source is the session and its checkpoints' remembers are its
    decisions (issue 39: the brief shows the session's memory activity)."""
    _export_session(store)
    memory(store, "exports are stamped in UTC", "sess-a")
    memory(store, "a memory of another session", "sess-other")
    checkpoint(
        store,
        "sess-a",
        ago=timedelta(hours=20),
        remembers=("keep CSV output",),
        digest="## Session End Checkpoint",
    )
    brief = build_brief(store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW)
    text = brief.text
    assert (
        "Decisions (2):\n- [decision] exports are stamped in UTC\n"
        "- [remembered] keep CSV output" in text
    )
    assert "another session" not in text


def test_brief_window_days_hours_and_any(store):
    """A session 20 days old is outside the default 14 days, inside ``"any"``; one 5 days
    old is outside an explicit ``recoveryWindowHours = 4``."""
    _export_session(store, "old", ago=timedelta(days=20))
    session(store, "mid", [user("tidy the README")], ago=timedelta(days=5))

    def keys(cfg: CheckpointConfig) -> list[str]:
        found = build_brief(store, project=PROJECT, config=cfg, reach=NO_REACH, now=NOW)
        return [s.key for s in found.sessions]

    assert keys(CheckpointConfig()) == ["mid"]
    assert keys(CheckpointConfig(recoveryWindowDays="any")) == ["mid", "old"]
    assert keys(CheckpointConfig(recoveryWindowHours=4)) == []
    text = build_brief(
        store,
        project=PROJECT,
        config=CheckpointConfig(recoveryWindowHours=4),
        reach=NO_REACH,
        now=NOW,
    ).text
    assert text == f"{HEADING}\n{FRAMING}\nProject: /srv/app · no earlier session within 4 hours."


def test_brief_excludes_the_new_session_and_other_projects(store):
    """Never the new session itself, nor a session of another project or of a folder
    inside it."""
    _export_session(store, "self")
    session(store, "elsewhere", [user("other work")], ago=timedelta(hours=1), project="/srv/other")
    session(store, "inside", [user("sub work")], ago=timedelta(hours=1), project="/srv/app/sub")
    session(store, "prev", [user("earlier work")], ago=timedelta(hours=2))
    brief = build_brief(
        store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, exclude=["self"], now=NOW
    )
    assert [s.key for s in brief.sessions] == ["prev"]


def test_brief_of_a_session_known_only_from_its_checkpoint(store):
    """A live session whose file was never imported: its request comes from its newest
    checkpoint's recent prompts, its age from the checkpoint."""
    checkpoint(
        store,
        "live-1",
        ago=timedelta(hours=3),
        digest="## Session Checkpoint\nProject: /srv/app\nPrompts: 2 | Duration: 5m\n\n"
        "### Recent Prompts\n- fix the login page\n- and the logout link",
    )
    brief = build_brief(store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW)
    assert "### Session live-1 · claude-code · 3 hours ago" in brief.text
    assert "Last request (from its checkpoint): and the logout link" in brief.text
    assert "Earlier requests (1):\n- fix the login page" in brief.text
    long = "word " * 40  # 200 characters: the seed's snippet, cut without a marker
    checkpoint(
        store,
        "live-2",
        ago=timedelta(hours=2),
        digest=f"## Session Checkpoint\n\n### Recent Prompts\n- {long[:200]}",
    )
    text = build_brief(
        store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW
    ).text
    assert "Last request (from its checkpoint): " + " ".join(long.split()) + "…" in text


def test_brief_names_only_the_reach_it_is_given(store):
    """MCP tools by the names the harness sees, only those given; the CLI line only with
    ``reach.cli``; nothing of either with an empty reach."""
    _export_session(store)
    bare = build_brief(
        store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW
    ).text
    assert "MCP" not in bare and "show sess-a" not in bare and "recall" not in bare
    reach = Reach({"search": "mcp__continuity__search"}, "/opt/bin/continuity --home /w")
    text = build_brief(store, project=PROJECT, config=CheckpointConfig(), reach=reach, now=NOW).text
    assert "More of this session: `/opt/bin/continuity --home /w show sess-a --seq 0`" in text
    assert (
        "Continuity's MCP tools here: `mcp__continuity__search` (search every row of every "
        "session)." in text
    )
    assert "show`" not in text.replace("home /w show", "")  # no MCP show: not installed


def test_brief_unresolved_error_and_compaction_summary(store):
    """An error no later run fixed is listed; the newest compaction's summary says what came
    before the rows read."""
    from continuity.core.model import CompactionInfo, Entry, EntryKind, Role

    rows = [
        user("first task"),
        *(say(f"step {i}") for i in range(400)),
        Entry(
            EntryKind.COMPACTION,
            Role.SYSTEM,
            (),
            compaction=CompactionInfo("We moved the build to uv.", 400, None),
        ),
        user("run the migration"),
        bash("c1", "alembic upgrade head"),
        result(
            "c1",
            "Traceback (most recent call last):\nsqlalchemy.exc.OperationalError: "
            "no such table: users",
            error=True,
        ),
        say("The migration failed: the users table is missing."),
    ]
    session(store, "s1", rows, ago=timedelta(minutes=30))
    text = build_brief(
        store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW
    ).text
    assert "### Session s1 · claude-code · 30 minutes ago" in text
    assert "Unresolved errors (1):\n- row 404, " in text and "no such table: users" in text
    assert "Before that (summary of rows up to 400): We moved the build to uv." in text
    short = [
        user("first task"),
        Entry(
            EntryKind.COMPACTION,
            Role.SYSTEM,
            (),
            compaction=CompactionInfo("Nothing new.", 0, None),
        ),
        user("second task"),
    ]
    session(store, "s2", short, ago=timedelta(minutes=10))
    text = build_brief(
        store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW
    ).text
    assert "Nothing new." not in text  # read whole: its summary adds nothing


def test_brief_reads_a_long_session_in_bounded_reads(store, monkeypatch):
    """A session of 3,000 rows whose last request is 1,000 rows back: the brief reads at
    most 400 rows of content (and metadata to find the request), never the whole session."""
    from continuity.brief import build as build_mod

    rows = (
        [user("start")]
        + [say(f"step {i}") for i in range(1000)]
        + [user("the last request, far back")]
        + [say(f"more {i}") for i in range(1999)]
    )
    session(store, "long", rows, ago=timedelta(hours=1))
    seen: list[int] = []
    real = store.entries

    def spy(key, **kw):  # type: ignore[no-untyped-def]
        out = real(key, **kw)
        seen.append(len(out))
        return out

    monkeypatch.setattr(store, "entries", spy)
    brief = build_brief(store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW)
    assert "Last request (row 1001): the last request, far back" in brief.text
    assert seen and max(seen) <= 2 * build_mod.ROWS_READ
    assert brief.sessions[0].rows_read <= build_mod.ROWS_READ + 1


def test_brief_to_dict_and_disabled(store):
    """``to_dict`` carries the text and each session's facts; disabled: no session."""
    _export_session(store)
    data = build_brief(
        store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW
    ).to_dict()
    assert data["window_hours"] == 14 * 24 and data["sessions"][0]["key"] == "sess-a"
    assert data["sessions"][0]["requests"] == [
        {"seq": 0, "text": "make the nightly export use UTC"}
    ]
    off = build_brief(
        store, project=PROJECT, config=CheckpointConfig(enabled=False), reach=NO_REACH, now=NOW
    )
    assert off.sessions == ()


@pytest.mark.parametrize(
    "minutes,text",
    [
        (0, "just now"),
        (1, "1 minute ago"),
        (59, "59 minutes ago"),
        (60, "1 hour ago"),
        (20 * 60, "20 hours ago"),
        (47 * 60 + 59, "47 hours ago"),
        (48 * 60, "2 days ago"),
        (5 * 24 * 60, "5 days ago"),
    ],
)
def test_how_long_ago(minutes, text):
    assert how_long_ago(NOW - timedelta(minutes=minutes), NOW) == text


def test_clip_never_cuts_mid_word_without_a_marker():
    assert clip("alpha beta gamma delta", 100) == "alpha beta gamma delta"
    assert clip("alpha beta gamma delta", 15) == "alpha beta…"
    assert clip("x" * 50, 10) == "x" * 9 + "…"


# ---------------------------------------------------------------------------- properties

_word = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=40).map(
    lambda s: s.strip() or "w"
)
_items = st.lists(_word, max_size=8)


@st.composite
def _session(draw, i: int) -> SessionBrief:
    n_req = draw(st.integers(0, 4))
    return SessionBrief(
        key=f"{draw(st.sampled_from(['a', 'b', 'c']))}{i}-" + "k" * draw(st.integers(0, 60)),
        harness=draw(st.sampled_from(["claude-code", "codex", "pi"])),
        last_active=NOW - timedelta(hours=draw(st.integers(0, 300))),
        requests=tuple(
            (j * 3, draw(st.text(min_size=1, max_size=900).map(lambda s: s if s.strip() else "r")))
            for j in range(n_req)
        ),
        outcome=(9, draw(_word)) if draw(st.booleans()) else None,
        commands=tuple(
            CommandRun(c, j, draw(st.sampled_from([True, False, None])))
            for j, c in enumerate(draw(_items))
        ),
        files_changed=tuple(
            FileTouch(f"src/{f}.py", "modified", j) for j, f in enumerate(draw(_items))
        ),
        errors=tuple(ErrorNote(j, "bash", e, e) for j, e in enumerate(draw(_items))),
        decisions=tuple(draw(_items)),
        open_items=tuple(draw(_items)),
        earlier=(3, draw(_word)) if draw(st.booleans()) else None,
        last_seq=20,
    )


@st.composite
def _sessions(draw):
    n = draw(st.integers(0, 4))
    return [draw(_session(i)) for i in range(n)]


_COUNTED = re.compile(r"^(?P<title>[A-Z][A-Za-z ]+) \((?P<k>\d+)(?: of (?P<n>\d+))?\):$")


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _sessions(),
    st.integers(200, 10_000),
    st.sampled_from(
        [NO_REACH, Reach({"search": "s_tool", "show": "show_tool"}, "/opt/continuity --home /w")]
    ),
)
def test_brief_properties(sessions, budget, reach):
    """Never over budget; every count equals the length of the list under it; the previous
    session's key and last request are always there for budgets of 400 and more; a cut
    always ends with the marker."""
    text, truncated, _ = render_brief(
        sessions,
        project=PROJECT,
        budget_chars=budget,
        reach=reach,
        now=NOW,
        window=timedelta(days=14),
    )
    assert len(text) <= budget
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = _COUNTED.match(line)
        if m:
            listed = 0
            for nxt in lines[i + 1 :]:
                if not nxt.startswith("- "):
                    break
                listed += 1
            assert listed == int(m.group("k")), line
            if m.group("n"):
                assert int(m.group("k")) < int(m.group("n"))
    shown = [ln for ln in lines if ln.startswith("### Session ")]
    project_line = next((ln for ln in lines if ln.startswith("Project: ")), None)
    if sessions and project_line and budget >= 400:
        m = re.search(r"· (\d+)(?: of (\d+))? earlier session", project_line)
        assert m and int(m.group(1)) == len(shown)
    if truncated and budget >= 400:
        assert re.fullmatch(re.escape(CUT_MARKER.split("{")[0]) + r".*", lines[-1])
    if sessions and budget >= 400:
        first = sessions[0]
        assert f"### Session {first.key} · " in text
        if first.requests:
            req = next(ln for ln in lines if ln.startswith("Last request ("))
            body = req.split("): ", 1)[1]
            # escaped, then collapsed, as clip does (a \x1f is shown, not taken for a space)
            want = " ".join(first.requests[-1][1].translate(_INVISIBLE).split())
            assert body == want or (body.endswith("…") and want.startswith(body[:-1].rstrip()))


def test_brief_says_the_last_request_was_interrupted(store):
    """A session whose last run the importer saw interrupted (Claude Code's "[Request
    interrupted by user]") says so in its outcome, with the last answer that said something;
    a blank answer row is no outcome (issue 39: "Outcome (row 26): " with nothing after)."""
    from continuity.core.model import Run, RunStatus

    key = session(
        store,
        "sess-i",
        [
            user("make scrolling work"),
            say("Looking at the viewport handler now."),
            bash("c1", "grep -n wheel app.js"),
            result("c1", "12: on('wheel')"),
            say("\n\n"),
        ],
        ago=timedelta(hours=3),
    )
    store.put_runs([Run(f"{key}:0", key, "default", 0, RunStatus.INTERRUPTED, 4)])
    brief = build_brief(store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW)
    assert (
        "Outcome: the last request was interrupted before it finished; last answer "
        "(row 1): Looking at the viewport handler now."
    ) in brief.text.split("\n")
    assert brief.sessions[0].to_dict()["ended"] == "interrupted"


def test_brief_outcome_is_never_a_media_stub(store):
    """An answer that is only an image is no outcome: the answer before it is."""
    from continuity.core.model import MediaBlock

    session(
        store,
        "sess-m",
        [
            user("draw the chart"),
            say("The chart is drawn from the March totals."),
            Entry(EntryKind.MESSAGE, Role.ASSISTANT, (MediaBlock("image/png", 26, "ab" * 32),)),
        ],
        ago=timedelta(hours=1),
    )
    brief = build_brief(store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW)
    assert "Outcome (row 1): The chart is drawn from the March totals." in brief.text
    assert "omitted]" not in brief.text


def test_brief_says_how_to_load_deferred_tools(store):
    """Where the harness defers MCP tools (Claude Code's ``ToolSearch``, Codex's
    ``tool_search``) the tools line says which tool loads them; pi's own tools need none."""
    _export_session(store)
    names = {"search": "mcp__continuity__search", "show": "mcp__continuity__show"}
    deferred = build_brief(
        store,
        project=PROJECT,
        config=CheckpointConfig(),
        reach=Reach(names, None, "ToolSearch"),
        now=NOW,
    )
    assert (
        "Continuity's MCP tools here (load them with `ToolSearch`): "
        "`mcp__continuity__search` (search every row of every session), "
        "`mcp__continuity__show` (rows around a row number)."
    ) in deferred.text.split("\n")
    direct = build_brief(
        store,
        project=PROJECT,
        config=CheckpointConfig(),
        reach=Reach({"search": "continuity_search"}, None),
        now=NOW,
    )
    assert (
        "Continuity's tools here: `continuity_search` (search every row of every session)."
    ) in direct.text.split("\n")


def test_brief_names_memory_md_when_the_workspace_has_one(store):
    """Issue 39: nothing told a harness MEMORY.md was there; the brief names its path (a
    file to read, not a tool) when the reach has one, in the block that says how to get
    more, and never otherwise."""
    _export_session(store)
    reach = Reach({"search": "continuity_search"}, None, None, "/w/MEMORY.md")
    text = build_brief(store, project=PROJECT, config=CheckpointConfig(), reach=reach, now=NOW).text
    assert text.split("\n")[-2:] == [
        "Continuity's tools here: `continuity_search` (search every row of every session).",
        "Durable notes of every project (MEMORY.md, a file to read): /w/MEMORY.md",
    ]
    plain = build_brief(
        store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW
    ).text
    assert "MEMORY.md" not in plain


def test_brief_shows_control_and_invisible_characters_as_escapes(store):
    """A prompt holding ESC sequences, NUL, a bidi override and a zero-width space reaches
    the brief as visible escapes (fresh-user review: a terminal or a model was shown them
    raw)."""
    session(
        store,
        "sess-x",
        [user("fix \x1b[31mred\x1b]0;pwned\x07 a\x00b \u202eevil\u200bx"), say("Done.")],
        ago=timedelta(hours=1),
    )
    text = build_brief(
        store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW
    ).text
    assert (
        "Last request (row 0): fix \\x1b[31mred\\x1b]0;pwned\\x07 a\\x00b \\u202eevil\\u200bx"
    ) in text.split("\n")
    assert not any(c in text for c in "\x1b\x00\x07\u202e\u200b")


def test_brief_never_says_a_stated_decision_twice(store):
    """A decision the agent stated in its last answer is told once, in the outcome, not again
    under Decisions (the sample session's brief said it twice)."""
    session(
        store,
        "sess-d",
        [
            user("stamp the export in UTC"),
            say("Fixed the stamp. I decided to keep the Z suffix so consumers still parse it."),
        ],
        ago=timedelta(hours=1),
    )
    text = build_brief(
        store, project=PROJECT, config=CheckpointConfig(), reach=NO_REACH, now=NOW
    ).text
    assert text.count("I decided to keep the Z suffix") == 1
    assert "Outcome (row 1): Fixed the stamp. I decided to keep the Z suffix" in text
    assert "Decisions (" not in text
