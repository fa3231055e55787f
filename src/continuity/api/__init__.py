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

#: Result types of ``continuity.api.results``.
RESULTS = ("Checkpoint", "CheckpointList", "CompactResult", "CompactionCheckpoint",
           "Continuation", "ContinuationGap", "ContinuationGapNotice", "ContinuationMessage",
           "ContinuationRequest", "ContinuationSummary", "DamagedCheckpoint", "EmbedCounts",
           "FileImport", "ImportResult", "ImportTotals", "LineError", "LineWarning", "Refusal",
           "RefusalReceipt", "SessionFailure", "SessionRecord", "SessionRows")

_EXPORTS = {
    "Workspace": "workspace",
    "ImportProgress": "workspace",
    **dict.fromkeys(RESULTS, "results"),
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)  # type: ignore[misc]
