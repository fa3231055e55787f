"""Store methods for session leases with fencing tokens and refusal receipts (issue 4).

A mixin of ``SqlStore``: methods use ``self._conn()`` (joins an open ``batch()``) and the tables
of ``continuity.store.schema``.
"""

from __future__ import annotations


class FencingStoreMixin:
    """Mixin of ``SqlStore``: session leases with fencing tokens and refusal receipts (issue 4)."""
