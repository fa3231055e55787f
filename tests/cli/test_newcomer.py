"""Issue 20, the command line a newcomer trusts: inputs that tell the truth, output that never
misleads, conventions people know. Each test holds the value a defect got wrong."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.cli.test_fresh_user import run_main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "sessions"
PI_SAMPLE = next((EXAMPLES / "pi").glob("*.jsonl"))
CODEX_KEY = "01a23556-7fab-7dd1-86d3-d100eb5ab801"


# --------------------------------------------------------------------------- import inputs


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_import_of_a_device_or_fifo_is_not_a_regular_file(monkeypatch, capsys, tmp_path, kind):
    if kind == "device":
        target = Path("/dev/zero")
    else:
        target = tmp_path / "pipe.jsonl"
        os.mkfifo(target)
    code, out, err = run_main(monkeypatch, capsys, "import", target, "--home", tmp_path / "h")
    assert code == 2
    assert err.strip() == (f"continuity: {target}: not a regular file or folder (a device, "
                           "pipe or socket): give session files or folders")


def test_import_of_a_missing_and_a_good_path_imports_the_good_one(monkeypatch, capsys, tmp_path):
    missing = tmp_path / "missing"
    code, out, err = run_main(monkeypatch, capsys, "import", missing, PI_SAMPLE,
                              "--home", tmp_path / "h")
    assert code == 2
    assert f"skipped {missing}: no such file or directory" in err.splitlines()
    assert err.splitlines()[-1] == ("error: 1 path(s) could not be read (shown as skipped "
                                    "above, with the reason); the others were imported")
    assert out.splitlines()[-1] == ("2 files, 1 sessions, 15 rows, 0 bad lines, 0 duplicates, "
                                    "1 files skipped")
    code, out, _ = run_main(monkeypatch, capsys, "sessions", "--json", "--home", tmp_path / "h")
    assert [s["session"] for s in json.loads(out)] == ["01a2354d-2a28-75c5-9931-4e663de4f734"]


def test_an_import_where_every_file_was_skipped_exits_2(monkeypatch, capsys, tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text('{"theme": "dark"}\n')
    code, out, err = run_main(monkeypatch, capsys, "import", other, "--home", tmp_path / "h")
    assert code == 2
    assert err.splitlines()[-1] == ("error: nothing imported: none of the 1 files is a Claude "
                                    "Code, Codex or pi session file")


@pytest.mark.parametrize("encoding,name", [("utf-16", "UTF-16-LE"), ("utf-16-be", "UTF-16-BE"),
                                           ("utf-16-le", "UTF-16-LE")])
def test_a_utf16_file_is_named_by_its_encoding(monkeypatch, capsys, tmp_path, encoding, name):
    target = tmp_path / "u16.jsonl"
    target.write_bytes(PI_SAMPLE.read_text(encoding="utf-8").encode(encoding))
    code, out, err = run_main(monkeypatch, capsys, "import", target, "--home", tmp_path / "h")
    assert code == 2
    assert (f"skipped {target}: not a session file (format not recognised): it is {name} "
            f"text, not UTF-8; convert it first (iconv -f {name} -t UTF-8 FILE > FILE.jsonl)"
            ) in err.splitlines()


def test_a_symlinked_folder_is_followed_once_and_a_loop_ends(monkeypatch, capsys, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    shutil.copy(PI_SAMPLE, real / "s.jsonl")
    tree = tmp_path / "tree" / "a"
    tree.mkdir(parents=True)
    (tree / "linked").symlink_to(real, target_is_directory=True)
    (tree / "loop").symlink_to(tmp_path / "tree", target_is_directory=True)
    (tree / "again").symlink_to(real, target_is_directory=True)
    code, out, err = run_main(monkeypatch, capsys, "import", tmp_path / "tree", "--json",
                              "--home", tmp_path / "h")
    assert code == 0, err
    files = json.loads(out)["files"]
    assert [(f["path"], f["status"]) for f in files] == [(str(real / "s.jsonl"), "imported")]
