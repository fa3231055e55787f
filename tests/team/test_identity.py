"""Project identity across machines (issue 41 item 3): one repository cloned at two paths is one
project; a folder outside git is its path on this machine."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from continuity.team.identity import IdentityCache, normalise_remote, project_identity


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/app.git",
        "git@GitHub.com:acme/app",
        "https://github.com/acme/app",
        "https://github.com/acme/app.git/",
        "https://ana:tok3n@github.com/acme/app.git",
        "ssh://git@github.com:22/acme/app.git",
        "git://github.com/acme/app",
    ],
)
def test_every_spelling_of_one_remote_is_one_text(url: str) -> None:
    assert normalise_remote(url) == "github.com/acme/app"


def test_local_and_other_remotes() -> None:
    assert normalise_remote("/srv/git/app.git") == "file:/srv/git/app"
    assert normalise_remote("file:///srv/git/app.git") == "file:/srv/git/app"
    assert normalise_remote("https://gitlab.example:8443/g/sub/app.git") == (
        "gitlab.example/g/sub/app"
    )
    with pytest.raises(ValueError):
        normalise_remote("  ")


def _clone(path: Path, remote: str) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def test_two_clones_at_different_paths_are_one_project(tmp_path: Path) -> None:
    ana = _clone(tmp_path / "home" / "ana" / "app", "git@github.com:acme/app.git")
    bo = _clone(tmp_path / "Users" / "bo" / "src" / "app", "https://github.com/acme/app")
    (ana / "api").mkdir()
    (bo / "api").mkdir()
    a = project_identity(ana, machine="ana-laptop")
    b = project_identity(bo, machine="bo-mac")
    assert a.project == b.project == "git:github.com/acme/app"
    assert (a.remote, a.path) == ("github.com/acme/app", "")
    sub_a = project_identity(ana / "api", machine="ana-laptop")
    assert sub_a.project == project_identity(bo / "api", machine="bo-mac").project
    assert sub_a.project == "git:github.com/acme/app#api"
    assert sub_a.path == "api"
    assert sub_a.within("git:github.com/acme/app")
    assert not a.within("git:github.com/acme/app#api")
    assert not project_identity(ana / "api", machine="x").within("git:github.com/acme/ap")


def test_a_folder_without_git_is_its_path_on_this_machine(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    one = project_identity(plain, machine="ana-laptop")
    other = project_identity(plain, machine="bo-mac")
    assert one.project == f"path:ana-laptop:{plain}"
    assert one.project != other.project
    assert not one.shareable and one.remote is None
    # a repository without an origin, and a folder that is gone: the path too
    bare = tmp_path / "norem"
    subprocess.run(["git", "init", "-q", str(bare)], check=True)
    assert project_identity(bare, machine="m").project == f"path:m:{bare}"
    assert project_identity(tmp_path / "gone", machine="m").project == f"path:m:{tmp_path}/gone"


def test_the_cache_asks_git_once_per_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _clone(tmp_path / "app", "git@h.example:o/r")
    import continuity.team.identity as identity

    calls: list[tuple[str, ...]] = []
    real = identity._git

    def counting(folder: str, *args: str) -> str | None:
        calls.append(args)
        return real(folder, *args)

    monkeypatch.setattr(identity, "_git", counting)
    cache = IdentityCache("m")
    assert cache(str(repo)).project == "git:h.example/o/r"
    assert cache(str(repo)).project == "git:h.example/o/r"
    assert len(calls) == 2  # remote + toplevel, once
