"""Records the store interface speaks in: ``RowMeta`` (a row's metadata for the continuation's
selection) and ``KeptSecrets`` (a session's kept secret values, with their row codec), and,
re-exported on first use, the import's records of ``store.records``.

The interface itself, ``Store`` (the primitives the importer and the continuation need,
nothing more), is in ``store.protocol``: a ``Protocol`` class loads ``typing`` at run time,
which the read commands never need otherwise (issue 43 goal 3).
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from continuity.core.exports import lazy_exports
from continuity.core.model import EntryKind, Role


@dataclass(frozen=True, slots=True)
class RowMeta:
    """What a continuation needs to select rows without reading their content: ``view_bytes``
    is the UTF-8 size of the row as a view message (``codec.message_bytes`` with copied=false)."""

    seq: int
    kind: EntryKind
    role: Role
    is_request: bool
    view_bytes: int


@dataclass(frozen=True, slots=True)
class KeptSecrets:
    """A session's kept secret values (revision 0028, ``redaction.session.session_secrets``):
    ``secrets`` maps each value (8 characters or more) to its kind, found in the own title
    hashing to ``own_sha256`` and in the session's rows up to seq ``last_seq`` (-1: none),
    of which there were ``entry_count``."""

    session_key: str
    own_sha256: str
    entry_count: int
    last_seq: int
    secrets: dict[str, str]


def kept_secrets_row(kept: KeptSecrets) -> dict[str, object]:
    """The ``session_secrets`` row of ``kept`` (its secrets as sorted JSON; NUL characters, which
    PostgreSQL text cannot hold, are escaped by JSON; in the key, U+FFFD as
    ``store.schema.nul_free``). Standard library and orjson only: ``store.lite`` writes it
    without SQLAlchemy."""
    return {
        "session_key": kept.session_key.replace("\x00", "\ufffd"),
        "own_sha256": kept.own_sha256,
        "entry_count": kept.entry_count,
        "last_seq": kept.last_seq,
        "secrets": orjson.dumps(kept.secrets, option=orjson.OPT_SORT_KEYS).decode("utf-8"),
    }


def decode_kept_secrets(
    key: str, own_sha256: str, entry_count: int, last_seq: int, secrets: str
) -> KeptSecrets | None:
    """A ``session_secrets`` row read back; None when its JSON is not an object of strings (a
    damaged cache row is computed again, never trusted)."""
    try:
        found = orjson.loads(secrets)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(found, dict) or not all(isinstance(v, str) for v in found.values()):
        return None
    return KeptSecrets(key, own_sha256, int(entry_count), int(last_seq), found)


#: What ``store.records`` holds, re-exported here on first use (PEP 562): ``show`` and
#: ``continue`` import this module without building them (issue 43 goal 3).
_RECORDS = ("SourceState", "RawLine", "KeptTitle", "ImportIssue")


__getattr__, __dir__ = lazy_exports(  # ``continuity.store.records``' names, on first use
    "continuity.store", dict.fromkeys(_RECORDS, "records"), module=__name__
)


TYPE_CHECKING = False
if TYPE_CHECKING:  # the names as a type checker sees them
    from continuity.store.records import (
        ImportIssue as ImportIssue,
        KeptTitle as KeptTitle,
        RawLine as RawLine,
        SourceState as SourceState,
    )
