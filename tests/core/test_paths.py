"""``core.paths`` (issue 43 goal 3): each function answers what its ``pathlib`` expression
answers, for the paths the read commands meet (absolute, as ``CONTINUITY_HOME`` usually is)
and every other spelling (``~``, relative, ``.``, ``//``, a trailing ``/``), which it hands
to pathlib; importing it (and ``core.config``, ``store.lite``) loads no pathlib."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from continuity.core import paths

SPELLINGS = [
    "/tmp/ws",
    "/tmp/ws/",
    "/tmp/./ws",
    "/tmp/ws/.",
    "/tmp//ws",
    "//tmp/ws",
    "///tmp/ws",
    "/tmp/../tmp/ws",
    "/",
    "//",
    "/tmp/a b/c%d#e?f",
    "/tmp/é/日本",
    "ws",
    "./ws",
    "ws/",
    "",
    ".",
    "..",
    "~",
    "~/ws",
    "~/./ws/",
    "~nosuchuser0x/ws",
    "/tmp/~ws",
]


def _outcome(answer: Callable[[], object]) -> object:
    try:
        return answer()
    except Exception as exc:  # noqa: BLE001 - the same error is part of the same answer
        return type(exc), str(exc)


@pytest.mark.parametrize("text", SPELLINGS)
def test_each_answer_is_pathlibs(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path = Path(text)
    pairs = [
        (lambda: paths.expanded(text), lambda: str(path.expanduser())),
        (lambda: paths.absolute(text), lambda: str(path.expanduser().absolute())),
        (lambda: paths.absolute(text, expand=False), lambda: str(path.absolute())),
        (lambda: paths.joined(text, "continuity.db"), lambda: str(path / "continuity.db")),
        (lambda: paths.split(text), lambda: (str(path.parent), path.name)),
        (
            lambda: paths.file_uri(str(path.absolute())),
            lambda: path.absolute().as_uri(),
        ),
    ]
    for ours, theirs in pairs:
        assert _outcome(ours) == _outcome(theirs)


def test_real_values():
    assert paths.absolute("/tmp/ws") == "/tmp/ws" and paths.absolute("/tmp/ws/") == "/tmp/ws"
    assert paths.absolute("/tmp/./ws") == "/tmp/ws" and paths.absolute("/a/../b") == "/a/../b"
    assert paths.joined("/tmp/ws", "continuity.db") == "/tmp/ws/continuity.db"
    assert paths.joined("/", "continuity.db") == "/continuity.db"
    assert paths.split("/tmp/ws/continuity.db") == ("/tmp/ws", "continuity.db")
    assert paths.file_uri("/tmp/a b/é") == "file:///tmp/a%20b/%C3%A9"


def test_the_file_tests_are_pathlibs(tmp_path: Path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "folder").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "file")
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    names = ["file", "folder", "link", "dangling", "loop", "nothing", "file/below", "a\x00b"]
    for name in names:
        text = f"{tmp_path}/{name}"
        assert paths.is_file(text) == Path(text).is_file(), name
        assert paths.exists(text) == Path(text).exists(), name


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder without permission")
def test_a_path_it_may_not_look_at_is_pathlibs_to_answer(tmp_path: Path):
    shut = tmp_path / "shut"
    shut.mkdir()
    (shut / "db").write_text("x")
    shut.chmod(0)
    try:
        with pytest.raises(PermissionError):
            Path(f"{shut}/db").is_file()
        with pytest.raises(PermissionError):
            paths.is_file(f"{shut}/db")
    finally:
        shut.chmod(0o700)


def test_the_read_path_loads_no_pathlib():
    code = (
        "import sys\n"
        "import continuity.core.paths, continuity.core.config, continuity.store.lite\n"
        "from continuity.core.config import database_url, home_folder, read_config\n"
        "home_folder(); database_url(); read_config()\n"
        "print(sorted({'pathlib', 'urllib.parse'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
