"""Fixtures of the retrieval tests: the real packaged embedder (wordllama, in ``[test]``)
and a recording wrapper around it."""

from __future__ import annotations

import pytest

from continuity.retrieval.embedder import load_embedder
from continuity.retrieval.settings import RetrievalSettings


class Recording:
    """The real embedder, recording every text it is given; ``fail_after``: raise on the
    call after that many calls (a crash in the middle of a pass)."""

    def __init__(self, inner, fail_after: int | None = None) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.texts: list[str] = []
        self.calls = 0
        self.fail_after = fail_after

    def encode(self, texts):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise KeyboardInterrupt("crash in the middle of the pass")
        self.calls += 1
        self.texts.extend(texts)
        return self.inner.encode(texts)


@pytest.fixture(scope="session")
def embedder():
    """The packaged model (``wordllama-l2-supercat/256``)."""
    found = load_embedder(RetrievalSettings())
    assert found is not None, "the semantic extra is part of [test]"
    return found


@pytest.fixture
def recording(embedder):
    return Recording(embedder)
