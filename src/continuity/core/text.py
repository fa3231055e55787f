"""Text helpers every layer may use: UTF-8 cleaning, byte measures and character-safe cuts.

Bug vectors B43/B45: text never holds a lone surrogate (it would make every later request
invalid JSON), and no cut ever falls inside a character. Sizes here are UTF-8 bytes.
"""

from __future__ import annotations

import re
import unicodedata

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any

#: The patterns of this module are compiled on first use (``re``'s cache): the read commands
#: import it and seldom meet a lone surrogate, a cut's marker or non-ASCII JSON (issue 43 goal 3).
_SURROGATE = "[\ud800-\udfff]"

REPLACEMENT = "\ufffd"


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``n`` and ``word`` as a message says them: ``1 file``, ``0 files``, ``2 files``
    (``plural``: when it is not ``word`` + "s", e.g. ``duplicate`` -> ``duplicates``)."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


#: Characters of a query a message repeats: a longer one is cut (fresh-user review: a
#: 10,000-character query came back whole in "no row matches ...").
ECHO_CHARS = 200


def echoed(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` as a message repeats it: ``clean``, quoted as Python's ``repr`` quotes it
    and, when longer than ``limit`` characters, cut there with ``… (N characters)`` after
    the quote (N: the whole text's length in characters)."""
    if len(text) <= limit:
        return repr(clean(text))
    return f"{clean(text[:limit])!r}… ({len(text):,} characters)"


def clean(text: str) -> str:
    """Return ``text`` with every lone surrogate replaced by U+FFFD (B43).

    JSON such as ``"\\ud83c"`` decodes to a lone surrogate, which cannot be encoded as UTF-8.
    Valid text is returned unchanged (same object).
    """
    if text.isascii():
        return text
    try:  # issue 17: the UTF-8 codec finds a surrogate about 5x faster than the pattern
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return re.sub(_SURROGATE, REPLACEMENT, text)


def utf8_len(text: str) -> int:
    """UTF-8 byte length of ``text`` (lone surrogates count as the 3-byte U+FFFD)."""
    if text.isascii():
        return len(text)
    return len(clean(text).encode("utf-8"))


def object_at(obj: Any, key: str) -> dict[str, Any]:
    """``obj[key]`` when ``obj`` is a dict and that value a JSON object (a dict), else ``{}``:
    for reading a nested object of a file whose shape is not ours (a harness's record, a
    settings file) without a type check at every step."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, dict) else {}


#: ``orjson``, imported at the first ``json_bytes`` (issue 43 goal 3: it imports
#: ``dataclasses``, ``inspect``, ``uuid`` and ``json``, about 10 ms, which the daemon's search
#: client never needs)
_orjson: Any = None


def _load_orjson() -> Any:
    global _orjson
    import orjson

    _orjson = orjson
    return orjson


def json_bytes(value: Any) -> bytes:
    """Compact JSON (no spaces, non-ASCII not escaped) as UTF-8 bytes: the unit every budget in
    continuity is measured in (spec/continuation.md, "Measuring bytes").

    Values orjson refuses (integers beyond 64 bits, lone surrogates in strings: both occur in
    harness JSON) are encoded by the standard library after replacing lone surrogates with
    U+FFFD, so encoding never fails on parsed input.
    """
    oj = _orjson or _load_orjson()
    try:
        return oj.dumps(value)
    except (TypeError, oj.JSONEncodeError):
        import json

        try:
            return json.dumps(_deep_clean(value), ensure_ascii=False, separators=(",", ":")).encode(
                "utf-8"
            )
        except RecursionError:
            raise ValueError("value nested too deep to encode as JSON") from None


def _deep_clean(value: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(str(k)): _deep_clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_deep_clean(v) for v in value]
    return value


def json_len(value: Any) -> int:
    """``len(json_bytes(value))``."""
    return len(json_bytes(value))


def cut_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` whose UTF-8 encoding fits ``max_bytes``, never cutting a
    character. ``max_bytes`` <= 0 gives ``""``."""
    if max_bytes <= 0:
        return ""
    data = clean(text).encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", errors="ignore")


def cut_utf8_tail(text: str, max_bytes: int) -> str:
    """The longest suffix of ``text`` whose UTF-8 encoding fits ``max_bytes``, never cutting a
    character."""
    if max_bytes <= 0:
        return ""
    data = clean(text).encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[len(data) - max_bytes :].decode("utf-8", errors="ignore")


def omitted_marker(n_bytes: int) -> str:
    """The explicit marker for elided text (B20): ``[… N bytes omitted …]``."""
    return f"[… {n_bytes} bytes omitted …]"


_MARKER = r"\n?\[… (\d{1,15}) bytes omitted …\]\n?"  # with the cut's own LFs


def clip_middle(text: str, max_bytes: int) -> str:
    """Keep the head and the tail of ``text`` within ``max_bytes`` UTF-8 bytes, with an explicit
    ``[… N bytes omitted …]`` marker between them (B20: the error on the last line survives).

    Text that fits is returned unchanged. The result never exceeds ``max_bytes`` and never
    splits a character; with a budget too small for any marker, the head alone is kept. ``N``
    counts bytes of the original: a marker of an earlier cut inside the omitted middle adds
    the bytes it stood for (a 2 MB request cut to 8 KB, then to 300 bytes, says about 2 MB).
    """
    total = utf8_len(text)
    if total <= max_bytes:
        return text
    carried = sum(int(n) for n in re.findall(_MARKER, text))  # at most this much more
    # The marker's own length depends on N; size it for the worst case.
    room = max_bytes - utf8_len(omitted_marker(total + carried)) - 2
    if room <= 0:
        return cut_utf8(text, max_bytes)
    head = cut_utf8(text, room - room // 3)
    tail = cut_utf8_tail(text, room // 3)
    omitted = total - utf8_len(head) - utf8_len(tail)
    if carried:
        middle = text[len(head) : len(text) - len(tail)]
        omitted += sum(int(m.group(1)) - utf8_len(m.group(0)) for m in re.finditer(_MARKER, middle))
    return f"{head}\n{omitted_marker(omitted)}\n{tail}"


def json_type_name(value: object) -> str:
    """The JSON name of a parsed JSON value's type, for messages about a record: ``object``,
    ``array``, ``string``, ``number``, ``boolean`` or ``null`` (a Python type name such as
    ``dict`` or ``NoneType`` means nothing to someone reading the file; fresh-user review)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


#: Control characters shown as visible escapes in terminal output: C0 but tab and newline
#: (CR as ``\\r``, the others as ``\\xNN``), DEL and C1 (ESC starts the ANSI sequences that
#: recolour a terminal, CR overwrites a line), and the bidi controls (``BIDI_CONTROLS``).
#: ``cli.render.shown`` uses it as it is.
CONTROL_ESCAPES = {
    c: f"\\x{c:02x}" for c in [*range(0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)]
}
CONTROL_ESCAPES[0x0D] = "\\r"
#: The bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): text
#: after U+202E is drawn right to left, so a file name or command can read as another
#: ("Trojan Source", CVE-2021-42574). Shown as ``\\u202e`` like the controls (issue 45 item 6).
BIDI_CONTROLS = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
CONTROL_ESCAPES.update({c: f"\\u{c:04x}" for c in BIDI_CONTROLS})
#: ``CONTROL_ESCAPES`` and newline, tab and the line and paragraph separators, for a value
#: that must stay on one line or in one tab-separated field.
_ONE_LINE = {**CONTROL_ESCAPES, 0x0A: "\\n", 0x09: "\\t", 0x2028: "\\u2028", 0x2029: "\\u2029"}


#: What a JSON encoder writes raw but a terminal must not get raw: DEL, C1 and the bidi
#: controls (C0 is escaped by JSON itself), each as its ``\\uXXXX`` escape (issue 45 item 6).
_JSON_TERMINAL = {c: f"\\u{c:04x}" for c in [0x7F, *range(0x80, 0xA0), *BIDI_CONTROLS]}
_JSON_TERMINAL_BYTES = {chr(c).encode("utf-8"): f"\\u{c:04x}".encode() for c in _JSON_TERMINAL}
_JSON_TERMINAL_PATTERN = b"|".join(re.escape(k) for k in _JSON_TERMINAL_BYTES)


def json_terminal_safe(text: str) -> str:
    """JSON text ``text`` with DEL, every C1 control and the bidi controls written as
    ``\\u007f``, ``\\u009b``, ``\\u202e``: the same JSON value once parsed (they can only
    occur inside strings), but nothing in it can drive or reorder a terminal it is printed
    to (issue 45 item 6; JSON encoders escape only C0)."""
    return text.translate(_JSON_TERMINAL)


def json_terminal_safe_bytes(data: bytes) -> bytes:
    """``json_terminal_safe`` for UTF-8 encoded JSON (``orjson.dumps`` output)."""
    if data.isascii():
        return data
    return re.sub(_JSON_TERMINAL_PATTERN, lambda m: _JSON_TERMINAL_BYTES[m.group()], data)


def one_line(text: str) -> str:
    """``text`` with every control character shown as a visible escape (``\\n``, ``\\t``,
    ``\\r``, ``\\x1b``; the line and paragraph separators U+2028/U+2029 as ``\\u2028``):
    a file name holding a newline stays one output line, a project holding a tab one
    tab-separated field, and nothing in it moves the cursor or changes colours (fresh-user
    review: ``imported /tmp/a<newline>b.jsonl`` split the line)."""
    return text.translate(_ONE_LINE)


def safe_cut(text: str, limit: int) -> str:
    """The first ``limit`` characters (code points) of ``text``, backing off so that no
    combining mark, variation selector, emoji modifier or zero-width joiner sequence is split
    (seed 000's budgets are characters; moved here from ``checkpoints.capture`` so the flush
    queue can render a merged digest, issue 39)."""
    if len(text) <= limit:
        return text
    k = max(limit, 0)
    while k > 0 and (_joins_previous(text[k]) or text[k - 1] == "\u200d"):
        k -= 1
    return text[:k]


def _joins_previous(ch: str) -> bool:
    code = ord(ch)
    return (
        unicodedata.combining(ch) != 0
        or 0xFE00 <= code <= 0xFE0F
        or code == 0x200D
        or 0x1F3FB <= code <= 0x1F3FF
        or 0xE0020 <= code <= 0xE007F
    )
