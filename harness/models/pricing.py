"""What model calls cost: USD per million tokens, and the arithmetic that turns `Usage` into
dollars.

The Claude prices below are list prices as best known when this was written (not fetched from
anywhere); override them with `ModelConfig.prices` when they change. Cache writes cost 1.25x
input (5-minute TTL) or 2x (1-hour TTL), cache reads 0.1x input. OpenAI-compatible models default
to zero (local servers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.kernel.core import StateActError, Usage

CACHE_WRITE_5M_FACTOR = 1.25
CACHE_WRITE_1H_FACTOR = 2.0
CACHE_READ_FACTOR = 0.1


@dataclass(frozen=True)
class Prices:
    """USD per million tokens of each kind."""

    input: float
    output: float
    cache_read: float
    cache_write: float

    @classmethod
    def from_input_output(cls, input: float, output: float) -> Prices:
        return cls(input, output, input * CACHE_READ_FACTOR, input * CACHE_WRITE_5M_FACTOR)

    def cost(self, usage: Usage, cache_write_1h_tokens: int = 0) -> float:
        """Dollars for `usage`; `cache_write_1h_tokens` of its cache writes used the 1-hour TTL."""
        write_1h = min(cache_write_1h_tokens, usage.cache_write_tokens)
        write_5m = usage.cache_write_tokens - write_1h
        dollars = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + write_5m * self.cache_write
            + write_1h * self.input * CACHE_WRITE_1H_FACTOR
        )
        return dollars / 1_000_000


FREE = Prices(0.0, 0.0, 0.0, 0.0)

# (family, minimum version) -> (input, output); the first matching row wins, so newer rows come
# first.
_CLAUDE_PRICES: list[tuple[str, tuple[int, int], tuple[float, float]]] = [
    ("opus", (4, 5), (5.0, 25.0)),
    ("opus", (4, 0), (15.0, 75.0)),
    ("opus", (3, 0), (15.0, 75.0)),
    ("sonnet", (3, 0), (3.0, 15.0)),
    ("haiku", (4, 5), (1.0, 5.0)),
    ("haiku", (3, 5), (0.8, 4.0)),
    ("haiku", (3, 0), (0.25, 1.25)),
]
_DEFAULT_CLAUDE = (
    3.0,
    15.0,
)  # an unrecognised Claude name is priced like Sonnet rather than as free

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


def claude_prices(model: str) -> Prices:
    """List prices of a Claude model, by family and version."""
    parsed = parse_claude_name(model)
    if parsed is not None:
        family, major, minor = parsed
        for row_family, minimum, (inp, out) in _CLAUDE_PRICES:
            if family == row_family and (major, minor) >= minimum:
                return Prices.from_input_output(inp, out)
    return Prices.from_input_output(*_DEFAULT_CLAUDE)


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
    )
