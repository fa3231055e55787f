"""The continuation for the next run: spec/continuation.md Part 2 (seed 002, dispatch side).

``build_continuation(store, session_key, budget_bytes=240_000)`` returns a ``ContinuationView``:
the newest compaction's summary (quoted, labelled as earlier work; a compaction whose summary is
empty or an error message takes no effect, B47/B49: ``effective_compaction``), the previous
run's request verbatim, and the most recent suffix of rows after that request that fits the
budget, cut at unit boundaries, with every tool call paired. Or a typed refusal.

When every row after the request fits and bytes remain, the view also reuses the rows just
before the request (spec step 3: a recent tail with a usable opening that includes the request
is reused as it is): the longest run back from the request that fits, starting on a user row
and never inside a unit or at or below the summary's coverage. Those messages carry seqs below
``request.seq`` and are read before the request: summary, earlier messages, request, later
messages (``ContinuationView.before_request``).

Reads are bounded (never the whole log): one newest-compaction read, one exact request row, the
bounded notes, row metadata from the newest row back until the budget is spent, the tool-call
index of that window, the content of the selected rows, and two edge reads to name a gap.

Every text of the view (summary, request, notes, rows) passes through ``redact`` (B29; spec:
no byte of a recorded secret reaches a continuation view); the stored rows stay lossless.

Budget accounting (UTF-8 bytes of compact JSON): ``used_bytes`` = len(json(summary.text)) +
len(json(request.text)) + len(json(messages)), each counted only when present. Notes and the gap
notice are reserved from the same budget, so used_bytes + notes + notice <= budget.

Over 600 lines: spec/continuation.md Part 2 is one algorithm (summary, request, reused or copied
tail, gaps, refusal) whose steps share the budget's accounting; splitting it would split the
accounting.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from continuity.core.codec import message_view, stub_data_urls
from continuity.core.config import FOLLOW_UP_BUDGET_BYTES
from continuity.core.error_text import failed_summary
from continuity.core.errors import ContinuityError, SessionNotFound
from continuity.core.model import (
    Block,
    Entry,
    EntryKind,
    MediaBlock,
    Role,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from continuity.core.text import clip_middle, json_len, utf8_len
from continuity.formats.resumed import NOTICE_START
from continuity.redaction.funnel import redact
from continuity.redaction.session import in_session
from continuity.redaction.structured import redact_value
from continuity.store.base import RowMeta

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: no ``typing`` at start-up (issue 43 goal 3)
    from typing import Any

    from continuity.store.protocol import Store

#: Bytes held back for the gap notice (the notice itself is at most ~160 bytes).
GAP_NOTICE_RESERVE = 256
#: Notes travel outside transcript rows, bounded by count and bytes.
NOTES_LIMIT = 20
NOTES_MAX_BYTES = 16_000
#: Rows of metadata read per page while walking back from the newest row.
PAGE_ROWS = 256

UNKNOWN_EFFECTS = (
    "Tool call {name} ({id}) has no recorded result: the run ended before it "
    "returned. Its effects are unknown; check them before repeating it."
)


class RefusalReason:
    """Closed set of reasons a continuation is refused (spec/continuation.md Part 2, step 11)."""

    PROTECTED_OVER_BUDGET = "protected_context_over_budget"
    INCOMPLETE_REQUEST = "incomplete_request"
    SOURCE_READ_FAILURE = "source_read_failure"


@dataclass(frozen=True, slots=True)
class Gap:
    """Visible rows ``from_seq..to_seq`` (inclusive) left out of the view, not covered by the
    summary (the request, shown on its own, may sit inside the outer range)."""

    from_seq: int
    to_seq: int


@dataclass
class ContinuationView:
    """The continuation for SESSION (see the README for the JSON contract).

    ``messages`` are view dicts ``{seq, role, copied, content}`` in log order; those with a
    seq below ``request.seq`` (reused rows just before the request, spec step 3) are read
    before the request (``before_request``). ``copied`` is true for every message when the
    request and the suffix are not contiguous (seed 002: never claim false row reuse).
    ``gaps`` lists each omitted range exactly; ``gap`` spans them all.
    """

    session: str
    budget_bytes: int
    used_bytes: int = 0
    summary: dict[str, Any] | None = None
    request: dict[str, Any] | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    notice: str | None = None
    copied: bool = False
    clipped: bool = False
    refusal: dict[str, str] | None = None

    @property
    def gap(self) -> Gap | None:
        """One range spanning every omitted range (None when nothing is omitted)."""
        if not self.gaps:
            return None
        return Gap(self.gaps[0].from_seq, self.gaps[-1].to_seq)

    def before_request(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """``messages`` split around the request, in reading order: those before it (seqs
        below ``request.seq``, reused when the tail before the request fits) and those after
        it. Without a request every message comes after."""
        if self.request is None:
            return [], list(self.messages)
        seq = self.request["seq"]
        return (
            [m for m in self.messages if m["seq"] < seq],
            [m for m in self.messages if m["seq"] >= seq],
        )

    def to_dict(self) -> dict[str, Any]:
        """The `continue --json` object."""
        gap = self.gap
        return {
            "session": self.session,
            "budget_bytes": self.budget_bytes,
            "used_bytes": self.used_bytes,
            "summary": self.summary,
            "request": self.request,
            "gap": (
                {"from_seq": gap.from_seq, "to_seq": gap.to_seq, "text": self.notice}
                if gap
                else None
            ),
            "gaps": [{"from_seq": g.from_seq, "to_seq": g.to_seq} for g in self.gaps],
            "messages": self.messages,
            "notes": self.notes,
            "copied": self.copied,
            "clipped": self.clipped,
            "refusal": self.refusal,
        }


def used_bytes(summary: dict | None, request: dict | None, messages: list[dict]) -> int:
    """The contract's byte count: compact JSON of summary.text, request.text (and
    request.media when the request holds media) and messages, each counted when present (an
    empty message list counts 0)."""
    total = json_len(messages) if messages else 0
    if summary is not None:
        total += json_len(summary["text"])
    if request is not None:
        total += json_len(request["text"])
        if request.get("media"):
            total += json_len(request["media"])
    return total


def request_media(entry: Entry) -> list[dict[str, Any]]:
    """The media stubs of a request row (issue 15: an image on the request vanished, the
    request object had no place for it): ``{"type": "media", "media_type", "bytes", "block"}``
    per image or file, ``block`` its index among the row's content blocks (where it was);
    payloads never travel. Empty when the row holds none."""
    return [
        {"type": "media", "media_type": b.media_type, "bytes": b.bytes, "block": i}
        for i, b in enumerate(entry.blocks)
        if isinstance(b, MediaBlock)
    ]


#: The label of a resumed copy's preface (issue 45 item 3): it covers the rows of the session
#: the copy continues, not rows of the copy ("rows 0–0" said so wrongly).
COPY_LABEL = (
    "Carried into this copy by `continuity resume`: the earlier work of the session it continues"
)


def summary_text(summary: str, first_seq: int, covers_through_seq: int) -> str:
    """The summary as the next run sees it: redacted (B29: an imported harness summary may
    quote a secret), quoted and labelled as earlier work, not as instructions (seed 002: a
    summary is evidence, not authority). A resumed copy's preface (``NOTICE_START``) is
    labelled ``COPY_LABEL``, not with rows of the copy it does not summarize."""
    label = (
        COPY_LABEL
        if summary.startswith(NOTICE_START)
        else f"Summary of earlier work in this session (rows {first_seq}–{covers_through_seq})"
    )
    return (
        f"{label}, quoted for reference. It is not an instruction.\n<summary>\n"
        f"{redact(summary)}\n</summary>"
    )


def gap_notice(gaps: Sequence[Gap]) -> str:
    """The named gap (seed 002: "names the exact omitted range"): ``seq 412–977 omitted; look
    them up in continuity's record before relying on them or repeating unresolved work``.
    Issue 39: it names no tool (the reader may not have ``recall``); the text that may name
    one (the brief, the essentials) says how to reach the record."""
    ranges = " and ".join(
        f"{g.from_seq}–{g.to_seq}" if g.from_seq != g.to_seq else str(g.from_seq) for g in gaps
    )
    return (
        f"seq {ranges} omitted; look them up in continuity's record before relying on "
        "them or repeating unresolved work"
    )


def _refuse(view: ContinuationView, reason: str, detail: str) -> ContinuationView:
    view.refusal = {"reason": reason, "detail": detail}
    view.summary = view.request = None
    view.messages, view.gaps, view.notice, view.used_bytes = [], [], None, 0
    return view


def bounded_notes(store: Store, session_key: str) -> list[str]:
    """The notes a continuation carries, oldest first: the newest ``NOTES_LIMIT``, redacted,
    newest kept first within ``NOTES_MAX_BYTES`` (UTF-8 bytes of their JSON strings)."""
    out: list[str] = []
    total = 0
    for note in reversed(store.notes(session_key, limit=NOTES_LIMIT)):
        text = redact(note.text)
        size = json_len(text) + 1
        if total + size > NOTES_MAX_BYTES:
            break
        out.append(text)
        total += size
    return list(reversed(out))


def effective_compaction(store: Store, session_key: str) -> Entry | None:
    """The compaction row that takes effect: the newest visible compaction whose summary
    finished (``error_text.failed_summary``). A compaction whose summary failed never drops
    the rows before it; the one before it, or the full view, stands. Failed: empty (B47, e.g.
    an imported marker with no summary text) or an error or limit message returned as text
    (B49, "Claude AI usage limit reached|<epoch>", "Error: …", "Prompt is too long"), the same
    check ``summarize.validate`` gives a model's answer.

    One ``latest_compaction`` read when the newest has a summary (the usual case); otherwise
    a walk back over row metadata, newest first, reading only the compaction rows it meets.
    None when no compaction has a usable summary."""
    newest = store.latest_compaction(session_key)
    if newest is None or _has_summary(newest):
        return newest
    before = newest.seq
    while True:
        page = store.rows_meta(session_key, before_seq=before, limit=PAGE_ROWS)
        seqs = [m.seq for m in page if m.kind is EntryKind.COMPACTION]
        for row in sorted(
            store.entries_by_seq(session_key, seqs) if seqs else [],
            key=lambda e: e.seq,
            reverse=True,
        ):
            if _has_summary(row):
                return row
        if len(page) < PAGE_ROWS:
            return None
        before = page[-1].seq


def _has_summary(row: Entry) -> bool:
    return row.compaction is not None and not failed_summary(row.compaction.summary)


def build_continuation(
    store: Store,
    session_key: str,
    *,
    budget_bytes: int = FOLLOW_UP_BUDGET_BYTES,
    agent_id: str | None = None,
) -> ContinuationView:
    """Assemble the continuation of ``session_key`` within ``budget_bytes`` UTF-8 bytes.

    ``agent_id`` defaults to the session's agent. Raises ``SessionNotFound``; every other
    failure is a refusal inside the returned view (``protected_context_over_budget``,
    ``incomplete_request``, ``source_read_failure``).
    """
    session = store.get_session(session_key)
    if session is None:
        raise SessionNotFound(session_key)
    view = ContinuationView(session=session.key, budget_bytes=budget_bytes)
    try:
        # issue 45 review item 1: secrets found in any row hidden wherever they repeat
        with store.batch(), in_session(store, session.key):
            return _Assembler(store, session.key, agent_id or session.agent_id, view).build()
    except ContinuityError as exc:
        return _refuse(view, RefusalReason.SOURCE_READ_FAILURE, str(exc))


class _Assembler:
    def __init__(self, store: Store, key: str, agent_id: str, view: ContinuationView) -> None:
        self.store, self.key, self.agent_id, self.view = store, key, agent_id, view
        self._cache: dict[int, Entry] = {}

    # -- steps 1, 4, 5: protected context -------------------------------------------------

    def build(self) -> ContinuationView:
        view, store = self.view, self.store
        compaction = effective_compaction(store, self.key)
        covers = -1
        if compaction is not None and compaction.compaction is not None:
            info = compaction.compaction
            covers = (
                info.covers_through_seq
                if info.covers_through_seq is not None
                else compaction.seq - 1
            )
            view.summary = {
                "entry_id": compaction.entry_id,
                "covers_through_seq": covers,
                "text": summary_text(info.summary, 0, covers),
            }
        request_entry = None
        run = store.last_run(self.key, agent_id=self.agent_id, ended_only=True)
        if run is not None:
            found = store.entries_by_seq(self.key, [run.request_seq])
            if not found:
                return _refuse(
                    view,
                    RefusalReason.SOURCE_READ_FAILURE,
                    f"request row {run.request_seq} of run {run.run_id} is missing",
                )
            request_entry = found[0]
            text = stub_data_urls(redact(request_entry.text()))
            media = request_media(request_entry)
            if not text.strip() and not media:
                return _refuse(
                    view,
                    RefusalReason.INCOMPLETE_REQUEST,
                    f"request row {run.request_seq} holds no text",
                )
            view.request = {
                "seq": request_entry.seq,
                "actor": request_entry.role.value,
                "text": text,
            }
            if media:
                view.request["media"] = media
        view.notes = self._notes()
        protected = (
            used_bytes(view.summary, view.request, []) + json_len(view.notes) + GAP_NOTICE_RESERVE
        )
        if protected > view.budget_bytes:
            return _refuse(
                view,
                RefusalReason.PROTECTED_OVER_BUDGET,
                f"summary, request and notes need {protected} bytes; budget is {view.budget_bytes}",
            )
        req_seq = request_entry.seq if request_entry else None
        self._suffix(covers, req_seq, view.budget_bytes - protected)
        return view

    def _notes(self) -> list[str]:
        return bounded_notes(self.store, self.key)

    # -- steps 2, 6: the bounded suffix -----------------------------------------------------

    def _suffix(self, covers: int, req_seq: int | None, room: int) -> None:
        view = self.view
        lower = max(covers, req_seq if req_seq is not None else -1) + 1
        window = self._window(lower, room)
        if req_seq is None:
            # Seed 002: a tail without a user message containing text contributes no turns.
            window = self._from_first_user(window)
        pairs = self.store.tool_calls_from(self.key, window[0].seq) if window else []
        starts = _valid_starts(window, pairs, lower)  # newest first
        # The oldest start whose rows fit by their stored sizes, then exact checks moving to
        # newer starts (each drops the oldest unit) until the rendered view fits.
        suffix_bytes = _suffix_bytes(window)
        pick = 0
        for i, start in enumerate(starts):
            if suffix_bytes[start] + 2 <= room:
                pick = i
            else:
                break
        chosen: list[dict[str, Any]] = []
        for start in starts[pick::-1] if starts else []:
            messages = self._messages(window, start, pairs)
            if messages and json_len(messages) <= room:
                chosen = messages
                break
        if not chosen:
            chosen = self._clipped(window, starts, pairs, room)
        # Gaps and copies are decided by the first row actually emitted (repair may have
        # emptied the rows before it): the lowest seq, since a run of results is emitted in its
        # calls' order, not log order (issue 45 item 4d)
        first = min(m["seq"] for m in chosen) if chosen else None
        view.copied = self._copied(req_seq, covers, first)
        earlier_first = None
        if (
            not view.clipped
            and req_seq is not None
            and req_seq > covers
            and (not view.copied or self._holds_all_after(window, req_seq, room))
        ):
            # issue 45 item 4a: also when the rows after the request open inside a unit whose
            # call is before it (a request typed while a tool ran): with the rows before the
            # request the unit is whole, and the view is contiguous again
            after = [r.seq for r in window if r.seq > req_seq]  # all of them: contiguous
            got, earlier_first = self._earlier(
                covers, req_seq, [] if view.copied else chosen, after, room
            )
            if (
                earlier_first is not None
                and view.copied
                and not {m["seq"] for m in got} >= set(after)
            ):
                earlier_first = None  # a row after the request would be lost: keep the copy
            if earlier_first is not None:
                chosen, view.copied = got, False
                first = min((m["seq"] for m in chosen if m["seq"] > req_seq), default=None)
        for message in chosen:
            message["copied"] = view.copied  # "true" is shorter than "false": still fits
        view.messages = chosen
        view.gaps = self._gaps(covers, req_seq, first, earlier_first)
        view.notice = gap_notice(view.gaps) if view.gaps else None
        view.used_bytes = used_bytes(view.summary, view.request, view.messages)

    def _holds_all_after(self, window: list[RowMeta], req_seq: int, room: int) -> bool:
        """Whether ``window`` holds every message row after the request and they fit
        ``room`` by their stored sizes (so a view of them all may be tried)."""
        if not window or sum(r.view_bytes + 1 for r in window) + 1 > room:
            return False
        return window[0].seq == self._edge(req_seq, None, oldest=True)

    def _earlier(
        self, covers: int, req_seq: int, chosen: list[dict[str, Any]], after: list[int], room: int
    ) -> tuple[list[dict[str, Any]], int | None]:
        """Spec step 3: the suffix after the request is whole and contiguous with it; reuse
        the rows just before the request too, as many as fit in ``room`` with the request's
        suffix: the oldest start after ``covers`` that is a user row (a usable opening, B09)
        or, after a summary, the first row past its coverage (issue 45 item 4a: rows a
        checkpoint kept out of its summary are carried whatever their role), and not inside
        a unit. Pairing is repaired over the whole run, request and every row
        after it (``after``) included, so a call before the request pairs with its result
        after it; the request's row is then left out (it travels as ``request``). Returns the
        messages and the first earlier seq, or ``(chosen, None)`` when nothing earlier fits."""
        left = room - (json_len(chosen) if chosen else 2) - 1
        if left <= 2:
            return chosen, None
        window = self._window(covers + 1, left, before=req_seq)
        if not window:
            return chosen, None
        pairs = self.store.tool_calls_from(self.key, window[0].seq)
        roles = {m.seq: m.role for m in window}
        # issue 45 item 4a: the first row after the summary's coverage is an opening too (the
        # summary comes right before it), so rows a checkpoint kept out of its summary before
        # the request are carried even when they do not start with a user row
        opening = self._edge(covers, req_seq, oldest=True)
        starts = [
            b
            for b in _valid_starts(window, pairs, covers + 1)
            if roles[b] is Role.USER or (b == opening and covers >= 0)
        ]
        sizes = _suffix_bytes(window)
        fitting = [b for b in starts if sizes[b] <= left]  # newest first
        for start in reversed(fitting):  # oldest first: exact checks towards newer starts
            seqs = [r.seq for r in window if r.seq >= start] + [req_seq] + after
            messages = [
                m
                for m in self._messages_for(seqs, pairs)
                if not (m["seq"] == req_seq and m["role"] == "user")
            ]
            if json_len(messages) <= room and messages and messages[0]["seq"] < req_seq:
                return messages, messages[0]["seq"]
        return chosen, None

    def _window(self, lower: int, room: int, before: int | None = None) -> list[RowMeta]:
        """Message rows from the newest (below ``before`` when given) back to ``lower``,
        until their bytes pass ``room``."""
        rows: list[RowMeta] = []
        total = 0
        while True:
            page = self.store.rows_meta(
                self.key, after_seq=lower - 1, before_seq=before, limit=PAGE_ROWS
            )
            for meta in page:
                if meta.kind is not EntryKind.MESSAGE:
                    continue  # older compaction rows inside the kept window are ignored (B56)
                rows.append(meta)
                total += meta.view_bytes
            if len(page) < PAGE_ROWS or total > room:
                break
            before = page[-1].seq
        rows.reverse()
        return rows

    @staticmethod
    def _from_first_user(window: list[RowMeta]) -> list[RowMeta]:
        for i, meta in enumerate(window):
            if meta.role is Role.USER:
                return window[i:]
        return []

    # -- step 7: pairing and repair ---------------------------------------------------------

    def _messages(
        self, window: list[RowMeta], start: int, pairs: Sequence[Any]
    ) -> list[dict[str, Any]]:
        """The repaired view messages of the window's rows from ``start`` (copied=false)."""
        return self._messages_for([r.seq for r in window if r.seq >= start], pairs)

    def _messages_for(self, seqs: list[int], pairs: Sequence[Any]) -> list[dict[str, Any]]:
        """The repaired view messages of the rows ``seqs`` (ascending; copied=false)."""
        entries = self._load(seqs)
        result_anywhere = {p.call_id for p in pairs if p.result_seq is not None}
        rows = name_unnamed([(e.seq, e.role, list(e.blocks)) for e in entries])
        # issue 45 item 4d: results in their calls' order (pi writes parallel results as
        # they complete), before repair, which then keeps paired units as they are
        return [
            message_view(seq, role.value, blocks, False)
            for seq, role, blocks in repair(_results_in_call_order(rows), result_anywhere)
        ]

    def _load(self, seqs: list[int]) -> list[Entry]:
        """Rows by seq, each read from the store (and redacted) at most once per assembly."""
        cache = self._cache
        missing = [s for s in seqs if s not in cache]
        if missing:
            for e in self.store.entries_by_seq(self.key, missing):
                cache[e.seq] = replace(e, blocks=tuple(redacted_block(b) for b in e.blocks))
        return [cache[s] for s in seqs if s in cache]

    def _copied(self, req_seq: int | None, covers: int, start: int | None) -> bool:
        """Seed 002: when the request and the suffix are not contiguous, the view is copied.
        Only message rows break contiguity (issue 45 item 4a): the continuation checkpoint
        row that follows a request with no answer yet, or an older compaction row, is no
        conversation left out (the summary travels on its own), so it neither makes the view
        a copy nor keeps the kept rows before the request out of it."""
        if req_seq is None:
            return True
        if req_seq <= covers:
            return True
        return self._edge(req_seq, start, oldest=True) is not None

    def _clipped(
        self, window: list[RowMeta], starts: list[int], pairs: Sequence[Any], room: int
    ) -> list[dict[str, Any]]:
        """Nothing fits whole: keep the newest unit that has something to show, with its
        longest texts cut head and tail around an omitted-bytes marker (B18, B20); synthetic
        "effects unknown" answers are never cut. Empty when even that cannot fit."""
        for start in starts:  # newest first
            messages = self._messages(window, start, pairs)
            if not messages:
                continue
            for _ in range(8):
                over = json_len(messages) - room
                if over <= 0:
                    self.view.clipped = True
                    return messages
                if not _clip_largest(messages, over):
                    break
            return []
        return []

    # -- step 10: named gaps --------------------------------------------------------------

    def _gaps(
        self, covers: int, req_seq: int | None, start: int | None, earlier_first: int | None = None
    ) -> list[Gap]:
        regions: list[tuple[int, int | None]] = []  # (after, before) exclusive bounds
        suffix_floor = start
        if req_seq is not None and req_seq > covers:
            regions.append((covers, req_seq if earlier_first is None else earlier_first))
            regions.append((req_seq, suffix_floor))
        else:
            regions.append((covers, suffix_floor))
        gaps = []
        for after, before in regions:
            first = self._edge(after, before, oldest=True)
            if first is None:
                continue
            last = self._edge(after, before, oldest=False)
            gaps.append(Gap(first, last if last is not None else first))
        return gaps

    def _edge(self, after: int, before: int | None, *, oldest: bool) -> int | None:
        """The first (or last) message row strictly between the bounds; None if none."""
        cursor_after, cursor_before = after, before
        while True:
            page = self.store.rows_meta(
                self.key,
                after_seq=cursor_after,
                before_seq=cursor_before,
                limit=64,
                newest_first=not oldest,
            )
            for meta in page:
                if meta.kind is EntryKind.MESSAGE:
                    return meta.seq
            if len(page) < 64:
                return None
            if oldest:
                cursor_after = page[-1].seq
            else:
                cursor_before = page[-1].seq


def recent_exchanges_start(
    store: Store, session_key: str, *, after_seq: int, room: int
) -> int | None:
    """Where the most recent complete exchanges after ``after_seq`` start: the oldest seq from
    which the visible message rows fit ``room`` UTF-8 bytes as view messages (their stored
    ``view_bytes``, a comma each and the list's brackets), cut at a unit boundary (never
    between a tool call and its result, spec Part 2 step 6) and, when one fits, at a user
    row (an exchange opens with the user; a usable opening, B09). At least one message row
    is left before it (something to summarise). None when not even the newest unit fits.

    Our checkpoint keeps the rows from here out of its summary so the next continuation
    carries them verbatim (issue 15; seed 002: "complete-exchange recovery"). Reads row
    metadata from the newest row back until ``room`` is spent, and the tool-call index of
    that window: bounded like the continuation itself."""
    if room <= 2:
        return None
    rows: list[RowMeta] = []
    total, before, exhausted = 2, None, False
    while True:
        page = store.rows_meta(session_key, after_seq=after_seq, before_seq=before, limit=PAGE_ROWS)
        for meta in page:
            if meta.kind is EntryKind.MESSAGE:
                rows.append(meta)
                total += meta.view_bytes + 1
        if len(page) < PAGE_ROWS:
            exhausted = True
            break
        if total > room:
            break
        before = page[-1].seq
    if len(rows) < 2:
        return None
    rows.reverse()
    pairs = store.tool_calls_from(session_key, rows[0].seq)
    sizes = _suffix_bytes(rows)
    roles = {m.seq: m.role for m in rows}
    best = best_user = None
    for start in _valid_starts(rows, pairs, after_seq + 1):  # newest first
        if exhausted and start == rows[0].seq:
            break  # the oldest row of the view: nothing would be left to summarise
        if sizes[start] + 1 > room:
            break
        best = start
        if roles[start] is Role.USER:
            best_user = start
    return best_user if best_user is not None else best


def _valid_starts(window: list[RowMeta], pairs: Sequence[Any], lower: int) -> list[int]:
    """Row seqs of ``window`` where a suffix may start, newest first: never inside a unit.

    A start ``b`` is invalid when a call at or after ``lower`` and before ``b`` has its result
    at or after ``b`` (the unit would be split). Calls before ``lower`` (summarised, or before
    the request) do not bind: their late results are orphans and are dropped (B07).
    """
    seqs = [r.seq for r in window]
    depth = [0] * (len(seqs) + 1)
    for p in pairs:
        if p.result_seq is None or p.call_seq < lower or p.call_seq >= p.result_seq:
            continue
        lo = bisect_right(seqs, p.call_seq)  # first row after the call
        hi = bisect_right(seqs, p.result_seq)  # first row after the result
        if lo < hi:
            depth[lo] += 1
            depth[hi] -= 1
    out, open_units = [], 0
    for i, seq in enumerate(seqs):
        open_units += depth[i]
        if open_units == 0:
            out.append(seq)
    out.reverse()
    return out


def _suffix_bytes(window: list[RowMeta]) -> dict[int, int]:
    """``{seq: stored bytes of the rows from seq to the newest}`` plus one comma per row."""
    out: dict[int, int] = {}
    total = 0
    for meta in reversed(window):
        total += meta.view_bytes + 1
        out[meta.seq] = total
    return out


#: The id a call gets when its harness left the id empty (issue 15): ``unnamed-<seq>-<n>``,
#: the row's seq and the call's place among that row's unnamed calls.
UNNAMED_ID = "unnamed-{seq}-{n}"


def name_unnamed(rows: list[tuple[int, Role, list[Block]]]) -> list[tuple[int, Role, list[Block]]]:
    """Pair tool calls and results whose harness left the id empty, by position (issue 15:
    they were dropped silently, so the next run could not tell a write happened).

    Each call with an empty id gets ``UNNAMED_ID``; each result with an empty id answers the
    oldest such call not yet answered (first in, first out, the order harnesses run and
    report calls), and takes its id. A user row without results starts a new turn: unnamed
    calls still open then stay unanswered (``repair`` gives them the "effects unknown"
    answer). A result left with no unnamed call before it keeps its empty id, and ``repair``
    drops it as an orphan (its call is outside the view: summarised or in a named gap).
    Rows without empty ids are returned unchanged (the same objects)."""
    queue: list[str] = []
    out: list[tuple[int, Role, list[Block]]] = []
    for seq, role, blocks in rows:
        if role is Role.USER and not any(isinstance(b, ToolResultBlock) for b in blocks):
            queue = []
        if not any(
            (isinstance(b, ToolCallBlock) and not b.id)
            or (isinstance(b, ToolResultBlock) and not b.call_id)
            for b in blocks
        ):
            out.append((seq, role, blocks))
            continue
        named: list[Block] = []
        n = 0
        for b in blocks:
            if isinstance(b, ToolCallBlock) and not b.id:
                b = replace(b, id=UNNAMED_ID.format(seq=seq, n=n))
                n += 1
                queue.append(b.id)
            elif isinstance(b, ToolResultBlock) and not b.call_id and queue:
                b = replace(b, call_id=queue.pop(0))
            named.append(b)
        out.append((seq, role, named))
    return out


def repair(
    rows: list[tuple[int, Role, list[Block]]], result_anywhere: set[str]
) -> list[tuple[int, Role, list[Block]]]:
    """Pair tool calls over a whole view (spec Part 2, step 7). Idempotent.

    - A result whose call is not earlier in the view, or that answers a call already answered,
      is dropped (B02, B06, B07); a row left empty by that is dropped.
    - A call with no result in the view and none anywhere in the log gets one synthetic error
      result saying its effects are unknown (B01, B14). Synthetic results for one assistant turn
      go together, in call order, right after the turn's calls and existing results, before any
      later text, user row or new turn.
    - A call whose real result exists in the log but not in the view is dropped from the view
      rather than given a false synthetic answer (never over-repair, B12).
    - A call or result with an empty id is dropped: it can pair with nothing, and a provider
      refuses it (B05: "tool_call_id  is not found"); a row left empty by that is dropped.
      The continuation first names them by position (``name_unnamed``, issue 15), so only a
      result with no unnamed call before it in the view is left for this rule.
    """
    calls_seen: set[str] = set()
    answered: set[str] = set()
    cleaned: list[tuple[int, Role, list[Block]]] = []
    all_results_in_view = {
        b.call_id for _, _, blocks in rows for b in blocks if isinstance(b, ToolResultBlock)
    }
    for seq, role, blocks in rows:
        kept: list[Block] = []
        for b in blocks:
            if isinstance(b, (ToolResultBlock, ToolCallBlock)) and not (
                b.call_id if isinstance(b, ToolResultBlock) else b.id
            ):
                continue  # B05: an empty id is never emitted
            if isinstance(b, ToolResultBlock):
                if b.call_id not in calls_seen or b.call_id in answered:
                    continue
                answered.add(b.call_id)
            elif isinstance(b, ToolCallBlock):
                if b.id in calls_seen:
                    continue  # a repeated call id: the first call stands
                if b.id not in all_results_in_view and b.id in result_anywhere:
                    continue  # its real result lies outside the view
                calls_seen.add(b.id)
            kept.append(b)
        if kept:
            cleaned.append((seq, role, kept))
    out: list[tuple[int, Role, list[Block]]] = []
    pending: list[ToolCallBlock] = []  # calls of the current turn with no result in the view
    prev_role: Role | None = None
    for seq, role, blocks in cleaned:
        calls = [b for b in blocks if isinstance(b, ToolCallBlock)]
        if pending and (
            role not in (Role.ASSISTANT, Role.TOOL)
            or (role is Role.ASSISTANT and (not calls or prev_role is Role.TOOL))
        ):
            out.append(_synthetic(out[-1][0], pending))  # the turn's calls end here
            pending = []
        out.append((seq, role, blocks))
        if role is Role.ASSISTANT:
            pending.extend(c for c in calls if c.id not in answered)
        prev_role = role
    if pending:
        out.append(_synthetic(out[-1][0], pending))
    return out


def _results_in_call_order(
    rows: list[tuple[int, Role, list[Block]]],
) -> list[tuple[int, Role, list[Block]]]:
    """``rows`` with each run of consecutive tool rows that hold only results (and the
    results inside each such row) ordered by the position of their calls among the calls
    before them (issue 45 item 4d; the rows keep their seqs, so such a run's seqs may
    go down). A result whose call is not among them keeps its place after the others
    (stable sort). Idempotent."""
    out: list[tuple[int, Role, list[Block]]] = []
    order: dict[str, int] = {}  # call id -> position among the calls seen so far
    run: list[tuple[int, Role, list[ToolResultBlock]]] = []

    def rank(call_id: str) -> int:
        return order.get(call_id, len(order))

    def flush() -> None:
        run.sort(key=lambda r: min(rank(b.call_id) for b in r[2]))
        for seq, role, results in run:
            blocks: list[Block] = list(results)
            out.append((seq, role, blocks))
        run.clear()

    for seq, role, blocks in rows:
        results = [b for b in blocks if isinstance(b, ToolResultBlock)]
        if role is Role.TOOL and blocks and len(results) == len(blocks):  # only results
            run.append((seq, role, sorted(results, key=lambda b: rank(b.call_id))))
            continue
        flush()
        for b in blocks:
            if isinstance(b, ToolCallBlock):
                order.setdefault(b.id, len(order))
        out.append((seq, role, blocks))
    flush()
    return out


def redacted_block(block: Block) -> Block:
    """``block`` with every text it shows the next run passed through ``redact`` (B29: no byte
    of a recorded secret reaches a continuation view; the stored row stays lossless)."""
    if isinstance(block, (TextBlock, ThinkingBlock)):
        return replace(block, text=redact(block.text))
    if isinstance(block, ToolResultBlock):
        return replace(block, text=redact(block.text))
    if isinstance(block, ToolCallBlock):
        return replace(block, arguments=redact_value(block.arguments))  # issue 15
    return block


def _synthetic(seq: int, calls: list[ToolCallBlock]) -> tuple[int, Role, list[Block]]:
    """One tool row answering ``calls`` with "effects unknown" errors; ``seq`` is the seq of the
    row it follows (message seqs never go backwards)."""
    blocks: list[Block] = [
        ToolResultBlock(c.id, True, UNKNOWN_EFFECTS.format(name=c.name, id=c.id), synthetic=True)
        for c in calls
    ]
    return (seq, Role.TOOL, blocks)


def _clip_largest(messages: list[dict[str, Any]], over: int) -> bool:
    """Cut the longest text among ``messages`` by about ``over`` bytes (head and tail kept,
    marker between): a text, thinking or result text, or a string inside a tool call's
    arguments (a Write call's 300 KB content); synthetic answers are left whole. False when
    nothing can be cut."""
    best = None
    for m in messages:
        for block in m["content"]:
            if block.get("synthetic"):
                continue
            for holder, key in _strings(block):
                size = utf8_len(holder[key])
                if best is None or size > best[2]:
                    best = (holder, key, size)
    if best is None or best[2] <= 128:
        return False
    holder, key, size = best
    holder[key] = clip_middle(holder[key], max(0, size - over - 64))
    return True


def _strings(block: dict[str, Any]) -> Iterator[tuple[Any, Any]]:
    """``(container, key)`` of each string a view block shows: its ``text``, or every string
    leaf of a tool call's ``arguments`` (keys and structure are never cut)."""
    if isinstance(block.get("text"), str):
        yield block, "text"
    if block.get("type") != "tool_call":
        return
    stack: list[tuple[Any, Any]] = [(block, "arguments")]
    while stack:
        holder, key = stack.pop()
        value = holder[key]
        if isinstance(value, str):
            yield holder, key
        elif isinstance(value, dict):
            stack.extend((value, k) for k in value)
        elif isinstance(value, list):
            stack.extend((value, i) for i in range(len(value)))


__all__ = [
    "ContinuationView",
    "Gap",
    "RefusalReason",
    "build_continuation",
    "repair",
    "name_unnamed",
    "UNNAMED_ID",
    "request_media",
    "recent_exchanges_start",
    "bounded_notes",
    "GAP_NOTICE_RESERVE",
    "effective_compaction",
    "used_bytes",
    "summary_text",
    "gap_notice",
    "UNKNOWN_EFFECTS",
]
