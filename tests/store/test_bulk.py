"""The bulk path of the import's big tables (``store.bulk``): rows it writes read back as the
SQLAlchemy path would write them, on every backend, with the one NUL rule."""

from __future__ import annotations

import pickle
import random
from datetime import UTC, datetime

import pytest
import zstandard
from hypothesis import given, strategies as st
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from continuity.core.model import (
    CompactionInfo,
    Entry,
    EntryKind,
    MediaBlock,
    Role,
    RunStatus,
    Session,
    SourceRef,
    TextBlock,
    ToolResultBlock,
)
from continuity.store import rawcodec, schema as t
from continuity.store.base import RawLine
from continuity.store.bulk import (
    ENTRY_COLUMNS,
    BulkInsert,
    _nul_free_column,
    entry_row,
    prepare,
)
from continuity.store.search import _body, search_body
from tests.builders import A, T, U, call, load


def test_bulk_entry_columns_are_every_entries_column():
    """A column added to ``entries`` must be added to the bulk row too; only ``entry_no``
    (revision 0031), which the database numbers, is not written, and it comes last."""
    assert [*ENTRY_COLUMNS[:-1], "entry_no", "native_hash"] == [c.name for c in t.entries.columns]


@pytest.mark.parametrize(
    "dialect, sql",
    [
        (
            sqlite.dialect(),
            "INSERT INTO raw_lines (sha256, data) VALUES (?, ?) ON CONFLICT DO NOTHING",
        ),
        (
            postgresql.dialect(paramstyle="pyformat"),
            "INSERT INTO raw_lines (sha256, data) VALUES (%s, %s) ON CONFLICT DO NOTHING",
        ),
    ],
)
def test_bulk_statement_rendered_once_per_dialect(dialect, sql):
    assert BulkInsert(t.raw_lines, ("sha256", "data"), dialect, ignore=True).sql == sql
    plain = BulkInsert(t.tool_calls, ("session_key", "call_id"), dialect).sql
    assert "ON CONFLICT" not in plain and plain.startswith("INSERT INTO tool_calls (")


@given(
    st.lists(
        st.one_of(st.none(), st.integers(), st.text(alphabet="ab\x00\ufffd", max_size=6)),
        max_size=8,
    )
)
def test_bulk_nul_column_rule_is_nul_free_per_value(values):
    """The column-at-once check gives exactly ``nul_free`` applied to each value."""
    assert list(_nul_free_column(tuple(values))) == [t.nul_free(v) for v in values]


def test_bulk_rows_read_back_with_nul_replaced_and_fields_kept(store):
    """Every text field of a row follows the NUL rule (U+FFFD); booleans, the microsecond UTC
    timestamp, media and the source position read back as written."""
    store.upsert_session(Session(key="k", harness="t"))
    when = datetime(2026, 3, 4, 5, 6, 7, 891011, tzinfo=UTC)
    rows = [
        Entry(
            EntryKind.MESSAGE,
            Role.USER,
            (TextBlock("a\x00b"),),
            timestamp=when,
            native_id="n\x001",
            type_name="user\x00x",
            cwd="/c\x00d",
            is_request=True,
            source=SourceRef("/f\x00", 3, 120, "c" * 64),
            run_end=RunStatus.FAILED,
        ),
        Entry(
            EntryKind.EVENT,
            Role.SYSTEM,
            (MediaBlock("image/png", 3, "d" * 64),),
            native_id="n2",
            parent_native_id="n\x001",
            visible=False,
            sidechain=True,
            payloads={"d" * 64: b"\x89PN"},
        ),
    ]
    for i, e in enumerate(rows):
        e.seq = i
    store.append("k", rows)
    first, second = store.entries("k")
    assert (first.native_id, first.type_name, first.cwd, first.source.path) == (
        "n\ufffd1",
        "user\ufffdx",
        "/c\ufffdd",
        "/f\ufffd",
    )
    assert first.text() == "a\x00b"  # content is JSON: the NUL travels escaped
    assert (
        first.timestamp,
        first.is_request,
        first.visible,
        first.sidechain,
        first.run_end,
        first.source.line,
        first.source.offset,
    ) == (when, True, True, False, RunStatus.FAILED, 3, 120)
    assert (second.parent_native_id, second.visible, second.sidechain, second.timestamp) == (
        "n\ufffd1",
        False,
        True,
        None,
    )
    assert store.media("d" * 64) == b"\x89PN"
    # Lookups follow the same rule as the stored values and answer with the ids asked.
    assert store.native_seqs("k", ["n\x001", "n2", "absent"]) == {"n\x001": 0, "n2": 1}


def test_bulk_long_content_kept_as_a_frame_and_read_back(store):
    """Issue 43 (revision 0024): a row whose content JSON is long and repetitive is kept as a
    zstd frame in ``content_z`` with ``content`` empty; a short one as text; both read back
    as written, a lone surrogate's replacement and non-ASCII text included."""
    store.upsert_session(Session(key="z", harness="t"))
    long_text = "Ran the tests: 31 passed, ünïcode ✓ \ufffd. " * 40
    rows = [
        Entry(EntryKind.MESSAGE, Role.ASSISTANT, (TextBlock(long_text),)),
        Entry(EntryKind.MESSAGE, Role.USER, (TextBlock("short"),)),
    ]
    for i, e in enumerate(rows):
        e.seq = i
    store.append("z", rows)
    with store._conn() as conn:
        stored = conn.execute(
            select(t.entries.c.seq, t.entries.c.content, t.entries.c.content_z)
            .where(t.entries.c.session_key == "z")
            .order_by(t.entries.c.seq)
        ).all()
    (_, c0, z0), (_, c1, z1) = stored
    assert (c0, z1) == ("", None)
    assert z0 is not None and len(z0) < len(long_text) // 4
    assert c1 == '[{"type":"text","text":"short"}]'
    got = store.entries("z")
    assert [e.text() for e in got] == [long_text, "short"]


@given(st.text(max_size=2000))
def test_rawcodec_text_round_trips(text):
    """decode_text(encode_text(x)) == x whenever a frame is made, and a frame is made only
    when it is smaller by ``MIN_SAVING``."""
    frame = rawcodec.encode_text(text)
    data = text.encode("utf-8", "surrogatepass")
    if frame is not None:
        assert rawcodec.decode_text(frame) == text
        assert len(frame) <= len(data) * (1 - rawcodec.MIN_SAVING)
    else:  # short, or its frame would not save enough
        plain = zstandard.ZstdCompressor(level=rawcodec.LEVEL, write_checksum=False)
        assert len(data) < rawcodec.MIN_TEXT_BYTES or len(plain.compress(data)) > len(data) * (
            1 - rawcodec.MIN_SAVING
        )


def test_bulk_tool_call_id_with_nul_pairs_across_appends(store):
    """A call whose id holds NUL and its result, appended separately, make one index row
    (before: the second append missed the stored row and collided with it)."""
    key = load(store, [U("go"), A(call("c\x001"))])
    load(store, [T("c\x001")], key=key)
    assert {c.call_id: (c.call_seq, c.result_seq) for c in store.tool_calls_from(key, 0)} == {
        "c\ufffd1": (1, 2)
    }
    assert store.tool_calls(key, ["c\x001"])["c\x001"].result_seq == 2


def test_bulk_raw_lines_keep_bytes_once_and_positions(store):
    """Two lines with the same bytes share one raw row; a second put changes nothing."""
    lines = [
        RawLine("/p", 1, 0, "e" * 64, b'{"a":1}'),
        RawLine("/p", 2, 8, "e" * 64, b'{"a":1}'),
        RawLine("/p", 3, 16, "f" * 64, b"\x00\xff"),
    ]
    store.put_raw_lines(lines)
    store.put_raw_lines(lines)
    assert list(store.raw_lines("/p")) == lines


def test_source_line_keys_are_each_kept_line_s_position_and_digest(store):
    """``source_line_keys``: ``(line_no, byte_offset, sha256 hex)`` of the file's kept lines in
    line order, the other file's not among them; empty for a path never imported."""
    store.put_raw_lines(
        [
            RawLine("/p", 2, 8, "e" * 64, b'{"a":1}'),
            RawLine("/q", 1, 0, "a" * 64, b"{}"),
            RawLine("/p", 1, 0, "0f" * 32, b'{"a":2}'),
            RawLine("/p", 3, 16, "e" * 64, b'{"a":1}'),
        ]
    )
    assert store.source_line_keys("/p") == [(1, 0, "0f" * 32), (2, 8, "e" * 64), (3, 16, "e" * 64)]
    assert store.source_line_keys("/q") == [(1, 0, "a" * 64)]
    assert store.source_line_keys("/never") == []


def _stored_raw(store, sha: str) -> tuple[bytes, int | None]:
    with store._conn() as conn:
        row = conn.execute(
            select(t.raw_lines.c.data, t.raw_lines.c.codec).where(t.raw_lines.c.sha256 == sha)
        ).one()
    return bytes(row.data), row.codec


def test_bulk_raw_lines_compressed_where_that_pays(store):
    """Issue 17 goal 3: a long repetitive line written alone is kept as a zstd frame (codec 1,
    under half its bytes), a short or incompressible one as it is (codec NULL); all read back
    exact."""
    long_line = (
        b'{"type":"assistant","message":{"content":[{"type":"text","text":"'
        + b"the same words again " * 60
        + b'"}]}}'
    )
    noise = random.Random(7).randbytes(600)
    lines = [
        RawLine("/z", 1, 0, "a" * 64, long_line),
        RawLine("/z", 2, len(long_line) + 1, "b" * 64, noise),
        RawLine("/z", 3, len(long_line) + 602, "c" * 64, b'{"x":1}'),
    ]
    for line in lines:  # one line per write: each is kept alone, not in a block
        store.put_raw_lines([line])
    data, codec = _stored_raw(store, "a" * 64)
    assert codec == rawcodec.ZSTD and len(data) < len(long_line) // 2
    assert _stored_raw(store, "b" * 64) == (noise, None)
    assert _stored_raw(store, "c" * 64) == (b'{"x":1}', None)
    assert list(store.raw_lines("/z")) == lines


def _blocks(store) -> list[tuple[int, bytes]]:
    with store._conn() as conn:
        rows = conn.execute(select(t.raw_blocks.c.block_id, t.raw_blocks.c.data)).all()
    return [(r.block_id, bytes(r.data)) for r in rows]


def test_bulk_raw_lines_kept_by_block(store):
    """Issue 43 goal 2: the new lines of one write are kept in zstd blocks (codec 2, no bytes
    of their own, their place in the block); a line holding a newline or as long as a block
    is kept alone; writing the same lines again adds no block; every line reads back exact,
    also across more blocks than the reader keeps decoded and more rows than one read."""
    rng = random.Random(43)
    body = [
        b'{"type":"user","uuid":"%d","message":{"content":"%s"}}'
        % (i, rng.choice([b"run the tests", b"fix the export", b"open README.md"]))
        for i in range(1500)
    ]
    lines, offset = [], 0
    for i, data in enumerate(body, start=1):
        lines.append(RawLine("/b", i, offset, f"{i:064x}", data))
        offset += len(data) + 1
    odd = [
        RawLine("/b", 1501, offset, "e" * 64, b"two\nlines"),
        RawLine("/b", 1502, offset + 10, "f" * 64, b"y" * rawcodec.BLOCK_BYTES),
    ]
    store.put_raw_lines(lines + odd)
    blocks = _blocks(store)
    assert blocks, "a write of 1,500 lines makes blocks"
    assert sum(len(data) for _, data in blocks) < sum(map(len, body)) // 5
    with store._conn() as conn:
        codecs = dict(conn.execute(select(t.raw_lines.c.sha256, t.raw_lines.c.codec)).all())
    assert {codecs[ln.sha256] for ln in lines} == {rawcodec.BLOCK}
    assert _stored_raw(store, "e" * 64) == (b"two\nlines", None)
    assert _stored_raw(store, "f" * 64)[1] == rawcodec.ZSTD
    store.put_raw_lines(lines + odd)  # idempotent: the lines are kept, nothing packed again
    assert len(_blocks(store)) == len(blocks)
    assert list(store.raw_lines("/b")) == lines + odd


def test_rawcodec_packs_a_mib_of_one_session_into_one_block():
    """Issue 43 goal 2: lines are packed into blocks of up to 1 MiB (``BLOCK_BYTES``), so what
    a session repeats over 700 KB is found by one frame: 350 lines of 2,000 bytes, each
    holding the same 1,500-byte tool output, make one block of under 30 KB (with 128 KiB
    blocks: six frames)."""
    output = bytes(random.Random(7).getrandbits(8) for _ in range(750)).hex().encode()
    lines = [
        (f"{i:064x}", (b'{"n":%06d,"out":"%s"}' % (i, output)).ljust(2000)) for i in range(350)
    ]
    alone, blocks = rawcodec.pack(lines)
    assert rawcodec.BLOCK_BYTES == 1024 * 1024
    assert alone == []
    assert len(blocks) == 1
    assert len(blocks[0].frame) < 30_000
    assert rawcodec.unpack(blocks[0].frame) == [d for _, d in lines]


@given(
    st.lists(
        st.binary(max_size=rawcodec.BLOCK_BYTES // 3) | st.just(b"a\nb"),
        max_size=40,
    )
)
def test_rawcodec_pack_keeps_every_line_once(datas):
    """Every line is kept exactly once, alone or in one block, and reads back exact."""
    lines = [(f"{i:064x}", d) for i, d in enumerate(datas)]
    alone, blocks = rawcodec.pack(lines)
    got = {sha: rawcodec.decode(stored, codec) for sha, stored, codec in alone}
    for block in blocks:
        assert len(block.shas) >= 2
        parts = rawcodec.unpack(block.frame)
        assert len(parts) == len(block.shas)
        for sha, part in zip(block.shas, parts, strict=True):
            assert sha not in got
            got[sha] = part
    assert got == dict(lines)


def test_bulk_raw_lines_written_before_the_codec_read_as_they_are(store):
    """Rows of an older continuity (revision 0015: no codec, NULL after the upgrade) read back
    as their bytes, also ones that look like a zstd frame."""
    frame = rawcodec.encode(b"x" * 500)[0]
    with store.batch(), store._conn() as conn:
        conn.execute(t.raw_lines.insert(), [{"sha256": "d" * 64, "data": frame}])
        source_id = conn.execute(t.source_paths.insert().values(path="/old")).inserted_primary_key
        assert source_id is not None
        conn.execute(
            t.source_lines.insert(),
            [{"source_id": source_id[0], "line_no": 1, "byte_offset": 0, "raw_sha256": "d" * 64}],
        )
    assert [r.data for r in store.raw_lines("/old")] == [frame]


@given(st.binary(max_size=3000) | st.text(alphabet='ab{}":, é', max_size=3000).map(str.encode))
def test_rawcodec_round_trips_any_bytes(data):
    """decode(encode(x)) == x for any bytes; a stored frame is never larger than the line."""
    stored, codec = rawcodec.encode(data)
    assert rawcodec.decode(stored, codec) == data
    assert len(stored) <= len(data)
    assert codec in (None, rawcodec.ZSTD)


def test_rawcodec_unknown_codec_is_an_error():
    with pytest.raises(ValueError, match="unknown codec 7"):
        rawcodec.decode(b"x", 7)


def _lines_of(tag: bytes, n: int, path: str = "/w") -> list[RawLine]:
    out, offset = [], 0
    for i in range(n):
        data = b'{"type":"user","n":%d,"t":"%s"}' % (i, tag)
        out.append(RawLine(path, i + 1, offset, f"{i:04x}{tag.hex()}".ljust(64, "0"), data))
        offset += len(data) + 1
    return out


def test_bulk_raw_lines_take_a_workers_packing_when_none_is_kept(store):
    """Issue 43 goal 1: ``packed`` (``rawcodec.pack_lines``, made by a parallel import's
    worker) is stored as it is when no line is kept yet; with one kept already it is packed
    again without that line (no block holds it twice); both read back exact."""
    fresh = _lines_of(b"aa", 30)
    packed = rawcodec.pack_lines(fresh)
    marker = rawcodec.Block(packed[1][0].frame, list(packed[1][0].shas))
    store.put_raw_lines(fresh, (packed[0], [marker]))
    assert [data for _, data in _blocks(store)] == [marker.frame]
    assert list(store.raw_lines("/w")) == fresh
    more = _lines_of(b"bb", 10, "/v")
    both = [fresh[0], *more]  # fresh[0] is kept: the worker's packing is not taken
    stale = rawcodec.pack_lines(both)
    store.put_raw_lines(both, stale)
    frames = [data for _, data in _blocks(store)]
    assert stale[1][0].frame not in frames and len(frames) == 2
    assert rawcodec.unpack(frames[1]) == [ln.data for ln in more]
    assert list(store.raw_lines("/v")) == more


ROLES = st.sampled_from([Role.USER, Role.ASSISTANT, Role.TOOL])
BLOCKS = st.lists(
    st.one_of(
        st.builds(TextBlock, st.text(max_size=400)),
        st.builds(MediaBlock, st.just("image/png"), st.integers(0, 10**6), st.just("ab" * 32)),
        st.builds(
            ToolResultBlock, st.text(max_size=5), st.booleans(), st.text(max_size=300), st.just(())
        ),
    ),
    max_size=4,
).map(tuple)


@given(blocks=BLOCKS, role=ROLES, seq=st.sampled_from([0, 1, 9, 10, 99, 100, 12345]))
def test_a_prepared_row_is_the_row_made_in_place(blocks, role, seq):
    """``prepare`` (a worker's) then ``entry_row`` gives the row ``entry_row`` makes alone,
    at any seq (the view's size grows with its digits), and the search body the index makes;
    the worker's content is not sent again when its frame holds it."""
    plain = Entry(EntryKind.MESSAGE, role, blocks, seq=seq)
    made = Entry(EntryKind.MESSAGE, role, blocks)
    prepare(made)
    made = pickle.loads(pickle.dumps(made, protocol=pickle.HIGHEST_PROTOCOL))  # sent over
    made.seq = seq
    assert made.prepared is not None and made.prepared[0] is made.blocks
    assert entry_row("s", made, 3) == entry_row("s", plain, 3)
    assert _body(made) == search_body(plain)
    assert made.prepared[3] == "" or made.prepared[4] is None


def test_a_prepared_row_whose_blocks_changed_is_made_again():
    """A writer that gives the row new blocks (or a new role or compaction) after the worker
    made it stores what the new ones make, never the worker's."""
    e = Entry(EntryKind.MESSAGE, Role.USER, (TextBlock("before " * 80),), seq=4)
    prepare(e)
    e.blocks = (TextBlock("after"),)
    fresh = Entry(EntryKind.MESSAGE, Role.USER, (TextBlock("after"),), seq=4)
    assert entry_row("s", e) == entry_row("s", fresh)
    assert _body(e) == "after"
    prepare(e)
    e.role = Role.ASSISTANT
    assert (
        entry_row("s", e)[15]
        == entry_row("s", Entry(EntryKind.MESSAGE, Role.ASSISTANT, e.blocks, seq=4))[15]
    )
    prepare(e)
    e.compaction = CompactionInfo("the summary")
    assert _body(e) == "after\nthe summary"


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_native_hash_is_a_signed_32_bit_number_of_key_and_id_as_stored(key, native_id):
    """Revision 0033: ``native_hash`` is BLAKE2b-32 of key, NUL, id, a signed 32-bit number
    (4 bytes in SQLite), computed here from hashlib independently; NUL counts as U+FFFD, as
    the store keeps both; no id, no number. (Its value in every process: the fixed number
    of the next test.)"""
    import hashlib

    from continuity.store.rows import native_hash

    n = native_hash(key, native_id)
    assert n is not None and -(2**31) <= n < 2**31
    text = f"{t.nul_free(key)}\x00{t.nul_free(native_id)}".encode("utf-8", "surrogatepass")
    assert n == int.from_bytes(hashlib.blake2b(text, digest_size=4).digest(), "big", signed=True)
    assert native_hash(key.replace("\x00", "\ufffd"), native_id.replace("\x00", "\ufffd")) == n
    assert native_hash(key, None) is None and native_hash(key, "") is None


def test_native_hash_separates_the_key_from_the_id():
    """("ab", "c") and ("a", "bc") are two numbers (the NUL between them), each the value
    BLAKE2b-32 gives (fixed forever: stored rows hold it)."""
    from continuity.store.rows import native_hash

    assert native_hash("ab", "c") != native_hash("a", "bc")
    assert native_hash("3185d1ef", "uuid-1") == -2048268948


def test_native_seqs_tells_apart_ids_that_share_a_number(store, monkeypatch):
    """The look-up compares the key and the id themselves: with every row given one number
    (a collision forced), each id still finds only its own session's row."""
    from continuity.core.model import Session
    from continuity.store import bulk

    monkeypatch.setattr(bulk, "native_hash", lambda key, native_id: 7 if native_id else None)
    for key in ("s1", "s2"):
        store.upsert_session(Session(key=key, harness="t"))
        rows = [U("one"), A(text="two"), U("three")]
        for i, e in enumerate(rows):
            e.seq, e.native_id = i, f"{key}-{i}" if i else "same"
        store.append(key, rows)
    assert store.native_seqs("s1", ["same", "s1-1", "s1-2", "s2-1"]) == {
        "same": 0,
        "s1-1": 1,
        "s1-2": 2,
    }
    assert store.native_seqs("s2", ["same", "s2-2"]) == {"same": 0, "s2-2": 2}


#: Native ids of every form: canonical UUIDs (kept as 16 bytes on SQLite, revision 0034),
#: and ids that must stay text (uppercase or braced UUIDs, pi's 8 hex digits, a 36-character
#: id that is not a UUID, one holding NUL)
NATIVE_IDS = [
    "0f8e1c2a-5b3d-4e6f-8a9b-0c1d2e3f4a5b",
    "0F8E1C2A-5B3D-4E6F-8A9B-0C1D2E3F4A5B",
    "{0f8e1c2a-5b3d-4e6f-8a9b-0c1d2e3f4a5b}",
    "a1b2c3d4",
    "0f8e1c2a-5b3d-4e6f-8a9b-0c1d2e3f4a5g",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
]


@given(st.text(max_size=40) | st.uuids().map(str) | st.none())
def test_native_stored_keeps_exactly_the_canonical_uuids_as_16_bytes(native_id):
    """Revision 0034: ``native_stored`` turns a canonical UUID (``str(uuid.UUID(x))``) into
    its 16 bytes and leaves any other id as it is; ``native_loaded`` gives back the very
    text."""
    import uuid

    from continuity.store.rows import native_loaded, native_stored

    stored = native_stored(native_id)
    canonical = False
    if native_id is not None:
        try:
            canonical = str(uuid.UUID(native_id)) == native_id
        except ValueError:
            canonical = False
    if canonical:
        assert stored == uuid.UUID(native_id).bytes
    else:
        assert stored is native_id
    assert native_loaded(stored) == native_id


def test_native_loaded_refuses_bytes_of_another_length():
    from continuity.store.rows import native_loaded

    with pytest.raises(ValueError, match="15 bytes, not 16"):
        native_loaded(b"x" * 15)


def test_native_ids_of_every_form_read_back_and_are_found(store):
    """Each form of native id and parent id reads back as the text written (``entries``,
    ``entries_by_seq``, ``entry_by_id``, ``tree_links``) and the import's look-up finds it,
    on every backend and through the ``sqlite3`` read path; on SQLite a canonical UUID is a
    16-byte BLOB in the row and every other id text (revision 0034), on PostgreSQL all text."""
    from sqlalchemy import text

    from continuity.core.model import Session

    key = "0f8e1c2a-0000-4e6f-8a9b-0c1d2e3f4a5b"
    store.upsert_session(Session(key=key, harness="claude-code"))
    rows = [U(f"row {i}") if i % 2 == 0 else A(text=f"row {i}") for i in range(len(NATIVE_IDS))]
    for i, e in enumerate(rows):
        e.seq = i
        e.native_id = NATIVE_IDS[i]
        e.parent_native_id = NATIVE_IDS[i - 1] if i else None
    store.append(key, rows)
    for got in (store.entries(key), store.entries_by_seq(key, range(len(NATIVE_IDS)))):
        assert [e.native_id for e in got] == NATIVE_IDS
        assert [e.parent_native_id for e in got] == [None, *NATIVE_IDS[:-1]]
    one = store.entry_by_id(f"{key}:5")
    assert one is not None and one.native_id == NATIVE_IDS[5]
    assert one.parent_native_id == NATIVE_IDS[4]
    assert [(s, n, p) for s, n, p, _, _ in store.tree_links(key)] == [
        (i, NATIVE_IDS[i], NATIVE_IDS[i - 1] if i else None) for i in range(len(NATIVE_IDS))
    ]
    assert store.native_seqs(key, [*NATIVE_IDS, "absent"]) == {
        n: i for i, n in enumerate(NATIVE_IDS)
    }
    full = store.full() if hasattr(store, "full") else store
    with full.engine.connect() as conn:
        kinds = conn.execute(
            text(
                "SELECT typeof(native_id), length(native_id) FROM entries ORDER BY seq"
                if full.dialect == "sqlite"
                else "SELECT 'text', length(native_id) FROM entries ORDER BY seq"
            )
        ).all()
    if full.dialect == "sqlite":
        assert [tuple(k) for k in kinds] == [
            ("blob", 16),
            ("text", 36),
            ("text", 38),
            ("text", 8),
            ("text", 36),
            ("blob", 16),
        ]
    else:
        assert [tuple(k) for k in kinds] == [("text", len(n)) for n in NATIVE_IDS]


@given(
    st.lists(
        st.datetimes(timezones=st.none() | st.timezones())
        | st.dates()
        | st.none()
        | st.datetimes().map(lambda d: d.replace(microsecond=0)),
        max_size=20,
    )
)
def test_sqlite_time_column_writes_what_sqlalchemy_would(values):
    """Issue 43 goal 1: the bulk path's SQLite ``DATETIME`` converter (``isoformat``, not the
    bind processor's dict and ``%``) gives SQLAlchemy's own text for every datetime (naive or
    in any zone, with or without microseconds, years below 1000), date and None."""
    from continuity.store.bulk import _column_converter

    dialect = sqlite.dialect()
    process = t.entries.c.ts.type.dialect_impl(dialect).bind_processor(dialect)
    convert = _column_converter(t.entries.c.ts, dialect)
    assert convert is not None and convert.__qualname__.startswith("_sqlite_time_column")
    assert convert(values) == [process(v) for v in values]


def test_sqlite_time_column_fixed_values():
    from continuity.store.bulk import _column_converter

    convert = _column_converter(t.entries.c.ts, sqlite.dialect())
    assert convert is not None
    assert convert(
        [datetime(2026, 12, 8, 1, 2, 3, tzinfo=UTC), datetime(999, 1, 2, 3, 4, 5, 6), None]
    ) == ["2026-12-08 01:02:03.000000", "0999-01-02 03:04:05.000006", None]
    pg = _column_converter(t.entries.c.ts, postgresql.dialect())
    assert pg is None or "_sqlite_time_column" not in pg.__qualname__
