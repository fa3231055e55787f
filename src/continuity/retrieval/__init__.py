"""Retrieval (issue 40): finding what the user meant, by words and by meaning.

``settings`` (the ``[retrieval]`` section), ``embedder`` (local static embeddings through the
``continuity[semantic]`` extra), ``embedding`` (the background pass that embeds rows not yet
embedded, on redacted text), ``index`` (the exact in-memory vector index read from the store), ``query`` (words and
"quoted phrases"), ``hybrid`` (BM25 fused with vector similarity by reciprocal rank fusion,
recency and same-project boosts, quoted phrases; the top proved equal to a full ranking's),
``at_action`` (recall at the point of action: a prompt, an edit, a shell command).

May import: ``core``, ``store``, ``formats``, ``redaction``, ``checkpoints``, ``transcripts``.

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "AtAction": "at_action",
    "EmbedReport": "embedding",
    "Embedder": "embedder",
    "Query": "query",
    "RankedHit": "hybrid",
    "VectorIndex": "index",
    "embed_pending": "embedding",
    "embed_text": "embedding",
    "hybrid_entries": "hybrid",
    "hybrid_memories": "hybrid",
    "hybrid_ranker": "recall",
    "recall_hybrid": "recall",
    "parse_query": "query",
    "pending_count": "embedding",
    "shared_index": "index",
    "MODELS": "embedder",
    "RetrievalSettings": "settings",
    "fetch_model": "embedder",
    "load_embedder": "embedder",
    "recall_for_prompt": "at_action",
    "recall_for_tool": "at_action",
    "retrieval_settings": "settings",
    "semantic_available": "embedder",
    "semantic_note": "embedder",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.retrieval.at_action import (
        AtAction,
        recall_for_prompt,
        recall_for_tool,
    )
    from continuity.retrieval.embedder import (
        MODELS,
        Embedder,
        fetch_model,
        load_embedder,
        semantic_available,
        semantic_note,
    )
    from continuity.retrieval.embedding import (
        EmbedReport,
        embed_pending,
        embed_text,
        pending_count,
    )
    from continuity.retrieval.hybrid import (
        RankedHit,
        hybrid_entries,
        hybrid_memories,
    )
    from continuity.retrieval.index import (
        VectorIndex,
        shared_index,
    )
    from continuity.retrieval.query import (
        Query,
        parse_query,
    )
    from continuity.retrieval.recall import (
        hybrid_ranker,
        recall_hybrid,
    )
    from continuity.retrieval.settings import (
        RetrievalSettings,
        retrieval_settings,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
