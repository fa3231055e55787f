"""What a tool call is about to do, read from its name and arguments, and what earlier shell
calls did (issue 40, recall before a tool runs: ``at_action.recall_for_tool``).

``edited_files``: the files an edit writes (Claude Code Edit/Write/MultiEdit/NotebookEdit
``file_path``, pi ``path``, Codex ``apply_patch``'s ``*** Add/Update/Delete File:`` headers);
``shell_command``: the command a shell call runs (a string, or an argv list, Codex's ``["bash",
"-lc", script]`` giving the script); ``command_key``: what makes two invocations "the same
command"; ``working_runs``: the shell calls among stored rows whose result is no error and names
exit status 0 or none (the rule of ``continuation.facts``, restated here: ``retrieval`` may not
import ``continuation``, a layer beside it).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from typing import Any

from continuity.core.model import Entry, ToolCallBlock, ToolResultBlock

#: Tool names (case folded) that write a file, and those that run a shell command.
EDIT_TOOLS = frozenset(
    {
        "edit",
        "write",
        "multiedit",
        "notebookedit",
        "apply_patch",
        "str_replace_based_edit_tool",
        "create_file",
        "str_replace",
    }
)
SHELL_TOOLS = frozenset(
    {"bash", "shell", "exec_command", "local_shell", "container.exec", "run_shell_command", "exec"}
)
#: Programs whose first non-option argument names what they do (``git commit``, ``npm test``).
MULTIPLEXERS = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "npx",
        "bun",
        "cargo",
        "go",
        "make",
        "docker",
        "kubectl",
        "uv",
        "poetry",
        "pip",
        "pip3",
        "gh",
        "dotnet",
        "mvn",
        "gradle",
        "bundle",
        "rake",
        "mix",
        "deno",
        "just",
        "tox",
        "nox",
        "continuity",
        "alembic",
        "terraform",
        "helm",
        "brew",
        "apt",
        "apt-get",
    }
)

_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", re.M)
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def edited_files(tool: str, arguments: dict[str, Any]) -> list[str]:
    """The file paths an edit tool call writes (``file_path``, ``path``, ``notebook_path``;
    apply_patch's ``*** Add/Update/Delete File:`` headers in any string argument)."""
    if tool.lower() not in EDIT_TOOLS:
        return []
    found: list[str] = []
    for name in ("file_path", "path", "notebook_path", "filePath"):
        value = arguments.get(name)
        if isinstance(value, str) and value.strip():
            found.append(value.strip())
    for value in arguments.values():
        if isinstance(value, str) and "*** " in value:
            found.extend(_PATCH_FILE.findall(value))
    return list(dict.fromkeys(found))


def shell_command(tool: str, arguments: dict[str, Any]) -> str | None:
    """The command a shell tool call runs (``command`` or ``cmd``, a string or an argv list;
    Codex's ``["bash", "-lc", "…"]`` gives the script), else None."""
    if tool.lower() not in SHELL_TOOLS:
        return None
    value = arguments.get("command", arguments.get("cmd"))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if (
            len(value) >= 3
            and value[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
            and value[1] in ("-c", "-lc")
        ):
            return value[2]
        return shlex.join(value)
    return value if isinstance(value, str) and value.strip() else None


def _steps(command: str) -> list[list[str]]:
    """The words of each step of ``command`` (split at ``&&``, ``||``, ``;``, ``|`` and line
    breaks outside quotes; ``cd`` steps left out), as ``continuation.facts.steps`` splits."""
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    out: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token and set(token) <= set(";&|"):
                out.append([])
            else:
                out[-1].append(token)
    except ValueError:  # an unclosed quote: words as they are
        out = [command.split()]
    return [w for w in out if w and w[0] != "cd"]


def command_key(command: str) -> str | None:
    """What makes two invocations "the same command": the first step's program (its file
    name; env assignments, ``sudo``, ``env``, ``time`` and ``cd …`` steps skipped;
    ``python -m X`` is ``X``) and, for a ``MULTIPLEXERS`` program, its first non-option
    argument (``git commit``, ``npm run``); None for no command."""
    for words in _steps(command):
        while words and (_ENV.match(words[0]) or words[0] in ("sudo", "env", "time", "exec")):
            words = words[1:]
        if not words:
            continue
        program = words[0].rsplit("/", 1)[-1]
        rest = words[1:]
        if re.fullmatch(r"python[0-9.]*", program) and len(rest) >= 2 and rest[0] == "-m":
            program, rest = rest[1], rest[2:]
        if program in MULTIPLEXERS:
            sub = next((w for w in rest if not w.startswith("-")), None)
            return f"{program} {sub}" if sub else program
        return program
    return None


#: Exit status lines harnesses write into a command's output: the rule of
#: ``continuation.facts.exit_code`` (retrieval may not import ``continuation``, a layer beside it).
_EXIT = re.compile(
    r"^(?:Process exited with code|Command exited with code|Exit code:?)\s*(-?\d+)"
    r"\s*$|^\[exit (-?\d+)\]$",
    re.M,
)
_EXIT_JSON = re.compile(r'"exit_code"\s*:\s*(-?\d+)')


def exit_code(text: str) -> int | None:
    """The exit status a harness wrote into a command's output (the last one), else None."""
    found = [int(a or b) for a, b in _EXIT.findall(text)]
    if not found:
        found = [int(n) for n in _EXIT_JSON.findall(text[:4_000])]
    return found[-1] if found else None


def working_runs(rows: Sequence[Entry]) -> list[tuple[int, str]]:
    """``(seq, command)`` of each shell call among ``rows`` whose result, also among them, is
    no error and names exit status 0 or none (``continuation.facts``: ``ok``)."""
    results: dict[str, ToolResultBlock] = {}
    for entry in rows:
        for block in entry.blocks:
            if isinstance(block, ToolResultBlock):
                results[block.call_id] = block
    out = []
    for entry in rows:
        for block in entry.blocks:
            if not isinstance(block, ToolCallBlock) or not isinstance(block.arguments, dict):
                continue
            command = shell_command(block.name, block.arguments)
            done = results.get(block.id)
            if (
                command
                and done is not None
                and not done.is_error
                and exit_code(done.text) in (None, 0)
            ):
                out.append((entry.seq, command))
    return out
