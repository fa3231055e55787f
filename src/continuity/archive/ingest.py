"""The import command's whole path, shared by ``continuity import`` and the archiver: session
files imported (``formats.importer.import_files``), their checkpoints replayed
(``checkpoints.replay_import``) and their transcripts written
(``transcripts.sync_import_report``).

Issue 17: the two phases after the import run on chunks of the imported files, as the import
goes, not once at its end. The import keeps the rows it adds (``import_files(keep_rows=True)``,
``FileReport.new_rows``), so the phases replay and render them as they are instead of reading
every new row back from the store (about a third of a fresh import went to reading and
decoding them twice); a chunk's rows are dropped once its phases ran, so memory stays bounded
by ``CHUNK_BYTES`` whatever the import's size. A session whose rows were not kept (a file
larger than ``formats.importer.KEEP_ROWS_BYTES``, one that several files added to) is read
from the store as before; the checkpoints and transcripts are the same either way.

A file's rows stay due (``SourceState.pending_from``, set in the transaction that stores
them) until the transcript phase, the last, wrote their session's transcript (its
transaction clears it: ``Store.settle_sources``): an import interrupted between the two
leaves them due, and the next one derives them even though the file is unchanged.

Issue 43 goal 1: while ``ingest`` runs, the objects that existed when it began (the modules
loaded, SQLAlchemy's and Alembic's among them: about 100,000) are frozen (``gc.freeze``) and
thawed at its end, so the collector's full passes, which a large import triggers several
times, walk only the import's own objects, and the young generation is collected every
``YOUNG_THRESHOLD`` allocations instead of 700. On the 50 MB tree the collector's time went
from 0.61 to 0.13 CPU s (full passes 0.45 -> 0.03).
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from continuity.formats.importer import FileReport, ImportReport, import_files
from continuity.transcripts.session_transcripts import ImportSync, sync_import_report

if TYPE_CHECKING:
    from continuity.checkpoints.capture import CheckpointConfig
    from continuity.store import SqlStore

#: The phases after the import run once the files imported since they last ran added this
#: many bytes of lines (``FileReport.offset - resumed_from``, counted for files whose rows
#: were kept), and at the end.
CHUNK_BYTES = 16 * 1024 * 1024
#: The young generation's collection threshold while ``ingest`` runs (the default is 700):
#: most of an import's objects die young by reference counting, and fewer passes promote
#: fewer of them to be walked again (module docstring).
YOUNG_THRESHOLD = 20_000


@dataclass
class IngestResult:
    """What ``ingest`` did: ``report`` (every file's ``FileReport``, in order), the
    checkpoints the replay added (``checkpoints_replayed``) and the transcript phase's
    figures summed over the chunks (``transcripts``)."""

    report: ImportReport = field(default_factory=ImportReport)
    checkpoints_replayed: int = 0
    transcripts: ImportSync = field(default_factory=ImportSync)
    #: issue 45 item 1: sessions whose checkpoints could not be replayed, as
    #: ``(session_key, reason)``; the others got theirs
    checkpoints_failed: list[tuple[str, str]] = field(default_factory=list)


def ingest(
    store: SqlStore,
    files: Iterable[Path],
    *,
    config: CheckpointConfig,
    home: str | os.PathLike[str] | None = None,
    progress: Callable[[int], None] | None = None,
    done: Callable[[FileReport], None] | None = None,
    phase: Callable[[str], None] | None = None,
    report: ImportReport | None = None,
    stop: Callable[[], bool] | None = None,
) -> IngestResult:
    """Import ``files`` and run the checkpoint and transcript phases on them, chunk by chunk
    (module docstring). ``progress(n)`` counts bytes read, ``done(report)`` each file's final
    report, ``phase(name)`` names the step running now (``importing``, ``checkpoints``,
    ``transcripts``). The reports are appended to ``report`` when given (the caller's, which
    may already hold unreadable paths). Once ``stop()`` is true no further file is imported
    (``import_files``'s ``stop``) and the phases run on what was: the reports then cover the
    first files only. Raises what the phases raise for bad settings
    (``ConfigError``); a file or session that fails is reported, and the others go on."""
    with _frozen_heap():
        return _ingest(
            store,
            files,
            config=config,
            home=home,
            progress=progress,
            done=done,
            phase=phase,
            report=report,
            stop=stop,
        )


#: How many ``ingest`` calls run now (the daemon's threads may overlap) and the collector's
#: thresholds before the first began: the first freezes, the last thaws and restores.
_heap: dict[str, Any] = {"users": 0, "threshold": None}
_heap_lock = threading.Lock()


@contextmanager
def _frozen_heap() -> Iterator[None]:
    """Freeze the objects alive now for the block and collect the young generation every
    ``YOUNG_THRESHOLD`` allocations (module docstring): the collector's passes skip the frozen
    objects, which are thawed (back in the oldest generation) when the last block running
    ends, so nothing stays uncollectable, and the thresholds it found are restored."""
    with _heap_lock:
        _heap["users"] += 1
        if _heap["users"] == 1:
            _heap["threshold"] = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(YOUNG_THRESHOLD, *_heap["threshold"][1:])
    try:
        yield
    finally:
        with _heap_lock:
            _heap["users"] -= 1
            if _heap["users"] == 0:
                gc.set_threshold(*_heap["threshold"])
                gc.unfreeze()


def _ingest(
    store: SqlStore,
    files: Iterable[Path],
    *,
    config: CheckpointConfig,
    home: str | os.PathLike[str] | None,
    progress: Callable[[int], None] | None,
    done: Callable[[FileReport], None] | None,
    phase: Callable[[str], None] | None,
    report: ImportReport | None,
    stop: Callable[[], bool] | None,
) -> IngestResult:
    from continuity.checkpoints.recovery import replay_import

    out = IngestResult(report if report is not None else ImportReport())
    chunk = ImportReport()
    kept = 0

    def run_phases() -> None:
        nonlocal chunk, kept
        if not chunk.files:
            return
        if any(f.changed for f in chunk.files):
            if phase:
                phase("checkpoints")
            out.checkpoints_replayed += replay_import(
                store, chunk, config=config, failed=out.checkpoints_failed
            )
        if phase:  # unchanged sessions never captured are captured too
            phase("transcripts")
        _add(out.transcripts, sync_import_report(store, chunk, home))
        if phase:
            phase("importing")
        for f in chunk.files:
            f.new_rows = None
        chunk, kept = ImportReport(), 0

    for f in import_files(store, files, progress=progress, done=done, keep_rows=True, stop=stop):
        out.report.files.append(f)
        chunk.files.append(f)
        if f.new_rows:
            kept += max(0, f.offset - f.resumed_from)
        if kept >= CHUNK_BYTES:
            run_phases()
    run_phases()
    return out


def _add(total: ImportSync, part: ImportSync) -> None:
    """Sum ``part``'s figures into ``total``."""
    total.captured += part.captured
    total.failed.extend(part.failed)
    total.records_appended += part.records_appended
    total.sessions_rewritten += part.sessions_rewritten
    total.rows_read += part.rows_read
    total.rows_handed += part.rows_handed


__all__ = ["CHUNK_BYTES", "IngestResult", "ingest"]
