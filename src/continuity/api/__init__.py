"""The public Python API (issue 46): ``Workspace``, the object a program learns first, and the
plain values its methods return (``results``: frozen dataclasses whose ``to_dict()`` is what
the matching ``--json`` prints). ``workspace`` holds ``Workspace``; ``shapes`` the ``--json``
shapes of sessions and rows that the library and the CLI share.

May import: every package below it (``core`` ... ``browse``); never ``daemon`` or ``cli``,
which call it.

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules. ``continuity`` re-exports them again (its ``__all__``).
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "Workspace": "workspace",
    "ImportProgress": "workspace",
    "Checkpoint": "results",
    "CheckpointList": "results",
    "CompactResult": "results",
    "CompactionCheckpoint": "results",
    "Continuation": "results",
    "ContinuationGap": "results",
    "ContinuationGapNotice": "results",
    "ContinuationMessage": "results",
    "ContinuationRequest": "results",
    "ContinuationSummary": "results",
    "DamagedCheckpoint": "results",
    "EmbedCounts": "results",
    "FileImport": "results",
    "ImportResult": "results",
    "ImportTotals": "results",
    "LineError": "results",
    "LineWarning": "results",
    "Refusal": "results",
    "RefusalReceipt": "results",
    "SessionFailure": "results",
    "SessionRecord": "results",
    "SessionRows": "results",
}

TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.api.results import (
        Checkpoint as Checkpoint,
        CheckpointList as CheckpointList,
        CompactionCheckpoint as CompactionCheckpoint,
        CompactResult as CompactResult,
        Continuation as Continuation,
        ContinuationGap as ContinuationGap,
        ContinuationGapNotice as ContinuationGapNotice,
        ContinuationMessage as ContinuationMessage,
        ContinuationRequest as ContinuationRequest,
        ContinuationSummary as ContinuationSummary,
        DamagedCheckpoint as DamagedCheckpoint,
        EmbedCounts as EmbedCounts,
        FileImport as FileImport,
        ImportResult as ImportResult,
        ImportTotals as ImportTotals,
        LineError as LineError,
        LineWarning as LineWarning,
        Refusal as Refusal,
        RefusalReceipt as RefusalReceipt,
        SessionFailure as SessionFailure,
        SessionRecord as SessionRecord,
        SessionRows as SessionRows,
    )
    from continuity.api.workspace import ImportProgress as ImportProgress, Workspace as Workspace

#: Result types of ``continuity.api.results`` (``continuity`` re-exports them too).
RESULTS = tuple(name for name, module in _EXPORTS.items() if module == "results")

# a computed list: the names are _EXPORTS's (tests/core/test_exports.py keeps them equal)
__all__ = sorted(_EXPORTS)  # pyright: ignore[reportUnsupportedDunderAll]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
