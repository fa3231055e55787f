"""The one secret funnel: ``redact(text)``, which every derived text passes through before it is
stored or served (``funnel``: token shapes; ``keyed``: secrets found by the key, flag or
command in front of them), and ``redact_value(obj)`` for structured values such as tool-call
arguments, where a key naming a secret redacts its value (``structured``, issue 15), and
``in_session(store, key)``: the secrets of a session's rows redacted wherever they repeat
(``session``, issue 45 review item 1).

May import: ``core``.

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "find_secrets": "funnel",
    "redact": "funnel",
    "redact_all": "funnel",
    "redact_value": "structured",
    "in_session": "session",
    "session_secrets": "session",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.redaction.funnel import (
        find_secrets,
        redact,
        redact_all,
    )
    from continuity.redaction.session import (
        in_session,
        session_secrets,
    )
    from continuity.redaction.structured import (
        redact_value,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
