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

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
