"""``store.names.resolve_session``'s ambiguous prefix (fresh-user review: a prefix of 40
sessions was said to match 21, the lookup's bound)."""

from __future__ import annotations

from pathlib import Path

import pytest

from continuity.core.errors import AmbiguousSession
from continuity.core.model import Session
from continuity.store import open_store
from continuity.store.names import AMBIGUOUS_SHOWN, resolve_session


@pytest.mark.parametrize(
    ("count", "said"),
    [(3, "matches 3 sessions"), (20, "matches 20 sessions"), (40, "matches more than 20 sessions")],
)
def test_an_ambiguous_prefix_says_the_true_count_or_more_than(
    tmp_path: Path, count: int, said: str
):
    with open_store(f"sqlite:///{tmp_path / 'c.db'}") as store:
        for n in range(count):
            store.upsert_session(Session(key=f"d6e0{n:04d}-x", harness="claude-code"))
        with pytest.raises(AmbiguousSession) as caught:
            resolve_session(store, "d6e0")
    assert said in str(caught.value)
    assert str(caught.value).startswith("'d6e0' ")
    assert len(caught.value.candidates) == min(count, AMBIGUOUS_SHOWN + 1)
