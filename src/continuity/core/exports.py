"""Lazy re-exports for the packages of continuity (PEP 562), so that callers write
``from continuity.checkpoints import recover`` and not a private module path, and importing a
package costs nothing until one of its names is used (the hook's fast path imports
``continuity.cli`` and ``continuity.daemon`` and must not load Typer or FastAPI).
"""

from __future__ import annotations

import sys

# Nothing but ``sys`` is imported (not ``typing`` or ``importlib``): the hook's fast path runs
# this module, and its import test counts every module it loads.


def lazy_exports(
    package: str, names: dict[str, str], *, module: str | None = None
) -> tuple[object, object]:
    """``(__getattr__, __dir__)`` (two functions) for ``package``, which re-exports ``names`` (a public name →
    the submodule that owns it, relative to ``package``); ``module``: the module that
    re-exports them when it is not ``package`` itself (``core.model`` gives ``core.records``'
    names, issue 43 goal 3). A name is looked up in its module on
    every access, never cached, so a test that patches the owning module's attribute patches
    what the package gives too. Safe from several threads: a name whose module another thread
    is importing is given once that import is complete. Raises ``AttributeError`` for a name
    not in ``names``."""

    owner = module or package

    def __getattr__(name: str) -> object:
        sub = names.get(name)
        if sub is None:
            raise AttributeError(f"module {owner!r} has no attribute {name!r}")
        full = f"{package}.{sub}"
        found = sys.modules.get(full)
        # A module another thread is still importing is in sys.modules half-initialised
        # (issue 45 item 10: concurrent session starts got ImportError, HTTP 500):
        # ``__import__`` then waits on the module's import lock until it is complete.
        if found is None or getattr(getattr(found, "__spec__", None), "_initializing", False):
            __import__(full)
            found = sys.modules[full]
        return getattr(found, name)

    def __dir__() -> list[str]:
        return sorted(set(names) | set(sys.modules[owner].__dict__))

    return __getattr__, __dir__
