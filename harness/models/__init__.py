"""Model clients: `make_model("anthropic/claude-sonnet-4-5")` and friends.

Specs: `anthropic/<model>` (official SDK), `openai/<model>` (any OpenAI-compatible chat API),
`script/<path>` (a JSON/JSONL file of scripted turns) and `replay/<run-dir>` (a recorded run).
"""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from harness.kernel import secrets
from harness.kernel.core import Model, StateActError

MIN_THINKING_BUDGET = 1024  # the Messages API's smallest `budget_tokens`


class ModelConfig(BaseModel):
    """How to call a model; every field has a sensible default."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    max_tokens: int = Field(8192, gt=0)
    """Most tokens the model may write in one turn."""
    temperature: float | None = None
    """Sampling temperature; None leaves the provider's default."""
    base_url: str | None = None
    """API endpoint; None uses ANTHROPIC_BASE_URL / OPENAI_BASE_URL or the provider's default."""
    api_key: str | None = Field(None, exclude=True)
    """API key; None uses ANTHROPIC_API_KEY / OPENAI_API_KEY. Never written to a run record."""
    provider: str | None = None
    """The provider `base_url`, `api_key` and `extra_headers` are for (the main model's); a model
    of another provider uses its own environment variables instead. None: any provider."""
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
    adaptive_thinking: bool = False
    """Anthropic adaptive thinking (`{"type": "adaptive"}`; Claude 4.6 and later): the model decides
    how much to think. Takes precedence over `thinking_budget`."""
    extra_headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers added to every request (auth-like values are [redacted] in run records)."""

    def with_thinking(self, setting: str) -> ModelConfig:
        """A copy with `--thinking adaptive|off|N` applied; StateActError names a bad value."""
        setting = str(setting).strip().lower()
        if setting == "adaptive":
            return self.model_copy(update={"adaptive_thinking": True, "thinking_budget": None})
        if setting == "off":
            return self.model_copy(update={"adaptive_thinking": False, "thinking_budget": None})
        if not setting.isdigit() or int(setting) < MIN_THINKING_BUDGET:
            raise StateActError(
                f"--thinking must be adaptive, off or a token budget of at least "
                f"{MIN_THINKING_BUDGET}, not {setting!r}."
            )
        return self.model_copy(update={"adaptive_thinking": False, "thinking_budget": int(setting)})

    @field_serializer("extra_headers")
    def _hide_auth_headers(self, headers: dict[str, str]) -> dict[str, str]:
        return secrets.redact_headers(headers)

    def for_provider(self, provider: str) -> ModelConfig:
        """These settings as a model of `provider` gets them: endpoint settings stay with their
        own."""
        if self.provider in (None, provider):
            return self
        return self.model_copy(update={"base_url": None, "api_key": None, "extra_headers": {}})


ENDPOINT_PROVIDERS = ("anthropic", "openai")
KEY_VARIABLES = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def endpoint_provider(spec: str | None) -> str | None:
    """The provider of `spec` when it calls an API endpoint (anthropic, openai), else None."""
    provider = (spec or "").partition("/")[0].strip().lower()
    return provider if provider in ENDPOINT_PROVIDERS else None


PROVIDERS = ("anthropic", "openai", "script", "replay")


def make_model(spec: str, config: ModelConfig | None = None) -> Model:
    """Build the model a `PROVIDER/NAME` spec names."""
    config = config or ModelConfig()
    provider, sep, name = (spec or "").partition("/")
    provider = provider.strip().lower()
    name = name.strip()
    if not sep or not provider or not name:
        raise StateActError(
            f"invalid model spec {spec!r}; use PROVIDER/NAME, for example "
            "anthropic/claude-sonnet-4-5"
        )
    if provider in ENDPOINT_PROVIDERS:
        config = config.for_provider(provider)
        secrets.remember(config.api_key or os.environ.get(KEY_VARIABLES[provider]))
        secrets.remember_headers(config.extra_headers)
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


__all__ = ["ModelConfig", "endpoint_provider", "make_model", "PROVIDERS"]
