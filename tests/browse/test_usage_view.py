"""``browse.usage_view`` and ``render.usage_page`` (issue 44 item 2): the usage page's
columns, series and table from priced responses, and its HTML."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from continuity.browse.render import usage_page
from continuity.browse.usage_view import NO_PROJECT, OTHER, columns, usage_view
from continuity.usage.extract import MessageUsage

NOW = datetime(2026, 12, 6, 15, 0, tzinfo=UTC)


def _m(at, model, tokens, *, project="/p/app", cost=0.5, harness="claude-code"):
    return MessageUsage(
        at=at,
        harness=harness,
        session_key="s",
        project=project,
        model=model,
        input_tokens=tokens,
        output_tokens=tokens // 10,
        cache_creation_tokens=0,
        cache_read_tokens=tokens * 2,
        reasoning_tokens=0,
        cost_usd=cost,
    )


def test_columns_per_day_week_month():
    assert columns("day", date(2026, 11, 30), date(2026, 12, 2)) == (
        "2026-11-30",
        "2026-12-01",
        "2026-12-02",
    )
    # weeks by their Monday (2026-11-30 is a Monday)
    assert columns("week", date(2026, 12, 2), date(2026, 12, 14)) == (
        "2026-11-30",
        "2026-12-07",
        "2026-12-14",
    )
    assert columns("month", date(2026, 11, 20), date(2027, 1, 3)) == (
        "2026-11",
        "2026-12",
        "2027-01",
    )


def test_every_day_of_the_range_is_a_column_and_models_stack_in_it():
    since = NOW - timedelta(days=7)
    msgs = [
        _m(datetime(2026, 12, 1, 9, tzinfo=UTC), "opus", 100),
        _m(datetime(2026, 12, 1, 10, tzinfo=UTC), "haiku", 10),
        _m(datetime(2026, 12, 4, 9, tzinfo=UTC), "opus", 300, project=None),
    ]
    v = usage_view(msgs, since=since, until=None, now=NOW)
    assert v.period == "day"
    assert v.columns == tuple(f"2026-11-{d}" for d in (29, 30)) + tuple(
        f"2026-12-0{d}" for d in range(1, 7)
    )
    # total tokens = input + output + cache read: 100 -> 310, 10 -> 31, 300 -> 930
    assert v.series == {
        "opus": (0, 0, 310, 0, 0, 930, 0, 0),
        "haiku": (0, 0, 31, 0, 0, 0, 0, 0),
    }
    assert v.models == (("opus", 1240), ("haiku", 31))
    assert v.projects == ((NO_PROJECT, 930), ("/p/app", 341))
    assert v.totals.total_tokens == 1271 and v.totals.cost_usd == 1.5
    assert [r.key for r in v.rows] == ["opus", "haiku"] and v.responses == 3


def test_a_long_range_is_drawn_per_week_then_per_month():
    msgs = [_m(NOW - timedelta(days=100), "opus", 10), _m(NOW, "opus", 10)]
    assert usage_view(msgs, since=None, until=None, now=NOW).period == "week"
    msgs = [_m(NOW - timedelta(days=500), "opus", 10), _m(NOW, "opus", 10)]
    v = usage_view(msgs, since=None, until=None, now=NOW)
    assert v.period == "month" and v.columns[0] == "2025-07" and v.columns[-1] == "2026-12"
    assert v.series["opus"][0] == 31 and v.series["opus"][-1] == 31


def test_models_past_the_seventh_are_summed_as_other():
    msgs = [_m(NOW, f"model-{i}", 1000 - i) for i in range(10)]
    v = usage_view(msgs, since=None, until=None, now=NOW)
    assert list(v.series) == [f"model-{i}" for i in range(7)] + [OTHER]
    other = sum((1000 - i) + (1000 - i) // 10 + 2 * (1000 - i) for i in (7, 8, 9))
    assert v.series[OTHER] == (other,)
    assert v.models[-1] == (OTHER, other) and len(v.models) == 8
    assert len(v.rows) == 10  # the table names every model


def test_the_page_draws_three_charts_and_names_the_unpriced_model():
    msgs = [
        _m(NOW - timedelta(days=1), "claude-opus-4-6", 1000, cost=1.25),
        _m(NOW, "gpt-oss:20b", 500, cost=None, harness="codex"),
    ]
    v = usage_view(msgs, since=NOW - timedelta(days=7), until=None, now=NOW)
    html = usage_page(v, since="7d", harness=None, project=None, prices="LiteLLM (2026-12-01)")
    assert html.count("<svg") == 3 and "<script" not in html
    assert "Tokens per day (UTC), by model" in html
    # the unpriced model: "no price" in its row, the total partial, never $0.00
    assert "no price for <code>gpt-oss:20b</code>" in html
    assert "$1.25*" in html and "$0.00" not in html
    assert 'title="no price for this model">no price<' in html
    assert "continuity usage --since 7d --by model" in html


def test_an_empty_range_and_an_error():
    v = usage_view([], since=NOW - timedelta(days=7), until=None, now=NOW)
    html = usage_page(v, since="7d")
    assert "<svg" not in html and html.count("No usage in this range.") == 3
    assert '<table class="usage"' not in html
    html = usage_page(None, since="yesterday", error="since 'yesterday': give a date")
    assert "since &#39;yesterday&#39;: give a date" in html and "<svg" not in html
    assert 'value="yesterday"' in html  # the form keeps what was typed


def test_a_range_far_wider_than_the_usage_is_cut_to_it():
    """since=2000-01-01 with usage only this week: columns from the first response (per day),
    not 26 years of empty months; an until in the future ends today."""
    msgs = [_m(NOW - timedelta(days=2), "opus", 10), _m(NOW, "opus", 10)]
    v = usage_view(
        msgs,
        since=datetime(2000, 1, 1, tzinfo=UTC),
        until=datetime(2100, 1, 1, tzinfo=UTC),
        now=NOW,
    )
    assert v.period == "day" and v.columns == ("2026-12-04", "2026-12-05", "2026-12-06")
    assert v.series["opus"] == (31, 0, 31)
    # within MAX_DAYS of the first response, since still opens the range (empty days shown)
    v = usage_view(msgs, since=NOW - timedelta(days=30), until=None, now=NOW)
    assert len(v.columns) == 31 and v.columns[0] == "2026-11-06"


def test_the_cost_measure_draws_dollars_of_the_priced_responses_only():
    msgs = [
        _m(NOW - timedelta(days=1), "opus", 1000, cost=1.25),
        _m(NOW, "opus", 10, cost=0.5, project="/p/api"),
        _m(NOW, "haiku", 100, cost=2.0),
        _m(NOW, "gpt-oss:20b", 5000, cost=None, harness="codex"),
    ]
    v = usage_view(msgs, since=NOW - timedelta(days=2), until=None, now=NOW, measure="cost")
    assert v.measure == "cost"
    assert v.series == {"haiku": (0, 0, 2.0), "opus": (0, 1.25, 0.5)}  # by cost, no gpt-oss
    assert v.models == (("haiku", 2.0), ("opus", 1.75))
    assert v.projects == (("/p/app", 3.25), ("/p/api", 0.5))
    # colours follow the token order of every model; the table keeps every model
    assert v.colours == ("gpt-oss:20b", "opus", "haiku")
    assert [r.key for r in v.rows] == ["gpt-oss:20b", "opus", "haiku"]
    html = usage_page(v, since="2d", prices="x")
    assert "Cost (USD) per day (UTC), by model" in html and 'data-value="1.25"' in html
    assert "(without <code>gpt-oss:20b</code>: no price)" in html
    assert '<a href="/usage?since=2d">tokens</a> · <strong>cost</strong>' in html
    assert '<input type="hidden" name="measure" value="cost">' in html
    tokens = usage_view(msgs, since=NOW - timedelta(days=2), until=None, now=NOW)
    assert '<strong>tokens</strong> · <a href="/usage?since=2d&amp;measure=cost">cost</a>' in (
        usage_page(tokens, since="2d")
    )
    # the same colour for opus in both: second in the palette
    from continuity.browse.charts import PALETTE

    assert f'fill="{PALETTE[1]}" data-series="opus"' in html
    assert f'fill="{PALETTE[1]}" data-series="opus"' in usage_page(tokens, since="2d")
