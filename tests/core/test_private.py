"""Owner-only workspace files (issue 16: "Files other users can read"), with umask 022 set as
on most systems."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from continuity.core.private import (
    Exposed,
    exposed,
    make_private,
    private_dir,
    private_fix,
    private_open,
    write_private,
)


@pytest.fixture
def umask_022():
    """The usual umask: without our care, new files are 0644 and folders 0755."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_private_dir_creates_folders_0700(tmp_path, umask_022):
    """Each folder private_dir creates is 0700 (parents too); an existing one keeps its mode."""
    (tmp_path / "old").mkdir()
    assert mode(tmp_path / "old") == 0o755
    private_dir(tmp_path / "old" / "a" / "b")
    assert [
        mode(tmp_path / "old"),
        mode(tmp_path / "old" / "a"),
        mode(tmp_path / "old" / "a" / "b"),
    ] == [0o755, 0o700, 0o700]


def test_private_open_and_write_private_make_0600(tmp_path, umask_022):
    """A file created by private_open or write_private is 0600; make_private fixes a 0644 one."""
    os.close(private_open(tmp_path / "a", os.O_WRONLY | os.O_CREAT))
    write_private(tmp_path / "b", b"x\n")
    (tmp_path / "c").write_bytes(b"")
    assert mode(tmp_path / "c") == 0o644
    make_private(tmp_path / "c")
    assert [mode(tmp_path / n) for n in "abc"] == [0o600, 0o600, 0o600]
    assert (tmp_path / "b").read_bytes() == b"x\n"


def test_exposed_names_what_others_can_read(tmp_path, umask_022):
    """exposed() reports the folders and files under the workspace with group/other bits,
    with a message naming the path, its mode and the fix; a private tree reports nothing."""
    home = private_dir(tmp_path / "ws")
    write_private(home / "continuity.db", b"")
    assert exposed(home) == []
    (home / "config.toml").write_text("[daemon]\n")
    (home / "spool").mkdir()
    found = exposed(home)
    assert found == [
        Exposed(home / "spool", 0o755, "folder"),
        Exposed(home / "config.toml", 0o644, "file"),
    ] or found == [
        Exposed(home / "config.toml", 0o644, "file"),
        Exposed(home / "spool", 0o755, "folder"),
    ]
    text = {e.describe() for e in found}
    assert f"{home / 'config.toml'} is 0644: other users can read it" in text
    assert f"{home / 'spool'} is 0755: other users can read and enter it" in text
    assert private_fix(home) == f"chmod -R go= {home}"  # issue 45 item 3: the one fix
    os.chmod(home, 0o755)
    assert exposed(home)[0] == Exposed(home, 0o755, "folder")
    assert exposed(tmp_path / "missing") == []


def test_exposed_says_what_each_mode_lets_others_do_and_follows_a_linked_workspace(tmp_path):
    """Fresh-user review: a 0702 folder was said to be one others "can enter" (they can only
    write to it), and a workspace named by a symlink had its 0755 folder go unnamed (the
    link's own mode was read)."""
    assert Exposed(tmp_path, 0o702, "folder").describe() == (
        f"{tmp_path} is 0702: other users can write to it"
    )
    assert Exposed(tmp_path, 0o751, "folder").describe() == (
        f"{tmp_path} is 0751: other users can read and enter it"
    )
    assert Exposed(tmp_path / "f", 0o677, "file").describe() == (
        f"{tmp_path / 'f'} is 0677: other users can read, write to and run it"
    )
    real = private_dir(tmp_path / "real")
    link = tmp_path / "link"
    link.symlink_to(real)
    assert exposed(link) == []
    os.chmod(real, 0o755)
    assert exposed(link) == [Exposed(link, 0o755, "folder")]
