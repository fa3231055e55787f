"""The ``[retrieval]`` section of ``config.toml`` (issue 40): how search ranks, which local
embedding model it uses, and what recall at the point of action injects.

Every field has a ``CONTINUITY_RETRIEVAL__<FIELD>`` override (``core.config.load_section``).
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from continuity.core.config import load_section

#: issue 40: recall at the point of action injects at most this many characters per prompt.
AT_ACTION_CHARS = 1_200


class RetrievalSettings(BaseModel):
    """``[retrieval]``: ``semantic`` ("auto": vectors when the ``continuity[semantic]`` extra
    is installed, words otherwise; "off": words only), ``model`` (``embedder.MODELS`` key),
    ``dim`` (leading dimensions kept of the model's vectors, a Matryoshka cut: fewer is
    faster, see ``bench/retrieval.py``), ``batch_rows`` (rows embedded per batch: bounds the
    memory of embedding), ``at_action`` (recall at the point of action on prompts and before
    edits and shell commands), ``at_action_chars`` (its budget in characters, issue 40:
    1,200), ``at_action_min_score`` (added to the cosine floors of ``at_action``'s relevance
    rule: higher is stricter; 0 keeps the measured rule)."""

    model_config = ConfigDict(extra="forbid")

    semantic: Literal["auto", "off"] = "auto"
    model: str = "wordllama-l2-supercat"
    dim: int = Field(default=256, ge=16, le=4096)
    batch_rows: int = Field(default=256, ge=1, le=10_000)
    at_action: bool = True
    at_action_chars: int = Field(default=AT_ACTION_CHARS, ge=0, le=20_000)
    at_action_min_score: float = Field(default=0.0, ge=0.0, le=1.0)


def retrieval_settings(home: str | os.PathLike[str] | None = None) -> RetrievalSettings:
    """``[retrieval]`` of the workspace's config (``ConfigError`` names a bad field)."""
    return load_section("retrieval", RetrievalSettings, home)
