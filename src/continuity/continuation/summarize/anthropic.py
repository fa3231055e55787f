"""The ``anthropic`` provider: the official SDK's Messages API (``AsyncAnthropic``).

One ``messages.create`` per request, ``max_retries=0`` (a failure is a receipt), ``effort``
passed as ``output_config.effort`` when configured. ``base_url`` points the SDK at a proxy or a
compatible server. The request is aborted (the SDK's httpx connection closed) on the cancel
signal or the deadline (``continuity.continuation.summarize.cancel``). Stop reasons: ``max_tokens`` is a
truncation; ``refusal`` and ``model_context_window_exceeded`` are provider failures.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from continuity.continuation.summarize import ProviderError, ProviderReply, SummaryRequest
from continuity.continuation.summarize.cancel import run_cancellable
from continuity.continuation.summarize.settings import SummarizerSettings

_REFUSALS = {"refusal", "model_context_window_exceeded"}


class AnthropicSummarizer:
    """Anthropic's Messages API as a ``Summarizer``."""

    name = "anthropic"

    def __init__(self, settings: SummarizerSettings) -> None:
        self.settings = settings
        self.model = settings.model or ""
        self.max_input_bytes: int | None = settings.max_input_bytes
        self.max_summary_bytes = settings.max_summary_bytes
        #: Less time than this before the deadline is not worth a request.
        self.min_seconds = min(5.0, settings.timeout)

    def params(self, request: SummaryRequest) -> dict[str, Any]:
        """The keyword arguments of ``messages.create``."""
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_output_tokens,
            "system": request.system,
            "messages": [{"role": "user", "content": request.prompt}],
        }
        if self.settings.effort:
            params["output_config"] = {"effort": self.settings.effort}
        return params

    def generate(
        self, request: SummaryRequest, *, cancel: threading.Event, deadline: float
    ) -> ProviderReply:
        """One Messages API call (see the module docstring). Raises ``ProviderError`` for an
        API error, a timeout, a connection failure or missing credentials, and ``Cancelled``
        on the signal or the deadline."""
        import anthropic

        key = self.settings.api_key()
        if key is None and self.settings.base_url is None:
            name = self.settings.api_key_env or "ANTHROPIC_API_KEY"
            raise ProviderError(f"no API key: set {name} (B51: refuse, never guess)")
        timeout = max(0.001, min(self.settings.timeout, deadline - time.monotonic()))
        params = self.params(request)

        async def call() -> ProviderReply:
            client = anthropic.AsyncAnthropic(
                api_key=key or "unused",
                base_url=self.settings.base_url,
                timeout=timeout,
                max_retries=0,
            )
            try:
                message = await client.messages.create(**params)
            except anthropic.APITimeoutError as exc:
                raise ProviderError(f"timed out after {timeout:.1f} s") from exc
            except anthropic.APIStatusError as exc:
                raise ProviderError(f"HTTP {exc.status_code}") from exc
            except anthropic.AnthropicError as exc:
                raise ProviderError(f"request failed: {exc.__class__.__name__}") from exc
            finally:
                await client.close()
            text = "".join(
                getattr(b, "text", "") for b in message.content if getattr(b, "type", "") == "text"
            )
            if message.stop_reason == "max_tokens":
                return ProviderReply(text, "length")
            if message.stop_reason in _REFUSALS:
                return ProviderReply(text, "refusal")
            return ProviderReply(text, "end")

        return run_cancellable(call, cancel=cancel, deadline=deadline)
