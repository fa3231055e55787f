"""continuity: memory for AI coding agents that survives compaction, crashes and new sessions.

The stable Python API (issue 46; README, "As a library") is the names in ``__all__``:
``Workspace`` (``continuity.api.workspace``), the values its methods return, and the errors
they raise (``continuity.core.errors``). Everything else is internal and may change without
notice. A stable name is removed only after one minor version that warns
(``DeprecationWarning``) on its use.

Every name is loaded on first use (PEP 562, ``continuity.core.exports``): ``import continuity``
imports none of continuity's modules, nor SQLAlchemy, pydantic or Typer.
"""

from continuity.api import RESULTS
from continuity.core.exports import lazy_exports

#: The error classes (``continuity.core.errors``); each has the ``exit_code`` the CLI uses.
ERRORS = (
    "AmbiguousSession",
    "ConfigError",
    "ContinuityError",
    "FencedWrite",
    "InputError",
    "LeaseHeld",
    "SchemaOutOfDate",
    "SessionNotFound",
    "StoreConflict",
    "StoreError",
)

_EXPORTS = {
    "Workspace": "api.workspace",
    "ImportProgress": "api.workspace",
    **dict.fromkeys(RESULTS, "api.results"),
    # results that exist below the API, returned as they are
    "SearchHit": "browse.search",
    "Brief": "brief.build",
    "Reach": "brief.model",
    "Written": "resume.session",
    "RememberResponse": "transcripts.memories",
    "RecallResponse": "transcripts.memories",
    "ResumeRefused": "resume.session",
    "UsageReport": "usage.report",
    "UsageRow": "usage.report",
    "UsageTotals": "usage.report",
    "PriceTable": "usage.prices",
    "MessageUsage": "usage.extract",
    **dict.fromkeys(ERRORS, "core.errors"),
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
