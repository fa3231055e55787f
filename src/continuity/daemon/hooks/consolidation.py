"""The consolidation pass at session end, in the daemon's background.

Seed 000 ("Canonical Markdown Lineage and MEMORY.md Projection"): session-end capture writes the
canonical transcript, and the completed transcript row is the single input of the content pass;
a mid-session checkpoint never starts it. So ``LiveCapture`` calls ``Consolidator.queue`` on
every completion path, after the row was completed: a session end (the hook, or its spooled
replay), a session ended by a ``clear`` start, a superseding Codex start or the idle limit, a
row completed by recovery after ``clear`` or by the idle sweep. Nothing else queues it, and the
pass itself refuses an open row (``consolidate`` answers ``not_completed``).

Each queued task is what ``continuity consolidate SESSION`` does: ``consolidate.consolidate``
over that session (its transcript, summary and compaction artifacts, manifest, durable memories,
thread head and DAG), then, when it wrote something new or ``<home>/MEMORY.md`` is missing,
``memory_md.render_memory_md`` and ``memory_md.write`` to ``<home>/MEMORY.md``. It runs on a
thread of its own (a ``Worker``), never in a hook's answer and never ahead of the daemon's
other background work: a model-written summary of a whole session may take minutes
(``consolidate.SUMMARY_SECONDS``). A session queued twice before its pass ran is passed once; a
replayed end passes again and changes nothing (the pass is idempotent: same artifacts, memories
de-duplicated, DAG rows upserted; MEMORY.md is rewritten only when its bytes change). A failing
pass is logged (a damaged artifact with its repair) and changes nothing of the session end,
which was complete before the pass was queued. ``[daemon] consolidate_on_end = false`` turns
the pass off (``continuity consolidate`` still runs it by hand).

At shutdown the queued passes get ``SHUTDOWN_SECONDS`` to finish; the sessions left are logged
with the command that consolidates them (``continuity consolidate --all``).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from continuity.core.errors import ContinuityError
from continuity.daemon.hooks.worker import Worker

log = logging.getLogger("continuity.daemon")

#: How long shutdown waits for queued consolidation passes (seconds).
SHUTDOWN_SECONDS = 20.0
#: How many finished passes ``recent`` keeps.
RECENT = 100


class Consolidator:
    """Queue of consolidation passes over completed sessions (module docstring).

    ``store`` and ``home`` are the daemon's; ``summarizer`` makes the summarizer of the pass
    (default: the configured one and its sentence writer, as ``continuity consolidate``);
    ``enabled`` False makes ``queue`` a no-op. ``recent`` holds the last ``RECENT`` outcomes as
    ``(session_key, status)``, status one of ``consolidate.Consolidation.status`` or
    ``failed``. Thread-safe."""

    def __init__(
        self,
        store: Any,
        home: str,
        *,
        enabled: bool = True,
        summarizer: Callable[[], Any] | None = None,
    ) -> None:
        self.store, self.home, self.enabled = store, home, enabled
        self._summarizer_factory = summarizer
        self._summarizer: Any = None
        self.worker = Worker(lambda: None, tick_seconds=60.0, name="continuity-consolidate")
        self.recent: deque[tuple[str, str]] = deque(maxlen=RECENT)
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the thread."""
        self.worker.start()

    def stop(self, timeout: float = SHUTDOWN_SECONDS) -> list[str]:
        """Finish the queued passes within ``timeout`` seconds; returns the task names of the
        passes dropped (never started), each logged with the command that runs them."""
        dropped = self.worker.stop(timeout)
        if dropped:
            log.warning(
                "shutdown: %d consolidation pass(es) not run (%s); run `continuity "
                "consolidate --all` to run them",
                len(dropped),
                ", ".join(dropped),
            )
        return dropped

    def queue(self, session_key: str, agent_id: str | None = None) -> bool:
        """Queue one pass over ``session_key``'s completed transcript (``agent_id`` None: the
        imported session's agent, else ``default``). True when queued (False: disabled, or
        that session's pass is already waiting)."""
        if not self.enabled:
            return False
        return self.worker.submit(
            f"consolidate:{session_key}", lambda: self.run(session_key, agent_id)
        )

    def pending(self) -> int:
        """Passes waiting or running."""
        return self.worker.pending()

    def wait_idle(self, timeout: float) -> bool:
        """Block until no pass waits or runs (True) or ``timeout`` seconds passed (False)."""
        return self.worker.wait_idle(timeout)

    def run(self, session_key: str, agent_id: str | None = None) -> str:
        """One pass now (module docstring); returns its status. A ``ContinuityError`` (a
        damaged artifact, bad settings, a database error) is logged as one line and answered
        ``failed``; any other exception propagates (the worker logs it with its trace)."""
        from continuity.lineage import memory_md
        from continuity.lineage.consolidation import consolidate

        try:
            summarizer, writer = self._summarizers()
            result = consolidate(
                self.store,
                session_key,
                home=self.home,
                agent_id=agent_id,
                summarizer=summarizer,
                sentence_writer=writer,
            )
            path = memory_md.default_path(self.home)
            if result.status == "consolidated" or (
                result.status == "unchanged" and not path.exists()
            ):
                memory_md.write(memory_md.render_memory_md(self.store, home=self.home).text, path)
            status = result.status
        except ContinuityError as exc:
            log.warning("consolidation of session %s failed: %s", session_key, exc)
            status = "failed"
        except BaseException:
            self.recent.append((session_key, "failed"))
            raise
        self.recent.append((session_key, status))
        log.info("consolidation of session %s: %s", session_key, status)
        return status

    def _summarizers(self) -> tuple[Any, Any]:
        """``(summarizer, sentence_writer)`` of the pass: the factory's summarizer (made once,
        no sentence writer), else ``(None, None)``, which makes ``consolidate`` use the
        configured ones (read again at each pass, as the CLI does)."""
        if self._summarizer_factory is None:
            return None, None
        with self._lock:
            if self._summarizer is None:
                self._summarizer = self._summarizer_factory()
            return self._summarizer, None
