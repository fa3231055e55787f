"""The harness registry (issue 42 item 1) is held to the code: every ``import: true`` harness
has a reader of its name and a fixture that imports rows of that harness; the versions it says
the e2e suite verified are the versions the e2e suite pins; names are the harnesses' own."""

from __future__ import annotations

from pathlib import Path

import pytest

from continuity.formats import reader_for
from continuity.formats.importer import import_paths
from continuity.formats.registry import FLAGS, Location, harness, harnesses, names
from tests.e2e.conftest import PACKAGES, PINNED
from tests.e2e.test_import_harnesses import IMPORT_CLIS
from tests.e2e.test_opencode import OPENCODE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
#: The names issue 42 asks for, in each harness's own spelling.
ISSUE_NAMES = {
    "claude-code",
    "codex",
    "pi",
    "opencode",
    "gemini-cli",
    "copilot-cli",
    "cursor-agent",
    "qwen-code",
    "crush",
    "factory-droid",
    "kilo",
    "auggie",
    "amp",
}


def e2e_pins() -> dict[str, str]:
    """Harness name -> the CLI version the e2e suite installs (tests/e2e)."""
    pins = {name: PINNED[package] for name, package in PACKAGES.items()}
    pins["opencode"] = OPENCODE[1]
    pins.update({name: version for name, (_, version, _) in IMPORT_CLIS.items()})
    return pins


def test_registry_names_every_harness_of_the_issue_once() -> None:
    all_names = names()
    assert len(all_names) == len(set(all_names))
    assert set(all_names) == ISSUE_NAMES
    assert all_names[:3] == ("claude-code", "codex", "pi")


def test_registry_verified_version_is_the_e2e_pin() -> None:
    pins = e2e_pins()
    for h in harnesses():
        assert h.verified_version == pins.get(h.name), h.name
    assert harness("codex").verified_version == "0.171.0"
    assert harness("gemini-cli").verified_version == "0.61.0"
    assert harness("cursor-agent").verified_version is None


@pytest.mark.parametrize("name", names("import"))
def test_registry_import_harness_has_a_reader_and_a_fixture_that_imports(
    name: str, sqlite_store, tmp_path: Path
) -> None:
    assert reader_for(name).harness == name
    h = harness(name)
    assert h.fixtures, f"{name}: no fixture named"
    for fixture in h.fixtures:
        path = FIXTURES / fixture
        assert path.exists(), f"{name}: fixture {path} missing"
    report = import_paths(sqlite_store, [FIXTURES / h.fixtures[0]], home=tmp_path / "ws")
    mine = [f for f in report.files if f.harness == name]
    assert mine, f"{name}: {h.fixtures[0]} imported no file of this harness"
    assert sum(f.imported for f in mine) > 0
    assert all(not f.errors for f in mine), [f.errors for f in mine]


def test_registry_live_harnesses_are_the_ones_doctor_checks() -> None:
    from continuity.cli.commands.doctor import BINARIES, HARNESSES

    assert (
        HARNESSES
        == ("claude-code", "codex", "pi", "opencode", "gemini-cli", "qwen-code", "copilot-cli")
        == names("live")
    )
    assert BINARIES == {
        "claude-code": "claude",
        "codex": "codex",
        "pi": "pi",
        "opencode": "opencode",
        "gemini-cli": "gemini",
        "qwen-code": "qwen",
        "copilot-cli": "copilot",
    }


def test_registry_flags_are_booleans_and_a_login_is_said() -> None:
    for h in harnesses():
        assert set(h.supports) == set(FLAGS)
        assert all(isinstance(v, bool) for v in h.supports.values())
        assert h.locations, h.name
        if any(h.supports[f] for f in ("live", "recovery", "resume")):
            assert h.verified_version, f"{h.name}: live support without an e2e pin"
    assert "needs a Cursor login" in harness("cursor-agent").note
    assert "no GitHub login" in harness("copilot-cli").note


def test_registry_usage_is_what_continuity_usage_counts() -> None:
    """Fresh-user review of issue 42: the registry says which harnesses' tokens `usage`
    counts (the usage package's own list, which may not import the registry), and for every
    imported harness where its files record them or why they hold none."""
    from continuity.usage.extract import USAGE_HARNESSES

    assert {h.name for h in harnesses() if h.usage} == set(USAGE_HARNESSES)
    assert set(USAGE_HARNESSES) == {
        "claude-code",
        "codex",
        "pi",
        "opencode",
        "gemini-cli",
        "qwen-code",
        "copilot-cli",
        "kilo",
    }
    for name in names("import"):
        assert harness(name).usage_note, f"{name}: no usage_note"
    assert "records no token usage" in harness("factory-droid").usage_note
    assert "record no token usage" in harness("cursor-agent").usage_note


def test_location_resolves_under_its_variable_else_the_default(tmp_path: Path) -> None:
    loc = Location(default="~/.codex/sessions", variables=("CODEX_HOME",), path="sessions")
    assert loc.resolve({"CODEX_HOME": "/srv/codex", "HOME": "/home/ana"}) == Path(
        "/srv/codex/sessions"
    )
    assert loc.resolve({"HOME": "/home/ana"}) == Path("/home/ana/.codex/sessions")
    assert loc.resolve({"CODEX_HOME": "", "HOME": "/home/ana"}) == Path("/home/ana/.codex/sessions")
    assert loc.describe() == "$CODEX_HOME/sessions or ~/.codex/sessions"


def test_archive_folders_come_from_the_registry(monkeypatch, tmp_path: Path) -> None:
    from continuity.archive.archiver import HOME_VARIABLES, ArchiveSettings, harness_folders

    assert HOME_VARIABLES["codex"] == "CODEX_HOME"
    assert HOME_VARIABLES["opencode"] == "XDG_DATA_HOME"
    (tmp_path / "codex" / "sessions").mkdir(parents=True)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    folders = harness_folders(ArchiveSettings())
    assert folders["codex"] == tmp_path / "codex" / "sessions"


def test_qwen_runtime_dir_moves_the_folder_watch_follows(monkeypatch, tmp_path: Path) -> None:
    """Fresh-user review of issue 42: Qwen Code writes its sessions under $QWEN_RUNTIME_DIR
    when set (over $QWEN_HOME, its settings' folder), and `watch` did not follow it. The
    registry names both, strongest first, and the archive follows the one in effect."""
    from continuity.archive.archiver import ArchiveSettings, folder_problems, harness_folders

    loc = harness("qwen-code").locations[0]
    assert loc.describe() == (
        "$QWEN_RUNTIME_DIR/projects or $QWEN_HOME/projects or ~/.qwen/projects"
    )
    runtime, home = tmp_path / "runtime", tmp_path / "qwen-home"
    (runtime / "projects").mkdir(parents=True)
    (home / "projects").mkdir(parents=True)
    monkeypatch.setenv("QWEN_HOME", str(home))
    monkeypatch.delenv("QWEN_RUNTIME_DIR", raising=False)
    assert harness_folders(ArchiveSettings())["qwen_code"] == home / "projects"
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(runtime))
    assert harness_folders(ArchiveSettings())["qwen_code"] == runtime / "projects"
    assert loc.resolve({"QWEN_RUNTIME_DIR": "", "QWEN_HOME": "/q", "HOME": "/h"}) == Path(
        "/q/projects"
    )
    monkeypatch.setenv("QWEN_RUNTIME_DIR", str(tmp_path / "missing"))
    assert [p for p in folder_problems(ArchiveSettings()) if p.startswith("qwen_code")] == [
        f"qwen_code: $QWEN_RUNTIME_DIR = {tmp_path / 'missing'} does not exist (yet); not watched"
    ]


def test_session_harness_choices_are_the_import_harnesses() -> None:
    """``sessions --harness`` and ``Workspace.sessions(harness=)`` accept every harness the
    registry imports, plus the two adapters' records."""
    from continuity.api.workspace import HARNESSES
    from continuity.cli.commands.common import SessionHarness

    adapters = {"langgraph", "openai-agents"}
    assert {h.value for h in SessionHarness} == set(names("import")) | adapters
    assert set(HARNESSES) == set(names("import")) | adapters


def test_registry_npm_package_and_bin_are_the_e2e_suites() -> None:
    """The CLIs the e2e suite installs are the registry's ``npm`` and ``bin``."""
    for name, (package, _, binary) in IMPORT_CLIS.items():
        assert (harness(name).npm, harness(name).bin) == (package, binary)
    for name, package in PACKAGES.items():
        assert harness(name).npm == package
    assert harness("opencode").npm == OPENCODE[0]
