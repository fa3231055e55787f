"""Where ``store.rawcodec.decode_text`` finds a text dictionary it has not seen yet (issue 43
goal 2, revision 0032): each open store adds its loader, ``load(dict_id)`` asks them, newest
first. Kept apart from ``rawcodec`` so that a store can add its loader without importing
``zstandard`` (the read commands' start, issue 43 goal 3)."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable

#: each open store's loader, held weakly: a store that is gone drops out, and one that stays
#: open (the daemon's) is never pushed out by the others a long-lived process opens
_loaders: list[weakref.WeakMethod[Callable[[int], bytes | None]]] = []
_lock = threading.Lock()


def add_loader(load: Callable[[int], bytes | None]) -> None:
    """``load``: a store's bound method, ``load(dict_id)`` the bytes of a dictionary the store
    holds (``text_dicts.data``) or None. Held weakly (it does not keep the store open).
    Raises ``TypeError`` for a function that is not a bound method."""
    ref = weakref.WeakMethod(load)
    with _lock:
        _loaders[:] = [r for r in _loaders if r() is not None]
        _loaders.append(ref)


def load(dict_id: int) -> bytes | None:
    """The bytes of dictionary ``dict_id`` from the first open store (newest first) that
    holds it; None when none does. A loader that raises (its store was closed) is skipped."""
    with _lock:
        loaders = [r() for r in reversed(_loaders)]
    for loader in loaders:
        if loader is None:
            continue
        try:
            data = loader(dict_id)
        except Exception:  # noqa: BLE001 - a closed store's loader: ask the next
            continue
        if data is not None:
            return data
    return None


__all__ = ["add_loader", "load"]
