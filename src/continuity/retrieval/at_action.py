"""Recall at the point of action (issue 40, item 3): what other sessions of the project knew,
handed to the agent when the user sends a prompt and before it edits a file or runs a command.

**What is recalled.** Only sessions of the same project other than the asking one (``project``:
the session's folder itself, ``same_project``; not a folder inside it):

- on a prompt (``recall_for_prompt``): the remembered decisions and constraints
  (``continuity remember … --type decision``; ``RECALLED_TYPES``) whose source session is one of
  the project's ``MEMORY_SESSIONS`` newest, and the rows the search ranks best for the prompt
  (``ROW_CANDIDATES``, ``hybrid.hybrid_entries``: words and meaning), each kept only when it
  clears the relevance rule below;
- before an edit (``recall_for_tool``: Claude Code's Edit/Write/MultiEdit/NotebookEdit, Codex's
  ``apply_patch``, pi's ``edit``/``write``): the decisions naming the file and the rows of other
  sessions naming it (its path relative to the project, or its file name), newest first;
- before a shell command (Claude Code's and Codex's ``Bash``, pi's ``bash``, Codex's
  ``shell``/``exec_command``): the last working invocation (exit status 0,
  the rule of ``continuation.facts``) of the same command (``command_key``: the program and,
  for a multiplexer such as ``git``/``npm``/``cargo``, its subcommand) in another session,
  when it differs from the one about to run (the same text would tell nothing new). Reading a
  tool call (its files, its command, an earlier call's exit status) is ``retrieval.actions``.

**The relevance rule** (absolute, never rank-based: fused RRF scores are not calibrated, and a
top-k always has a first). A prompt is *trivial* when it has fewer than ``MIN_PROMPT_WORDS``
content words (letters and digits, at least 3 characters, neither an English stop word nor a
``FILLER`` word: "yes", "continue", "thanks", "go on") — it recalls nothing. A candidate
(a memory's text, a row's redacted text) clears the rule when, with ``cos`` the cosine of the
prompt's and the candidate's embeddings (``embedder``, unit vectors) and ``shared`` the prompt's
content words found in the candidate (stemmed: one ending ``ing``, ``ed`` or ``s`` dropped,
then a final ``e``):

- ``cos >= COSINE_ALONE`` (0.50), or
- ``cos >= COSINE_WITH_WORDS`` (0.30) and ``shared >= SHARED_WITH_COSINE`` (2), and for a
  row (not a remembered decision) ``cos >= ROW_COSINE_WITH_WORDS`` (0.35) and ``shared`` at
  least ``ROW_SHARE`` (60 %) of the prompt's content words, or
- without an embedder (``[retrieval] semantic = "off"`` or the extra missing): ``shared >=
  WORDS_ALONE`` (2) and ``shared`` at least ``WORDS_SHARE`` (half) of the prompt's content words.

``settings.at_action_min_score`` (default 0) raises both cosine floors by that much. The
constants were measured with the packaged model (``wordllama-l2-supercat``, 256 dimensions) on
``bench/retrieval.py``'s 104 questions and 18 negatives over the shared sessions: no negative
gets anything (the nearest candidates: cosine 0.29 with 2 shared words, 0.45 with 1), 73
questions get a row holding their answer. The earlier rule (0.40 alone, 0.25 with one shared
word) gave 3 of the 18 negatives up to 1,110 characters: one common word ("build", "API") and
a short row's cosine are not evidence. Ten negatives written after that tuning (held out,
n19-n28) then showed 3 of them given text: a Flask project's rows for "why does the Flask app
return a 500 on the orders endpoint?", two shared words of five. Requiring most of the prompt's
words (60 %) and cosine 0.35 with them gives 0 of the 28 negatives anything, 69 of 104
questions something, 55 of them a row holding their answer (from 91 and 72): the rule trades
recall for silence when unsure. A remembered decision keeps the looser rule: it was written
to be recalled, the project has few, and a paraphrase of it shares few words by nature
("which file format should the invoice export job save into?" against "exported reports are
written as CSV files": 2 of 6 words). These constants were chosen on all 28 negatives: no negative
is held out of this second tuning.

**The text.** ``RECALL_HEADING``, then ``checkpoints.recovery.FRAMING`` (issue 39: the same
evidence framing as every injected text), then one line per item, decisions first, each
redacted (``redaction.funnel.redact``) and clipped to ``ITEM_CHARS``; all within
``settings.at_action_chars`` characters (issue 40: ≤ 1,200), items that do not fit left out;
"" when nothing clears the rule, the feature is off (``[retrieval] at_action = false``) or
there is no project.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from continuity.checkpoints.recovery import FRAMING
from continuity.core.model import Entry, Memory
from continuity.redaction.funnel import redact
from continuity.retrieval.actions import command_key, edited_files, shell_command, working_runs
from continuity.store.search import EntryFilter, entry_body
from continuity.transcripts.memories import STOP_WORDS, query_terms

if TYPE_CHECKING:
    import numpy as np

    from continuity.retrieval.embedder import Embedder
    from continuity.retrieval.settings import RetrievalSettings
    from continuity.store import SqlStore

#: The first line of every recall text (the e2e suite tells it from the session-start brief).
RECALL_HEADING = "## Recalled by continuity from other sessions of this project\n"
#: Memory types recalled: what was decided and what must hold.
RECALLED_TYPES = ("decision", "constraint")
#: The project's newest sessions whose remembered decisions are read (one query each).
MEMORY_SESSIONS = 50
#: Memories read per session.
MEMORIES_PER_SESSION = 20
#: Rows the search hands in for a prompt, before the relevance rule.
ROW_CANDIDATES = 20
#: Characters of one item (a memory or a row's snippet) at most.
ITEM_CHARS = 400
#: Characters of a candidate's text that are embedded and searched for words.
CANDIDATE_CHARS = 2_000
#: The relevance rule (module docstring).
MIN_PROMPT_WORDS = 2
COSINE_ALONE = 0.50
COSINE_WITH_WORDS = 0.30
SHARED_WITH_COSINE = 2
ROW_COSINE_WITH_WORDS = 0.35
ROW_SHARE = 0.6
WORDS_ALONE = 2
WORDS_SHARE = 0.5
#: Words that carry no topic in a prompt to an agent (beyond ``STOP_WORDS``).
FILLER = frozenset(
    """
yes yeah yep nope okay ok sure thanks thank please pls continue go ahead again also just lets let
want need can could would should will one get make done do now right good great fine cool nice
keep going proceed next start stop wait try more same thing things stuff work task""".split()
)
#: Rows read from a command's row on to find its result.
RESULT_WINDOW = 8
#: Rows naming an edited file quoted at most (the newest sessions' last ones).
FILE_ROWS = 3
#: Sessions whose rows naming a program are read for its last working invocation.
COMMAND_SESSIONS = 10

_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class AtAction:
    """What recall at the point of action injects: ``text`` ("" when nothing clears the rule;
    else ``RECALL_HEADING`` + ``FRAMING`` + items, at most ``settings.at_action_chars``
    characters), ``rows`` the ``(session_key, seq)`` of the rows quoted (a memory's source
    session with seq -1), ``chars`` = ``len(text)``, ``lines`` the items' lines (what the
    daemon remembers as told to a session: ``told`` leaves them out next time)."""

    text: str = ""
    rows: list[tuple[str, int]] = field(default_factory=list)
    chars: int = 0
    lines: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "rows": [list(r) for r in self.rows], "chars": self.chars}


NOTHING = AtAction()


@dataclass
class _Item:
    """One candidate: its line as shown, the text the rule reads, where it comes from."""

    line: str
    text: str
    source: tuple[str, int]
    memory: bool
    cos: float = 0.0
    shared: int = 0


# ---------------------------------------------------------------------------- words


def _stem(word: str) -> str:
    """``word`` without one ending ``ing``, ``ed`` or ``s`` (not ``ss``), then without a final
    ``e``: "files" and "file", "caching" and "cache", "exported" and "export" meet."""
    for suffix in ("ing", "ed", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix) and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def content_words(text: str) -> set[str]:
    """The words of ``text`` that carry its topic (module docstring): letters and digits, at
    least 3 characters, not a stop word nor a ``FILLER`` word, lower-cased and stemmed."""
    out = set()
    for word in _WORD.findall(text.lower()):
        if len(word) >= 3 and word not in STOP_WORDS and word not in FILLER:
            out.add(_stem(word))
    return out


def is_trivial(prompt: str) -> bool:
    """True for a prompt that recalls nothing: fewer than ``MIN_PROMPT_WORDS`` content words
    ("yes", "continue", "thanks, go on")."""
    return len(content_words(prompt)) < MIN_PROMPT_WORDS


def clears(
    cos: float | None, shared: int, prompt_words: int, *, raise_by: float = 0.0, row: bool = False
) -> bool:
    """The relevance rule (module docstring) for one candidate: ``cos`` the cosine (None
    without an embedder), ``shared`` the prompt's content words found in it, ``prompt_words``
    how many the prompt has; ``raise_by`` (``at_action_min_score``) raises the cosine floors;
    ``row``: the candidate is a row (the stricter rule), not a remembered decision."""
    if cos is None:
        return shared >= WORDS_ALONE and shared >= WORDS_SHARE * prompt_words
    if cos >= COSINE_ALONE + raise_by:
        return True
    if row:
        return (
            cos >= ROW_COSINE_WITH_WORDS + raise_by
            and shared >= SHARED_WITH_COSINE
            and shared >= ROW_SHARE * prompt_words
        )
    return cos >= COSINE_WITH_WORDS + raise_by and shared >= SHARED_WITH_COSINE


# ---------------------------------------------------------------------------- embedding

_VECTORS: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_VECTORS_LOCK = threading.Lock()
#: Candidate texts whose vectors are kept between calls (a project's decisions, asked again).
VECTOR_CACHE = 4_096


def _vectors(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Unit vectors of ``texts`` (cached by model and text, ``VECTOR_CACHE`` of them)."""
    import numpy as np

    out: list[Any] = [None] * len(texts)
    missing: list[int] = []
    with _VECTORS_LOCK:
        for i, text in enumerate(texts):
            found = _VECTORS.get((embedder.model_id, text))
            if found is None:
                missing.append(i)
            else:
                _VECTORS.move_to_end((embedder.model_id, text))
                out[i] = found
    if missing:
        fresh = embedder.encode([texts[i] for i in missing])
        with _VECTORS_LOCK:
            for row, i in zip(fresh, missing, strict=True):
                out[i] = row
                _VECTORS[(embedder.model_id, texts[i])] = row
            while len(_VECTORS) > VECTOR_CACHE:
                _VECTORS.popitem(last=False)
    if not out:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return np.stack(out)


def _embedder(settings: RetrievalSettings) -> Embedder | None:
    from continuity.retrieval.embedder import load_embedder

    try:
        return load_embedder(settings)
    except Exception:  # noqa: BLE001 - a broken model file: recall by words, never fail a hook
        return None


# ---------------------------------------------------------------------------- candidates


def _now(now: datetime | None) -> datetime:
    return now or datetime.now(UTC)


def _ago(then: datetime | None, now: datetime) -> str:
    """``then`` as an age: "just now", "5 minutes ago", "3 hours ago", "2 days ago"."""
    if then is None:
        return "undated"
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if n > 1 else ''} ago"
    return "just now"


def _one_line(text: str, cap: int = ITEM_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= cap else line[: cap - 1].rstrip() + "…"


def project_sessions(
    store: SqlStore, project: str, exclude: Iterable[str], limit: int = MEMORY_SESSIONS
) -> list[Any]:
    """The project's newest sessions (``store.filter_sessions``), at most ``limit``, none of
    ``exclude``."""
    skip = {k for k in exclude if k}
    found, _more = store.filter_sessions(projects=(project,), limit=limit + len(skip))
    return [s for s in found if s.key not in skip and same_project(s.project, project)][:limit]


def same_project(folder: str | None, project: str) -> bool:
    """Whether a session of ``folder`` is of ``project`` itself (trailing slashes aside), not
    of a folder inside it: recall at the point of action speaks of *this* project (fresh-user
    review: a session started in ``/home`` was handed every project's rows under it)."""
    return folder is not None and folder.rstrip("/") == project.rstrip("/")


def _memories(store: SqlStore, sessions: Sequence[Any], now: datetime) -> list[_Item]:
    items: list[_Item] = []
    seen: set[str] = set()
    for s in sessions:
        for m in store.memories_from(s.key, limit=MEMORIES_PER_SESSION):
            if m.type in RECALLED_TYPES and m.content_hash not in seen:
                seen.add(m.content_hash)
                items.append(_memory_item(m, now))
    return items


def _memory_item(m: Memory, now: datetime) -> _Item:
    text = redact(m.content)  # stored redacted; redacted again by today's rules
    line = (
        f"- [{m.type}] {_one_line(text)} (remembered in session {m.source_id}, "
        f"{_ago(m.created_at, now)})"
    )
    return _Item(line, text[:CANDIDATE_CHARS], (m.source_id or "", -1), True)


def _row_item(key: str, entry: Entry, now: datetime, text: str | None = None) -> _Item:
    body = redact(entry_body(entry))[:CANDIDATE_CHARS] if text is None else text
    role = getattr(entry.role, "value", str(entry.role))
    line = (
        f"- session {key} row {entry.seq} ({role}, {_ago(entry.timestamp, now)}): {_one_line(body)}"
    )
    return _Item(line, body, (key, entry.seq), False)


def _search_rows(
    store: SqlStore,
    query: str,
    project: str,
    settings: RetrievalSettings,
    now: datetime,
    limit: int,
) -> list[tuple[str, Entry]]:
    """The project's rows ranked best for ``query`` by ``hybrid.hybrid_entries`` (words and
    meaning fused; words only without an embedder): the candidates the rule then judges."""
    from continuity.retrieval.hybrid import hybrid_entries

    found = hybrid_entries(
        store,
        query,
        limit=limit,
        filters=EntryFilter(projects=(project,)),
        project=project,
        now=now,
        settings=settings,
    )
    return [(h.session_key, h.entry) for h in found if h.entry is not None]


def _score(items: list[_Item], prompt: str, embedder: Embedder | None) -> None:
    words = content_words(prompt)
    for item in items:
        item.shared = len(words & content_words(item.text))
    if embedder is None or not items:
        return
    vectors = _vectors(embedder, [prompt[:CANDIDATE_CHARS]] + [i.text for i in items])
    cosines = vectors[1:] @ vectors[0]
    for item, cos in zip(items, cosines, strict=True):
        item.cos = float(cos)


def render(items: Sequence[_Item], budget: int, told: Collection[str] = ()) -> AtAction:
    """The recall text of ``items`` (in order) within ``budget`` characters (module
    docstring), leaving out the lines in ``told`` (given to the session before: never the
    same item twice); ``NOTHING`` when none is left or fits."""
    head = RECALL_HEADING + FRAMING + "\n"
    lines: list[str] = []
    rows: list[tuple[str, int]] = []
    used = len(head)
    texts: set[str] = set()
    for item in items:
        if item.line in lines or item.line in told or item.text in texts:
            continue  # the same text twice (a copied session file) is told once
        texts.add(item.text)
        if used + len(item.line) + 1 > budget:
            continue
        lines.append(item.line)
        rows.append(item.source)
        used += len(item.line) + 1
    if not lines:
        return NOTHING
    text = head + "\n".join(lines)
    return AtAction(text, rows, len(text), lines)


# ---------------------------------------------------------------------------- prompt


def recall_for_prompt(
    store: SqlStore,
    prompt: str,
    *,
    session_key: str,
    project: str | None,
    settings: RetrievalSettings,
    now: datetime | None = None,
    told: Collection[str] = (),
) -> AtAction:
    """The decisions and rows of the project's other sessions relevant to ``prompt`` (module
    docstring), at most ``settings.at_action_chars`` characters, none of the lines in ``told``
    (``AtAction.lines`` given to this session before); ``NOTHING`` (text "") when
    nothing clears the relevance rule, the prompt is trivial, ``settings.at_action`` is off or
    ``project`` is None."""
    if not settings.at_action or not project or is_trivial(prompt):
        return NOTHING
    at = _now(now)
    sessions = project_sessions(store, project, [session_key])
    if not sessions:
        return NOTHING
    items = _memories(store, sessions, at)
    found = _search_rows(store, prompt, project, settings, at, ROW_CANDIDATES)
    of = store.sessions_by_key([key for key, _ in found])
    for key, entry in found:
        if key != session_key and key in of and same_project(of[key].project, project):
            items.append(_row_item(key, entry, at))
    embedder = _embedder(settings)
    _score(items, prompt, embedder)
    words = len(content_words(prompt))
    raise_by = settings.at_action_min_score
    kept = [
        i
        for i in items
        if clears(
            None if embedder is None else i.cos,
            i.shared,
            words,
            raise_by=raise_by,
            row=not i.memory,
        )
    ]
    kept.sort(key=lambda i: (not i.memory, -i.cos, -i.shared))
    return render(kept, settings.at_action_chars, told)


# ---------------------------------------------------------------------------- tools


def recall_for_tool(
    store: SqlStore,
    tool: str,
    arguments: dict[str, Any],
    *,
    session_key: str,
    project: str | None,
    settings: RetrievalSettings,
    now: datetime | None = None,
    told: Collection[str] = (),
) -> AtAction:
    """What the project's other sessions knew before ``tool`` runs with ``arguments`` (module
    docstring): for an edit, the decisions and rows naming the file; for a shell command, its
    last working invocation elsewhere; none of the lines in ``told``. ``NOTHING`` for any
    other tool, when nothing (new) is found,
    when ``settings.at_action`` is off or ``project`` is None."""
    if not settings.at_action or not project or not isinstance(arguments, dict):
        return NOTHING
    at = _now(now)
    files = edited_files(tool, arguments)
    if files:
        return render(
            _file_items(store, files, session_key, project, at), settings.at_action_chars, told
        )
    command = shell_command(tool, arguments)
    if command:
        return render(
            _command_items(store, command, session_key, project, at), settings.at_action_chars, told
        )
    return NOTHING


def _names(path: str, project: str) -> list[str]:
    """How rows may name ``path``: relative to ``project`` when inside it, and its file name."""
    import os

    names = []
    if os.path.isabs(path):
        rel = os.path.relpath(path, project)
        if not rel.startswith(".."):
            names.append(rel)
    else:
        names.append(path.lstrip("./") or path)
    base = os.path.basename(path.rstrip("/"))
    if base and base not in names:
        names.append(base)
    return [n for n in names if len(n) >= 3]


def _mentions(text: str, names: Sequence[str]) -> bool:
    return any(
        re.search(r"(?<![\w./-])(?:[\w.-]*/)*" + re.escape(n) + r"(?![\w-])", text) for n in names
    )


def _file_items(
    store: SqlStore, files: Sequence[str], session_key: str, project: str, now: datetime
) -> list[_Item]:
    sessions = project_sessions(store, project, [session_key])
    if not sessions:
        return []
    names = [n for f in files for n in _names(f, project)]
    items = [m for m in _memories(store, sessions, now) if _mentions(m.text, names)]
    others = {s.key for s in sessions}
    terms = list(dict.fromkeys(t for n in names for t in query_terms(n)))
    rows: list[_Item] = []
    for hit in store.search_entries(
        terms, limit=ROW_CANDIDATES * 2, filters=EntryFilter(projects=(project,))
    ):
        entry = hit.entry
        if (
            entry is None
            or hit.session_key not in others
            or getattr(entry.role, "value", "") == "tool"
        ):
            continue  # a tool's output (an ``ls``, a ``grep``) names files it did not change
        body = redact(entry_body(entry))[:CANDIDATE_CHARS]
        if _mentions(body, names):
            rows.append(_row_item(hit.session_key, entry, now, body))
    newest = {s.key: n for n, s in enumerate(sessions)}  # filter_sessions: newest first
    rows.sort(key=lambda i: (newest[i.source[0]], -i.source[1]))
    return items + rows[:FILE_ROWS]


def _sortable(value: datetime | None) -> datetime:
    if value is None:
        return datetime.min.replace(tzinfo=UTC)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _command_items(
    store: SqlStore, command: str, session_key: str, project: str, now: datetime
) -> list[_Item]:
    key = command_key(command)
    if key is None:
        return []
    others = {s.key for s in project_sessions(store, project, [session_key])}
    program = key.split()[0]
    hits = store.search_entries(
        query_terms(program) or [program.lower()],
        limit=ROW_CANDIDATES * 3,
        filters=EntryFilter(projects=(project,)),
    )
    best: tuple[datetime, int, str, Entry, str] | None = None
    sessions_read: set[str] = set()
    for hit in hits:
        if (
            hit.session_key not in others
            or hit.entry is None
            or getattr(hit.entry.role, "value", "") == "tool"
        ):
            continue
        if hit.session_key not in sessions_read and len(sessions_read) >= COMMAND_SESSIONS:
            continue
        sessions_read.add(hit.session_key)
        rows = store.entries(hit.session_key, after_seq=hit.seq - 1, limit=RESULT_WINDOW)
        for seq, found in working_runs(rows):
            if seq != hit.seq or command_key(found) != key:
                continue
            at = _sortable(hit.entry.timestamp)
            if best is None or (at, seq) > (best[0], best[1]):
                best = (at, seq, hit.session_key, hit.entry, found)
    if best is None or " ".join(best[4].split()) == " ".join(command.split()):
        return []
    _at, seq, key_found, entry, found = best
    shown = _one_line(redact(found))
    line = (
        f"- `{key}` last worked (exit 0) in session {key_found} row {seq} "
        f"({_ago(entry.timestamp, now)}): `{shown}`"
    )
    return [_Item(line, shown, (key_found, seq), False)]


def warm_up(store: SqlStore, settings: RetrievalSettings) -> bool:
    """Load the embedder and read the rows' vector index once (``index.shared_index``), so
    that the first prompt's recall is as fast as the next ones (a hook waits 3 s at most;
    the daemon calls this in the background at start). False when recall is off or there is
    no embedder (words only: nothing to load)."""
    if not settings.at_action:
        return False
    embedder = _embedder(settings)
    if embedder is None:
        return False
    from continuity.retrieval.index import shared_index

    embedder.encode(["warm up"])
    shared_index(store, embedder.model_id, "entries")
    return True
