"""Conformance of the vector tables (issue 40, revision 0019) on SQLite and PostgreSQL: rows
waiting, idempotent puts, reads in ``vector_id`` order, empty vectors, orphans."""

from __future__ import annotations

import struct
from datetime import UTC, datetime

from continuity.core.model import Memory
from tests.builders import A, U, load

M = "test-model/4"


def _vec(*xs: float) -> bytes:
    return struct.pack(f"<{len(xs)}f", *xs)


def _memory(mid: str, text: str) -> Memory:
    return Memory(mid, text, mid * 2, created_at=datetime(2026, 11, 1, tzinfo=UTC))


def test_entries_to_embed_lists_rows_without_a_vector_of_the_model(store):
    """Rows of every session wait, in (session_key, seq) order, until a vector of that model
    is put; another model's vector does not count."""
    load(store, [U("one"), A(text="two")], key="b")
    load(store, [U("three")], key="a")
    waiting = store.entries_to_embed(M, limit=10)
    assert [(k, s) for k, s, _ in waiting] == [("a", 0), ("b", 0), ("b", 1)]
    assert waiting[0][2].blocks[0].text == "three"
    assert store.count_entries_to_embed(M) == 3
    assert store.put_entry_vectors("other/4", [("a", 0, _vec(1, 0, 0, 0))]) == 1
    assert store.count_entries_to_embed(M) == 3
    assert store.put_entry_vectors(M, [("a", 0, _vec(1, 0, 0, 0)), ("b", 1, b"")]) == 2
    assert [(k, s) for k, s, _ in store.entries_to_embed(M, limit=10)] == [("b", 0)]
    assert store.count_entries_to_embed(M) == 1
    assert [(k, s) for k, s, _ in store.entries_to_embed(M, limit=1, after=("a", 0))] == [("b", 0)]
    assert store.entries_to_embed(M, limit=10, sessions=["a"]) == []
    assert store.entries_to_embed(M, limit=0) == []


def test_put_entry_vectors_is_idempotent_and_reads_back_in_id_order(store):
    """A second put of the same rows inserts nothing and keeps the first vector; reads come
    in ``vector_id`` order after ``after``, in chunks, empty vectors skipped."""
    load(store, [U("x"), U("y"), U("z")], key="s")
    assert store.put_entry_vectors(M, [("s", 2, _vec(0, 0, 1, 0)), ("s", 0, _vec(1, 0, 0, 0))]) == 2
    assert store.put_entry_vectors(M, [("s", 0, _vec(9, 9, 9, 9)), ("s", 1, b"")]) == 1
    chunks = list(store.iter_entry_vectors(M, chunk=1))
    assert [len(c) for c in chunks] == [1, 1]
    rows = [r for c in chunks for r in c]
    assert [(k, s, v) for _, k, s, v in rows] == [
        ("s", 2, _vec(0, 0, 1, 0)),
        ("s", 0, _vec(1, 0, 0, 0)),
    ]
    ids = [r[0] for r in rows]
    assert ids == sorted(ids)
    assert [r[2] for c in store.iter_entry_vectors(M, after=ids[0]) for r in c] == [0]
    assert list(store.iter_entry_vectors("other/4")) == []
    assert store.max_vector_id(M) >= ids[-1]
    assert store.put_entry_vectors(M, []) == 0


def test_vector_ids_only_grow(store):
    """A vector put later has a higher id than every earlier one, so an index that read up to
    id N reads only what is new."""
    load(store, [U("x"), U("y")], key="s")
    store.put_entry_vectors(M, [("s", 0, _vec(1, 0, 0, 0))])
    first = store.max_vector_id(M)
    store.put_entry_vectors(M, [("s", 1, _vec(0, 1, 0, 0))])
    new = [r for c in store.iter_entry_vectors(M, after=first) for r in c]
    assert [(r[1], r[2]) for r in new] == [("s", 1)] and new[0][0] > first


def test_memories_to_embed_put_and_iter(store):
    """Memories wait until a vector of the model is put, like entries."""
    for mid in ("m2", "m1"):
        assert store.insert_memory(_memory(mid, f"memory {mid}"))
    assert [mid for mid, _ in store.memories_to_embed(M, limit=10)] == ["m1", "m2"]
    assert store.memories_to_embed(M, limit=10)[0][1].content == "memory m1"
    assert store.count_memories_to_embed(M) == 2
    assert store.put_memory_vectors(M, [("m1", _vec(0, 1, 0, 0))]) == 1
    assert store.put_memory_vectors(M, [("m1", _vec(1, 1, 1, 1))]) == 0
    assert [mid for mid, _ in store.memories_to_embed(M, limit=10)] == ["m2"]
    assert [mid for mid, _ in store.memories_to_embed(M, limit=10, after="m2")] == []
    assert [(mid, v) for c in store.iter_memory_vectors(M) for _, mid, v in c] == [
        ("m1", _vec(0, 1, 0, 0))
    ]
    assert store.max_vector_id(M, "memories") >= 1


def test_drop_orphan_vectors_removes_vectors_of_rows_that_are_gone(store):
    """Vectors whose entry or memory no longer exists are deleted; the others stay."""
    from sqlalchemy import delete

    from continuity.store import schema as t

    load(store, [U("x")], key="s")
    store.insert_memory(_memory("m1", "kept"))
    store.put_entry_vectors(M, [("s", 0, _vec(1, 0, 0, 0)), ("gone", 3, _vec(0, 1, 0, 0))])
    store.put_memory_vectors(M, [("m1", _vec(1, 0, 0, 0)), ("m0", _vec(0, 1, 0, 0))])
    assert store.drop_orphan_vectors() == 2
    assert [(k, s) for c in store.iter_entry_vectors(M) for _, k, s, _ in c] == [("s", 0)]
    assert [m for c in store.iter_memory_vectors(M) for _, m, _ in c] == ["m1"]
    with store.engine.begin() as conn:
        conn.execute(delete(t.memories))
    assert store.drop_orphan_vectors() == 1
    assert store.drop_orphan_vectors() == 0
