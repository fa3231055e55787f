"""config.toml sections (issue 16: "Writes that replace what they should not"): a misspelled
section or env override is an error naming the closest known section and the file, at load."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from continuity.core.config import load_section
from continuity.core.errors import ConfigError

SRC = Path(__file__).resolve().parents[2] / "src" / "continuity"


class _Retention(BaseModel):
    retention_days: int = 30


def test_misspelled_section_is_an_error_naming_the_closest(isolated_home):
    """``[continuty]`` (the retention the user meant to raise) is refused at load, naming the
    file and ``[continuity]``; ``[memory-md]`` names ``[memory_md]``."""
    isolated_home.mkdir(parents=True)
    config = isolated_home / "config.toml"
    config.write_text("[continuty]\nretention_days = 365\n")
    with pytest.raises(ConfigError) as exc:
        load_section("continuity", _Retention)
    assert str(exc.value) == f"{config}: unknown section [continuty]; did you mean [continuity]?"
    config.write_text("[memory-md]\nmax_bytes = 1\n")
    with pytest.raises(ConfigError) as exc:
        load_section("continuity", _Retention)
    assert str(exc.value) == f"{config}: unknown section [memory-md]; did you mean [memory_md]?"
    config.write_text("[zzz]\n")
    with pytest.raises(
        ConfigError,
        match=r"unknown section \[zzz\]; known sections: "
        r"\[archive\], \[continuity\], \[daemon\], "
        r"\[memory_md\], \[retrieval\], \[summarizer\], \[team\], \[transcripts\]$",
    ):
        load_section("continuity", _Retention)


def test_misspelled_env_override_is_an_error(isolated_home, monkeypatch):
    """``CONTINUITY_CONTINUTY__RETENTION_DAYS`` is refused, naming the variable meant."""
    monkeypatch.setenv("CONTINUITY_CONTINUTY__RETENTION_DAYS", "365")
    with pytest.raises(ConfigError) as exc:
        load_section("continuity", _Retention)
    assert str(exc.value) == (
        "$CONTINUITY_CONTINUTY__RETENTION_DAYS: unknown section "
        "'continuty'; did you mean $CONTINUITY_CONTINUITY__RETENTION_DAYS?"
    )
    monkeypatch.delenv("CONTINUITY_CONTINUTY__RETENTION_DAYS")
    monkeypatch.setenv("CONTINUITY_CONTINUITY__RETENTION_DAYS", "365")
    assert load_section("continuity", _Retention).retention_days == 365


def test_env_override_naming_no_setting_is_an_error(isolated_home, monkeypatch):
    """Review: ``CONTINUITY_CONTINUITY__RETENTION_DAY`` (a known section, no such setting) was
    ignored without a word, so the default retention applied. It is refused, naming the
    variable meant; with nothing close, the known ones."""
    from continuity.checkpoints.capture import CheckpointConfig

    monkeypatch.setenv("CONTINUITY_CONTINUITY__RETENTION_DAY", "365")
    with pytest.raises(ConfigError) as exc:
        load_section("continuity", _Retention)
    assert str(exc.value) == (
        "$CONTINUITY_CONTINUITY__RETENTION_DAY: 'retention_day' is not a "
        "setting of [continuity]; did you mean "
        "$CONTINUITY_CONTINUITY__RETENTION_DAYS?"
    )
    monkeypatch.delenv("CONTINUITY_CONTINUITY__RETENTION_DAY")
    monkeypatch.setenv("CONTINUITY_CONTINUITY__BOGUS", "1")
    with pytest.raises(ConfigError) as exc:
        load_section("continuity", _Retention)
    assert str(exc.value) == (
        "$CONTINUITY_CONTINUITY__BOGUS: 'bogus' is not a setting of "
        "[continuity]; known: $CONTINUITY_CONTINUITY__RETENTION_DAYS"
    )
    monkeypatch.delenv("CONTINUITY_CONTINUITY__BOGUS")
    monkeypatch.setenv("CONTINUITY_CONTINUITY__PROMPTINTERVAL", "4")  # the alias, upper case
    assert load_section("continuity", CheckpointConfig).prompt_interval == 4


def test_unknown_setting_in_the_file_names_the_closest(isolated_home):
    """An unknown key of a known section names the setting meant, spelled as the key was
    (camelCase or snake_case); with nothing close, every setting with its alias."""
    from continuity.checkpoints.capture import CheckpointConfig

    isolated_home.mkdir(parents=True)
    config = isolated_home / "config.toml"
    for key, hint in [
        ("promptIntervall", "did you mean promptInterval?"),
        ("prompt_intervall", "did you mean prompt_interval?"),
    ]:
        config.write_text(f"[continuity]\n{key} = 3\n")
        with pytest.raises(ConfigError) as exc:
            load_section("continuity", CheckpointConfig)
        assert str(exc.value) == (
            f"{config} [continuity] {key}: is not a known field (got 3); {hint}"
        )
    config.write_text("[continuity]\nfoo = 3\n")
    with pytest.raises(ConfigError) as exc:
        load_section("continuity", CheckpointConfig)
    assert str(exc.value).endswith(
        "foo: is not a known field (got 3); known settings: "
        "enabled, prompt_interval (promptInterval), "
        "time_interval_ms (timeIntervalMs), max_checkpoints_per_"
        "session (maxCheckpointsPerSession), retention_days "
        "(retentionDays), recovery_budget_chars "
        "(recoveryBudgetChars), recovery_window_days "
        "(recoveryWindowDays), recovery_window_hours "
        "(recoveryWindowHours), follow_up_budget_bytes "
        "(followUpBudgetBytes)"
    )


def test_known_sections_load(isolated_home):
    """Every known section is accepted; its values are read."""
    from continuity.core.config import KNOWN_SECTIONS

    isolated_home.mkdir(parents=True)
    (isolated_home / "config.toml").write_text(
        "".join(f"[{name}]\n" for name in KNOWN_SECTIONS if name != "continuity")
        + "[continuity]\nretention_days = 7\n"
    )
    assert load_section("continuity", _Retention).retention_days == 7


def test_every_load_section_call_names_a_known_section():
    """KNOWN_SECTIONS lists every section a feature reads (so none is refused as unknown)."""
    from continuity.core.config import KNOWN_SECTIONS

    used = set()
    for path in SRC.rglob("*.py"):
        used.update(re.findall(r'load_section\(\s*"([a-z_]+)"', path.read_text()))
    assert used and used <= set(KNOWN_SECTIONS), used - set(KNOWN_SECTIONS)


@pytest.mark.parametrize(
    "section", ["archive", "continuity", "daemon", "memory_md", "summarizer", "transcripts"]
)
def test_every_section_refuses_a_key_it_does_not_have(isolated_home, section):
    """Review: ``[archive] enable = false`` (for ``enabled``) was ignored, so ``watch`` kept
    archiving; every other section refused an unknown key. Each section's loader refuses
    one, naming the file, the section and the key."""
    from continuity.cli.commands.doctor import _section_loaders

    isolated_home.mkdir(parents=True)
    config = isolated_home / "config.toml"
    config.write_text(f"[{section}]\nzz_not_a_setting = 1\n")
    with pytest.raises(ConfigError) as exc:
        _section_loaders()[section](isolated_home)
    assert str(exc.value).startswith(
        f"{config} [{section}] zz_not_a_setting: is not a known field (got 1)"
    )
