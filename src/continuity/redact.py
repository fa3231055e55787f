"""Secret redaction: the one funnel every derived text passes through before it is stored or
served (digests, remembers, prompt snippets, memory queries, summaries, continuation text).

``redact(text)`` replaces each secret with a typed marker ``[REDACTED:<kind>]``, the whole
contiguous token (B33), and leaves ordinary text byte-identical. Raw transcripts stay lossless;
what flows outward is redacted (B29).
"""

from __future__ import annotations

import re

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("private", re.compile(r"<private>.*?</private>", re.S)),
    ("bearer-token", re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/=-]{16,}")),
    ("anthropic-key", re.compile(r"sk-ant-[A-Za-z0-9_-]{8,}")),
    ("openai-key", re.compile(r"sk-(?:proj-)?[A-Za-z0-9_-]{20,}")),
    ("aws-access-key", re.compile(r"(?:AKIA|ASIA)[A-Z0-9]{16}[A-Za-z0-9_]*")),
    ("github-token", re.compile(r"gh[pousr]_[A-Za-z0-9_]{20,}")),
]


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``."""
    for kind, pattern in _PATTERNS:
        text = pattern.sub(f"[REDACTED:{kind}]", text)
    return text
