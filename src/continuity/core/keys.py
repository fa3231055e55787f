"""The one rule for session keys, used by every way a session comes in (issue 22, item 4).

A harness names its session (Claude Code's and Codex's ``session_id``, pi's session id: UUIDs
in practice, ``formats.md``); ``continuity import``, the daemon's hooks and its HTTP API all turn
that name into the stored session key with ``session_key``, so the same session reaches the same
key whichever way it came, and no event is ever refused for the shape of its key.

The rule: a key is one printable line of 1..``MAX_KEY_CHARS`` characters (the store's key
columns). Control characters (C0, DEL, C1), lone surrogates, line separators and every other
non-printable character become spaces, runs of whitespace one space, ends trimmed; a key still
longer than ``MAX_KEY_CHARS`` keeps its head plus ``~`` and 16 hex digits of the SHA-256 of the
whole; an empty result becomes ``session-`` and 12 hex digits of the raw key's SHA-256. Keys the
harnesses produce (printable, short) are unchanged, and the rule is idempotent.
"""

from __future__ import annotations

import hashlib

#: Session keys are at most this many characters (the store's key columns).
MAX_KEY_CHARS = 200


def session_key(raw: str) -> str:
    """The stored session key for a harness's session name ``raw`` (module docstring): 1..200
    characters, printable, one line, no surrounding spaces. Never raises; deterministic."""
    if (
        len(raw) <= MAX_KEY_CHARS
        and raw.isprintable()
        and raw == raw.strip()
        and raw
        and "  " not in raw
    ):
        return raw  # the common case (a UUID), unchanged
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in raw).split())
    if not flat:
        digest = hashlib.sha256(raw.encode("utf-8", "replace")).hexdigest()[:12]
        return "session-" + digest
    if len(flat) > MAX_KEY_CHARS:
        digest = hashlib.sha256(flat.encode("utf-8", "replace")).hexdigest()[:16]
        flat = f"{flat[: MAX_KEY_CHARS - 17]}~{digest}"
    return flat
