"""Property tests of the continuation (spec/continuation.md, "Invariants every implementation must
hold") on generated session logs.

The generator builds realistic logs with the builders: requests and other user rows, assistant
text and thinking, assistant rows with 1-3 parallel calls, tool rows (results together or one per
row, missing = dangling calls, late results, orphan results with unknown ids, duplicated
results, media inside results, occasional 20-60 KB outputs), user rows that carry tool results,
context rows, hidden sidechain rows, and one to three compaction rows covering any prefix before
them. Runs get random statuses; notes and budgets are random too.

One SQLite store serves a whole test (module scope); every example writes its own session key,
so examples never see each other and the suite stays fast.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st
from sqlalchemy import event

from continuity.continuation.view import (
    GAP_NOTICE_RESERVE,
    UNKNOWN_EFFECTS,
    build_continuation,
    gap_notice,
    repair,
    summary_text,
    used_bytes,
)
from continuity.core.codec import block_view
from continuity.core.model import (
    Entry,
    EntryKind,
    MediaBlock,
    Note,
    Role,
    RunStatus,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.core.text import clean
from continuity.store import SqlStore, open_store
from tests.builders import CP, A, T, U, call, load
from tests.continuation.test_continuation import assert_paired

SETTINGS = settings(
    max_examples=int(os.environ.get("CONTINUITY_PROPERTY_EXAMPLES", "150")),
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)

_KEYS = itertools.count()


@pytest.fixture(scope="module")
def prop_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlStore]:
    """One SQLite store per test module; each example uses a fresh session key."""
    path = tmp_path_factory.mktemp("props") / "continuity.db"
    with open_store(f"sqlite:///{path}") as s:
        # throwaway data: skip fsync so that hundreds of examples stay fast
        event.listen(s.engine, "connect", lambda conn, _rec: conn.execute("PRAGMA synchronous=OFF"))
        s.engine.dispose()  # reconnect, so that every pooled connection gets the pragma
        yield s


# --------------------------------------------------------------------------- text strategies

_EMOJI = [
    "🙂",
    "🚀🔥",
    "é",
    "日本語のテキスト",
    "naïve café",
    "👩‍💻",
    "\u200b",
    "Ω≈ç√",
    "𝔘𝔫𝔦𝔠",  # noqa: RUF001 - wide text on purpose
    "Ḽơᶉëᶆ ȋṕšᶙṁ",
    "\t",
    "\n",
    '"quoted\\"',
    "€",
    "ß",
    "🇩🇪",
]
_plain = st.text(st.characters(codec="utf-8"), max_size=30)
_mixed = st.lists(st.one_of(_plain, st.sampled_from(_EMOJI)), max_size=6).map("".join)
_long = st.tuples(
    st.sampled_from(["lorem ipsum ", "ünïcödé ", "🚀 ", "x", "日本 "]), st.integers(40, 1500)
).map(lambda t: t[0] * t[1])
TEXTS = st.one_of(_plain, _mixed, _mixed, _long)
NONBLANK = TEXTS.map(lambda s: s if s.strip() else f"task {s}")

#: Text that may hold lone surrogates, cleaned before it enters a row (B43).
_SURR = st.integers(0xD800, 0xDFFF).map(chr)
DIRTY = (
    st.lists(st.one_of(_plain, st.sampled_from(_EMOJI), _SURR), min_size=1, max_size=12)
    .map("".join)
    .map(clean)
)
DIRTY_NONBLANK = DIRTY.map(lambda s: s if s.strip() else f"task {s}")


def _huge(size: int, unit: str) -> str:
    """A 20-60 KB tool output with a recognisable last line."""
    line = f"{unit} line of build output\n"
    return line * (size // len(line.encode())) + "error: the last line survives"


HUGE = st.tuples(st.integers(20_000, 60_000), st.sampled_from(["x", "é", "🙂", "日本"])).map(
    lambda t: _huge(*t)
)

BUDGETS = st.one_of(
    st.integers(300, 3_000),
    st.integers(3_000, 30_000),
    st.integers(3_000, 30_000),
    st.integers(30_000, 300_000),
)


# --------------------------------------------------------------------------- the log generator


class Log:
    """A generated session log: rows (seq = index), run statuses by request seq, notes."""

    def __init__(
        self,
        rows: list[Entry],
        statuses: dict[int, RunStatus] | None = None,
        notes: list[str] | None = None,
    ) -> None:
        self.rows, self.statuses, self.notes = rows, statuses or {}, notes or []

    def __repr__(self) -> str:  # builder notation, so a falsifying example reads like a test
        return (
            f"Log(rows=[{', '.join(_show(e) for e in self.rows)}], "
            f"statuses={ {k: v.value for k, v in self.statuses.items()} }, "
            f"notes={self.notes!r})"
        )


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else f"{text[:20]}…<{len(text)} chars>")


def _show(e: Entry) -> str:
    if e.kind is EntryKind.COMPACTION:
        return f"CP({_short(e.compaction.summary)}, covers={e.compaction.covers_through_seq})"
    parts = []
    for b in e.blocks:
        if isinstance(b, ToolCallBlock):
            parts.append(f"call({b.id!r})")
        elif isinstance(b, ToolResultBlock):
            extra = f", media={len(b.media)}" if b.media else ""
            parts.append(f"R({b.call_id!r}, {_short(b.text)}{extra})")
        elif isinstance(b, ThinkingBlock):
            parts.append(f"Think({_short(b.text)})")
        else:
            parts.append(_short(getattr(b, "text", "")))
    tag = {"user": "U", "assistant": "A", "tool": "T"}.get(e.role.value, e.role.value)
    flags = (
        ("req " if e.is_request else "")
        + ("" if e.visible else "hidden ")
        + ("" if e.kind is EntryKind.MESSAGE else f"{e.kind.value} ")
    )
    return f"{tag}[{flags}{', '.join(parts)}]"


ACTIONS_IDLE = [
    "request",
    "user",
    "say",
    "say",
    "calls",
    "calls",
    "calls",
    "orphan",
    "dup",
    "compaction",
    "context",
    "hidden",
]
ACTIONS_PENDING = ACTIONS_IDLE + ["results"] * 8 + ["mixed"]
# Strategies built once (building them inside the generator costs more than drawing).
_ACT = {False: st.sampled_from(ACTIONS_IDLE), True: st.sampled_from(ACTIONS_PENDING)}
_ACT_PAIRED = {
    False: st.sampled_from(["request", "user", "say", "calls"]),
    True: st.sampled_from(["request", "user", "say", "calls"] + ["results"] * 3),
}
_DIE = {n: st.integers(0, n - 1) for n in (4, 10, 15, 20)}
_BOOL = st.booleans()
_NCALLS = st.integers(1, 3)
_TOOL = st.sampled_from(["read", "edit", "bash", "grep"])
_MEDIA_TYPE = st.sampled_from(["image/png", "image/jpeg", "application/pdf"])
_MEDIA_SIZE = st.integers(1, 5_000_000)
_STATUS = st.sampled_from(
    [
        RunStatus.FINISHED,
        RunStatus.FINISHED,
        RunStatus.INTERRUPTED,
        RunStatus.FAILED,
        RunStatus.RUNNING,
    ]
)


@st.composite
def logs(
    draw: st.DrawFn,
    *,
    paired: bool = False,
    texts: st.SearchStrategy[str] = TEXTS,
    requests: st.SearchStrategy[str] = NONBLANK,
    big: bool = True,
    max_steps: int = 24,
) -> Log:
    """A realistic session log; ``paired``: every call gets exactly one later result, no
    orphans, duplicates, compactions or non-message rows (an already-paired input)."""
    rows: list[Entry] = []
    pending: list[tuple[str, str]] = []  # (call id, tool name) without a result yet
    answered: list[str] = []
    ids = itertools.count()
    compactions = 0
    maybe_text = st.one_of(st.none(), texts)
    notes_st = st.lists(texts, max_size=3)

    def result(cid: str) -> ToolResultBlock:
        shape = draw(_DIE[20])  # middle values are rare cases: no bias, shrink to plain
        if big and shape in (9, 10):
            return ToolResultBlock(cid, False, draw(HUGE))
        if shape == 11:
            media = tuple(
                MediaBlock(draw(_MEDIA_TYPE), draw(_MEDIA_SIZE), f"sha-{cid}-{i}")
                for i in range(1 + draw(_BOOL))
            )
            return ToolResultBlock(cid, False, draw(texts), media)
        return ToolResultBlock(cid, shape == 12, f"{draw(texts)} {cid}")

    if paired or draw(_DIE[10]) != 5:
        rows.append(U(draw(requests)))
    for _ in range(draw(st.integers(0, max_steps))):
        action = draw((_ACT_PAIRED if paired else _ACT)[bool(pending)])
        if action == "request":
            blank = not paired and draw(_DIE[15]) == 7
            rows.append(U("  \n" if blank else draw(requests)))
        elif action == "user":
            rows.append(U(draw(texts), request=False))
        elif action == "say":
            blocks: list[Any] = []
            if draw(_BOOL):
                blocks.append(ThinkingBlock(draw(texts)))
            blocks.append(TextBlock(draw(texts) or "…"))
            rows.append(Entry(EntryKind.MESSAGE, Role.ASSISTANT, tuple(blocks)))
        elif action == "calls":
            calls = []
            for _ in range(draw(_NCALLS)):
                cid, name = f"c{next(ids)}", draw(_TOOL)
                calls.append(call(cid, name, path=draw(_mixed)))
                pending.append((cid, name))
            rows.append(A(*calls, text=draw(maybe_text)))
        elif action == "results":  # some pending calls answered now, together or one per row
            chosen = [c for c in pending if draw(_BOOL)] or pending[:1]
            blocks = [result(cid) for cid, _ in chosen]
            if draw(_BOOL):
                rows.append(Entry(EntryKind.MESSAGE, Role.TOOL, tuple(blocks)))
            else:
                rows.extend(Entry(EntryKind.MESSAGE, Role.TOOL, (b,)) for b in blocks)
            for c in chosen:
                pending.remove(c)
                answered.append(c[0])
        elif action == "mixed":  # a user row that carries a tool result and text
            cid, _ = pending.pop(0)
            answered.append(cid)
            rows.append(
                Entry(
                    EntryKind.MESSAGE,
                    Role.USER,
                    (result(cid), TextBlock(draw(texts) or "and also")),
                )
            )
        elif action == "orphan":  # a result whose call id is unknown
            rows.append(T(f"orphan{next(ids)}", text=draw(texts)))
        elif action == "dup":  # a second result for an answered call
            if answered:
                rows.append(T(answered[draw(st.integers(0, len(answered) - 1))], text="duplicate"))
        elif action == "compaction":
            if compactions < 3:
                covers = draw(st.integers(-1, len(rows) - 1))
                rows.append(CP(f"§CP{compactions}§ {draw(texts)}", covers=covers))
                compactions += 1
        elif action == "context":
            rows.append(Entry(EntryKind.CONTEXT, Role.USER, (TextBlock("<environment>"),)))
        elif action == "hidden":
            rows.append(
                Entry(
                    EntryKind.MESSAGE,
                    Role.ASSISTANT,
                    (TextBlock(f"sidechain {draw(texts)}"),),
                    visible=False,
                    sidechain=True,
                )
            )
    if paired:
        rows.extend(T(cid) for cid, _ in pending)
        pending.clear()
    if not rows:
        rows.append(U(draw(requests)))
    statuses = {i: draw(_STATUS) for i, e in enumerate(rows) if e.is_request}
    notes = draw(notes_st) if draw(_DIE[4]) == 2 else []
    return Log(rows, statuses, notes)


# --------------------------------------------------------------------------- running a case


@dataclass
class Case:
    log: Log
    budget: int
    view: Any
    d: dict[str, Any]

    @property
    def rows(self) -> list[Entry]:
        return self.log.rows

    def by_seq(self, seq: int) -> Entry:
        return self.log.rows[seq]

    @property
    def newest_compaction(self) -> Entry | None:
        comps = [e for e in self.rows if e.kind is EntryKind.COMPACTION and e.visible]
        return comps[-1] if comps else None

    @property
    def covers(self) -> int:
        cp = self.newest_compaction
        return cp.compaction.covers_through_seq if cp else -1  # type: ignore[union-attr]

    @property
    def previous_request(self) -> Entry | None:
        """The request row of the newest run that ended (the generated truth)."""
        ended = [s for s, st_ in self.log.statuses.items() if st_ is not RunStatus.RUNNING]
        return self.by_seq(max(ended)) if ended else None

    def results_of(self, call_id: str) -> list[int]:
        """Seqs of rows holding a real result of ``call_id`` (anywhere in the log)."""
        return [
            e.seq
            for e in self.rows
            for b in e.blocks
            if isinstance(b, ToolResultBlock) and b.call_id == call_id
        ]

    def call_seq(self, call_id: str) -> int | None:
        for e in self.rows:
            if any(isinstance(b, ToolCallBlock) and b.id == call_id for b in e.blocks):
                return e.seq
        return None


def run_case(store: SqlStore, log: Log, budget: int) -> Case:
    key = f"prop{next(_KEYS)}"
    log = Log([dataclasses.replace(e) for e in log.rows], log.statuses, log.notes)  # load sets seq
    load(store, log.rows, key=key, runs=list(log.statuses.items()))
    for text in log.notes:
        store.add_note(Note(key, text))
    view = build_continuation(store, key, budget_bytes=budget)
    return Case(log, budget, view, view.to_dict())


def unknown_effects(case: Case, call_id: str) -> str:
    """The synthetic answer the spec requires for ``call_id`` (a call with no result)."""
    row = case.by_seq(case.call_seq(call_id))  # type: ignore[arg-type]
    name = next(b.name for b in row.blocks if isinstance(b, ToolCallBlock) and b.id == call_id)
    return UNKNOWN_EFFECTS.format(name=name, id=call_id)


def answers_missing_call(block: dict[str, Any], case: Case) -> bool:
    """A result in the view for a call that has no real result anywhere in the log."""
    return block["type"] == "tool_result" and not case.results_of(block["call_id"])


def synthetic_messages(case: Case) -> list[int]:
    """Indexes of messages that are synthetic answers (they reuse an earlier message's seq)."""
    out, seen = [], set()
    for i, m in enumerate(case.d["messages"]):
        if m["seq"] in seen:
            out.append(i)
        seen.add(m["seq"])
    return out


def real_messages(case: Case) -> list[dict[str, Any]]:
    synth = set(synthetic_messages(case))
    return [m for i, m in enumerate(case.d["messages"]) if i not in synth]


def is_view(case: Case) -> bool:
    """True for a view; a refusal must be typed and carry no view content."""
    if case.d["refusal"] is None:
        return True
    assert case.d["refusal"]["reason"] in ("protected_context_over_budget", "incomplete_request"), (
        case.d["refusal"]
    )
    assert case.d["summary"] is None and case.d["request"] is None
    assert case.d["messages"] == [] and case.d["used_bytes"] == 0 and case.d["gaps"] == []
    return False


CASES = st.tuples(logs(), BUDGETS)


# --------------------------------------------------------------------------- 1. budget


@SETTINGS
@given(CASES)
def test_counted_bytes_never_exceed_budget(prop_store, case_in):
    """Invariant: the view's counted bytes never exceed B (used + notes + notice <= B)."""
    case = run_case(prop_store, *case_in)
    d, budget = case.d, case.budget
    if not is_view(case):
        if d["refusal"]["reason"] == "protected_context_over_budget":
            # the refusal is justified: summary, request, notes and the notice reserve exceed B
            req, cp = case.previous_request, case.newest_compaction
            need = len(orjson.dumps(d["notes"])) + GAP_NOTICE_RESERVE
            need += len(orjson.dumps(req.text())) if req else 0
            if cp is not None:
                info = cp.compaction
                need += len(orjson.dumps(summary_text(info.summary, 0, info.covers_through_seq)))
            assert need > budget, f"refused although protected context needs {need} <= {budget}"
        return
    assert d["used_bytes"] <= budget
    total = (
        d["used_bytes"]
        + len(orjson.dumps(d["notes"]))
        + len(orjson.dumps(d["gap"]["text"] if d["gap"] else ""))
    )
    assert total <= budget, (total, budget)
    assert d["used_bytes"] == used_bytes(d["summary"], d["request"], d["messages"])
    recomputed = len(orjson.dumps(d["messages"])) if d["messages"] else 0  # README: when present
    recomputed += len(orjson.dumps(d["summary"]["text"])) if d["summary"] else 0
    recomputed += len(orjson.dumps(d["request"]["text"])) if d["request"] else 0
    assert d["used_bytes"] == recomputed
    assert d["budget_bytes"] == budget


# --------------------------------------------------------------------------- 2. pairing


@SETTINGS
@given(CASES)
def test_every_result_follows_its_call_and_every_call_has_one_result(prop_store, case_in):
    """Invariant: every tool result follows its call; every call has exactly one result."""
    case = run_case(prop_store, *case_in)
    assert_paired(case.view)
    calls = [b["id"] for m in case.d["messages"] for b in m["content"] if b["type"] == "tool_call"]
    assert len(calls) == len(set(calls))
    for m in case.d["messages"]:
        for b in m["content"]:
            if b["type"] != "tool_result":
                continue
            assert case.call_seq(b["call_id"]) is not None, f"orphan {b['call_id']} kept"
            if answers_missing_call(b, case):
                assert b["is_error"], f"synthetic answer to {b['call_id']} is not an error"
                continue
            # a call with a real result anywhere in the log is never given a synthetic one
            assert not b["text"].startswith(unknown_effects(case, b["call_id"])[:20])
            if not case.d["clipped"]:
                real = [
                    block_view(r)
                    for s in case.results_of(b["call_id"])
                    for r in case.by_seq(s).blocks
                    if isinstance(r, ToolResultBlock) and r.call_id == b["call_id"]
                ]
                assert b in real, f"result {b['call_id']} is not one from the log"


#: Regression (found by this file, fixed in continuation.py): an interrupted run whose only call never returned.
DANGLING_CALL = Log([U("go"), A(call("c0"))], {0: RunStatus.INTERRUPTED})


@SETTINGS
@given(CASES)
@example((DANGLING_CALL, 500))
def test_call_without_result_gets_the_unknown_effects_answer(prop_store, case_in):
    """Invariant: every call has one result; a call with none in the log gets 'effects unknown'."""
    case = run_case(prop_store, *case_in)
    for m in case.d["messages"]:
        for b in m["content"]:
            if answers_missing_call(b, case):
                assert b["is_error"] and b["text"] == unknown_effects(case, b["call_id"]), b


# --------------------------------------------------------------------------- 3. opening, units


@SETTINGS
@given(CASES)
def test_view_never_starts_with_a_result_nor_cuts_a_unit(prop_store, case_in):
    """Invariant: the view never starts with a tool result; a cut never falls inside a unit."""
    case = run_case(prop_store, *case_in)
    msgs = case.d["messages"]
    if not msgs:
        return
    assert msgs[0]["role"] != "tool"
    assert msgs[0]["content"] and msgs[0]["content"][0]["type"] != "tool_result"
    kept = {m["seq"] for m in real_messages(case)}
    for m in msgs:
        for b in m["content"]:
            if b["type"] != "tool_call":
                continue
            later = [s for s in case.results_of(b["id"]) if s > m["seq"]]
            if later:
                assert later[0] in kept, (
                    f"call {b['id']} at {m['seq']} kept without its result row {later[0]}"
                )


# --------------------------------------------------------------------------- 4. request


@SETTINGS
@given(CASES)
def test_previous_request_verbatim(prop_store, case_in):
    """Invariant: the previous request, if it exists and fits, is verbatim after the summary."""
    case = run_case(prop_store, *case_in)
    req = case.previous_request
    d = case.d
    if req is not None and not req.text().strip():
        assert d["refusal"] and d["refusal"]["reason"] == "incomplete_request"
        return
    if not is_view(case):
        assert req is None or d["refusal"]["reason"] == "protected_context_over_budget"
        return
    if req is None:
        assert d["request"] is None
        return
    assert d["request"] == {"seq": req.seq, "actor": "user", "text": req.text()}
    assert list(d).index("summary") < list(d).index("request") < list(d).index("messages")
    # The request travels once, as ``request``, never again among the messages.
    assert not any(m["seq"] == req.seq and m["role"] == "user" for m in d["messages"])
    before = [m for m in d["messages"] if m["seq"] < req.seq]
    if before:  # spec step 3: the tail before the request is reused only whole and contiguous
        # a user row opens it, or (issue 45 item 4a) the first row after the summary's
        # coverage, which the summary opens
        summarized = d["summary"]["covers_through_seq"] if d["summary"] else -1
        first_after = next(
            (
                e.seq
                for e in case.rows
                if e.seq > summarized and e.visible and e.kind is EntryKind.MESSAGE
            ),
            None,
        )
        assert not d["copied"] and before[0]["seq"] > case.covers
        # (rows before it that repair dropped, results of calls the summary covers, aside)
        assert before[0]["role"] == "user" or (
            summarized >= 0
            and first_after is not None
            and all(
                e.role is Role.TOOL
                for e in case.rows[first_after : before[0]["seq"]]
                if e.visible and e.kind is EntryKind.MESSAGE
            )
        )
        shown = {m["seq"] for m in before}
        for e in case.rows:  # rows of only calls/results may be repair's (duplicate or empty id)
            if (
                before[0]["seq"] <= e.seq < req.seq
                and e.visible
                and e.kind is EntryKind.MESSAGE
                and e.blocks
                and not all(isinstance(b, (ToolResultBlock, ToolCallBlock)) for b in e.blocks)
            ):
                assert e.seq in shown, f"row {e.seq} left out between reused rows"
        after = [m["seq"] for m in _log_order(d["messages"]) if m["seq"] > req.seq]
        assert after == sorted(after)  # log order (results in call order: issue 45 item 4d)


# --------------------------------------------------------------------------- 5. named gap


def repair_dropped_lead(case: Case, first_kept: int) -> set[int]:
    """Result-only rows right before the first kept message: whatever their position, repair
    drops them (their calls are not in the view), so their absence is repair, not a cut."""
    out: set[int] = set()
    req = case.d["request"]["seq"] if case.d["request"] else None
    for seq in range(first_kept - 1, case.covers, -1):
        e = case.by_seq(seq)
        if not e.visible or e.kind is not EntryKind.MESSAGE:
            continue
        if seq == req or not e.blocks or not all(isinstance(b, ToolResultBlock) for b in e.blocks):
            break
        out.add(seq)
    return out


def check_named_gap(case: Case, *, exempt_repaired: bool) -> None:
    d = case.d
    covers = case.covers
    kept = real_messages(case)
    first_kept = kept[0]["seq"] if kept else len(case.rows)
    req_seq = d["request"]["seq"] if d["request"] else None
    omitted = {
        e.seq
        for e in case.rows
        if e.kind is EntryKind.MESSAGE
        and e.visible
        and covers < e.seq < first_kept
        and e.seq != req_seq
    }
    exempt = repair_dropped_lead(case, first_kept) if exempt_repaired else set()
    gaps = [(g["from_seq"], g["to_seq"]) for g in d["gaps"]]
    for seq in sorted(omitted - exempt):
        assert any(a <= seq <= b for a, b in gaps), (
            f"row {seq} omitted silently (covers {covers}, first kept {first_kept}, gaps {gaps})"
        )
    kept_seqs = {m["seq"] for m in kept}
    for a, b in gaps:
        assert covers < a <= b, (a, b, covers)
        assert a in omitted and b in omitted, f"gap {a}-{b} not bounded by omitted rows"
        assert not any(a <= s <= b for s in kept_seqs), f"gap {a}-{b} names kept rows"
    assert gaps == sorted(gaps)
    assert all(x[1] < y[0] for x, y in itertools.pairwise(gaps)), gaps
    if gaps:
        assert d["gap"]["from_seq"] == gaps[0][0] and d["gap"]["to_seq"] == gaps[-1][1]
        assert d["gap"]["text"] == gap_notice(case.view.gaps)
        for a, b in gaps:
            assert (f"{a}–{b}" if a != b else str(a)) in d["gap"]["text"]
    else:
        assert d["gap"] is None


#: Regression (found by this file, fixed in continuation.py): the request, an orphan result, an answer.
ORPHAN_AFTER_REQUEST = Log([U("go"), T("zz"), A(text="done")], {0: RunStatus.FINISHED})


@SETTINGS
@given(CASES)
@example((ORPHAN_AFTER_REQUEST, 240_000))
def test_nothing_falls_silently_between_summary_and_suffix(prop_store, case_in):
    """Invariant: summarized range end + 1 = first kept seq, or the gap is named exactly."""
    case = run_case(prop_store, *case_in)
    if is_view(case):
        check_named_gap(case, exempt_repaired=False)


@SETTINGS
@given(CASES)
def test_gap_named_exactly_apart_from_repaired_rows(prop_store, case_in):
    """Invariant: summarized end + 1 = first kept seq, or the gap is named (repaired rows aside)."""
    case = run_case(prop_store, *case_in)
    if is_view(case):
        check_named_gap(case, exempt_repaired=True)


# --------------------------------------------------------------------------- 6. compactions


@SETTINGS
@given(CASES)
def test_only_the_newest_compaction_counts(prop_store, case_in):
    """Invariant: only the newest compaction counts; call pairing restarts at its boundary."""
    case = run_case(prop_store, *case_in)
    if not is_view(case):
        return
    d = case.d
    cp = case.newest_compaction
    blob = orjson.dumps(d).decode()
    older = [e for e in case.rows if e.kind is EntryKind.COMPACTION and e is not cp]
    for e in older:
        marker = re.match(r"§CP\d+§", e.compaction.summary).group(0)  # type: ignore[union-attr]
        assert marker not in blob, f"older compaction {marker} leaked into the view"
    if cp is None:
        assert d["summary"] is None
        return
    info = cp.compaction
    assert info is not None and info.covers_through_seq is not None
    assert d["summary"] is not None
    assert d["summary"]["covers_through_seq"] == info.covers_through_seq
    assert d["summary"]["entry_id"] == cp.entry_id
    assert info.summary in d["summary"]["text"]
    assert blob.count("§CP") == 1
    for m in d["messages"]:
        assert m["seq"] > info.covers_through_seq
        for b in m["content"]:
            cid = b.get("id") or b.get("call_id")
            if cid is not None:
                assert case.call_seq(cid) > info.covers_through_seq


# --------------------------------------------------------------------------- 7. repair


def _rows(log: Log) -> list[tuple[int, Role, list[Any]]]:
    return [
        (i, e.role, list(e.blocks)) for i, e in enumerate(log.rows) if e.kind is EntryKind.MESSAGE
    ]


def _assert_repaired_paired(rows: list[tuple[int, Role, list[Any]]]) -> None:
    calls: list[str] = []
    answered: list[str] = []
    for _, _, blocks in rows:
        for b in blocks:
            if isinstance(b, ToolCallBlock):
                calls.append(b.id)
            elif isinstance(b, ToolResultBlock):
                assert b.call_id in calls, f"result {b.call_id} before its call"
                answered.append(b.call_id)
    assert sorted(calls) == sorted(answered) and len(set(answered)) == len(answered)


@st.composite
def repair_inputs(draw: st.DrawFn, paired: bool) -> tuple[list, set[str]]:
    rows = _rows(draw(logs(paired=paired, big=False)))
    lo = draw(st.integers(0, len(rows)))
    hi = draw(st.integers(lo, len(rows)))
    window = rows if paired else rows[lo:hi]
    ids = sorted(
        {b.id for _, _, bl in rows for b in bl if isinstance(b, ToolCallBlock)}
        | {b.call_id for _, _, bl in rows for b in bl if isinstance(b, ToolResultBlock)}
    )
    anywhere = set(draw(st.lists(st.sampled_from(ids), unique=True))) if ids else set()
    return window, anywhere


@SETTINGS
@given(repair_inputs(paired=False), repair_inputs(paired=True))
def test_repair_is_idempotent_and_keeps_paired_units(messy, paired):
    """Invariant: repair(repair(x)) == repair(x), and already-paired units are unchanged."""
    rows, anywhere = messy
    once = repair(rows, anywhere)
    assert repair(once, anywhere) == once
    _assert_repaired_paired(once)
    rows, anywhere = paired
    assert repair(rows, anywhere) == rows


# --------------------------------------------------------------------------- 8. seq order


@SETTINGS
@given(CASES)
def test_messages_in_log_order_with_original_actors(prop_store, case_in):
    """Invariant: seqs ascend, repeated only by a synthetic answer taking the seq of the row it
    follows; the one exception is a run of result-only tool rows, which follows its calls'
    order (issue 45 item 4d): sorted by seq, each such run gives back the log order."""
    case = run_case(prop_store, *case_in)
    msgs = case.d["messages"]
    synth = synthetic_messages(case)
    real = real_messages(case)
    seqs = [m["seq"] for m in _log_order(real)]
    assert seqs == sorted(set(seqs)), f"real rows out of order or repeated: {seqs}"
    for i in synth:
        m = msgs[i]
        assert m["role"] == "tool" and m["content"]
        assert all(answers_missing_call(b, case) and b["is_error"] for b in m["content"]), m
        assert i > 0 and m["seq"] == msgs[i - 1]["seq"], "synthetic seq is not its predecessor's"
        earlier_calls = {
            b["id"] for x in msgs[:i] for b in x["content"] if b["type"] == "tool_call"
        }
        assert {b["call_id"] for b in m["content"]} <= earlier_calls
    for m in real:
        row = case.by_seq(m["seq"])
        assert row.kind is EntryKind.MESSAGE and row.visible
        assert m["role"] == row.role.value
        if not case.d["clipped"]:
            source = [block_view(b) for b in row.blocks]
            assert all(b in source for b in m["content"]), "content not verbatim"


def _results_only(m: dict[str, Any]) -> bool:
    return (
        m["role"] == "tool"
        and bool(m["content"])
        and all(b["type"] == "tool_result" for b in m["content"])
    )


def _log_order(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``msgs`` with each run of result-only tool rows sorted back by seq."""
    out: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    for m in msgs:
        if _results_only(m):
            run.append(m)
            continue
        out += [*sorted(run, key=lambda r: r["seq"]), m]
        run = []
    return out + sorted(run, key=lambda r: r["seq"])


@SETTINGS
@given(CASES)
def test_results_follow_their_calls_order(prop_store, case_in):
    """Issue 45 item 4d: within each run of result-only tool rows, the rows come in the order
    of their (first) calls in the view and each row's results in call order (pi writes
    parallel results as they complete; a row travels whole). The
    synthetic "effects unknown" answers close their turn after the real results (their own
    invariant, test_messages_in_log_order_with_original_actors)."""
    case = run_case(prop_store, *case_in)
    msgs = [
        m
        for m in case.d["messages"]
        if not (m["content"] and all(b.get("synthetic") for b in m["content"]))
    ]
    position = {}
    for m in msgs:
        for b in m["content"]:
            if b["type"] == "tool_call":
                position.setdefault(b["id"], len(position))

    def apart(a: int, b: int) -> bool:  # a conversation row between them in the log (a
        lo, hi = sorted((a, b))  # request typed while tools ran, shown on its own)
        return any(
            e.visible
            and e.kind is EntryKind.MESSAGE
            and not all(isinstance(x, ToolResultBlock) for x in e.blocks)
            for e in case.rows[lo + 1 : hi]
        )

    run: list[int] = []  # per row of the run: the first of its calls (rows travel whole)
    last: int | None = None
    for m in [*msgs, {"role": "end", "content": [], "seq": None}]:
        if _results_only(m):
            inside = [position[b["call_id"]] for b in m["content"]]
            assert inside == sorted(inside), f"results of a row out of call order: {m}"
        if _results_only(m) and (last is None or not apart(last, m["seq"])):
            run.append(min(position[b["call_id"]] for b in m["content"]))
            last = m["seq"]
            continue
        assert run == sorted(run), f"results out of call order: {msgs}"
        run, last = [], None
        if _results_only(m):
            run, last = [min(position[b["call_id"]] for b in m["content"])], m["seq"]


# --------------------------------------------------------------------------- 9. copied


@SETTINGS
@given(CASES)
def test_copied_flag_uniform_and_honest(prop_store, case_in):
    """Invariant: `copied` is uniform and equals the view's; non-contiguous rows are copies."""
    case = run_case(prop_store, *case_in)
    d = case.d
    flags = {m["copied"] for m in d["messages"]}
    assert flags <= {d["copied"]}, (flags, d["copied"])
    real = real_messages(case)
    if real and d["request"] is not None:
        req, first = d["request"]["seq"], real[0]["seq"]
        exempt = repair_dropped_lead(case, first)
        between = [
            e.seq
            for e in case.rows
            if e.visible
            and e.kind is EntryKind.MESSAGE
            and req < e.seq < first
            and e.seq not in exempt
        ]
        if between or req <= case.covers:
            assert d["copied"], f"rows {between} left out, yet the view claims reuse"


# --------------------------------------------------------------------------- UTF-8 output


@SETTINGS
@given(
    logs(texts=DIRTY, requests=DIRTY_NONBLANK, max_steps=16),
    st.one_of(st.integers(300, 4_000), BUDGETS),
)
def test_json_output_is_valid_utf8(prop_store, log, budget):
    """Invariant: the `continue --json` object encodes as valid UTF-8 (surrogates cleaned)."""
    case = run_case(prop_store, log, budget)
    encoded = json.dumps(case.d, ensure_ascii=False).encode("utf-8")
    assert orjson.loads(orjson.dumps(case.d)) == json.loads(encoded.decode("utf-8"))


# --------------------------------------------------------------------------- after our compaction


@SETTINGS
@given(CASES)
def test_after_our_compaction_budget_pairing_and_recent_exchanges(prop_store, case_in):
    """Issue 15: `compact` (extractive, forced) then `continue` on a generated log, at the
    same budget. The view never exceeds the budget, every call is paired, no row the new
    checkpoint covers is copied again, and every visible row the checkpoint kept out of its
    summary (``kept_from_seq`` on) travels: as a message, as the request, or repaired
    away (orphan or unanswerable result rows), or, only when the request's size leaves too
    little room, in a named gap."""
    import time

    from continuity.continuation.compaction import after_turn
    from continuity.continuation.summarize.extractive import ExtractiveSummarizer

    log, budget = case_in
    key = f"prop{next(_KEYS)}"
    log = Log([dataclasses.replace(e) for e in log.rows], log.statuses, log.notes)
    load(prop_store, log.rows, key=key, runs=list(log.statuses.items()))
    for text in log.notes:
        prop_store.add_note(Note(key, text))
    lease = prop_store.acquire_lease(key, "props", 60)
    out = after_turn(
        prop_store,
        key,
        lease=lease,
        summarizer=ExtractiveSummarizer(),
        budget_bytes=budget,
        deadline=time.monotonic() + 60,
        force=True,
    )
    prop_store.release_lease(lease)
    view = build_continuation(prop_store, key, budget_bytes=budget)
    d = view.to_dict()
    if d["refusal"] is not None:
        assert d["refusal"]["reason"] in ("protected_context_over_budget", "incomplete_request")
        return
    notice = len(orjson.dumps(d["gap"]["text"])) if d["gap"] else 0
    assert d["used_bytes"] <= budget
    assert d["used_bytes"] + len(orjson.dumps(d["notes"])) + notice <= budget
    assert_paired(view)
    if out.entry is None:
        return
    covers = out.entry.compaction.covers_through_seq
    assert d["summary"]["covers_through_seq"] == covers
    assert all(m["seq"] > covers for m in d["messages"]), "a covered row copied again"
    seqs = [m["seq"] for m in d["messages"]]
    real = [s for i, s in enumerate(seqs) if i == 0 or s != seqs[i - 1]]
    assert len(real) == len(set(real)), "a row copied twice"
    if out.kept_from_seq is None:
        return
    assert out.kept_from_seq == covers + 1 or all(
        not (e.visible and e.kind is EntryKind.MESSAGE)
        for e in log.rows[covers + 1 : out.kept_from_seq]
    )
    shown = set(seqs) | ({d["request"]["seq"]} if d["request"] else set())
    gaps = [(g["from_seq"], g["to_seq"]) for g in d["gaps"]]
    for e in log.rows[out.kept_from_seq :]:
        if not (e.visible and e.kind is EntryKind.MESSAGE) or e.seq in shown:
            continue
        only_results = e.blocks and all(
            isinstance(b, (ToolResultBlock, ToolCallBlock)) for b in e.blocks
        )
        assert only_results or any(lo <= e.seq <= hi for lo, hi in gaps), (
            f"kept row {e.seq} neither shown nor named"
        )
