"""One rule for a time bound a user types (``--since``, ``--until``, the browser's filters).

``parse_when("7d")`` is seven days before now; the units are ``s``/``sec``, ``m``/``min``,
``h``, ``d`` and ``w`` (case-insensitive). A date ``2026-11-30`` is its midnight and an ISO
8601 time without an offset is UTC. A value that is none of these, or an age too large for a
date (``99999999d``: before year 1), is an ``InputError`` naming the field, never a traceback.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from continuity.core.errors import InputError

TYPE_CHECKING = False

#: compiled on first use (``re``'s cache): the read commands import this module, few parse a time
_AGE = r"\s*(\d{1,12})\s*(s|sec|m|min|h|d|w)\s*"
_SECONDS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
FORMS = "a date (2026-11-30), a time (2026-11-30T14:00) or an age (90min, 12h, 7d, 2w)"


def parse_when(value: str, *, now: datetime | None = None, field_name: str = "--since") -> datetime:
    """``value`` as an aware datetime (module docstring); ``now`` defaults to the current UTC
    time. Raises ``InputError`` naming ``field_name``."""
    now = now or datetime.now(UTC)
    age = re.fullmatch(_AGE, value, re.IGNORECASE)
    if age:
        try:
            return now - timedelta(seconds=int(age.group(1)) * _SECONDS[age.group(2).lower()])
        except OverflowError:
            raise InputError(
                f"{field_name} {value!r}: that age reaches before year 1; give {FORMS}"
            ) from None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{field_name} {value!r}: give {FORMS}") from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


# ---------------------------------------------------------------------------- stored times

#: issue 45 item 1: the times a row, a session or a checkpoint may carry, from
#: ``EARLIEST_TIME`` (the Unix epoch) up to, not including, ``LATEST_TIME``. A time outside
#: them (``9999-12-31T23:59:59Z``, year 1, an epoch number of 10^20) is no real session's
#: and leaves datetime arithmetic no room: the checkpoint timer adding its interval to
#: ``9999-12-31T23:59:59Z`` raised ``OverflowError`` and stopped every later import of the
#: workspace. Readers warn about such a value and the row keeps no time (``usable_time``).
EARLIEST_TIME = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_TIME = datetime(3000, 1, 1, tzinfo=UTC)
TIME_RANGE_TEXT = "1970-01-01T00:00:00Z up to 3000-01-01T00:00:00Z"


if TYPE_CHECKING:  # the overloads for the type checker: no ``typing`` at start-up (issue 43)
    from typing import overload

    @overload
    def as_utc(value: datetime) -> datetime: ...
    @overload
    def as_utc(value: None) -> None: ...


def as_utc(value: datetime | None) -> datetime | None:
    """``value`` as an aware UTC time; a naive one (SQLite hands them back) is taken as UTC.
    None stays None."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def usable_time(value: datetime | None) -> datetime | None:
    """``value`` as an aware UTC datetime when it lies in ``EARLIEST_TIME`` ..
    ``LATEST_TIME`` (a naive value is read as UTC), else None (issue 45 item 1). Never
    raises: a value whose offset moves it outside the datetime range is None too."""
    if value is None:
        return None
    try:
        aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
    return aware if EARLIEST_TIME <= aware < LATEST_TIME else None


#: the latest instant a datetime can hold, aware UTC: what ``later`` gives when a sum
#: would pass it
END_OF_TIME = datetime.max.replace(tzinfo=UTC)


def later(value: datetime, delta: timedelta) -> datetime:
    """``value + delta``, or ``END_OF_TIME`` when the sum passes year 9999 (issue 45 item 1:
    a timer's deadline from a clock at ``9999-12-31T23:59:59Z`` raised ``OverflowError``;
    saturated, it is a deadline that never comes, and the other sessions' timers go on).
    ``delta`` is not negative; the result has ``value``'s time zone when it fits."""
    try:
        return value + delta
    except OverflowError:
        return END_OF_TIME if value.tzinfo is not None else datetime.max
