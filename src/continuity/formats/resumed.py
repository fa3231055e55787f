"""Session files ``continuity resume`` wrote (issue 13): recognised by the ``continuityResume``
object their first line carries (Claude Code's first line, Codex's ``session_meta`` payload, pi's
header): ``{"session": <source session key>, "harness": <source harness>, "path": <source file
or null>}``.

``copy_of(head)`` returns that object (its ``session`` a non-empty string) or None; the importer
imports such a file as a new session of its own (its own id, never merged into the source) and
links it to the source with a note (``copy_note``).
"""

from __future__ import annotations

from typing import Any, Sequence

#: The field name the resumed files carry.
MARKER = "continuityResume"


def copy_of(head: Sequence[Any]) -> dict[str, Any] | None:
    """The source named by the first line of ``head`` (parsed JSON lines), or None."""
    if not head or not isinstance(head[0], dict):
        return None
    first = head[0]
    marker = first.get(MARKER)
    if marker is None and isinstance(first.get("payload"), dict):
        marker = first["payload"].get(MARKER)
    if not isinstance(marker, dict) or not isinstance(marker.get("session"), str) \
            or not marker["session"]:
        return None
    return marker


def copy_note(marker: dict[str, Any]) -> str:
    """The note linking a resumed session to its source: ``Resumed copy of <harness> session
    <key> (continuity resume); that session is the original.``"""
    harness = marker.get("harness") if isinstance(marker.get("harness"), str) else "another"
    return (f"Resumed copy of {harness} session {marker['session']} (continuity resume); "
            "that session is the original.")


__all__ = ["copy_of", "copy_note", "MARKER"]
