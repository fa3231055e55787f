"""``recall`` ranked by ``hybrid_memories`` (issue 40): the ranker that the CLI's ``recall``,
the MCP ``recall`` tool and the daemon's ``/api/memory/recall`` hand to
``transcripts.memories.recall`` (that layer cannot import this one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from continuity.core.model import Memory
from continuity.store.memory import MemoryFilter

if TYPE_CHECKING:
    from continuity.retrieval.settings import RetrievalSettings
    from continuity.store import SqlStore


def hybrid_ranker(
    settings: RetrievalSettings | None = None, *, project: str | None = None, mode: str = "hybrid"
) -> Any:
    """A ``transcripts.memories.Ranker`` ranking by ``hybrid.hybrid_memories`` (``mode``,
    ``project`` as there): ``[(memory, fused score)]`` best first."""
    from continuity.retrieval.hybrid import hybrid_memories

    def rank(
        store: SqlStore, query: str, agent_id: str, limit: int, filters: MemoryFilter
    ) -> list[tuple[Memory, float]]:
        hits = hybrid_memories(
            store,
            query,
            limit=limit,
            filters=filters,
            agent_id=agent_id,
            project=project,
            settings=settings,
            mode=mode,  # pyright: ignore[reportArgumentType] - checked there
        )
        return [(h.memory, h.score) for h in hits if h.memory is not None]

    return rank


def recall_hybrid(
    store: SqlStore,
    query: str,
    *,
    settings: RetrievalSettings | None = None,
    project: str | None = None,
    **kwargs: Any,
) -> Any:
    """``transcripts.memories.recall`` with memories ranked by ``hybrid_memories``; the other
    arguments are ``recall``'s. Returns its ``RecallResponse``."""
    from continuity.transcripts.memories import recall

    return recall(store, query, ranker=hybrid_ranker(settings, project=project), **kwargs)


__all__ = ["hybrid_ranker", "recall_hybrid"]
