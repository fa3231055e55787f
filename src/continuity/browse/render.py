"""HTML and Markdown of the browse view models (issue 19): one Jinja2 environment over
``templates/``, autoescaping every value (transcripts hold arbitrary HTML), used by the
browser (``daemon.browser``) and ``continuity export`` alike, so an exported page looks as the
browser shows it.

Pages are readable without JavaScript (there is none): long texts fold with ``<details>``,
paging and filters are links and GET forms. ``CSP`` is the Content-Security-Policy the browser
serves them with (no script at all, inline styles only).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from continuity.browse.search import SearchHit
from continuity.browse.view import BlockView, SessionView, clean_text
from continuity.core.model import Session
from continuity.core.text import CONTROL_ESCAPES

if TYPE_CHECKING:
    from continuity.browse.usage_view import UsageView

#: Served with every page: nothing may run, nothing is fetched from elsewhere.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


@lru_cache(maxsize=1)
def environment() -> Environment:
    """The template environment (autoescape on for every template, undefined names fail)."""
    from jinja2 import StrictUndefined

    env = Environment(
        loader=PackageLoader("continuity.browse", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown,
    )
    env.filters["markdown"] = markdown_html
    return env


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    # CommonMark with tables and strikethrough, raw HTML off (shown as text), no images (a
    # page fetches nothing: CSP), links only of the schemes markdown-it validates
    return (
        MarkdownIt("commonmark", {"html": False})
        .enable(["table", "strikethrough"])
        .disable("image")
    )


def markdown_html(text: str) -> Markup:
    """``text`` (an assistant's message, already redacted, its controls as escapes) rendered
    as Markdown to HTML (issue 44): raw HTML in it is escaped, never passed through
    (markdown-it-py, ``html=False``), images stay text, a ``javascript:`` or ``data:`` link
    stays text (markdown-it's ``validateLink``)."""
    return Markup(_markdown().render(text))


def _shown(value: object) -> object:
    """Every plain string a template prints, with control and bidi characters as visible
    escapes (``core.text.CONTROL_ESCAPES``; issue 45 item 6: a title holding U+202E would
    reverse the page's heading); our own markup (``Markup``) and other values as they are."""
    return value.translate(CONTROL_ESCAPES) if type(value) is str else value


def segments(hit: SearchHit) -> list[tuple[str, bool]]:
    """The snippet of ``hit`` cut at its spans: ``[(text, is_match), ...]`` in order."""
    out: list[tuple[str, bool]] = []
    at = 0
    for start, end in sorted(hit.spans):
        if start < at:
            continue
        if start > at:
            out.append((hit.snippet[at:start], False))
        out.append((hit.snippet[start:end], True))
        at = end
    if at < len(hit.snippet):
        out.append((hit.snippet[at:], False))
    return out


def _when(s: Session) -> str:
    value: datetime | None = s.ended_at or s.started_at
    return value.strftime("%Y-%m-%d %H:%M") if value else ""


def sessions_page(
    sessions: Sequence[Session], *, page: int, more: bool, harness: str | None, project: str | None
) -> str:
    """The sessions list page with its filter form and pager links: the sessions (newest
    first, their titles as ``view.list_view`` gives them) grouped by project folder (issue 44),
    each row its title linked to the session, its key beside it."""
    from continuity.browse.view import by_project

    def page_link(n: int) -> str:
        q = {k: v for k, v in (("harness", harness), ("project", project)) if v}
        return "/?" + urlencode({**q, "page": n})

    return (
        environment()
        .get_template("sessions.html")
        .render(
            sessions=sessions,
            groups=by_project(sessions),
            page=page,
            more=more,
            harness=harness,
            project=project,
            when=_when,
            page_link=page_link,
            standalone=False,
        )
    )


def search_page(
    hits: Sequence[SearchHit], *, query: str | None, error: str | None = None, **filters: Any
) -> str:
    """The search page: the form (``filters``: harness, project, role, tool, since as typed)
    and the hits with their matching words marked (``<mark>``)."""
    values = {k: filters.get(k) for k in ("harness", "project", "role", "tool", "since")}
    return (
        environment()
        .get_template("search.html")
        .render(hits=hits, query=query, error=error, segments=segments, standalone=False, **values)
    )


def session_page(view: SessionView, *, standalone: bool = False) -> str:
    """The session page; ``standalone`` (``export --format html``): no navigation or pager,
    one file that opens anywhere (its CSS is inline)."""
    return environment().get_template("session.html").render(v=view, standalone=standalone)


def message_page(title: str, text: str, *, standalone: bool = False) -> str:
    """A page saying one thing (a session that does not exist, a sign-in hint)."""
    return (
        environment()
        .get_template("message.html")
        .render(title=title, text=text, standalone=standalone)
    )


def choices_page(name: str, candidates: Sequence[str]) -> str:
    """The page of a key prefix naming several sessions (issue 44): each candidate key (at
    most 21, as ``store.names.resolve_session`` finds them) linked to its session."""
    return (
        environment()
        .get_template("choices.html")
        .render(name=name, candidates=candidates, standalone=False)
    )


def _dollars(value: float) -> str:
    return f"${value:,.2f}"


def _axis_dollars(value: float) -> str:
    """Dollars on an axis or a bar: ``$0``, ``$2.50``, ``$1.2k``."""
    from continuity.browse.charts import compact

    if value >= 1000:
        return "$" + compact(value)
    return "$0" if value == 0 else f"${value:,.2f}"


def usage_page(
    view: UsageView | None,
    *,
    since: str | None,
    until: str | None = None,
    harness: str | None = None,
    project: str | None = None,
    prices: str = "",
    error: str | None = None,
) -> str:
    """The usage page (issue 44 item 2): the filter form (the values as typed), then for
    ``view`` (``usage_view.usage_view``; None with an ``error``) a line of totals, a switch
    between tokens and cost (links keeping the filters), three SVG charts (``charts``: the
    measure per day stacked by model, per model, per project) and the table per model with
    its costs (a model without a price says so, its cost is never 0), ``prices`` naming the
    price table. No script, as every page."""
    from continuity.browse import charts
    from continuity.usage.extract import USAGE_HARNESSES

    figures: dict[str, Markup] = {}
    command = "continuity usage"
    filters = {
        k: v
        for k, v in (("since", since), ("until", until), ("harness", harness), ("project", project))
        if v
    }
    links: dict[str, str] = {}
    if view is not None:
        colours = charts.colours_for(list(view.colours))
        tokens = view.measure == "tokens"
        what, fmt = ("Tokens", charts.compact) if tokens else ("Cost (USD)", _axis_dollars)
        figures["per_time"] = charts.stacked_bars(
            f"{what} per {view.period} (UTC), by model",
            view.columns,
            dict(view.series),
            ident="per-time",
            fmt=fmt,
            colours=colours,
            width=1100,
        )
        figures["per_model"] = charts.horizontal_bars(
            f"{what} per model",
            view.models,
            ident="per-model",
            fmt=fmt,
            colours=colours,
            width=560,
            label_width=190,
        )
        figures["per_project"] = charts.horizontal_bars(
            f"{what} per project",
            view.projects,
            ident="per-project",
            fmt=fmt,
            colours={name: "#5b6b7c" for name, _v in view.projects},
            width=560,
            label_width=190,
        )
        # since is always sent: an absent one is the page's default (7d), not all time
        keep = {"since": since or "", **filters}
        links = {
            "tokens": "/usage?" + urlencode(keep),
            "cost": "/usage?" + urlencode({**keep, "measure": "cost"}),
        }
        command += "".join(f" --{k} {shlex.quote(v)}" for k, v in filters.items()) + " --by model"
    return (
        environment()
        .get_template("usage.html")
        .render(
            v=view,
            since=since,
            until=until,
            harness=harness,
            project=project,
            harnesses=USAGE_HARNESSES,
            prices=prices,
            error=error,
            cost=_dollars,
            command=command,
            links=links,
            measure=view.measure if view is not None else "tokens",
            per_time=figures.get("per_time", ""),
            per_model=figures.get("per_model", ""),
            per_project=figures.get("per_project", ""),
            standalone=False,
        )
    )


# ---------------------------------------------------------------------------- Markdown


def _fence(text: str, info: str = "") -> str:
    """``text`` in a code fence longer than any backtick run inside it."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _md_inline(text: str) -> str:
    """One line of plain text safe in Markdown prose: Markdown and HTML characters
    backslash-escaped, newlines as spaces."""
    out = []
    for ch in " ".join(text.split()):
        out.append("\\" + ch if ch in "\\`*_{}[]()<>#+-.!|~" else ch)
    return "".join(out)


def _md_block(b: BlockView) -> list[str]:
    if b.kind == "tool_call":
        lines = [f"**Tool call** `{b.name}` ({_md_inline(b.call_id)})", ""]
        if b.diffs:  # issue 44: an edit as a unified diff, not JSON with literal \n
            lines += [_fence("\n".join(d.text() for d in b.diffs), "diff")]
        else:
            lines += [_fence(b.text, "json")]
        if b.result is not None:
            label = "**Result** (error)" if b.result.is_error else "**Result**"
            lines += ["", f"{label}, row {b.result_seq}:", "", _fence(b.result.text)]
        else:
            lines += ["", "_No result recorded: its effects are unknown._"]
        return lines
    if b.kind == "tool_result":
        return [
            f"**Result of** {_md_inline(b.call_id)}{' (error)' if b.is_error else ''}:",
            "",
            _fence(b.text),
        ]
    if b.kind == "media":
        return [f"_{_md_inline(b.text)}_"]
    if b.kind == "thinking":
        return ["_Reasoning:_", "", _fence(b.text)]
    return [_fence(b.text)] if "\n" in b.text or len(b.text) > 200 else [_md_inline(b.text)]


def _seq_line(view: SessionView) -> str:
    """The header's rows line: ``- seq: 3–40 of 46 rows``, or when no row is in the range
    asked (``export --since-seq 400`` of 46 rows; issue 44, fresh-user review: it said
    ``None–None``) ``- no rows in seq 400–end (46 rows)``."""
    if view.first_seq is not None and view.last_seq is not None:
        return f"- seq: {view.first_seq}–{view.last_seq} of {view.total} rows"
    low, high = view.asked
    return (
        f"- no rows in seq {low if low is not None else 0}–{high if high is not None else 'end'}"
        f" ({view.total} rows)"
    )


def session_markdown(view: SessionView) -> str:
    """The session as readable Markdown: a header, then each row as a section (compactions
    and checkpoints as quotes), tool calls followed by their results. Transcript text is in
    code fences or escaped, so it never becomes Markdown or HTML; the title and project, as
    every text, pass ``view.clean_text`` (redacted unless raw, controls shown: issue 45 item 6)."""
    s = view.session
    title, project = (clean_text(v, raw=view.raw) if v else v for v in (s.title, s.project))
    out: list[str] = [
        f"# {_md_inline(title or s.key)}",
        "",
        f"- session: `{s.key}`" if "`" not in s.key else f"- session: {s.key}",
        f"- harness: {s.harness}" + (f" (subagent {s.agent_id})" if view.subagent else ""),
        f"- project: {_md_inline(project or 'none')}",
        _seq_line(view),
        "- secrets: " + ("NOT redacted (--raw)" if view.raw else "redacted"),
        "- rows: "
        + (
            "the conversation only (`--all` shows events, attachments, hook and queue rows)"
            if view.conversation
            else "every row"
        ),
        "",
    ]
    for r in view.rows:
        if r.compaction:
            cover = f", covers rows up to {r.covers}" if r.covers is not None else ""
            out += [f"## Compaction at row {r.seq}{cover}", "", _fence(r.summary), ""]
        elif r.answered_above:
            continue
        else:
            flags = (" · request" if r.is_request else "") + (" · sidechain" if r.sidechain else "")
            out += [f"## #{r.seq} {r.role}{flags}" + (f" · {r.time}" if r.time else ""), ""]
            if not r.blocks:
                out += [f"_{_md_inline(r.kind + ' ' + r.type_name)}, no content_", ""]
            for b in r.blocks:
                out += [*_md_block(b), ""]
        for cp in r.checkpoints:
            out += [
                f"> **Checkpoint** ({cp.trigger}, {cp.time}, {cp.prompt_count} prompts)",
                "",
                _fence(cp.digest),
                "",
            ]
    return "\n".join(out).rstrip() + "\n"


__all__ = [
    "environment",
    "sessions_page",
    "search_page",
    "session_page",
    "session_markdown",
    "segments",
    "message_page",
    "choices_page",
    "usage_page",
    "markdown_html",
    "CSP",
]
