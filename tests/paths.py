"""Where the tests find the real sample sessions.

``../shared`` sits beside the checkout wherever it is cloned (CI uses another root). The path is
resolved through symlinks, because the importer records each source by its real path: a test that
compares a report's path with a sample's path must use the same spelling.
"""

from __future__ import annotations

from pathlib import Path

SHARED_DATA = (Path(__file__).resolve().parents[2] / "shared" / "data").resolve()
