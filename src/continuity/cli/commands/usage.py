"""`continuity usage`: tokens and cost of every stored session's model responses, by day,
week, month, session, project, model or harness (issue 44 item 1; ``continuity.usage``)."""

from __future__ import annotations

import csv
import enum
import math
import sys
from pathlib import Path
from typing import Any

import typer

from continuity.cli.commands.common import (
    HomeOption,
    JsonOption,
    SessionHarness,
    bad_option,
    emit_json,
    err,
    open_workspace,
    out,
    parse_option_time,
)


class GroupBy(str, enum.Enum):
    """``--by``: what a row of ``continuity usage`` sums."""

    day = "day"
    week = "week"
    month = "month"
    session = "session"
    project = "project"
    model = "model"
    harness = "harness"


#: The column heading of a row's key, per ``--by`` (``{tz}``: the report's time zone).
KEY_HEADINGS = {
    "day": "day ({tz})",
    "week": "week of ({tz})",
    "month": "month ({tz})",
    "session": "session",
    "project": "project",
    "model": "model",
    "harness": "harness",
}
#: The width of the table when stdout is not a terminal (Rich would assume 80 and cut).
PIPED_WIDTH = 200
#: ``--csv``'s columns: a row's ``--json`` keys (lists joined with ``;``) and ``partial``
#: (``true`` when ``cost_usd`` leaves out an unpriced model's usage).
CSV_COLUMNS = (
    "by",
    "key",
    "messages",
    "input_tokens",
    "output_tokens",
    "cache_creation_tokens",
    "cache_read_tokens",
    "reasoning_tokens",
    "total_tokens",
    "cost_usd",
    "partial",
    "models",
    "unpriced_models",
)


def register(app: typer.Typer) -> None:
    """Add ``usage`` to ``app``."""
    app.command("usage")(usage_cmd)


def usage_cmd(
    by: GroupBy = typer.Option(GroupBy.day, "--by", help="What each row sums."),
    since: str | None = typer.Option(
        None,
        "--since",
        metavar="WHEN",
        show_default=False,
        help="Only responses since WHEN: a date or time (2026-12-01, 2026-12-01T09:30, UTC "
        "unless it says) or an age (90min, 12h, 7d, 2w).",
    ),
    until: str | None = typer.Option(
        None,
        "--until",
        metavar="WHEN",
        show_default=False,
        help="Only responses before WHEN (same forms as --since).",
    ),
    harness: SessionHarness | None = typer.Option(
        None, "--harness", show_default=False, help="Only sessions of this harness."
    ),
    project: Path | None = typer.Option(
        None,
        "--project",
        metavar="DIR",
        show_default=False,
        help="Only sessions whose project folder is DIR or a folder inside it.",
    ),
    offline: bool = typer.Option(
        False, "--offline", help="Price with the table shipped with continuity only."
    ),
    refresh_prices: bool = typer.Option(
        False,
        "--refresh-prices",
        help="Fetch LiteLLM's model prices first and keep them in the workspace "
        "(used from then on instead of the shipped table).",
    ),
    timezone: str | None = typer.Option(
        None,
        "--timezone",
        metavar="TZ",
        show_default=False,
        help="The time zone of the days, weeks and months: an IANA name (Europe/Berlin) or "
        "UTC. Default: the machine's zone ($TZ, else /etc/localtime), as ccusage.",
    ),
    as_csv: bool = typer.Option(False, "--csv", help="Print the rows as CSV on stdout."),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Tokens and cost of the model responses in the imported sessions (Claude Code, Codex,
    pi, OpenCode), a row per day (or --by week, month, session, project, model, harness),
    with the totals. Days are those of the machine's time zone, as ccusage's (--timezone
    picks another; the heading names it). Input counts exclude the prompt cache (cache write and cache read are
    their own columns); output includes reasoning. Claude Code repeats a message's usage on
    each of its streamed lines: it counts once, as ccusage counts it.

    Costs come from LiteLLM's model prices (shipped with continuity; --refresh-prices fetches
    the current ones). A model without a price is named, never costed at 0: a cost that
    leaves it out is marked "*" (partial), one with no priced model at all is "—". --json
    prints {"totals": {...}, "rows": [...], "unpriced_models": [...]}."""
    if as_json and as_csv:
        raise bad_option("--csv", "give --json or --csv, not both")
    if offline and refresh_prices:
        raise bad_option("--offline", "--offline uses the shipped prices: drop --refresh-prices")
    if timezone is not None:
        from continuity.usage.report import zone

        try:
            zone(timezone)
        except ValueError as exc:
            raise bad_option("--timezone", str(exc)) from None
    after = parse_option_time(since, "--since") if since is not None else None
    before = parse_option_time(until, "--until") if until is not None else None
    if after is not None and before is not None and after >= before:
        raise bad_option(
            "--since",
            f"--since {since} ({after.isoformat()}) is not before --until {until} "
            f"({before.isoformat()}): the range is empty",
        )
    with open_workspace(home, read_only=not refresh_prices) as ws:
        if refresh_prices:
            table = ws.refresh_prices()
            err.print(
                f"prices: {len(table.models)} models from {table.source} ({table.fetched})",
                markup=False,
                highlight=False,
            )
        report = ws.usage(
            by=by.value,
            since=after,
            until=before,
            harness=harness.value if harness else None,
            project=project,
            offline=offline,
            timezone=timezone,
        )
        nothing = None
        if not report.rows:
            filters = [f"harness {harness.value}"] if harness else []
            filters += [f"project {project}"] if project is not None else []
            if not filters and since is None and until is None:
                nothing = (
                    "no usage recorded: the imported sessions' harnesses record none"
                    if ws.sessions(limit=1, titles=False)
                    else "nothing imported yet: continuity import ~/.claude/projects "
                    "~/.codex/sessions ~/.pi/agent/sessions (or run continuity watch)"
                )
            elif harness is not None and (why := _no_tokens(harness.value)) is not None:
                nothing = f"no usage for harness {harness.value}: {why}"
            else:
                bounds = [f"since {since}"] if since is not None else []
                bounds += [f"until {until}"] if until is not None else []
                nothing = (
                    "no usage"
                    + (" for " + ", ".join(filters) if filters else "")
                    + (f" in that range ({', '.join(bounds)})" if bounds else "")
                )
    if as_json:
        emit_json(report.to_dict())
    elif as_csv:
        _csv(report)
    else:
        _table(report)
    if nothing is not None:
        err.print(nothing, markup=False, highlight=False)
    for note in report.notes:
        err.print(f"note: {note}", markup=False, highlight=False)


def _csv(report: Any) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in report.rows:
        data = {**row.to_dict(), "partial": "true" if row.partial else "false"}
        writer.writerow(
            [
                ";".join(data[c])
                if isinstance(data[c], list)
                else ("" if data[c] is None else data[c])
                for c in CSV_COLUMNS
            ]
        )


def _cost(value: float | None, *, partial: bool = False) -> str:
    """Dollars for the table: cents, or under a cent two significant digits (``$0.0012``,
    at most 6 decimals, ``<$0.000001`` below) so a small cost never reads ``$0.00``; ``—``
    for None."""
    if value is None:
        return "—"
    mark = "*" if partial else ""
    if 0 < value < 0.000001:
        return f"<$0.000001{mark}"
    if 0 < value < 0.01:
        decimals = min(6, 1 - math.floor(math.log10(value)))
        return f"${value:.{decimals}f}{mark}"
    return f"${value:,.2f}{mark}"


def _table(report: Any) -> None:
    """The rows as a Rich table with a totals footer; the reasoning column only when some
    response reports reasoning; a partial total cost marked ``*`` and explained below. In a
    terminal session keys are cut to unique prefixes; piped, the table is ``PIPED_WIDTH``
    columns wide so no figure is cut."""
    from rich.table import Table
    from rich.text import Text

    from continuity.core.text import one_line

    if not report.rows:
        return  # usage_cmd says why
    totals = report.totals
    numbers = [
        ("input", "input_tokens"),
        ("output", "output_tokens"),
        ("cache write", "cache_creation_tokens"),
        ("cache read", "cache_read_tokens"),
        ("reasoning", "reasoning_tokens"),
        ("total", "total_tokens"),
    ]
    if not totals.reasoning_tokens:
        numbers.remove(("reasoning", "reasoning_tokens"))
    table = Table(box=None, pad_edge=False, show_footer=True)
    table.add_column(
        KEY_HEADINGS[report.by].format(tz=report.timezone),
        footer="Total",
        overflow="fold",
        no_wrap=report.by in ("day", "week", "month"),
        min_width=10,
    )
    if report.by != "model":
        table.add_column("models", overflow="fold", min_width=8, ratio=1)
    for name, attr in numbers:
        table.add_column(name, footer=f"{getattr(totals, attr):,}", justify="right", no_wrap=True)
    table.add_column(
        "cost",
        footer=_cost(totals.cost_usd, partial=report.partial),
        justify="right",
        no_wrap=True,
    )
    keys = {r.key: r.key for r in report.rows if r.key is not None}
    if report.by == "session" and out.is_terminal:
        from continuity.cli.render import short_keys

        keys = short_keys(list(keys))
    for row in report.rows:
        cells: list[Any] = [Text(one_line(keys[row.key] if row.key is not None else "(unknown)"))]
        if report.by != "model":
            cells.append(Text(one_line(", ".join(row.models))))
        cells += [f"{getattr(row, attr):,}" for _name, attr in numbers]
        cells.append(_cost(row.cost_usd, partial=row.partial))
        table.add_row(*cells)
    # piped: every figure whole, whatever the width (a terminal's table fits its width)
    if out.is_terminal:
        out.print(table, soft_wrap=False)
    else:
        from continuity.cli.commands.common import SafeConsole

        wide = SafeConsole(file=out.file, width=PIPED_WIDTH, color_system=None, highlight=False)
        wide.print(table, soft_wrap=False)
    if report.partial:
        out.print(
            Text(
                "* partial: no price for " + one_line(", ".join(report.unpriced_models)),
                style="yellow",
            )
        )
    out.print(Text(f"prices: {one_line(report.prices)}", style="dim"))


def _no_tokens(name: str) -> str | None:
    """Why ``continuity usage`` counts no tokens of harness ``name`` (the registry's
    ``usage_note`` of a harness whose ``usage`` is false), else None: one it counts, or a name
    the registry lacks (a framework)."""
    from continuity.formats.registry import harnesses

    h = next((h for h in harnesses() if h.name == name), None)
    if h is None or h.usage:
        return None
    return h.usage_note or "continuity does not count its tokens"
