"""The sample sessions the tests read travel with the checkout (issue 20: the README's test
command passes on a fresh clone with no folder beside it). ``tests/fixtures/samples`` is a
byte-for-byte copy of the published set ``../shared/data``; where that folder is present, the copy
must equal it file for file, so a new recording there is noticed rather than silently missed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.paths import PUBLISHED_DATA, SHARED_DATA


def _digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_the_copy_holds_every_harness_and_its_provenance():
    names = {p.name for p in SHARED_DATA.iterdir()}
    assert {"claude-code", "codex", "pi", "real-harness", "README.md"} <= names
    assert "MIT-licensed" in (SHARED_DATA / "README.md").read_text(encoding="utf-8")


@pytest.mark.skipif(not PUBLISHED_DATA.is_dir(), reason="no ../shared/data beside this checkout")
def test_the_copy_equals_the_published_samples():
    assert _digests(SHARED_DATA) == _digests(PUBLISHED_DATA)
