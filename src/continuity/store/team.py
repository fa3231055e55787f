"""Store methods of team sync (issue 41, revision 0026): the watermarks of what this
workspace pushed to a team store, per table and per session, and the team's session index
pulled from it.

A mixin of ``SqlStore``: methods use ``self._conn()`` (joins an open ``batch()``). Every row
is keyed by the team store's id (``team_store``), so another team store starts from nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, delete, func, or_, select

from continuity.core.when import as_utc
from continuity.store import schema as t
from continuity.store.parts import SqlParts


class TeamSyncStoreMixin(SqlParts):
    """Mixin of ``SqlStore``: the primitives of ``continuity.team.sync``."""

    def team_marks(self, team_store: str) -> dict[str, str]:
        """The watermarks (``{table name: mark}``) of ``team_store``; ``{}`` before its first
        sync."""
        c = t.team_marks.c
        with self._conn() as conn:
            rows = conn.execute(select(c.name, c.mark).where(c.team_store == team_store))
            return {r.name: r.mark for r in rows}

    def set_team_marks(self, team_store: str, marks: Mapping[str, str]) -> None:
        """Record ``marks`` (``{table name: mark}``) for ``team_store``, replacing those
        named."""
        if not marks:
            return
        stmt = t.upsert_insert(self.dialect, t.team_marks)
        stmt = stmt.on_conflict_do_update(
            index_elements=["team_store", "name"], set_={"mark": stmt.excluded.mark}
        )
        with self._conn() as conn:
            conn.execute(
                stmt, [{"team_store": team_store, "name": k, "mark": v} for k, v in marks.items()]
            )

    def team_pushed(
        self, team_store: str, keys: Iterable[str]
    ) -> dict[str, tuple[int, str, int | None]]:
        """``{session key: (last seq pushed, secrets digest, visible rows through it or
        None)}`` of those of ``keys`` pushed to ``team_store``."""
        c = t.team_pushed.c
        wanted = list(dict.fromkeys(keys))
        found: dict[str, tuple[int, str, int | None]] = {}
        with self._conn() as conn:
            for i in range(0, len(wanted), 500):
                rows = conn.execute(
                    select(c.session_key, c.pushed_seq, c.secrets_sha, c.visible_rows).where(
                        c.team_store == team_store, c.session_key.in_(wanted[i : i + 500])
                    )
                )
                found.update(
                    {r.session_key: (r.pushed_seq, r.secrets_sha, r.visible_rows) for r in rows}
                )
        return found

    def set_team_pushed(
        self,
        team_store: str,
        key: str,
        seq: int,
        secrets_sha: str,
        visible_rows: int | None = None,
    ) -> None:
        """Record that session ``key``'s rows up to ``seq`` are in ``team_store``, redacted
        with the secrets whose digest is ``secrets_sha``, ``visible_rows`` of them visible
        (None: not counted, a push still under way)."""
        stmt = t.upsert_insert(self.dialect, t.team_pushed)
        stmt = stmt.on_conflict_do_update(
            index_elements=["team_store", "session_key"],
            set_={
                "pushed_seq": stmt.excluded.pushed_seq,
                "secrets_sha": stmt.excluded.secrets_sha,
                "visible_rows": stmt.excluded.visible_rows,
                "pushed_at": stmt.excluded.pushed_at,
            },
        )
        with self._conn() as conn:
            conn.execute(
                stmt,
                {
                    "team_store": team_store,
                    "session_key": key,
                    "pushed_seq": seq,
                    "secrets_sha": secrets_sha,
                    "visible_rows": visible_rows,
                    "pushed_at": datetime.now(UTC),
                },
            )

    def visible_through(self, key: str, seq: int) -> int:
        """How many rows of session ``key`` with a seq up to ``seq`` are visible (on the
        conversation path)."""
        e = t.entries.c
        with self._conn() as conn:
            stmt = select(func.count()).where(
                e.session_key == key, e.seq <= seq, e.visible.is_(True)
            )
            return int(conn.execute(stmt).scalar() or 0)

    def sessions_changed(
        self, since: datetime | None, after_checkpoint: int
    ) -> tuple[list[str], datetime | None, int]:
        """Keys of the sessions updated at or after ``since`` (every session when None) or
        holding a checkpoint whose id is above ``after_checkpoint``, oldest update first;
        with the newest ``updated_at`` and the highest checkpoint id seen (the next
        watermarks)."""
        s = t.sessions.c
        k = t.session_checkpoints.c
        with self._conn() as conn:
            newest = conn.execute(select(func.max(s.updated_at))).scalar()
            top = conn.execute(select(func.max(k.checkpoint_id))).scalar() or 0
            with_checkpoints = select(k.session_key).where(k.checkpoint_id > after_checkpoint)
            stmt = select(s.session_key).order_by(s.updated_at, s.session_key)
            if since is not None:  # None: every session
                stmt = stmt.where(
                    or_(s.session_key.in_(with_checkpoints), s.updated_at >= as_utc(since))
                )
            keys = [r.session_key for r in conn.execute(stmt)]
        return keys, as_utc(newest) if newest is not None else None, int(top)

    def put_team_index(self, team_store: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Replace the pulled session index with ``rows`` of ``team_store`` (each the
        ``team_index`` columns but ``team_store``), in one transaction. The index holds one
        team store's sessions, the last pulled: any other store's rows go too."""
        with self._conn() as conn:
            conn.execute(delete(t.team_index))
            if rows:
                conn.execute(t.team_index.insert(), [{**r, "team_store": team_store} for r in rows])

    def team_index(
        self,
        team_store: str | None,
        *,
        limit: int = 0,
        project: str | None = None,
        since: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """The pulled index of ``team_store`` (None: whichever was pulled last), newest
        activity first, at most ``limit`` (0:
        all); only of ``project`` (an identity) or a folder inside it; active since
        ``since``. Each a dict of the ``team_index`` columns but ``team_store``."""
        c = t.team_index.c
        activity = func.coalesce(c.ended_at, c.started_at, c.pushed_at)
        stmt = select(*(col for col in t.team_index.c if col.name != "team_store")).order_by(
            activity.desc(), c.session_key
        )
        if team_store is not None:
            stmt = stmt.where(c.team_store == team_store)
        if project is not None:
            stmt = stmt.where(
                or_(
                    c.project == project,
                    c.project.startswith(
                        project + ("/" if "#" in project else "#"), autoescape=True
                    ),
                )
            )
        if since is not None:
            stmt = stmt.where(and_(activity >= as_utc(since)))
        if limit:
            stmt = stmt.limit(limit)
        with self._conn() as conn:
            rows = [dict(r._mapping) for r in conn.execute(stmt)]
        for r in rows:
            for name in ("started_at", "ended_at", "pushed_at"):
                if r[name] is not None:
                    r[name] = as_utc(r[name])
        return rows

    def put_team_copy(self, key: str, origin: Mapping[str, str]) -> None:
        """Record session ``key`` as a copy pulled from the team store (``origin``:
        ``team_store``, ``owner``, ``machine``, ``original_key``, ``author``); replaces an
        earlier record of ``key``."""
        with self._conn() as conn:
            conn.execute(delete(t.team_copies).where(t.team_copies.c.session_key == key))
            conn.execute(
                t.team_copies.insert().values(
                    session_key=key, pulled_at=datetime.now(UTC), **dict(origin)
                )
            )

    def team_copy(self, key: str) -> dict[str, Any] | None:
        """Where the copy ``key`` came from (the ``team_copies`` row), None when ``key`` is
        not a copy."""
        c = t.team_copies.c
        with self._conn() as conn:
            row = conn.execute(select(t.team_copies).where(c.session_key == key)).first()
        return dict(row._mapping) if row else None

    def team_copy_keys(self) -> set[str]:
        """The keys of every copy pulled from a team store (``sync`` pushes none of them)."""
        with self._conn() as conn:
            return {r[0] for r in conn.execute(select(t.team_copies.c.session_key))}
