"""Human-readable and JSON renderings used by the CLI (no store access, no rules)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from continuity.cli.lines import (  # shown, cut, TEXT_BYTES: re-exported for the commands
    TEXT_BYTES as TEXT_BYTES,
    continuation_lines,
    cut as cut,
    import_totals,
    sessions_tsv,
    show_lines,
    shown as shown,
    unchanged_files,
)
from continuity.core.model import Entry, Session
from continuity.core.text import CONTROL_ESCAPES, counted, one_line

if TYPE_CHECKING:  # annotations only: `sessions` and `show` need neither (issue 17)
    from continuity.api.results import (
        Continuation,
        FileImport,
        ImportResult,
        SessionRecord,
    )
    from continuity.formats.importer import FileReport


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


#: Warnings shown per file in text mode (all of them are in --json).
WARNINGS_SHOWN = 5


def file_problems(
    err: Console, f: FileReport | FileImport, more_hint: str = "--json lists them all"
) -> None:
    """Print the reader's bad lines and warnings of one imported file ``f``, each as
    ``  path:line: ...`` on ``err`` (warnings cut at ``WARNINGS_SHOWN``, the rest counted with
    ``more_hint``). Shared by ``import`` and ``watch`` (issue 45 item 1: every reader warning
    ``import`` prints, ``watch`` prints too)."""
    path = escape(one_line(f.path))
    for line, reason in f.errors:
        err.print(f"  {path}:{line}: {escape(one_line(reason))}")
    for line, message in f.warnings[:WARNINGS_SHOWN]:
        err.print(f"  {path}:{line}: warning: {escape(one_line(message))}")
    left = len(f.warnings) - WARNINGS_SHOWN
    if left > 0:
        err.print(f"  {path}: … {left} more warning{'' if left == 1 else 's'} ({more_hint})")


def import_summary(out: Console, err: Console, report: ImportResult) -> None:
    """One line per imported or skipped file, problems with file:line, the unchanged files
    summed in one line (issue 20: a no-op re-import of 10,000 files printed 10,000 lines),
    then totals."""
    unchanged = 0
    for f in report.files:
        path = escape(one_line(f.path))
        if f.status in ("skipped", "failed"):
            # waiting: no complete line yet; absent: a path given that does not exist (a
            # folder of a harness not installed here is no skipped file, issue 45 item 8)
            label = "waiting" if f.waiting else "absent" if f.absent else "skipped"
            err.print(f"[yellow]{label}[/] {path}: {escape(one_line(f.reason or ''))}")
            continue
        if f.status == "unchanged":
            unchanged += 1
            continue
        extra = []
        if f.duplicate:
            extra.append(f"{f.duplicate} duplicate")
        if f.non_conversation:
            extra.append(f"{f.non_conversation} non-conversation kept raw")
        if f.opaque:
            extra.append(f"{f.opaque} unknown kept raw")
        if f.errors:
            extra.append(f"{len(f.errors)} bad")
        if f.warnings:
            extra.append(counted(len(f.warnings), "warning"))
        tail = f" ({', '.join(extra)})" if extra else ""
        key = escape(one_line(f.session or ""))
        out.print(
            f"imported {path}: {f.harness} session {key}, {counted(f.imported, 'row')} from "
            f"{counted(f.lines_read, 'line')}{tail}"
        )
        file_problems(err, f)
        if f.pending_tail_bytes:
            err.print(
                f"  {path}: last {f.pending_tail_bytes} bytes are an "
                "unfinished line; they will be read on the next import"
            )
    if unchanged:
        out.print(f"[dim]unchanged[/] {unchanged_files(unchanged)}")
    waiting = sum(1 for f in report.files if f.waiting)
    out.print(import_totals(report.totals, waiting=waiting), markup=False)


# ---------------------------------------------------------------------------- display text
# Issue 20: what comes from a transcript is never read as Rich markup (it is put in ``Text``
# objects, never in a markup string), never recolours the terminal (control characters are
# shown as escapes), and every cut says how much it left out.

#: Control characters shown as escapes (``core.text.CONTROL_ESCAPES``).
_CONTROLS = CONTROL_ESCAPES


def _line(*parts: tuple[str, str] | str) -> Text:
    """One display line: plain parts are user text (controls shown), ``(text, style)`` ours."""
    return Text.assemble(*[(shown(p), "") if isinstance(p, str) else p for p in parts])


def _ago(value: datetime | None, now: datetime) -> str:
    """``"42 s ago"``, ``"5 min ago"``, ``"3 h ago"``, ``"6 d ago"``, then the date."""
    if value is None:
        return ""
    seconds = (now - value).total_seconds()
    if seconds < 0 or seconds >= 30 * 86400:
        return value.strftime("%Y-%m-%d")
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return f"{int(seconds)} s ago"


def short_keys(keys: list[str], *, minimum: int = 8) -> dict[str, str]:
    """Each key's shortest prefix of at least ``minimum`` characters that no other key of
    ``keys`` starts with (a key that short, or one that is a prefix of another, is whole):
    what ``sessions`` shows in a terminal; any unique prefix names a session."""
    result = {}
    for key in keys:
        n = minimum
        while n < len(key) and any(o != key and o.startswith(key[:n]) for o in keys):
            n += 1
        result[key] = key[:n]
    return result


#: The most characters a project folder takes in the ``sessions`` table.
PROJECT_CHARS = 20


def short_path(path: str, limit: int = PROJECT_CHARS) -> str:
    """``path`` shortened from the left to at most ``limit`` characters, cut at a ``/`` when
    one falls in the kept part (``…/app/src``): the last folders tell projects apart."""
    if len(path) <= limit:
        return path
    tail = path[-(limit - 1) :]
    slash = tail.find("/")
    if 0 <= slash < len(tail) - 1:
        tail = tail[slash:]
    return "…" + tail


def _project(value: str | None) -> str:
    home = os.path.expanduser("~")
    if value and home not in ("", "/") and (value == home or value.startswith(home + "/")):
        return "~" + value[len(home) :]
    return value or ""


def sessions_table(
    out: Console, sessions: Iterable[SessionRecord], *, now: datetime | None = None
) -> None:
    """Sessions (``continuity.api.results.SessionRecord``), newest first. In a terminal: a
    table laid out for its width (80 columns too: short unique key prefixes, the project
    shortened from the left to its last folders, times relative to ``now``, the title last,
    cut with ``…`` to the width left); piped: one tab-separated line per session with the full key, project and ISO
    time (under a header line), as ``--json`` has them, the title last (issue 44). A
    ``continuity resume`` copy names the session it continues (``copy_of``) in a ``copy of``
    column (issue 45 item 3; in a terminal only when one is listed; piped always)."""
    sessions = list(sessions)
    if not out.is_terminal:
        out.file.write(sessions_tsv(sessions))  # Rich would turn the tabs into spaces
        return
    now = now or datetime.now(UTC)
    keys = short_keys([s.session for s in sessions])
    table = Table("session", "harness", "project", "rows", "active", box=None, pad_edge=False)
    gone = any(s.source_gone_at is not None for s in sessions)
    if gone:  # issue 18: only when some file was deleted, so 80 columns stay enough
        table.add_column("source")
    copied = any(s.copy_of for s in sessions)
    sources: dict[str, str] = {}
    if copied:  # issue 45 item 3: a resumed copy says whose copy it is
        table.add_column("copy of")
        sources = short_keys(
            list(
                dict.fromkeys(
                    [s.session for s in sessions] + [s.copy_of for s in sessions if s.copy_of]
                )
            )
        )
    table.add_column("title")
    for column in table.columns:
        column.no_wrap = True
    table.columns[3].justify = "right"
    rows: list[list[Text]] = []
    for s in sessions:
        ended = datetime.fromisoformat(s.ended_at) if s.ended_at else None
        cells = [
            Text(one_line(keys[s.session])),
            Text(s.harness),
            Text(one_line(short_path(_project(s.project)))),
            Text(str(s.entries)),
            Text(_ago(ended, now)),
        ]
        if gone:
            cells.append(Text("gone", style="yellow") if s.source_gone_at else Text(""))
        if copied:
            cells.append(Text(one_line(sources[s.copy_of])) if s.copy_of else Text(""))
        cells.append(Text(one_line(s.title or "")))
        rows.append(cells)
    # the title, last, takes what the other columns leave (two spaces between columns)
    widths = [
        max([len(str(c.header)), *(r[i].cell_len for r in rows)])
        for i, c in enumerate(table.columns[:-1])
    ]
    title_width = max(12, out.width - sum(widths) - 2 * len(widths))
    for cells in rows:
        cells[-1].truncate(title_width, overflow="ellipsis")
        table.add_row(*cells)
    out.print(table, soft_wrap=False)
    if any(keys[s.session] != s.session for s in sessions):
        out.print(
            Text(
                "short keys: any unique prefix works; --json or a pipe shows them whole",
                style="dim",
            )
        )


def show_entries(
    out: Console, session: Session | None, rows: Iterable[Entry], *, raw: bool = False
) -> None:
    """The log as readable text (``cli.lines.show_lines``): ``seq role: block`` lines (long
    texts cut, marked), each block and compaction summary redacted before it is cut
    (``redact_value``, ``redact``: as ``export``) unless ``raw``."""
    for parts in show_lines(session, rows, raw=raw):
        out.print(_line(*parts))


def continuation_text(out: Console, view: Continuation) -> None:
    """The continuation (``continuity.api.results.Continuation``) as the next run would read
    it (``cli.lines.continuation_lines``)."""
    for parts in continuation_lines(view):
        out.print(_line(*parts))
