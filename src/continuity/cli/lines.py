"""The text lines of ``sessions`` (piped), ``show`` and ``continue``, without Rich (issue 43
goal 3). Each line is a list of parts: a plain ``str`` is user text (its controls shown as
escapes when printed), a ``(text, style)`` pair is ours, styled on a terminal. ``cli.render``
prints them through Rich; the fast path (``cli.fast``) prints the same characters where Rich
would add nothing (``cli.output.plain_line``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime

from continuity.core.text import CONTROL_ESCAPES, cut_utf8, json_bytes, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from continuity.api.results import Continuation, ContinuationMessage, SessionRecord
    from continuity.core.model import Entry, Session

#: One part of a line: user text, or ``(text, style)``.
Part = str | tuple[str, str]

#: Display limits in UTF-8 bytes (``--json`` always carries the whole text).
TEXT_BYTES, THINKING_BYTES, ARGUMENT_BYTES, RESULT_BYTES, SUMMARY_BYTES = 2000, 400, 400, 600, 600

#: Lines of one edit's diff ``show`` prints at most (``--json`` and ``export`` have them all).
DIFF_LINES = 60

#: How ``show`` marks and styles a diff line of each kind (``browse.diffs.FileDiff.lines``).
_DIFF_MARKS = {"add": ("+", "green"), "del": ("-", "red"), "ctx": (" ", ""), "hunk": ("", "cyan")}
#: The tool names ``browse.diffs`` reads (its ``EDIT_TOOLS``; tests/cli/test_fast_path.py
#: keeps the two equal): any other call is shown without loading it (issue 43 goal 3).
EDIT_TOOLS = frozenset(
    {"apply_patch", "shell", "exec_command", "local_shell", "edit", "str_replace", "multiedit"}
    | {"write"}
)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def shown(text: str) -> str:
    """``text`` with every control character but tab and newline as a visible escape
    (``\\x1b``, ``\\r``), so that a transcript cannot move the cursor or change colours."""
    return text.translate(CONTROL_ESCAPES)


def cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, never inside a character, with a
    ``[… 1,234 bytes omitted]`` marker saying how many bytes were left out; whole if it fits."""
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size <= limit:
        return text
    head = cut_utf8(text, limit)
    return f"{head} [… {size - len(head.encode('utf-8', errors='surrogatepass')):,} bytes omitted]"


def plain(parts: Iterable[Part]) -> str:
    """The characters a line of ``parts`` shows: user text and ours, every control and bidi
    character as its escape (as ``cli.commands.common.SafeConsole`` prints a ``Text``)."""
    return "".join(p if isinstance(p, str) else p[0] for p in parts).translate(CONTROL_ESCAPES)


def sessions_tsv(sessions: Iterable[SessionRecord]) -> str:
    """``continuity sessions`` piped: a header line, then one tab-separated line per session
    with the full key, project and ISO time, as ``--json`` has them, the title last (issue
    44); a tab inside a value is written ``\\t``."""
    lines = ["session\tharness\tproject\tentries\tlast_activity\tsource\tcopy_of\ttitle"]
    lines += [
        "\t".join(
            one_line(v).replace("\t", "\\t")
            for v in (
                s.session,
                s.harness,
                s.project or "",
                str(s.entries),
                s.ended_at or "",
                s.source or "",
                s.copy_of or "",
                s.title or "",
            )
        )
        for s in sessions
    ]
    return "\n".join(lines) + "\n"


def block_text(block: dict[str, Any]) -> str:
    """One content block (its view shape, ``core.codec.block_view``) as one display text."""
    kind = block["type"]
    if kind == "text":
        return cut(block["text"], TEXT_BYTES)
    if kind == "thinking":
        return "(thinking) " + cut(block["text"], THINKING_BYTES)
    if kind == "tool_call":
        args = (
            json_bytes(block["arguments"]).decode()
            if not isinstance(block["arguments"], str)
            else block["arguments"]
        )
        return f"→ {block['name']} [{block['id']}] {cut(args, ARGUMENT_BYTES)}"
    if kind == "tool_result":
        flag = " error" if block["is_error"] else ""
        return f"← [{block['call_id']}]{flag} {cut(block['text'], RESULT_BYTES)}"
    if kind == "media":
        return f"[{block['media_type']} {block['bytes']} B]"
    return str(block)


def edit_lines(block: dict[str, Any], indent: str) -> list[list[Part]] | None:
    """A tool call ``block`` (its view shape, already redacted) that edits files as lines of
    text (issue 44, fresh-user review: ``show`` printed them as JSON with literal ``\\n``): the
    call line ``→ Edit [id] path (+added -removed)``, then each file's unified diff
    (``browse.diffs.edit_diffs``, as the browser and ``export`` show it) indented by
    ``indent``, at most ``DIFF_LINES`` lines a file, each cut to ``ARGUMENT_BYTES`` bytes. None
    for a call that edits nothing ``browse.diffs`` reads (shown by ``block_text``)."""
    if block.get("type") != "tool_call" or str(block.get("name", "")).lower() not in EDIT_TOOLS:
        return None
    from continuity.browse.diffs import edit_diffs

    diffs = edit_diffs(str(block.get("name", "")), block.get("arguments"))
    if not diffs:
        return None
    head = f"→ {block['name']} [{block['id']}]"

    def counts(d: Any) -> str:
        return f"(+{d.added} -{d.removed})"

    if len(diffs) == 1:
        out: list[list[Part]] = [[f"{head} {diffs[0].path} {counts(diffs[0])}"]]
    else:
        out = [[f"{head} {len(diffs)} files"]]
    for d in diffs:
        if len(diffs) > 1:
            out.append([indent, (shown(d.path), "bold"), f" {counts(d)}"])
        for kind, text in d.lines[:DIFF_LINES]:
            mark, style = _DIFF_MARKS.get(kind, ("", "dim"))
            out.append([indent, (shown(mark + cut(text, ARGUMENT_BYTES)), style)])
        if len(d.lines) > DIFF_LINES:
            left = len(d.lines) - DIFF_LINES
            out.append(
                [indent, (f"[… {left:,} more lines of the diff: --json has the call]", "dim")]
            )
    return out


def show_lines(
    session: Session | None, rows: Iterable[Entry], *, raw: bool = False
) -> Iterator[list[Part]]:
    """The lines of ``continuity show``: the session's head, then ``seq role: block`` per
    block (long texts cut, marked), each block and compaction summary redacted before it is
    cut (``redact_value``: as ``export``) unless ``raw``."""
    from continuity.core.codec import block_view

    if raw:

        def seen(value: Any) -> Any:
            return value
    else:
        from continuity.redaction.structured import redact_value as seen
    if session is not None:
        yield [
            (one_line(session.key), "bold"),
            f" {session.harness} ",
            one_line(session.project or ""),
        ]
        if session.parent_key:
            yield [f"subagent {session.agent_id} of session {session.parent_key}"]
        if session.forked_from:
            yield [f"forked from session {shown(session.forked_from)}"]
        if session.source_gone_at is not None:  # issue 18: the archive keeps it whole
            yield [
                ("source: gone", "yellow"),
                f" ({shown(session.source_path or '')}"
                f" deleted; found {_iso(session.source_gone_at)}; every row is "
                "kept here)",
            ]
    for e in rows:
        label = e.role.value + (" (request)" if e.is_request else "")
        if e.compaction is not None:
            yield [
                (f"{e.seq:>5} compaction", "magenta"),
                f" covers ≤ {e.compaction.covers_through_seq}: ",
                hang(cut(seen(e.compaction.summary), SUMMARY_BYTES)),
            ]
            continue
        if not e.blocks:
            yield [(f"{e.seq:>5} {label} {shown(e.type_name)}", "dim")]
        for b in e.blocks:
            view = seen(block_view(b))
            edit = edit_lines(view, HANG)
            if edit is None:
                yield [f"{e.seq:>5} ", (label, "bold"), ": ", hang(block_text(view))]
                continue
            yield [f"{e.seq:>5} ", (label, "bold"), ": ", *edit[0]]
            yield from edit[1:]


def continuation_lines(view: Continuation) -> Iterator[list[Part]]:
    """The lines of ``continuity continue``: the continuation as the next run would read it.
    The header's byte count is the continuation's (``used_bytes``); long texts are cut for
    display, each cut marked."""
    if view.refusal:
        yield [("refused", "red"), f": {view.refusal.reason} — ", view.refusal.detail]
        return
    yield [
        (
            f"session {shown(view.session)}: {view.used_bytes:,} of "
            f"{view.budget_bytes:,} bytes{', copied rows' if view.copied else ''} "
            "(long texts are cut here, marked; --json has them whole)",
            "dim",
        )
    ]
    if view.summary:
        yield [view.summary.text]
    if view.gap is not None and view.gap.text:
        yield [(f"[{shown(view.gap.text)}]", "yellow")]
    # ``Continuation.before_request``, read from the fields alone (the fast path hands a
    # namespace of the same fields, ``cli.fast``)
    seq = view.request.seq if view.request else None
    before = [m for m in view.messages if seq is not None and m.seq < seq]
    after = [m for m in view.messages if seq is None or m.seq >= seq]
    yield from _message_lines(before)
    if view.request:
        yield [
            ("previous request", "bold"),
            f" (seq {view.request.seq}, {view.request.actor}): ",
            cut(view.request.text, TEXT_BYTES),
        ]
        for media in view.request.media or ():
            yield [
                (
                    f"      [{shown(media['media_type'])} {media['bytes']} B "
                    f"omitted, request block {media['block']}]",
                    "dim",
                )
            ]
    yield from _message_lines(after)
    for note in view.notes:
        yield [("note", "cyan"), ": ", note]


#: How far the second and later lines of a multi-line block stand in (``show``, ``continue``):
#: under the text after ``  seq role: ``, as an edit's diff lines do.
HANG = " " * 8


def hang(text: str) -> str:
    """``text`` with each line after the first indented by ``HANG`` (a blank line left as it is)
    and its trailing newlines dropped, so a multi-line tool result or message stays under its
    ``seq role:`` head instead of starting at column 0 (display only: ``--json`` is whole)."""
    first, *rest = text.rstrip("\n").split("\n")
    return first + "".join("\n" + (HANG + line if line.strip() else line) for line in rest)


def _message_lines(messages: Iterable[ContinuationMessage]) -> Iterator[list[Part]]:
    """Each message's blocks, one line each; an edit as its diff (``edit_lines``), as ``show``
    prints it (issue 44: no edit as raw JSON)."""
    for m in messages:
        for block in m.content:
            edit = edit_lines(block, HANG)
            if edit is None:
                yield [f"{m.seq:>5} ", (m.role, "bold"), ": ", hang(block_text(block))]
                continue
            yield [f"{m.seq:>5} ", (m.role, "bold"), ": ", *edit[0]]
            yield from edit[1:]


def unchanged_files(n: int) -> str:
    """``"N file(s) (nothing new since the last import)"``: the import summary's line of the
    files it left as they were, after the word ``unchanged`` (issue 20: one line, not one per
    file)."""
    return f"{n} file{'' if n == 1 else 's'} (nothing new since the last import)"


def import_totals(totals: Any, *, waiting: int) -> str:
    """The import summary's last line from ``totals`` (``ImportReport.totals()``'s keys, as a
    mapping or as attributes: ``files``, ``sessions``, ``imported``, ``errors``,
    ``duplicate``, ``skipped_files``, ``absent_paths``) and the count of files ``waiting``
    for their first line."""

    def get(name: str) -> int:
        return totals[name] if isinstance(totals, dict) else getattr(totals, name)

    from continuity.core.text import counted

    absent = get("absent_paths")
    return (
        f"{counted(get('files'), 'file')}, {counted(get('sessions'), 'session')}, "
        f"{counted(get('imported'), 'row')}, {counted(get('errors'), 'bad line')}, "
        f"{counted(get('duplicate'), 'duplicate')}, "
        f"{counted(get('skipped_files'), 'file')} skipped"
        + (f" ({waiting} waiting for their first line)" if waiting else "")
        + (
            f", {absent} path{'' if absent == 1 else 's'} absent (no such file or folder)"
            if absent
            else ""
        )
    )


def with_home(command: str, home: Any) -> str:
    """``command`` (a ``continuity ...`` line a command prints for the user to run) with
    ``--home HOME`` added when the user gave a workspace with ``--home`` (issue 45 item 2:
    every printed command keeps the workspace in use; run as printed, a bare one acts on the
    default workspace). ``command`` unchanged when it is empty or ``home`` is None."""
    import os
    import shlex

    if not command or home is None:
        return command
    return f"{command} --home {shlex.quote(os.path.abspath(os.path.expanduser(str(home))))}"


def recall_lines(found: dict[str, Any]) -> list[str]:
    """The text ``continuity recall`` prints for ``found`` (``RecallResponse.to_dict()``),
    one string per result (``SCORE  ID  (type, tags, from SESSION)`` then the content,
    indented) and per expanded transcript, before ``shown``; the same from the in-process
    command and the daemon's client."""
    lines = []
    for r in found["results"]:
        meta = ", ".join(
            [r["type"], *r["tags"]] + ([f"from {r['source_id']}"] if r.get("source_id") else [])
        )
        lines.append(f"{r['score']:.3g}  {r['id'][:12]}  ({meta})\n  {r['content']}")
    for key, src in (found.get("sources") or {}).items():
        clipped = " (clipped)" if src["truncated"] else ""
        lines.append(f"--- transcript of {key}{clipped}\n{src['content']}")
    return lines


#: What ``search`` and ``recall`` may narrow by, for the note of a capped ``-n 0``.
NARROW_BY = {
    "search": "--here, --project, --harness, --since, --until, --role or --tool",
    "recall": "--type or --tag",
}


def capped_note(command: str, shown: int, what: str) -> str:
    """What ``continuity search`` (``recall``) says on standard error when ``-n 0`` (all)
    found as many ``what`` (hits, memories) as it prints at most, ``shown``: more may match,
    and how to narrow it (``NARROW_BY``). Fresh-user review: ``-n 0`` stopped at 500 without
    a word."""
    return (
        f"note: {shown} {what} shown, the most {command} prints (-n 0); more may match: "
        f"narrow it with {NARROW_BY[command]}"
    )


def no_memory_message(query: str, type_: str | None = None, tags: Sequence[str] = ()) -> str:
    """What ``continuity recall`` says on standard error when no memory matches ``query``
    (``redaction.funnel.shown_query``: a long one cut, a secret not shown), naming the
    ``--type`` and ``--tag`` filters it was given (fresh-user review: a filter that left
    nothing went unmentioned)."""
    from continuity.redaction.funnel import shown_query

    text = f"no memory matches {shown_query(query)}"
    if type_:
        text += f" of type {shown_query(type_.strip())}"
    if tags:
        text += f" tagged {', '.join(shown_query(t) for t in tags)}"
    return text


def search_hit_lines(hit: Any) -> list[list[Part]]:
    """The three lines ``continuity search`` prints for a hit (``SearchHit`` or its
    ``to_dict()``): ``SESSION #SEQ`` then ``role · harness · project · time``; the snippet,
    indented two columns, its matches bold yellow; the commands that reopen it, cyan. Every
    control character shown as its escape."""

    def get(name: str) -> Any:
        return hit[name] if isinstance(hit, dict) else getattr(hit, name)

    who = (
        get("harness")
        + (f", subagent {get('agent')}" if get("subagent") else "")
        + (", sidechain" if get("sidechain") else "")
    )
    resume = get("resume_command")
    hint = f"  {get('show_command')}   |   {resume}" if resume else f"  {get('show_command')}"
    return [
        [
            (shown(f"{get('session')} #{get('seq')} "), "bold"),
            (
                shown(
                    f"{get('role')} · {who} · {get('project') or 'no project'} · "
                    f"{get('time') or 'no time'}"
                ),
                "dim",
            ),
        ],
        [shown("  " + get("snippet"))],
        [(shown(hint), "cyan")],
    ]


__all__ = [
    "Part",
    "block_text",
    "continuation_lines",
    "cut",
    "edit_lines",
    "hang",
    "import_totals",
    "plain",
    "sessions_tsv",
    "show_lines",
    "shown",
    "unchanged_files",
    "search_hit_lines",
    "with_home",
]
