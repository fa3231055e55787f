"""The old path of the hook command, kept for hooks installed before issue 11's layout.

Those installs run ``<python> -I -S -c "...from continuity.hookcmd import main; main()"``; the
command now lives in ``continuity.cli.hookcmd``. ``continuity hooks install`` recognises both
paths as ours and rewrites an old entry to the new one. Nothing else imports this module.
"""

from continuity.cli.hookcmd import console, main

__all__ = ["console", "main"]
