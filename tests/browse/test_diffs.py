"""Edits as unified diffs (issue 44): Claude Code Edit, MultiEdit and Write, pi's edit, Codex
apply_patch; and assistant Markdown rendered with raw HTML escaped."""

from __future__ import annotations

from continuity.browse.diffs import edit_diffs
from continuity.browse.render import markdown_html, session_markdown, session_page
from continuity.browse.view import session_view
from tests.browser.corpus import EDIT_ANSWER, build


def _lines(name, args):
    (diff,) = edit_diffs(name, args)
    return diff.path, diff.lines


def test_claude_code_edit_multiedit_and_write():
    path, lines = _lines(
        "Edit",
        {"file_path": "/a.py", "old_string": "x = 1\ny = 2\n", "new_string": "x = 1\ny = 3\n"},
    )
    assert path == "/a.py"
    assert lines == [
        ("hunk", "@@"),  # issue 44: no line numbers the call cannot know
        ("ctx", "x = 1"),
        ("del", "y = 2"),
        ("add", "y = 3"),
    ]
    _, lines = _lines(
        "MultiEdit",
        {
            "file_path": "/a.py",
            "edits": [
                {"old_string": "a", "new_string": "b"},
                {"old_string": "c", "new_string": "d"},
            ],
        },
    )
    assert [x for x in lines if x[0] != "hunk"] == [
        ("del", "a"),
        ("add", "b"),
        ("del", "c"),
        ("add", "d"),
    ]
    _, lines = _lines("Write", {"file_path": "/n.txt", "content": "one\ntwo\n"})
    assert lines == [("hunk", "@@"), ("add", "one"), ("add", "two")]
    assert edit_diffs("Bash", {"command": "ls"}) is None
    assert edit_diffs("Edit", {"file_path": "/a", "old_string": 1, "new_string": "x"}) is None


def test_hunks_carry_no_invented_line_numbers_and_paths_stay_whole():
    """Issue 44, fresh-user review: a change at line 10 was headed ``@@ -1 +1 @@`` (difflib
    counts from the replaced text, the call does not carry the file), an absolute path became
    ``a//home/...``, and MultiEdit's ``replace_all`` was not shown."""
    (diff,) = edit_diffs(
        "Edit", {"file_path": "/home/me/x.py", "old_string": "line10\n", "new_string": "ten\n"}
    )
    assert diff.text() == "--- /home/me/x.py\n+++ /home/me/x.py\n@@\n-line10\n+ten"
    (relative,) = edit_diffs("edit", {"path": "src/x.ts", "oldText": "a", "newText": "b"})
    assert relative.text().splitlines()[:3] == ["--- a/src/x.ts", "+++ b/src/x.ts", "@@"]
    (multi,) = edit_diffs(
        "MultiEdit",
        {
            "file_path": "/a.py",
            "edits": [
                {"old_string": "a", "new_string": "b", "replace_all": True},
                {"old_string": "c", "new_string": "d", "replace_all": False},
            ],
        },
    )
    assert multi.lines == [
        ("note", "(every occurrence)"),
        ("hunk", "@@"),
        ("del", "a"),
        ("add", "b"),
        ("hunk", "@@"),
        ("del", "c"),
        ("add", "d"),
    ]
    (every,) = edit_diffs(
        "Edit", {"file_path": "/a", "old_string": "x", "new_string": "y", "replace_all": True}
    )
    assert every.lines[0] == ("note", "(every occurrence)")
    assert "(every occurrence)\n@@\n-x\n+y" in every.text()


def test_pi_edit_and_codex_apply_patch():
    path, lines = _lines(
        "edit", {"path": "src/x.ts", "oldText": "let a = 1;", "newText": "const a = 1;"}
    )
    assert path == "src/x.ts" and lines[1:] == [("del", "let a = 1;"), ("add", "const a = 1;")]
    patch = (
        "*** Begin Patch\n*** Update File: calc.py\n@@ def add(a, b):\n     return a + b\n"
        "+\n+def subtract(a, b):\n+    return a - b\n*** Delete File: old.py\n*** End Patch"
    )
    update, delete = edit_diffs("apply_patch", patch)
    assert update.path == "calc.py" and update.lines == [
        ("hunk", "@@ def add(a, b):"),
        ("ctx", "    return a + b"),
        ("add", ""),
        ("add", "def subtract(a, b):"),
        ("add", "    return a - b"),
    ]
    assert (delete.path, delete.lines) == ("old.py", [("note", "file deleted")])
    (shell,) = edit_diffs(
        "shell",
        {"command": ["apply_patch", "*** Begin Patch\n*** Add File: n\n+hi\n*** End Patch"]},
    )
    assert (shell.path, shell.lines, shell.added) == ("n", [("add", "hi")], 1)


def test_an_edit_in_the_page_and_the_markdown_export(sqlite_store):
    build(sqlite_store)
    view = session_view(sqlite_store, "cc-edit")
    call = next(b for r in view.rows for b in r.blocks if b.kind == "tool_call")
    assert call.diffs is not None and [d.path for d in call.diffs] == ["/home/ana/app/parser.py"]
    assert call.diffs[0].lines == [
        ("hunk", "@@"),
        ("del", "def parse(path):"),
        ("add", "def parse_file(path):"),
        ("add", '    """Parse the file at path."""'),
        ("ctx", "    return load(path)"),
    ]
    md = session_markdown(view)
    assert (
        "```diff\n--- /home/ana/app/parser.py\n+++ /home/ana/app/parser.py\n@@\n"
        "-def parse(path):\n+def parse_file(path):\n"
    ) in md
    assert "\\n" not in md.split("```diff")[1].split("```")[0]  # no literal \n escapes
    html = session_page(view)
    assert (
        '<span class="add">+    &#34;&#34;&#34;Parse the file at path.&#34;&#34;&#34;</span>'
        in html
    )
    assert '<span class="del">-def parse(path):</span>' in html


def test_assistant_markdown_is_rendered_and_raw_html_escaped(sqlite_store):
    html = str(markdown_html(EDIT_ANSWER))
    assert "<strong>parse</strong>" in html and "<code>parse_file</code>" in html
    assert "<li>parser.py: the new name</li>" in html
    assert "<img" not in html and "&lt;img src=x onerror=" in html
    assert "<script" not in str(markdown_html("<script>alert(1)</script>"))
    assert 'href="javascript' not in str(markdown_html("[x](javascript:alert(1))"))
    assert "<img" not in str(markdown_html("![a](http://example.com/a.png)"))
    build(sqlite_store)
    page = session_page(session_view(sqlite_store, "cc-edit"))
    assert (
        '<div class="markdown"><p>Renamed <strong>parse</strong> to <code>parse_file</code>' in page
    )
