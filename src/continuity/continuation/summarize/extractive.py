"""The ``extractive`` provider: a deterministic, offline summary built from the log itself.

It needs no model, so the product works without one. From the bounded, redacted row digests
of a ``SummaryRequest`` it takes: the requests (the latest verbatim up to 1,500 bytes), the
user's constraints and preferences (sentences with "don't", "always", "must", ...), the tool
calls and their outcomes (counts, errors not later resolved, calls without a result), the
newest task list (``continuity.core.tasklist``: Claude Code ``TodoWrite``, Codex ``update_plan``;
items as ``- [todo] title (id X)``), decisions the agent stated, the files it read and modified,
URLs, notes and the last answer. A previous summary in this same format is merged section by
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

_CONSTRAINT = re.compile(r"\b(?:don'?t|do not|never|always|must|should|shouldn'?t|avoid|prefer"
                         r"|without|only|make sure|keep|please use|instead of)\b", re.I)
_DECISION = re.compile(r"\b(?:decided|decide|chose|choose|instead|i'?ll use|we'?ll use|will use"
                       r"|switch(?:ed)? to|going with|the fix is|root cause|because|plan is)\b",
                       re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_URL = re.compile(r"https?://[^\s<>()\"'`]+")
_ITEM = re.compile(r"^- (.+)$")
NONE = "- none recorded"
#: Earlier requests named in Goal (all of them appear under Done with their answers).
EARLIER_REQUESTS = 5
#: Items per list before fitting (newest first).
MOST_ITEMS = 40
#: Fitting halves an item longer than this instead of dropping it.
CLIP_BEFORE_DROP = 300

#: The sections in order: (key, heading line).
LAYOUT = (("Goal", "## Goal"), ("Constraints and preferences", "## Constraints and preferences"),
          ("Progress", "## Progress"), ("Done", "### Done"), ("In progress", "### In progress"),
          ("Blocked", "### Blocked"), ("Key decisions", "## Key decisions"),
          ("Next steps", "## Next steps"), ("Critical context", "## Critical context"),
          ("Files read and modified", "## Files read and modified"))
_CARRY = {"Goal", "Constraints and preferences", "Done", "Blocked", "Key decisions",
          "Critical context", "Files read and modified"}


class ExtractiveSummarizer:
    """The offline default ``Summarizer`` (see the module docstring)."""

    name = "extractive"
    max_input_bytes: int | None = None  # nothing leaves the process
    min_seconds = 0.0

    def __init__(self, max_summary_bytes: int = 24_000) -> None:
        self.max_summary_bytes = max_summary_bytes

    def generate(self, request: SummaryRequest, *, cancel: threading.Event,
                 deadline: float) -> ProviderReply:
        """The summary of ``request.rows`` within ``request.max_summary_bytes``."""
        if cancel.is_set():
            raise Cancelled("cancelled")
        return ProviderReply(build_summary(request), "end")


@dataclass
class _Facts:
    requests: list[tuple[int, str]] = field(default_factory=list)
    calls: dict[str, tuple[int, CallDigest]] = field(default_factory=dict)
    results: dict[str, tuple[int, bool, str]] = field(default_factory=dict)
    answers: list[tuple[int, str]] = field(default_factory=list)
    todos: tuple[TaskItem, ...] | None = None
    todos_seq: int = -1
    roles: Counter = field(default_factory=Counter)
    user_texts: list[str] = field(default_factory=list)
    unresolved: set[str] = field(default_factory=set)


def _collect(rows: tuple[RowDigest, ...]) -> _Facts:
    f = _Facts()
    for row in rows:
        f.roles[row.role] += 1
        if row.role == "user" and row.text:
            f.user_texts.append(row.text)
            if row.is_request:
                f.requests.append((row.seq, row.text))
        if row.role == "assistant" and row.text:
            f.answers.append((row.seq, row.text))
        for c in row.calls:
            f.calls.setdefault(c.id, (row.seq, c))
        for r in row.results:
            f.results.setdefault(r.call_id, (row.seq, r.is_error, r.text))
        if row.todos is not None:
            f.todos, f.todos_seq = row.todos, row.seq
    if not f.requests and f.user_texts:
        first = next(r for r in rows if r.role == "user" and r.text)
        f.requests.append((first.seq, first.text))
    return f


def _one_line(text: str, cap: int) -> str:
    return clip_middle(" ".join(text.split()), cap)


def _sentences(texts: list[str], pattern: re.Pattern[str], cap: int, most: int) -> list[str]:
    out: list[str] = []
    for text in reversed(texts):
        for s in _SENTENCE.split(text):
            s = s.strip(" -*#>\t")
            if 12 <= len(s) and pattern.search(s):
                item = f"- {_one_line(s, cap)}"
                if item not in out:
                    out.append(item)
            if len(out) >= most:
                return out
    return out


def _target(c: CallDigest) -> str:
    return c.paths[0] if c.paths else (c.command or c.args[:120])


_STEP_SPLIT = re.compile(r"\s*(?:&&|;|\n)\s*")


def _steps(c: CallDigest) -> list[str]:
    """The steps of a shell command, ``cd`` steps left out: ``cd /repo && git commit -m x``
    and ``git add . && git commit -m x`` share the step ``git commit -m x``, so the second
    succeeding resolves the first's failure. Empty for a call that is not a command."""
    if not c.command:
        return []
    steps = [step.strip() for step in _STEP_SPLIT.split(c.command)]
    return [step for step in steps if step and not step.startswith("cd ")]


_WORD = re.compile(r"[a-z0-9]+")
#: Words of a task title that say nothing about which command does it.
_FILLER = {"the", "a", "an", "to", "and", "of", "for", "in", "on", "with", "it", "its", "my",
           "our", "all", "new", "up", "then", "now", "this", "that", "run", "do", "make"}


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _title_words(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.lower()) if len(w) >= 2 and w not in _FILLER}


def _step_head(step: str) -> str | None:
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


def _done_by_call(title: str, f: _Facts, after_seq: int) -> tuple[int, str] | None:
    """Issue 15: a task step whose call succeeded is done. The first successful command
    call after ``after_seq`` (the row that wrote the task list) one of whose steps does what
    the title names (its subcommand or program is a word of the title: "Commit the fix" ←
    ``git commit -m …``, "Push to origin" ← ``git push``, "Update the PR" ← ``gh pr edit``),
    as ``(result seq, command)``; None when no such call exists."""
    words = _title_words(title)
    if not words:
        return None
    for cid, (seq, c) in f.calls.items():
        res = f.results.get(cid)
        if seq <= after_seq or res is None or res[1]:
            continue
        if any(_step_head(step) in words for step in _steps(c)):
            return res[0], c.command or c.name
    return None


def _settled(f: _Facts, latest: tuple[int, str] | None, unresolved: set[str]) -> bool:
    """Issue 15: the latest request's work is done: every call after it returned and none
    failed unresolved, and the agent answered after its last call with something other than
    a question."""
    if latest is None:
        return False
    after = [(seq, cid) for cid, (seq, _) in f.calls.items() if seq > latest[0]]
    if any(cid in unresolved or cid not in f.results for _, cid in after):
        return False
    last_work = max([seq for seq, _ in after] +
                    [f.results[cid][0] for _, cid in after] + [latest[0]])
    answers = [(seq, text) for seq, text in f.answers if seq > last_work]
    return bool(answers) and not answers[-1][1].rstrip().endswith("?")


def _outcomes(f: _Facts) -> tuple[list[str], list[str], list[str], list[str]]:
    """(tool stats, blocked, files modified, files read)."""
    used: Counter = Counter(c.name for _, c in f.calls.values())
    errors = [cid for cid, (_, err, _) in f.results.items() if err and cid in f.calls]
    stats = []
    if used:
        names = ", ".join(f"{n} {k}" for n, k in used.most_common(8))
        stats.append(f"- {sum(used.values())} tool calls ({names}); {len(errors)} failed")
    ok_after: dict[tuple[str, str], int] = {}
    for cid, (seq, c) in f.calls.items():
        res = f.results.get(cid)
        if res is not None and not res[1]:
            for key in [(c.name, _target(c))] + [(c.name, step) for step in _steps(c)]:
                ok_after[key] = max(ok_after.get(key, -1), res[0])
    blocked: list[str] = []
    for cid in reversed(errors):
        seq, c = f.calls[cid]
        rseq, _, text = f.results[cid]
        if ok_after.get((c.name, _target(c)), -1) > rseq:
            continue  # a later call on the same target succeeded
        steps = _steps(c)
        if steps and ok_after.get((c.name, steps[-1]), -1) > rseq:
            continue  # a later command ran the step that failed, and succeeded
        f.unresolved.add(cid)
        lines = [ln for ln in text.splitlines() if ln.strip()]
        last = lines[-1] if lines else "error"
        blocked.append(f"- {c.name} `{_one_line(_target(c), 120)}` failed (#{rseq}): "
                       f"{_one_line(last, 200)}")
    for cid, (seq, c) in reversed(list(f.calls.items())):
        if cid not in f.results:
            f.unresolved.add(cid)
            blocked.append(f"- {c.name} `{_one_line(_target(c), 120)}` (#{seq}) has no recorded "
                           "result: its effects are unknown; check before repeating it")
    modified: dict[str, None] = {}
    read: dict[str, None] = {}
    for cid, (seq, c) in reversed(list(f.calls.items())):
        res = f.results.get(cid)
        for p in c.paths:
            if c.kind == "write" and not (res and res[1]):
                modified.setdefault(f"- modified: `{_one_line(p, 200)}`")
            elif c.kind == "read":
                read.setdefault(f"- read: `{_one_line(p, 200)}`")
    return stats, list(dict.fromkeys(blocked))[:MOST_ITEMS], list(modified)[:MOST_ITEMS], \
        list(read)[:MOST_ITEMS]


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
    stats, blocked, modified, read = _outcomes(f)
    s: dict[str, list[str]] = {k: [] for k, _ in LAYOUT}
    latest = f.requests[-1] if f.requests else None
    if latest:
        s["Goal"].append(f"- Latest request (#{latest[0]}): {_one_line(latest[1], 1_500)}")
    earlier = f.requests[:-1]
    s["Goal"] += [f"- Earlier request (#{q}): {_one_line(t, 300)}"
                  for q, t in reversed(earlier[-EARLIER_REQUESTS:])]
    if len(earlier) > EARLIER_REQUESTS:
        q, t = earlier[0]
        s["Goal"].append(f"- First request of these rows (#{q}): {_one_line(t, 300)}")
    s["Constraints and preferences"] = _sentences([t for _, t in f.requests] or f.user_texts,
                                                  _CONSTRAINT, 240, 12)
    todos = f.todos or ()
    done_now = {t: _done_by_call(t.title, f, f.todos_seq) for t in open_items(todos)}
    done_now = {t: by for t, by in done_now.items() if by is not None}
    still_open = [t for t in open_items(todos) if t not in done_now]
    settled = _settled(f, latest, f.unresolved)
    s["Done"] = stats + [_todo(t) for t in todos if t.status == "completed"]
    s["Done"] += [_done_todo(t, by) for t, by in done_now.items()]
    if settled and latest:
        s["Done"].append(f"- #{latest[0]} {_one_line(latest[1], 160)} → "
                         f"{_one_line(f.answers[-1][1], 200)}")
    s["Done"] += _answered(f)
    s["In progress"] = [_todo(t) for t in still_open if t.status == "in_progress"]
    if latest and not s["In progress"] and not settled:
        s["In progress"].append(f"- Latest request (#{latest[0]}): {_one_line(latest[1], 300)}")
    s["Blocked"] = blocked
    s["Key decisions"] = _sentences([t for _, t in f.answers], _DECISION, 240, 10)
    s["Next steps"] = [_todo(t) for t in still_open if t.status != "in_progress"]
    if f.answers and f.answers[-1][1].rstrip().endswith("?"):
        s["Next steps"].append(f"- The agent's last question awaits an answer: "
                               f"{_one_line(f.answers[-1][1], 300)}")
    if blocked:
        s["Next steps"].append("- Resolve or re-check the blocked items above before relying "
                               "on them")
    if latest and not settled:
        s["Next steps"].append(f"- Continue from the latest request (#{latest[0]}) and the state "
                               "above; use recall for details not kept here")
    s["Critical context"] = _context(req, f)
    s["Files read and modified"] = modified + read
    merged = _merge(s, *_previous(req.previous), has_request=bool(f.requests),
                    has_tasks=f.todos is not None)
    return _close_carried(merged, f)


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
            by = _done_by_call(m.group(1), f, -1) if m and f.todos is None else None
            if by is None:
                kept.append(item)
            else:
                done = f"- [done] {item[len('- [todo] '):]} by `{_one_line(by[1], 120)}` " \
                       f"(#{by[0]})"
                if done not in s["Done"]:
                    s["Done"].append(done)
        s[key] = kept
    return s


def _todo(item: TaskItem) -> str:
    """A task-list item as a summary line: ``- [todo] title (id X)`` (B27)."""
    return f"- [todo] {_one_line(item.label(), 240)}"


def _answered(f: _Facts) -> list[str]:
    """One item per earlier request of the view with its final answer, newest first."""
    starts = [q for q, _ in f.requests]
    last_answer: dict[int, str] = {}
    for seq, text in f.answers:
        i = bisect_right(starts, seq) - 1
        if i >= 0:
            last_answer[i] = text
    out: list[str] = []
    for i in range(len(f.requests) - 2, -1, -1):
        if len(out) >= MOST_ITEMS:
            break
        q, text = f.requests[i]
        reply = f" → {_one_line(last_answer[i], 200)}" if i in last_answer else ""
        out.append(f"- #{q} {_one_line(text, 160)}{reply}")
    return out


def _context(req: SummaryRequest, f: _Facts) -> list[str]:
    out = []
    if f.answers:
        seq, text = f.answers[-1]
        out.append(f"- Last answer (#{seq}): {_one_line(text, 1_500)}")
    urls = list(dict.fromkeys(u for t in reversed(f.user_texts[-10:]) for u in _URL.findall(t)))
    if urls:
        out.append("- URLs: " + " ".join(_one_line(u, 200) for u in urls[:8]))
    out += [f"- Note (quoted): {_one_line(n, 300)}" for n in reversed(req.notes)]
    out.append(f"- Rows #{req.first_seq}–#{req.last_seq} summarized: {f.roles['user']} user, "
               f"{f.roles['assistant']} assistant, {f.roles['tool']} tool rows")
    return out


def _merge(new: dict[str, list[str]], old: dict[str, list[str]], quoted: list[str], *,
           has_request: bool, has_tasks: bool) -> dict[str, list[str]]:
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
        total += utf8_len(heading) + 1
        if key != "Progress":
            total += sum(utf8_len(i) + 1 for i in items) if items else len(NONE) + 1
    return total - 1


def _fit(sections: dict[str, list[str]], max_bytes: int) -> None:
    """Drop lowest-ranked items, largest section first, then halve the largest item, until
    the summary fits ``max_bytes`` (or nothing is left to drop)."""
    total = _size(sections)
    while total > max_bytes:
        key = max((k for k, _ in LAYOUT if _shrinkable(k, sections[k])),
                  key=lambda k: sum(utf8_len(i) for i in sections[k]), default=None)
        if key is None:
            return
        items = sections[key]
        last = len(items) - 1
        if key == "Goal" and last == 0 or utf8_len(items[last]) > CLIP_BEFORE_DROP:
            items[last] = clip_middle(items[last], max(60, utf8_len(items[last]) // 2))
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
        lines.append(heading)
        if key != "Progress":
            lines.extend(sections[key] or [NONE])
    return "\n".join(lines)
