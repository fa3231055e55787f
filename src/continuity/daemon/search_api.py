"""``POST /api/search``: ``continuity search`` answered by the running daemon (issue 43 goal 3).

A one-shot ``continuity search`` pays for its start: SQLAlchemy, the embedding model, the
redaction rules (about 0.9 s on the 323 MB tree of ``bench/peers.py``), where the daemon has
them loaded and answers in milliseconds; agentsview's search is a client of its running
daemon too. So when the workspace's daemon runs, ``cli.fast`` sends the search here and prints
what comes back, as the in-process command would print it; when it does not (or answers
anything but 200), the command searches in-process as before.

The body is ``SearchBody``; the answer ``{"hits": [SearchHit.to_dict(), ...]}`` in the order
``Workspace.search`` returns them (best first), and with no hit ``{"hits": [], "no_match":
MESSAGE}`` (``browse.search.no_match_message``: what the command prints on standard error),
encoded by ``orjson`` as ``search --json`` encodes each hit. The search is
``Workspace.search`` itself, over the daemon's store: the folders (``projects``) and the
asker's folder (``near``) come from the client, resolved on its side, as the daemon's own
working folder means nothing to the asker.

``POST /api/recall`` is the same for ``continuity recall`` (``RecallBody``; the answer
``{"found": RecallResponse.to_dict()}``, what ``recall --json`` prints): ranked from the
asker's folder as ``Workspace.recall`` ranks it, where ``/api/memory/recall`` (the seed's,
for the MCP tools) boosts no folder.

Both answers add ``"config": VERDICT`` when the client sent its path of the workspace's
``config.toml`` (``config_answer``): the client then checks the file as every command does
at start without importing ``tomllib`` itself (issue 43 goal 3).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: The most hits one request asks for (``search -n``'s bound).
MAX_HITS = 500


class SearchBody(BaseModel):
    """What ``continuity search`` was asked: ``query`` (non-empty), ``limit`` (1-500), ``mode``
    (``hybrid``, ``words``, ``vectors``), the filters (``harness``, ``projects``: absolute
    folders, ``since``/``until``: as the CLI takes them, ``role``, ``tool``), ``near``: the
    asker's folder, whose project's rows rank a little first, and ``config``: the asker's path
    of this workspace's ``config.toml``, which the daemon judges for it (``config_answer``)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=100_000)
    limit: int = Field(20, ge=1, le=MAX_HITS)
    mode: str = Field("hybrid", max_length=20)
    harness: str | None = Field(None, max_length=100)
    projects: list[str] = Field(default_factory=list, max_length=100)
    since: str | None = Field(None, max_length=100)
    until: str | None = Field(None, max_length=100)
    role: str | None = Field(None, max_length=20)
    tool: str | None = Field(None, max_length=1000)
    near: str | None = Field(None, max_length=4096)
    config: str | None = Field(None, max_length=4096)


class RecallBody(BaseModel):
    """What ``continuity recall`` was asked: ``query`` (non-empty), ``limit`` (1-100),
    ``expand`` (the sanitized transcripts too), ``type``, ``near``: the asker's folder,
    whose project's memories rank a little first, and ``config`` as ``SearchBody``'s."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=100_000)
    limit: int = Field(10, ge=1, le=100)
    expand: bool = False
    type: str | None = Field(None, max_length=200)
    near: str | None = Field(None, max_length=4096)
    config: str | None = Field(None, max_length=4096)


def config_answer(path: str | None, home: Any) -> dict[str, object]:
    """``{"config": core.config.config_verdict(path)}`` when ``path`` is this workspace's
    ``config.toml`` (``home``'s, however spelled), else ``{}`` (the client reads the file
    itself). The client saves ``tomllib``'s import (issue 43 goal 3) and says what the command
    would say of the file, in its own spelling of the path."""
    import os

    if not path:
        return {}
    from continuity.core.config import CONFIG_FILE, config_verdict

    if os.path.realpath(path) != os.path.realpath(os.path.join(home, CONFIG_FILE)):
        return {}
    return {"config": config_verdict(path)}


def add_search_route(app: Any, live: Any) -> None:
    """Add ``POST /api/search`` to ``app``, searching ``live.store``. A bad value (a mode, a
    role, a time ``Workspace.search`` refuses) answers 400 ``invalid_request`` naming it."""
    import orjson
    from fastapi.responses import JSONResponse, Response

    from continuity.core.errors import InputError
    from continuity.daemon.errors import error_body

    @app.post("/api/search", tags=["search"])
    def search(body: SearchBody) -> Any:
        """Rows of every session matching ``query``, best first: ``continuity search``'s hits
        (``SearchHit.to_dict``), for the CLI's client of a running daemon."""
        from continuity.api.workspace import Workspace

        try:
            hits = Workspace.over(live.store, live.home).search(
                body.query,
                limit=body.limit,
                mode=body.mode,
                harness=body.harness,
                project=body.projects or None,
                since=body.since,
                until=body.until,
                role=body.role,
                tool=body.tool,
                near=body.near,
            )
        except InputError as exc:
            return JSONResponse(
                error_body("invalid_request", str(exc), [{"field": "body", "message": str(exc)}]),
                400,
            )
        if not hits:  # what the command says, so the client need not search again to say it
            from continuity.browse.search import no_match_message

            return Response(
                orjson.dumps(
                    {
                        "hits": [],
                        "no_match": no_match_message(body.query),
                        **config_answer(body.config, live.home),
                    }
                ),
                media_type="application/json",
            )
        config = orjson.dumps(config_answer(body.config, live.home))[1:-1]
        payload = (
            b'{"hits":['
            + b",".join(orjson.dumps(h.to_dict()) for h in hits)
            + b"]"
            + (b"," + config if config else b"")
            + b"}"
        )
        return Response(payload, media_type="application/json")

    @app.post("/api/recall", tags=["search"])
    def recall(body: RecallBody) -> Any:
        """``continuity recall``'s answer (``{"found": RecallResponse.to_dict()}``), ranked
        as ``Workspace.recall`` ranks it from the asker's folder, for the CLI's client."""
        from continuity.retrieval.recall import recall_hybrid
        from continuity.retrieval.settings import retrieval_settings

        try:
            found = recall_hybrid(
                live.store,
                body.query,
                settings=retrieval_settings(live.home),
                project=body.near,
                limit=body.limit,
                expand=body.expand,
                filters={"type": body.type, "tags": []},
            )
        except InputError as exc:
            return JSONResponse(
                error_body("invalid_request", str(exc), [{"field": "body", "message": str(exc)}]),
                400,
            )
        return Response(
            orjson.dumps({"found": found.to_dict(), **config_answer(body.config, live.home)}),
            media_type="application/json",
        )


__all__ = ["MAX_HITS", "RecallBody", "SearchBody", "add_search_route", "config_answer"]
