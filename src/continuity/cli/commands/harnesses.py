"""``continuity harnesses``: the harness registry (issue 42 item 1, ``formats.registry``):
each harness, what continuity does for it, the CLI version the e2e suite verified and where
its sessions are. ``--json`` prints the list of ``Harness.to_dict()``."""

from __future__ import annotations

import typer

from continuity.cli.commands.common import JsonOption, emit_json, out


def harnesses_cmd(as_json: bool = JsonOption) -> None:
    """List every harness continuity knows: what it does for each (import, live capture,
    recovery at start, resume into it, MCP install), the CLI version the end-to-end suite
    verified, where the harness keeps its sessions, and whether `continuity usage` counts the
    tokens its files record."""
    from continuity.formats.registry import FLAGS, harnesses

    rows = harnesses()
    if as_json:
        emit_json([h.to_dict() for h in rows])
        return
    for h in rows:
        done = ", ".join(f for f in FLAGS if h.supports.get(f)) or "none yet"
        verified = h.verified_version or "not run by the e2e suite"
        out.print(f"{h.name} ({h.title}): {done}; verified: {verified}", markup=False)
        for loc in h.locations:
            out.print(f"  sessions: {loc.describe()}", markup=False)
        if h.usage_note:
            counted = "counted" if h.usage else "none"
            out.print(f"  usage: {counted} ({h.usage_note})", markup=False)
        if h.note:
            out.print(f"  note: {h.note}", markup=False)
    from continuity.cli.fast import FRAMEWORKS

    # a fresh-user review: `sessions --harness` takes these two, which this list did not name
    out.print(
        f"{' and '.join(FRAMEWORKS)}: Python agent frameworks, not CLIs; their sessions are "
        "recorded by continuity's adapters (continuity.adapters) and listed with "
        "`continuity sessions --harness NAME`",
        markup=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``harnesses`` to ``app``."""
    app.command("harnesses")(harnesses_cmd)
