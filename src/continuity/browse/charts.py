"""Charts as inline SVG, drawn on the server (issue 44 item 2: the browser's usage page, which
runs no script): ``stacked_bars`` (one column per category, e.g. a day, stacked by series,
e.g. the models) and ``horizontal_bars`` (one bar per label, e.g. a model or a project).

Every text that reaches the markup (labels, series names, titles: model names and project
paths are user data) passes ``markupsafe.escape``; nothing is fetched and nothing runs, so
the pages keep their Content-Security-Policy (``render.CSP``). Each chart is an
``<svg role="img">`` whose ``<title>`` and ``<desc>`` say what it shows and its largest values
(for screen readers), with a ``<title>`` on every bar giving its exact value (a tooltip
without script). The value axis is linear from 0 to a "nice" maximum (1, 2, 2.5 or 5 times a
power of ten, ``nice_ticks``), so a bar's length is proportional to its value. Colours come
from the fixed ``PALETTE`` (a series keeps its colour in every chart of a page when the
caller passes the same ``colours``). A chart with nothing to show is a sentence ("No usage
in this range"), never an empty box.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from markupsafe import Markup, escape

from continuity.core.text import CONTROL_ESCAPES

#: Bar colours, in order (Okabe-Ito and Tableau hues, distinct for common colour blindness,
#: readable on white). ``OTHER_COLOUR`` is the grey of the "other" series.
PALETTE = (
    "#3a7bd5",
    "#e69f00",
    "#2e9e6a",
    "#cc79a7",
    "#56b4e9",
    "#d55e00",
    "#8a63d2",
    "#9a8f3c",
)
OTHER_COLOUR = "#a0a7b0"
#: What the chart says when it has no value above 0.
EMPTY = "No usage in this range"


def _t(text: str) -> Markup:
    """``text`` escaped for SVG markup, its control and bidi characters as visible escapes
    (``core.text.CONTROL_ESCAPES``, as every page's text: issue 45 item 6)."""
    return escape(text.translate(CONTROL_ESCAPES))


_FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def nice_ticks(maximum: float, count: int = 4) -> list[float]:
    """Tick values from 0 up to a "nice" top at or above ``maximum`` (> 0), about ``count``
    steps: the step is 1, 2, 2.5 or 5 times a power of ten. ``maximum`` <= 0 gives ``[0, 1]``."""
    if maximum <= 0 or not math.isfinite(maximum):
        return [0.0, 1.0]
    raw = maximum / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    steps = math.ceil(maximum / step - 1e-9)
    return [round(i * step, 10) for i in range(steps + 1)]


def compact(value: float) -> str:
    """A count for an axis or a label: ``950``, ``1.2k``, ``3.4M``, ``1.1B`` (one decimal
    below ten of the unit, none above; a whole number below a thousand)."""
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            n = value / size
            return (f"{n:.1f}".rstrip("0").rstrip(".") if n < 10 else f"{n:.0f}") + unit
    return f"{value:.0f}" if value == int(value) else f"{value:.2f}"


def _num(x: float) -> str:
    """A coordinate: at most two decimals, no trailing zeros."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _exact(value: float) -> str:
    """``value`` whole in an attribute (``data-value``): ``7500960``, ``0.25``."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _head(title: str, desc: str, width: float, height: float, ident: str) -> list[str]:
    t, d, ident = _t(title), _t(desc), _t(ident)
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'width="{_num(width)}" height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" '
        f'aria-labelledby="{ident}-t {ident}-d">',
        f'<title id="{ident}-t">{t}</title>',
        f'<desc id="{ident}-d">{d}</desc>',
        f'<text x="0" y="16" {_FONT} font-weight="600" fill="#1d1f23">{t}</text>',
    ]


def _empty(title: str) -> Markup:
    return Markup('<p class="chart-empty"><strong>{}</strong>: {}.</p>').format(_t(title), EMPTY)


def _cut(text: str, limit: int) -> str:
    """``text`` of at most ``limit`` characters, cut from the left (a path keeps its end)."""
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def colours_for(names: Sequence[str]) -> dict[str, str]:
    """``PALETTE`` colours for ``names`` in order (the palette repeats past its end)."""
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}


def stacked_bars(
    title: str,
    categories: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    ident: str,
    fmt: Callable[[float], str] = compact,
    colours: Mapping[str, str] | None = None,
    width: int = 760,
    plot_height: int = 200,
) -> Markup:
    """An SVG of one column per ``categories`` item (x axis, labelled under it), each the
    stack of ``series`` (``{name: values}``, one value per category, >= 0), drawn bottom-up
    in the mapping's order, with a legend. ``fmt`` prints values (axis ticks, tooltips,
    ``<desc>``); ``ident`` makes the element ids unique on the page; ``colours``: a colour
    per series name (default ``colours_for`` the names). Raises ``ValueError`` when a
    series has not one value per category or a value is negative. No value above 0: the
    ``EMPTY`` sentence instead of a chart."""
    for name, values in series.items():
        if len(values) != len(categories):
            raise ValueError(
                f"series {name!r}: {len(values)} values for {len(categories)} categories"
            )
        if any(v < 0 or not math.isfinite(v) for v in values):
            raise ValueError(f"series {name!r}: values must be finite and >= 0")
    sums = [sum(values[i] for values in series.values()) for i in range(len(categories))]
    if not categories or max(sums, default=0) <= 0:
        return _empty(title)
    colour = dict(colours or colours_for(list(series)))
    ticks = nice_ticks(max(sums))
    top_value = ticks[-1]
    left, top, gap = 64.0, 30.0, 0.25
    plot_w = width - left - 8
    bottom = top + plot_height
    slot = plot_w / len(categories)
    bar_w = slot * (1 - gap)
    legend_rows = math.ceil(len(series) / 3)
    height = bottom + 30 + legend_rows * 18 + 6
    biggest = max(range(len(categories)), key=lambda i: sums[i])
    desc = (
        f"{len(categories)} columns from {categories[0]} to {categories[-1]}, stacked by "
        f"{', '.join(series)}; the largest, {categories[biggest]}, is {fmt(sums[biggest])}."
    )
    out = _head(title, desc, width, height, ident)
    for t in ticks:  # grid lines and value labels
        y = bottom - plot_height * t / top_value
        out.append(
            f'<line x1="{_num(left)}" x2="{_num(width - 8)}" y1="{_num(y)}" y2="{_num(y)}" '
            f'stroke="#e3e5e8"/>'
        )
        out.append(
            f'<text x="{_num(left - 6)}" y="{_num(y + 4)}" text-anchor="end" {_FONT} '
            f'fill="#555">{_t(fmt(t))}</text>'
        )
    every = max(1, math.ceil(len(categories) / (plot_w / 64)))  # labels at least 64 px apart
    for i, category in enumerate(categories):
        x = left + i * slot + (slot - bar_w) / 2
        y = bottom
        for name, values in series.items():
            v = values[i]
            if v <= 0:
                continue
            h = plot_height * v / top_value
            y -= h
            out.append(
                f'<rect class="chart-bar" x="{_num(x)}" y="{_num(y)}" width="{_num(bar_w)}" '
                f'height="{_num(h)}" fill="{colour.get(name, OTHER_COLOUR)}" '
                f'data-series="{_t(name)}" data-value="{_exact(v)}">'
                f"<title>{_t(category)} · {_t(name)}: {_t(fmt(v))}</title></rect>"
            )
        if i % every == 0:
            out.append(
                f'<text x="{_num(x + bar_w / 2)}" y="{_num(bottom + 16)}" text-anchor="middle" '
                f'{_FONT} fill="#555">{_t(_cut(category, 12))}</text>'
            )
    out.append(
        f'<line x1="{_num(left)}" x2="{_num(width - 8)}" y1="{_num(bottom)}" '
        f'y2="{_num(bottom)}" stroke="#6a717a"/>'
    )
    column_w = (width - left) / 3
    for n, name in enumerate(series):
        x = left + (n % 3) * column_w
        y = bottom + 38 + (n // 3) * 18
        out.append(
            f'<rect x="{_num(x)}" y="{_num(y - 10)}" width="12" height="12" '
            f'fill="{colour.get(name, OTHER_COLOUR)}"/>'
        )
        out.append(
            f'<text class="legend" x="{_num(x + 17)}" y="{_num(y)}" {_FONT} fill="#1d1f23">'
            f"{_t(_cut(name, 34))}<title>{_t(name)}</title></text>"
        )
    out.append("</svg>")
    return Markup("\n".join(out))


def horizontal_bars(
    title: str,
    bars: Sequence[tuple[str, float]],
    *,
    ident: str,
    fmt: Callable[[float], str] = compact,
    colours: Mapping[str, str] | None = None,
    width: int = 760,
    label_width: int = 250,
) -> Markup:
    """An SVG of one horizontal bar per ``(label, value)`` in the order given (value >= 0),
    the label left of it (long labels cut from the left, whole in a tooltip), the value
    (``fmt``) after it, over a value axis with ticks. ``colours``: a colour per label
    (default the palette in order). Raises ``ValueError`` for a negative value. No value
    above 0: the ``EMPTY`` sentence instead of a chart."""
    if any(v < 0 or not math.isfinite(v) for _label, v in bars):
        raise ValueError("bar values must be finite and >= 0")
    if not bars or max(v for _label, v in bars) <= 0:
        return _empty(title)
    colour = dict(colours or colours_for([label for label, _v in bars]))
    ticks = nice_ticks(max(v for _label, v in bars))
    top_value = ticks[-1]
    left, top, row, bar_h = float(label_width), 30.0, 24.0, 16.0
    plot_w = width - left - 70  # room for the value after the longest bar
    bottom = top + row * len(bars)
    height = bottom + 24
    first = bars[0]
    desc = (
        f"{len(bars)} bars: "
        + "; ".join(f"{label} {fmt(v)}" for label, v in bars[:5])
        + ("; …" if len(bars) > 5 else "")
        + f". The largest is {first[0]}."
    )
    out = _head(title, desc, width, height, ident)
    for t in ticks:
        x = left + plot_w * t / top_value
        out.append(
            f'<line x1="{_num(x)}" x2="{_num(x)}" y1="{_num(top)}" y2="{_num(bottom)}" '
            f'stroke="#e3e5e8"/>'
        )
        out.append(
            f'<text x="{_num(x)}" y="{_num(bottom + 16)}" text-anchor="middle" {_FONT} '
            f'fill="#555">{_t(fmt(t))}</text>'
        )
    for i, (label, v) in enumerate(bars):
        y = top + i * row + (row - bar_h) / 2
        w = plot_w * v / top_value
        out.append(
            f'<text class="label" x="{_num(left - 8)}" y="{_num(y + 12)}" text-anchor="end" '
            f'{_FONT} fill="#1d1f23">{_t(_cut(label, label_width // 7))}'
            f"<title>{_t(label)}</title></text>"
        )
        out.append(
            f'<rect class="chart-bar" x="{_num(left)}" y="{_num(y)}" width="{_num(w)}" '
            f'height="{_num(bar_h)}" fill="{colour.get(label, OTHER_COLOUR)}" '
            f'data-label="{_t(label)}" data-value="{_exact(v)}">'
            f"<title>{_t(label)}: {_t(fmt(v))}</title></rect>"
        )
        out.append(
            f'<text x="{_num(left + w + 6)}" y="{_num(y + 12)}" {_FONT} fill="#555">'
            f"{_t(fmt(v))}</text>"
        )
    out.append(
        f'<line x1="{_num(left)}" x2="{_num(left)}" y1="{_num(top)}" y2="{_num(bottom)}" '
        f'stroke="#6a717a"/>'
    )
    out.append("</svg>")
    return Markup("\n".join(out))


__all__ = [
    "EMPTY",
    "OTHER_COLOUR",
    "PALETTE",
    "colours_for",
    "compact",
    "horizontal_bars",
    "nice_ticks",
    "stacked_bars",
]
