"""Seed 000, "Lossless Session Transcripts": the ``session_transcripts`` row and the rendering
of a session into it (``session_transcripts``), the canonical JSONL file
(``transcript_log``), the sanitized read-time projection (``projection``), and
remember/recall over memories (``memories``).

May import: ``core``, ``store``, ``formats``, ``redaction``.

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "RecallRequest": "memories",
    "RememberRequest": "memories",
    "TranscriptLog": "transcript_log",
    "TranscriptRecord": "transcript_log",
    "content_hash": "transcript_log",
    "extend_transcript": "session_transcripts",
    "load_transcript": "session_transcripts",
    "memory_id": "memories",
    "project": "projection",
    "put_transcript": "session_transcripts",
    "query_terms": "memories",
    "recall": "memories",
    "recall_request": "memories",
    "remember": "memories",
    "remember_request": "memories",
    "safe_name": "transcript_log",
    "settings": "session_transcripts",
    "sync_import": "session_transcripts",
    "sync_import_report": "session_transcripts",
    "sync_session": "session_transcripts",
    "transcript_path": "transcript_log",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.transcripts.memories import (
        RecallRequest,
        RememberRequest,
        memory_id,
        query_terms,
        recall,
        recall_request,
        remember,
        remember_request,
    )
    from continuity.transcripts.projection import (
        project,
    )
    from continuity.transcripts.session_transcripts import (
        extend_transcript,
        load_transcript,
        put_transcript,
        settings,
        sync_import,
        sync_import_report,
        sync_session,
    )
    from continuity.transcripts.transcript_log import (
        TranscriptLog,
        TranscriptRecord,
        content_hash,
        safe_name,
        transcript_path,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
