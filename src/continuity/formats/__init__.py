"""Harness files in: one reader per harness (Claude Code JSONL, Codex rollout JSONL, pi session
JSONL v1-v3, OpenCode mirrors, Gemini CLI and Qwen Code chat JSONL, Copilot CLI events, Factory
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
None.

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


def detect(head: list[dict]) -> type[FormatReader] | None:
    """The reader class for a file whose first parsed objects are ``head``, or None."""
    if not READERS:
        READERS.extend(_readers())
    for reader in READERS:
        if reader.sniff(head):
            return reader
    return None


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
