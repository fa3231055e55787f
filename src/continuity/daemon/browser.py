"""The local session browser (issue 19), served by ``continuity serve`` at ``/``: read-only
HTML pages over the daemon's store, rendered by ``continuity.browse.render``.

Pages (``BROWSER_PATHS``, GET only): ``/`` the sessions list (``harness``, ``project``,
``page``), ``/search`` (``q``, ``harness``, ``project``, ``role``, ``tool``, ``since``, ``n``),
``/session`` (``key``, ``from``: first row, ``seq``: a row to mark, ``raw=1``: unredacted,
``all=1``: every row, not only the conversation; issue 44), ``/usage`` (issue 44 item 2: tokens
and cost with SVG charts; ``since``, default ``7d``, empty for all time; ``until``,
``harness``, ``project``, as ``continuity usage`` takes them; ``measure=cost``: the charts
in dollars instead of tokens). ``key`` may be a unique prefix
(``store.names.resolve_session``, as the CLI, API and MCP take it); a prefix of several
sessions answers 300 with a page linking each. A query value a page refuses (``&seq=abc``,
``?page=-1``, a missing ``key``, an unknown ``harness``: ``unknown_harness``) is a 400 page
naming the parameter (``invalid_page``), a path that is no page, asked with the cookie, a 404
page (``not_found_page``; issue 44): the API (``/api/...``) keeps its JSON errors.

**Who may read them.** The daemon's guard (``daemon.server._Guard``) applies its Host, Origin
and Sec-Fetch-Site rules to these pages as to the API. A browser cannot send the bearer token,
so a page also accepts the cookie ``BROWSER_COOKIE`` (``HttpOnly; SameSite=Strict; Path=/``:
never readable by a script, never sent by another site's page), whose value is
``cookie_value(token)`` (an HMAC of the daemon's token, so the cookie is not the token). The
cookie is set by opening any page with ``?login=<code>`` (the one-time code ``serve`` prints
in its browser URL at start, void once used) or ``?token=<the daemon's token>`` (from
``<home>/daemon.token``, any time): the answer is a redirect to the same page without it, so
the address bar and history keep no secret. The API (``/api/...``) never accepts the cookie:
it stays bearer-only.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from continuity.core.errors import ContinuityError, SessionNotFound
from continuity.core.model import MAX_SEQ

#: The pages the cookie opens (exact paths, GET and HEAD only).
BROWSER_PATHS = frozenset({"/", "/search", "/session", "/usage"})
BROWSER_COOKIE = "continuity_browser"


def page_headers() -> dict[str, str]:
    """Headers of every page: no script may run, nothing is framed, cached or sent on as a
    referrer."""
    from continuity.browse.render import CSP

    return {
        "Content-Security-Policy": CSP,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
        "X-Frame-Options": "DENY",
    }


def cookie_value(token: str) -> str:
    """The browser cookie's value for the daemon ``token``: HMAC-SHA256 of a fixed label
    under the token, hex (64 characters)."""
    return hmac.new(token.encode(), b"continuity browser cookie v1", hashlib.sha256).hexdigest()


def not_found_page(path: str) -> str:
    """The HTML of the 404 a signed-in browser gets for a path that is no page (issue 44,
    fresh-user review: it was the API's JSON 401), naming the pages there are."""
    from continuity.browse.render import message_page

    return message_page(
        "No such page",
        f"There is no page {path[:200]!r}: the pages are / (sessions), /search, /session "
        "and /usage.",
    )


def invalid_page(errors: list[dict[str, Any]]) -> Any:
    """The 400 HTML page (with ``page_headers``) of a page's query values FastAPI refused
    (``errors``: ``RequestValidationError.errors()``), naming each parameter, what it takes
    and the value given (cut to 80 characters). Issue 44, fresh-user review: a bad ``seq`` or
    ``page`` answered FastAPI's raw JSON 422; the API (``/api/...``) keeps its JSON errors."""
    from fastapi.responses import HTMLResponse

    from continuity.browse.render import message_page

    said = []
    for e in errors:
        loc = [str(part) for part in e.get("loc", ()) if part != "query"]
        name = ".".join(loc) or "query"
        text = f"{name}: {e.get('msg', 'invalid')}"
        if e.get("type") != "missing" and "input" in e:
            text += f" (got {str(e['input'])[:80]!r})"
        said.append(text)
    return HTMLResponse(
        message_page("Bad request", "; ".join(said) + "."), 400, headers=page_headers()
    )


def unknown_harness(value: str | None) -> str | None:
    """The error of a ``harness`` filter that names no harness (``api.workspace.HARNESSES``,
    the registry's and the adapters'), listing the known ones; None when it names one or is
    empty. Issue 44: the list and search pages showed nothing for a typo, ``/usage`` refused
    it; now all three refuse it (400)."""
    from continuity.api.workspace import HARNESSES

    if value is None or value in HARNESSES:
        return None
    return f"harness: {value!r} is not one of {', '.join(HARNESSES)}"


def _text(value: str | None) -> str | None:
    value = (value or "").strip()
    return value or None


def add_browser_routes(app: Any, live: Any) -> None:
    """Add the pages to ``app``, reading ``live.store``."""
    from fastapi import Query
    from fastapi.responses import HTMLResponse

    from continuity.browse import render
    from continuity.browse.search import parse_when, search
    from continuity.browse.view import list_view, session_view
    from continuity.store.search import EntryFilter

    def page(html: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(html, status, headers=page_headers())

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def sessions_page(
        harness: str | None = None,
        project: str | None = None,
        page_no: int = Query(1, alias="page", ge=1, le=100_000),
    ) -> Any:
        h, p = _text(harness), _text(project)
        refused = unknown_harness(h)
        if refused:
            return page(render.message_page("Bad request", refused + "."), 400)
        rows, more = list_view(
            live.store, harness=h, projects=(p,) if p else (), page=page_no, per_page=50
        )
        return page(render.sessions_page(rows, page=page_no, more=more, harness=h, project=p))

    @app.api_route("/search", methods=["GET", "HEAD"], include_in_schema=False)
    def search_page(
        q: str | None = None,
        harness: str | None = None,
        project: str | None = None,
        role: str | None = None,
        tool: str | None = None,
        since: str | None = None,
        n: int = Query(50, ge=1, le=500),
    ) -> Any:
        typed = {
            "harness": _text(harness),
            "project": _text(project),
            "role": _text(role),
            "tool": _text(tool),
            "since": _text(since),
        }
        hits: list[Any] = []
        error = unknown_harness(typed["harness"])
        if _text(q) and error is None:
            try:
                filters = EntryFilter(
                    harness=typed["harness"],
                    projects=(typed["project"],) if typed["project"] else (),
                    role=typed["role"],
                    tool=typed["tool"],
                    since=parse_when(typed["since"]) if typed["since"] else None,
                )
                from continuity.retrieval.settings import retrieval_settings

                # Not Workspace.search: a page asked from a browser has no folder to boost
                # (Workspace.search boosts one, the daemon's by default), and the folder is
                # matched as typed, not resolved on the daemon's machine.
                hits = search(
                    live.store,
                    q or "",
                    limit=n,
                    filters=filters,  # issue 40
                    settings=retrieval_settings(live.home),
                )
            except ContinuityError as exc:
                error = str(exc)
        return page(
            render.search_page(hits, query=_text(q), error=error, **typed), 400 if error else 200
        )

    @app.api_route("/usage", methods=["GET", "HEAD"], include_in_schema=False)
    def usage_page(
        since: str = "7d",
        until: str | None = None,
        harness: str | None = None,
        project: str | None = None,
        measure: str = Query("tokens", pattern="^(tokens|cost)$"),
    ) -> Any:
        from datetime import UTC, datetime
        from pathlib import Path

        from continuity.api.workspace import Workspace
        from continuity.browse.usage_view import usage_view
        from continuity.core.errors import InputError
        from continuity.core.when import parse_when
        from continuity.usage.prices import load_prices

        shown = {"since": _text(since), "until": _text(until), "harness": _text(harness)}
        folder = _text(project)
        now = datetime.now(UTC)

        def answer(view: Any, status: int = 200, **more: Any) -> Any:
            return page(render.usage_page(view, project=folder, **shown, **more), status)

        try:
            when = {
                name: parse_when(value, now=now, field_name=name) if value else None
                for name, value in (("since", shown["since"]), ("until", shown["until"]))
            }
            table = load_prices(Path(live.home))
            messages = Workspace.over(live.store, live.home).usage_messages(
                since=when["since"], until=when["until"], harness=shown["harness"], project=folder
            )
        except InputError as exc:  # a bad since, until or harness
            return answer(None, 400, error=str(exc))
        except ContinuityError as exc:  # a refreshed price table that cannot be read
            return answer(None, 500, error=str(exc))
        view = usage_view(
            messages, since=when["since"], until=when["until"], now=now, measure=measure
        )
        # the price table's source as text without its scheme: the page names it, and no
        # browser takes a bare host path for a link or a resource to load (the pages load
        # nothing from the network: tests/daemon/test_server.py)
        source = table.source.split("://", 1)[-1]
        return answer(view, prices=f"{source} ({table.fetched})" if table.fetched else source)

    @app.api_route("/session", methods=["GET", "HEAD"], include_in_schema=False)
    def session_page(
        key: str,
        from_: int | None = Query(None, alias="from", ge=0, le=MAX_SEQ),
        seq: int | None = Query(None, ge=0, le=MAX_SEQ),
        raw: bool = False,
        all_rows: bool = Query(False, alias="all"),
    ) -> Any:
        from continuity.core.errors import AmbiguousSession
        from continuity.store.names import resolve_session

        try:
            # issue 44: a unique key prefix names the session, as in the CLI, API and MCP
            key = resolve_session(live.store, key)
        except AmbiguousSession as exc:
            return page(render.choices_page(key, exc.candidates), 300)
        except SessionNotFound:
            return page(
                render.message_page("No such session", f"No session has the key {key!r}."), 404
            )
        try:
            view = session_view(
                live.store,
                key,
                from_seq=from_,
                focus_seq=seq,
                raw=raw,
                conversation=not all_rows,  # issue 44: the conversation by default
            )
        except SessionNotFound:
            return page(
                render.message_page("No such session", f"No session has the key {key!r}."), 404
            )
        return page(render.session_page(view))
