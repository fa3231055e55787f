"""Which files an import reads, and whether one is unchanged since the last (spec/formats.md
§5.2): ``discover`` (the session files under the paths given: ``is_session_file``),
``path_key`` / ``key_paths``
(a path as the store keeps it, and back), ``unchanged`` (same inode, size at the stored
offset, same leading bytes: nothing to read).

Standard library only, as ``formats.reports``: ``cli.fast`` answers a re-import that found
nothing new with these and ``store.lite`` (issue 43 goal 4), and ``formats.importer`` uses
the same functions for every import, so both paths decide alike.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from continuity.core.errors import InputError
from continuity.core.text import one_line
from continuity.formats.reports import FileReport

if TYPE_CHECKING:
    from continuity.store.base import SourceState

#: The leading bytes whose SHA-256 identifies a source file (formats.md §5.2).
PREFIX_BYTES = 64 * 1024
#: JSONL files in a harness folder that are no sessions (Codex's prompt history and index).
NOT_SESSIONS = {"history.jsonl", "session_index.jsonl"}
#: Issue 42: the folder Gemini CLI keeps its chats in. Its legacy one-document chats (before
#: 0.39.0) are ``.json`` files there, ``session-<time>-<id>.json``, and a subagent's in a
#: folder of its parent session below it, ``<parent id>/<id>.json``.
CHATS_FOLDER = "chats"
#: How many levels below a folder named ``discover``'s ``expand`` is asked about the folders
#: it searches: an OpenCode or Kilo data folder is found from a parent (``~/.local/share`` is
#: one level up from ``opencode``, ``~`` three), not only when named itself (fresh-user review
#: of issue 42). Bounded, so a search of a large tree does not probe every folder in it, and a
#: project's own test copies of such folders, deep inside it, are not taken for the user's.
EXPAND_DEPTH = 4

Progress = Callable[[int], None]


def is_session_file(path: Path) -> bool:
    """Whether a folder search (``discover``, ``watch``'s events) takes ``path``: a ``.jsonl``
    file not in ``NOT_SESSIONS``, or a Gemini CLI legacy chat (``CHATS_FOLDER``): a
    ``session-*.json`` file in a ``chats`` folder, or a ``.json`` file in a folder right below
    one. Names only: the importer reads the content to tell the format (a ``.json`` there that
    is no session is skipped, its reason said)."""
    name = path.name
    if name.endswith(".jsonl"):
        return name not in NOT_SESSIONS
    if not name.endswith(".json"):
        return False
    parent = path.parent
    return (parent.name == CHATS_FOLDER and name.startswith("session-")) or (
        parent.parent.name == CHATS_FOLDER
    )


def discover(
    paths: Iterable[str | os.PathLike[str]],
    *,
    unreadable: list[FileReport] | None = None,
    expand: Callable[[Path, list[Path]], bool] | None = None,
) -> list[Path]:
    """Session files named by ``paths``: files as given, directories searched recursively for
    session files (``is_session_file``: ``*.jsonl``, Gemini CLI's legacy ``.json`` chats;
    sorted). A symlinked folder inside a tree is followed once: a folder already
    searched (the same device and inode, a link loop included) is not searched again.
    ``expand(folder, found)``, when given, is asked first about each folder named, and about
    each folder searched up to ``EXPAND_DEPTH`` levels below it: when it returns True it has
    added the folder's session files to ``found`` itself (the importer's OpenCode and Kilo data
    folders, whose mirrors it brings up to date), and that folder is not searched.

    With ``unreadable`` (the CLI's ``ImportReport.files``), a path that cannot be used is not
    fatal (issue 20: ``import /missing good.jsonl`` imports the good one): each is appended as
    a ``failed`` report with its reason and exit code 2 — a path that does not exist, one that
    is neither a regular file nor a folder (``/dev/zero``, a FIFO: never opened, as reading
    them never ends or blocks), a folder that cannot be listed. Without ``unreadable`` the
    first such path raises ``InputError`` naming it."""
    found: list[Path] = []

    def problem(where: str | os.PathLike[str], reason: str, absent: bool = False) -> None:
        if unreadable is None:
            raise InputError(f"{one_line(str(where))}: {reason}")
        bad = FileReport(path_key(Path(where)), status="failed", absent=absent)
        bad.fail(reason, InputError.exit_code)
        unreadable.append(bad)

    seen: set[tuple[int, int]] = set()
    for raw in paths:
        path = Path(raw).expanduser()
        if expand is not None and path.is_dir() and expand(path, found):
            continue
        if path.is_dir():
            errors: list[OSError] = []
            here: list[Path] = []
            for folder, dirs, names in os.walk(path, onerror=errors.append, followlinks=True):
                try:
                    st = os.stat(folder)
                except OSError as exc:
                    errors.append(exc)
                    dirs[:] = []
                    continue
                if (st.st_dev, st.st_ino) in seen:  # a link loop, or a tree given twice
                    dirs[:] = []
                    continue
                seen.add((st.st_dev, st.st_ino))
                if expand is not None and folder != str(path):
                    depth = len(Path(folder).relative_to(path).parts)
                    if depth <= EXPAND_DEPTH and expand(Path(folder), found):
                        dirs[:] = []
                        continue
                dirs.sort()
                here.extend(p for n in names if is_session_file(p := Path(folder, n)))
            found.extend(sorted(p for p in here if p.is_file()))
            for exc in errors:
                problem(exc.filename or path, f"cannot read folder: {exc.strerror or exc}")
        elif path.is_file():
            found.append(path)
        elif path.exists():
            problem(
                raw,
                "not a regular file or folder (a device, pipe or socket): give "
                "session files or folders",
            )
        else:
            problem(raw, "no such file or directory", absent=True)
    return list(dict.fromkeys(p.resolve() for p in found))


def prefix_hash(path: Path, n_bytes: int = PREFIX_BYTES) -> str:
    """SHA-256 hex of the first ``n_bytes`` bytes of ``path``. Raises ``OSError``."""
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read(n_bytes)).hexdigest()


def path_key(path: Path) -> str:
    """The text under which a source path is stored: the path itself, with bytes that are not
    UTF-8 (a file name is any bytes on POSIX) shown as ``\\xNN`` escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def key_paths(key: str) -> list[Path]:
    """The files a stored source path (``path_key``) may name: the text itself, and when it
    holds ``\\xNN`` escapes, the name with those bytes (fresh-user review: a file whose name
    is not UTF-8 was reported gone after every import, as the escaped text names no file)."""
    paths = [Path(key)]
    if "\\x" in key:
        raw = re.sub(
            rb"\\x([0-9a-f]{2})",
            lambda m: bytes([int(m.group(1), 16)]),
            key.encode("utf-8", "surrogatepass"),
        )
        paths.append(Path(os.fsdecode(raw)))
    return paths


def mark_unchanged(
    report: FileReport, source: SourceState, stat: os.stat_result, progress: Progress | None
) -> None:
    """Make ``report`` the ``unchanged`` report of the file ``source`` describes (its harness,
    session, offset and rows still due); ``progress`` counts the file's ``stat`` size."""
    report.status, report.harness, report.session_key = (
        "unchanged",
        source.harness,
        source.session_key,
    )
    report.offset = report.resumed_from = source.offset
    report.pending_from = source.pending_from
    if progress:
        progress(stat.st_size)


def unchanged(
    p: Path, key: str, source: SourceState | None, progress: Progress | None = None
) -> FileReport | None:
    """The ``unchanged`` report of ``p`` when it is exactly what ``source`` read (§5.2: same
    inode, size at the stored offset, same leading bytes), else None (import it; also when
    ``p`` cannot be read: the import reports that)."""
    if source is None:
        return None
    try:
        stat = p.stat()
        if (
            stat.st_ino != source.inode
            or stat.st_size != source.offset
            or stat.st_size < source.size
            or prefix_hash(p, min(source.size, PREFIX_BYTES)) != source.prefix_sha256
        ):
            return None
    except OSError:
        return None  # the ordinary path reports it
    report = FileReport(key)
    mark_unchanged(report, source, stat, progress)
    return report


__all__ = [
    "CHATS_FOLDER",
    "EXPAND_DEPTH",
    "NOT_SESSIONS",
    "PREFIX_BYTES",
    "discover",
    "is_session_file",
    "key_paths",
    "mark_unchanged",
    "path_key",
    "prefix_hash",
    "unchanged",
]
