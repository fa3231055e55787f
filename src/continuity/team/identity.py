"""A project's identity across machines (issue 41 item 3): the git remote ``origin``,
normalised, plus the folder's path inside the repository, so ``/home/ana/app`` and
``/Users/bo/src/app``, clones of one repository, are one project.

``normalise_remote`` makes every spelling of one remote the same text: the scheme, the user
(and any password), the port and a trailing ``.git`` or ``/`` are dropped, the host is
lowercased, and the scp-like ``git@host:owner/repo`` is read as ``host/owner/repo``; so
``git@github.com:o/r.git``, ``https://github.com/o/r`` and ``ssh://git@github.com:22/o/r``
are all ``github.com/o/r``. ``project_identity(folder)`` asks git (``git -C DIR config --get
remote.origin.url`` and ``git -C DIR rev-parse --show-toplevel``); a folder outside any
repository, or in one without an ``origin``, is identified by its path on this machine, with
the machine's name in it, so it is never one project with another machine's folder.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

#: git gets this long to answer (seconds) before the folder counts as outside a repository.
GIT_TIMEOUT_SECONDS = 10

_SCP_LIKE = re.compile(r"^(?:(?P<user>[^@/]+)@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")


def normalise_remote(url: str) -> str:
    """The one spelling of a git remote ``url`` (module docstring): ``host/owner/repo``,
    host lowercased; a local remote (``/srv/git/app.git``, ``file:///srv/git/app``) is
    ``file:`` + its path without ``.git``. Raises ``ValueError`` for an empty ``url``."""
    text = url.strip()
    if not text:
        raise ValueError("empty git remote")
    if "://" in text:
        scheme, rest = text.split("://", 1)
        if scheme.lower() == "file":
            return "file:" + _strip_git(rest)
        hostpart, _, path = rest.partition("/")
        host = hostpart.rpartition("@")[2]  # user[:password]@ dropped
        host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host  # :port dropped
        return f"{host.lower().strip('[]')}/{_strip_git(path)}".rstrip("/")
    match = _SCP_LIKE.match(text)
    if match and not text.startswith(("/", ".")):
        return f"{match['host'].lower()}/{_strip_git(match['path'].lstrip('/'))}".rstrip("/")
    return "file:" + _strip_git(text)


def _strip_git(path: str) -> str:
    path = path.rstrip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")]
    return path.rstrip("/")


@dataclass(frozen=True, slots=True)
class ProjectIdentity:
    """Who a folder is to the team: ``project`` is the identity (``git:<remote>`` for a
    repository's top folder, ``git:<remote>#<path inside>`` below it; ``path:<machine>:<folder>``
    outside git), ``remote`` the normalised ``origin`` (None outside git), ``path`` the
    folder's path inside the repository (``""`` at its top; the folder itself outside git),
    ``folder`` the folder as given, made absolute."""

    project: str
    remote: str | None
    path: str
    folder: str

    @property
    def shareable(self) -> bool:
        """Whether the identity means the same project on another machine (a git remote)."""
        return self.remote is not None

    def within(self, other: str) -> bool:
        """Whether this project is ``other`` (an identity) or a folder inside it: a session
        of ``git:h/o/r#src/api`` belongs to a share of ``git:h/o/r`` or ``git:h/o/r#src``."""
        if self.project == other:
            return True
        base, _, inner = other.partition("#")
        mine, _, my_inner = self.project.partition("#")
        if base.startswith("path:"):
            return self.project.startswith(other.rstrip("/") + "/")
        if mine != base:
            return False
        return not inner or my_inner == inner or my_inner.startswith(inner + "/")


def _git(folder: str, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", folder, *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = done.stdout.strip()
    return value if done.returncode == 0 and value else None


def project_identity(folder: str | os.PathLike[str], *, machine: str) -> ProjectIdentity:
    """The identity of ``folder`` (module docstring), asking git; ``machine`` names this
    machine in the identity of a folder outside git. A folder that does not exist (a session
    recorded elsewhere) is identified by its path."""
    path = os.path.abspath(os.fspath(folder))
    remote = top = None
    if os.path.isdir(path):
        url = _git(path, "config", "--get", "remote.origin.url")
        if url:
            top = _git(path, "rev-parse", "--show-toplevel")
            try:
                remote = normalise_remote(url)
            except ValueError:
                remote = None
    if remote is None or top is None:
        return ProjectIdentity(f"path:{machine}:{path}", None, path, path)
    try:
        inner = Path(path).resolve().relative_to(Path(top).resolve())
    except ValueError:
        inner = Path()
    rel = PurePosixPath(*inner.parts).as_posix() if inner.parts else ""
    return ProjectIdentity(f"git:{remote}" + (f"#{rel}" if rel else ""), remote, rel, path)


class IdentityCache:
    """``project_identity`` remembered per folder for one pass (a sync asks for the same
    project of many sessions; git runs once per folder)."""

    def __init__(self, machine: str) -> None:
        self.machine = machine
        self._known: dict[str, ProjectIdentity] = {}

    def __call__(self, folder: str) -> ProjectIdentity:
        found = self._known.get(folder)
        if found is None:
            found = self._known[folder] = project_identity(folder, machine=self.machine)
        return found


__all__ = ["IdentityCache", "ProjectIdentity", "normalise_remote", "project_identity"]
