"""Import harness session files into the store: streaming, idempotent, tolerant, lossless.

``import_paths(store, paths)`` takes files and directory trees (``~/.claude/projects``,
``~/.codex/sessions``, ``~/.pi/agent/sessions``), detects each file's harness from its content
(``continuity.formats.detect``) and streams it through that harness's reader in batches. Each
batch (raw lines, rows, runs, issues and the source's new offset) lands in one transaction, so an
interrupted import resumes exactly where its last batch ended and never leaves half a batch.

Rules (spec/formats.md §5): every line is kept raw; a bad line is reported as ``path:line`` and
the rest imports (B35); an unterminated, unparseable last line is a pending tail retried next
time (B36); re-importing adds nothing; a grown file adds only its new lines (§5.2: same inode and
same first-64-KiB hash); a rewritten file is re-read with rows already present (same native id,
or same line bytes at the same line number) skipped. A file that is one JSON document
(``formats.document``: Gemini CLI's legacy chats, issue 42) is read as parts standing for
lines, and, as it is rewritten whole, from its start whenever it changed. Rows repeat a native id (Claude Code resume
replays): identical copies are counted as duplicates, a differing copy is kept and the usable
one wins in the view (``continuity.formats.repeats``, issue 18).

Derived here, for every harness alike: compaction coverage (``covers_through_seq``), the pi
leaf path (rows off it are not visible), and runs (``continuity.formats.runs``: each request opens one;
it ends ``finished``, ``failed`` or ``interrupted`` by the last hint a reader gave, else by
whether tool calls were left without results).

Over 600 lines: one streaming import: a file's batches, its duplicate and parent checks, the
leaf path of tree formats and the progress written in each batch's transaction share the per-
file state of ``_FileImport``; the helpers that stand alone already live in ``formats.runs``,
``formats.repeats`` and ``formats.resumed``, and the parse of a file's lines in
``formats.lineparse``.

Issue 43 goal 1: the lines of files the store holds no progress for are parsed in worker
processes (``formats.parallel``: ``CONTINUITY_IMPORT_WORKERS``, default one per core, for an
import of at least 2 fresh files and 4 MiB while a core is idle) while this process stores their batches in file
order through the same ``_flush``; the store ends as after a serial import.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO, cast

import orjson

from continuity.core.errors import ConfigError, ContinuityError, InputError, StoreConflict
from continuity.core.keys import MAX_KEY_CHARS, session_key  # noqa: F401 - MAX_KEY_CHARS re-exported
from continuity.core.model import CompactionInfo, Entry, EntryKind, Note, Session
from continuity.formats import (
    FormatReader,
    detect,
    discovery,
    parallel,
    reader_for,
)
from continuity.formats.base import SessionFacts, check_facts, clean_deep
from continuity.formats.discovery import (  # noqa: F401 - re-exported
    NOT_SESSIONS,
    PREFIX_BYTES,
    is_session_file,
    key_paths,
    mark_unchanged,
    path_key,
    prefix_hash,
    unchanged,
)
from continuity.formats.document import file_head, is_document, line_source, problem
from continuity.formats.lineparse import MAX_NESTING, LineParser  # noqa: F401 - re-exported
from continuity.formats.parallel import Batch, ParsedFile, ParsePool
from continuity.formats.repeats import RepeatFilter
from continuity.formats.reports import FileReport, ImportReport
from continuity.formats.resumed import copy_note, copy_of
from continuity.formats.runs import RunTracker, derive_runs
from continuity.store.base import SourceState
from continuity.store.bulk import as_stored
from continuity.store.protocol import Store
from continuity.store.rawcodec import Packed

BATCH_LINES = 2000
BATCH_BYTES = 16 * 1024 * 1024
#: Issue 17: a file's new rows are kept for the phases after the import
#: (``FileReport.new_rows``) while their lines come to at most this many bytes; a larger
#: import of one file keeps none (its rows are read back), so memory stays bounded.
KEEP_ROWS_BYTES = 8 * 1024 * 1024
#: File names that live beside sessions but are not sessions (global prompt logs, indexes).
#: Issue 21: how long an import of a file waits, in seconds, for another process importing
#: the same file at the same time (the daemon's archiving and a manual import) before it
#: reports the file failed. It retries from where the other got, backing off 0.05 s → 2 s.
CONFLICT_WAIT_SECONDS = 120.0

Progress = Callable[[int], None]


# ---------------------------------------------------------------------------- discovery


def discover(
    paths: Iterable[str | os.PathLike[str]],
    *,
    unreadable: list[FileReport] | None = None,
    home: str | os.PathLike[str] | None = None,
) -> list[Path]:
    """``formats.discovery.discover`` with an OpenCode or Kilo data folder
    (``formats/opencode``, issue 18), named or found up to ``discovery.EXPAND_DEPTH`` levels
    below a folder named, standing for its sessions' mirrors, brought up to date under the
    workspace ``home`` (default: ``resolve_home()``). Raises ``InputError`` as that one does, and for
    an OpenCode folder that cannot be read."""
    return discovery.discover(
        paths, unreadable=unreadable, expand=lambda p, found: _opencode_mirrors(p, home, found)
    )


def _opencode_mirrors(path: Path, home: str | os.PathLike[str] | None, found: list[Path]) -> bool:
    """When ``path`` is an OpenCode data folder: sync its mirrors, add them to ``found``."""
    from continuity.formats import opencode

    if opencode.layout(path) is None:
        return False
    from continuity.core.config import resolve_home

    try:
        found.extend(opencode.sync_mirrors(path, opencode.mirror_root(path, resolve_home(home))))
    except (OSError, ValueError, opencode.sqlite3.Error) as exc:
        raise InputError(f"{path}: cannot read the OpenCode sessions: {exc}") from exc
    return True


def total_bytes(files: Iterable[Path]) -> int:
    """Sum of the files' sizes in bytes (for a progress bar)."""
    return sum(p.stat().st_size for p in files)


def import_paths(
    store: Store,
    paths: Iterable[str | os.PathLike[str]],
    *,
    progress: Progress | None = None,
    home: str | os.PathLike[str] | None = None,
) -> ImportReport:
    """Import every session file under ``paths`` (``home``: see ``discover``); see the module
    docstring."""
    report = ImportReport()
    files = discover(paths, unreadable=report.files, home=home)
    report.files.extend(import_files(store, files, progress=progress))
    return report


#: Issue 20/17: small files are imported several to one transaction (one commit, one sync,
#: instead of one each: 10,000 small files took ten minutes). A group holds files with at most
#: ``GROUP_FILE_BYTES`` each to read (a grown file: its new bytes), ``GROUP_BYTES`` and
#: ``GROUP_FILES`` in all, so the write transaction stays shorter than one batch of a large
#: file (``BATCH_BYTES``, 16 MiB). Files up to 2 MiB (the common 1 MB session) group too: on
#: the 100 MB corpus of ``bench/scale.py`` (1 MB files) a fresh import took 14.7-14.9 s
#: instead of 16.2-16.8 s and wrote 972 MB instead of 1,398 MB (fewer commits, so fewer
#: fsyncs and fewer index pages written to the WAL again by the next transaction).
GROUP_FILE_BYTES = 2 * 1024 * 1024
GROUP_BYTES = 8 * 1024 * 1024
GROUP_FILES = 200
#: at most this many files (grouped or unchanged between them) wait for a group's commit
GROUP_SLOTS = 2000


def import_files(
    store: Store,
    files: Iterable[Path],
    *,
    progress: Progress | None = None,
    done: Callable[[FileReport], None] | None = None,
    keep_rows: bool = False,
    stop: Callable[[], bool] | None = None,
) -> Iterator[FileReport]:
    """Import ``files`` (``import_file`` each) and yield their reports in order; ``done`` is
    called with each report as it is final. With ``keep_rows`` each report holds the rows its
    file added (``FileReport.new_rows``, up to ``KEEP_ROWS_BYTES`` of lines per file): the
    caller hands them to the phases after the import and drops them. Consecutive small files share one transaction
    (``GROUP_*``): all of them are stored or none is; when the group fails (a store error, a
    collision with another import), it is rolled back and each of its files imported again
    on its own, with ``import_file``'s waiting and reporting. ``progress`` counts a grouped
    file's bytes once the group is committed. The batches commit without a WAL sync each
    (issue 43 goal 1); the iteration's end syncs once (``Store.make_durable``, which raises
    ``StoreError`` when it cannot), so every row is durable when it ends. Once ``stop()`` is
    true (checked before each file: a SIGTERM to ``continuity watch``) the files not reached
    are left alone: the group gathered so far is stored, made durable, and the iteration
    ends, its reports covering the first files only."""
    group: list[Path] = []
    #: the group's files and, between them, the reports of unchanged files, in file order:
    #: an unchanged file does not end a group (issue 17: the files that grew are usually
    #: scattered among unchanged ones, and each had its own transaction), its report waits
    #: for the group's so the reports still come in order
    slots: list[Path | FileReport] = []
    size = 0
    known: dict[str, SourceState] = {}
    ahead: list[Path] = []  # the files whose sources ``known`` holds

    pool: ParsePool | None = None
    n_workers, forced = _workers()

    def take(p: Path) -> ParsedFile | None:
        return _take(pool, store, p)

    def flush() -> Iterator[FileReport]:
        nonlocal group, slots, size
        todo, order, group, slots, size = group, slots, [], [], 0
        reports = _import_group(store, todo, keep_rows, pool) if len(todo) > 1 else None
        if reports is None:
            reports = [
                _import_file(store, p, progress=progress, keep_rows=keep_rows, _parsed=take(p))
                for p in todo
            ]
        elif progress:
            progress(sum(_size(p) for p in todo))
        imported = iter(reports)
        for slot in order:
            r = next(imported) if isinstance(slot, Path) else slot
            if done:
                done(r)
            yield r

    def step(path: Path) -> Iterator[FileReport]:
        nonlocal size
        key = path_key(path)
        same = unchanged(path, key, known.get(key), progress)
        if same is not None:
            if not group:
                if done:
                    done(same)
                yield same
            else:
                slots.append(same)
                if len(slots) >= GROUP_SLOTS:
                    yield from flush()
            return
        n = _to_read(path, known.get(key))
        if n > GROUP_FILE_BYTES:
            yield from flush()
            report = _import_file(
                store, path, progress=progress, keep_rows=keep_rows, _parsed=take(path)
            )
            if done:
                done(report)
            yield report
            return
        if group and (size + n > GROUP_BYTES or len(group) >= GROUP_FILES):
            yield from flush()
        group.append(path)
        slots.append(path)
        size += n

    pending = iter(files)
    try:
        while stop is None or not stop():
            if not ahead:  # the next files' sources in one query (unchanged ones stop here)
                ahead = [Path(p).resolve() for p in itertools.islice(pending, 500)]
                if not ahead:
                    break
                known = store.get_sources([path_key(p) for p in ahead])
                if n_workers > 1:  # issue 43: fresh files are parsed by workers ahead
                    fresh = [(p, _size(p)) for p in ahead if known.get(path_key(p)) is None]
                    if pool is None and _worth_a_pool(fresh, forced):
                        pool = ParsePool(n_workers, BATCH_LINES, BATCH_BYTES)
                    if pool is not None:
                        pool.text_dict = store.text_dict()  # one a batch trained is used on
                        pool.offer(fresh)
            yield from step(ahead.pop(0))
        yield from flush()
        store.make_durable()  # the row batches did not sync the WAL (``_import_group``)
    finally:
        if pool is not None:
            pool.close()


def _take(pool: ParsePool | None, store: Store, p: Path) -> ParsedFile | None:
    """``pool.take(p)`` (None without a pool), after handing the pool the store's text
    dictionary: the files it hands out next make their rows' frames with one the store
    trained during this import (revision 0032)."""
    if pool is None:
        return None
    pool.text_dict = store.text_dict()
    return pool.take(p)


def _workers() -> tuple[int, bool]:
    """The worker processes an import parses with (``formats.parallel.workers``), and whether
    ``$CONTINUITY_IMPORT_WORKERS`` chose them (then the pool runs for any import: tests force
    both paths). Raises ``ConfigError`` for a value that is not a number."""
    try:
        return parallel.workers(), bool(os.environ.get(parallel.WORKERS_ENV, "").strip())
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _worth_a_pool(fresh: list[tuple[Path, int]], forced: bool) -> bool:
    """Whether starting workers pays for these fresh files (``parallel.MIN_FILES`` and
    ``MIN_BYTES``, and a core idle: ``parallel.idle_core``); always when ``forced`` and there
    is one."""
    if forced:
        return bool(fresh)
    return (
        len(fresh) >= parallel.MIN_FILES
        and sum(n for _, n in fresh) >= parallel.MIN_BYTES
        and parallel.idle_core()
    )


def _to_read(path: Path, source: SourceState | None) -> int:
    """The bytes an import of ``path`` reads: what a grown file added after the stored
    offset (same inode, not shorter), else its size (issue 17: files that grew by a little,
    the usual case of a re-import or an archiver pass, share one transaction like small
    files; each had its own, and every commit rewrote the pages of the line-digest index
    it touched)."""
    try:
        st = path.stat()
        if (
            source is not None
            and st.st_ino == source.inode
            and st.st_size >= source.size
            and prefix_hash(path, min(source.size, PREFIX_BYTES)) == source.prefix_sha256
        ):
            return max(0, st.st_size - source.offset)
    except OSError:
        return 0
    return st.st_size  # new, or rewritten: read whole


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _import_group(
    store: Store, paths: list[Path], keep_rows: bool = False, pool: ParsePool | None = None
) -> list[FileReport] | None:
    """Import ``paths`` in one transaction; None when it failed and was rolled back. ``pool``:
    the workers parsing fresh files ahead (``formats.parallel``)."""
    reports = []
    try:
        with store.batch(durable=False):  # made durable at the import's end (``import_files``)
            for p in paths:
                p = p.resolve()
                report = FileReport(path_key(p))
                parsed = _take(pool, store, p)
                _import_once(store, p, report, None, keep_rows, True, parsed)
                reports.append(report)
    except ContinuityError:
        return None
    return reports


# ---------------------------------------------------------------------------- one file


def import_file(
    store: Store,
    path: str | os.PathLike[str],
    *,
    progress: Progress | None = None,
    keep_rows: bool = False,
    mark_due: bool = True,
    _parsed: ParsedFile | None = None,
) -> FileReport:
    """Import one session file (see the module docstring). Never raises for bad content or a
    store failure: a file that is not a session file gets status ``skipped``, one that could
    not be stored ``failed``, each with a reason. An import that collides with another process
    importing the same file at the same time waits for it (issue 21): it is retried from
    where that one got, backing off, for up to ``CONFLICT_WAIT_SECONDS``, so both succeed;
    only a collision lasting longer reports the file failed. ``keep_rows``: see
    ``import_files``. ``mark_due``: record the new rows as due for the checkpoint replay and
    the transcript phase (``SourceState.pending_from``); the daemon's live import passes
    False, as live capture writes both itself (rows already due stay due). ``_parsed``:
    ``import_files``'s worker parse of the file (its first attempt stores it; a retry reads
    the file itself). The rows are durable when it returns (``Store.make_durable``: its
    batches commit without a WAL sync each); a sync that fails reports the file failed."""
    report = _import_file(
        store, path, progress=progress, keep_rows=keep_rows, mark_due=mark_due, _parsed=_parsed
    )
    try:
        store.make_durable()
    except ContinuityError as exc:
        report.fail(str(exc), exc.exit_code)
    return report


def _import_file(
    store: Store,
    path: str | os.PathLike[str],
    *,
    progress: Progress | None = None,
    keep_rows: bool = False,
    mark_due: bool = True,
    _parsed: ParsedFile | None = None,
) -> FileReport:
    """``import_file`` without its closing ``make_durable`` (``import_files`` syncs once at
    its end)."""
    p = Path(path).resolve()
    deadline = time.monotonic() + CONFLICT_WAIT_SECONDS
    delay = 0.05
    first_new: int | None = None  # rows an attempt committed before it collided
    while True:
        report = FileReport(path_key(p))
        try:
            parsed, _parsed = _parsed, None
            _import_once(store, p, report, progress, keep_rows, mark_due, parsed)
            if first_new is not None:
                report.first_new_seq = min(first_new, report.first_new_seq or first_new)
                report.old_rows_changed = report.old_rows_changed or report.imported == 0
                report.new_rows = None  # an earlier attempt stored some: read them back
            return report
        except StoreConflict:
            if report.first_new_seq is not None:
                first_new = min(
                    first_new if first_new is not None else report.first_new_seq,
                    report.first_new_seq,
                )
            if time.monotonic() + delay > deadline:
                report.fail(
                    "another import was writing this file at the same time; import it again",
                    StoreConflict.exit_code,
                )
                return report
            time.sleep(delay)
            delay = min(delay * 2, 2.0)
        except ContinuityError as exc:
            report.fail(str(exc), exc.exit_code)
            return report


def _import_once(
    store: Store,
    p: Path,
    report: FileReport,
    progress: Progress | None,
    keep_rows: bool = False,
    mark_due: bool = True,
    parsed: ParsedFile | None = None,
) -> None:
    key_path = report.path
    read = parsed.head() if parsed is not None else None
    if read is not None:
        source = store.get_source(key_path)
        if source is not None:  # another import got there first: the serial path resumes
            assert parsed is not None
            parsed.drain()
            read = None
    if read is not None:  # issue 43: a worker read the head and parses the lines
        stat, prefix, _ = read
        source = None
        hashed = min(stat.st_size, PREFIX_BYTES)
    else:
        parsed = None
        try:
            stat = p.stat()
            source = store.get_source(key_path)
            hashed = min(source.size if source else stat.st_size, PREFIX_BYTES)
            prefix = prefix_hash(p, hashed)
        except OSError as exc:
            report.fail(f"cannot read: {exc.strerror or exc}", InputError.exit_code)
            return
    # §5.2: not shorter, same leading bytes and the same inode: the file grew (or is unchanged)
    same_head = (
        source is not None and stat.st_size >= source.size and source.prefix_sha256 == prefix
    )
    resume = same_head and source is not None and source.inode == stat.st_ino
    if (
        same_head
        and not resume
        and parsed is None
        and source is not None
        and not is_document(p)
        and same_lines(store, source, p)
    ):
        # a copy of the file read before (cp, rsync, a backup restored, a new machine): the
        # same lines at the same offsets, so it is read on from where that import stopped
        resume = True
        if stat.st_size == source.offset:  # and nothing new: the copy is the file now
            store.put_source(replace(source, inode=stat.st_ino))
    if source is not None and resume and stat.st_size == source.offset:
        mark_unchanged(report, source, stat, progress)
        return
    if hashed != min(stat.st_size, PREFIX_BYTES):
        prefix = prefix_hash(p, min(stat.st_size, PREFIX_BYTES))  # what the next import checks
    head = read[2] if read is not None else file_head(str(p))
    # issue 42: a one-document file (Gemini CLI's legacy chat) is rewritten whole, never
    # appended to: a changed one is read again from its start (its rows de-duplicated)
    document = is_document(p)
    resume = resume and not document
    reader_cls = detect(head, str(p)) or (reader_for(source.harness) if source and resume else None)
    if source is not None and resume:
        reader_cls = reader_for(source.harness)
    if reader_cls is None:
        report.status, report.reason = (
            "skipped",
            "not a session file (format not recognised)" + _encoding_hint(p),
        )
        broken = problem(p) if document else None
        if broken:  # issue 42: a truncated or invalid legacy chat names where it breaks
            report.reason = (
                f"{broken}; nothing read from it (rows imported from it before stay; "
                "it is read again at the next import)"
            )
        waiting = _no_complete_line(p, stat.st_size)
        if waiting:  # a session a harness has just started: not an error, imported later
            report.reason, report.waiting = waiting, True
        if progress:
            progress(stat.st_size)
        return
    state = orjson.loads(source.reader_state) if (source and resume and source.reader_state) else {}
    reader = reader_cls(key_path, head, state.get("reader"))
    if source is not None and (
        resume or safe_key(reader.session_key) == source.session_key or reader.key_from_file_name
    ):
        key = source.session_key  # grown, re-read, or its head names no session: the same
    else:
        key = _claim_key(
            store,
            reader.session_key,
            key_path,  # new, or now another session
            joins=reader.continues_session,
            name=reader.file_name(key_path),
            siblings=reader.sibling_paths,
        )
    if store.is_forgotten(key):  # issue 41: `continuity forget` keeps it from coming back
        report.status, report.harness, report.session_key = "skipped", reader.harness, key
        report.reason = "forgotten (continuity forget): never imported again"
        report.forgotten = True
        if progress:
            progress(stat.st_size)
        return
    if document and source is not None and source.session_key == key and source.reader_state:
        # a document re-read adds only rows it did not hold before: the open run goes on
        earlier = orjson.loads(source.reader_state)
        state = {k: earlier[k] for k in ("runs", "replay") if k in earlier}
    job = _FileImport(
        store, p, reader, key, report, state if resume or document else {}, stat, prefix
    )
    job.claimed = source
    job.document = document
    # a known file that was rewritten (not grown): its line positions are read again
    job.replace_positions = source is not None and not resume
    job.kept = [] if keep_rows else None
    job.mark_due = mark_due
    job.pending_from = report.pending_from = source.pending_from if source is not None else None
    if source is not None and not resume:  # rewritten or cut: remember how far it was read
        earlier = orjson.loads(source.reader_state) if source.reader_state else {}
        job.lines_seen = max(
            source.line_count, earlier.get("lines_seen", 0) if isinstance(earlier, dict) else 0
        )
    start, start_line = (source.offset, source.line_count) if (source and resume) else (0, 0)
    report.resumed_from = start
    if parsed is not None:
        job.run_parsed(parsed, progress)
    else:
        job.run(start, start_line, progress)
    marker = copy_of(head) if start == 0 else None
    if marker is not None and report.status == "imported":
        # issue 13: a resumed copy is its own session, linked to its source by a note
        report.copy_of = marker["session"]
        if not any(n.text == copy_note(marker) for n in store.notes(key)):
            store.add_note(Note(key, copy_note(marker)))


class _Head:
    """The first ``limit`` bytes of a binary file, as a stream ``LineReader`` can read."""

    def __init__(self, fh: Any, limit: int) -> None:
        self.fh, self.limit = fh, limit

    def seek(self, offset: int) -> int:
        return self.fh.seek(min(offset, self.limit))

    def read(self, n: int = -1) -> bytes:
        left = self.limit - self.fh.tell()
        return self.fh.read(left if n < 0 else min(n, left)) if left > 0 else b""


def same_lines(store: Store, source: SourceState, p: Path) -> bool:
    """Whether the first ``source.offset`` bytes of ``p`` are, line for line, what the import
    recorded for ``source`` (``Store.source_line_keys``: each line's number, byte offset and
    SHA-256, blank lines too): then ``p`` holds the file read before, whatever its inode (a
    copy, an rsync, a restored backup, the tree on a new machine), and is read on from
    ``source.offset`` instead of again from its start (spec/formats.md §5.2 re-reads a file
    whose inode changed; with every line the same that re-read stores nothing, and took
    longer than a fresh import of the file: each line parsed, then found stored). Reads
    those bytes once (SHA-256 and a JSON parse per line, the cost of the line reader); False
    as soon as a line differs, when the counts differ, or when ``p`` cannot be read."""
    stored = store.source_line_keys(source.path)
    if len(stored) != source.line_count:
        return False
    try:
        with open(p, "rb") as fh:
            head = cast(BinaryIO, _Head(fh, source.offset))
            lines = line_source(head, document=False, records=None)
            expect = iter(stored)
            for line in lines:
                if next(expect, None) != (line.number, line.offset, line.sha256):
                    return False
            return lines.offset == source.offset and next(expect, None) is None
    except OSError:
        return False


def _no_complete_line(path: Path, size: int) -> str | None:
    """Why ``path`` has nothing to import yet (fresh-user review: a session a harness has just
    created is empty, or holds the start of its first line): the reason, else None (it has a
    complete line, so it is not a session file)."""
    if size == 0:
        return "empty: nothing to import yet (imported once it has a line)"
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                if b"\n" in chunk:
                    return None
    except OSError:
        return None
    return "no complete line yet (imported once its first line is written)"


#: Byte-order marks of encodings a session file is sometimes saved in by an editor (JSONL is
#: UTF-8, RFC 8259 §8.1); UTF-32 first, as its little-endian mark begins with UTF-16's.
_BOMS = [
    (b"\xff\xfe\x00\x00", "UTF-32-LE"),
    (b"\x00\x00\xfe\xff", "UTF-32-BE"),
    (b"\xff\xfe", "UTF-16-LE"),
    (b"\xfe\xff", "UTF-16-BE"),
]


def _encoding_hint(path: Path) -> str:
    """``": it is UTF-16-LE, not UTF-8 ..."`` when ``path`` starts with a UTF-16/32 byte-order
    mark or (no mark) its first bytes alternate with NULs as UTF-16 text does; else ``""``."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return ""
    name = next((n for bom, n in _BOMS if head.startswith(bom)), None)
    if name is None and len(head) >= 4 and head[1::2].count(0) == len(head[1::2]):
        name = "UTF-16-LE"
    elif name is None and len(head) >= 4 and head[0::2].count(0) == len(head[0::2]):
        name = "UTF-16-BE"
    if name is None:
        return ""
    return (
        f": it is {name} text, not UTF-8; convert it first "
        f"(iconv -f {name} -t UTF-8 FILE > FILE.jsonl)"
    )


def safe_key(key: str) -> str:
    """The stored session key of a reader's session name: ``continuity.core.keys.session_key``,
    the one rule the daemon's hooks and API use too (issue 22)."""
    return session_key(key)


def _claim_key(
    store: Store,
    key: str,
    path: str,
    *,
    joins: bool = False,
    name: str | None = None,
    siblings: Sequence[str] = (),
) -> str:
    """The session key for a new source: the reader's (made safe), unless another file already
    holds it (a Claude Code subagent file shares its parent's session id): then
    ``<key>/<name>`` (``FormatReader.file_name``, default the file stem). A file that ``joins``
    (a later page of a Codex history, issue 18), or whose session was imported from one of
    its ``siblings`` (``FormatReader.sibling_paths``: Gemini CLI's legacy chat and its
    migration, issue 42), takes the key as it is."""
    key = safe_key(key)
    existing = store.get_session(key)
    if existing is None or existing.source_path in (None, path, *siblings) or joins:
        return key
    return safe_key(f"{key}/{name or Path(path).stem}")


class _FileImport:
    """One file's streaming import (state between batches)."""

    def __init__(
        self,
        store: Store,
        path: Path,
        reader: FormatReader,
        key: str,
        report: FileReport,
        state: dict[str, Any],
        stat: os.stat_result,
        prefix: str,
    ) -> None:
        self.store, self.path, self.reader, self.key = store, path, reader, key
        self.path_str = report.path
        self.report, self.stat, self.prefix = report, stat, prefix
        #: the stored progress of this file each batch expects to find (``claim_source``):
        #: what the import began from, then what its previous batch wrote
        self.claimed: SourceState | None = None
        report.harness, report.session_key = reader.harness, key
        session = store.get_session(key)
        self.next_seq = session.entry_count if session else 0
        self.had_rows = self.next_seq > 0  # rows from an earlier import of this file
        self.started = session.started_at if session else None
        self.ended = session.ended_at if session else None
        self.tracker = RunTracker(key, reader.facts().agent_id, state.get("runs"))
        #: the checkpoint replay's resume point (``checkpoints.recovery.RESUME_KEY``), kept
        #: as it is: it stays valid while the file only grows
        self.replay_point = state.get("replay")
        #: the batch being read (rows, raw lines, issues): ``formats.lineparse``
        self.parser = LineParser(reader, self.path_str, report)
        self.tree_changed = False
        #: issue 17: the leaf of the conversation path (a pi parent tree) as the last whole
        #: walk or linear extension left it (``state["leaf"]``), and whether every row with a
        #: native id this import added continued that path one after another (each one's
        #: parent the one before): then the walk would change nothing and is skipped (it read
        #: every row of the session on each growth). A session without rows starts linear.
        self.leaf: str | None = state.get("leaf")
        self.linear = "leaf" in state or self.next_seq == 0
        self.linear_ids: set[str] = set()  # the native ids the linear check has seen
        #: True when this re-reads a file imported before that was rewritten: the first batch
        #: replaces its kept line positions (``Store.forget_source_lines``).
        self.replace_positions = False
        #: the batch's raw lines as a worker packed them (``formats.parallel.Batch.packed``)
        self.packed: Packed | None = None
        self.repeats = RepeatFilter(store, key, fresh=not self.had_rows)
        #: the rows stored so far, as stored (``FileReport.new_rows``); None: not kept
        self.kept: list[Entry] | None = None
        #: the source's ``pending_from`` when this import began (an interrupted one's rows)
        self.pending_from: int | None = None
        #: the most lines an earlier import read from this file, kept while the file is
        #: shorter (it was cut): a line up to it may already be stored as a row
        self.lines_seen: int = state.get("lines_seen", 0)
        #: whether this import's new rows become due (``import_file(mark_due=...)``)
        self.mark_due = True
        #: issue 42: the file is one JSON document (``formats.document``), read from its start
        self.document = False
        self.kept_bytes = 0

    def run(self, start: int, start_line: int, progress: Progress | None) -> None:
        report = self.report
        with open(self.path, "rb") as fh:
            lines = line_source(
                fh,
                document=self.document,
                records=self.reader.document_records,
                start_offset=start,
                start_line=start_line,
            )
            last_offset = start
            if progress and start:  # the bytes read before count as done (the bar's total
                progress(start)  # is every file's size)
            parser = self.parser
            for line in lines:
                parser.take(line)
                if progress:
                    progress(lines.offset - last_offset)
                    last_offset = lines.offset
                if len(parser.raw) >= BATCH_LINES or parser.batch_bytes >= BATCH_BYTES:
                    self._flush(lines.offset, lines.line)
            report.blank = lines.blank
            report.pending_tail_bytes = lines.pending_tail
            self._flush(lines.offset, lines.line, final=True)
            if progress:
                progress(max(0, self.stat.st_size - last_offset))
        self._end(lines.offset)

    def _end(self, offset: int) -> None:
        report = self.report
        report.offset = offset
        report.new_rows = self.kept or None
        report.version = check_facts(self.reader.facts()).version
        report.warnings = sorted(report.warnings + list(self.reader.warnings))

    def run_parsed(self, parsed: ParsedFile, progress: Progress | None) -> None:
        """``run`` from a worker's parse (``formats.parallel``): each batch is stored as
        ``run`` stores the batches it reads, with the reader's facts and state as the worker
        saw them after the batch. Raises ``formats.parallel.WorkerError`` when the worker
        failed on the way (the batches stored before stay)."""
        report, parser = self.report, self.parser
        snapshot = _ReaderSnapshot(self.reader)
        self.reader = cast(FormatReader, snapshot)  # the reader's interface the writes use
        last_offset = 0
        for batch in parsed.batches():
            parser.pending, parser.raw, parser.issues = batch.pending, batch.raw, batch.issues
            self.packed = batch.packed
            parser.batch_bytes = batch.batch_bytes
            report.lines_read += batch.lines_read
            report.skipped += batch.skipped
            report.skip_reasons.update(batch.skip_reasons)
            report.errors.extend(batch.errors)
            report.warnings.extend(batch.warnings)
            snapshot.take(batch)
            if batch.final:
                report.blank = batch.blank
                report.pending_tail_bytes = batch.pending_tail
            self._flush(batch.offset, batch.line, final=batch.final)
            if progress:
                progress(batch.offset - last_offset)
                last_offset = batch.offset
            if batch.final:
                if progress:
                    progress(max(0, self.stat.st_size - last_offset))
                self._end(batch.offset)

    def _flush(self, offset: int, line_count: int, *, final: bool = False) -> None:
        """Store the batch: its lookups (duplicates, parents, compactions) and its writes
        (raw lines, rows, issues, runs, the source's new offset) in one transaction."""
        # issue 43 goal 1: the rows can be imported again from the file, and the source's
        # progress commits with them: no WAL sync per batch, one at the import's end
        with self.store.batch(durable=False):
            self.store.claim_source(self.path_str, self.claimed)
            entries = self._dedupe(self.parser.pending)
            for e in entries:
                e.seq = self.next_seq
                e.entry_id = f"{self.key}:{e.seq}"
                self.next_seq += 1
            if entries and self.report.first_new_seq is None:
                self.report.first_new_seq = entries[0].seq
            self._resolve_compactions(entries)
            self._check_parents(entries)
            self._tally(entries)
            self._write(entries, offset, line_count, final)
            self.repeats.stored()
        self.report.imported += len(entries)
        if self.kept is not None:
            self.kept_bytes += self.parser.batch_bytes
            if self.kept_bytes > KEEP_ROWS_BYTES:
                self.kept = None
            else:
                as_stored(entries)
                self.kept.extend(entries)
        self.parser.reset()

    def _tally(self, entries: list[Entry]) -> None:
        """Feed the run tracker and count types, opaque (unknown) and non-conversation
        (event, context) rows and the time span."""
        report = self.report
        for e in entries:
            self.tracker.feed(e)
            report.types[e.type_name or e.kind.value] += 1
            if e.kind is EntryKind.OPAQUE:
                report.opaque += 1
            elif e.kind in (EntryKind.EVENT, EntryKind.CONTEXT):
                report.non_conversation += 1
            if e.timestamp is not None:
                self.started = (
                    e.timestamp if self.started is None else min(self.started, e.timestamp)
                )
                self.ended = e.timestamp if self.ended is None else max(self.ended, e.timestamp)
                report.first_timestamp = (
                    e.timestamp
                    if report.first_timestamp is None
                    else min(report.first_timestamp, e.timestamp)
                )
                report.last_timestamp = (
                    e.timestamp
                    if report.last_timestamp is None
                    else max(report.last_timestamp, e.timestamp)
                )
            if e.parent_native_id is not None:
                self.tree_changed = True
            if e.native_id is not None and self.linear:
                first = self.leaf is None and not self.had_rows  # a new session's first row
                if (
                    not first and e.parent_native_id != self.leaf
                ) or e.native_id in self.linear_ids:
                    self.linear = False
                    self.linear_ids = set()
                else:
                    self.linear_ids.add(e.native_id)
                    self.leaf = e.native_id

    def _write(self, entries: list[Entry], offset: int, line_count: int, final: bool) -> None:
        store = self.store
        facts = check_facts(self.reader.facts())
        session = Session(
            key=self.key,
            harness=self.reader.harness,
            agent_id=facts.agent_id,
            project=facts.cwd,
            source_path=self.path_str,
            started_at=self.started,
            ended_at=self.ended,
            title=facts.title,
            forked_from=safe_key(facts.forked_from) if facts.forked_from else None,
        )
        store.upsert_session(session)
        if self.replace_positions:  # after _dedupe read the old ones, in the same transaction
            store.forget_source_lines(self.path_str)
            self.replace_positions = False
        store.put_raw_lines(self.parser.raw, self.packed)
        self.packed = None
        store.append(self.key, entries)
        store.put_issues(self.parser.issues)
        store.put_runs(self.tracker.take())
        to_on: list[int] = []
        to_off: list[int] = []
        walked = final and self.reader.uses_tree and self.tree_changed
        if walked and not self.linear:
            to_on, to_off, self.leaf = _apply_leaf_path(store, self.key)
        self._follow(to_off, False, entries)
        self._follow(to_on, True, entries)
        moved = to_on + to_off
        if moved:
            if min(moved) < self._first_seq_of_import():
                self.report.old_rows_changed = True
            # Runs follow the conversation path: derive them again over the path.
            self.tracker = derive_runs(store, self.key, facts.agent_id)
            store.replace_runs(self.key, self.tracker.take())
        # a reader keeps field values in its state: lone surrogates must not reach orjson
        state = clean_deep({"reader": self.reader.state(), "runs": self.tracker.state()})
        if walked:  # the path now ends at self.leaf, walked or extended; any other write
            state["leaf"] = clean_deep(self.leaf)  # leaves it out: the next growth walks
        if self.replay_point is not None and not self.report.old_rows_changed:
            state["replay"] = self.replay_point
        if self.lines_seen > line_count:  # the file has not yet grown past what was read
            state["lines_seen"] = self.lines_seen
        # the rows whose checkpoints and transcript are due, stored with them: an import
        # interrupted before its phases leaves them due for the next one
        due = (
            [
                s
                for s in (
                    self.pending_from,
                    self.report.first_new_seq,
                    0 if self.report.old_rows_changed else None,
                )
                if s is not None
            ]
            if self.mark_due
            else [s for s in (self.pending_from,) if s is not None]
        )
        # size: the length the prefix hash covers the start of (the size when this import began)
        self.claimed = SourceState(
            self.path_str,
            self.key,
            self.reader.harness,
            self.stat.st_ino,
            self.stat.st_size,
            offset,
            line_count,
            self.prefix,
            orjson.dumps(state).decode(),
            pending_from=min(due) if due else None,
        )
        store.put_source(self.claimed)

    def _follow(self, seqs: Iterable[int], visible: bool, extra: Sequence[Entry] = ()) -> None:
        """Set ``visible`` on the kept rows (and ``extra``, this batch's) with these seqs, as
        ``Store.set_on_path`` just did on the stored ones (a row put on the path is one its
        reader made visible: ``_apply_leaf_path`` puts no other on it)."""
        rows = [*(self.kept or ()), *extra]
        if not rows:
            return
        first = rows[0].seq
        for seq in seqs:
            i = seq - first
            if 0 <= i < len(rows):
                rows[i].visible = visible

    def _first_seq_of_import(self) -> int:
        """The first seq this import added (rows below it were stored before)."""
        first = self.report.first_new_seq
        return self.next_seq if first is None else first

    def _dedupe(self, entries: list[Entry]) -> list[Entry]:
        """Drop rows whose native id the session already has, or that an earlier import of
        this same line (same line number, same bytes) already stored."""
        # issue 18: identical copies are duplicates, differing ones kept (formats/repeats.py)
        repeats = self.repeats
        before = repeats.duplicates
        out = repeats.filter(entries)
        self.report.duplicate += repeats.duplicates - before
        self.report.warnings.extend(repeats.warnings)
        repeats.warnings.clear()
        if repeats.hide:
            self.store.set_on_path(self.key, repeats.hide, False)
            self._follow(repeats.hide, False)
            repeats.hide.clear()
        if (self.report.resumed_from == 0 and self.had_rows) or (
            self.lines_seen and any(e.source and e.source.line <= self.lines_seen for e in out)
        ):
            out = self._drop_already_stored_lines(out)
        return out

    def _drop_already_stored_lines(self, entries: list[Entry]) -> list[Entry]:
        """On a full re-read of a known file, or a read of lines an earlier import stored
        before the file was cut shorter (``lines_seen``), rows without native ids are matched
        by their line number and bytes against the session's rows from this file
        (``Store.stored_lines``; fresh-user review: a Codex file truncated and then restored
        got its second half twice)."""
        kept = (
            self.store.stored_lines(self.key, self.path_str)
            if not hasattr(self, "_kept")
            else self._kept
        )
        self._kept = kept
        out = []
        for e in entries:
            if not e.native_id and e.source and (e.source.line, e.source.raw_sha256) in kept:
                self.report.duplicate += 1
                continue
            out.append(e)
        return out

    def _check_parents(self, entries: list[Entry]) -> None:
        """B53: a parent id that no row of the session has is reported (the row still counts,
        in file order)."""
        parents = {e.parent_native_id for e in entries if e.parent_native_id}
        if not parents:
            return
        known = {e.native_id for e in entries if e.native_id}
        missing = parents - known
        if missing:
            missing -= set(self.store.native_seqs(self.key, missing))
        for e in entries:
            if e.parent_native_id in missing and e.source is not None:
                self.report.warnings.append(
                    (
                        e.source.line,
                        f"parent {e.parent_native_id} is not in the session "
                        "(dangling parent; the row is kept in file order)",
                    )
                )

    def _resolve_compactions(self, entries: list[Entry]) -> None:
        wanted = [
            e.compaction.first_kept_entry_id
            for e in entries
            if e.compaction is not None and e.compaction.first_kept_entry_id
        ]
        if not wanted:
            lookup: dict[str, int] = {}
        else:
            lookup = self.store.native_seqs(self.key, wanted)
            lookup.update(
                {e.native_id: e.seq for e in entries if e.native_id and e.native_id not in lookup}
            )
        for e in entries:
            c = e.compaction
            if c is None or c.covers_through_seq is not None:
                continue
            kept = lookup.get(c.first_kept_entry_id or "")
            covers = kept - 1 if kept is not None and kept < e.seq else e.seq - 1
            e.compaction = CompactionInfo(
                c.summary, covers, c.first_kept_entry_id, c.continuation, c.run_id, c.trigger
            )


class _ReaderSnapshot:
    """What ``_FileImport`` asks of its reader while it stores a worker's batches: the
    reader's ``facts()`` and ``state()`` as the worker's reader had them after the batch,
    its ``warnings`` after the last."""

    def __init__(self, reader: FormatReader) -> None:
        self.harness, self.uses_tree = reader.harness, reader.uses_tree
        self._facts: SessionFacts = reader.facts()
        self._state: dict[str, Any] = {}
        self.warnings: list[tuple[int, str]] = []

    def take(self, batch: Batch) -> None:
        self._facts, self._state = batch.facts, batch.state
        if batch.final:
            self.warnings = batch.reader_warnings

    def facts(self) -> SessionFacts:
        return self._facts

    def state(self) -> dict[str, Any]:
        return self._state


def _apply_leaf_path(store: Store, key: str) -> tuple[list[int], list[int], str | None]:
    """Follow a parent tree (pi) from its leaf, the last row with a native id in file order:
    rows on the path keep their reader's visibility, rows off it become invisible. A missing,
    null or self parent ends the walk (a root); never fails on an orphan. Returns the seqs
    made visible, the seqs made invisible (none for a linear session) and the leaf's native
    id (None: no row has one). Reads every row's links: an import whose rows only extend
    the path skips it (``_FileImport.linear``)."""
    links = list(store.tree_links(key))
    by_id: dict[str, tuple[int, str | None]] = {}
    leaf: str | None = None
    for seq, native, parent, _, _ in links:
        if native:
            by_id.setdefault(native, (seq, parent))
            leaf = native
    on_path: set[int] = set()
    current, guard = leaf, 0
    while current and current in by_id and guard <= len(by_id):
        seq, parent = by_id[current]
        on_path.add(seq)
        current = parent if parent != current else None
        guard += 1
    to_on = [
        seq
        for seq, native, _, visible, base in links
        if native and seq in on_path and base and not visible
    ]
    to_off = [
        seq for seq, native, _, visible, _ in links if native and seq not in on_path and visible
    ]
    if to_on:
        store.set_on_path(key, to_on, True)
    if to_off:
        store.set_on_path(key, to_off, False)
    return to_on, to_off, leaf


def mark_vanished(store: Store, roots: Sequence[str | os.PathLike[str]]) -> tuple[int, int]:
    """Record which imported source files under the folders ``roots`` no longer exist
    (issue 18: Claude Code deletes transcripts older than ``cleanupPeriodDays``; the session
    outlives its file). Every recorded source whose path lies under one of ``roots`` (each
    resolved; file arguments are no roots; a root that is gone itself, e.g. a harness folder
    removed whole, counts, as everything under it is gone) and is missing now is marked gone; one found again
    is marked back. Sessions and rows are never touched. Returns ``(marked gone, marked
    back)``, counts of source files. One query for the recorded sources, one ``stat`` each."""
    folders = [
        Path(r).expanduser().resolve()
        for r in roots
        if Path(r).expanduser().is_dir() or not os.path.lexists(Path(r).expanduser())
    ]
    if not folders:
        return 0, 0
    gone: list[str] = []
    back: list[str] = []
    for path, was_gone in store.source_presence().items():
        p = Path(path)
        if not any(p.is_relative_to(f) for f in folders):
            continue
        exists = any(q.exists() for q in key_paths(path))
        if not exists and not was_gone:
            gone.append(path)
        elif exists and was_gone:
            back.append(path)
    return (
        store.mark_sources(gone, gone=True) if gone else 0,
        store.mark_sources(back, gone=False) if back else 0,
    )
