"""What every CLI command shares: the consoles, the shared options, opening the store, resolving
a session by key prefix, and JSON output (plain stdout, never through Rich)."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from continuity.cli.lines import with_home as with_home  # re-exported for the commands
from continuity.cli.output import emit_json as emit_json  # one JSON writer (issue 43 goal 3)
from continuity.core.config import FOLLOW_UP_BUDGET_BYTES, database_url
from continuity.core.errors import InputError
from continuity.core.text import CONTROL_ESCAPES


def escaped_text(text: Any) -> Any:
    """A Rich ``Text`` with every control and bidi character of its plain text shown as its
    visible escape (``core.text.CONTROL_ESCAPES``: ``\\x1b``, ``\\u202e``), its styles moved
    with the characters they cover; ``text`` itself when it holds none. (Rich's ``Text()``
    drops BEL, BS, VT, FF and CR on its own: build a ``Text`` from raw text with
    ``styled_escaped``.)"""
    if not any(ord(c) in CONTROL_ESCAPES for c in text.plain):
        return text
    return styled_escaped(
        text.plain, [(s.start, s.end, s.style) for s in text.spans], style=text.style, end=text.end
    )


def styled_escaped(plain: str, spans: Any, *, style: Any = "", end: str = "\n") -> Any:
    """A Rich ``Text`` of ``plain`` with each control and bidi character as its visible escape
    (``\\x1b``, ``\\r``, ``\\u202e``; README, issue 45) and each ``(start, end, style)`` of
    ``spans`` (offsets into ``plain``) styling the same characters in the escaped text."""
    from rich.text import Span, Text

    where = [0]  # where each character of ``plain`` (and its end) starts in the escaped text
    for c in plain:
        where.append(where[-1] + len(CONTROL_ESCAPES.get(ord(c), c)))
    new = Text(plain.translate(CONTROL_ESCAPES), style=style, end=end)
    new.spans = [
        Span(where[max(0, min(s, len(plain)))], where[max(0, min(e, len(plain)))], st)
        for s, e, st in spans
    ]
    return new


class SafeConsole(Console):
    """A Rich ``Console`` whose ``print`` shows every control and bidi character of what it is
    given (a string, markup or not, or a ``Text``) as its visible escape, on a terminal or
    piped (README, issue 45: an error naming a path, a path the CLI prints, a transcript's
    text can never move the cursor, recolour or reorder the terminal). Markup and Rich's own
    styles are untouched: they hold no such character."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        from rich.text import Text

        safe = [
            o.translate(CONTROL_ESCAPES)
            if isinstance(o, str)
            else escaped_text(o)
            if isinstance(o, Text)
            else o
            for o in objects
        ]
        super().print(*safe, **kwargs)

    def on_broken_pipe(self) -> None:
        """A reader that closed the pipe (``| head``): the command ends quietly with the
        status the fast path gives (``cli.app.closed_pipe``: 141), not Rich's 1, which
        ``search`` says for no match."""
        from continuity.cli.output import closed_pipe

        self.quiet = True
        raise SystemExit(closed_pipe())


def _consoles() -> tuple[Console, Console]:
    """stdout and stderr consoles. Colour and styles only on a terminal (Rich's detection),
    and none at all under ``NO_COLOR`` (any non-empty value, no-color.org): Rich alone would
    still send bold and dim there (issue 20)."""
    import os

    plain: dict[str, Any] = {"color_system": None} if os.environ.get("NO_COLOR") else {}
    return (
        SafeConsole(highlight=False, soft_wrap=True, **plain),
        SafeConsole(stderr=True, soft_wrap=True, highlight=False, **plain),
    )


out, err = _consoles()


class HarnessName(str, enum.Enum):
    """The harnesses continuity reads and hooks into (``--harness``, ``hooks install``)."""

    claude_code = "claude-code"
    codex = "codex"
    pi = "pi"
    opencode = "opencode"
    gemini_cli = "gemini-cli"
    qwen_code = "qwen-code"
    copilot_cli = "copilot-cli"


class SessionHarness(str, enum.Enum):
    """The harnesses whose sessions continuity imports (``sessions --harness``): the hooked
    ones and OpenCode, which is imported but has no hooks (fresh-user review: ``sessions`` listed
    OpenCode sessions and then refused ``--harness opencode``), the LangGraph threads the
    adapter records (``continuity.adapters.langgraph``, issue 46 item 2) and the OpenAI
    Agents SDK's sessions the ``agents`` extra's adapter records (``openai-agents``). The
    harnesses are the registry's ``import`` ones (``formats.registry``; a test holds them
    equal, issue 42)."""

    claude_code = "claude-code"
    codex = "codex"
    pi = "pi"
    opencode = "opencode"
    gemini_cli = "gemini-cli"
    qwen_code = "qwen-code"
    copilot_cli = "copilot-cli"
    cursor_agent = "cursor-agent"
    kilo = "kilo"
    factory_droid = "factory-droid"
    langgraph = "langgraph"
    openai_agents = "openai-agents"


def parse_home(value: str) -> Path:
    """``--home`` as given; ``""`` is a usage error (``typer.BadParameter``, exit 2) naming
    ``--home`` (fresh-user review: ``Path("")`` is the current folder, and ``--home ""`` wrote
    ``./continuity.db``; issue 45: a bad argument is a usage error)."""
    if value == "":
        raise typer.BadParameter("is empty: give a workspace folder")
    return Path(value)


def global_home(ctx: typer.Context | None, value: Path | None) -> Path | None:
    """``value`` (a command's ``--home``), else the ``--home`` given before the command
    (``continuity --home DIR sessions``, as ``git -C`` users expect; issue 20), else None."""
    if value is not None or ctx is None:
        return value
    root = ctx.find_root()
    return root.params.get("home") if root is not ctx else None


def check_workspace(ctx: typer.Context, value: Path | None) -> Path | None:
    """The callback of ``--home`` (Click runs it given or not, before the command): the
    workspace must not be a file and ``config.toml`` and the env overrides must parse with
    known section names (``core.config.check_config``: ``ConfigError``, exit 2; README,
    Configuration). Cheap: tomllib only, no feature's settings model. Returns the
    workspace the command uses (``global_home``)."""
    from continuity.core.config import check_config, resolve_home

    value = global_home(ctx, value)
    resolve_home(value)
    check_config(value)
    return value


def check_home_only(ctx: typer.Context, value: Path | None) -> Path | None:
    """The callback of ``doctor``'s ``--home``: the workspace must not be a file; a config
    problem is one of doctor's checks, not an exit."""
    from continuity.core.config import resolve_home

    value = global_home(ctx, value)
    resolve_home(value)
    return value


HOME_HELP = "Workspace folder (default: $CONTINUITY_HOME or the platform's user data folder)."
HomeOption = typer.Option(
    None, "--home", help=HOME_HELP, show_default=False, parser=parse_home, callback=check_workspace
)
#: ``--home`` without the config check (``continuity doctor`` reports it as a check).
HomeOptionNoConfigCheck = typer.Option(
    None, "--home", help=HOME_HELP, show_default=False, parser=parse_home, callback=check_home_only
)
JsonOption = typer.Option(False, "--json", help="Print JSON on stdout.")
#: issue 41: ``show``, ``continue``: a teammate's session, read from the team store.
TeamReadOption = typer.Option(
    False,
    "--team",
    help="A session of the team store (a teammate's, or yours from another machine), with "
    "its author and machine.",
)


# ---------------------------------------------------------------------------- completion
# Issue 44: shell completion (``continuity --install-completion``) of session keys, harnesses,
# ``resume --in`` targets and export formats. A completion never fails: any error completes
# nothing.

#: Session keys offered at most per completion.
COMPLETE_SESSIONS = 50


def complete_sessions(ctx: typer.Context, incomplete: str) -> list[str]:
    """Session keys starting with ``incomplete`` (the newest ``COMPLETE_SESSIONS`` when it is
    empty) from the workspace of the command line's ``--home`` (given before or after the
    command), its database opened read-only: one indexed query, nothing else loaded."""
    try:
        home = ctx.params.get("home") or ctx.find_root().params.get("home")
        if not home:  # a --home after the SESSION being completed is not parsed yet (bash)
            import os

            words = os.environ.get("COMP_WORDS", "").split()
            home = next((words[i + 1] for i, w in enumerate(words[:-1]) if w == "--home"), None)
        with open_cli_store(Path(home) if home else None, read_only=True) as store:
            found = (
                store.find_sessions(incomplete, limit=COMPLETE_SESSIONS)
                if incomplete
                else store.list_sessions(limit=COMPLETE_SESSIONS)
            )
        return [s.key for s in found]
    except Exception:  # noqa: BLE001 - a completion must never print a traceback
        return []


def _choices(values: list[str]) -> Any:
    def complete(incomplete: str) -> list[str]:
        return [v for v in values if v.startswith(incomplete)]

    return complete


#: ``--harness`` values (``SessionHarness``) and ``resume --in`` targets, for completion.
complete_harnesses = _choices([h.value for h in SessionHarness])
complete_targets = _choices(
    ["claude-code", "codex", "pi", "opencode", "gemini-cli", "qwen-code", "copilot-cli"]
)
complete_export_formats = _choices(["md", "html", "jsonl", "source"])


#: The SESSION argument of every command that names one session (a key or a unique prefix),
#: completed from the workspace's keys.
def nonempty_session(value: str) -> str:
    """The callback of every SESSION argument: an empty or blank one is a usage error, exit 2
    (a fresh-user review: `show ''` said "no session matches ''", exit 3, where `search ''`
    was a usage error). Returns ``value`` unchanged."""
    if not value.strip():
        raise typer.BadParameter("is empty: give a session key or a unique prefix of one")
    return value


SessionArgument = typer.Argument(
    ...,
    callback=nonempty_session,
    help="Session key or a unique prefix of it (a prefix of a session and of its subagents' "
    "sessions, KEY/agent-..., names the session).",
    autocompletion=complete_sessions,
)
#: A budget over 1 TB means nothing and would not survive JSON as an exact integer.
MAX_BUDGET_BYTES = 10**12
#: seed 002: the 240,000-byte follow-up budget (the help says it without the seed).
BudgetOption = typer.Option(
    FOLLOW_UP_BUDGET_BYTES,
    "--budget",
    min=1,
    max=MAX_BUDGET_BYTES,
    help="How many UTF-8 bytes of history the continuation may hold (default 240,000).",
    show_default=False,
)


#: The largest ``-n`` any listing takes (issue 20: one rule for every ``-n``). Larger values
#: mean nothing for a listing and, past 2**63, no database could even compare them.
MAX_COUNT = 1_000_000


def count_option(
    default: int | None,
    what: str,
    *,
    flags: tuple[str, ...] = ("-n", "--count"),
    maximum: int = MAX_COUNT,
    capped: bool = False,
) -> Any:
    """The ``-n`` option of a listing, one rule everywhere (issue 20): a whole number from 0
    to ``maximum`` (``MAX_COUNT``), where 0 means all; anything else, a negative number or one
    too large (``9223372036854775808``), is a usage error naming ``-n`` (exit 2). ``capped``:
    the command prints at most ``maximum`` however many match (``search``: 500, ``recall``:
    100), so 0 means all up to it, and the command says on stderr when it found that many
    (``cli.lines.capped_note``); the help says so."""
    shown = "all" if default in (None, 0) else str(default)
    zero = (
        f"0 = all, up to {maximum:,}: a note on stderr says when {maximum:,} were found "
        "and more may match"
        if capped
        else f"0 = all; at most {maximum:,}"
    )
    return typer.Option(
        default or 0,
        *flags,
        min=0,
        max=maximum,
        show_default=False,
        help=f"How many {what} (default {shown}; {zero}).",
    )


def bad_option(option: str, message: str) -> Exception:
    """A usage error (``typer.BadParameter``: one line, exit 2, ``error: Invalid value for
    'OPTION': MESSAGE (see continuity CMD --help)``) for a bad value of ``option`` found
    inside a command (issue 45, fresh-user review: such errors printed ``continuity: ...``,
    exit 1, with no pointer to the help). ``option`` is the option's name (``--mode``) or
    an argument's metavar (``NAME``); the caller raises what this returns."""
    return typer.BadParameter(message, param_hint=f"'{option}'")


def parse_since(value: str, *, now: Any = None) -> Any:
    """``--since``: ``continuity.core.when.parse_when`` (an age such as ``90min``, ``12h``,
    ``7d``, ``2w``, or an ISO 8601 date or time, UTC when it names no offset), as an aware
    datetime; anything else is a usage error (``typer.BadParameter``) naming ``--since``."""
    return parse_option_time(value, "--since", now=now)


def parse_option_time(value: str, option: str, *, now: Any = None) -> Any:
    """``continuity.core.when.parse_when`` of an option's value, its ``InputError`` a usage
    error (``typer.BadParameter``, exit 2) naming ``option`` (issue 45)."""
    from continuity.core.when import parse_when

    try:
        return parse_when(value, now=now, field_name=option)
    except InputError as exc:
        raise typer.BadParameter(str(exc)) from None


def open_cli_store(home: Path | None, *, read_only: bool = False):
    """The store of the workspace (or ``$CONTINUITY_DATABASE_URL``), as a context manager;
    ``read_only`` (commands that only read) opens the database of a workspace that cannot be
    written read-only instead of failing (``continuity.store.open_store``), and a workspace
    named by ``--home`` or ``$CONTINUITY_HOME`` must exist: such a command creates none
    (``core.config.existing_home``: ``InputError``, exit 2)."""
    from continuity.store import open_store

    if read_only:
        from continuity.core.config import existing_home

        existing_home(home)
    return open_store(database_url(home), read_only=read_only)


def open_workspace(home: Path | None, *, read_only: bool = False) -> Any:
    """The ``continuity.Workspace`` of ``--home`` (or the default workspace), its database
    opened at first use; a context manager that closes it. ``read_only`` as
    ``open_cli_store``'s (an absent workspace named by ``--home`` or ``$CONTINUITY_HOME`` is
    an ``InputError``, none is created), and then also ``fast_read`` (``store.lite``). Every
    command that has a ``Workspace`` method calls it (issue 46: the CLI and the library give
    the same answers)."""
    if read_only:  # a command that only reads reads through sqlite3 where it can (issue 43)
        return _reading_workspace()(home, read_only=True, fast_read=True)
    from continuity.api.workspace import Workspace

    return Workspace(home)


_READING: list[Any] = []


def _reading_workspace() -> Any:
    """The ``Workspace`` class of ``open_workspace(home, read_only=True)``, made on first use
    (``api.workspace`` is not imported with this module): its ``store()`` first checks that a
    workspace named by ``--home`` or ``$CONTINUITY_HOME`` exists (``core.config.existing_home``:
    ``InputError``, exit 2; none is created), when the store is first opened, so a command's
    own usage errors (a ``--since`` that is no time) still come first."""
    if not _READING:
        from continuity.api.workspace import Workspace
        from continuity.core.config import existing_home

        class ReadingWorkspace(Workspace):
            def store(self) -> Any:
                if self._store is None and not self._closed:
                    existing_home(self._home)
                return super().store()

        _READING.append(ReadingWorkspace)
    return _READING[0]


def resolve_session(store: Any, name: str) -> str:
    """The session key named by ``name`` (``continuity.store.names.resolve_session``: an
    exact key or a unique prefix). Raises ``SessionNotFound`` or ``AmbiguousSession``."""
    from continuity.store.names import resolve_session as resolve

    return resolve(store, name)


#: Exit status of ``search`` and ``recall`` when nothing matched (issue 45 item 8), as
#: grep and rg: 0 something matched, 1 nothing did, 2 a usage error (an empty QUERY).
EXIT_NO_MATCH = 1


def nonempty_query(value: str) -> str:
    """The callback of the QUERY argument of ``search`` and ``recall`` (issue 45 item 8: one
    rule for both, as grep and rg): a query of white space only is a usage error, exit 2.
    Returns ``value`` unchanged."""
    if not value.strip():
        raise typer.BadParameter("is empty: give the words to find")
    return value


def homed_commands(text: str, home: Path | None) -> str:
    """``text`` with ``with_home`` applied to every backticked `continuity ...` command in
    it that names no ``--home`` yet (issue 45 item 2: a hint or an error's fix, run as
    printed, keeps the workspace in use)."""
    import re

    if home is None:
        return text
    return re.sub(
        r"`(continuity [^`]*)`",
        lambda m: m.group(0) if "--home" in m.group(1) else f"`{with_home(m.group(1), home)}`",
        text,
    )


def home_in_argv(argv: list[str]) -> Path | None:
    """The last ``--home DIR`` (or ``--home=DIR``) of a command line, else None: the
    workspace an error's fix line must keep (``homed_commands``)."""
    found: Path | None = None
    for i, word in enumerate(argv):
        if word == "--home" and i + 1 < len(argv) and argv[i + 1]:
            found = Path(argv[i + 1])
        elif word.startswith("--home=") and len(word) > 7:
            found = Path(word[7:])
    return found
