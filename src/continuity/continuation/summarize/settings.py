"""The ``[summarizer]`` section of ``<home>/config.toml`` (env: ``CONTINUITY_SUMMARIZER__<FIELD>``).

```toml
[summarizer]
provider = "openai"                 # extractive (default, offline) | openai | anthropic
model = "gpt-4.1-mini"              # required for openai and anthropic
effort = "low"                      # optional reasoning effort, passed as configured
base_url = "http://127.0.0.1:11434/v1"  # optional: Ollama, llama.cpp, vLLM, a proxy
api_key_env = "OPENAI_API_KEY"      # the NAME of the variable holding the key
timeout = 120                       # seconds per request
max_input_bytes = 400000            # UTF-8 bytes of one request's messages
max_summary_bytes = 24000           # UTF-8 bytes of a summary
```

Seed 002: the model and its effort come from configuration and compaction never changes them.
"""

from __future__ import annotations

import enum
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from continuity.core.config import load_section


class Provider(str, enum.Enum):
    """Summary providers."""

    EXTRACTIVE = "extractive"
    OPENAI = "openai"
    ANTHROPIC = "anthropic"


DEFAULT_KEY_ENV = {Provider.OPENAI: "OPENAI_API_KEY", Provider.ANTHROPIC: "ANTHROPIC_API_KEY"}


class SummarizerSettings(BaseModel):
    """Validated ``[summarizer]`` settings (see the module docstring for each field)."""

    model_config = ConfigDict(extra="forbid")

    provider: Provider = Provider.EXTRACTIVE
    model: str | None = Field(default=None, min_length=1, max_length=200)
    effort: str | None = Field(default=None, pattern=r"^[a-z][a-z_-]{0,19}$")
    base_url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    timeout: float = Field(default=120.0, gt=0, le=3600)
    max_input_bytes: int = Field(default=400_000, ge=16_000, le=50_000_000)
    max_summary_bytes: int = Field(default=24_000, ge=1_000, le=1_000_000)

    @model_validator(mode="after")
    def _room_for_rows(self) -> SummarizerSettings:
        if self.max_input_bytes < 2 * self.max_summary_bytes + 8_000:
            raise ValueError(
                f"max_input_bytes ({self.max_input_bytes}) must be at least "
                f"2 x max_summary_bytes + 8000 ({2 * self.max_summary_bytes + 8000})"
                " so a request holds the previous summary and some rows"
            )
        return self

    def api_key(self) -> str | None:
        """The key read from the variable named by ``api_key_env`` (or the provider's usual
        one); None when unset or empty."""
        name = self.api_key_env or DEFAULT_KEY_ENV.get(self.provider)
        return (os.environ.get(name) or None) if name else None


def load_settings(
    home: str | os.PathLike[str] | Path | None = None, *, provider: str | Provider | None = None
) -> SummarizerSettings:
    """The ``[summarizer]`` settings of the workspace; ``provider`` overrides the configured
    one (the CLI's ``--summarizer``). Raises ``ConfigError`` naming the field and the rule."""
    settings = load_section("summarizer", SummarizerSettings, home)
    if provider is not None:
        settings = settings.model_copy(update={"provider": Provider(provider)})
    return settings
