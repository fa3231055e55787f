"""Canonical markdown lineage (seed 000, "Canonical Markdown Lineage and MEMORY.md Projection"):
immutable per-session artifacts in ``<workspace>/memory/`` and one mutable manifest per session.
The memory sentence (quality gate and deterministic fallback) and ``one_line`` live in
``continuity.lineage.sentence``; their names stay importable from here.

**Names.** ``<captured_at>--<token>--<kind>.md`` where ``captured_at`` is the capture time in
UTC as ``2026-09-01T10-40-00.000Z`` (ISO 8601 with ``:`` made ``-``, filename-safe everywhere),
``token`` is ``session_token(agent_id, session_key)`` (16 characters of lowercase base32) and
``kind`` one of ``transcript``, ``summary``, ``compaction``, ``manifest``. A capture's content
artifacts share its ``captured_at``; the manifest keeps the first capture's.

**File format and integrity** (``continuity.lineage.frontmatter``): frontmatter, a blank line, the
body; ``content_sha256`` seals the body and ``frontmatter_sha256`` every other field, both
checked on every read. Field order is fixed per kind, so the same fields always give the same
bytes. Identity fields (``agent_id``, ``session_key``) are kept exactly (the token is their
hash); display text (``memory_sentence``) is flattened to one line (``one_line``). The repair
of a file that fails its check is always "delete the file and run ``continuity consolidate``
for its session again".

**Write-once** (``write_artifact``): when the file exists, a different kind, agent, session or
hash scope is an "identity mismatch", a stored hash that does not match the stored body a
"checksum mismatch" (``ArtifactCorrupt``), a different body a "content mismatch"
(``ArtifactConflict``); an identical body returns the existing path untouched. New files are
written to a temp file, fsynced and renamed under the session's lock, so a reader never sees half
a file. ``read_artifact`` verifies both hashes on every read. A writer killed between the two
leaves its temp file, ``.tmp-<token>-<random>.md``: ``sweep_temp_files`` (run by every
consolidation pass) deletes those whose session lock it can take (no live writer), and the
``.tmp-<random>.md`` of older versions once ``STALE_TEMP_SECONDS`` old (issue 22).

**Manifest** (``update_manifest``): the only file that changes after session end. Each change
bumps ``revision`` and ``updated_at``; a writer sets only the fields it passes, a ``None`` never
erases a recorded value (origin defect: a compaction erased ``ended_at``), and list fields only
grow. Updates hold the session's lock (``fcntl.flock``, released by the kernel if the holder
dies; a waiter gives up after ``LOCK_WAIT_SECONDS``).
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import os
import re
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from continuity.core.config import resolve_home
from continuity.core.errors import LineageDamaged  # noqa: F401 (re-exported)
from continuity.core.private import private_dir
from continuity.core.text import clean
from continuity.lineage.frontmatter import (  # noqa: F401 (re-exported: the lineage's file format)
    FRONTMATTER_HASH,
    HASH_SCOPE,
    ArtifactCorrupt,
    ArtifactError,
    body_hash,
    dump_frontmatter,
    frontmatter_hash,
    parse_frontmatter,
    read_fields,
    render_file,
    split_file,
    verify_hashes,
)
from continuity.lineage.sentence import (  # noqa: F401 (re-exported)
    SENTENCE_MAX_WORDS,
    SENTENCE_MIN_WORDS,
    SENTENCE_SYSTEM,
    SENTENCE_VERSION,
    STOCK_SENTENCES,
    SentenceFacts,
    SentenceWriter,
    choose_anchor,
    fallback_sentence,
    first_sentence,
    generic_sentence,
    gist,
    has_anchor,
    memory_sentence,
    one_line,
    sentence_problem,
)

KINDS = ("transcript", "summary", "compaction", "manifest")
CONTENT_KINDS = ("transcript", "summary", "compaction")
SANITIZER_VERSION = "transcripts.project/v1"
MEMORY_DIR = "memory"
#: seed 000 / origin: a manifest lock waiter gives up after 5 s, polling every 25 ms.
LOCK_WAIT_SECONDS = 5.0
LOCK_POLL_SECONDS = 0.025


class ArtifactConflict(ArtifactError):
    """A write-once artifact already exists with other content or another identity."""

    exit_code = 5


# ---------------------------------------------------------------------------- times and names


def utc(value: datetime) -> datetime:
    """``value`` as aware UTC (a naive value is taken as UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def iso(value: datetime | None) -> str | None:
    """``2026-09-01T10:40:00.000Z`` (UTC, milliseconds), or None."""
    if value is None:
        return None
    return utc(value).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(value: str | None) -> datetime | None:
    """The aware UTC datetime of an ISO 8601 string (``Z`` accepted), or None for None.
    Raises ``ValueError`` for anything else."""
    if value is None:
        return None
    return utc(datetime.fromisoformat(value.replace("Z", "+00:00")))


def stamp(value: datetime) -> str:
    """The filename-safe capture time: ``iso(value)`` with ``:`` made ``-``."""
    return (iso(value) or "").replace(":", "-")


def session_token(agent_id: str, session_key: str) -> str:
    """The short stable session token: SHA-256 of ``"{agent_id}:{session_key}"`` (UTF-8) in
    lowercase RFC 4648 base32, first 16 characters (80 bits)."""
    digest = hashlib.sha256(f"{agent_id}:{session_key}".encode()).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:16]


def session_node_id(agent_id: str, session_key: str) -> str:
    """The temporal DAG id of a session: ``session:<token>``."""
    return f"session:{session_token(agent_id, session_key)}"


_NAME = re.compile(
    r"^(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z)--([a-z2-7]{16})--"
    r"(transcript|summary|compaction|manifest)\.md$"
)


def artifact_name(captured_at: datetime, token: str, kind: str) -> str:
    """``<stamp(captured_at)>--<token>--<kind>.md``. Raises ``ValueError`` for an unknown kind
    or a token that is not 16 base32 characters."""
    if kind not in KINDS:
        raise ValueError(f"kind: must be one of {KINDS} (got {kind!r})")
    if not re.fullmatch(r"[a-z2-7]{16}", token):
        raise ValueError(f"token: must be 16 lowercase base32 characters (got {token!r})")
    return f"{stamp(captured_at)}--{token}--{kind}.md"


def parse_name(name: str) -> tuple[str, str, str] | None:
    """``(stamp, token, kind)`` of an artifact file name, or None when it is not one."""
    m = _NAME.match(name)
    return (m.group(1), m.group(2), m.group(3)) if m else None


def memory_dir(home: str | os.PathLike[str] | None = None) -> Path:
    """``<workspace>/memory`` (not created here)."""
    return resolve_home(home) / MEMORY_DIR


def rel_path(name: str) -> str:
    """The workspace-relative path of an artifact: ``memory/<name>``."""
    return f"{MEMORY_DIR}/{name}"


def wikilink(path: str, label: str) -> str:
    """``[[memory/<file>|label]]``: a workspace-relative wikilink."""
    return f"[[{path}|{label}]]"


# ---------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class Artifact:
    """An artifact read from disk: its ``path``, ``fields`` (frontmatter) and ``body``."""

    path: Path
    fields: dict[str, Any]
    body: str

    @property
    def kind(self) -> str:
        """Its ``kind`` field (``transcript``, ``summary``, ``compaction``, ``manifest``)."""
        return str(self.fields.get("kind"))

    @property
    def rel(self) -> str:
        """Its workspace-relative path (``memory/<name>``)."""
        return rel_path(self.path.name)


_REQUIRED = ("kind", "agent_id", "session_key", "content_sha256", "hash_scope")


def read_artifact(path: str | os.PathLike[str], *, verify: bool = True) -> Artifact:
    """Read and check one artifact: its name, required fields (``kind``, ``agent_id``,
    ``session_key``, ``content_sha256``, ``hash_scope``), the kind and token its name gives,
    and (``verify``) the body against ``content_sha256`` and the whole frontmatter against
    ``frontmatter_sha256`` (``continuity.lineage.frontmatter``, "Integrity"). Raises
    ``ArtifactCorrupt`` naming the file and the problem (``path`` set), ``ArtifactError`` when
    it cannot be read."""
    p = Path(path)
    parsed = parse_name(p.name)
    if parsed is None:
        raise ArtifactCorrupt(f"{p}: not an artifact name (<captured_at>--<token>--<kind>.md)", p)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ArtifactError(f"{p}: cannot read: {exc}") from exc
    try:
        head, body = split_file(text, str(p))
        fields = parse_frontmatter(head, str(p))
    except ArtifactCorrupt as exc:
        raise ArtifactCorrupt(str(exc), p) from None
    _check_fields(p, parsed, fields)
    if verify:
        verify_hashes(p, fields, body)
    return Artifact(p, fields, body)


def _check_fields(p: Path, parsed: tuple[str, str, str], fields: dict[str, Any]) -> None:
    for key in _REQUIRED:
        if not isinstance(fields.get(key), str):
            raise ArtifactCorrupt(f"{p}: missing field {key!r}", p)
    if (
        fields["kind"] != parsed[2]
        or session_token(fields["agent_id"], fields["session_key"]) != parsed[1]
    ):
        raise ArtifactCorrupt(
            f"{p}: identity mismatch: its name says {parsed[2]} of token "
            f"{parsed[1]}, its frontmatter {fields['kind']} of session "
            f"{fields['session_key']!r}",
            p,
        )
    if fields["hash_scope"] != HASH_SCOPE:
        raise ArtifactCorrupt(f"{p}: unknown hash_scope {fields['hash_scope']!r}", p)


# ---------------------------------------------------------------------------- locking and writing


@contextmanager
def session_lock(
    home: str | os.PathLike[str] | None, token: str, wait: float = LOCK_WAIT_SECONDS
) -> Iterator[None]:
    """Hold the session's lineage lock (``memory/.locks/<token>.lock``). Not re-entrant: a
    second hold from the same process waits like any other. Raises ``ArtifactError`` after
    ``wait`` seconds."""
    folder = private_dir(memory_dir(home) / ".locks")
    fd = os.open(folder / f"{token}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        give_up = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= give_up:
                    raise ArtifactError(
                        f"the lineage of token {token} is locked by another "
                        f"writer (waited {wait:g} s); try again"
                    ) from None
                time.sleep(LOCK_POLL_SECONDS)
        yield
    finally:
        os.close(fd)


#: A temp file of an older version (no token in its name) is stale once this old (seconds):
#: a write takes milliseconds, and a writer waits at most ``LOCK_WAIT_SECONDS`` for its lock.
STALE_TEMP_SECONDS = 3600.0
_TEMP_TOKEN = re.compile(r"\.tmp-([a-z2-7]{16})-[A-Za-z0-9_]+\.md")
_TEMP_LEGACY = re.compile(r"\.tmp-[A-Za-z0-9_]+\.md")


def _replace(path: Path, text: str, token: str) -> None:
    """Write ``path`` whole: a temp file named after the session ``token`` (the caller holds
    its lock), fsynced, then renamed over ``path``."""
    fd, tmp = tempfile.mkstemp(prefix=f".tmp-{token}-", suffix=".md", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sweep_temp_files(
    home: str | os.PathLike[str] | None = None, *, now: float | None = None
) -> list[str]:
    """Delete the temp files killed writers left in ``<home>/memory/`` (issue 22) and return
    their names, sorted. Only our own names are touched: ``.tmp-<token>-<random>.md`` when the
    session's lock of ``<token>`` is free (every writer holds it from creating its temp file
    to renaming it, so a free lock means no live writer), and ``.tmp-<random>.md`` (older
    versions, no token) when its mtime is ``STALE_TEMP_SECONDS`` before ``now`` (epoch
    seconds; default the clock). A file that vanished meanwhile is skipped; never raises
    for a file."""
    folder = memory_dir(home)
    if not folder.is_dir():
        return []
    now = time.time() if now is None else now
    removed = []
    for entry in os.scandir(folder):
        name = entry.name
        if not name.startswith(".tmp-") or not entry.is_file(follow_symlinks=False):
            continue
        owned = _TEMP_TOKEN.fullmatch(name)
        try:
            if owned:
                try:
                    with session_lock(home, owned.group(1), wait=0):
                        os.unlink(entry.path)
                except ArtifactError:  # held: a live writer's temp file
                    continue
            elif _TEMP_LEGACY.fullmatch(name):
                if now - entry.stat(follow_symlinks=False).st_mtime < STALE_TEMP_SECONDS:
                    continue
                os.unlink(entry.path)
            else:
                continue
        except FileNotFoundError:
            continue
        removed.append(name)
    return sorted(removed)


@dataclass(frozen=True, slots=True)
class WriteResult:
    """Where an artifact is and whether this call ``created`` it (False: it existed with the
    same body)."""

    path: Path
    created: bool

    @property
    def rel(self) -> str:
        return rel_path(self.path.name)


def write_artifact(
    home: str | os.PathLike[str] | None,
    kind: str,
    fields: Sequence[tuple[str, Any]],
    body: str,
    *,
    captured_at: datetime,
) -> WriteResult:
    """Write a content artifact once (module docstring). ``fields`` must hold ``agent_id``
    and ``session_key`` (strings, else ``ValueError``); ``kind``, ``content_sha256`` and
    ``hash_scope`` are set here (``kind`` first, the hash fields where ``fields`` has them as
    ``None`` placeholders, else last). Raises ``ArtifactConflict`` / ``ArtifactCorrupt``."""
    if kind not in CONTENT_KINDS:
        raise ValueError(f"kind: must be one of {CONTENT_KINDS} (got {kind!r})")
    values = dict(fields)
    agent, key = values.get("agent_id"), values.get("session_key")
    if not isinstance(agent, str) or not isinstance(key, str):
        raise ValueError("fields: agent_id and session_key must be strings")
    body = clean(body).replace("\x00", "\ufffd")
    ordered = _with_hash([("kind", kind), *[f for f in fields if f[0] != "kind"]], body)
    token = session_token(agent, key)
    folder = memory_dir(home)
    path = folder / artifact_name(captured_at, token, kind)
    with session_lock(home, token):
        if path.exists():
            existing = read_artifact(path)  # ArtifactCorrupt: checksum mismatch
            theirs = existing.fields
            if (theirs["kind"], theirs["agent_id"], theirs["session_key"]) != (kind, agent, key):
                raise ArtifactConflict(
                    f"{path}: identity mismatch: it holds {theirs['kind']} "
                    f"of session {theirs['session_key']!r}"
                )
            if theirs["content_sha256"] != body_hash(body):
                raise ArtifactConflict(
                    f"{path}: content mismatch: the artifact is write-once "
                    "and holds a different body"
                )
            return WriteResult(path, False)
        private_dir(folder)
        _replace(path, render_file(ordered, body), token)
    return WriteResult(path, True)


def _with_hash(fields: list[tuple[str, Any]], body: str) -> list[tuple[str, Any]]:
    """``fields`` sealed: ``content_sha256``, ``hash_scope`` and ``frontmatter_sha256`` set
    where ``content_sha256`` stands (else last); ``memory_sentence`` flattened to one line."""
    keys = [k for k, _ in fields]
    out = [
        (k, one_line(v) if k == "memory_sentence" and isinstance(v, str) else v)
        for k, v in fields
        if k not in ("content_sha256", "hash_scope", FRONTMATTER_HASH)
    ]
    at = keys.index("content_sha256") if "content_sha256" in keys else len(out)
    at = min(at, len(out))
    sealed = [*out[:at], ("content_sha256", body_hash(body)), ("hash_scope", HASH_SCOPE), *out[at:]]
    digest = frontmatter_hash(sealed)
    return [*sealed[: at + 2], (FRONTMATTER_HASH, digest), *sealed[at + 2 :]]


# ---------------------------------------------------------------------------- the manifest

#: Manifest fields in file order (``content_sha256`` and ``hash_scope`` close it).
MANIFEST_FIELDS = (
    "kind",
    "agent_id",
    "session_key",
    "harness",
    "project",
    "captured_at",
    "started_at",
    "ended_at",
    "transcript_path",
    "transcript_status",
    "transcript_sha256",
    "canonical_transcript_path",
    "summary_path",
    "summary_status",
    "compaction_path",
    "superseded",
    "updated_at",
    "revision",
)
_LIST_FIELDS = {"superseded"}
_OWNED_BY_UPDATE = {"kind", "agent_id", "session_key", "captured_at", "updated_at", "revision"}


def find_manifest(home: str | os.PathLike[str] | None, token: str) -> Path | None:
    """The session's manifest file (None: none yet). Raises ``ArtifactCorrupt`` when two
    manifests carry the token."""
    folder = memory_dir(home)
    if not folder.is_dir():
        return None
    found = sorted(folder.glob(f"*--{token}--manifest.md"))
    if len(found) > 1:
        raise ArtifactCorrupt(
            f"{folder}: {len(found)} manifests for token {token} "
            f"({', '.join(p.name for p in found)}); keep the oldest"
        )
    return found[0] if found else None


def manifest_body(fields: dict[str, Any]) -> str:
    """The manifest's readable body, derived from its fields (so its hash checks them)."""
    lines = [
        f"Lineage of session {one_line(fields['session_key'])} "
        f"({one_line(fields.get('harness') or 'unknown')}, project "
        f"{one_line(fields.get('project') or 'none')}), first captured "
        f"{fields['captured_at']}, revision {fields['revision']}.",
        "",
    ]
    for label, key in (
        ("transcript", "transcript_path"),
        ("summary", "summary_path"),
        ("compaction", "compaction_path"),
    ):
        value = fields.get(key)
        lines.append(f"- {label}: {wikilink(value, label) if value else 'none'}")
    for old in fields.get("superseded") or []:
        lines.append(f"- superseded: {wikilink(old, 'earlier capture')}")
    return "\n".join(lines)


def update_manifest(
    home: str | os.PathLike[str] | None,
    agent_id: str,
    session_key: str,
    changes: dict[str, Any],
    *,
    captured_at: datetime,
    now: datetime,
) -> tuple[Artifact, bool]:
    """Create the session's manifest or apply ``changes`` to it (module docstring);
    ``captured_at`` names a new manifest only. Returns the manifest and whether this call
    wrote it (False: nothing changed, revision kept). Raises ``ValueError`` for an unknown
    field and ``ArtifactCorrupt`` for a damaged manifest."""
    unknown = set(changes) - set(MANIFEST_FIELDS) | (set(changes) & _OWNED_BY_UPDATE)
    if unknown:
        raise ValueError(
            f"manifest fields {sorted(unknown)}: unknown or set by the manifest itself"
        )
    token = session_token(agent_id, session_key)
    with session_lock(home, token):
        path = find_manifest(home, token)
        if path is None:
            current: dict[str, Any] = dict.fromkeys(MANIFEST_FIELDS)
            current.update(
                kind="manifest",
                agent_id=agent_id,
                session_key=session_key,
                captured_at=iso(captured_at),
                superseded=[],
                revision=0,
            )
            path = memory_dir(home) / artifact_name(captured_at, token, "manifest")
        else:
            current = dict(read_artifact(path).fields)
        merged = dict(current)
        for key, value in changes.items():
            if value is None:
                continue  # never erase a recorded value
            if key in _LIST_FIELDS:
                merged[key] = list(dict.fromkeys([*(current.get(key) or []), *value]))
            else:
                merged[key] = value
        if merged == current and current["revision"]:
            return read_artifact(path), False
        merged["revision"] = int(current["revision"] or 0) + 1
        merged["updated_at"] = iso(now)
        body = manifest_body(merged)
        fields = _with_hash([(k, merged.get(k)) for k in MANIFEST_FIELDS], body)
        private_dir(path.parent)
        _replace(path, render_file(fields, body), token)
    return read_artifact(path), True


# ---------------------------------------------------------------------------- noise

_TEMP_PROJECT = re.compile(r"^(?:/private)?/(?:tmp|var/tmp|var/folders)(?:/|$)")
#: The temp folders of ``is_noise`` as path prefixes (for store queries).
NOISE_PREFIXES = (
    "/tmp/",
    "/private/tmp/",
    "/var/tmp/",
    "/private/var/tmp/",
    "/var/folders/",
    "/private/var/folders/",
)
_NOISE_KEY = re.compile(r"^(?:test|spec|fixture|synthetic|tmp)-", re.I)


def is_noise(project: str | None, session_key: str, harness: str | None = None) -> bool:
    """Scratch sessions left out of the projection (origin rule, seed 000): a project under a
    temp folder (``/tmp``, ``/private/tmp``, ``/var/tmp``, ``/var/folders``), or no project and
    a key starting ``test-``, ``spec-``, ``fixture-``, ``synthetic-``, ``tmp-`` or harness
    ``test``."""
    if project:
        return bool(_TEMP_PROJECT.match(project))
    return bool(_NOISE_KEY.match(session_key)) or harness == "test"
