"""The `continuity` command: a thin shell over the library (parse, resolve, one call, render).

JSON goes to stdout unformatted by Rich; progress and confirmations go to stderr, and progress is
off under ``--json`` or without a terminal. Every ``ContinuityError`` becomes one line on stderr
and its exit code (``CONTINUITY_RAISE_ERRORS=1`` shows the traceback instead).

Over 600 lines: the Typer application's root: the global options and the core commands (import,
sessions, show, continue) that the README's first command runs; the other commands already live
in ``cli.commands``, loaded lazily.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer

from continuity.cli.commands import LazyGroup
from continuity.cli.output import RAW_WARNING, closed_pipe
from continuity.core.config import database_url, resolve_home
from continuity.core.errors import ContinuityError, InputError
from continuity.core.model import MAX_SEQ
from continuity.core.text import counted

#: The core commands below (import, sessions, show, continue, where): the root group converts
#: only the one that runs (``LazyGroup.own``), listed first in ``--help`` as they are defined.
core = typer.Typer(rich_markup_mode=None)


class _Root(LazyGroup):
    own = core

    def main(
        self,
        args: Any = None,
        prog_name: Any = None,
        complete_var: Any = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Click's ``main``, but a usage error (an unknown option, a missing or bad argument,
        in any command) is ONE line on stderr, exit 2, as the README promises (issue 45 item
        8: Click printed a four-line block): ``error: <what> (see continuity CMD --help)``.
        Everything else is as Click's standalone mode does it."""
        # the exceptions of the Click Typer runs on (Typer 0.29 vendors it: ``typer._click``)
        click = sys.modules[typer.BadParameter.__module__]
        extra["windows_expand_args"] = windows_expand_args
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except SystemExit as exc:
            # Click ends a command whose reader closed the pipe with 1, its streams wrapped
            # in PacifyFlushWrapper: ours says what the fast path says (``closed_pipe``)
            if exc.code == 1 and type(sys.stdout).__name__ == "PacifyFlushWrapper":
                sys.stdout = sys.__stdout__
                sys.exit(closed_pipe())
            raise
        except click.UsageError as exc:
            if isinstance(exc, getattr(click, "NoArgsIsHelpError", ())):
                exc.show()  # `continuity` alone, a group alone: the help, as before
            else:
                words = list(args) if args is not None else sys.argv[1:]
                sys.stderr.write(usage_error_line(exc, dash_query_hint(exc, words)) + "\n")
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except typer.Abort:
            sys.stderr.write("Aborted!\n")
            sys.exit(1)
        if rv == 130:  # Typer's own KeyboardInterrupt: it ended the command without a word
            failed(KeyboardInterrupt())  # fresh-user review: say what a Ctrl-C left
        # Typer returns a command's exit code (``typer.Exit``, ``ctx.exit``) or its return
        # value, which is None for every command of ours
        sys.exit(rv if isinstance(rv, int) and not isinstance(rv, bool) else 0)


def usage_error_line(exc: Any, hint: str = "") -> str:
    """One line for a Click usage error (issue 45 item 8): ``error: <message><hint> (see
    continuity CMD --help)``, CMD the command whose usage it is (none for the root); line
    breaks in the message become spaces; control and bidi characters (an option or path the
    user typed) their visible escapes, as every line the CLI prints (issue 45). ``hint``:
    text after the message (``dash_query_hint``)."""
    from continuity.core.text import CONTROL_ESCAPES

    message = " ".join(exc.format_message().split()).rstrip(".") + hint
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "continuity"
    return f"error: {message.translate(CONTROL_ESCAPES)} (see {where} --help)"


#: The commands whose QUERY may start with ``-`` (``dash_query_hint``), with the verb the
#: hint uses.
QUERY_VERBS = {"search": "search for", "recall": "recall"}


def dash_query_hint(exc: Any, words: list[str]) -> str:
    """``; to search for text that starts with '-', put -- before it: `continuity search --
    -phoenix``` when Click's usage error ``exc`` of ``search`` or ``recall`` came from a
    QUERY starting with ``-`` that Click read as short options (fresh-user review: ``search
    -phoenix`` said only "No such option: -p"; ``search -nope`` took ``ope`` as ``-n``'s
    value). ``words``: the command line after ``continuity``. The command shown is that line
    with the word moved after ``--``, and is given only when it parses with the word as the
    QUERY and nothing left over; else ``""``."""
    import shlex

    click = sys.modules[typer.BadParameter.__module__]
    ctx = getattr(exc, "ctx", None)
    if ctx is None or ctx.info_name not in QUERY_VERBS or ctx.info_name not in words:
        return ""
    at = words.index(ctx.info_name)
    own = words[at + 1 :]
    own = own[: own.index("--")] if "--" in own else own
    # the short options the word starts with; ``glued``: one that takes a value glued on
    if isinstance(exc, click.NoSuchOption) and not exc.option_name.startswith("--"):
        starts, glued = [exc.option_name], False
    elif (
        isinstance(exc, click.BadParameter)
        and getattr(exc.param, "param_type_name", None) == "option"
    ):
        starts, glued = [o for o in exc.param.opts if not o.startswith("--")], True
    else:
        return ""
    for i, word in enumerate(own):
        if word.startswith("--") or not any(
            word.startswith(o) and (word != o or not glued) for o in starts
        ):
            continue
        rest = own[:i] + own[i + 1 :]
        try:  # the command shown must parse: this word the QUERY, nothing left over
            tried = ctx.command.make_context(
                ctx.info_name, [*rest, "--", word], parent=ctx.parent, resilient_parsing=True
            )
        except click.ClickException:
            return ""
        if tried.params.get("query") != word or tried.args:
            return ""
        line = shlex.join(["continuity", *words[:at], ctx.info_name, *rest, "--", word])
        return (
            f"; to {QUERY_VERBS[ctx.info_name]} text that starts with '-', put -- before it: "
            f"`{line}`"
        )
    return ""


app = typer.Typer(
    name="continuity",
    help="Memory for coding agents that survives compaction, crashes and new sessions.\n\n"
    "Import the session files your agents wrote, then get the bounded continuation the "
    "next run should be handed.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, pwsh)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every command
    cls=_Root,  # each command is converted, its module imported, when asked for (issue 17)
)
db_app = typer.Typer(help="Database schema commands.", no_args_is_help=True)
app.add_typer(db_app, name="db")


def _print_version(value: bool) -> None:
    """The eager ``--version`` of the app and of every command: ``continuity 0.1.0``."""
    if value:
        from continuity.core.version import package_version

        print(f"continuity {package_version()}")
        raise typer.Exit()


from continuity.cli.commands.common import (  # noqa: E402
    HOME_HELP,
    BudgetOption,
    HomeOption,
    JsonOption,
    SessionArgument,
    SessionHarness,
    TeamReadOption,
    bad_option,
    count_option,
    emit_json as _emit_json,
    err,
    out,
    parse_home,
)


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        callback=_print_version,
        help="Print the version and exit.",
    ),
    home: Path | None = typer.Option(
        None,
        "--home",
        help=HOME_HELP + " Also accepted after the command, where it wins.",
        show_default=False,
        parser=parse_home,
    ),
) -> None:
    """Memory for coding agents that survives compaction, crashes and new sessions."""


# ---------------------------------------------------------------------------- commands


@core.command("import")
def import_cmd(
    paths: list[str] = typer.Argument(
        ...,
        help="Session files or folders (searched for session files): "
        "~/.claude/projects, ~/.codex/sessions, ~/.pi/agent/sessions, "
        "~/.gemini/tmp, ~/.local/share/opencode, ... (`continuity harnesses` "
        "lists every harness's folders).",
        show_default=False,
    ),
    no_embed: bool = typer.Option(
        False,
        "--no-embed",
        help="Do not embed the imported rows "
        "now (the daemon embeds them in the background; until then "
        "search finds them by words).",
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Import sessions of every harness `continuity harnesses` lists with import (detected
    from content): Claude Code, Codex, pi, OpenCode, Gemini CLI, Qwen Code, Copilot CLI, ...

    Re-importing adds nothing; a file that grew adds only its new lines. Bad lines are reported
    with file and line number, and the rest imports. Each imported session is replayed through
    the checkpoint rules, so its checkpoints exist as live capture would have written them.
    A file another import is writing at the same time is waited for (up to 120 s) and then
    imported from where that one got. When a file failed (e.g. that wait ran out)
    the others still import and the exit code is not 0: 4 a store problem, 2 a file that
    cannot be read. Then the rows not yet embedded are embedded for search by meaning (with
    the semantic extra; --no-embed skips it).
    """
    from continuity.cli.commands.common import open_workspace

    with open_workspace(home) as ws:
        result = ws.import_(paths, embed=not no_embed, progress=_ImportBars(enabled=not as_json))
    if as_json:
        _emit_json(result.to_dict())
    else:
        from continuity.cli.render import import_summary

        import_summary(out, err, result)
        for failure in result.transcripts_failed:
            err.print(
                f"warning: transcript of session {failure.session} not captured: {failure.reason}",
                markup=False,
            )
        for failure in result.checkpoints_failed:
            err.print(
                f"warning: checkpoints of session {failure.session} not replayed: {failure.reason}",
                markup=False,
            )
        err.print(
            f"{counted(result.checkpoints_replayed, 'checkpoint')} replayed, "
            f"{counted(result.transcripts_written, 'transcript')} written"
        )
        embedded = result.embedded
        if embedded is not None and (embedded.embedded or embedded.left):
            err.print(
                f"{embedded.embedded} rows embedded for search by meaning"
                + (f", {embedded.left} left (interrupted)" if embedded.left else ""),
                markup=False,
            )
        gone, back = result.sources_gone, result.sources_back
        if gone or back:
            err.print(
                f"{gone} source file(s) gone since the last import, {back} back; their "
                "sessions are kept whole (`continuity sessions` shows source: gone)",
                markup=False,
            )
    if result.exit_code:
        failed = sum(1 for f in result.files if f.status == "failed")
        if result.exit_code != InputError.exit_code:  # a store problem: worth a retry
            err.print(
                f"error: {counted(failed, 'file')} failed to import; import "
                f"{'it' if failed == 1 else 'them'} again",
                markup=False,
            )
        elif failed:
            err.print(
                f"error: {counted(failed, 'path')} could not be read (shown as skipped or "
                "absent above, with the reason); the others were imported",
                markup=False,
            )
        else:
            err.print(
                "error: nothing imported: "
                + (
                    "the file is not a "
                    if len(result.files) == 1
                    else f"none of the {len(result.files)} files is a "
                )
                + "session file of a harness continuity reads (`continuity harnesses` "
                "lists them and their folders)",
                markup=False,
            )
        raise typer.Exit(result.exit_code)


@core.command("sessions")
def sessions_cmd(
    limit: int = count_option(50, "to list, newest first"),
    all_sessions: bool = typer.Option(False, "--all", help="List every session (as -n 0)."),
    harness: SessionHarness | None = typer.Option(
        None, "--harness", show_default=False, help="Only sessions of this harness."
    ),
    project: Path | None = typer.Option(
        None,
        "--project",
        metavar="DIR",
        show_default=False,
        help="Only sessions whose project folder is DIR or a folder inside it.",
    ),
    since: str | None = typer.Option(
        None,
        "--since",
        metavar="WHEN",
        show_default=False,
        help="Only sessions active since WHEN: a date or time "
        "(2026-12-01, 2026-12-01T09:30, UTC unless it says) "
        "or an age (90min, 12h, 7d, 2w).",
    ),
    team: bool = typer.Option(
        False,
        "--team",
        help="The team's sessions instead (the index the last `continuity sync` pulled), "
        "with author and machine; --project matches the repository wherever it is cloned.",
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """List imported sessions, newest first. Each has a title: the harness's own, else its
    first request. In a terminal, keys are shortened to a unique prefix, project
    folders from the left and times shown relative; piped or with --json every value is
    whole. A copy
    `continuity resume` wrote names the session it continues (copy of; --json also gives
    the original)."""
    from continuity.cli.commands.common import open_workspace, parse_since

    after = parse_since(since) if since is not None else None
    if team:
        from continuity.cli.commands.team import team_sessions_out

        if harness is not None:
            raise bad_option("--harness", "is not a filter of --team (yet)")
        team_sessions_out(home, 0 if all_sessions else limit, project, after, as_json)
        return
    with open_workspace(home, read_only=True) as ws:
        sessions = ws.sessions(
            0 if all_sessions else limit,
            harness=harness.value if harness else None,
            project=project,
            since=after,
        )
    if as_json:
        _emit_json([s.to_dict() for s in sessions])
        return
    from continuity.cli.render import sessions_table

    sessions_table(out, sessions)
    if not sessions:
        filtered = harness or project or since
        err.print(
            "no sessions match those filters"
            if filtered
            else "no sessions yet: "
            "import some (continuity import ~/.claude/projects ~/.codex/sessions "
            "~/.pi/agent/sessions)",
            markup=False,
        )


@core.command("show")
def show_cmd(
    session: str = SessionArgument,
    all_rows: bool = typer.Option(
        False,
        "--all",
        help="Also show rows outside the "
        "conversation (events, context, sidechains, unknown lines).",
    ),
    seq: int | None = typer.Option(
        None,
        "--seq",
        min=0,
        max=MAX_SEQ,
        help="Show the rows around row N "
        "(from N-5, 30 rows; every kind of row), e.g. a "
        "`continuity search` hit.",
    ),
    raw: bool = typer.Option(
        False, "--raw", help="Do not redact secrets: the stored text (a warning is printed)."
    ),
    tail: int | None = typer.Option(
        None,
        "--tail",
        min=0,
        max=MAX_SEQ,
        metavar="N",
        show_default=False,
        help="Only the last N rows shown (0: all).",
    ),
    from_seq: int | None = typer.Option(
        None, "--from", min=0, max=MAX_SEQ, metavar="SEQ", show_default=False, help="First row."
    ),
    to_seq: int | None = typer.Option(
        None, "--to", min=0, max=MAX_SEQ, metavar="SEQ", show_default=False, help="Last row."
    ),
    pager: bool = typer.Option(
        True,
        "--pager/--no-pager",
        help="In a terminal, page the output ($PAGER, else less); never when piped or --json.",
    ),
    team: bool = TeamReadOption,
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Show a session's log, readable (one block per row, with its seq), secrets redacted
    unless --raw."""
    from continuity.cli.commands.common import open_workspace

    if team and raw:
        raise bad_option("--raw", "a team session holds only redacted rows: --raw does not apply")

    if seq is not None and (tail is not None or from_seq is not None or to_seq is not None):
        raise InputError(
            "--seq shows the rows around one row: --tail, --from and --to do not apply"
        )
    if from_seq is not None and to_seq is not None and to_seq < from_seq:
        raise InputError(f"--to {to_seq} is before --from {from_seq}")
    span = {"from_seq": from_seq, "to_seq": to_seq, "tail": tail}
    if team:
        _show_team(home, session, all_rows, seq, span, pager, as_json)
        return
    with open_workspace(home, read_only=True) as ws:
        if as_json:
            shown = ws.show(session, raw=raw, all_rows=all_rows, seq=seq, **span).to_dict()
            if raw:  # as export's: the secrets are shown
                err.print(RAW_WARNING, markup=False)
            _emit_json(shown)
        else:
            from continuity.api.shapes import session_rows
            from continuity.cli.render import show_entries

            store = ws.store()
            key = ws.key(session)
            rows = session_rows(store, key, all_rows=all_rows, seq=seq, **span)
            # issue 45 review item 1: a secret found in any row is hidden wherever it
            # repeats; --raw redacts nothing, so it loads no redaction at all
            token = None
            if not raw:
                from continuity.redaction.funnel import SESSION_KNOWN
                from continuity.redaction.session import session_secrets

                token = SESSION_KNOWN.set(session_secrets(store, key))
            try:
                if raw:  # as export's, and before the rows: a reader of `| head` sees it too
                    err.print(RAW_WARNING, markup=False)
                with _paged(out, pager):
                    show_entries(out, store.get_session(key), rows, raw=raw)
            finally:
                if token is not None:
                    from continuity.redaction.funnel import SESSION_KNOWN

                    SESSION_KNOWN.reset(token)


def _show_team(
    home: Path | None,
    session: str,
    all_rows: bool,
    seq: int | None,
    span: dict[str, Any],
    pager: bool,
    as_json: bool,
) -> None:
    """``show --team``: a teammate's session read from the team store (issue 41), its
    author, machine and project first."""
    if as_json:
        from continuity.cli.commands.common import open_workspace

        with open_workspace(home, read_only=True) as ws:
            _emit_json(ws.show(session, all_rows=all_rows, seq=seq, team=True, **span).to_dict())
        return
    from continuity.api.shapes import session_rows
    from continuity.cli.render import show_entries
    from continuity.redaction.funnel import SESSION_KNOWN
    from continuity.redaction.session import session_secrets
    from continuity.team.pull import scratch_copy
    from continuity.team.settings import team_settings

    with scratch_copy(team_settings(home), session) as (store, ts):
        rows = session_rows(store, ts.key, all_rows=all_rows, seq=seq, **span)
        token = SESSION_KNOWN.set(session_secrets(store, ts.key))
        try:
            with _paged(out, pager):
                out.print(
                    f"team session {ts.key} · {ts.who} · {ts.project}",
                    markup=False,
                    highlight=False,
                )
                show_entries(out, store.get_session(ts.key), rows, raw=False)
        finally:
            SESSION_KNOWN.reset(token)


def _paged(console: Any, wanted: bool) -> Any:
    """``console.pager`` (Rich: ``$PAGER``, else ``less``, given ``-RFX`` through ``$LESS``
    when unset, so colours stay and a short output just prints) when ``wanted`` and the
    output is a terminal (issue 44); else a context that does nothing."""
    from contextlib import nullcontext

    if not wanted or not console.is_terminal or console.is_dumb_terminal:
        return nullcontext()
    import os

    os.environ.setdefault("LESS", "-RFX")
    return console.pager(styles=True)


@core.command("continue")
def continue_cmd(
    session: str = SessionArgument,
    budget: int = BudgetOption,
    team: bool = TeamReadOption,
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Print the continuation the next run of SESSION should be handed: the newest checkpoint,
    the previous request verbatim, and a recent tail within the budget with every tool call
    paired."""
    from continuity.cli.commands.common import open_workspace

    with open_workspace(home, read_only=True) as ws:
        view = ws.continuation(session, budget_bytes=budget, team=team)
    if as_json:
        _emit_json(view.to_dict())
    else:
        from continuity.cli.render import continuation_text

        if view.team:
            t = view.team
            out.print(
                f"team session {view.session} · {t['author']}@{t['machine']} · {t['project']}",
                markup=False,
                highlight=False,
            )
        continuation_text(out, view)
    if view.refusal:
        raise typer.Exit(5)


@db_app.command("upgrade")
def db_upgrade(home: Path | None = HomeOption) -> None:
    """Bring the database schema to the newest revision, and say which it was before."""
    from continuity.store import HEAD_REVISION, open_store_raw, schema_revision

    url = database_url(home)
    before = schema_revision(url)
    store = open_store_raw(url)
    store.close()
    # a fresh-user review: "schema is up to date" was said after an upgrade too
    if before == HEAD_REVISION:
        err.print(f"schema is up to date (revision {HEAD_REVISION})")
    elif before is None:
        err.print(f"created the schema at revision {HEAD_REVISION}")
    else:
        err.print(f"upgraded the schema from revision {before} to {HEAD_REVISION}")


@core.command("where")
def where_cmd(home: Path | None = HomeOption, as_json: bool = JsonOption) -> None:
    """Print the workspace folder and the database URL in use (its password hidden); warn
    on stderr about each folder or file in the workspace that other users can read.
    ``--json``: one object, ``home``, ``database``, ``exists`` (whether the folder does) and
    ``exposed`` (what others can read, as the warnings say it); the warnings are not
    printed then."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    url = database_url(home)
    try:
        shown = make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        raise InputError(f"not a database URL: {url!r}") from None
    if as_json:
        from continuity.core.private import exposed as _exposed

        folder = resolve_home(home)
        _emit_json(
            {
                "home": str(folder),
                "database": shown,
                "exists": folder.is_dir(),
                "exposed": [item.describe() for item in _exposed(folder)],
            }
        )
        return
    out.print(f"home: {resolve_home(home)}", markup=False)
    out.print(f"database: {shown}", markup=False)
    if not resolve_home(home).is_dir():  # a fresh-user review: a typo in --home went unsaid
        err.print(
            f"note: {resolve_home(home)} does not exist yet (`continuity import PATH`, "
            "`continuity serve` or a hook creates it)",
            markup=False,
            highlight=False,
        )
    from continuity.core.private import exposed

    found = exposed(resolve_home(home))
    for item in found[:20]:  # issue 16: a workspace others can read
        err.print(f"warning: {item.describe()}", markup=False, highlight=False)
    if len(found) > 20:
        err.print(
            f"warning: and {len(found) - 20} more folders or files other users can read",
            markup=False,
            highlight=False,
        )
    if found:
        from continuity.core.private import private_fix

        err.print(f"fix: {private_fix(resolve_home(home))}", markup=False, highlight=False)


class _ImportBars:
    """``continuity.api.workspace.ImportProgress`` as Rich progress bars on stderr, or
    nothing when disabled or not a TTY (issue 20): the bytes and files imported, with an ETA,
    and the step running now (importing, checkpoints, transcripts take turns, issue 17);
    then the rows embedded (issue 40), in a bar of its own once the first is gone. Notes (a
    model that did not load) go to stderr as they come, enabled or not."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled and err.is_terminal
        self._bar: Any = None
        self._task: Any = None
        self._files = self._done_files = 0
        self._embedding = False

    def _open(self, columns: list[Any], description: str, total: int, **fields: Any) -> None:
        from rich.progress import Progress

        self.stop()  # one live display at a time
        self._bar = Progress(*columns, console=err, transient=True)
        self._bar.start()
        self._task = self._bar.add_task(description, total=total, **fields)

    def start(self, total_bytes: int, files: int) -> None:
        if not self.enabled:
            return
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._files = files
        self._open(
            [
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[count]}"),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
            ],
            "importing",
            total_bytes,
            count=f"0/{files} files",
        )

    def advance(self, n: int) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, n)

    def file_done(self) -> None:
        if self._bar is not None:
            self._done_files += 1
            self._bar.update(self._task, count=f"{self._done_files}/{self._files} files")

    def phase(self, name: str) -> None:
        if self._bar is not None:
            self._bar.update(self._task, description=name)

    def embedding(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        if not self._embedding:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

            self._open(
                [
                    TextColumn("{task.description}"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TextColumn("rows"),
                    TimeRemainingColumn(),
                ],
                "embedding",
                total,
            )
            self._embedding = True
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=total)

    def note(self, line: str) -> None:
        err.print(line, markup=False)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = self._task = None


#: The placeholder a command's help shows for a value, by parameter name (issue 20: help
#: shows ``--home DIR``, never the Python type, ``<Path>`` or ``<list[str]>``).
METAVARS = {
    "home": "DIR",
    "project": "DIR",
    "paths": "PATH...",
    "limit": "N",
    "budget": "BYTES",
    "retention_days": "DAYS",
    "type_": "TYPE",
    "tags": "TAG",
    "importance": "0..1",
    "host": "ADDRESS",
    "port": "PORT",
    "timeout": "SECONDS",
    "harness": "HARNESS",
    "output": "FILE",
    "settings": "FILE",
    "as_of": "WHEN",
    "since": "WHEN",
}


def _name_value(param: Any) -> None:
    """Give ``param`` a placeholder a user reads (``METAVARS``, an argument's name in capitals,
    else ``TEXT``/``N``/``NUMBER``) unless it has one, is a flag, or offers choices."""
    if param.metavar is not None or getattr(param, "is_flag", False):
        return
    desc = getattr(param, "type_descriptor", None)  # Typer >= 0.29; older: Click's types
    is_choice = desc.is_choice if desc is not None else hasattr(param.type, "choices")
    annotation = (
        desc.annotation
        if desc is not None
        else {"integer": int, "float": float}.get(getattr(param.type, "name", ""))
    )
    if param.param_type_name == "argument":
        shown = param.metavar = METAVARS.get(param.name) or (
            param.name.upper() + ("..." if param.nargs != 1 else "")
        )
        # Typer writes a required argument ``{session}`` in the usage line and its Python
        # type beside it: a user reads ``SESSION`` (``[SESSION]`` when optional)
        param._usage_display_name = lambda: shown if param.required else f"[{shown}]"
        if not is_choice:
            param.display_type_rich = lambda ctx: None
    elif param.name in METAVARS:
        param.metavar = METAVARS[param.name]
    elif not is_choice:
        param.metavar = {int: "N", float: "NUMBER"}.get(annotation, "TEXT")


def command() -> Any:
    """The Click command ``main`` runs: the Typer app with ``--version`` added to every
    command and group (issue 20: ``continuity sessions --version`` answers as
    ``continuity --version`` does), and every parameter coerced without pydantic where it can
    be (``continuity.cli.coerce``). The command modules' commands get both as they load
    (``continuity.cli.commands.LazyGroup``: a command imports only its own module)."""
    import copy

    from continuity.cli.coerce import install_command as fast_coercion

    root = typer.main.get_command(app)
    assert isinstance(root, LazyGroup), root  # app's cls (_Root)
    version = copy.copy(next(p for p in root.params if p.name == "version"))
    version.expose_value = False  # the commands' functions take no ``version``

    def add(cmd: Any) -> None:
        if not any("--version" in p.opts for p in cmd.params):
            cmd.params.insert(0, version)
        for param in cmd.params:
            _name_value(param)
        fast_coercion(cmd)
        for sub in getattr(cmd, "commands", {}).values():
            add(sub)

    root.prepare = add  # each command module's commands, as they load
    for param in root.params:
        _name_value(param)
    fast_coercion(root)
    for sub in root.loaded_commands().values():
        add(sub)
    return root


def main() -> None:
    """Console-script entry point: the one place errors become exit codes (``failed``)."""
    from continuity.cli.output import tolerant_streams

    tolerant_streams()
    try:
        command()(prog_name="continuity")
    except (KeyboardInterrupt, ContinuityError, OSError, UnicodeError, TypeError) as exc:
        failed(exc)


def failed(exc: BaseException) -> NoReturn:
    """End the process for ``exc`` as every command does (the fast path too, ``cli.fast``):
    an interrupt exits 130 saying what stays; a reader that closed the pipe of the output
    (``| head``) ends it quietly (``closed_pipe``); a ``ContinuityError`` is one line on stderr
    and its exit code (the fixes it names keep the ``--home`` in use, issue 45 item 2); an
    ``OSError`` one line and 4. ``CONTINUITY_RAISE_ERRORS=1`` raises the error instead.
    Anything else is raised again."""
    if isinstance(exc, KeyboardInterrupt):
        err.print(
            "continuity: interrupted; what was committed stays (an import resumes where it stopped)"
        )
        raise SystemExit(130) from None
    if isinstance(exc, BrokenPipeError):
        raise SystemExit(closed_pipe()) from None
    if os.environ.get("CONTINUITY_RAISE_ERRORS"):
        raise exc
    if isinstance(exc, ContinuityError):
        from continuity.cli.commands.common import home_in_argv, homed_commands

        # the fix an error names keeps the --home in use (issue 45 item 2)
        text = homed_commands(str(exc), home_in_argv(sys.argv[1:]))
        err.print(f"continuity: {text}", markup=False, highlight=False)
        raise SystemExit(exc.exit_code) from None
    if isinstance(exc, OSError):  # the machine refused: a folder we may not enter, a deleted cwd
        err.print(f"continuity: {os_error_text(exc)}", markup=False, highlight=False)
        raise SystemExit(4) from None
    word = undecodable_argument(exc)
    if word is not None:
        err.print(
            f"continuity: the argument {word} holds bytes that are not UTF-8 text; "
            "give it as UTF-8",
            markup=False,
            highlight=False,
        )
        raise SystemExit(2) from None
    raise exc


def undecodable_argument(exc: BaseException) -> str | None:
    """The first command-line word holding bytes that are not UTF-8 (Python gives them as
    lone surrogates), shown with ``\\xNN`` escapes, when ``exc`` is what such a word raises
    where text must be UTF-8 (a session key or a filter reaching SQLite or orjson:
    ``UnicodeEncodeError``, orjson's "str is not valid UTF-8"); else None, and the error is
    a bug to show whole. Fresh-user review: ``show $'\\xff'`` and ``search x --tool
    $'\\xff'`` ended in a traceback; a path or a query holding such bytes is handled where it
    is read (``import``, ``search``'s words)."""
    if not isinstance(exc, UnicodeError) and not (
        isinstance(exc, TypeError) and "UTF-8" in str(exc)
    ):
        return None
    for word in sys.argv[1:]:
        if any("\udc80" <= ch <= "\udcff" for ch in word):
            from continuity.core.text import one_line

            shown = word.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            return f'"{one_line(shown)}"'  # control characters escaped too
    return None


def os_error_text(exc: OSError) -> str:
    """One line for an ``OSError`` the CLI did not expect (fresh-user review: a workspace the
    user may not enter, ``--home`` under a folder they may not write, a current folder
    deleted under the shell printed tracebacks): the path, the system's reason, and a hint;
    exit status 4, as a store that cannot be used."""
    where = f"{exc.filename}: " if exc.filename else ""
    reason = exc.strerror or exc.__class__.__name__
    if isinstance(exc, FileNotFoundError) and not exc.filename:
        reason += " (has the current folder been deleted? cd to one that exists)"
    elif isinstance(exc, PermissionError):
        reason += " (check the workspace's owner and mode, or pick another with --home)"
    return f"{where}{reason} (CONTINUITY_RAISE_ERRORS=1 shows the traceback)"


if __name__ == "__main__":  # pragma: no cover
    main()
