"""``browse.charts`` (issue 44 item 2): server-side SVG for the usage page. Each chart is
parsed as XML and its bars measured: lengths proportional to the values, labels escaped,
an empty range said in words."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from continuity.browse.charts import (
    EMPTY,
    PALETTE,
    compact,
    horizontal_bars,
    nice_ticks,
    stacked_bars,
)

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert(1)</script>"onload="x" & \u202emodel'


def _svg(markup: str) -> ET.Element:
    return ET.fromstring(str(markup))  # well-formed XML, or this raises


def _bars(root: ET.Element) -> list[ET.Element]:
    return [r for r in root.iter(f"{SVG}rect") if r.get("class") == "chart-bar"]


def test_nice_ticks_cover_the_maximum_with_round_steps():
    assert nice_ticks(7_500_000) == [0, 2_000_000, 4_000_000, 6_000_000, 8_000_000]
    assert nice_ticks(100) == [0, 25, 50, 75, 100]
    assert nice_ticks(3) == [0, 1, 2, 3]
    assert nice_ticks(0.9) == [0, 0.25, 0.5, 0.75, 1.0]
    assert nice_ticks(0) == [0, 1]


def test_compact_numbers():
    assert [compact(v) for v in (0, 950, 1_200, 15_000, 2_500_000, 1_100_000_000)] == [
        "0",
        "950",
        "1.2k",
        "15k",
        "2.5M",
        "1.1B",
    ]


def test_stacked_bar_heights_are_proportional_to_the_values():
    svg = stacked_bars(
        "Tokens per day",
        ["2026-12-01", "2026-12-02", "2026-12-03"],
        {"opus": [300, 0, 600], "haiku": [100, 50, 0]},
        ident="t",
        plot_height=200,
    )
    root = _svg(svg)
    bars = _bars(root)
    got = {(b.get("data-series"), float(b.get("data-value") or 0)): b for b in bars}
    assert sorted(got) == [("haiku", 50), ("haiku", 100), ("opus", 300), ("opus", 600)]
    # the axis tops at 600 (nice ticks 0, 200, 400, 600): 600 is the whole plot, 300 half
    height = {k: float(b.get("height") or 0) for k, b in got.items()}
    assert height[("opus", 600)] == 200
    assert height[("opus", 300)] == 100
    assert height[("haiku", 100)] == pytest.approx(200 / 6, abs=0.01)
    # stacked: haiku sits on opus in the first column (its bottom is opus's top)
    opus, haiku = got[("opus", 300)], got[("haiku", 100)]
    assert float(haiku.get("y") or 0) + float(haiku.get("height") or 0) == pytest.approx(
        float(opus.get("y") or 0), abs=0.01
    )
    # the zero value draws nothing; each series keeps its colour
    assert {b.get("fill") for b in bars if b.get("data-series") == "opus"} == {PALETTE[0]}
    assert {b.get("fill") for b in bars if b.get("data-series") == "haiku"} == {PALETTE[1]}
    ticks = [t.text for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "end"]
    assert ticks == ["0", "200", "400", "600"]
    assert root.find(f"{SVG}title").text == "Tokens per day"  # type: ignore[union-attr]
    desc = root.find(f"{SVG}desc").text or ""  # type: ignore[union-attr]
    assert "3 columns from 2026-12-01 to 2026-12-03" in desc and "2026-12-03, is 600" in desc
    assert root.get("role") == "img" and root.get("aria-labelledby") == "t-t t-d"


def test_a_hostile_model_name_is_text_not_markup():
    svg = str(stacked_bars("Per day", ["d1"], {HOSTILE: [10]}, ident="h"))
    assert "<script>" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert '"onload="x"' not in svg and "&#34;onload=&#34;x&#34;" in svg
    assert "\u202e" not in svg and "\\u202emodel" in svg  # the bidi override made visible
    root = _svg(svg)
    (bar,) = _bars(root)
    assert bar.get("data-series") == HOSTILE.replace("\u202e", "\\u202e")
    assert not [e for e in root.iter() if e.tag in (f"{SVG}script", f"{SVG}foreignObject")]
    svg = str(horizontal_bars(HOSTILE, [(HOSTILE, 5.0)], ident="hb"))
    # escaped in each of its 7 places: <title>, the heading, <desc> twice, the label's
    # tooltip, the bar's data-label and tooltip (the label's text, cut, keeps its end only)
    assert "<script>" not in svg and svg.count("&lt;script&gt;") == 7
    _svg(svg)


def test_horizontal_bar_lengths_are_proportional_and_labels_cut_from_the_left():
    path = "/home/ana/projects/a-very-long-client-name/services/billing-api"
    root = _svg(
        horizontal_bars(
            "Tokens per project",
            [(path, 7_500_000.0), ("/home/ana/api", 1_500_000.0)],
            ident="p",
            width=560,
            label_width=190,
        )
    )
    bars = _bars(root)
    plot_w = 560 - 190 - 70
    # axis 0..8M: 7.5M is 15/16 of the plot, 1.5M 3/16
    assert [float(b.get("width") or 0) for b in bars] == [
        pytest.approx(plot_w * 7.5 / 8, abs=0.01),
        pytest.approx(plot_w * 1.5 / 8, abs=0.01),
    ]
    labels = [t for t in root.iter(f"{SVG}text") if t.get("class") == "label"]
    assert labels[0].text == "…" + path[-26:]  # 190 // 7 = 27 characters, its end kept
    assert labels[0].find(f"{SVG}title").text == path  # type: ignore[union-attr]
    assert labels[1].text == "/home/ana/api"
    values = [t.text for t in root.iter(f"{SVG}text") if t.text in ("7.5M", "1.5M")]
    assert values == ["7.5M", "1.5M"]


@pytest.mark.parametrize(
    "svg",
    [
        stacked_bars("Tokens per day", [], {}, ident="e"),
        stacked_bars("Tokens per day", ["2026-12-01"], {"opus": [0]}, ident="e"),
        horizontal_bars("Tokens per model", [], ident="e"),
        horizontal_bars("Tokens per model", [("opus", 0.0)], ident="e"),
    ],
)
def test_an_empty_range_says_so_instead_of_an_empty_box(svg):
    assert "<svg" not in svg and "<rect" not in svg
    assert EMPTY == "No usage in this range" and f"{EMPTY}." in svg
    assert svg.startswith('<p class="chart-empty"><strong>Tokens per ')


def test_bad_series_are_refused():
    with pytest.raises(ValueError, match="series 'opus': 1 values for 2 categories"):
        stacked_bars("x", ["a", "b"], {"opus": [1]}, ident="x")
    with pytest.raises(ValueError, match=">= 0"):
        stacked_bars("x", ["a"], {"opus": [-1]}, ident="x")
    with pytest.raises(ValueError, match=">= 0"):
        horizontal_bars("x", [("a", float("nan"))], ident="x")
