"""``continuity.usage`` (issue 44 item 1) on the sample files: the counts below were computed
independently of the code, with jq over the raw files, e.g. for Claude Code

    jq -s '[.[] | select(.message.usage != null and .timestamp != null)]
           | unique_by([.message.id, .requestId])
           | {n: length, i: (map(.message.usage.input_tokens)|add), ...}' FILE

(Codex: the last ``total_token_usage`` of the file; pi and OpenCode: the sum over assistant
messages). Each test imports the files into a fresh workspace and reads them back through
the store, as ``continuity usage`` does."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from continuity.api.workspace import Workspace
from continuity.core.errors import InputError
from continuity.usage.extract import MessageUsage, UsageReader
from continuity.usage.prices import shipped
from continuity.usage.report import (
    breakdown,
    collect,
    group,
    group_key,
    price,
    summarize,
    totals,
)

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "samples"
OPENCODE = Path(__file__).resolve().parents[1] / "fixtures" / "opencode"
CODEX_REAL = (
    SAMPLES
    / "real-harness/codex/sessions/2026/12/02"
    / "rollout-2026-12-02T05-59-51-01a23556-7fab-7dd1-86d3-d100eb5ab801.jsonl"
)


def _imported(tmp_path: Path, *paths: Path) -> Workspace:
    ws = Workspace.open(tmp_path / "ws")
    result = ws.import_(list(paths), embed=False)
    assert result.exit_code == 0
    return ws


def _sums(messages: list[MessageUsage]) -> tuple[int, int, int, int, int]:
    return (
        len(messages),
        sum(m.input_tokens for m in messages),
        sum(m.output_tokens for m in messages),
        sum(m.cache_creation_tokens for m in messages),
        sum(m.cache_read_tokens for m in messages),
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # (messages, input, output, cache write, cache read): jq, first line per id pair
        ("short.jsonl", (1, 3, 13, 13835, 11515)),
        ("subagent.jsonl", (12, 1576, 534, 25842, 427286)),
        ("tool_heavy.jsonl", (4, 54, 64, 17696, 88231)),
    ],
)
def test_claude_code_counts_each_streamed_message_once(tmp_path, name, expected):
    """short.jsonl has 5 lines with usage but one message (msg_01MKH1cc…, one requestId):
    its usage counts once."""
    with _imported(tmp_path, SAMPLES / "claude-code" / name) as ws:
        found = collect(ws.store(), harness="claude-code")
    assert _sums(found) == expected
    assert {m.model for m in found} <= {"claude-opus-4-6", "claude-haiku-4-5-20251001"}


def test_codex_running_totals_become_one_record_per_response(tmp_path):
    """The real 0.171 rollout writes 5 token_count events, two repeating the total before
    them; its last total is 150 input, 60 output: three responses of 50 + 20."""
    with _imported(tmp_path, CODEX_REAL) as ws:
        found = collect(ws.store(), harness="codex")
    assert [(m.input_tokens, m.output_tokens, m.model) for m in found] == [(50, 20, "gpt-fake")] * 3


def test_codex_cached_input_is_moved_out_of_input(tmp_path):
    """sample-session.jsonl: total 16,808 input of which 6,528 cached, 469 output of which 62
    reasoning, model gpt-5.5 (its turn_context)."""
    with _imported(tmp_path, SAMPLES / "codex" / "sample-session.jsonl") as ws:
        (one,) = collect(ws.store())
    assert (one.input_tokens, one.cache_read_tokens, one.output_tokens, one.reasoning_tokens) == (
        10280,
        6528,
        469,
        62,
    )
    assert one.model == "gpt-5.5"
    assert one.at == datetime(2026, 4, 27, 19, 1, 11, 360000, tzinfo=UTC)


def test_pi_usage_per_assistant_message(tmp_path):
    """large-session.jsonl (pi v1): 453 assistant messages with usage (jq), 1,049 input,
    83,156 output, 4,296,232 cache write, 43,229,469 cache read."""
    with _imported(tmp_path, SAMPLES / "pi" / "large-session.jsonl") as ws:
        found = collect(ws.store(), harness="pi")
    assert _sums(found) == (453, 1049, 83156, 4296232, 43229469)


def test_opencode_usage_from_its_message_records(tmp_path):
    """The OpenCode JSON fixture: two assistant messages of fake-model, 100 input and 20
    output each."""
    data = tmp_path / "opencode"
    shutil.copytree(OPENCODE / "json", data)
    with _imported(tmp_path, data) as ws:
        found = collect(ws.store(), harness="opencode")
    assert [(m.model, m.input_tokens, m.output_tokens) for m in found] == [
        ("fake-model", 100, 20)
    ] * 2
    assert found[0].at == datetime.fromtimestamp(1796225380.732, UTC)


def test_a_file_imported_twice_under_another_name_counts_once(tmp_path):
    """ccusage's rule across files: the same message.id + requestId in a second file (a
    copy) is not counted again."""
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copyfile(SAMPLES / "claude-code" / "subagent.jsonl", copy / "other.jsonl")
    text = (copy / "other.jsonl").read_text()
    (copy / "other.jsonl").write_text(
        text.replace("55604662-cf2a-4331-851a-ec234028f8ca", "99999999-cf2a-4331-851a-ec2340000000")
    )
    with _imported(tmp_path, SAMPLES / "claude-code" / "subagent.jsonl", copy) as ws:
        found = collect(ws.store(), harness="claude-code")
        sessions = {m.session_key for m in found}
    assert _sums(found) == (12, 1576, 534, 25842, 427286)
    assert len(sessions) >= 1


def test_since_and_until_bound_by_the_response_time(tmp_path):
    with _imported(tmp_path, SAMPLES / "claude-code") as ws:
        report = ws.usage(since="2025-09-04", until="2026-01-01")
    assert [r.key for r in report.rows] == ["2025-09-07"]
    assert report.totals.input_tokens == 129  # jq: 5c0375b4….jsonl
    assert report.totals.output_tokens == 2498


def test_a_model_without_a_price_is_named_and_never_costed_at_0(tmp_path):
    """The real-harness Codex files use gpt-fake, which no table prices: its rows cost None,
    the note names it, the totals' cost is what is priced (None here: nothing is)."""
    with _imported(tmp_path, CODEX_REAL) as ws:
        report = ws.usage(by="model")
    assert report.unpriced_models == ("gpt-fake",)
    assert report.rows[0].cost_usd is None
    assert report.rows[0].unpriced_models == ("gpt-fake",)
    assert report.totals.cost_usd is None
    assert report.totals.input_tokens == 150
    assert report.notes == (
        "no price for model gpt-fake: its usage is counted, its cost left out (not 0)",
    )


def test_costs_follow_litellm_prices(tmp_path):
    """short.jsonl's one message on claude-opus-4-6 (LiteLLM: $5/M input, $25/M output,
    $6.25/M cache write, $0.50/M cache read): 3*5e-6 + 13*25e-6 + 13835*6.25e-6 +
    11515*0.5e-6 = $0.09256625."""
    with _imported(tmp_path, SAMPLES / "claude-code" / "short.jsonl") as ws:
        report = ws.usage()
    assert report.totals.cost_usd == pytest.approx(0.09256625, abs=1e-9)
    assert report.rows[0].key == "2026-02-10"


def test_the_json_shape(tmp_path):
    with _imported(tmp_path, SAMPLES / "claude-code" / "short.jsonl") as ws:
        data = ws.usage(by="session").to_dict()
    assert list(data) == ["totals", "rows", "unpriced_models"]
    assert data["unpriced_models"] == []
    assert list(data["totals"]) == [
        "input_tokens",
        "output_tokens",
        "cache_creation_tokens",
        "cache_read_tokens",
        "reasoning_tokens",
        "cost_usd",
    ]
    (row,) = data["rows"]
    assert row["key"] == "55604662-cf2a-4331-851a-ec234028f8ca"
    assert row["total_tokens"] == 3 + 13 + 13835 + 11515
    assert row["models"] == ["claude-opus-4-6"]


def test_bad_arguments_name_themselves(tmp_path):
    with Workspace.open(tmp_path / "ws") as ws:
        with pytest.raises(InputError, match=r"^by: 'year'"):
            ws.usage(by="year")
        with pytest.raises(InputError, match=r"^harness: 'cursor'"):
            ws.usage(harness="cursor")
        with pytest.raises(InputError, match=r"^until"):
            ws.usage(until="soon")
        with pytest.raises(InputError, match=r"^timezone: 'Mars/X' is not an IANA time zone"):
            ws.usage(timezone="Mars/X")
        with pytest.raises(
            InputError,
            match=r"^since \(2026-12-05T00:00:00\+00:00\) is not before until "
            r"\(2026-12-01T00:00:00\+00:00\)",
        ):
            ws.usage(since="2026-12-05", until="2026-12-01")
        assert ws.usage(harness="langgraph").rows == ()


def test_breakdown_per_day_and_model(tmp_path):
    with _imported(
        tmp_path, SAMPLES / "claude-code", SAMPLES / "pi" / "v3-short-session.jsonl"
    ) as ws:
        messages = price(collect(ws.store()), shipped())
    days = breakdown(messages, "day", "model")
    assert list(days) == ["2025-09-03", "2025-09-07", "2026-02-10", "2026-06-05"]
    assert [(r.key, r.input_tokens) for r in days["2026-06-05"]] == [("gpt-5.5", 433)]
    assert sum(r.messages for rows in days.values() for r in rows) == len(messages)
    assert totals(messages).input_tokens == sum(r.input_tokens for r in group(messages, "model"))


def test_a_line_that_is_not_json_or_has_no_usage_is_skipped():
    reader = UsageReader()
    lines = [b"{not json", b"[1]", b'{"usage": 1}', b'{"message": {"usage": {}}}']
    assert list(reader.read("claude-code", "k", None, lines)) == []
    assert list(reader.read("langgraph", "k", None, lines)) == []


def test_every_backend_reads_the_same_usage(store, tmp_path):
    """SQLite and, with CONTINUITY_TEST_DATABASE_URL, PostgreSQL: the raw lines come back
    the same, so does the usage (jq sums over the five Claude Code sample files and the
    Codex one: 12,135 input, 3,846 output over 44 + 1 responses)."""
    from continuity.formats.importer import import_paths

    import_paths(
        store, [SAMPLES / "claude-code", SAMPLES / "codex" / "sample-session.jsonl"], home=tmp_path
    )
    found = collect(store)
    assert (len(found), sum(m.input_tokens for m in found)) == (45, 12135)
    assert sum(m.output_tokens for m in found) == 3846
    assert [m.at for m in found] == sorted(m.at for m in found)


def _codex_count(ts: str, total: tuple[int, int], last: tuple[int, int]) -> bytes:
    def usage(pair: tuple[int, int]) -> dict:
        return {"input_tokens": pair[0], "cached_input_tokens": 0, "output_tokens": pair[1]}

    return orjson.dumps(
        {
            "timestamp": ts,
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {"total_token_usage": usage(total), "last_token_usage": usage(last)},
            },
        }
    )


def test_codex_a_restarted_total_counts_the_last_usage_and_a_copied_file_counts_once():
    lines = [
        _codex_count("2026-12-01T10:00:00Z", (100, 10), (100, 10)),
        _codex_count("2026-12-01T10:01:00Z", (100, 10), (0, 0)),  # repeated: nothing new
        _codex_count("2026-12-01T10:02:00Z", (30, 3), (30, 3)),  # restarted after a resume
        _codex_count("2026-12-01T10:03:00Z", (50, 5), (20, 2)),
    ]
    reader = UsageReader()
    got = [(m.input_tokens, m.output_tokens) for m in reader.read("codex", "a", None, lines)]
    assert got == [(100, 10), (30, 3), (20, 2)]
    # a fork's file repeating the same records adds nothing
    assert list(reader.read("codex", "b", None, lines)) == []


def test_claude_codes_own_cost_is_taken_as_ccusage_takes_it():
    line = orjson.dumps(
        {
            "timestamp": "2025-06-01T00:00:00.000Z",
            "costUSD": 0.25,
            "message": {"model": "claude-x", "usage": {"input_tokens": 7, "output_tokens": 1}},
        }
    )
    # without message.id and requestId ccusage cannot tell a repeat: each line counts
    got = list(UsageReader().read("claude-code", "k", "/p", [line, line]))
    assert [(m.cost_usd, m.input_tokens, m.project) for m in got] == [(0.25, 7, "/p")] * 2
    assert price(got, shipped())[0].cost_usd == 0.25  # not re-priced: claude-x has no price


def test_a_row_mixing_priced_and_unpriced_models_costs_its_priced_part():
    """One day on claude-opus-4-6 (priced: 1,000 output at $25/M = $0.025) and gpt-fake (no
    price): the row's cost is $0.025, partial, naming gpt-fake; a row of gpt-fake alone is
    None; the rows add up to the total."""
    at = datetime(2026, 12, 2, 9, tzinfo=UTC)
    messages = price(
        [
            MessageUsage(at, "claude-code", "a", None, "claude-opus-4-6", 0, 1000, 0, 0, 0),
            MessageUsage(at, "codex", "b", None, "gpt-fake", 10, 10, 0, 0, 0),
            MessageUsage(at.replace(day=3), "codex", "b", None, "gpt-fake", 10, 10, 0, 0, 0),
        ],
        shipped(),
    )
    first, second = group(messages, "day")
    assert first.cost_usd == pytest.approx(0.025)
    assert first.unpriced_models == ("gpt-fake",)
    assert first.partial is True
    assert second.cost_usd is None
    assert second.partial is False
    report = summarize(messages, "day", shipped())
    assert report.totals.cost_usd == pytest.approx(0.025)
    data = report.to_dict()
    assert data["unpriced_models"] == ["gpt-fake"]
    assert [r["cost_usd"] for r in data["rows"]] == [pytest.approx(0.025), None]


def test_claude_code_s_synthetic_messages_are_not_model_responses():
    """Claude Code writes ``<synthetic>`` (all-zero usage) for messages it makes itself:
    neither counted nor listed as a model, as ccusage does (fresh-user review item 3)."""

    def line(model: str, msg_id: str, output: int) -> bytes:
        return orjson.dumps(
            {
                "type": "assistant",
                "timestamp": "2026-12-02T10:00:00Z",
                "requestId": "req_" + msg_id,
                "message": {
                    "id": msg_id,
                    "model": model,
                    "usage": {
                        "input_tokens": 0,
                        "output_tokens": output,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                    },
                },
            }
        )

    found = list(
        UsageReader().read(
            "claude-code",
            "s",
            None,
            [line("<synthetic>", "m1", 0), line("claude-opus-4-6", "m2", 7)],
        )
    )
    assert [(m.model, m.output_tokens) for m in found] == [("claude-opus-4-6", 7)]
    (row,) = group(price(found, shipped()), "day")
    assert row.models == ("claude-opus-4-6",)
    assert row.messages == 1


def test_days_weeks_and_months_are_in_the_time_zone_given(tmp_path):
    """2026-11-30T23:30Z (a Monday) is 2026-12-01 in Berlin and in UTC+1's week of
    2026-11-30; 2026-12-01T03:00Z is 2026-11-30 (November) in Los Angeles."""
    with _imported(tmp_path, SAMPLES / "claude-code" / "short.jsonl") as ws:
        berlin = ws.usage(timezone="Europe/Berlin")
        utc = ws.usage(timezone="UTC")
    assert (berlin.timezone, utc.timezone) == ("Europe/Berlin", "UTC")
    assert [r.key for r in utc.rows] == ["2026-02-10"]
    m = MessageUsage(
        datetime(2026, 11, 30, 23, 30, tzinfo=UTC), "pi", "a", None, "m", 1, 0, 0, 0, 0
    )
    la = MessageUsage(datetime(2026, 12, 1, 3, 0, tzinfo=UTC), "pi", "a", None, "m", 1, 0, 0, 0, 0)
    from zoneinfo import ZoneInfo

    assert group_key(m, "day", ZoneInfo("Europe/Berlin")) == "2026-12-01"
    assert group_key(m, "day") == "2026-11-30"
    assert group_key(m, "week", ZoneInfo("Europe/Berlin")) == "2026-11-30"
    assert group_key(la, "month", ZoneInfo("America/Los_Angeles")) == "2026-11"
    assert group_key(la, "month") == "2026-12"


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize(
    ("harness", "fixture", "expected"),
    [
        # (model, input, output) per response, in time order: read off the fixtures with jq
        # (gemini: the distinct ids of `type == "gemini"` records with `tokens`; qwen: the
        # `assistant` records' usageMetadata; copilot: the `session.usage_record` events;
        # kilo: `select data from message` where role is assistant)
        ("gemini-cli", "gemini_cli", [("gemini-3.1-pro-preview", 100, 20)] * 2),
        ("qwen-code", "qwen_code/projects", [("qwen-fake", 100, 20)] * 4),
        ("copilot-cli", "copilot_cli/session-state", [("gpt-fake", 100, 20)] * 4),
        ("kilo", "kilo", [("fake-model", 100, 20)] * 4),
        ("opencode", "opencode/sqlite", [("fake-model", 100, 20)] * 2),
    ],
)
def test_the_new_harnesses_recorded_usage_is_counted(tmp_path, harness, fixture, expected):
    """Fresh-user review of issue 42: `usage` counted no tokens for Gemini CLI, Qwen Code,
    Copilot CLI or Kilo although their files record them (each fixture recorded by the real
    CLI against the fake model, which reports 100 input and 20 output tokens a call)."""
    data = tmp_path / "data"
    shutil.copytree(FIXTURES / fixture, data)
    with _imported(tmp_path, data) as ws:
        found = collect(ws.store(), harness=harness)
    assert [(m.model, m.input_tokens, m.output_tokens) for m in found] == expected
    assert {m.harness for m in found} == {harness}


def test_gemini_cli_counts_a_message_once_across_its_repeats_and_files(tmp_path):
    """gemini_cli's first file writes message fc01a1b2 twice (before and after its tool call)
    and repeats both responses in two `$set` rebuilds; the second file (the resumed run)
    holds none: two responses, at their own times."""
    data = tmp_path / "data"
    shutil.copytree(FIXTURES / "gemini_cli", data)
    with _imported(tmp_path, data) as ws:
        found = collect(ws.store(), harness="gemini-cli")
    assert [m.at for m in found] == [
        datetime(2026, 12, 6, 17, 59, 51, 588000, tzinfo=UTC),
        datetime(2026, 12, 6, 17, 59, 51, 642000, tzinfo=UTC),
    ]


def test_usage_by_harness_reports_the_new_harnesses(tmp_path, monkeypatch, capsys):
    """`continuity usage --by harness --json` has a row for each of them (the fake model's
    100 + 20 tokens a call: 2 Gemini, 4 Qwen, 4 Copilot calls)."""
    from tests.cli.running import run_main

    monkeypatch.setenv("TZ", "UTC")
    home = tmp_path / "ws"
    for fixture in ("gemini_cli", "qwen_code/projects", "copilot_cli/session-state"):
        shutil.copytree(FIXTURES / fixture, tmp_path / "data" / fixture.split("/")[0])
    code, _, err = run_main(monkeypatch, capsys, "import", "--home", home, tmp_path / "data")
    assert code == 0, err
    code, out, _ = run_main(
        monkeypatch, capsys, "usage", "--home", home, "--by", "harness", "--json"
    )
    assert code == 0
    rows = {
        r["key"]: (r["messages"], r["input_tokens"], r["output_tokens"])
        for r in orjson.loads(out)["rows"]
    }
    assert rows == {
        "gemini-cli": (2, 200, 40),
        "qwen-code": (4, 400, 80),
        "copilot-cli": (4, 400, 80),
    }


def _gemini_line(msg_id: str, tokens: dict) -> bytes:
    return orjson.dumps(
        {
            "id": msg_id,
            "timestamp": "2026-12-06T17:59:51.588Z",
            "type": "gemini",
            "content": "",
            "tokens": tokens,
            "model": "gemini-2.5-pro",
        }
    )


def test_gemini_cached_and_tool_prompt_tokens_and_thoughts_as_the_api_counts_them():
    """The Gemini API's prompt count includes the cached part, its total counts thoughts and
    tool-use prompt tokens apart from the candidates: 1,000 prompt of which 600 cached, 50
    tool, 30 candidates, 70 thoughts (total 1,150) is 450 input, 600 cache read, 100 output
    of which 70 reasoning."""
    line = _gemini_line(
        "a",
        {"input": 1000, "output": 30, "cached": 600, "thoughts": 70, "tool": 50, "total": 1150},
    )
    (one,) = UsageReader().read("gemini-cli", "k", None, [line])
    assert (one.input_tokens, one.cache_read_tokens, one.output_tokens, one.reasoning_tokens) == (
        450,
        600,
        100,
        70,
    )


def test_qwen_s_openai_reasoning_is_already_inside_its_candidates():
    """Qwen Code's OpenAI converter puts completion_tokens (reasoning included) in
    candidatesTokenCount and the reasoning again in thoughtsTokenCount; its total is prompt +
    completion (1,200 = 1,000 + 200): output stays 200, 80 of it reasoning; 300 of the prompt
    was cached."""
    line = orjson.dumps(
        {
            "uuid": "u1",
            "timestamp": "2026-12-06T18:10:31.024Z",
            "type": "assistant",
            "model": "qwen3-coder-plus",
            "usageMetadata": {
                "promptTokenCount": 1000,
                "candidatesTokenCount": 200,
                "thoughtsTokenCount": 80,
                "totalTokenCount": 1200,
                "cachedContentTokenCount": 300,
            },
        }
    )
    reader = UsageReader()
    (one,) = reader.read("qwen-code", "k", None, [line, line])
    assert (one.input_tokens, one.cache_read_tokens, one.output_tokens, one.reasoning_tokens) == (
        700,
        300,
        200,
        80,
    )
    assert list(reader.read("qwen-code", "k2", None, [line])) == []  # a copied record: once


def test_copilot_cache_tokens_come_out_of_its_input_and_a_repeated_call_counts_once():
    line = orjson.dumps(
        {
            "type": "session.usage_record",
            "id": "e1",
            "timestamp": "2026-12-06T18:20:16.612Z",
            "data": {
                "usage": {
                    "model": "claude-sonnet-4.5",
                    "inputTokens": 5000,
                    "outputTokens": 40,
                    "cacheReadTokens": 4000,
                    "cacheWriteTokens": 600,
                    "cost": 1,
                    "apiCallId": "chatcmpl-1",
                    "accounting": {"usageId": "chatcmpl-1"},
                }
            },
        }
    )
    found = list(UsageReader().read("copilot-cli", "k", None, [line, line]))
    assert [
        (m.input_tokens, m.cache_read_tokens, m.cache_creation_tokens, m.output_tokens, m.cost_usd)
        for m in found
    ] == [(400, 4000, 600, 40, None)]
