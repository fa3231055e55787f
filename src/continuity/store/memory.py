"""Store methods for session_transcripts rows and memories with full-text recall (issue 5).

A mixin of ``SqlStore``: methods use ``self._conn()`` (joins an open ``batch()``) and the tables
of ``continuity.store.schema``.
"""

from __future__ import annotations


class MemoryStoreMixin:
    """Mixin of ``SqlStore``: session_transcripts rows and memories with full-text recall (issue 5)."""
