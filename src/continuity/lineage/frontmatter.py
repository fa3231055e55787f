"""The file format of a lineage artifact (seed 000, "Canonical Markdown Lineage"): frontmatter
lines, the whole file, its two hashes and their check, and the errors a bad file raises.
``continuity.lineage.artifacts`` names, writes and reads the files and re-exports these names.

**File.** ``---``, one ``key: value`` line per field, ``---``, a blank line, the body, a newline.
Values: ``null``, ``true``/``false``, numbers, JSON-quoted strings (control characters, C1
controls and line separators escaped, so every value is valid YAML on one line), ``[]`` for an
empty list, else ``key:`` followed by ``  - <value>`` lines. The fields are dumped in the order
given, so the same fields always give the same bytes.

**Integrity.** ``content_sha256`` is the body hash of scope ``body-normalized-v1`` (CRLF/CR ->
LF, trailing spaces and tabs cut per line, trailing empty lines dropped, SHA-256 hex of the
UTF-8 result: ``body_hash``). ``frontmatter_sha256`` is the SHA-256 hex of the canonical
frontmatter: every other field re-rendered by ``dump_frontmatter`` in file order, ``---`` lines
included (``frontmatter_hash``). It covers ``content_sha256`` and so the whole file: an edited
``memory_sentence`` is caught like an edited body. A file without it (written before it existed)
fails the check too (``verify_hashes``); the repair is always "delete the file and run
``continuity consolidate`` for its session again".
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from continuity.core.errors import ContinuityError, LineageDamaged
from continuity.core.text import clean

HASH_SCOPE = "body-normalized-v1"
#: The frontmatter field holding ``frontmatter_hash`` (module docstring, "Integrity").
FRONTMATTER_HASH = "frontmatter_sha256"


class ArtifactError(ContinuityError):
    """A lineage artifact could not be written or read."""

    exit_code = 1


class ArtifactCorrupt(ArtifactError, LineageDamaged):
    """An artifact's frontmatter or name is malformed, or its frontmatter or body does not
    match its hash. ``path`` is the damaged file when known."""

    exit_code = 7

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None) -> None:
        super().__init__(message)
        self.path = Path(path) if path is not None else None


# ---------------------------------------------------------------------------- frontmatter lines

_KEY = re.compile(r"^[a-z_][a-z0-9_]*$")
_ESCAPE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff]")


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return orjson.dumps(value).decode()
    if isinstance(value, str):
        text = orjson.dumps(clean(value)).decode()
        return _ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    raise TypeError(
        f"frontmatter value must be null, bool, number or string (got {type(value).__name__})"
    )


def dump_frontmatter(fields: Sequence[tuple[str, Any]]) -> str:
    """The frontmatter block (``---`` lines included, no trailing newline) of ``fields`` in
    the given order. Raises ``ValueError`` for a bad key, ``TypeError`` for a bad value."""
    lines = ["---"]
    for key, value in fields:
        if not _KEY.match(key):
            raise ValueError(f"frontmatter key {key!r}: must match [a-z_][a-z0-9_]*")
        if isinstance(value, (list, tuple)):
            lines.append(f"{key}: []" if not value else f"{key}:")
            lines.extend(f"  - {_scalar(v)}" for v in value)
        else:
            lines.append(f"{key}: {_scalar(value)}")
    lines.append("---")
    return "\n".join(lines)


def _parse_value(raw: str, where: str) -> Any:
    if raw == "[]":
        return []
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise ArtifactCorrupt(
            f"{where}: value {raw[:60]!r} is not null, a boolean, a number or a JSON-quoted string"
        ) from None


def parse_frontmatter(lines: Sequence[str], where: str) -> dict[str, Any]:
    """The fields of frontmatter ``lines`` (between the ``---`` lines, without newlines).
    Raises ``ArtifactCorrupt`` naming ``where`` and the bad line."""
    fields: dict[str, Any] = {}
    current: list[Any] | None = None
    for n, line in enumerate(lines, 2):
        if line.startswith("  - ") and current is not None:
            current.append(_parse_value(line[4:], f"{where}:{n}"))
            continue
        key, sep, rest = line.partition(":")
        if not sep or not _KEY.match(key) or key in fields:
            raise ArtifactCorrupt(f"{where}:{n}: not a 'key: value' line of a new key")
        if rest == "":
            fields[key] = current = []
        elif rest.startswith(" "):
            fields[key] = _parse_value(rest[1:], f"{where}:{n}")
            current = None
        else:
            raise ArtifactCorrupt(f"{where}:{n}: expected a space after {key!r}:")
    return fields


# ---------------------------------------------------------------------------- the whole file


def render_file(fields: Sequence[tuple[str, Any]], body: str) -> str:
    """The whole artifact file: frontmatter, a blank line, the body, a newline."""
    return f"{dump_frontmatter(fields)}\n\n{body}\n"


def split_file(text: str, where: str) -> tuple[list[str], str]:
    """``(frontmatter lines, body)`` of a whole artifact file (``render_file`` undone).
    Raises ``ArtifactCorrupt`` naming ``where`` when a ``---`` line is missing."""
    if not text.startswith("---\n"):
        raise ArtifactCorrupt(f"{where}: does not start with a '---' frontmatter line")
    end = text.find("\n---\n", 3)
    if end < 0:
        raise ArtifactCorrupt(f"{where}: frontmatter has no closing '---' line")
    head = text[4:end].split("\n") if end > 4 else []
    body = text[end + 5 :]
    body = body[1:] if body.startswith("\n") else body
    return head, body[:-1] if body.endswith("\n") else body


def read_fields(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Only the frontmatter of an artifact, read line by line up to its closing ``---``
    (no body read, no hash check: use ``lineage.read_artifact`` before trusting the body).
    Raises ``ArtifactCorrupt`` / ``ArtifactError``."""
    p = Path(path)
    head: list[str] = []
    try:
        with open(p, encoding="utf-8") as fh:
            if fh.readline() != "---\n":
                raise ArtifactCorrupt(f"{p}: does not start with a '---' frontmatter line")
            for line in fh:
                if line == "---\n":
                    return parse_frontmatter(head, str(p))
                head.append(line.rstrip("\n"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"{p}: cannot read: {exc}") from exc
    raise ArtifactCorrupt(f"{p}: frontmatter has no closing '---' line")


# ---------------------------------------------------------------------------- hashes


def body_hash(body: str) -> str:
    """SHA-256 hex of ``body`` normalized by scope ``body-normalized-v1`` (module docstring)."""
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip(" \t") for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def frontmatter_hash(fields: Sequence[tuple[str, Any]]) -> str:
    """SHA-256 hex of the canonical frontmatter of ``fields`` (``dump_frontmatter`` of every
    field but ``frontmatter_sha256``, in the given order, UTF-8): the same for the fields a
    writer seals and for the fields ``parse_frontmatter`` reads back, whatever line ends or
    trailing blanks the file picked up since."""
    canonical = dump_frontmatter([(k, v) for k, v in fields if k != FRONTMATTER_HASH])
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def verify_hashes(p: Path, fields: dict[str, Any], body: str) -> None:
    """Check file ``p``'s ``body`` against its ``content_sha256`` and its ``fields`` against
    its ``frontmatter_sha256`` (module docstring, "Integrity"). Raises ``ArtifactCorrupt``
    (``path`` set) saying which does not match, or that ``frontmatter_sha256`` is absent."""
    if body_hash(body) != fields["content_sha256"]:
        raise ArtifactCorrupt(
            f"{p}: checksum mismatch: the body does not match its "
            "content_sha256 (edited or damaged)",
            p,
        )
    stored = fields.get(FRONTMATTER_HASH)
    if not isinstance(stored, str):
        raise ArtifactCorrupt(
            f"{p}: no {FRONTMATTER_HASH}: its frontmatter cannot be checked "
            "(written by an older version, or the line was removed)",
            p,
        )
    if frontmatter_hash(list(fields.items())) != stored:
        raise ArtifactCorrupt(
            f"{p}: frontmatter mismatch: a field no longer matches its "
            f"{FRONTMATTER_HASH} (edited or damaged)",
            p,
        )
