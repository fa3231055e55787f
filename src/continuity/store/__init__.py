"""Persistence: the ``Store`` interface, its SQL implementation and schema migrations.

``open_store(url)`` opens a store and brings its schema to the newest Alembic revision first,
on SQLite and PostgreSQL alike (so every command works on a fresh workspace); the check is one
read of ``alembic_version`` when the schema is current. ``continuity db upgrade`` runs the same
migration explicitly, for teams that migrate a shared PostgreSQL before rolling out.

An upgrade is all or nothing (issue 22): every revision it runs, and the ``alembic_version`` row,
commit in one transaction, on SQLite too (where pysqlite would otherwise commit each ``CREATE``
on its own). A kill at any step leaves the schema as it was. Tables that an interrupted first
open of an older continuity left behind without a version record (``sessions`` but no
``alembic_version`` row) are dropped, when empty, before the upgrade runs again.

May import: ``core``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache

from continuity.core.errors import ContinuityError, SchemaOutOfDate, StoreError
from continuity.core.model import Entry
from continuity.core.private import private_dir, private_open
from continuity.store.base import RowMeta

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from continuity.store.protocol import Store
    from continuity.store.records import ImportIssue, RawLine, SourceState
    from continuity.store.sql import SqlStore


def __getattr__(name: str) -> Any:
    """``SqlStore`` on first use (PEP 562): importing the package, or ``store.base`` and
    ``store.lite`` in it, loads no SQLAlchemy (issue 43 goal 3: the read commands' start);
    ``SourceState``, ``RawLine`` and ``ImportIssue`` (``store.records``) likewise, and
    ``Store`` (``store.protocol``: a ``Protocol`` class loads ``typing``)."""
    if name == "SqlStore":
        from continuity.store.sql import SqlStore

        return SqlStore
    if name == "Store":
        from continuity.store.protocol import Store

        return Store
    if name in ("SourceState", "RawLine", "ImportIssue"):
        from continuity.store import records

        return getattr(records, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Store",
    "SqlStore",
    "RowMeta",
    "SourceState",
    "RawLine",
    "ImportIssue",
    "open_store",
    "migrate",
    "iter_entries",
    "schema_revision",
    "HEAD_REVISION",
]

#: The newest migration; ``open_store`` upgrades any older schema to it.
HEAD_REVISION = "0034"
#: The Alembic scripts' folder (text: importing this package loads no ``pathlib``, which the
#: read commands' start never needs, issue 43 goal 3).
_MIGRATIONS = os.path.join(os.path.dirname(__file__), "migrations")


def iter_entries(
    store: Store,
    session_key: str,
    *,
    after_seq: int = -1,
    visible_only: bool = False,
    page_rows: int = 500,
    known: Sequence[Entry] | None = None,
) -> Iterator[Entry]:
    """Every row of the session after ``after_seq``, in seq order, read ``page_rows`` at a time
    (memory stays bounded by one page). A convenience over ``Store.entries``.

    ``known``: the session's last rows, with consecutive seqs up to its newest, as the store
    holds them (issue 17: the rows an import just wrote, ``store.bulk.as_stored``, handed on
    instead of read back). Rows from it are yielded as they are; only the rows before its
    first are read. Raises ``ValueError`` when its seqs are not consecutive."""
    first = known[0].seq if known else None
    if known and first is not None and known[-1].seq - first != len(known) - 1:
        raise ValueError(
            f"known rows of {session_key!r} are not consecutive "
            f"(seqs {first}..{known[-1].seq}, {len(known)} rows)"
        )
    after = after_seq
    while first is None or after + 1 < first:  # the stored rows before the known ones
        page = store.entries(
            session_key, after_seq=after, limit=page_rows, visible_only=visible_only
        )
        below = page if first is None else [e for e in page if e.seq < first]
        yield from below
        if len(page) < page_rows or len(below) < len(page):
            break
        after = page[-1].seq
    if known and first is not None:
        for e in known[max(0, after_seq + 1 - first) :]:
            if e.visible or not visible_only:
                yield e


def _alembic_config(connection):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    cfg.attributes["connection"] = connection
    return cfg


def current_revision(engine) -> str | None:
    """The schema revision recorded in ``alembic_version`` (None on an empty database)."""
    from sqlalchemy import inspect, text

    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def schema_revision(url: str) -> str | None:
    """The schema revision the database at ``url`` records (None: no database or an empty
    one), read without migrating it (``continuity db upgrade`` says what it changed)."""
    engine = _engine(url, False)
    try:
        return current_revision(engine)
    finally:
        engine.dispose()


def migrate(engine, revision: str = "head") -> None:
    """Upgrade the schema of ``engine``'s database to ``revision`` (default: the newest), in one
    transaction: a failure or a kill at any step leaves the schema as it was (issue 22). Tables
    an interrupted upgrade of an older continuity left behind are dropped first
    (``_drop_interrupted``). Raises ``StoreError`` when such a leftover table holds rows."""
    with engine.connect() as conn, _schema_transaction(conn):
        _drop_interrupted(conn)
        _upgrade(conn, revision)


def _upgrade(conn, revision: str) -> None:
    from alembic import command

    command.upgrade(_alembic_config(conn), revision)


@contextmanager
def _schema_transaction(conn) -> Iterator[None]:
    """One real transaction on ``conn`` around the block, committed at its end.

    PostgreSQL's DDL is transactional as is. pysqlite (Python < 3.12) opens a transaction only
    before INSERT/UPDATE/DELETE and runs ``CREATE TABLE`` outside any, committed at once: a kill
    after the first ``CREATE`` used to leave ``sessions`` without a version row (issue 22). So on
    SQLite the driver's implicit transactions are switched off for the block and the
    transaction is opened explicitly (``BEGIN IMMEDIATE``: the write lock from the start), the
    SQLAlchemy recipe "Serializable isolation / Savepoints / Transactional DDL" for pysqlite."""
    if conn.dialect.name != "sqlite":
        with conn.begin():
            yield
        return
    raw = conn.connection.driver_connection
    saved = raw.isolation_level
    raw.isolation_level = None
    try:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.rollback()
            raise
        conn.commit()
    finally:
        raw.isolation_level = saved


@cache
def _tables_at(revision: str) -> frozenset[str]:
    """The tables a database holds at ``revision``, found by migrating an empty in-memory
    SQLite database to it (SQLite's full-text shadow tables included)."""
    from sqlalchemy import create_engine, inspect

    engine = create_engine("sqlite://")
    try:
        with engine.connect() as conn:
            with _schema_transaction(conn):
                _upgrade(conn, revision)
            return frozenset(inspect(conn).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def _drop_interrupted(conn) -> None:
    """Drop the tables an interrupted upgrade left behind, before upgrading again (issue 22).

    Before upgrades were one transaction, a kill could leave tables of a revision committed
    without its ``alembic_version`` row (first open: ``sessions`` and no version); running that
    revision again then failed with "table sessions already exists" on every command. A
    leftover is a table of ours (one the newest schema has) that the recorded revision does not
    have. Tables that are not ours are never touched. A leftover that holds rows is not
    dropped: ``StoreError`` names it, so nothing is lost."""
    from sqlalchemy import inspect, text

    recorded = None
    if inspect(conn).has_table("alembic_version"):
        recorded = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    if recorded == HEAD_REVISION:
        return
    ours = _tables_at(HEAD_REVISION)
    present = set(inspect(conn).get_table_names()) & ours
    if not present:
        return
    leftovers = present - (_tables_at(recorded) if recorded else frozenset())
    if not leftovers:
        return
    virtual: set[str] = set()
    if conn.dialect.name == "sqlite":
        virtual = {
            name
            for (name,) in conn.execute(
                text(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'"
                )
            )
        }
    quote = conn.dialect.identifier_preparer.quote
    # Virtual tables first: dropping one drops its shadow tables, which are not empty.
    for name in sorted(leftovers, key=lambda n: (n not in virtual, n)):
        if not inspect(conn).has_table(name):
            continue
        if conn.execute(text(f"SELECT 1 FROM {quote(name)} LIMIT 1")).first() is not None:
            raise StoreError(
                f"table {name} holds rows but the schema record says revision "
                f"{recorded or 'none'}, which has no such table: an upgrade was interrupted after "
                "data was written; not dropping it (restore the database from a backup, or "
                "move the rows out of that table and run `continuity db upgrade`)"
            )
        conn.execute(text(f"DROP TABLE {quote(name)}"))


def _read_only_url(parsed, db: Path):
    """A SQLite URI opening ``db`` read-only (``mode=ro``); ``immutable=1`` too when no
    ``-wal``/``-shm`` file is beside it (SQLite cannot make them in a read-only folder, and
    nothing can be writing the database there then)."""
    from pathlib import Path

    live = any(Path(f"{db}{suffix}").exists() for suffix in ("-wal", "-shm"))
    query = {"mode": "ro", "uri": "true", **({} if live else {"immutable": "1"})}
    return parsed.set(database=f"file:{db}", query=query)


def _engine(url: str, read_only: bool = False):
    from pathlib import Path

    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(
            f"not a database URL: {url!r} (use sqlite:///PATH or postgresql+psycopg://USER@HOST/DB)"
        ) from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        db = parsed.database
        if db and db != ":memory:":
            folder = Path(db).expanduser().parent
            try:
                private_dir(folder)
            except OSError as exc:
                raise StoreError(
                    f"cannot create the workspace folder {folder}: {exc.strerror or exc}"
                ) from exc
            path = Path(db).expanduser()
            if (
                read_only
                and path.is_file()
                and not (os.access(folder, os.W_OK) and os.access(path, os.W_OK))
            ):
                # a read-only workspace (mode 0500): read its database without writing
                return create_engine(_read_only_url(parsed, path), pool_size=2, max_overflow=4)
            try:
                # issue 16: the database holds every raw line. Created 0600 before SQLite
                # opens it, its -wal and -shm files take the same mode.
                os.close(private_open(path, os.O_RDWR | os.O_CREAT))
            except PermissionError as exc:
                if read_only and path.is_file():
                    return create_engine(_read_only_url(parsed, path), pool_size=2, max_overflow=4)
                raise StoreError(
                    f"cannot write in the workspace folder {folder} "
                    f"({path.name}): {exc.strerror or exc}"
                ) from exc
            except OSError as exc:  # the folder exists: say what really failed (review)
                raise StoreError(
                    f"cannot write in the workspace folder {folder} "
                    f"({Path(db).expanduser().name}): {exc.strerror or exc}"
                ) from exc
        # A file database keeps a small pool: opening a connection runs the PRAGMAs and, on
        # close, a WAL checkpoint; reusing connections keeps a continuation to one of them.
        return create_engine(parsed, pool_size=2, max_overflow=4)
    if backend != "postgresql":
        raise StoreError(
            f"unsupported database {backend!r} in {url!r}: continuity stores in "
            "SQLite or PostgreSQL"
        )
    if parsed.get_driver_name() in ("", "psycopg2"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    try:
        return create_engine(parsed, pool_pre_ping=True)
    except ImportError as exc:
        raise StoreError(
            "PostgreSQL needs the psycopg driver: pip install 'continuity[postgres]'"
        ) from exc


def _migrate_to_head(engine, auto_migrate: bool) -> None:
    rev = current_revision(engine)
    if rev == HEAD_REVISION:
        return
    if rev is not None and rev not in _known_revisions():
        raise SchemaOutOfDate(
            f"database schema is at {rev}, newer than this version of "
            f"continuity knows ({HEAD_REVISION}): upgrade continuity"
        )
    if not auto_migrate:
        raise SchemaOutOfDate(
            f"database schema is at {rev or 'nothing'}, this version needs "
            f"{HEAD_REVISION}: run `continuity db upgrade`"
        )
    with _migration_lock(engine):
        # Another process may have migrated while this one waited for the lock.
        rev = current_revision(engine)
        if rev != HEAD_REVISION:
            migrate(engine)
            if rev is not None and rev < _LAST_REBUILD:
                _give_back_space(engine)


#: The newest revision that recreates tables on SQLite (0029: the raw line keys' columns; 0030:
#: ``entries`` without ``entry_id`` and ``source_path``; 0031: ``entries`` keyed by ``entry_no``
#: and ``tool_calls`` without a rowid): an upgrade across it leaves the old
#: tables' pages free in the file (a 63.9 MB store was 86.5 MB after 0030, 55.2 MB vacuumed).
_LAST_REBUILD = "0031"


def _give_back_space(engine) -> None:
    """``VACUUM`` a SQLite database after an upgrade that recreated tables, so the file shrinks
    as the upgrade promised instead of keeping the old tables' pages free (issue 43 goal 2).
    It rewrites the file (about as long as reading it once); when another connection holds the
    database it is skipped with a warning: the free pages are then reused by later writes.
    Nothing on PostgreSQL (its autovacuum reclaims the space)."""
    if engine.dialect.name != "sqlite":
        return
    import logging

    from sqlalchemy.exc import OperationalError

    log = logging.getLogger(__name__)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("VACUUM")
    except OperationalError as exc:
        log.warning(
            "after the schema upgrade, VACUUM was skipped (%s): the freed pages stay "
            "in the file and are reused by later writes",
            exc.orig,
        )


@contextmanager
def _migration_lock(engine) -> Iterator[None]:
    """Serialise schema creation between processes: a lock file beside a SQLite database, a
    session-level advisory lock on PostgreSQL."""
    from sqlalchemy import text

    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(74380001)"))
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(74380001)"))
        return
    db = engine.url.database
    if not db or db == ":memory:":
        yield
        return
    import fcntl

    with os.fdopen(
        private_open(f"{db}.migrate.lock", os.O_RDWR | os.O_APPEND | os.O_CREAT), "a+b"
    ) as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _known_revisions() -> set[str]:
    from alembic.script import ScriptDirectory

    return {r.revision for r in ScriptDirectory(str(_MIGRATIONS)).walk_revisions()}


def _unwritable(engine) -> str:
    """``"; the workspace folder F is not writable ..."`` when a SQLite database's folder
    cannot be written (SQLite makes its ``-wal`` and ``-shm`` files there, even to read), else
    ``""``."""
    db = engine.url.database if engine.dialect.name == "sqlite" else None
    if not db or db == ":memory:":
        return ""
    from pathlib import Path

    folder = Path(db).expanduser().parent
    if folder.is_dir() and not os.access(folder, os.W_OK):
        return (
            f"; the workspace folder {folder} is not writable (SQLite writes its -wal and "
            "-shm files beside the database, even to read it)"
        )
    return ""


def open_store_raw(url: str, *, auto_migrate: bool = True, read_only: bool = False) -> SqlStore:
    """A ``SqlStore`` on ``url``; see ``open_store``. The caller closes it."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import OperationalError, SQLAlchemyError

    from continuity.store.sql import SqlStore

    engine = _engine(url, read_only)
    read_only_db = engine.url.query.get("mode") == "ro"
    if read_only_db:
        auto_migrate = False  # a read-only database is read at the newest schema, or not at all
    safe = make_url(url).render_as_string(hide_password=True)
    try:
        _migrate_to_head(engine, auto_migrate)
    except SchemaOutOfDate as exc:
        engine.dispose()
        if read_only_db and "db upgrade" in str(exc):  # issue 20: say who can run it
            from pathlib import Path

            folder = Path(make_url(url).database or "").expanduser().parent
            raise SchemaOutOfDate(
                f"{exc} as a user who can write the workspace folder "
                f"{folder} (it is read-only here, so it was opened "
                "read-only and cannot be migrated)"
            ) from None
        raise
    except OperationalError as exc:
        engine.dispose()
        msg = str(exc.orig).splitlines()[0] if exc.orig else str(exc).splitlines()[0]
        raise StoreError(f"cannot open database {safe}: {msg}{_unwritable(engine)}") from exc
    except SQLAlchemyError as exc:
        engine.dispose()
        msg = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        raise StoreError(f"cannot open database {safe}: {exc.__class__.__name__}: {msg}") from exc
    except ContinuityError:
        engine.dispose()
        raise
    # The migration's pooled connections predate SqlStore's connect hook (WAL, busy timeout):
    # drop them so every connection the store uses runs it.
    engine.dispose()
    return SqlStore(engine, url)


@contextmanager
def open_store(
    url: str | os.PathLike[str], *, auto_migrate: bool = True, read_only: bool = False
) -> Iterator[SqlStore]:
    """Open the store at ``url`` (a SQLAlchemy URL, or a path to a SQLite file), migrating its
    schema to the newest revision first unless ``auto_migrate`` is False (then an old schema
    raises ``SchemaOutOfDate`` naming `continuity db upgrade`). Raises ``StoreError`` when the
    database cannot be opened. Closes the store on exit. ``read_only``: a SQLite database in
    a workspace that cannot be written (mode 0500) is opened read-only (``mode=ro``) instead of
    failing, when its schema is the newest (else ``SchemaOutOfDate``); a write then fails as
    a ``StoreError`` (fresh-user review: ``sessions`` in a read-only workspace)."""
    text_url = str(url)
    if "://" not in text_url:
        from pathlib import Path

        text_url = f"sqlite:///{Path(text_url).expanduser()}"
    store = open_store_raw(text_url, auto_migrate=auto_migrate, read_only=read_only)
    try:
        yield store
    finally:
        store.close()
