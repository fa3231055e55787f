"""Token usage and cost grouped for ``continuity usage`` and the browser's usage page (issue 44
item 1).

``collect(store, ...)`` reads the usage of the stored sessions (their files' raw lines, kept by
the importer: ``Store.raw_lines``) through ``extract.UsageReader``; ``price(messages, table)``
gives each message its cost from a ``prices.PriceTable``; ``group(messages, by)`` sums them
into ``UsageRow``s by day, week, month, session, project, model or harness;
``breakdown(messages, first, second)`` does it twice (per day, per model within each day:
the charts' series); ``usage_report`` is the whole command (``UsageReport``, whose
``to_dict()`` is ``--json``: ``{"totals": {...}, "rows": [...]}``).

Days, weeks and months are those of a time zone (``tz``: a ``ZoneInfo``; None is UTC; the
CLI and ``Workspace.usage`` default to the machine's zone, ``local_zone``, as ccusage does;
fresh-user review of issue 44, item 4); a week is named by its Monday (ISO 8601). A message whose
model has no price has ``cost_usd`` None; a row's ``cost_usd`` (like the totals') is the sum
of its priced messages, None only when none of them is priced; a row holding an unpriced
model names it in ``unpriced_models`` and is ``partial`` (its cost leaves that model out),
and ``UsageReport.unpriced_models`` says the totals are partial. So the rows' costs add up to
the total's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from continuity.usage.extract import USAGE_HARNESSES, MessageUsage, UsageReader

if TYPE_CHECKING:
    from continuity.store.base import SourceState
    from continuity.store.sql import SqlStore
    from continuity.usage.prices import PriceTable

GroupBy = Literal["day", "week", "month", "session", "project", "model", "harness"]
#: The ``--by`` keys, the default first.
GROUPS: tuple[GroupBy, ...] = ("day", "week", "month", "session", "project", "model", "harness")
#: The token fields, in the order the JSON and the table give them.
TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_tokens",
    "cache_read_tokens",
    "reasoning_tokens",
)


#: Decimals of a cost in ``--json`` (a millionth of a dollar: below any per-token price
#: that matters in a sum, and no ``0.0072000000000000015``).
COST_DECIMALS = 6


def _dollars(value: float | None) -> float | None:
    return None if value is None else round(value, COST_DECIMALS)


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """Summed tokens (integers) and dollars of a set of messages. ``cost_usd``: the sum of
    the priced messages' costs, None when none is priced (and some message has tokens)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_tokens: int = 0
    cache_read_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = 0.0

    @property
    def total_tokens(self) -> int:
        """Input, output and both cache counts (reasoning is inside output)."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_creation_tokens
            + self.cache_read_tokens
        )

    def to_dict(self) -> dict[str, Any]:
        """``--json``'s ``totals``: the five token counts and ``cost_usd`` (rounded to
        ``COST_DECIMALS``)."""
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cost_usd": _dollars(self.cost_usd),
        }


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One group: ``by`` (the grouping), ``key`` (the day ``2026-12-02``, the week's Monday,
    the month ``2026-12``, the session key, project folder, model or harness; None for a
    project or model that is unknown), ``messages`` (model responses counted), the token
    counts, ``cost_usd`` (the sum of the priced messages' costs; None when no message of the
    row is priced), ``models`` (sorted, known ones) and ``unpriced_models`` (those of them
    without a price; ``"(unknown)"`` for usage recorded without a model name): when some are
    named, ``partial`` is true and ``cost_usd`` covers the priced part only."""

    by: str
    key: str | None
    messages: int
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_read_tokens: int
    reasoning_tokens: int
    cost_usd: float | None
    models: tuple[str, ...] = ()
    unpriced_models: tuple[str, ...] = ()

    @property
    def totals(self) -> UsageTotals:
        """The row's counts as ``UsageTotals``."""
        return UsageTotals(
            self.input_tokens,
            self.output_tokens,
            self.cache_creation_tokens,
            self.cache_read_tokens,
            self.reasoning_tokens,
            self.cost_usd,
        )

    @property
    def total_tokens(self) -> int:
        """Input, output and both cache counts."""
        return self.totals.total_tokens

    @property
    def partial(self) -> bool:
        """True when ``cost_usd`` is a sum that leaves out an unpriced model's usage."""
        return bool(self.unpriced_models) and self.cost_usd is not None

    def to_dict(self) -> dict[str, Any]:
        """One of ``--json``'s ``rows`` (``cost_usd`` rounded to ``COST_DECIMALS``)."""
        return {
            "by": self.by,
            "key": self.key,
            "messages": self.messages,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": _dollars(self.cost_usd),
            "models": list(self.models),
            "unpriced_models": list(self.unpriced_models),
        }


@dataclass(frozen=True, slots=True)
class UsageReport:
    """``continuity usage``'s answer: ``totals`` over every message counted, ``rows`` by
    ``by``; ``unpriced_models`` (sorted) have no price, so ``totals.cost_usd`` is partial when
    any is named; ``prices`` names the price table used (source and date); ``timezone`` the
    zone of the days, weeks and months (``UTC``, ``Europe/Berlin``)."""

    by: str
    totals: UsageTotals
    rows: tuple[UsageRow, ...]
    unpriced_models: tuple[str, ...] = ()
    prices: str = ""
    notes: tuple[str, ...] = field(default=())
    timezone: str = "UTC"

    @property
    def partial(self) -> bool:
        """True when some usage has no price (the cost totals leave it out)."""
        return bool(self.unpriced_models)

    def to_dict(self) -> dict[str, Any]:
        """``--json``: ``{"totals": {...}, "rows": [...], "unpriced_models": [...]}``
        (issue 44's ``totals`` keys kept; ``unpriced_models`` non-empty means
        ``totals.cost_usd`` covers the priced part only)."""
        return {
            "totals": self.totals.to_dict(),
            "rows": [r.to_dict() for r in self.rows],
            "unpriced_models": list(self.unpriced_models),
        }


UNKNOWN_MODEL = "(unknown)"


def collect(
    store: SqlStore,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    harness: str | None = None,
    project: str | None = None,
) -> list[MessageUsage]:
    """The usage of every stored session of ``harness`` (None: all that record usage) whose
    project is the folder ``project`` or inside it (None: any), with ``since <= at < until``
    (aware datetimes; None: unbounded), oldest first. Reads each session file's kept raw
    lines once; files are read in the order of their sessions' start (ccusage's order, which
    decides which copy of a repeated message counts)."""
    sessions = {
        s.key: s
        for s in store.list_sessions(harness=harness, project=project, since=since)
        if s.harness in USAGE_HARNESSES
    }
    sources = [s for s in store.sources() if s.session_key in sessions]

    def order(source: SourceState) -> tuple[bool, float, str]:
        started = sessions[source.session_key].started_at
        return (started is None, started.timestamp() if started else 0.0, source.path)

    sources.sort(key=order)
    reader = UsageReader()
    out: list[MessageUsage] = []
    for source in sources:
        session = sessions[source.session_key]
        lines = (line.data for line in store.raw_lines(source.path))
        for usage in reader.read(session.harness, session.key, session.project, lines):
            if (since is None or usage.at >= since) and (until is None or usage.at < until):
                out.append(usage)
    out.sort(key=lambda u: u.at)
    return out


def price(messages: Iterable[MessageUsage], table: PriceTable) -> list[MessageUsage]:
    """``messages`` with ``cost_usd`` set from ``table`` (a cost the harness recorded stays);
    None for a message whose model has no price."""
    out = []
    for m in messages:
        if m.cost_usd is not None:
            out.append(m)
            continue
        cost = table.cost(
            m.model,
            input_tokens=m.input_tokens,
            output_tokens=m.output_tokens,
            cache_creation_tokens=m.cache_creation_tokens,
            cache_read_tokens=m.cache_read_tokens,
        )
        out.append(replace(m, cost_usd=cost))
    return out


def local_zone() -> str:
    """The machine's IANA time zone name, as ccusage takes it by default: ``$TZ`` (without a
    leading ``:``), else the zone ``/etc/localtime`` links to, else ``/etc/timezone``, else
    ``UTC``. Not checked here (``zone`` does)."""
    named = os.environ.get("TZ", "").lstrip(":")
    if named:
        return named
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        target = ""
    if "/zoneinfo/" in target:
        return target.split("/zoneinfo/", 1)[1]
    try:
        text = Path("/etc/timezone").read_text("utf-8").strip()
    except OSError:
        text = ""
    return text or "UTC"


def zone(name: str | None) -> tzinfo:
    """``name`` (an IANA zone such as ``Europe/Berlin``, or ``UTC``; None: ``local_zone()``)
    as a ``ZoneInfo``. Raises ``ValueError`` naming it when the zone database has no such
    zone."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = local_zone() if name is None else name
    if name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"{name!r} is not an IANA time zone (Europe/Berlin, America/Los_Angeles, UTC)"
        ) from None


def group_key(message: MessageUsage, by: str, tz: tzinfo | None = None) -> str | None:
    """The group ``message`` falls in for ``by`` (module docstring), days, weeks and months
    in ``tz`` (None: UTC). Raises ``ValueError`` for a ``by`` not in ``GROUPS``."""
    if by in ("day", "week", "month"):
        at = message.at.astimezone(tz or UTC)
        day = at.date()
        if by == "day":
            return day.isoformat()
        if by == "week":
            return (day - timedelta(days=day.weekday())).isoformat()
        return at.strftime("%Y-%m")
    if by == "session":
        return message.session_key
    if by == "project":
        return message.project
    if by == "model":
        return message.model
    if by == "harness":
        return message.harness
    raise ValueError(f"unknown grouping {by!r}: one of {', '.join(GROUPS)}")


def totals(messages: Iterable[MessageUsage]) -> UsageTotals:
    """The sums over ``messages`` (priced by ``price``): ``cost_usd`` the priced part, None
    when no message with tokens is priced (0.0 for no messages)."""
    counts = dict.fromkeys(TOKEN_FIELDS, 0)
    cost, priced, unpriced = 0.0, False, False
    for m in messages:
        for name in TOKEN_FIELDS:
            counts[name] += getattr(m, name)
        if m.cost_usd is None:
            unpriced = True
        else:
            cost += m.cost_usd
            priced = True
    return UsageTotals(**counts, cost_usd=cost if priced or not unpriced else None)


def group(
    messages: Sequence[MessageUsage], by: str, tz: tzinfo | None = None
) -> tuple[UsageRow, ...]:
    """``messages`` (priced by ``price``) summed per ``group_key(m, by)``: times in time
    order, other groupings by total tokens, largest first. A row's ``cost_usd`` is its priced
    messages' sum (partial when some are unpriced), None when none is priced. Raises
    ``ValueError`` for an unknown ``by``."""
    buckets: dict[str | None, list[MessageUsage]] = {}
    for m in messages:
        buckets.setdefault(group_key(m, by, tz), []).append(m)
    rows = []
    for key, items in buckets.items():
        sums = totals(items)
        unpriced = sorted({m.model or UNKNOWN_MODEL for m in items if m.cost_usd is None})
        rows.append(
            UsageRow(
                by=by,
                key=key,
                messages=len(items),
                input_tokens=sums.input_tokens,
                output_tokens=sums.output_tokens,
                cache_creation_tokens=sums.cache_creation_tokens,
                cache_read_tokens=sums.cache_read_tokens,
                reasoning_tokens=sums.reasoning_tokens,
                cost_usd=sums.cost_usd,
                models=tuple(sorted({m.model for m in items if m.model})),
                unpriced_models=tuple(unpriced),
            )
        )
    if by in ("day", "week", "month"):
        rows.sort(key=lambda r: r.key or "")
    else:
        rows.sort(key=lambda r: (-r.total_tokens, r.key or ""))
    return tuple(rows)


def breakdown(
    messages: Sequence[MessageUsage],
    first: str = "day",
    second: str = "model",
    tz: tzinfo | None = None,
) -> dict[str | None, tuple[UsageRow, ...]]:
    """``messages`` grouped by ``first``, each group by ``second``: ``{first key: rows}`` in
    ``first``'s order (per day, per model within it, by default: a stacked chart's series)."""
    outer: dict[str | None, list[MessageUsage]] = {}
    for row in group(messages, first, tz):
        outer[row.key] = []
    for m in messages:
        outer[group_key(m, first, tz)].append(m)
    return {key: group(items, second, tz) for key, items in outer.items()}


def summarize(
    messages: Sequence[MessageUsage], by: str, table: PriceTable, tz: tzinfo | None = None
) -> UsageReport:
    """The report of ``messages`` already priced from ``table`` (``price``): rows by ``by``,
    the totals, the models without a price (and a note for each), the table's source. The
    browser's usage page reads the messages once and calls this (or ``group``/``breakdown``)
    per chart. Raises ``ValueError`` for an unknown ``by``."""
    if by not in GROUPS:
        raise ValueError(f"unknown grouping {by!r}: one of {', '.join(GROUPS)}")
    unpriced = tuple(sorted({m.model or UNKNOWN_MODEL for m in messages if m.cost_usd is None}))
    notes = tuple(
        f"no price for model {name}: its usage is counted, its cost left out (not 0)"
        for name in unpriced
    )
    return UsageReport(
        by=by,
        totals=totals(messages),
        rows=group(messages, by, tz),
        timezone=str(tz or UTC),
        unpriced_models=unpriced,
        prices=f"{table.source} ({table.fetched})" if table.fetched else table.source,
        notes=notes,
    )


def usage_report(
    store: SqlStore,
    table: PriceTable,
    *,
    by: str = "day",
    since: datetime | None = None,
    until: datetime | None = None,
    harness: str | None = None,
    project: str | None = None,
    tz: tzinfo | None = None,
) -> UsageReport:
    """``continuity usage``: ``collect``, ``price``, then ``summarize`` by ``by`` (days in
    ``tz``, None: UTC). Raises ``ValueError`` for an unknown ``by``."""
    if by not in GROUPS:
        raise ValueError(f"unknown grouping {by!r}: one of {', '.join(GROUPS)}")
    messages = price(
        collect(store, since=since, until=until, harness=harness, project=project), table
    )
    return summarize(messages, by, table, tz)
