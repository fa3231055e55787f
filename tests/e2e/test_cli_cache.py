"""The suite's guard (issue 12): without npm, or when the install fails, the e2e suite fails
loudly; it never skips."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.e2e import conftest


def test_missing_npm_fails_instead_of_skipping(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty cache and no npm on PATH: pytest.fail naming npm and the pinned versions."""
    monkeypatch.setenv("CONTINUITY_E2E_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(pytest.fail.Exception) as failed:
        conftest.ensure_clis()
    message = str(failed.value)
    assert message.startswith("e2e: npm not found on PATH")
    assert "@openai/codex@0.171.0" in message and "@anthropic-ai/claude-code@2.1.332" in message


def test_failed_install_fails_with_npm_s_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An npm that exits 1: pytest.fail with its exit status and output."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text("#!/bin/sh\necho 'npm error 404 Not Found' >&2\nexit 1\n")
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("CONTINUITY_E2E_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(pytest.fail.Exception) as failed:
        conftest.ensure_clis()
    assert "failed (1)" in str(failed.value) and "npm error 404 Not Found" in str(failed.value)
