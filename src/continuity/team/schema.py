"""The team store's schema (issue 41): its tables, its member role and the row-level security
that decides who reads what, in one PostgreSQL database shared by a team.

**Plain DDL with a version table, not Alembic.** The team store is not a workspace: a
workspace's ``open_store`` migrates to the Alembic head on open, so an Alembic branch there
would create team tables in every SQLite workspace; a second Alembic environment would carry
its own ``env.py`` and version table for a dozen statements; and most of them (roles, grants,
``CREATE POLICY``) are PostgreSQL-only statements Alembic's autogenerate does not compare.
Above all, members never migrate: only the store's owner runs ``init_team_store`` (``continuity
team init``), under an advisory lock, in one transaction, applying the steps above the
recorded ``continuity_team.meta.version``; a member's connection only checks the version
(``check_team_store``).

**Who reads what.** Every row of ``sessions``, ``entries`` and ``checkpoints`` has an
``owner`` (the PostgreSQL role that pushed it, ``current_user``, enforced by ``WITH CHECK``)
and a ``shared_as`` (the project identity its owner shared: ``team share``). A member role
(granted the store's member role, ``member_role``) reads its own rows, and the rows whose
``(owner, shared_as)`` its owner shared with a team (``shares``) the member belongs to
(``members``, kept by the store's owner); nothing else, whatever SQL it runs. The owner of
the tables (the store's admin) is not subject to the policies (``FORCE`` is not set): the
"checked by SQL as the database owner" of issue 41 reads everything.

``forgotten`` (schema version 2) holds each member's tombstones (``continuity forget``: the
key only), readable by the members of the teams its owner shares projects with, so their
copies of the session go too.

Row text: ``entries.row_json`` is a row as ``show --json`` gives it, redacted; ``entries.body``
its searchable text, redacted, indexed as ``tsvector`` (``simple`` configuration) with GIN.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

from continuity.core.errors import ConfigError, StoreError

SCHEMA = "continuity_team"
#: The schema version this continuity writes and reads.
VERSION = 2
#: The member role ``init_team_store`` creates by default.
MEMBER_ROLE = "continuity_member"
#: A role name we put into DDL (quoted, but checked first: a letter, then letters, digits, _).
_ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
#: ``pg_advisory_xact_lock`` key of schema changes ("contitea" in ASCII).
_LOCK = 0x636F_6E74_6974_6561


def _steps(member: str) -> dict[int, list[str]]:
    s = SCHEMA
    own = "owner = current_user"
    teams = f"(SELECT m.team FROM {s}.members m WHERE m.member = current_user)"
    readable = (
        f"(owner, shared_as) IN (SELECT sh.owner, sh.project FROM {s}.shares sh "
        f"JOIN {s}.members m ON m.team = sh.team WHERE m.member = current_user)"
    )
    data = ("sessions", "entries", "checkpoints")
    return {
        1: [
            f"CREATE SCHEMA IF NOT EXISTS {s}",
            f"REVOKE ALL ON SCHEMA {s} FROM PUBLIC",
            f"CREATE TABLE {s}.meta (store_id text NOT NULL, version integer NOT NULL, "
            "member_role name NOT NULL, created_at timestamptz NOT NULL DEFAULT now())",
            f"CREATE TABLE {s}.members (team text NOT NULL, member name NOT NULL, "
            "PRIMARY KEY (team, member))",
            f"CREATE TABLE {s}.shares (owner name NOT NULL DEFAULT current_user, "
            "project text NOT NULL, team text NOT NULL, "
            "shared_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (owner, project, team))",
            f"CREATE TABLE {s}.sessions (owner name NOT NULL DEFAULT current_user, "
            "machine text NOT NULL, session_key text NOT NULL, author text NOT NULL, "
            "project text NOT NULL, shared_as text NOT NULL, harness text NOT NULL, "
            "title text, started_at timestamptz, ended_at timestamptz, "
            "entry_count integer NOT NULL, pushed_at timestamptz NOT NULL DEFAULT now(), "
            "PRIMARY KEY (owner, machine, session_key))",
            f"CREATE TABLE {s}.entries (owner name NOT NULL DEFAULT current_user, "
            "machine text NOT NULL, session_key text NOT NULL, seq integer NOT NULL, "
            "project text NOT NULL, shared_as text NOT NULL, kind text NOT NULL, "
            "role text NOT NULL, ts timestamptz, visible boolean NOT NULL, "
            "row_json text NOT NULL, body text NOT NULL, "
            "search tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED, "
            "PRIMARY KEY (owner, machine, session_key, seq))",
            f"CREATE INDEX ix_entries_search ON {s}.entries USING gin (search)",
            f"CREATE INDEX ix_entries_share ON {s}.entries (owner, shared_as)",
            f"CREATE TABLE {s}.checkpoints (owner name NOT NULL DEFAULT current_user, "
            "machine text NOT NULL, session_key text NOT NULL, checkpoint_id bigint NOT NULL, "
            "project text NOT NULL, shared_as text NOT NULL, trigger text NOT NULL, "
            "digest text NOT NULL, prompt_count integer NOT NULL, "
            "created_at timestamptz NOT NULL, "
            "PRIMARY KEY (owner, machine, session_key, checkpoint_id))",
            f"GRANT USAGE ON SCHEMA {s} TO {member}",
            f"GRANT SELECT ON {s}.meta, {s}.members TO {member}",
            f"GRANT SELECT, INSERT, DELETE ON {s}.shares TO {member}",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON {', '.join(f'{s}.{t}' for t in data)} "
            f"TO {member}",
            f"ALTER TABLE {s}.members ENABLE ROW LEVEL SECURITY",
            f"CREATE POLICY members_self ON {s}.members FOR SELECT TO {member} "
            "USING (member = current_user)",
            f"ALTER TABLE {s}.shares ENABLE ROW LEVEL SECURITY",
            f"CREATE POLICY shares_read ON {s}.shares FOR SELECT TO {member} "
            f"USING ({own} OR team IN {teams})",
            f"CREATE POLICY shares_add ON {s}.shares FOR INSERT TO {member} "
            f"WITH CHECK ({own} AND team IN {teams})",
            f"CREATE POLICY shares_drop ON {s}.shares FOR DELETE TO {member} USING ({own})",
            *(
                stmt
                for t in data
                for stmt in (
                    f"ALTER TABLE {s}.{t} ENABLE ROW LEVEL SECURITY",
                    f"CREATE POLICY {t}_own ON {s}.{t} FOR ALL TO {member} "
                    f"USING ({own}) WITH CHECK ({own})",
                    f"CREATE POLICY {t}_team ON {s}.{t} FOR SELECT TO {member} USING ({readable})",
                )
            ),
        ],
        # issue 41 item 2: a member's tombstones (``continuity forget``), read by the members
        # of the teams they are in, whose copies of the session (``resume``) then go too
        2: [
            f"CREATE TABLE {s}.forgotten (owner name NOT NULL DEFAULT current_user, "
            "session_key text NOT NULL, forgotten_at timestamptz NOT NULL DEFAULT now(), "
            "PRIMARY KEY (owner, session_key))",
            f"GRANT SELECT, INSERT ON {s}.forgotten TO {member}",
            f"ALTER TABLE {s}.forgotten ENABLE ROW LEVEL SECURITY",
            f"CREATE POLICY forgotten_own ON {s}.forgotten FOR INSERT TO {member} "
            f"WITH CHECK ({own})",
            f"CREATE POLICY forgotten_read ON {s}.forgotten FOR SELECT TO {member} "
            # (``members`` shows a member only their own rows: the owners sharing with this
            # member's teams are read from ``shares``, which shows those)
            f"USING ({own} OR owner IN (SELECT sh.owner FROM {s}.shares sh "
            f"WHERE sh.team IN {teams}))",
        ],
    }


def _check_role(role: str) -> str:
    if not _ROLE.match(role):
        raise ConfigError(
            f"member role {role!r}: use lowercase letters, digits and _ (a letter or _ first)"
        )
    return role


@dataclass(frozen=True, slots=True)
class TeamMeta:
    """What ``continuity_team.meta`` holds: the store's id (a UUID, the key of this
    workspace's watermarks), the schema version and the member role."""

    store_id: str
    version: int
    member_role: str


def _read_meta(conn: Any) -> TeamMeta | None:
    from sqlalchemy import text

    exists = conn.execute(text("SELECT to_regclass(:t)"), {"t": f"{SCHEMA}.meta"}).scalar()
    if exists is None:
        return None
    row = conn.execute(text(f"SELECT store_id, version, member_role FROM {SCHEMA}.meta")).first()
    return TeamMeta(row.store_id, row.version, row.member_role) if row else None


def init_team_store(engine: Any, *, member_role: str = MEMBER_ROLE) -> TeamMeta:
    """Create or upgrade the team store's schema on ``engine`` (a SQLAlchemy engine on
    PostgreSQL, connected as the role that will own the tables), in one transaction under an
    advisory lock: the member role (``NOLOGIN``; created when missing, which needs
    ``CREATEROLE``), the tables, grants and policies of each step above the recorded version.
    Idempotent. Returns the ``TeamMeta``. Raises ``StoreError`` when the store is of a newer
    continuity, ``ConfigError`` for a bad role name."""
    from sqlalchemy import text

    member = _check_role(member_role)
    with engine.begin() as conn:
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK})
        meta = _read_meta(conn)
        if meta is not None and meta.version > VERSION:
            raise StoreError(
                f"the team store is at schema version {meta.version}, newer than this "
                f"continuity's {VERSION}: upgrade continuity"
            )
        if meta is not None:
            member = meta.member_role
        have = meta.version if meta else 0
        if have == VERSION:
            return meta  # type: ignore[return-value]
        exists = conn.execute(
            text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": member}
        ).scalar()
        if not exists:
            conn.execute(text(f'CREATE ROLE "{member}" NOLOGIN'))
        for version, statements in sorted(_steps(f'"{member}"').items()):
            if version <= have:
                continue
            for stmt in statements:
                conn.execute(text(stmt))
        if meta is None:
            meta = TeamMeta(str(uuid.uuid4()), VERSION, member)
            conn.execute(
                text(
                    f"INSERT INTO {SCHEMA}.meta (store_id, version, member_role) "
                    "VALUES (:i, :v, :r)"
                ),
                {"i": meta.store_id, "v": VERSION, "r": member},
            )
        else:
            conn.execute(text(f"UPDATE {SCHEMA}.meta SET version = :v"), {"v": VERSION})
            meta = TeamMeta(meta.store_id, VERSION, member)
    return meta


def check_team_store(conn: Any) -> TeamMeta:
    """The ``TeamMeta`` of the team store ``conn`` is connected to. Raises ``StoreError``
    when it has no team schema (its owner runs ``continuity team init``), or one of another
    version than this continuity's (older: its owner runs ``team init`` again; newer: upgrade
    continuity)."""
    from sqlalchemy.exc import ProgrammingError

    try:
        meta = _read_meta(conn)
    except ProgrammingError as exc:  # no USAGE on the schema: not a member
        raise StoreError(
            "the team store refuses this role: its owner grants it the member role "
            f"(continuity team add-member URL ROLE): {str(exc.orig).splitlines()[0]}"
        ) from None
    if meta is None:
        raise StoreError(
            "the database holds no team store yet: its owner runs `continuity team init URL`"
        )
    if meta.version < VERSION:
        raise StoreError(
            f"the team store is at schema version {meta.version}, older than this "
            f"continuity's {VERSION}: its owner runs `continuity team init URL` to upgrade it"
        )
    if meta.version > VERSION:
        raise StoreError(
            f"the team store is at schema version {meta.version}, newer than this "
            f"continuity's {VERSION}: upgrade continuity"
        )
    return meta


def add_member(engine: Any, role: str, team: str) -> None:
    """As the store's owner: make PostgreSQL role ``role`` (existing, with ``LOGIN``) a
    member of ``team``: granted the member role and recorded in ``members``. Idempotent.
    Raises ``StoreError`` when the store has no schema, ``ConfigError`` for a bad name and
    for a role that does not exist or cannot log in (naming ``createuser ROLE``)."""
    from sqlalchemy import text

    _check_role(role)
    with engine.begin() as conn:
        meta = check_team_store(conn)
        login = conn.execute(
            text("SELECT rolcanlogin FROM pg_roles WHERE rolname = :r"), {"r": role}
        ).first()
        if login is None:
            raise ConfigError(
                f"role {role} does not exist on this PostgreSQL server: create it first "
                f"(`createuser {role}`, or CREATE ROLE {role} LOGIN), then add it again"
            )
        if not login[0]:
            raise ConfigError(
                f"role {role} cannot log in: give it LOGIN first (ALTER ROLE {role} LOGIN), "
                "then add it again"
            )
        conn.execute(text(f'GRANT "{meta.member_role}" TO "{role}"'))
        conn.execute(
            text(
                f"INSERT INTO {SCHEMA}.members (team, member) VALUES (:t, :m) "
                "ON CONFLICT DO NOTHING"
            ),
            {"t": team, "m": role},
        )


__all__ = [
    "MEMBER_ROLE",
    "SCHEMA",
    "VERSION",
    "TeamMeta",
    "add_member",
    "check_team_store",
    "init_team_store",
]
