"""Recall at the point of action (issue 40, item 3): real stores, the real embedder."""

from __future__ import annotations

from datetime import timedelta

import pytest

from continuity.checkpoints.recovery import FRAMING
from continuity.retrieval.at_action import (
    RECALL_HEADING,
    clears,
    command_key,
    content_words,
    edited_files,
    is_trivial,
    recall_for_prompt,
    recall_for_tool,
    shell_command,
)
from continuity.retrieval.settings import RetrievalSettings
from tests.brief.helpers import NOW, PROJECT, bash, edit, memory, result, say, session, user

SETTINGS = RetrievalSettings()
DECISION = (
    "Decision: exported reports are written as CSV files, never Parquet, because "
    "finance opens them in Excel"
)


@pytest.fixture
def project(store):
    """Two earlier sessions of PROJECT (one with the decision), one of another project."""
    session(
        store,
        "old-a",
        [
            user("set up the nightly export of the invoices"),
            bash("c1", "PYTHONPATH=src pytest tests -q -p no:cacheprovider"),
            result("c1", "12 passed in 0.4s\nProcess exited with code 0"),
            edit("c2", f"{PROJECT}/src/export/writer.py"),
            result("c2", "ok"),
            say("Done: writer.py now streams rows to the CSV file."),
        ],
        ago=timedelta(days=2),
    )
    memory(store, DECISION, "old-a")
    memory(store, "Decision: src/export/writer.py keeps one open file handle per export", "old-a")
    session(
        store,
        "old-b",
        [
            user("the pager on the dashboard is slow"),
            bash("c3", "pytest tests/ui"),
            result("c3", "1 failed\nProcess exited with code 1"),
        ],
        ago=timedelta(days=1),
    )
    session(
        store,
        "elsewhere",
        [user("export the invoices as CSV for finance")],
        ago=timedelta(hours=3),
        project="/srv/other",
    )
    memory(store, "Decision: the other project exports invoices as JSON", "elsewhere")
    session(store, "now", [user("what format should the export use?")], ago=timedelta(0))
    memory(store, "Decision: this very session's own note about export formats", "now")
    return store


def _prompt(store, text: str, **kw):
    return recall_for_prompt(
        store,
        text,
        session_key="now",
        project=PROJECT,
        settings=kw.pop("settings", SETTINGS),
        now=NOW,
        **kw,
    )


def test_recall_for_prompt_a_paraphrase_receives_the_decision(project):
    """A prompt in other words than the decision gets it, framed as evidence, within budget."""
    found = _prompt(project, "which file format should the invoice export job save into?")
    assert found.text.startswith(RECALL_HEADING + FRAMING + "\n")
    assert "exported reports are written as CSV files" in found.text
    assert ("old-a", -1) in found.rows
    assert found.chars == len(found.text) <= SETTINGS.at_action_chars


def test_recall_for_prompt_only_other_sessions_of_the_same_project(project):
    """Neither the asking session's memory nor another project's memory nor its rows."""
    found = _prompt(project, "which file format should the invoice export job save into?")
    assert "JSON" not in found.text and "this very session" not in found.text
    assert all(key in ("old-a", "old-b") for key, _seq in found.rows)


@pytest.mark.parametrize(
    "prompt",
    [
        "write a haiku about autumn leaves",
        "what is the capital of France?",
        "add a dark mode toggle to the settings page",
    ],
)
def test_recall_for_prompt_an_unrelated_prompt_receives_nothing(project, prompt):
    """Nothing clears the rule: no text at all, not even the heading."""
    found = _prompt(project, prompt)
    assert (found.text, found.rows, found.chars) == ("", [], 0)


@pytest.mark.parametrize("prompt", ["yes", "continue", "thanks!", "ok, go on", ""])
def test_recall_for_prompt_a_trivial_prompt_receives_nothing(project, prompt):
    assert is_trivial(prompt)
    assert _prompt(project, prompt).text == ""


def test_recall_for_prompt_is_bounded_by_at_action_chars(project):
    """Items that do not fit are left out; a budget no item fits in gives nothing."""
    tight = RetrievalSettings(at_action_chars=len(RECALL_HEADING + FRAMING) + 60)
    assert (
        _prompt(
            project, "which file format should the invoice export job save into?", settings=tight
        ).text
        == ""
    )
    for n in range(30):
        memory(
            project,
            f"Decision {n}: the invoice export writes CSV files in batch {n} of the nightly run",
            "old-a",
        )
    found = _prompt(project, "which file format should the invoice export job save into?")
    assert 0 < found.chars <= SETTINGS.at_action_chars


def test_recall_for_prompt_off_by_setting(project):
    off = RetrievalSettings(at_action=False)
    assert (
        _prompt(
            project, "which file format should the invoice export job save into?", settings=off
        ).text
        == ""
    )


def test_recall_for_prompt_redacts(project):
    memory(
        project,
        "Decision: the export uploads with token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "old-a",
    )
    found = _prompt(project, "how does the invoice export upload its files?")
    assert "a1B2c3D4e5F6g7H8i9J0" not in found.text


def test_recall_for_prompt_rows_of_other_sessions(project):
    """A row of another session that shares the prompt's topic is quoted with its key and
    seq."""
    found = _prompt(project, "why is the dashboard pager slow?")
    assert ("old-b", 0) in found.rows
    assert "session old-b row 0" in found.text


def test_recall_for_prompt_words_only_without_embedder(project):
    """``semantic = "off"``: the stricter word rule; a paraphrase sharing one word is not
    enough, a prompt sharing most of its words is."""
    off = RetrievalSettings(semantic="off")
    assert _prompt(project, "which format do we save into?", settings=off).text == ""
    found = _prompt(project, "the dashboard pager slow again", settings=off)
    assert ("old-b", 0) in found.rows


def test_clears_the_rule_and_its_constants():
    assert clears(0.51, 0, 5) and not clears(0.49, 1, 5)
    assert clears(0.31, 2, 5) and not clears(0.31, 1, 5) and not clears(0.29, 4, 5)
    assert clears(None, 2, 4) and not clears(None, 2, 5) and not clears(None, 1, 1)
    assert not clears(0.51, 0, 5, raise_by=0.1)
    # a row needs cosine 0.35 and 60 % of the prompt's words (3 of 5) beside them
    assert clears(0.36, 3, 5, row=True) and not clears(0.36, 2, 5, row=True)
    assert not clears(0.34, 5, 5, row=True) and clears(0.51, 0, 5, row=True)


def test_content_words_leave_out_stop_and_filler_words():
    assert content_words("Yes, please continue with the exported reports") == {"export", "report"}


# ---------------------------------------------------------------------------- tools


def _tool(store, tool: str, arguments: dict):
    return recall_for_tool(
        store, tool, arguments, session_key="now", project=PROJECT, settings=SETTINGS, now=NOW
    )


def test_recall_for_tool_an_edit_gets_the_files_decisions_and_rows(project):
    found = _tool(
        project,
        "Edit",
        {"file_path": f"{PROJECT}/src/export/writer.py", "old_string": "a", "new_string": "b"},
    )
    assert found.text.startswith(RECALL_HEADING + FRAMING + "\n")
    assert "keeps one open file handle" in found.text
    assert ("old-a", 3) in found.rows  # the Edit call of writer.py in old-a
    assert DECISION not in found.text  # a decision that does not name the file


def test_recall_for_tool_apply_patch_names_its_files(project):
    patch = "*** Begin Patch\n*** Update File: src/export/writer.py\n@@\n-a\n+b\n*** End Patch"
    assert edited_files("apply_patch", {"input": patch}) == ["src/export/writer.py"]
    assert "keeps one open file handle" in _tool(project, "apply_patch", {"input": patch}).text


def test_recall_for_tool_an_edit_of_an_unknown_file_gets_nothing(project):
    assert (
        _tool(project, "Write", {"file_path": f"{PROJECT}/docs/new.md", "content": "x"}).text == ""
    )


def test_recall_for_tool_a_command_gets_its_last_working_invocation(project):
    """``pytest tests/unit`` → old-a's ``PYTHONPATH=src pytest …`` that exited 0, not old-b's
    newer failing ``pytest tests/ui``."""
    found = _tool(project, "Bash", {"command": "pytest tests/unit"})
    assert "`PYTHONPATH=src pytest tests -q -p no:cacheprovider`" in found.text
    assert "pytest tests/ui" not in found.text
    assert found.rows == [("old-a", 1)]


def test_recall_for_tool_the_same_command_or_an_unknown_one_gets_nothing(project):
    assert (
        _tool(
            project, "Bash", {"command": "PYTHONPATH=src pytest tests -q -p no:cacheprovider"}
        ).text
        == ""
    )
    assert _tool(project, "Bash", {"command": "cargo build"}).text == ""
    assert _tool(project, "Read", {"file_path": f"{PROJECT}/src/export/writer.py"}).text == ""


def test_command_key_and_shell_command():
    assert command_key("cd /repo && FOO=1 python -m pytest -q") == "pytest"
    assert command_key("git commit -m x") == "git commit"
    assert command_key("npm run build") == "npm run"
    assert shell_command("shell", {"command": ["bash", "-lc", "ls -la"]}) == "ls -la"
    assert shell_command("Read", {"command": "ls"}) is None


def test_recall_for_prompt_rows_found_by_meaning_once_embedded(project):
    """With the rows embedded (``embed_pending``), the hybrid search hands in a row said in
    other words (two shared), and the rule keeps it by its cosine (0.55 here)."""
    from continuity.retrieval.embedder import load_embedder
    from continuity.retrieval.embedding import embed_pending

    session(
        project,
        "old-c",
        [user("the nightly invoice job crashes when the disk is full")],
        ago=timedelta(hours=5),
    )
    embed_pending(project, load_embedder(SETTINGS))
    found = _prompt(project, "the nightly invoice job keeps dying because storage ran out")
    assert ("old-c", 0) in found.rows
    assert _prompt(project, "write a haiku about autumn leaves").text == ""


def test_recall_for_prompt_tells_a_copied_row_once_and_skips_folders_inside(project):
    """The same row text in two sessions (a copied session file) is one line; a session of a
    folder inside the project is of another project (fresh-user review: a session in /home was
    handed every project under it)."""
    row = "set up the nightly export of the invoices"
    session(project, "copy-of-a", [user(row)], ago=timedelta(days=2))
    session(
        project,
        "inside",
        [user("the nightly invoice export writes CSV for finance")],
        ago=timedelta(hours=1),
        project=f"{PROJECT}/sub",
    )
    memory(project, "Decision: the sub folder's invoice export writes CSV too", "inside")
    found = _prompt(project, "set up the nightly export of the invoices again please")
    assert found.text.count(row) == 1
    assert all(key != "inside" for key, _seq in found.rows)
    assert "sub folder" not in found.text
