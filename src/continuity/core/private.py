"""Owner-only files: the workspace holds every raw line, prompt and tool output an agent saw,
so other users of the machine must not read any of it (issue 16: ``continuity.db``,
``spool/recent-ids.txt`` and the settings backup were created ``0644``).

- ``private_dir(path)``: make a folder (and its missing parents inside the workspace) ``0700``
  whatever the umask;
- ``private_open(path, flags)``: ``os.open`` a file created ``0600``;
- ``write_private(path, data)``: write a file whole (temp file, fsync, rename) as ``0600``;
- ``make_private(path)``: ``chmod 0600`` an existing file we created (SQLite's ``-wal`` and
  ``-shm`` take the database file's mode, so a database file created ``0600`` first keeps
  both private);
- ``exposed(home)``: the folders and files under a workspace that users other than the owner
  can read, write or enter (for ``where`` and ``doctor``).

Imports nothing of ours.
"""

from __future__ import annotations

import os
import stat

# Only os and stat at import time: the hook's fast path (spool) imports this module.
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from pathlib import Path
    from typing import TypeVar

    _PathT = TypeVar("_PathT", bound="str | os.PathLike[str]")

__all__ = [
    "PRIVATE_DIR",
    "PRIVATE_FILE",
    "Exposed",
    "exposed",
    "make_private",
    "private_dir",
    "private_open",
    "write_private",
]

#: the mode of every folder in the workspace (issue 16)
PRIVATE_DIR = 0o700
#: the mode of every file in the workspace (issue 16)
PRIVATE_FILE = 0o600


def private_dir(path: _PathT) -> _PathT:
    """Create folder ``path`` (and missing parents) if needed; each folder this call creates is
    ``0700`` whatever the umask. An existing folder keeps its mode (``exposed`` reports it).
    Returns ``path`` as given. Raises ``OSError`` as ``os.mkdir`` does. Uses ``os.path`` only
    (``pathlib`` would cost the hook's fast path its ``re`` and ``urllib`` imports)."""
    missing: list[str] = []
    probe = os.path.abspath(os.fspath(path))
    while not os.path.exists(probe):
        missing.append(probe)
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR)
        except FileExistsError:  # made by another process meanwhile
            continue
        os.chmod(folder, PRIVATE_DIR)  # the umask may have cleared owner bits (0o7xx)
    return path


def private_open(path: str | os.PathLike[str], flags: int) -> int:
    """``os.open(path, flags)``; a file it creates is ``0600`` whatever the umask (an
    existing file keeps its mode). Returns the descriptor."""
    return os.open(path, flags, PRIVATE_FILE)


def make_private(path: str | os.PathLike[str]) -> None:
    """``chmod 0600`` the file at ``path`` when it exists and has any bit for group or others
    (missing files are ignored)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if mode & 0o077:
        os.chmod(path, PRIVATE_FILE)


def write_private(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (``write_whole``); the file is
    ``0600``. Its folder must exist. Raises ``OSError``."""
    write_whole(path, data, PRIVATE_FILE)


def write_whole(
    path: str | os.PathLike[str], data: bytes, mode: int, *, replace: bool = True
) -> None:
    """Write ``data`` to ``path`` whole or not at all: a temp file beside it, fsynced, given
    permission bits ``mode`` (whatever the umask), then renamed over ``path``; with
    ``replace`` False linked to ``path`` instead, which fails with ``FileExistsError`` when
    ``path`` exists (never overwrite, not even in a race; issue 13). Its folder must exist.
    Raises ``OSError`` (the temp file is removed)."""
    import tempfile
    from pathlib import Path

    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
            Path(tmp).unlink()
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Exposed:
    """A folder or file under the workspace that others can use: its ``path``, permission
    ``mode`` (the low 9 bits) and ``kind`` (``folder`` or ``file``)."""

    __slots__ = ("path", "mode", "kind")

    def __init__(self, path: Path, mode: int, kind: str) -> None:
        self.path, self.mode, self.kind = path, mode, kind

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Exposed) and (self.path, self.mode, self.kind) == (
            other.path,
            other.mode,
            other.kind,
        )

    def __repr__(self) -> str:
        return f"Exposed({str(self.path)!r}, 0o{self.mode:o}, {self.kind!r})"

    def describe(self) -> str:
        """``<path> is 0644: other users can read it``: what the group and other bits let
        others do (read; write; enter a folder, run a file), e.g. ``0755`` folder: "read and
        enter", ``0702`` folder: "write to" (the fix is ``private_fix``: one command for the
        whole workspace, issue 45 item 3)."""
        bits = (self.mode >> 3 | self.mode) & 0o7
        can = [
            verb
            for bit, verb in (
                (4, "read"),
                (2, "write to"),
                (1, "enter" if self.kind == "folder" else "run"),
            )
            if bits & bit
        ]
        said = ", ".join(can[:-1]) + f" and {can[-1]}" if len(can) > 1 else can[0]
        return f"{self.path} is {self.mode:04o}: other users can {said} it"


def private_fix(home: str | os.PathLike[str]) -> str:
    """The one shell command that makes the workspace ``home`` owner-only:
    ``chmod -R go= <home>`` (quoted). ``where``, ``doctor`` and the README name this same
    command (issue 45 item 3: they named three different ones)."""
    import shlex

    return f"chmod -R go= {shlex.quote(str(home))}"


def exposed(home: str | os.PathLike[str], *, limit: int = 10_000) -> list[Exposed]:
    """The workspace folder ``home`` and the folders and regular files under it whose mode
    gives group or others any bit (``mode & 0o077``), in walk order, at most ``limit`` entries
    looked at. Symlinks inside it are not followed (the link's target is not in the
    workspace); ``home`` itself may be one, and then its target's mode is the workspace's (a
    fresh-user review: a linked workspace's 0755 folder went unnamed). A missing ``home``
    gives []. Issue 16: a fresh workspace gives []."""
    from pathlib import Path

    root = Path(home)
    try:
        st = root.stat()
    except FileNotFoundError:
        return []
    found: list[Exposed] = []
    if stat.S_ISDIR(st.st_mode) and st.st_mode & 0o077:
        found.append(Exposed(root, st.st_mode & 0o777, "folder"))
    seen = 0
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            seen += 1
            if seen > limit:
                return found
            path = Path(folder) / name
            try:
                st = path.lstat()
            except OSError:
                continue
            if not st.st_mode & 0o077:
                continue
            if stat.S_ISDIR(st.st_mode):
                found.append(Exposed(path, st.st_mode & 0o777, "folder"))
            elif stat.S_ISREG(st.st_mode):
                found.append(Exposed(path, st.st_mode & 0o777, "file"))
    return found
