"""Store methods for session checkpoints (issue 3): insert with the per-session cap, newest by session/project, prune by age.

A mixin of ``SqlStore``: methods use ``self._conn()`` (joins an open ``batch()``) and the tables
of ``continuity.store.schema``.
"""

from __future__ import annotations


class CheckpointStoreMixin:
    """Mixin of ``SqlStore``: session checkpoints (issue 3): insert with the per-session cap, newest by session/project, prune by age."""
