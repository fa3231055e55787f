"""The project brief (issue 39, item 1; seed 000's recovery digest, grown up): what a new
session of a project is told at its start, about the newest earlier sessions of that project.

``build`` reads (bounded: the newest rows of each session, its newest compaction's summary, its
checkpoints and the memories it is the source of) and extracts the facts
(``continuity.continuation.facts.extract_facts``); ``render`` ranks them and writes the text
within ``recoveryBudgetChars``, framed as quoted evidence, never as an instruction.

May import: ``core``, ``store``, ``formats``, ``redaction``, ``checkpoints``, ``transcripts``,
``continuation``.

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "Brief": "build",
    "FRAMING": "render",
    "HEADING": "render",
    "Reach": "model",
    "SessionBrief": "model",
    "build_brief": "build",
    "how_long_ago": "render",
    "render_brief": "render",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.brief.build import (
        Brief,
        build_brief,
    )
    from continuity.brief.model import (
        Reach,
        SessionBrief,
    )
    from continuity.brief.render import (
        FRAMING,
        HEADING,
        how_long_ago,
        render_brief,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
