"""Human-readable and JSON renderings used by the CLI (no store access, no rules)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from continuity.core.codec import block_view
from continuity.continuation.view import ContinuationView
from continuity.formats.importer import ImportReport
from continuity.core.model import Entry, Session
from continuity.core.text import cut_utf8, json_bytes


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def session_dict(s: Session) -> dict[str, Any]:
    """The ``sessions --json`` shape of one session."""
    return {"session": s.key, "harness": s.harness, "agent_id": s.agent_id,
            "project": s.project, "title": s.title, "source_path": s.source_path,
            "started_at": _iso(s.started_at), "ended_at": _iso(s.ended_at),
            "entries": s.entry_count, "parent": s.parent_key}


def entry_dict(e: Entry) -> dict[str, Any]:
    """The ``show --json`` shape of one row."""
    out: dict[str, Any] = {
        "seq": e.seq, "entry_id": e.entry_id, "native_id": e.native_id, "kind": e.kind.value,
        "role": e.role.value, "type": e.type_name, "visible": e.visible,
        "is_request": e.is_request, "timestamp": _iso(e.timestamp),
        "content": [block_view(b) for b in e.blocks],
    }
    if e.compaction is not None:
        out["compaction"] = {"summary": e.compaction.summary,
                             "covers_through_seq": e.compaction.covers_through_seq,
                             "first_kept_entry_id": e.compaction.first_kept_entry_id,
                             "continuation": e.compaction.continuation}
    if e.source is not None:
        out["source"] = {"path": e.source.path, "line": e.source.line}
    return out


#: Warnings shown per file in text mode (all of them are in --json).
WARNINGS_SHOWN = 5


def import_summary(out: Console, err: Console, report: ImportReport) -> None:
    """One line per imported or skipped file, problems with file:line, the unchanged files
    summed in one line (issue 20: a no-op re-import of 10,000 files printed 10,000 lines),
    then totals."""
    unchanged = 0
    for f in report.files:
        if f.status in ("skipped", "failed"):
            err.print(f"[yellow]skipped[/] {escape(f.path)}: {escape(f.reason or '')}")
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
            extra.append(f"{len(f.warnings)} warnings")
        tail = f" ({', '.join(extra)})" if extra else ""
        out.print(f"imported {escape(f.path)}: {f.harness} session "
                  f"{escape(f.session_key or '')}, {f.imported} rows from {f.lines_read} "
                  f"lines{tail}")
        for line, reason in f.errors:
            err.print(f"  {escape(f.path)}:{line}: {escape(reason)}")
        for line, message in f.warnings[:WARNINGS_SHOWN]:
            err.print(f"  {escape(f.path)}:{line}: warning: {escape(message)}")
        if len(f.warnings) > WARNINGS_SHOWN:
            err.print(f"  {escape(f.path)}: … {len(f.warnings) - WARNINGS_SHOWN} more warnings "
                      "(--json lists them all)")
        if f.pending_tail_bytes:
            err.print(f"  {escape(f.path)}: last {f.pending_tail_bytes} bytes are an "
                      "unfinished line; they will be read on the next import")
    if unchanged:
        out.print(f"[dim]unchanged[/] {unchanged} file{'' if unchanged == 1 else 's'} "
                  "(nothing new since the last import)")
    t = report.totals()
    out.print(f"{t['files']} files, {t['sessions']} sessions, {t['imported']} rows, "
              f"{t['errors']} bad lines, {t['duplicate']} duplicates, "
              f"{t['skipped_files']} files skipped")


def sessions_table(out: Console, sessions: Iterable[Session]) -> None:
    """A table of sessions, newest first."""
    table = Table("session", "harness", "project", "entries", "last activity", box=None)
    table.columns[0].no_wrap = True
    table.columns[0].min_width = 36
    for s in sessions:
        table.add_row(escape(s.key), s.harness, escape(s.project or ""), str(s.entry_count),
                      _iso(s.ended_at) or "")
    out.print(table)


def _block_text(block: dict[str, Any], limit: int = 2000) -> str:
    kind = block["type"]
    if kind == "text":
        return cut_utf8(block["text"], limit)
    if kind == "thinking":
        return "(thinking) " + cut_utf8(block["text"], 400)
    if kind == "tool_call":
        args = json_bytes(block["arguments"]).decode() if not isinstance(
            block["arguments"], str) else block["arguments"]
        return f"→ {block['name']} [{block['id']}] {cut_utf8(args, 400)}"
    if kind == "tool_result":
        flag = " error" if block["is_error"] else ""
        return f"← [{block['call_id']}]{flag} {cut_utf8(block['text'], 600)}"
    if kind == "media":
        return f"[{block['media_type']} {block['bytes']} B]"
    return str(block)


def show_entries(out: Console, session: Session | None, rows: Iterable[Entry]) -> None:
    """The log as readable text: ``seq role: block`` lines."""
    if session is not None:
        out.print(f"[bold]{escape(session.key)}[/] {session.harness} "
                  f"{escape(session.project or '')}")
        if session.parent_key:
            out.print(f"subagent {escape(session.agent_id)} of session "
                      f"{escape(session.parent_key)}")
    for e in rows:
        label = e.role.value + (" (request)" if e.is_request else "")
        if e.compaction is not None:
            out.print(f"[magenta]{e.seq:>5} compaction[/] covers ≤ "
                      f"{e.compaction.covers_through_seq}: "
                      f"{escape(cut_utf8(e.compaction.summary, 600))}")
            continue
        if not e.blocks:
            out.print(f"[dim]{e.seq:>5} {label} {escape(e.type_name)}[/]")
        for b in e.blocks:
            out.print(f"{e.seq:>5} [bold]{label}[/]: {escape(_block_text(block_view(b)))}")


def continuation_text(out: Console, view: ContinuationView) -> None:
    """The continuation as the next run would read it."""
    if view.refusal:
        out.print(f"[red]refused[/]: {view.refusal['reason']} — {escape(view.refusal['detail'])}")
        return
    out.print(f"[dim]session {escape(view.session)}: {view.used_bytes} of {view.budget_bytes} "
              f"bytes{', copied rows' if view.copied else ''}[/]")
    if view.summary:
        out.print(escape(view.summary["text"]))
    if view.notice:
        out.print(f"[yellow][{escape(view.notice)}][/]")
    before, after = view.before_request()
    _messages_text(out, before)
    if view.request:
        out.print(f"[bold]previous request[/] (seq {view.request['seq']}, "
                  f"{view.request['actor']}): {escape(view.request['text'])}")
        for media in view.request.get("media", ()):
            out.print(f"      [dim][{escape(media['media_type'])} {media['bytes']} B omitted, "
                      f"request block {media['block']}][/]")
    _messages_text(out, after)
    for note in view.notes:
        out.print(f"[cyan]note[/]: {escape(note)}")


def _messages_text(out: Console, messages: list[dict]) -> None:
    for m in messages:
        for block in m["content"]:
            out.print(f"{m['seq']:>5} [bold]{m['role']}[/]: {escape(_block_text(block))}")
