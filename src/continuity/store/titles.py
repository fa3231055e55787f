"""The kept session titles and secrets (issue 43 goal 3, issue 44: a list of sessions in one
read, a session's rows redacted without scanning them each time).

A session's title is redacted by the session-wide rule (``browse.titles``), which needs the
secrets found in the session's rows: computed at each listing, ``continuity sessions`` read
every row of every listed session (1.2 s for 50 sessions of 1 MB). ``session_titles`` keeps
each session's redacted title line with what it was computed from: the SHA-256 of the
session's own title (``own_sha256``) and of the unredacted line (``line_sha256``), and how many
of its rows were scanned (``entry_count``). A reader uses a kept line while the session still
has that many rows and that own title; a session that grew is scanned from its first new row
on (``browse.titles``). The table is a cache: losing it loses nothing (it is computed again).

``session_secrets`` (revision 0028) keeps, the same way, the secret values the session-wide
rule found in a session (``redaction.session.session_secrets``): the own title's SHA-256, the
row count and the last row scanned. The values are stored as JSON (``{value: kind}``); they
stay in this database, which holds them in ``raw_lines`` too, and team sync never reads them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import select

from continuity.store import schema as t
from continuity.store.base import KeptSecrets, KeptTitle, decode_kept_secrets, kept_secrets_row
from continuity.store.parts import SqlParts

_CHUNK = 500  # bound on IN-lists


class TitleStoreMixin(SqlParts):
    """``kept_titles`` / ``keep_titles``: the ``session_titles`` cache; ``kept_secrets`` /
    ``keep_secrets``: the ``session_secrets`` cache (module docstring)."""

    def kept_secrets(self, key: str) -> KeptSecrets | None:
        """The kept secrets of session ``key``, or None when none are kept."""
        c = t.session_secrets.c
        with self._conn() as conn:
            r = conn.execute(
                select(c.own_sha256, c.entry_count, c.last_seq, c.secrets).where(
                    c.session_key == t.nul_free(key)
                )
            ).first()
        return None if r is None else decode_kept_secrets(key, *r)

    def keep_secrets(self, kept: KeptSecrets) -> None:
        """Insert or replace the kept secrets of ``kept.session_key``."""
        stmt = t.upsert_replace(self.dialect, t.session_secrets, ["session_key"])
        with self._conn() as conn:
            conn.execute(stmt, [kept_secrets_row(kept)])

    def kept_titles(self, keys: Iterable[str]) -> dict[str, KeptTitle]:
        """``{session_key: KeptTitle}`` of the ``keys`` that have one (one query per 500)."""
        c = t.session_titles.c
        wanted = list(dict.fromkeys(keys))
        out: dict[str, KeptTitle] = {}
        with self._conn() as conn:
            for i in range(0, len(wanted), _CHUNK):
                part = wanted[i : i + _CHUNK]
                rows = conn.execute(
                    select(c.session_key, c.own_sha256, c.line_sha256, c.entry_count, c.line).where(
                        c.session_key.in_(part)
                    )
                )
                for r in rows:
                    out[r.session_key] = KeptTitle(*r)
        return out

    def keep_titles(self, titles: Sequence[KeptTitle]) -> None:
        """Insert or replace the kept title of each session of ``titles``."""
        if not titles:
            return
        stmt = t.upsert_replace(self.dialect, t.session_titles, ["session_key"])
        with self._conn() as conn:
            conn.execute(
                stmt,
                [
                    {
                        "session_key": k.session_key,
                        "own_sha256": k.own_sha256,
                        "line_sha256": k.line_sha256,
                        "entry_count": k.entry_count,
                        "line": k.line,
                    }
                    for k in titles
                ],
            )


__all__ = [
    "KeptSecrets",
    "KeptTitle",
    "TitleStoreMixin",
]
