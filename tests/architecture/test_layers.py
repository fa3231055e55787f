"""The import rule of docs/architecture.md (issue 11): a package of ``continuity`` imports only
from packages in layers below its own, and no two modules import each other.

Read from the source with ``ast`` (nothing is imported), so a violation names the file and line.
Imports under ``if TYPE_CHECKING:`` count too: a type is a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "continuity"

#: Layers, lowest first (docs/architecture.md). A package may import its own layer's modules
#: only when it is the same package.
LAYERS: list[tuple[str, ...]] = [
    ("core",),
    ("store",),
    ("formats", "usage"),
    ("redaction",),
    ("checkpoints", "transcripts"),
    ("continuation", "archive", "retrieval"),
    ("lineage", "resume", "brief"),
    ("browse",),
    ("team",),
    ("api",),
    ("adapters", "daemon"),
    ("cli",),
]
RANK = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}
#: Modules directly under continuity/ that are not packages: the old hook path (a forwarder).
TOP_LEVEL = {"__init__", "hookcmd"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every ``continuity`` import in ``path``; ``from continuity.x
    import y`` counts as ``continuity.x.y`` when ``continuity/x/y`` is a module."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [
                (node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "continuity"
            ]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.split(".")[0] == "continuity"
        ):
            for alias in node.names:
                sub = SRC.parent.joinpath(*node.module.split("."), alias.name)
                full = f"{node.module}.{alias.name}"
                out.append(
                    (
                        node.lineno,
                        full
                        if sub.with_suffix(".py").exists() or (sub / "__init__.py").exists()
                        else node.module,
                    )
                )
    return out


def _lazy_reexports(path: Path) -> set[str]:
    """For a package ``__init__``: its own modules that the ``if TYPE_CHECKING:`` block imports
    to show a type checker the lazily exported names (``_EXPORTS``, issue 46). At run time the
    package loads them on first use only, as ``__getattr__`` always did: no import cycle."""
    if path.name != "__init__.py":
        return set()
    package = _module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    blocks = [
        n
        for n in tree.body
        if isinstance(n, ast.If) and getattr(n.test, "id", None) == "TYPE_CHECKING"
    ]
    return {
        n.module
        for b in blocks
        for n in b.body
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith(package + ".")
    }


def _sources() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "migrations" not in p.parts)


def test_every_module_lives_in_a_known_package() -> None:
    """Each module sits in one of the layered packages (a new top-level module is a decision
    for docs/architecture.md first)."""
    stray = [
        str(p.relative_to(SRC))
        for p in _sources()
        if (len(p.relative_to(SRC).parts) == 1 and p.stem not in TOP_LEVEL)
        or (len(p.relative_to(SRC).parts) > 1 and p.relative_to(SRC).parts[0] not in RANK)
    ]
    assert stray == []


def test_no_package_imports_from_a_layer_above_or_beside_it() -> None:
    violations = []
    for path in _sources():
        rel = path.relative_to(SRC).parts
        if len(rel) == 1:
            continue
        own = rel[0]
        for line, target in _imports(path):
            parts = target.split(".")
            if len(parts) < 2:
                continue  # ``import continuity``: the root holds nothing
            other = parts[1]
            if other == own or other not in RANK:
                continue
            if RANK[other] >= RANK[own]:
                violations.append(f"{path.relative_to(SRC.parent)}:{line}: {own} imports {target}")
    assert violations == []


def test_no_two_modules_import_each_other() -> None:
    graph: dict[str, set[str]] = {}
    for path in _sources():
        graph[_module_name(path)] = {t for _, t in _imports(path)} - _lazy_reexports(path)
    pairs = sorted(
        {
            tuple(sorted((a, b)))
            for a, targets in graph.items()
            for b in targets
            if b != a and a in graph.get(b, set())
        }
    )
    assert pairs == []


@pytest.mark.parametrize("package", sorted(RANK))
def test_each_package_says_what_it_owns_and_may_import(package: str) -> None:
    """Each package's ``__init__`` docstring names what it owns and the packages it may import
    (the words "May import")."""
    doc = ast.get_docstring(ast.parse((SRC / package / "__init__.py").read_text()))
    assert doc and "May import" in doc, package
