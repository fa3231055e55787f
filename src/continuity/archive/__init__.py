"""Continuous archiving (issue 18 item 1): ``archiver`` follows the harnesses' session folders
and imports what changed through the same path as ``continuity import`` (``ingest``:
``import_files``, checkpoint replay, transcript sync, in chunks whose new rows are handed on,
not read back), so a session is kept even after its harness deletes it.

May import: ``core``, ``store``, ``formats``, ``checkpoints``, ``transcripts``.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "ArchiveSettings": "archiver",
    "Archiver": "archiver",
    "PassResult": "archiver",
    "harness_folders": "archiver",
    "IngestResult": "ingest",
    "ingest": "ingest",
    "load_settings": "archiver",
}
# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.archive.archiver import (
        Archiver,
        ArchiveSettings,
        PassResult,
        harness_folders,
        load_settings,
    )
    from continuity.archive.ingest import (
        IngestResult,
        ingest,
    )

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
