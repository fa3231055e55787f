"""``[team]`` settings and ``team join|share|unshare|status`` (issue 41 item 1): the URL holds
no password, TLS off loopback, every project private until shared."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from continuity.core.errors import ConfigError
from continuity.team.local import join, set_shared, status
from continuity.team.settings import check_team_url, team_settings, write_team
from tests.cli.running import run_main


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg://ana:s3cret@127.0.0.1/team",
        "postgresql+psycopg://ana@127.0.0.1/team?password=s3cret",
    ],
)
def test_a_url_holding_a_password_is_refused_naming_where_it_goes(url: str) -> None:
    with pytest.raises(ConfigError) as exc:
        check_team_url(url)
    assert "$PGPASSWORD" in str(exc.value) and "~/.pgpass" in str(exc.value)
    assert "s3cret" not in str(exc.value)


def test_tls_is_required_off_loopback() -> None:
    with pytest.raises(ConfigError) as exc:
        check_team_url("postgresql+psycopg://ana@db.acme.example/team")
    assert "db.acme.example" in str(exc.value) and "sslmode=require" in str(exc.value)
    with pytest.raises(ConfigError):
        check_team_url("postgresql+psycopg://ana@10.0.0.5/team?sslmode=prefer")
    for ok in (
        "postgresql+psycopg://ana@db.acme.example/team?sslmode=require",
        "postgresql+psycopg://ana@db.acme.example/team?sslmode=verify-full",
        "postgresql+psycopg://ana@127.0.0.1:5432/team",
        "postgresql+psycopg://ana@localhost/team",
        "postgresql+psycopg://ana@[::1]/team",
        "postgresql+psycopg://ana@/team?host=/var/run/postgresql",
    ):
        assert check_team_url(ok) == ok
    with pytest.raises(ConfigError, match="PostgreSQL"):
        check_team_url("sqlite:///team.db")


def test_join_writes_team_and_keeps_the_rest_of_config(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    cfg = isolated_home / "config.toml"
    cfg.write_text("# mine\n[continuity]\nretention_days = 9  # keep\n", encoding="utf-8")
    join(None, "postgresql+psycopg://ana@127.0.0.1/team", name="core", offline=True)
    text = cfg.read_text(encoding="utf-8")
    assert text.startswith("# mine\n[continuity]\nretention_days = 9  # keep\n")
    got = team_settings()
    assert (got.url, got.name, got.shared) == (
        "postgresql+psycopg://ana@127.0.0.1/team",
        "core",
        [],
    )
    assert cfg.stat().st_mode & 0o077 == 0
    # a [team] table in the middle is replaced in place
    cfg.write_text('[team]\nurl = "x"\n\n[daemon]\nport = 7999\n', encoding="utf-8")
    write_team(None, {"url": "postgresql+psycopg://bo@127.0.0.1/t", "author": "Bo"})
    text = cfg.read_text(encoding="utf-8")
    assert "[daemon]\nport = 7999\n" in text and "x" not in text.split("[daemon]")[0]
    assert team_settings().author == "Bo"


def test_a_password_edited_into_config_is_refused(isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text(
        '[team]\nurl = "postgresql+psycopg://ana:pw@127.0.0.1/team"\n', encoding="utf-8"
    )
    with pytest.raises(ConfigError, match=r"config.toml \[team\] url: holds a password"):
        team_settings()


def test_share_unshare_by_identity(tmp_path: Path, isolated_home: Path) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "git@h.example:o/app"])
    (repo / "api").mkdir()
    assert not status(None, repo).here_shared  # private by default
    ident, changed = set_shared(None, repo, shared=True)
    assert (ident.project, changed) == ("git:h.example/o/app", True)
    assert set_shared(None, repo, shared=True)[1] is False
    assert status(None, repo / "api").here_shared  # a folder inside a shared repository
    with pytest.raises(ConfigError, match=r"inside the shared project git:h\.example/o/app"):
        set_shared(None, repo / "api", shared=False)
    assert set_shared(None, repo, shared=False)[1] is True
    assert team_settings().shared == []


def test_cli_team_commands(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "https://h.example/o/app"])
    monkeypatch.chdir(repo)
    code, _, err = run_main(
        monkeypatch, capsys, "team", "join", "postgresql+psycopg://ana:pw@db.example/t"
    )
    assert code == 2 and "$PGPASSWORD" in err and ":pw@" not in err
    assert team_settings().url is None  # nothing written
    code, _, err = run_main(monkeypatch, capsys, "team", "join", "postgresql+psycopg://ana@db.x/t")
    assert code == 2 and "sslmode=require" in err
    code, _, err = run_main(
        monkeypatch, capsys, "team", "join", "postgresql+psycopg://ana@127.0.0.1/t", "--offline"
    )
    assert code == 0, err
    code, out, _ = run_main(monkeypatch, capsys, "team", "share", "--json")
    assert code == 0 and json.loads(out)["project"] == "git:h.example/o/app"
    code, out, _ = run_main(monkeypatch, capsys, "team", "status", "--json")
    data = json.loads(out)
    assert data["url"] == "postgresql+psycopg://ana@127.0.0.1/t"
    assert data["shared"] == ["git:h.example/o/app"] and data["here"]["shared"] is True
    assert run_main(monkeypatch, capsys, "team", "unshare")[0] == 0
    code, out, _ = run_main(monkeypatch, capsys, "team", "status", "--json")
    assert json.loads(out)["shared"] == []


def test_sync_without_a_team_or_with_the_store_down(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    code, _, err = run_main(monkeypatch, capsys, "sync")
    assert code == 2 and "continuity team join URL" in err
    # nothing listens on port 9 of this machine: the store is unreachable, exit 4, no password
    join(None, "postgresql+psycopg://ana@127.0.0.1:9/team?connect_timeout=3", offline=True)
    monkeypatch.setenv("PGPASSWORD", "pw-not-shown-1234")
    code, _, err = run_main(monkeypatch, capsys, "sync")
    assert code == 4 and "team store postgresql+psycopg://ana@127.0.0.1:9/team" in err
    assert "pw-not-shown-1234" not in err
    # the failure is what team status shows (issue 41: last sync, last error)
    code, out, _ = run_main(monkeypatch, capsys, "team", "status", "--json")
    sync = json.loads(out)["sync"]
    assert sync["last_sync_at"] is None and sync["failing_since"] == sync["last_error_at"]
    assert "port 9 failed" in sync["last_error"] and "pw-not-shown-1234" not in out
    code, out, _ = run_main(monkeypatch, capsys, "team", "status")
    assert code == 0 and "last sync: never" in out and "failing since " in out


def test_sync_timing_settings_are_checked_and_written(isolated_home: Path) -> None:
    from continuity.core.errors import ConfigError
    from continuity.team.settings import team_values, write_team

    write_team(None, {"url": "postgresql+psycopg://ana@127.0.0.1/t", "sync_interval_seconds": 5.0})
    got = team_settings()
    assert (got.sync_interval_seconds, got.sync_debounce_seconds, got.auto_sync) == (5.0, 2.0, True)
    assert team_values(got)["sync_interval_seconds"] == 5.0
    assert "sync_debounce_seconds" not in team_values(got)  # defaults are not written
    write_team(None, {"url": "postgresql+psycopg://ana@127.0.0.1/t", "sync_interval_seconds": 0.5})
    with pytest.raises(ConfigError, match="sync_interval_seconds"):
        team_settings()


@pytest.mark.parametrize(
    ("url", "env", "named"),
    [
        # hostaddr is where libpq connects; host only names it
        ("postgresql+psycopg://u@127.0.0.1:5433/db?hostaddr=192.0.2.2", {}, "192.0.2.2"),
        ("postgresql+psycopg://u@localhost/db?hostaddr=127.0.0.1,192.0.2.3", {}, "192.0.2.3"),
        ("postgresql+psycopg://u@127.0.0.1,db.acme.example/db", {}, "db.acme.example"),
        ("postgresql+psycopg://u@/db?host=127.0.0.1:5432,10.1.2.3:5432", {}, "10.1.2.3"),
        # a host-less URL: libpq takes $PGHOST / $PGHOSTADDR
        ("postgresql+psycopg://u@/db", {"PGHOST": "192.0.2.2"}, "192.0.2.2"),
        ("postgresql+psycopg://u@127.0.0.1/db", {"PGHOSTADDR": "192.0.2.4"}, "192.0.2.4"),
        ("postgresql+psycopg://u@/db", {"PGSERVICE": "team"}, "service:team"),
    ],
)
def test_every_target_libpq_would_use_needs_tls_off_loopback(
    url: str, env: dict[str, str], named: str
) -> None:
    with pytest.raises(ConfigError) as exc:
        check_team_url(url, env=env)
    assert f"host {named}" in str(exc.value) and "sslmode=require" in str(exc.value)
    assert check_team_url(url + ("&" if "?" in url else "?") + "sslmode=require", env=env)


def test_local_targets_need_no_tls_and_a_repeated_query_key_is_refused() -> None:
    for url, env in (
        ("postgresql+psycopg://u@/db", {}),
        ("postgresql+psycopg://u@/db", {"PGHOST": "/var/run/postgresql"}),
        ("postgresql+psycopg://u@/db", {"PGHOST": "localhost", "PGHOSTADDR": "::1"}),
        ("postgresql+psycopg://u@127.0.0.1/db?hostaddr=127.0.0.1", {}),
        # the URL's host wins over $PGHOST
        ("postgresql+psycopg://u@127.0.0.1/db", {"PGHOST": "192.0.2.2"}),
    ):
        assert check_team_url(url, env=env) == url
    with pytest.raises(ConfigError, match=r"\?sslmode= is given more than once"):
        check_team_url("postgresql+psycopg://u@db.acme.example/db?sslmode=disable&sslmode=require")


def test_join_and_each_connection_check_the_environment(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from continuity.team.remote import TeamStore

    isolated_home.mkdir(parents=True)
    monkeypatch.setenv("PGHOST", "192.0.2.2")
    with pytest.raises(ConfigError, match="from \\$PGHOST"):
        join(None, "postgresql+psycopg://u@/db", offline=True)
    monkeypatch.delenv("PGHOST")
    join(None, "postgresql+psycopg://u@/db", offline=True)
    monkeypatch.setenv("PGHOST", "192.0.2.2")  # set after the join: the sync refuses it too
    with pytest.raises(ConfigError, match=r"team store URL: host 192\.0\.2\.2"):
        TeamStore("postgresql+psycopg://u@/db")
    code, _, stderr = run_main(monkeypatch, capsys, "sync")
    assert code == 2 and "192.0.2.2" in stderr and "sslmode=require" in stderr


def test_joining_another_store_starts_private(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    isolated_home.mkdir(parents=True)
    repo = tmp_path / "app"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "git@x.org:a/app.git"])
    first = "postgresql+psycopg://ana@127.0.0.1/team"
    join(None, first, name="core", offline=True)
    set_shared(None, repo, shared=True)
    assert team_settings().shared == ["git:x.org/a/app"]
    # the same store again (its URL spelled the same, the team kept): the shares stay
    assert join(None, first, offline=True)[1] == []
    assert team_settings().shared == ["git:x.org/a/app"]
    # another team in the same store: private again
    assert join(None, first, name="other", offline=True)[1] == ["git:x.org/a/app"]
    assert team_settings().shared == []
    set_shared(None, repo, shared=True)
    code, _, err = run_main(
        monkeypatch, capsys, "team", "join", "postgresql+psycopg://ana@127.0.0.1/team2", "--offline"
    )
    assert code == 0
    assert (
        "1 project(s) were shared with the previous store; share them again here with "
        "`continuity team share`: git:x.org/a/app" in err
    )
    assert "nothing is shared until" in err
    assert team_settings().shared == []
    assert team_settings().url == "postgresql+psycopg://ana@127.0.0.1/team2"


def test_share_refuses_a_path_that_is_not_a_folder(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    isolated_home.mkdir(parents=True)
    join(None, "postgresql+psycopg://ana@127.0.0.1/team", offline=True)
    missing = tmp_path / "no-such-project"
    code, _, err = run_main(monkeypatch, capsys, "team", "share", str(missing))
    assert code == 2 and f"team share {missing}: does not exist" in err
    afile = tmp_path / "notes.txt"
    afile.write_text("x", encoding="utf-8")
    code, _, err = run_main(monkeypatch, capsys, "team", "share", str(afile))
    assert code == 2 and f"team share {afile}: is a file, not a folder" in err
    assert "shared with the team" not in err and team_settings().shared == []
