"""The store interface (``Store``): the primitives the importer and the continuation need,
nothing more.

One implementation (``continuity.store.sql.SqlStore``) serves SQLite and PostgreSQL, which are
dialects under SQLAlchemy Core; ``tests/store`` is the conformance suite both must pass
(``store.lite`` answers the read commands' calls through the standard library's ``sqlite3``).
It lives apart from the records it speaks in (``store.base``, ``store.records``; issue 43
goal 3: start-up) because a ``Protocol`` class needs ``typing`` at run time, which the read
commands otherwise never load; ``continuity.store`` re-exports it on first use.
Conveniences (resolving a session by key prefix, reading a bounded tail) are functions over
these primitives, in ``continuity.store`` or the domain modules.
"""

from __future__ import annotations

from typing import Protocol

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from collections.abc import Iterable, Iterator, Sequence
    from contextlib import AbstractContextManager
    from datetime import datetime

    from continuity.core.model import Entry, Note, Run, Session, ToolCallIndex
    from continuity.store import rawcodec
    from continuity.store.base import RowMeta
    from continuity.store.records import ImportIssue, RawLine, SourceState


class Store(Protocol):
    """Persistence of sessions, their entries, runs, notes and import progress.

    Every method is atomic on its own; ``batch()`` groups several into one transaction (an
    import batch either lands whole or not at all). Errors: ``continuity.core.errors.StoreError``
    for an unusable database; ``ValueError`` for a call that breaks an invariant (e.g. a
    non-contiguous seq in ``append``).
    """

    url: str
    dialect: str

    def batch(self, *, durable: bool = True) -> AbstractContextManager[None]:
        """One transaction around every store call made inside the ``with`` block;
        ``durable=False``: its commit need not survive a power loss until ``make_durable()``
        (``SqlStore.batch``)."""
        ...

    def make_durable(self) -> None:
        """Sync what ``batch(durable=False)`` committed (``SqlStore.make_durable``)."""
        ...

    def text_dict(self) -> rawcodec.TextDict | None:
        """The dictionary the rows' content frames are made with (``SqlStore.text_dict``;
        issue 43 goal 2, revision 0032), None until the store has trained one."""
        ...

    def close(self) -> None: ...

    # sessions
    def upsert_session(self, session: Session) -> None: ...
    def get_session(self, key: str) -> Session | None: ...
    def get_sessions(self, keys: Iterable[str]) -> dict[str, Session]: ...
    def find_sessions(self, prefix: str, *, limit: int = 20) -> list[Session]: ...
    def list_sessions(
        self,
        *,
        limit: int = 0,
        harness: str | None = None,
        project: str | None = None,
        since: datetime | None = None,
    ) -> list[Session]: ...
    def lock_session(self, key: str) -> bool:
        """Inside ``batch()``: hold the session's row for the rest of the transaction, so a
        second writer of the same session waits (a read-then-write step stays atomic).
        False when there is no such session."""
        ...

    # entries
    def append(self, session_key: str, entries: Sequence[Entry]) -> None:
        """Append rows whose ``seq`` continue the session's count exactly (``ValueError``
        otherwise), store their media payloads, and index their tool calls and results."""
        ...

    def entries(
        self,
        session_key: str,
        *,
        after_seq: int = -1,
        limit: int = 1000,
        visible_only: bool = False,
    ) -> list[Entry]: ...
    def entries_by_seq(self, session_key: str, seqs: Iterable[int]) -> list[Entry]: ...
    def rows_meta(
        self,
        session_key: str,
        *,
        after_seq: int | None = None,
        before_seq: int | None = None,
        limit: int = 256,
        newest_first: bool = True,
    ) -> list[RowMeta]:
        """Visible rows (compaction rows included) strictly between the bounds, metadata only."""
        ...

    def tool_calls_from(self, session_key: str, seq: int) -> list[ToolCallIndex]:
        """Tool-call index rows whose call or result is at ``seq`` or later."""
        ...

    def latest_compaction(self, session_key: str) -> Entry | None: ...
    def entry_by_id(self, entry_id: str) -> Entry | None:
        """The row ``<session_key>:<seq>`` names (revision 0030: by the primary key), or None;
        ``InputError`` for a malformed id (``store.rows.parse_entry_id``)."""
        ...

    def tool_calls(self, session_key: str, call_ids: Iterable[str]) -> dict[str, ToolCallIndex]: ...
    def native_seqs(self, session_key: str, native_ids: Iterable[str]) -> dict[str, int]: ...
    def tree_links(
        self, session_key: str
    ) -> Iterator[tuple[int, str | None, str | None, bool, bool]]:
        """``(seq, native_id, parent_native_id, visible, base_visible)`` of every row."""
        ...

    def set_on_path(self, session_key: str, seqs: Iterable[int], on_path: bool) -> None: ...
    def media(self, sha256: str) -> bytes | None: ...

    # runs and notes
    def put_runs(self, runs: Sequence[Run]) -> None: ...
    def replace_runs(self, session_key: str, runs: Sequence[Run]) -> None: ...
    def runs(self, session_key: str, *, agent_id: str | None = None) -> list[Run]: ...
    def last_run(
        self, session_key: str, *, agent_id: str | None = None, ended_only: bool = False
    ) -> Run | None: ...
    def add_note(self, note: Note) -> Note: ...
    def notes(self, session_key: str, *, limit: int = 20) -> list[Note]: ...
    def notes_starting(self, prefix: str, session_keys: Sequence[str]) -> dict[str, list[str]]: ...

    # sources, raw lines, issues
    def get_source(self, path: str) -> SourceState | None: ...
    def get_sources(self, paths: Sequence[str]) -> dict[str, SourceState]: ...
    def sources(self) -> list[SourceState]: ...
    def put_source(self, state: SourceState) -> None: ...
    def claim_source(self, path: str, expected: SourceState | None) -> None: ...
    def settle_sources(self, paths: Sequence[str]) -> None: ...
    def stored_lines(self, session_key: str, path: str) -> set[tuple[int, str]]: ...
    def source_presence(self) -> dict[str, bool]: ...
    def mark_sources(self, paths: Sequence[str], *, gone: bool) -> int: ...
    def put_raw_lines(
        self, lines: Sequence[RawLine], packed: rawcodec.Packed | None = None
    ) -> None: ...
    def is_forgotten(self, key: str) -> bool: ...
    def forget_source_lines(self, path: str) -> int: ...
    def source_line_keys(self, path: str) -> list[tuple[int, int, str]]: ...
    def raw_lines(self, path: str) -> Iterator[RawLine]: ...
    def put_issues(self, issues: Sequence[ImportIssue]) -> None: ...
    def issues(self, path: str | None = None) -> list[ImportIssue]: ...


__all__ = ["Store"]
