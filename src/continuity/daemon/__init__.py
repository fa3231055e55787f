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

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
