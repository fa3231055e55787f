"""CLI command groups beyond the core ones in ``continuity.cli.app``: one module per concern, each
with ``register(app)`` adding its commands to the Typer app."""

from __future__ import annotations

import importlib

import typer

#: Modules under ``continuity.cli.commands`` that add commands (each defines ``register(app)``).
MODULES = ["archive", "checkpoints", "compaction", "memory", "lineage", "daemon", "doctor", "resume",
           "browse"]


def register_all(app: typer.Typer) -> None:
    """Add every command module's commands to ``app`` (a missing module is skipped)."""
    for name in MODULES:
        try:
            module = importlib.import_module(f"continuity.cli.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"continuity.cli.commands.{name}":
                raise
            continue
        module.register(app)
