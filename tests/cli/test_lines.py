"""``cli.lines``: a multi-line block stays under its ``seq role:`` head (the known leftover of
issue 44: a multi-line tool result printed from column 0 in ``show`` and ``continue``)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from continuity.cli.lines import HANG, hang, plain, show_lines
from continuity.core.model import Entry, EntryKind, Role, TextBlock


def test_hang_indents_every_later_line_and_drops_trailing_newlines():
    assert hang("Output:\nREADME.md\n\ncalc.py\n\n") == (
        "Output:\n" + HANG + "README.md\n\n" + HANG + "calc.py"
    )
    assert hang("one line") == "one line"
    assert hang("") == ""


@given(st.text(alphabet="ab \n", max_size=40))
def test_hang_indents_the_later_lines_and_changes_nothing_else(text: str):
    first, *rest = hang(text).split("\n")
    want_first, *want_rest = text.rstrip("\n").split("\n")
    assert first == want_first
    assert [line.removeprefix(HANG) if line.strip() else line for line in rest] == want_rest
    assert all(line.startswith(HANG) for line in rest if line.strip())


def test_show_prints_a_multi_line_result_under_its_head():
    row = Entry(EntryKind.MESSAGE, Role.TOOL, (TextBlock("Output:\nREADME.md\ncalc.py\n"),), seq=13)
    (line,) = [plain(parts) for parts in show_lines(None, [row])]
    assert line == "   13 tool: Output:\n        README.md\n        calc.py"
