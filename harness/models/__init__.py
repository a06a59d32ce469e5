"""Model clients: `make_model("anthropic/claude-sonnet-4-5")` and friends.

Specs: `anthropic/<model>` (official SDK), `openai/<model>` (any OpenAI-compatible chat API),
`script/<path>` (a JSON/JSONL file of scripted turns) and `replay/<run-dir>` (a recorded run).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from harness.kernel.core import Model, StateActError


class ModelConfig(BaseModel):
    """How to call a model; every field has a sensible default."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    max_tokens: int = Field(8192, gt=0)
    """Most tokens the model may write in one turn."""
    temperature: float | None = None
    """Sampling temperature; None leaves the provider's default."""
    base_url: str | None = None
    """API endpoint; None uses ANTHROPIC_BASE_URL / OPENAI_BASE_URL or the provider's default."""
    api_key: str | None = None
    """API key; None uses ANTHROPIC_API_KEY / OPENAI_API_KEY."""
    context_window: int | None = Field(None, gt=0)
    """Tokens the model can read; None means the model's known window."""
    max_retries: int = Field(6, ge=0)
    """Retries on rate limits, overloads and server errors before giving up."""
    timeout_s: float = Field(600.0, gt=0)
    """Seconds to wait for one API response."""
    prices: dict[str, float] = Field(default_factory=dict)
    """Price override in USD per million tokens: keys input, output, cache_read, cache_write."""
    thinking_budget: int | None = Field(None, gt=0)
    """Extended-thinking token budget (Anthropic); None turns thinking off."""
    extra_headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers added to every request."""


PROVIDERS = ("anthropic", "openai", "script", "replay")


def make_model(spec: str, config: ModelConfig | None = None) -> Model:
    """Build the model a `PROVIDER/NAME` spec names."""
    config = config or ModelConfig()
    provider, sep, name = (spec or "").partition("/")
    provider = provider.strip().lower()
    name = name.strip()
    if not sep or not provider or not name:
        raise StateActError(
            f"invalid model spec {spec!r}; use PROVIDER/NAME, for example anthropic/claude-sonnet-4-5"
        )
    if provider == "anthropic":
        from harness.models.anthropic_model import AnthropicModel

        return AnthropicModel(name, config)
    if provider == "openai":
        from harness.models.openai_model import OpenAIModel

        return OpenAIModel(name, config)
    if provider == "script":
        from harness.models.scripted import ScriptedModel

        model = ScriptedModel.from_file(name)
        if config.context_window:
            model.context_window = config.context_window
        return model
    if provider == "replay":
        from harness.models.scripted import ReplayModel

        return ReplayModel(name)
    raise StateActError(f"unknown model provider {provider!r}; use one of {', '.join(PROVIDERS)}")


__all__ = ["ModelConfig", "make_model", "PROVIDERS"]
