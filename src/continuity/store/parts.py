"""What the ``SqlStore`` mixins (``checkpoints``, ``fencing``, ``lineage``, ``memory``,
``search``, ``vectors``) use of ``SqlStore`` itself (``store.sql``), declared once for the type
checker (issue 46 item 3). At run time ``SqlParts`` is an empty class: ``SqlStore`` defines
every name below, and a mixin's own definition of one (``_memory``) is the one used."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from continuity.core.model import Entry, Memory, Session


class SqlParts:
    """Base of the ``SqlStore`` mixins: ``dialect`` (``"sqlite"`` or ``"postgresql"``) and, for
    the type checker only, the ``SqlStore`` methods the mixins call."""

    dialect: str
    _local: Any  # threading.local(): the connection of an open batch()

    if TYPE_CHECKING:

        def _conn(self) -> AbstractContextManager[Connection]: ...
        def batch(self, *, durable: bool = True) -> AbstractContextManager[None]: ...
        def lock_session(self, key: str) -> bool: ...
        @staticmethod
        def _entry(row: Any, offset: int = 0) -> Entry: ...
        @staticmethod
        def _memory(r: Any) -> Memory: ...
        @staticmethod
        def _session(row: Any) -> Session: ...
        @staticmethod
        def _sessions_select() -> Any: ...
