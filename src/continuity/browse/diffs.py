"""Edits shown as unified diffs (issue 44): a file-editing tool call's arguments read as what it
changed, so the browser and ``export --format md`` show ``-``/``+`` lines instead of raw JSON
with literal ``\\n`` escapes.

The tools read (by name, case-insensitive where the harnesses differ only in case):

- Claude Code ``Edit`` (``file_path``, ``old_string``, ``new_string``), ``MultiEdit``
  (``file_path``, ``edits``: a list of those pairs) and ``Write`` (``file_path``, ``content``:
  every line added);
- pi's ``edit`` (``path``, ``oldText``, ``newText``, or ``edits``: a list of those pairs) and
  ``write`` (``path``, ``content``);
- Codex ``apply_patch`` (its patch text: the arguments as a string, or ``input``/``patch``, or a
  shell call whose command is ``["apply_patch", PATCH]``): the patch's own lines, classified.

Diffs are computed with ``difflib.unified_diff`` (3 lines of context) on the arguments as the
view already redacted them; each line is plain text, escaping is the renderer's job. A hunk's
header is a bare ``@@`` (issue 44, fresh-user review): difflib numbers lines from the start of
the replaced text, and the call does not carry the file, so ``@@ -1 +1 @@`` for a change at line
10 would be an invented number (Codex's own patches write a bare ``@@`` too). An absolute path is
written as it is (``--- /home/me/x.py``), never ``a//home/me/x.py``. A replacement of every
occurrence (``replace_all: true``) carries the note ``(every occurrence)`` before its hunks. A
call whose arguments do not have these shapes gives None (shown as JSON, as before).
"""

from __future__ import annotations

from dataclasses import dataclass, field

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any

#: Lines of one diff kept at most (a ``Write`` of a 50,000-line file stays a page).
MAX_LINES = 2_000
#: Every tool name ``edit_diffs`` reads, lower-cased: a call named otherwise is no edit.
#: ``cli.lines`` asks a copy of it before it imports this module, so ``show`` of a session
#: without an edit loads none of it (issue 43 goal 3; tests/cli/test_fast_path.py keeps
#: the two equal).
EDIT_TOOLS = frozenset(
    {"apply_patch", "shell", "exec_command", "local_shell", "edit", "str_replace", "multiedit"}
    | {"write"}
)


@dataclass
class FileDiff:
    """The change to one file: ``path`` and its lines as ``(kind, text)``, kind one of
    ``hunk`` (``@@ ... @@``), ``add``, ``del``, ``ctx``, ``note`` (a patch's header or an
    omission marker)."""

    path: str
    lines: list[tuple[str, str]] = field(default_factory=list)

    @property
    def added(self) -> int:
        """Lines added."""
        return sum(1 for k, _ in self.lines if k == "add")

    @property
    def removed(self) -> int:
        """Lines removed."""
        return sum(1 for k, _ in self.lines if k == "del")

    def text(self) -> str:
        """The diff as unified-diff text (``--- a/path``, ``+++ b/path``, hunks; an absolute
        path as it is: ``--- /home/me/x.py``)."""
        absolute = self.path.startswith(("/", "\\")) or self.path[1:3] in (":\\", ":/")
        old, new = (self.path, self.path) if absolute else (f"a/{self.path}", f"b/{self.path}")
        out = [f"--- {old}", f"+++ {new}"]
        marks = {"add": "+", "del": "-", "ctx": " "}
        out += [marks.get(kind, "") + line for kind, line in self.lines]
        return "\n".join(out)


#: A replacement as ``(old, new, every)``: ``every`` when every occurrence is replaced.
Pair = tuple[str, str, bool]


def _unified(path: str, pairs: list[Pair]) -> FileDiff:
    import difflib  # only for an edit: ``show`` of a session without one loads none (issue 43)

    diff = FileDiff(path)
    for old, new, every in pairs:
        if every:
            diff.lines.append(("note", "(every occurrence)"))
        for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3):
            if line.startswith(("---", "+++")):
                continue
            if line.startswith("@@"):
                diff.lines.append(("hunk", "@@"))  # no invented line numbers (docstring)
            elif line.startswith("+"):
                diff.lines.append(("add", line[1:]))
            elif line.startswith("-"):
                diff.lines.append(("del", line[1:]))
            else:
                diff.lines.append(("ctx", line[1:]))
    return _bounded(diff)


def _bounded(diff: FileDiff) -> FileDiff:
    if len(diff.lines) > MAX_LINES:
        left = len(diff.lines) - MAX_LINES
        diff.lines = [*diff.lines[:MAX_LINES], ("note", f"[… {left:,} more lines of the diff]")]
    return diff


def _pairs(edits: Any, old_key: str, new_key: str) -> list[Pair] | None:
    if not isinstance(edits, list) or not edits:
        return None
    pairs = []
    for e in edits:
        if not isinstance(e, dict):
            return None
        old, new = e.get(old_key, ""), e.get(new_key)
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        pairs.append((old, new, e.get("replace_all") is True))
    return pairs


def _patch(text: str) -> list[FileDiff]:
    """Codex's patch format: ``*** Add File: p`` / ``*** Update File: p`` / ``*** Delete File:
    p`` headers, ``@@`` hunks, ``+``/``-``/`` `` lines."""
    files: list[FileDiff] = []
    current: FileDiff | None = None
    for line in text.splitlines():
        if line.startswith("*** ") and line.endswith("Patch"):
            continue  # *** Begin Patch / *** End Patch
        for head in ("*** Add File: ", "*** Update File: ", "*** Delete File: "):
            if line.startswith(head):
                current = FileDiff(line[len(head) :].strip())
                files.append(current)
                if head.startswith("*** Delete"):
                    current.lines.append(("note", "file deleted"))
                break
        else:
            if current is None:
                current = FileDiff("(patch)")
                files.append(current)
            if line.startswith("*** Move to: "):
                current.lines.append(("note", "moved to " + line[len("*** Move to: ") :]))
            elif line.startswith("@@"):
                current.lines.append(("hunk", line))
            elif line.startswith("+"):
                current.lines.append(("add", line[1:]))
            elif line.startswith("-"):
                current.lines.append(("del", line[1:]))
            else:
                current.lines.append(("ctx", line[1:] if line.startswith(" ") else line))
    return [_bounded(f) for f in files]


def _patch_text(arguments: Any) -> str | None:
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, dict):
        for key in ("input", "patch"):
            if isinstance(arguments.get(key), str):
                return arguments[key]
        command = arguments.get("command")
        if (
            isinstance(command, list)
            and len(command) == 2
            and command[0] == "apply_patch"
            and isinstance(command[1], str)
        ):
            return command[1]
    return None


def edit_diffs(name: str, arguments: Any) -> list[FileDiff] | None:
    """The files tool call ``name`` with ``arguments`` changes, as diffs (module docstring);
    None when it is no edit this module reads."""
    lowered = name.lower()
    if lowered not in EDIT_TOOLS:
        return None
    if lowered == "apply_patch" or (
        lowered in ("shell", "exec_command", "local_shell")
        and isinstance(arguments, dict)
        and isinstance(arguments.get("command"), list)
        and arguments["command"][:1] == ["apply_patch"]
    ):
        text = _patch_text(arguments)
        return _patch(text) if text and text.strip() else None
    if not isinstance(arguments, dict):
        return None
    path = arguments.get("file_path", arguments.get("path"))
    if not isinstance(path, str):
        return None
    if name in ("Edit", "edit", "str_replace"):
        old = arguments.get("old_string", arguments.get("oldText"))
        new = arguments.get("new_string", arguments.get("newText"))
        if isinstance(old, str) and isinstance(new, str):
            return [_unified(path, [(old, new, arguments.get("replace_all") is True)])]
        if name == "edit":  # pi's newer edit: a list of replacements
            found = _pairs(arguments.get("edits"), "oldText", "newText")
            return [_unified(path, found)] if found else None
        return None
    if name == "MultiEdit":
        found = _pairs(arguments.get("edits"), "old_string", "new_string")
        return [_unified(path, found)] if found else None
    if lowered == "write" and isinstance(arguments.get("content"), str):
        return [_unified(path, [("", arguments["content"], False)])]
    return None


__all__ = ["EDIT_TOOLS", "FileDiff", "MAX_LINES", "edit_diffs"]
