"""The summarizer a workspace's ``[summarizer]`` settings name (extractive, openai, anthropic).

Split from ``settings`` so that the providers, which read their settings, and the factory,
which imports the providers, do not import each other (issue 11).
"""

from __future__ import annotations

from continuity.continuation.summarize.settings import Provider, SummarizerSettings
from continuity.core.errors import ConfigError


def build(settings: SummarizerSettings):
    """The provider object for ``settings`` (``continuity.continuation.summarize.make_summarizer``
    calls it). Raises ``ConfigError`` naming ``[summarizer] model`` when a model provider has none."""
    if settings.provider is Provider.EXTRACTIVE:
        from continuity.continuation.summarize.extractive import ExtractiveSummarizer

        return ExtractiveSummarizer(max_summary_bytes=settings.max_summary_bytes)
    if not settings.model:
        raise ConfigError(
            f"[summarizer] model: required for provider "
            f'{settings.provider.value!r} (e.g. model = "..." in config.toml or '
            "CONTINUITY_SUMMARIZER__MODEL)"
        )
    if settings.provider is Provider.OPENAI:
        from continuity.continuation.summarize.openai import OpenAISummarizer

        return OpenAISummarizer(settings)
    from continuity.continuation.summarize.anthropic import AnthropicSummarizer

    return AnthropicSummarizer(settings)
