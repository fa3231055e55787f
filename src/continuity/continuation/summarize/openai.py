"""The ``openai`` provider: any OpenAI-compatible chat completions endpoint, over httpx.

OpenAI itself, or a local server (Ollama, llama.cpp, vLLM) through ``base_url``. One
``POST {base_url}/chat/completions`` per request, no retries (a failure is a receipt, and the
next settled turn may try again), no streaming. ``effort`` is sent as ``reasoning_effort`` with
``max_completion_tokens`` (reasoning models reject ``max_tokens``); without it ``max_tokens`` is
sent, which every compatible server understands. The request is aborted, connection closed, on
the cancel signal or the deadline (``continuity.continuation.summarize.cancel``).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx

from continuity.continuation.summarize import ProviderError, ProviderReply, SummaryRequest
from continuity.continuation.summarize.cancel import run_cancellable
from continuity.continuation.summarize.settings import SummarizerSettings

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Reasoning models spend output tokens on reasoning too: room for it beside the summary.
REASONING_FACTOR = 4


class OpenAISummarizer:
    """An OpenAI-compatible chat endpoint as a ``Summarizer``."""

    name = "openai"

    def __init__(self, settings: SummarizerSettings) -> None:
        self.settings = settings
        self.model = settings.model or ""
        self.base_url = (settings.base_url or DEFAULT_BASE_URL).rstrip("/")
        self.max_input_bytes: int | None = settings.max_input_bytes
        self.max_summary_bytes = settings.max_summary_bytes
        #: Less time than this before the deadline is not worth a request.
        self.min_seconds = min(5.0, settings.timeout)

    def body(self, request: SummaryRequest) -> dict[str, Any]:
        """The JSON body of the chat completion request."""
        body: dict[str, Any] = {
            "model": self.model,
            "stream": False,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.prompt},
            ],
        }
        if self.settings.effort:
            body["reasoning_effort"] = self.settings.effort
            body["max_completion_tokens"] = request.max_output_tokens * REASONING_FACTOR
        else:
            body["max_tokens"] = request.max_output_tokens
        return body

    def _headers(self) -> dict[str, str]:
        key = self.settings.api_key()
        if key is None and self.settings.base_url is None:
            raise ProviderError(
                f"no API key: set {self.settings.api_key_env or 'OPENAI_API_KEY'}"
                " or a base_url of a local server (B51: refuse, never guess)"
            )
        return {"Authorization": f"Bearer {key}"} if key else {}

    def generate(
        self, request: SummaryRequest, *, cancel: threading.Event, deadline: float
    ) -> ProviderReply:
        """One chat completion (see the module docstring). Raises ``ProviderError`` for an
        HTTP error status, a timeout, a connection failure or a malformed reply, and
        ``Cancelled`` on the signal or the deadline."""
        headers = self._headers()
        body = self.body(request)
        timeout = max(0.001, min(self.settings.timeout, deadline - time.monotonic()))

        async def call() -> ProviderReply:
            async with httpx.AsyncClient(timeout=httpx.Timeout(timeout)) as client:
                try:
                    response = await client.post(
                        f"{self.base_url}/chat/completions", json=body, headers=headers
                    )
                except httpx.TimeoutException as exc:
                    raise ProviderError(f"timed out after {timeout:.1f} s") from exc
                except httpx.HTTPError as exc:
                    raise ProviderError(f"request failed: {exc.__class__.__name__}") from exc
            return parse(response)

        return run_cancellable(call, cancel=cancel, deadline=deadline)


def parse(response: httpx.Response) -> ProviderReply:
    """The reply of a chat completion response. Raises ``ProviderError`` for an error status
    (413 included: the request was too large) or a body without a first choice."""
    if response.status_code >= 400:
        raise ProviderError(f"HTTP {response.status_code}")
    try:
        choice = response.json()["choices"][0]
        message = choice.get("message") or {}
        text = message.get("content") or ""
        finish = choice.get("finish_reason") or "stop"
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ProviderError("malformed chat completion response") from exc
    if not isinstance(text, str):
        raise ProviderError("chat completion content is not text")
    if finish == "length":
        return ProviderReply(text, "length")
    if finish == "content_filter" or message.get("refusal"):
        return ProviderReply(text, "refusal")
    return ProviderReply(text, "end")
