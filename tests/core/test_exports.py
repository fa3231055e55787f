"""``core.exports.lazy_exports`` under threads (issue 45 item 10, found by ``bench/load.py``):
50 sessions starting at once sent their ``session-start`` hooks together, each thread of the
daemon's pool reached ``from continuity.brief import build_brief`` first, and all but one got
``ImportError: cannot import name 'build_brief'`` (HTTP 500): the module was in
``sys.modules`` while another thread was still running its body, and the lazy export read the
name off the half-initialised module. A name must be given once its module has finished."""

from __future__ import annotations

import sys
import threading
import types
from pathlib import Path

PACKAGE = "lazy_exports_race_pkg"


def test_a_name_asked_while_another_thread_imports_its_module_waits_for_it(
    tmp_path: Path, monkeypatch
):
    gate = types.SimpleNamespace(started=threading.Event(), release=threading.Event())
    monkeypatch.setitem(sys.modules, "lazy_exports_race_gate", gate)
    pkg = tmp_path / PACKAGE
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from continuity.core.exports import lazy_exports\n"
        "__getattr__, __dir__ = lazy_exports(__name__, {'VALUE': 'slow'})\n"
    )
    (pkg / "slow.py").write_text(
        "import sys\n"
        "gate = sys.modules['lazy_exports_race_gate']\n"
        "gate.started.set()\n"
        "gate.release.wait(10)\n"
        "VALUE = 42\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    results: dict[str, object] = {}

    def first() -> None:
        from lazy_exports_race_pkg import VALUE  # type: ignore[import-not-found]

        results["first"] = VALUE

    def second() -> None:
        try:
            from lazy_exports_race_pkg import VALUE  # type: ignore[import-not-found]

            results["second"] = VALUE
        except ImportError as exc:
            results["second"] = exc

    try:
        a = threading.Thread(target=first)
        a.start()
        assert gate.started.wait(10)  # the first thread is inside slow.py's body
        b = threading.Thread(target=second)
        b.start()
        b.join(0.5)  # the second asks meanwhile: it must wait, not fail
        gate.release.set()
        a.join(10)
        b.join(10)
        assert results == {"first": 42, "second": 42}
    finally:
        gate.release.set()
        for name in [m for m in sys.modules if m.startswith(PACKAGE)]:
            monkeypatch.delitem(sys.modules, name)


def test_every_lazy_package_names_its_exports_for_the_type_checker() -> None:
    """Issue 46 item 3: pyright cannot follow ``__getattr__``, so each lazy package also imports
    its names under ``TYPE_CHECKING``; the two lists must be the same names from the same
    modules, or the type checker sees a name that the package does not give (or misses one)."""
    import ast

    root = Path(__file__).resolve().parents[2] / "src" / "continuity"
    checked = 0
    for init in sorted(root.glob("*/__init__.py")):
        tree = ast.parse(init.read_text())
        exports = next(
            (
                ast.literal_eval(n.value)
                for n in tree.body
                if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "_EXPORTS"
            ),
            None,
        )
        if exports is None:
            continue
        package = f"continuity.{init.parent.name}"
        block = next(
            n
            for n in tree.body
            if isinstance(n, ast.If) and getattr(n.test, "id", None) == "TYPE_CHECKING"
        )
        seen = {
            a.name: s.module.removeprefix(f"{package}.")
            for s in block.body
            if isinstance(s, ast.ImportFrom) and s.module
            for a in s.names
        }
        assert seen == exports, package
        checked += 1
    assert checked >= 13
