"""Where the tests find the real sample sessions.

``../shared`` sits beside the checkout wherever it is cloned (CI uses another root). The path is
resolved through symlinks, because the importer records each source by its real path: a test that
compares a report's path with a sample's path must use the same spelling.
"""

from __future__ import annotations

from pathlib import Path

SHARED_DATA = (Path(__file__).resolve().parents[2] / "shared" / "data").resolve()
#: The published sample folders of ``../shared/data`` whose counts the tests assert (its README:
#: claude-code, codex, pi). ``real-harness/``, recorded later from today's CLIs, has tests of
#: its own; a test that imports "every sample" imports these folders, so a new recording there
#: does not change the figures asserted here.
SAMPLE_DIRS = [SHARED_DATA / name for name in ("claude-code", "codex", "pi")]
