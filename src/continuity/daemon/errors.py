"""The REST API's one error shape (issue 20), shared by the app's exception handlers, its
guard middleware (``daemon.server``) and the routes that answer an error themselves."""

from __future__ import annotations

from typing import Any


def error_body(
    code: str, detail: str, fields: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    """``{"error": code, "detail": one line, "fields": [{"field", "message"}...]}``, the body
    of every 4xx and 5xx the daemon answers: ``code`` a snake_case word (``invalid_request``,
    ``unknown_session``, ``unauthorized``, ``not_found``...), ``fields`` empty when no single
    field is at fault."""
    return {"error": code, "detail": detail, "fields": fields or []}
