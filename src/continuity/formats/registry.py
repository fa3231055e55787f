"""The harness registry (issue 42 item 1): ``harnesses.toml`` beside this module, read once.

Every harness continuity knows is one ``Harness``: its name in its own spelling
(``claude-code``, ``gemini-cli``, ``copilot-cli``, ...), where its sessions are (``Location``:
a folder under an override variable, else a default), what continuity supports for it
(``import``, ``live`` capture, ``recovery`` at start, ``resume`` into it, ``mcp`` install),
the CLI version the e2e suite last verified (``verified_version``, None when no e2e test runs
it), the format versions seen, its fixtures, a note (a vendor login its CLI needs to run), and
whether ``continuity usage`` counts its tokens (``usage``, with ``usage_note`` saying where its
files record them or why they do not; ``tests/formats/test_registry.py`` holds ``usage`` to
``continuity.usage.USAGE_HARNESSES``).
``continuity harnesses`` prints it, ``doctor`` and ``watch`` read their harness lists from it,
the README's table is generated from it (cog), and the tests hold it to the code: a harness
marked ``import`` has a reader whose ``harness`` is its name and a fixture that imports
(``tests/formats/test_registry.py``).

Errors: a registry that does not parse, or a harness without a ``name``, raises
``ValueError`` naming the file (a packaging defect, never user input).
"""

from __future__ import annotations

import functools
import os
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

REGISTRY_FILE = "harnesses.toml"
#: The support flags, in the order the table and ``--json`` show them.
FLAGS = ("import", "live", "recovery", "resume", "mcp")


@dataclass(frozen=True, slots=True)
class Location:
    """Where a harness keeps its sessions: ``path`` under the folder the first set one of
    ``variables`` names (``$CODEX_HOME/sessions``; Qwen Code's ``QWEN_RUNTIME_DIR`` wins over
    its ``QWEN_HOME``, as Qwen Code's ``Storage.getRuntimeBaseDir`` reads them), else
    ``default`` (``~`` is the home folder). ``seen``: observed on a real run (else from the
    harness's docs or source)."""

    default: str
    variables: tuple[str, ...] = ()
    path: str = ""
    seen: bool = False

    @property
    def variable(self) -> str | None:
        """The first (strongest) override variable, None without one."""
        return self.variables[0] if self.variables else None

    def describe(self) -> str:
        """``$CODEX_HOME/sessions or ~/.codex/sessions`` (each variable in order, then the
        default; the default alone without a variable)."""
        under = [f"${v}/{self.path}" if self.path else f"${v}" for v in self.variables]
        return " or ".join([*under, self.default])

    def variable_set(self, env: dict[str, str] | os._Environ[str] | None = None) -> str | None:
        """The override variable in effect: the first of ``variables`` set (non-empty) in
        ``env`` (default ``os.environ``), else None."""
        env = os.environ if env is None else env
        return next((v for v in self.variables if env.get(v)), None)

    def resolve(self, env: dict[str, str] | os._Environ[str] | None = None) -> Path:
        """The folder on this machine: under the folder of ``variable_set(env)`` when one is
        set, else the default with ``~`` expanded (``env`` defaults to ``os.environ``)."""
        env = os.environ if env is None else env
        variable = self.variable_set(env)
        if variable:
            base = Path(env[variable]).expanduser()
            return base / self.path if self.path else base
        default = self.default
        if default.startswith("~"):
            home = env.get("HOME") or str(Path.home())
            default = home + default[1:]
        return Path(default)


@dataclass(frozen=True, slots=True)
class Harness:
    """One harness of the registry (module docstring). ``supports`` maps each of ``FLAGS``
    to whether the code does it."""

    name: str
    title: str
    npm: str = ""
    bin: str = ""
    supports: dict[str, bool] = field(default_factory=dict)
    verified_version: str | None = None
    format_versions: tuple[str, ...] = ()
    fixtures: tuple[str, ...] = ()
    locations: tuple[Location, ...] = ()
    archive_key: str | None = None
    note: str = ""
    usage: bool = False
    usage_note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The ``continuity harnesses --json`` shape (issue 42): ``name``, the five flags as
        booleans, ``verified_version`` (or null), ``locations`` (strings, as ``describe``),
        then ``title``, ``format_versions``, ``fixtures``, ``note``, ``usage`` (a boolean:
        ``continuity usage`` counts its tokens) and ``usage_note`` (or null)."""
        return {
            "name": self.name,
            **{flag: self.supports.get(flag, False) for flag in FLAGS},
            "verified_version": self.verified_version,
            "locations": [loc.describe() for loc in self.locations],
            "title": self.title,
            "format_versions": list(self.format_versions),
            "fixtures": list(self.fixtures),
            "note": self.note or None,
            "usage": self.usage,
            "usage_note": self.usage_note or None,
        }


def _variables(value: Any, where: str) -> tuple[str, ...]:
    """A location's ``variable``: one name, or a list of them, strongest first."""
    if not value:
        return ()
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"{where}: a location's variable must be a name or a list of names")
    return tuple(names)


def _harness(raw: dict[str, Any], where: str) -> Harness:
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}: a [[harness]] without a name")
    locations = tuple(
        Location(
            default=str(loc.get("default", "")),
            variables=_variables(loc.get("variable"), where),
            path=str(loc.get("path", "")),
            seen=bool(loc.get("seen", False)),
        )
        for loc in raw.get("locations") or []
    )
    return Harness(
        name=name,
        title=str(raw.get("title") or name),
        npm=str(raw.get("npm") or ""),
        bin=str(raw.get("bin") or ""),
        supports={flag: bool(raw.get(flag, False)) for flag in FLAGS},
        verified_version=raw.get("verified_version") or None,
        format_versions=tuple(str(v) for v in raw.get("format_versions") or ()),
        fixtures=tuple(str(f) for f in raw.get("fixtures") or ()),
        locations=locations,
        archive_key=raw.get("archive_key") or None,
        note=str(raw.get("note") or ""),
        usage=bool(raw.get("usage", False)),
        usage_note=str(raw.get("usage_note") or ""),
    )


@functools.cache
def harnesses() -> tuple[Harness, ...]:
    """Every harness of the registry, in file order (read once). Raises ``ValueError`` when
    the packaged file does not parse."""
    source = resources.files("continuity.formats").joinpath(REGISTRY_FILE)
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{REGISTRY_FILE}: {exc}") from None
    return tuple(_harness(raw, REGISTRY_FILE) for raw in data.get("harness") or [])


def harness(name: str) -> Harness:
    """The harness named ``name``. Raises ``KeyError`` for an unknown name."""
    for h in harnesses():
        if h.name == name:
            return h
    raise KeyError(name)


def names(flag: str | None = None) -> tuple[str, ...]:
    """The harnesses' names, in registry order; with ``flag`` (one of ``FLAGS``) only those
    that support it. Raises ``ValueError`` for an unknown flag."""
    if flag is not None and flag not in FLAGS:
        raise ValueError(f"flag: {flag!r} is not one of {', '.join(FLAGS)}")
    return tuple(h.name for h in harnesses() if flag is None or h.supports.get(flag))


def archive_locations() -> dict[str, Location]:
    """``[archive]`` key -> the first location of each harness ``watch`` follows (those with
    an ``archive_key`` and ``import``), in registry order."""
    return {
        h.archive_key: h.locations[0]
        for h in harnesses()
        if h.archive_key and h.supports.get("import") and h.locations
    }
