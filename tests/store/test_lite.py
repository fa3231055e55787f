"""``store.lite`` (issue 43 goal 3): when the read path answers, and that it loads no
SQLAlchemy. Its answers are checked by the conformance suite (``conftest.py``:
``sqlite-read``)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from continuity.store import HEAD_REVISION, open_store
from continuity.store.lite import READ_REVISION, LiteStore, open_lite


def test_read_revision_is_the_head_revision():
    """A new migration must review the read path's queries (and then raise READ_REVISION)."""
    assert READ_REVISION == HEAD_REVISION


def test_open_lite_only_for_a_sqlite_file_at_the_read_revision(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'continuity.db'}"
    assert open_lite(url) is None  # no file: the full store creates it
    assert not (tmp_path / "continuity.db").exists()  # and open_lite made none
    with open_store(url):
        pass
    lite = open_lite(url)
    assert isinstance(lite, LiteStore)
    lite.close()
    with sqlite3.connect(tmp_path / "continuity.db") as db:
        db.execute("UPDATE alembic_version SET version_num = '0020'")
    assert open_lite(url) is None  # an older schema: the full store migrates or refuses
    assert open_lite("postgresql+psycopg://u@h/db") is None
    assert open_lite("sqlite://") is None
    assert open_lite(url + "?mode=ro") is None


def test_reading_through_lite_loads_no_sqlalchemy(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'continuity.db'}"
    with open_store(url):
        pass
    code = (
        "import sys\n"
        "from continuity.store.lite import open_lite\n"
        f"s = open_lite({url!r})\n"
        "assert s.list_sessions() == [] and s.entries('k') == [] and s.get_session('k') is None\n"
        "s.close()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sqlalchemy', 'pydantic')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_row_decoder_takes_every_entries_column():
    """``store.rows.decode_entry`` serves both read paths: it takes the table's columns, in
    the table's order (a column added by a migration must be added there too), ``source_id``
    read as its path (revision 0030: ``schema.ENTRY_READ``, ``p.path`` in the lite select)."""
    from continuity.store import schema
    from continuity.store.lite import _ENTRY_SELECT
    from continuity.store.rows import ENTRY_WIDTH

    *names, numbered, hashed = [c.name for c in schema.entries.columns]
    assert numbered == "entry_no"  # revision 0031: numbered by the database, read by no Entry
    assert hashed == "native_hash"  # revision 0033: the look-up's number, read by no Entry
    assert len(names) == ENTRY_WIDTH == 21
    assert "entry_id" not in names and "source_path" not in names
    read = [getattr(c, "name", None) for c in schema.ENTRY_READ]
    assert read == [*names[:-1], "source_path"] and names[-1] == "source_id"
    assert [n.strip() for n in _ENTRY_SELECT.split(",")] == [*names[:-1], "p.path"]
