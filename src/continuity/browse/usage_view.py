"""The browser's usage page as a view model (issue 44 item 2): from the priced responses of a
range (``Workspace.usage_messages``, ``continuity.usage.MessageUsage``) the three charts'
data (total tokens per day stacked by model, per model, per project) and the table of
totals per model, drawn by ``render.usage_page`` with ``browse.charts``.

The time axis has one column per UTC day of the range (days without usage included, at 0),
per week (named by its Monday) when the range is longer than ``MAX_DAYS`` days, per month
when longer than ``MAX_WEEKS`` weeks: the range is ``since`` (or the first response) to
``until`` (or today); a ``since`` more than ``MAX_DAYS`` days before the first response, and
an ``until`` after today, are cut to them (``since=2000-01-01`` draws no 26 years of empty
columns). The charts keep the ``TOP_MODELS``
models and ``TOP_PROJECTS`` projects with the most tokens and sum the rest as ``OTHER``.
The charts draw total tokens, or (``measure="cost"``) the dollars of the priced responses:
a model without a price is then left out of the charts and named on the page, and in the
table its cost is "no price", never 0 (``continuity.usage.report``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from continuity.usage.extract import MessageUsage
from continuity.usage.report import UNKNOWN_MODEL, UsageRow, UsageTotals, breakdown, group, totals

#: The longest range drawn per day, then per week (longer: per month).
MAX_DAYS = 62
MAX_WEEKS = 62
TOP_MODELS = 7
TOP_PROJECTS = 12
OTHER = "other"
#: What the charts draw: total tokens (every response) or dollars (the priced ones).
MEASURES = ("tokens", "cost")
NO_PROJECT = "(no project)"


@dataclass(frozen=True, slots=True)
class UsageView:
    """What the usage page shows: ``period`` (``day``, ``week`` or ``month``: one column
    each), ``measure`` (``tokens`` or ``cost``: what the charts draw), ``columns`` (their
    keys, oldest first, e.g. ``2026-12-01``), ``series`` (model name to its measure per
    column, largest model first, ``OTHER`` last), ``models`` and ``projects`` (``(name,
    measure)``, largest first, ``OTHER`` last; for ``cost`` only the priced responses, so a
    model without a price is not drawn), ``colours`` (every model, most tokens first: the
    order the palette follows), ``rows`` (the table: ``UsageRow`` per model, most tokens
    first, every model), ``totals`` (all responses),
    ``unpriced_models`` (sorted; the total cost leaves them out) and ``responses`` (their
    number)."""

    period: str
    measure: str
    columns: tuple[str, ...]
    series: dict[str, tuple[float, ...]]
    models: tuple[tuple[str, float], ...]
    projects: tuple[tuple[str, float], ...]
    colours: tuple[str, ...]
    rows: tuple[UsageRow, ...]
    totals: UsageTotals
    unpriced_models: tuple[str, ...]
    responses: int


def _period(start: date, end: date) -> str:
    days = (end - start).days + 1
    if days <= MAX_DAYS:
        return "day"
    return "week" if days <= MAX_WEEKS * 7 else "month"


def columns(period: str, start: date, end: date) -> tuple[str, ...]:
    """Every ``period`` key from the one holding ``start`` to the one holding ``end``
    (inclusive), as ``continuity.usage.report.group_key`` names them: ``2026-12-01``, a
    week's Monday, ``2026-12``. Raises ``ValueError`` for another ``period``."""
    out: list[str] = []
    if period == "day":
        day = start
        while day <= end:
            out.append(day.isoformat())
            day += timedelta(days=1)
    elif period == "week":
        day = start - timedelta(days=start.weekday())
        while day <= end:
            out.append(day.isoformat())
            day += timedelta(days=7)
    elif period == "month":
        year, month = start.year, start.month
        while (year, month) <= (end.year, end.month):
            out.append(f"{year:04d}-{month:02d}")
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    else:
        raise ValueError(f"unknown period {period!r}: day, week or month")
    return tuple(out)


def _top(rows: Sequence[tuple[str, float]], keep: int) -> tuple[tuple[str, float], ...]:
    if len(rows) <= keep + 1:
        return tuple(rows)
    return (*rows[:keep], (OTHER, sum(v for _n, v in rows[keep:])))


def usage_view(
    messages: Sequence[MessageUsage],
    *,
    since: datetime | None,
    until: datetime | None,
    now: datetime,
    measure: str = "tokens",
) -> UsageView:
    """The page of ``messages`` (priced, from ``since`` up to ``until``; aware datetimes,
    None: unbounded), ``now`` ending a range without ``until``; the charts draw ``measure``
    (``MEASURES``: total tokens, or the cost in dollars of the priced responses). Raises
    ``ValueError`` for another ``measure``."""
    if measure not in MEASURES:
        raise ValueError(f"measure {measure!r}: one of {', '.join(MEASURES)}")
    if messages:
        first, last = messages[0].at.date(), max(m.at for m in messages).date()
    else:
        first = last = now.date()
    latest = max(now.date(), last)
    start = since.date() if since else first
    if messages and (first - start).days > MAX_DAYS:
        start = first  # a since far before any usage (2000-01-01) starts at the first
    end = min((until - timedelta(microseconds=1)).date(), latest) if until else latest
    end = max(end, start)
    period = _period(start, end)
    keys = columns(period, start, end)
    rows = group(messages, "model")
    # the colours follow the models' token order, whatever the measure (a model keeps its
    # colour when the page switches to cost)
    order = [r.key or UNKNOWN_MODEL for r in rows]
    drawn = messages if measure == "tokens" else [m for m in messages if m.cost_usd is not None]

    def value(row: UsageRow) -> float:
        return row.total_tokens if measure == "tokens" else row.cost_usd or 0.0

    by_model = group(drawn, "model")
    if measure != "tokens":
        by_model = tuple(sorted(by_model, key=lambda r: -(r.cost_usd or 0.0)))
    names = [r.key or UNKNOWN_MODEL for r in by_model]
    kept = names if len(names) <= TOP_MODELS + 1 else names[:TOP_MODELS]
    series: dict[str, list[float]] = {n: [0] * len(keys) for n in kept}
    if len(kept) < len(names):
        series[OTHER] = [0] * len(keys)
    index = {k: i for i, k in enumerate(keys)}
    for key, day_rows in breakdown(drawn, period, "model").items():
        at = index.get(key or "")
        if at is None:  # outside the range asked (cannot happen for a filtered read)
            continue
        for r in day_rows:
            name = r.key or UNKNOWN_MODEL
            series[name if name in series else OTHER][at] += value(r)
    by_project = sorted(group(drawn, "project"), key=lambda r: -value(r))
    return UsageView(
        period=period,
        measure=measure,
        columns=keys,
        series={n: tuple(v) for n, v in series.items()},
        models=_top([(n, value(r)) for n, r in zip(names, by_model, strict=True)], TOP_MODELS),
        projects=_top([(r.key or NO_PROJECT, value(r)) for r in by_project], TOP_PROJECTS),
        colours=tuple(order),
        rows=rows,
        totals=totals(messages),
        unpriced_models=tuple(
            sorted({m.model or UNKNOWN_MODEL for m in messages if m.cost_usd is None})
        ),
        responses=len(messages),
    )


__all__ = ["UsageView", "usage_view", "columns", "OTHER", "NO_PROJECT", "MAX_DAYS", "MEASURES"]
