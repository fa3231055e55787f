"""``core.model.pickled_by_fields`` (issue 43 goal 1): the rows' blocks, source references and
raw lines a parallel import's workers hand to its writer unpickle through their own
``__init__``, without ``dataclasses.fields()`` per object, and come back equal."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from hypothesis import given, strategies as st

from continuity.core.model import (
    CompactionInfo,
    MediaBlock,
    SourceRef,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.store.records import ImportIssue, RawLine

MEDIA = MediaBlock("image/png", 48213, "ab" * 32)
SAMPLES = [
    TextBlock("hello"),
    ThinkingBlock("first, the tests"),
    MEDIA,
    ToolCallBlock("call_1", "Bash", {"command": "ls", "n": [1, 2]}),
    ToolCallBlock("call_2", "apply_patch", "*** Begin Patch"),
    ToolResultBlock("call_1", True, "exit 1", (MEDIA,), synthetic=True),
    SourceRef("/p/s.jsonl", 3, 120, "cd" * 32),
    CompactionInfo("the summary", covers_through_seq=7, continuation=True, run_id="r1"),
    RawLine("/p/s.jsonl", 3, 120, "cd" * 32, b'{"type":"user"}\n'),
    ImportIssue("/p/s.jsonl", 4, 200, 17, "not JSON", "ef" * 32),
]


def _no_fields(*_args: object) -> None:
    raise AssertionError("dataclasses.fields() called while unpickling")


@pytest.mark.parametrize("value", SAMPLES, ids=lambda v: type(v).__name__)
def test_round_trip_equal_without_fields(value: object, monkeypatch: pytest.MonkeyPatch):
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    monkeypatch.setattr(dataclasses, "fields", _no_fields)
    back = pickle.loads(data)
    assert back == value and type(back) is type(value)
    assert copy.deepcopy(value) == value
    assert getattr(back, "type", None) == getattr(value, "type", None)  # init=False kept


@given(
    st.lists(
        st.one_of(
            st.builds(TextBlock, st.text()),
            st.builds(
                ToolCallBlock, st.text(), st.text(), st.dictionaries(st.text(), st.integers())
            ),
            st.builds(
                ToolResultBlock,
                st.text(),
                st.booleans(),
                st.text(),
                st.tuples(st.builds(MediaBlock, st.text(), st.integers(0), st.text())),
                st.booleans(),
            ),
        ),
        max_size=20,
    )
)
def test_blocks_round_trip_in_a_batch(blocks: list[object]):
    """A batch's blocks, shared references and all, come back equal in order."""
    shared = tuple(blocks)
    batch = (shared, shared)
    back = pickle.loads(pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == batch
    assert back[0] is back[1]  # the shared tuple stays one object, as pickle memoises it
