"""Fixtures of the daemon's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from continuity.daemon.hooks.live import LiveCapture
from tests.daemon.livecapture import start_live


@pytest.fixture
def live(store, isolated_home: Path) -> Iterator[LiveCapture]:
    """A started LiveCapture over the ``store`` fixture (budget 1,000 bytes), closed after."""
    capture = start_live(store, isolated_home)
    yield capture
    capture.close()
