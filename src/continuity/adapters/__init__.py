"""Adapters: continuity as the memory of other agent frameworks, through their own
interfaces (issue 46 item 2), an edge layer beside ``daemon``, each behind an optional extra:

- ``langgraph`` (extra ``langgraph``): ``ContinuitySaver`` (a LangGraph checkpointer over the
  workspace's database, recording each thread's messages as a continuity session) and
  ``ContinuityStore`` (LangGraph's long-term store over continuity's memories);
- ``agents_sdk`` (extra ``agents``): ``ContinuitySession`` (the OpenAI Agents SDK's ``Session``
  protocol: every item recorded losslessly, ``get_items`` answering seed 002's bounded
  continuation).

Importing this package loads none of them (``continuity.core.exports``).

May import: every package below it: ``core`` to ``browse``, and ``api``.
"""

from __future__ import annotations

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "ContinuitySaver": "langgraph",
    "ContinuityStore": "langgraph",
    "ContinuitySession": "agents_sdk",
}
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.adapters.agents_sdk import ContinuitySession
    from continuity.adapters.langgraph import ContinuitySaver, ContinuityStore

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
