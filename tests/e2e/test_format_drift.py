"""Format drift (issue 42 item 5): a pinned CLI must write nothing its fixtures do not show.

For every harness whose CLI the e2e suite runs (the registry's ``verified_version``), the
files the real CLI writes in an offline run (one prompt, one shell call, against
``fakemodel.FakeModel``) are imported and their record types (``FileReport.types``: the
reader's name for each line's kind, e.g. ``response_item/function_call``) compared with the
types of the same harness's fixtures (the registry's ``fixtures``, imported the same way). A
type the fixtures lack fails the test, named with its count: the fixtures no longer stand for
what the CLI writes (re-record them at the pinned version, as each fixture folder's README
says, and teach the reader the new kind). A line no reader knows (``opaque``) or a content
block a reader warns it skipped fails it too: new kinds are counted and shown, never dropped
silently.

Gemini CLI, Qwen Code, Copilot CLI, Kilo and Factory Droid run in ``test_import_harnesses``,
which calls ``drift`` on what they wrote; Claude Code, Codex, pi and OpenCode run here.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from continuity.formats import registry
from continuity.formats.importer import FileReport, import_paths
from continuity.store import open_store
from tests.e2e.conftest import World, ensure_clis
from tests.e2e.fakemodel import FakeModel
from tests.e2e.test_opencode import OpenCodeWorld, ensure_opencode

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROMPT = "List the files here"


@cache
def fixture_types(harness: str) -> frozenset[str]:
    """The record types the registry's fixtures of ``harness`` hold (every file of that
    harness under each fixture path, imported into a throwaway store)."""
    spec = registry.harness(harness)
    assert spec.fixtures, f"{harness}: the registry names no fixture"
    with tempfile.TemporaryDirectory() as tmp, open_store(f"sqlite:///{tmp}/db.sqlite") as store:
        report = import_paths(store, [FIXTURES / f for f in spec.fixtures], home=Path(tmp) / "ws")
    types = {t for f in report.files if f.harness == harness for t in f.types}
    assert types, f"{harness}: its fixtures {spec.fixtures} import no file of it"
    return frozenset(types)


def drift(harness: str, files: list[FileReport]) -> list[str]:
    """What the files a pinned CLI wrote hold that ``harness``'s fixtures do not: one line
    per new record type (``type: N line(s)``), per opaque line count and per warning about an
    unknown kind (``file:line: warning``). Empty when the format has not drifted."""
    mine = [f for f in files if f.harness == harness]
    assert mine, f"{harness}: the run wrote no file of this harness"
    seen: Counter[str] = Counter()
    for f in mine:
        seen.update(f.types)
    known = fixture_types(harness)
    found = [f"record type {t!r}: {n} line(s)" for t, n in sorted(seen.items()) if t not in known]
    found += [f"{Path(f.path).name}: {f.opaque} line(s) no reader knows" for f in mine if f.opaque]
    found += [
        f"{Path(f.path).name}:{line}: {warning}"
        for f in mine
        for line, warning in f.warnings
        if "unknown" in warning
    ]
    return found


def assert_no_drift(harness: str, files: list[FileReport]) -> None:
    """Fail naming every drift ``drift`` finds, and how to settle it."""
    found = drift(harness, files)
    version = registry.harness(harness).verified_version
    assert not found, (
        f"{harness} {version} writes what its fixtures "
        f"({', '.join(registry.harness(harness).fixtures)}) lack:\n  "
        + "\n  ".join(found)
        + "\nre-record the fixtures at the pinned version (each fixture folder's README says "
        "how) and teach the reader the new kinds"
    )


def _import(sessions: Path, root: Path) -> list[FileReport]:
    with open_store(f"sqlite:///{root / 'drift.sqlite'}") as store:
        return import_paths(store, [sessions], home=root / "drift-ws").files


@pytest.mark.parametrize("harness", ["claude-code", "codex", "pi"])
def test_pinned_cli_writes_only_what_its_fixtures_show(
    harness: str, tmp_path: Path, fake_model: FakeModel
) -> None:
    world = World(tmp_path, harness, ensure_clis()[harness], fake_model)
    try:
        world.run_harness(PROMPT)
        assert_no_drift(harness, _import(world.session_files(), tmp_path))
    finally:
        world.close()


def test_pinned_opencode_writes_only_what_its_fixtures_show(
    tmp_path: Path, fake_model: FakeModel
) -> None:
    world = OpenCodeWorld(tmp_path, ensure_opencode(), fake_model)
    world.run(PROMPT)
    assert_no_drift("opencode", _import(world.data, tmp_path))


def test_a_new_record_type_is_drift(tmp_path: Path) -> None:
    """The check itself: a Codex file with a line kind its fixtures never held is named."""
    files = sorted((FIXTURES / "samples" / "real-harness" / "codex").rglob("*.jsonl"))
    text = files[0].read_text(encoding="utf-8")
    new = '{"timestamp":"2026-12-06T00:00:00Z","type":"event_msg","payload":{"type":"brand_new"}}\n'
    path = tmp_path / files[0].name
    path.write_text(text + new, encoding="utf-8")
    found = drift("codex", _import(path, tmp_path))
    assert found == [
        "record type 'event_msg/brand_new': 1 line(s)",
        f"{path.name}: 1 line(s) no reader knows",
    ], found
