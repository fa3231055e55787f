"""Seed 000, "Session Checkpoints": the five triggers and their rules, redacted digests
(``capture``), the 2,500 ms flush queue with its merge caps (``queue``), and reading them back
for the next session, plus replay of imported sessions (``recovery``).

May import: ``core``, ``store``, ``formats``, ``redaction``.

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "CheckpointConfig": "capture",
    "CheckpointFlushError": "queue",
    "CheckpointQueue": "queue",
    "CheckpointRecorder": "capture",
    "Clock": "queue",
    "FLUSH_WINDOW_MS": "queue",
    "FRAMING": "recovery",
    "FlushResult": "queue",
    "MAX_BACKOFF_MS": "queue",
    "MAX_QUERIES": "queue",
    "MAX_REMEMBERS": "queue",
    "RECOVERY_LINE_SLACK": "recovery",
    "Recovery": "recovery",
    "SessionState": "capture",
    "Sink": "queue",
    "Snapshot": "capture",
    "TRUNCATION_MARKER": "recovery",
    "checkpoint_dict": "recovery",
    "format_duration": "capture",
    "format_manual_digest": "capture",
    "format_periodic_digest": "capture",
    "format_pre_compaction_digest": "capture",
    "format_session_end_digest": "capture",
    "load_config": "capture",
    "manual_checkpoint": "recovery",
    "merge_checkpoints": "queue",
    "normalize_project": "capture",
    "prune": "capture",
    "recover": "recovery",
    "recover_resumed": "recovery",
    "render_recovery": "recovery",
    "replay_import": "recovery",
    "replay_session": "recovery",
    "safe_cut": "capture",
    "store_sink": "queue",
    "utc_now": "queue",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.checkpoints.capture import (
        CheckpointConfig,
        CheckpointRecorder,
        SessionState,
        Snapshot,
        format_duration,
        format_manual_digest,
        format_periodic_digest,
        format_pre_compaction_digest,
        format_session_end_digest,
        load_config,
        normalize_project,
        prune,
        safe_cut,
    )
    from continuity.checkpoints.queue import (
        FLUSH_WINDOW_MS,
        MAX_BACKOFF_MS,
        MAX_QUERIES,
        MAX_REMEMBERS,
        CheckpointFlushError,
        CheckpointQueue,
        Clock,
        FlushResult,
        Sink,
        merge_checkpoints,
        store_sink,
        utc_now,
    )
    from continuity.checkpoints.recovery import (
        FRAMING,
        RECOVERY_LINE_SLACK,
        TRUNCATION_MARKER,
        Recovery,
        checkpoint_dict,
        manual_checkpoint,
        recover,
        recover_resumed,
        render_recovery,
        replay_import,
        replay_session,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
