"""The one error hierarchy. The CLI turns a ``ContinuityError`` into one line and its
``exit_code``; the daemon will map the same classes to HTTP statuses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: this module stays cheap to import
    from typing import Any


class ContinuityError(Exception):
    """Base of every error a user can cause or fix. ``exit_code`` is the CLI's exit status."""

    exit_code = 1


class SessionNotFound(ContinuityError):
    """No session has this key or key prefix."""

    exit_code = 3

    def __init__(self, name: str) -> None:
        super().__init__(
            f"no session matches {name!r}; run `continuity sessions` to list the imported ones"
        )
        self.name = name


class NoProjectSession(SessionNotFound):
    """No session was named and folder ``project`` has none, live or stored (issue 12: the
    one wording of the MCP tools and the daemon)."""

    def __init__(self, project: str) -> None:
        ContinuityError.__init__(
            self,
            f"no session of {project}: none is live and none is stored; pass session "
            "(a key or a unique key prefix) or set CONTINUITY_SESSION_KEY",
        )
        self.name = project


class AmbiguousSession(ContinuityError):
    """A key prefix names more than one session; ``candidates`` lists (some of) them.
    ``more``: the lookup stopped at ``len(candidates)`` and more sessions match (the message
    then says "more than N - 1", never a count that is not the true one: fresh-user review,
    a prefix of 40 sessions was said to match 21)."""

    exit_code = 3

    def __init__(self, name: str, candidates: Sequence[str], *, more: bool = False) -> None:
        shown = ", ".join(candidates[:5]) + (" ..." if len(candidates) > 5 else "")
        count = f"more than {len(candidates) - 1}" if more else str(len(candidates))
        super().__init__(f"{name!r} matches {count} sessions ({shown}); give more of the key")
        self.name = name
        self.candidates = list(candidates)


class SchemaOutOfDate(ContinuityError):
    """The database schema is older than this version of continuity."""

    exit_code = 4


class StoreError(ContinuityError):
    """The store could not be opened or used (bad URL, unreachable server, locked file)."""

    exit_code = 4


class StoreConflict(StoreError):
    """Another writer changed the same rows at the same time (e.g. two imports of one file);
    the operation can be retried from the store's new state."""


class InputError(ContinuityError):
    """A path or value given by the user is unusable (missing file, not a session file)."""

    exit_code = 2


class InstallIncomplete(ContinuityError):
    """``hooks install`` cannot do a part the user asked for (continuity's tools, Codex's trust
    of the hooks) because of a file of the user's, so it wrote nothing: the message names the
    file and what to fix. Exit code 1, so a script can tell (fresh-user review of issue 42:
    such an install printed a warning and exited 0)."""

    exit_code = 1


class ConfigError(ContinuityError):
    """A configuration value is invalid: names the file, the field and its allowed range."""

    exit_code = 2


class FencedWrite(ContinuityError):
    """A write carried a fencing token older than the session's newest owner (seed 002)."""

    exit_code = 6


class LeaseHeld(FencedWrite):
    """Another owner holds a live lease on the session (seed 002: one owner at a time)."""

    def __init__(self, session_key: str, owner: str, expires_at: datetime | None) -> None:
        until = f" until {expires_at.isoformat()}" if expires_at else ""
        super().__init__(
            f"session {session_key!r} is owned by {owner!r}{until}; wait for "
            "the lease to expire or take it over explicitly"
        )
        self.session_key, self.owner, self.expires_at = session_key, owner, expires_at


class LineageDamaged(ContinuityError):
    """The lineage on disk is damaged: an artifact is missing, edited or corrupt. Exit code 7
    (4 is a database problem). The repair: delete the damaged file and run ``continuity
    consolidate SESSION`` again."""

    exit_code = 7


class DaemonConflict(ContinuityError):
    """The daemon cannot take its place: its address is in use, or another daemon serves the
    workspace."""

    exit_code = 8


#: pydantic's prefixes for an error raised inside a validator: the validator's own message
#: follows, so the prefix only says which Python exception carried it.
_VALIDATOR_PREFIXES = ("Value error, ", "Assertion failed, ")


#: pydantic error types worded as a rule the value breaks: ``{name}`` is filled from the
#: error's ``ctx`` (``ge``, ``le``, ``expected``, ``max_length``...).
_RULES = {
    "missing": "is required",
    "extra_forbidden": "is not a known field",
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
    "int_parsing": "must be an integer",
    "int_type": "must be an integer",
    "int_from_float": "must be an integer",
    "float_parsing": "must be a number",
    "float_type": "must be a number",
    "string_type": "must be a string",
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be more than {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be less than {lt}",
    "literal_error": "must be one of {expected}",
    "enum": "must be one of {expected}",
    "dict_type": "must be a JSON object",
    "model_type": "must be a JSON object",
    "model_attributes_type": "must be a JSON object",
    "list_type": "must be an array (a list)",
    "datetime_parsing": "must be an ISO 8601 date and time (2026-12-03T10:00:00Z)",
    "datetime_from_date_parsing": "must be an ISO 8601 date and time (2026-12-03T10:00:00Z)",
    "datetime_type": "must be an ISO 8601 date and time (2026-12-03T10:00:00Z)",
    "string_too_long": "must be at most {max_length} characters",
    "too_long": "must have at most {max_length} items",
}


def validation_message(error: Mapping[str, Any]) -> str:
    """The user-facing reason of one pydantic error dict (``{"type", "msg", "ctx", ...}``, as
    ``ValidationError.errors()`` gives it), in this project's words: a validator's own message
    without pydantic's ``"Value error, "`` prefix; ``"must not be empty"`` for a string under
    its minimum of 1 character; the rule of ``_RULES`` for the common types (``"is
    required"``, ``"must be an integer"``, ``"must be at most 65535"``, ``"must be one of
    'a', 'b' or 'c'"``...); any other error keeps pydantic's message. The CLI's config
    errors, the memory write and the daemon's 422 answers all word errors with it (issue 17
    review: pydantic's wording reached users)."""
    kind = str(error.get("type") or "")
    ctx = error.get("ctx") or {}
    msg = str(error.get("msg") or "invalid")
    if kind == "string_too_short" and ctx.get("min_length") == 1:
        return "must not be empty"
    rule = _RULES.get(kind)
    if rule is not None:
        try:
            return rule.format(**ctx)
        except (KeyError, IndexError, ValueError):
            return msg
    for prefix in _VALIDATOR_PREFIXES:
        if msg.startswith(prefix):
            return msg[len(prefix) :]
    return msg
