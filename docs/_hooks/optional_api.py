"""MkDocs hook: a ``::: MODULE`` line of the API reference for a module that is not in this
checkout yet becomes a note instead of a build error.

Issue 46 item 1 adds the public API package ``continuity.api`` (``Workspace``) on another
branch; ``docs/api.md`` already names it. Until that package exists, mkdocstrings could not
collect it and ``mkdocs build --strict`` would fail; once it exists, the line is left as it is
and rendered from its docstrings. Only the modules in ``OPTIONAL`` get this treatment: a typo in
any other ``:::`` line still fails the build.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

#: Modules that may be absent, by dotted name.
OPTIONAL = ("continuity.api",)
#: Where the package's sources are (mkdocs.yml ``paths: [src]``), from the config file's folder.
SOURCES = "src"

_DIRECTIVE = re.compile(r"^::: (?P<name>[\w.]+)\s*$", re.MULTILINE)


def _present(name: str, root: Path) -> bool:
    """Whether module ``name`` exists under ``root`` as a package or a module file."""
    base = root.joinpath(*name.split("."))
    return (base / "__init__.py").is_file() or base.with_suffix(".py").is_file()


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the ``::: NAME`` line of each absent optional module with an admonition."""
    root = Path(config["config_file_path"]).parent / SOURCES

    def note(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in OPTIONAL or _present(name, root):
            return match[0]
        return (
            f'!!! note "`{name}` is not in this build"\n'
            f"    This checkout has no `{name}` yet (issue 46 item 1); its reference "
            "appears here, from its docstrings, once it does.\n"
        )

    return _DIRECTIVE.sub(note, markdown)
