"""What a session did, extracted from its rows without a model (issue 39, item 3): the one
extraction behind the extractive summary, the project brief (``continuity.brief``) and
MEMORY.md's facts and thread heads (``continuity.lineage``).

Input: ``RowDigest``s (``continuity.continuation.summarize.bounds.digest``: redacted, bounded),
oldest first. Output: a ``SessionFacts``, every string in it redacted and bounded (UTF-8
bytes, ``core.text.clip_middle``), never a tool output copied whole.

- ``requests``: each request of the user, ``(seq, text)``, oldest first.
- ``last_answer``: the agent's last text answer, ``(seq, gist)``: its first sentences.
- ``commands``: the distinct shell commands run, each once, at its last invocation (so the
  last working invocation of a command that failed before is the one kept), with its exit
  status (``ok``: True/False, None when no result came back), ``exit_code`` when the output
  or the harness recorded one, whether it ran tests (``is_test``), and a sample of its output
  (first and last lines, bounded).
- ``errors``: error outputs (a failed call, a non-zero exit, a traceback): the first and last
  line of each, deduplicated; ``resolved`` when a later run of the same command (or a later
  successful call of the same tool on the same target) succeeded.
- ``failing_tests``: test ids or lines named as failing by the newest run of each test
  command (``FAILED tests/x.py::test_y``, ``--- FAIL: TestX``, ``✗ name``), empty when it passed.
- ``files``: each file path touched, with the strongest kind of change seen (``created`` >
  ``modified`` > ``deleted`` > ``read``; the tool that did it: Edit/Write/MultiEdit,
  apply_patch's ``*** Add/Update/Delete File``, pi's ``edit``/``write``, ``read``/``Read``),
  in order of last touch.
- ``urls``: URLs named by the user, the agent or a tool call, deduplicated.
- ``decisions``: sentences in which the agent stated a decision ("decided", "the fix is",
  "we'll use", …), deduplicated.
- ``tasks``: the newest task list (``core.tasklist``) as it stands.
- ``done``: requests and task items finished (only when their calls succeeded).
- ``open_items``: task items still open, calls that never returned ("effects unknown"), a
  request whose work ended in an unresolved error.

``extract_facts`` holds no store; the brief reads the rows (bounded) and hands them in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from continuity.continuation.summarize.bounds import RowDigest
from continuity.core.tasklist import TaskItem


@dataclass(frozen=True, slots=True)
class CommandRun:
    """One distinct shell command at its last invocation (row ``seq``). ``ok``: True when it
    returned without error and exit status 0, False when it failed, None when no result came
    back. ``exit_code``: the status when known. ``output``: a sample of its output (first and
    last lines, at most ``facts.OUTPUT_SAMPLE_BYTES``), redacted."""

    command: str
    seq: int
    ok: bool | None
    exit_code: int | None = None
    is_test: bool = False
    output: str = ""


@dataclass(frozen=True, slots=True)
class ErrorNote:
    """An error a tool returned at row ``seq``: ``source`` (the command, or the tool and its
    target), the ``first_line`` and ``last_line`` of the output (equal for a one-line error),
    and ``resolved`` when a later run of the same command or call succeeded."""

    seq: int
    source: str
    first_line: str
    last_line: str
    resolved: bool = False


@dataclass(frozen=True, slots=True)
class FileTouch:
    """A file the session touched: ``change`` is ``created``, ``modified``, ``deleted`` or
    ``read`` (the strongest seen), ``seq`` the row of its last touch."""

    path: str
    change: str
    seq: int


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What a session did (module docstring). Every tuple is oldest first, except where the
    module docstring says otherwise; everything is redacted and bounded."""

    requests: tuple[tuple[int, str], ...] = ()
    last_answer: tuple[int, str] | None = None
    commands: tuple[CommandRun, ...] = ()
    errors: tuple[ErrorNote, ...] = ()
    failing_tests: tuple[str, ...] = ()
    files: tuple[FileTouch, ...] = ()
    urls: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    tasks: tuple[TaskItem, ...] = ()
    done: tuple[str, ...] = ()
    open_items: tuple[str, ...] = ()
    #: rows read, and the last row's seq (-1 when none): so a reader can say how much it saw
    rows: int = 0
    last_seq: int = -1
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def unresolved_errors(self) -> tuple[ErrorNote, ...]:
        """The errors no later success resolved, oldest first."""
        return tuple(e for e in self.errors if not e.resolved)

    @property
    def changed_files(self) -> tuple[FileTouch, ...]:
        """The files created, modified or deleted (not only read)."""
        return tuple(f for f in self.files if f.change != "read")


def extract_facts(rows: Iterable[RowDigest]) -> SessionFacts:
    """The facts of ``rows`` (``RowDigest``s, oldest first), as the module docstring says.
    Deterministic: the same rows always give the same facts. Never raises on odd input (a
    call without a result, a result without its call, a row without text)."""
    raise NotImplementedError("issue 39: the extraction lands with the extractive summary")


__all__ = ["CommandRun", "ErrorNote", "FileTouch", "SessionFacts", "extract_facts"]
