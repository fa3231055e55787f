"""What a next session is told, measured against hand-written facts (issue 39, item 5).

Run from the project root:  .venv/bin/python bench/brief.py [DATA] [--json] [--misses]

DATA is a folder of session files (default ``../shared/data`` beside the checkout, else its
copy ``tests/fixtures/samples``; ``examples/sessions`` works too). Everything is imported
into a throwaway SQLite workspace in a temp folder (``archive.ingest``: the import, the
checkpoint replay and the transcripts, as ``continuity import`` does). The facts come from
``bench/fixtures/brief_facts.json``, written by hand once from reading each session: for each
session with a request, its last request, its last outcome, the files it changed, an
unresolved error and a decision it made, each a list of needles (case-insensitive
substrings; any one present counts the fact present). Sessions of the fixture that DATA does
not hold are left out and counted.

For each fixture session, as if it were the newest session of its project and a new session
of that project started, three texts are measured:

- **(a) today's digest**: ``checkpoints.recover(store, session_key=KEY, config=...)``, the
  session's newest checkpoint rendered within ``recoveryBudgetChars`` (default 2,000). With a
  session key no age limit applies, which is the window made "any" (today's 4 h window would
  give an imported session nothing at all); the text is what the hooks inject today.
- **(b) the continuation after ``compact``**: ``continuation.compaction.compact_now`` with the
  CLI's summarizer (``summarizer.provider``, default extractive) and the default follow-up
  budget (240,000 bytes; a view within it is not compacted, as ``continuity compact`` says
  "not needed"), then ``build_continuation``: its summary, gap notice, request and kept rows
  (tool calls with their arguments, tool results) as one text.
- **(c) the new brief**: ``continuity.brief.build_brief`` (issue 39, interface 3) for the
  session's project, with the project's sessions newer than it excluded, ``now`` an hour after
  its last activity and the window "any" when the setting exists; the reach is Claude Code's
  with the MCP server registered (``mcp__continuity__search`` ...), no CLI. Where
  ``continuity.brief`` is not importable (before part B is merged) one line says so.

(a) and (c) run before (b): ``compact`` writes a checkpoint row the brief would read.

Printed per kind of fact and overall: facts present / facts, %, the share of last requests
present, and the texts' sizes in characters (median, max), the three side by side, then the
goal: at least 90 % of the facts at 2,000 characters and 100 % of last requests (issue 39).
``--json`` prints the figures as JSON instead; ``--misses`` lists every fact a text lacks.
Progress goes to stderr; the figures also go to ``bench/results/brief.json`` (git-ignored).
``run(data)`` returns them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # bench the working tree
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "brief_facts.json"
RESULTS = Path(__file__).resolve().parent / "results" / "brief.json"
PUBLISHED = ROOT.parent / "shared" / "data"
SAMPLES = ROOT / "tests" / "fixtures" / "samples"

from continuity.archive.ingest import ingest  # noqa: E402
from continuity.checkpoints.capture import CheckpointConfig, normalize_project  # noqa: E402
from continuity.checkpoints.recovery import recover  # noqa: E402
from continuity.continuation.compaction import compact_now  # noqa: E402
from continuity.continuation.summarize import make_summarizer  # noqa: E402
from continuity.continuation.summarize.settings import load_settings  # noqa: E402
from continuity.continuation.view import ContinuationView, build_continuation  # noqa: E402
from continuity.formats.importer import discover  # noqa: E402
from continuity.store import open_store  # noqa: E402

KINDS = ("last_request", "outcome", "file_changed", "error", "decision")
COLUMNS = ("digest", "continuation", "brief")
LABELS = {"digest": "(a) digest", "continuation": "(b) continuation", "brief": "(c) brief"}
GOAL_SHARE = 0.90
GOAL_CHARS = 2_000
GOAL = "goal: ≥ 90 % of facts at 2,000 characters, 100 % of last requests"
#: the reach of a Claude Code session whose MCP server is registered (issue 39 item 4)
MCP_NAMES = {
    tool: f"mcp__continuity__{tool}"
    for tool in ("search", "show", "recall", "continuation", "remember")
}


EPILOG = """\
For each session of bench/fixtures/brief_facts.json that DATA holds, as the newest session of
its project, imported into a throwaway SQLite workspace:
  (a) digest        checkpoints.recover(session_key=KEY): the session's newest checkpoint,
                    any age, within recoveryBudgetChars (2,000): what is injected today
  (b) continuation  compact_now (default summarizer and budget, 240,000 bytes), then
                    build_continuation: summary + request + kept rows
  (c) brief         continuity.brief.build_brief for the project, newer sessions excluded
                    (one line says when this checkout has no continuity.brief)
A fact is present when any of its needles occurs in the text (case-insensitive).
Printed: facts present / facts and % per kind and overall, last requests present, text
sizes in characters (median, max); goal: >= 90 % of facts at 2,000 characters, 100 % of
last requests. Progress goes to stderr."""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def default_data() -> Path:
    """``../shared/data`` beside the checkout when present, else its copy in the tests."""
    return PUBLISHED if PUBLISHED.is_dir() else SAMPLES


# ---------------------------------------------------------------------------- the fixture


def load_fixture(path: Path = FIXTURE) -> dict[str, Any]:
    """The fixture: ``{"sessions": {key: {"source", "project", "facts": [{"kind",
    "any_of", "note"?}]}}, "skipped": [...]}``."""
    return json.loads(path.read_text(encoding="utf-8"))


def fixture_problems(fixture: dict[str, Any]) -> list[str]:
    """What makes the fixture unusable, one line each (empty when it is well-formed): a fact of
    an unknown kind, a fact without needles or with an empty one, a session without exactly
    one ``last_request`` fact, or without a source."""
    problems = []
    for key, s in fixture["sessions"].items():
        if not s.get("source"):
            problems.append(f"{key}: no source")
        facts = s.get("facts") or []
        if sum(f.get("kind") == "last_request" for f in facts) != 1:
            problems.append(f"{key}: needs exactly one last_request fact")
        for i, f in enumerate(facts):
            if f.get("kind") not in KINDS:
                problems.append(f"{key} fact {i}: unknown kind {f.get('kind')!r}")
            needles = f.get("any_of")
            if (
                not isinstance(needles, list)
                or not needles
                or not all(isinstance(n, str) and n.strip() for n in needles)
            ):
                problems.append(f"{key} fact {i}: any_of must be non-empty strings")
    return problems


def present(fact: dict[str, Any], text: str) -> bool:
    """Whether any of the fact's needles occurs in ``text`` (case-insensitive)."""
    low = text.casefold()
    return any(n.casefold() in low for n in fact["any_of"])


# ---------------------------------------------------------------------------- the texts


def continuation_text(view: ContinuationView) -> str:
    """The continuation as one text, in reading order: summary, gap notice, the rows kept
    before the request, the request, the rows after it, notes. A tool call is its name and
    arguments, a tool result its text; a refusal is its reason and detail."""
    if view.refusal:
        return f"refused: {view.refusal.get('reason')} {view.refusal.get('detail')}"
    parts: list[str] = []
    if view.summary:
        parts.append(view.summary["text"])
    if view.notice:
        parts.append(view.notice)
    before, after = view.before_request()
    parts.extend(_message_text(m) for m in before)
    if view.request:
        parts.append(view.request["text"])
    parts.extend(_message_text(m) for m in after)
    parts.extend(view.notes)
    return "\n".join(p for p in parts if p)


def _message_text(message: dict[str, Any]) -> str:
    out = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "tool_call":
            args = block.get("arguments")
            out.append(
                f"{block.get('name')} "
                f"{args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)}"
            )
        elif kind == "media":
            out.append(f"[{block.get('media_type')} {block.get('bytes')} B]")
        else:
            out.append(str(block.get("text") or ""))
    return "\n".join(out)


def brief_builder() -> Callable[..., Any] | None:
    """``(build_brief, Reach)`` from ``continuity.brief`` when this checkout has it, else None."""
    try:
        from continuity.brief import Reach, build_brief
    except ImportError:
        return None
    return lambda *a, **k: build_brief(*a, reach=Reach(mcp=dict(MCP_NAMES), cli=None), **k)


def bench_config() -> CheckpointConfig:
    """The default settings, with the recovery window "any" where the setting exists (issue 39
    item 1 makes it a setting in days; older checkouts have the 4 h window only, which a
    session-keyed digest does not use)."""
    fields = CheckpointConfig.model_fields
    return CheckpointConfig(
        **({"recovery_window_days": "any"} if "recovery_window_days" in fields else {})
    )


def _last_active(s: Any) -> datetime:
    when = s.ended_at or s.started_at or datetime(1970, 1, 1, tzinfo=UTC)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def newer_sessions(sessions: Iterable[Any], key: str) -> list[str]:
    """Keys of the sessions of ``key``'s project (normalized) active after it: what is
    excluded so that ``key`` is the project's newest session."""
    sessions = list(sessions)
    this = next(s for s in sessions if s.key == key)
    project = normalize_project(this.project)
    mark = (_last_active(this), this.key)
    return [
        s.key
        for s in sessions
        if s.key != key
        and normalize_project(s.project) == project
        and (_last_active(s), s.key) > mark
    ]


# ---------------------------------------------------------------------------- measuring


@dataclass
class Column:
    """One text kind's results: per session its text length (characters) and the facts it
    lacks."""

    sizes: dict[str, int] = field(default_factory=dict)
    found: dict[str, list[bool]] = field(default_factory=dict)


def measure(
    data: Path, fixture: dict[str, Any], *, keys: Iterable[str] | None = None
) -> dict[str, Any]:
    """Import ``data`` into a temp workspace and measure the three texts for each fixture
    session it holds (module docstring). Returns the figures (``figures``'s shape plus the
    per-session detail)."""
    config = bench_config()
    build = brief_builder()
    wanted = set(keys) if keys is not None else None
    with tempfile.TemporaryDirectory(prefix="continuity-bench-brief-") as tmp:
        files = discover([data], home=tmp)
        log(f"importing {len(files)} files from {data}")
        with open_store(f"sqlite:///{Path(tmp) / 'bench.db'}") as store:
            result = ingest(store, files, config=config, home=tmp)
            log(
                f"{len(result.report.files)} files, {result.checkpoints_replayed} checkpoints "
                "replayed"
            )
            all_sessions = store.list_sessions(limit=0)
            stored = {s.key for s in all_sessions}
            chosen = {
                k: v
                for k, v in fixture["sessions"].items()
                if k in stored and (wanted is None or k in wanted)
            }
            absent = sorted(
                k
                for k in fixture["sessions"]
                if k not in stored and (wanted is None or k in wanted)
            )
            cols = {c: Column() for c in COLUMNS}
            no_checkpoint = 0
            for i, (key, s) in enumerate(chosen.items()):
                log(f"[{i + 1}/{len(chosen)}] {key}: digest" + (", brief" if build else ""))
                rec = recover(store, session_key=key, config=config)
                no_checkpoint += rec.checkpoint is None
                _score(cols["digest"], key, s["facts"], rec.text)
                if build is not None:
                    session = next(x for x in all_sessions if x.key == key)
                    brief = build(
                        store,
                        project=session.project or "",
                        config=config,
                        exclude=newer_sessions(all_sessions, key),
                        now=_last_active(session) + timedelta(hours=1),
                    )
                    _score(cols["brief"], key, s["facts"], brief.text)
            settings = load_settings(tmp)
            summarizer = make_summarizer(settings)
            outcomes: dict[str, int] = {}
            for i, (key, s) in enumerate(chosen.items()):
                log(f"[{i + 1}/{len(chosen)}] {key}: compact + continuation")
                outcome = compact_now(store, key, summarizer=summarizer, timeout=settings.timeout)
                status = (
                    "compacted"
                    if outcome.entry is not None
                    else "refused"
                    if outcome.receipt is not None
                    else "not needed"
                )
                outcomes[status] = outcomes.get(status, 0) + 1
                view = build_continuation(store, key)
                _score(cols["continuation"], key, s["facts"], continuation_text(view))
    out = figures(chosen, cols if build else {c: cols[c] for c in COLUMNS if c != "brief"})
    out.update(
        {
            "data": str(data),
            "fixture": str(FIXTURE),
            "fixture_sessions": len(fixture["sessions"]),
            "fixture_facts": sum(len(s["facts"]) for s in fixture["sessions"].values()),
            "fixture_skipped": len(fixture.get("skipped", [])),
            "sessions_absent_from_data": absent,
            "digest_without_checkpoint": no_checkpoint,
            "compact_outcomes": outcomes,
            "summarizer": getattr(settings.provider, "value", settings.provider),
            "budgets": {
                "recovery_budget_chars": config.recovery_budget_chars,
                "follow_up_budget_bytes": config.follow_up_budget_bytes,
            },
            "brief_available": build is not None,
            "goal": GOAL,
        }
    )
    out["misses"] = {
        c: {
            k: [f for f, ok in zip(chosen[k]["facts"], found, strict=True) if not ok]
            for k, found in cols[c].found.items()
            if not all(found)
        }
        for c in COLUMNS
        if c in out["columns"]
    }
    return out


def _score(col: Column, key: str, facts: list[dict[str, Any]], text: str) -> None:
    col.sizes[key] = len(text)
    col.found[key] = [present(f, text) for f in facts]


def figures(sessions: dict[str, Any], cols: dict[str, Column]) -> dict[str, Any]:
    """Per column: per kind ``{"present", "total", "share"}``, ``all``, ``last_requests``
    (the same for the last_request facts), ``chars`` (median, max) and whether the goal is met
    (``share`` >= 0.9, every last request, every text within 2,000 characters)."""
    out: dict[str, Any] = {
        "sessions": len(sessions),
        "facts": sum(len(s["facts"]) for s in sessions.values()),
        "columns": {},
    }
    for name, col in cols.items():
        per_kind: dict[str, dict[str, Any]] = {}
        for kind in KINDS:
            hits = [
                ok
                for key, s in sessions.items()
                for f, ok in zip(s["facts"], col.found[key], strict=True)
                if f["kind"] == kind
            ]
            per_kind[kind] = _share(sum(hits), len(hits))
        every = [ok for key in sessions for ok in col.found[key]]
        sizes = list(col.sizes.values())
        entry = {
            "kinds": per_kind,
            "all": _share(sum(every), len(every)),
            "last_requests": per_kind["last_request"],
            "chars": {
                "median": statistics.median(sizes) if sizes else 0,
                "max": max(sizes, default=0),
            },
        }
        entry["goal_met"] = (
            bool(every)
            and entry["all"]["share"] >= GOAL_SHARE
            and entry["last_requests"]["share"] == 1.0
            and entry["chars"]["max"] <= GOAL_CHARS
        )
        out["columns"][name] = entry
    return out


def _share(hits: int, total: int) -> dict[str, Any]:
    return {"present": hits, "total": total, "share": hits / total if total else None}


# ---------------------------------------------------------------------------- printing


def _cell(x: dict[str, Any]) -> str:
    if not x["total"]:
        return "—"
    return f"{x['present']}/{x['total']} {x['share'] * 100:5.1f} %"


def print_figures(f: dict[str, Any], misses: bool = False) -> None:
    """The table (module docstring)."""
    cols = list(f["columns"])
    print(
        f"issue 39 item 5: facts a next session must be told ({Path(f['fixture']).name}: "
        f"{f['fixture_sessions']} sessions, {f['fixture_facts']} facts; "
        f"{f['fixture_skipped']} sessions without a request skipped)"
    )
    print(
        f"data {f['data']}: {f['sessions']} fixture sessions measured, {f['facts']} facts"
        + (
            f"; {len(f['sessions_absent_from_data'])} fixture sessions not in this data"
            if f["sessions_absent_from_data"]
            else ""
        )
    )
    print(
        f"  (a) today's digest: recover(session_key=KEY), the session's newest checkpoint at "
        f'any age (the window made "any"), within {f["budgets"]["recovery_budget_chars"]:,}'
        f" characters; {f['digest_without_checkpoint']} sessions without a checkpoint"
    )
    print(
        f"  (b) the continuation after compact: compact_now ({f['summarizer'] or 'default'} "
        f"summarizer, {f['budgets']['follow_up_budget_bytes']:,} bytes) then "
        f"build_continuation, summary + request + kept rows; "
        + ", ".join(f"{n} {s}" for s, n in sorted(f["compact_outcomes"].items()))
    )
    if f["brief_available"]:
        print(
            "  (c) the new brief: build_brief(project), the session the project's newest "
            "(newer ones excluded), now = its last activity + 1 h, window any"
        )
    else:
        print(
            "  (c) the new brief: not available on this checkout (continuity.brief is not "
            "importable; part B of issue 39 adds it)"
        )
    width = 22
    print()
    print(f"  {'kind':<14}" + "".join(f"{LABELS[c]:>{width}}" for c in cols))
    for kind in KINDS:
        print(
            f"  {kind:<14}"
            + "".join(f"{_cell(f['columns'][c]['kinds'][kind]):>{width}}" for c in cols)
        )
    print(
        f"  {'all facts':<14}" + "".join(f"{_cell(f['columns'][c]['all']):>{width}}" for c in cols)
    )
    print(
        f"  {'last requests':<14}"
        + "".join(f"{_cell(f['columns'][c]['last_requests']):>{width}}" for c in cols)
    )
    print(
        f"  {'chars median':<14}"
        + "".join(f"{f['columns'][c]['chars']['median']:>{width},.0f}" for c in cols)
    )
    print(
        f"  {'chars max':<14}"
        + "".join(f"{f['columns'][c]['chars']['max']:>{width},}" for c in cols)
    )
    print(
        f"  {'goal met':<14}"
        + "".join(f"{'met' if f['columns'][c]['goal_met'] else 'NOT met':>{width}}" for c in cols)
    )
    print(GOAL)
    if misses:
        for c in cols:
            print(f"\nmissing from {LABELS[c]}:")
            for key, facts in f["misses"][c].items():
                for fact in facts:
                    print(f"  {key}  {fact['kind']:<12} {fact['any_of']}")


def run(
    data: Path | None = None, *, keys: Iterable[str] | None = None, fixture_path: Path = FIXTURE
) -> dict[str, Any]:
    """Measure on ``data`` (default ``default_data()``), the fixture sessions in ``keys`` only
    when given. Raises ``ValueError`` when the fixture is malformed."""
    fixture = load_fixture(fixture_path)
    problems = fixture_problems(fixture)
    if problems:
        raise ValueError("bad fixture: " + "; ".join(problems))
    return measure(data or default_data(), fixture, keys=keys)


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Share of hand-written facts (last request, outcome, files changed, "
        "unresolved error, decision; bench/fixtures/brief_facts.json) present in what a next "
        "session is told: (a) today's recovery digest, (b) the continuation after compact, "
        "(c) the new project brief (issue 39), with the texts' sizes in characters.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EPILOG,
    )
    parser.add_argument(
        "data",
        nargs="?",
        type=Path,
        default=None,
        help=f"folder of session files (default {default_data()})",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--misses", action="store_true", help="also list every fact each text lacks"
    )
    parser.add_argument(
        "--session",
        action="append",
        default=None,
        metavar="KEY",
        help="measure only this fixture session (repeatable)",
    )
    args = parser.parse_args()
    if args.data is not None and not args.data.is_dir():
        parser.error(f"not a folder: {args.data}")
    unknown = sorted(set(args.session or ()) - set(load_fixture()["sessions"]))
    if unknown:
        parser.error(f"not a session of {FIXTURE.name}: {', '.join(unknown)}")
    f = run(args.data, keys=args.session)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(f, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(f, indent=2, ensure_ascii=False))
    else:
        print_figures(f, misses=args.misses)


if __name__ == "__main__":
    main()
