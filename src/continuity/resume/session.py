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
- ``pi``: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent`` ``/sessions/--<project>--/…_<uuid>.jsonl``;
- ``opencode``: ``$XDG_DATA_HOME/opencode`` or ``~/.local/share/opencode``
  ``/continuity-resume/<ses_id>.json``, an export document the printed command hands to
  ``opencode import`` before it opens the session (``resume.opencode``); never reused.
- ``gemini-cli``: ``$GEMINI_CLI_HOME`` or ``~`` ``/.gemini/tmp/<slug>/chats/session-…-<id8>.jsonl``
  (``resume.gemini_cli``).
- ``qwen-code``: ``$QWEN_RUNTIME_DIR`` or ``$QWEN_HOME`` or ``~/.qwen``
  ``/projects/<project>/chats/<uuid>.jsonl`` (``resume.qwen_code``).
- ``copilot-cli``: ``$COPILOT_HOME`` or ``~/.copilot`` ``/session-state/<uuid>/events.jsonl``
  (``resume.copilot_cli``).

``target_home`` replaces the harness's home folder. The source session and its file are only
read. Returns a ``Written`` ``{target, path, session_id, command, headless, cwd, env, reused}``.

Issue 45 item 3: a resume of the same source session at the same point (the same turns and
preface) into the same harness and home is one copy: the file carries a ``fingerprint`` of
all that and the SHA-256 of its bytes after the first line (``files.seal``); an earlier copy
with the fingerprint whose bytes are unchanged (``files.intact``) is returned
(``reused``) and nothing is written; one the harness has since grown or that was edited
is left as it is and a new copy is written. A source that is itself a copy gives one preface
naming the original and the chain (``convert.copy_notice``), and the marker carries them
(``original``, ``chain``: the keys from the original to the source).

Raises ``ResumeRefused`` (exit 5, nothing written) when the continuation is refused,
``InputError`` (exit 2) for an unknown target, a session without a project folder (or one that
does not exist), or a harness home that cannot be written, and ``SessionNotFound``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from continuity.core.config import FOLLOW_UP_BUDGET_BYTES
from continuity.core.errors import ContinuityError, InputError, SessionNotFound
from continuity.core.text import object_at
from continuity.formats.resumed import copy_chain
from continuity.resume import (
    claude_code,
    codex,
    copilot_cli,
    files,
    gemini_cli,
    opencode,
    pi,
    qwen_code,
)
from continuity.resume.convert import TARGETS, Source, not_a_target, to_turns
from continuity.resume.files import write_new

WRITERS = {
    "claude-code": claude_code,
    "codex": codex,
    "pi": pi,
    "opencode": opencode,
    "gemini-cli": gemini_cli,
    "qwen-code": qwen_code,
    "copilot-cli": copilot_cli,
}


class ResumeRefused(ContinuityError):
    """The continuation was refused (``refusal.reason``: protected_context_over_budget,
    incomplete_request, source_read_failure); nothing was written. Exit 5, as ``continue``."""

    exit_code = 5

    def __init__(self, session: str, refusal: dict[str, str]) -> None:
        super().__init__(
            f"continuation of {session} refused ({refusal['reason']}): "
            f"{refusal.get('detail', '')}; nothing was written"
        )
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
    #: The headless command (argv; the prompt goes last): ``claude -p --resume <id>``,
    #: ``codex exec resume <id>``, ``pi -p --session <path>`` (issue 45 item 3).
    headless: list[str] = field(default_factory=list)
    #: True when an identical intact copy written earlier was returned (nothing written).
    reused: bool = False

    def line(self, argv: list[str]) -> str:
        """``argv`` as one shell line run in the project folder, with ``env`` assigned."""
        import shlex

        assign = "".join(f"{k}={shlex.quote(v)} " for k, v in self.env.items())
        return f"cd {shlex.quote(self.cwd)} && {assign}{shlex.join(argv)}"

    def to_dict(self) -> dict[str, Any]:
        """``{target, path, session_id, command, headless}`` (each command as one shell line
        run in the project folder; ``headless`` takes the prompt as its last argument) plus
        ``cwd``, ``env`` and ``reused``: the ``resume --json`` object."""
        return {
            "target": self.target,
            "path": str(self.path),
            "session_id": self.session_id,
            "command": self.line(self.command),
            "headless": self.line(self.headless),
            "cwd": self.cwd,
            "env": dict(self.env),
            "reused": self.reused,
        }


def resume_session(
    store: Any,
    session_key: str,
    target: str,
    *,
    budget_bytes: int = FOLLOW_UP_BUDGET_BYTES,
    env: Mapping[str, str] | None = None,
    target_home: Path | None = None,
    now: datetime | None = None,
    project: str | None = None,
) -> Written:
    """Write SESSION's continuation as a new ``target`` session (module docstring).
    ``project``: the folder to continue it in instead of the recorded one (issue 41: ``resume
    --project DIR``, the folder where the repository lives on this machine)."""
    from continuity.continuation.view import build_continuation

    if target not in TARGETS:
        raise InputError(not_a_target(target))
    env = os.environ if env is None else env
    if target_home is not None and not str(target_home).strip():
        raise InputError("--target-home is empty: give the harness's home folder")
    session = store.get_session(session_key)
    if session is None:
        raise SessionNotFound(session_key)
    if project is not None:
        project = os.path.abspath(project)
        if not os.path.isdir(project):
            raise InputError(f"--project {project}: not a folder on this machine")
    else:
        project = session.project
    if not project:
        raise InputError(
            f"session {session_key} has no project folder recorded; a harness "
            "resumes a session only in its project folder: name it with --project DIR"
        )
    if not os.path.isdir(project):
        raise InputError(
            f"project folder {project} of session {session_key} does not exist "
            "here; the harness resumes a session only in its project folder: name the folder "
            "where the repository is on this machine with --project DIR"
        )
    view = build_continuation(store, session_key, budget_bytes=budget_bytes)
    if view.refusal:
        raise ResumeRefused(session_key, view.refusal)
    chain = copy_chain(store, session_key)
    source = Source(
        key=session_key,
        harness=session.harness,
        project=project,
        path=session.source_path,
        chain=chain,
    )
    resumed = to_turns(view, source, target)
    writer = WRITERS[target]
    now = now or datetime.now(UTC)
    home = writer.harness_home(env, target_home)
    try:
        folder = (
            writer.project_folder(home, project, now)
            if target == "codex"
            else writer.project_folder(home, project)
        )
    except ValueError as exc:
        raise InputError(str(exc)) from None
    variables = (
        {writer.HOME_VARIABLE: str(home.parent if target == "opencode" else home)}
        if target_home is not None
        else {}
    )
    fingerprint = _fingerprint(target, home, resumed)
    # a copy is reused only where the harness finds it by its own session id
    earlier = files.find_intact(
        writer.candidates(home, folder),
        fingerprint,
        lambda p: bool(sid := _session_id(p)) and writer.named(p, sid),
    )
    session_id = _session_id(earlier) if earlier is not None else None
    if earlier is not None and session_id:
        return Written(
            target,
            earlier,
            session_id,
            writer.command(session_id, earlier, project),
            project,
            variables,
            writer.headless(session_id, earlier, project),
            reused=True,
        )
    session_id = writer.new_id()
    lines = (
        pi.render(resumed, session_id, now, home)
        if target == "pi"
        else writer.render(resumed, session_id, now)
    )
    original = source.original
    lines = files.seal(
        lines,
        {
            "fingerprint": fingerprint,
            "original": {"session": original["session"], "harness": original["harness"]},
            "chain": [c["session"] for c in reversed(chain)] + [session_key],
        },
    )
    path = folder / writer.file_name(session_id, now)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # Copilot CLI: a folder per session
        write_new(path, lines)
    except FileExistsError:
        raise InputError(f"{path} already exists; it was left as it is") from None
    except OSError as exc:
        raise InputError(
            f"cannot write the {target} session under {home}: {exc.strerror or exc}"
        ) from None
    return Written(
        target,
        path,
        session_id,
        writer.command(session_id, path, project),
        project,
        variables,
        writer.headless(session_id, path, project),
    )


def _fingerprint(target: str, home: Path, resumed: Any) -> str:
    """What makes two resumes the same copy (issue 45 item 3): the target, its home folder,
    the source session and project, and every word the file holds (preface and turns, so
    the source at the same point); SHA-256 hex. pi's assistant turns also name pi's default
    model, read when the file is rendered: a changed default makes another copy."""
    import dataclasses
    import hashlib

    import orjson

    model = pi._model(home) if target == "pi" else None
    payload = {
        "target": target,
        "home": str(home),
        "source": resumed.source.key,
        "project": resumed.source.project,
        "preamble": resumed.preamble,
        "turns": [dataclasses.asdict(t) for t in resumed.turns],
        "model": model,
    }
    return hashlib.sha256(
        orjson.dumps(payload, option=orjson.OPT_SORT_KEYS, default=str)
    ).hexdigest()


def _session_id(path: Path) -> str | None:
    """The session id in the first line of a copy (Claude Code ``sessionId``, Codex
    ``payload.id``, pi ``id``, Copilot CLI ``data.sessionId``), else None."""
    import orjson

    try:
        with open(path, "rb") as fh:
            line = orjson.loads(fh.readline(files.HEAD_BYTES))
    except (OSError, ValueError):
        return None
    if not isinstance(line, dict):
        return None
    payload = object_at(line, "payload")
    value = (
        line.get("sessionId") or payload.get("id") or object_at(line, "data").get("sessionId")
        if line.get("type") != "session"
        else line.get("id")
    )
    return value if isinstance(value, str) and value else None


__all__ = ["resume_session", "Written", "ResumeRefused", "WRITERS", "TARGETS"]
