"""Parse fresh session files on every core while one process stores them (issue 43 goal 1).

A fresh import spent ~37 % of its time parsing (``formats.lineparse``) on one core of a
two-core machine. ``ParsePool`` runs the parse of files the store holds no progress for in
worker processes; the importer (``formats.importer``) stores each file's batches in file
order, exactly as it stores the batches it parses itself, so the store ends the same row for
row (tests/formats/test_parallel_import.py compares whole stores).

Design:

- ``workers()`` processes (``CONTINUITY_IMPORT_WORKERS``, default ``os.cpu_count()``; 1 turns
  the pool off), started with ``spawn``: no copy of the importer's open database connection,
  no inherited locks, and each worker is the importer's own child, joined at the end, so its
  CPU time counts in the importer's (``wait4``, ``time``: what the benchmarks report).
  ``forkserver`` would start each a little faster but leave the workers' time uncounted.
- Each worker has its own task queue and its own bounded result queue (``QUEUE_BATCHES``
  messages) and parses its files one after another, so the importer reads a file's messages in
  order from one queue; at most ``IN_FLIGHT`` files per worker are handed out ahead of the
  file being stored. Memory stays flat in the tree's size and in a file's size: a worker
  blocks once its queue is full (each message is one batch, ``BATCH_LINES`` lines or
  ``BATCH_BYTES`` of them at most).
- A file's messages: ``("head", stat, prefix, head, recognised)`` (what the serial import
  reads before its first line: ``os.stat_result``, the first 64 KiB's hash,
  ``document.file_head``;
  ``recognised``: a reader detects the format, else nothing follows), or
  ``("failed", reason)`` (the importer then imports the file itself, serially, which reports
  the failure as it always did); then one ``Batch`` per batch, the last with ``final`` set.
- A worker whose importer died (``SIGKILL``) notices within a second (its parent's sentinel,
  checked while it waits on either queue) and exits; nothing it parsed was stored.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import sys
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from continuity.core.errors import ContinuityError
from continuity.core.model import Entry
from continuity.formats.base import SessionFacts
from continuity.store.base import ImportIssue, RawLine
from continuity.store.rawcodec import Packed, TextDict

#: issue 43: worker processes of a parallel import (``CONTINUITY_IMPORT_WORKERS`` overrides;
#: 1 or less: no pool, the import parses in its own process)
WORKERS_ENV = "CONTINUITY_IMPORT_WORKERS"
#: The pool starts only for an import of at least this many fresh files holding at least
#: ``MIN_BYTES`` in all: starting a worker (~0.3 s of imports each) costs more than it saves
#: on less.
MIN_FILES = 2
MIN_BYTES = 4 * 1024 * 1024
#: result messages (batches) a worker queues before it waits for the importer
QUEUE_BATCHES = 3
#: files handed to each worker ahead of the one being stored
IN_FLIGHT = 2
#: seconds between a waiting worker's checks that its importer still runs
POLL_SECONDS = 1.0
#: a worker's recursion limit while it pickles a batch (``_serve``)
PICKLE_DEPTH = 20_000


def workers() -> int:
    """Worker processes for a parallel parse: ``$CONTINUITY_IMPORT_WORKERS`` when set to an
    integer, else ``os.cpu_count()``. Raises ``ValueError`` naming the variable for a value
    that is not an integer."""
    value = os.environ.get(WORKERS_ENV, "").strip()
    if not value:
        return os.cpu_count() or 1
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{WORKERS_ENV}={value!r}: expected a number of processes") from None


def idle_core() -> bool:
    """Whether the machine has a core to spare: the last minute's load average
    (``os.getloadavg``; True where there is none) is below the cores less half a core. On a machine whose cores
    other work keeps busy the workers only share them with the importer, which stores every
    batch itself: a 100 MB import took 24.8-25.3 s with two workers against 15.4-20.5 s
    without at a load of 4.5 on 2 cores (bench/README.md, issue 43)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return True
    return load < (os.cpu_count() or 1) - 0.5


@dataclass
class Batch:
    """One batch a worker parsed: what ``_FileImport._flush`` stores and reports. ``offset`` and
    ``line`` are the reader's position after it; ``facts``/``state`` the reader's
    ``facts()``/``state()`` then; the counters are this batch's alone. The ``final`` batch
    carries the file's ``blank`` lines, ``pending_tail`` bytes and the reader's warnings."""

    raw: list[RawLine]
    pending: list[Entry]
    issues: list[ImportIssue]
    batch_bytes: int
    offset: int
    line: int
    facts: SessionFacts
    state: dict[str, Any]
    lines_read: int
    skipped: int
    skip_reasons: Counter
    errors: list[tuple[int, str]]
    warnings: list[tuple[int, str]]
    final: bool = False
    blank: int = 0
    pending_tail: int = 0
    reader_warnings: list[tuple[int, str]] = field(default_factory=list)
    #: ``raw`` packed for the store (``store.rawcodec.pack_lines``; issue 43 goal 1)
    packed: Packed | None = None


# ---------------------------------------------------------------------------- worker side


def parse_file(
    path: str, batch_lines: int, batch_bytes: int, text_dict: bytes | None = None
) -> Iterator[tuple[Any, ...] | Batch]:
    """The messages of one file (module docstring): its head, then its batches of at most
    ``batch_lines`` lines (or ending at the line that reaches ``batch_bytes``). Reads the file
    as ``importer._import_once`` does one the store holds no progress for. ``text_dict``: the
    bytes of the store's text dictionary (``SqlStore.text_dict``), which the rows' content
    frames are made with."""
    from continuity.formats import detect
    from continuity.formats.discovery import PREFIX_BYTES, path_key, prefix_hash
    from continuity.formats.document import file_head, is_document, line_source
    from continuity.formats.lineparse import LineParser
    from continuity.formats.reports import FileReport
    from continuity.store.bulk import prepare
    from continuity.store.rawcodec import pack_lines

    zdict = TextDict(text_dict) if text_dict is not None else None
    p = Path(path)
    try:
        stat = p.stat()
        prefix = prefix_hash(p, min(stat.st_size, PREFIX_BYTES))
        head = file_head(path)
        document = is_document(path)
    except (OSError, ValueError) as exc:
        yield ("failed", str(exc))
        return
    reader_cls = detect(head, path)
    yield ("head", stat, prefix, head, reader_cls is not None)
    if reader_cls is None:
        return
    key = path_key(p)  # the stored path: ``\xNN`` for bytes a file name holds that are not UTF-8
    reader = reader_cls(key, head, None)
    report = FileReport(key)
    parser = LineParser(reader, key, report)

    def batch(offset: int, line: int, final: bool = False) -> Batch:
        for e in parser.pending:  # what the writer would make of each row, made here
            prepare(e, zdict)
        packed = pack_lines(parser.raw)
        out = Batch(
            parser.raw,
            parser.pending,
            parser.issues,
            parser.batch_bytes,
            offset,
            line,
            reader.facts(),
            reader.state(),
            report.lines_read,
            report.skipped,
            report.skip_reasons,
            report.errors,
            report.warnings,
        )
        out.packed = packed
        parser.reset()
        report.lines_read = report.skipped = 0
        report.skip_reasons, report.errors, report.warnings = Counter(), [], []
        return out

    with open(p, "rb") as fh:
        lines = line_source(fh, document=document, records=reader.document_records)
        for line in lines:
            parser.take(line)
            if len(parser.raw) >= batch_lines or parser.batch_bytes >= batch_bytes:
                yield batch(lines.offset, lines.line)
        last = batch(lines.offset, lines.line, final=True)
        last.final, last.blank, last.pending_tail = True, lines.blank, lines.pending_tail
        last.reader_warnings = list(reader.warnings)
        yield last


def _parent_alive() -> bool:
    parent = multiprocessing.parent_process()
    return parent is None or parent.is_alive()


def _serve(tasks: Any, results: Any) -> None:
    """A worker's loop: parse each path from ``tasks`` into ``results`` until ``None``; exit
    (``os._exit``) when the importer is gone."""
    results.cancel_join_thread()  # a dead importer never reads what is left: do not wait
    # A row may hold JSON nested up to orjson's 1,024 levels (the parser refuses deeper than
    # MAX_NESTING only where its cheap count finds brackets): pickling recurses per level.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), PICKLE_DEPTH))
    while True:
        try:
            task = tasks.get(timeout=POLL_SECONDS)
        except queue.Empty:
            if not _parent_alive():
                os._exit(0)
            continue
        if task is None:
            return
        try:
            for message in parse_file(*task):
                _put(results, message)
        except Exception as exc:  # noqa: BLE001 - reported to the importer, which raises
            _put(results, ("error", f"{exc.__class__.__name__}: {exc}"))


def _put(results: Any, message: Any) -> None:
    """Pickle ``message`` here, not in the queue's feeder thread (which drops a message it
    cannot pickle, and the importer would wait for it), and queue the bytes."""
    try:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    except (RecursionError, pickle.PicklingError, TypeError, ValueError) as exc:
        data = pickle.dumps(("error", f"cannot hand the batch over: {exc.__class__.__name__}"))
    while True:
        try:
            results.put(data, timeout=POLL_SECONDS)
            return
        except queue.Full:
            if not _parent_alive():
                os._exit(0)


# ---------------------------------------------------------------------------- importer side


class WorkerError(ContinuityError):
    """A worker failed in the middle of a file (it died, or its parse raised): the batches
    stored before stay, and the next import resumes the file from them. The importer reports
    the file ``failed`` (exit code 1) and goes on."""


class ParsedFile:
    """One file a worker parses: ``head()`` then ``batches()``, read in order."""

    def __init__(self, pool: ParsePool, worker: int, path: Path, size: int) -> None:
        self.pool, self.worker, self.path, self.size = pool, worker, path, size
        self.done = False
        self.started = False

    def _next(self) -> Any:
        self.pool._first_in_line(self)
        message = self.pool._get(self.worker, self.path)
        if isinstance(message, Batch):
            if message.final:
                self._finish()
        elif message[0] in ("failed", "error") or (message[0] == "head" and not message[4]):
            self._finish()
        return message

    def _finish(self) -> None:
        self.done = True
        self.pool._finished(self)

    def head(self) -> tuple[os.stat_result, str, list[dict]] | None:
        """``(stat, prefix hash, head)`` as the worker read them, or None: the worker could not
        read the file (import it serially: that reports why)."""
        message = self._next()
        self.started = True
        if message[0] != "head":
            self.drain()
            return None
        return message[1], message[2], message[3]

    def batches(self) -> Iterator[Batch]:
        """The file's batches in order, the last ``final``. Raises ``WorkerError`` when the
        worker failed on the way."""
        while not self.done:
            message = self._next()
            if isinstance(message, Batch):
                yield message
            else:
                raise WorkerError(f"{self.path}: the parse worker failed: {message[1]}")

    def drain(self) -> None:
        """Read and drop what is left of this file (the importer imports it another way)."""
        while not self.done:
            self._next()


class ParsePool:
    """Worker processes parsing fresh files ahead of the importer (module docstring).

    ``offer(paths)`` queues files (resolved, in the order they will be imported) with their
    sizes; ``take(path)`` returns the ``ParsedFile`` of one, or None when it was not handed to
    a worker (import it serially); ``close()`` stops the workers. Files must be taken in the
    order offered; one skipped is drained when a later one is taken."""

    def __init__(self, n: int, batch_lines: int, batch_bytes: int) -> None:
        self.ctx: Any = multiprocessing.get_context("spawn")
        self.n, self.batch_lines, self.batch_bytes = n, batch_lines, batch_bytes
        self.procs: list[Any] = []
        self.tasks: list[Any] = []
        self.results: list[Any] = []
        self.waiting: deque[tuple[Path, int]] = deque()  # offered, not handed out
        self.lines: list[deque[ParsedFile]] = [deque() for _ in range(n)]
        self.by_path: dict[Path, ParsedFile] = {}
        self.load = [0] * n  # bytes handed to each worker and not yet stored
        #: the store's text dictionary (``SqlStore.text_dict``), sent with each file handed out
        self.text_dict: TextDict | None = None

    def _start(self) -> None:
        """Start the workers with SIGINT ignored: a Ctrl-C reaches the whole foreground
        process group, and the workers printed their own ``KeyboardInterrupt`` tracebacks
        (fresh-user review). A Python started with SIGINT ignored keeps it ignored; the
        importer gets the Ctrl-C, stops them (``close``), and a worker whose importer died
        exits by itself. Meanwhile the importer blocks SIGINT too, so a Ctrl-C while the
        workers start waits for its own handler (Linux never drops a blocked signal as
        ignored). Only the main thread may set a handler: from another (the daemon's
        archiver, no terminal's), the workers start as they are."""
        if self.procs:
            return
        import signal
        import threading

        main = threading.current_thread() is threading.main_thread()
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        handler = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            for _ in range(self.n):
                tasks, results = self.ctx.Queue(), self.ctx.Queue(QUEUE_BATCHES)
                proc = self.ctx.Process(target=_serve, args=(tasks, results), daemon=True)
                proc.start()
                self.procs.append(proc)
                self.tasks.append(tasks)
                self.results.append(results)
        finally:
            if main:
                signal.signal(signal.SIGINT, handler)
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def offer(self, files: Iterable[tuple[Path, int]]) -> None:
        """Queue ``(path, size)`` pairs to be parsed, in import order."""
        self.waiting.extend(files)
        self._fill()

    def _fill(self) -> None:
        while self.waiting and len(self.by_path) < self.n * IN_FLIGHT:
            path, size = self.waiting.popleft()
            if path in self.by_path:
                continue
            self._start()
            w = min(range(self.n), key=lambda i: (self.load[i], len(self.lines[i])))
            parsed = ParsedFile(self, w, path, size)
            self.load[w] += size
            self.lines[w].append(parsed)
            self.by_path[path] = parsed
            zdict = self.text_dict.data if self.text_dict is not None else None
            self.tasks[w].put((str(path), self.batch_lines, self.batch_bytes, zdict))

    def take(self, path: Path) -> ParsedFile | None:
        """The parse of ``path`` if it was offered (and hands out the next files)."""
        parsed = self.by_path.get(path)
        if parsed is None:
            if not any(p == path for p, _ in self.waiting):
                return None
            while self.waiting and self.waiting[0][0] != path:  # skipped: never hand out
                self.waiting.popleft()
            self._fill()
            parsed = self.by_path.get(path)
        if parsed is None or parsed.started:
            return None
        return parsed

    def _first_in_line(self, parsed: ParsedFile) -> None:
        """Drain the files handed to ``parsed``'s worker before it that were not imported."""
        line = self.lines[parsed.worker]
        while line and line[0] is not parsed:
            line[0].drain()

    def _finished(self, parsed: ParsedFile) -> None:
        line = self.lines[parsed.worker]
        if line and line[0] is parsed:
            line.popleft()
        self.by_path.pop(parsed.path, None)
        self.load[parsed.worker] -= parsed.size
        self._fill()

    def _get(self, w: int, path: Path) -> Any:
        while True:
            try:
                return pickle.loads(self.results[w].get(timeout=POLL_SECONDS))
            except queue.Empty:
                if not self.procs[w].is_alive():
                    code = self.procs[w].exitcode
                    return ("error", f"worker {w} for {path} ended (exit code {code})")

    def close(self) -> None:
        """Stop the workers (at once: a file they were parsing is dropped)."""
        for proc in self.procs:
            if proc.is_alive():
                proc.terminate()
        for proc in self.procs:
            proc.join(5)
        for q in (*self.tasks, *self.results):
            q.close()
            q.cancel_join_thread()
        self.procs, self.tasks, self.results = [], [], []
