"""Plain types and helpers every layer uses: the data model (sessions, runs, entries,
content blocks, compactions), UTF-8 byte measures and character-safe cuts, the two block
codecs, the error hierarchy and exit codes, the workspace and config.toml sections, the one
rule for session keys, the task list of plan/todo calls, error-text detection (B49). No I/O beyond reading config.toml.

May import: nothing of continuity (the bottom layer).

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "AmbiguousSession": "errors",
    "Block": "model",
    "Checkpoint": "model",
    "CheckpointTrigger": "model",
    "CompactionInfo": "model",
    "ConfigError": "errors",
    "ContinuityError": "errors",
    "DaemonConflict": "errors",
    "Entry": "model",
    "EntryKind": "model",
    "FOLLOW_UP_BUDGET_BYTES": "config",
    "FencedWrite": "errors",
    "InputError": "errors",
    "Lease": "model",
    "LeaseHeld": "errors",
    "LineageDamaged": "errors",
    "MediaBlock": "model",
    "Memory": "model",
    "Note": "model",
    "ReceiptReason": "model",
    "RefusalReceipt": "model",
    "Role": "model",
    "Run": "model",
    "RunStatus": "model",
    "SchemaOutOfDate": "errors",
    "Session": "model",
    "SessionNotFound": "errors",
    "SourceRef": "model",
    "StoreConflict": "errors",
    "StoreError": "errors",
    "TaskItem": "tasklist",
    "TextBlock": "model",
    "ThinkingBlock": "model",
    "ToolCallBlock": "model",
    "ToolCallIndex": "model",
    "ToolResultBlock": "model",
    "TranscriptRow": "model",
    "block_view": "codec",
    "blocks_from_json": "codec",
    "blocks_to_json": "codec",
    "MAX_KEY_CHARS": "keys",
    "clean": "text",
    "clip_middle": "text",
    "cut_utf8": "text",
    "database_url": "config",
    "failed_summary": "error_text",
    "json_bytes": "text",
    "json_len": "text",
    "load_section": "config",
    "looks_like_error": "error_text",
    "message_bytes": "codec",
    "message_view": "codec",
    "open_items": "tasklist",
    "resolve_home": "config",
    "session_key": "keys",
    "task_list": "tasklist",
    "utf8_len": "text",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.core.codec import (
        block_view,
        blocks_from_json,
        blocks_to_json,
        message_bytes,
        message_view,
    )
    from continuity.core.config import (
        FOLLOW_UP_BUDGET_BYTES,
        database_url,
        load_section,
        resolve_home,
    )
    from continuity.core.error_text import (
        failed_summary,
        looks_like_error,
    )
    from continuity.core.errors import (
        AmbiguousSession,
        ConfigError,
        ContinuityError,
        DaemonConflict,
        FencedWrite,
        InputError,
        LeaseHeld,
        LineageDamaged,
        SchemaOutOfDate,
        SessionNotFound,
        StoreConflict,
        StoreError,
    )
    from continuity.core.keys import (
        MAX_KEY_CHARS,
        session_key,
    )
    from continuity.core.model import (
        Block,
        Checkpoint,
        CheckpointTrigger,
        CompactionInfo,
        Entry,
        EntryKind,
        Lease,
        MediaBlock,
        Memory,
        Note,
        ReceiptReason,
        RefusalReceipt,
        Role,
        Run,
        RunStatus,
        Session,
        SourceRef,
        TextBlock,
        ThinkingBlock,
        ToolCallBlock,
        ToolCallIndex,
        ToolResultBlock,
        TranscriptRow,
    )
    from continuity.core.tasklist import (
        TaskItem,
        open_items,
        task_list,
    )
    from continuity.core.text import (
        clean,
        clip_middle,
        cut_utf8,
        json_bytes,
        json_len,
        utf8_len,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
