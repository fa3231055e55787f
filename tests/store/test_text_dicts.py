"""Revision 0032 (issue 43 goal 2): a store trains a zstd dictionary on its own rows' content
JSON once it holds enough long rows, writes the rows after it with that dictionary, and every
frame decodes alone, in this process or another, on each backend and the SQLite read path."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from typing import Any

import pytest
import zstandard
from hypothesis import given, settings, strategies as st
from sqlalchemy import create_engine, select, text

from continuity.core.codec import blocks_to_json
from continuity.core.errors import StoreError
from continuity.core.model import Entry, EntryKind, Role, Session, TextBlock, ToolResultBlock
from continuity.store import open_store, rawcodec, schema as t
from tests.conftest import BACKENDS

WORDS = (
    "alpha beta gamma delta tests passed failed src/app.py def main(): return None import os "
    "the quick brown fox pytest -q ruff check build ok error warning"
).split()


def _rows(n: int, start: int, seed: int) -> list[Entry]:
    """``n`` tool rows of long, varied text (each over ``MIN_TEXT_BYTES`` as JSON) and a short
    user row after each, seqs from ``start``."""
    rnd = random.Random(seed)
    out: list[Entry] = []
    for i in range(n):
        body = " ".join(rnd.choice(WORDS) for _ in range(80))
        out.append(Entry(EntryKind.MESSAGE, Role.TOOL, (ToolResultBlock(f"call{i}", False, body),)))
        out.append(Entry(EntryKind.MESSAGE, Role.USER, (TextBlock(f"next step {i}: {body[:60]}"),)))
    for k, e in enumerate(out):
        e.seq = start + k
    return out


def _full(store: Any) -> Any:
    """The ``SqlStore`` behind ``store`` (the read path writes through it)."""
    return store.full() if hasattr(store, "full") else store


def _frames(store: Any, key: str) -> list[tuple[int, str, bytes | None]]:
    full = _full(store)
    c = t.entries.c
    with full._conn() as conn:
        rows = conn.execute(
            select(c.seq, c.content, c.content_z).where(c.session_key == key).order_by(c.seq)
        ).all()
    return [(s, content, bytes(z) if z is not None else None) for s, content, z in rows]


def _dict_id(frame: bytes) -> int:
    return zstandard.get_frame_parameters(frame).dict_id


@pytest.fixture
def small_training(monkeypatch):
    """Train after 60 long rows instead of 2,000 (the rule, not the size, is under test)."""
    monkeypatch.setattr(rawcodec, "DICT_TRAIN_ROWS", 60)


def test_a_store_trains_its_dictionary_once_it_holds_enough_long_rows(store, small_training):
    store.upsert_session(Session(key="d", harness="t"))
    first = _rows(40, 0, seed=1)  # 40 long rows: fewer than 60, no dictionary
    store.append("d", first)
    assert store.text_dict() is None
    second = _rows(40, 80, seed=2)  # 80 long rows in all: trained after this append
    store.append("d", second)
    d = store.text_dict()
    assert d is not None and d.dict_id > 0
    with _full(store)._conn() as conn:
        assert conn.execute(select(t.text_dicts.c.dict_id)).scalars().all() == [d.dict_id]
    third = _rows(40, 160, seed=3)
    store.append("d", third)
    frames = _frames(store, "d")
    # rows written before the dictionary keep their plain frames; short rows stay text
    assert all(z is None or _dict_id(z) == 0 for s, _, z in frames if s < 160)
    assert all(z is None for s, _, z in frames if s < 160 and s % 2 == 1)
    # after it: every long row and every short row of 64+ bytes is a frame of the dictionary
    after = [(s, c, z) for s, c, z in frames if s >= 160]
    assert all(z is not None and _dict_id(z) == d.dict_id and c == "" for _, c, z in after)
    # and each reads back as written
    assert [e.text() for e in store.entries("d")] == [e.text() for e in first + second + third]


def test_frames_of_a_dictionary_read_back_in_a_new_process(tmp_path, small_training):
    """A process that never saw the dictionary finds it in the store (``store.textdicts``),
    through the full store and through the read path."""
    url = f"sqlite:///{tmp_path / 'continuity.db'}"
    with open_store(url) as s:
        s.upsert_session(Session(key="d", harness="t"))
        rows = _rows(80, 0, seed=4)
        s.append("d", rows[:160])
        more = _rows(20, 160, seed=5)
        s.append("d", more)
        assert s.text_dict() is not None
        assert _dict_id(_frames(s, "d")[-2][2] or b"") == s.text_dict().dict_id  # type: ignore[union-attr]
    want = [e.text() for e in rows[:160] + more]
    code = (
        "import json, sys\n"
        "from continuity.store import open_store\n"
        "from continuity.store.lite import open_lite\n"
        "lite = open_lite(sys.argv[1])\n"
        "a = [e.text() for e in lite.entries('d')]\n"
        "lite.close()\n"
        "with open_store(sys.argv[1]) as s:\n"
        "    b = [e.text() for e in s.entries('d')]\n"
        "print(json.dumps([a, b]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, url], capture_output=True, text=True, check=True
    )
    a, b = json.loads(out.stdout)
    assert a == want and b == want


def test_a_dictionary_trained_in_a_rolled_back_batch_is_stored_with_the_next_rows(
    tmp_path, small_training
):
    """The training's transaction was rolled back (the dictionary's row with it): the rows
    the store writes next with the dictionary store it again, so none is left undecodable."""
    url = f"sqlite:///{tmp_path / 'continuity.db'}"
    with open_store(url) as s:
        s.upsert_session(Session(key="d", harness="t"))
        with pytest.raises(RuntimeError), s.batch():
            s.append("d", _rows(80, 0, seed=6))
            assert s.text_dict() is not None
            raise RuntimeError("the import failed")
        d = s.text_dict()
        assert d is not None  # kept by this store, but its row was rolled back
        with s._conn() as conn:
            assert conn.execute(select(t.text_dicts.c.dict_id)).all() == []
        s.append("d", _rows(10, 0, seed=7))
        with s._conn() as conn:
            assert conn.execute(select(t.text_dicts.c.dict_id)).scalars().all() == [d.dict_id]
    engine = create_engine(url)
    with engine.connect() as conn:
        frames = conn.execute(text("SELECT content_z FROM entries WHERE content_z IS NOT NULL"))
        ids = {_dict_id(bytes(z)) for (z,) in frames}
    engine.dispose()
    assert ids == {d.dict_id}


def test_decode_text_names_a_dictionary_no_store_holds():
    d = rawcodec.train_text_dict(
        [
            json.dumps({"text": " ".join(random.Random(i).choices(WORDS, k=50))}).encode()
            for i in range(50)
        ]
    )
    assert d is not None
    frame = rawcodec.encode_text("x" * 10 + " ".join(WORDS) * 5, d)
    assert frame is not None
    rawcodec._known.pop(d.dict_id, None)
    with pytest.raises(StoreError, match=f"text dictionary {d.dict_id}, which no open store"):
        rawcodec.decode_text(frame)


_TRAINED = rawcodec.train_text_dict(
    [
        json.dumps(
            [{"type": "text", "text": " ".join(random.Random(i).choices(WORDS, k=40))}]
        ).encode()
        for i in range(80)
    ]
)


@settings(max_examples=200)
@given(st.text(max_size=2000))
def test_rawcodec_text_round_trips_with_a_dictionary(value):
    """decode_text(encode_text(x, d)) == x whenever a frame is made; with a dictionary a
    frame is made from ``MIN_DICT_TEXT_BYTES`` on, only when it saves ``MIN_SAVING``."""
    assert _TRAINED is not None
    rawcodec.remember_text_dict(_TRAINED)
    frame = rawcodec.encode_text(value, _TRAINED)
    data = value.encode("utf-8", "surrogatepass")
    if frame is None:
        assert len(data) < rawcodec.MIN_DICT_TEXT_BYTES or len(
            zstandard.ZstdCompressor(level=rawcodec.LEVEL, dict_data=_TRAINED.zdict).compress(data)
        ) > len(data) * (1 - rawcodec.MIN_SAVING)
    else:
        assert _dict_id(frame) == _TRAINED.dict_id
        assert rawcodec.decode_text(frame) == value
        assert len(frame) <= len(data) * (1 - rawcodec.MIN_SAVING)


@pytest.mark.parametrize("db_url", BACKENDS, indirect=True)
def test_downgrade_makes_every_frame_again_without_a_dictionary(db_url, small_training):
    """Revision 0032's downgrade: frames of a dictionary become plain frames (or text, under
    256 bytes), which revision 0031's code reads; the table is dropped."""
    from alembic import command
    from sqlalchemy import inspect

    from continuity.store import _alembic_config

    with open_store(db_url) as s:
        s.upsert_session(Session(key="d", harness="t"))
        rows = _rows(80, 0, seed=8) + _rows(30, 160, seed=9)
        s.append("d", rows[:160])
        s.append("d", rows[160:])
        assert s.text_dict() is not None
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:
            command.downgrade(_alembic_config(conn), "0031")
        with engine.connect() as conn:
            assert "text_dicts" not in inspect(conn).get_table_names()
            stored = conn.execute(
                text("SELECT content, content_z FROM entries WHERE session_key = 'd' ORDER BY seq")
            ).all()
    finally:
        engine.dispose()
    plain = zstandard.ZstdDecompressor()
    texts = []
    for content, z in stored:
        if z is not None:
            assert _dict_id(bytes(z)) == 0
            content = plain.decompress(bytes(z)).decode()
        else:
            assert len(content.encode()) < 256
        texts.append(content)
    assert texts == [blocks_to_json(e.blocks) for e in rows]


def test_an_open_store_s_loader_is_kept_however_many_others_come_and_go(tmp_path, small_training):
    """A long-lived process (the daemon) keeps its store open while it opens and closes others:
    a dictionary another process trains later is still found through the open one; the
    closed ones' loaders are dropped."""

    url = f"sqlite:///{tmp_path / 'continuity.db'}"
    with open_store(url) as kept:
        for i in range(12):  # stores that come and go
            with open_store(f"sqlite:///{tmp_path / f'other{i}.db'}"):
                pass
        import gc

        gc.collect()
        # another store (as another process would) trains a dictionary in the same file
        with open_store(url) as writer:
            writer.upsert_session(Session(key="d", harness="t"))
            writer.append("d", _rows(80, 0, seed=10))
            writer.append("d", _rows(10, 160, seed=11))
            d = writer.text_dict()
        assert d is not None
        rawcodec._known.pop(d.dict_id, None)  # as in a process that never saw it
        del writer
        gc.collect()
        assert [e.text() for e in kept.entries("d")][-2:] == [
            e.text() for e in _rows(10, 160, seed=11)
        ][-2:]


def test_a_lost_dictionary_is_a_store_error_naming_it_not_a_traceback(tmp_path, small_training):
    """A database whose ``text_dicts`` row was lost (a damaged copy): ``show`` of a row framed
    with it says which dictionary is missing and what to do, with the store's exit code 4."""
    home = tmp_path / "h"
    home.mkdir()
    url = f"sqlite:///{home / 'continuity.db'}"
    with open_store(url) as s:
        s.upsert_session(Session(key="lost-dict", harness="claude-code"))
        s.append("lost-dict", _rows(80, 0, seed=12))
        s.append("lost-dict", _rows(10, 160, seed=13))
        d = s.text_dict()
        assert d is not None
        with s._conn() as conn:
            conn.execute(text("DELETE FROM text_dicts"))
    done = subprocess.run(
        [sys.executable, "-m", "continuity.cli.app", "show", "lost-dict", "--home", str(home)],
        capture_output=True,
        text=True,
        env={k: v for k, v in __import__("os").environ.items() if k != "CONTINUITY_DATABASE_URL"},
    )
    assert done.returncode == 4, done.stderr
    assert f"text dictionary {d.dict_id}, which no open store holds" in done.stderr
    assert "Traceback" not in done.stderr
    # doctor finds it (a fresh-user review: PRAGMA quick_check said ok)
    from continuity.cli.commands.doctor import check_integrity

    with s._conn() as conn:
        frames = conn.execute(
            text("SELECT content_z FROM entries WHERE content_z IS NOT NULL")
        ).scalars()
        framed = sum(_dict_id(bytes(z)) == d.dict_id for z in frames)
    assert framed > 0
    found = check_integrity(home)
    assert found is not None and found.status == "problem", found
    assert found.data["lost_text_dicts"] == {str(d.dict_id): framed}
    assert f"text_dicts lost: dictionary {d.dict_id} ({framed:,} rows)" in found.detail
    with s._conn() as conn:
        conn.execute(
            text("INSERT INTO text_dicts (dict_id, data) VALUES (:i, :d)"),
            {"i": d.dict_id, "d": d.data},
        )
    again = check_integrity(home)
    assert again is not None and again.status == "ok", again


def test_a_store_that_lost_its_dictionary_still_imports_new_rows(tmp_path, small_training):
    """Fresh-user review: with the ``text_dicts`` row lost, importing a new session failed
    (the training read the frames it could not decode) and said "import it again", which
    could never help. It now trains a new dictionary on the rows it can read."""
    url = f"sqlite:///{tmp_path / 'continuity.db'}"
    with open_store(url) as s:
        s.upsert_session(Session(key="a", harness="t"))
        s.append("a", _rows(80, 0, seed=14))
        s.append("a", _rows(80, 160, seed=15))  # 80 long rows with the dictionary
        first = s.text_dict()
        assert first is not None
        with s._conn() as conn:
            conn.execute(text("DELETE FROM text_dicts"))
    rawcodec._known.pop(first.dict_id, None)
    with open_store(url) as s:
        s.upsert_session(Session(key="b", harness="t"))
        new = _rows(80, 0, seed=16)
        s.append("b", new)
        assert [e.text() for e in s.entries("b")] == [e.text() for e in new]
        second = s.text_dict()
        assert second is not None and second.dict_id != first.dict_id
