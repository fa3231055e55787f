"""``continuation.harness``: the summary of a harness's own continuation checkpoint (issue 14,
pi), over the working view it hands us: evidence, fail-closed reasons, the budget."""

from __future__ import annotations

import threading
import time

from hypothesis import given, settings, strategies as st

from continuity.continuation.harness import split_view, summarize_working_view
from continuity.continuation.summarize.extractive import ExtractiveSummarizer
from continuity.formats.pi import read_entries


def _branch(n: int = 3, size: int = 3000) -> list[dict]:
    out: list[dict] = [
        {"type": "compaction", "id": "c-old", "parentId": None, "summary": "## Goal\n- older"},
        {
            "type": "compaction",
            "id": "c-new",
            "parentId": "c-old",
            "summary": "## Goal\n- Ship the ledger export\n## Progress\n## Next steps\n- tests",
        },
        {
            "type": "custom_message",
            "id": "rc",
            "parentId": "c-new",
            "customType": "continuity-recovery",
            "content": "export runs at 02:00",
        },
        {
            "type": "message",
            "id": "u1",
            "parentId": "rc",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "Check the export logs"}],
            },
        },
    ]
    for i in range(n):
        out.append(
            {
                "type": "message",
                "id": f"a{i}",
                "parentId": "u1",
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "toolCall",
                            "id": f"k{i}",
                            "name": "bash",
                            "arguments": {"command": f"cat log{i}"},
                        }
                    ],
                },
            }
        )
        out.append(
            {
                "type": "message",
                "id": f"t{i}",
                "parentId": f"a{i}",
                "message": {
                    "role": "toolResult",
                    "toolCallId": f"k{i}",
                    "toolName": "bash",
                    "content": [{"type": "text", "text": "y" * size}],
                },
            }
        )
    out.append(
        {
            "type": "message",
            "id": "end",
            "parentId": "t0",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "The logs are clean."}],
                "stopReason": "stop",
            },
        }
    )
    return out


def test_split_view_keeps_only_the_newest_summary_and_quotes_context():
    parts = split_view(read_entries(_branch()))
    assert parts.previous.startswith("## Goal\n- Ship the ledger export")
    assert parts.context == ("export runs at 02:00",)
    assert [r.native_id for r in parts.rows][:2] == ["u1", "a0"]
    assert all(r.kind.value == "message" for r in parts.rows)


def test_summary_merges_the_previous_summary_and_fits_the_budget():
    result = summarize_working_view(
        read_entries(_branch()), summarizer=ExtractiveSummarizer(), deadline=time.monotonic() + 10
    )
    assert result.reason is None
    assert "Ship the ledger export" in result.summary
    assert "Check the export logs" in result.summary
    assert "y" * 1000 not in result.summary
    assert len(result.summary.encode()) <= 120_000  # half the 240,000-byte budget


def test_fail_closed_reasons():
    rows = read_entries(_branch())
    ex = ExtractiveSummarizer()
    assert (
        summarize_working_view(rows[:3], summarizer=ex, deadline=time.monotonic() + 10).reason.value
        == "empty"
    )
    cancel = threading.Event()
    cancel.set()
    assert (
        summarize_working_view(
            rows, summarizer=ex, cancel=cancel, deadline=time.monotonic() + 10
        ).reason.value
        == "cancelled"
    )
    assert (
        summarize_working_view(rows, summarizer=ex, deadline=time.monotonic() - 1).reason.value
        == "cancelled"
    )
    # a reply over the summary's share of the budget: refused, never cut
    assert (
        summarize_working_view(
            rows, summarizer=Wordy(), budget_bytes=4_000, deadline=time.monotonic() + 10
        ).reason.value
        == "over_bound"
    )


class Wordy:
    """A provider answering a well-formed summary of 3,000 bytes whatever the bound."""

    name, max_input_bytes, max_summary_bytes, min_seconds = "openai", 400_000, 24_000, 0.0

    def generate(self, request, *, cancel, deadline):  # type: ignore[no-untyped-def]
        from continuity.continuation.summarize import ProviderReply

        return ProviderReply("## Goal\n- " + "w" * 3000 + "\n## Progress\n## Next steps\n")


@settings(max_examples=40, deadline=None)
@given(budget=st.integers(1_000, 300_000), calls=st.integers(1, 8), size=st.integers(0, 20_000))
def test_the_next_view_stays_under_the_budget(budget: int, calls: int, size: int):
    """Whatever the budget and the view, a summary given back is one whose quoted text (as
    the next continuation carries it, the whole view after a self-retaining checkpoint) is
    below the budget: no compaction loop; a refusal carries no summary."""
    from continuity.continuation.view import summary_text
    from continuity.core.text import json_len

    rows = read_entries(_branch(n=calls, size=size))
    result = summarize_working_view(
        rows, summarizer=ExtractiveSummarizer(), budget_bytes=budget, deadline=time.monotonic() + 10
    )
    if result.reason is None:
        assert json_len(summary_text(result.summary, 0, result.last_seq)) < budget
    else:
        assert result.summary is None
