"""Where ``store.rawcodec.decode_text`` finds a text dictionary it has not seen yet (issue 43
goal 2, revision 0032): each open store adds its loader, ``load(dict_id)`` asks them, newest
first. Kept apart from ``rawcodec``, and on the builtin ``_weakref`` and ``_thread`` only, so
that a store adds its loader without importing ``zstandard``, ``weakref`` or ``threading``
(the read commands' start, issue 43 goal 3)."""

from __future__ import annotations

from _thread import allocate_lock
from _weakref import ref

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: ``typing`` costs the read commands' start
    from collections.abc import Callable
    from typing import Any

#: each open store and the function of its loader, the store held weakly: a store that is
#: gone drops out, and one that stays open (the daemon's) is never pushed out by the others
#: a long-lived process opens
_loaders: list[tuple[Any, Callable[[Any, int], bytes | None]]] = []
_lock = allocate_lock()


def add_loader(load: Any) -> None:
    """``load``: a store's bound method, ``load(dict_id)`` the bytes of a dictionary the store
    holds (``text_dicts.data``) or None. The store is held weakly (the loader does not keep
    it open). Raises ``AttributeError`` for a function that is not a bound method."""
    owner, func = ref(load.__self__), load.__func__
    with _lock:
        _loaders[:] = [entry for entry in _loaders if entry[0]() is not None]
        _loaders.append((owner, func))


def load(dict_id: int) -> bytes | None:
    """The bytes of dictionary ``dict_id`` from the first open store (newest first) that
    holds it; None when none does. A loader that raises (its store was closed) is skipped."""
    with _lock:
        loaders = [(owner(), func) for owner, func in reversed(_loaders)]
    for store, func in loaders:
        if store is None:
            continue
        try:
            data = func(store, dict_id)
        except Exception:  # noqa: BLE001 - a closed store's loader: ask the next
            continue
        if data is not None:
            return data
    return None


__all__ = ["add_loader", "load"]
