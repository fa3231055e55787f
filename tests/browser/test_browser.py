"""The session browser in a real headless Chromium (issue 19): Debian's ``/usr/bin/chromium``
driven by Playwright, against the daemon app served by uvicorn on a free loopback port.
Assertions are on what a person sees (visible text, what is folded, what is marked).

No browser is a failure, never a skip: ``.ci/run`` installs ``chromium`` when it is missing.
``CONTINUITY_SCREENSHOTS=DIR`` also saves one PNG per page there (docs/ keeps them).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from continuity.daemon.server import DaemonSettings, create_app
from tests.browser.corpus import (
    EDIT_REQUEST,
    LONG,
    SECRET,
    USAGE_CC,
    USAGE_DAYS,
    build,
    build_usage,
    usage_expected,
)
from tests.daemon.livecapture import served_on_loopback, start_live

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("CONTINUITY_CHROMIUM", "/usr/bin/chromium")
TOKEN = "browser-test-token-0123456789abcdef"
CODE = "one-time-login-code-for-the-test"


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Headless Chromium; fails (never skips) when it cannot start."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: apt-get install chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        yield browser
        browser.close()


@pytest.fixture
def site(sqlite_store, isolated_home: Path, tmp_path: Path) -> Iterator[str]:
    build(sqlite_store)
    build_usage(sqlite_store, tmp_path / "usage-files")  # issue 44: sessions with usage
    live = start_live(sqlite_store, isolated_home)
    settings = DaemonSettings(token=TOKEN)
    try:
        with served_on_loopback(create_app(live, settings, login_codes={CODE})) as url:
            yield url
    finally:
        live.close()


@pytest.fixture
def page(chromium, site) -> Iterator[Any]:
    """A fresh browser context signed in with the one-time code."""
    context = chromium.new_context(viewport={"width": 1200, "height": 900})
    pg = context.new_page()
    pg.goto(f"{site}/?login={CODE}")
    yield pg
    context.close()


def _shot(page: Any, name: str) -> None:
    folder = os.environ.get("CONTINUITY_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / f"browser-{name}.png"), full_page=False)


def test_sign_in_once_then_the_cookie(chromium, site):
    context = chromium.new_context()
    pg = context.new_page()
    response = pg.goto(f"{site}/")
    assert response.status == 401
    assert pg.locator("h1").inner_text() == "Sign in"
    assert "Alembic search index" not in pg.content()
    pg.goto(f"{site}/?login={CODE}")
    assert pg.url == f"{site}/"  # the code is gone from the address bar
    assert pg.locator("h1").inner_text() == "Sessions"
    assert pg.evaluate("document.cookie") == ""  # HttpOnly: no script reads it
    cookie = next(c for c in context.cookies() if c["name"] == "continuity_browser")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and TOKEN not in cookie["value"]
    # One-time: a fresh browser cannot use the code again.
    other = chromium.new_context().new_page()
    assert other.goto(f"{site}/?login={CODE}").status == 401
    # The daemon's token signs in any time; the API never takes the cookie.
    assert other.goto(f"{site}/search?q=parser&token={TOKEN}").status == 200
    assert other.url == f"{site}/search?q=parser"
    assert pg.goto(f"{site}/api/checkpoints/cc-alembic").status == 401
    context.close()


def test_sessions_list_grouped_by_project_with_titles(page, site):
    """Issue 44: the list shows titles (the harness's own, else the first request), grouped
    by project folder, each title a link to its session."""
    rows = page.locator("tbody tr")
    assert rows.count() == 7
    assert page.locator("h2.project-name").all_inner_texts() == [
        "/home/ana/api 2 sessions",  # the newest first (issue 44's usage sessions, this week)
        "/home/ana/app 4 sessions",
        "/home/ana/other 1 session",
    ]
    app = page.locator("section.project").nth(1)
    assert sorted(app.locator("td.title").all_inner_texts()) == [
        "Alembic search index",
        "Profile the importer, day 1",  # imported: no own title, its first request
        EDIT_REQUEST,  # no own title: its first request
        "subagent: read the alembic docs subagent 7",
    ]
    assert sorted(app.locator("td.key").all_inner_texts()) == [
        USAGE_CC,
        "cc-alembic",
        "cc-alembic/agent-7",
        "cc-edit",
    ]
    _shot(page, "sessions")
    page.fill("input[name=harness]", "codex")
    page.fill("input[name=project]", "/home/ana/other")
    with page.expect_navigation():  # the next page loaded before it is read
        page.click("button[type=submit]")
    assert page.locator("tbody tr").count() == 1
    assert page.locator("td.title").inner_text() == "Flaky parser"
    page.locator("td.title a").click()
    assert page.locator("h1").inner_text() == "Flaky parser"


def test_search_marks_hits_and_opens_the_row(page, site):
    page.goto(f"{site}/search")
    page.fill("input[name=q]", "alembic")
    with page.expect_navigation():  # the next page loaded before it is read
        page.click("button[type=submit]")
    hits = page.locator(".hit")
    assert hits.count() == 5
    marks = {m.lower() for m in page.locator(".hit mark").all_inner_texts()}
    assert marks == {"alembic"}
    text = page.locator("main").inner_text()
    assert "continuity show cc-alembic --seq 1" in text
    assert "continuity resume cx-parser --in codex" in text
    assert "subagent 7" in text
    _shot(page, "search")
    page.locator(".hit a", has_text="Flaky parser").click()
    assert page.locator("h1").inner_text() == "Flaky parser"
    assert page.locator(".row.focus .head").inner_text().startswith("#1 assistant")


def test_session_page_shows_compaction_pairs_folds_and_continuation(page, site):
    page.goto(f"{site}/session?key=cc-alembic")
    compaction = page.locator(".compaction")
    assert compaction.count() == 1
    assert "the migration for the search index was written" in compaction.inner_text()
    pair = page.locator("#row-1 .pair")
    left, right = pair.locator("> div").nth(0), pair.locator("> div").nth(1)
    assert "Bash" in left.inner_text() and "alembic upgrade head" in left.inner_text()
    assert "Result, row 2" in right.inner_text()
    # The 80-line output is folded: its summary shows, its last line does not until opened.
    details = right.locator("details")
    assert details.locator("summary").inner_text().startswith("80 lines")
    assert not right.get_by_text("line 79 of the migration log").is_visible()
    details.locator("summary").click()
    assert right.get_by_text("line 79 of the migration log").is_visible()
    assert "results shown beside their calls" in page.locator("#row-2").inner_text()
    assert page.locator(".media").inner_text() == "[image/png 48213 B omitted]"
    checkpoint = page.locator(".checkpoint")
    assert checkpoint.count() == 1 and "pre_compaction" in checkpoint.inner_text()
    # The checkpoint sits where it was taken: after row 2 (taken at 09:02:30).
    assert (
        page.evaluate("document.querySelector('.checkpoint').previousElementSibling.id") == "row-2"
    )
    cont = page.locator("#continuation")
    assert "bytes of budget used" in cont.inner_text()
    import re

    used, budget = map(
        int, re.search(r"(\d+) of (\d+) bytes of budget used", cont.inner_text()).groups()
    )
    assert budget == 240_000 and 0 < used < budget
    width = page.evaluate("document.querySelector('#continuation .bar span').style.width")
    assert width == f"{round(100 * used / budget, 1):g}%"
    assert "Request (row 4)" in cont.inner_text()
    # issue 44: the request is shown, not an empty box (redacted, its escapes visible)
    request = cont.locator("pre").first.inner_text()
    assert request.startswith("the key is [REDACTED:") and "<script>window.pwned" in request
    _shot(page, "session")


def test_hostile_text_is_shown_not_run_and_secrets_are_redacted(page, site):
    page.goto(f"{site}/session?key=cc-alembic")
    row = page.locator("#row-4")
    seen = row.inner_text()
    assert "<script>window.pwned = 1</script>" in seen  # shown as text
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator("#row-4 img").count() == 0
    # issue 45 item 6: the escape is shown as visible text (README's one rule), never raw
    assert "\x1b" not in seen and "\\x1b[31mred\\x1b[0m" in seen
    assert SECRET not in page.content() and "ZYXWVUTSRQ" not in page.content()
    assert "Secrets are redacted." in page.locator("main").inner_text()
    page.goto(f"{site}/session?key=cc-alembic&raw=1")
    assert SECRET in page.locator("#row-4").inner_text()
    assert LONG.splitlines()[0] in page.content()


def test_an_edit_is_a_diff_and_the_conversation_is_the_default(page, site):
    """Issue 44: the Edit shows as a unified diff (no JSON with literal \\n), the assistant's
    Markdown is rendered with its raw HTML shown as text, and the rows outside the
    conversation are hidden until the switch (a link) shows them."""
    page.goto(f"{site}/session?key=cc-ed")  # a unique prefix, as the CLI takes
    assert page.locator("h1").inner_text() == EDIT_REQUEST
    assert [r.get_attribute("id") for r in page.locator(".row").all()] == [
        "row-1",
        "row-3",
        "row-4",
        "row-6",
    ]
    diff = page.locator("#row-3 pre.diff")
    assert diff.locator("span.del").all_inner_texts() == ["-def parse(path):"]
    assert diff.locator("span.add").all_inner_texts() == [
        "+def parse_file(path):",
        '+    """Parse the file at path."""',
    ]
    assert diff.locator("span.ctx").all_inner_texts() == ["     return load(path)"]
    assert page.locator("#row-3 .diff-path").inner_text() == "/home/ana/app/parser.py +2 \u22121"
    assert "\\n" not in page.locator("#row-3 .pair > div").first.inner_text()
    answer = page.locator("#row-6 .markdown")
    assert answer.locator("strong").inner_text() == "parse"
    assert answer.locator("li").all_inner_texts() == ["parser.py: the new name", "a docstring"]
    assert answer.locator("img").count() == 0 and '<img src=x onerror="window.pwned = 3">' in (
        answer.inner_text()
    )
    assert page.evaluate("typeof window.pwned") == "undefined"
    page.evaluate("document.querySelector('#row-3').scrollIntoView()")
    _shot(page, "edit")
    page.get_by_role("link", name="Show every row").click()
    assert page.url.endswith("/session?key=cc-edit&all=1")
    assert page.locator(".row").count() == 7
    assert (
        "not in the conversation (queue-operation/enqueue)" in page.locator("#row-0").inner_text()
    )
    page.get_by_role("link", name="Conversation only").click()
    assert page.locator(".row").count() == 4
    # a prefix of several sessions: a page linking each, not a 404
    assert page.goto(f"{site}/session?key=cc-").status == 300
    assert page.locator("ul.choices a").all_inner_texts() == [
        "cc-alembic",
        "cc-alembic/agent-7",
        "cc-edit",
    ]
    assert page.goto(f"{site}/session?key=zz").status == 404


def test_readable_without_javascript(chromium, site):
    context = chromium.new_context(java_script_enabled=False)
    pg = context.new_page()
    pg.goto(f"{site}/search?q=migration&login={CODE}")
    assert pg.locator(".hit").count() >= 2
    pg.goto(f"{site}/session?key=cc-alembic")
    assert pg.locator(".compaction").is_visible()
    pg.goto(f"{site}/usage")  # issue 44: the charts are SVG drawn by the server
    assert pg.locator("figure.chart svg").count() == 3
    assert pg.locator("rect.chart-bar").first.is_visible()
    context.close()


def _cell_numbers(row: Any) -> list[int]:
    return [int(c.replace(",", "")) for c in row.locator("td.num").all_inner_texts()[:6]]


def test_usage_page_charts_and_totals(page, site):
    """Issue 44 item 2: the usage of the last 7 days by default, drawn as SVG (stacked per
    day by model, per model, per project) with the table of totals; a model without a price
    is named and never costed at 0; filters by harness and project; no script."""
    response = page.goto(f"{site}/usage")
    assert response.status == 200
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert page.locator("h1").inner_text() == "Usage"
    assert page.locator("script").count() == 0
    expected = usage_expected()
    totals = {m: sum(v.values()) for m, v in expected.items()}
    # the table: one row per model, its tokens as the files hold them
    rows = page.locator("table.usage tbody tr")
    assert rows.count() == 4
    got = {}
    for i in range(4):
        row = rows.nth(i)
        got[row.locator("td").first.inner_text()] = (_cell_numbers(row), row)
    assert sorted(got) == sorted(expected)
    for model, sums in expected.items():
        numbers, _row = got[model]
        assert numbers[0] == USAGE_DAYS  # one response a day (a streamed message counts once)
        assert numbers[1:] == [
            sums["input"],
            sums["output"],
            sums["cache_write"],
            sums["cache_read"],
            totals[model],
        ]
    assert got["gpt-oss:20b"][1].locator("td").last.inner_text() == "no price"
    assert got["claude-opus-4-6"][1].locator("td").last.inner_text().startswith("$")
    foot = page.locator("table.usage tfoot th").all_inner_texts()
    assert int(foot[6].replace(",", "")) == sum(totals.values())
    assert foot[7].startswith("$") and foot[7].endswith("*")  # partial: not every model priced
    assert "no price for gpt-oss:20b" in page.locator("p.unpriced").inner_text()
    # the charts: per day (a column per day of the 7d range: 8 days it touches), per model,
    # per project, each bar's value the tokens it stands for
    per_time = page.locator("figure.chart svg").nth(0)
    assert per_time.locator("title").first.text_content() == "Tokens per day (UTC), by model"
    days = per_time.locator("text[text-anchor=middle]").all_text_contents()
    assert len(days) == USAGE_DAYS + 1
    stacked = per_time.locator("rect.chart-bar")
    assert stacked.count() == 4 * USAGE_DAYS  # 4 models on each of the 7 days with usage
    # as drawn (no page style resizes a bar): a column's segments touch, heights follow values
    column = [stacked.nth(i) for i in range(4)]  # the first day's, bottom-up
    boxes = [b.bounding_box() for b in column]
    values = [int(b.get_attribute("data-value")) for b in column]
    for lower, upper in itertools.pairwise(boxes):
        assert upper["y"] + upper["height"] == pytest.approx(lower["y"], abs=0.6)
    assert boxes[0]["height"] / boxes[1]["height"] == pytest.approx(values[0] / values[1], rel=0.02)
    by_model = {
        b.get_attribute("data-label"): int(b.get_attribute("data-value"))
        for b in page.locator("figure.chart svg").nth(1).locator("rect.chart-bar").all()
    }
    assert by_model == totals
    by_project = {
        b.get_attribute("data-label"): int(b.get_attribute("data-value"))
        for b in page.locator("figure.chart svg").nth(2).locator("rect.chart-bar").all()
    }
    claude = totals["claude-opus-4-6"] + totals["claude-haiku-4-5-20251001"]
    assert by_project == {"/home/ana/app": claude, "/home/ana/api": sum(totals.values()) - claude}
    # bar lengths follow the values: opus's bar against haiku's
    widths = {
        b.get_attribute("data-label"): float(b.get_attribute("width"))
        for b in page.locator("figure.chart svg").nth(1).locator("rect.chart-bar").all()
    }
    assert widths["claude-opus-4-6"] / widths["claude-haiku-4-5-20251001"] == pytest.approx(
        totals["claude-opus-4-6"] / totals["claude-haiku-4-5-20251001"], rel=1e-3
    )
    page.set_viewport_size({"width": 1200, "height": 1120})
    _shot(page, "usage")
    # the switch to cost: the priced models in dollars, the one without a price left out
    costs = {m: got[m][1].locator("td").last.inner_text() for m in expected if m != "gpt-oss:20b"}
    with page.expect_navigation():
        page.get_by_role("link", name="cost", exact=True).click()
    assert page.url.endswith("/usage?since=7d&measure=cost")
    in_dollars = {
        b.get_attribute("data-label"): float(b.get_attribute("data-value"))
        for b in page.locator("figure.chart svg").nth(1).locator("rect.chart-bar").all()
    }
    assert {m: f"${v:,.2f}" for m, v in in_dollars.items()} == costs
    assert "without gpt-oss:20b: no price" in page.locator("p.switch").inner_text()
    with page.expect_navigation():
        page.get_by_role("link", name="tokens", exact=True).click()
    assert page.url.endswith("/usage?since=7d")
    # filters: a harness, then a project folder; a bad time says what is wrong
    page.select_option("select[name=harness]", "codex")
    with page.expect_navigation():  # the next page loaded before it is read
        page.click("button[type=submit]")
    assert "harness=codex" in page.url
    assert sorted(page.locator("table.usage tbody td:first-child").all_inner_texts()) == [
        "gpt-5.1-codex",
        "gpt-oss:20b",
    ]
    page.goto(f"{site}/usage?project=/home/ana/app&since=30d")
    assert sorted(page.locator("table.usage tbody td:first-child").all_inner_texts()) == [
        "claude-haiku-4-5-20251001",
        "claude-opus-4-6",
    ]
    assert page.locator("p.unpriced").count() == 0
    assert page.locator("input[name=since]").input_value() == "30d"
    assert page.goto(f"{site}/usage?since=last+week").status == 400
    assert "since 'last week'" in page.locator("p.error").inner_text()
    page.goto(f"{site}/usage?since=2020-01-01&until=2020-02-01")
    assert page.locator(".chart-empty").count() == 3
    assert "No usage in this range" in page.locator(".chart-empty").first.inner_text()
