"""Store methods for session leases with fencing tokens and refusal receipts (issue 4).

A mixin of ``SqlStore``: methods use ``self._conn()`` (joins an open ``batch()``) and the tables
of ``continuity.store.schema``.

Seed 002 ("fenced writes"): a session has one owner at a time, holding a lease with a fencing
token that strictly increases per session. Every fenced write first runs the conditional

    UPDATE session_leases SET token = token WHERE session_key = :k AND token = :t

in the transaction of the write itself. It matches no row when a newer owner has taken the
lease (or none was ever granted), and the write is refused with ``FencedWrite``. The UPDATE
takes SQLite's database write lock and a PostgreSQL row lock on the lease row, so a takeover
either commits before the check (the stale write is refused) or waits until the write has
committed (the new owner's rows follow it). Two owners never interleave rows (B38, B39, B41).

A lease that has expired stays valid for fencing until someone else acquires the session:
the token, not the clock, decides (a clock is never trusted to fence).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import and_, func, or_, select, update

from continuity.core.errors import FencedWrite, LeaseHeld  # re-exported
from continuity.core.model import (
    Entry,
    EntryKind,
    Lease,
    ReceiptReason,
    RefusalReceipt,
    receipt_detail,
)
from continuity.core.when import as_utc as _utc
from continuity.store import schema as t
from continuity.store.protocol import Store


class FencingStore(Store, Protocol):
    """The ``Store`` primitives plus those of this module: what the continuation checkpoint
    (``continuity.continuation.compaction``) needs."""

    def acquire_lease(
        self, session_key: str, owner: str, ttl: float | timedelta, *, take_over: bool = False
    ) -> Lease: ...
    def lease(self, session_key: str) -> Lease | None: ...
    def release_lease(self, lease: Lease) -> bool: ...
    def append_fenced(
        self, session_key: str, entries: Sequence[Entry], token: int
    ) -> list[Entry]: ...
    def add_receipt(self, receipt: RefusalReceipt, token: int) -> RefusalReceipt: ...
    def receipts(
        self, session_key: str, *, run_id: str | None = None, limit: int | None = 100
    ) -> list[RefusalReceipt]: ...
    def view_bytes_after(self, session_key: str, seq: int) -> int: ...


def _now() -> datetime:
    return datetime.now(UTC)


def _ttl(ttl: float | timedelta) -> timedelta:
    out = ttl if isinstance(ttl, timedelta) else timedelta(seconds=float(ttl))
    if out <= timedelta(0):
        raise ValueError(f"ttl must be positive (got {ttl!r})")
    return out


class FencingStoreMixin:
    """Mixin of ``SqlStore``: session leases with fencing tokens and refusal receipts (issue 4)."""

    _conn: Any
    batch: Any
    append: Any

    # ------------------------------------------------------------------ leases

    def acquire_lease(
        self, session_key: str, owner: str, ttl: float | timedelta, *, take_over: bool = False
    ) -> Lease:
        """Make ``owner`` the session's owner for ``ttl`` (seconds or a timedelta).

        Returns a ``Lease`` whose ``token`` is one more than any token granted before for the
        session (the first is 1); re-acquiring by the same owner also gets a new token. Raises
        ``LeaseHeld`` (a ``FencedWrite``) when another owner's lease has not expired, unless
        ``take_over``; ``ValueError`` for an empty owner or a ttl <= 0. The session row need
        not exist yet.
        """
        if not owner:
            raise ValueError("owner must be a non-empty name")
        now = _now()
        expires = now + _ttl(ttl)
        c = t.session_leases.c
        with self.batch(), self._conn() as conn:
            cond = [c.session_key == session_key]
            if not take_over:
                cond.append(or_(c.expires_at <= now, c.owner == owner))
            # The write comes first: it takes the lock before anything is read (B38).
            bump = (
                update(t.session_leases)
                .where(and_(*cond))
                .values(token=c.token + 1, owner=owner, acquired_at=now, expires_at=expires)
            )
            taken = conn.execute(bump).rowcount == 1 or self._insert_lease(
                conn, session_key, owner, now, expires
            )
            if not taken and take_over:  # a first lease was inserted concurrently
                taken = conn.execute(bump).rowcount == 1
            if not taken:
                row = conn.execute(
                    select(t.session_leases).where(c.session_key == session_key)
                ).first()
                raise LeaseHeld(
                    session_key, row.owner if row else "?", _utc(row.expires_at) if row else None
                )
            token = conn.execute(select(c.token).where(c.session_key == session_key)).scalar()
        return Lease(session_key, owner, int(token), now, expires)

    @staticmethod
    def _insert_lease(conn: Any, key: str, owner: str, now: datetime, expires: datetime) -> bool:
        """Insert the first lease of ``key`` (token 1); False when a row already exists."""
        values = {
            "session_key": key,
            "owner": owner,
            "token": 1,
            "acquired_at": now,
            "expires_at": expires,
        }
        stmt = t.upsert_insert(conn.dialect.name, t.session_leases).on_conflict_do_nothing()
        # RETURNING, not rowcount: drivers report rowcount of a skipped upsert differently.
        return (
            conn.execute(stmt.values(**values).returning(t.session_leases.c.token)).first()
            is not None
        )

    def lease(self, session_key: str) -> Lease | None:
        """The session's newest lease (expired or not), or None if it never had an owner."""
        with self._conn() as conn:
            row = conn.execute(
                select(t.session_leases).where(t.session_leases.c.session_key == session_key)
            ).first()
        if row is None:
            return None
        return Lease(
            row.session_key, row.owner, int(row.token), _utc(row.acquired_at), _utc(row.expires_at)
        )

    def release_lease(self, lease: Lease) -> bool:
        """End ``lease`` now if it is still the newest (its token stays spent). Returns whether
        it was released; a lease already taken over is left alone."""
        c = t.session_leases.c
        with self._conn() as conn:
            done = conn.execute(
                update(t.session_leases)
                .where(and_(c.session_key == lease.session_key, c.token == lease.token))
                .values(expires_at=_now())
            )
        return done.rowcount == 1

    def _check_token(self, conn: Any, session_key: str, token: int) -> None:
        c = t.session_leases.c
        done = conn.execute(
            update(t.session_leases)
            .where(and_(c.session_key == session_key, c.token == token))
            .values(token=c.token)
        )
        if done.rowcount == 0:
            newest = conn.execute(select(c.token).where(c.session_key == session_key)).scalar()
            have = f"the newest is {newest}" if newest is not None else "it has no owner"
            raise FencedWrite(
                f"write to session {session_key!r} refused: fencing token {token} "
                f"is stale ({have}); acquire the session again"
            )

    # ------------------------------------------------------------------ fenced writes

    def append_fenced(self, session_key: str, entries: Sequence[Entry], token: int) -> list[Entry]:
        """Append ``entries`` at the end of the session's log if ``token`` is the session's
        newest fencing token, checked in the same transaction as the write.

        Each entry gets ``seq`` = the session's entry count + its index and the ``entry_id``
        ``<session_key>:<seq>`` (revision 0030: derived, never stored). A continuation compaction whose
        ``first_kept_entry_id`` is None is made self-retaining: it points at its own entry id
        (seed 002: pi normalises the retained pointer to the entry's own id). Returns the
        entries as written. Raises ``FencedWrite`` for a stale token (nothing is written) and
        ``ValueError`` for an unknown session.
        """
        out: list[Entry] = []
        with self.batch(), self._conn() as conn:
            self._check_token(conn, session_key, token)
            count = conn.execute(
                select(t.sessions.c.entry_count).where(t.sessions.c.session_key == session_key)
            ).scalar()
            if count is None:
                raise ValueError(f"unknown session {session_key!r}: upsert it first")
            for i, entry in enumerate(entries):
                entry.seq = count + i
                entry.entry_id = f"{session_key}:{entry.seq}"
                info = entry.compaction
                if info is not None and info.continuation and info.first_kept_entry_id is None:
                    entry.compaction = replace(info, first_kept_entry_id=entry.entry_id)
                out.append(entry)
            self.append(session_key, out)
        return out

    def add_receipt(self, receipt: RefusalReceipt, token: int) -> RefusalReceipt:
        """Record a refusal receipt (run id, closed reason and its short ``detail``, issue 45
        item 7: ``receipt_detail``) if ``token`` is the session's newest fencing token, in the
        same transaction. Returns it with its id and time. Raises ``FencedWrite`` for a stale
        token."""
        reason = ReceiptReason(receipt.reason)
        created = receipt.created_at or _now()
        detail = receipt_detail(receipt.detail)
        with self.batch(), self._conn() as conn:
            self._check_token(conn, receipt.session_key, token)
            result = conn.execute(
                t.refusal_receipts.insert().values(
                    session_key=receipt.session_key,
                    run_id=receipt.run_id,
                    reason=reason.value,
                    token=token,
                    created_at=created,
                    detail=detail,
                )
            )
            receipt_id = result.inserted_primary_key[0]
        return RefusalReceipt(
            receipt.session_key, receipt.run_id, reason, created, receipt_id, detail
        )

    def receipts(
        self, session_key: str, *, run_id: str | None = None, limit: int | None = 100
    ) -> list[RefusalReceipt]:
        """The session's newest ``limit`` refusal receipts (all with None; only ``run_id``'s
        when given), oldest first."""
        c = t.refusal_receipts.c
        cond = [c.session_key == session_key]
        if run_id is not None:
            cond.append(c.run_id == run_id)
        stmt = (
            select(t.refusal_receipts).where(and_(*cond)).order_by(c.receipt_id.desc()).limit(limit)
        )
        with self._conn() as conn:
            rows = conn.execute(stmt).all()
        return [
            RefusalReceipt(
                r.session_key,
                r.run_id,
                ReceiptReason(r.reason),
                _utc(r.created_at),
                r.receipt_id,
                r.detail,
            )
            for r in reversed(rows)
        ]

    # ------------------------------------------------------------------ measures

    def view_bytes_after(self, session_key: str, seq: int) -> int:
        """The summed stored view bytes (UTF-8, ``codec.message_bytes``) of the visible message
        rows with seq > ``seq``: one SQL aggregate, no content read; 0 when there are none
        (every message row has a positive size). B22: the working view is measured from the
        log as it is now, never from a cached usage figure."""
        c = t.entries.c
        stmt = select(func.coalesce(func.sum(c.view_bytes), 0)).where(
            and_(
                c.session_key == session_key,
                c.seq > seq,
                c.visible.is_(True),
                c.kind == EntryKind.MESSAGE.value,
            )
        )
        with self._conn() as conn:
            return int(conn.execute(stmt).scalar() or 0)
