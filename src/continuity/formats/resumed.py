"""Session files ``continuity resume`` wrote (issue 13): recognised by the ``continuityResume``
object their first line carries (Claude Code's first line, Codex's ``session_meta`` payload, pi's
header): ``{"session": <source session key>, "harness": <source harness>, "path": <source file
or null>}``.

``copy_of(head)`` returns that object (its ``session`` a non-empty string) or None; the importer
imports such a file as a new session of its own (its own id, never merged into the source) and
links it to the source with a note (``copy_note``). Issue 45 item 3: a copy of a copy also names
the session the chain started from (``original``: ``{"session", "harness", "path"}``), and
``parse_copy_note`` reads a note back (``sessions`` marks copies from it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any

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
    if (
        not isinstance(marker, dict)
        or not isinstance(marker.get("session"), str)
        or not marker["session"]
    ):
        return None
    return marker


#: The words the preface of every resumed file starts with (``resume.convert.copy_notice``):
#: a summary starting with them is a copy's preface, not a summary of the copy's own rows.
NOTICE_START = "This session is a copy written by `continuity resume`:"

#: The words every copy note starts with (``parse_copy_note``; the store finds copies by them).
NOTE_PREFIX = "Resumed copy of "
#: A copy note, compiled on first use (``re``'s cache): ``continue`` imports this module and
#: seldom reads one (issue 43 goal 3).
_NOTE = (
    r"^Resumed copy of (\S+) session (\S+) \(continuity resume\); (?:that "
    r"session is the original\.|the original is (\S+) session (\S+)\.)$"
)


def _harness(value: Any) -> str:
    return value if isinstance(value, str) and value and " " not in value else "another"


def copy_note(marker: dict[str, Any]) -> str:
    """The note linking a resumed session to its source: ``Resumed copy of <harness> session
    <key> (continuity resume); that session is the original.``, or, for a copy of a copy
    (issue 45 item 3: ``marker["original"]`` names another session), ``...; the original is
    <harness> session <key>.``"""
    harness = _harness(marker.get("harness"))
    head = f"{NOTE_PREFIX}{harness} session {marker['session']} (continuity resume); "
    original = marker.get("original")
    if (
        isinstance(original, dict)
        and isinstance(original.get("session"), str)
        and original["session"]
        and original["session"] != marker["session"]
    ):
        return head + (
            f"the original is {_harness(original.get('harness'))} session {original['session']}."
        )
    return head + "that session is the original."


def parse_copy_note(text: str) -> dict[str, str] | None:
    """A copy note read back (issue 45 item 3): ``{"harness", "session"}`` of the source and
    ``{"original_harness", "original"}`` of the session the chain started from (the source
    itself when the note says it is the original); None for any other text."""
    found = re.match(_NOTE, text)
    if found is None:
        return None
    harness, session, o_harness, original = found.groups()
    return {
        "harness": harness,
        "session": session,
        "original_harness": o_harness or harness,
        "original": original or session,
    }


__all__ = ["copy_of", "copy_note", "parse_copy_note", "MARKER", "NOTE_PREFIX", "NOTICE_START"]


def copy_chain(store: Any, session_key: str, *, limit: int = 50) -> list[dict[str, str]]:
    """The sessions ``session_key`` was copied from (issue 45 item 3), nearest first and the
    original last, each ``{"session", "harness"}``, read from the copy notes in ``store``
    (``notes_starting``); [] when it is no copy. A source whose own note is not in the store
    ends the walk, and the original its note names is added when it is not the last one
    reached. At most ``limit`` hops; a cycle ends it."""
    chain: list[dict[str, str]] = []
    seen = {session_key}
    current = session_key
    last: dict[str, str] | None = None
    while len(chain) < limit:
        texts = store.notes_starting(NOTE_PREFIX, [current]).get(current, [])
        parsed = next((p for p in map(parse_copy_note, reversed(texts)) if p), None)
        if parsed is None:
            break
        last = parsed
        chain.append({"session": parsed["session"], "harness": parsed["harness"]})
        if parsed["session"] in seen:
            break
        seen.add(parsed["session"])
        current = parsed["session"]
    if last is not None and chain[-1]["session"] != last["original"]:
        chain.append({"session": last["original"], "harness": last["original_harness"]})
    return chain


__all__ += ["copy_chain"]
