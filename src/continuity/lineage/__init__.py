"""Seed 000, "Canonical Markdown Lineage and MEMORY.md Projection": the immutable
transcript/summary/compaction artifacts and the mutable manifest (``artifacts``,
``frontmatter``), the consolidation pass ("Dreaming", ``consolidation``), durable memories,
threads and the temporal DAG, the memory sentence, the MEMORY.md projection (``memory_md``) and
what ``continuity lineage`` shows (``report``).

May import: ``core``, ``store``, ``formats``, ``redaction``, ``checkpoints``, ``transcripts``,
``continuation``.

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "LineageDamaged": "artifacts",
    "SECTIONS": "memory_md",
    "consolidate": "consolidation",
    "default_path": "memory_md",
    "one_line": "sentence",
    "parse_iso": "artifacts",
    "render_memory_md": "memory_md",
    "repair_hint": "report",
    "run_pass": "consolidation",
    "session_lineage": "report",
    "thread_of": "temporal_dag",
    "write": "memory_md",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.lineage.artifacts import (
        LineageDamaged,
        parse_iso,
    )
    from continuity.lineage.consolidation import (
        consolidate,
        run_pass,
    )
    from continuity.lineage.memory_md import (
        SECTIONS,
        default_path,
        render_memory_md,
        write,
    )
    from continuity.lineage.report import (
        repair_hint,
        session_lineage,
    )
    from continuity.lineage.sentence import (
        one_line,
    )
    from continuity.lineage.temporal_dag import (
        thread_of,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
