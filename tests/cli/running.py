"""Run the command line in-process, as the console script runs it (one helper for the CLI
tests that check exit codes and both streams)."""

from __future__ import annotations

import sys

from continuity.cli import app as cli


def run_main(monkeypatch, capsys, *args: object) -> tuple[int, str, str]:
    """``continuity.cli.app.main`` with ``args`` (``str``'d): ``(exit code, stdout, stderr)``.
    ``CONTINUITY_RAISE_ERRORS`` is unset, so errors print as a user sees them; an exit with
    no code is 0, one with a message is 1."""
    monkeypatch.setattr(sys, "argv", ["continuity", *map(str, args)])
    monkeypatch.delenv("CONTINUITY_RAISE_ERRORS", raising=False)
    code = 0
    try:
        cli.main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    cap = capsys.readouterr()
    return code, cap.out, cap.err
