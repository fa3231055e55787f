"""One rule for a time bound a user types (``--since``, ``--until``, the browser's filters).

``parse_when("7d")`` is seven days before now; the units are ``s``/``sec``, ``m``/``min``,
``h``, ``d`` and ``w`` (case-insensitive). A date ``2026-11-30`` is its midnight and an ISO
8601 time without an offset is UTC. A value that is none of these, or an age too large for a
date (``99999999d``: before year 1), is an ``InputError`` naming the field, never a traceback.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from continuity.core.errors import InputError

_AGE = re.compile(r"\s*(\d{1,12})\s*(s|sec|m|min|h|d|w)\s*", re.IGNORECASE)
_SECONDS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
FORMS = "a date (2026-11-30), a time (2026-11-30T14:00) or an age (90min, 12h, 7d, 2w)"


def parse_when(value: str, *, now: datetime | None = None, field_name: str = "--since"
               ) -> datetime:
    """``value`` as an aware datetime (module docstring); ``now`` defaults to the current UTC
    time. Raises ``InputError`` naming ``field_name``."""
    now = now or datetime.now(timezone.utc)
    age = _AGE.fullmatch(value)
    if age:
        try:
            return now - timedelta(seconds=int(age.group(1)) * _SECONDS[age.group(2).lower()])
        except OverflowError:
            raise InputError(f"{field_name} {value!r}: that age reaches before year 1; "
                             f"give {FORMS}") from None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{field_name} {value!r}: give {FORMS}") from None
    return parsed.replace(tzinfo=timezone.utc) if parsed.tzinfo is None else parsed

