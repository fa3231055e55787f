"""Alembic migrations: one head, equal to HEAD_REVISION, and no diff from the live schema."""

from __future__ import annotations

from datetime import UTC

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect

from continuity.core.errors import SchemaOutOfDate
from continuity.store import _MIGRATIONS, HEAD_REVISION, current_revision, open_store
from continuity.store.schema import metadata
from tests.conftest import BACKENDS

#: Full-text objects of revisions 0007 and 0011 (dialect-specific, outside store.schema).
FTS_OBJECTS = (
    "memories_fts",
    "ix_memories_content_fts",
    "ix_memories_search_fts",
    "entries_fts",
    "entries_fts_rows",
    "ix_entries_fts_doc",
    "ux_entries_fts_rows",
)


def _not_fts(obj, name, type_, reflected, compare_to):  # type: ignore[no-untyped-def]
    """include_object filter: leave the full-text table, its shadow tables and index out."""
    return not (name or "").startswith(FTS_OBJECTS)


def test_migrations_single_head_is_head_revision():
    """The revision graph has one head and open_store knows it."""
    script = ScriptDirectory(str(_MIGRATIONS))
    assert script.get_heads() == [HEAD_REVISION]


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_migrations_empty_to_head_matches_schema(db_url):
    """Migrating an empty database gives exactly the tables of store.schema."""
    with open_store(db_url):
        pass
    engine = create_engine(db_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"include_object": _not_fts})
            diff = compare_metadata(context, metadata)
            tables = {n for n in inspect(conn).get_table_names() if not n.startswith(FTS_OBJECTS)}
        assert diff == []
        assert tables == set(metadata.tables) | {"alembic_version"}
        assert current_revision(engine) == HEAD_REVISION
    finally:
        engine.dispose()


def test_migrations_stale_schema_names_the_command(tmp_path):
    """Without auto-migration, an empty database is refused with the command to run."""
    with (
        pytest.raises(SchemaOutOfDate, match="continuity db upgrade"),
        open_store(tmp_path / "x.db", auto_migrate=False),
    ):
        pass


def test_migrations_reopen_keeps_rows(tmp_path):
    """Opening a current database again migrates nothing and keeps its rows."""
    from continuity.core.model import Session

    with open_store(tmp_path / "x.db") as s:
        s.upsert_session(Session(key="k", harness="pi"))
    with open_store(tmp_path / "x.db", auto_migrate=False) as s:
        assert s.get_session("k").harness == "pi"


def test_project_sessions_uses_the_project_index(tmp_path):
    """Revision 0012 (issue 12): the folder lookup of the MCP tools' fallback
    (``project_sessions``) searches ``ix_sessions_project`` instead of scanning ``sessions``."""
    from sqlalchemy import text

    with open_store(f"sqlite:///{tmp_path / 'c.db'}") as store, store.engine.connect() as conn:
        plan = conn.execute(
            text(
                "EXPLAIN QUERY PLAN SELECT * FROM sessions WHERE project IN ('/p', '/p/') "
                "ORDER BY coalesce(ended_at, updated_at) DESC LIMIT 20"
            )
        ).all()
    details = " | ".join(str(row[-1]) for row in plan)
    assert "USING INDEX ix_sessions_project" in details, details


#: The columns of ``entries`` before revision 0024, in table order.
_ENTRY_COLUMNS_0023 = (
    "session_key",
    "seq",
    "entry_id",
    "native_id",
    "parent_native_id",
    "kind",
    "role",
    "type_name",
    "visible",
    "base_visible",
    "is_request",
    "sidechain",
    "ts",
    "cwd",
    "content",
    "meta",
    "view_bytes",
    "source_path",
    "line_no",
    "byte_offset",
    "raw_sha256",
)


def _write_rows_as_before_0030(store, monkeypatch, *, content_z: bool = True) -> None:
    """Make ``store`` write rows as revisions 0024 to 0029 did (``content_z``) or as those
    before 0024 did (not ``content_z``: every row's content as text): every ``entries``
    column of then, ``entry_id`` and ``source_path`` too, which revision 0030 dropped (a test
    that writes rows at an older revision with today's bulk writer)."""
    from sqlalchemy import Column, MetaData, Table

    from continuity.core.codec import blocks_to_json
    from continuity.store import bulk, schema

    columns = (*_ENTRY_COLUMNS_0023, "content_z") if content_z else _ENTRY_COLUMNS_0023
    now = {c.name: c for c in schema.entries.columns}
    extra = {"entry_id": schema.String(300), "source_path": schema.Text()}
    old_table = Table(
        "entries",
        MetaData(),
        *[Column(name, extra[name]) if name in extra else now[name]._copy() for name in columns],
    )
    new_row = bulk.entry_row

    def old_row(key, e, source_id=None, text_dict=None):  # type: ignore[no-untyped-def]
        values = dict(zip(bulk.ENTRY_COLUMNS, new_row(key, e, source_id), strict=True))
        if not content_z:
            values["content"] = blocks_to_json(e.blocks)
        values["entry_id"] = f"{key}:{e.seq}"
        values["source_path"] = e.source.path if e.source else None
        return tuple(values[name] for name in columns)

    _train_no_dictionary(store)  # first: the insert of then replaces its own
    store._bulk.entries = bulk.BulkInsert(old_table, columns, store.engine.dialect)
    monkeypatch.setattr(bulk, "entry_row", old_row)


def _train_no_dictionary(store) -> None:
    """Make ``store`` write as revisions before 0032 did: it trains no text dictionary (the
    table it would look in does not exist yet); and as those before 0033
    (``_write_as_before_0033``)."""
    store._train_text_dict = lambda conn, long_rows: None
    _write_as_before_0033(store)


def _write_as_before_0033(store) -> None:
    """Make ``store`` write and look up rows as revisions before 0033 did: no
    ``native_hash`` column (the bulk insert leaves the last value of each row out), and the
    look-up by native id by (session_key, native_id)."""
    from continuity.store import bulk, schema

    bulk_writer = store._bulk
    if getattr(bulk_writer, "_before_0033", False):
        return
    columns = bulk.ENTRY_COLUMNS[:-1]
    assert bulk.ENTRY_COLUMNS[-1] == "native_hash"
    old = _with_text_native_ids(bulk.BulkInsert(schema.entries, columns, store.engine.dialect))
    insert = bulk.BulkInsert.run

    class _Old:
        def run(self, conn, rows):  # type: ignore[no-untyped-def]
            insert(old, conn, [row[:-1] for row in rows])

    def native_seqs(conn, key, ids):  # type: ignore[no-untyped-def]
        asked = {schema.nul_free(i): i for i in set(ids) if i}
        mark = "?" if store.dialect == "sqlite" else "%s"
        out = {}
        for native in asked:
            found = conn.exec_driver_sql(
                f"SELECT min(seq) FROM entries WHERE session_key = {mark} AND native_id = {mark}",
                (schema.nul_free(key), native),
            ).scalar()
            if found is not None:
                out[asked[native]] = found
        return out

    bulk_writer.entries = _Old()
    bulk_writer.native_seqs = native_seqs
    bulk_writer._before_0033 = True


def _with_text_native_ids(insert):  # type: ignore[no-untyped-def]
    """``insert`` (a ``store.bulk.BulkInsert`` of ``entries``) storing native ids as text, as
    revisions before 0034 did (no UUID as 16 bytes)."""
    from continuity.store import bulk

    native = {i for i, name in enumerate(insert.columns) if "native_id" in name}
    insert.converters = [
        (i, bulk._nul_free_column if i in native else fn) for i, fn in insert.converters
    ]
    return insert


def _write_as_before_0034(store) -> None:
    """Make ``store`` write native ids as text, as revisions before 0034 did (the look-up
    binds them as text too)."""
    from continuity.store import bulk, schema

    bulk_writer = store._bulk
    if getattr(bulk_writer, "_before_0034", False):
        return
    bulk_writer.entries = _with_text_native_ids(
        bulk.BulkInsert(schema.entries, bulk.ENTRY_COLUMNS, store.engine.dialect)
    )
    bulk_writer._dialect_name = "text ids"  # NativeId.stored keeps text but for "sqlite"
    bulk_writer._before_0034 = True


def _write_rows_as_before_0024(store, monkeypatch) -> None:
    """``_write_rows_as_before_0030`` as before revision 0024: no ``content_z``."""
    _write_rows_as_before_0030(store, monkeypatch, content_z=False)


def _index_as_before_0031(store) -> None:
    """Make ``store`` write the search index as revisions 0014 to 0028 did (a test that writes
    rows at an older revision with today's bulk writer): on SQLite ``entries_fts_rows``
    numbering each row max + 1 with the FTS document under that number, on PostgreSQL
    ``entries_fts`` keyed by (session_key, seq)."""
    _train_no_dictionary(store)
    from continuity.store import fts
    from continuity.store.search import _call_names, entry_body, entry_tools, pg_words

    def put(conn, key, entries):  # type: ignore[no-untyped-def]
        names = _call_names(entries)
        docs = [(e.seq, fts.search_text(entry_body(e)), entry_tools(e, names)) for e in entries]
        if store.dialect == "sqlite":
            base = conn.exec_driver_sql(
                "SELECT coalesce(max(search_id), 0) FROM entries_fts_rows"
            ).scalar()
            conn.exec_driver_sql(
                "INSERT INTO entries_fts_rows (search_id, session_key, seq) VALUES (?, ?, ?)",
                [(base + 1 + i, key, seq) for i, (seq, _, _) in enumerate(docs)],
            )
            conn.exec_driver_sql(
                "INSERT INTO entries_fts (rowid, body, tools) VALUES (?, ?, ?)",
                [(base + 1 + i, body, tools) for i, (_, body, tools) in enumerate(docs)],
            )
        else:
            conn.exec_driver_sql(
                "INSERT INTO entries_fts (session_key, seq, tools, doc) VALUES "
                "(%s, %s, %s, to_tsvector('english'::regconfig, %s))",
                [(key, seq, tools, pg_words(body)) for seq, body, tools in docs],
            )

    store._bulk.search.put = put


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0014_indexes_existing_entries(db_url, monkeypatch):
    """Revision 0014 (issue 19): rows stored before the entries index existed are found by
    ``search`` after the upgrade, as rows written later are."""
    from sqlalchemy import create_engine

    from continuity.browse.search import search
    from continuity.core.model import Session
    from continuity.store import SqlStore, migrate
    from tests.builders import A, T, U, call

    engine = create_engine(db_url)
    migrate(engine, "0013")
    # Rows written the 0013 way: the bulk writer without the index hook.
    s = SqlStore(engine, db_url)
    s._bulk.search.put = lambda *a, **k: None  # type: ignore[method-assign]
    _write_rows_as_before_0024(s, monkeypatch)
    try:
        s.upsert_session(Session(key="old", harness="codex"))
        rows = [
            U("the pelican question"),
            A(call("c1", "Bash", cmd="ls pelican/")),
            T("c1", text="pelican.txt"),
        ]
        for i, e in enumerate(rows):
            e.seq = i
        s.append("old", rows)
    finally:
        s.close()
        monkeypatch.undo()
    with open_store(db_url) as s:  # upgrades to head
        assert [(h.seq, h.harness) for h in sorted(search(s, "pelican"), key=lambda h: h.seq)] == [
            (0, "codex"),
            (1, "codex"),
            (2, "codex"),
        ]
        new = U("pelican again")
        new.seq = 3
        s.append("old", [new])
        assert len(search(s, "pelican")) == 4


def test_migration_0016_downgrade_makes_compressed_raw_lines_plain(tmp_path):
    """Revision 0016 (issue 17): a raw line kept as a zstd frame reads back exact, and a
    downgrade to 0015 writes it back as its bytes before the codec column goes."""
    from alembic import command
    from sqlalchemy import text

    from continuity.store.base import RawLine

    url = f"sqlite:///{tmp_path / 'd.db'}"
    line = b'{"type":"user","message":"' + b"compress me " * 40 + b'"}'
    with open_store(url) as store:
        store.put_raw_lines([RawLine("/f", 1, 0, "a" * 64, line)])
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT codec FROM raw_lines")).scalar() == 1
    from continuity.store import _alembic_config

    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0015")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT data FROM raw_lines")).scalar() == line
            assert "codec" not in {c["name"] for c in inspect(conn).get_columns("raw_lines")}
    finally:
        engine.dispose()


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0018_moves_transcript_text_to_parts_and_back(db_url):
    """Revision 0018 (issue 17): a transcript row's text written at 0017 (in its ``content``
    column) reads back the same after the upgrade, as part 0; an append then adds a part;
    a downgrade to 0017 writes the whole text back into ``content``."""
    from datetime import datetime

    from alembic import command
    from sqlalchemy import text

    from continuity.store import _alembic_config, migrate
    from continuity.store.memory import part_text

    at = datetime(2026, 12, 1, tzinfo=UTC)
    engine = create_engine(db_url)
    try:
        migrate(engine, "0017")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO session_transcripts (session_key, agent_id, harness, project, "
                    "content, content_hash, created_at, updated_at) VALUES ('s1', 'default', 'pi', "
                    "NULL, 'User: héllo', :h, :at, :at), ('s2', 'default', 'pi', NULL, '', :e, :at, "
                    ":at)"
                ),
                {"h": "1" * 64, "e": "2" * 64, "at": at},
            )
    finally:
        engine.dispose()
    with open_store(db_url) as store:  # upgrades to head
        rows = store.get_transcripts(["s1", "s2"], "default")
        assert (rows["s1"].content, rows["s2"].content) == ("User: héllo", "")
        assert store.append_transcript(
            "s1",
            "default",
            tail="\n\nAssistant: hi",
            content_hash="3" * 64,
            expected_hash="1" * 64,
            harness="pi",
            project=None,
            updated_at=at,
        )
        with store.engine.connect() as conn:
            parts = conn.execute(
                text("SELECT part, data, codec FROM session_transcript_parts ORDER BY part")
            ).all()
        assert [(n, part_text(d, c)) for n, d, c in parts] == [
            (0, "User: héllo"),
            (1, "\n\nAssistant: hi"),
        ]
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0017")
        with engine.connect() as conn:
            assert conn.execute(
                text("SELECT session_key, content FROM session_transcripts ORDER BY session_key")
            ).all() == [("s1", "User: héllo\n\nAssistant: hi"), ("s2", "")]
            assert not inspect(conn).has_table("session_transcript_parts")
    finally:
        engine.dispose()


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0019_adds_vector_tables_and_existing_rows_wait(db_url, monkeypatch):
    """Revision 0019 (issue 40): rows stored at 0018 survive the upgrade and wait to be
    embedded; vector ids only grow, also after the newest vector is deleted (no reuse); a
    downgrade to 0018 drops the tables."""
    from alembic import command
    from sqlalchemy import text

    from continuity.core.model import Session
    from continuity.store import SqlStore, _alembic_config, migrate
    from tests.builders import U

    engine = create_engine(db_url)
    migrate(engine, "0018")
    s = SqlStore(engine, db_url)
    _write_rows_as_before_0024(s, monkeypatch)
    _index_as_before_0031(s)
    try:
        s.upsert_session(Session(key="old", harness="pi"))
        row = U("stored before vectors existed")
        row.seq = 0
        s.append("old", [row])
    finally:
        s.close()
        monkeypatch.undo()
    with open_store(db_url) as store:  # upgrades to head
        assert [(k, q) for k, q, _ in store.entries_to_embed("m/4", limit=5)] == [("old", 0)]
        store.put_entry_vectors("m/4", [("old", 0, b"\x00" * 16)])
        first = store.max_vector_id("m/4")
        with store.engine.begin() as conn:
            conn.execute(text("DELETE FROM entry_vectors"))
        store.put_entry_vectors("m/4", [("old", 0, b"\x00" * 16)])
        assert store.max_vector_id("m/4") > first
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0018")
        with engine.connect() as conn:
            assert not inspect(conn).has_table("entry_vectors")
            assert not inspect(conn).has_table("memory_vectors")
    finally:
        engine.dispose()


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0020_adds_receipt_detail_and_keeps_old_receipts(db_url):
    """Revision 0020 (issue 45 item 7): a receipt stored at 0019 survives the upgrade with no
    detail; a new one keeps its detail; a downgrade to 0019 drops the column."""
    from datetime import datetime

    from alembic import command
    from sqlalchemy import text

    from continuity.core.model import ReceiptReason, RefusalReceipt
    from continuity.store import _alembic_config, migrate

    engine = create_engine(db_url)
    migrate(engine, "0019")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO refusal_receipts (session_key, run_id, reason, token, "
                "created_at) VALUES ('s', 's:0', 'empty', 1, :at)"
            ),
            {"at": datetime(2026, 12, 1, tzinfo=UTC)},
        )
    engine.dispose()
    with open_store(db_url) as store:  # upgrades to head
        assert [(r.run_id, r.detail) for r in store.receipts("s")] == [("s:0", None)]
        lease = store.acquire_lease("s", "a", 60)
        store.add_receipt(
            RefusalReceipt("s", "s:1", ReceiptReason.PROVIDER_FAILURE, detail="HTTP 500"),
            lease.token,
        )
        assert [r.detail for r in store.receipts("s")] == [None, "HTTP 500"]
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0019")
        with engine.connect() as conn:
            assert "detail" not in {
                c["name"] for c in inspect(conn).get_columns("refusal_receipts")
            }
    finally:
        engine.dispose()


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0022_blocks_read_back_and_downgrade_gives_each_line_its_bytes(db_url):
    """Revision 0022 (issue 43): lines written at 0021 (one frame each) and lines written at
    0022 (in blocks) read back exact side by side; a downgrade to 0021 gives every block line
    its bytes back (codec NULL) before ``raw_blocks`` goes."""
    from alembic import command
    from sqlalchemy import text

    from continuity.store import _alembic_config, migrate
    from continuity.store.base import RawLine

    old = b'{"type":"user","message":"' + b"compress me " * 40 + b'"}'
    new = [b'{"type":"assistant","n":%d,"text":"the same words"}' % i for i in range(50)]
    engine = create_engine(db_url)
    try:
        migrate(engine, "0021")
        with engine.begin() as conn:
            conn.execute(
                text("INSERT INTO raw_lines (sha256, data, codec) VALUES (:s, :d, NULL)"),
                {"s": "a" * 64, "d": old},
            )
            conn.execute(
                text(
                    "INSERT INTO source_lines (path, line_no, byte_offset, raw_sha256) "
                    "VALUES ('/f', 1, 0, :s)"
                ),
                {"s": "a" * 64},
            )
    finally:
        engine.dispose()
    lines = [RawLine("/f", 1, 0, "a" * 64, old)]
    for i, data in enumerate(new, start=2):
        lines.append(RawLine("/f", i, 100 * i, f"{i:064x}", data))
    with open_store(db_url) as store:  # upgrades to head
        store.put_raw_lines(lines[1:])
        assert list(store.raw_lines("/f")) == lines
        with store.engine.connect() as conn:
            assert (
                conn.execute(text("SELECT count(*) FROM raw_lines WHERE codec = 2")).scalar() == 50
            )
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0021")
        with engine.connect() as conn:
            got = dict(conn.execute(text("SELECT sha256, data FROM raw_lines")).all())
            assert {k: bytes(v) for k, v in got.items()} == {ln.sha256: ln.data for ln in lines}
            assert (
                conn.execute(
                    text("SELECT count(*) FROM raw_lines WHERE codec IS NOT NULL")
                ).scalar()
                == 0
            )
            assert not inspect(conn).has_table("raw_blocks")
    finally:
        engine.dispose()


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0023_keeps_each_path_once_and_every_position(db_url):
    """Revision 0023 (issue 43): the positions written at 0022 (a path on every line) are
    copied to ``source_lines`` keyed by ``source_paths``, each path once, and read back with
    their bytes; a rewritten file's positions are still replaced by path; the downgrade puts
    the paths back on the lines."""
    from alembic import command
    from sqlalchemy import text

    from continuity.store import _alembic_config, migrate
    from continuity.store.base import RawLine

    engine = create_engine(db_url)
    try:
        migrate(engine, "0022")
        with engine.begin() as conn:
            for i, (path, line_no) in enumerate([("/a", 1), ("/a", 2), ("/b", 1)]):
                sha = f"{i:064x}"
                conn.execute(
                    text("INSERT INTO raw_lines (sha256, data) VALUES (:s, :d)"),
                    {"s": sha, "d": b"line %d" % i},
                )
                conn.execute(
                    text(
                        "INSERT INTO source_lines (path, line_no, byte_offset, raw_sha256) "
                        "VALUES (:p, :n, :o, :s)"
                    ),
                    {"p": path, "n": line_no, "o": 7 * (line_no - 1), "s": sha},
                )
    finally:
        engine.dispose()
    with open_store(db_url) as store:  # upgrades to head
        assert list(store.raw_lines("/a")) == [
            RawLine("/a", 1, 0, f"{0:064x}", b"line 0"),
            RawLine("/a", 2, 7, f"{1:064x}", b"line 1"),
        ]
        assert list(store.raw_lines("/b")) == [RawLine("/b", 1, 0, f"{2:064x}", b"line 2")]
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM source_paths")).scalar() == 2
        with store.batch():
            assert store.forget_source_lines("/a") == 2
            store.put_raw_lines([RawLine("/a", 1, 0, "f" * 64, b"rewritten")])
        assert [r.data for r in store.raw_lines("/a")] == [b"rewritten"]
        assert store.forget_source_lines("/never-read") == 0
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0022")
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT path, line_no, raw_sha256 FROM source_lines ORDER BY path, line_no")
            ).all()
            assert [tuple(r) for r in rows] == [("/a", 1, "f" * 64), ("/b", 1, f"{2:064x}")]
            assert not inspect(conn).has_table("source_paths")
    finally:
        engine.dispose()


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0024_long_content_compressed_and_downgrade_restores_it(db_url):
    """Revision 0024 (issue 43): a row written at 0023 (its content as text) and one written
    at 0024 (a long content as a frame) read back alike; the downgrade writes the frame's text
    back into ``content`` before ``content_z`` goes."""
    from alembic import command
    from sqlalchemy import text

    from continuity.core.model import Entry, EntryKind, Role, Session, TextBlock
    from continuity.store import _alembic_config, migrate

    long_text = "the export job stamps UTC now; " * 30
    engine = create_engine(db_url)
    try:
        migrate(engine, "0023")
    finally:
        engine.dispose()
    with open_store(db_url) as store:  # upgrades to head
        store.upsert_session(Session(key="s", harness="pi"))
        rows = [
            Entry(EntryKind.MESSAGE, Role.USER, (TextBlock("fix it"),)),
            Entry(EntryKind.MESSAGE, Role.ASSISTANT, (TextBlock(long_text),)),
        ]
        for i, e in enumerate(rows):
            e.seq = i
        store.append("s", rows)
        with store.engine.connect() as conn:
            assert (
                conn.execute(
                    text("SELECT count(*) FROM entries WHERE content_z IS NOT NULL")
                ).scalar()
                == 1
            )
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0023")
        with engine.connect() as conn:
            got = conn.execute(text("SELECT content FROM entries ORDER BY seq")).scalars().all()
            assert got == [
                '[{"type":"text","text":"fix it"}]',
                '[{"type":"text","text":"' + long_text + '"}]',
            ]
            assert "content_z" not in {c["name"] for c in inspect(conn).get_columns("entries")}
    finally:
        engine.dispose()


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0027_adds_tombstones_and_downgrade_drops_them(db_url):
    """Revision 0027 (issue 41 item 2): a workspace at 0026 upgrades with its sessions kept and
    an empty ``forgotten``; a tombstone written at head keeps its key from import
    (``is_forgotten``); the downgrade drops the table and keeps every other row."""
    from alembic import command

    from continuity.core.model import Entry, EntryKind, Role, Session, TextBlock
    from continuity.store import _alembic_config, migrate

    engine = create_engine(db_url)
    try:
        migrate(engine, "0026")
        assert "forgotten" not in inspect(engine).get_table_names()
    finally:
        engine.dispose()
    with open_store(db_url) as store:  # upgrades to head
        for key in ("keep", "gone"):
            store.upsert_session(Session(key=key, harness="pi"))
            row = Entry(EntryKind.MESSAGE, Role.USER, (TextBlock(f"{key} it"),))
            row.seq = 0
            store.append(key, [row])
        assert store.tombstones() == []
        deleted = store.forget_session("gone", pattern="gone it")
        assert deleted["entries"] == 1 and deleted["sessions"] == 1
        assert store.is_forgotten("gone") and not store.is_forgotten("keep")
        assert [k for _, k in store.tombstones()] == ["gone"]
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0026")
        names = inspect(engine).get_table_names()
        assert "forgotten" not in names and "team_copies" not in names
        assert "team_index" in names
        with engine.connect() as conn:
            from sqlalchemy import text

            keys = conn.execute(text("SELECT session_key FROM sessions")).scalars().all()
            assert keys == ["keep"]
    finally:
        engine.dispose()


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0028_keeps_session_secrets_and_downgrade_drops_them(db_url):
    """Revision 0028 (issue 43 goal 3): a workspace at 0027 upgrades with its sessions kept and
    an empty ``session_secrets``, which then keeps a session's secrets; the downgrade drops the
    table (a cache: nothing else changes)."""
    from alembic import command

    from continuity.core.model import Entry, EntryKind, Role, Session, TextBlock
    from continuity.redaction.session import session_secrets
    from continuity.store import _alembic_config, migrate

    engine = create_engine(db_url)
    try:
        migrate(engine, "0027")
        assert "session_secrets" not in inspect(engine).get_table_names()
    finally:
        engine.dispose()
    with open_store(db_url) as store:  # upgrades to head
        store.upsert_session(Session(key="s", harness="pi"))
        row = Entry(EntryKind.MESSAGE, Role.USER, (TextBlock("the password is hunter2hunter2xyz"),))
        row.seq = 0
        store.append("s", [row])
        assert store.kept_secrets("s") is None
        assert session_secrets(store, "s") == {"hunter2hunter2xyz": "password"}
        assert store.kept_secrets("s").secrets == {"hunter2hunter2xyz": "password"}
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0027")
        assert "session_secrets" not in inspect(engine).get_table_names()
        with engine.connect() as conn:
            from sqlalchemy import text

            assert conn.execute(text("SELECT session_key FROM sessions")).scalars().all() == ["s"]
    finally:
        engine.dispose()


def _rows_0030():  # type: ignore[no-untyped-def]
    """Rows of two sessions read from two files (one with a long content kept as a frame, one
    row without a source), as ``test_revision_0030...`` writes them at 0028."""
    from continuity.core.model import Entry, EntryKind, Role, SourceRef, TextBlock

    def row(text, path=None, line=0):  # type: ignore[no-untyped-def]
        src = SourceRef(path, line, line * 100, f"{line:064x}") if path else None
        return Entry(EntryKind.MESSAGE, Role.USER, (TextBlock(text),), source=src)

    return {
        "s1": [row("pelican one", "/w/a.jsonl", 1), row("long " * 200, "/w/a.jsonl", 2)],
        "s:2": [row("pelican two", "/w/b.jsonl", 1), row("no source"), row("x", "/w/b.jsonl", 3)],
    }


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0030_derives_entry_ids_and_numbers_row_paths(db_url, monkeypatch):
    """Revision 0030 (issue 43 goal 2): rows of two sessions from two files written at 0028
    (one file's path numbered in ``source_paths`` by its lines, the other not) read back
    equal after the upgrade, entry ids and source paths included; ``entry_by_id`` finds a
    row and refuses a malformed id; the full-text index still finds the rows; the columns
    and the id's index are gone. The downgrade writes both columns back."""
    from alembic import command
    from sqlalchemy import text

    from continuity.core.errors import InputError
    from continuity.core.model import Session
    from continuity.store import SqlStore, _alembic_config, migrate
    from continuity.store.base import RawLine

    engine = create_engine(db_url)
    migrate(engine, "0029")
    s = SqlStore(engine, db_url)
    _index_as_before_0031(s)
    _write_rows_as_before_0030(s, monkeypatch)
    written = _rows_0030()
    try:
        s.put_raw_lines([RawLine("/w/a.jsonl", 1, 100, "1" * 64, b"{}")])
        for key, rows in written.items():
            s.upsert_session(Session(key=key, harness="claude-code"))
            for i, e in enumerate(rows):
                e.seq = i
            s.append(key, rows)
    finally:
        s.close()
        monkeypatch.undo()
    with engine.begin() as conn:  # today's writer numbers every row's path: 0028's did not
        conn.execute(text("DELETE FROM source_paths WHERE path = '/w/b.jsonl'"))
        assert conn.execute(text("SELECT path FROM source_paths")).scalars().all() == ["/w/a.jsonl"]
        stored = conn.execute(
            text("SELECT entry_id, source_path FROM entries ORDER BY session_key, seq")
        ).all()
        assert [tuple(r) for r in stored] == [
            ("s1:0", "/w/a.jsonl"),
            ("s1:1", "/w/a.jsonl"),
            ("s:2:0", "/w/b.jsonl"),
            ("s:2:1", None),
            ("s:2:2", "/w/b.jsonl"),
        ]
    engine.dispose()
    with open_store(db_url) as store:  # upgrades to head
        for key, rows in written.items():
            got = store.entries(key)
            assert got == rows
            assert [e.entry_id for e in got] == [f"{key}:{i}" for i in range(len(rows))]
        assert [e.source.path if e.source else None for e in store.entries("s:2")] == [
            "/w/b.jsonl",
            None,
            "/w/b.jsonl",
        ]
        hit = store.entry_by_id("s:2:2")
        assert hit is not None and hit.text() == "x" and hit.source == written["s:2"][2].source
        with pytest.raises(InputError, match="'s:2:' is malformed"):
            store.entry_by_id("s:2:")
        found = store.search_entries(["pelican"], limit=5)
        assert sorted((h.session_key, h.seq, h.entry.entry_id) for h in found) == [
            ("s1", 0, "s1:0"),
            ("s:2", 0, "s:2:0"),
        ]
        assert store.stored_lines("s1", "/w/a.jsonl") == {(1, f"{1:064x}"), (2, f"{2:064x}")}
        with store.engine.connect() as conn:
            names = {c["name"] for c in inspect(conn).get_columns("entries")}
            assert "entry_id" not in names and "source_path" not in names
            assert "ux_entries_entry_id" not in {
                i["name"] for i in inspect(conn).get_indexes("entries")
            }
            paths = conn.execute(text("SELECT path FROM source_paths ORDER BY path")).scalars()
            assert paths.all() == ["/w/a.jsonl", "/w/b.jsonl"]
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0029")
        with engine.connect() as conn:
            back = conn.execute(
                text("SELECT entry_id, source_path FROM entries ORDER BY session_key, seq")
            ).all()
            assert [tuple(r) for r in back] == [tuple(r) for r in stored]
            index = {i["name"]: i for i in inspect(conn).get_indexes("entries")}
            assert index["ux_entries_entry_id"]["unique"]
            assert "source_id" not in {c["name"] for c in inspect(conn).get_columns("entries")}
    finally:
        engine.dispose()


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0030_refuses_an_entry_id_it_cannot_derive(db_url, monkeypatch):
    """Revision 0030: a row whose stored entry id is not ``<session_key>:<seq>`` (none is
    ever written so; an edit by hand) stops the upgrade with ``StoreError`` naming it, and the
    database stays at 0028 with the id kept (nothing is lost)."""
    from sqlalchemy import text

    from continuity.core.errors import StoreError
    from continuity.core.model import Session
    from continuity.store import SqlStore, migrate

    engine = create_engine(db_url)
    migrate(engine, "0029")
    s = SqlStore(engine, db_url)
    _index_as_before_0031(s)
    _write_rows_as_before_0030(s, monkeypatch)
    try:
        s.upsert_session(Session(key="s1", harness="pi"))
        rows = _rows_0030()["s1"]
        for i, e in enumerate(rows):
            e.seq = i
        s.append("s1", rows)
    finally:
        s.close()
        monkeypatch.undo()
    with engine.begin() as conn:
        conn.execute(text("UPDATE entries SET entry_id = 'mine' WHERE seq = 1"))
    engine.dispose()
    with (
        pytest.raises(StoreError, match=r"1 row\(s\) .* session 's1' seq 1 holds 'mine'"),
        open_store(db_url),
    ):
        pass
    engine = create_engine(db_url)
    try:
        assert current_revision(engine) == "0029"
        with engine.connect() as conn:
            ids = conn.execute(text("SELECT entry_id FROM entries ORDER BY seq")).scalars().all()
            assert ids == ["s1:0", "mine"]
    finally:
        engine.dispose()


def test_an_upgrade_across_a_table_rebuild_gives_the_space_back(tmp_path):
    """Issue 43 goal 2: revisions 0029-0030 recreate tables on SQLite, which left the old
    tables' pages free in the file (a 63.9 MB store was 86.5 MB after the upgrade). Opening a
    store at 0028 with rows upgrades it and vacuums it: no free page is left, and the file is
    smaller than before the upgrade."""
    import os

    from sqlalchemy import text

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_engine(url)
    from continuity.store import migrate

    migrate(engine, "0028")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO sessions (session_key, agent_id, harness, entry_count, created_at,"
                " updated_at) VALUES ('s', 'default', 'claude-code', 0, '2026-12-07 00:00:00',"
                " '2026-12-07 00:00:00')"
            )
        )
        for seq in range(2000):
            conn.execute(
                text(
                    "INSERT INTO entries (session_key, seq, entry_id, kind, role, type_name,"
                    " visible, base_visible, is_request, sidechain, content, view_bytes,"
                    " source_path, raw_sha256) VALUES ('s', :seq, :id, 'message', 'user',"
                    " 'user', 1, 1, 0, 0, :content, 10, '/a/very/long/path/to/a/session.jsonl',"
                    " :sha)"
                ),
                {
                    "seq": seq,
                    "id": f"s:{seq}",
                    "content": f'[{{"type": "text", "text": "row {seq} {"x" * 400}"}}]',
                    "sha": f"{seq:064x}",
                },
            )
    engine.dispose()
    before = os.path.getsize(tmp_path / "old.db")
    with open_store(url) as store:
        assert store.entry_by_id("s:1999") is not None
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM entries").scalar() == 2000
            assert conn.exec_driver_sql("PRAGMA freelist_count").scalar() == 0
    assert os.path.getsize(tmp_path / "old.db") < before


def _fts_hits(conn, word: str) -> list[tuple[str, int]]:
    """(session_key, seq) of the rows revision 0028's index finds for ``word`` (SQLite)."""
    from sqlalchemy import text

    return [
        tuple(r)
        for r in conn.execute(
            text(
                "SELECT r.session_key, r.seq FROM entries_fts AS f JOIN entries_fts_rows AS r "
                "ON r.search_id = f.rowid WHERE entries_fts MATCH :w ORDER BY 1, 2"
            ),
            {"w": word},
        )
    ]


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0031_search_finds_the_same_rows_and_never_a_forgotten_word(db_url):
    """Revision 0031 (issue 43 goals 1-2): rows indexed at 0030 are found by the same searches
    after the upgrade (words, a tool name, one session), the row mapping is gone and every row
    is numbered. On SQLite, 0028 numbered a new row max + 1 of the mapping, so after a forget
    (the rows and their mapping deleted, the words left in the contentless index) a new session
    took the forgotten one's number and a search for the forgotten word found it: the upgrade
    indexes such a workspace again, and numbers never come back. The downgrade restores the
    mapping and the rowid table of tool calls."""
    from alembic import command
    from sqlalchemy import text

    from continuity.core.model import Session
    from continuity.store import SqlStore, _alembic_config, migrate
    from continuity.store.search import EntryFilter
    from tests.builders import A, T, U, call

    sqlite = db_url.startswith("sqlite")
    engine = create_engine(db_url)
    migrate(engine, "0030")
    s = SqlStore(engine, db_url)
    _index_as_before_0031(s)
    sessions = {
        "a": [
            U("the pelican question"),
            A(call("c1", "Bash", cmd="ls pelican/")),
            T("c1", text="pelican.txt"),
        ],
        "b": [U("zebrafish secretword")],
    }
    try:
        for key, rows in sessions.items():
            s.upsert_session(Session(key=key, harness="codex"))
            for i, e in enumerate(rows):
                e.seq = i
            s.append(key, rows)

        def forget(key: str) -> None:  # as 0028 did it
            with engine.begin() as conn:
                fts = "entries_fts_rows" if sqlite else "entries_fts"
                for table in (fts, "tool_calls", "entries", "sessions"):
                    conn.execute(text(f"DELETE FROM {table} WHERE session_key = :k"), {"k": key})
                conn.execute(
                    text(
                        "INSERT INTO forgotten (session_key, forgotten_at) "
                        "VALUES (:k, CURRENT_TIMESTAMP)"
                    ),
                    {"k": key},
                )

        forget("b")  # its row was number 4
        for key, words in (("c", "cherry pelican tart"), ("d", "durian")):
            s.upsert_session(Session(key=key, harness="codex"))
            row = U(words)
            row.seq = 0
            s.append(key, [row])
        forget("d")  # number 5: the highest the index holds words of
        if sqlite:
            with engine.connect() as conn:
                assert _fts_hits(conn, "secretword") == [("c", 0)]  # b's number, b's word
                assert _fts_hits(conn, "pelican") == [("a", 0), ("a", 1), ("a", 2), ("c", 0)]
    finally:
        s.close()
    with open_store(db_url) as store:  # upgrades to head
        found = store.search_entries(["pelican"], limit=10, with_entries=False)
        assert sorted((h.session_key, h.seq) for h in found) == [
            ("a", 0),
            ("a", 1),
            ("a", 2),
            ("c", 0),
        ]
        assert store.search_entries(["secretword"], limit=10) == []
        assert store.search_entries(["zebrafish"], limit=10) == []
        assert store.search_entries(["durian"], limit=10) == []
        by_tool = store.search_entries(["pelican"], limit=10, filters=EntryFilter(tool="bash"))
        assert sorted((h.session_key, h.seq) for h in by_tool) == [("a", 1), ("a", 2)]
        one = store.search_entries(["pelican"], limit=10, filters=EntryFilter(session_key="c"))
        assert [(h.session_key, h.seq, h.entry.blocks[0].text) for h in one] == [
            ("c", 0, "cherry pelican tart")
        ]
        assert store.tool_calls_from("a", 2)[0].call_id == "c1"
        new = U("pelican again")
        new.seq = 1
        store.append("c", [new])
        assert ("c", 1) in {
            (h.session_key, h.seq) for h in store.search_entries(["pelican"], limit=10)
        }
        with store.engine.connect() as conn:
            assert not inspect(conn).has_table("entries_fts_rows")
            numbers = conn.execute(text("SELECT entry_no FROM entries ORDER BY entry_no")).all()
            assert len({n for (n,) in numbers}) == 5
            if sqlite:  # the rowid itself; the new row above every number the index held
                assert [n for (n,) in numbers] == [1, 2, 3, 4, 6]
                assert (
                    conn.execute(
                        text("SELECT count(*) FROM entries WHERE rowid = entry_no")
                    ).scalar()
                    == 5
                )
                sql = conn.execute(
                    text("SELECT sql FROM sqlite_master WHERE name = 'tool_calls'")
                ).scalar()
                assert "WITHOUT ROWID" in sql
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0030")
        with engine.connect() as conn:
            assert "entry_no" not in {c["name"] for c in inspect(conn).get_columns("entries")}
            if sqlite:
                assert _fts_hits(conn, "pelican") == [
                    ("a", 0),
                    ("a", 1),
                    ("a", 2),
                    ("c", 0),
                    ("c", 1),
                ]
                assert _fts_hits(conn, "secretword") == []
                sql = conn.execute(
                    text("SELECT sql FROM sqlite_master WHERE name = 'tool_calls'")
                ).scalar()
                assert "WITHOUT ROWID" not in sql
            else:
                rows = conn.execute(
                    text(
                        "SELECT session_key, seq FROM entries_fts WHERE doc @@ "
                        "to_tsquery('english', 'pelican') ORDER BY 1, 2"
                    )
                ).all()
                assert [tuple(r) for r in rows] == [
                    ("a", 0),
                    ("a", 1),
                    ("a", 2),
                    ("c", 0),
                    ("c", 1),
                ]
            names = {i["name"] for i in inspect(conn).get_indexes("tool_calls")}
            assert {"ix_tool_calls_call_seq", "ix_tool_calls_result_seq"} <= names
    finally:
        engine.dispose()
    with open_store(db_url) as store:  # and up again
        assert len(store.search_entries(["pelican"], limit=10)) == 5


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0033_numbers_native_ids_and_downgrade_restores_the_index(db_url):
    """Revision 0033 (issue 43 goal 2): rows written at 0032 get ``native_hash`` (the value
    ``store.rows.native_hash`` gives, NULL without a native id, NUL as U+FFFD), the look-up
    by native id finds them after the upgrade (also an id two sessions share, each its own
    session's row), ``ix_entries_native`` is gone for ``ix_entries_native_hash``; the
    downgrade brings the old index back and drops the column."""
    from alembic import command
    from sqlalchemy import text

    from continuity.core.model import Session
    from continuity.store import SqlStore, _alembic_config, migrate
    from continuity.store.rows import native_hash
    from tests.builders import A, U

    engine = create_engine(db_url)
    migrate(engine, "0032")
    old = SqlStore(engine, db_url)
    _train_no_dictionary(old)
    rows = {
        "a": [U("first"), A(text="second"), U("third")],
        "b": [U("other"), A(text="no id")],
    }
    ids = {"a": ["shared", "a\x00nul", "a-3"], "b": ["shared", None]}
    try:
        for key, entries in rows.items():
            old.upsert_session(Session(key=key, harness="claude-code"))
            for i, e in enumerate(entries):
                e.seq, e.native_id = i, ids[key][i]
            old.append(key, entries)
        assert old.native_seqs("b", ["shared"]) == {"shared": 0}
        migrate(engine)
        with engine.connect() as conn:
            stored = conn.execute(
                text("SELECT session_key, seq, native_hash FROM entries ORDER BY session_key, seq")
            ).all()
            indexes = {i["name"] for i in inspect(conn).get_indexes("entries")}
        assert [tuple(r) for r in stored] == [
            ("a", 0, native_hash("a", "shared")),
            ("a", 1, native_hash("a", "a\ufffdnul")),
            ("a", 2, native_hash("a", "a-3")),
            ("b", 0, native_hash("b", "shared")),
            ("b", 1, None),
        ]
        assert native_hash("a", "a\x00nul") == native_hash("a", "a\ufffdnul")
        assert "ix_entries_native_hash" in indexes and "ix_entries_native" not in indexes
        new = SqlStore(engine, db_url)
        assert new.native_seqs("a", ["shared", "a\x00nul", "a-3", "none"]) == {
            "shared": 0,
            "a\x00nul": 1,
            "a-3": 2,
        }
        assert new.native_seqs("b", ["shared", "a-3"]) == {"shared": 0}
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0032")
        with engine.connect() as conn:
            columns = {c["name"] for c in inspect(conn).get_columns("entries")}
            indexes = {i["name"] for i in inspect(conn).get_indexes("entries")}
        assert "native_hash" not in columns
        assert "ix_entries_native" in indexes and "ix_entries_native_hash" not in indexes
        assert old.native_seqs("a", ["a-3"]) == {"a-3": 2}
    finally:
        engine.dispose()


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0034_keeps_uuid_ids_as_16_bytes_on_sqlite_and_downgrade_restores_text(db_url):
    """Revision 0034 (issue 43 goal 2): on SQLite the native ids and parent ids written as
    text at 0033 that are canonical UUIDs become their 16 bytes, every other id stays text,
    each reads back as written and the look-up finds it; the downgrade makes them text again.
    PostgreSQL's rows are not touched."""
    from alembic import command
    from sqlalchemy import text

    from continuity.core.model import Session
    from continuity.store import SqlStore, _alembic_config, migrate
    from tests.builders import A, U

    ids = [
        "0f8e1c2a-5b3d-4e6f-8a9b-0c1d2e3f4a5b",
        "0F8E1C2A-5B3D-4E6F-8A9B-0C1D2E3F4A5B",
        "a1b2c3d4",
        "77a1c0de-0000-4000-8000-000000000001",
    ]
    parents = [None, ids[0], ids[1], ids[2]]

    def typeofs(engine):  # type: ignore[no-untyped-def]
        with engine.connect() as conn:
            if engine.dialect.name != "sqlite":
                return None
            return [
                tuple(r)
                for r in conn.execute(
                    text(
                        "SELECT typeof(native_id), typeof(parent_native_id) FROM entries "
                        "ORDER BY seq"
                    )
                )
            ]

    engine = create_engine(db_url)
    migrate(engine, "0033")
    old = SqlStore(engine, db_url)
    _write_as_before_0034(old)
    try:
        old.upsert_session(Session(key="k", harness="claude-code"))
        rows = [U("one"), A(text="two"), U("three"), A(text="four")]
        for i, e in enumerate(rows):
            e.seq, e.native_id, e.parent_native_id = i, ids[i], parents[i]
        old.append("k", rows)
        text_only = [("text", "null"), ("text", "text"), ("text", "text"), ("text", "text")]
        if engine.dialect.name == "sqlite":
            assert typeofs(engine) == text_only
        migrate(engine)
        if engine.dialect.name == "sqlite":
            assert typeofs(engine) == [
                ("blob", "null"),
                ("text", "blob"),
                ("text", "text"),
                ("blob", "text"),
            ]
        new = SqlStore(engine, db_url)
        got = new.entries("k")
        assert [e.native_id for e in got] == ids
        assert [e.parent_native_id for e in got] == parents
        assert new.native_seqs("k", ids) == {n: i for i, n in enumerate(ids)}
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0033")
        if engine.dialect.name == "sqlite":
            assert typeofs(engine) == text_only
        assert [e.native_id for e in old.entries("k")] == ids
        assert old.native_seqs("k", ids) == {n: i for i, n in enumerate(ids)}
    finally:
        engine.dispose()
