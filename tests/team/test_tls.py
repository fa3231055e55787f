"""A team store reached over TLS (issue 41 item 5: "against one real PostgreSQL (and one with
TLS)"): a throwaway PostgreSQL server of its own (``initdb`` and ``pg_ctl`` from the machine's
PostgreSQL, a self-signed certificate, ``ssl = on``, and a ``pg_hba.conf`` that rejects every
connection without TLS), on a free loopback port, stopped and deleted afterwards. A member
joins with ``sslmode=require``, syncs, and the server says the connection was encrypted; a
connection without TLS is refused by the server.

PostgreSQL's server refuses to run as root: as root (CI) the server runs as the ``postgres``
user (``runuser``). Skipped, saying why, where no PostgreSQL server binaries are installed or
no user may run them.
"""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from continuity.store import open_store
from tests.cli.running import run_main
from tests.team.conftest import add_session, git_clone

APP = "git:github.com/acme/app"


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1])
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def tls_server() -> Iterator[str]:
    """The owner's URL (``postgres`` over TLS) of a fresh TLS-only PostgreSQL server."""
    bindir = _bindir()
    if bindir is None or not (bindir / "initdb").exists() or not shutil.which("openssl"):
        pytest.skip("no PostgreSQL server binaries (initdb, pg_ctl) or no openssl here")
    as_user: list[str] = []
    owner = None
    if os.geteuid() == 0:  # the server refuses root
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user to run the server as")
        as_user = ["runuser", "-u", "postgres", "--"]
    root = Path(tempfile.mkdtemp(prefix="continuity-tls-pg-"))
    data = root / "data"
    if owner is not None:
        os.chown(root, owner.pw_uid, owner.pw_gid)

    def run(*argv: str) -> None:
        done = subprocess.run(
            [*as_user, *argv], capture_output=True, text=True, timeout=120, cwd="/"
        )
        assert done.returncode == 0, f"{argv[0]}: {done.stdout}\n{done.stderr}"

    port = _free_port()
    started = False
    try:
        run(
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
        )
        run(
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=localhost",
            "-keyout", str(data / "server.key"), "-out", str(data / "server.crt"),
        )  # fmt: skip
        os.chmod(data / "server.key", 0o600)
        with open(data / "postgresql.conf", "a") as fh:
            fh.write(
                f"\nport = {port}\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{root}'\nssl = on\nfsync = off\n"
                "max_connections = 20\nshared_buffers = 16MB\n"
            )
        (data / "pg_hba.conf").write_text(
            "local all all trust\n"
            "hostssl all all 127.0.0.1/32 trust\n"
            "hostnossl all all 127.0.0.1/32 reject\n"
        )
        run(
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(root / "log"),
            "-w",
            "-t",
            "60",
            "start",
        )
        started = True
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres?sslmode=require"
    finally:
        if started:
            subprocess.run(
                [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                capture_output=True,
                timeout=60,
                cwd="/",
            )
        shutil.rmtree(root, ignore_errors=True)


def test_a_member_joins_and_syncs_over_tls(
    tls_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import OperationalError

    from continuity.team.schema import add_member, init_team_store

    server = create_engine(tls_server, isolation_level="AUTOCOMMIT")
    with server.connect() as conn:
        conn.execute(text("CREATE DATABASE team"))
        conn.execute(text("CREATE ROLE ana LOGIN"))
    server.dispose()
    owner_url = make_url(tls_server).set(database="team")
    owner = create_engine(owner_url)
    try:
        init_team_store(owner)
        add_member(owner, "ana", "core")
    finally:
        owner.dispose()
    ana_url = owner_url.set(username="ana").render_as_string(hide_password=False)
    assert ana_url.endswith("?sslmode=require")

    home = tmp_path / "ana-home"
    home.mkdir()
    repo = git_clone(tmp_path / "ana" / "app", "git@github.com:acme/app.git")
    with open_store(f"sqlite:///{home / 'continuity.db'}") as store:
        add_session(store, "s-tls", repo, ["the TLS-only team store", "works"])
    monkeypatch.setenv("CONTINUITY_HOME", str(home))
    monkeypatch.delenv("CONTINUITY_DATABASE_URL", raising=False)
    assert run_main(monkeypatch, capsys, "team", "join", ana_url, "--team", "core")[0] == 0
    assert run_main(monkeypatch, capsys, "team", "share", str(repo))[0] == 0
    code, out, err = run_main(monkeypatch, capsys, "sync", "--json")
    assert code == 0, err
    assert (json.loads(out)["rows"], json.loads(out)["index"]) == (2, 1)

    member = create_engine(ana_url)
    try:
        with member.connect() as conn:
            ssl = conn.execute(
                text("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            ).one()
            assert ssl[0] is True and ssl[1].startswith("TLS")
            bodies = conn.execute(
                text("SELECT body FROM continuity_team.entries ORDER BY seq")
            ).scalars()
            assert list(bodies) == ["the TLS-only team store", "works"]
    finally:
        member.dispose()
    # the server itself refuses a connection without TLS
    plain = create_engine(make_url(ana_url).update_query_dict({"sslmode": "disable"}))
    try:
        with pytest.raises(OperationalError, match=r"no encryption|rejects connection"):
            plain.connect().close()
    finally:
        plain.dispose()
