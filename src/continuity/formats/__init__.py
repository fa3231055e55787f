"""Harness files in: one reader per harness (Claude Code JSONL, Codex rollout JSONL, pi session
JSONL v1-v3, OpenCode mirrors, Gemini CLI and Qwen Code chat JSONL (and Gemini CLI's legacy
one-document chats, read through ``formats.document``), Copilot CLI events, Factory
Droid sessions, Cursor agent transcripts) detected from content, the records the adapters write
(the LangGraph adapter's thread record, ``langgraph``; the OpenAI Agents SDK adapter's session
files, ``agents_sdk``; issue 46), the tolerant JSONL line reader, the streaming, idempotent
importer (``import_paths``), and the runs the importer derives from each log.

``detect(path)`` reads the head of a file and returns the reader class whose ``sniff`` accepts
it (the OpenAI Agents SDK adapter's files first, by their own header type, then Codex, then
Gemini CLI (a metadata line with ``projectHash``), then Qwen Code (Gemini API ``parts`` in a
Claude-Code-like envelope), then Copilot CLI (``{type, data, id, parentId}`` events), then
Factory Droid (a first line ``session_start`` with ``cwd``), then pi, then Claude Code, then
OpenCode's mirrors (Kilo's: their session line names ``kilo``), then Cursor's transcripts (bare
``{role, message}`` lines: the least specific, so last): the most specific envelope wins), or
None. Given the file's ``path``, its location decides where it follows a harness's convention
(``PATH_HINTS``: Cursor's ``agent-transcripts``, Copilot CLI's ``session-state/<id>/events.jsonl``,
Gemini CLI's ``chats/session-*.jsonl`` and legacy ``.json``, Factory Droid's
``sessions/-<folder>/<uuid>.jsonl``) as
long as at least as many of the first lines are that harness's (``FormatReader.claims``) as
are the content's pick; and a head no ``sniff`` accepts goes to the reader claiming most of its
lines. A fresh-user review of issue 42 saw one unfamiliar or corrupt first line lose a whole
file (skipped, or read as pi's); the lines a reader does not know are counted and kept raw.

May import: ``core``, ``store``.

The importer's names are re-exported lazily (``continuity.core.exports``).
"""

from __future__ import annotations

__all__ = [
    "FormatReader",
    "SessionFacts",
    "Line",
    "LineReader",
    "read_head",
    "READERS",
    "detect",
    "reader_for",
]


def _readers() -> list[type[FormatReader]]:
    from continuity.formats.agents_sdk import AgentsSdkReader
    from continuity.formats.claude_code import ClaudeCodeReader
    from continuity.formats.codex import CodexReader
    from continuity.formats.copilot_cli import CopilotCliReader
    from continuity.formats.cursor_agent import CursorAgentReader
    from continuity.formats.factory_droid import FactoryDroidReader
    from continuity.formats.gemini_cli import GeminiCliReader
    from continuity.formats.langgraph import LangGraphReader
    from continuity.formats.opencode import KiloReader, OpenCodeReader
    from continuity.formats.pi import PiReader
    from continuity.formats.qwen_code import QwenCodeReader

    return [
        AgentsSdkReader,
        LangGraphReader,
        CodexReader,
        GeminiCliReader,
        QwenCodeReader,
        CopilotCliReader,
        FactoryDroidReader,
        PiReader,
        ClaudeCodeReader,
        OpenCodeReader,
        KiloReader,
        CursorAgentReader,
    ]


READERS: list[type[FormatReader]] = []


#: (harness, pattern on the file's ``/``-separated path): where a harness keeps its sessions.
PATH_HINTS: tuple[tuple[str, str], ...] = (
    ("cursor-agent", r"/agent-transcripts/(?:[^/]+/)*[^/]+\.jsonl$"),
    ("copilot-cli", r"/session-state/[^/]+/events\.jsonl$"),
    ("gemini-cli", r"/chats/session-[^/]*\.jsonl?$"),
    ("factory-droid", r"/sessions/-(?!-)[^/]*[^-/]/[0-9a-f-]{36}\.jsonl$"),
)
#: How many of the head's records vote (``detect``).
VOTE_LINES = 20


def _hinted(path: str | None) -> type[FormatReader] | None:
    import re

    if not path:
        return None
    where = "/" + str(path).replace("\\", "/").lstrip("/")
    for harness, pattern in PATH_HINTS:
        if re.search(pattern, where):
            return reader_for(harness)
    return None


def detect(head: list[dict], path: str | None = None) -> type[FormatReader] | None:
    """The reader class for a file whose first parsed objects are ``head`` (module docstring),
    or None. ``path``: the file, whose location (``PATH_HINTS``) decides between formats its
    first ``VOTE_LINES`` records fit about as well."""
    if not READERS:
        READERS.extend(_readers())
    found = next((reader for reader in READERS if reader.sniff(head)), None)
    objs = [o for o in head[:VOTE_LINES] if isinstance(o, dict)]
    hint = _hinted(path)
    if hint is not None and hint is not found:
        mine = sum(1 for o in objs if hint.claims(o))
        theirs = sum(1 for o in objs if found.claims(o)) if found is not None else 0
        if mine and mine >= theirs:
            return hint
    if found is None and objs:
        votes = [(sum(1 for o in objs if r.claims(o)), -i, r) for i, r in enumerate(READERS)]
        count, _, best = max(votes, key=lambda v: v[:2])
        if 2 * count > len(objs):
            return best
    return found


def reader_for(harness: str) -> type[FormatReader]:
    """The reader class of a harness name. Raises ``KeyError`` for an unknown name."""
    if not READERS:
        READERS.extend(_readers())
    for reader in READERS:
        if reader.harness == harness:
            return reader
    raise KeyError(harness)


from continuity.core.exports import lazy_exports  # noqa: E402

_EXPORTS = {
    # lazy too (issue 43 goal 3): ``sessions`` reads ``formats.resumed`` without the readers
    "FormatReader": "base",
    "SessionFacts": "base",
    "Line": "jsonl",
    "LineReader": "jsonl",
    "read_head": "jsonl",
    "FileReport": "importer",
    "ImportReport": "importer",
    "discover": "importer",
    "import_file": "importer",
    "import_paths": "importer",
    "path_key": "importer",
    "total_bytes": "importer",
}
# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.formats.base import FormatReader, SessionFacts
    from continuity.formats.importer import (
        FileReport,
        ImportReport,
        discover,
        import_file,
        import_paths,
        path_key,
        total_bytes,
    )
    from continuity.formats.jsonl import Line, LineReader, read_head

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
