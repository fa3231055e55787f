"""The daemon's background embedding (issue 40): a pass after rows are written, bounded,
stopped at shutdown."""

from __future__ import annotations

import time

from continuity.daemon.embedding import EmbeddingThread, store_size
from tests.builders import U, load


def _wait(predicate, seconds=20.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_thread_embeds_waiting_rows_then_new_ones_when_nudged(sqlite_store, tmp_path):
    """Rows stored before the start are embedded by the first pass; rows written later are
    embedded after a nudge, long before the idle wait ends; stop ends the thread."""
    store = sqlite_store
    load(store, [U(f"row {i} about the parser") for i in range(10)], key="a")
    thread = EmbeddingThread(store, tmp_path / "home", idle_seconds=600, pass_rows=4)
    assert thread.start()
    model = "wordllama-l2-supercat/256"
    try:
        assert _wait(lambda: store.count_entries_to_embed(model) == 0)
        assert thread.passes >= 3  # bounded passes of 4 rows each
        load(store, [U("a new row about the xterm viewport")], key="b")
        thread.nudge()
        assert _wait(lambda: store.count_entries_to_embed(model) == 0)
        assert store_size(store) == (11, 0)
    finally:
        thread.stop()
    assert not thread._thread.is_alive()


def test_thread_does_not_start_when_search_is_words_only(sqlite_store, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTINUITY_RETRIEVAL__SEMANTIC", "off")
    thread = EmbeddingThread(sqlite_store, tmp_path / "home")
    assert not thread.start()
    thread.nudge("a")
    assert thread.pending() == 0  # nothing will run: /health must not wait for it
    thread.stop()


def test_a_nudge_naming_a_session_reads_that_session_only(sqlite_store, tmp_path):
    """Issue 45 item 10: after a turn the pass reads the nudged session's rows after the
    last one it embedded, never every row of the store (that scan was a fifth of the
    daemon's time under load); the next turn's pass starts after the first one's rows."""
    store = sqlite_store
    load(store, [U(f"row {i} about the parser") for i in range(5)], key="a")
    thread = EmbeddingThread(store, tmp_path / "home", idle_seconds=600)
    model = "wordllama-l2-supercat/256"
    assert thread.start()
    try:
        assert _wait(lambda: store.count_entries_to_embed(model) == 0)
        time.sleep(0.2)  # the start's full pass is over
        calls = []
        real = store.entries_to_embed

        def recording(model_id, **kw):
            calls.append((kw.get("sessions"), kw.get("after")))
            return real(model_id, **kw)

        store.entries_to_embed = recording
        load(store, [U("the first turn of b about the viewport")], key="b")
        thread.nudge("b")
        assert _wait(lambda: store.count_entries_to_embed(model) == 0)
        assert _wait(lambda: len(calls) >= 2)
        load(
            store,
            [
                U("the first turn of b about the viewport"),
                U("its second turn about the scrollback"),
            ],
            key="b",
        )
        thread.nudge("b")
        assert _wait(lambda: store.count_entries_to_embed(model) == 0)
        time.sleep(0.2)
        assert {s for s, _ in calls} == {("b",)}
        assert _wait(lambda: thread.pending() == 0)  # /health's embedding_pending
        import threading

        entered, release = threading.Event(), threading.Event()

        def held_pass(*_a):  # a session pass that runs until released
            entered.set()
            release.wait(10)

        thread._session_pass = held_pass
        thread.nudge("c")
        assert entered.wait(10)
        assert thread.pending() == 1  # a pass running is counted until it ends
        release.set()
        assert _wait(lambda: thread.pending() == 0)
        assert calls[0][1] == ("b", -1) and ("b", 0) in [a for _, a in calls[2:]]
    finally:
        thread.stop()


def test_the_stored_vectors_are_loaded_for_search_at_start(sqlite_store, tmp_path):
    """Issue 43 goal 3: the thread loads the vectors already stored into the process's
    search index before any search asks (the first search after ``serve`` paid 1.8 s for it
    on the 100 MB bench tree)."""
    from continuity.retrieval.embedder import load_embedder
    from continuity.retrieval.embedding import embed_pending
    from continuity.retrieval.index import _SHARED, _SHARED_LOCK
    from continuity.retrieval.settings import RetrievalSettings

    store = sqlite_store
    load(store, [U(f"row {i} about the parser") for i in range(7)], key="a")
    embedder = load_embedder(RetrievalSettings())
    assert embed_pending(store, embedder).embedded == 7  # stored before the daemon starts
    where = (str(store.url), embedder.model_id, "entries")
    with _SHARED_LOCK:
        _SHARED.pop(where, None)
    thread = EmbeddingThread(store, tmp_path / "home", idle_seconds=600)
    assert thread.start()
    try:
        assert _wait(lambda: where in _SHARED and len(_SHARED[where]) == 7)
    finally:
        thread.stop()
