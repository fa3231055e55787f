"""``Workspace``: continuity as a library (issue 46). One object per workspace, one method per
command of the CLI (``import``, ``sessions``, ``show``, ``search``, ``continue``, ``resume``,
``checkpoint``, ``checkpoints``, ``remember``, ``recall``, ``compact``, ``brief``, ``usage``,
``sync``, ``sessions --team``, ``search --team``),
each taking the command's options as parameters (``--budget`` is ``budget_bytes``) and
returning the value its ``--json`` prints, typed (``continuity.api.results``; ``to_dict()`` is
that JSON).

The command line calls these methods (parse, one call, render), so both give the same
answers. Every method raises the ``continuity.core.errors`` classes: ``SessionNotFound`` /
``AmbiguousSession`` for a key or prefix that names no session or several, ``InputError``
for a bad argument (naming it), ``ConfigError`` for a bad ``config.toml``, ``StoreError`` /
``SchemaOutOfDate`` when the database cannot be used.

Nothing heavy is imported at module level: each method imports what it runs, so
``import continuity`` stays cheap (``tests/api``).

Over 600 lines: one method per CLI command on the one object a library user learns first
(``Workspace``); each method is short, and splitting the class would split the public API's
reference page.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, cast

from continuity.core.config import FOLLOW_UP_BUDGET_BYTES
from continuity.core.errors import InputError

if TYPE_CHECKING:  # the result types load with the method that returns one (issue 43)
    from continuity.api.results import (
        Checkpoint,
        CheckpointList,
        CompactResult,
        Continuation,
        ImportResult,
        SessionRecord,
        SessionRows,
    )
    from continuity.brief.build import Brief
    from continuity.brief.model import Reach
    from continuity.browse.search import SearchHit
    from continuity.resume.session import Written
    from continuity.store.sql import SqlStore
    from continuity.transcripts.memories import RecallResponse, RememberResponse
    from continuity.usage.extract import MessageUsage
    from continuity.usage.prices import PriceTable
    from continuity.usage.report import UsageReport


class ImportProgress(Protocol):
    """What ``Workspace.import_`` reports as it goes (the CLI's progress bars). ``start``:
    the session files found and their total size in bytes; ``advance``: bytes read;
    ``file_done``: one file finished; ``phase``: the step running (importing, checkpoints,
    transcripts); ``embedding``: rows embedded of the total (a second count); ``note``: a
    line worth telling (``warning: rows not embedded: ...``, ``note: ...``); ``stop``: done."""

    def start(self, total_bytes: int, files: int) -> None: ...
    def advance(self, n: int) -> None: ...
    def file_done(self) -> None: ...
    def phase(self, name: str) -> None: ...
    def embedding(self, done: int, total: int) -> None: ...
    def note(self, line: str) -> None: ...
    def stop(self) -> None: ...


#: The harness names a session may have (``sessions(harness=)``): the harnesses imported and
#: captured, and the records the adapters write (``continuity.adapters``).
#: The harnesses whose sessions are imported: the registry's ``import`` ones (issue 42,
#: ``formats.registry``) and the two adapters' records.
HARNESSES = (
    "claude-code",
    "codex",
    "pi",
    "opencode",
    "gemini-cli",
    "qwen-code",
    "copilot-cli",
    "cursor-agent",
    "kilo",
    "factory-droid",
    "langgraph",
    "openai-agents",
)
#: The largest budget accepted (bytes), as the CLI's ``--budget``.
MAX_BUDGET_BYTES = 10**12


def _check_budget(budget_bytes: object) -> None:
    """``InputError`` naming ``budget_bytes`` unless it is an int (not a bool) in
    1..``MAX_BUDGET_BYTES`` (the CLI's ``--budget`` range)."""
    if isinstance(budget_bytes, bool) or not isinstance(budget_bytes, int):
        raise InputError(f"budget_bytes: must be an integer (got {budget_bytes!r})")
    if not 1 <= budget_bytes <= MAX_BUDGET_BYTES:
        raise InputError(f"budget_bytes: must be 1..{MAX_BUDGET_BYTES:,} (got {budget_bytes:,})")


def _check_count(value: object, name: str) -> None:
    """``InputError`` naming ``name`` unless it is an int (not a bool), 0 or more."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"{name}: must be an integer, 0 or more (0: all; got {value!r})")


def _one_or_many(value: Any, name: str) -> Sequence[Any]:
    """``value`` as a sequence: one ``str`` or path is one item (a ``str`` is also a sequence
    of characters, and ``import_("/tmp/x")`` read ``/``, ``t``, ...: a fresh-user review);
    ``InputError`` naming ``name`` when it is neither that nor a list or tuple."""
    if isinstance(value, (str, os.PathLike)):
        return [value]
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{name}: give a list of them, not {type(value).__name__}")
    return cast("Sequence[Any]", value)


def _check_url(url: str) -> None:
    """``InputError`` for a database URL that cannot be a workspace: unreadable, naming no
    database (``postgresql+psycopg://`` alone reached libpq's defaults: a fresh-user review
    saw it write into the server's ``root`` database), or in memory (``sqlite://``: every
    call would see an empty workspace)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        raise InputError(f"not a database URL: {url!r}") from None
    database = (parsed.database or "").strip()
    if parsed.get_backend_name() == "sqlite":
        if not database or database == ":memory:":
            raise InputError(
                "a sqlite URL needs a file (sqlite:///PATH): an in-memory database keeps nothing"
            )
    elif not database:
        raise InputError(f"{parsed.render_as_string(hide_password=True)}: names no database")


def _when(value: datetime | str | None, name: str) -> datetime | None:
    """``value`` as an aware datetime: as given, or parsed as the CLI's ``--since`` is
    (``core.when.parse_when``: ``2026-12-01``, ``7d``, ``12h``); ``InputError`` naming
    ``name`` otherwise."""
    if value is None or isinstance(value, datetime):
        return value
    from continuity.core.when import parse_when

    return parse_when(value, field_name=name)


def _folders(
    project: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None,
) -> list[str]:
    """One folder or several, each absolute with ``~`` expanded and links resolved."""
    if project is None:
        return []
    items = [project] if isinstance(project, (str, os.PathLike)) else list(project)
    return [str(Path(p).expanduser().resolve()) for p in items]


class Workspace:
    """A continuity workspace: its folder (``config.toml``, transcripts) and its database.

    ``Workspace.open("w")`` opens (and creates, owner-only) a workspace folder as ``--home w``
    does; ``Workspace.open("sqlite:///x.db")`` or ``"postgresql+psycopg://..."`` a database,
    with the folder resolved as the CLI does; ``Workspace.open()`` the CLI's default
    workspace. Use it in a ``with`` block or call ``close()``. Not shared between threads,
    except one made by ``over`` (its store is opened already and stays the caller's).
    """

    def __init__(
        self,
        home: str | os.PathLike[str] | None = None,
        *,
        url: str | None = None,
        read_only: bool = False,
        fast_read: bool = False,
    ) -> None:
        """A workspace whose database opens at first use (``open`` opens it at once).
        ``home``: the folder (None: ``$CONTINUITY_HOME``, else the platform's user data
        folder); ``url``: the database (None: ``$CONTINUITY_DATABASE_URL``, else
        ``continuity.db`` in the folder); ``read_only``: a database that cannot be written is
        opened read-only rather than refused (writes then raise ``StoreError``);
        ``fast_read``: a SQLite file at the newest schema is read through the standard
        library's ``sqlite3`` where it can (``store.lite``: the read commands start without
        SQLAlchemy, issue 43 goal 3), with the same answers. Raises ``ConfigError`` for an
        empty ``home`` or one that is a file."""
        from continuity.core.config import resolve_home

        self._home = resolve_home(home) if home is not None else None
        self._url = url
        self._read_only = read_only
        self._fast_read = fast_read
        self._store: SqlStore | None = None
        self._owns_store = True
        self._closed = False

    @classmethod
    def over(cls, store: SqlStore, home: str | os.PathLike[str]) -> Workspace:
        """A workspace over ``store``, a ``SqlStore`` the caller opened and keeps (the
        daemon's one shared store, ``daemon.hooks.live.LiveCapture.store``), with ``home``
        its workspace folder (``config.toml``, transcripts). ``close()`` (and leaving a
        ``with`` block) forgets the store without closing it: the caller closes it, and
        keeps its own write discipline (the daemon's ``_db_lock``), which these methods
        neither take nor need for reading. Holding nothing but ``store`` and ``home``, it
        may serve several threads at once as far as ``store`` may (``SqlStore`` gives each
        call a connection of its pool). Raises ``ConfigError`` for an empty ``home``."""
        ws = cls(home, url=store.url)
        ws._store, ws._owns_store = store, False
        return ws

    @classmethod
    def open(
        cls, target: str | os.PathLike[str] | None = None, *, read_only: bool = False
    ) -> Workspace:
        """Open the workspace ``target``: a folder (as ``--home``; created ``0700`` with its
        database ``0600`` when absent), a database URL (``sqlite:///PATH``,
        ``postgresql+psycopg://USER@HOST/DB``; the folder is then ``$CONTINUITY_HOME`` or the
        default), or None (the CLI's default workspace). Migrates the schema to the newest
        revision. With ``read_only`` nothing is created: an absent folder is an error. Raises
        ``InputError`` (a target that is not a path or URL; a URL that names no database, or
        an in-memory one, which would keep nothing; an absent folder with ``read_only``),
        ``ConfigError`` (a folder that is a file, a bad ``config.toml``), ``StoreError`` or
        ``SchemaOutOfDate`` (the database cannot be used)."""
        from continuity.core.config import check_config, resolve_home

        if target is not None and not isinstance(target, (str, os.PathLike)):  # pyright: ignore[reportUnnecessaryIsInstance] - callers are not all typed
            raise InputError(
                f"target: a workspace folder or a database URL, not {type(target).__name__}"
            )
        text = os.fspath(target) if target is not None else None
        if text is not None and "://" in text:
            _check_url(text)
            ws = cls(url=text, read_only=read_only)
        else:
            if read_only and text is not None and not Path(text).expanduser().exists():
                raise InputError(f"{text}: no workspace there (read_only creates none)")
            ws = cls(text, read_only=read_only)
        resolve_home(ws._home)
        check_config(ws._home)
        ws.store()
        return ws

    @property
    def home(self) -> Path:
        """The workspace folder, absolute (``continuity where``'s ``home``)."""
        from continuity.core.config import resolve_home

        return resolve_home(self._home)

    @property
    def url(self) -> str:
        """The database URL in use (it may hold a password: do not print it)."""
        from continuity.core.config import database_url

        return self._url or database_url(self._home)

    def store(self) -> SqlStore:
        """The open store (``continuity.store.SqlStore``), opened on first call: for what this
        class does not cover. Not a stable name: it follows the store's internals. Raises
        ``StoreError`` for a workspace made by ``over`` once closed (the store was the
        caller's: it is not reopened)."""
        if self._store is None and not self._owns_store:
            from continuity.core.errors import StoreError

            raise StoreError(
                "this Workspace.over(store) was closed: its store was the "
                "caller's and is not reopened"
            )
        if self._closed:
            from continuity.core.errors import StoreError

            raise StoreError("this Workspace was closed: open it again (Workspace.open)")
        if self._store is None:
            from continuity.store import open_store_raw

            url = self.url
            if "://" not in url:
                url = f"sqlite:///{Path(url).expanduser()}"
            if self._fast_read:
                from continuity.store.lite import open_lite

                lite = open_lite(url, read_only=self._read_only)
                if lite is not None:  # every SqlStore method answers (store.lite)
                    self._store = cast("SqlStore", lite)
                    return self._store
            self._store = open_store_raw(url, read_only=self._read_only)
        return self._store

    def close(self) -> None:
        """Close the database (again: nothing). A workspace made by ``over`` leaves its store
        open (the caller's to close) and cannot be used after this."""
        if self._store is not None and self._owns_store:
            self._store.close()
        self._store = None
        self._closed = True

    def __enter__(self) -> Workspace:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def key(self, session: str) -> str:
        """The session key ``session`` names: an exact key or a unique prefix
        (``store.names.resolve_session``). Raises ``SessionNotFound`` or
        ``AmbiguousSession`` (its ``candidates``)."""
        from continuity.store.names import resolve_session

        return resolve_session(self.store(), session)

    # ------------------------------------------------------------------------ import

    def import_(
        self,
        paths: Sequence[str | os.PathLike[str]],
        *,
        embed: bool = True,
        progress: ImportProgress | None = None,
    ) -> ImportResult:
        """``continuity import PATHS``: import the session files named, of every harness the
        registry reads (``continuity.formats.registry``; folders searched for ``*.jsonl``),
        replay their checkpoints, write their transcripts, mark source files gone, then embed
        the new rows for search by meaning (``embed``; needs the semantic extra).
        Re-importing adds nothing. A file that cannot be read or imported is reported in the
        result (``exit_code`` 2 or 4), not raised. Raises ``InputError`` for an empty path,
        for no session file at all, or for the one path given that cannot be read."""
        from continuity.archive.ingest import ingest
        from continuity.checkpoints.capture import load_config
        from continuity.core.text import one_line
        from continuity.formats.importer import ImportReport, discover, mark_vanished, total_bytes

        names: list[str] = [os.fspath(p) for p in _one_or_many(paths, "paths")]
        if any(not p.strip() for p in names):  # "" would be the current folder (review)
            raise InputError(
                "an empty path was given; name a session file or folder (. for the current folder)"
            )
        report = ImportReport()
        files = discover(names, unreadable=report.files, home=self._home)
        if not files and len(report.files) == 1:  # the one problem is the whole answer
            raise InputError(f"{one_line(report.files[0].path)}: {report.files[0].reason}")
        if not files and not report.files:
            raise InputError("no *.jsonl session files under " + ", ".join(names))
        config = load_config(self._home)
        store = self.store()
        try:
            if progress is not None:
                progress.start(total_bytes(files), len(files))
            result = ingest(
                store,
                files,
                config=config,
                home=self._home,
                progress=progress.advance if progress else None,
                done=(lambda _r: progress.file_done()) if progress else None,
                phase=progress.phase if progress else None,
                report=report,
            )
            gone, back = mark_vanished(store, names)
            embedded = self._embed_pending(progress) if embed else None
        finally:
            if progress is not None:
                progress.stop()
        sync = result.transcripts
        data = {
            **report.to_dict(),
            "checkpoints_replayed": result.checkpoints_replayed,
            "embedded": embedded,
            "transcripts_written": sync.captured,
            "sources_gone": gone,
            "sources_back": back,
            "transcripts_failed": [{"session": k, "reason": r} for k, r in sync.failed],
            "checkpoints_failed": [
                {"session": k, "reason": r} for k, r in result.checkpoints_failed
            ],
        }
        from continuity.api.results import ImportResult

        return replace(ImportResult.from_dict(data), exit_code=report.exit_code)

    def _embed_pending(self, progress: ImportProgress | None) -> dict[str, int] | None:
        """Embed the rows and memories waiting (issue 40): ``EmbedReport.to_dict``; None
        without the semantic extra (said once) or when the model cannot load (a warning)."""
        from continuity.core.errors import ConfigError
        from continuity.retrieval.embedder import load_embedder, semantic_note
        from continuity.retrieval.embedding import embed_pending, pending_count
        from continuity.retrieval.settings import retrieval_settings

        tell: Callable[[str], None] = (
            progress.note if progress is not None else (lambda _line: None)
        )
        settings = retrieval_settings(self._home)
        try:
            embedder = load_embedder(settings)
        except ConfigError as exc:
            tell(f"warning: rows not embedded: {exc}")
            return None
        if embedder is None:
            semantic_note(settings, lambda msg: tell(f"note: {msg}"))
            return None
        store = self.store()
        if progress is not None:
            progress.embedding(0, pending_count(store, embedder.model_id))
        done = embed_pending(
            store,
            embedder,
            batch_rows=settings.batch_rows,
            progress=progress.embedding if progress else None,
        )
        return done.to_dict()

    # ------------------------------------------------------------------------ read

    def sessions(
        self,
        limit: int = 50,
        *,
        harness: str | None = None,
        project: str | os.PathLike[str] | None = None,
        since: datetime | str | None = None,
        titles: bool = True,
    ) -> list[SessionRecord]:
        """``continuity sessions``: sessions newest first, at most ``limit`` (0: all), only of
        ``harness`` (one of ``HARNESSES``), of the folder ``project`` or a folder
        inside it, active since ``since`` (a datetime, or the CLI's forms: ``2026-12-01``,
        ``7d``). Each ``title`` is the harness's own, else the first request cut on a word,
        redacted by the session-wide rule (``browse.titles``, issue 44); ``titles=False``
        leaves every ``title`` None and skips that work. Raises ``InputError`` naming
        ``since`` when it cannot be read."""
        from continuity.api.shapes import resume_copies, session_dict
        from continuity.browse.titles import session_titles

        _check_count(limit, "limit")
        if harness is not None and harness not in HARNESSES:
            raise InputError(f"harness: {harness!r} is not one of {', '.join(HARNESSES)}")
        after = _when(since, "since")
        folder = _folders(project)
        store = self.store()
        found = store.list_sessions(
            limit=limit, harness=harness, project=folder[0] if folder else None, since=after
        )
        copies = resume_copies(store, [s.key for s in found])
        named = session_titles(store, found) if titles else {}
        from continuity.api.results import SessionRecord

        return [
            SessionRecord.from_dict(session_dict(s, copies.get(s.key), title=named.get(s.key)))
            for s in found
        ]

    def show(
        self,
        key: str,
        *,
        raw: bool = False,
        all_rows: bool = False,
        seq: int | None = None,
        from_seq: int | None = None,
        to_seq: int | None = None,
        tail: int | None = None,
    ) -> SessionRows:
        """``continuity show KEY``: the session's rows in log order, the conversation only
        unless ``all_rows`` (events, context, sidechains too), only rows ``from_seq`` to
        ``to_seq`` (either optional), only the last ``tail`` of those (issue 44); or with
        ``seq`` the 30 rows from ``seq - 5`` (every kind). Every string redacted (a secret found in any row hidden
        wherever it repeats) unless ``raw``. Raises ``SessionNotFound``/``AmbiguousSession``,
        ``InputError`` when the session has no row ``seq``."""
        from continuity.api.results import SessionRows
        from continuity.api.shapes import session_rows_dict

        store = self.store()
        name = self.key(key)
        if tail is not None:
            _check_count(tail, "tail")
        return SessionRows(
            **session_rows_dict(
                store,
                name,
                raw=raw,
                all_rows=all_rows,
                seq=seq,
                from_seq=from_seq,
                to_seq=to_seq,
                tail=tail,
            )
        )

    def search(
        self,
        query: str,
        limit: int = 20,
        mode: str = "hybrid",
        *,
        harness: str | None = None,
        project: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None = None,
        here: bool = False,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        role: str | None = None,
        tool: str | None = None,
        near: str | os.PathLike[str] | None = None,
    ) -> list[SearchHit]:
        """``continuity search QUERY``: the best ``limit`` rows (at most 500) of every session,
        best first, ranked by ``mode``: ``hybrid`` (words and meaning fused), ``words``
        (BM25), ``vectors`` (meaning; without the semantic extra every mode ranks by words);
        rows of the asker's project (the folder ``near``, as given; default: the current
        folder) and recent rows a little first. Filters: ``harness``, ``project`` (folders;
        ``here``: the current folder), ``since`` / ``until`` (the row's time), ``role``
        (user, assistant, tool, system), ``tool`` (a tool's name). Snippets are redacted; the
        reopen commands name no workspace. An empty list when nothing matched. Returns
        ``continuity.browse.search.SearchHit``s. Raises ``InputError`` naming ``query``,
        ``mode``, ``role``, ``since`` or ``until``."""
        from continuity.browse.search import search
        from continuity.retrieval.hybrid import MODES
        from continuity.retrieval.settings import retrieval_settings
        from continuity.store.search import EntryFilter

        if not query.strip():
            raise InputError("query: is empty: give the words to find")
        if mode not in MODES:
            raise InputError(f"mode: {mode!r} is not one of {', '.join(MODES)}")
        if role is not None and role not in ("user", "assistant", "tool", "system"):
            raise InputError(f"role: {role!r} is not one of user, assistant, tool, system")
        folders = _folders(project) + ([str(Path.cwd().resolve())] if here else [])
        filters = EntryFilter(
            harness=harness,
            projects=tuple(folders),
            role=role,
            tool=tool,
            since=_when(since, "since"),
            until=_when(until, "until"),
        )
        asker = os.fspath(near) if near is not None else str(Path.cwd())
        hits = search(
            self.store(),
            query,
            limit=min(limit or 500, 500),
            filters=filters,
            mode=mode,
            project=asker,
            settings=retrieval_settings(self._home),
        )
        return hits

    def continuation(self, key: str, *, budget_bytes: int = FOLLOW_UP_BUDGET_BYTES) -> Continuation:
        """``continuity continue KEY``: the continuation the next run of the session should
        be handed (seed 002): the newest checkpoint, the previous request verbatim and the
        recent tail within ``budget_bytes`` UTF-8 bytes (default 240,000) with every tool call
        paired; secrets redacted. A continuation that cannot be given within the rules is
        returned with ``refusal`` set, not raised. Raises ``SessionNotFound`` /
        ``AmbiguousSession``, ``InputError`` for a budget below 1."""
        from continuity.continuation.view import build_continuation

        _check_budget(budget_bytes)
        view = build_continuation(self.store(), self.key(key), budget_bytes=budget_bytes)
        from continuity.api.results import Continuation

        return Continuation.from_dict(view.to_dict())

    def checkpoints(self, key: str, *, limit: int = 0) -> CheckpointList:
        """``continuity checkpoints KEY``: the session's checkpoints oldest first (``limit``:
        only the newest N; 0 all); a row that cannot be read is listed in ``damaged`` and
        skipped. ``key`` may also be a live session's exact key that has checkpoints but no
        imported rows. Raises ``SessionNotFound`` / ``AmbiguousSession``."""
        from continuity.checkpoints.recovery import checkpoint_dict

        _check_count(limit, "limit")
        store = self.store()
        name = checkpoint_session_key(store, key)
        good, damaged = store.checkpoint_page(name, limit=limit)
        rows = [checkpoint_dict(cp) for cp in good]
        from continuity.api.results import CheckpointList

        return CheckpointList.from_dict(
            {
                "session": name,
                "count": len(rows),
                "checkpoints": rows,
                "damaged": [d.to_dict() for d in damaged],
            }
        )

    def recall(
        self,
        query: str,
        *,
        limit: int = 10,
        expand: bool = False,
        type: str | None = None,
        tags: Sequence[str] = (),
    ) -> RecallResponse:
        """``continuity recall QUERY``: memories best first (at most ``limit``, 1..100),
        ranked by words and meaning, only of ``type`` and carrying every tag of ``tags``;
        ``expand`` adds the sanitized transcript of each result's session (``sources``). A
        pydantic model (``transcripts.memories.RecallResponse``; ``to_dict()`` is ``recall
        --json``). Raises ``InputError`` naming the field (an empty query, a bad limit)."""
        from continuity.retrieval.recall import recall_hybrid
        from continuity.retrieval.settings import retrieval_settings

        found: RecallResponse = recall_hybrid(
            self.store(),
            query,
            settings=retrieval_settings(self._home),
            project=str(Path.cwd()),
            limit=limit,
            expand=expand,
            filters={"type": type, "tags": list(tags)},
        )
        return found

    def brief(
        self,
        project: str | os.PathLike[str] | None = None,
        *,
        budget_chars: int | None = None,
        window: str | int | None = None,
        reach: Reach | None = None,
    ) -> Brief:
        """``continuity brief``: the project brief a new session of the folder ``project``
        (default: the current folder) starts with (issue 39): the newest earlier sessions
        within the window, within ``budget_chars`` characters (200..10,000; default
        ``[continuity] recoveryBudgetChars``), looking back ``window`` days or ``"any"``
        (default ``recoveryWindowDays``). ``reach``: the tools the brief may name
        (``continuity.brief.Reach``; the CLI passes the harness's MCP tools and its own
        path); None names none. Returns ``continuity.brief.build.Brief`` (``text``,
        ``sessions``; ``to_dict()`` is ``brief --json``). Raises ``InputError`` naming
        ``budget_chars`` or ``window``."""
        from continuity.brief.build import build_brief
        from continuity.brief.model import Reach
        from continuity.checkpoints.capture import load_config

        config = load_config(self._home)
        if budget_chars is not None:
            if not 200 <= budget_chars <= 10_000:
                raise InputError(f"budget_chars: must be 200..10000 (got {budget_chars})")
            config = config.model_copy(update={"recovery_budget_chars": budget_chars})
        if window is not None:
            config = _with_window(config, str(window))
        where = _folders(project or Path.cwd())[0]
        return build_brief(self.store(), project=where, config=config, reach=reach or Reach())

    def usage(
        self,
        *,
        by: str = "day",
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        harness: str | None = None,
        project: str | os.PathLike[str] | None = None,
        offline: bool = False,
        timezone: str | None = None,
    ) -> UsageReport:
        """``continuity usage`` (issue 44 item 1): the tokens and cost of every model
        response the stored sessions record (Claude Code, Codex, pi, OpenCode), grouped
        ``by`` one of ``day``, ``week``, ``month``, ``session``, ``project``, ``model``,
        ``harness`` (days, weeks by their Monday, and months in ``timezone``: an IANA name
        or ``UTC``; None, the machine's zone, as ccusage), filtered as ``usage_messages``.
        Returns ``continuity.usage.UsageReport`` (``to_dict()`` is ``usage --json``); a
        model without a price is in its ``unpriced_models``, never costed at 0. Raises
        ``InputError`` naming ``by``, ``harness``, ``since``, ``until`` (also when
        ``since`` is not before ``until``) or ``timezone``."""
        from continuity.usage.prices import load_prices
        from continuity.usage.report import GROUPS, summarize, zone

        if by not in GROUPS:
            raise InputError(f"by: {by!r} is not one of {', '.join(GROUPS)}")
        try:
            tz = zone(timezone)
        except ValueError as exc:
            raise InputError(f"timezone: {exc}") from None
        table = load_prices(self.home, offline=offline)
        messages = self._usage_messages(since, until, harness, project, table)
        return summarize(messages, by, table, tz)

    def usage_messages(
        self,
        *,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        harness: str | None = None,
        project: str | os.PathLike[str] | None = None,
        offline: bool = False,
    ) -> list[MessageUsage]:
        """Every model response's usage (``continuity.usage.MessageUsage``, oldest first,
        each priced: ``cost_usd`` None when its model has no price) from ``since`` up to
        ``until`` (a datetime, or the CLI's forms: ``2026-12-01``, ``7d``), only of
        ``harness`` and of the folder ``project`` or one inside it. Prices: the table
        ``refresh_prices`` wrote into the workspace, else (and with ``offline``) the one
        shipped. Read once, then sum it as often as needed with
        ``continuity.usage.group(messages, by)`` or ``breakdown(messages, "day", "model")``
        (the browser's charts). Raises ``InputError`` naming ``harness``, ``since`` or
        ``until``."""
        from continuity.usage.prices import load_prices

        table = load_prices(self.home, offline=offline)
        return self._usage_messages(since, until, harness, project, table)

    def _usage_messages(
        self,
        since: datetime | str | None,
        until: datetime | str | None,
        harness: str | None,
        project: str | os.PathLike[str] | None,
        table: PriceTable,
    ) -> list[MessageUsage]:
        from continuity.usage.extract import USAGE_HARNESSES
        from continuity.usage.report import collect, price

        if harness is not None and harness not in HARNESSES:
            raise InputError(f"harness: {harness!r} is not one of {', '.join(HARNESSES)}")
        after, before = _when(since, "since"), _when(until, "until")
        if after is not None and before is not None and after >= before:
            raise InputError(
                f"since ({after.isoformat()}) is not before until ({before.isoformat()}): "
                "the range is empty"
            )
        folder = _folders(project)
        if harness is not None and harness not in USAGE_HARNESSES:
            return []  # its records hold no usage
        found = collect(
            self.store(),
            since=after,
            until=before,
            harness=harness,
            project=folder[0] if folder else None,
        )
        return price(found, table)

    def refresh_prices(self) -> PriceTable:
        """``continuity usage --refresh-prices``: fetch LiteLLM's model prices (httpx), trim
        them to the harnesses' providers and keep them in ``<home>/usage/prices.json``, which
        ``usage`` then uses. Raises ``InputError`` when the fetch fails, ``ContinuityError``
        when the answer is not the table (the previous file stays)."""
        from continuity.usage.prices import refresh

        return refresh(self.home)

    # ------------------------------------------------------------------------ team (issue 41)

    def sync(self, *, batch_rows: int = 500, pull: bool = True) -> Any:
        """``continuity sync``: push the shared projects' new rows, redacted, to the team
        store of ``[team]`` and pull the team's session index (``continuity.team.sync``).
        Returns a ``continuity.team.sync.SyncReport`` (``to_dict()`` is ``sync --json``).
        Raises ``ConfigError`` when no team store is joined, ``StoreError`` when it cannot
        be reached or refuses a write."""
        from continuity.team.settings import team_settings
        from continuity.team.sync import sync

        return sync(self.store(), team_settings(self._home), batch_rows=batch_rows, pull=pull)

    def team_sessions(
        self,
        limit: int = 50,
        *,
        project: str | os.PathLike[str] | None = None,
        since: datetime | str | None = None,
    ) -> list[dict[str, Any]]:
        """``continuity sessions --team``: the team's sessions as the last ``sync`` pulled
        them, newest first, at most ``limit`` (0: all), of the repository of folder
        ``project`` wherever it is cloned, active since ``since``; each with ``author`` and
        ``machine`` (``continuity.team.reads.team_sessions``). Raises ``InputError`` naming
        ``since``."""
        from continuity.team.reads import team_sessions
        from continuity.team.settings import team_settings

        _check_count(limit, "limit")
        return team_sessions(
            self.store(),
            team_settings(self._home),
            limit=limit,
            project=project,
            since=_when(since, "since"),
        )

    def team_search(self, query: str, limit: int = 20) -> list[Any]:
        """``continuity search --team QUERY``: the best ``limit`` rows of the team store this
        member may read, with author and machine (``continuity.team.reads.TeamHit``). Raises
        ``InputError`` for an empty query, ``ConfigError`` when no team store is joined,
        ``StoreError`` when it cannot be read."""
        from continuity.team.reads import team_search
        from continuity.team.settings import team_settings

        if not query.strip():
            raise InputError("query: is empty: give the words to find")
        return team_search(team_settings(self._home), query, limit=min(limit or 500, 500))

    # ------------------------------------------------------------------------ write

    def resume(
        self,
        key: str,
        *,
        into: str,
        budget_bytes: int = FOLLOW_UP_BUDGET_BYTES,
        target_home: str | os.PathLike[str] | None = None,
    ) -> Written:
        """``continuity resume KEY --in INTO``: write the session's continuation (as
        ``continuation`` gives it) as a new session of harness ``into`` (claude-code, codex,
        pi) where that harness looks for the project's sessions (``target_home``: the
        harness's home folder, default its own variable or ``~/.claude`` ...). An identical
        earlier copy is reused. Returns ``continuity.resume.session.Written`` (``path``,
        ``command``: the argv that opens it; ``to_dict()`` is ``resume --json``). Raises
        ``InputError`` for an unknown harness, ``ResumeRefused`` (exit 5) when the
        continuation is refused, ``SessionNotFound`` / ``AmbiguousSession``."""
        from continuity.resume.session import resume_session

        _check_budget(budget_bytes)
        if target_home is not None and not os.fspath(target_home).strip():
            raise InputError("target_home: empty; name the harness's home folder or pass None")
        home = Path(target_home) if target_home is not None else None
        return resume_session(
            self.store(), self.key(key), into, budget_bytes=budget_bytes, target_home=home
        )

    def checkpoint(self, key: str, *, reason: str, trigger: str = "explicit") -> Checkpoint:
        """``continuity checkpoint KEY --reason``: write a session checkpoint now (seed 000,
        ``trigger`` explicit or agent) with its recent prompts and ``reason`` (redacted).
        Raises ``InputError`` for an empty reason, an unknown trigger, or continuity disabled
        (``[continuity] enabled = false``); ``SessionNotFound`` / ``AmbiguousSession``."""
        from continuity.checkpoints.capture import load_config
        from continuity.checkpoints.recovery import checkpoint_dict, manual_checkpoint
        from continuity.core.model import CheckpointTrigger

        if not reason.strip():
            raise InputError("--reason is empty: say why this checkpoint is taken")
        if trigger not in ("explicit", "agent"):
            raise InputError(f"trigger: {trigger!r} is not one of explicit, agent")
        config = load_config(self._home)
        cp = manual_checkpoint(
            self.store(), self.key(key), reason, config=config, trigger=CheckpointTrigger(trigger)
        )
        if cp is None:
            raise InputError(
                "continuity is disabled ([continuity] enabled = false): no checkpoint written"
            )
        from continuity.api.results import Checkpoint

        return Checkpoint.from_dict(checkpoint_dict(cp))

    def remember(
        self,
        text: str,
        *,
        type: str = "fact",
        tags: Sequence[str] = (),
        importance: float = 0.5,
        source: str | None = None,
    ) -> RememberResponse:
        """``continuity remember TEXT``: store a memory (secrets redacted first; the same
        text again is reported ``deduped``) of ``type`` (fact, decision, ...), with ``tags``,
        ``importance`` 0..1 and the session key it came from (``source``). A pydantic model
        (``transcripts.memories.RememberResponse``: ``id``, ``deduped``; ``to_dict()`` is
        ``remember --json``). Raises ``InputError`` naming the field (a text with no word
        recall could find it by, importance outside 0..1)."""
        from continuity.transcripts.memories import remember

        return remember(
            self.store(),
            text,
            type=type,
            tags=list(_one_or_many(tags, "tags")),
            importance=importance,
            source_id=source,
        )

    def compact(
        self,
        key: str,
        *,
        budget_bytes: int = FOLLOW_UP_BUDGET_BYTES,
        summarizer: str | None = None,
        force: bool = False,
    ) -> CompactResult:
        """``continuity compact KEY``: make a continuation checkpoint as if the session's turn
        had just settled (seed 002): summarize the working view when it is over
        ``budget_bytes`` UTF-8 bytes (or always with ``force``) with ``summarizer`` (a
        provider name; default ``[summarizer] provider``, else extractive). A refusal is a
        result (``status`` refused, its ``receipt``), not an error. Raises ``ConfigError``
        (a summarizer that cannot work), ``LeaseHeld`` (another owner holds the session),
        ``SessionNotFound`` / ``AmbiguousSession``."""
        from continuity.continuation.compaction import compact_now
        from continuity.continuation.summarize import make_summarizer
        from continuity.continuation.summarize.settings import load_settings

        _check_budget(budget_bytes)
        settings = load_settings(self._home, provider=summarizer)
        outcome = compact_now(
            self.store(),
            self.key(key),
            summarizer=make_summarizer(settings),
            budget_bytes=budget_bytes,
            force=force,
            timeout=settings.timeout,
        )
        from continuity.api.results import CompactResult

        return CompactResult.from_dict(outcome.to_dict())


def checkpoint_session_key(store: Any, name: str) -> str:
    """The session ``name`` names for its checkpoints (``checkpoints``, ``recover``, the
    daemon's ``GET /api/checkpoints/<key>``): an exact key, of an imported session or of one
    with checkpoints (readable or damaged; a live session not imported yet), else a unique
    prefix of an imported session's key. An exact key wins over a prefix: a live session
    ``S`` with checkpoints names ``S``, not its imported subagent ``S/agent-x``. Raises
    ``SessionNotFound`` / ``AmbiguousSession``."""
    from continuity.store.names import resolve_session

    if store.get_session(name) is not None:
        return name
    good, damaged = store.checkpoint_page(name, limit=1)
    if good or damaged:
        return name
    return resolve_session(store, name)


def _with_window(config: Any, window: str) -> Any:
    """``config`` looking back ``window`` (days, or ``any``), checked by the setting's own
    rule (``recoveryWindowDays``: 1–3650 or "any"); an explicit ``recoveryWindowHours`` no
    longer applies. Raises ``InputError`` naming ``--window``."""
    from pydantic import ValidationError

    fields = {
        **config.model_dump(exclude={"recovery_window_hours"}),
        "recovery_window_days": window.strip(),
    }
    try:
        return config.model_validate(fields)  # a classmethod: the config's own model
    except ValidationError as exc:
        why = exc.errors()[0].get("msg", "invalid").removeprefix("Value error, ")
        raise InputError(f"--window: {why} (got {window!r})") from None


__all__ = ["ImportProgress", "Workspace", "checkpoint_session_key"]
