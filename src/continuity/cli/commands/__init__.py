"""CLI command groups beyond the core ones in ``continuity.cli.app``: one module per concern, each
with ``register(app)`` adding its commands to the Typer app.

The modules are loaded lazily (issue 17): the root group is a ``LazyGroup`` that knows every
command's name and module from ``COMMANDS`` and imports a module only when one of its commands
is asked for (running it, its ``--help``, or the root ``--help``, which lists them all). A
``continuity sessions`` therefore imports none of them. ``tests/cli/test_lazy_commands.py``
checks that ``COMMANDS`` names exactly what the modules register, in the same order.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import typer
from typer.core import TyperGroup

#: Modules under ``continuity.cli.commands`` that add commands (each defines ``register(app)``).
MODULES = [
    "archive",
    "checkpoints",
    "compaction",
    "memory",
    "lineage",
    "daemon",
    "doctor",
    "resume",
    "browse",
    "models",
    "usage",
    "harnesses",
    "team",
]

#: Every command the modules add, in the order ``register_all`` adds them, with its module.
COMMANDS = {
    "watch": "archive",
    "checkpoint": "checkpoints",
    "checkpoints": "checkpoints",
    "prune": "checkpoints",
    "recover": "checkpoints",
    "brief": "checkpoints",
    "compact": "compaction",
    "receipts": "compaction",
    "transcript": "memory",
    "remember": "memory",
    "recall": "memory",
    "consolidate": "lineage",
    "lineage": "lineage",
    "serve": "daemon",
    "hook": "daemon",
    "mcp": "daemon",
    "doctor": "doctor",
    "resume": "resume",
    "search": "browse",
    "export": "browse",
    "usage": "usage",
    "harnesses": "harnesses",
    "sync": "team",
    "forget": "team",
}
#: Every command group (``add_typer``) the modules add, in order, with its module. Typer lists a
#: group's commands before its groups, so ``--help`` shows these after the app's own groups.
GROUPS = {"memory": "lineage", "hooks": "daemon", "models": "models", "team": "team"}


def register_all(app: typer.Typer) -> None:
    """Add every command module's commands to ``app`` (a missing module is skipped). Eager:
    the CLI itself loads them lazily (``LazyGroup``)."""
    for name in MODULES:
        try:
            module = importlib.import_module(f"continuity.cli.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"continuity.cli.commands.{name}":
                raise
            continue
        module.register(app)


def load_module(name: str, *, rich_markup_mode: Any = None) -> dict[str, Any]:
    """The Click commands and groups of command module ``name`` by command name, converted by
    Typer as the app's own (``rich_markup_mode`` as the app's); ``{}`` for a missing module."""
    try:
        module = importlib.import_module(f"continuity.cli.commands.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"continuity.cli.commands.{name}":
            raise
        return {}
    scratch = typer.Typer(rich_markup_mode=rich_markup_mode)
    module.register(scratch)
    return dict(typer.main.get_group(scratch).commands)


class _LazyCommands(MutableMapping):
    """A group's commands by name: the eager ones as given, the ``COMMANDS``/``GROUPS`` ones
    loaded with their module on first access (``prepare`` then runs on each loaded command).
    Iterating the names loads nothing; reading a value loads its module."""

    def __init__(self, eager: dict[str, Any], group: LazyGroup) -> None:
        self._loaded = dict(eager)
        self._group = group
        own = {
            info.name: info
            for info in (group.own.registered_commands if group.own else [])
            if info.name and info.name not in eager
        }
        commands = [n for n, c in eager.items() if not hasattr(c, "commands")]
        groups = [n for n in eager if n not in commands]
        self._order = [
            *commands,
            *own,
            *(n for n in COMMANDS if n not in eager),
            *groups,
            *(n for n in GROUPS if n not in eager),
        ]
        #: name -> where it comes from: a ``CommandInfo`` of ``group.own``, or a module name
        self._pending: dict[str, Any] = {
            **{n: m for n, m in {**COMMANDS, **GROUPS}.items() if n not in eager},
            **own,
        }

    def _load(self, name: str) -> None:
        source = self._pending.get(name)
        if source is None:
            return
        mode = self._group.rich_markup_mode
        if isinstance(source, str):
            found = load_module(source, rich_markup_mode=mode)
        else:  # one of the group's own commands: converted alone
            scratch = typer.Typer(rich_markup_mode=mode)
            scratch.registered_commands.append(source)
            found = dict(typer.main.get_group(scratch).commands)
        for cmd_name, cmd in found.items():
            if self._pending.get(cmd_name) is source:
                del self._pending[cmd_name]
                if self._group.prepare is not None:
                    self._group.prepare(cmd)
                self._loaded[cmd_name] = cmd
        for cmd_name in [n for n, m in self._pending.items() if m is source]:
            del self._pending[cmd_name]  # named in COMMANDS but not registered: absent
            self._order.remove(cmd_name)

    def __getitem__(self, name: str) -> Any:
        if name not in self._loaded:
            self._load(name)
        return self._loaded[name]

    def __setitem__(self, name: str, cmd: Any) -> None:
        self._pending.pop(name, None)
        if name not in self._order:
            self._order.append(name)
        self._loaded[name] = cmd

    def __delitem__(self, name: str) -> None:
        self._pending.pop(name, None)
        self._order.remove(name)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._order

    def loaded(self) -> dict[str, Any]:
        """The commands loaded so far, by name (loads nothing)."""
        return dict(self._loaded)


class LazyGroup(TyperGroup):
    """The root ``continuity`` group: the commands of ``own`` (a Typer, each command converted
    by Typer when first asked for) and of its Typer app (converted at once), then the command
    modules' (``COMMANDS``, ``GROUPS``), each module imported when one of its commands is
    first asked for. ``list_commands`` answers from the names alone; ``prepare``, when set, is
    applied to each command as it loads (``continuity.cli.app.command``: ``--version`` and
    placeholders)."""

    own: typer.Typer | None = None
    prepare: Callable[[Any], None] | None = None

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._lazy = _LazyCommands(dict(self.commands), self)
        self.commands = self._lazy

    def loaded_commands(self) -> dict[str, Any]:
        """The commands loaded so far, by name (loads nothing)."""
        return self._lazy.loaded()

    def list_commands(self, ctx: Any) -> list[str]:
        """Every command name in ``--help`` order, loading none of them."""
        return list(self.commands)
