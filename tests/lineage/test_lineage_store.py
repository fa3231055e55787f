"""Store primitives of the lineage (issue 6), on every backend: thread heads that never move
back in time, DAG nodes and edges, ranked memories with their project, completed transcripts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from continuity.core.model import Memory, Session
from continuity.store.lineage import DagEdge, DagNode, ThreadHead
from continuity.transcripts.session_transcripts import put_transcript

T0 = datetime(2026, 9, 1, 10, 0, tzinfo=UTC)


def head(
    key: str,
    at: datetime,
    *,
    thread: str = "project:/p",
    agent: str = "default",
    items: tuple[str, ...] = (),
) -> ThreadHead:
    return ThreadHead(
        agent,
        thread,
        "/p",
        "/p",
        key,
        "pi",
        "summary",
        f"memory/{key}.md",
        f"session:{key}",
        f"sample of {key}",
        at,
        T0,
        items,
    )


def test_thread_head_upsert_never_moves_back_in_time(store):
    """A newer head replaces the stored one; an older one is ignored; equal times replace."""
    assert store.upsert_thread_head(head("s2", T0 + timedelta(hours=2), items=("open a",)))
    assert not store.upsert_thread_head(head("s1", T0))
    got = store.thread_head("default", "project:/p")
    assert (got.session_key, got.open_items) == ("s2", ("open a",))
    assert got.latest_at == T0 + timedelta(hours=2)
    assert store.upsert_thread_head(head("s3", T0 + timedelta(hours=2)))
    assert store.thread_head("default", "project:/p").session_key == "s3"
    assert store.thread_head("default", "project:/other") is None


def test_thread_heads_newest_first_per_agent_and_project(store):
    """Heads list newest first; another agent's heads and other projects stay out."""
    store.upsert_thread_head(head("a", T0, thread="project:/a"))
    store.upsert_thread_head(head("b", T0 + timedelta(hours=1), thread="project:/b"))
    store.upsert_thread_head(head("c", T0 + timedelta(hours=2), thread="project:/c", agent="other"))
    assert [h.session_key for h in store.thread_heads("default")] == ["b", "a"]
    assert [h.session_key for h in store.thread_heads("default", limit=1)] == ["b"]
    assert store.thread_heads("default", project="/nowhere") == []
    with pytest.raises(ValueError, match="latest_at"):
        store.upsert_thread_head(head("n", datetime(2026, 1, 1)))


def node(
    node_id: str,
    at: datetime,
    *,
    kind: str = "session",
    thread: str = "project:/p",
    session: str | None = None,
) -> DagNode:
    return DagNode(
        node_id,
        "default",
        kind,
        node_id,
        f"content {node_id}",
        T0,
        "/p",
        session or node_id,
        thread,
        "pi",
        None,
        at,
        at,
        {"n": 1, "a": [1, 2]},
    )


def test_dag_nodes_upsert_and_filter(store):
    """Nodes are replaced by id and listed newest first with their filters; meta round-trips."""
    store.put_dag_nodes(
        [
            node("s1", T0),
            node("s2", T0 + timedelta(hours=1)),
            node("c1", T0 + timedelta(minutes=5), kind="compaction", session="s1"),
        ]
    )
    store.put_dag_nodes([node("s1", T0 + timedelta(hours=3))])
    assert [n.node_id for n in store.dag_nodes("default")] == ["s1", "s2", "c1"]
    assert [n.node_id for n in store.dag_nodes("default", kinds=["compaction"])] == ["c1"]
    assert [n.node_id for n in store.dag_nodes("default", session_key="s1")] == ["s1", "c1"]
    assert store.dag_nodes("other") == []
    got = store.dag_node("s2")
    assert got.meta == {"a": [1, 2], "n": 1} and got.latest_at == T0 + timedelta(hours=1)
    assert store.dag_node("missing") is None
    with pytest.raises(ValueError, match="kind"):
        store.put_dag_nodes([node("x", T0, kind="epoch")])


def test_replace_edges_swaps_a_sources_edges_of_one_kind(store):
    """replace_edges deletes the sources' edges of that kind only, then inserts the new set."""
    e = lambda s, d, k="continues": DagEdge(s, d, k, "default", T0)  # noqa: E731
    store.replace_edges("default", "continues", ["b"], [e("b", "a")])
    store.replace_edges("default", "mentions", ["b"], [e("b", "t", "mentions")])
    store.replace_edges("default", "continues", ["b", "c"], [e("c", "b"), e("c", "b")])
    got = {(x.src_id, x.dst_id, x.kind) for x in store.dag_edges("default")}
    assert got == {("c", "b", "continues"), ("b", "t", "mentions")}
    assert [x.dst_id for x in store.dag_edges("default", node_ids=["t"])] == ["t"]
    assert store.dag_edges("default", kinds=["compacted_into"]) == []
    with pytest.raises(ValueError, match="continues"):
        store.replace_edges("default", "continues", ["x"], [e("x", "y", "mentions")])


def test_ranked_memories_by_importance_with_source_project(store):
    """Memories come by importance, then newest; the source session's project comes along."""
    store.upsert_session(Session(key="s1", harness="pi", project="/home/ana/ledger"))
    rows = [
        Memory("m1", "low", "h1", "fact", (), 0.2, "s1", "default", T0),
        Memory("m2", "high", "h2", "constraint", (), 0.9, None, "default", T0),
        Memory("m3", "mid new", "h3", "fact", (), 0.5, "s1", "default", T0 + timedelta(hours=1)),
        Memory("m4", "mid old", "h4", "fact", (), 0.5, "s1", "default", T0),
        Memory("m5", "other agent", "h5", "fact", (), 1.0, None, "other", T0),
    ]
    for m in rows:
        store.insert_memory(m)
    got = store.ranked_memories("default")
    assert [(m.memory_id, p) for m, p in got] == [
        ("m2", None),
        ("m3", "/home/ana/ledger"),
        ("m4", "/home/ana/ledger"),
        ("m1", "/home/ana/ledger"),
    ]
    assert [m.memory_id for m, _ in store.ranked_memories("default", types=["constraint"])] == [
        "m2"
    ]
    assert [
        m.memory_id
        for m, _ in store.ranked_memories("default", exclude_types=["constraint"], limit=1)
    ] == ["m3"]
    assert store.count_ranked_memories("default", exclude_types=["constraint"]) == 3


def test_ranked_memories_project_scope_and_excluded_prefixes(store):
    """A project scope keeps its memories and those of no project; temp projects drop out."""
    store.upsert_session(Session(key="a", harness="pi", project="/home/ana/a"))
    store.upsert_session(Session(key="b", harness="pi", project="/home/ana/b"))
    store.upsert_session(Session(key="t", harness="pi", project="/tmp/x_y"))
    for i, src in enumerate(["a", "b", "t", None]):
        store.insert_memory(
            Memory(
                f"m{i}",
                f"c{i}",
                f"h{i}",
                "fact",
                (),
                0.5,
                src,
                "default",
                T0 + timedelta(minutes=i),
            )
        )
    got = store.ranked_memories("default", project="/home/ana/a", exclude_prefixes=["/tmp/"])
    assert [m.memory_id for m, _ in got] == ["m3", "m0"]
    assert store.count_ranked_memories("default", exclude_prefixes=["/tmp/"]) == 3
    assert store.count_ranked_memories("default", exclude_prefixes=["/tmp/x%"]) == 4


def test_completed_transcripts_oldest_completion_first(store):
    """Only completed rows, oldest completion first, with their hashes."""
    put_transcript(store, "b", "two", completed_at=T0 + timedelta(hours=1), now=T0)
    put_transcript(store, "a", "one", completed_at=T0 + timedelta(hours=2), now=T0)
    put_transcript(store, "open", "three", now=T0)
    got = store.completed_transcripts()
    assert [(k, a) for k, a, _ in got] == [("b", "default"), ("a", "default")]
    assert store.completed_transcripts("other") == []
