"""The one rule for session keys (issue 22, item 4): ``continuity.core.keys.session_key``."""

from __future__ import annotations

from hypothesis import given, strategies as st

from continuity.core.keys import MAX_KEY_CHARS, session_key


def test_keys_harness_keys_are_unchanged() -> None:
    """What the harnesses produce (UUIDs, pi's ids, a subagent's ``key/stem``) stays as is."""
    for key in (
        "5b7c2e90-aaaa-4b1e-9d41-1f2e3d4c5b6a",
        "019a2b3c-codex-rollout",
        "parent-key/agent-a1b2c3",
        "k",
    ):
        assert session_key(key) == key


def test_keys_long_and_control_character_keys_become_one_printable_line() -> None:
    """A 300-character key keeps its first 183 characters, then ``~`` and 16 hex digits; control
    characters and line breaks become single spaces; nothing is refused."""
    long = session_key("k" * 300)
    assert len(long) == MAX_KEY_CHARS and long.startswith("k" * 183 + "~")
    assert long[183:] == "~17b16d8ef494060f"  # sha256 of the whole key, 16 hex digits
    assert session_key("a\nb\x00c\x7f\u2028d ") == "a b c d"
    assert session_key("\x00\x01").startswith("session-") and len(session_key("\x00")) == 20


@given(st.text(max_size=400))
def test_keys_rule_is_total_bounded_printable_and_idempotent(raw: str) -> None:
    """Every string becomes a key of 1..200 printable characters on one line, without
    surrounding spaces, and applying the rule again changes nothing."""
    key = session_key(raw)
    assert 1 <= len(key) <= MAX_KEY_CHARS
    assert key.isprintable() and key == key.strip()
    assert session_key(key) == key
