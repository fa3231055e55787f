"""CLI commands to find and look (issue 19): ``continuity search QUERY`` over every session and
``continuity export SESSION``. Each is parse, one library call (``continuity.browse``), render.

**Project scope (decided).** ``search`` looks in every project by default: the question it
answers is "where did I solve this before", which is most often another project. ``--here``
narrows it to the current folder (and folders inside it), ``--project DIR`` to any folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import typer

from continuity.cli.commands.common import (
    EXIT_NO_MATCH,
    HomeOption,
    JsonOption,
    SessionArgument,
    SessionHarness,
    bad_option,
    complete_export_formats,
    complete_harnesses,
    count_option,
    err,
    nonempty_query,
    open_cli_store,
    out,
    parse_option_time,
    resolve_session,
    styled_escaped,
    with_home,
)
from continuity.core.errors import InputError
from continuity.core.model import MAX_SEQ
from continuity.core.text import json_terminal_safe_bytes

#: The most hits ``search`` prints (``-n 0``: all of them up to this, with a note when it
#: found this many: ``cli.lines.capped_note``).
MAX_HITS = 500


def search_cmd(
    query: str = typer.Argument(
        ...,
        help="What to find, in words or in other words (best "
        "match first). Text in double quotes must appear as written "
        '("export job" does not match "exported job"); '
        "operators and other punctuation are ordinary characters. "
        "Empty: a usage error.",
        callback=nonempty_query,
    ),
    harness: SessionHarness | None = typer.Option(
        None,
        "--harness",
        show_default=False,
        help="Only sessions of this harness (an unknown name is a usage error, as for "
        "`sessions --harness`).",
        autocompletion=complete_harnesses,
    ),
    project: list[Path] = typer.Option(
        [],
        "--project",
        help="Only sessions of this project folder or a folder inside it (repeatable).",
        show_default=False,
    ),
    here: bool = typer.Option(
        False, "--here", help="Only sessions of the current folder (default: every project)."
    ),
    since: str | None = typer.Option(
        None,
        "--since",
        help="Only rows from this time on: a date (2026-11-30), a time or an age (7d, 12h).",
    ),
    until: str | None = typer.Option(
        None, "--until", help="Only rows before this time (same forms as --since)."
    ),
    role: str | None = typer.Option(
        None, "--role", help="Only rows of this role: user, assistant, tool or system."
    ),
    tool: str | None = typer.Option(
        None,
        "--tool",
        help="Only rows that call a tool of this name (e.g. Bash), or carry its result.",
    ),
    mode: str = typer.Option(
        "hybrid",
        "--mode",
        help="How rows are ranked. hybrid: by "
        "words and by meaning, fused (finds a row put in other words); "
        "words: by the words alone (full-text BM25); vectors: by meaning "
        "alone (local embeddings). Without the semantic extra every mode "
        "ranks by words.",
    ),
    limit: int = count_option(20, "hits", maximum=MAX_HITS, capped=True),
    team: bool = typer.Option(
        False,
        "--team",
        help="Search the team store instead: the rows this member may read (own and the "
        "team's shared projects), with author and machine; ranked by words.",
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Search the text of every row of every session: messages, tool calls and their results,
    compaction summaries, subagent sessions too. Ranked by words and meaning (--mode), rows of
    the current folder's project and recent rows a little first. Each hit shows its session, harness, project,
    time, row number and a snippet (secrets redacted), with the commands that reopen it.

    With --json, one JSON object per hit per line.

    Exit status, as grep's: 0 when a row matched, 1 when none did, 2 for a usage error (an
    empty QUERY)."""
    from continuity.cli.commands.common import open_workspace
    from continuity.retrieval.hybrid import MODES

    if role is not None and role not in ("user", "assistant", "tool", "system"):
        raise bad_option("--role", f"{role!r} is not one of user, assistant, tool, system")
    if mode not in MODES:
        raise bad_option("--mode", f"{mode!r} is not one of {', '.join(MODES)}")
    if team:
        from continuity.cli.commands.team import team_search_out

        _capped(limit, team_search_out(home, query, limit or MAX_HITS, as_json))
        return
    with open_workspace(home, read_only=True) as ws:
        hits = ws.search(
            query,
            limit=limit or MAX_HITS,
            mode=mode,
            harness=harness.value if harness else None,
            project=project,
            here=here,
            since=parse_option_time(since, "--since") if since else None,
            until=parse_option_time(until, "--until") if until else None,
            role=role,
            tool=tool,
        )
    if home is not None:  # the reopen commands keep the workspace in use (issue 45 item 2)
        from dataclasses import replace

        hits = [
            replace(
                h,
                show_command=with_home(h.show_command, home),
                resume_command=with_home(h.resume_command, home),
            )
            for h in hits
        ]
    if as_json:
        buffer = sys.stdout.buffer
        for h in hits:
            buffer.write(json_terminal_safe_bytes(orjson.dumps(h.to_dict())) + b"\n")
        buffer.flush()
    if not hits:
        from continuity.browse.search import no_match_message

        # on stderr with --json too: stdout keeps only JSON lines, and an exit 1 with no
        # word of why was the fresh-user review's "search the --json exits 1 silently"
        err.print(no_match_message(query), markup=False)  # as the daemon's client prints it
        raise typer.Exit(EXIT_NO_MATCH)
    if as_json:
        _capped(limit, len(hits))
        return
    from rich.text import Text

    from continuity.cli.lines import search_hit_lines

    for h in hits:
        head, _snippet, hint = search_hit_lines(h)  # the daemon's client prints the same
        out.print(Text.assemble(*head))
        # controls as escapes (\x1b, \r, \u202e: the README's one rule), spans moved with them
        body = styled_escaped(
            "  " + h.snippet, [(start + 2, end + 2, "bold yellow") for start, end in h.spans]
        )
        out.print(body)
        out.print(Text.assemble(*hint))
    _capped(limit, len(hits))


def _capped(limit: int, found: int) -> None:
    """``-n 0`` that found ``MAX_HITS`` hits, as many as ``search`` prints: the note saying
    more may match (``cli.lines.capped_note``; the daemon's client says the same)."""
    if limit == 0 and found >= MAX_HITS:
        from continuity.cli.lines import capped_note

        err.print(capped_note("search", MAX_HITS, "hits"), markup=False, highlight=False)


def export_cmd(
    session: str = SessionArgument,
    fmt: str = typer.Option(
        "md",
        "--format",
        autocompletion=complete_export_formats,
        help="md (readable Markdown), html (one "
        "self-contained page, as the browser shows it), jsonl (one "
        "stored row per line) or source (the imported file byte for "
        "byte, from the kept raw lines, checked against the file on "
        "disk; secrets included, so it needs --raw).",
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        show_default=False,
        help="Write to this file (whole or not at all, mode 0600; an existing regular file is "
        "replaced, an imported session file or anything else refused) instead of stdout "
        "(also -).",
    ),
    raw: bool = typer.Option(False, "--raw", help="Do not redact secrets (a warning is printed)."),
    since_seq: int | None = typer.Option(
        None, "--since-seq", min=0, max=MAX_SEQ, help="First row."
    ),
    until_seq: int | None = typer.Option(None, "--until-seq", min=0, max=MAX_SEQ, help="Last row."),
    conversation: bool | None = typer.Option(
        None,
        "--conversation-only/--all",
        show_default=False,
        help="Only the conversation's rows (messages, tool calls and results, compactions; the "
        "default for md and html) or every row (queue operations, attachments, hook events, "
        "snapshots too; the default for jsonl).",
    ),
    home: Path | None = HomeOption,
) -> None:
    """Export a session as Markdown, HTML or JSON Lines, secrets redacted unless --raw; or,
    with --format source --raw, the file it was imported from, rebuilt from the kept raw
    lines (stderr says whether it is identical to the file on disk)."""
    from continuity.browse.render import session_markdown, session_page
    from continuity.browse.view import session_records, session_view, source_copy

    if fmt not in ("md", "html", "jsonl", "source"):
        raise bad_option("--format", f"{fmt!r} is not one of md, html, jsonl, source")
    if since_seq is not None and until_seq is not None and until_seq < since_seq:
        raise InputError(f"--until-seq {until_seq} is before --since-seq {since_seq}")
    if fmt == "source" and not raw:
        raise InputError(
            "--format source is the imported file byte for byte, secrets included: add --raw"
        )
    if fmt == "source" and (since_seq is not None or until_seq is not None):
        raise InputError(
            "--format source is the whole file: --since-seq and --until-seq do not apply"
        )
    if fmt == "source" and conversation:
        raise InputError("--format source is the whole file: --conversation-only does not apply")
    if conversation is None:  # issue 44: md and html read as a conversation
        conversation = fmt in ("md", "html")
    from continuity.core.text import one_line

    target = output if output is not None and str(output) != "-" else None  # None: stdout
    note = ""
    with open_cli_store(home, read_only=True) as store:
        key = resolve_session(store, session)
        if target is not None:
            _refuse_a_session_file(store, key, target)
        if fmt == "source":
            copy = source_copy(store, key)
            data = copy.data
            note = (
                f"{one_line(copy.path)}: {copy.lines} lines, {len(data)} bytes from the "
                f"store; the file on disk: {copy.check}"
            )
        elif fmt == "jsonl":
            data = b"".join(
                json_terminal_safe_bytes(orjson.dumps(r)) + b"\n"
                for r in session_records(
                    store,
                    key,
                    since_seq=since_seq,
                    until_seq=until_seq,
                    raw=raw,
                    conversation=conversation,
                )
            )
        else:
            view = session_view(
                store,
                key,
                from_seq=since_seq,
                until_seq=until_seq,
                limit=None,
                raw=raw,
                continuation=fmt == "html",
                conversation=conversation,
            )
            text = session_page(view, standalone=True) if fmt == "html" else session_markdown(view)
            data = text.encode("utf-8")
    if raw:  # once the export is built: a refused one exposed nothing
        err.print(
            "warning: --raw: secrets in this session are NOT redacted in the export", markup=False
        )
    if note:
        err.print(note, markup=False)
    if target is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    import os
    import stat

    from continuity.core.private import write_whole

    shown_path = one_line(str(target))
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise InputError(f"cannot write {shown_path}: {exc.strerror or exc}") from None
    if mode is not None and not stat.S_ISREG(mode):
        # a device, pipe, socket, folder or symlink would be replaced by a regular file
        raise InputError(
            f"--output {shown_path}: not a regular file (a device, pipe, folder "
            "or symlink): give a new file name, or omit --output (or give -) "
            "for stdout"
        )
    try:
        write_whole(target, data, 0o600)
    except OSError as exc:
        raise InputError(f"cannot write {shown_path}: {exc.strerror or exc}") from None
    err.print(f"wrote {shown_path} ({len(data)} bytes, mode 0600)", markup=False)


def _refuse_a_session_file(store, key: str, output: Path) -> None:
    """Raise ``InputError`` when ``--output`` names an imported session file: the session's
    own (also by another name: a hard or symbolic link) or any file the store imported.
    Replacing it would give the harness's file a new inode, and a harness still appending
    to it would write into the deleted one (fresh-user review)."""
    import os

    from continuity.core.text import one_line

    session = store.get_session(key)
    own = session.source_path if session is not None else None
    target = os.path.abspath(output)
    try:
        same = bool(own) and os.path.samefile(output, own)
    except OSError:
        same = False
    if (
        same
        or store.get_source(target) is not None
        or store.get_source(os.path.realpath(target)) is not None
    ):
        raise InputError(
            f"--output {one_line(str(output))}: that is an imported session "
            "file, which continuity never overwrites: give another file name"
        )


def register(app: typer.Typer) -> None:
    """Add ``search`` and ``export`` to the ``continuity`` app."""
    app.command("search")(search_cmd)
    app.command("export")(export_cmd)
