"""JSON with comments, as Gemini CLI and Qwen Code read their ``settings.json``: ``//`` and
``/* */`` comments and trailing commas are allowed (both CLIs strip the comments before
parsing, and keep them when they write the file themselves: Gemini CLI's
``updateSettingsFilePreservingFormat``, Qwen Code's ``jsonc-editor``). ``hooks install`` does
the same (fresh-user review of issue 42: such a file was refused as "not valid JSON").

``loads(text)`` parses it (``JsoncError`` with the line and column of the fault). ``edit(text,
new)`` returns ``text`` changed so that it parses to ``new``, touching only what differs:
a key or list item added is inserted after the last one (in the file's indentation), one
removed is cut out with its comma, a changed value is edited inside, so every comment outside
the changed parts stays where it was. When a comment lies inside a part that must be rewritten
or removed whole (a value replaced by one of another type, a list item taken out), ``edit``
raises ``CommentInTheWay`` with that comment's line: the caller refuses, naming the file and
line, rather than drop the comment.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_WS = " \t\r\n"


class JsoncError(ValueError):
    """A text that is not JSON with comments: ``line`` and ``column`` (1-based) of the fault."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line} column {column}: {message}")
        self.line = line
        self.column = column


class CommentInTheWay(ValueError):
    """``edit`` would lose the comment at ``line`` (1-based): it lies inside ``where`` (a path
    such as ``hooks.SessionStart[0]``), which must be rewritten or removed whole."""

    def __init__(self, line: int, where: str) -> None:
        super().__init__(f"line {line}: a comment inside {where or 'the file'}")
        self.line = line
        self.where = where


@dataclass
class _Node:
    """A parsed value and where it is: ``start``/``end`` offsets of its text; for a container
    its ``members`` (objects: with their keys) in file order."""

    value: Any
    start: int
    end: int
    members: list[_Member] = field(default_factory=list)


@dataclass
class _Member:
    """An object member or a list item: ``start`` (its key's, or its value's), its ``node``,
    ``key`` (None for a list item) and ``comma``: the offset of the comma after it, if any."""

    key: str | None
    start: int
    node: _Node
    comma: int | None = None


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.comments: list[tuple[int, int]] = []

    def fail(self, message: str, pos: int | None = None) -> JsoncError:
        at = self.pos if pos is None else pos
        line = self.text.count("\n", 0, at) + 1
        return JsoncError(message, line, at - (self.text.rfind("\n", 0, at) + 1) + 1)

    def skip(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c in _WS:
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                end = n if end < 0 else end
                self.comments.append((self.pos, end))
                self.pos = end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("a /* comment is never closed")
                self.comments.append((self.pos, end + 2))
                self.pos = end + 2
            else:
                return

    def value(self) -> _Node:
        self.skip()
        start, text = self.pos, self.text
        if start >= len(text):
            raise self.fail("a value is expected, the text ends")
        c = text[start]
        if c == "{":
            return self.container("}", start)
        if c == "[":
            return self.container("]", start)
        if c == '"':
            try:
                found, end = scanstring(text, start + 1)
            except ValueError as exc:
                raise self.fail(f"a bad string ({exc.args[0].split(':')[0]})") from None
            self.pos = end
            return _Node(found, start, end)
        match = _NUMBER.match(text, start)
        if match:
            self.pos = match.end()
            number = match.group()
            is_float = any(ch in number for ch in ".eE")
            return _Node(float(number) if is_float else int(number), start, self.pos)
        for word, literal in _LITERALS.items():
            if text.startswith(word, start):
                self.pos = start + len(word)
                return _Node(literal, start, self.pos)
        raise self.fail(f"unexpected {c!r}")

    def container(self, close: str, start: int) -> _Node:
        is_object = close == "}"
        self.pos += 1
        members: list[_Member] = []
        while True:
            self.skip()
            if self.text.startswith(close, self.pos):
                break
            key = None
            member_start = self.pos
            if is_object:
                if not self.text.startswith('"', self.pos):
                    raise self.fail("a key (a string in double quotes) is expected")
                key = self.value().value
                self.skip()
                if not self.text.startswith(":", self.pos):
                    raise self.fail("':' is expected after a key")
                self.pos += 1
            member = _Member(key, member_start, self.value())
            members.append(member)
            self.skip()
            if self.text.startswith(",", self.pos):
                member.comma = self.pos
                self.pos += 1
                continue
            self.skip()
            if not self.text.startswith(close, self.pos):
                raise self.fail(f"',' or '{close}' is expected")
            break
        self.pos += 1
        if is_object:
            value: Any = {m.key: m.node.value for m in members}
        else:
            value = [m.node.value for m in members]
        return _Node(value, start, self.pos, members)


def _parse(text: str) -> tuple[_Node, list[tuple[int, int]]]:
    parser = _Parser(text)
    node = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise parser.fail("more text after the value")
    return node, parser.comments


def loads(text: str) -> Any:
    """The value of ``text`` (JSON with comments and trailing commas). Raises
    ``JsoncError``."""
    return _parse(text)[0].value


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values (``True`` is not ``1``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


class _Editor:
    """The edits (``(start, end, replacement)``) that turn the parsed text into a new value."""

    def __init__(self, text: str, comments: list[tuple[int, int]]) -> None:
        self.text = text
        self.comments = comments
        self.edits: list[tuple[int, int, str]] = []
        self.unit = _indent_unit(text)

    def comment_in(self, start: int, end: int) -> int | None:
        for c_start, _ in self.comments:
            if start <= c_start < end:
                return c_start
        return None

    def refuse_comments(self, start: int, end: int, where: str) -> None:
        found = self.comment_in(start, end)
        if found is not None:
            raise CommentInTheWay(self.text.count("\n", 0, found) + 1, where)

    def line_indent(self, pos: int) -> str:
        line_start = self.text.rfind("\n", 0, pos) + 1
        line = self.text[line_start:pos]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def dumps(self, value: Any, indent: str) -> str:
        text = json.dumps(value, indent=self.unit, ensure_ascii=False)
        return text.replace("\n", "\n" + indent)

    def edit(self, node: _Node, new: Any, where: str) -> None:
        if _same(node.value, new):
            return
        if isinstance(node.value, dict) and isinstance(new, dict):
            self.edit_object(node, new, where)
        elif isinstance(node.value, list) and isinstance(new, list):
            self.edit_list(node, new, where)
        else:
            self.refuse_comments(node.start, node.end, where)
            self.edits.append((node.start, node.end, self.dumps(new, self.line_indent(node.start))))

    def edit_object(self, node: _Node, new: dict[str, Any], where: str) -> None:
        last = {str(m.key): m for m in node.members}  # a repeated key: the last one counts
        keep = []
        for m in node.members:
            key = str(m.key)
            kept = key in new
            keep.append(kept)
            if kept and last[key] is m:
                self.edit(m.node, new[key], f"{where}.{key}" if where else key)
        self.rewrite(node, keep, [(k, new[k]) for k in new if k not in last], where)

    def edit_list(self, node: _Node, new: list[Any], where: str) -> None:
        try:
            trial = _Editor(self.text, self.comments)
            trial.list_by_deletion(node, new, where)
        except CommentInTheWay as first:
            try:
                trial = _Editor(self.text, self.comments)
                trial.list_in_place(node, new, where)
            except CommentInTheWay:
                raise first from None
        self.edits.extend(trial.edits)

    def list_by_deletion(self, node: _Node, new: list[Any], where: str) -> None:
        """Keep the items equal to ``new``'s next ones, cut the others, append the rest."""
        j, keep = 0, []
        for m in node.members:
            kept = j < len(new) and _same(m.node.value, new[j])
            keep.append(kept)
            j += kept
        self.rewrite(node, keep, [(None, v) for v in new[j:]], where)

    def list_in_place(self, node: _Node, new: list[Any], where: str) -> None:
        """Edit the items pairwise, then cut the extra ones or append ``new``'s rest."""
        n = len(node.members)
        for i, m in enumerate(node.members[: len(new)]):
            self.edit(m.node, new[i], f"{where}[{i}]")
        keep = [i < len(new) for i in range(n)]
        self.rewrite(node, keep, [(None, v) for v in new[n:]], where)

    def rewrite(
        self, node: _Node, keep: list[bool], added: list[tuple[str | None, Any]], where: str
    ) -> None:
        """Cut the members not kept (with their commas) and append ``added`` (``(key,
        value)``, key None for a list item) after the last kept one, in the file's
        indentation, with a trailing comma when the file had one there."""
        members = node.members
        for i, m in enumerate(members):
            if not keep[i]:
                self.cut(m, f"{where}[{i}]" if m.key is None else f"{where}.{m.key}".lstrip("."))
        kept = [m for m, k in zip(members, keep, strict=True) if k]
        trailing = bool(members) and members[-1].comma is not None
        anchor = kept[-1] if kept else None
        if anchor is not None and anchor is not members[-1] and not added and not trailing:
            assert anchor.comma is not None  # a member followed it
            self.edits.append((anchor.comma, anchor.comma + 1, ""))
        if not added:
            return
        first = members[0].start if members else None
        indent = (
            self.line_indent(first)
            if first is not None
            else self.line_indent(node.start) + self.unit_text()
        )
        parts = [
            (f"{json.dumps(k, ensure_ascii=False)}: " if k is not None else "")
            + self.dumps(v, indent)
            for k, v in added
        ]
        body = ",".join(f"\n{indent}{p}" for p in parts) + ("," if trailing else "")
        if anchor is None:
            pos = self.after_line_comment(node.start + 1)
            if "\n" not in self.text[pos : node.end - 1]:
                body += "\n" + self.line_indent(node.start)
            self.edits.append((pos, -1, body))
        elif anchor.comma is None:
            self.edits.append((anchor.node.end, -1, ","))
            self.edits.append((self.after_line_comment(anchor.node.end), -1, body))
        else:
            self.edits.append((self.after_line_comment(anchor.comma + 1), -1, body))

    def after_line_comment(self, pos: int) -> int:
        """``pos``, or the end of its line when only a ``//`` comment follows there (so the
        comment stays with the member before it)."""
        rest = self.text[pos:]
        stripped = rest.lstrip(" \t")
        if stripped.startswith("//"):
            end = self.text.find("\n", pos)
            return len(self.text) if end < 0 else end
        return pos

    def cut(self, m: _Member, where: str) -> None:
        end = m.comma + 1 if m.comma is not None else m.node.end
        self.refuse_comments(m.start, end, where)
        start = m.start
        line_start = self.text.rfind("\n", 0, start) + 1
        line_end = self.text.find("\n", end)
        line_end = len(self.text) if line_end < 0 else line_end
        if not self.text[line_start:start].strip(" \t") and not self.text[end:line_end].strip(
            " \t\r"
        ):
            start, end = line_start, min(line_end + 1, len(self.text))
        self.edits.append((start, end, ""))

    def unit_text(self) -> str:
        return self.unit if isinstance(self.unit, str) else " " * self.unit

    def apply(self) -> str:
        edits = sorted(
            ((s, s if e < 0 else e, r) for s, e, r in self.edits), key=lambda x: (x[0], x[1])
        )
        out, cursor = [], 0
        for start, end, replacement in edits:
            if start < cursor:
                raise ValueError("overlapping edits")
            out.append(self.text[cursor:start])
            out.append(replacement)
            cursor = end
        out.append(self.text[cursor:])
        return "".join(out)


def _indent_unit(text: str) -> int | str:
    """The file's indentation step: a tab when its lines are tab-indented, else the smallest
    number of leading spaces of an indented line (2 when none is)."""
    widths = []
    for line in text.splitlines():
        body = line.lstrip(" \t")
        if not body or line == body:
            continue
        lead = line[: len(line) - len(body)]
        if lead.startswith("\t"):
            return "\t"
        widths.append(len(lead))
    return min(widths) if widths else 2


def edit(text: str, new: Any) -> str:
    """``text`` (JSON with comments) changed to hold ``new``, keeping every comment and the
    layout outside the parts that change (module docstring). Raises ``JsoncError`` when
    ``text`` does not parse, ``CommentInTheWay`` when a comment would be lost."""
    node, comments = _parse(text)
    editor = _Editor(text, comments)
    editor.edit(node, new, "")
    out = editor.apply()
    if not _same(loads(out), new):  # never write a file that does not say what it must
        raise ValueError("the edited text does not hold the new settings")
    return out
