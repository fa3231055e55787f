"""The price table (issue 44 item 1): the shipped copy, matching, ccusage's 200k tier, the
refresh through httpx (a mock transport: no network) and which table is used."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from continuity.core.errors import ContinuityError, InputError
from continuity.usage.prices import (
    REFRESHED,
    SOURCE_URL,
    PriceTable,
    load_prices,
    refresh,
    shipped,
    trim,
)

SONNET_4 = {
    "input_cost_per_token": 3e-06,
    "output_cost_per_token": 1.5e-05,
    "cache_creation_input_token_cost": 3.75e-06,
    "cache_read_input_token_cost": 3e-07,
    "input_cost_per_token_above_200k_tokens": 6e-06,
    "output_cost_per_token_above_200k_tokens": 2.25e-05,
    "litellm_provider": "anthropic",
    "mode": "chat",
    "max_tokens": 64000,
}


def test_the_shipped_table_names_its_source_and_prices_the_harnesses_models():
    table = shipped()
    assert table.source == SOURCE_URL
    assert table.fetched == "2026-12-06"
    for model in ("claude-opus-4-6", "claude-sonnet-4-5", "gpt-5.5", "gpt-5.1-codex"):
        assert table.lookup(model) is not None, model
    # a retired model LiteLLM keeps under Bedrock's name only, at the same list price
    sonnet = table.lookup("claude-sonnet-4-20250514")
    assert sonnet is not None
    assert sonnet["input_cost_per_token"] == 3e-06
    assert sonnet["litellm_key"] == "anthropic.claude-sonnet-4-20250514-v1:0"


def test_lookup_strips_a_provider_prefix_and_a_date_but_never_guesses():
    table = PriceTable({"claude-opus-4-6": SONNET_4}, "t", "2026-12-06")
    assert table.lookup("anthropic/claude-opus-4-6") is SONNET_4
    assert table.lookup("claude-opus-4-6-20260205") is SONNET_4
    assert table.lookup("claude-opus-4-6@20260205") is SONNET_4
    assert table.lookup("claude-opus-4") is None
    assert table.lookup("gpt-fake") is None
    assert table.lookup(None) is None


@pytest.mark.parametrize(
    ("model", "key", "input_price", "output_price"),
    [
        # LiteLLM 1.110.2's prices (the shipped table's source), per token
        ("claude-opus-4-1", "claude-opus-4-1-20250805", 1.5e-05, 7.5e-05),
        ("claude-opus-4", "claude-opus-4-20250514", 1.5e-05, 7.5e-05),
        ("claude-sonnet-4", "claude-sonnet-4-20250514", 3e-06, 1.5e-05),
        ("claude-3-5-haiku", "claude-3-5-haiku-20241022", 8e-07, 4e-06),
        ("gemini-2.5-pro", "gemini/gemini-2.5-pro", 1.25e-06, 1e-05),
        ("gemini-2.5-flash", "gemini/gemini-2.5-flash", 3e-07, 2.5e-06),
        ("models/gemini-2.5-pro", "gemini/gemini-2.5-pro", 1.25e-06, 1e-05),
        ("anthropic/claude-opus-4-1", "claude-opus-4-1-20250805", 1.5e-05, 7.5e-05),
    ],
)
def test_common_names_match_as_ccusage_and_litellm_users_expect(
    model, key, input_price, output_price
):
    """Fresh-user review item 2: a name without its provider prefix or its date matches the
    prefixed entry, or the newest dated one."""
    table = shipped()
    entry = table.lookup(model)
    assert entry is table.models[key], model
    assert (entry["input_cost_per_token"], entry["output_cost_per_token"]) == (
        input_price,
        output_price,
    )


def test_qwen3_coder_plus_is_priced_by_litellm_s_prompt_size_tiers():
    """dashscope/qwen3-coder-plus (LiteLLM: $1/M input, $5/M output, $0.10/M cache read up to
    a 32k prompt; $1.80, $9, $0.18 up to 128k)."""
    table = shipped()
    assert table.lookup("qwen3-coder-plus") is table.models["dashscope/qwen3-coder-plus"]
    small = table.cost(
        "qwen3-coder-plus",
        input_tokens=1000,
        output_tokens=100,
        cache_creation_tokens=0,
        cache_read_tokens=2000,
    )
    assert small == pytest.approx(1000 * 1e-06 + 100 * 5e-06 + 2000 * 1e-07)
    large = table.cost(
        "qwen3-coder-plus",
        input_tokens=1000,
        output_tokens=100,
        cache_creation_tokens=0,
        cache_read_tokens=40000,
    )
    assert large == pytest.approx(1000 * 1.8e-06 + 100 * 9e-06 + 40000 * 1.8e-07)


def test_the_newest_dated_entry_wins_and_a_longer_name_never_does():
    table = PriceTable(
        {"m-1-20250101": {"a": 1}, "m-1-20250601": {"a": 2}, "m-1-1-20250901": {"a": 3}},
        "t",
        "",
    )
    assert table.lookup("m-1") == {"a": 2}
    assert table.lookup("m-1-1") == {"a": 3}
    assert table.lookup("m") is None


def test_cost_is_none_without_a_price_and_0_without_tokens():
    table = PriceTable({}, "t", "")
    assert (
        table.cost(
            "gpt-fake",
            input_tokens=1,
            output_tokens=0,
            cache_creation_tokens=0,
            cache_read_tokens=0,
        )
        is None
    )
    assert (
        table.cost(
            "<synthetic>",
            input_tokens=0,
            output_tokens=0,
            cache_creation_tokens=0,
            cache_read_tokens=0,
        )
        == 0.0
    )


def test_tokens_past_200k_take_the_tier_price_as_ccusage_does():
    """250,000 input tokens: 200,000 at $3/M and 50,000 at $6/M = $0.90."""
    table = PriceTable({"m": SONNET_4}, "t", "")
    cost = table.cost(
        "m", input_tokens=250_000, output_tokens=0, cache_creation_tokens=0, cache_read_tokens=0
    )
    assert cost == pytest.approx(0.9)
    # no tier for cache reads in this entry: all at the base price
    cost = table.cost(
        "m", input_tokens=0, output_tokens=0, cache_creation_tokens=0, cache_read_tokens=300_000
    )
    assert cost == pytest.approx(0.09)


def test_a_cache_write_without_its_own_price_is_priced_as_input():
    """OpenAI entries have no cache_creation price (Codex 0.169+ records cache writes)."""
    entry = {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06}
    table = PriceTable({"gpt-x": entry}, "t", "")
    cost = table.cost(
        "gpt-x", input_tokens=0, output_tokens=0, cache_creation_tokens=1000, cache_read_tokens=0
    )
    assert cost == pytest.approx(0.001)


def test_trim_keeps_the_harnesses_providers_and_retired_claude_models():
    raw = {
        "sample_spec": {"input_cost_per_token": 0.0, "litellm_provider": "one of ..."},
        "claude-x": SONNET_4,
        "anthropic.claude-old-20240101-v1:0": {**SONNET_4, "litellm_provider": "bedrock"},
        "bedrock/claude-x": {**SONNET_4, "litellm_provider": "bedrock"},
        "text-embedding-3": {
            "input_cost_per_token": 1e-8,
            "litellm_provider": "openai",
            "mode": "embedding",
        },
    }
    out = trim(raw)
    assert sorted(out) == ["claude-old-20240101", "claude-x"]
    assert "max_tokens" not in out["claude-x"]
    assert out["claude-old-20240101"]["litellm_key"] == "anthropic.claude-old-20240101-v1:0"
    with pytest.raises(ContinuityError, match="not LiteLLM"):
        trim({"x": {"input_cost_per_token": 1.0, "litellm_provider": "nobody"}})


def _transport(body: bytes, status: int = 200) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        assert str(request.url) == SOURCE_URL
        return httpx.Response(status, content=body)

    return httpx.MockTransport(answer)


def test_refresh_writes_the_trimmed_table_that_is_used_from_then_on(tmp_path: Path):
    home = tmp_path / "ws"
    home.mkdir()
    table = refresh(home, transport=_transport(json.dumps({"claude-x": SONNET_4}).encode()))
    assert list(table.models) == ["claude-x"]
    written = json.loads((home / REFRESHED).read_text())
    assert written["source"] == SOURCE_URL
    assert written["models"]["claude-x"]["input_cost_per_token"] == 3e-06
    assert (home / REFRESHED).stat().st_mode & 0o777 == 0o600
    assert list(load_prices(home).models) == ["claude-x"]
    assert load_prices(home, offline=True).lookup("claude-opus-4-6") is not None  # shipped


def test_a_failed_refresh_says_why_and_keeps_the_previous_table(tmp_path: Path):
    home = tmp_path / "ws"
    home.mkdir()
    refresh(home, transport=_transport(json.dumps({"claude-x": SONNET_4}).encode()))
    with pytest.raises(InputError, match=r"could not fetch the prices from https://.*404"):
        refresh(home, transport=_transport(b"not found", status=404))
    with pytest.raises(ContinuityError, match="did not answer JSON"):
        refresh(home, transport=_transport(b"<html>"))
    assert list(load_prices(home).models) == ["claude-x"]


def test_a_damaged_refreshed_table_is_named(tmp_path: Path):
    home = tmp_path / "ws"
    (home / "usage").mkdir(parents=True)
    (home / REFRESHED).write_text("{")
    with pytest.raises(ContinuityError, match=r"usage/prices\.json: cannot read"):
        load_prices(home)
