"""Model prices (issue 44 item 1): LiteLLM's ``model_prices_and_context_window.json``, the
table ccusage prices with, trimmed to the providers the supported harnesses talk to.

``prices.json`` beside this module is the shipped copy: ``{"source", "version", "fetched",
"models": {name: entry}}``, each entry the LiteLLM fields that price a token (US dollars per
token: ``input_cost_per_token``, ``output_cost_per_token``, ``cache_creation_input_token_cost``,
``cache_read_input_token_cost``, their ``*_above_200k_tokens`` tiers) and its
``litellm_provider``. ``continuity usage --refresh-prices`` fetches ``SOURCE_URL`` with httpx
and writes the same trimmed shape to ``<home>/usage/prices.json`` (``refresh``), which
``load_prices`` then prefers; ``offline=True`` reads only the shipped copy.

Trimming (``trim``): entries of ``PROVIDERS`` whose mode is ``chat`` or ``responses`` and
that have a price (``input_cost_per_token``, or LiteLLM's ``tiered_pricing`` list, as
DashScope's Qwen models have). LiteLLM keeps retired Anthropic models only under Amazon
Bedrock's names (``anthropic.claude-sonnet-4-20250514-v1:0``, same list price); such an entry
is also kept under the plain name (``claude-sonnet-4-20250514``) with ``litellm_key`` naming
its source.

Matching (``PriceTable.lookup``), as ccusage and LiteLLM users expect (fresh-user review of
issue 44, item 2): the model name as recorded; without a provider prefix (``anthropic/``,
``openai/``, ``models/``); without a date suffix (``-20250929``, ``@20250929``); then each of
those under a provider prefix the table uses (``gemini-2.5-pro`` is ``gemini/gemini-2.5-pro``,
``qwen3-coder-plus`` ``dashscope/qwen3-coder-plus``; ``PREFIX_ORDER`` decides between
providers); then, for a name without a date, its newest dated entry (``claude-opus-4-1`` is
``claude-opus-4-1-20250805``, ``claude-opus-4`` is ``claude-opus-4-20250514``, never
``claude-opus-4-1-…``). Nothing fuzzier: a model that matches no entry has no price, and its
usage is reported unpriced, never at 0.

Costing (``PriceTable.cost``) follows ccusage 18 for the four Anthropic fields, per message
and per field: tokens past 200,000 at the ``*_above_200k_tokens`` price when the entry has
one. A cache field the entry does not price is priced as input (OpenAI's cache writes are
billed as input; a cache read without a price is rare and never free). An entry with
``tiered_pricing`` (LiteLLM's tiers by prompt size, ``range`` in tokens) prices the whole
message at the tier its prompt (input plus both cache counts) falls in, the last tier past the
end.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from continuity.core.errors import ContinuityError, InputError

#: Where LiteLLM publishes the table (the URL ccusage fetches).
SOURCE_URL = (
    "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json"
)
#: The LiteLLM providers whose models the supported harnesses use (Claude Code: Anthropic;
#: Codex: OpenAI; pi and OpenCode: any of these).
PROVIDERS = frozenset({"anthropic", "openai", "gemini", "xai", "deepseek", "mistral", "dashscope"})
#: Provider prefixes tried for a name recorded without one, first match wins (module
#: docstring); any other prefix in the table comes after these, alphabetically.
PREFIX_ORDER = ("anthropic/", "gemini/", "vertex_ai/", "openai/", "dashscope/", "openrouter/")
#: The fields of an entry kept: the prices (dollars per token) and the provider.
FIELDS = (
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_creation_input_token_cost",
    "cache_read_input_token_cost",
    "input_cost_per_token_above_200k_tokens",
    "output_cost_per_token_above_200k_tokens",
    "cache_creation_input_token_cost_above_200k_tokens",
    "cache_read_input_token_cost_above_200k_tokens",
    "litellm_provider",
    "tiered_pricing",
)
#: The fields kept of a ``tiered_pricing`` tier.
TIER_FIELDS = (
    "range",
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_creation_input_token_cost",
    "cache_read_input_token_cost",
)
#: ccusage's tier threshold (tokens of one kind in one message).
TIER_TOKENS = 200_000
#: The refreshed table's place in the workspace.
REFRESHED = Path("usage") / "prices.json"

_BEDROCK_CLAUDE = re.compile(r"anthropic\.(claude-[a-z0-9.-]+?)-v\d+:\d+")
_DATE_SUFFIX = re.compile(r"[-@]\d{8}$")
_PREFIX = re.compile(r"^(?:[a-z_-]+/)+")


def trim(raw: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The entries of LiteLLM's table ``raw`` (its JSON object) that ``PROVIDERS`` serve,
    each cut to ``FIELDS`` (module docstring). Raises ``ContinuityError`` when ``raw`` prices
    no model of those providers (not the table: a changed format or an error page)."""
    out: dict[str, dict[str, Any]] = {}
    bedrock: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, entry in raw.items():
        if not isinstance(entry, dict):
            continue
        tiers = entry.get("tiered_pricing")
        if not isinstance(entry.get("input_cost_per_token"), (int, float)) and not (
            isinstance(tiers, list) and tiers
        ):
            continue
        fields = {f: entry[f] for f in FIELDS if f in entry}
        if isinstance(tiers, list):
            fields["tiered_pricing"] = [
                {f: t[f] for f in TIER_FIELDS if f in t} for t in tiers if isinstance(t, dict)
            ]
        if entry.get("litellm_provider") in PROVIDERS and entry.get("mode") in (
            "chat",
            "responses",
        ):
            out[name] = fields
            continue
        found = _BEDROCK_CLAUDE.fullmatch(name)
        if found and entry.get("mode") == "chat":
            bedrock.setdefault(found.group(1), (name, fields))
    for plain, (key, fields) in sorted(bedrock.items()):
        if plain not in out:
            out[plain] = {**fields, "litellm_provider": "anthropic", "litellm_key": key}
    if not out:
        raise ContinuityError(
            "the price table holds no model of "
            + ", ".join(sorted(PROVIDERS))
            + ": not LiteLLM's model_prices_and_context_window.json"
        )
    return dict(sorted(out.items()))


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by model name (``models``: LiteLLM entries, dollars per token), with where they
    came from (``source``: a URL or file, ``fetched``: the ISO date they were taken)."""

    models: Mapping[str, Mapping[str, Any]]
    source: str
    fetched: str
    _prefixes: list[str] = field(default_factory=list, init=False, repr=False, compare=False)

    def lookup(self, model: str | None) -> Mapping[str, Any] | None:
        """The entry pricing ``model`` (module docstring: exact, without a provider prefix,
        without a date suffix, under a provider prefix of the table, then the newest dated
        entry of an undated name), or None."""
        if not model:
            return None
        names = _candidates(model)
        for name in names:
            entry = self.models.get(name)
            if entry is not None:
                return entry
        prefixes = self._table_prefixes()
        for name in names:
            for prefix in prefixes:
                entry = self.models.get(prefix + name)
                if entry is not None:
                    return entry
        for name in names:
            dated = sorted(
                key
                for key in self.models
                if key.startswith(name + "-") and _DATE_SUFFIX.fullmatch(key[len(name) :])
            )
            if dated:
                return self.models[dated[-1]]
        return None

    def _table_prefixes(self) -> list[str]:
        """The table's provider prefixes (``gemini/``, ``openrouter/qwen/``), in
        ``PREFIX_ORDER`` and then alphabetically; computed once."""
        if not self._prefixes:
            found = {key[: key.rindex("/") + 1] for key in self.models if "/" in key}
            ranked = [p for p in PREFIX_ORDER if p in found]
            ranked += sorted(
                found - set(ranked),
                key=lambda p: (
                    next((i for i, o in enumerate(PREFIX_ORDER) if p.startswith(o)), 99),
                    p,
                ),
            )
            self._prefixes.extend(ranked or [""])
        return [p for p in self._prefixes if p]

    def cost(
        self,
        model: str | None,
        *,
        input_tokens: int,
        output_tokens: int,
        cache_creation_tokens: int,
        cache_read_tokens: int,
    ) -> float | None:
        """Dollars for one message's tokens (``input_tokens`` excludes the cache reads and
        writes; ``output_tokens`` includes reasoning), or None when ``model`` has no price.
        A message of no tokens costs 0 whatever its model (``<synthetic>`` rows)."""
        if input_tokens == output_tokens == cache_creation_tokens == cache_read_tokens == 0:
            return 0.0
        entry = self.lookup(model)
        if entry is None:
            return None
        tiers = entry.get("tiered_pricing")
        if tiers and not isinstance(entry.get("input_cost_per_token"), (int, float)):
            prompt = input_tokens + cache_creation_tokens + cache_read_tokens
            entry = _tier(tiers, prompt)
        base_in = entry.get("input_cost_per_token")
        tier_in = entry.get("input_cost_per_token_above_200k_tokens")
        create = entry.get("cache_creation_input_token_cost")
        read = entry.get("cache_read_input_token_cost")
        return (
            _tiered(input_tokens, base_in, tier_in)
            + _tiered(
                output_tokens,
                entry.get("output_cost_per_token"),
                entry.get("output_cost_per_token_above_200k_tokens"),
            )
            + _tiered(
                cache_creation_tokens,
                base_in if create is None else create,
                tier_in
                if create is None
                else entry.get("cache_creation_input_token_cost_above_200k_tokens"),
            )
            + _tiered(
                cache_read_tokens,
                base_in if read is None else read,
                tier_in
                if read is None
                else entry.get("cache_read_input_token_cost_above_200k_tokens"),
            )
        )


def _candidates(model: str) -> list[str]:
    plain = _PREFIX.sub("", model)
    undated = _DATE_SUFFIX.sub("", plain)
    return list(dict.fromkeys([model, plain, undated]))


def _tier(tiers: list[Mapping[str, Any]], prompt: int) -> Mapping[str, Any]:
    """The tier of LiteLLM's ``tiered_pricing`` whose ``range`` ([from, to) tokens) holds
    ``prompt``; the last one past the end."""
    for tier in tiers:
        bounds = tier.get("range") or [0, float("inf")]
        if bounds[0] <= prompt < bounds[1]:
            return tier
    return tiers[-1]


def _tiered(tokens: int, base: Any, tier: Any) -> float:
    """ccusage's ``calculateTieredCost``: the tokens past ``TIER_TOKENS`` at ``tier`` when
    there is one, the rest (or all) at ``base``; no base price counts 0 for that part."""
    if tokens <= 0:
        return 0.0
    base_price = float(base) if isinstance(base, (int, float)) else None
    if tokens > TIER_TOKENS and isinstance(tier, (int, float)):
        below = TIER_TOKENS * base_price if base_price is not None else 0.0
        return (tokens - TIER_TOKENS) * float(tier) + below
    return tokens * base_price if base_price is not None else 0.0


def shipped() -> PriceTable:
    """The table shipped with the package (``prices.json`` beside this module)."""
    text = resources.files("continuity.usage").joinpath("prices.json").read_text("utf-8")
    return _table(json.loads(text), "continuity/usage/prices.json")


def _table(data: Any, where: str) -> PriceTable:
    if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
        raise ContinuityError(f'{where}: not a price table (no "models" object)')
    return PriceTable(
        models=data["models"],
        source=str(data.get("source", where)),
        fetched=str(data.get("fetched", "")),
    )


def load_prices(home: Path | None, *, offline: bool = False) -> PriceTable:
    """The prices to use: ``<home>/usage/prices.json`` (written by ``refresh``) when it exists
    and ``offline`` is false, else the shipped table. A refreshed file that cannot be read is
    a ``ContinuityError`` naming it (refresh again, or delete it)."""
    if home is not None and not offline:
        path = home / REFRESHED
        if path.is_file():
            try:
                data = json.loads(path.read_text("utf-8"))
            except (OSError, ValueError) as exc:
                raise ContinuityError(
                    f"{path}: cannot read the refreshed prices ({exc}); run "
                    "`continuity usage --refresh-prices` again or delete the file"
                ) from None
            return _table(data, str(path))
    return shipped()


def refresh(home: Path, *, url: str = SOURCE_URL, transport: Any = None) -> PriceTable:
    """Fetch LiteLLM's table from ``url`` (httpx, 30 s), trim it (``trim``) and write it to
    ``<home>/usage/prices.json`` (owner-only, replaced whole). ``transport``: an httpx
    transport (tests). Raises ``InputError`` when the fetch fails (naming the URL and why) and
    ``ContinuityError`` when the answer is not the table; the previous file stays."""
    import httpx

    from continuity.core.private import private_dir, write_private

    try:
        with httpx.Client(transport=transport, timeout=30.0, follow_redirects=True) as client:
            answer = client.get(url)
            answer.raise_for_status()
            raw = answer.json()
    except httpx.HTTPError as exc:
        raise InputError(f"could not fetch the prices from {url}: {exc}") from None
    except ValueError:
        raise ContinuityError(f"{url} did not answer JSON: not the price table") from None
    if not isinstance(raw, dict):
        raise ContinuityError(f"{url} did not answer a JSON object: not the price table")
    models = trim(raw)
    fetched = datetime.now(UTC).date().isoformat()
    data = {"source": url, "version": "main", "fetched": fetched, "models": models}
    path = home / REFRESHED
    private_dir(path.parent)
    write_private(path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode())
    return PriceTable(models=models, source=url, fetched=fetched)
