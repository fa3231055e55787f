"""Where ``store.rawcodec.decode_text`` finds a text dictionary it has not seen yet (issue 43
goal 2, revision 0032): each open store adds a loader, ``load(dict_id)`` asks them, newest
first. Kept apart from ``rawcodec`` so that a store can add its loader without importing
``zstandard`` (the read commands' start, issue 43 goal 3)."""

from __future__ import annotations

import threading
from collections.abc import Callable

_loaders: list[Callable[[int], bytes | None]] = []
_lock = threading.Lock()
#: a long-lived process opens and closes stores: only the newest few loaders are kept
KEPT = 8


def add_loader(load: Callable[[int], bytes | None]) -> None:
    """``load(dict_id)``: the bytes of a dictionary the store holds (``text_dicts.data``), or
    None when it holds none by that id. A store adds one when it opens."""
    with _lock:
        _loaders.append(load)
        del _loaders[:-KEPT]


def load(dict_id: int) -> bytes | None:
    """The bytes of dictionary ``dict_id`` from the first store (newest first) that holds it;
    None when none does. A loader that raises (its store was closed) is skipped."""
    with _lock:
        loaders = list(reversed(_loaders))
    for loader in loaders:
        try:
            data = loader(dict_id)
        except Exception:  # noqa: BLE001 - a closed store's loader: ask the next
            continue
        if data is not None:
            return data
    return None


__all__ = ["KEPT", "add_loader", "load"]
