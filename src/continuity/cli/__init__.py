"""The ``continuity`` command line (Typer + Rich): the console entry point and the hook fast
path (``hookcmd``: ``hook`` dispatched before Typer loads), the core commands (``app``), the
command groups (``commands``) and the renderings (``render``).

May import: every package, ``daemon`` included. Nothing imports ``cli``.

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "console": "hookcmd",
    "main": "app",
    "register": "commands.daemon",
    "resolve_session": "commands.common",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.cli.app import (
        main,
    )
    from continuity.cli.commands.common import (
        resolve_session,
    )
    from continuity.cli.commands.daemon import (
        register,
    )
    from continuity.cli.hookcmd import (
        console,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
