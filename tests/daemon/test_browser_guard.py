"""The session browser's sign-in behind the daemon's guard (issue 19), in process: the cookie
opens the pages only, the Host/Origin/Sec-Fetch-Site rules hold for pages too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from continuity.daemon.browser import BROWSER_COOKIE, cookie_value
from continuity.daemon.server import DaemonSettings, create_app
from tests.browser.corpus import build, build_usage, usage_expected
from tests.daemon.livecapture import start_live

TOKEN = "guard-test-token-0123456789abcdef"
LOCAL = "http://127.0.0.1"


@pytest.fixture
def client(store, isolated_home: Path) -> Iterator[TestClient]:
    build(store)
    live = start_live(store, isolated_home)
    app = create_app(live, DaemonSettings(token=TOKEN), login_codes={"code-1"})
    try:
        with TestClient(app, base_url=LOCAL, follow_redirects=False) as c:
            yield c
    finally:
        live.close()


def test_login_code_sets_a_strict_httponly_cookie_once(client):
    r = client.get("/search?q=alembic&login=code-1")
    assert r.status_code == 303 and r.headers["location"] == "/search?q=alembic"
    cookie = r.headers["set-cookie"]
    assert cookie == (f"{BROWSER_COOKIE}={cookie_value(TOKEN)}; HttpOnly; SameSite=Strict; Path=/")
    assert TOKEN not in cookie
    client.cookies.clear()
    assert client.get("/?login=code-1").status_code == 401  # used up


def test_cookie_opens_pages_not_the_api(client):
    jar = {"cookie": f"{BROWSER_COOKIE}={cookie_value(TOKEN)}"}
    page = client.get("/session?key=cc-alembic", headers=jar)
    assert page.status_code == 200 and "Alembic search index" in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert client.get("/api/checkpoints/cc-alembic", headers=jar).status_code == 401
    assert client.get("/openapi.json", headers=jar).status_code == 401
    assert client.get("/", headers={"cookie": f"{BROWSER_COOKIE}={'0' * 64}"}).status_code == 401


def test_bearer_still_reads_pages_and_wrong_token_query_refused(client):
    auth = {"authorization": f"Bearer {TOKEN}"}
    assert client.get("/", headers=auth).status_code == 200
    r = client.get(f"/?token={TOKEN}x")
    assert r.status_code == 401 and r.headers["content-type"].startswith("text/html")
    assert "Sign in" in r.text and TOKEN not in r.text


@pytest.mark.parametrize(
    "headers,status",
    [
        ({"origin": "http://evil.example"}, 403),
        ({"sec-fetch-site": "cross-site"}, 403),
        ({"host": "evil.example"}, 421),
    ],
)
def test_page_guard_rules_hold_with_the_cookie(client, headers, status):
    jar = {"cookie": f"{BROWSER_COOKIE}={cookie_value(TOKEN)}"}
    assert client.get("/", headers={**jar, **headers}).status_code == status
    assert client.get("/?login=code-1", headers=headers).status_code == status


def test_unknown_session_is_a_404_page(client):
    r = client.get("/session?key=nope", headers={"authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 404 and "No such session" in r.text


def test_head_answers_like_get_without_a_body(client):
    """A HEAD of a page (link checkers, ``curl -I``) gets the GET's status and headers, not 405
    (review leftover of issue 19); without sign-in it is refused the same way."""
    jar = {"cookie": f"{BROWSER_COOKIE}={cookie_value(TOKEN)}"}
    got = client.get("/session?key=cc-alembic", headers=jar)
    head = client.head("/session?key=cc-alembic", headers=jar)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    assert head.headers["content-security-policy"] == got.headers["content-security-policy"]
    assert client.head("/", headers=jar).status_code == 200
    assert client.head("/session?key=nope", headers=jar).status_code == 404
    assert client.head("/").status_code == 401


def test_usage_page_opens_with_the_cookie_only(client, store, tmp_path):
    """Issue 44 item 2: ``/usage`` is one of the pages (``BROWSER_PATHS``): the cookie opens
    it, nothing else does; its charts are inline SVG under the same no-script CSP; a bad
    filter is a 400 page naming it. On each backend the ``store`` fixture gives."""
    build_usage(store, tmp_path / "usage-files")
    jar = {"cookie": f"{BROWSER_COOKIE}={cookie_value(TOKEN)}"}
    assert client.get("/usage").status_code == 401
    page = client.get("/usage", headers=jar)
    assert page.status_code == 200
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert page.text.count("<svg") == 3 and "<script" not in page.text
    total = sum(sum(v.values()) for v in usage_expected().values())
    assert f"{total:,} tokens" in page.text
    assert "no price for <code>gpt-oss:20b</code>" in page.text
    bad = client.get("/usage?harness=cursor", headers=jar)
    assert bad.status_code == 400 and "harness: &#39;cursor&#39; is not one of" in bad.text
    assert client.head("/usage", headers=jar).status_code == 200


JAR = {"cookie": f"{BROWSER_COOKIE}={cookie_value(TOKEN)}"}


def test_page_past_the_last_says_no_more_sessions(client):
    """Issue 44: ``/?page=9999`` said "No sessions yet: run continuity import"."""
    r = client.get("/?page=9999", headers=JAR)
    assert r.status_code == 200
    assert "No more sessions" in r.text and 'href="/?page=1"' in r.text
    assert "No sessions yet" not in r.text


@pytest.mark.parametrize(
    "url,named",
    [
        ("/session", "key: Field required"),
        ("/session?key=cc-alembic&seq=abc", "seq: Input should be a valid integer"),
        ("/session?key=cc-alembic&seq=-1", "seq: Input should be greater than or equal to 0"),
        ("/session?key=cc-alembic&seq=99999999999999999999", "seq: Input should be"),
        ("/?page=-1", "page: Input should be greater than or equal to 1"),
        ("/?page=abc", "page: Input should be a valid integer"),
        ("/search?q=x&n=-1", "n: Input should be greater than or equal to 1"),
        ("/usage?measure=nope", "measure: String should match pattern"),
    ],
)
def test_bad_query_value_is_a_400_page_naming_it(client, url, named):
    """Issue 44, fresh-user review: a page's bad query value answered FastAPI's raw JSON 422;
    now a 400 HTML page naming the parameter, under the pages' no-script headers."""
    r = client.get(url, headers=JAR)
    assert r.status_code == 400, r.text
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["content-security-policy"].startswith("default-src 'none'")
    assert "Bad request" in r.text and named in r.text


def test_api_keeps_its_json_errors(client):
    auth = {"authorization": f"Bearer {TOKEN}"}
    r = client.get("/api/checkpoints/cc-alembic?limit=abc", headers=auth)
    assert r.status_code == 422 and r.headers["content-type"] == "application/json"


def test_unknown_page_with_the_cookie_is_a_404_page(client):
    """Issue 44: a path that is no page, asked with the cookie, was the API's JSON 401."""
    r = client.get("/nope", headers=JAR)
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
    assert "No such page" in r.text and "&#39;/nope&#39;" in r.text
    assert r.headers["content-security-policy"].startswith("default-src 'none'")
    assert client.get("/nope").status_code == 401  # no cookie: still refused
    api = client.get("/api/nope", headers=JAR)  # the API's paths: the cookie opens none
    assert api.status_code == 401 and api.headers["content-type"] == "application/json"


@pytest.mark.parametrize("url", ["/?harness=nope", "/search?q=alembic&harness=nope"])
def test_unknown_harness_is_a_400_page_listing_the_known(client, url):
    """Issue 44: the list and search pages showed nothing for an unknown harness while
    ``/usage`` refused it; now they refuse it the same way."""
    r = client.get(url, headers=JAR)
    assert r.status_code == 400 and r.headers["content-type"].startswith("text/html")
    assert "harness: &#39;nope&#39; is not one of claude-code, codex, pi" in r.text
    assert client.get(url.replace("nope", "claude-code"), headers=JAR).status_code == 200
