"""The live-capture edge: the FastAPI daemon (``server``), the hook routes, adapters, spool and
capture (``hooks``), the MCP server on stdio (``mcp_server``), and where clients find the
running daemon (``address``; standard library only, for the hook's fast path).

May import: every package below it: ``core`` to ``lineage``.

The names below are re-exported lazily (``continuity.core.exports``): importing the package
loads none of its modules.
"""

from continuity.core.exports import lazy_exports

_EXPORTS = {
    "BODIES": "hooks.models",
    "ContinuityTools": "mcp_server",
    "DaemonConflict": "server",
    "DaemonSettings": "server",
    "EVENTS": "hooks.spool",
    "GroupAppender": "hooks.journal",
    "HARNESSES": "hooks.spool",
    "LiveCapture": "hooks.live",
    "MAX_PROMPT_CHARS": "hooks.models",
    "SessionStartBody": "hooks.models",
    "SpooledEvent": "hooks.spool",
    "StopBody": "hooks.models",
    "UserPromptBody": "hooks.models",
    "Worker": "hooks.worker",
    "append": "hooks.spool",
    "build_server": "mcp_server",
    "check_token_rule": "server",
    "create_app": "server",
    "daemon_address": "address",
    "daemon_id": "address",
    "daemon_token": "address",
    "fast_home": "hooks.spool",
    "hook_argv": "hooks.install",
    "iso_now": "hooks.spool",
    "load_settings": "server",
    "main": "server",
    "native_line": "hooks.spool",
    "new_event_id": "hooks.spool",
    "pi_extension_text": "hooks.install",
    "run": "mcp_server",
    "serve": "server",
    "uninstall": "hooks.install",
}

# The names as a type checker sees them; at run time ``__getattr__`` loads each on first
# use (tests/core/test_exports.py checks the two lists agree).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from continuity.daemon.address import (
        daemon_address,
        daemon_id,
        daemon_token,
    )
    from continuity.daemon.hooks.install import (
        hook_argv,
        pi_extension_text,
        uninstall,
    )
    from continuity.daemon.hooks.journal import (
        GroupAppender,
    )
    from continuity.daemon.hooks.live import (
        LiveCapture,
    )
    from continuity.daemon.hooks.models import (
        BODIES,
        MAX_PROMPT_CHARS,
        SessionStartBody,
        StopBody,
        UserPromptBody,
    )
    from continuity.daemon.hooks.spool import (
        EVENTS,
        HARNESSES,
        SpooledEvent,
        append,
        fast_home,
        iso_now,
        native_line,
        new_event_id,
    )
    from continuity.daemon.hooks.worker import (
        Worker,
    )
    from continuity.daemon.mcp_server import (
        ContinuityTools,
        build_server,
        run,
    )
    from continuity.daemon.server import (
        DaemonConflict,
        DaemonSettings,
        check_token_rule,
        create_app,
        load_settings,
        main,
        serve,
    )

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
