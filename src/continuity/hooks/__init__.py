"""Live capture from harness hooks (issue 7): the pieces between an agent's hooks and the daemon.

- ``spool``: the durable inbox. The hook command appends an event here (one fsync'd JSONL line)
  when the daemon cannot take it; the daemon journals its own deferred work here too, and
  replays every line exactly once (standard library only, so the hook command stays fast).
- ``adapters``: each harness's hook stdin JSON (Claude Code, Codex, pi) mapped to our endpoint
  bodies, and each endpoint's answer mapped to the output that harness expects.
- ``models``: the pydantic bodies of the ``/api/hooks/*`` endpoints.
- ``live``: ``LiveCapture``, the daemon's service: sessions, checkpoints, transcripts,
  recovery at session start and the continuation policy after a settled turn.
- ``worker``: the daemon's background thread (imports, settled turns, session ends, replay).
- ``install``: ``continuity hooks install|uninstall claude-code|codex|pi``.

This package's ``__init__`` imports nothing: ``continuity.hookcmd`` loads ``spool`` alone.
"""
