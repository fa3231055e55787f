"""Where the tests find the real sample sessions.

The samples are a byte-for-byte copy of the project's published sample set (``../shared/data``:
public MIT-licensed sessions and the recordings of today's CLIs, see its README) kept under
``tests/fixtures/samples``, so the README's test command passes on a fresh clone with no folder
beside it (issue 20). ``tests/test_samples.py`` checks the copy against ``../shared/data``
wherever that folder is present. The path is resolved through symlinks, because the importer
records each source by its real path: a test that compares a report's path with a sample's path
must use the same spelling.
"""

from __future__ import annotations

from pathlib import Path

SHARED_DATA = (Path(__file__).resolve().parent / "fixtures" / "samples").resolve()
#: ``../shared/data`` beside the checkout, when present: the source the copy must equal.
PUBLISHED_DATA = (Path(__file__).resolve().parents[2] / "shared" / "data").resolve()
#: The published sample folders whose counts the tests assert (its README: claude-code, codex,
#: pi). ``real-harness/``, recorded later from today's CLIs, has tests of its own; a test that
#: imports "every sample" imports these folders, so a new recording there does not change the
#: figures asserted here.
SAMPLE_DIRS = [SHARED_DATA / name for name in ("claude-code", "codex", "pi")]
