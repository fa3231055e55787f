"""What the command line writes without Rich (issue 43 goal 3: the read commands start without
importing it): JSON on stdout (``emit_json``), the streams' error policy
(``tolerant_streams``), a Rich ``Text`` line as a console that is not a terminal prints it
(``plain_line``), and whether stdout is such a console (``plain_stdout``).

The Rich consoles (``cli.commands.common.out``/``err``) print the same bytes when stdout is
not a terminal; ``tests/cli/test_fast_path.py`` compares both on the sample sessions.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any

#: Variables that make Rich treat a pipe as a terminal, or change what it writes there
#: (Rich 14/15: ``FORCE_COLOR``, ``TTY_COMPATIBLE``, ``TTY_INTERACTIVE``; Jupyter's own).
_RICH_TERMINAL_VARS = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JPY_PARENT_PID")


def tolerant_streams() -> None:
    """B45: a terminal whose encoding is not UTF-8 (cp1252, say) gets ``?`` for a character it
    cannot show, never a ``UnicodeEncodeError`` traceback; JSON goes out as UTF-8 bytes
    whatever the locale (``emit_json``)."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        reconfigure = getattr(stream, "reconfigure", None)
        if encoding != "utf8" and reconfigure is not None:
            reconfigure(errors="replace")


def emit_json(value: Any) -> None:
    """Print ``value`` as indented JSON on stdout, as UTF-8 bytes whatever the locale's
    encoding (JSON is UTF-8, RFC 8259; B45: a cp1252 console never fails on an emoji); DEL,
    C1 and bidi controls as ``\\uXXXX`` escapes (``core.text.json_terminal_safe``)."""
    import orjson

    from continuity.core.text import json_bytes, json_terminal_safe

    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except (TypeError, orjson.JSONEncodeError):  # >64-bit integers, lone surrogates
        import json

        text = json.dumps(orjson.loads(json_bytes(value)), indent=2, ensure_ascii=False)
    text = json_terminal_safe(text)  # issue 45 item 6: no C1 or bidi control raw on stdout
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a text-only stream (a test's capture): it takes str
        sys.stdout.write(text + "\n")
        return
    sys.stdout.flush()
    buffer.write((text + "\n").encode("utf-8"))
    buffer.flush()


def plain_stdout() -> bool:
    """True when the Rich console of stdout would write no styles and wrap nothing: stdout is
    not a terminal and no variable tells Rich to treat it as one."""
    if any(os.environ.get(name) for name in _RICH_TERMINAL_VARS):
        return False
    try:
        return not sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _cells(text: str) -> int:
    """Terminal cells of ``text`` as Rich counts them (``rich.cells.cell_len``, loaded only
    for text beyond ASCII: printable ASCII is one cell a character, and the controls were
    escaped before)."""
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def plain_line(text: str, *, tab_size: int = 8) -> str:
    """``text`` (a Rich ``Text``'s plain characters, controls already escaped) as Rich prints
    it to a console that is not a terminal with ``soft_wrap``: each tab widened to the next
    multiple of ``tab_size`` cells (``rich.text.Text.expand_tabs``, cells by ``_cells``), then a newline."""
    if "\t" not in text:
        return text + "\n"
    lines = []
    for line in text.split("\n"):
        out, cells = [], 0
        for part in line.split("\t")[:-1]:
            cells += _cells(part) + 1
            rest = cells % tab_size
            pad = tab_size - rest if rest else 0
            cells += pad
            out.append(part + " " * (1 + pad))
        last = line.split("\t")[-1]
        out.append(last)
        lines.append("".join(out))
    return "\n".join(lines) + "\n"


#: The status of a command that ended because the reader of its output went away: what a
#: shell reports for a process SIGPIPE ended (128 + 13), as for ``git log | head``; not 1,
#: which ``search`` and ``recall`` say for "nothing matched" (fresh-user review).
CLOSED_PIPE_STATUS = 141

#: ``show --raw``'s warning, on standard error before the rows (both paths say it)
RAW_WARNING = "warning: --raw: secrets in this session are NOT redacted in the output"


def closed_pipe() -> int:
    """Point standard output at /dev/null (the interpreter's last flush would fail again)
    and return ``CLOSED_PIPE_STATUS``: a reader that closed the pipe (``| head``) ends the
    command quietly (``cli.app.failed``, ``SafeConsole.on_broken_pipe``, Click's exit)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return CLOSED_PIPE_STATUS


__all__ = [
    "CLOSED_PIPE_STATUS",
    "RAW_WARNING",
    "closed_pipe",
    "emit_json",
    "plain_line",
    "plain_stdout",
    "tolerant_streams",
]
