"""The MEMORY.md projection (seed 000): a programmatic, deterministic, rebuildable view of the
lineage for an agent that loads it whole at session start.

**Sections**, always all six, in the seed's order, each a ``##`` heading, a blank line, one-line
rows (or a placeholder row saying why there are none) and a blank line:

1. ``## Global Head (Tier 1)``: durable facts and decisions (memory rows of any type but the
   note types, ``NOTE_TYPES``): importance, then newest, then id; at most 8.
2. ``## Thread Heads (Tier 2)``: thread heads, newest first; at most 12. Each shows its
   newest session's digest (issue 39, ``temporal_dag.session_digest``: asked, outcome,
   files changed, decision, unresolved error), else its memory sentence.
3. ``## Session Ledger (Last 30 Days)``: from artifact frontmatter in ``memory/``. Per
   session token the representative artifact is the highest kind (summary > compaction >
   transcript; ties: later time, then name) in the window; its time is ``ended_at``, else
   ``captured_at``. A session is listed when that time is not in the future and at most
   ``30 x 86,400,000`` ms before ``now`` and the representative has a memory sentence (one that
   fails the gate is replaced by ``lineage.generic_sentence``), followed by the session's
   outcome, decision and unresolved error from its DAG node (issue 39). Newest first under
   ``### YYYY-MM-DD`` (UTC) headings; each row links the artifacts that exist. No text of an
   artifact that fails verification (either hash, ``lineage.read_artifact``) is used: its
   row is built from the session's node in the database (sentence, time, project) when there
   is one, else from the next verified artifact with a sentence, else left out; the section
   closes with a note counting both cases.
4. ``## Open Threads``: thread heads whose latest session left work open, newest first; at
   most 8.
5. ``## Durable Notes & Constraints``: memories of ``NOTE_TYPES`` (constraints, preferences,
   notes, rules), by importance; at most 12. Its own source, so it never repeats section 1
   (origin defect: both showed the same rows).
6. ``## Temporal Index``: session and compaction nodes of the temporal DAG, newest first, with
   their ``continues`` / ``compacted_into`` / ``mentions`` edges; at most 20.

**One line per value.** Every value from the store or the artifacts (keys, projects, labels,
memory texts, sentences) is flattened by ``lineage.one_line`` and every row starts with ``- ``,
so no value can start a line, add a heading or a row: the file always has exactly the six
``## `` headings.

Scratch sessions (``lineage.is_noise``) are left out everywhere, and the header names the
projects under a temp folder so left out (issue 45 item 8: never silently); ``project``
narrows every section to one project (memories without a source session stay: they belong
to no project), and a project asked for by name is rendered even under a temp folder.

**Budget** (``[memory_md]``: ``max_bytes`` default 25,000 UTF-8 bytes and ``max_lines`` default
200, the limits Claude Code applies to its own MEMORY.md): when the document is over either, rows
are dropped least important first (Temporal Index rows beyond its newest ``INDEX_KEPT``, oldest
first; ledger rows, oldest first; the newest Temporal Index rows; thread heads beyond the newest
three; notes; global head; open threads; the newest three thread heads) and each section that
lost rows says how many and why in a closing ``- …`` row; rows over a section's limit are
counted the same way. Headings are never dropped.

**Determinism**: the text is a function of the store, the artifacts and the UTC day of ``now``
(no generation time is written), so the same state renders byte-identical files and deleting
MEMORY.md and rendering again gives the same file. ``write`` replaces the file atomically and
only when its bytes change.

Over 600 lines: the MEMORY.md projection is one deterministic document; its sections, ranking
and budget are computed together so the projection is rebuildable byte for byte.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from continuity.core.config import load_section, resolve_home
from continuity.core.errors import InputError
from continuity.core.private import private_dir
from continuity.core.text import utf8_len
from continuity.lineage import artifacts as ln, sentence as sn
from continuity.transcripts.transcript_log import safe_name

if TYPE_CHECKING:
    from continuity.store import SqlStore
    from continuity.store.lineage import DagEdge

FILE_NAME = "MEMORY.md"
#: seed 000: the strict 30-day ledger, in milliseconds.
LEDGER_WINDOW = timedelta(milliseconds=30 * 86_400_000)
NOTE_TYPES = ("constraint", "preference", "note", "rule")
HEAD_ROWS, NOTE_ROWS = 8, 12
ROW_CHARS = 700  # one row is clipped to this many characters
#: The newest Temporal Index rows outrank ledger rows in the budget (origin: never below 2).
INDEX_KEPT = 5
KIND_RANK = {"summary": 3, "compaction": 2, "transcript": 1}
SECTIONS = (
    "Global Head (Tier 1)",
    "Thread Heads (Tier 2)",
    "Session Ledger (Last 30 Days)",
    "Open Threads",
    "Durable Notes & Constraints",
    "Temporal Index",
)


class MemoryMdSettings(BaseModel):
    """The ``[memory_md]`` section of ``config.toml``."""

    model_config = ConfigDict(extra="forbid")

    #: Size budget of MEMORY.md in UTF-8 bytes (Claude Code loads 25 KB of its MEMORY.md).
    max_bytes: int = Field(default=25_000, ge=2_000, le=1_000_000)
    #: Line budget (Claude Code loads the first 200 lines of its MEMORY.md).
    max_lines: int = Field(default=200, ge=40, le=20_000)


def settings(home: Any = None) -> MemoryMdSettings:
    """``[memory_md]`` of the workspace's config (``ConfigError`` names a bad field)."""
    return load_section("memory_md", MemoryMdSettings, home)


def default_path(home: Any = None, project: str | None = None) -> Path:
    """``<workspace>/MEMORY.md``, or ``<workspace>/projects/<safe project>/MEMORY.md`` for one
    project."""
    root = resolve_home(home)
    return (
        root / FILE_NAME if project is None else root / "projects" / safe_name(project) / FILE_NAME
    )


# ---------------------------------------------------------------------------- rows


@dataclass
class Row:
    """One line of a section; ``tier`` is its drop tier (lower goes first), ``day`` its ledger
    day heading."""

    text: str
    tier: int
    day: str | None = None

    def __post_init__(self) -> None:
        self.text = sn.one_line(self.text)  # a row is one line, whatever its values hold
        if not self.text.startswith("- "):
            self.text = "- " + self.text


@dataclass
class Section:
    """A section: heading, intro lines, rows in display order (most important first), the
    row shown when it has none, the noun its notice counts and its row limit."""

    heading: str
    rows: list[Row]
    placeholder: str
    noun: str
    limit: int | None = None
    intro: list[str] = field(default_factory=list)
    unread: int = 0  # rows over the limit that were counted, not read
    notes: list[str] = field(default_factory=list)  # closing ``- …`` lines, never dropped


def _one_line(text: Any, limit: int = ROW_CHARS) -> str:
    return sn.one_line(text, limit)


def _minute(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ") if value else "unknown"


def _base(project: str | None) -> str:
    if not project:
        return "all projects"
    return sn.one_line(project.rstrip("/").rsplit("/", 1)[-1] or project)


def _memory_rows(
    store: SqlStore, agent: str, project: str | None, notes: bool, limit: int
) -> tuple[list[Row], int]:
    """The section's rows (at most ``limit``) and how many more memories it has."""
    kw: dict[str, Any] = {
        "project": project,
        "exclude_prefixes": ln.NOISE_PREFIXES if project is None else (),
    }  # a project asked for is rendered
    kw["types" if notes else "exclude_types"] = NOTE_TYPES
    found = store.ranked_memories(agent, limit=limit, **kw)
    more = (
        max(0, store.count_ranked_memories(agent, **kw) - len(found)) if len(found) == limit else 0
    )
    rows = []
    for m, where in found:
        date = m.created_at.date().isoformat() if m.created_at else "undated"
        if notes:
            rows.append(Row(f"- {_one_line(m.content)} ({m.type}; {_base(where)}, {date})", 4))
        else:
            rows.append(Row(f"- [{m.type}] {_one_line(m.content)} ({_base(where)}, {date})", 5))
    return rows, more


def _noise(scope: str | None, project: str | None, key: str, harness: str | None) -> bool:
    """``lineage.is_noise``, except that the project the render is scoped to (``--project``)
    is never noise: asked for by name, a project under a temp folder is rendered (issue 45
    item 8: it rendered "No thread yet" without a word)."""
    if scope is not None and project == scope:
        return False
    return ln.is_noise(project, key, harness)


def left_out_projects(store: SqlStore, agent: str) -> list[str]:
    """The projects an all-projects render leaves out as scratch work (under a temp folder,
    ``lineage.is_noise``), sorted: said in the header so none is left out silently (issue 45
    item 8)."""
    found = {
        h.project
        for h in store.thread_heads(agent, project=None)
        if h.project and ln.is_noise(h.project, h.session_key, h.harness)
    }
    found |= {
        n.project
        for n in store.dag_nodes(agent, kinds=["session"])
        if n.project and ln.is_noise(n.project, n.session_key or "", n.harness)
    }
    return sorted(found)


def _heads(store: SqlStore, agent: str, project: str | None) -> list[Any]:
    return [
        h
        for h in store.thread_heads(agent, project=project)
        if not _noise(project, h.project, h.session_key, h.harness)
    ]


def _thread_rows(heads: list[Any]) -> list[Row]:
    rows = []
    for i, h in enumerate(heads):
        link = f" {ln.wikilink(h.source_ref, h.source_type)}" if h.source_ref else ""
        rows.append(
            Row(
                _one_line(
                    f"- **{h.label}** ({h.harness}, latest {_minute(h.latest_at)}, "
                    f"session {h.session_key}): {h.sample}"
                )
                + link,
                7 if i < 3 else 3,
            )
        )
    return rows


def _open_rows(heads: list[Any]) -> list[Row]:
    return [
        Row(
            _one_line(
                f"- **{h.label}** ({h.latest_at.date().isoformat()}, session "
                f"{h.session_key}): {'; '.join(h.open_items)}"
            ),
            6,
        )
        for h in heads
        if h.open_items
    ]


def _index_rows(store: SqlStore, agent: str, project: str | None) -> list[Row]:
    nodes = [
        n
        for n in store.dag_nodes(agent, kinds=["session", "compaction"], project=project)
        if not _noise(project, n.project, n.session_key or "", n.harness)
    ]
    labels = {n.node_id: n.label for n in store.dag_nodes(agent, kinds=["session", "thread"])}
    edges: dict[str, list[DagEdge]] = {}
    for e in store.dag_edges(agent, node_ids=[n.node_id for n in nodes]) if nodes else []:
        edges.setdefault(e.src_id, []).append(e)
    rows = []
    for n in nodes:
        tier = 0 if len(rows) >= INDEX_KEPT else 2
        if n.kind == "compaction":
            m = n.meta
            kind = " (continuation checkpoint)" if m.get("continuation") else ""
            rows.append(
                Row(
                    f"- {_minute(n.latest_at)} · compaction of {n.session_key} at row "
                    f"#{m.get('seq')}, covering rows #0-#{m.get('covers_through_seq')}"
                    f"{kind}",
                    tier,
                )
            )
            continue
        parts = [f"- {_minute(n.latest_at)} · session {n.label} · {_base(n.project)} · {n.harness}"]
        out = edges.get(n.node_id, [])
        parts += [
            f"continues {labels.get(e.dst_id, e.dst_id)}" for e in out if e.kind == "continues"
        ]
        count = sum(1 for e in out if e.kind == "compacted_into")
        if count:
            parts.append(f"{count} compaction{'s' if count > 1 else ''}")
        others = [
            labels.get(e.dst_id, e.dst_id)
            for e in out
            if e.kind == "mentions" and labels.get(e.dst_id) != (n.project or n.label)
        ]
        if others:
            parts.append("mentions " + ", ".join(others))
        rows.append(Row(_one_line(" · ".join(parts)), tier))
    return rows


# ---------------------------------------------------------------------------- the ledger


@dataclass(frozen=True, slots=True)
class _Candidate:
    rank: int
    time: datetime
    path: Path
    fields: dict[str, Any]


def _candidates(
    home: Any, agent: str, skipped: list[tuple[str, str]]
) -> dict[str, list[_Candidate]]:
    folder = ln.memory_dir(home)
    groups: dict[str, list[_Candidate]] = {}
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        parsed = ln.parse_name(path.name)
        if parsed is None or parsed[2] == "manifest":
            continue
        try:
            fields = ln.read_fields(path)
            if (
                fields.get("kind") != parsed[2]
                or ln.session_token(str(fields.get("agent_id")), str(fields.get("session_key")))
                != parsed[1]
            ):
                raise ln.ArtifactCorrupt(f"{path}: identity mismatch with its name")
            when = ln.parse_iso(fields.get("ended_at")) or ln.parse_iso(fields["captured_at"])
        except (ln.ArtifactError, KeyError, ValueError, TypeError) as exc:
            skipped.append((ln.rel_path(path.name), str(exc)))
            continue
        if fields["agent_id"] == agent and when is not None:
            groups.setdefault(parsed[1], []).append(
                _Candidate(KIND_RANK[parsed[2]], when, path, fields)
            )
    return groups


@dataclass
class _Ledger:
    """The ledger's rows as ``(time, session_key, row)`` and what verification changed."""

    picked: list[tuple[datetime, str, Row]] = field(default_factory=list)
    from_db: int = 0  # rows whose artifact failed: built from the session's DAG node
    lost: int = 0  # sessions left out: their artifact failed and nothing verified replaced it

    def notes(self) -> list[str]:
        out = []
        if self.from_db:
            out.append(
                f"- … {self.from_db} of these rows use the sentence stored in the "
                "database: their artifact failed verification (`continuity lineage "
                "SESSION` says why)."
            )
        if self.lost:
            out.append(
                f"- … {self.lost} more session{'s' if self.lost > 1 else ''} left out: "
                "their artifacts failed verification and no stored sentence replaces "
                "them (`continuity lineage SESSION` says why)."
            )
        return out


def _ledger_rows(
    store: SqlStore,
    home: Any,
    agent: str,
    project: str | None,
    now: datetime,
    skipped: list[tuple[str, str]],
) -> _Ledger:
    out = _Ledger()
    outcomes = {
        n.session_key: str(n.meta.get("outcome") or "")
        for n in store.dag_nodes(agent, kinds=["session"])
    }
    for cands in _candidates(home, agent, skipped).values():
        cands.sort(key=lambda c: (c.rank, c.time, c.path.name), reverse=True)
        first = cands[0].fields
        if _noise(project, first.get("project"), first["session_key"], first.get("harness")) or (
            project is not None and first.get("project") != project
        ):
            continue
        failed = False
        for c in cands:
            if not (now - LEDGER_WINDOW <= c.time <= now):
                continue
            try:
                art = ln.read_artifact(c.path)
            except ln.ArtifactError as exc:
                skipped.append((ln.rel_path(c.path.name), str(exc)))
                if not failed:
                    failed = True
                    row = _db_row(store, agent, str(first["session_key"]), project, now)
                    if row is not None:
                        out.picked.append(row)
                        out.from_db += 1
                        break
                continue
            if art.fields.get("memory_sentence"):
                key = str(art.fields["session_key"])
                out.picked.append(
                    (c.time, key, _ledger_row(home, c.time, art, outcomes.get(key, "")))
                )
                break
            if not failed:
                break
        else:
            out.lost += failed
    out.picked.sort(key=lambda p: (p[0], p[1]), reverse=True)
    return out


def _line(when: datetime, key: str, project: str | None, sentence: str, tail: str) -> Row:
    return Row(
        f"- {ln.iso(when)} | session={key} | project={project or 'none'} | {sentence} {tail}",
        1,
        when.date().isoformat(),
    )


def _sentence(
    text: Any, kind: str, project: str | None, harness: str | None, when: datetime
) -> str:
    anchor = sn.choose_anchor(project, "", harness)
    sentence = _one_line(text or "", 400)
    if sn.sentence_problem(sentence, anchor) is not None:  # re-checked at render (seed 000)
        sentence = sn.generic_sentence(kind, anchor, harness, when.date().isoformat())
    return sentence


def _ledger_row(home: Any, when: datetime, art: ln.Artifact, outcome: str = "") -> Row:
    """A ledger row: the artifact's memory sentence, then (issue 39) the session's outcome,
    decision and unresolved error from its DAG node (``temporal_dag.session_digest``)."""
    f = art.fields
    sentence = _sentence(f["memory_sentence"], art.kind, f.get("project"), f.get("harness"), when)
    if outcome:
        sentence = f"{sentence} {_one_line(outcome[:1].upper() + outcome[1:], 400)}"
    links = [ln.wikilink(art.rel, art.kind)]
    root = resolve_home(home)
    for link in f.get("links") or []:
        target = str(link)[2:].split("|", 1)[0]
        if str(link).startswith("[[") and (root / target).is_file():
            links.append(str(link))
    return _line(when, str(f["session_key"]), f.get("project"), sentence, " ".join(links))


def _db_row(
    store: SqlStore, agent: str, key: str, project: str | None, now: datetime
) -> tuple[datetime, str, Row] | None:
    """The ledger row of a session whose artifact failed verification, from its DAG node
    (sentence, time, project, harness); None when there is none or it is out of scope."""
    node = store.dag_node(ln.session_node_id(agent, key))
    if (
        node is None
        or node.kind != "session"
        or node.agent_id != agent
        or not node.content
        or node.latest_at is None
    ):
        return None
    when = ln.utc(node.latest_at)
    if (
        not (now - LEDGER_WINDOW <= when <= now)
        or _noise(project, node.project, key, node.harness)
        or (project is not None and node.project != project)
    ):
        return None
    sentence = _sentence(node.content, "summary", node.project, node.harness, when)
    return (
        when,
        key,
        _line(
            when,
            key,
            node.project,
            sentence,
            "(from the database: its artifact failed verification)",
        ),
    )


# ---------------------------------------------------------------------------- layout and budget


@dataclass
class RenderResult:
    """A rendered MEMORY.md: ``text``, its size (UTF-8 ``bytes``, ``lines``), per section
    ``{shown, total, over_limit, over_budget}``, and artifacts left out of the ledger because
    they failed a check (``skipped``: ``(path, reason)``)."""

    text: str
    bytes: int
    lines: int
    sections: dict[str, dict[str, int]]
    skipped: list[tuple[str, str]]
    #: projects under a temp folder an all-projects render left out (``left_out_projects``)
    left_out: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bytes": self.bytes,
            "lines": self.lines,
            "sections": self.sections,
            "skipped_artifacts": [{"path": p, "reason": r} for p, r in self.skipped],
            "left_out_projects": list(self.left_out),
        }


def _layout(
    header: list[str], sections: Sequence[Section], dropped: set[int], budget: str
) -> tuple[str, dict[str, dict[str, int]]]:
    lines = list(header)
    stats: dict[str, dict[str, int]] = {}
    for s in sections:
        lines += [f"## {s.heading}", "", *s.intro]
        shown = s.rows[: s.limit] if s.limit is not None else s.rows
        kept = [r for r in shown if id(r) not in dropped]
        over_limit = len(s.rows) - len(shown) + s.unread
        over_budget = len(shown) - len(kept)
        day = None
        for r in kept:
            if r.day is not None and r.day != day:
                lines += ([""] if day is not None else []) + [f"### {r.day}"]
                day = r.day
            lines.append(r.text)
        if over_limit or over_budget:
            why = ([f"this section lists at most {s.limit}"] if over_limit else []) + (
                [f"the {budget} budget, least important first"] if over_budget else []
            )
            lines.append(
                f"- … {over_limit + over_budget} more {s.noun} left out ({'; '.join(why)})."
            )
        elif not kept and not s.notes:
            lines.append(s.placeholder)
        lines += s.notes
        lines.append("")
        stats[s.heading] = {
            "shown": len(kept),
            "total": len(s.rows) + s.unread,
            "over_limit": over_limit,
            "over_budget": over_budget,
        }
    return "\n".join(lines).rstrip("\n") + "\n", stats


def fit(
    header: list[str], sections: Sequence[Section], max_bytes: int, max_lines: int
) -> tuple[str, dict[str, dict[str, int]]]:
    """Lay the sections out within ``max_bytes`` (UTF-8) and ``max_lines``, dropping the
    fewest rows in drop order (tier, then from the end of each section's display order)."""
    budget = f"{max_bytes:,}-byte / {max_lines}-line"
    order: list[tuple[int, int, Row]] = []
    for s in sections:
        shown = s.rows[: s.limit] if s.limit is not None else s.rows
        order += [(r.tier, -i, r) for i, r in enumerate(shown)]
    order.sort(key=lambda x: (x[0], x[1]))
    drops = [id(r) for _, _, r in order]

    def attempt(k: int) -> tuple[str, dict[str, dict[str, int]], bool]:
        text, stats = _layout(header, sections, set(drops[:k]), budget)
        return text, stats, utf8_len(text) <= max_bytes and text.count("\n") <= max_lines

    text, stats, ok = attempt(0)
    if ok:
        return text, stats
    lo, hi = 1, len(drops)
    while lo < hi:  # smallest k that fits (a notice row can appear: verified below)
        mid = (lo + hi) // 2
        if attempt(mid)[2]:
            hi = mid
        else:
            lo = mid + 1
    for k in range(lo, len(drops) + 1):
        text, stats, ok = attempt(k)
        if ok:
            break
    return text, stats


def build_sections(
    store: SqlStore,
    home: Any,
    *,
    agent_id: str,
    project: str | None,
    now: datetime,
    skipped: list[tuple[str, str]],
) -> list[Section]:
    """The six sections in the seed's order, rows in display order (module docstring)."""
    heads = _heads(store, agent_id, project)
    ledger = _ledger_rows(store, home, agent_id, project, now, skipped)
    facts, more_facts = _memory_rows(store, agent_id, project, False, HEAD_ROWS)
    notes, more_notes = _memory_rows(store, agent_id, project, True, NOTE_ROWS)
    return [
        Section(
            SECTIONS[0],
            facts,
            "- No durable facts or decisions yet: `continuity consolidate` extracts them "
            "from completed sessions and `continuity remember` adds them.",
            "facts and decisions",
            HEAD_ROWS,
            unread=more_facts,
        ),
        Section(
            SECTIONS[1],
            _thread_rows(heads),
            "- No thread yet: a thread appears when a completed session is consolidated.",
            "thread heads",
            12,
        ),
        Section(
            SECTIONS[2],
            [r for _, _, r in ledger.picked],
            "- No session ended in the last 30 days; older sessions are in the Temporal "
            "Index and in memory/.",
            "ledger rows",
            intro=[
                f"Sessions that ended in the 30 days up to {now.date().isoformat()} "
                "(UTC), newest first, with links to their artifacts.",
                "",
            ],
            notes=ledger.notes(),
        ),
        Section(
            SECTIONS[3],
            _open_rows(heads),
            "- Nothing left open: the latest session of every thread finished its requests.",
            "open threads",
            8,
        ),
        Section(
            SECTIONS[4],
            notes,
            "- No constraints or notes recorded yet.",
            "notes",
            NOTE_ROWS,
            unread=more_notes,
        ),
        Section(
            SECTIONS[5],
            _index_rows(store, agent_id, project),
            "- No session in the temporal DAG yet.",
            "index entries",
            20,
        ),
    ]


def render_memory_md(
    store: SqlStore,
    *,
    home: Any = None,
    project: str | None = None,
    agent_id: str = "default",
    now: datetime | None = None,
    config: MemoryMdSettings | None = None,
) -> RenderResult:
    """Render MEMORY.md (module docstring) as of ``now`` (default: the current time, UTC).
    Raises ``ConfigError`` for bad ``[memory_md]`` settings."""
    config = config or settings(home)
    now = ln.utc(now or datetime.now(UTC))
    project = project.rstrip("/") or project if project else None
    skipped: list[tuple[str, str]] = []
    sections = build_sections(
        store, home, agent_id=agent_id, project=project, now=now, skipped=skipped
    )
    header = [
        "# MEMORY.md",
        "",
        "<!-- Rebuilt by `continuity memory render` from durable memories, thread heads, "
        "the temporal DAG and the artifact frontmatter in memory/. Edits here are lost "
        "on the next rebuild. -->",
        "",
        f"Scope: {('project ' + sn.one_line(project)) if project else 'all projects'} · "
        f"agent {sn.one_line(agent_id)} · as of {now.date().isoformat()} (UTC).",
        "",
    ]
    left_out = [] if project else left_out_projects(store, agent_id)
    if left_out:  # issue 45 item 8: never left out silently
        shown = ", ".join(sn.one_line(p) for p in left_out[:3]) + (
            f" and {len(left_out) - 3} more" if len(left_out) > 3 else ""
        )
        header[-1:-1] = [
            "",
            f"Left out as scratch work (under a temp folder): {shown}; "
            "`continuity memory render --project DIR` renders one.",
        ]
    text, stats = fit(header, sections, config.max_bytes, config.max_lines)
    return RenderResult(
        text, utf8_len(text), text.count("\n"), stats, sorted(set(skipped)), left_out
    )


def write(text: str, path: str | os.PathLike[str], *, create_folders: bool = True) -> bool:
    """Write ``text`` to ``path`` atomically (temp file, fsync, rename) unless the file
    already holds exactly these bytes. True when the file changed. A symlink is written
    through (its target is replaced, the link stays) and an existing file keeps its
    permission bits. ``create_folders=False`` (an explicit ``--output``) refuses a path whose
    folder does not exist rather than making it. Raises ``ValueError`` for empty text and
    ``InputError`` naming ``path`` when it cannot be written there: a folder, a device or
    other non-regular file (never replaced), a path under a file, a read-only place."""
    if not text.strip():
        raise ValueError("MEMORY.md text is empty: refusing to write it")
    given = Path(path)
    target = given.resolve() if given.is_symlink() else given
    if target.is_dir():
        raise InputError(f"{given}: is a folder; give a file path for MEMORY.md")
    if target.exists() and not target.is_file():
        raise InputError(
            f"{given}: is not a regular file (a device, socket or pipe); "
            "MEMORY.md is only written to a regular file"
        )
    parent = target.parent
    if parent.exists() and not parent.is_dir():
        raise InputError(f"{given}: {parent} is a file, not a folder")
    if not create_folders and not parent.exists():
        raise InputError(f"{given}: folder {parent} does not exist")
    try:
        return _write_atomic(target, text.encode("utf-8"))
    except OSError as exc:
        raise InputError(f"{given}: cannot write MEMORY.md there: {exc.strerror or exc}") from None


def _write_atomic(target: Path, data: bytes) -> bool:
    mode = None
    if target.is_file():
        if target.read_bytes() == data:
            return False
        mode = target.stat().st_mode & 0o7777
    private_dir(target.parent)
    fd, tmp = tempfile.mkstemp(prefix=".MEMORY-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:  # a new file stays 0600 (mkstemp), private like the workspace
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True
