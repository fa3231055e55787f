"""``continuity resume`` (issue 13): a session's continuation (the ``continue --json`` view)
written as a new native session file of Claude Code, Codex or pi, where that harness looks for
sessions of the project folder, so the next run reads it through the harness's own resume.

``session`` (``resume_session``: build the view, convert, write), ``convert`` (the shared
cross-format step: ids valid for the target, every call answered right after its turn, media as
stubs), one writer per harness (``claude_code``, ``codex``, ``pi``: where the file goes and its
lines) and ``files`` (a new file whole or not at all, never over an existing one).

May import: ``core``, ``store``, ``formats``, ``redaction``, ``checkpoints``, ``transcripts``,
``continuation``.

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "ResumeRefused": "session",
    "TARGETS": "convert",
    "WRITERS": "session",
    "Written": "session",
    "resume_session": "session",
    "to_turns": "convert",
    "write_new": "files",
    "not_a_target": "convert",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.resume.convert import (
        TARGETS,
        not_a_target,
        to_turns,
    )
    from continuity.resume.files import (
        write_new,
    )
    from continuity.resume.session import (
        WRITERS,
        ResumeRefused,
        Written,
        resume_session,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
