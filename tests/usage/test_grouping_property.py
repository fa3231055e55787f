"""Grouping never loses or invents usage (issue 44 item 1): for any messages and any ``--by``,
the rows' token counts and costs sum to the totals, every message falls in exactly one row, and
a row's cost is None exactly when none of its messages has a price (partial when some lack
one)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings, strategies as st

from continuity.usage.extract import MessageUsage
from continuity.usage.report import GROUPS, TOKEN_FIELDS, group, group_key, totals

_counts = st.integers(min_value=0, max_value=10**9)

messages = st.builds(
    MessageUsage,
    at=st.datetimes(
        min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)
    ),
    harness=st.sampled_from(["claude-code", "codex", "pi", "opencode"]),
    session_key=st.sampled_from(["a", "b", "c/agent-1"]),
    project=st.one_of(st.none(), st.sampled_from(["/p", "/p/q"])),
    model=st.one_of(st.none(), st.sampled_from(["claude-opus-4-6", "gpt-5.5", "gpt-fake"])),
    input_tokens=_counts,
    output_tokens=_counts,
    cache_creation_tokens=_counts,
    cache_read_tokens=_counts,
    reasoning_tokens=_counts,
    cost_usd=st.one_of(st.none(), st.floats(min_value=0, max_value=1000)),
)


@pytest.mark.parametrize("by", GROUPS)
@settings(max_examples=60, deadline=None)
@given(items=st.lists(messages, max_size=40))
def test_grouping_by_any_key_preserves_the_totals(by, items):
    rows = group(items, by)
    whole = totals(items)
    for name in TOKEN_FIELDS:
        assert sum(getattr(r, name) for r in rows) == getattr(whole, name)
    assert sum(r.messages for r in rows) == len(items)
    assert len({r.key for r in rows}) == len(rows)
    for row in rows:
        mine = [m for m in items if group_key(m, by) == row.key]
        none_priced = all(m.cost_usd is None for m in mine)
        assert (row.cost_usd is None) == (none_priced and bool(row.unpriced_models))
        assert row.partial == (bool(row.unpriced_models) and not none_priced)
    priced = [r.cost_usd for r in rows if r.cost_usd is not None]
    if whole.cost_usd is not None:
        assert sum(priced) == pytest.approx(whole.cost_usd)


def test_weeks_are_named_by_their_monday():
    base = MessageUsage(
        datetime(2026, 12, 6, 23, 59, tzinfo=UTC), "pi", "a", None, "m", 1, 0, 0, 0, 0, 0.0
    )
    later = MessageUsage(base.at + timedelta(minutes=2), "pi", "a", None, "m", 2, 0, 0, 0, 0, 0.0)
    assert [(r.key, r.input_tokens) for r in group([base, later], "week")] == [
        ("2026-11-30", 1),
        ("2026-12-07", 2),
    ]
    assert [r.key for r in group([base, later], "month")] == ["2026-12"]
