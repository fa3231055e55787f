"""Adapters: continuity as the persistence of other agent frameworks (issue 46 item 2), an
edge layer beside ``daemon``. ``langgraph``: ``ContinuitySaver`` (a LangGraph checkpointer
over the workspace's database, recording each thread's messages as a continuity session) and
``ContinuityStore`` (LangGraph's long-term store over continuity's memories). Each adapter
needs its framework, an optional extra (``pip install 'continuity[langgraph]'``); importing
this package loads none of them.

May import: ``core``, ``store``, ``formats``, ``redaction``, ``checkpoints``, ``transcripts``,
``continuation``, ``archive``, ``retrieval``, ``lineage``, ``resume``, ``brief``, ``browse``.
"""

from __future__ import annotations

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "ContinuitySaver": "langgraph",
    "ContinuityStore": "langgraph",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
