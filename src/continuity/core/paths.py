"""Paths as text for the read commands' start (issue 43 goal 3): each function gives what the
``pathlib`` expression its docstring names gives, as a string, without importing ``pathlib``
for the usual path.

``pathlib`` costs a process about 3.5 ms to import (it imports ``urllib.parse``, which
imports ``ipaddress``): 6 % of ``continuity show``. The workspace folder and its database
are almost always an absolute POSIX path that ``pathlib`` keeps as it is (``_plain``: no
``.`` or empty component, no trailing ``/``); such a path is answered with ``os`` alone.
Anything else (``~``, a relative path, ``a/./b``, ``//host``, Windows) is handed to
``pathlib`` itself, so every answer is pathlib's by construction, on every Python version.
A file test that fails for any reason other than the path being absent is handed to
``pathlib`` too, which raises or answers as it always did.

Imports nothing of ours.
"""

from __future__ import annotations

import os
import stat

#: The bytes ``Path.as_uri`` writes as they are (``urllib.parse.quote_from_bytes``'s always
#: safe characters and ``/``); any other byte is percent-encoded.
_URI_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/")


def _plain(text: str) -> bool:
    """Whether ``text`` is an absolute POSIX path ``str(pathlib.Path(text))`` keeps as it is
    (one leading ``/``, no empty or ``.`` component, no trailing ``/``); ``..`` is kept by
    pathlib too (it never resolves a path by its text)."""
    return (
        os.name == "posix"
        and text.startswith("/")
        and "//" not in text
        and "/./" not in text
        and not text.endswith(("/", "/."))
    )


def expanded(text: str) -> str:
    """``str(Path(text).expanduser())``: ``text`` itself for a plain absolute path."""
    if _plain(text):
        return text
    from pathlib import Path

    return str(Path(text).expanduser())


def absolute(text: str, *, expand: bool = True) -> str:
    """``str(Path(text).expanduser().absolute())`` (without ``expanduser`` when not
    ``expand``): ``text`` itself for a plain absolute path. Raises what pathlib raises
    (``RuntimeError`` for a ``~`` whose home folder is unknown)."""
    if _plain(text):
        return text
    from pathlib import Path

    path = Path(text).expanduser() if expand else Path(text)
    return str(path.absolute())


def joined(folder: str, name: str) -> str:
    """``str(Path(folder) / name)`` for one component ``name``."""
    if _plain(folder) and name and "/" not in name and name != ".":
        return f"{folder}/{name}"
    from pathlib import Path

    return str(Path(folder) / name)


def split(text: str) -> tuple[str, str]:
    """``(str(Path(text).parent), Path(text).name)``."""
    if _plain(text):
        folder, _, name = text.rpartition("/")
        return folder or "/", name
    from pathlib import Path

    path = Path(text)
    return str(path.parent), path.name


def _mode(text: str) -> int | None:
    """``os.stat(text).st_mode`` (symbolic links followed); None when ``text`` is absent
    (``ENOENT``, ``ENOTDIR``: every pathlib test answers False then); -1 for any other
    error, which the caller hands to pathlib."""
    try:
        return os.stat(text).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError):
        return -1


def is_file(text: str) -> bool:
    """``Path(text).is_file()``."""
    mode = _mode(text)
    if mode == -1:
        from pathlib import Path

        return Path(text).is_file()
    return mode is not None and stat.S_ISREG(mode)


def exists(text: str) -> bool:
    """``Path(text).exists()``."""
    mode = _mode(text)
    if mode == -1:
        from pathlib import Path

        return Path(text).exists()
    return mode is not None


def file_uri(text: str) -> str:
    """``Path(text).absolute().as_uri()``: ``file://`` and the path, its bytes outside
    ``_URI_SAFE`` percent-encoded."""
    if _plain(text) and _URI_SAFE.issuperset(text):
        return "file://" + text
    from pathlib import Path

    return Path(text).absolute().as_uri()


__all__ = ["absolute", "expanded", "exists", "file_uri", "is_file", "joined", "split"]
