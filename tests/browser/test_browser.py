"""The session browser in a real headless Chromium (issue 19): Debian's ``/usr/bin/chromium``
driven by Playwright, against the daemon app served by uvicorn on a free loopback port.
Assertions are on what a person sees (visible text, what is folded, what is marked).

No browser is a failure, never a skip: ``.ci/run`` installs ``chromium`` when it is missing.
``CONTINUITY_SCREENSHOTS=DIR`` also saves one PNG per page there (docs/ keeps them).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from continuity.daemon.server import DaemonSettings, create_app
from tests.browser.corpus import EDIT_REQUEST, LONG, SECRET, build
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
def site(sqlite_store, isolated_home: Path) -> Iterator[str]:
    build(sqlite_store)
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
    assert rows.count() == 4
    assert page.locator("h2.project-name").all_inner_texts() == [
        "/home/ana/app 3 sessions",
        "/home/ana/other 1 session",
    ]
    app = page.locator("section.project").nth(0)
    assert sorted(app.locator("td.title").all_inner_texts()) == [
        "Alembic search index",
        EDIT_REQUEST,  # no own title: its first request
        "subagent: read the alembic docs subagent 7",
    ]
    assert sorted(app.locator("td.key").all_inner_texts()) == [
        "cc-alembic",
        "cc-alembic/agent-7",
        "cc-edit",
    ]
    _shot(page, "sessions")
    page.fill("input[name=harness]", "codex")
    page.click("button[type=submit]")
    assert page.locator("tbody tr").count() == 1
    assert page.locator("td.title").inner_text() == "Flaky parser"
    page.locator("td.title a").click()
    assert page.locator("h1").inner_text() == "Flaky parser"


def test_search_marks_hits_and_opens_the_row(page, site):
    page.goto(f"{site}/search")
    page.fill("input[name=q]", "alembic")
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
    context.close()
