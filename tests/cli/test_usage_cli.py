"""``continuity usage`` (issue 44 item 1): the table, ``--json``, ``--csv``, the price refresh
and its usage errors, on the Claude Code and Codex sample files."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import httpx
import pytest

from continuity.usage import prices
from tests.cli.running import run_main

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "samples"


@pytest.fixture
def home(tmp_path: Path, monkeypatch, capsys) -> Path:
    monkeypatch.setenv("TZ", "UTC")  # the days' default zone is the machine's
    home = tmp_path / "ws"
    code, _, err = run_main(
        monkeypatch,
        capsys,
        "import",
        "--home",
        home,
        SAMPLES / "claude-code",
        SAMPLES / "codex" / "sample-session.jsonl",
    )
    assert code == 0, err
    return home


def test_the_table_has_a_row_per_day_and_the_totals(home, monkeypatch, capsys):
    code, out, err = run_main(monkeypatch, capsys, "usage", "--home", home)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["day", "(UTC)", "models"]
    days = [line.split()[0] for line in lines[1:] if line[:2] == "20"]
    assert days == ["2025-09-03", "2025-09-07", "2026-02-10", "2026-04-27"]
    total = next(line for line in lines if line.startswith("Total"))
    # jq over the five files: 1,855 + 10,280 input; 3,377 + 469 output
    assert total.split()[1:3] == ["12,135", "3,846"]
    assert "$" in total and "*" not in total  # every model priced
    assert lines[-1].startswith("prices: https://raw.githubusercontent.com/BerriAI/litellm")
    assert err == ""


def test_json_prints_totals_and_rows_only(home, monkeypatch, capsys):
    code, out, _ = run_main(
        monkeypatch, capsys, "usage", "--home", home, "--by", "harness", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert list(data) == ["totals", "rows", "unpriced_models"]
    assert data["unpriced_models"] == []
    assert data["totals"]["input_tokens"] == 12135
    assert [(r["key"], r["input_tokens"]) for r in data["rows"]] == [
        ("claude-code", 1855),
        ("codex", 10280),
    ]


def test_csv_has_a_header_and_a_row_per_model(home, monkeypatch, capsys):
    code, out, _ = run_main(
        monkeypatch, capsys, "usage", "--home", home, "--by", "model", "--csv", "--harness", "codex"
    )
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["key"], r["input_tokens"], r["cache_read_tokens"]) for r in rows] == [
        ("gpt-5.5", "10280", "6528")
    ]
    # gpt-5.5 at LiteLLM's $5/M input, $30/M output, $0.50/M cache read
    assert float(rows[0]["cost_usd"]) == pytest.approx(10280 * 5e-6 + 469 * 30e-6 + 6528 * 0.5e-6)


def test_an_unpriced_model_is_named_on_stderr_and_marks_the_total(tmp_path, monkeypatch, capsys):
    home = tmp_path / "ws"
    real = SAMPLES / "real-harness" / "codex" / "sessions"
    assert run_main(monkeypatch, capsys, "import", "--home", home, real)[0] == 0
    code, out, err = run_main(monkeypatch, capsys, "usage", "--home", home, "--by", "model")
    assert code == 0
    assert "—" in out
    assert "* partial: no price for gpt-fake" in out
    assert "note: no price for model gpt-fake" in err


def test_a_day_mixing_priced_and_unpriced_models_shows_its_priced_cost(
    tmp_path, monkeypatch, capsys
):
    """The sample Codex file (gpt-5.5, priced) and the real one (gpt-fake, no price) share
    the codex row: its cost is gpt-5.5's, marked * (partial), not "—"."""
    home = tmp_path / "ws"
    real = SAMPLES / "real-harness" / "codex" / "sessions"
    sample = SAMPLES / "codex" / "sample-session.jsonl"
    assert run_main(monkeypatch, capsys, "import", "--home", home, real, sample)[0] == 0
    priced = 10280 * 5e-6 + 469 * 30e-6 + 6528 * 0.5e-6  # gpt-5.5's cost
    code, out, _ = run_main(monkeypatch, capsys, "usage", "--home", home, "--by", "harness")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("codex"))
    assert row.split()[-1] == f"${priced:,.2f}*"
    code, out, _ = run_main(
        monkeypatch, capsys, "usage", "--home", home, "--by", "harness", "--csv"
    )
    (csv_row,) = list(csv.DictReader(io.StringIO(out)))
    assert float(csv_row["cost_usd"]) == pytest.approx(priced)
    assert (csv_row["partial"], csv_row["unpriced_models"]) == ("true", "gpt-fake")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--json", "--csv"], "give --json or --csv"),
        (["--offline", "--refresh-prices"], "--offline uses the shipped prices"),
        (["--by", "year"], "'year' is not one of"),
        (["--since", "soon"], "--since 'soon'"),
        (
            ["--since", "2026-12-05", "--until", "2026-12-01"],
            "--since 2026-12-05 (2026-12-05T00:00:00+00:00) is not before --until 2026-12-01",
        ),
    ],
)
def test_bad_options_are_usage_errors(tmp_path, monkeypatch, capsys, args, message):
    code, _, err = run_main(monkeypatch, capsys, "usage", "--home", tmp_path / "ws", *args)
    assert code == 2
    assert message in err


def test_refresh_prices_fetches_and_uses_the_new_table(home, monkeypatch, capsys):
    table = {
        "claude-sonnet-4-20250514": {
            "input_cost_per_token": 1.0,
            "output_cost_per_token": 0.0,
            "litellm_provider": "anthropic",
            "mode": "chat",
        }
    }

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=table)

    original = prices.refresh
    monkeypatch.setattr(
        prices,
        "refresh",
        lambda where: original(where, transport=httpx.MockTransport(answer)),
    )
    code, out, err = run_main(
        monkeypatch, capsys, "usage", "--home", home, "--refresh-prices", "--json", "--by", "model"
    )
    assert code == 0, err
    assert "prices: 1 models from https://raw.githubusercontent.com" in err
    rows = {r["key"]: r for r in json.loads(out)["rows"]}
    # the test's price, $1 a token of input, and of cache writes and reads (no price of their
    # own): 222 + 60,445 + 427,478 tokens (jq over the two files of that model)
    assert rows["claude-sonnet-4-20250514"]["cost_usd"] == pytest.approx(488145.0)
    assert rows["claude-opus-4-6"]["cost_usd"] is None  # not in the refreshed table
    # --offline goes back to the shipped table
    code, out, _ = run_main(
        monkeypatch, capsys, "usage", "--home", home, "--offline", "--json", "--by", "model"
    )
    rows = {r["key"]: r for r in json.loads(out)["rows"]}
    assert rows["claude-opus-4-6"]["cost_usd"] is not None


@pytest.mark.parametrize(
    ("value", "partial", "shown"),
    [
        (0.0012, False, "$0.0012"),
        (0.0072000000000000015, True, "$0.0072*"),
        (0.000012345, False, "$0.000012"),
        (0.0000001, False, "<$0.000001"),
        (0.0, False, "$0.00"),
        (0.01, False, "$0.01"),
        (1234.567, False, "$1,234.57"),
        (None, False, "—"),
    ],
)
def test_a_cost_under_a_cent_keeps_two_significant_digits(value, partial, shown):
    """Fresh-user review item 6: $0.0012 read as $0.00."""
    from continuity.cli.commands.usage import _cost

    assert _cost(value, partial=partial) == shown


def test_json_costs_are_rounded_to_a_millionth_of_a_dollar():
    from continuity.usage.report import UsageReport, UsageRow, UsageTotals

    row = UsageRow("day", "2026-12-02", 1, 1, 1, 0, 0, 0, 0.0072000000000000015)
    report = UsageReport("day", UsageTotals(1, 1, 0, 0, 0, 0.12345678), (row,))
    data = json.loads(json.dumps(report.to_dict()))
    assert data["rows"][0]["cost_usd"] == 0.0072
    assert data["totals"]["cost_usd"] == 0.123457


def test_an_empty_workspace_says_nothing_is_imported(tmp_path, monkeypatch, capsys):
    """Fresh-user review item 7: it said "no usage recorded in that range" with no range."""
    (tmp_path / "ws").mkdir()  # an empty workspace (an absent one is an error: it only reads)
    code, out, err = run_main(monkeypatch, capsys, "usage", "--home", tmp_path / "ws")
    assert code == 0
    assert out == ""
    assert err.startswith("nothing imported yet: continuity import ~/.claude/projects")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--harness", "opencode"], "no usage for harness opencode\n"),
        (
            ["--harness", "pi", "--since", "2030-01-01"],
            "no usage for harness pi in that range (since 2030-01-01)\n",
        ),
        (["--until", "2001-01-01"], "no usage in that range (until 2001-01-01)\n"),
        (  # a harness whose files record no tokens says so (the registry's usage_note)
            ["--harness", "factory-droid"],
            "no usage for harness factory-droid: its session file records no token usage; "
            "only the `.settings.json` beside it holds the session's running total "
            "(`tokenUsage`), not per response, and continuity does not import it\n",
        ),
    ],
)
def test_a_filter_that_matches_nothing_is_named(home, monkeypatch, capsys, args, said):
    code, out, err = run_main(monkeypatch, capsys, "usage", "--home", home, *args)
    assert code == 0
    assert out == ""
    assert err == said


def test_days_are_the_machine_s_zone_or_timezone_s(home, monkeypatch, capsys):
    """Fresh-user review item 4: short.jsonl's response at 2026-02-10T21:11:59Z is on
    2026-02-11 in Tokyo (UTC+9), whether $TZ or --timezone says so; the heading names it."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    code, out, err = run_main(monkeypatch, capsys, "usage", "--home", home)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["day", "(Asia/Tokyo)"]
    tokyo = [line.split()[0] for line in lines[1:] if line[:2] == "20"]
    assert "2026-02-11" in tokyo and "2026-02-10" not in tokyo
    monkeypatch.setenv("TZ", "UTC")
    code, out, _ = run_main(
        monkeypatch, capsys, "usage", "--home", home, "--timezone", "Asia/Tokyo", "--json"
    )
    assert code == 0
    assert [r["key"] for r in json.loads(out)["rows"]] == tokyo
    code, _, err = run_main(monkeypatch, capsys, "usage", "--home", home, "--timezone", "Mars/X")
    assert code == 2
    assert "'Mars/X' is not an IANA time zone" in err
