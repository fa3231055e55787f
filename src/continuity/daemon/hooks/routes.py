"""The daemon's HTTP routes (an edge: parse, one call, answer). The call goes to
``LiveCapture``, to a ``continuity.Workspace`` over the daemon's store (``Workspace.over``:
the continuation and a session's checkpoints), or to the library below it where no Workspace
method gives the route's answer (each such route says why). ``continuity.daemon.server.
create_app`` adds them; the module docstring of ``continuity.daemon.server`` lists them. Sync
endpoints run in the server's thread pool."""

# No ``from __future__ import annotations``: FastAPI reads these annotations at runtime.

import os
from typing import Any, Literal

import orjson
from fastapi import FastAPI, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from continuity.checkpoints import checkpoint_dict
from continuity.core.config import FOLLOW_UP_BUDGET_BYTES
from continuity.core.keys import session_key as stored_key
from continuity.daemon.errors import error_body
from continuity.daemon.hooks.adapters import AdapterError
from continuity.daemon.hooks.models import (
    BODIES,
    CheckpointBody,
    ContinuationRefusedBody,
    ContinuationSummaryBody,
)
from continuity.transcripts.memories import (
    RecallRequest,
    RememberRequest,
    recall_request,
    remember_request,
)

HarnessName = Literal[
    "claude-code", "codex", "pi", "opencode", "gemini-cli", "qwen-code", "copilot-cli"
]
EventName = Literal[
    "session-start",
    "user-prompt-submit",
    "pre-compaction",
    "post-compaction",
    "stop",
    "session-end",
    "pre-tool-use",
]
#: Events whose work continues after the answer (202 Accepted).
ACCEPTED = ("stop", "session-end")
#: How often a running continuation summary looks whether its client went away (seconds).
DISCONNECT_POLL_SECONDS = 0.1


def add_routes(app: FastAPI, live: Any) -> None:
    """Add every route of the daemon to ``app``, serving ``live`` (a ``LiveCapture``)."""

    @app.get("/health", tags=["daemon"])
    def health() -> dict:
        """Liveness, the package version and queue figures (no token needed)."""
        from continuity.core.version import package_version

        return {"status": "ok", "version": package_version(), "pid": os.getpid(), **live.health()}

    for event, model in BODIES.items():
        _hook_route(app, live, event, model)

    @app.post(
        "/api/harness/{harness}/{event}",
        tags=["hooks"],
        response_class=Response,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": {"type": "object"}}},
            }
        },
    )
    async def harness_hook(harness: HarnessName, event: EventName, request: Request) -> Response:
        """A harness's raw hook stdin (what ``continuity hook`` forwards); answers the exact
        stdout that harness expects (empty when it expects nothing)."""
        raw = await request.body()
        # Only the parse is the caller's fault (400: the hook sets the event aside for good);
        # an error while handling a valid body is ours (500: the hook spools it for replay),
        # e.g. a damaged stored row met while building the recovery context.
        try:
            body = live.native_body(
                harness,
                event,
                raw,
                event_id=request.headers.get("x-continuity-event-id"),
                at=request.headers.get("x-continuity-event-at"),
            )
        except AdapterError as exc:
            return JSONResponse(
                error_body("invalid_request", str(exc), [{"field": "body", "message": str(exc)}]),
                400,
            )
        except (RecursionError, ValueError, UnicodeError) as exc:  # ValidationError too
            detail = f"body: {exc.__class__.__name__}: {exc}"
            return JSONResponse(
                error_body(
                    "invalid_request",
                    detail,
                    [{"field": "body", "message": f"{exc.__class__.__name__}: {exc}"}],
                ),
                400,
            )
        out = await run_in_threadpool(live.handle_native_body, harness, event, body)
        return Response(out, status_code=200, media_type="application/json")

    @app.post("/api/continuation/summary", tags=["continuation"])
    async def continuation_summary(body: ContinuationSummaryBody, request: Request) -> dict:
        """The summary of a harness's own continuation checkpoint (issue 14, pi's extension
        after a settled turn): the working view in ``entries`` summarized by the configured
        summarizer within ``[daemon] stop_seconds``. Answers ``status`` ``ok`` with the
        ``summary``, the ``run_id`` and the ``covers`` range, or ``refused`` with a closed
        ``reason`` once the refusal receipt is recorded. A client that goes away (pi aborted
        the compaction) cancels the summary, and the refusal is recorded as ``cancelled``."""
        import asyncio
        import threading

        cancel = threading.Event()
        task = asyncio.ensure_future(run_in_threadpool(live.continuation_summary, body, cancel))
        while not task.done():
            await asyncio.wait({task}, timeout=DISCONNECT_POLL_SECONDS)
            if (
                not task.done()
                and not cancel.is_set()
                and (live.closing.is_set() or await request.is_disconnected())
            ):
                cancel.set()
        return task.result()

    @app.post("/api/continuation/refused", tags=["continuation"])
    def continuation_refused(body: ContinuationRefusedBody) -> dict:
        """Record a continuation checkpoint a harness refused without the daemon's answer
        (``continuation_checkpoint_refused``: run id and closed reason, once per run)."""
        return live.continuation_refused(body)

    @app.post("/api/memory/remember", tags=["memory"])
    def remember(body: RememberRequest) -> dict:
        """Remember a memory (redacted, stored once); with ``transcript`` and ``source_id``
        also the session's transcript row. A live session's next digest lists it."""
        # Not Workspace.remember: the body's transcript, agent_id, harness and project (the
        # transcript row written with the memory) are no parameters of it.
        done = remember_request(live.store, body)
        live.record_remember(body.source_id, done.content)
        return done.model_dump(mode="json")

    @app.post("/api/memory/recall", tags=["memory"])
    def recall(
        body: RecallRequest, session_key: str | None = Query(None, max_length=100_000)
    ) -> dict:
        """Memories matching ``query``, best first; ``expand`` joins their transcripts.
        ``session_key`` (query string) counts the query in that live session's digest."""
        from continuity.retrieval.recall import hybrid_ranker
        from continuity.retrieval.settings import retrieval_settings

        # Not Workspace.recall: the body's source_id, importance_min, since/until, agent_id,
        # raw_sources and byte bounds are no parameters of it, and it boosts the current
        # folder's memories where this route boosts none.
        found = recall_request(
            live.store,
            body,  # issue 40: ranked by hybrid_memories
            ranker=hybrid_ranker(retrieval_settings(live.home)),
        )
        live.record_query(stored_key(session_key) if session_key else None, body.query)
        return found.model_dump(mode="json")

    @app.get("/api/checkpoints", tags=["checkpoints"])
    def project_checkpoints(
        project: str = Query(..., min_length=1, max_length=4096),
        limit: int = Query(10, ge=1, le=100),
    ) -> dict:
        """The newest checkpoints of any session of ``project``, newest first."""
        from continuity.daemon.hooks.sessions import project_checkpoints as newest

        # Not the Workspace: it lists one session's checkpoints, never a folder's.
        rows = [checkpoint_dict(cp) for cp in newest(live.store, project, limit=limit)]
        return {"checkpoints": rows, "count": len(rows)}

    @app.post("/api/checkpoints", tags=["checkpoints"], status_code=201)
    def write_checkpoint(body: CheckpointBody) -> dict:
        """An ``agent`` or ``explicit`` checkpoint now, with the caller's reason."""
        return checkpoint_dict(live.checkpoint(body))

    @app.get("/api/checkpoints/{session_key:path}", tags=["checkpoints"])
    def session_checkpoints(session_key: str, limit: int = Query(50, ge=1, le=500)) -> dict:
        """The session's newest checkpoints, newest first; ``damaged`` names the rows among
        them that cannot be read (skipped, issue 15: never a 500 for the rest).
        ``session_key`` may be a unique key prefix, as on the command line; 404 / 409 when
        it names no session (live or stored) / several."""
        session_key = stored_key(session_key)
        if session_key in live.sessions:
            # A live session's key: the Workspace knows no live sessions, and this one may
            # have no imported row yet, where its empty list is the answer (not a 404).
            good, damaged = live.store.checkpoint_page(session_key, limit=limit)
            listed = {
                "session": session_key,
                "checkpoints": [checkpoint_dict(cp) for cp in good],
                "damaged": [d.to_dict() for d in damaged],
            }
        else:  # SessionNotFound: 404, AmbiguousSession: 409
            listed = _workspace(live).checkpoints(session_key, limit=limit).to_dict()
        rows = listed["checkpoints"][::-1]  # oldest first: this route answers newest first
        return {
            "session": listed["session"],
            "checkpoints": rows,
            "count": len(rows),
            "damaged": listed["damaged"][::-1],
        }

    @app.get("/api/sessions/current", tags=["sessions"])
    def current_session(
        project: str = Query(..., min_length=1, max_length=4096),
        harness: HarnessName | None = None,
        stored: bool = True,
    ) -> dict:
        """The most recently active live session of ``project`` (and ``harness``), else the
        most recently active stored session of that folder (no ``harness`` given, ``stored``
        true); 404 when there is none (``NoProjectSession``)."""
        from continuity.core.errors import NoProjectSession

        # Live sessions are the daemon's: the Workspace knows only stored ones.
        key = live.current_session(project, harness, stored=stored)
        if key is None:
            raise NoProjectSession(project)
        return {"session_key": key}

    @app.get("/api/sessions/{session_key:path}/continuation", tags=["sessions"])
    def continuation(
        session_key: str, budget_bytes: int = Query(FOLLOW_UP_BUDGET_BYTES, ge=1, le=100_000_000)
    ) -> dict:
        """The bounded continuation of the session (the ``continue --json`` contract), after
        its transcript file was imported; ``policy`` is the last settled-turn outcome.
        ``session_key`` may be a unique key prefix, as on the command line (404 / 409 when it
        names no session / several)."""
        session_key = stored_key(session_key)
        # A live session's key names its imported session only once its queued imports ran
        # (``store_key``), and ``policy`` is the daemon's settled-turn outcome: neither is the
        # Workspace's. The view itself is ``Workspace.continuation``'s.
        key = live.store_key(session_key)
        view = _workspace(live).continuation(key, budget_bytes=budget_bytes).to_dict()
        info = live.sessions.get(session_key) or live.sessions.get(key)
        view["policy"] = info.last_outcome if info is not None else None
        return view


def _workspace(live: Any) -> Any:
    """A ``continuity.Workspace`` over the daemon's one shared store (``Workspace.over``: it
    leaves the store open, and reading takes none of the writers' ``_db_lock``)."""
    from continuity.api.workspace import Workspace

    return Workspace.over(live.store, live.home)


def _hook_route(app: FastAPI, live: Any, event: str, model: type) -> None:
    status = 202 if event in ACCEPTED else 200

    def endpoint(body: Any) -> Response:
        return Response(
            orjson.dumps(live.handle(event, body)),
            status_code=status,
            media_type="application/json",
        )

    endpoint.__annotations__ = {"body": model, "return": Response}
    endpoint.__name__ = "hook_" + event.replace("-", "_")
    endpoint.__doc__ = (model.__doc__ or "").split("\n\n")[0]
    app.post(f"/api/hooks/{event}", tags=["hooks"], status_code=status, response_model=None)(
        endpoint
    )
