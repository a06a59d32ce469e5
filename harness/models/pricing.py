"""What model calls cost: USD per million tokens, and the arithmetic that turns `Usage` into
dollars.

Prices and context windows come from `genai-prices` (pydantic's table of LLM API prices, read
from the copy bundled with the installed package: never fetched at run time, so a run's prices are
those of the pinned version, which each result names in `price_source`). `--price-in/--price-out`
(`ModelConfig.prices`) override the table. A model the table does not know and the user did not
price has no `Prices` (None): its cost is recorded as unknown, never as 0, and a cost cap cannot
be enforced on it. Tiered prices (above 200k prompt tokens, say) apply to the whole request, as the
providers bill them; cache writes with the 1-hour TTL use the table's own price, else 2x input.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from functools import cache

import genai_prices
from genai_prices.data_snapshot import get_snapshot

from harness.kernel.core import StateActError, Usage

CACHE_WRITE_5M_FACTOR = 1.25
CACHE_WRITE_1H_FACTOR = 2.0
CACHE_READ_FACTOR = 0.1
TABLE = f"genai-prices {genai_prices.__version__}"
TABLE_PROVIDERS = {"anthropic": ("anthropic",), "openai": ("openai", None)}
"""The table's providers searched for each endpoint provider, in order (None: any provider whose
model pattern matches, for models served by OpenAI-compatible hosts)."""


@dataclass(frozen=True)
class Prices:
    """USD per million tokens of each kind (`tiers`: prices from a prompt size on)."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    cache_write_1h: float | None = None
    tiers: tuple[tuple[int, Prices], ...] = field(default=())
    source: str = ""

    @classmethod
    def from_input_output(cls, input: float, output: float, source: str = "") -> Prices:
        return cls(
            input, output, input * CACHE_READ_FACTOR, input * CACHE_WRITE_5M_FACTOR, source=source
        )

    def for_prompt(self, prompt_tokens: int) -> Prices:
        """The prices one request pays: the highest tier its prompt reaches, else the base."""
        chosen = self
        for start, tier in self.tiers:
            if prompt_tokens > start:
                chosen = tier
        return chosen

    def cost(self, usage: Usage, cache_write_1h_tokens: int = 0) -> float:
        """Dollars for `usage` (one request); `cache_write_1h_tokens` of its cache writes used the
        1-hour TTL."""
        prices = self.for_prompt(usage.prompt_tokens)
        write_1h = min(cache_write_1h_tokens, usage.cache_write_tokens)
        write_5m = usage.cache_write_tokens - write_1h
        price_1h = prices.cache_write_1h
        if price_1h is None:
            price_1h = prices.input * CACHE_WRITE_1H_FACTOR
        dollars = (
            usage.input_tokens * prices.input
            + usage.output_tokens * prices.output
            + usage.cache_read_tokens * prices.cache_read
            + write_5m * prices.cache_write
            + write_1h * price_1h
        )
        return dollars / 1_000_000


FREE = Prices(0.0, 0.0, 0.0, 0.0, source="free")


@dataclass(frozen=True)
class TableEntry:
    """What the price table knows of one model."""

    prices: Prices | None
    context_window: int | None
    source: str


def _price_at(value, tier: int | None = None) -> float | None:
    """A genai-prices price (a Decimal, or TieredPrices) as a float, at a tier index."""
    if value is None:
        return None
    if hasattr(value, "base"):
        if tier is None:
            return float(value.base)
        return float(value.tiers[tier].price) if tier < len(value.tiers) else None
    return float(value)


def _prices_from(model_price, source: str) -> Prices | None:
    inp = _price_at(model_price.input_mtok)
    out = _price_at(model_price.output_mtok)
    if inp is None or out is None:
        return None  # priced per image, per second…: not a token price this harness can apply

    def at(tier: int | None) -> Prices:
        tier_in = _price_at(model_price.input_mtok, tier)
        base = Prices.from_input_output(tier_in, _price_at(model_price.output_mtok, tier) or out)
        read = _price_at(model_price.cache_read_mtok, tier)
        write = _price_at(model_price.cache_write_mtok, tier)
        return Prices(
            tier_in,
            base.output,
            read if read is not None else base.cache_read,
            write if write is not None else base.cache_write,
            _price_at(getattr(model_price, "cache_write_1h_mtok", None), tier),
            source=source,
        )

    tiers = getattr(model_price.input_mtok, "tiers", None) or []
    tiered = tuple(
        (tier.start, at(n)) for n, tier in enumerate(tiers) if _price_at(model_price.input_mtok, n)
    )
    return Prices(**{**at(None).__dict__, "tiers": tiered})


@cache
def table_entry(provider: str, name: str) -> TableEntry | None:
    """The table's entry for `provider/name` (an endpoint provider: anthropic, openai), or None."""
    snapshot = get_snapshot()
    for table_provider in TABLE_PROVIDERS.get(provider, ()):
        try:
            found, model = snapshot.find_provider_model(name, None, table_provider, None)
        except LookupError:
            continue
        source = f"{TABLE}: {found.id}/{model.id}"
        model_price = model.get_prices(datetime.datetime.now(datetime.UTC))
        return TableEntry(_prices_from(model_price, source), model.context_window, source)
    return None


def resolve_prices(provider: str, name: str, override: dict[str, float]) -> Prices | None:
    """The table's prices for the model with `override` applied; None when nobody priced it."""
    entry = table_entry(provider, name)
    base = entry.prices if entry is not None else None
    if base is None:
        if {"input", "output"} <= set(override):
            return prices_from_override(override, FREE)
        return None
    return prices_from_override(override, base) if override else base


def unpriced_reason(spec: str) -> str:
    return (
        f"{spec} has no price in {TABLE} and none was given, so its cost is unknown; give "
        "--price-in and --price-out (USD per million tokens)"
    )


def check_cost_cap(model, spec: str, max_cost_usd: float | None) -> None:
    """Refuse a cost cap on a model whose cost would be unknown (it could never trigger)."""
    if max_cost_usd is not None and getattr(model, "prices", FREE) is None:
        raise StateActError(f"--max-cost cannot be enforced: {unpriced_reason(spec)}.")


_NEW_NAME = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-|$)")
_OLD_NAME = re.compile(r"claude-(\d+)(?:-(\d{1,2}))?-(opus|sonnet|haiku)")


def parse_claude_name(model: str) -> tuple[str, int, int] | None:
    """(family, major, minor) of a Claude model name such as `claude-sonnet-4-5-20250929`."""
    name = model.lower().split("/")[-1]
    if match := _NEW_NAME.search(name):
        return match[1], int(match[2]), int(match[3] or 0)
    if match := _OLD_NAME.search(name):
        return match[3], int(match[1]), int(match[2] or 0)
    return None


def prices_from_override(override: dict[str, float], base: Prices) -> Prices:
    """Apply a `{"input", "output", "cache_read", "cache_write"}` override (per million) to
    `base`."""
    unknown = set(override) - {"input", "output", "cache_read", "cache_write"}
    if unknown:
        raise StateActError(
            f"unknown price key(s) {sorted(unknown)}; use input, output, cache_read, cache_write"
        )
    try:
        values = {key: float(value) for key, value in override.items()}
    except (TypeError, ValueError):
        raise StateActError("prices must be numbers (USD per million tokens)") from None
    inp = values.get("input", base.input)
    given = "--price-in/--price-out" if {"input", "output"} <= set(values) else base.source
    return Prices(
        input=inp,
        output=values.get("output", base.output),
        # Cache prices follow a changed input price unless they are given too.
        cache_read=values.get(
            "cache_read", inp * CACHE_READ_FACTOR if "input" in values else base.cache_read
        ),
        cache_write=values.get(
            "cache_write",
            inp * CACHE_WRITE_5M_FACTOR if "input" in values else base.cache_write,
        ),
        cache_write_1h=None if values else base.cache_write_1h,
        tiers=() if values else base.tiers,  # a price the user gives is flat
        source=given if values else base.source,
    )
