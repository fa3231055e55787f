"""Seed 002: the continuation checkpoint after a settled turn (``compaction``; a harness's own,
pi's, summarized by ``harness``), the
summarizers (``summarize``: extractive offline, OpenAI-compatible, Anthropic), and the bounded
continuation the next run reads (``view``: request, newest checkpoint, tail, every tool call
paired, 240,000-byte follow-up budget), and the extraction of what a session did (``facts``,
issue 39) that the extractive summary, the project brief and MEMORY.md share.

May import: ``core``, ``store``, ``formats``, ``redaction``, ``checkpoints``, ``transcripts``.

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "ContinuationView": "view",
    "ExtractiveSummarizer": "summarize.extractive",
    "GAP_NOTICE_RESERVE": "view",
    "Provider": "summarize.settings",
    "ProviderError": "summarize",
    "ProviderReply": "summarize",
    "RESULT_CAP": "summarize.bounds",
    "SessionFacts": "facts",
    "Skip": "compaction",
    "Summarizer": "summarize",
    "SummarizerSettings": "summarize.settings",
    "SummaryRequest": "summarize",
    "UNKNOWN_EFFECTS": "view",
    "WorkingView": "summarize",
    "after_turn": "compaction",
    "build_continuation": "view",
    "compact_now": "compaction",
    "digest": "summarize.bounds",
    "effective_compaction": "view",
    "extract_facts": "facts",
    "gap_notice": "view",
    "load_settings": "summarize.settings",
    "looks_like_error": "summarize",
    "make_summarizer": "summarize",
    "measure_view": "compaction",
    "receipt_dict": "compaction",
    "render_row": "summarize.bounds",
    "repair": "view",
    "summarize_working_view": "harness",
    "summary_text": "view",
    "used_bytes": "view",
    "validate": "summarize",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.continuation.compaction import (
        Skip,
        after_turn,
        compact_now,
        measure_view,
        receipt_dict,
    )
    from continuity.continuation.facts import (
        SessionFacts,
        extract_facts,
    )
    from continuity.continuation.harness import (
        summarize_working_view,
    )
    from continuity.continuation.summarize import (
        ProviderError,
        ProviderReply,
        Summarizer,
        SummaryRequest,
        WorkingView,
        looks_like_error,
        make_summarizer,
        validate,
    )
    from continuity.continuation.summarize.bounds import (
        RESULT_CAP,
        digest,
        render_row,
    )
    from continuity.continuation.summarize.extractive import (
        ExtractiveSummarizer,
    )
    from continuity.continuation.summarize.settings import (
        Provider,
        SummarizerSettings,
        load_settings,
    )
    from continuity.continuation.view import (
        GAP_NOTICE_RESERVE,
        UNKNOWN_EFFECTS,
        ContinuationView,
        build_continuation,
        effective_compaction,
        gap_notice,
        repair,
        summary_text,
        used_bytes,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
