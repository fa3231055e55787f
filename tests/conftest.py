"""Shared fixtures: an isolated workspace for every test, and a store per backend.

The ``store`` fixture runs on SQLite always and on PostgreSQL whenever
``CONTINUITY_TEST_DATABASE_URL`` is set (a server URL; each test gets a throwaway database).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from continuity.store import SqlStore, open_store
from tests.paths import SHARED_DATA

PG_URL = os.environ.get("CONTINUITY_TEST_DATABASE_URL")
BACKENDS = ["sqlite", *(["postgresql"] if PG_URL else [])]


#: The daemon's default port: no test may use it (issue 12: a user's daemon listening there
#: must neither break the suite nor receive its events).
DEFAULT_PORT = 7438


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point CONTINUITY_HOME at a fresh folder and forget any configured database, daemon
    address or token of the user's environment."""
    home = tmp_path / "home"
    monkeypatch.setenv("CONTINUITY_HOME", str(home))
    for name in (
        "CONTINUITY_DATABASE_URL",
        "CONTINUITY_DAEMON_URL",
        "CONTINUITY_DAEMON__TOKEN",
        "CONTINUITY_DAEMON__PORT",
        "CONTINUITY_HOOK_TIMEOUT",
    ):
        monkeypatch.delenv(name, raising=False)
    # A daemon a test starts must not archive this machine's real harness folders (issue 18:
    # `serve` archives by default); the archive tests switch it back on in their own worlds.
    monkeypatch.setenv("CONTINUITY_ARCHIVE__ENABLED", "false")
    return home


@pytest.fixture(autouse=True)
def own_models_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each test its own ``CONTINUITY_MODELS_DIR`` (``retrieval.embedder.models_dir``): the
    words-only note is said once per user, remembered beside that folder, and a test must
    neither see another's nor leave its own in the user's cache."""
    monkeypatch.setenv("CONTINUITY_MODELS_DIR", str(tmp_path / "models-cache" / "models"))


@pytest.fixture(autouse=True)
def no_default_port(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that connects to or binds the daemon's default port 7438."""
    import socket

    def guard(original):  # type: ignore[no-untyped-def]
        def call(self, address, *args):  # type: ignore[no-untyped-def]
            if isinstance(address, tuple) and len(address) >= 2 and address[1] == DEFAULT_PORT:
                raise AssertionError(
                    f"tests never use the default port {DEFAULT_PORT} (issue 12); pick a free one"
                )
            return original(self, address, *args)

        return call

    for name in ("connect", "connect_ex", "bind"):
        monkeypatch.setattr(socket.socket, name, guard(getattr(socket.socket, name)))


def _pg_database() -> Iterator[str]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    assert PG_URL
    base = make_url(PG_URL)
    if base.drivername in ("postgresql", "postgres"):
        base = base.set(drivername="postgresql+psycopg")
    name = f"continuity_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database URL of the backend named by the test's ``backend`` parameter."""
    backend = getattr(request, "param", "sqlite")
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'continuity.db'}"
    else:
        yield from _pg_database()


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlStore]:
    """An empty, migrated store on each backend."""
    if request.param == "sqlite":
        with open_store(f"sqlite:///{tmp_path / 'continuity.db'}") as s:
            yield s
    else:
        for url in _pg_database():
            with open_store(url) as s:
                yield s


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[SqlStore]:
    """An empty store on SQLite only (for tests about formats, not backends)."""
    with open_store(f"sqlite:///{tmp_path / 'continuity.db'}") as s:
        yield s


@pytest.fixture
def shared_data() -> Path:
    """The folder of real sample sessions (``../shared/data``)."""
    assert SHARED_DATA.is_dir(), f"missing {SHARED_DATA}"
    return SHARED_DATA
