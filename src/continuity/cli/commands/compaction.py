"""`continuity compact` and `continuity receipts`: the continuation checkpoint from the CLI.

``compact`` runs the policy of ``continuity.continuation.compaction`` as if a turn of SESSION had just
settled, as session owner ``cli``; ``receipts`` lists the refusal receipts of a session.
"""

from __future__ import annotations

from pathlib import Path

import typer

from continuity.cli.commands.common import (
    BudgetOption,
    HomeOption,
    JsonOption,
    SessionArgument,
    count_option,
    emit_json,
    open_cli_store,
    open_workspace,
    out,
    resolve_session,
)
from continuity.continuation.summarize.settings import Provider

#: Exit status when the checkpoint was refused (as `continue` does for a refused view).
REFUSED_EXIT = 5


def register(app: typer.Typer) -> None:
    """Add ``compact`` and ``receipts`` to ``app``."""
    app.command("compact")(compact_cmd)
    app.command("receipts")(receipts_cmd)


def compact_cmd(
    session: str = SessionArgument,
    summarizer: Provider | None = typer.Option(
        None,
        "--summarizer",
        help="Summary provider (default: summarizer.provider in config.toml, else extractive).",
        case_sensitive=False,
        show_default=False,
    ),
    budget: int = BudgetOption,
    force: bool = typer.Option(
        False,
        "--force",
        help="Compact even when the view is within the budget or this turn was already compacted.",
    ),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """Make a continuation checkpoint of SESSION as if its turn had just settled: summarize
    the working view when it is over the budget, and print the checkpoint, or the refusal
    receipt with its reason, or why none was needed."""
    with open_workspace(home) as ws:
        outcome = ws.compact(
            session,
            budget_bytes=budget,
            force=force,
            summarizer=summarizer.value if summarizer else None,
        )
    if as_json:
        emit_json(outcome.to_dict())
        if outcome.receipt is not None:  # the same exit status with or without --json
            raise typer.Exit(REFUSED_EXIT)
        return
    if outcome.checkpoint is not None:
        cp = outcome.checkpoint
        out.print(
            f"compacted {outcome.session}: checkpoint {cp.entry_id} covers seq "
            f"0–{cp.covers_through_seq} (view {outcome.view_bytes} → "
            f"{outcome.view_bytes_after} bytes, budget {outcome.budget_bytes})",
            markup=False,
        )
        from continuity.cli.render import shown

        out.print(shown(cp.summary), markup=False)  # issue 45 item 6
    elif outcome.receipt is not None:
        why = f": {outcome.receipt.detail}" if outcome.receipt.detail else ""
        out.print(
            f"refused {outcome.session}: {outcome.reason}{why} (run {outcome.run_id}, "
            f"receipt #{outcome.receipt.receipt_id}); no checkpoint was written",
            markup=False,
        )
        raise typer.Exit(REFUSED_EXIT)
    else:
        out.print(
            f"not needed for {outcome.session}: {outcome.reason} (view "
            f"{outcome.view_bytes} bytes, budget {outcome.budget_bytes})",
            markup=False,
        )


def receipts_cmd(
    session: str = SessionArgument,
    limit: int = count_option(50, "receipts, newest first"),
    home: Path | None = HomeOption,
    as_json: bool = JsonOption,
) -> None:
    """List the refusal receipts of SESSION: checkpoints that were not made, with the run id,
    the closed reason (cancelled, truncated, empty, over_bound, provider_failure) and what
    failed (the HTTP status, the check)."""
    from continuity.continuation.compaction import receipt_dict

    with open_cli_store(home, read_only=True) as store:  # issue 45 item 8: only reads
        key = resolve_session(store, session)
        rows = store.receipts(key, limit=limit or None)  # 0: all
    if as_json:
        emit_json([receipt_dict(r) for r in rows])
        return
    if not rows:
        out.print(f"no refusal receipts for {key}", markup=False)
    for r in rows:
        d = receipt_dict(r)
        why = f"  ({d['detail']})" if d["detail"] else ""
        out.print(
            f"#{d['receipt_id']}  {d['created_at']}  {d['reason']:<16}  run {d['run_id']}{why}",
            markup=False,
        )
