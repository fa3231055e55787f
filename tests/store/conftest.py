"""The ``store`` fixture of the Store conformance tests (``tests/store``): every backend of
``tests/conftest.py``, and ``sqlite-read``: ``store.lite.LiteStore`` (issue 43 goal 3), whose
reads run on the standard library's ``sqlite3`` and whose writes are the full ``SqlStore``'s
on the same file, so every test here checks the read path against what the writes stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from continuity.store import open_store
from continuity.store.lite import open_lite
from tests.conftest import BACKENDS, _pg_database


@pytest.fixture(params=[*BACKENDS, "sqlite-read"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """An empty, migrated store on each backend, and the SQLite read path over one."""
    url = f"sqlite:///{tmp_path / 'continuity.db'}"
    if request.param == "sqlite":
        with open_store(url) as s:
            yield s
    elif request.param == "sqlite-read":
        with open_store(url):
            pass  # created and migrated
        lite = open_lite(url, read_only=False)
        assert lite is not None
        try:
            yield lite
        finally:
            lite.close()
    else:
        for pg in _pg_database():
            with open_store(pg) as s:
                yield s
