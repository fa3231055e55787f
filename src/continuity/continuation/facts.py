"""What a session did, extracted from its rows without a model (issue 39, item 3): the one
extraction behind the extractive summary, the project brief (``continuity.brief``) and
MEMORY.md's facts and thread heads (``continuity.lineage``).

Input: ``RowDigest``s (``continuity.continuation.summarize.bounds.digest``: redacted, bounded),
oldest first. Output: a ``SessionFacts``, every string in it redacted and bounded (UTF-8
bytes, ``core.text.clip_middle``), never a tool output copied whole.

- ``requests``: each request of the user, ``(seq, text)``, oldest first.
- ``last_answer``: the agent's last text answer, ``(seq, gist)``: its first sentences.
- ``commands``: the distinct shell commands run (by the agent's tools, and pi's ``!`` commands
  the person ran), each once, at its last invocation (so the
  last working invocation of a command that failed before is the one kept), with its exit
  status (``ok``: True/False, None when no result came back), ``exit_code`` when the output
  or the harness recorded one, whether it ran tests (``is_test``), and a sample of its output
  (first and last lines, bounded).
- ``errors``: error outputs (a failed call, a non-zero exit, a traceback; not ``grep``'s "no
  match"): the first and last line of each (the first and last that name an error when some
  do), deduplicated; ``resolved`` when a later run of the same command (or a later
  successful call of the same tool on the same target, or any later write of the same file)
  succeeded.
- ``failing_tests``: test ids or lines named as failing by the newest run of each test
  command (``FAILED tests/x.py::test_y``, ``--- FAIL: TestX``, ``✗ name``), empty when it passed.
- ``files``: each file path touched, with the strongest kind of change seen (``created`` >
  ``modified`` > ``deleted`` > ``read``; the tool that did it: Edit/Write/MultiEdit,
  apply_patch's ``*** Add/Update/Delete File``, pi's ``edit``/``write``, plain shell writes
  such as ``cat > f <<EOF``, ``tee f``, ``sed -i``, ``rm f``; ``read``/``Read``), in order of
  last touch; a write that failed or got no result changed nothing.
- ``urls``: URLs named by the user, the agent or a tool call, deduplicated.
- ``decisions``: sentences in which the agent stated a decision ("decided", "the fix is",
  "we'll use", …), deduplicated.
- ``tasks``: the newest task list (``core.tasklist``) as it stands.
- ``done``: requests and task items finished (only when their calls succeeded).
- ``open_items``: task items still open, calls that never returned ("effects unknown"), a
  request whose work ended in an unresolved error.

``extract_facts`` holds no store; the brief reads the rows (bounded) and hands them in.

Over 600 lines: one extraction (commands, errors, files, tests, decisions, progress) over a
session's rows, shared by the extractive summary, the brief and MEMORY.md; the facts cross-
reference each other (a test run settles an error, a later call finishes a request).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field

from continuity.continuation.summarize.bounds import CallDigest, ResultDigest, RowDigest, scrub
from continuity.core.tasklist import TaskItem, open_items
from continuity.core.text import clip_middle, utf8_len


@dataclass(frozen=True, slots=True)
class CommandRun:
    """One distinct shell command at its last invocation (row ``seq``). ``ok``: True when it
    returned without error and exit status 0, False when it failed, None when no result came
    back. ``exit_code``: the status when known. ``output``: a sample of its output (first and
    last lines, at most ``facts.OUTPUT_SAMPLE_BYTES``), redacted."""

    command: str
    seq: int
    ok: bool | None
    exit_code: int | None = None
    is_test: bool = False
    output: str = ""


@dataclass(frozen=True, slots=True)
class ErrorNote:
    """An error a tool returned at row ``seq``: ``source`` (the command, or the tool and its
    target), the ``first_line`` and ``last_line`` of the output (equal for a one-line error),
    and ``resolved`` when a later run of the same command or call succeeded."""

    seq: int
    source: str
    first_line: str
    last_line: str
    resolved: bool = False
    #: the tool that returned it and what it acted on (its command, else its first path or
    #: its arguments' head), so a reader can write "bash `pytest -q` failed"
    tool: str = ""
    target: str = ""


@dataclass(frozen=True, slots=True)
class FileTouch:
    """A file the session touched: ``change`` is ``created``, ``modified``, ``deleted`` or
    ``read`` (the strongest seen), ``seq`` the row of its last touch."""

    path: str
    change: str
    seq: int


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What a session did (module docstring). Every tuple is oldest first, except where the
    module docstring says otherwise; everything is redacted and bounded."""

    requests: tuple[tuple[int, str], ...] = ()
    last_answer: tuple[int, str] | None = None
    commands: tuple[CommandRun, ...] = ()
    errors: tuple[ErrorNote, ...] = ()
    failing_tests: tuple[str, ...] = ()
    files: tuple[FileTouch, ...] = ()
    urls: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    tasks: tuple[TaskItem, ...] = ()
    done: tuple[str, ...] = ()
    open_items: tuple[str, ...] = ()
    #: rows read, and the last row's seq (-1 when none): so a reader can say how much it saw
    rows: int = 0
    last_seq: int = -1
    extra: dict[str, object] = field(default_factory=dict)
    #: each tool's name and how many calls it got, most used first; calls that failed (an
    #: error result, a non-zero exit, a traceback); calls without a result
    tools: tuple[tuple[str, int], ...] = ()
    failed_calls: int = 0
    dangling: int = 0
    #: the calls without a result, ``(seq, tool, target)``, oldest first (``dangling`` of them)
    unanswered: tuple[tuple[int, str, str], ...] = ()
    #: the seqs of the requests whose work is done (``done`` names them with their answers)
    settled: tuple[int, ...] = ()

    @property
    def unresolved_errors(self) -> tuple[ErrorNote, ...]:
        """The errors no later success resolved, oldest first."""
        return tuple(e for e in self.errors if not e.resolved)

    @property
    def changed_files(self) -> tuple[FileTouch, ...]:
        """The files created, modified or deleted (not only read)."""
        return tuple(f for f in self.files if f.change != "read")


#: Bounds of the extraction's strings, in UTF-8 bytes (issue 39: bounded, never a whole output).
REQUEST_BYTES = 2_000
GIST_BYTES = 400
COMMAND_BYTES = 300
OUTPUT_SAMPLE_BYTES = 600
LINE_BYTES = 240
DECISION_BYTES = 240
URL_BYTES = 300
ITEM_BYTES = 300
#: Lines of an output's head and tail its sample keeps.
SAMPLE_LINES = 3
#: Most items kept per list (the newest): a session of thousands of rows stays bounded.
MOST = 60

#: issue 39: the sentence of an answer that states a decision (the same words the extractive
#: summary used for its Key decisions since seed 002).
DECISION = re.compile(
    r"\b(?:decided|decide|chose|choose|instead|i'?ll use|we'?ll use|will use"
    r"|switch(?:ed)? to|going with|the fix is|root cause|because|plan is)\b",
    re.I,
)
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
URL = re.compile(r"https?://[^\s<>()\"'`\[\]{}|\\^]+")
#: Exit status lines the harnesses write into a command's output: Codex ``Process exited
#: with code N`` / ``Exit code: N`` (header), pi ``Command exited with code N`` (last line),
#: Claude Code ``Exit code N`` (first line of a failed Bash), pi's ``!`` commands ``[exit N]``,
#: Codex's JSON ``"exit_code": N``.
_EXIT = re.compile(
    r"^(?:Process exited with code|Command exited with code|Exit code:?)\s*(-?\d+)"
    r"\s*$|^\[exit (-?\d+)\]$",
    re.M,
)
_EXIT_JSON = re.compile(r'"exit_code"\s*:\s*(-?\d+)')
#: Lines that are the harness's framing of an output, not the output: Codex's header
#: (``Chunk ID``, ``Wall time``, ``Original token count``, ``Output:``), exit lines.
_FRAME = re.compile(
    r"^(?:Chunk ID: \S+|Wall time: .*|Original token count: \d+|Output:|"
    r"Total output lines: \d+|Process exited with code -?\d+|"
    r"Command exited with code -?\d+|Exit code:? -?\d+|\[exit -?\d+\])\s*$"
)
#: A line that says what went wrong (preferred as an error's first and last line over
#: noise such as "Waiting for the debugger to disconnect...").
_ERROR_WORD = re.compile(
    r"\b(?:error|errors|failed|failure|fail|fatal|exception|traceback|"
    r"denied|not found|no such|cannot|can't|unable|invalid|refused|"
    r"rejected|panic(?:ked)?|abort(?:ed)?|missing)\b|Error\b|✗|✖",
    re.I,
)
#: Programs whose exit status 1 with no output means "nothing matched", not a failure.
_NO_MATCH = {"grep", "egrep", "fgrep", "rg", "ag", "diff", "cmp", "test", "["}
#: Shell steps that write files (issue 39: files changed by commands too): a redirect of
#: ``cat``/``echo``/``printf`` (``cat > p <<'EOF'``), ``tee p``, ``touch p``, ``sed -i … p``
#: (written or modified) and ``rm p`` (deleted).
_SHELL_WRITE = re.compile(
    r"^(?:cat|echo|printf)\b[^|<>]*?>{1,2}\s*(?P<redirect>[^\s;&|<>]+)|"
    r"\btee\s+(?:-a\s+)?(?P<tee>[^\s;&|<>-][^\s;&|<>]*)|"
    r"^touch\s+(?P<touch>[^\s;&|<>]+)|"
    r"^sed\s+-i\S*\s.*?\s(?P<sed>[^\s;&|<>'\"]+)\s*$|"
    r"^rm\s+(?:-\w+\s+)*(?P<rm>[^\s;&|<>]+)\s*$"
)
#: The marker of a cut (``core.text.clip_middle``): the bytes it stands for.
_CUT = re.compile(r"\[… (\d{1,15}) bytes omitted …\]")
_TRACEBACK = re.compile(
    r"^Traceback \(most recent call last\):|^panic: |^thread '.*' panicked", re.M
)
#: A shell step that runs tests (issue 39: ``is_test``).
_TEST_COMMAND = re.compile(
    r"(?:^|[\s/;&|(])(?:pytest|py\.test|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|"
    r"(?:python3?|uv run|poetry run)\s+-m\s+(?:pytest|unittest)|"
    r"(?:npm|pnpm|yarn|bun|deno|go|cargo|mix|dotnet|gradle|\./gradlew|mvn|make|swift)\s+"
    r"(?:run\s+)?test\S*|node\s+--test)(?=$|[\s;&|)])"
)
#: Lines naming a failing test: pytest ``FAILED id`` / ``ERROR id`` (`` - reason`` after it), go ``--- FAIL: TestX``,
#: jest ``FAIL path``, node/mocha ``✗``/``✖``/``×`` items, TAP ``not ok N - name``, cargo
#: ``test name ... FAILED``.
_FAILING = re.compile(
    r"^\s*(?:FAILED\s+(?P<pytest>\S+)|ERROR\s+(?P<pyerr>\S+::\S+)|--- FAIL:\s+(?P<go>\S+)|"
    r"FAIL\s+(?P<jest>\S+\.\w+)|[✗✖×]\s+(?P<mark>.+?)|not ok \d+ - (?P<tap>.+?)|"
    r"test (?P<cargo>\S+) \.\.\. FAILED)\s*(?:\(.*\)|\s-\s.*)?\s*$",
    re.M,
)
_STEP_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")
_WORD = re.compile(r"[a-z0-9]+")
#: Words of a task title that say nothing about which command does it.
_FILLER = {
    "the",
    "a",
    "an",
    "to",
    "and",
    "of",
    "for",
    "in",
    "on",
    "with",
    "it",
    "its",
    "my",
    "our",
    "all",
    "new",
    "up",
    "then",
    "now",
    "this",
    "that",
    "run",
    "do",
    "make",
}
#: The strength of a file's change (module docstring: created > modified > deleted > read).
_STRENGTH = {"created": 3, "modified": 2, "deleted": 1, "read": 0}


def one_line(text: str, cap: int) -> str:
    """``text`` on one line (runs of whitespace as one space) within ``cap`` UTF-8 bytes; a
    cut's ``[… N bytes omitted …]`` marker stays on the line (``clip_middle`` puts it on a
    line of its own, which would end a summary item)."""
    return clip_middle(" ".join(text.split()), cap).replace("\n", " ")


def exit_code(text: str) -> int | None:
    """The exit status a harness wrote into a command's output ``text`` (``_EXIT``), the
    last one when there are several; None when it names none."""
    found = [int(a or b) for a, b in _EXIT.findall(text)]
    if not found:
        found = [int(n) for n in _EXIT_JSON.findall(text[:4_000])]
    return found[-1] if found else None


def output_lines(text: str) -> list[str]:
    """The non-blank lines of an output without the harness's framing (``_FRAME``)."""
    return [ln.rstrip() for ln in text.splitlines() if ln.strip() and not _FRAME.match(ln.strip())]


def sample(text: str, cap: int = OUTPUT_SAMPLE_BYTES) -> str:
    """A sample of an output: its first and last ``SAMPLE_LINES`` lines (framing left out),
    each within ``LINE_BYTES``, with ``[… N bytes omitted …]`` between them (N: the bytes of
    the original output left out, a digest's own cut included), all within ``cap``."""
    lines = output_lines(text)
    if len(lines) > 2 * SAMPLE_LINES:
        middle = lines[SAMPLE_LINES:-SAMPLE_LINES]
        omitted = sum(utf8_len(ln) + 1 for ln in middle) + sum(
            int(n) for ln in middle for n in _CUT.findall(ln)
        )
        lines = [*lines[:SAMPLE_LINES], f"[… {omitted} bytes omitted …]", *lines[-SAMPLE_LINES:]]
    return clip_middle("\n".join(clip_middle(ln, LINE_BYTES) for ln in lines), cap)


def steps(command: str | None) -> list[str]:
    """The steps of a shell command (split at ``&&``, ``||``, ``;`` and line breaks outside
    quotes), ``cd`` steps left out: ``cd /repo && git commit -m x`` and ``git add . && git
    commit -m x`` share the step ``git commit -m x``."""
    if not command:
        return []
    parts = [" ".join(p.split()) for p in _split_unquoted(command, ("&&", "||", ";", "\n"))]
    return [p for p in parts if p and not p.startswith("cd ")]


def _split_unquoted(text: str, separators: tuple[str, ...]) -> list[str]:
    """``text`` split at each of ``separators`` that is outside single or double quotes."""
    out, start, quote, i = [], 0, "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "\\":
            i += 2
            continue
        else:
            sep = next((s for s in separators if text.startswith(s, i)), None)
            if sep is not None:
                out.append(text[start:i])
                i += len(sep)
                start = i
                continue
        i += 1
    out.append(text[start:])
    return out


def last_stage(step: str) -> str:
    """The last command of a pipeline step (split at ``|`` outside quotes)."""
    return _split_unquoted(step, ("|",))[-1].strip()


def is_test_command(command: str) -> bool:
    """True when a step of ``command`` runs tests (``_TEST_COMMAND``)."""
    return bool(_TEST_COMMAND.search(command))


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def title_words(text: str) -> set[str]:
    """The words of a task title that can name a command (filler left out, stemmed)."""
    return {_stem(w) for w in _WORD.findall(text.lower()) if len(w) >= 2 and w not in _FILLER}


def step_head(step: str) -> str | None:
    """What a command step does: the program's subcommand (``git commit`` → ``commit``,
    ``gh pr edit`` → ``pr``, ``npm test`` → ``test``), else the program (``pytest``)."""
    tokens = [t for t in step.split() if "=" not in t or t.startswith("-")]
    if not tokens:
        return None
    for token in tokens[1:]:
        if not token.startswith("-"):
            return _stem(token.lower().strip("'\""))
        break
    return _stem(tokens[0].rsplit("/", 1)[-1].lower())


def target(c: CallDigest) -> str:
    """What a call acts on: its first path, else its command (whitespace runs as one
    space), else its arguments' head."""
    return c.paths[0] if c.paths else (_norm(c.command) if c.command else c.args[:120])


@dataclass
class _Call:
    seq: int
    call: CallDigest
    result: ResultDigest | None = None
    result_seq: int = -1
    exit_code: int | None = None

    @property
    def ok(self) -> bool | None:
        if self.result is None:
            return None
        return not (self.result.is_error or (self.exit_code not in (None, 0)))

    @property
    def failed(self) -> bool:
        """An error result, a non-zero exit (but not ``grep``'s "no match"), a traceback."""
        if self.result is None:
            return False
        if self.ok is False:
            return not _no_match(self)
        return bool(_TRACEBACK.search(self.result.text))

    @property
    def at(self) -> int:
        return self.result_seq if self.result is not None else self.seq


def _no_match(item: _Call) -> bool:
    """Exit status 1 of a search or comparison (``grep``, ``rg``, ``diff``, ``test``) with
    no output: nothing matched, which is an answer, not a failure."""
    if item.exit_code != 1 or item.result is None or output_lines(item.result.text):
        return False
    last = steps(item.call.command)[-1:] or [""]
    stage = last_stage(last[0]).split()
    return bool(stage) and stage[0].rsplit("/", 1)[-1] in _NO_MATCH


def _norm(command: str) -> str:
    return " ".join(command.split())


def extract_facts(rows: Iterable[RowDigest]) -> SessionFacts:
    """The facts of ``rows`` (``RowDigest``s, oldest first), as the module docstring says.
    Deterministic: the same rows always give the same facts. Never raises on odd input (a
    call without a result, a result without its call, a row without text)."""
    requests: list[tuple[int, str]] = []
    answers: list[tuple[int, str]] = []
    user_texts: list[tuple[int, str]] = []
    calls: dict[str, _Call] = {}
    order: list[_Call] = []
    urls: dict[str, None] = {}
    todos: tuple[TaskItem, ...] | None = None
    todos_seq = -1
    count = 0
    last_seq = -1
    for row in rows:
        count += 1
        last_seq = row.seq
        ran = _user_command(row)
        if ran is not None:  # pi's "!" command: run by the person, not a request
            order.append(ran)
        elif row.role == "user" and row.text:
            user_texts.append((row.seq, row.text))
            if row.is_request:
                requests.append((row.seq, row.text))
            _urls(row.text, urls)
        if row.role == "assistant" and _is_answer(row.text):
            answers.append((row.seq, row.text))
            _urls(row.text, urls)
        for c in row.calls:
            if c.id in calls and calls[c.id].call.name == c.name:
                continue  # a repeated call row (the same call recorded twice)
            item = _Call(row.seq, c)
            calls[c.id] = item
            order.append(item)
            _urls(c.args, urls)
        for r in row.results:
            item = calls.get(r.call_id)
            if item is not None and item.result is None:
                item.result, item.result_seq = r, row.seq
                item.exit_code = exit_code(r.text) if item.call.command else None
        if row.todos is not None:
            todos, todos_seq = row.todos, row.seq
    if not requests and user_texts:
        requests.append(user_texts[0])
    commands = _commands(order)
    errors = _errors(order)
    done, open_, settled = _progress(requests, answers, order, errors, todos, todos_seq)
    tools: dict[str, int] = {}
    for item in order:
        if not _by_person(item):
            tools[item.call.name] = tools.get(item.call.name, 0) + 1
    return SessionFacts(
        requests=tuple((q, clip_middle(t, REQUEST_BYTES)) for q, t in requests[-MOST:]),
        last_answer=(answers[-1][0], gist(answers[-1][1])) if answers else None,
        commands=commands,
        errors=errors,
        failing_tests=_failing_tests(order),
        files=_files(order),
        urls=tuple(clip_middle(u, URL_BYTES) for u in list(urls)[-MOST:]),
        decisions=_decisions([t for _, t in answers]),
        tasks=todos or (),
        done=done,
        open_items=open_,
        rows=count,
        last_seq=last_seq,
        tools=tuple(sorted(tools.items(), key=lambda kv: (-kv[1], kv[0]))),
        failed_calls=sum(1 for item in order if item.failed and not _by_person(item)),
        dangling=sum(1 for item in order if item.result is None),
        unanswered=tuple(
            (w.seq, w.call.name, one_line(target(w.call), COMMAND_BYTES))
            for w in order
            if w.result is None
        )[-MOST:],
        settled=tuple(settled),
    )


_USER_COMMAND = re.compile(
    r"\A\$ (?P<cmd>[^\n]+)\n?(?P<out>.*?)\n?\[exit (?P<code>-?\d+)\]\s*\Z", re.S
)


def _user_command(row: RowDigest) -> _Call | None:
    """A command the person ran in pi (``!cmd``: a user row that is no request, rendered
    ``$ command / output / [exit N]`` by ``formats.pi``) as a call with its result."""
    if row.role != "user" or row.is_request or not row.text.startswith("$ "):
        return None
    m = _USER_COMMAND.match(row.text)
    if m is None:
        return None
    code = int(m.group("code"))
    call = CallDigest(
        f"user-command:{row.seq}",
        "user shell",
        "",
        (),
        clip_middle(m.group("cmd").strip(), COMMAND_BYTES),
    )
    return _Call(row.seq, call, ResultDigest(call.id, code != 0, m.group("out")), row.seq, code)


def _by_person(item: _Call) -> bool:
    return item.call.id.startswith("user-command:")


def _urls(text: str, into: dict[str, None]) -> None:
    for u in URL.findall(text):
        into.setdefault(scrub(u.rstrip(".,;:!?'\"")), None)


#: a media stub (``core.model.MediaBlock.stub``) or a base64 stub (``bounds``): no words
_STUB = re.compile(r"\[(?:[\w.+-]+/[\w.+-]+ \d+ B|base64 \d+ bytes) omitted\]")


def _is_answer(text: str) -> bool:
    """True when an assistant row's text says something: not blank, not only media stubs
    (issue 39: a brief's outcome was "[image/png 26 B omitted]" or empty)."""
    return bool(_STUB.sub("", text).strip())


def gist(text: str, cap: int = GIST_BYTES) -> str:
    """The first sentences of ``text`` on one line, within ``cap`` bytes: whole sentences
    while they fit (at least the first, clipped)."""
    out = ""
    for s in SENTENCE.split(text.strip()):
        s = " ".join(s.split())
        if not s:
            continue
        joined = f"{out} {s}" if out else s
        if utf8_len(joined) > cap:
            break
        out = joined
    return out or one_line(text, cap)


def _commands(order: list[_Call]) -> tuple[CommandRun, ...]:
    last: dict[str, _Call] = {}
    for item in order:
        if item.call.command:
            key = _norm(item.call.command)
            last.pop(key, None)  # re-inserted: the dict's order is the order of last runs
            last[key] = item
    out = []
    for key, item in list(last.items())[-MOST:]:
        out.append(
            CommandRun(
                command=clip_middle(key, COMMAND_BYTES),
                seq=item.seq,
                ok=item.ok,
                exit_code=item.exit_code,
                is_test=is_test_command(key),
                output=sample(item.result.text) if item.result is not None else "",
            )
        )
    return tuple(out)


def _successes(order: list[_Call]) -> dict[tuple[str, str], int]:
    """The last seq at which each (tool, target) and (tool, command step) succeeded."""
    ok: dict[tuple[str, str], int] = {}
    for item in order:
        if item.ok and not item.failed:
            keys = [_key(item.call)] + [(item.call.name, s) for s in steps(item.call.command)]
            for k in keys:
                ok[k] = max(ok.get(k, -1), item.at)
    return ok


def _key(c: CallDigest) -> tuple[str, str]:
    """What a later success must match to resolve a failure of ``c``: any write tool on
    the same file (a failed ``Edit`` is resolved by a ``MultiEdit`` of that file), else the
    same tool on the same target."""
    return ("write", c.paths[0]) if c.kind == "write" and c.paths else (c.name, target(c))


def _errors(order: list[_Call]) -> tuple[ErrorNote, ...]:
    ok_after = _successes(order)
    notes: dict[tuple[str, str, str], ErrorNote] = {}
    for item in order:
        if not item.failed or item.result is None:
            continue
        c = item.call
        lines = (
            output_lines(item.result.text)
            or [ln.strip() for ln in item.result.text.splitlines() if ln.strip()]
            or ["error"]
        )
        said = [ln for ln in lines if _ERROR_WORD.search(ln)] or lines
        first, last = (
            clip_middle(said[0].strip(), LINE_BYTES),
            clip_middle(said[-1].strip(), LINE_BYTES),
        )
        if (
            item.exit_code not in (None, 0)
            and len(lines) == 1
            and not output_lines(item.result.text)
        ):
            first = last = f"exit code {item.exit_code}"
        source = (
            one_line(c.command, COMMAND_BYTES)
            if c.command
            else one_line(f"{c.name} {target(c)}", COMMAND_BYTES)
        )
        s = steps(c.command)
        resolved = ok_after.get(_key(c), -1) > item.at or (
            bool(s) and ok_after.get((c.name, s[-1]), -1) > item.at
        )
        key = (source, first, last)
        notes.pop(key, None)
        notes[key] = ErrorNote(
            item.at, source, first, last, resolved, c.name, one_line(target(c), COMMAND_BYTES)
        )
    return tuple(sorted(notes.values(), key=lambda e: e.seq)[-MOST:])


def _failing_tests(order: list[_Call]) -> tuple[str, ...]:
    newest: dict[str, _Call] = {}
    for item in order:
        if item.call.command and is_test_command(item.call.command) and item.result is not None:
            newest[_norm(item.call.command)] = item
    passed: dict[str, int] = {}  # the runner (first word of the test step) → last clean pass
    for key, item in newest.items():
        if item.ok and not item.failed:
            runner = _runner(key)
            passed[runner] = max(passed.get(runner, -1), item.at)
    out: dict[str, None] = {}
    for key, item in sorted(newest.items(), key=lambda kv: kv[1].at):
        if (item.ok and not item.failed) or passed.get(_runner(key), -1) > item.at:
            continue
        for m in _FAILING.finditer(item.result.text if item.result else ""):
            name = next(v for v in m.groupdict().values() if v)
            out.setdefault(clip_middle(name.strip(), LINE_BYTES), None)
    return tuple(list(out)[-MOST:])


def _runner(command: str) -> str:
    tests = [s for s in steps(command) if is_test_command(s)]
    return (tests[-1] if tests else command).split()[0] if (tests or command.split()) else ""


def _files(order: list[_Call]) -> tuple[FileTouch, ...]:
    touched: dict[str, FileTouch] = {}
    for item in order:
        c = item.call
        changes = list(c.changes) + shell_changes(c.command)
        if c.kind == "read":
            changes += [(p, "read") for p in c.paths]
        for path, kind in changes:
            if kind != "read" and item.ok is not True:
                continue  # a failed or unanswered write changed nothing we know of
            if kind == "written":
                said = item.result.text.lower() if item.result else ""
                kind = (
                    "modified"
                    if (path in touched and "created" not in said)
                    or "updated" in said
                    or "overwr" in said
                    else "created"
                )
            before = touched.pop(path, None)
            if before is not None and _STRENGTH[before.change] > _STRENGTH[kind]:
                kind = before.change
            touched[path] = FileTouch(path, kind, item.at)
    return tuple(list(touched.values())[-MOST:])


def shell_changes(command: str | None) -> list[tuple[str, str]]:
    """``(path, kind)`` of the files a shell command writes by the plain forms
    ``_SHELL_WRITE`` knows (``written`` or ``modified``; ``deleted`` for ``rm``)."""
    out: list[tuple[str, str]] = []
    for step in steps(command):
        for part in _split_unquoted(step, ("|",)):
            m = _SHELL_WRITE.search(part.strip())
            if m is None:
                continue
            kind, path = next((k, v) for k, v in m.groupdict().items() if v)
            path = path.strip("'\"")
            if not path or path.startswith(("/dev/", "&")) or path == "-":
                continue
            out.append(
                (scrub(path)[:300], {"sed": "modified", "rm": "deleted"}.get(kind, "written"))
            )
    return out


def _decisions(answers: list[str]) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for text in answers:
        for s in SENTENCE.split(text):
            s = s.strip(" -*#>\t")
            if len(s) >= 12 and DECISION.search(s):
                item = one_line(s, DECISION_BYTES)
                out.pop(item, None)
                out[item] = None
    return tuple(list(out)[-MOST // 3 :])


def done_by_call(
    title: str, order: Iterable[tuple[int, CallDigest, bool]], after_seq: int
) -> tuple[int, str] | None:
    """Issue 15: a task step whose call succeeded is done. Of ``order`` (``(result seq,
    call, succeeded)``, oldest first), the first successful command call after ``after_seq``
    one of whose steps does what ``title`` names (its subcommand or program is a word of the
    title: "Commit the fix" ← ``git commit -m …``, "Push to origin" ← ``git push``), as
    ``(result seq, command)``; None when no such call exists."""
    words = title_words(title)
    if not words:
        return None
    for seq, c, ok in order:
        if seq <= after_seq or not ok:
            continue
        if any(step_head(step) in words for step in steps(c.command)):
            return seq, c.command or c.name
    return None


def _progress(
    requests: list[tuple[int, str]],
    answers: list[tuple[int, str]],
    order: list[_Call],
    errors: tuple[ErrorNote, ...],
    todos: tuple[TaskItem, ...] | None,
    todos_seq: int,
) -> tuple[tuple[str, ...], tuple[str, ...], list[int]]:
    """(done, open items, seqs of the requests done): each request done when every call after it (before the next)
    returned, none failed unresolved, and the agent answered after its last call with
    something other than a question; task items completed or done by a later successful
    command; open: the rest of the task list, calls without a result, requests whose work
    ended in an unresolved error."""
    done: list[str] = []
    open_: list[str] = []
    settled: list[int] = []
    unresolved = {(e.seq, e.source) for e in errors if not e.resolved}
    starts = [q for q, _ in requests]
    spans: dict[int, list[_Call]] = {}
    for item in order:
        if _by_person(item):
            continue  # the person's own commands are not the agent's work on a request
        i = bisect_right(starts, item.seq) - 1
        spans.setdefault(i, []).append(item)
    replies: dict[int, list[tuple[int, str]]] = {}
    for seq, text in answers:
        replies.setdefault(bisect_right(starts, seq) - 1, []).append((seq, text))
    for i, (q, text) in enumerate(requests):
        work = spans.get(i, [])
        failed = [w for w in work if w.failed and (w.at, _source(w.call)) in unresolved]
        pending = [w for w in work if w.result is None]
        last_work = max([w.at for w in work] + [q])
        after = [a for a in replies.get(i, []) if a[0] > last_work]
        if failed:
            w = failed[-1]
            open_.append(
                f"#{q} {one_line(text, 160)} → ended with an unresolved error "
                f"from `{one_line(_source(w.call), 120)}` (#{w.at})"
            )
        elif not pending and after and not after[-1][1].rstrip().endswith("?"):
            settled.append(q)
            done.append(f"#{q} {one_line(text, 160)} → {gist(after[-1][1], 200)}")
    flow = [(w.at, w.call, bool(w.ok and not w.failed)) for w in order]
    for t in todos or ():
        if t.status == "completed":
            done.append(f"[done] {one_line(t.label(), ITEM_BYTES)}")
    for t in open_items(todos):
        by = done_by_call(t.title, flow, todos_seq)
        if by is not None:
            done.append(f"[done] {one_line(t.label(), 200)} by `{one_line(by[1], 120)}` (#{by[0]})")
        else:
            open_.append(
                f"[{'in progress' if t.status == 'in_progress' else 'todo'}] "
                f"{one_line(t.label(), ITEM_BYTES)}"
            )
    for w in order:
        if w.result is None and f"(#{w.seq})" not in " ".join(open_[-3:]):
            open_.append(
                f"{w.call.name} `{one_line(target(w.call), 120)}` (#{w.seq}) has no "
                "recorded result: its effects are unknown"
            )
    return tuple(done[-MOST:]), tuple(open_[-MOST:]), settled


def _source(c: CallDigest) -> str:
    return (
        one_line(c.command, COMMAND_BYTES)
        if c.command
        else one_line(f"{c.name} {target(c)}", COMMAND_BYTES)
    )


__all__ = ["CommandRun", "ErrorNote", "FileTouch", "SessionFacts", "extract_facts"]
