"""Issue 45 item 8: ``memory render --project``: ``.`` (or any relative folder) is the
absolute folder, and a folder no session was captured in is an error naming it, with
nothing written."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from continuity.cli.app import app
from continuity.core.errors import InputError
from continuity.store import open_store
from tests.builders import A, U
from tests.lineage.test_consolidate import make_session

runner = CliRunner()


def test_project_dot_is_the_current_folder_and_an_unknown_one_writes_nothing(
    tmp_path: Path, monkeypatch
) -> None:
    home = tmp_path / "ws"
    project = tmp_path / "books"
    project.mkdir()
    with open_store(home / "continuity.db") as store:
        make_session(
            store,
            "books-1",
            [U("Draft the books importer for the CSV statements"), A(text="Drafted.")],
            project=str(project),
        )
    done = runner.invoke(app, ["consolidate", "--all", "--home", str(home)])
    assert done.exit_code == 0, done.output
    monkeypatch.chdir(project)
    done = runner.invoke(
        app, ["memory", "render", "--project", ".", "--output", "-", "--home", str(home)]
    )
    assert done.exit_code == 0, done.output
    assert f"Scope: project {project} ·" in done.stdout
    assert "Scope: project . " not in done.stdout
    assert "books-1" in done.stdout  # its session, not an empty scope
    out = tmp_path / "unknown.md"
    for given in ("nowhere", str(tmp_path / "nowhere")):
        bad = runner.invoke(
            app, ["memory", "render", "--project", given, "--output", str(out), "--home", str(home)]
        )
        assert isinstance(bad.exception, InputError), bad.output
        assert str(bad.exception).startswith(
            f"--project {project.parent / 'nowhere'}"
            if given != "nowhere"
            else f"--project {project / 'nowhere'}"
        )
        assert "nothing written" in str(bad.exception)
        assert not out.exists()
    assert not (home / "projects").exists()


def test_a_parent_folder_or_root_is_no_project_and_nothing_is_written(
    tmp_path: Path, monkeypatch
) -> None:
    """Issue 45 item 4: ``--project /`` wrote projects/unknown/MEMORY.md and ``--project .``
    from a parent folder of a session's folder wrote projects/<parent>/MEMORY.md; only a
    folder that is exactly a captured session's project is accepted."""
    home = tmp_path / "ws"
    project = tmp_path / "work" / "books"
    project.mkdir(parents=True)
    with open_store(home / "continuity.db") as store:
        make_session(
            store,
            "books-1",
            [U("Draft the books importer for the CSV statements"), A(text="Drafted.")],
            project=str(project),
        )
    monkeypatch.chdir(project.parent)
    for given in ("/", ".", str(tmp_path)):
        bad = runner.invoke(app, ["memory", "render", "--project", given, "--home", str(home)])
        assert isinstance(bad.exception, InputError), (given, bad.output)
        named = "/" if given == "/" else str(project.parent) if given == "." else str(tmp_path)
        assert str(bad.exception).startswith(f"--project {named}:"), str(bad.exception)
        assert not (home / "projects").exists()
    monkeypatch.chdir(project)
    done = runner.invoke(app, ["memory", "render", "--project", ".", "--home", str(home)])
    assert done.exit_code == 0, done.output
    assert (home / "projects").exists()
