"""The ``extractive`` provider: a deterministic, offline summary built from the log itself.

It needs no model, so the product works without one. It builds on
``continuation.facts.extract_facts`` (issue 39), the one extraction the brief and MEMORY.md
share. From the bounded, redacted row digests of a ``SummaryRequest`` it takes: the requests
(the latest verbatim up to 1,500 bytes), the user's constraints and preferences (sentences
with "don't", "always", "must", ...), the tool calls and their outcomes (counts, errors not
later resolved, calls without a result), the newest task list (``continuity.core.tasklist``:
Claude Code ``TodoWrite``, Codex ``update_plan``; items as ``- [todo] title (id X)``),
decisions the agent stated, each distinct command once at its last run with its exit status
and a sample of its output (## Commands and results), failing tests and each error's first
and last error line, resolved or not (## Errors and failing tests; both sections only when
they hold an item), the files with their kind of change (``- created|modified|deleted|read:
`path```), URLs, notes and the last answer. An earlier request is Done only when its calls
succeeded; one that ended in an unresolved error or left a call unanswered is In progress. A
previous summary in this same format is merged section by
section (older items rank below newer ones; its open ``[todo]`` items stay open until a newer
list replaces them, B27); any other previous summary is quoted.

Finished work is done, not in progress (issue 15): when every call after the latest request
returned without an unresolved failure and the agent answered after its last call (not with a
question), that request is listed under Done with its answer and no longer under In progress
or Next steps; an open task item (of the newest list, or carried from the previous summary)
that a later successful command did (its subcommand or program is a word of the item's title:
"Commit the fix" ← ``git commit``, "Push" ← ``git push``, "Update the PR" ← ``gh pr edit``)
moves to Done as ``- [done] title by `command` (#seq)``.

The result fits ``max_summary_bytes``: each section's lowest-ranked items are dropped, largest
section first, until it does. The same input always gives the same bytes.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field

from continuity.continuation.facts import (
    CommandRun,
    SessionFacts,
    done_by_call,
    extract_facts,
    one_line,
)
from continuity.continuation.summarize import (
    MIN_SECTIONS,
    Cancelled,
    ProviderReply,
    SummaryRequest,
    structured_sections,
)
from continuity.continuation.summarize.bounds import CallDigest, RowDigest
from continuity.core.tasklist import TaskItem, open_items
from continuity.core.text import clip_middle, utf8_len

_CONSTRAINT = re.compile(
    r"\b(?:don'?t|do not|never|always|must|should|shouldn'?t|avoid|prefer"
    r"|without|only|make sure|keep|please use|instead of)\b",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_ITEM = re.compile(r"^- (.+)$")
NONE = "- none recorded"
#: Earlier requests named in Goal (all of them appear under Done with their answers).
EARLIER_REQUESTS = 5
#: Items per list before fitting (newest first).
MOST_ITEMS = 40
#: Fitting halves an item longer than this instead of dropping it.
CLIP_BEFORE_DROP = 300

#: The sections in order: (key, heading line).
LAYOUT = (
    ("Goal", "## Goal"),
    ("Constraints and preferences", "## Constraints and preferences"),
    ("Progress", "## Progress"),
    ("Done", "### Done"),
    ("In progress", "### In progress"),
    ("Blocked", "### Blocked"),
    ("Key decisions", "## Key decisions"),
    ("Next steps", "## Next steps"),
    ("Commands and results", "## Commands and results"),
    ("Errors and failing tests", "## Errors and failing tests"),
    ("Critical context", "## Critical context"),
    ("Files read and modified", "## Files read and modified"),
)
#: Issue 39's sections are written only when they hold an item, so a summary of a session
#: without commands is as small as before (a tight bound keeps its room for the rest).
OPTIONAL = {"Commands and results", "Errors and failing tests"}
_CARRY = {
    "Goal",
    "Constraints and preferences",
    "Done",
    "Blocked",
    "Key decisions",
    "Commands and results",
    "Errors and failing tests",
    "Critical context",
    "Files read and modified",
}


class ExtractiveSummarizer:
    """The offline default ``Summarizer`` (see the module docstring)."""

    name = "extractive"
    max_input_bytes: int | None = None  # nothing leaves the process
    min_seconds = 0.0

    def __init__(self, max_summary_bytes: int = 24_000) -> None:
        self.max_summary_bytes = max_summary_bytes

    def generate(
        self, request: SummaryRequest, *, cancel: threading.Event, deadline: float
    ) -> ProviderReply:
        """The summary of ``request.rows`` within ``request.max_summary_bytes``."""
        if cancel.is_set():
            raise Cancelled("cancelled")
        return ProviderReply(build_summary(request), "end")


@dataclass
class _Facts:
    """The rows as this summary reads them: ``facts`` (``continuation.facts.extract_facts``,
    the one extraction) plus the texts it quotes (every answer, the user's texts)."""

    facts: SessionFacts
    requests: list[tuple[int, str]] = field(default_factory=list)
    answers: list[tuple[int, str]] = field(default_factory=list)
    flow: list[tuple[int, CallDigest, bool]] = field(default_factory=list)
    roles: Counter = field(default_factory=Counter)
    user_texts: list[str] = field(default_factory=list)
    #: the row of the newest task list (-1: none), and whether these rows wrote one (B27)
    todos_seq: int = -1
    has_tasks: bool = False


def _collect(rows: tuple[RowDigest, ...]) -> _Facts:
    f = _Facts(extract_facts(rows), list(extract_facts_requests(rows)))
    results: dict[str, tuple[int, bool]] = {}
    calls: dict[str, tuple[int, CallDigest]] = {}
    for row in rows:
        f.roles[row.role] += 1
        if row.role == "user" and row.text:
            f.user_texts.append(row.text)
        if row.role == "assistant" and row.text:
            f.answers.append((row.seq, row.text))
        for c in row.calls:
            calls.setdefault(c.id, (row.seq, c))
        for r in row.results:
            results.setdefault(r.call_id, (row.seq, r.is_error))
        if row.todos is not None:
            f.todos_seq, f.has_tasks = row.seq, True
    failed = {(e.seq, e.tool) for e in f.facts.errors}
    for cid, (_seq, c) in calls.items():
        res = results.get(cid)
        if res is not None:
            f.flow.append((res[0], c, not res[1] and (res[0], c.name) not in failed))
    return f


def extract_facts_requests(rows: tuple[RowDigest, ...]) -> list[tuple[int, str]]:
    """The requests of ``rows`` as written (``facts.requests`` clips them): each request row,
    else the first user text."""
    out = [(r.seq, r.text) for r in rows if r.role == "user" and r.text and r.is_request]
    if not out:
        out = [(r.seq, r.text) for r in rows if r.role == "user" and r.text][:1]
    return out


def _one_line(text: str, cap: int) -> str:
    return one_line(text, cap)


def _sentences(texts: list[str], pattern: re.Pattern[str], cap: int, most: int) -> list[str]:
    out: list[str] = []
    for text in reversed(texts):
        for s in _SENTENCE.split(text):
            s = s.strip(" -*#>\t")
            if len(s) >= 12 and pattern.search(s):
                item = f"- {_one_line(s, cap)}"
                if item not in out:
                    out.append(item)
            if len(out) >= most:
                return out
    return out


def _done_by_call(title: str, f: _Facts, after_seq: int) -> tuple[int, str] | None:
    """Issue 15: a task step whose call succeeded is done (``facts.done_by_call``)."""
    return done_by_call(title, f.flow, after_seq)


def _status(c: CommandRun) -> str:
    """A command's exit status as words: ``exit 0``, ``ok``, ``failed (exit 2)``, ``no
    result``."""
    if c.ok is None:
        return "no result"
    code = f"exit {c.exit_code}" if c.exit_code is not None else ""
    if c.ok:
        return code or "ok"
    return f"failed ({code})" if code else "failed"


def _commands(facts: SessionFacts) -> list[str]:
    """Issue 39: each distinct command once, newest first, at its last invocation, with its
    exit status and a sample of its output (first and last lines, ``⏎`` between lines)."""
    out = []
    for c in reversed(facts.commands):
        test = " [tests]" if c.is_test else ""
        head = f"- `{_one_line(c.command, 200)}` (#{c.seq}) {_status(c)}{test}"
        lines = [_one_line(ln, 160) for ln in c.output.splitlines() if ln.strip()]
        out.append(f"{head}: {' ⏎ '.join(lines)}" if lines else head)
    return out[:MOST_ITEMS]


def _errors(facts: SessionFacts) -> list[str]:
    """Issue 39: failing tests, then each error (first and last error line, deduplicated),
    newest first, resolved or not."""
    out = [f"- failing test: {_one_line(t, 200)}" for t in reversed(facts.failing_tests)]
    for e in reversed(facts.errors):
        state = "resolved" if e.resolved else "unresolved"
        lines = _one_line(e.first_line, 200)
        if e.last_line != e.first_line:
            lines += f" … {_one_line(e.last_line, 200)}"
        out.append(f"- {state}: {e.tool} `{_one_line(e.target, 120)}` (#{e.seq}): {lines}")
    return out[:MOST_ITEMS]


def _outcomes(f: _Facts) -> tuple[list[str], list[str], list[str]]:
    """(tool stats, blocked, files): the unresolved errors and unanswered calls are blocked;
    files newest first with the kind of change, then the files only read."""
    facts = f.facts
    stats = []
    if facts.tools:
        names = ", ".join(f"{n} {k}" for n, k in facts.tools[:8])
        total = sum(k for _, k in facts.tools)
        stats.append(f"- {total} tool calls ({names}); {facts.failed_calls} failed")
    blocked = [
        f"- {e.tool} `{_one_line(e.target, 120)}` failed (#{e.seq}): {_one_line(e.last_line, 200)}"
        for e in reversed(facts.unresolved_errors)
    ]
    blocked += [
        f"- {tool} `{_one_line(target, 120)}` (#{seq}) has no recorded result: its "
        "effects are unknown; check before repeating it"
        for seq, tool, target in reversed(facts.unanswered)
    ]
    changed = [f"- {t.change}: `{_one_line(t.path, 200)}`" for t in reversed(facts.changed_files)]
    read = [
        f"- read: `{_one_line(t.path, 200)}`" for t in reversed(facts.files) if t.change == "read"
    ]
    return (
        stats,
        list(dict.fromkeys(blocked))[:MOST_ITEMS],
        changed[:MOST_ITEMS] + read[:MOST_ITEMS],
    )


def _previous(previous: str | None) -> tuple[dict[str, list[str]], list[str]]:
    """Items of a previous summary in this format by section, or it quoted whole."""
    if not previous:
        return {}, []
    if structured_sections(previous) < MIN_SECTIONS:
        return {}, [f"- Earlier summary (quoted): {_one_line(previous, 2_000)}"]
    items: dict[str, list[str]] = {}
    current = None
    headings = {h: k for k, h in LAYOUT}
    for line in previous.splitlines():
        if line.strip() in headings:
            current = headings[line.strip()]
            continue
        m = _ITEM.match(line)
        if current and m and line != NONE:
            items.setdefault(current, []).append(line)
    return items, []


def _sections(req: SummaryRequest) -> dict[str, list[str]]:
    f = _collect(req.rows)
    facts = f.facts
    stats, blocked, files = _outcomes(f)
    s: dict[str, list[str]] = {k: [] for k, _ in LAYOUT}
    latest = f.requests[-1] if f.requests else None
    if latest:
        s["Goal"].append(f"- Latest request (#{latest[0]}): {_one_line(latest[1], 1_500)}")
    earlier = f.requests[:-1]
    s["Goal"] += [
        f"- Earlier request (#{q}): {_one_line(t, 300)}"
        for q, t in reversed(earlier[-EARLIER_REQUESTS:])
    ]
    if len(earlier) > EARLIER_REQUESTS:
        q, t = earlier[0]
        s["Goal"].append(f"- First request of these rows (#{q}): {_one_line(t, 300)}")
    s["Constraints and preferences"] = _sentences(
        [t for _, t in f.requests] or f.user_texts, _CONSTRAINT, 240, 12
    )
    todos = facts.tasks
    done_now = {t: _done_by_call(t.title, f, f.todos_seq) for t in open_items(todos)}
    done_now = {t: by for t, by in done_now.items() if by is not None}
    still_open = [t for t in open_items(todos) if t not in done_now]
    settled = bool(latest) and latest[0] in facts.settled
    s["Done"] = stats + [_todo(t) for t in todos if t.status == "completed"]
    s["Done"] += [_done_todo(t, by) for t, by in done_now.items()]
    if settled and latest:
        s["Done"].append(
            f"- #{latest[0]} {_one_line(latest[1], 160)} → {_one_line(f.answers[-1][1], 200)}"
        )
    done_before, unfinished = _answered(f)
    s["Done"] += done_before
    s["In progress"] = [_todo(t) for t in still_open if t.status == "in_progress"]
    if latest and not s["In progress"] and not settled:
        s["In progress"].append(f"- Latest request (#{latest[0]}): {_one_line(latest[1], 300)}")
    s["In progress"] += unfinished
    s["Blocked"] = blocked
    s["Key decisions"] = [f"- {d}" for d in reversed(facts.decisions)][:10]
    s["Next steps"] = [_todo(t) for t in still_open if t.status != "in_progress"]
    if f.answers and f.answers[-1][1].rstrip().endswith("?"):
        s["Next steps"].append(
            f"- The agent's last question awaits an answer: {_one_line(f.answers[-1][1], 300)}"
        )
    if blocked:
        s["Next steps"].append(
            "- Resolve or re-check the blocked items above before relying on them"
        )
    if latest and not settled:
        s["Next steps"].append(
            f"- Continue from the latest request (#{latest[0]}) and the state "
            "above; look up details not kept here in continuity's record"
        )
    s["Commands and results"] = _commands(facts)
    s["Errors and failing tests"] = _errors(facts)
    s["Critical context"] = _context(req, f)
    s["Files read and modified"] = files
    merged = _merge(
        s, *_previous(req.previous), has_request=bool(f.requests), has_tasks=f.has_tasks
    )
    if not f.requests:
        _settle_carried(merged, f)
    return _close_carried(merged, f)


_CARRIED_REQUEST = re.compile(r"^- Latest request \(#(\d+)\): (.*)$")
_CARRIED_NEXT = re.compile(r"^- Continue from the latest request \(#(\d+)\)")


def _settle_carried(s: dict[str, list[str]], f: _Facts) -> None:
    """Issue 45 item 4c: these rows hold no request, so they carry on the previous summary's
    latest request (a chunk or checkpoint boundary fell inside its work). When they finish
    it (every call answered, no unresolved failure, and an answer after the last call that
    is not a question: the rule ``facts`` applies to a request in the rows), its carried
    "Latest request" line leaves In progress, its "Continue from" line leaves Next steps,
    and it is Done with that answer."""
    facts = f.facts
    if not f.answers or facts.unanswered or facts.unresolved_errors:
        return
    seq, answer = f.answers[-1]
    if seq <= max((at for at, _, _ in f.flow), default=-1) or answer.rstrip().endswith("?"):
        return
    settled = {}
    for item in s["In progress"]:
        m = _CARRIED_REQUEST.match(item)
        if m:
            settled[m.group(1)] = m.group(2)
    if not settled:
        return
    s["In progress"] = [i for i in s["In progress"] if not _CARRIED_REQUEST.match(i)]
    s["Next steps"] = [
        i for i in s["Next steps"] if not ((m := _CARRIED_NEXT.match(i)) and m.group(1) in settled)
    ]
    for q, text in settled.items():
        done = f"- #{q} {_one_line(text, 160)} → {_one_line(answer, 200)}"
        if done not in s["Done"]:
            s["Done"].insert(0, done)


def _done_todo(item: TaskItem, by: tuple[int, str]) -> str:
    """A task item a later successful call did: ``- [done] title (id X) by `cmd` (#seq)``."""
    return f"- [done] {_one_line(item.label(), 200)} by `{_one_line(by[1], 120)}` (#{by[0]})"


_CARRIED_TODO = re.compile(r"^- \[todo\] (.+?)(?: \(id [^)]*\))?$")


def _close_carried(s: dict[str, list[str]], f: _Facts) -> dict[str, list[str]]:
    """Issue 15: open ``[todo]`` items carried from the previous summary (B27) that a
    successful call in these rows did move to Done; the rest stay where they were."""
    for key in ("In progress", "Next steps"):
        kept = []
        for item in s[key]:
            m = _CARRIED_TODO.match(item)
            by = _done_by_call(m.group(1), f, -1) if m and not f.has_tasks else None
            if by is None:
                kept.append(item)
            else:
                done = (
                    f"- [done] {item[len('- [todo] ') :]} by `{_one_line(by[1], 120)}` (#{by[0]})"
                )
                if done not in s["Done"]:
                    s["Done"].append(done)
        s[key] = kept
    return s


def _todo(item: TaskItem) -> str:
    """A task-list item as a summary line: ``- [todo] title (id X)`` (B27)."""
    return f"- [todo] {_one_line(item.label(), 240)}"


def _answered(f: _Facts) -> tuple[list[str], list[str]]:
    """The earlier requests of the view, newest first: (done, unfinished). Issue 39: a
    request is done only when its calls succeeded: one that ended in an unresolved error or
    left a call without a result is unfinished, with the reason; the others are done, with
    their final answer."""
    starts = [q for q, _ in f.requests]
    last_answer: dict[int, str] = {}
    for seq, text in f.answers:
        i = bisect_right(starts, seq) - 1
        if i >= 0:
            last_answer[i] = text
    dangling: set[int] = set()
    for seq, _, _ in f.facts.unanswered:
        dangling.add(bisect_right(starts, seq) - 1)
    failed = {item.split(" ", 1)[0]: item for item in f.facts.open_items if item.startswith("#")}
    done: list[str] = []
    unfinished: list[str] = []
    for i in range(len(f.requests) - 2, -1, -1):
        if len(done) + len(unfinished) >= MOST_ITEMS:
            break
        q, text = f.requests[i]
        if f"#{q}" in failed:
            unfinished.append(f"- {_one_line(failed[f'#{q}'], 400)}")
        elif i in dangling:
            unfinished.append(
                f"- #{q} {_one_line(text, 160)}: a call it made has no recorded result"
            )
        else:
            reply = f" → {_one_line(last_answer[i], 200)}" if i in last_answer else ""
            done.append(f"- #{q} {_one_line(text, 160)}{reply}")
    return done, unfinished


def _context(req: SummaryRequest, f: _Facts) -> list[str]:
    out = []
    if f.answers:
        seq, text = f.answers[-1]
        out.append(f"- Last answer (#{seq}): {_one_line(text, 1_500)}")
    urls = list(reversed(f.facts.urls))
    if urls:
        out.append("- URLs: " + " ".join(_one_line(u, 200) for u in urls[:8]))
    out += [f"- Note (quoted): {_one_line(n, 300)}" for n in reversed(req.notes)]
    out.append(
        f"- Rows #{req.first_seq}–#{req.last_seq} summarized: {f.roles['user']} user, "
        f"{f.roles['assistant']} assistant, {f.roles['tool']} tool rows"
    )
    return out


def _merge(
    new: dict[str, list[str]],
    old: dict[str, list[str]],
    quoted: list[str],
    *,
    has_request: bool,
    has_tasks: bool,
) -> dict[str, list[str]]:
    """The new sections with the previous summary's items carried below the new ones. B27:
    when these rows write no task list, the previous summary's open ``[todo]`` items are
    still the open tasks, so they are carried (ahead of the stock lines); a new list
    replaces them."""
    carry = set(_CARRY) | (set() if has_request else {"In progress", "Next steps"})
    for key, items in old.items():
        if key in carry:
            new[key] += [i for i in items if i not in new[key]]
        elif key in ("In progress", "Next steps") and not has_tasks:
            todos = [i for i in items if i.startswith("- [todo] ") and i not in new[key]]
            new[key][:0] = todos
    new["Critical context"] += quoted
    return new


def _size(sections: dict[str, list[str]]) -> int:
    total = 0
    for key, heading in LAYOUT:
        items = sections[key]
        if key in OPTIONAL and not items:
            continue
        total += utf8_len(heading) + 1
        if key != "Progress":
            total += sum(utf8_len(i) + 1 for i in items) if items else len(NONE) + 1
    return total - 1


def _fit(sections: dict[str, list[str]], max_bytes: int) -> None:
    """Drop lowest-ranked items, largest section first, then halve the largest item, until
    the summary fits ``max_bytes`` (or nothing is left to drop)."""
    total = _size(sections)
    while total > max_bytes:
        key = max(
            (k for k, _ in LAYOUT if _shrinkable(k, sections[k])),
            key=lambda k: sum(utf8_len(i) for i in sections[k]),
            default=None,
        )
        if key is None:
            return
        items = sections[key]
        last = len(items) - 1
        if (key == "Goal" and last == 0) or utf8_len(items[last]) > CLIP_BEFORE_DROP:
            items[last] = clip_middle(items[last], max(60, utf8_len(items[last]) // 2)).replace(
                "\n", " "
            )  # the cut's marker stays on the item's line
        else:
            items.pop()
        total = _size(sections)


def _shrinkable(key: str, items: list[str]) -> bool:
    """The latest request (the first Goal item) is halved, never dropped, down to 80 bytes."""
    if key != "Goal" or len(items) > 1:
        return bool(items)
    return bool(items) and utf8_len(items[0]) >= 80


def build_summary(req: SummaryRequest) -> str:
    """The extractive summary text of ``req`` (markdown, at most ``req.max_summary_bytes``
    UTF-8 bytes unless even the bare headings do not fit)."""
    sections = _sections(req)
    _fit(sections, req.max_summary_bytes)
    lines: list[str] = []
    for key, heading in LAYOUT:
        if key in OPTIONAL and not sections[key]:
            continue
        lines.append(heading)
        if key != "Progress":
            lines.extend(sections[key] or [NONE])
    return "\n".join(lines)
