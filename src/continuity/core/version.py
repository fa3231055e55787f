"""The version of continuity everyone reports (``continuity --version``, the daemon's
``/health`` and OpenAPI document, the MCP ``serverInfo``): the installed package's metadata
(``pyproject.toml`` ``[project] version``), one source for all of them (issue 20)."""

from __future__ import annotations

from functools import lru_cache

#: What is reported when continuity runs from a source tree that was never installed.
UNKNOWN_VERSION = "0+unknown"


@lru_cache(maxsize=1)
def package_version() -> str:
    """The installed ``continuity`` distribution's version (PEP 440 text, e.g. ``"0.1.0"``),
    else ``UNKNOWN_VERSION``. Reads the package metadata once per process."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("continuity")
    except PackageNotFoundError:  # pragma: no cover - always installed in tests
        return UNKNOWN_VERSION
