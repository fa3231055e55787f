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

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
