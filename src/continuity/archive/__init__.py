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
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
