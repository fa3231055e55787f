"""Raw line keys as 32-byte digests (revision 0029, issue 43 goal 2): what a workspace at 0028
held as hex reads back the same after the upgrade, every key column holds 32 bytes, and the
code still sees hex (``store.schema.Sha256``)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text

from continuity.core.model import Entry, EntryKind, Role, Session, SourceRef, TextBlock
from continuity.store import _alembic_config, migrate, open_store, rawcodec, schema as t
from continuity.store.base import ImportIssue, RawLine
from continuity.store.lite import open_lite
from tests.conftest import BACKENDS

#: ``(table, column)`` of every raw line key
KEY_COLUMNS = (
    ("raw_lines", "sha256"),
    ("source_lines", "raw_sha256"),
    ("entries", "raw_sha256"),
    ("import_issues", "raw_sha256"),
)

#: Lines as 0028 kept them, one of each kind (``rawcodec``): as they are, one zstd frame, and
#: three in one block.
PLAIN = b'{"type":"user","n":1}'
FRAMED = b'{"type":"assistant","text":"' + b"compress me " * 40 + b'"}'
BLOCKED = [b'{"type":"tool","n":%d,"out":"the same words"}' % i for i in range(3)]
AT = datetime(2026, 12, 1, tzinfo=UTC)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _stored(conn, table: str, column: str) -> list:  # type: ignore[no-untyped-def]
    """Each stored value of ``column`` as the database gives it, NULLs last."""
    rows = conn.execute(text(f"SELECT {column} FROM {table}")).scalars()
    return sorted((bytes(v) if isinstance(v, memoryview) else v for v in rows), key=_last_none)


def _last_none(value: object) -> tuple[bool, object]:
    return (value is None, value if value is not None else b"")


def _write_at_0028(url: str) -> list[RawLine]:
    """A workspace at revision 0028 holding the lines above with hex keys (as 0028 wrote
    them), their positions in ``/f``, a session with one row read from line 1 and one from
    no file, and an import issue on line 2. Returns the lines as ``raw_lines("/f")`` gives
    them."""
    frame, codec = rawcodec.encode(FRAMED)
    assert codec == rawcodec.ZSTD
    _, blocks = rawcodec.pack([(_sha(d), d) for d in BLOCKED])
    assert len(blocks) == 1
    lines = [RawLine("/f", 1, 0, _sha(PLAIN), PLAIN), RawLine("/f", 2, 22, _sha(FRAMED), FRAMED)]
    lines += [RawLine("/f", 3 + i, 600 + 50 * i, _sha(d), d) for i, d in enumerate(BLOCKED)]
    raw = [
        {"s": _sha(PLAIN), "d": PLAIN, "c": None, "b": None, "i": None},
        {"s": _sha(FRAMED), "d": frame, "c": rawcodec.ZSTD, "b": None, "i": None},
    ]
    raw += [
        {"s": sha, "d": b"", "c": rawcodec.BLOCK, "b": None, "i": i}
        for i, sha in enumerate(blocks[0].shas)
    ]
    row = {"t": True, "f": False, "at": AT, "c": '[{"type":"text","text":"hi"}]'}
    engine = create_engine(url)
    try:
        migrate(engine, "0028")
        with engine.begin() as conn:
            # ids as the sequences hand them out (PostgreSQL's do not see an explicit id)
            conn.execute(
                text("INSERT INTO raw_blocks (data, codec) VALUES (:d, 1)"), {"d": blocks[0].frame}
            )
            block_id = conn.execute(text("SELECT block_id FROM raw_blocks")).scalar()
            for r in raw:
                r["b"] = block_id if r["c"] == rawcodec.BLOCK else None
            conn.execute(
                text(
                    "INSERT INTO raw_lines (sha256, data, codec, block_id, block_index) "
                    "VALUES (:s, :d, :c, :b, :i)"
                ),
                raw,
            )
            conn.execute(text("INSERT INTO source_paths (path) VALUES ('/f')"))
            source_id = conn.execute(text("SELECT source_id FROM source_paths")).scalar()
            conn.execute(
                text(
                    "INSERT INTO source_lines (source_id, line_no, byte_offset, raw_sha256) "
                    "VALUES (:id, :n, :o, :s)"
                ),
                [
                    {"id": source_id, "n": ln.line_no, "o": ln.byte_offset, "s": ln.sha256}
                    for ln in lines
                ],
            )
            conn.execute(
                text(
                    "INSERT INTO sessions (session_key, agent_id, harness, entry_count, "
                    "created_at, updated_at) VALUES ('s', 'default', 'pi', 2, :at, :at)"
                ),
                {"at": AT},
            )
            conn.execute(
                text(
                    "INSERT INTO entries (session_key, seq, entry_id, kind, role, type_name, "
                    "visible, base_visible, is_request, sidechain, content, view_bytes, "
                    "source_path, line_no, byte_offset, raw_sha256) VALUES ('s', :seq, :id, "
                    "'message', 'user', 'user', :t, :t, :t, :f, :c, 10, :p, :n, :o, :s)"
                ),
                [
                    {**row, "seq": 0, "id": "s:0", "p": "/f", "n": 1, "o": 0, "s": _sha(PLAIN)},
                    {**row, "seq": 1, "id": "s:1", "p": None, "n": None, "o": None, "s": None},
                ],
            )
            conn.execute(
                text(
                    "INSERT INTO import_issues (path, line_no, byte_offset, byte_length, "
                    "reason, raw_sha256, created_at) VALUES ('/f', 2, 22, :n, 'bad', :s, :at)"
                ),
                {"n": len(FRAMED), "s": _sha(FRAMED), "at": AT},
            )
    finally:
        engine.dispose()
    return lines


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_revision_0029_raw_keys_become_bytes_and_every_line_reads_back(db_url):
    """Revision 0029 (issue 43 goal 2): lines, positions, rows and issues written at 0028
    with hex keys read back byte for byte with the same (hex) keys after the upgrade; each
    key column then holds the digest's 32 bytes (a row with no source keeps NULL); a line
    stored again is found by its key (kept once); the downgrade gives every key its hex
    text back."""
    lines = _write_at_0028(db_url)
    keys = sorted(ln.sha256 for ln in lines)
    with open_store(db_url) as store:  # upgrades to head
        assert list(store.raw_lines("/f")) == lines
        got = store.entries("s")
        assert [e.source for e in got] == [SourceRef("/f", 1, 0, _sha(PLAIN)), None]
        assert store.stored_lines("s", "/f") == {(1, _sha(PLAIN))}
        assert store.issues() == [ImportIssue("/f", 2, 22, len(FRAMED), "bad", _sha(FRAMED))]
        with store.engine.connect() as conn:
            assert _stored(conn, "raw_lines", "sha256") == [bytes.fromhex(k) for k in keys]
            assert _stored(conn, "source_lines", "raw_sha256") == [bytes.fromhex(k) for k in keys]
            assert _stored(conn, "entries", "raw_sha256") == [bytes.fromhex(_sha(PLAIN)), None]
            assert _stored(conn, "import_issues", "raw_sha256") == [bytes.fromhex(_sha(FRAMED))]
        store.put_raw_lines([RawLine("/g", 1, 0, _sha(PLAIN), PLAIN)])  # kept already
        with store.engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM raw_lines")).scalar() == len(lines)
        assert list(store.raw_lines("/g")) == [RawLine("/g", 1, 0, _sha(PLAIN), PLAIN)]
    if db_url.startswith("sqlite"):
        lite = open_lite(db_url)
        assert lite is not None  # the sqlite3 read path gives the same hex key
        try:
            assert [e.source for e in lite.entries("s")] == [e.source for e in got]
        finally:
            lite.close()
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0028")
        with engine.connect() as conn:
            assert _stored(conn, "raw_lines", "sha256") == keys
            assert _stored(conn, "source_lines", "raw_sha256") == sorted([*keys, _sha(PLAIN)])
            assert _stored(conn, "entries", "raw_sha256") == [_sha(PLAIN), None]
            assert _stored(conn, "import_issues", "raw_sha256") == [_sha(FRAMED)]
    finally:
        engine.dispose()


def test_raw_keys_are_32_bytes(store):
    """Issue 43 goal 2: at head each raw line key column is binary and holds the digest's 32
    bytes, written by every writer of it (the bulk lines and rows, the issues' insert); on
    SQLite ``raw_lines`` is a ``WITHOUT ROWID`` table (its key not stored a second time in
    an index)."""
    data = b'{"type":"user","message":"hello"}'
    sha = _sha(data)
    store.put_raw_lines([RawLine("/f", 1, 0, sha, data)])
    store.upsert_session(Session(key="s", harness="pi"))
    row = Entry(
        EntryKind.MESSAGE, Role.USER, (TextBlock("hello"),), source=SourceRef("/f", 1, 0, sha)
    )
    row.seq = 0
    store.append("s", [row])
    store.put_issues([ImportIssue("/f", 1, 0, len(data), "bad", sha)])
    with store.engine.connect() as conn:
        for table, column in KEY_COLUMNS:
            assert _stored(conn, table, column) == [bytes.fromhex(sha)], table
            assert conn.execute(text(f"SELECT length({column}) FROM {table}")).scalar() == 32
            kind = {c["name"]: c["type"] for c in inspect(conn).get_columns(table)}[column]
            assert kind.python_type is bytes, (table, kind)
        if store.dialect == "sqlite":
            sql = conn.execute(
                text("SELECT sql FROM sqlite_master WHERE name = 'raw_lines'")
            ).scalar()
            assert sql.rstrip().endswith("WITHOUT ROWID")
            indexes = conn.execute(
                text(
                    "SELECT name FROM sqlite_master WHERE tbl_name = 'raw_lines' AND type = 'index'"
                )
            ).all()
            assert indexes == []
    assert store.entries("s")[0].source == SourceRef("/f", 1, 0, sha)


def test_sha256_type_converts_hex_and_refuses_other_text():
    """``schema.Sha256``: hex in, 32 bytes stored, the same hex out; NULL stays NULL, an empty
    key is empty bytes; text that is not hex is refused (``ValueError``), never stored."""
    kind = t.Sha256()
    sha = _sha(b"x")
    assert kind.process_bind_param(sha, None) == bytes.fromhex(sha)
    assert kind.process_result_value(bytes.fromhex(sha), None) == sha
    assert kind.process_result_value(memoryview(bytes.fromhex(sha)), None) == sha
    assert kind.process_bind_param(None, None) is None
    assert kind.process_bind_param("", None) == b""
    with pytest.raises(ValueError):
        kind.process_bind_param("not a digest", None)
