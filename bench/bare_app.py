"""The baseline of ``bench/hooks.py``'s goal 4: a bare FastAPI app on uvicorn serving the same
routes as the daemon's load mix (hook events, checkpoint reads, recall, health), each handler
parsing its JSON body with pydantic and answering a small JSON object, nothing stored.

Run as ``python bench/bare_app.py PORT``: uvicorn with the daemon's own settings (one process,
``access_log=False``, ``log_config=None``, the same ``limit_concurrency``), on 127.0.0.1.
"""

from __future__ import annotations

import sys
from typing import Any

import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict

app = FastAPI()


class Hook(BaseModel):
    model_config = ConfigDict(extra="allow")
    harness: str
    session_key: str
    project: str | None = None


class Recall(BaseModel):
    query: str
    limit: int = 10


@app.get("/health")
def health() -> dict[str, Any]:
    return {"ok": True}


@app.post("/api/hooks/{event}")
def hook(event: str, body: Hook) -> dict[str, Any]:
    return {"ok": True, "event": event, "session": body.session_key}


@app.get("/api/checkpoints/{key}")
def checkpoints(key: str, limit: int = 5) -> dict[str, Any]:
    return {"session": key, "checkpoints": [], "limit": limit}


@app.post("/api/memory/recall")
def recall(body: Recall) -> dict[str, Any]:
    return {"query": body.query, "results": []}


if __name__ == "__main__":
    from continuity.daemon.server import DaemonSettings  # the daemon's own connection bound

    port = int(sys.argv[1])
    uvicorn.Server(
        uvicorn.Config(
            app,
            host="127.0.0.1",
            port=port,
            log_config=None,
            access_log=False,
            lifespan="on",
            limit_concurrency=DaemonSettings().max_connections,
        )
    ).run()
