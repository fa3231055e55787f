"""The team store as one member sees it (issue 41): a connection as the member's own
PostgreSQL role, whose reads and writes row-level security bounds (``team.schema``).

Every write is an upsert keyed by ``(owner, machine, session key, seq)`` (rows),
``(owner, machine, session key)`` (sessions) or ``(owner, machine, session key, checkpoint
id)`` (a session's checkpoints, replaced whole): writing the same batch twice changes
nothing, which is what makes a sync killed at any point safe to run again. Each call is one
transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from continuity.core.errors import StoreError
from continuity.core.faults import crash_point
from continuity.team.schema import SCHEMA, TeamMeta, check_team_store

S = SCHEMA
_ENTRY_COLUMNS = (
    "machine",
    "session_key",
    "seq",
    "project",
    "shared_as",
    "kind",
    "role",
    "ts",
    "visible",
    "row_json",
    "body",
)
_SESSION_COLUMNS = (
    "machine",
    "session_key",
    "author",
    "project",
    "shared_as",
    "harness",
    "title",
    "started_at",
    "ended_at",
    "entry_count",
)
_CHECKPOINT_COLUMNS = (
    "machine",
    "session_key",
    "checkpoint_id",
    "project",
    "shared_as",
    "trigger",
    "digest",
    "prompt_count",
    "created_at",
)
#: The index columns ``pull_index`` reads (``store.team_index`` keeps them).
INDEX_COLUMNS = (
    "owner",
    "machine",
    "session_key",
    "author",
    "project",
    "harness",
    "title",
    "started_at",
    "ended_at",
    "entry_count",
    "pushed_at",
)


def _upsert(table: str, columns: Sequence[str], key: Sequence[str]) -> str:
    cols = ", ".join(columns)
    values = ", ".join(f":{c}" for c in columns)
    update = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c not in key)
    return (
        f"INSERT INTO {S}.{table} ({cols}) VALUES ({values}) "
        f"ON CONFLICT (owner, {', '.join(key)}) DO UPDATE SET {update}"
        + (", pushed_at = now()" if table == "sessions" else "")
    )


class TeamStore:
    """A connection to the team store at ``url`` (a PostgreSQL URL, password from libpq's
    ``$PGPASSWORD`` or ``~/.pgpass``). ``meta`` checks the schema (``check_team_store``)
    on first use. Raises ``StoreError`` for an unreachable store or a refused statement,
    naming the store without a password, and ``ConfigError`` when ``check_team_url``
    refuses ``url`` with this process's environment (checked here again, not only at
    ``team join``: a ``$PGHOST`` or ``$PGHOSTADDR`` set since must not send sessions in
    clear)."""

    def __init__(self, url: str, *, connect_timeout: int | None = None) -> None:
        from sqlalchemy import create_engine

        from continuity.team.settings import check_team_url

        check_team_url(url, where="team store URL")
        self.url = url
        # ``connect_timeout`` (seconds) where the URL gives none: a status line must not wait
        # on a store that does not answer
        args = {"connect_timeout": connect_timeout} if connect_timeout else {}
        if "connect_timeout" in url:
            args = {}
        self.engine = create_engine(url, pool_pre_ping=True, connect_args=args)
        self._meta: TeamMeta | None = None

    def _where(self) -> str:
        from sqlalchemy.engine import make_url

        return make_url(self.url).render_as_string(hide_password=True)

    def _begin(self) -> Any:
        from contextlib import contextmanager

        from sqlalchemy.exc import SQLAlchemyError

        @contextmanager
        def begin():
            try:
                with self.engine.begin() as conn:
                    yield conn
            except SQLAlchemyError as exc:
                detail = str(getattr(exc, "orig", None) or exc).splitlines()[0]
                raise StoreError(f"team store {self._where()}: {detail}") from exc

        return begin()

    def close(self) -> None:
        """Release the pooled connections."""
        self.engine.dispose()

    def meta(self) -> TeamMeta:
        """The store's ``TeamMeta`` (read once). Raises ``StoreError``."""
        if self._meta is None:
            with self._begin() as conn:
                self._meta = check_team_store(conn)
        return self._meta

    def whoami(self) -> str:
        """This connection's PostgreSQL role (``current_user``: the ``owner`` of what it
        pushes)."""
        from sqlalchemy import text

        with self._begin() as conn:
            return str(conn.execute(text("SELECT current_user")).scalar())

    def my_teams(self) -> list[str]:
        """The teams this role is a member of (``members``, which shows a member only their
        own rows), sorted."""
        from sqlalchemy import text

        with self._begin() as conn:
            found = conn.execute(
                text(f"SELECT team FROM {S}.members WHERE member = current_user ORDER BY 1")
            )
            return [str(r[0]) for r in found]

    def change_shares(self, team: str, add: Iterable[str], remove: Iterable[str]) -> None:
        """Add this role's shares of ``add`` with ``team`` and drop those of ``remove``
        (identities), in one transaction, leaving every other share of the role as it is:
        a member's other machines share and unshare their own projects (issue 41 review:
        two workspaces of one role no longer overwrite each other's shares). Idempotent.
        Raises ``StoreError`` when the role is not a member of ``team`` (row-level security
        refuses the share)."""
        from sqlalchemy import text

        added, dropped = sorted(set(add)), sorted(set(remove))
        if not added and not dropped:
            return
        with self._begin() as conn:
            if dropped:
                conn.execute(
                    text(
                        f"DELETE FROM {S}.shares WHERE owner = current_user AND team = :t "
                        "AND project = ANY(:p)"
                    ),
                    {"t": team, "p": dropped},
                )
            if added:
                conn.execute(
                    text(
                        f"INSERT INTO {S}.shares (project, team) VALUES (:p, :t) "
                        "ON CONFLICT DO NOTHING"
                    ),
                    [{"p": p, "t": team} for p in added],
                )

    def shares_of(self, project: str) -> list[tuple[str, str]]:
        """``(owner role, team)`` of each share of ``project`` this role may read (its own,
        and those with the teams it is in), sorted."""
        from sqlalchemy import text

        with self._begin() as conn:
            found = conn.execute(
                text(f"SELECT owner, team FROM {S}.shares WHERE project = :p ORDER BY 1, 2"),
                {"p": project},
            )
            return [(str(r.owner), str(r.team)) for r in found]

    def push_session(self, row: Mapping[str, Any]) -> None:
        """Upsert one session (``_SESSION_COLUMNS``)."""
        from sqlalchemy import text

        with self._begin() as conn:
            conn.execute(
                text(_upsert("sessions", _SESSION_COLUMNS, ("machine", "session_key"))),
                {c: row[c] for c in _SESSION_COLUMNS},
            )

    def push_entries(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Upsert a batch of rows (``_ENTRY_COLUMNS``), one transaction."""
        from sqlalchemy import text

        if not rows:
            return
        with self._begin() as conn:
            conn.execute(
                text(_upsert("entries", _ENTRY_COLUMNS, ("machine", "session_key", "seq"))),
                [{c: r[c] for c in _ENTRY_COLUMNS} for r in rows],
            )
            crash_point("team-push-before-commit")
        crash_point("team-push-after-commit")

    def replace_checkpoints(
        self, machine: str, key: str, rows: Sequence[Mapping[str, Any]]
    ) -> None:
        """Make session ``key``'s checkpoints of this role and ``machine`` exactly ``rows``
        (``_CHECKPOINT_COLUMNS``), one transaction."""
        from sqlalchemy import text

        with self._begin() as conn:
            conn.execute(
                text(
                    f"DELETE FROM {S}.checkpoints WHERE owner = current_user "
                    "AND machine = :m AND session_key = :k"
                ),
                {"m": machine, "k": key},
            )
            if rows:
                cols = ", ".join(_CHECKPOINT_COLUMNS)
                values = ", ".join(f":{c}" for c in _CHECKPOINT_COLUMNS)
                conn.execute(
                    text(f"INSERT INTO {S}.checkpoints ({cols}) VALUES ({values})"),
                    [{c: r[c] for c in _CHECKPOINT_COLUMNS} for r in rows],
                )

    def forget(self, key: str) -> int:
        """Delete this role's copies of session ``key`` (from any of its machines) and of the
        sessions below it (``key/...``: a Claude Code subagent's file): rows, checkpoints and
        the session, and record the tombstone (``forgotten``: teammates' copies go too), one
        transaction (``continuity forget``, carried by ``sync``). Returns the sessions
        deleted."""
        from sqlalchemy import text

        where = (
            "owner = current_user AND (session_key = :k OR "
            "left(session_key, length(:k) + 1) = :k || '/')"
        )
        with self._begin() as conn:
            for table in ("entries", "checkpoints"):
                conn.execute(text(f"DELETE FROM {S}.{table} WHERE {where}"), {"k": key})
            conn.execute(
                text(f"INSERT INTO {S}.forgotten (session_key) VALUES (:k) ON CONFLICT DO NOTHING"),
                {"k": key},
            )
            return conn.execute(
                text(f"DELETE FROM {S}.sessions WHERE {where}"), {"k": key}
            ).rowcount

    def forgotten(self) -> list[tuple[str, str]]:
        """``(owner, session key)`` of the tombstones this role may read: its own and those of
        the members sharing projects with its teams."""
        from sqlalchemy import text

        with self._begin() as conn:
            rows = conn.execute(text(f"SELECT owner, session_key FROM {S}.forgotten"))
            return [(r.owner, r.session_key) for r in rows]

    def pull_index(self) -> list[dict[str, Any]]:
        """Every session this role may read (its own, the shared ones of its teams): the
        ``INDEX_COLUMNS``, no rows."""
        from sqlalchemy import text

        with self._begin() as conn:
            found = conn.execute(text(f"SELECT {', '.join(INDEX_COLUMNS)} FROM {S}.sessions"))
            return [dict(r._mapping) for r in found]

    def find_sessions(self, ref: str, *, limit: int = 20) -> list[dict[str, Any]]:
        """The sessions this role may read whose key is ``ref`` or starts with it (byte for
        byte), exact matches first, then by key: each the ``INDEX_COLUMNS`` plus
        ``shared_as``."""
        from sqlalchemy import text

        sql = (
            f"SELECT {', '.join(INDEX_COLUMNS)}, shared_as FROM {S}.sessions "
            "WHERE left(session_key, length(:r)) = :r "
            "ORDER BY session_key <> :r, session_key, owner, machine LIMIT :n"
        )
        with self._begin() as conn:
            return [dict(r._mapping) for r in conn.execute(text(sql), {"r": ref, "n": limit})]

    def session_rows(
        self, owner: str, machine: str, key: str, *, after_seq: int = -1
    ) -> list[tuple[int, str]]:
        """``(seq, row JSON)`` of one session's rows after ``after_seq``, in seq order (the
        rows as pushed: ``show --json``'s shape, redacted)."""
        from sqlalchemy import text

        sql = (
            f"SELECT seq, row_json FROM {S}.entries WHERE owner = :o AND machine = :m "
            "AND session_key = :k AND seq > :a ORDER BY seq"
        )
        with self._begin() as conn:
            found = conn.execute(text(sql), {"o": owner, "m": machine, "k": key, "a": after_seq})
            return [(r.seq, r.row_json) for r in found]

    def session_checkpoints(self, owner: str, machine: str, key: str) -> list[dict[str, Any]]:
        """One session's checkpoints as pushed (trigger, redacted digest, prompt count,
        time), oldest first."""
        from sqlalchemy import text

        sql = (
            f"SELECT checkpoint_id, trigger, digest, prompt_count, created_at FROM "
            f"{S}.checkpoints WHERE owner = :o AND machine = :m AND session_key = :k "
            "ORDER BY created_at, checkpoint_id"
        )
        with self._begin() as conn:
            found = conn.execute(text(sql), {"o": owner, "m": machine, "k": key})
            return [dict(r._mapping) for r in found]

    def search(self, query: str, *, limit: int = 20) -> list[dict[str, Any]]:
        """The best ``limit`` rows this role may read for ``query`` (PostgreSQL
        ``websearch_to_tsquery('simple', ...)``: words, "phrases", -not), best first, each
        with its session's author and machine and a redacted snippet (``ts_headline``)."""
        from sqlalchemy import text

        sql = (
            "SELECT e.owner, e.machine, e.session_key, e.seq, e.project, e.role, e.ts, "
            "s.author, s.title, s.harness, "
            "ts_rank(e.search, q) AS rank, "
            "ts_headline('simple', e.body, q, 'MaxWords=30, MinWords=10, "
            "StartSel=«, StopSel=»') AS snippet "
            f"FROM {S}.entries e, websearch_to_tsquery('simple', :q) q, {S}.sessions s "
            "WHERE e.search @@ q AND s.owner = e.owner AND s.machine = e.machine "
            "AND s.session_key = e.session_key "
            "ORDER BY rank DESC, e.ts DESC NULLS LAST LIMIT :n"
        )
        with self._begin() as conn:
            return [dict(r._mapping) for r in conn.execute(text(sql), {"q": query, "n": limit})]


__all__ = ["INDEX_COLUMNS", "TeamStore"]
