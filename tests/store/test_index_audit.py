"""Revision 0031 (issue 43 goals 1-2, "keep only the indexes a query uses"): each query the
index audit kept or made an index for still seeks it, on SQLite (both read paths) and on
PostgreSQL. A partial index serves a query only when the query states the index's condition,
and Alembic's schema comparison reads no condition, so only the plans can tell."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event

from continuity.core.model import Session
from continuity.store import open_store
from continuity.store.lite import open_lite
from tests.builders import CP, A, T, U, call, load
from tests.conftest import BACKENDS, _pg_database


def _rows() -> list[Any]:
    rows = [
        U("go"),
        A(call("c1", "Bash", cmd="ls"), call("c2")),
        T("c1"),
        CP("summary of the start"),
        A(call("c3")),  # no result: ix_tool_calls_unpaired
        T("c2"),
        U("more"),
    ]
    for i, e in enumerate(rows):
        e.native_id = f"n{i}"
    return rows


def _plan(store: Any, statement: str, parameters: Any) -> str:
    """The plan of ``statement`` as one line (PostgreSQL with sequential scans off: its
    tables here are a few rows, and the question is whether the index can serve the query)."""
    with store.engine.connect() as conn:
        if store.dialect == "sqlite":
            found = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters).all()
            return " | ".join(str(r[-1]) for r in found)
        conn.exec_driver_sql("SET enable_seqscan = off")
        found = conn.exec_driver_sql("EXPLAIN " + statement, parameters).all()
        return " | ".join(str(r[0]) for r in found)


def _plans(store: Any, call_it: Any) -> str:
    """The plans of every statement ``call_it()`` ran on ``store``, joined."""
    seen: list[tuple[str, Any]] = []

    def hook(*args: Any) -> None:  # conn, cursor, statement, parameters, context, many
        seen.append((args[2], args[3]))

    event.listen(store.engine, "before_cursor_execute", hook)
    try:
        call_it()
    finally:
        event.remove(store.engine, "before_cursor_execute", hook)
    return " || ".join(_plan(store, s, p) for s, p in seen)


@pytest.fixture(params=BACKENDS)
def filled(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    """A store on each backend holding two sessions of ``_rows``."""
    urls = [f"sqlite:///{tmp_path / 'continuity.db'}"] if request.param == "sqlite" else None
    for url in urls or _pg_database():
        with open_store(url) as store:
            for key in ("a", "b"):
                store.upsert_session(Session(key=key, harness="test"))
                load(store, _rows(), key=key)
            yield store


def test_each_kept_query_seeks_its_index(filled):
    """The newest compaction (``ix_entries_compaction``), the pairs of a tail
    (``ix_tool_calls_result_seq`` then ``ix_tool_calls_unpaired``), the import's look-up by
    native id (``ix_entries_native_hash``, rows with one) and a look-up by call id (the key)."""
    assert filled.latest_compaction("a").seq == 3
    assert "ix_entries_compaction" in _plans(filled, lambda: filled.latest_compaction("a"))
    assert {p.call_id for p in filled.tool_calls_from("a", 4)} == {"c2", "c3"}
    plans = _plans(filled, lambda: filled.tool_calls_from("a", 4))
    assert "ix_tool_calls_result_seq" in plans and "ix_tool_calls_unpaired" in plans, plans
    assert filled.native_seqs("a", ["n2", "n5"]) == {"n2": 2, "n5": 5}
    assert "ix_entries_native_hash" in _plans(filled, lambda: filled.native_seqs("a", ["n2", "n5"]))
    by_id = _plans(filled, lambda: filled.tool_calls("a", ["c1"]))
    if filled.dialect == "sqlite":  # WITHOUT ROWID: the key is the table
        assert "SEARCH tool_calls USING PRIMARY KEY (session_key=? AND call_id=?)" in by_id
    else:  # a few rows: PostgreSQL may take any index with the session first
        assert "Index Scan" in by_id and "Seq Scan" not in by_id, by_id


def test_the_search_index_is_keyed_by_the_row_number(filled):
    """The full-text index names a row by ``entries.entry_no``: a search reads each hit's row
    by that number (SQLite: the rowid itself; PostgreSQL: the primary key), and the writer
    finds the numbers of the rows it indexes through (session_key, seq), without a row
    (SQLite: the unique index holds the rowid)."""
    hits = filled.search_entries(["summary"], limit=5)
    assert sorted((h.session_key, h.seq) for h in hits) == [("a", 3), ("b", 3)]
    plans = _plans(filled, lambda: filled.search_entries(["summary"], limit=5))
    if filled.dialect == "sqlite":
        assert "SEARCH entries USING INTEGER PRIMARY KEY (rowid=?)" in plans, plans
        numbers = _plans(filled, lambda: load(filled, [U("summary again")], key="a"))
        assert "COVERING INDEX ux_entries_session_seq" in numbers, numbers
    else:
        assert "entries_pkey" in plans, plans


def test_the_sqlite_read_path_states_the_partial_conditions(tmp_path):
    """``store.lite`` (no SQLAlchemy) runs the same two queries with the same plans."""
    url = f"sqlite:///{tmp_path / 'continuity.db'}"
    with open_store(url) as store:
        store.upsert_session(Session(key="a", harness="test"))
        load(store, _rows(), key="a")
        lite = open_lite(url, read_only=True)
        assert lite is not None
        seen: list[tuple[str, Any]] = []
        rows = lite._rows

        def spy(sql: str, params: Any) -> Any:
            seen.append((sql, params))
            return rows(sql, params)

        lite._rows = spy  # type: ignore[method-assign]
        try:
            assert lite.latest_compaction("a").seq == 3
            assert {p.call_id for p in lite.tool_calls_from("a", 4)} == {"c2", "c3"}
        finally:
            lite.close()
        plans = " || ".join(_plan(store, sql, tuple(params)) for sql, params in seen)
    assert "ix_entries_compaction" in plans, plans
    assert "ix_tool_calls_result_seq" in plans and "ix_tool_calls_unpaired" in plans, plans
