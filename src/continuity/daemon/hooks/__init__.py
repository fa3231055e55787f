"""Live capture from harness hooks (issue 7): the pieces between an agent's hooks and the daemon.

- ``spool``: the durable inbox. The hook command appends an event here (one fsync'd JSONL line)
  when the daemon cannot take it; the daemon journals its own deferred work here too, and
  replays every line exactly once (standard library only, so the hook command stays fast).
- ``adapters``: each harness's hook stdin JSON (Claude Code, Codex, pi) mapped to our endpoint
  bodies, and each endpoint's answer mapped to the output that harness expects.
- ``models``: the pydantic bodies of the ``/api/hooks/*`` endpoints.
- ``live``: ``LiveCapture``, the daemon's service: sessions, checkpoints, session ends and
  recovery at session start; ``sessions``: what it keeps per session.
- ``capture``: transcript imports and sync, session-end capture and the continuation policy
  after a settled turn; ``journal``: live turns in the canonical transcript JSONL.
- ``consolidation``: the consolidation pass (lineage artifacts, MEMORY.md) after a session end.
- ``worker``: the daemon's background threads (imports, settled turns, session ends, replay;
  consolidation passes on a thread of their own).
- ``install``: ``continuity hooks install|uninstall claude-code|codex|pi`` (the entry points,
  pi's extension, the install record); ``codex_config``: Codex's trust of our hooks in its
  ``config.toml``; ``mcp_install``: continuity's MCP tools registered per harness; ``_files``:
  the reads, backups and whole writes they share.

This package's ``__init__`` imports nothing: ``continuity.cli.hookcmd`` loads ``spool`` alone.
"""
