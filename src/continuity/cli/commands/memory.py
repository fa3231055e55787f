"""CLI commands of transcripts and memories (issue 5): ``continuity transcript SESSION``,
``continuity remember TEXT`` and ``continuity recall QUERY``. Each is parse, one library call
(``continuity.transcripts.session_transcripts`` / ``continuity.transcripts.memories``), render;
JSON goes to plain stdout and
confirmations to stderr."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from continuity.cli.commands.common import (
    EXIT_NO_MATCH,
    HomeOption,
    JsonOption,
    SessionArgument,
    count_option,
    emit_json,
    err,
    nonempty_query,
    open_cli_store,
    open_workspace,
    out,
)
from continuity.core.errors import InputError

#: The most memories ``recall`` prints (``-n 0``: all of them up to this, with a note when it
#: found this many: ``cli.lines.capped_note``; ``Workspace.recall`` takes 1..100).
RECALL_MOST = 100


def _iso(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def transcript_cmd(
    session: str = SessionArgument,
    sanitized: bool = typer.Option(
        False,
        "--sanitized",
        help="Show the read-time projection: "
        "tool calls as [tool call: NAME] markers, tool outputs and "
        "reasoning left out.",
    ),
    raw: bool = typer.Option(
        False,
        "--raw",
        help="Do not redact secrets: the transcript as stored (a warning is printed).",
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Print the canonical transcript of SESSION (the stored text, or with --sanitized its
    projection), secrets redacted unless --raw."""
    from continuity.redaction.funnel import SESSION_KNOWN, redact
    from continuity.redaction.session import session_secrets
    from continuity.transcripts.projection import project
    from continuity.transcripts.session_transcripts import load_transcript

    with open_cli_store(home, read_only=True) as store:  # only reads (issue 45)
        row = load_transcript(store, session, home=home)
        # issue 45 review item 1: a secret found in the session's rows is hidden here too
        known = {} if raw else session_secrets(store, row.session_key)
    token = SESSION_KNOWN.set(known)
    try:
        if sanitized:
            text = project(row.content, redact_secrets=not raw)
        elif raw:
            text = row.content
        else:
            text = redact(row.content)
    finally:
        SESSION_KNOWN.reset(token)
    if as_json:
        emit_json(
            {
                "session": row.session_key,
                "agent_id": row.agent_id,
                "harness": row.harness,
                "project": row.project,
                "content_hash": row.content_hash,
                "created_at": _iso(row.created_at),
                "updated_at": _iso(row.updated_at),
                "completed_at": _iso(row.completed_at),
                "sanitized": sanitized,
                "redacted": not raw,
                "content": text,
            }
        )
    else:
        from continuity.cli.render import shown

        # issue 45 item 6: escapes are shown, never run, on a terminal or piped (a pipe ends in
        # a pager or a log a terminal reads); --json has the text exactly
        sys.stdout.write(shown(text) + "\n")
    if raw:  # as export's and show's
        err.print(
            "warning: --raw: secrets in this transcript are NOT redacted in the output",
            markup=False,
        )


def _text_to_remember(text: str | None, file: Path | None) -> str:
    """TEXT as given, stdin for ``-``, or the UTF-8 file ``--file`` names (exactly one of
    them; ``InputError`` otherwise, or for a file that cannot be read or is not UTF-8)."""
    if (text is None) == (file is None):
        raise InputError(
            "remember: give the TEXT, - to read it from stdin, or --file FILE (one of them)"
        )
    if text == "-":
        data, where = sys.stdin.buffer.read(), "stdin"
    elif file is not None:
        try:
            data, where = file.read_bytes(), str(file)
        except OSError as exc:
            raise InputError(f"--file {file}: {exc.strerror or exc}") from None
    else:
        assert text is not None  # exactly one of text and file, checked above
        return text
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: not UTF-8 text (byte {exc.start})") from None


def remember_cmd(
    text: str | None = typer.Argument(
        None,
        help="What to remember (secrets are redacted first); - reads it from stdin.",
        show_default=False,
    ),
    file: Path | None = typer.Option(
        None,
        "--file",
        metavar="FILE",
        show_default=False,
        help="Read what to remember from FILE (UTF-8).",
    ),
    type_: str = typer.Option("fact", "--type", help="Kind of memory, e.g. fact, decision."),
    tags: list[str] = typer.Option([], "--tag", help="A tag (repeatable)."),
    importance: float = typer.Option(0.5, "--importance", help="0..1."),
    source: str | None = typer.Option(None, "--source", help="The session key it came from."),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Remember TEXT (stored once: the same text again is reported as already remembered).
    A text with no word recall could search for (only symbols or words such as "the") is
    refused.
    Prints the memory's id on stdout (``id=$(continuity remember ...)``) and
    ``remembered <id>`` or ``already remembered <id>`` on stderr."""
    text = _text_to_remember(text, file)
    with open_workspace(home) as ws:
        done = ws.remember(text, type=type_, tags=tags, importance=importance, source=source)
    if as_json:
        emit_json(done.to_dict())
        return
    out.print(done.id, markup=False, highlight=False)  # fresh-user review: scripts need it
    err.print(f"{'already remembered' if done.deduped else 'remembered'} {done.id}", markup=False)


def recall_cmd(
    query: str = typer.Argument(
        ...,
        help="What to recall, in words or in other words (best "
        'match first; "quoted text" must appear as written). '
        "Empty: a usage error.",
        callback=nonempty_query,
    ),
    expand: bool = typer.Option(
        False, "--expand", help="Also print the sanitized transcript of each result's session."
    ),
    limit: int = count_option(
        10, "memories", flags=("-n", "--limit"), maximum=RECALL_MOST, capped=True
    ),
    type_: str | None = typer.Option(None, "--type", help="Only memories of this type."),
    tags: list[str] = typer.Option([], "--tag", help="Only memories with this tag (repeatable)."),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Recall memories matching QUERY, most relevant first.

    Exit status, as grep's: 0 when a memory matched, 1 when none did, 2 for a usage error
    (an empty QUERY)."""
    # issue 40: ranked by words and meaning; issue 45 item 8: only reads
    with open_workspace(home, read_only=True) as ws:
        found = ws.recall(query, limit=limit or RECALL_MOST, expand=expand, type=type_, tags=tags)
    from continuity.cli.lines import capped_note

    capped = limit == 0 and len(found.results) >= RECALL_MOST
    from continuity.cli.lines import no_memory_message, recall_lines

    if as_json:
        emit_json(found.to_dict())
        if not found.results:  # stdout stays JSON; why nothing came back goes to stderr
            err.print(no_memory_message(query, type_, tags), markup=False)
            raise typer.Exit(EXIT_NO_MATCH)
        if capped:  # as the daemon's client says it (cli.fast)
            err.print(capped_note("recall", RECALL_MOST, "memories"), markup=False)
        return
    lines = recall_lines(found.to_dict())  # as the daemon's client prints them (cli.fast)
    if not found.results:
        err.print(no_memory_message(query, type_, tags), markup=False)
    from continuity.cli.render import shown

    sys.stdout.write("".join(shown(line) + "\n" for line in lines))  # issue 45 item 6
    if not found.results:
        raise typer.Exit(EXIT_NO_MATCH)
    if capped:
        err.print(capped_note("recall", RECALL_MOST, "memories"), markup=False)


def register(app: typer.Typer) -> None:
    """Add ``transcript``, ``remember`` and ``recall`` to the ``continuity`` app."""
    app.command("transcript")(transcript_cmd)
    app.command("remember")(remember_cmd)
    app.command("recall")(recall_cmd)
