"""Regular expressions compiled on first use (issue 17).

The redaction modules hold about 140 patterns; compiling them all when ``funnel`` is imported
cost ~28 ms on every ``continuity continue``, which typically touches two or three of them
(each detector's pattern runs only where its anchor word occurs). ``lazy_compile`` returns a
stand-in that compiles on its first method call and then binds the compiled pattern's methods
onto itself, so later calls cost what a compiled pattern's do.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any

_METHODS = ("match", "search", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    """A ``re.Pattern`` compiled on first use: ``match``, ``search``, ``fullmatch``,
    ``finditer``, ``findall``, ``sub``, ``subn``, ``split`` and any other attribute (``pattern``,
    ``flags``, ``groupindex``...) answer as the compiled pattern's. Not for the ``re`` module's
    functions (``re.sub(p, ...)`` needs a real pattern): call the methods."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled now on first use; its methods then bound here)."""
        found = self.__dict__.get("_compiled")
        if found is None:
            found = re.compile(*self._source)
            for name in _METHODS:  # instance attributes: found before the class's methods
                setattr(self, name, getattr(found, name))
            self._compiled = found
        return found

    def __getattr__(self, name: str) -> Any:
        # Only for names not found: the first ``match``/``sub``/... compiles, then those are
        # instance attributes (``compiled``) and never come here again.
        if name.startswith("_"):  # _source/_compiled not set yet: no recursion
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r}, {self._source[1]!r})"


def lazy_compile(pattern: str, flags: int = 0) -> Any:
    """``re.compile(pattern, flags)``, done on first use (``LazyPattern``). Typed ``Any`` so
    annotations of ``re.Pattern[str]`` keep holding."""
    return LazyPattern(pattern, flags)
