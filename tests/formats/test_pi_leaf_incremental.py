"""The pi leaf path kept up incrementally (issue 17: a grown pi session re-read every row's
links on each import to walk its tree). An import whose new rows only extend the path skips
the walk; any other shape walks as before. Whatever the tree and however the file grows, the
stored visibility after each import is the one the walk defines: a row is visible when its
reader made it so and it lies on the path from the leaf (the last row with an id) back
through its parents."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

from hypothesis import HealthCheck, given, settings, strategies as st

from continuity.formats import importer
from continuity.formats.importer import import_file
from continuity.store import open_store

KEY = "pi-leaf-0001"


def _line(i: int, parent: str | None) -> dict:
    role = "user" if i % 2 == 0 else "assistant"
    msg: dict = {
        "role": role,
        "content": [{"type": "text", "text": f"turn {i}"}],
        "timestamp": 1_000 * (i + 1),
    }
    if role == "assistant":
        msg.update(stopReason="stop", provider="fake", model="fake-model")
    return {
        "type": "message",
        "id": f"e{i:03d}",
        "parentId": parent,
        "timestamp": f"2026-12-04T06:{i // 60:02d}:{i % 60:02d}.000Z",
        "message": msg,
    }


def _tree(parents: list[int | None]) -> list[dict]:
    """Row i's parent is row ``parents[i]`` (an earlier one) or none (a root)."""
    head = {
        "type": "session",
        "version": 3,
        "id": KEY,
        "cwd": "/home/ana/ledger",
        "timestamp": "2026-12-04T06:00:00.000Z",
    }
    return [head, *(_line(i, None if p is None else f"e{p:03d}") for i, p in enumerate(parents))]


def _expected(store) -> dict[int, bool]:
    """The walk, done here on the stored links: {seq: visible}."""
    links = list(store.tree_links(KEY))
    by_id: dict[str, tuple[int, str | None]] = {}
    leaf = None
    for seq, native, parent, _visible, _base in links:
        if native:
            by_id.setdefault(native, (seq, parent))
            leaf = native
    on_path, seen = set(), set()
    while leaf in by_id and leaf not in seen:
        seen.add(leaf)
        seq, parent = by_id[leaf]
        on_path.add(seq)
        leaf = parent
    return {
        seq: bool(base and (seq in on_path or not native)) for seq, native, _p, _v, base in links
    }


def _stored(store) -> dict[int, bool]:
    return {seq: visible for seq, _n, _p, visible, _b in store.tree_links(KEY)}


#: a tree: each row's parent is usually the row before (a conversation), sometimes an
#: earlier row (a branch: /tree in pi) or none (a new root)
trees = st.integers(2, 24).flatmap(
    lambda n: st.lists(
        st.one_of(st.just("prev"), st.just("prev"), st.just("prev"), st.integers(0, n), st.none()),
        min_size=n,
        max_size=n,
    )
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(shape=trees, cuts=st.lists(st.integers(1, 24), max_size=4))
def test_visibility_after_every_growth_is_the_walks(tmp_path_factory, shape, cuts) -> None:
    parents: list[int | None] = []
    for i, p in enumerate(shape):
        if p == "prev":
            parents.append(i - 1 if i else None)
        elif p is None or i == 0:
            parents.append(None)
        else:
            parents.append(p % i)
    lines = [json.dumps(x) + "\n" for x in _tree(parents)]
    steps = sorted({c for c in cuts if c < len(lines)} | {len(lines)})
    tmp = tmp_path_factory.mktemp("leaf")
    ours = _grown(tmp / "ours", lines, steps, walk_always=False)
    walked = _grown(tmp / "walked", lines, steps, walk_always=True)
    assert ours == walked, (parents, steps)
    if all(p is not None for p in parents[1:]):  # one tree: the walk's own definition
        with open_store(tmp / "ours" / "a.db") as store:
            assert _stored(store) == _expected(store)


def _grown(
    folder: Path, lines: list[str], steps: list[int], *, walk_always: bool
) -> list[dict[int, bool]]:
    """Write ``lines`` in the ``steps`` and import after each; the visibility after each.
    ``walk_always``: every import walks the tree, as before issue 17's change."""
    folder.mkdir()
    path = folder / f"2026-12-04T06-00-00-000Z_{KEY}.jsonl"
    real_init = importer._FileImport.__init__

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        self.linear = False

    out = []
    with (
        open_store(folder / "a.db") as store,
        mock.patch.object(importer._FileImport, "__init__", init if walk_always else real_init),
    ):
        written = 0
        for end in steps:
            with open(path, "a") as fh:
                fh.write("".join(lines[written:end]))
            written = end
            report = import_file(store, path)
            assert report.status == "imported", report
            out.append(_stored(store))
    return out


def test_a_linear_growth_reads_no_links(sqlite_store, tmp_path, monkeypatch) -> None:
    """The common case: a conversation that grows turn by turn is never walked again after
    the import that established its path, and a branch is."""
    path = tmp_path / f"2026-12-04T06-00-00-000Z_{KEY}.jsonl"
    lines = _tree([None, 0, 1, 2, 3, 4, 5, 6, 3, 8])  # e008 branches back to e003
    walks = []
    real = importer._apply_leaf_path
    monkeypatch.setattr(
        importer, "_apply_leaf_path", lambda store, key: walks.append(key) or real(store, key)
    )

    def grow(upto: int, start: int) -> None:
        with open(path, "a") as fh:
            fh.write("".join(json.dumps(x) + "\n" for x in lines[start:upto]))
        assert import_file(sqlite_store, path).status == "imported"

    grow(4, 0)
    grow(6, 4)
    grow(8, 6)
    assert walks == []  # linear from the first row: nothing to walk
    grow(11, 8)  # e008's parent is e003, not the leaf e007: walked
    assert walks == [KEY]
    visible = _stored(sqlite_store)
    # seq 0 is the session line (no id, not a message); e004-e007 left the path
    assert [visible[s] for s in range(11)] == [False] + [True] * 4 + [False] * 4 + [True] * 2
    assert _stored(sqlite_store) == _expected(sqlite_store)
