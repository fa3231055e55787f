"""The read commands without Typer (issue 43 goal 3: ``sessions``, ``show`` and ``continue`` as
processes within 100 ms and 6x ``python -c pass``; they took 500 ms, most of it importing
Typer, Rich, SQLAlchemy and pydantic), ``import`` when nothing changed (goal 4: an
unchanged re-import; ``_import`` says when), and ``search`` and ``recall`` as clients of the
running daemon (``_search``, ``_recall``: the daemon has the embedding model and the vectors
loaded, where the command alone spent 1.5 s loading them).

``run(argv)`` runs ``argv`` when it is one of those commands in a form this module parses
exactly as Click does (the options each command declares in ``cli.app``, as ``--opt VALUE``
or ``--opt=VALUE``, the last of a repeated option winning), every value one it takes
without a question (a whole number in range, a known harness, a ``--since`` that parses, a
non-empty string), and its output is JSON or stdout is not a terminal (where Rich prints
plain characters: ``cli.output.plain_line``). Anything else (``--help``, ``--version``, an
unknown or bad option, a terminal) returns None before doing anything, and the console entry
(``cli.hookcmd.console``) runs the Typer application as before, which prints the same help
and the same usage errors. The commands do what ``cli.app``'s do, through the same calls
(``api.Workspace``'s store calls on ``store.lite``, ``cli.lines``, ``cli.output.emit_json``),
and end with the same errors and exit codes (``cli.app.failed``);
``tests/cli/test_fast_path.py`` compares both paths' stdout, stderr and exit status.

Over 600 lines: one parser (``_parse``) and one set of value checks (``_number``, ``_home``,
``_Unsure``) decide for every command whether this path may run it exactly as Click would;
a module per command would each import them back, and the rule "anything unsure goes to
Typer" would no longer be readable in one place.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3), and no
    # ``pathlib`` either for ``sessions``, ``show`` and ``continue`` (``core.paths``)
    from pathlib import Path
    from typing import Any

#: The commands ``run`` may take: ``{command: (flags, options with a value)}``.
COMMANDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "sessions": (
        frozenset({"--json", "--all"}),
        frozenset({"-n", "--count", "--harness", "--project", "--since", "--home"}),
    ),
    "show": (frozenset({"--json", "--all", "--raw"}), frozenset({"--seq", "--home"})),
    "continue": (frozenset({"--json"}), frozenset({"--budget", "--home"})),
    "import": (frozenset({"--json", "--no-embed"}), frozenset({"--home"})),
    "recall": (
        frozenset({"--json", "--expand"}),
        frozenset({"-n", "--limit", "--type", "--home"}),
    ),
    "search": (
        frozenset({"--json", "--here"}),
        frozenset(
            {"-n", "--count", "--harness", "--since", "--until", "--role", "--tool", "--mode"}
            | {"--home"}
        ),
    ),
}
#: ``recall``'s bound (``cli.commands.memory.RECALL_MOST``).
RECALL_MOST = 100
#: ``search``'s choices, bound and default (``cli.commands.browse``: ``MODES``, ``--role``,
#: ``MAX_HITS``, ``--count``'s default).
SEARCH_MODES, SEARCH_ROLES, MAX_HITS, SEARCH_HITS = (
    ("hybrid", "words", "vectors"),
    ("user", "assistant", "tool", "system"),
    500,
    20,
)
#: How long the search client waits for the daemon before it searches in-process, in seconds.
SEARCH_SECONDS = 5.0
#: Settings the import's phases validate with pydantic (``[continuity]`` by the checkpoint
#: replay, ``[transcripts]`` by the transcripts): with either, the Typer path checks them.
IMPORT_SECTIONS = ("continuity", "transcripts")
#: The frameworks ``sessions --harness`` takes besides the registry's harnesses with import
#: (``cli.commands.common.SessionHarness``; ``tests/cli/test_fast_path.py`` holds them equal).
FRAMEWORKS = ("langgraph", "openai-agents")
#: ``-n``'s bound (``cli.commands.common.MAX_COUNT``) and ``--budget``'s (``MAX_BUDGET_BYTES``).
MAX_COUNT, MAX_BUDGET_BYTES = 1_000_000, 10**12


class _Unsure(Exception):
    """This path does not take the command line: the Typer application will."""


def _parse(argv: list[str]) -> tuple[str, list[str], set[str], dict[str, str]]:
    """``(command, arguments, flags given, {option: last value})``; ``_Unsure`` for any word
    this path does not know."""
    command, words = argv[0], argv[1:]
    flags, valued = COMMANDS[command]
    args: list[str] = []
    given: set[str] = set()
    values: dict[str, str] = {}
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word in flags:
            given.add(word)
        elif word in valued:
            if i >= len(words) or words[i].startswith("-"):
                raise _Unsure  # a value that reads as an option: Click's to take or refuse
            values[word] = words[i]
            i += 1
        elif word.startswith("--") and word.split("=", 1)[0] in valued:
            name, value = word.split("=", 1)
            values[name] = value
        elif word.startswith("-") or not word:
            raise _Unsure  # --help, --version, -h, an unknown option, "--", an empty word
        else:
            args.append(word)
    if any(not v for v in values.values()):
        raise _Unsure
    if "--count" in values and "-n" in values:
        raise _Unsure  # which one was last is Click's to say
    return command, args, given, values


def _number(value: str | None, low: int, high: int) -> int | None:
    if value is None:
        return None
    if not (value.isascii() and value.isdigit()):
        raise _Unsure
    n = int(value)
    if not low <= n <= high:
        raise _Unsure
    return n


def _home(values: dict[str, str]) -> str | None:
    """``--home`` as the command's callback checks it (``common.check_workspace``): the
    workspace must not be a file and its ``config.toml`` must parse (``ConfigError``).
    The value as given (``core.config`` reads a text as it reads its ``Path``)."""
    from continuity.core.config import check_config, home_folder

    home = values.get("--home")
    home_folder(home)
    check_config(home)
    return home


def _read_home(values: dict[str, str]) -> str | None:
    """``_home`` for a command that only reads: also, as ``common.open_workspace(home,
    read_only=True)`` checks it when the command opens its store, a workspace named by
    ``--home`` or ``$CONTINUITY_HOME`` must exist (``core.config.existing_home``:
    ``InputError``), none is created."""
    from continuity.core.config import existing_home

    home = _home(values)
    existing_home(home)
    return home


def _client_home(values: dict[str, str]) -> tuple[str | None, str | None]:
    """``_home`` for a client of the daemon: ``--home`` and the path of its ``config.toml``
    when there is one, which the daemon reads for the client (``_daemon_post``: ``tomllib``
    is 10 ms of the client's start, issue 43 goal 3); the workspace and a ``config.toml``
    that is no file are checked here (``ConfigError``), as is everything when there is no
    file to read; then, as ``_read_home``, a workspace named by ``--home`` or
    ``$CONTINUITY_HOME`` must exist (``InputError``): search and recall only read."""
    from continuity.core.config import check_config, config_text_path, existing_home, home_folder

    home = values.get("--home")
    home_folder(home)
    config = config_text_path(home)
    if config is None:
        check_config(home)
    existing_home(home)
    return home, config


def _lite_store(home: str | None) -> Any:
    """The workspace's database through ``store.lite`` (as ``api.Workspace(fast_read=True)``
    opens it); ``_Unsure`` when only the full store can open it (it is absent, at another
    revision, PostgreSQL): then the Typer application runs the command."""
    from continuity.core.config import database_url
    from continuity.store.lite import open_lite

    url = database_url(home)
    if "://" not in url:
        from pathlib import Path

        url = f"sqlite:///{Path(url).expanduser()}"
    store = open_lite(url, read_only=True)
    if store is None:
        raise _Unsure
    return store


def _note(line: str) -> None:
    """One fixed line of ours on stderr (ASCII, no markup: what ``err.print(line,
    markup=False)`` writes, terminal or not)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _write_lines(lines: Any) -> None:
    from continuity.cli.lines import plain
    from continuity.cli.output import plain_line

    write = sys.stdout.write
    for parts in lines:
        write(plain_line(plain(parts)))
    sys.stdout.flush()


def _sessions(args: list[str], given: set[str], values: dict[str, str]) -> int:
    if args:
        raise _Unsure
    as_json = "--json" in given
    limit = _number(values.get("-n", values.get("--count")), 0, MAX_COUNT)
    harness = values.get("--harness")
    if harness is not None and harness not in FRAMEWORKS:
        from continuity.formats.registry import names

        if harness not in names("import"):
            raise _Unsure
    after = None
    if "--since" in values:
        from continuity.core.errors import InputError
        from continuity.core.when import parse_when

        try:
            after = parse_when(values["--since"], field_name="--since")
        except InputError:
            raise _Unsure from None
    if not as_json:
        from continuity.cli.output import plain_stdout

        if not plain_stdout():
            raise _Unsure
    home = _read_home(values)
    project = None
    if "--project" in values:
        from pathlib import Path

        project = Path(values["--project"])
    store = _lite_store(home)
    try:
        # ``api.Workspace.sessions`` without the ``api.results`` types (their to_dict() is
        # this dict): the same store calls, the same shapes (``api.shapes``)
        from continuity.api.shapes import resume_copies, session_dict

        found = store.list_sessions(
            limit=0 if "--all" in given else (50 if limit is None else limit),
            harness=harness,
            project=str(project.expanduser().resolve()) if project is not None else None,
            since=after,
        )
        copies = resume_copies(store, [s.key for s in found])
        from continuity.browse.titles import session_titles

        named = session_titles(store, found)  # kept titles: no row read (store.titles)
        sessions = [session_dict(s, copies.get(s.key), title=named.get(s.key)) for s in found]
    finally:
        store.close()
    if as_json:
        from continuity.cli.output import emit_json

        emit_json(sessions)
        return 0
    from types import SimpleNamespace

    from continuity.cli.lines import sessions_tsv

    sys.stdout.write(sessions_tsv([SimpleNamespace(**s) for s in sessions]))  # type: ignore[arg-type] - the record's fields
    sys.stdout.flush()
    if not sessions:
        filtered = harness or project or "--since" in values
        _note(
            "no sessions match those filters"
            if filtered
            else "no sessions yet: "
            "import some (continuity import ~/.claude/projects ~/.codex/sessions "
            "~/.pi/agent/sessions)"
        )
    return 0


def _show(args: list[str], given: set[str], values: dict[str, str]) -> int:
    from continuity.core.model import MAX_SEQ

    if len(args) != 1 or not args[0].strip():  # an empty SESSION: the command's usage error
        raise _Unsure
    session = args[0]
    seq = _number(values.get("--seq"), 0, MAX_SEQ)
    as_json, raw, all_rows = "--json" in given, "--raw" in given, "--all" in given
    if not as_json:
        from continuity.cli.output import plain_stdout

        if not plain_stdout():
            raise _Unsure
    home = _read_home(values)
    store = _lite_store(home)
    try:
        # ``api.Workspace.show`` without ``api.workspace`` (it loads ``typing``) nor the
        # ``api.results`` type (its to_dict() is this dict): the same store calls
        from continuity.store.names import resolve_session

        key = resolve_session(store, session)
        if as_json:
            from continuity.api.shapes import session_rows_dict
            from continuity.cli.output import emit_json

            found = session_rows_dict(store, key, raw=raw, all_rows=all_rows, seq=seq)
            if raw:  # as cli.app's show --json --raw, before the output
                from continuity.cli.output import RAW_WARNING

                _note(RAW_WARNING)
            emit_json({**found, "entries": list(found["entries"])})
        else:
            from continuity.api.shapes import session_rows
            from continuity.cli.lines import show_lines

            rows = session_rows(store, key, all_rows=all_rows, seq=seq)
            token = None
            if not raw:  # as cli.app's show: a secret of any row hidden where it repeats
                from continuity.redaction.funnel import SESSION_KNOWN
                from continuity.redaction.session import session_secrets

                token = SESSION_KNOWN.set(session_secrets(store, key))
            try:
                if raw:  # before the rows: a reader that stops early (| head) still sees it
                    from continuity.cli.output import RAW_WARNING

                    _note(RAW_WARNING)
                _write_lines(show_lines(store.get_session(key), rows, raw=raw))
            finally:
                if token is not None:
                    from continuity.redaction.funnel import SESSION_KNOWN

                    SESSION_KNOWN.reset(token)
    finally:
        store.close()
    return 0


def _continue(args: list[str], given: set[str], values: dict[str, str]) -> int:
    from continuity.core.config import FOLLOW_UP_BUDGET_BYTES

    if len(args) != 1 or not args[0].strip():  # an empty SESSION: the command's usage error
        raise _Unsure
    budget = _number(values.get("--budget"), 1, MAX_BUDGET_BYTES)
    as_json = "--json" in given
    if not as_json:
        from continuity.cli.output import plain_stdout

        if not plain_stdout():
            raise _Unsure
    home = _read_home(values)
    store = _lite_store(home)
    try:
        # ``api.Workspace.continuation`` without the ``api.results`` types (their to_dict()
        # is this dict): the same calls
        from continuity.continuation.view import build_continuation
        from continuity.store.names import resolve_session

        view = build_continuation(
            store,
            resolve_session(store, args[0]),
            budget_bytes=FOLLOW_UP_BUDGET_BYTES if budget is None else budget,
        ).to_dict()
    finally:
        store.close()
    if as_json:
        from continuity.cli.output import emit_json

        emit_json(view)
    else:
        from continuity.cli.lines import continuation_lines

        _write_lines(continuation_lines(_continuation_fields(view)))
    return 5 if view.get("refusal") else 0


def _continuation_fields(view: dict[str, Any]) -> Any:
    """The ``continue --json`` dict as the fields ``cli.lines.continuation_lines`` reads of an
    ``api.results.Continuation`` (content blocks and media stay dicts, as there)."""
    from types import SimpleNamespace

    def space(value: Any) -> Any:
        return SimpleNamespace(**value) if isinstance(value, dict) else value

    fields = {k: space(v) for k, v in view.items() if k not in ("messages", "notes", "gaps")}
    fields["messages"] = [SimpleNamespace(**m) for m in view.get("messages") or ()]
    fields["notes"] = list(view.get("notes") or ())
    request = fields.get("request")
    if request is not None and not hasattr(request, "media"):
        request.media = None
    return SimpleNamespace(**fields)


def _import(args: list[str], given: set[str], values: dict[str, str]) -> int:
    """``import PATHS --no-embed`` when every file is unchanged since the last import (issue
    43 goal 4: 0.5 s of the 0.6 s it took was importing SQLAlchemy and Typer): the same
    discovery and unchanged check as the importer (``formats.discovery``), on ``store.lite``.
    ``_Unsure`` (the Typer path imports, as before) for anything that import would change or
    say otherwise: a file new, grown or rewritten; rows still to derive (``pending_from``); a
    session with no transcript; a recorded source under a folder given that is gone, or back;
    an OpenCode data folder (mirrors to bring up to date); a path that cannot be read; embedding
    asked for (no ``--no-embed``); settings the import's phases validate (``IMPORT_SECTIONS``)."""
    import os
    from pathlib import Path

    if not args or "--no-embed" not in given or any(not a.strip() for a in args):
        raise _Unsure
    as_json = "--json" in given
    if not as_json:
        from continuity.cli.output import plain_stdout

        if not plain_stdout():
            raise _Unsure
    home = _home(values)
    from continuity.core.config import read_config

    settings = read_config(home)
    if any(name in settings for name in IMPORT_SECTIONS) or any(
        var.startswith(tuple(f"CONTINUITY_{n.upper()}__" for n in IMPORT_SECTIONS))
        for var in os.environ
    ):
        raise _Unsure
    from continuity.formats import opencode
    from continuity.formats.discovery import discover, key_paths, path_key, unchanged
    from continuity.formats.reports import FileReport, ImportReport

    def opencode_folder(folder: Path, _found: list[Path]) -> bool:
        if opencode.layout(folder) is not None:  # named or found below one named
            raise _Unsure
        return False

    roots = [Path(a).expanduser() for a in args]
    problems: list[FileReport] = []
    files = discover(args, unreadable=problems, expand=opencode_folder)
    if problems or not files:
        raise _Unsure
    store = _lite_store(home)
    try:
        keys = [path_key(p) for p in files]
        known = store.get_sources(keys)
        report = ImportReport()
        for path, key in zip(files, keys, strict=True):
            same = unchanged(path, key, known.get(key))
            if same is None or same.pending_from is not None or known[key].gone_at is not None:
                raise _Unsure
            report.files.append(same)
        if store.sessions_without_transcript(report.sessions):
            raise _Unsure
        folders = [r.resolve() for r in roots if r.is_dir()]
        for recorded, gone in store.source_presence().items():
            under = any(Path(recorded).is_relative_to(f) for f in folders)
            if under and gone == any(q.exists() for q in key_paths(recorded)):
                raise _Unsure  # mark_vanished would mark it gone, or back
    finally:
        store.close()
    if as_json:
        from dataclasses import replace

        from continuity.api.results import ImportResult
        from continuity.cli.output import emit_json

        data = {
            **report.to_dict(),
            "checkpoints_replayed": 0,
            "embedded": None,
            "transcripts_written": 0,
            "sources_gone": 0,
            "sources_back": 0,
            "transcripts_failed": [],
            "checkpoints_failed": [],
        }
        emit_json(replace(ImportResult.from_dict(data), exit_code=0).to_dict())
        return 0
    from continuity.cli.lines import import_totals, unchanged_files

    totals = report.totals()
    sys.stdout.write(f"unchanged {unchanged_files(len(report.files))}\n")
    sys.stdout.write(import_totals(totals, waiting=0) + "\n")
    sys.stdout.flush()
    _note("0 checkpoints replayed, 0 transcripts written")
    return 0


def _search(args: list[str], given: set[str], values: dict[str, str]) -> int:
    """``search QUERY`` as a client of the workspace's running daemon (issue 43 goal 3:
    ``daemon.search_api``): the daemon searches with everything loaded, and this prints its
    hits as ``cli.commands.browse.search_cmd`` prints them. ``_Unsure`` (the command searches
    in-process) when no daemon of the workspace runs or it answers anything but 200 with
    hits, when nothing matched (the in-process path explains why), and for options it leaves
    to Typer (``--project``, ``--team``, a value it refuses)."""
    import os

    if len(args) != 1 or not args[0].strip():
        raise _Unsure
    limit = _number(values.get("-n", values.get("--count")), 0, MAX_HITS)
    if limit is None:  # no -n: the option's default (it asked the daemon for 500: review)
        limit = SEARCH_HITS
    mode = values.get("--mode", "hybrid")
    role = values.get("--role")
    harness = values.get("--harness")
    if mode not in SEARCH_MODES or (role is not None and role not in SEARCH_ROLES):
        raise _Unsure
    if harness is not None and harness not in FRAMEWORKS:
        from continuity.formats.registry import names

        if harness not in names("import"):
            raise _Unsure
    for name in ("--since", "--until"):
        if name in values:
            from continuity.core.errors import InputError
            from continuity.core.when import parse_when

            try:
                parse_when(values[name], field_name=name)
            except InputError:
                raise _Unsure from None
    as_json = "--json" in given
    if not as_json:
        from continuity.cli.output import plain_stdout

        if not plain_stdout():
            raise _Unsure
    home, config = _client_home(values)
    from continuity.core.config import home_folder

    here = []
    if "--here" in given:
        from pathlib import Path

        here = [str(Path.cwd().resolve())]
    hits, no_match = _daemon_search(
        home_folder(home),
        {
            "query": args[0],
            "limit": limit or MAX_HITS,
            "mode": mode,
            "harness": harness,
            "projects": here,
            "since": values.get("--since"),
            "until": values.get("--until"),
            "role": role,
            "tool": values.get("--tool"),
            "near": os.getcwd(),
        },
        config,
    )
    if not hits:
        # the daemon says what the command says (``browse.search.no_match_message``), printed
        # as its console prints it; a colon could be an emoji code to Rich: the command says it
        if no_match is None or ":" in args[0]:
            raise _Unsure
        from continuity.core.text import CONTROL_ESCAPES

        sys.stderr.write(no_match.translate(CONTROL_ESCAPES) + "\n")  # with --json too
        sys.stderr.flush()
        return 1  # grep's: no row matched
    from continuity.cli.lines import search_hit_lines, with_home

    for hit in hits:
        for field in ("show_command", "resume_command"):
            hit[field] = with_home(hit.get(field) or "", home)
    if as_json:
        import orjson

        from continuity.core.text import json_terminal_safe_bytes

        buffer = sys.stdout.buffer
        for hit in hits:
            buffer.write(json_terminal_safe_bytes(orjson.dumps(hit)) + b"\n")
        buffer.flush()
        _capped_note("search", limit, len(hits), MAX_HITS, "hits")
        return 0
    _write_lines(line for hit in hits for line in search_hit_lines(hit))
    _capped_note("search", limit, len(hits), MAX_HITS, "hits")
    return 0


def _capped_note(command: str, limit: int | None, found: int, most: int, what: str) -> None:
    """The note ``search`` and ``recall`` print on stderr when ``-n 0`` found ``most``
    results, as many as the command prints (``cli.lines.capped_note``; ``cli.commands.browse``
    and ``cli.commands.memory`` say the same)."""
    if limit == 0 and found >= most:
        from continuity.cli.lines import capped_note

        _note(capped_note(command, most, what))


def _settings_overridden() -> bool:
    """Whether this process's environment sets what the daemon would not see: a setting
    override (``CONTINUITY_<SECTION>__<FIELD>``; those of ``[daemon]``, which find the
    daemon, and ``[archive]``, which watches harness folders, change no answer) or another
    database (``CONTINUITY_DATABASE_URL``). The daemon searches with its own settings, so
    the command then searches in-process (fresh-user review: ``CONTINUITY_RETRIEVAL__DIM=abc``
    was refused without a daemon and ignored with one)."""
    import os

    return any(
        var == "CONTINUITY_DATABASE_URL"
        or (
            var.startswith("CONTINUITY_")
            and "__" in var[11:]
            and not var.startswith(("CONTINUITY_DAEMON__", "CONTINUITY_ARCHIVE__"))
        )
        for var in os.environ
    )


def _daemon_post(
    home: str, path: str, body: dict[str, Any], config: str | None = None
) -> dict[str, Any]:
    """The JSON object the workspace's daemon answers ``body`` at ``path`` with; ``_Unsure``
    when no daemon of it runs, it does not answer in ``SEARCH_SECONDS``, or it answers
    anything but 200 with an object. ``config``: the workspace's ``config.toml``
    (``_client_home``), checked as every command checks it at start from the daemon's
    verdict on the file (``daemon.search_api.config_answer``; ``ConfigError``), or read here
    when the daemon gives none."""
    import json
    import time

    from continuity.cli.client import daemon_headers, post
    from continuity.daemon.address import daemon_address

    if _settings_overridden():
        raise _Unsure
    where = daemon_address(home)
    if where is None:
        raise _Unsure
    try:
        status, payload = post(
            where[0],
            where[1],
            path,
            # the standard library's json (issue 43 goal 3: orjson's imports cost the client
            # 10 ms); a lone surrogate cannot be encoded: UnicodeEncodeError, a ValueError
            json.dumps(
                {**body, "config": config} if config else body,
                ensure_ascii=False,
                separators=(",", ":"),
            ).encode("utf-8"),
            daemon_headers(home),
            time.monotonic() + SEARCH_SECONDS,
        )
        answer = json.loads(payload) if status == 200 else None
    except (OSError, ValueError):
        raise _Unsure from None
    if not isinstance(answer, dict):
        raise _Unsure
    if config:
        from continuity.core.config import check_config, check_verdict

        verdict = answer.get("config")
        if isinstance(verdict, dict):
            check_verdict(verdict)
        else:  # a daemon that did not judge the file
            check_config(home)
    return answer


def _daemon_search(
    home: str, body: dict[str, Any], config: str | None = None
) -> tuple[list[dict[str, Any]], str | None]:
    """The hits the workspace's daemon answers ``body`` with (``POST /api/search``) and, with
    none, what the command says about it (``no_match``; None from a daemon that does not say);
    ``_Unsure`` as ``_daemon_post``, or for an answer without a list of hits; ``config`` and
    ``ConfigError`` as ``_daemon_post``'s."""
    answer = _daemon_post(home, "/api/search", body, config)
    hits = answer.get("hits")
    if not isinstance(hits, list) or not all(isinstance(h, dict) for h in hits):
        raise _Unsure
    no_match = answer.get("no_match")
    return hits, no_match if isinstance(no_match, str) else None


def _recall(args: list[str], given: set[str], values: dict[str, str]) -> int:
    """``recall QUERY`` as a client of the workspace's running daemon (``POST /api/recall``,
    ``daemon.search_api``), printing what ``cli.commands.memory.recall_cmd`` prints;
    ``_Unsure`` (the command recalls in-process) when no daemon answers, for ``--tag`` (it
    repeats: Click's to read) and for a value this path does not check."""
    import os

    if len(args) != 1 or not args[0].strip() or ("-n" in values and "--limit" in values):
        raise _Unsure
    limit = _number(values.get("-n", values.get("--limit")), 0, RECALL_MOST)
    as_json = "--json" in given
    if not as_json:
        from continuity.cli.output import plain_stdout

        if not plain_stdout():
            raise _Unsure
    home, config = _client_home(values)
    from continuity.core.config import home_folder

    answer = _daemon_post(
        home_folder(home),
        "/api/recall",
        {
            "query": args[0],
            "limit": 10 if limit is None else limit or RECALL_MOST,
            "expand": "--expand" in given,
            "type": values.get("--type"),
            "near": os.getcwd(),
        },
        config,
    )
    found = answer.get("found")
    if not isinstance(found, dict) or not isinstance(found.get("results"), list):
        raise _Unsure
    results = found["results"]
    if not results and ":" in args[0]:
        raise _Unsure  # the message could hold an emoji code to Rich: the command says it
    if as_json:
        from continuity.cli.output import emit_json

        emit_json(found)
    from continuity.cli.lines import no_memory_message, recall_lines, shown
    from continuity.core.text import CONTROL_ESCAPES

    if not results:  # with --json too: stdout stays JSON, why nothing came back on stderr
        message = no_memory_message(args[0], values.get("--type"))
        sys.stderr.write(message.translate(CONTROL_ESCAPES) + "\n")
        sys.stderr.flush()
    if as_json:
        _capped_note("recall", limit, len(results), RECALL_MOST, "memories")
        return 0 if results else 1
    sys.stdout.write("".join(shown(line) + "\n" for line in recall_lines(found)))
    sys.stdout.flush()
    _capped_note("recall", limit, len(results), RECALL_MOST, "memories")
    return 0 if results else 1


_RUN = {
    "sessions": _sessions,
    "show": _show,
    "continue": _continue,
    "import": _import,
    "search": _search,
    "recall": _recall,
}


def run(argv: list[str]) -> int | None:
    """Run the read command ``argv`` (the words after ``continuity``) and return its exit
    status, or None, having done nothing, when the Typer application must run it (see the
    module docstring). Errors end the process as ``cli.app.main``'s do (``cli.app.failed``)."""
    if not argv or argv[0] not in COMMANDS:
        return None
    from continuity.cli.output import tolerant_streams
    from continuity.core.errors import ContinuityError

    try:
        command, args, given, values = _parse(argv)
    except _Unsure:
        return None
    tolerant_streams()
    try:
        return _RUN[command](args, given, values)
    except _Unsure:
        return None
    except (KeyboardInterrupt, ContinuityError, OSError, UnicodeError, TypeError) as exc:
        from continuity.cli.app import failed

        failed(exc)


__all__ = ["COMMANDS", "run"]
