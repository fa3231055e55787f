"""``continuity show`` prints a file-editing tool call as a unified diff (issue 44, fresh-user
review: Edit, MultiEdit and Write were raw JSON with literal ``\\n``)."""

from __future__ import annotations

from continuity.cli.lines import DIFF_LINES, edit_lines, plain


def _text(block):
    lines = edit_lines(block, "  ")
    return None if lines is None else [plain(parts) for parts in lines]


def test_an_edit_is_the_call_line_then_its_diff():
    block = {
        "type": "tool_call",
        "name": "MultiEdit",
        "id": "t1",
        "arguments": {
            "file_path": "/home/me/x.py",
            "edits": [{"old_string": "a\n", "new_string": "b\n", "replace_all": True}],
        },
    }
    assert _text(block) == [
        "→ MultiEdit [t1] /home/me/x.py (+1 -1)",
        "  (every occurrence)",
        "  @@",
        "  -a",
        "  +b",
    ]


def test_a_patch_of_two_files_names_each():
    patch = (
        "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** Add File: b.py\n+new\n"
        "*** End Patch"
    )
    block = {"type": "tool_call", "name": "apply_patch", "id": "c1", "arguments": patch}
    assert _text(block) == [
        "→ apply_patch [c1] 2 files",
        "  a.py (+1 -1)",
        "  @@",
        "  -x",
        "  +y",
        "  b.py (+1 -0)",
        "  +new",
    ]


def test_a_long_write_is_cut_and_other_calls_are_left_alone():
    content = "".join(f"line {i}\n" for i in range(100))
    block = {
        "type": "tool_call",
        "name": "write",
        "id": "w",
        "arguments": {"path": "n.txt", "content": content},
    }
    text = _text(block)
    assert text is not None and text[0] == "→ write [w] n.txt (+100 -0)"
    assert len(text) == 1 + DIFF_LINES + 1
    assert text[-1] == f"  [… {101 - DIFF_LINES} more lines of the diff: --json has the call]"
    assert _text({"type": "tool_call", "name": "Bash", "id": "b", "arguments": {}}) is None
    assert _text({"type": "text", "text": "hi"}) is None
    # a control character in a diff line is shown as its escape, never sent to the terminal
    hostile = {
        "type": "tool_call",
        "name": "Edit",
        "id": "e",
        "arguments": {"file_path": "f", "old_string": "a", "new_string": "\x1b[31mred"},
    }
    assert _text(hostile)[-1] == "  +\\x1b[31mred"


def test_continue_prints_the_sample_edit_as_its_diff(tmp_path):
    """Issue 44's re-review: ``continue`` showed the Edit of the sample session as JSON too;
    its continuation now prints the call line then the diff, as ``show`` does."""
    import subprocess
    import sys
    from pathlib import Path

    exe = str(Path(sys.executable).with_name("continuity"))
    home = str(tmp_path / "ws")
    samples = str(Path(__file__).resolve().parents[2] / "examples" / "sessions")
    subprocess.run([exe, "import", samples, "--home", home], check=True, capture_output=True)
    out = subprocess.run(
        [exe, "continue", "a152301b", "--home", home], check=True, capture_output=True, text=True
    ).stdout
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "→ Edit [toolu_ddde6c48cf9f460a9b6f]" in line)
    assert lines[at].endswith("/home/dev/projects/export-demo/export.py (+1 -1)")
    assert [line.strip() for line in lines[at + 1 : at + 4]] == [
        "@@",
        "-    return datetime.now().strftime(FORMAT)",
        "+    return datetime.now(timezone.utc).strftime(FORMAT)",
    ]
    assert '"old_string"' not in out
