"""``resume_session``: a session's continuation written as a new native session of a harness
(issue 13), so the next run reads it through that harness's own resume.

``resume_session(store, session_key, target, budget_bytes=240_000, env=os.environ,
target_home=None)`` builds the same view as ``continue --json`` (``build_continuation``, same
budget rules), turns it into the target's turns (``convert.to_turns``: ids valid for the target,
every call answered right after its turn, media as stubs) and writes them, whole or not at all
and never over an existing file, where the target looks for sessions of the session's project
folder:

- ``claude-code``: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude`` ``/projects/<project>/<uuid>.jsonl``;
- ``codex``: ``$CODEX_HOME`` or ``~/.codex`` ``/sessions/YYYY/MM/DD/rollout-…-<uuid>.jsonl``;
- ``pi``: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent`` ``/sessions/--<project>--/…_<uuid>.jsonl``.

``target_home`` replaces the harness's home folder. The source session and its file are only
read. Returns a ``Written`` ``{target, path, session_id, command, cwd, env}``.

Raises ``ResumeRefused`` (exit 5, nothing written) when the continuation is refused,
``InputError`` (exit 2) for an unknown target, a session without a project folder (or one that
does not exist), or a harness home that cannot be written, and ``SessionNotFound``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from continuity.core.config import FOLLOW_UP_BUDGET_BYTES
from continuity.core.errors import ContinuityError, InputError, SessionNotFound
from continuity.resume import claude_code, codex, pi
from continuity.resume.convert import TARGETS, Source, to_turns
from continuity.resume.files import write_new

WRITERS = {"claude-code": claude_code, "codex": codex, "pi": pi}


class ResumeRefused(ContinuityError):
    """The continuation was refused (``refusal.reason``: protected_context_over_budget,
    incomplete_request, source_read_failure); nothing was written. Exit 5, as ``continue``."""

    exit_code = 5

    def __init__(self, session: str, refusal: dict[str, str]) -> None:
        super().__init__(f"continuation of {session} refused ({refusal['reason']}): "
                         f"{refusal.get('detail', '')}; nothing was written")
        self.refusal = refusal


@dataclass(frozen=True)
class Written:
    """The session ``resume`` wrote: ``target`` harness, ``path`` of the new file, its
    ``session_id``, the ``command`` (argv) that opens it, run in folder ``cwd``."""

    target: str
    path: Path
    session_id: str
    command: list[str]
    cwd: str
    #: Variables the command needs (``{"CLAUDE_CONFIG_DIR": "/x"}`` after ``--target-home``),
    #: so that the harness looks where the file was written; empty otherwise.
    env: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``{target, path, session_id, command}`` (``command`` as one shell line run in the
        project folder) plus ``cwd``: the ``resume --json`` object."""
        import shlex

        assign = "".join(f"{k}={shlex.quote(v)} " for k, v in self.env.items())
        return {"target": self.target, "path": str(self.path), "session_id": self.session_id,
                "command": f"cd {shlex.quote(self.cwd)} && {assign}{shlex.join(self.command)}",
                "cwd": self.cwd, "env": dict(self.env)}


def resume_session(store: Any, session_key: str, target: str, *,
                   budget_bytes: int = FOLLOW_UP_BUDGET_BYTES,
                   env: Mapping[str, str] | None = None, target_home: Path | None = None,
                   now: datetime | None = None) -> Written:
    """Write SESSION's continuation as a new ``target`` session (module docstring)."""
    from continuity.continuation.view import build_continuation

    if target not in TARGETS:
        raise InputError(f"unknown harness {target!r}: choose one of {', '.join(TARGETS)}")
    env = os.environ if env is None else env
    if target_home is not None and not str(target_home).strip():
        raise InputError("--target-home is empty: give the harness's home folder")
    session = store.get_session(session_key)
    if session is None:
        raise SessionNotFound(session_key)
    project = session.project
    if not project:
        raise InputError(f"session {session_key} has no project folder recorded; a harness "
                         "resumes a session only in its project folder")
    if not os.path.isdir(project):
        raise InputError(f"project folder {project} of session {session_key} does not exist "
                         "here; the harness resumes a session only in its project folder")
    view = build_continuation(store, session_key, budget_bytes=budget_bytes)
    if view.refusal:
        raise ResumeRefused(session_key, view.refusal)
    source = Source(key=session_key, harness=session.harness, project=project,
                    path=session.source_path)
    resumed = to_turns(view, source, target)
    writer = WRITERS[target]
    now = now or datetime.now(timezone.utc)
    home = writer.harness_home(env, target_home)
    try:
        folder = (writer.project_folder(home, project, now) if target == "codex"
                  else writer.project_folder(home, project))
    except ValueError as exc:
        raise InputError(str(exc)) from None
    session_id = writer.new_id()
    lines = (pi.render(resumed, session_id, now, home) if target == "pi"
             else writer.render(resumed, session_id, now))
    path = folder / writer.file_name(session_id, now)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_new(path, lines)
    except FileExistsError:
        raise InputError(f"{path} already exists; it was left as it is") from None
    except OSError as exc:
        raise InputError(f"cannot write the {target} session under {home}: "
                         f"{exc.strerror or exc}") from None
    return Written(target, path, session_id, writer.command(session_id, path, project), project,
                   {writer.HOME_VARIABLE: str(home)} if target_home is not None else {})


__all__ = ["resume_session", "Written", "ResumeRefused", "WRITERS", "TARGETS"]
